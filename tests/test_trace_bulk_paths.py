"""The bulk paths of the trace readers (issue 11) give exactly what the one-by-one paths give:
the packed-entry layout found by markers, texts of trace files written and parsed in bulk,
and tooltip texts written directly."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from winviz.trace import Packed, Trace, codec, jsonable
from winviz.trace.codec import OpaqueValue
from winviz.trace.read_file import decode_texts
from winviz.viz.value_texts import short
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow


class _Pair(Packed):
    """Two records per entry: ("x", value) then ("y", value)."""

    width = 2
    count = 2

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        now, value = values[at], values[at + 1]
        out.extend(("x", now, 0, "op", None, None, None, value))
        out.extend(("y", now, 0, "op", None, None, None, value))


class _EqualsAnything:
    """A payload whose ``==`` says True to everything (a marker included)."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "EqualsAnything"


def _write(trace: Trace, payload: Any) -> None:
    pair = _Pair()
    trace.writer.emit("first", 0, 0, "op", None, None, None, payload)
    trace.append_run(pair, [pair, 1, 10, pair, 2, payload], 2)
    trace.writer.emit("between", 3, 0, "op", None, None, None, 30)
    trace.append_run(pair, [pair, 4, 40], 1)


def test_packed_entries_read_the_same_when_a_value_claims_to_equal_everything() -> None:
    weird = _EqualsAnything()
    trace = Trace()
    _write(trace, weird)
    records = [(r.kind, r.proc_time, r.detail) for r in trace]
    assert records == [
        ("first", 0, weird),
        ("x", 1, 10),
        ("y", 1, 10),
        ("x", 2, weird),
        ("y", 2, weird),
        ("between", 3, 30),
        ("x", 4, 40),
        ("y", 4, 40),
    ]
    assert [r.seq for r in trace] == list(range(8))
    assert all(r.detail is weird for r in trace if r.proc_time in (0, 2))


def test_packed_entries_read_the_same_with_plain_values() -> None:
    trace = Trace()
    _write(trace, "p")
    assert [(r.seq, r.kind, r.proc_time, r.detail) for r in trace] == [
        (0, "first", 0, "p"),
        (1, "x", 1, 10),
        (2, "y", 1, 10),
        (3, "x", 2, "p"),
        (4, "y", 2, "p"),
        (5, "between", 3, 30),
        (6, "x", 4, 40),
        (7, "y", 4, 40),
    ]


VALUES = [
    "a",
    'q"\\\u2028\u00e9<>{',
    0,
    -7,
    2**70,
    True,
    False,
    None,
    1.5,
    -0.0,
    1e300,
    float("nan"),
    float("inf"),
    ("k", 1, 2.5),
    ("k", float("-inf")),
    ("k", (1, 2)),
    ("x", [1, "{"]),
    ("a{", 1),
    (1, True, None, "é"),
    (),
    (1.0,),
    TimeWindow(0, 1000),
    GLOBAL_WINDOW,
    {"a": 1},
    {"$x": 1},
    {"k": (1,)},
    {1: "one"},
    [1, 2],
    [],
    OpaqueValue("Click(1)", "m.Click", {"t": 1}),
]


def test_texts_written_in_bulk_are_the_texts_written_one_by_one() -> None:
    assert codec.to_texts(VALUES) == [codec.to_text(v) for v in VALUES]


def test_texts_parsed_in_bulk_are_the_values_parsed_one_by_one() -> None:
    texts = [codec.to_text(v) for v in VALUES]
    bulk = decode_texts(pa.array(texts, pa.string())).tolist()
    single = [codec.from_text(t) for t in texts]
    assert [type(v) for v in bulk] == [type(v) for v in single]
    assert [repr(v) for v in bulk] == [repr(v) for v in single]
    assert bulk[13] == ("k", 1, 2.5) and bulk[16] == ("x", [1, "{"])
    assert bulk[21] == TimeWindow(0, 1000) and bulk[22] is GLOBAL_WINDOW


def test_tooltip_texts_are_compact_json_of_the_jsonable_form() -> None:
    for value in [*VALUES, ("é\u2028", "x" * 100), [1.5, None, "s"]]:
        text = (
            value
            if isinstance(value, str)
            else json.dumps(jsonable(value), ensure_ascii=False, separators=(",", ":"), default=str)
        )
        want = text if len(text) <= 60 else text[:59] + "…"
        assert short(value) == want, value
        assert short(value, 5) == (text if len(text) <= 5 else text[:4] + "…")
