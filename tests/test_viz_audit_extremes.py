"""Chart audit (timestamps at the ends of the long range): k@MIN+1 and k@MAX fall in tumbling
windows whose end overflows (Flink's ``TimeWindow``: start >= end). The timeline gives them no
band and says so; the lanes drew them as bars from the right edge to the left one — across the
whole axis, over [0, 10) — and the scrubber and skew chart left them (or their elements) out
without a word. Each chart now draws only what has a place on its axes and says what not."""

from __future__ import annotations

from typing import Any

from jobs import count_per_key

import winviz as wv
from winviz import viz

WRAPPED = "2 window(s) whose end overflowed the long range (start >= end)"


def extremes_job() -> wv.JobExecutionResult:
    """k@MIN+1 at 0 ms, k@5 at 10 ms, k@MAX at 20 ms; 10 ms tumbling windows: [0, 10) and two
    windows whose end wrapped around ([MAX-1, MIN+8) and [MAX-7, MIN+2))."""
    monotonous = wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda e, _: e[1]
    )
    events = [("k", wv.MIN + 1), ("k", 5), ("k", wv.MAX)]
    return count_per_key(events, 10, monotonous, arrival_times=[0, 10, 20])


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == kind]


def test_the_engine_makes_two_wrapped_windows() -> None:
    wrapped = {
        (r.window.start, r.window.end)
        for r in extremes_job().trace.records()
        if r.kind == "assigned" and r.window.start >= r.window.end
    }
    assert wrapped == {(wv.MAX - 1, wv.MIN + 8), (wv.MAX - 7, wv.MIN + 2)}


def test_lanes_draw_no_bar_across_the_axis() -> None:
    spec = viz.window_lanes(extremes_job().trace).to_dict()
    assert spec["title"]["subtitle"] == [
        "operator 'window': 1 key, 3 windows",
        f"{WRAPPED} have no bar",
    ]
    bars = rows_of(spec, "window")
    assert [(b["x"], b["x2"], b["window"]) for b in bars] == [(0, 10, "[0 ms, 10 ms)")]
    marks = [r for rows in spec["datasets"].values() for r in rows if "what" in r]
    assert sorted((r["what"], r["window"]) for r in marks) == [
        ("cleanup", "[0 ms, 10 ms)"),
        ("fired: event-time timer", "[0 ms, 10 ms)"),
    ]


def test_scrubber_and_skew_say_what_they_leave_out() -> None:
    trace = extremes_job().trace
    spec = viz.scrubber(trace).to_dict()
    assert [(w["x"], w["x2"]) for w in rows_of(spec, "window")] == [(0, 10)]
    assert spec["usermeta"]["winviz"]["notes"][1] == f"{WRAPPED} have no band"  # (the bands')
    spec = viz.skew_chart(trace).to_dict()
    assert [(e["x"], e["y"]) for e in rows_of(spec, "element")] == [(10, 5)]
    assert spec["title"]["subtitle"][:2] == [
        "operator 'window': 1 element: 1 on time",
        "2 element(s) not drawn: no timestamp, or one off the chart (MIN, MAX, beyond ±2^53 ms) "
        "has no skew to draw",
    ]
