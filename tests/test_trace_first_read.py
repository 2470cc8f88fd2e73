"""The first read of a trace (issue 11): packed entries kept per marker and declared run by
run, columns decoded field by field when a reader first asks, times kept exactly as written."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
from jobs import bounded, sum_pipeline

import winviz as wv
from winviz.trace import Packed, Trace, pieces, store
from winviz.trace.coded import encode, encode_runs, identity, time_column
from winviz.trace.columns import TraceColumns, from_fields
from winviz.trace.pieces import Deferred, Plain, Slots, sliced

FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")


def from_flat(data: list[object]) -> TraceColumns:
    """Columns of a flat buffer of eight values per record."""
    return from_fields([data[f::8] for f in range(8)])


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
    sum_pipeline(env, events, 100, bounded(20), lateness=lateness, arrival_interval=1)
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


def test_runs_of_entries_are_declared_where_they_stand() -> None:
    trace, pair = Trace(), _Pair()
    trace.writer.emit("first", 0, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 1, 2, pair, 3, 4], 2)
    trace.append_run(pair, [pair, 5, 6], 1)  # the same run: no plain record in between
    assert trace._runs == [(8, pair, 3)]
    trace.writer.emit("last", 7, 0, "op", None, None, None, None)
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


def test_a_record_whose_kind_is_not_a_str_is_a_clear_error() -> None:
    trace, pair = Trace(), _Pair()
    trace.writer.emit("first", 0, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 1, 2], 1)
    trace.writer.emit(3, 7, 0, "op", None, None, None, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"trace write buffer: a record whose kind is not a str"):
        trace.columns()


def test_a_time_that_is_not_a_long_int_is_kept_as_written() -> None:
    """A float or bool time is not a long: the column keeps it (an object column), never
    rounded to an int."""
    trace = Trace()
    trace.writer.emit("odd", 3, 0, "op", None, None, 1.5, None)
    trace.writer.emit("odd", True, 0, "op", None, None, 7, None)
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


# -- the first read takes the write buffer itself; decoding equals the step-by-step reading --


class _Triple(Packed):
    """Three records per entry (values: a time or None, a key, a detail): ``p`` with the
    entry's time and key, ``q`` without a time, ``r`` with the time + 1 and the key as its
    detail. ``fields`` is ``Packed``'s default (entry by entry): lists for every item."""

    width = 3
    count = 3

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        t, key, detail = values[at : at + 3]
        out.extend(("p", t, 0, "op3", key, None, t, detail))
        out.extend(("q", t, None, "op3", key, None, None, None))
        out.extend(("r", None if t is None else t + 1, 1, "op3", None, None, t, key))


_KEYS = [1, True, 1.0, "1", None, (1, "a"), (True, "a"), -0.0, 0.0, float("nan"), [1], "k"]


def _random_trace(seed: int) -> Trace:
    """Plain records and runs of two markers in random order, with keys that compare equal
    across types (1, True, 1.0), None times, and unhashable values."""
    import random

    rng = random.Random(seed)
    trace, pair, triple = Trace(), _Pair(), _Triple()
    for _ in range(rng.randrange(20, 60)):
        what = rng.random()
        if what < 0.4:
            for _ in range(rng.randrange(1, 5)):
                key = rng.choice(_KEYS)
                time = rng.choice([None, rng.randrange(-(2**40), 2**40)])
                kind = rng.choice(["a", "b", "c"])
                trace.writer.emit(kind, rng.randrange(100), time, "op", key, None, time, key)
        elif what < 0.7:
            entries = rng.randrange(1, 8)
            run = [(pair, rng.randrange(1000), rng.randrange(-50, 50)) for _ in range(entries)]
            trace.append_run(pair, [v for entry in run for v in entry], entries)
        else:
            entries = rng.randrange(1, 8)
            run = []
            for _ in range(entries):
                t = rng.choice([None, rng.randrange(10**6)])
                run += [triple, t, rng.choice(_KEYS), rng.choice(_KEYS)]
            trace.append_run(triple, run, entries)
    return trace


def _typed(values: list[Any]) -> list[Any]:
    return [(type(v), repr(v)) for v in values]


@pytest.mark.parametrize("seed", range(12))
def test_random_traces_decode_as_their_records_unpacked_one_by_one(seed: int) -> None:
    trace = _random_trace(seed)
    records = trace._unpacked()  # the step-by-step reading: every entry through ``unpack``
    n = len(records) // len(FIELDS)
    assert len(trace) == n
    c = trace.columns()
    assert len(c) == n and c.seq.tolist() == list(range(n))
    for f, name in enumerate(FIELDS):
        assert _typed(_values(c, name)) == _typed(records[f :: len(FIELDS)]), name
    key = c.key
    for i, v in enumerate(key.values):  # one code per (type, value): 1, True, 1.0 apart
        assert key.code_of(v) == i


@pytest.mark.parametrize("seed", range(6))
def test_random_traces_parts_equal_their_whole_columns(seed: int) -> None:
    whole = _random_trace(seed)
    c = whole.columns()
    for name in FIELDS:
        getattr(c, name)
    kinds_all = list(c.kind.values)
    for kinds in ([kinds_all[0]], kinds_all[1::2], kinds_all[:-1]):
        trace = _random_trace(seed)
        part_c = trace.columns()
        rows = np.flatnonzero(np.isin(c.kind.codes, [c.kind.code_of(k) for k in kinds]))
        for name in FIELDS[1:]:
            part = part_c.part(name, kinds)
            if hasattr(part, "decode"):
                got = part.decode(rows).tolist()
            elif hasattr(part, "take"):
                got = part.take(rows).tolist()
            else:
                got = part[rows].tolist()
            want = _values(c, name)
            assert _typed(got) == _typed([want[i] for i in rows.tolist()]), (name, kinds)


def test_the_first_read_takes_the_write_buffer_itself_and_writing_goes_on() -> None:
    trace, pair = Trace(), _Pair()
    trace.writer.emit("first", 0, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 1, 2, pair, 3, 4], 2)
    buffer = id(trace._buffer)
    c = trace.columns()
    assert id(trace._buffer) != buffer and trace._buffer == []  # taken, not copied
    assert trace._runs == [] and len(trace) == 5
    trace.writer.emit("later", 9, 0, "op", None, None, None, None)  # into the new buffer
    assert trace._buffer[0] == "later" and len(trace) == 6
    assert c.kind.decode().tolist() == ["first", "x", "y", "x", "y"]
    assert [(r.kind, r.proc_time, r.detail) for r in trace] == [
        ("first", 0, None),
        ("x", 1, 2),
        ("y", 1, 20),
        ("x", 3, 4),
        ("y", 3, 40),
        ("later", 9, None),
    ]


def test_the_writer_keeps_writing_to_the_trace_after_a_read() -> None:
    trace, pair = Trace(), _Pair()
    writer = trace.writer  # (as an operator holds it)
    writer.emit("first", 0, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 1, 2], 1)
    assert [r.kind for r in trace] == ["first", "x", "y"]
    assert trace._buffer == []  # taken
    writer.emit("second", 5, 0, "op", None, None, None, None)
    assert [(r.seq, r.kind, r.proc_time) for r in trace] == [
        (0, "first", 0),
        (1, "x", 1),
        (2, "y", 1),
        (3, "second", 5),
    ]


def test_plain_records_and_slots_are_sliced_from_their_ranges() -> None:
    pair = _Pair()
    data = [
        *("a", 1, 2, 3, 4, 5, 6, 7),
        *(pair, 10, 11, pair, 12, 13),
        *("b", 8, 9, 10, 11, 12, 13, 14),
        *("c", 15, 16, 17, 18, 19, 20, 21),
        *(pair, 14, 15),
    ]
    plain = Plain(data, [(0, 8), (14, 30)])
    assert len(plain) == 3
    assert plain.field(0) == ["a", "b", "c"] and plain.field(7) == [7, 14, 21]
    assert plain.gather(np.array([2, 0]), 1) == [15, 1]
    slots = Slots(data, pair.width, [(8, 14), (30, 33)])
    assert slots[0] == [10, 12, 14] and slots[1] == [11, 13, 15]
    assert sliced(data, [(8, 14), (30, 33)], 0, 3) == [pair, pair, pair]


def _encode_step_by_step(values: list[Any]) -> tuple[list[int], list[Any]]:
    """Dictionary codes as the docstring says: by (type, value), in order of first
    appearance, one value at a time."""
    codes: list[int] = []
    first: list[Any] = []
    seen: dict[Any, int] = {}
    for v in values:
        ident = identity(v)
        if ident not in seen:
            seen[ident] = len(first)
            first.append(v)
        codes.append(seen[ident])
    return codes, first


@pytest.mark.parametrize("seed", range(8))
def test_encode_equals_the_step_by_step_codes(seed: int) -> None:
    import random

    rng = random.Random(seed)
    pool = [_KEYS, ["a", "b", "c", "d"], [1, 2, 3, True, False], [(1, 2), (1, 2.0), (True, 2)]]
    values = [rng.choice(rng.choice(pool)) for _ in range(rng.randrange(0, 300))]
    coded = encode(values)
    codes, first = _encode_step_by_step(values)
    assert coded.codes.tolist() == codes
    assert _typed(coded.values) == _typed(first)
    strings = [rng.choice("abcde") for _ in range(200)]
    fast = encode(strings, fast=True)
    assert (fast.codes.tolist(), fast.values) == _encode_step_by_step(strings)
    runs = encode_runs([s for s in strings for _ in range(rng.randrange(1, 4))], fast=True)
    assert runs.values == list(dict.fromkeys(strings))


def test_encode_tells_equal_values_of_other_types_apart() -> None:
    coded = encode([1, True, 1.0, 1, "a", True, None, 0.0, -0.0])
    assert _typed(coded.values) == _typed([1, True, 1.0, "a", None, 0.0, -0.0])
    assert coded.codes.tolist() == [0, 1, 2, 0, 3, 1, 4, 5, 6]
    unhashable = encode([[1], [2], [1], (1,)])
    assert unhashable.values == [[1], [2], (1,)] and unhashable.codes.tolist() == [0, 1, 0, 2]
    empty = encode([])
    assert empty.values == [] and empty.codes.tolist() == []


def test_the_first_read_runs_without_cyclic_collection_passes(monkeypatch: Any) -> None:
    """A full collection pass over a run's objects could land in the first read (it makes
    many containers): the write buffer is read into columns with the collector paused, as
    its decoding is, and the collector is back on afterwards."""
    trace = _kernel_job(n=200)
    enabled: list[bool] = []

    def sliced(*args: Any) -> Any:
        enabled.append(gc.isenabled())
        return pieces.sliced(*args)

    monkeypatch.setattr(store, "sliced", sliced)
    assert gc.isenabled()
    columns = trace.columns()
    assert enabled == [False] and len(columns) == len(trace) > 1500
    assert gc.isenabled()
