"""What made a window fire, read off the trace (the one place this rule lives).

By the schema's order rule 4, a timer's ``timer_fired`` record comes before the ``trigger``
call and the ``fired`` records of its window. So for a ``fired`` record: the latest ``trigger``
record of its operator before it names the call (``on_element``, ``on_event_time``,
``on_processing_time``, ``on_merge``); for a timer call, the latest ``timer_fired`` record of
that operator before the call is the timer that fired it, when it is of the same key and
window. Nothing is guessed: no trigger record gives no call, a timer of another key or window
gives no timer. ``winviz.viz`` (firing marks) and ``winviz.why`` word the result.
"""

from __future__ import annotations

import numpy as np

from winviz.trace.columns import TraceColumns

TIMER_CALLS = ("on_event_time", "on_processing_time")


def firing_causes(c: TraceColumns, fired_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each ``fired`` record at these positions: its trigger call (an object array, None
    where there is no trigger record) and the position of the ``timer_fired`` record of the
    timer that fired it (-1 where none). Reads the operator, key, window and detail of the
    ``fired``, ``trigger`` and ``timer_fired`` records only (``TraceColumns.part``)."""
    fired_rows = np.asarray(fired_rows, dtype=np.int64)
    calls = np.full(len(fired_rows), None, dtype=object)
    timers = np.full(len(fired_rows), -1, dtype=np.int64)
    kinds = {k: i for i, k in enumerate(c.kind.values)}
    trigger, timer = kinds.get("trigger", -1), kinds.get("timer_fired", -1)
    operator = c.part("operator", ("fired", "trigger", "timer_fired"))
    operators = operator.codes[fired_rows]
    # the trigger and timer_fired records, in seq order (their operators compared per operator)
    candidates = np.flatnonzero((c.kind.codes == trigger) | (c.kind.codes == timer))
    candidate_kinds = c.kind.codes[candidates]
    candidate_operators = operator.codes[candidates]
    for op in np.unique(operators).tolist():
        mine = np.flatnonzero(operators == op)
        at = np.flatnonzero(candidate_operators == op)
        rows, kinds_of = candidates[at], candidate_kinds[at]
        pos = np.arange(len(rows))
        last_trigger = np.maximum.accumulate(np.where(kinds_of == trigger, pos, -1))
        last_timer = np.maximum.accumulate(np.where(kinds_of == timer, pos, -1))
        before = np.searchsorted(rows, fired_rows[mine]) - 1  # the latest of them before
        t = np.where(before >= 0, last_trigger[np.maximum(before, 0)], -1) if len(rows) else before
        has = t >= 0
        call_rows = rows[t[has]]
        calls[mine[has]] = [d[0] for d in c.part("detail", ("trigger",))[call_rows].tolist()]
        j = last_timer[t[has]] if len(rows) else t[has]
        found = calls[mine[has]]
        timed = ((found == TIMER_CALLS[0]) | (found == TIMER_CALLS[1])) & (j >= 0)
        trows, frows = rows[j[timed]], fired_rows[mine[has][timed]]
        key = c.part("key", ("timer_fired", "fired"))  # (one part: codes compared)
        window = c.part("window", ("timer_fired", "fired"))
        same = (key.codes[trows] == key.codes[frows]) & (window.codes[trows] == window.codes[frows])
        timers[mine[has][timed][same]] = trows[same]
    return calls, timers
