"""The tables charts share and the light frames they read (issues 11 and 12): one TraceView
derives each table once for every chart of it; the aggregated timeline reads firings and
cleanups without their texts (``firing_marks`` / ``cleanup_marks``) — the same values as
``firings`` / ``cleanups``; timer identities as integers; ``fmt_all`` as ``fmt``."""

from __future__ import annotations

import gc
import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz import viz
from winviz.trace.coded import object_array
from winviz.viz import palette, timer_records, window_lives
from winviz.viz.explore import summarize
from winviz.viz.fates import element_fate_columns, element_fates
from winviz.viz.firings import (
    cleanup_columns,
    cleanup_marks,
    cleanups,
    firing_columns,
    firing_marks,
    firings,
)
from winviz.viz.timer_records import timer_lives
from winviz.viz.trace_view import WINDOW_KINDS, TraceView, open_trace, window_operators
from winviz.viz.value_texts import short, shorts
from winviz.viz.watermark_steps import watermark_step_columns, watermark_steps
from winviz.viz.window_lives import window_life_columns
from winviz.viz.window_marks import DETAIL_LIMIT

KEYS = [f"k{i:02d}" for i in range(30)]


def _job(n: int, lateness: int = 0) -> wv.JobExecutionResult:
    """A 1 s tumbling count over 30 keys, one event per ms, disorder up to 150 ms."""
    env = wv.StreamExecutionEnvironment()
    events = [(KEYS[i % 30], i - (i * 7919) % 150) for i in range(n)]
    count_pipeline(
        env,
        events,
        1000,
        bounded(100),
        lateness=lateness,
        late=wv.OutputTag("late"),
        arrival_interval=1,
    )
    return env.execute()


@pytest.fixture(scope="module")
def many() -> wv.JobExecutionResult:
    # 30 keys x 101 windows (timestamps -149 .. 99,999): 3,030 firings and cleanups, above
    # window_marks.DETAIL_LIMIT
    return _job(100_000, lateness=200)


def test_open_trace_keeps_a_view_and_its_tables(many) -> None:
    view = open_trace(many.trace)
    assert open_trace(view) is view
    fates = element_fates(view, "window")
    assert element_fates(view, "window") is fates
    assert window_life_columns(view, "window") is window_life_columns(view, "window")
    # a new view derives its own tables: the same values
    other = element_fates(open_trace(many.trace), "window")
    assert other is not fates
    assert other.equals(fates)
    # the records of a kind are shared between selections, so nobody may change them
    rows = view.select("element")
    with pytest.raises(ValueError):
        rows[0] = 1


def test_charts_of_one_view_equal_charts_of_the_trace() -> None:
    result = _job(3_000, lateness=200)
    view = open_trace(result.trace)
    for chart in (viz.timeline, viz.scrubber, viz.window_lanes, viz.timers_chart):
        from_view = json.dumps(chart(view).to_dict(), sort_keys=True)
        assert from_view == json.dumps(chart(result.trace).to_dict(), sort_keys=True)
    assert summarize(view) == summarize(result.trace)


def test_firing_and_cleanup_marks_are_the_firings_and_cleanups(many) -> None:
    view = open_trace(many.trace)
    marks = firing_marks(view, "window")
    cleaned = cleanup_marks(view, "window")
    assert len(marks) == len(cleaned) == 3_030 > DETAIL_LIMIT
    fresh = open_trace(many.trace)  # read without the full tables first
    again = firing_marks(fresh, "window")
    assert again.columns == marks.columns
    for column in marks.columns:  # the same values (NaN where NaN) and the same dtype
        assert again[column].dtype == marks[column].dtype, column
        assert pd.Series(again[column]).equals(pd.Series(marks[column])), column
    full = firings(view, "window")
    for column in marks.columns:
        assert marks[column].tolist() == full[column].tolist(), column
    # 101 windows, each fired by its event-time timer at its max timestamp (the last one by
    # the end-of-input watermark)
    assert set(marks["fired_by"].tolist()) == {"event-time timer", "end of input"}
    assert (marks["at"] == marks["window_end"] - 1).all()
    full_cleaned = cleanups(view, "window")
    for column in cleaned.columns:
        assert cleaned[column].tolist() == full_cleaned[column].tolist(), column
    # the cleanup time: max timestamp + allowed lateness
    assert (cleaned["cleanup_time"] == cleaned["window_end"] - 1 + 200).all()
    # once the full tables exist, the marks are read off them
    assert firing_marks(view, "window")["seq"].tolist() == full["seq"].tolist()


def test_aggregated_timeline_counts_every_firing_and_cleanup(many) -> None:
    spec = viz.timeline(many.trace, view="timeline").to_dict()
    rows = [r for data in spec["datasets"].values() for r in data]
    fired = [r for r in rows if r.get("kind") == "fired (aggregated)"]
    cleaned = [r for r in rows if r.get("kind") == "cleanup (aggregated)"]
    # one mark per window (each fired once, by one cause), 30 keys each
    assert len(fired) == len(cleaned) == 101
    assert sum(r["firings"] for r in fired) == 3_030
    assert sum(r["keys"] for r in cleaned) == 3_030
    first = min(fired, key=lambda r: r["x"])
    assert (first["window"], first["fired by"], first["x"]) == (
        "[-1,000 ms, 0 ms)",
        "event-time timer",
        -1,
    )
    assert min(cleaned, key=lambda r: r["x"])["cleanup_time"] == "199 ms"


def test_timer_identities(many) -> None:
    view = open_trace(many.trace)
    records = timer_records.timer_records(view, "window")
    # one identity per (key, namespace, domain, timestamp)
    ident = records[["key", "namespace", "domain", "ts"]].astype(str).agg("|".join, axis=1)
    codes = records["timer"].to_numpy()
    assert len(set(codes.tolist())) == ident.nunique()
    pairs = set(zip(codes.tolist(), ident.tolist(), strict=True))
    assert len(pairs) == len(set(codes.tolist()))
    lives = timer_lives(records)
    # every window's event-time timer and its cleanup timer (at max timestamp + 200) fired
    assert len(lives) == 2 * 3_030
    assert set(lives["end"]) == {"fired"}


def test_fmt_all_is_fmt_of_each() -> None:
    axis = palette.TimeAxis("t", "ms", 0, 1000)
    values = [wv.MIN, 5, 5, 5.0, None, float("nan"), 2**60, wv.MAX, 12_000, 5, True]
    assert axis.fmt_all(values) == [palette.format_time(v, "ms") for v in values]
    assert axis.fmt_all(values)[:3] == ["MIN (Long.MIN_VALUE)", "5 ms", "5 ms"]
    epoch = palette.TimeAxis("t", "epoch", palette.EPOCH_LO, palette.EPOCH_LO + 1000)
    stamps = [palette.EPOCH_LO + i % 3 for i in range(10)]
    assert epoch.fmt_all(stamps) == [palette.format_time(v, "epoch") for v in stamps]


def test_charts_restore_the_garbage_collector() -> None:
    result = _job(500)
    assert gc.isenabled()
    viz.timeline(result.trace)
    assert gc.isenabled()
    gc.disable()
    try:
        viz.scrubber(result.trace)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_window_table_per_view(many) -> None:
    view = open_trace(many.trace)
    starts, ends, has = view.window_table()
    assert view.window_table()[0] is starts
    assert len(starts) == len(ends) == len(has) == len(view.c.window.values)
    rows = view.select("fired", operator="window")
    s, e, p = view.bounds(rows)
    assert p.all() and (e - s == 1000).all()
    assert np.array_equal(s, starts[view.c.window.codes[rows]])


def test_group_ids_number_tuples_in_order_of_first_appearance() -> None:
    rng = np.random.default_rng(7)
    columns = [rng.integers(-3, 4, 500), rng.integers(0, 2**40, 500) % 5, rng.integers(0, 3, 500)]
    ids = window_lives._group_ids(*columns)
    seen: dict[tuple[int, ...], int] = {}
    expected = [
        seen.setdefault(t, len(seen)) for t in zip(*(c.tolist() for c in columns), strict=True)
    ]
    assert ids.tolist() == expected
    # wide columns: the folded ids are renumbered before they could overflow int64
    wide = [rng.integers(0, 2**62, 300), rng.integers(0, 2**62, 300), np.arange(300) % 7]
    seen = {}
    expected = [
        seen.setdefault(t, len(seen)) for t in zip(*(c.tolist() for c in wide), strict=True)
    ]
    assert window_lives._group_ids(*wide).tolist() == expected


def test_identity_codes_tell_values_apart() -> None:
    made = "".join(["proc", "essing"])  # equal to "processing", another object
    assert made is not "processing"  # noqa: F632
    values = ["event", "processing", "event", made, "other"]
    assert timer_records._codes(object_array(values)).tolist() == [0, 1, 0, 1, 2]
    assert timer_records._codes(object_array(["event"] * 4)).tolist() == [0, 0, 0, 0]
    assert timer_records._codes(object_array([])).tolist() == []


def _values(column) -> list:
    """A column's values as Python objects, NaN and None both as None."""
    return [None if v is None or v != v else v for v in column.tolist()]


def test_columns_hold_the_frames_values() -> None:
    # the timeline reads trace_view.Columns; the other charts the DataFrames built from them
    result = _job(3_000, lateness=200)
    view = open_trace(result.trace)
    fates = element_fate_columns(view, "window")
    frame = element_fates(view, "window")
    assert list(frame.columns) == ["seq", "proc_time", "ts", "fate", "windows"]
    for name in frame.columns:
        assert _values(fates[name]) == _values(frame[name]), name
    assert len(fates) == len(frame) == 3_000
    assert palette.FATES[0] == "on time"
    codes = fates["fate_code"].tolist()
    assert [palette.FATES[c] for c in codes] == frame["fate"].tolist()
    assert frame["fate"].value_counts().to_dict() == {"on time": 2945, "late, accepted": 55}

    fired, fired_frame = firing_columns(view, "window"), firings(view, "window")
    assert len(fired) == len(fired_frame) == 30 * 4  # 30 keys x windows [-1000, 0) .. [2000, 3000)
    for name in fired_frame.columns:
        assert _values(fired[name]) == _values(fired_frame[name]), name
    cleaned, cleaned_frame = cleanup_columns(view, "window"), cleanups(view, "window")
    assert len(cleaned) == len(cleaned_frame) == 30 * 4
    for name in cleaned_frame.columns:
        assert _values(cleaned[name]) == _values(cleaned_frame[name]), name
    lives, lives_frame = (
        window_life_columns(view, "window"),
        window_lives.window_lives(view, "window"),
    )
    assert len(lives) == len(lives_frame) == 30 * 4
    for name in lives_frame.columns:
        assert _values(lives[name]) == _values(lives_frame[name]), name
    steps, steps_frame = watermark_step_columns(view), watermark_steps(view)
    assert len(steps) == len(steps_frame) > 0
    for name in steps_frame.columns:
        assert _values(steps[name]) == _values(steps_frame[name]), name
    # a boolean mask takes rows from every column
    late = fates.take(fates["fate_code"] == 1)
    assert len(late) == int((frame["fate"] == "late, accepted").sum()) > 0
    assert set(late["fate"].tolist()) == {"late, accepted"}


def test_columns_hold_the_merged_windows_too() -> None:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 0), ("a", 400), ("a", 200)],
        wv.EventTimeSessionWindows.with_gap(300),
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_interval=10,
    )
    view = open_trace(env.execute().trace)
    # one backend: the session merges are applied to the columns, the frame is made of them
    columns = window_life_columns(view, "window")
    lives = window_lives.window_lives(view, "window")
    assert list(lives.columns) == window_lives.LIFE_COLUMNS
    for name in lives.columns:
        assert _values(columns[name]) == _values(lives[name]), name
    # [0, 300) and [400, 700) open, then 200 joins them into [0, 700): elements 1 + 1 + 1
    assert lives[["window_start", "window_end", "elements", "merged_into"]].values.tolist() == [
        [0, 300, 1, "[0, 700)"],
        [400, 700, 1, "[0, 700)"],
        [0, 700, 3, None],
    ]
    assert lives["closed"].dtype == object


def test_shorts_is_short_of_each() -> None:
    values = [
        "k1",
        "x" * 80,
        7,
        -12,
        True,
        None,
        1.5,
        ("k3", 1200),
        ('k"q', -5),
        ("k", True),
        ("k", 1.0),
        ("y" * 70, 3),
        ["a", 1],
        {"a": 1},
        (1, 2, 3),
    ]
    for limit in (60, 40, 10):
        assert shorts(values, limit) == [short(v, limit) for v in values]
    assert shorts([("k3", 1200)]) == ['["k3",1200]']


def _fates_by_walking(trace: wv.Trace, operator: str) -> list[tuple[int, str, int]]:
    """(seq, fate, windows) of each element record of ``operator``, read record by record
    (the schema's order rule 3: an assigned / late_dropped / side_output record belongs to
    the latest element record of its operator; this job's function writes no side output)."""
    out: list[list[Any]] = []
    for r in trace:
        if r.operator != operator:
            continue
        if r.kind == "element":
            late = r.ts is not None and r.watermark is not None and r.ts <= r.watermark
            out.append([r.seq, "late" if late else "on time", 0])
        elif r.kind == "assigned" and out:
            out[-1][2] += 1
        elif r.kind == "late_dropped" and out:
            out[-1][1] = "dropped"
        elif r.kind == "side_output" and out:
            out[-1][1] = "side output"
    return [
        (
            seq,
            "late, accepted" if fate == "late" and n else "on time" if fate == "late" else fate,
            n,
        )
        for seq, fate, n in out
    ]


@pytest.mark.parametrize("late", [None, wv.OutputTag("late")])
def test_element_fates_are_the_records_fates(late: wv.OutputTag | None) -> None:
    # late elements, some accepted (allowed lateness), some dropped or sent to the side
    # output: each record's element found among the elements, by one rule with or without
    # a side output
    env = wv.StreamExecutionEnvironment()
    events = [(f"k{i % 3}", (i * 37) % 900 + (i // 10) * 100) for i in range(120)]
    count_pipeline(env, events, 200, bounded(50), lateness=150, late=late, arrival_interval=3)
    trace = env.execute().trace
    fates = element_fate_columns(open_trace(trace), "window")
    got = list(
        zip(fates["seq"].tolist(), fates["fate"].tolist(), fates["windows"].tolist(), strict=True)
    )
    expected = _fates_by_walking(trace, "window")
    assert got == expected
    gone = "dropped" if late is None else "side output"
    assert {fate for _, fate, _ in expected} == {"on time", "late, accepted", gone}


def test_select_is_found_once_and_read_only(many) -> None:
    view = open_trace(many.trace)
    rows = view.select("assigned", "fired", operator="window")
    assert view.select("fired", "assigned", "fired", operator="window") is not rows  # (order)
    assert view.select("assigned", "fired", operator="window") is rows
    counts = view.counts()
    assert len(rows) == counts["assigned"] + counts["fired"]
    assert (np.diff(rows) > 0).all()
    with pytest.raises(ValueError):
        rows[0] = 1
    assert len(view.select("assigned", operator="no such operator")) == 0


def test_distinct_values_number_values_not_objects() -> None:
    from winviz.trace.coded import distinct_values

    shared, other = tuple(["event", 1]), tuple(["event", 1])  # equal, but two objects
    assert shared == other and shared is not other
    values = np.empty(5, dtype=object)
    values[:] = [shared, other, shared, None, ("event", True)]
    numbers, distinct = distinct_values(values)
    assert numbers.tolist() == [0, 0, 0, 1, 2]
    assert distinct == [("event", 1), None, ("event", True)]
    empty_numbers, empty = distinct_values(np.empty(0, dtype=object))
    assert empty_numbers.tolist() == [] and empty == []


def test_dataclass_texts_are_the_compact_json_of_their_jsonable_form() -> None:
    """``short`` writes a dataclass of plain fields (lesson 01's clicks) directly: the same text
    as ``json.dumps(jsonable(v))``; a dataclass with ``start`` and ``end`` (a window to
    ``jsonable``), an ``OpaqueValue``, and fields of other types (a nested dataclass, a list,
    an int subclass, NaN) go the general way."""
    import dataclasses
    import enum

    from winviz import datasets
    from winviz.trace import jsonable
    from winviz.trace.codec import OpaqueValue

    class Level(enum.IntEnum):
        LOW = 1

    @dataclasses.dataclass
    class Reading:
        z: int
        a: str
        m: Any = 1.5
        b: bool = True
        n: Any = None

    @dataclasses.dataclass(frozen=True)
    class Span:
        start: int
        end: int

    @dataclasses.dataclass
    class Nested:
        inner: Reading
        xs: list[int]

    click = datasets.clickstream()[0]
    plain = [click, Reading(-3, 'é"\n\u2028'), Reading(True, "", -0.0, False), Reading(10**30, "x")]
    other = [
        Span(1, 2),
        OpaqueValue("Click(1)", "m.Click", {"t": 1}),
        Nested(Reading(1, "a"), [1, 2]),
        Reading(Level.LOW, "enum"),
        Reading(1, "nan", float("nan")),
        Reading(1, "inf", float("inf")),
    ]
    for value in plain + other:
        text = json.dumps(jsonable(value), ensure_ascii=False, separators=(",", ":"), default=str)
        assert short(value, 1000) == text, value
        assert short(value) == (text if len(text) <= 60 else text[:59] + "…"), value
    assert short(click, 1000) == (
        '{"arrival_time":1767603602073,"event_time":1767603600975,"page":"home",'
        '"partition":0,"user":"u1"}'
    )


def test_operators_are_found_once_per_view_and_handed_out_as_copies() -> None:
    view = TraceView(_job(300).trace)
    first = window_operators(view)
    first.append("changed by a caller")
    assert window_operators(view) == view.operators(*WINDOW_KINDS) == ["window"]
    assert view.operators("element", "element") == view.operators("element")
