"""What made a window fire, read off the trace (the one place this rule lives).

By the schema's order rule 4, for a ``fired`` record the latest ``trigger`` record of its
operator before it names the call; for a timer call, the latest ``timer_fired`` record of
that operator before the call is its timer, when of the same key and window. Nothing is
guessed. ``fired_by`` puts each firing in one category of ``vocabulary.FIRED_BY`` (for
``winviz.viz`` and ``winviz.why`` alike).
"""

from __future__ import annotations

import numpy as np

from winviz.time import MAX
from winviz.trace import vocabulary as words
from winviz.trace.coded import distinct_values, object_array, same_values
from winviz.trace.columns import TraceColumns

TIMER_CALLS = ("on_event_time", "on_processing_time")
CALL_CAUSES = {"on_element": words.ELEMENT, "on_merge": words.SESSION_MERGE}
"""The trigger calls that name a firing's cause by themselves (``Trigger.onElement``,
``Trigger.onMerge``); a timer call's cause is its timer's domain (``fired_by``)."""


def firing_causes(c: TraceColumns, fired_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each ``fired`` record at these positions: its trigger call (None where there is
    no trigger record) and the position of its timer's ``timer_fired`` record (-1: none)."""
    fired_rows = np.asarray(fired_rows, dtype=np.int64)
    calls = np.full(len(fired_rows), None, dtype=object)
    timers = np.full(len(fired_rows), -1, dtype=np.int64)
    kinds = {k: i for i, k in enumerate(c.kind.values)}
    trigger, timer = kinds.get("trigger", -1), kinds.get("timer_fired", -1)
    if not len(fired_rows) or trigger < 0:
        return calls, timers
    codes = c.kind.codes
    # the trigger and timer_fired records, ordered by operator, then in seq order
    candidates = np.flatnonzero((codes == trigger) | (codes == timer))
    if not len(candidates):
        return calls, timers
    operator = c.part("operator", ("fired", "trigger", "timer_fired"))
    ops, fired_ops = operator.codes[candidates], operator.codes[fired_rows]
    order, wanted = candidates, fired_rows  # (sort keys: operator, then position)
    if ops.min() != ops.max() or (fired_ops != ops[0]).any():
        scale = np.int64(len(c) + 1)
        order = ops.astype(np.int64) * scale + candidates
        by = np.argsort(order, kind="stable")
        order, candidates, ops = order[by], candidates[by], ops[by]
        wanted = fired_ops.astype(np.int64) * scale + fired_rows
    is_trigger = codes[candidates] == trigger
    triggers = np.flatnonzero(is_trigger)  # (positions among the candidates)
    timers_at = np.flatnonzero(~is_trigger)
    before = np.searchsorted(order, wanted) - 1  # the latest of them before (any operator)
    # the latest trigger record at or before each: the last trigger position <= before
    k = np.searchsorted(triggers, before, side="right") - 1
    t = np.where((before >= 0) & (k >= 0), triggers[np.maximum(k, 0)], -1)
    has = t >= 0
    has[has] = ops[t[has]] == fired_ops[has]  # a trigger record of the firing's operator
    mine = np.flatnonzero(has)
    t = t[mine]
    # each call's name: the first item of its detail
    details = c.values_at("detail", candidates[t], ("trigger",)).tolist()
    calls[mine] = names = object_array([d[0] for d in details])
    if not len(timers_at):  # no timer_fired record (a GlobalWindow's CountTrigger): no timer
        return calls, timers
    k = np.searchsorted(timers_at, t, side="right") - 1  # the latest timer_fired before
    j = np.where(k >= 0, timers_at[np.maximum(k, 0)], -1)  # (any operator)
    timed = np.array([name in TIMER_CALLS for name in names.tolist()], dtype=bool)
    timed &= j >= 0
    timed[timed] = ops[j[timed]] == ops[t[timed]]  # of the call's operator
    trows, frows = candidates[j[timed]], fired_rows[mine[timed]]
    same = _same(c, "key", trows, frows) & _same(c, "window", trows, frows)
    timers[mine[timed][same]] = trows[same]
    return calls, timers


def _same(c: TraceColumns, name: str, timer_rows: np.ndarray, fired_rows: np.ndarray) -> np.ndarray:
    """Whether field ``name`` of each ``timer_fired`` record is its ``fired`` record's, by
    type and value (``coded.same_values``)."""
    rows = np.concatenate((timer_rows, fired_rows))  # (both read at once)
    both = c.values_at(name, rows, ("timer_fired", "fired"))
    return same_values(both[: len(timer_rows)], both[len(timer_rows) :])


def timer_domains(
    c: TraceColumns, timer_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The domain of the timer that fired each firing (``timer_rows`` from ``firing_causes``):
    the domains ("event", "processing" or None), where one is named and where it is "event"."""
    timer_rows = np.asarray(timer_rows, dtype=np.int64)
    timed = timer_rows >= 0
    domains = np.full(len(timer_rows), None, dtype=object)
    named = np.zeros(len(timer_rows), dtype=bool)
    event = np.zeros(len(timer_rows), dtype=bool)
    if timed.any():
        details = c.values_at("detail", timer_rows[timed], ("timer_fired",)).tolist()
        domains[timed] = heads = object_array([d[0] for d in details])
        named[timed] = [h is not None for h in heads.tolist()]
        event[timed] = [h == "event" for h in heads.tolist()]
    return domains, named, event


def fired_by(
    calls: np.ndarray, named: np.ndarray, event: np.ndarray, watermarks: np.ndarray
) -> np.ndarray:
    """The category of each firing's cause (``vocabulary.FIRED_BY``) from its trigger call,
    timer domain (``named``, ``event``) and watermark: an event-time timer
    (``WindowOperator.onEventTime``), "end of input" when the watermark was MAX; a
    processing-time timer; else the call (``CALL_CAUSES``); else "cause not traced"."""
    numbers, distinct = distinct_values(np.asarray(calls, dtype=object))
    names = [CALL_CAUSES.get(c, "") if isinstance(c, str) else "" for c in distinct]
    out = object_array([n or words.CAUSE_NOT_TRACED for n in names])[numbers]
    out[named] = words.PROCESSING_TIME_TIMER
    out[event] = words.EVENT_TIME_TIMER
    out[event & (np.asarray(watermarks) == MAX)] = words.END_OF_INPUT
    return out
