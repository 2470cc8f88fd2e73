"""The window operator's rules, each stated once: what Flink's ``WindowOperator.java`` decides
for a window and an element, as small pure functions. ``winviz.operators.window_operator``
(Flink's path) and ``winviz.operators.window_kernel`` (the fused loops beneath it) both call
them.

- ``cleanup_time``: ``WindowOperator.cleanupTime`` for an event-time window.
- ``is_element_late``: ``WindowOperator.isElementLate`` for event time.
- ``add_to_contents``: ``ReducingState.add`` / ``AggregatingState.add`` (Flink's
  ``HeapReducingState`` / ``HeapAggregatingState``): the window's new contents, from its
  two cases ``first_contents`` and ``contents_step`` (which hot loops look up once).
- ``next_pane``: the firing's description, its pane index and timing (early / on_time /
  late, as Flink's ``PaneInfo`` names them), kept per (key, window).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.state import ReducingStateDescriptor
from winviz.time import MAX, wrap_long


def cleanup_time(max_ts: int, allowed_lateness: int) -> int:
    """An event-time window's cleanup time: ``max_timestamp + allowed_lateness``, MAX when
    that overflows (``WindowOperator.cleanupTime``)."""
    t = wrap_long(max_ts + allowed_lateness)
    return t if t >= max_ts else MAX


def is_element_late(ts: int | None, allowed_lateness: int, watermark: int) -> bool:
    """Whether an event-time element is late past the allowed lateness
    (``WindowOperator.isElementLate``: ``ts + allowed_lateness <= watermark``)."""
    return ts is not None and wrap_long(ts + allowed_lateness) <= watermark


def add_to_contents(desc: Any, current: Any, record: Any) -> Any:
    """A window's contents after ``record`` is added to ``current`` (None: none yet) in
    reducing state or aggregating state: ``first_contents`` for the first record, else
    ``contents_step``'s step."""
    if current is None:
        return first_contents(desc, record)
    return contents_step(desc)(current, record)


def first_contents(desc: Any, record: Any) -> Any:
    """A window's contents when ``record`` is its first: the record itself in reducing
    state, ``add(record, create_accumulator())`` in aggregating state."""
    if desc.__class__ is ReducingStateDescriptor:
        return record
    agg = desc.function
    return agg.add(record, agg.create_accumulator())


def contents_step(desc: Any) -> Callable[[Any, Any], Any]:
    """How a record is added to contents there are already, as ``step(contents, record)``:
    the reduce function itself in reducing state (``reduce(contents, record)``; a loop that
    looks the step up once calls the user's function with no frame in between), the
    aggregate function's ``add(record, accumulator)`` in aggregating state."""
    if desc.__class__ is ReducingStateDescriptor:
        return desc.reduce
    add = desc.function.add
    return lambda accumulator, record: add(record, accumulator)


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
