"""Tests build their jobs from tests/jobs.py (issue 30): no pipeline shape is spelled out in
more than two places in tests/.

A *pipeline* is a chain of DataStream calls that reaches a ``key_by``, a ``window`` or an
``assign_timestamps_and_watermarks`` (three calls or more); its *shape* is the names of the
calls in order, with the class named in a ``window``, ``trigger``, ``evictor`` or window
function call (``TumblingEventTimeWindows.of``, ``CountAggregate``, ``lambda`` …). Values (sizes,
bounds, events, sink names), the watermark strategy and ``name``/``uid`` calls do not count, so
two pipelines that differ only in their numbers are one shape: a job the tests need again is a
builder in tests/jobs.py, called with its numbers.

    python tests/test_jobs_used.py        prints every shape with its count and places
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MOST = 2
"""How many places in tests/ may spell out one pipeline shape."""

MARKS = {"key_by", "window", "window_all", "assign_timestamps_and_watermarks"}
NAMED = {"window", "window_all", "trigger", "evictor", "aggregate", "reduce", "process", "apply"}
SKIPPED = {"name", "uid"}


def _called(arg: ast.expr) -> str:
    """What an argument builds: the first call or lambda in it (``Class.method`` for a class's
    factory, e.g. ``TumblingEventTimeWindows.of``), else its node type."""
    for node in ast.walk(arg):
        if isinstance(node, ast.Lambda):
            return "lambda"
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                return f.id
            if isinstance(f, ast.Attribute):
                owner = f.value
                base = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                return f"{base}.{f.attr}" if base[:1].isupper() else f.attr
    return type(arg).__name__


def _chain(call: ast.Call) -> list[ast.Call]:
    """The method calls of a chain ``a.f(…).g(…).h(…)``, first to last."""
    steps = []
    node: ast.expr = call
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        steps.append(node)
        node = node.func.value
    return steps[::-1]


def shapes(source: str) -> list[tuple[str, int]]:
    """Every pipeline of a module's source: (shape, line)."""
    tree = ast.parse(source)
    inner = {
        id(n.func.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if id(node) in inner:
            continue  # part of a longer chain
        steps = _chain(node)
        names = [s.func.attr for s in steps]  # type: ignore[attr-defined]
        if len(steps) < 3 or not MARKS & set(names):
            continue
        parts = []
        for step, name in zip(steps, names, strict=True):
            if name in SKIPPED:
                continue
            if name in NAMED and step.args:
                name += "(" + ",".join(_called(a) for a in step.args) + ")"
            parts.append(name)
        found.append((" . ".join(parts), node.lineno))
    return found


def places(root: Path = TESTS) -> dict[str, list[str]]:
    """Each shape in the Python files below ``root``: the places (file:line) that spell it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for shape, line in shapes(path.read_text(encoding="utf-8")):
            found[shape].append(f"{path.relative_to(root)}:{line}")
    return dict(found)


TUMBLING_COUNT = """
env.from_collection(events, arrival_interval=10).assign_timestamps_and_watermarks(
    wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(lambda e, _: e[1])
).key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(5_000)).aggregate(
    wv.CountAggregate()
).sink_to("out")
"""


def test_a_shape_is_its_calls_and_classes_not_its_values() -> None:
    other_values = (
        TUMBLING_COUNT.replace("5_000", "100").replace('"out"', '"n"').replace("(0)", "(7)")
    )
    assert shapes(TUMBLING_COUNT) == [
        (
            "from_collection . assign_timestamps_and_watermarks . key_by"
            " . window(TumblingEventTimeWindows.of) . aggregate(CountAggregate) . sink_to",
            2,
        )
    ]
    assert shapes(other_values)[0][0] == shapes(TUMBLING_COUNT)[0][0]
    sliding = TUMBLING_COUNT.replace("Tumbling", "Sliding")
    assert shapes(sliding)[0][0] != shapes(TUMBLING_COUNT)[0][0]
    assert shapes("jobs.count_pipeline(env, events, 5_000).execute()") == []


def test_a_third_copy_of_a_shape_is_found(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(TUMBLING_COUNT)
    (found,) = places(tmp_path).values()
    assert found == ["a.py:2", "b.py:2", "c.py:2"]
    assert _too_often(places(tmp_path))


def _too_often(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {shape: where for shape, where in found.items() if len(where) > MOST}


def test_no_pipeline_shape_is_spelled_out_more_than_twice_in_tests() -> None:
    """A shape in three places or more belongs in tests/jobs.py as a builder."""
    too_often = _too_often(places())
    assert not too_often, "spelled out more than twice; build it from tests/jobs.py:\n" + "\n".join(
        f"{shape}: {', '.join(where)}" for shape, where in too_often.items()
    )


if __name__ == "__main__":
    for shape, where in sorted(places().items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(len(where), shape)
        if "-v" in sys.argv:
            print("   ", " ".join(where))
