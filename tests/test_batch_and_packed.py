"""The two storage devices of the hot paths: ``Batch`` (records as columns) and packed trace
entries (``winviz.trace.Packed``), which a read turns into columns."""

from __future__ import annotations

from typing import Any

from jobs import bounded, keyed_window, sum_pipeline

import winviz as wv
from winviz.operators.batch import Batch
from winviz.trace import Packed, Trace


def test_a_batch_is_four_columns_that_iterate_slice_and_restamp_as_records() -> None:
    batch = Batch(range(10, 14), range(4), ["a", "b", "c", "d"], [None, 5, None, 7])
    assert len(batch) == 4
    assert list(batch) == [(10, 0, "a", None), (11, 1, "b", 5), (12, 2, "c", None), (13, 3, "d", 7)]
    assert batch[1] == (11, 1, "b", 5)
    assert batch[-1] == (13, 3, "d", 7)
    part = batch[1:3]
    assert isinstance(part, Batch) and list(part) == [(11, 1, "b", 5), (12, 2, "c", None)]
    assert list(batch.restamped([1, 2])) == [(10, 0, "a", 1), (11, 1, "b", 2)]
    assert list(batch.restamped([1, 2, 3, 4]).stamps) == [1, 2, 3, 4]
    assert list(batch.take([3, 0])) == [(13, 3, "d", 7), (10, 0, "a", None)]
    assert Batch.of(batch) == Batch(
        [10, 11, 12, 13], [0, 1, 2, 3], list("abcd"), [None, 5, None, 7]
    )


class _Pair(Packed):
    """Two records per entry: ("x", value) then ("y", value + 1)."""

    width = 2
    count = 2

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        now, value = values[at], values[at + 1]
        out.extend(("x", now, 0, "op", None, None, None, value))
        out.extend(("y", now, 0, "op", None, None, None, value + 1))


def test_packed_entries_count_before_the_first_read_and_unpack_in_order() -> None:
    trace, pair = Trace(), _Pair()
    trace.writer.emit("first", 0, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 1, 10, pair, 2, 20], 2)
    trace.writer.emit("between", 3, 0, "op", None, None, None, None)
    trace.append_run(pair, [pair, 4, 40], 1)
    assert len(trace) == 8  # counted without unpacking
    assert [(r.seq, r.kind, r.proc_time, r.detail) for r in trace] == [
        (0, "first", 0, None),
        (1, "x", 1, 10),
        (2, "y", 1, 11),
        (3, "x", 2, 20),
        (4, "y", 2, 21),
        (5, "between", 3, None),
        (6, "x", 4, 40),
        (7, "y", 4, 41),
    ]
    assert len(trace) == 8
    trace.append_run(pair, [pair, 5, 50], 1)  # more after a read: converted by the next read
    assert len(trace) == 10
    assert trace.column("detail")[-2:] == [50, 51]
    assert trace[9].kind == "y" and trace.kinds() == {"first": 1, "x": 4, "y": 4, "between": 1}


def test_a_traced_job_reads_the_same_before_and_after_unpacking() -> None:
    env = wv.StreamExecutionEnvironment(trace=True)
    (
        keyed_window(env, [("a", 1), ("b", 2), ("a", 3), ("a", 12)], 10, arrival_interval=1)
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .sink_to("out")
    )
    trace = env.execute().trace
    n = len(trace)
    kinds = [r.kind for r in trace]
    assert len(kinds) == n == len(trace)
    # ("b", 2) and ("a", 3) land in the open window [0, 10) cached for ("a", 1)
    assert kinds[:18] == [
        *("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
        *("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
        *("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
    ]
    second = trace.records("timer_registered")[2]
    assert (second.key, second.ts, second.detail) == ("b", 9, ("event", second.window, False))
    again = trace.records("timer_registered")[5]
    assert (again.key, again.detail[2]) == ("a", True)  # ("a", 3): the timer exists


def test_an_element_entry_unpacks_the_same_run_by_run_and_entry_by_entry() -> None:
    """``ElementEntry.fields`` (field by field) against ``unpack`` (entry by entry),
    with and without a cleanup timer of its own (allowed lateness)."""
    from winviz.trace.element_entry import ElementEntry

    for lateness in (0, 7):
        env = wv.StreamExecutionEnvironment(trace=True)
        events = [(f"k{i % 3}", i * 3 % 40, i) for i in range(60)]
        sum_pipeline(
            env,
            events,
            10,
            bounded(5),
            lateness=lateness,
            arrival_interval=1,
        )
        trace = env.execute().trace
        raw = list(trace._buffer)  # the write buffer, before the first read
        assert sum(isinstance(v, ElementEntry) for v in raw) > 20  # most elements were packed
        by_entry = trace._unpacked()  # every record, each entry through ``unpack``
        assert len(by_entry) == 8 * len(trace)
        plain = Trace()
        plain._buffer.extend(by_entry)  # (plain records, as the writer appends them)
        assert list(trace) == list(plain)


def test_a_time_that_is_not_a_long_takes_the_general_path_with_packed_entries() -> None:
    """A plain record whose time is not an int (or beyond Java's long) next to packed
    entries: the columns hold the values exactly as written (object column)."""
    trace, pair = Trace(), _Pair()
    trace.append_run(pair, [pair, 1, 10], 1)
    trace.writer.emit("odd", 2**70, 0, "op", None, None, 1.5, None)
    c = trace.columns()
    assert not c.proc_time.exact and not c.ts.exact
    assert [(r.kind, r.proc_time, r.ts, r.detail) for r in trace] == [
        ("x", 1, None, 10),
        ("y", 1, None, 11),
        ("odd", 2**70, 1.5, None),
    ]


def test_an_element_entry_reads_part_of_a_run_field_by_field() -> None:
    """``ElementEntry.fields`` over some entries of a run (not a whole run: each entry's
    values looked up in its run) gives those entries' values, as ``unpack`` does."""
    from winviz.trace.element_entry import ElementRun
    from winviz.trace.pieces import Slots

    w = wv.TimeWindow(0, 10)
    trace = Trace()
    run = ElementRun(8, 7, [1, 2, 3], [4, None, 6], 40, ["a", "b", "c"], [4, 5, 6])
    trace.writer.open_window_elements(
        "src", "win", None, run, 0, ["k", "j", "k"], [w] * 3, [0, 3, 3]
    )
    buffer = list(trace._buffer)
    marker = buffer[0]
    fields = marker.fields(Slots(buffer, marker.width, [(6, 18)]))  # the last two entries
    assert fields[1][0].get().values.tolist() == [2, 3]  # proc_time
    assert fields[2][0].get().values.tolist() == [7, 7]  # the source's watermark
    assert fields[6][0].get().tolist() == [None, 6]  # arrival's ts: the source timestamps
    assert fields[6][1].get().values.tolist() == [5, 6]  # element's ts
    values, positions = fields[7][0].get().fields
    assert (list(values), positions.tolist()) == (["b", "c"], [41, 42])
    by_entry: list[Any] = []
    marker.unpack(buffer, 7, by_entry)
    assert by_entry[:8] == ["arrival", 2, 7, "src", None, None, None, ("b", 41)]


def test_element_entries_read_range_arrival_times_as_written() -> None:
    """The proc_time and ts of element entries whose runs' arrival times are ranges (a source
    at an interval; read from their bounds), lists, ranges of two steps, or a range going
    beyond Java's long (an object column): each record's values as ``unpack`` writes them."""
    from winviz.trace.element_entry import ElementRun

    w = wv.TimeWindow(0, 10)

    def read(*runs: Any, first: int = 0) -> tuple[list[Any], bool, list[Any]]:
        trace = Trace()
        for run in runs:
            n = len(run.stamps) - first
            trace.writer.open_window_elements(
                "s", "w", None, run, first, ["k"] * n, [w] * n, [3] * n
            )
        plain = Trace()
        plain._buffer.extend(trace._unpacked())  # (each entry through ``unpack``)
        c = trace.columns()
        assert list(trace) == list(plain)
        return c.proc_time.tolist()[::5], c.proc_time.exact, c.ts.tolist()[1::5]

    def run(times: Any, at: int) -> ElementRun:
        return ElementRun(
            8, 7, times, [None] * len(times), at, ["v"] * len(times), [1] * len(times)
        )

    a, b = run(range(100, 115, 5), 0), run(range(200, 210, 5), 3)
    assert read(a, b) == ([100, 105, 110, 200, 205], True, [1] * 5)  # whole runs
    assert read(a, b, first=1) == ([105, 110, 205], True, [1] * 3)  # some of each run
    assert read(a, run(range(7, 5, -1), 3)) == ([100, 105, 110, 7, 6], True, [1] * 5)
    assert read(a, run([3, 1], 3)) == ([100, 105, 110, 3, 1], True, [1] * 5)
    big = run(range(2**63 - 1, 2**63 + 1), 0)
    assert read(big) == ([2**63 - 1, 2**63], False, [1, 1])
    mixed = Trace()  # next to a plain record's time beyond the long: the values as written
    mixed.writer.open_window_elements("s", "w", None, a, 0, ["k"] * 3, [w] * 3, [3] * 3)
    mixed.writer.emit("odd", 2**70, 0, "op", None, None, None, None)
    c = mixed.columns()
    assert not c.proc_time.exact and c.proc_time.tolist()[::5] == [100, 105, 110, 2**70]
