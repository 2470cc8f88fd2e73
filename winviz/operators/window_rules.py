"""The window operator's rules, each stated once as a small pure function of Flink's
``WindowOperator.java``, called by ``winviz.operators.window_operator`` and by the fused loops
of ``winviz.operators.window_kernel``. (Adding to a window's contents is the state's rule:
``winviz.state.add_to_contents``.)
"""

from __future__ import annotations

from typing import Any

from winviz.time import MAX, wrap_long


def cleanup_time(max_ts: int, allowed_lateness: int) -> int:
    """An event-time window's cleanup time: ``max_timestamp + allowed_lateness``, MAX when
    that overflows (``WindowOperator.cleanupTime``)."""
    t = wrap_long(max_ts + allowed_lateness)
    return t if t >= max_ts else MAX


def window_times(window: Any, allowed_lateness: int) -> tuple[int, int]:
    """An event-time window's max timestamp and cleanup time (``cleanup_time``)."""
    max_ts = window.max_timestamp()
    return max_ts, cleanup_time(max_ts, allowed_lateness) if allowed_lateness else max_ts


def is_element_late(ts: int | None, allowed_lateness: int, watermark: int) -> bool:
    """Whether an event-time element is late past the allowed lateness
    (``WindowOperator.isElementLate``: ``ts + allowed_lateness <= watermark``)."""
    return ts is not None and wrap_long(ts + allowed_lateness) <= watermark


def next_pane(
    panes: dict[tuple[Any, Any], tuple[int, bool]], key: Any, window: Any, now: int, max_ts: int
) -> tuple[int, str]:
    """A firing of ``window`` for ``key`` at time ``now`` (the watermark for event time): its
    pane index (0 for the first firing) and timing — ``early`` before the window's max
    timestamp, ``on_time`` the first time after, ``late`` after that. ``panes`` keeps
    (firings so far, whether one was on time) per (key, window) and is updated."""
    pane, had_on_time = panes.get((key, window), (0, False))
    if now < max_ts:
        timing = "early"
    elif not had_on_time:
        timing, had_on_time = "on_time", True
    else:
        timing = "late"
    panes[(key, window)] = (pane + 1, had_on_time)
    return pane, timing
