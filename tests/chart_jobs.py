"""Shared by tests/test_trace_parts.py and tests/test_viz_parts.py: jobs whose traces mix
packed entries (the window kernel's ``ElementEntry``, several markers) and plain records
(late elements, firings, cleanups, the general path's records), and the charts drawn from
them. (tests/conftest.py puts this folder on ``sys.path``: ``import chart_jobs``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jobs

import winviz as wv
from winviz import viz


def kernel_job(n: int) -> wv.JobExecutionResult:
    """The trace bench's job at ``n`` events (20 keys): tumbling 1 s sums, bound 200 ms, one
    event per ms; the window kernel packs most element records."""
    env = wv.StreamExecutionEnvironment()
    events = [(f"k{i % 20:02d}", i - (i * 7919) % 150, 1) for i in range(n)]
    return jobs.sum_pipeline(env, events, 1000, jobs.bounded(200), arrival_interval=1).execute()


def late_union_job() -> wv.JobExecutionResult:
    """Two pipelines in one job (two sources, two packed markers whose runs interleave): one
    with late elements kept (allowed lateness) and dropped to the side output, keys ``1`` and
    ``True`` (equal in Python, two keys in Java) and ``"1"``; the other counts."""
    env = wv.StreamExecutionEnvironment()
    keys = [1, True, "1"]
    a = [(keys[i % 3], (i * 37) % 900 + (i // 10) * 100, i) for i in range(120)]
    b = [(f"b{i % 2}", (i * 53) % 700 + (i // 10) * 90, -i) for i in range(90)]
    (
        env.from_collection(a, arrival_interval=3)
        .assign_timestamps_and_watermarks(jobs.bounded(50))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(200))
        .allowed_lateness(150)
        .side_output_late_data(wv.OutputTag("late"))
        .reduce(lambda x, y: (x[0], x[1], x[2] + y[2]))
        .sink_to("out")
    )
    jobs.count_pipeline(env, b, 150, jobs.bounded(20), arrival_interval=2, sink="counts")
    return env.execute()


def sliding_count_job() -> wv.JobExecutionResult:
    """The general path (a count trigger): sliding windows, keys 1, True and 1.5."""
    env = wv.StreamExecutionEnvironment()
    keys = [1, True, 1.5]
    events = [(keys[i % 3], (i * 29) % 400 + i * 4, i) for i in range(150)]
    (
        env.from_collection(events, arrival_interval=2)
        .assign_timestamps_and_watermarks(jobs.bounded(30))
        .key_by(lambda e: e[0])
        .window(wv.SlidingEventTimeWindows.of(120, 40))
        .trigger(wv.CountTrigger.of(3))
        .allowed_lateness(40)
        .aggregate(wv.SumAggregate(lambda e: e[2]))
        .sink_to("out")
    )
    return env.execute()


def session_job() -> wv.JobExecutionResult:
    """Merging windows (sessions, gap 60 ms) with a process function and lateness."""
    env = wv.StreamExecutionEnvironment()
    events = [(f"s{i % 4}", (i * 41) % 500 + i * 7, i) for i in range(160)]
    (
        env.from_collection(events, arrival_interval=5)
        .assign_timestamps_and_watermarks(jobs.bounded(40))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(60))
        .allowed_lateness(30)
        .process(lambda k, ctx, els, o: o.collect((k, len(list(els)))))
        .sink_to("out")
    )
    return env.execute()


JOBS: dict[str, Callable[[], wv.JobExecutionResult]] = {
    "kernel": lambda: kernel_job(3000),
    "kernel_binned": lambda: kernel_job(12000),
    "late_union": late_union_job,
    "sliding_count": sliding_count_job,
    "session": session_job,
}

CHARTS: dict[str, Callable[[Any], Any]] = {
    "timeline": lambda t: viz.timeline(t, view="timeline"),
    "scrubber": viz.scrubber,
    "timers_chart": viz.timers_chart,
    "window_lanes": viz.window_lanes,
    "propagation_chart": viz.propagation_chart,
    "operator_flow": viz.operator_flow,
    "stage_watermarks": viz.stage_watermarks,
}

FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")


def decode_all(trace: wv.Trace) -> None:
    """Every column of the trace decoded whole (the charts then read the full columns)."""
    columns = trace.columns()
    for name in FIELDS:
        getattr(columns, name)
