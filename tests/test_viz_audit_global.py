"""Chart audit (global windows): a GlobalWindows operator with a purging CountTrigger — no
timer at all in its trace — is drawn, and the timeline says how many firings it does not draw
(the global window has no start or end on the event-time axis) instead of "0 firings"."""

from __future__ import annotations

import numpy as np

import winviz as wv
from winviz import viz
from winviz.trace.causes import firing_causes
from winviz.viz import firings
from winviz.viz.explore import summarize
from winviz.viz.trace_view import open_trace


def global_count_job() -> wv.JobExecutionResult:
    """a@0, a@10, ..., a@60 one every 10 ms into the global window; PurgingTrigger.of(
    CountTrigger.of(3)) fires (and purges) on the 3rd and 6th element; a@60 stays."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 10 * i) for i in range(7)], arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.GlobalWindows.create())
        .trigger(wv.PurgingTrigger.of(wv.CountTrigger.of(3)))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


def test_firing_causes_of_a_trace_without_timers() -> None:
    result = global_count_job()
    assert [r.value for r in result.outputs["out"]] == [3, 3]
    trace = result.trace
    assert not any(r.kind.startswith("timer_") for r in trace.records())
    view = open_trace(trace)
    rows = view.select("fired", operator="window")
    calls, timers = firing_causes(view.c, rows)
    assert calls.tolist() == ["on_element", "on_element"]
    assert timers.tolist() == [-1, -1]
    assert firings.firing_causes(view, rows) == (["element", "element"], [None, None], [None, None])


def test_the_columns_of_the_firings_are_those_of_time_windows() -> None:
    # one backend: the firings' columns leave the global window's out, the frame has them all
    view = open_trace(global_count_job().trace)
    assert firings.firings(view, "window")["window_end"].tolist() == [None, None]
    fired = firings.firing_columns(view, "window")
    assert len(fired) == 0
    assert fired["window_end"].dtype == fired["window_start"].dtype == np.int64
    assert len(firings.cleanup_columns(view, "window")) == 0


def test_the_timeline_says_the_global_windows_firings_are_not_drawn() -> None:
    spec = viz.timeline(global_count_job().trace, view="timeline").to_dict()
    assert spec["usermeta"]["winviz"]["status"] == "ok"
    assert spec["title"]["subtitle"][:2] == [
        "operator 'window': 7 elements, 0 (key, window) pairs, 0 firings",
        "2 firings of the global window are not drawn (it has no start or end on the "
        "event-time axis)",
    ]
    elements = [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == "element"]
    assert [(e["x"], e["y"], e["what"]) for e in elements] == [
        (10 * i, 10 * i, "on time") for i in range(7)
    ]


def test_the_explorers_summary_counts_the_element_firings() -> None:
    assert summarize(global_count_job()).text() == (
        "fired 2 (event-time timer 0 · element 2 · processing-time timer 0 · end of input 0) · "
        "late firings 0 · elements 7: on time 7 · late, accepted 0 · dropped 0 · side output 0"
    )
