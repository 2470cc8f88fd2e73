"""``TraceColumns.times_at``: a time field of some records read from a first read (only those
records, ``Pieces.times_at``, into arrays of their length) is the whole decoded column's
``take`` of them (issues 11/12), on mixed traces (plain records and packed entries, slots of
varying kinds, times beyond the long range), after parts, on ``where`` selections and on
loaded traces; and it keeps nothing."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from chart_jobs import JOBS, decode_all
from test_trace_parts import hand_trace, rows_of

from winviz.trace import Trace
from winviz.trace.columns import TIMES, TimeColumn, identity
from winviz.trace.load import load_trace


def typed(column: TimeColumn) -> tuple[list[object], list[bool]]:
    """A time column's values (each with its type, None where absent) and presence."""
    return [identity(v) for v in column.tolist()], column.present.tolist()


def check(make: object, whole: Trace, rows: np.ndarray, kinds: tuple[str, ...] | None) -> None:
    for name in TIMES:
        fresh = make().columns()  # type: ignore[operator]
        got = fresh.times_at(name, rows, kinds)
        assert len(got.values) == len(got.present) == len(rows)
        want = getattr(whole.columns(), name).take(rows)
        assert typed(got) == typed(want), (name, kinds, len(rows))
        if got.exact and want.exact:  # (0 where absent, as the column)
            assert got.values.tolist() == want.values.tolist()
        if got.exact:  # (read record by record: nothing kept; else the part, read as written)
            assert getattr(fresh, "_" + name) is None and name not in fresh._parts


def kind_sets(trace: Trace) -> list[tuple[str, ...]]:
    kinds = list(trace.columns().kind.values)
    return [(k,) for k in kinds] + list(combinations(kinds, 2))[::5] + [tuple(kinds)]


@pytest.mark.parametrize("job", ["hand", *sorted(j for j in JOBS if j != "kernel_binned")])
def test_times_of_some_records_are_the_whole_columns(job: str) -> None:
    """(The kernel job at 3k only: at 12k the same paths.)"""

    def make() -> Trace:
        return hand_trace() if job == "hand" else JOBS[job]().trace

    whole = make()
    decode_all(whole)
    rng = np.random.default_rng(11)
    for kinds in kind_sets(whole):
        rows = rows_of(whole, kinds)
        few = np.sort(rng.choice(rows, size=max(1, len(rows) // 7), replace=False))
        for some in (rows, few):
            check(make, whole, some, kinds)
    n = len(whole.columns())
    for rows in (np.sort(rng.choice(n, size=n // 9, replace=False)), np.arange(n)):
        check(make, whole, rows, None)  # records of every kind, kinds not given
    check(make, whole, np.zeros(0, dtype=np.int64), ())


def test_a_time_beyond_the_long_range_reads_the_part_as_written() -> None:
    """The hand-made trace's ``alpha`` ts holds values beyond the long range: its records'
    times are the part's (an object column), the same values as the whole column's."""
    whole = hand_trace()
    decode_all(whole)
    assert not whole.columns().ts.exact
    rows = rows_of(whole, ("alpha", "epsilon"))
    got = hand_trace().columns().times_at("ts", rows, ("alpha", "epsilon"))
    assert not got.exact and typed(got) == typed(whole.columns().ts.take(rows))
    beta = rows_of(whole, ("beta",))  # (longs only: int64)
    got = hand_trace().columns().times_at("ts", beta, ("beta",))
    assert got.exact and typed(got) == typed(whole.columns().ts.take(beta))


def test_times_after_parts_and_decoded_columns() -> None:
    job = "late_union"
    whole = JOBS[job]().trace
    decode_all(whole)
    rows = rows_of(whole, ("element", "fired"))
    fresh = JOBS[job]().trace.columns()
    part = fresh.part("watermark", ("element", "fired", "watermark"))
    got = fresh.times_at("watermark", rows, ("element", "fired"))
    assert typed(got) == typed(whole.columns().watermark.take(rows))
    assert fresh._parts["watermark"][1] is part  # (the part read, kept as it was)
    fresh.proc_time  # noqa: B018  (decoded whole: its take)
    got = fresh.times_at("proc_time", rows, ("element", "fired"))
    assert typed(got) == typed(whole.columns().proc_time.take(rows))


def test_times_of_a_selection_and_of_a_loaded_trace(tmp_path: Path) -> None:
    job = "late_union"
    whole = JOBS[job]().trace
    decode_all(whole)
    view = JOBS[job]().trace.where(kind=("element", "fired", "watermark"))
    decode_all(view)
    rows = np.arange(0, len(view), 3)
    for name in TIMES:
        got = JOBS[job]().trace.where(kind=("element", "fired", "watermark"))
        assert typed(got.columns().times_at(name, rows)) == typed(
            getattr(view.columns(), name).take(rows)
        )
    path = JOBS[job]().trace.save(tmp_path / "trace.parquet")
    rows = rows_of(whole, ("element", "timer_fired"))
    for name in TIMES:
        loaded = load_trace(path).columns()
        got = loaded.times_at(name, rows, ("element", "timer_fired"))
        assert typed(got) == typed(getattr(whole.columns(), name).take(rows)), name
