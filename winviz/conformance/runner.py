"""Loads transcripts, runs them step by step, and checks every ``expect*`` field; a transcript that
cannot be executed raises ``TranscriptError`` naming file, step and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from winviz.conformance.errors import TranscriptError
from winviz.conformance.kinds import DRIVERS
from winviz.conformance.kinds.driver import normalise_expected
from winviz.errors import InputError, WinvizError

TOP_LEVEL = {"name", "source", "description", "operator", "steps"}


MAX_EXPANDED_NODES = 100_000
"""The most YAML nodes a transcript may hold with its aliases expanded: nested aliases (a "billion
laughs") grow exponentially, so ``load`` refuses them first."""


def _check_nodes(root: yaml.Node, path: Path) -> None:
    """Refuse a node graph of more than ``MAX_EXPANDED_NODES`` nodes with its aliases expanded,
    or with a mapping that repeats a key (``yaml.safe_load`` would keep the last silently)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered, not yet sized: met again, it contains itself
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done:
            if id(node) in open_nodes:
                raise TranscriptError(
                    f"{path}: line {node.start_mark.line + 1}: this value contains itself "
                    "through an alias (*name), so it never ends (expected a transcript "
                    "written out)"
                )
            open_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
            if not children_done:
                _repeated_key(node, path)
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if not children_done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        size = 1 + sum(sizes.get(id(c), 1) for c in children)
        if size > MAX_EXPANDED_NODES:
            raise TranscriptError(
                f"{path}: line {node.start_mark.line + 1}: this value expands to {size} YAML "
                f"nodes through its aliases (*name), more than the {MAX_EXPANDED_NODES} a "
                "transcript may hold (expected a transcript written out, or aliases that "
                "expand to a few nodes; nested aliases grow exponentially)"
            )
        sizes[id(node)] = size


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
            _check_nodes(root, path)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
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


def public(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Step results without the runner's private keys (those starting with ``_``)."""
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in results]


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def check_transcript(doc: dict[str, Any]) -> str | None:
    """None when every expectation holds, else the first failure ``step N: ...``. A step may say
    ``expect_error: "text"`` (the last step): the operator must raise there, with ``text``."""
    driver_cls = DRIVERS[doc["operator"]["kind"]]
    steps = doc["steps"]
    where = doc.get("_file", doc["name"])
    results = iter_steps(doc)
    for index, step in enumerate(steps):
        try:
            result = next(results)
        except TranscriptError:
            raise
        except WinvizError as exc:
            wanted = step.get("expect_error") if isinstance(step, dict) else None
            if wanted is not None and str(wanted) in str(exc):
                return (
                    None
                    if index == len(steps) - 1
                    else (f"step {index}: expect_error must be on the last step")
                )
            return f"step {index}: raised {type(exc).__name__}: {exc}"
        if "expect_error" in step:
            return (
                f"step {index}: expect_error: expected an error containing "
                f"{step['expect_error']!r}, nothing was raised"
            )
        problem = _check_step(driver_cls, step, result, f"{where}: step {index}")
        if problem:
            return f"step {index}: {problem}"
    # run the generator to its end: a transcript without steps builds its operator there
    # (one the runner cannot build is an error, never a silent pass)
    try:
        next(results, None)
    except TranscriptError:
        raise
    except WinvizError as exc:
        return f"operator: raised {type(exc).__name__}: {exc}"
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


__all__ = ["TranscriptError", "check_transcript", "iter_steps", "load", "public", "run_transcript"]
