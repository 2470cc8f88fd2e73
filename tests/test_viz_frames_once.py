"""The causes of a trace's firings are derived once per view: the explorer's summary after a
timeline of the same view finds every firing's trigger call, timer and timer domain once
(``firings._causes_of``), not once per table that reads them."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz import viz
from winviz.viz import firings
from winviz.viz.explore import summarize
from winviz.viz.trace_view import open_trace


def test_summary_after_a_timeline_derives_each_firing_cause_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = wv.StreamExecutionEnvironment()
    events = [("a", 100), ("b", 300), ("a", 1200), ("a", 50), ("b", 2500), ("a", 90)]
    count_pipeline(env, events, 1000, bounded(0), lateness=2000, arrival_interval=300)
    view = open_trace(env.execute())
    calls: dict[str, int] = {"firing_causes": 0, "timer_domains": 0}

    def counted(name: str, f: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            calls[name] += 1
            return f(*args)

        return wrapper

    monkeypatch.setattr(
        firings, "trace_firing_causes", counted("firing_causes", firings.trace_firing_causes)
    )
    monkeypatch.setattr(firings, "timer_domains", counted("timer_domains", firings.timer_domains))
    viz.timeline(view)
    s = summarize(view)
    assert calls == {"firing_causes": 1, "timer_domains": 1}
    # (one element per 300 ms, a watermark per 200 ms) windows [0, 1000) of a and b and
    # [1000, 2000) of a fire by the watermark's event-time timers; the late elements 50 and 90
    # of a re-fire [0, 1000) (late firings, by element); the end of input fires b's [2000, 3000)
    assert (s.fired, s.by_element, s.by_event_time_timer, s.at_end_of_input) == (6, 2, 3, 1)
    assert (s.late_accepted, s.late_firings) == (2, 2)
