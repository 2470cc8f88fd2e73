"""``to_pandas`` of a trace whose detail column is not decoded yet builds the detail fields'
columns from the packed entries' items and the plain records' details as the write buffer
holds them (``TraceColumns.detail_items``, ``frame.detail_fields``; issue 11), not from the
whole detail column; once it is decoded, from the packed details the writer numbered and the
column for the rest. The frame is the same as the one made from the decoded column alone (and,
where keys are strings, the record-by-record reference): on engine traces, on hand-made
traces mixing plain records with packed entries of every kind of item (tuples said field by
field, a coded table with an entry no record uses, one value for all, lists, a slot whose
kind varies), with categories whose first appearance is split between plain records and
entries; a bad detail is refused naming its record as before; reading the frame leaves
the trace's own columns as they would be."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from chart_jobs import JOBS
from test_trace_frame_reference import reference_frame

from winviz.trace import Packed, Trace
from winviz.trace.coded import CodedColumn
from winviz.trace.pieces import Tuples
from winviz.windows.window import TimeWindow

W = TimeWindow(0, 10)
# timer details a window's records share; the last no record uses (its "never" is no category,
# its str no reason to make the deduplicated column objects)
TIMERS = [("event", W, False), ("processing", W, True), ("event", W, True), ("never", W, "x")]
FIRED = [((1, 2), 0, "on_time", None), ((3,), 1, "late", 4)]
CONTINUE = ("on_element", "CONTINUE")


class _Mixed(Packed):
    """Five records per entry (values: a time, a key, ``which``, a value): ``arrival``
    (its detail tuples said field by field), ``trigger`` (one tuple for all), a
    ``timer_registered`` (coded: a table of shared tuples), ``watermark`` or ``cleanup`` as
    ``which`` is odd or even (a slot of varying kind: lists), ``fired`` (shared tuples, a
    list)."""

    width = 4
    count = 5

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        t, key, which, value = values[at : at + 4]
        out.extend(("arrival", t, None, "src", None, None, t, (value, which)))
        out.extend(("trigger", t, t - 1, "w", key, W, None, CONTINUE))
        out.extend(("timer_registered", t, t - 1, "w", key, W, 9, TIMERS[which % 3]))
        if which % 2:
            out.extend(("watermark", t, t - 1, "w", None, None, None, f"input{which % 3}"))
        else:
            out.extend(("cleanup", t, t - 1, "w", key, W, None, t * 2))
        out.extend(("fired", t, t - 1, "w", key, W, 9, FIRED[which % 2]))

    def fields(self, slots: Any) -> list[tuple[Any, ...]]:
        t, keys, which, values = (list(slots[i]) for i in range(4))
        wm = [v - 1 for v in t]
        second = ["watermark" if w % 2 else "cleanup" for w in which]
        varying_key = [None if w % 2 else k for w, k in zip(which, keys, strict=True)]
        varying_window = [None if w % 2 else W for w in which]
        varying_detail = [
            f"input{w % 3}" if w % 2 else v * 2 for w, v in zip(which, t, strict=True)
        ]
        timers = CodedColumn(np.array([w % 3 for w in which], dtype=np.int32), TIMERS)
        return [
            ("arrival", "trigger", "timer_registered", second, "fired"),
            (t, t, t, t, t),
            (None, wm, wm, wm, wm),
            ("src", "w", "w", "w", "w"),
            (None, keys, keys, varying_key, keys),
            (None, W, W, varying_window, W),
            (t, None, 9, None, 9),
            (
                Tuples((values, which)),
                CONTINUE,
                timers,
                varying_detail,
                [FIRED[w % 2] for w in which],
            ),
        ]


def mixed_trace(seed: int) -> Trace:
    """Plain records of the same kinds (with other strings: ``on_event_time`` calls,
    ``processing`` timers first, other inputs) between runs of ``_Mixed`` entries."""
    import random

    rng = random.Random(seed)
    trace, marker = Trace(), _Mixed()
    t = 0
    for block in range(rng.randrange(3, 9)):
        for _ in range(rng.randrange(0, 4)):
            t += 1
            pick = rng.random()
            if pick < 0.3:
                call = rng.choice(["on_event_time", "on_element"])
                trace.writer.emit("trigger", t, t, "w", "k1", W, None, (call, "FIRE"))
            elif pick < 0.55:
                trace.writer.emit(
                    "timer_registered", t, t, "w", "k2", W, 9, TIMERS[rng.randrange(3)]
                )
            elif pick < 0.7:
                trace.writer.emit(
                    "watermark", t, t, "w", None, None, None, rng.choice(["input", "x"])
                )
            elif pick < 0.85:
                trace.writer.emit("arrival", t, None, "src", None, None, t, (f"v{t}", block))
            else:
                trace.writer.emit("fired", t, t, "w", "k1", W, 9, FIRED[block % 2])
        entries = rng.randrange(1, 6)
        run = []
        for _ in range(entries):
            t += 1
            run += [marker, t, rng.choice(["k1", "k2", "k3"]), rng.randrange(7), f"e{t}"]
        trace.append_run(marker, run, entries)
    trace.writer.emit("cleanup", t + 1, t, "w", "k3", W, None, 2**70)  # beyond the long range
    return trace


def _both(make: Any) -> pd.DataFrame:
    """The frame made from the buffer's items (a fresh trace), checked equal, categories in
    the same order, to the frame made from the decoded detail column; and the trace's
    columns afterwards as a fresh trace's."""
    trace = make()
    assert trace.columns()._detail is None  # (the detail column not decoded)
    frame = trace.to_pandas()
    assert trace.columns()._detail is None  # (still not: the frame read items)
    after = trace.columns().detail.tolist()
    fresh = make()
    expected_detail = fresh.columns().detail.tolist()
    assert [(type(v), repr(v)) for v in after] == [(type(v), repr(v)) for v in expected_detail]
    # decoded: the frame reads the packed details the writer numbered, the column for the rest
    assert fresh.columns().detail_items()[-1][0] is None
    column_only = Trace.from_columns(fresh.columns().take(np.arange(len(fresh))), view=True)
    assert [k for k, _, _ in column_only.columns().detail_items()] == [None]
    for expected in (fresh.to_pandas(), column_only.to_pandas()):
        pd.testing.assert_frame_equal(frame, expected, check_exact=True)
        for name in frame.columns:
            if isinstance(frame[name].dtype, pd.CategoricalDtype):
                categories = expected[name].cat.categories.tolist()
                assert frame[name].cat.categories.tolist() == categories
    return frame


@pytest.mark.parametrize("seed", range(8))
def test_mixed_traces_from_items_equal_the_decoded_column_and_the_reference(seed: int) -> None:
    frame = _both(lambda: mixed_trace(seed))
    reference = reference_frame(mixed_trace(seed))
    # (the detail fields' columns; the base columns' categories are in the order the kind,
    # operator and key columns were decoded in: plain records first)
    details = list(frame.columns[9:])
    assert details == list(reference.columns[9:])
    pd.testing.assert_frame_equal(frame[details], reference[details], check_exact=True)
    assert frame["domain"].cat.categories.tolist() == reference["domain"].cat.categories.tolist()
    assert "never" not in frame["domain"].cat.categories
    assert frame["index"].dtype == "Int64" and frame["cleanup_time"].dtype == object
    assert frame["deduplicated"].dtype == "boolean"


def test_categories_in_order_of_first_appearance_across_plain_records_and_entries() -> None:
    trace = Trace()
    marker = _Mixed()
    trace.writer.emit("trigger", 0, 0, "w", "k1", W, None, ("on_event_time", "FIRE"))
    trace.writer.emit("timer_registered", 0, 0, "w", "k1", W, 9, TIMERS[1])  # processing first
    trace.append_run(marker, [marker, 1, "k2", 0, "v", marker, 2, "k2", 1, "v"], 2)
    frame = _both(lambda: _copy(trace))
    assert frame["call"].cat.categories.tolist() == ["on_event_time", "on_element"]
    assert frame["domain"].cat.categories.tolist() == ["processing", "event"]


def _copy(trace: Trace) -> Trace:
    """A fresh trace of the same write buffer (runs declared as in ``trace``)."""
    out = Trace()
    out._buffer.extend(trace._buffer)
    for start, marker, entries in trace._runs:
        out._runs.append((start, marker, entries))
        out._packed_slots += entries * (1 + marker.width)
        out._packed_records += entries * marker.count
    return out


@pytest.mark.parametrize("job", sorted(JOBS))
def test_engine_traces_from_items_equal_the_decoded_column(job: str) -> None:
    frame = _both(lambda: JOBS[job]().trace)
    assert len(frame) > 0


class _Bad(Packed):
    """One ``trigger`` record per entry whose detail, one value for all, is not a tuple."""

    width = 1
    count = 1

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        out.extend(("trigger", values[at], 0, "w", None, None, None, "bad"))

    def fields(self, slots: Any) -> list[tuple[Any, ...]]:
        return [("trigger",), (list(slots[0]),), (0,), ("w",), (None,), (None,), (None,), ("bad",)]


def test_a_detail_that_is_not_its_fields_is_refused_naming_its_record() -> None:
    def make() -> Trace:
        trace, bad = Trace(), _Bad()
        trace.writer.emit("trigger", 0, 0, "w", None, None, None, ("on_element", "CONTINUE"))
        trace.append_run(bad, [bad, 5, bad, 6], 2)
        return trace

    with pytest.raises(ValueError) as from_items:
        make().to_pandas()
    decoded = make()
    assert len(decoded.columns().detail) == 3
    with pytest.raises(ValueError) as from_column:
        decoded.to_pandas()
    assert str(from_items.value) == str(from_column.value)
    assert "record 1 (trigger): detail 'bad'" in str(from_items.value)


def test_a_string_field_of_several_kinds_has_its_categories_in_order_of_first_appearance() -> None:
    """(A case the reference test's random jobs found: ``input`` of channel_watermark and
    watermark records, interleaved; categories kind by kind were ``source[0], source[1],
    input``.)"""

    def make() -> Trace:
        trace = Trace()
        trace.writer.emit("channel_watermark", 0, 0, "w", None, None, None, (0, "source[0]"))
        trace.writer.emit("watermark", 1, 0, "w", None, None, None, "input")
        trace.writer.emit("channel_watermark", 2, 0, "w", None, None, None, (1, "source[1]"))
        trace.writer.emit("watermark", 3, 0, "w", None, None, None, "input")
        return trace

    frame = _both(make)
    assert frame["input"].cat.categories.tolist() == ["source[0]", "input", "source[1]"]
    pd.testing.assert_frame_equal(frame, reference_frame(make()), check_exact=True)


@pytest.mark.parametrize("job", ["kernel", "late_union"])
def test_columns_written_entry_block_by_block_are_the_same(
    job: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_Group.put`` writes a big output entry block by entry block (a 1M-event run's); here
    every output is "big" and blocks are 7 entries (a partial last block): each whole column
    and each part is the same as written slot by slot."""
    from winviz.trace import pieces

    def read(trace: Trace) -> list[Any]:
        c = trace.columns()
        part = c.part("ts", ["element", "timer_registered"])
        whole = [getattr(c, name) for name in ("kind", "proc_time", "watermark", "key", "ts")]
        return [part, *whole]

    def flat(column: Any) -> list[Any]:
        if isinstance(column, CodedColumn):
            return [column.codes.tolist(), column.values]
        return [column.values.tolist(), column.present.tolist()]

    expected = [flat(column) for column in read(JOBS[job]().trace)]
    monkeypatch.setattr(pieces, "_BLOCKED_BYTES", 0)
    monkeypatch.setattr(pieces, "_BLOCK_ENTRIES", 7)
    assert [flat(column) for column in read(JOBS[job]().trace)] == expected


def test_a_few_records_details_read_from_the_items_are_the_columns() -> None:
    """``values_at`` of packed arrival and timer_registered records (a ``Tuples`` item, the
    offsets an ``int64`` array, and a coded one) reads only those entries' values: the same
    objects' values and types as the decoded detail column."""
    trace, whole = JOBS["kernel"]().trace, JOBS["kernel"]().trace
    c, expected = trace.columns(), whole.columns().detail
    for kind in ("arrival", "timer_registered"):
        rows = np.flatnonzero(c.kind.codes == c.kind.code_of(kind))[::37]
        assert len(rows) > 10
        got = c.values_at("detail", rows).tolist()
        assert [(type(v), repr(v)) for v in got] == [
            (type(v), repr(v)) for v in expected[rows].tolist()
        ]
        if kind == "arrival":
            assert {type(v[1]) for v in got} == {int}
    assert c._detail is None  # (nothing decoded whole)


def _details(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(frame.columns[9:])]


def test_a_selection_and_a_loaded_trace_read_their_decoded_details(tmp_path: Any) -> None:
    """A ``where`` selection and a trace loaded from a file hold decoded columns (no write
    buffer): their frames' detail columns are the reference's, and the selection's rows are
    the whole frame's (made from the items) on those records."""
    import winviz as wv

    trace = JOBS["kernel"]().trace
    kinds = ["arrival", "timer_registered", "trigger", "fired", "watermark"]
    selection = trace.where(kind=kinds)
    assert [k for k, _, _ in selection.columns().detail_items()] == [None]  # (the column)
    frame = selection.to_pandas()
    pd.testing.assert_frame_equal(
        _details(frame), _details(reference_frame(selection)), check_exact=True
    )
    whole = JOBS["kernel"]().trace.to_pandas()
    picked = whole[whole["kind"].isin(kinds)].reset_index(drop=True)
    for name in ("seq", "proc_time", "ts", "index", "deduplicated"):
        pd.testing.assert_series_equal(frame[name], picked[name], check_exact=True)
    assert frame["value"].tolist() == picked["value"].tolist()
    loaded = wv.load_trace(JOBS["kernel"]().trace.save(tmp_path / "t.parquet"))
    assert [k for k, _, _ in loaded.columns().detail_items()] == [None]
    pd.testing.assert_frame_equal(_details(loaded.to_pandas()), _details(whole), check_exact=True)


@pytest.mark.parametrize("job", ["kernel", "late_union"])
def test_detail_columns_written_block_of_rows_by_block_are_the_same(
    job: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``frame._put_all`` writes a column block of rows by block; here blocks are 5 rows
    (pieces whose rows start, end or skip within a block): the frame, from the items and
    from the decoded column, is the same as written in one block (piece by piece)."""
    from winviz.trace import frame as frame_module

    expected = JOBS[job]().trace.to_pandas()
    monkeypatch.setattr(frame_module, "_BLOCK_ROWS", 5)
    frame = _both(lambda: JOBS[job]().trace)
    pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            assert frame[name].cat.categories.tolist() == expected[name].cat.categories.tolist()


def test_mixed_traces_written_block_of_rows_by_block_are_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from winviz.trace import frame as frame_module

    monkeypatch.setattr(frame_module, "_BLOCK_ROWS", 3)
    for seed in range(3):
        frame = _both(lambda seed=seed: mixed_trace(seed))
        details = list(frame.columns[9:])
        reference = reference_frame(mixed_trace(seed))
        pd.testing.assert_frame_equal(frame[details], reference[details], check_exact=True)
