"""Loads transcripts, runs them step by step, and checks every ``expect*`` field; a transcript that
cannot be executed raises ``TranscriptError`` naming file, step and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from winviz.conformance.kinds import DRIVERS
from winviz.conformance.kinds.driver import TranscriptError, normalise_expected
from winviz.errors import InputError, WinvizError

TOP_LEVEL = {"name", "source", "description", "operator", "steps"}


MAX_EXPANDED_NODES = 100_000
"""The most YAML nodes a transcript may hold with its aliases expanded: nested aliases (a "billion
laughs") grow exponentially, so ``load`` refuses them first."""


def _check_nodes(node: yaml.Node, path: Path, sizes: dict[int, int], entered: set[int]) -> int:
    """The number of nodes under ``node`` with its aliases expanded (``sizes``: of the nodes
    seen); refuses more than ``MAX_EXPANDED_NODES``, a value that contains itself, and a
    mapping that repeats a key (``yaml.safe_load`` would keep the last silently)."""
    if id(node) in sizes:
        return sizes[id(node)]
    line = node.start_mark.line + 1
    if id(node) in entered:
        raise TranscriptError(
            f"{path}: line {line}: this value contains itself through an alias (*name), so it "
            "never ends (expected a transcript written out)"
        )
    entered.add(id(node))
    children = []
    if isinstance(node, yaml.MappingNode):
        _repeated_key(node, path)
        children = [n for pair in node.value for n in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = node.value
    size = 1 + sum(_check_nodes(c, path, sizes, entered) for c in children)
    if size > MAX_EXPANDED_NODES:
        raise TranscriptError(
            f"{path}: line {line}: this value expands to {size} YAML nodes through its aliases "
            f"(*name), more than the {MAX_EXPANDED_NODES} a transcript may hold (expected a "
            "transcript written out, or aliases that expand to a few nodes; nested aliases grow "
            "exponentially)"
        )
    sizes[id(node)] = size
    return size


def _repeated_key(node: yaml.MappingNode, path: Path) -> None:
    first: dict[tuple[str, str], yaml.Node] = {}
    for key, _ in node.value:
        if isinstance(key, yaml.ScalarNode):
            was = first.setdefault((key.tag, key.value), key)
            if was is not key:
                raise TranscriptError(
                    f"{path}: line {key.start_mark.line + 1}: the key {key.value!r} appears "
                    f"twice in one mapping (first on line {was.start_mark.line + 1}); each "
                    "field may appear once"
                )


def load(path: str | Path) -> dict[str, Any]:
    """Parse and validate one transcript file (kept as ``_file``); ``TranscriptError`` names the
    file and what is wrong."""
    path = Path(path)
    text = path.read_text()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)  # the node graph: nothing built
        if root is not None:
            _check_nodes(root, path, {}, set())
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        for mark in (getattr(exc, "context_mark", None), getattr(exc, "problem_mark", None)):
            if mark is not None:  # (parsed from a str: the parser calls it "<unicode string>")
                mark.name = str(path)
        raise TranscriptError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise TranscriptError(f"{path}: a transcript is a mapping with name, operator, steps")
    unknown = set(doc) - TOP_LEVEL
    if unknown:
        raise TranscriptError(f"{path}: unknown top-level field(s) {sorted(unknown)}")
    for required in ("name", "operator", "steps"):
        if required not in doc:
            raise TranscriptError(f"{path}: missing field {required!r}")
    if not isinstance(doc["name"], str) or not doc["name"]:
        raise TranscriptError(f"{path}: name {doc['name']!r}: expected a non-empty str")
    if not isinstance(doc["operator"], dict):
        raise TranscriptError(
            f"{path}: operator {doc['operator']!r}: expected a mapping with a kind, one of "
            f"{sorted(DRIVERS)}"
        )
    kind = doc["operator"].get("kind")
    if kind not in DRIVERS:
        raise TranscriptError(f"{path}: operator.kind {kind!r} is not one of {sorted(DRIVERS)}")
    if not isinstance(doc["steps"], list):
        raise TranscriptError(f"{path}: steps must be a list")
    doc["_file"] = str(path)
    return doc


def iter_steps(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Run the transcript, yielding what each step caused as soon as it has run."""
    driver_cls = DRIVERS[doc["operator"]["kind"]]
    where = doc.get("_file", doc["name"])
    try:
        driver = driver_cls(doc["operator"], where)
    except InputError as exc:  # an operator winviz refuses: the transcript cannot run
        raise TranscriptError(f"{where}: operator: {exc}") from exc
    for index, step in enumerate(doc["steps"]):
        if not isinstance(step, dict):
            raise TranscriptError(f"{where}: step {index}: a step is a mapping")
        driver.validate(step, index)
        yield driver.step(step, index)


def run_transcript(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """What every step caused, one STEP_RESULT per step (FORMAT.md's ``--json``)."""
    return list(iter_steps(doc))


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def check_transcript(doc: dict[str, Any]) -> str | None:
    """None when every expectation holds, else the first failure ``step N: ...``. A step may say
    ``expect_error: "text"`` (the last step): the operator must raise there, with ``text``."""
    driver_cls = DRIVERS[doc["operator"]["kind"]]
    steps = doc["steps"]
    where = doc.get("_file", doc["name"])
    ran = 0  # the steps that ran: the one that raises is steps[ran]
    try:
        for result in iter_steps(doc):
            step = steps[ran]
            if "expect_error" in step:
                return (
                    f"step {ran}: expect_error: expected an error containing "
                    f"{step['expect_error']!r}, nothing was raised"
                )
            problem = _check_step(driver_cls, step, result, f"{where}: step {ran}")
            if problem:
                return f"step {ran}: {problem}"
            ran += 1
    except WinvizError as exc:
        if isinstance(exc, TranscriptError):
            raise
        if not steps:  # the operator of a transcript without steps is built at the end
            return f"operator: raised {type(exc).__name__}: {exc}"
        wanted = steps[ran].get("expect_error")
        if wanted is None or str(wanted) not in str(exc):
            return f"step {ran}: raised {type(exc).__name__}: {exc}"
        if ran != len(steps) - 1:
            return f"step {ran}: expect_error must be on the last step"
    return None


def _check_step(
    driver_cls: Any, step: dict[str, Any], result: dict[str, Any], where: str
) -> str | None:
    for output, expect_key, mode in driver_cls.OUTPUTS:
        actual = result.get(output)
        if expect_key in step:
            expected = normalise_expected(step[expect_key], f"{where}: {expect_key}")
        elif mode.endswith("strict"):
            expected = [] if isinstance(actual, list) or actual is None else actual
        else:
            continue
        if not _same(expected, actual, mode):
            return f"{expect_key}: expected {_canon(expected)}, got {_canon(actual)}"
    for expect_key, checker in driver_cls.CHECKS.items():
        if expect_key in step:
            problem = checker(step[expect_key], result)
            if problem:
                return f"{expect_key}: {problem}"
    return None


def _same(expected: Any, actual: Any, mode: str) -> bool:
    if mode.startswith("multiset"):
        actual = [] if actual is None else actual
        if not isinstance(expected, list):
            return False
        return sorted(map(_canon, expected)) == sorted(map(_canon, actual))
    return _canon(expected) == _canon(actual)


__all__ = ["TranscriptError", "check_transcript", "iter_steps", "load", "run_transcript"]
