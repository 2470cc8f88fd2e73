"""Chart audit (timers chart): above ``AGGREGATE_LIMIT`` timers, one rule per (domain,
timestamp). When that timestamp's timers ended in several ways — a session merge deleted some,
the watermark fired the others — the rule's end mark had the category "deleted, fired", which
is not in the shape scale's domain (drawn as an unlisted shape, in no legend entry). Each way
now gets its own end mark, at the last time timers ended that way."""

from __future__ import annotations

from typing import Any

import pandas as pd
from jobs import bounded, count_pipeline

import winviz as wv
from winviz import viz
from winviz.viz import palette, timers


def merging_job() -> wv.JobExecutionResult:
    """Sessions (gap 100 ms), bound 1000 ms: a0..a3 at 0 ms, one a ms apart (timers at 99);
    a0 and a2 get a second element @50 at 4 and 5 ms: their sessions merge into [0, 150), whose
    timer is at 149, and their timers at 99 are deleted then. The end of input fires the timers
    of a1 and a3 at 99 and of a0 and a2 at 149, at 5 ms."""
    env = wv.StreamExecutionEnvironment()
    events = [("a0", 0), ("a1", 0), ("a2", 0), ("a3", 0), ("a0", 50), ("a2", 50)]
    count_pipeline(
        env,
        events,
        wv.EventTimeSessionWindows.with_gap(100),
        bounded(1000),
        arrival_interval=1,
    )
    return env.execute()


def test_each_way_an_aggregated_rules_timers_ended_gets_a_mark(monkeypatch: Any) -> None:
    result = merging_job()
    ended = sorted(
        (r.ts, r.kind, r.proc_time)
        for r in result.trace.records()
        if r.kind in ("timer_fired", "timer_deleted") and r.details().get("existed", True)
    )
    assert ended == [
        (99, "timer_deleted", 4),
        (99, "timer_deleted", 5),
        (99, "timer_fired", 5),
        (99, "timer_fired", 5),
        (149, "timer_fired", 5),
        (149, "timer_fired", 5),
    ]
    monkeypatch.setattr(timers, "AGGREGATE_LIMIT", 2)
    spec = viz.timers_chart(result).to_dict()
    main = spec["hconcat"][0]["layer"]
    shapes = next(lay for lay in main if "shape" in lay["encoding"])
    domain = shapes["encoding"]["shape"]["scale"]["domain"]
    rules = [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == "timer"]
    assert [(r["x"], r["y"], r["y2"], r["timers"], r["end"]) for r in rules] == [
        (99, 0, 5, 4, "deleted, fired"),
        (149, 4, 5, 2, "fired"),
    ]
    events = [
        (e["x"], e["event"], e["y"], e["ended"])
        for rows in spec["datasets"].values()
        for e in rows
        if e.get("kind") == "timer event" and e["event"] != timers.DEDUP_EVENT
    ]
    assert events == [
        (99, "registered", 0, "5 ms"),
        (99, "deleted", 5, "5 ms"),
        (99, "fired", 5, "5 ms"),
        (149, "registered", 4, "5 ms"),
        (149, "fired", 5, "5 ms"),
    ]
    assert {e for _, e, _, _ in events} <= set(domain)


def test_ends_by_timestamp_orders_the_ways_and_puts_pending_on_top() -> None:
    lives = pd.DataFrame(
        {
            "domain": ["event"] * 4,
            "timestamp": [99, 99, 99, 99],
            "end": ["fired", "deleted", "pending", "deleted"],
            "ended": [30, 20, None, 25],
            "registered": [1, 2, 3, 4],
            "key": ["a", "b", "c", "d"],
        }
    )
    x = palette.time_axis("event time", [0, 100])
    y = palette.time_axis("processing time", [0, 40])
    assert timers._aggregated_rows(lives, x, y, 40)[1] == {
        ("event", "99 ms"): [
            ("deleted", 25, "25 ms"),
            ("fired", 30, "30 ms"),
            ("queued at the end", y.hi, ""),
        ]
    }
