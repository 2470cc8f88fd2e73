"""The timeline's notes on what it does not draw count as every chart does
(``vocabulary.counted``), the verb agreeing: "1 element without a timestamp is not drawn"."""

from __future__ import annotations

from jobs import count_pipeline

import winviz as wv
from winviz import viz


def subtitle(env: wv.StreamExecutionEnvironment) -> list[str]:
    """The timeline's subtitle lines."""
    return viz.timeline(env.execute()).to_dict()["title"]["subtitle"]


def untimed(n: int) -> list[str]:
    """``n`` elements without timestamps (no watermark strategy) in processing-time windows."""
    events = [("a", 10 * i) for i in range(n)]
    window = wv.TumblingProcessingTimeWindows.of(1000)
    return subtitle(count_pipeline(wv.StreamExecutionEnvironment(), events, window, None))


def global_firings(n: int) -> list[str]:
    """``n`` elements into the global window, fired (and purged) on every 3rd."""
    events = [("a", 10 * i) for i in range(n)]
    trigger = wv.PurgingTrigger.of(wv.CountTrigger.of(3))
    env = wv.StreamExecutionEnvironment()
    return subtitle(count_pipeline(env, events, wv.GlobalWindows.create(), trigger=trigger))


def test_one_element_without_a_timestamp_is_not_drawn() -> None:
    """Fails on main: "1 elements without a timestamp are not drawn"."""
    assert untimed(1)[1] == "1 element without a timestamp is not drawn"
    assert untimed(2)[1] == "2 elements without a timestamp are not drawn"


def test_one_firing_of_the_global_window_is_not_drawn() -> None:
    """Fails on main: "1 firings of the global window are not drawn"."""
    axis = " (it has no start or end on the event-time axis)"
    assert global_firings(4)[1] == "1 firing of the global window is not drawn" + axis
    assert global_firings(6)[1] == "2 firings of the global window are not drawn" + axis
