"""Chart audit (window lanes): a firing or cleanup mark stays at the time it claims unless
another mark of its lane row is less than one pixel away; then it moves aside by its
``EVENT_DX``. Rounding each mark to a whole pixel told two marks 0.3 px apart on either side
of a pixel's edge apart, and drew one over the other."""

from __future__ import annotations

from typing import Any

import numpy as np
from jobs import count_pipeline

import winviz as wv
from winviz import viz
from winviz.viz import lanes
from winviz.viz.trace_view import open_trace
from winviz.viz.window_lives import processing_time_windows


def processing_time_job() -> wv.JobExecutionResult:
    """1 s tumbling processing-time windows: a@1 at 0 ms and a@2 at 400 ms in [0, 1000),
    b@3 at 1500 ms in [1000, 2000), a@4 at 2600 ms in [2000, 3000) (still open at the end).
    Each window fires at its processing-time timer (drawn at the window's end: 1000, 2000)
    and is cleaned up at its cleanup time (999, 1999) — 1 ms, a third of a pixel, apart."""
    events = [("a", 1), ("a", 2), ("b", 3), ("a", 4)]
    window = wv.TumblingProcessingTimeWindows.of(1000)
    env = wv.StreamExecutionEnvironment()
    return count_pipeline(env, events, window, arrival_times=[0, 400, 1500, 2600]).execute()


def test_marks_less_than_a_pixel_apart_are_set_apart_wherever_the_pixel_edge_is() -> None:
    spec = viz.window_lanes(processing_time_job().trace).to_dict()
    lo, hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert (lo, hi) == (-90, 3090)
    ms_per_px = (hi - lo) / spec["width"]
    assert ms_per_px > 3  # 999 and 1000 (1999 and 2000) are a third of a pixel apart
    marks = sorted(
        (r["key"], r["window"], r["what"], r["x"])
        for rows in spec["datasets"].values()
        for r in rows
        if "n" in r
    )
    fired_dx = lanes.EVENT_DX["fired: processing-time timer"] * ms_per_px
    cleanup_dx = lanes.EVENT_DX["cleanup"] * ms_per_px
    # both windows alike: the firing and the cleanup each moved aside by their EVENT_DX
    # (before, [1000, 2000)'s were left on top of each other: 1999 and 2000 round to two
    # pixels, 999 and 1000 to one)
    assert marks == [
        ("a", "[0 ms, 1,000 ms)", "cleanup", round(999 + cleanup_dx, 3)),
        ("a", "[0 ms, 1,000 ms)", "fired: processing-time timer", round(1000 + fired_dx, 3)),
        ("b", "[1,000 ms, 2,000 ms)", "cleanup", round(1999 + cleanup_dx, 3)),
        ("b", "[1,000 ms, 2,000 ms)", "fired: processing-time timer", round(2000 + fired_dx, 3)),
    ]


def test_alone_is_one_pixel_of_the_same_lane_row() -> None:
    rows: list[dict[str, Any]] = [
        {"key": "a", "slot": 0},
        {"key": "a", "slot": 0},
        {"key": "a", "slot": 1},
        {"key": "b", "slot": 0},
        {"key": "a", "slot": 0},
    ]
    # 10.49 and 10.51 round to two pixels but are 0.02 px apart; 12.0 is 1.49 px from them
    assert lanes._alone(rows, np.array([10.49, 10.51, 10.5, 10.5, 12.0])) == [
        False,
        False,
        True,
        True,
        True,
    ]


def test_processing_time_windows_are_on_a_processing_time_axis() -> None:
    """The lanes drew processing-time windows (their start, end, firing and cleanup times are
    processing times) on an axis titled "event time"; the timeline places them on its
    event-time axis and now says so."""
    trace = processing_time_job().trace
    view = open_trace(trace)
    assert processing_time_windows(view, "window")
    spec = viz.window_lanes(trace).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["axis"]["title"] == "processing time (ms)"
    assert spec["title"]["subtitle"][-1] == "processing-time windows: the axis is processing time"
    spec = viz.timeline(trace, view="timeline").to_dict()
    assert spec["title"]["subtitle"][1].startswith("processing-time windows: [start, end) is")
    spec = viz.scrubber(trace).to_dict()
    notes = spec["usermeta"]["winviz"]["notes"]
    assert notes[1].startswith("processing-time windows: [start, end) is")
    # event-time windows keep their axis (an event-time cleanup timer each)
    event = extremes_free_event_job().trace
    assert not processing_time_windows(open_trace(event), "window")
    spec = viz.window_lanes(event).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["axis"]["title"] == "event time (ms)"


def _rows(spec: dict[str, Any], layer: dict[str, Any], *keys: str) -> list[tuple]:
    return [tuple(r.get(k) for k in keys) for r in spec["datasets"][layer["data"]["name"]]]


def test_processing_time_windows_span_the_event_time_axis_in_timeline_and_scrubber() -> None:
    """A processing-time window's [start, end) is processing time: it holds the elements that
    reached the operator then, whatever their timestamps. The timeline and the scrubber drew
    it as [start, end) on the event-time axis (here 0..3000 ms, where the elements' timestamps
    are 1..4 ms) and its firings and cleanups at the window end / cleanup time there; now the
    event-time axis spans the elements' timestamps only, each window spans it over its life in
    processing time, and its firings and cleanups sit at their processing time on the right
    edge."""
    trace = processing_time_job().trace
    spec = viz.timeline(trace, view="timeline").to_dict()
    assert spec["usermeta"]["winviz"]["notes"][1] == (
        "processing-time windows: [start, end) is processing time — a window holds the "
        "elements that reached the operator then, whatever their timestamps: its band spans "
        "the event-time axis over its life in processing time; firings and cleanups at their "
        "processing time, on the right edge"
    )
    layers = spec["layer"]
    bands = layers[0]
    assert bands["encoding"]["x"]["scale"]["domain"] == [0, 5]  # ts 1..4, padded 1 ms
    assert _rows(spec, bands, "x", "x2", "y", "y2", "window", "closed") == [
        (0, 5, 0, 999, "[0 ms, 1,000 ms)", "999 ms"),
        (0, 5, 1500, 1999, "[1,000 ms, 2,000 ms)", "1,999 ms"),
        (0, 5, 2600, 2886, "[2,000 ms, 3,000 ms)", "still open at the end"),
    ]
    marks = [
        row
        for lay in layers
        if lay["mark"]["type"] == "point"
        for row in _rows(spec, lay, "what", "x", "y", "window")
        if row[0] in ("fired: processing-time timer", "cleanup")
    ]
    assert marks == [
        ("fired: processing-time timer", 5, 999, "[0 ms, 1,000 ms)"),
        ("fired: processing-time timer", 5, 1999, "[1,000 ms, 2,000 ms)"),
        ("cleanup", 5, 999, "[0 ms, 1,000 ms)"),
        ("cleanup", 5, 1999, "[1,000 ms, 2,000 ms)"),
    ]
    spec = viz.scrubber(trace).to_dict()
    windows = spec["layer"][0]
    assert windows["encoding"]["x"]["scale"]["domain"] == [0, 5]
    assert _rows(spec, windows, "x", "x2", "opened_at", "fired_at", "closed_at", "window") == [
        (0, 5, 0, 999, 999, "[0 ms, 1,000 ms)"),
        (0, 5, 1500, 1999, 1999, "[1,000 ms, 2,000 ms)"),
        (0, 5, 2600, None, None, "[2,000 ms, 3,000 ms)"),
    ]


def extremes_free_event_job() -> wv.JobExecutionResult:
    """a@1, a@2, b@3 at 0, 10, 20 ms in 1 s tumbling event-time windows, with a
    ContinuousProcessingTimeTrigger.of(5) too (processing-time timers beside the event-time
    ones; the end of input at 20 ms fires and cleans up before processing time reaches 999)."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 1), ("a", 2), ("b", 3)], arrival_times=[0, 10, 20])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .trigger(wv.ContinuousProcessingTimeTrigger.of(5))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    result = env.execute()
    domains = {
        r.details()["domain"] for r in result.trace.records() if r.kind == "timer_registered"
    }
    assert domains == {"event", "processing"}
    return result
