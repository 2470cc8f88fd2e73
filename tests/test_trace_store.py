"""The columnar trace store: the writer API, reads between writes, filters, the pandas view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError
from winviz.trace import Trace


def _job(lateness: int = 0) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    events = [("a", 1_000), ("b", 2_500), ("a", 4_999), ("a", 900), ("b", 7_000), ("a", 200)]
    count_pipeline(
        env,
        events,
        5_000,
        bounded(500),
        lateness=lateness,
        late=late,
        sink="counts",
        arrival_times=[0, 100, 200, 900, 1_000, 1_300],
    )
    return env.execute()


def test_records_written_one_by_one_and_in_bulk_read_back_in_order() -> None:
    trace = Trace()
    trace.writer.emit("clock", 0, None, "op", None, None, None, "start")
    trace.writer.emit("clock", 5, 7, "op", 1, None, 3, "a")
    trace.writer.emit("clock", 6, 7, "op", True, None, 4, "b")
    assert len(trace) == 3
    assert [(r.seq, r.proc_time, r.key, r.detail) for r in trace] == [
        (0, 0, None, "start"),
        (1, 5, 1, "a"),
        (2, 6, True, "b"),
    ]
    # 1 and True are equal in Python but two keys (as in Java): the dictionary keeps both
    assert [type(k) for k in trace.column("key")] == [type(None), int, bool]
    trace.writer.emit("clock", 9, 8, "op", 1, None, None, "after a read")  # writing goes on
    assert len(trace) == 4 and trace[3].detail == "after a read"
    assert trace.column("watermark") == [None, 7, 7, 8]


def test_where_filters_by_kind_operator_key_and_window_keeping_seq() -> None:
    trace = _job().trace
    fired = trace.where(kind="fired")
    assert [(r.seq, r.key, r.window) for r in fired] == [
        (r.seq, r.key, r.window) for r in trace if r.kind == "fired"
    ]
    a0 = trace.where(key="a", window=(0, 5_000))
    assert {r.kind for r in a0} >= {"assigned", "fired", "timer_registered", "cleanup"}
    assert all(r.key == "a" and (r.window.start, r.window.end) == (0, 5_000) for r in a0)
    assert len(trace.where(window=wv.TimeWindow(0, 5_000))) == len(trace.where(window=(0, 5_000)))
    assert len(trace.where(key="nobody")) == 0
    both = trace.where(kind=["fired", "cleanup"], operator="window")
    assert set(both.kinds()) == {"fired", "cleanup"}
    with pytest.raises(TypeError, match="read-only"):
        both.writer.emit("clock", 0, None, "op", None, None, None)
    with pytest.raises(TypeError, match="read-only"):  # a kind method, as the engine writes
        both.writer.clock(0, None, "op", "tick")
    assert len(both) == len(trace.where(kind=["fired", "cleanup"], operator="window"))
    assert trace.records("fired", key="b")[0].window == wv.TimeWindow(0, 5_000)


def test_until_gives_the_run_as_it_stood_at_a_processing_time() -> None:
    trace = _job().trace
    early = trace.until(150)
    assert max(r.proc_time for r in early) == 100
    assert [r.seq for r in early] == list(range(len(early)))
    assert len(early) < len(trace)


def test_to_pandas_types_and_values() -> None:
    trace = _job(lateness=1_000).trace
    frame = trace.to_pandas()
    assert list(frame.columns[:9]) == list(wv.trace.FRAME_COLUMNS)
    assert isinstance(frame["kind"].dtype, pd.CategoricalDtype)
    assert isinstance(frame["operator"].dtype, pd.CategoricalDtype)
    assert isinstance(frame["key"].dtype, pd.CategoricalDtype)
    assert list(frame["key"].cat.categories) == ["a", "b"]
    for name in ("proc_time", "watermark", "window_start", "window_end", "ts"):
        assert frame[name].dtype == "Int64", name
    assert frame["watermark"].max() == wv.MAX  # exact, not a float
    # detail fields of the kinds present, in DETAIL_FIELDS order, None on other rows
    assert "generator" in frame.columns and "batch_id" not in frame.columns
    for r in trace:
        row = frame.iloc[r.seq]
        assert row["kind"] == r.kind
        assert (None if pd.isna(row["key"]) else row["key"]) == r.key
        for name, value in r.details().items():
            assert row[name] == value or (row[name] is None and value is None), (r, name)
    assert frame.attrs["schema_version"] == wv.SCHEMA_VERSION


def test_to_pandas_keys_that_cannot_be_categories_stay_objects() -> None:
    trace = Trace()
    trace.writer.emit("element", 0, 0, "w", 1, None, 5, "x")
    trace.writer.emit("element", 1, 0, "w", True, None, 6, "y")
    trace.writer.emit("element", 2, 0, "w", ["list"], None, 7, "z")
    keys = trace.to_pandas()["key"]
    assert keys.dtype == object and keys.tolist() == [1, True, ["list"]]
    assert [type(k) for k in keys] == [int, bool, list]


def test_columns_are_typed_and_dictionary_coded() -> None:
    c = _job().trace.columns()
    assert c.seq.dtype == np.int64 and c.kind.codes.dtype == np.int32
    assert c.proc_time.values.dtype == np.int64 and c.proc_time.present.all()
    assert not c.ts.present.all()  # watermark records of the source have no ts? some lack one
    assert sorted(set(c.key.values) - {None}) == ["a", "b"]
    start, end, has = c.window_bounds()
    assert set(zip(start[has].tolist(), end[has].tolist(), strict=True)) == {
        (0, 5_000),
        (5_000, 10_000),
    }


def test_records_by_kind_keyword_or_positional() -> None:
    trace = _job().trace
    fired = trace.records("fired")
    assert fired == trace.records(kind="fired") == list(trace.where(kind="fired"))
    assert trace.records(kind=["fired", "cleanup"]) == trace.records("fired", "cleanup")
    assert [r.key for r in trace.records(kind="fired", key="a")] == ["a"] * sum(
        r.key == "a" for r in fired
    )


def test_filters_refuse_what_is_not_a_name() -> None:
    trace = _job().trace
    with pytest.raises(
        ArgumentTypeError,
        match=r"^field 'kind', value 5: kind filters select by name \(expected a name \(str\) "
        r"or several names\)$",
    ):
        trace.where(kind=5)  # type: ignore[arg-type]
    with pytest.raises(
        ArgumentTypeError,
        match=r"^field 'operator', value \[None\]: operator filters select by name \(expected "
        r"a name \(str\) or several names\)$",
    ):
        trace.where(operator=[None])  # type: ignore[list-item]


def test_an_unknown_column_names_itself_the_known_fields_and_the_closest() -> None:
    """``column`` of a field no record has: the store's error, with the same close-match hint
    as an unknown kind or operator filter (none when no field is close)."""
    trace = Trace()
    trace.writer.emit("clock", 0, None, "op", None, None, None, "start")
    fields = "seq, kind, proc_time, watermark, operator, key, window, ts, detail"
    with pytest.raises(InputError) as close:
        trace.column("operators")
    assert str(close.value) == (
        "field 'field', value 'operators': no field 'operators' in a trace record (did you "
        f"mean 'operator'?) (expected one of {fields})"
    )
    with pytest.raises(InputError) as far:
        trace.column("colour")
    assert str(far.value) == (
        "field 'field', value 'colour': no field 'colour' in a trace record (expected one of "
        f"{fields})"
    )
    with pytest.raises(InputError, match=r"no kind 'firedd' .*did you mean 'fired'\?"):
        trace.where(kind="firedd")  # the one suggestion rule, shared
