"""The trace's public reading API on a demanding learner's input: every answer is the right
records or a clear error naming the argument, the value and what was expected — never a
silently wrong selection (a boolean mask read as positions 0 and 1, a NaN time selecting
everything, a typo of a kind selecting nothing) — and nothing it hands out is the trace's
own memory (a frame read back into a trace owns its ``seq``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from jobs import two_keys_run

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError, PositionError
from winviz.trace import Trace
from winviz.trace.frame import from_pandas
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow


def _run() -> Trace:
    return two_keys_run(60)


@pytest.fixture(scope="module")
def trace() -> Trace:
    return _run()


# -- records_at / trace[i] ------------------------------------------------------------------


def test_records_at_refuses_a_boolean_mask_instead_of_reading_it_as_positions_0_and_1(
    trace: Trace,
) -> None:
    mask = np.zeros(len(trace), dtype=bool)
    mask[[5, 9]] = True
    with pytest.raises(ArgumentTypeError, match=r"not a boolean mask .*flatnonzero"):
        trace.records_at(mask)
    with pytest.raises(ArgumentTypeError, match="not a boolean mask"):
        trace.records_at([True, False])
    # what the error says to do gives the masked records
    assert [r.seq for r in trace.records_at(np.flatnonzero(mask))] == [5, 9]


@pytest.mark.parametrize("rows", [[0.5], ["1"], [[1, 2]]])
def test_records_at_refuses_positions_that_are_not_ints(trace: Trace, rows: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"field 'rows': records_at takes record"):
        trace.records_at(rows)


def test_records_at_names_a_position_beyond_the_trace(trace: Trace) -> None:
    n = len(trace)
    with pytest.raises(IndexError) as info:
        trace.records_at([0, n])
    assert str(info.value) == (
        f"field 'rows', value {n}: records_at: rows[1] has no record there (expected a "
        f"position in 0..{n - 1} or -{n}..-1; the trace has {n} records)"
    )
    assert isinstance(info.value, PositionError)
    assert [r.seq for r in trace.records_at([-1, np.int64(2)])] == [n - 1, 2]
    assert [r.seq for r in trace.records_at(np.array([3, 1], dtype=object))] == [3, 1]
    assert trace.records_at([]) == []


@pytest.mark.parametrize("i", ["a", 1.5, slice(1, 3), True])
def test_an_item_is_one_int_position(trace: Trace, i: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"field 'i'.*trace\[i\] takes one record"):
        trace[i]


def test_column_names_a_field_that_is_no_str(trace: Trace) -> None:
    with pytest.raises(ArgumentTypeError, match=r"field 'field', value None: column"):
        trace.column(None)  # type: ignore[arg-type]


# -- until ----------------------------------------------------------------------------------


@pytest.mark.parametrize("at", [float("nan"), 5.5, "5", None, True])
def test_until_takes_int_milliseconds_only(trace: Trace, at: Any) -> None:
    """NaN compared with every time is False, so ``until(nan)`` was the whole run; 5.5 and
    True were taken as other times."""
    with pytest.raises(ArgumentTypeError, match=r"field 'proc_time'.*int milliseconds"):
        trace.until(at)


def test_until_of_an_int_is_the_run_as_it_stood(trace: Trace) -> None:
    times = trace.column("proc_time")
    got = trace.until(np.int64(30))
    assert len(got) == max(i for i, t in enumerate(times) if t is None or t <= 30) + 1
    assert all(t is None or t <= 30 for t in got.column("proc_time"))
    assert len(trace.until(2**70)) == len(trace) and len(trace.until(-(2**70))) == 0


# -- where ----------------------------------------------------------------------------------


def test_a_kind_that_no_schema_has_is_named_with_the_closest_kind(trace: Trace) -> None:
    with pytest.raises(InputError, match=r"no kind 'fird' .*did you mean 'fired'\?"):
        trace.where(kind="fird")
    with pytest.raises(InputError, match=r"no kind 'nope'"):
        trace.records("fired", "nope")
    with pytest.raises(InputError, match=r"no kind 'firing'"):
        trace.operators("firing")


def test_a_schema_kind_the_trace_lacks_and_a_hand_made_kind_select_as_before(
    trace: Trace,
) -> None:
    assert len(trace.where(kind="late_dropped")) == 0  # in the schema, none in this run
    assert len(trace.where(kind="fired").where(kind="cleanup")) == 0  # a view's kinds
    own = Trace()
    own.writer.emit("alpha", 0, None, "w", "k", None, 1, "x")
    own.writer.emit("element", 1, None, "w", "k", None, 1, "y")
    assert [r.detail for r in own.where(kind="alpha")] == ["x"]


def test_a_window_given_as_a_list_selects_as_the_pair_does(trace: Trace) -> None:
    pair = trace.where(window=(0, 100))
    assert len(pair) > 0
    assert trace.where(window=[0, 100]).column("seq") == pair.column("seq")
    assert trace.where(window=TimeWindow(0, 100)).column("seq") == pair.column("seq")
    assert trace.where(window=(np.int64(0), 100.0)).column("seq") == pair.column("seq")


@pytest.mark.parametrize("window", [(0.5, 100), ("a", "b"), (True, 100), [0, None]])
def test_a_window_whose_bounds_are_no_ints_is_refused_not_cut(trace: Trace, window: Any) -> None:
    """(0.5, 100) was int()-ed to (0, 100) and selected that window; ("a", "b") raised
    int()'s own ValueError."""
    with pytest.raises(ArgumentTypeError, match=r"field 'window'.*bounds are int milliseconds"):
        trace.where(window=window)


def test_a_window_that_cannot_be_one_is_refused(trace: Trace) -> None:
    with pytest.raises(ArgumentTypeError, match=r"field 'window'.*a TimeWindow, a \(start, end\)"):
        trace.where(window=[0, 100, 200])
    assert len(trace.where(window=GLOBAL_WINDOW)) == 0
    assert len(trace.where(window=None)) > 0


def test_a_key_that_can_never_be_a_key_is_refused(trace: Trace) -> None:
    """A list selected nothing, silently (the engine refuses unhashable keys)."""
    with pytest.raises(ArgumentTypeError, match=r"field 'key', value \['a', 'b'\]: a list"):
        trace.where(key=["a", "b"])
    with pytest.raises(ArgumentTypeError, match="a dict can never be a key"):
        trace.records("fired", key={"a": 1})
    # a hand-made trace that holds such a key still finds it
    own = Trace()
    own.writer.emit("element", 0, None, "w", ["a"], None, 1, "x")
    assert len(own.where(key=["a"])) == 1


# -- to_json --------------------------------------------------------------------------------


def test_to_json_names_the_record_of_a_value_that_contains_itself() -> None:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    own = Trace()
    own.writer.emit("element", 0, None, "w", "k", None, 1, "fine")
    own.writer.emit("element", 1, None, "w", "k", None, 2, cycle)
    with pytest.raises(InputError, match=r"record 1, field \"element record's key or detail\""):
        own.to_json()


def test_to_json_names_the_record_and_field_of_a_nan_time() -> None:
    own = Trace()
    own.writer.emit("element", 0, None, "w", "k", None, 1, "x")
    own.writer.emit("element", 1, None, "w", "k", None, float("nan"), "y")
    with pytest.raises(InputError, match=r"record 1, field 'ts', value nan: JSON has no NaN"):
        own.to_json()


# -- from_pandas (a chart given a frame) ----------------------------------------------------


def test_a_trace_read_from_a_frame_owns_its_seq(trace: Trace) -> None:
    """The frame's seq array was the trace's: a cell set in the frame afterwards changed the
    trace a chart (an explorer) had already read."""
    frame = trace.to_pandas()
    read = Trace.from_columns(from_pandas(frame), view=True)
    before = read.to_json()
    frame.loc[0, "seq"] = 999
    frame.loc[1, "proc_time"] = 999
    assert read.to_json() == before == trace.to_json()


@pytest.mark.parametrize(
    ("column", "value", "row"),
    [
        ("ts", 1.5, 1),
        ("proc_time", "x", 1),
        ("window_start", 0.5, 2),
        ("watermark", True, 3),
        ("seq", 1.5, 4),
    ],
)
def test_a_frame_cell_that_is_no_whole_number_is_named_not_cut(
    trace: Trace, column: str, value: Any, row: int
) -> None:
    """A float time was int()-ed (1.5 became 1, a window [0.5, 100) became [0, 100)); a
    str raised int()'s own ValueError."""
    frame = trace.to_pandas()
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    with pytest.raises(InputError, match=rf"field '{column}', value {value!r}: frame row {row}"):
        from_pandas(frame)
    with pytest.raises(InputError, match=rf"frame row {row}"):
        wv.timeline(frame)


def test_a_frame_row_without_a_kind_is_named() -> None:
    frame = _run().to_pandas()
    frame["kind"] = frame["kind"].astype(object)
    frame.loc[7, "kind"] = None
    with pytest.raises(InputError, match=r"field 'kind', value None: frame row 7 \(seq 7\)"):
        from_pandas(frame)


def test_a_frame_without_a_trace_column_is_named() -> None:
    frame = _run().to_pandas().drop(columns=["ts", "operator"])
    with pytest.raises(InputError, match=r"lacks the trace column\(s\) operator, ts"):
        from_pandas(frame)


def test_a_frame_of_widened_whole_floats_reads_back_exactly(trace: Trace) -> None:
    """What from_pandas promises for an older frame (int columns widened to float) holds."""
    frame = trace.to_pandas()
    for name in ("seq", "proc_time", "watermark", "ts", "window_start", "window_end"):
        frame[name] = frame[name].astype("float64")
    assert Trace.from_columns(from_pandas(frame)).to_json() == trace.to_json()


# -- save / load ----------------------------------------------------------------------------


def _two(**second: Any) -> Trace:
    """A hand-made trace of two records, the second with these fields."""
    fields = {"proc": 1, "wm": None, "key": "k", "window": None, "ts": 2, "detail": "y"}
    fields.update(second)
    own = Trace()
    own.writer.emit("element", 0, None, "w", "k", None, 1, "x")
    own.writer.emit(
        "element",
        fields["proc"],
        fields["wm"],
        "w",
        fields["key"],
        fields["window"],
        fields["ts"],
        fields["detail"],
    )
    return own


@pytest.mark.parametrize(
    ("second", "field", "shown"),
    [({"ts": 1.5}, "ts", "1.5"), ({"wm": 2**64}, "watermark", str(2**64))],
)
def test_save_names_the_record_and_field_of_a_time_it_cannot_hold(
    tmp_path: Any, second: dict[str, Any], field: str, shown: str
) -> None:
    with pytest.raises(InputError, match=rf"record 1, field '{field}', value {shown}: a trace"):
        _two(**second).save(tmp_path / "t.parquet")


def test_save_refuses_a_window_bound_it_would_cut(tmp_path: Any) -> None:
    """The file's window bounds are int64: [0.5, 1.5) was written as [0, 1)."""
    with pytest.raises(InputError, match=r"record 1, field 'window', value \[0.5, 1.5\): a trace"):
        _two(window=TimeWindow(0.5, 1.5)).save(tmp_path / "w.parquet")  # type: ignore[arg-type]
    assert not (tmp_path / "w.parquet").exists()


def test_save_names_the_record_of_a_value_that_contains_itself(tmp_path: Any) -> None:
    """It was a bare RecursionError from inside the text encoder."""
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(InputError, match=r"record 1, field 'detail': a value that contains"):
        _two(detail=cycle).save(tmp_path / "c.parquet")
    with pytest.raises(InputError, match=r"record 1, field 'key': a value that contains"):
        _two(key=(1, cycle)).to_arrow()


def test_load_trace_of_a_directory_says_it_is_one(tmp_path: Any) -> None:
    with pytest.raises(wv.TraceFileError, match=rf"^{tmp_path}: a directory; expected a trace"):
        wv.load_trace(tmp_path)


def test_a_frame_sorted_by_another_column_reads_back_as_the_trace(trace: Trace) -> None:
    """Rows were read in frame order: a frame sorted by ts (or shuffled) gave a trace whose
    records were out of seq order, and why_fired named an element as the cause of a firing
    the watermark's timer caused."""
    frame = trace.to_pandas()
    for moved in (frame.sort_values("ts", kind="stable"), frame.sample(frac=1, random_state=3)):
        read = Trace.from_columns(from_pandas(moved), view=True)
        assert read.to_json() == trace.to_json()
        assert str(wv.why_fired(read, "a", (0, 100))) == str(wv.why_fired(trace, "a", (0, 100)))
    assert "event-time timer at 99" in str(wv.why_fired(trace, "a", (0, 100)))


def test_a_frame_row_error_names_the_frames_own_row_after_sorting(trace: Trace) -> None:
    frame = trace.to_pandas().iloc[::-1].reset_index(drop=True)  # seq n-1 .. 0
    frame["ts"] = frame["ts"].astype(object)
    last = len(frame) - 1
    frame.loc[last, "ts"] = 0.5  # the row of seq 0
    with pytest.raises(InputError, match=rf"value 0.5: frame row {last} \(seq 0\)"):
        from_pandas(frame)


def test_two_frame_rows_of_one_seq_are_refused(trace: Trace) -> None:
    frame = trace.to_pandas()
    twice = pd.concat([frame.iloc[:5], frame.iloc[3:4]], ignore_index=True)
    with pytest.raises(InputError, match=r"frame rows 3 and 5 have the same seq 3"):
        from_pandas(twice)
