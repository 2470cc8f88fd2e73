"""``why_dropped``: what became of one source record (Flink's ``WindowOperator.processElement``:
``isElementLate`` / ``isWindowLate``; ``IntervalJoinOperator.isLate``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from winviz.errors import ArgumentTypeError, InputError
from winviz.operators.window_rules import cleanup_time
from winviz.time import MAX
from winviz.trace import Trace
from winviz.trace import vocabulary as words
from winviz.trace.restores import kept_before, rolled_back
from winviz.why.claims import Claim, ElementFate, JoinFate, NotKeyed, Replayed, WindowOutcome
from winviz.why.fired import firings_of
from winviz.why.reading import table_frame, time_text, trace_of

if TYPE_CHECKING:
    import pandas as pd
from winviz.why.render import Answer, firing_order


def why_dropped(
    trace: Trace, index: int, *, source: str | None = None, arrival: int | None = None
) -> Answer:
    """What became of the source record at ``index``, window by window, and the firing it caused at
    once. ``arrival`` picks one arrival of a record a restore replayed (0 the first; by default the
    last, whose fate the results keep)."""
    trace = trace_of(trace)
    if index.__class__ is not int:
        raise ArgumentTypeError(
            f"why_dropped() takes a source record's index, not {type(index).__name__}",
            field="index",
            value=index,
            expected="the int index of a source record",
        )
    indexed = [r for r in trace.records("arrival", operator=source) if isinstance(r.detail, tuple)]
    arrivals = [r for r in indexed if r.detail[1] == index]
    question = f"What happened to source record {index}?"
    if not arrivals:
        indexes = [r.detail[1] for r in indexed]
        raise InputError(
            "no arrival record with this index in the trace",
            field="index",
            value=index,
            expected=f"a source record index from {min(indexes)} to {max(indexes)}"
            if indexes
            else "a trace with source records (this one has none)",
        )
    # the same source's arrivals of the record: more than one only when a restore replayed it
    arrivals = [r for r in arrivals if r.operator == arrivals[0].operator]
    if arrival is None:
        arrival = len(arrivals) - 1
    elif arrival.__class__ is not int or not 0 <= arrival < len(arrivals):
        raise (InputError if arrival.__class__ is int else ArgumentTypeError)(
            f"source record {index} arrived {len(arrivals)} time(s)",
            field="arrival",
            value=arrival,
            expected=f"an int from 0 to {len(arrivals) - 1}",
        )
    replayed = (Replayed(index, len(arrivals), arrival + 1),) if len(arrivals) > 1 else ()
    claims, table = _fate_of(trace, index, arrivals[arrival])
    return Answer(question, replayed + claims, table)


def _fate_of(trace: Trace, index: int, arrival: Any) -> tuple[tuple[Claim, ...], pd.DataFrame]:
    """The claims and table of one arrival record of the source record at ``index``."""
    value = arrival.detail[0]
    elements = trace.rows_where(kind="element")
    elements = elements[elements > arrival.seq]
    element = next(
        (r for r in trace.records_at(elements[:64]) if _carries(r.detail, value)),
        None,
    )
    if element is None:
        return (NotKeyed(index),), table_frame()
    op = element.operator
    group = trace.rows_where(kind=_ELEMENT_KINDS, operator=op)
    # the element's own processing: up to its operator's next element, watermark or timer
    # firing (a firing's ProcessWindowFunction may write side outputs too: one written
    # before a fired record of this processing is not the element's late-data side output,
    # as fates.late_side_outputs rules)
    nxt = trace.rows_where(kind=("element", "watermark", "timer_fired"), operator=op)
    nxt = nxt[nxt > element.seq]
    end = int(nxt[0]) if len(nxt) else len(trace.columns())
    mine = group[(group > element.seq) & (group < end)]
    own = trace.records_at(mine)
    last_fired = max((r.seq for r in own if r.kind == "fired"), default=-1)
    own = [r for r in own if r.kind != "side_output" or r.seq > last_fired]
    wm, ts = element.watermark, element.ts
    kinds = {r.kind for r in own}
    if "buffered" in kinds or (
        kinds & {"late_dropped", "side_output"} and not kinds & {"assigned", "skipped_late_window"}
    ):  # no windows: an interval join (winviz.operators.interval_join)
        return (_join_fate(trace, index, element, own, end),), table_frame()
    lateness = _allowed_lateness(trace, op)
    outcomes = []
    for r in own:
        if r.kind not in ("assigned", "skipped_late_window"):
            continue
        w = r.window
        w_max = w.max_timestamp() if hasattr(w, "max_timestamp") else MAX
        cleanup = cleanup_time(w_max, lateness) if lateness is not None and w_max != MAX else None
        fired = trace.rows_where(kind="fired", operator=op, key=element.key, window=w)
        earlier = kept_before(fired, element.seq, rolled_back(trace))
        later = fired[fired > element.seq]
        nxt_firing = (
            firings_of(trace, op, w_max, later[:1], history=fired)[0]
            if r.kind == "assigned" and len(later) and hasattr(w, "start")
            else None
        )
        outcomes.append(
            WindowOutcome(
                window=repr(w),
                max_timestamp=w_max,
                cleanup=cleanup,
                added=r.kind == "assigned",
                earlier_firings=earlier,
                next_firing=nxt_firing,
                fired_now=nxt_firing is not None and nxt_firing.element_seq == element.seq,
            )
        )
    fate, tag = _late_fate(own)
    if fate is None:
        fate = words.LATE_ACCEPTED if words.is_late(ts, wm) else words.ON_TIME
    claim = ElementFate(index, op, ts, wm, fate, tuple(outcomes), tag)
    table = table_frame(
        [
            {
                "window": o.window,
                "max timestamp": time_text(o.max_timestamp),
                "cleanup time": time_text(o.cleanup),
                "watermark": time_text(wm),
                "outcome": _outcome_text(o),
            }
            for o in outcomes
        ]
    )
    return (claim,), table


# the kinds of record an element's processing at its operator writes
_ELEMENT_KINDS = (
    "element",
    "assigned",
    "skipped_late_window",
    "late_dropped",
    "side_output",
    "fired",
    "buffered",
)


def _carries(detail: Any, value: Any) -> bool:
    """Whether an element record's value is ``value``, or a window join's ``TaggedUnion`` of it
    (``winviz.joins``: the window operator of a join holds its inputs' records tagged)."""
    if detail is value or detail == value:
        return True
    if hasattr(detail, "is_one"):
        inner = detail.one if detail.is_one else detail.two
        return inner is value or inner == value
    return False


def _join_fate(trace: Trace, index: int, element: Any, own: list[Any], end: int) -> JoinFate:
    """What an interval join did with an element: late (dropped or side output, not joined) or
    buffered and joined (``own``: the records of its processing, ending before row ``end``)."""
    op = element.operator
    fate, tag = _late_fate(own)
    if fate is not None:
        return JoinFate(index, op, element.ts, element.watermark, fate, side_output=tag)
    later = [
        r
        for r in trace.records("joined", "timer_registered", operator=op)
        if element.seq < r.seq < end
    ]
    pairs = sum(r.kind == "joined" for r in later)
    cleanup = next((r.ts for r in later if r.kind == "timer_registered"), None)
    return JoinFate(
        index, op, element.ts, element.watermark, words.BUFFERED, pairs=pairs, cleanup=cleanup
    )


def _late_fate(own: list[Any]) -> tuple[str | None, str | None]:
    """A late element's fate, and its side output's tag, when its processing (``own``) wrote
    a ``late_dropped`` (dropped) or ``side_output`` record; else ``(None, None)``."""
    kinds = {r.kind for r in own}
    if "late_dropped" in kinds:
        return words.DROPPED, None
    if "side_output" in kinds:
        return words.SIDE_OUTPUT, next(r.detail[0] for r in own if r.kind == "side_output")
    return None, None


def _outcome_text(o: WindowOutcome) -> str:
    if not o.added:
        return "not added: past cleanup"
    f = o.next_firing
    if f is None:
        return "added; no firing after it"
    what = firing_order(f) + (f", {words.LATE_FIRING}" if f.late_firing else "")
    return f"added; fired at once ({what})" if o.fired_now else f"added; next firing: {what}"


def _allowed_lateness(trace: Trace, operator: str) -> int | None:
    """The operator's allowed lateness, read off a cleanup timer (cleanup − max timestamp);
    0 when its cleanup timers are its max timestamps; None when the trace cannot tell."""
    for r in trace.records("cleanup", operator=operator)[:1]:
        return int(r.detail) - r.window.max_timestamp()
    regs = trace.records("timer_registered", operator=operator)
    diffs = {
        r.ts - r.window.max_timestamp()
        for r in regs[:200]
        if hasattr(r.window, "max_timestamp") and r.window.start is not None
    }
    diffs.discard(0)
    return min(diffs) if diffs else (0 if regs else None)
