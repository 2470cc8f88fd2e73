"""Chart audit (element fates at an operator without windows): Flink calls an element late when
its timestamp is <= the operator's watermark, and a KeyedProcessFunction receives it all the
same (lesson 03: "the late element ("x", 200)"). The charts coloured such an element "on time"
— the skew chart even drew it above the watermark-lag line, which its subtitle says means
late. It is now "late, accepted" (processed; nothing drops it)."""

from __future__ import annotations

from typing import Any

from jobs import step_at_arrival_job

import winviz as wv
from winviz import viz
from winviz.viz.fates import element_fates
from winviz.viz.trace_view import open_trace


class TimerAtTimestamp(wv.KeyedProcessFunction):
    """Lesson 03's function: a timer at each element's timestamp."""

    def process_element(self, value: Any, ctx: Any, out: Any) -> None:
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def on_timer(self, ts: int, ctx: Any, out: Any) -> None:
        out.collect((ts, ctx.timer_service().current_watermark()))


def process_job() -> wv.JobExecutionResult:
    """x@1000 at 0 ms, x@200 at 500 ms (the watermark is 999 since 200 ms: late), x@3000 at
    1000 ms (lesson 03)."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("x", 1000), ("x", 200), ("x", 3000)], arrival_times=[0, 500, 1000])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .process(TimerAtTimestamp())
        .sink_to("out")
    )
    return env.execute()


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == kind]


def test_a_late_element_of_a_process_function_is_late_accepted() -> None:
    result = process_job()
    met = [(r.ts, r.watermark) for r in result.trace.records() if r.kind == "element"]
    assert met == [(1000, wv.MIN), (200, 999), (3000, 999)]
    assert [r.value for r in result.outputs["out"]] == [
        (200, 2999),
        (1000, 2999),
        (3000, wv.MAX),
    ]
    fates = element_fates(open_trace(result.trace), "process")
    assert fates["fate"].tolist() == ["on time", "late, accepted", "on time"]

    timeline = viz.timeline(result.trace, view="timeline").to_dict()
    assert [(e["x"], e["y"], e["what"]) for e in rows_of(timeline, "element")] == [
        (1000, 0, "on time"),
        (200, 500, "late, accepted"),
        (3000, 1000, "on time"),
    ]
    assert timeline["title"]["subtitle"][1] == "elements: 2 on time, 1 late, accepted"
    scrubber = viz.scrubber(result.trace).to_dict()
    assert [e["what"] for e in rows_of(scrubber, "element")][:3] == [
        "on time",
        "late, accepted",
        "on time",
    ]
    skew = viz.skew_chart(result.trace).to_dict()
    points = {e["x"]: (e["y"], e["fate"]) for e in rows_of(skew, "element")}
    assert points == {0: (-1000, "on time"), 500: (300, "late, accepted"), 1000: (-2000, "on time")}
    # each element on or above the watermark-lag line at its processing time exactly when
    # it is late (the line's value where the element arrived: its last vertex at or before)
    lag = [(v["x"], v["y"]) for v in rows_of(skew, "watermark lag")]
    for x, (y, fate) in points.items():
        at = [ly for lx, ly in lag if lx <= x]
        assert (bool(at) and y >= at[-1]) == (fate == "late, accepted")


def test_window_operators_keep_their_fates() -> None:
    """At a window operator a late element assigned to no window is dropped (or sent to the
    side output): the rule above does not make it "late, accepted"."""
    fates = element_fates(open_trace(step_at_arrival_job().trace), "window")
    assert fates["fate"].tolist() == ["on time", "dropped"]
