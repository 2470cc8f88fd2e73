"""The first read of a trace (issue 11): packed entries kept per marker and declared run by
run, columns decoded field by field when a reader first asks, times kept exactly as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from jobs import bounded

import winviz as wv
from winviz.trace import Packed, Trace
from winviz.trace.columns import (
    Deferred,
    Slots,
    encode,
    encode_runs,
    from_flat,
    time_column,
)

FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")


class _Pair(Packed):
    """Two records per entry: ("x", value) then ("y", value * 10)."""

    width = 2
    count = 2

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        now, value = values[at], values[at + 1]
        out.extend(("x", now, 0, "op", None, None, None, value))
        out.extend(("y", now, 0, "op", None, None, None, value * 10))


def _kernel_job(n: int = 300, lateness: int = 0) -> Trace:
    env = wv.StreamExecutionEnvironment(trace=True)
    events = [(f"k{i % 7}", i * 5 - (i * 37) % 60, i) for i in range(n)]
    (
        env.from_collection(events, arrival_interval=1)
        .assign_timestamps_and_watermarks(bounded(20))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(100))
        .allowed_lateness(lateness)
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
        .sink_to("out")
    )
    return env.execute().trace


def _values(c: Any, name: str) -> list[Any]:
    column = getattr(c, name)
    if name == "detail":
        return column.tolist()
    return column.decode().tolist() if hasattr(column, "decode") else column.tolist()


@pytest.mark.parametrize("lateness", [0, 15])
def test_each_field_decoded_on_first_read_equals_the_records_unpacked_one_by_one(
    lateness: int,
) -> None:
    trace = _kernel_job(lateness=lateness)
    n = len(trace)
    assert trace._packed_records > n // 3  # many records are packed entries' (ElementEntry)
    expected = from_flat(trace._unpacked())  # every entry through Packed.unpack, in order
    assert len(expected) == n > 1500
    c = trace.columns()
    assert c.seq.tolist() == list(range(n))
    assert c._detail is None and c._key is None  # nothing decoded yet
    kinds = c.kind
    assert c._detail is None  # reading the kinds decodes the kinds only
    assert kinds.decode(np.arange(6)).tolist() == [
        *("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered")
    ]
    for name in FIELDS:
        assert _values(c, name) == _values(expected, name), name
    assert c.proc_time.exact and c.watermark.exact and not c.ts.present.all()
    assert trace.columns() is c  # read once


def test_runs_of_entries_are_declared_where_they_stand_and_a_wrong_declaration_refused() -> None:
    trace, pair = Trace(), _Pair()
    trace.emit("first", 0, 0, "op", None, None, None, None)
    trace.extend((pair, 1, 2, pair, 3, 4))
    trace.packed(pair, 2)
    trace.extend((pair, 5, 6))
    trace.packed(pair, 1)  # the same run: no plain record in between
    assert trace._runs == [(8, pair, 3)]
    trace.emit("last", 7, 0, "op", None, None, None, None)
    assert len(trace) == 8
    with pytest.raises(ValueError, match=r"the last 1 entries written are not entries of this"):
        trace.packed(pair, 1)  # the buffer ends with a plain record
    with pytest.raises(ValueError, match=r"the last 3 entries written are not entries of this"):
        trace.packed(pair, 3)
    assert len(trace) == 8
    assert [(r.kind, r.proc_time, r.detail) for r in trace] == [
        ("first", 0, None),
        ("x", 1, 2),
        ("y", 1, 20),
        ("x", 3, 4),
        ("y", 3, 40),
        ("x", 5, 6),
        ("y", 5, 60),
        ("last", 7, None),
    ]


def test_a_marker_written_without_its_declaration_is_a_clear_error() -> None:
    trace, pair = Trace(), _Pair()
    trace.emit("first", 0, 0, "op", None, None, None, None)
    trace.extend((pair, 1, 2))
    trace.packed(pair, 1)
    trace.extend((pair, 3, 4))  # never declared
    trace.emit("last", 7, 0, "op", None, None, None, None)
    with pytest.raises(ValueError, match=r"trace write buffer slot 11: <.*_Pair.*> where a record"):
        trace.columns()


def test_a_time_that_is_not_a_long_int_is_kept_as_written() -> None:
    """A float or bool time is not a long: the column keeps it (an object column), never
    rounded to an int."""
    trace = Trace()
    trace.emit("odd", 3, 0, "op", None, None, 1.5, None)
    trace.emit("odd", True, 0, "op", None, None, 7, None)
    c = trace.columns()
    assert not c.ts.exact and not c.proc_time.exact and c.watermark.exact
    assert [(r.proc_time, r.ts) for r in trace] == [(3, 1.5), (True, 7)]
    assert [type(r.proc_time) for r in trace] == [int, bool]
    assert time_column([1, None, 2]).values.tolist() == [1, 0, 2]
    assert time_column([None, None]).present.tolist() == [False, False]
    big = time_column([2**63, 1])
    assert not big.exact and big.values.tolist() == [2**63, 1]
    assert np.array_equal(time_column([5, -(2**63)]).values, np.array([5, -(2**63)]))


def test_encode_runs_codes_runs_of_one_object_as_encode_codes_them_all() -> None:
    one, true = 1, True
    window_a, window_b = (0, 10), (0, 10)  # equal, not the same object
    values = [one] * 40 + [true] * 30 + [window_a] * 20 + [window_b] * 10 + [None] * 5 + [one]
    runs, plain = encode_runs(values, fast=False), encode(values)
    assert runs.values == plain.values == [1, True, (0, 10), None]
    assert [type(v) for v in runs.values] == [int, bool, tuple, type(None)]
    assert runs.codes.tolist() == plain.codes.tolist()
    assert runs.codes.tolist() == [0] * 40 + [1] * 30 + [2] * 30 + [3] * 5 + [0]
    short = encode_runs(["a", "b", "a"])
    assert short.values == ["a", "b"] and short.codes.tolist() == [0, 1, 0]


def test_slots_slice_an_entry_value_when_asked_and_deferred_items_are_made_once() -> None:
    pair = _Pair()
    slots = Slots([pair, 1, 2, pair, 3, 4, pair, 5, 6], pair.width)
    assert len(slots) == 2 and slots[0] == [1, 3, 5] and slots[1] == [2, 4, 6]
    assert list(slots) == [[1, 3, 5], [2, 4, 6]]
    with pytest.raises(IndexError):
        slots[2]
    made = []
    item = Deferred(lambda: made.append("made") or [7])
    assert item.get() == [7] and item.get() == [7] and made == ["made"]
