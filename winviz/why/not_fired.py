"""``why_not_fired``: why a window has not fired (Flink's ``StatusWatermarkValve`` /
``WatermarkOutputMultiplexer``: the minimum over the active channels; an idle one holds nothing
back)."""

from __future__ import annotations

from typing import Any

from winviz.time import MIN
from winviz.trace import Trace
from winviz.trace.channels import (
    CHANNEL_KINDS,
    COMBINED_INPUTS,
    channel_states,
    gate_owner,
    unrecorded_channel,
)
from winviz.trace.paused import still_paused
from winviz.why.claims import (
    Channel,
    DidFire,
    NoContents,
    NoEventTimer,
    PausedForAlignment,
    TimerDue,
    TriggerDecides,
    WatermarkHeld,
)
from winviz.why.reading import table_frame, time_text, window_asked
from winviz.why.render import Answer


def why_not_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Why ``window`` has not fired for ``key`` (by the end of the trace)."""
    trace, bounds, op, fired = window_asked(trace, key, window, operator)
    max_ts = bounds[1] - 1
    question = f"Why has window [{bounds[0]}, {bounds[1]}) of key {key!r} not fired?"
    if len(fired):
        return Answer(question, (DidFire(op, len(fired)),), table_frame())
    assigned = trace.rows_where(kind="assigned", operator=op, key=key, window=bounds)
    skipped = trace.rows_where(kind="skipped_late_window", operator=op, key=key, window=bounds)
    marks = trace.records("watermark", operator=op)
    wm = marks[-1].ts if marks else MIN
    if not len(assigned):
        return Answer(question, (NoContents(op, len(skipped)), *_paused(trace)), table_frame())
    target = None if wm >= max_ts else _next_trigger_timer(trace, op, key, bounds)
    if target is None:  # the trigger decides: its last calls
        triggers = trace.records("trigger", operator=op, key=key, window=bounds)
        calls = tuple(r.detail for r in triggers)[-5:]
        claim = TriggerDecides if wm >= max_ts else NoEventTimer
        return Answer(question, (claim(op, wm, max_ts, calls),), table_frame())
    if target <= wm:
        return Answer(question, (TimerDue(op, wm, target),), table_frame())
    channels = _channels(trace)
    # the timestamps-and-watermarks operators whose strategy has with_idleness
    idleness = {str(r.detail[1]) for r in trace.records("idleness")}
    held = _held(trace, op, wm, target, channels, max_ts, idleness)
    table = table_frame(
        [
            {
                "operator": ch.operator,
                "channel": ch.channel,
                "input": ch.input,
                "watermark": time_text(ch.watermark),
                "last_advanced": ch.last_advanced,
                "idle": ch.idle,
                "aligned": ch.aligned,
            }
            for ch in channels
        ]
    )
    table = table if table.empty else table.astype(_CHANNEL_TYPES)
    return Answer(question, (held, *_paused(trace)), table)


def _paused(trace: Trace) -> tuple[PausedForAlignment, ...]:
    """The claim that sources are still paused for watermark alignment (none: nothing is)."""
    spans = tuple(still_paused(trace))
    return (PausedForAlignment(spans),) if spans else ()


def _next_trigger_timer(trace: Trace, op: str, key: Any, window: tuple[int, int]) -> int | None:
    """The earliest event-time timer the window's *trigger* registered that has neither fired nor
    been deleted (None: none): registered inside a trigger call, before its ``trigger`` record (the
    operator's cleanup timer comes after it, and is not the trigger's), or by ``Trigger.onMerge``
    between a ``merged`` record and the ``assigned`` record of the element that merged (it writes
    no ``trigger`` record: Flink's ``ContinuousEventTimeTrigger.onMerge`` registers the merged
    next fire timestamp, ``EventTimeTrigger.onMerge`` the max timestamp)."""
    pending: set[int] = set()
    since: list[int] = []  # event-time timers registered in this call, before its record
    merging = False  # since a ``merged`` record: the trigger's onMerge registers
    for r in trace.records(
        "merged", "assigned", "timer_registered", "timer_fired", "timer_deleted", "trigger",
        operator=op, key=key, window=window,
    ):  # fmt: skip
        if r.kind == "trigger":
            pending.update(since)
            since = []
        elif r.kind in ("merged", "assigned"):  # a new element: a cleanup timer came before
            if merging:  # onMerge's timers, between the two
                pending.update(since)
            since, merging = [], r.kind == "merged"
        elif r.detail[0] != "event":
            continue
        elif r.kind == "timer_registered":
            since.append(r.ts)
        else:
            pending.discard(r.ts)
            since = [] if r.kind == "timer_fired" else since
    return min(pending) if pending else None


def _held(
    trace: Trace,
    op: str,
    wm: int,
    target: int,
    channels: list[Channel],
    max_ts: int,
    with_idleness: set[str],
) -> WatermarkHeld:
    """Which input channels hold ``op``'s watermark ``wm`` below ``target``: those of ``op``, else
    of the one operator upstream that has channels (``_upstream``; before ``op``'s first
    watermark, the operator its elements came from, ``_fed_by``: a two-input operator without
    an input record yet has both inputs at MIN, though its input gates wrote). The trace shows
    ``with_idleness`` for the one holder when a channel of the operator was idle or its input has
    an idleness timeout; for an input of a two-input operator, only on that input's side."""
    ops = list(dict.fromkeys(ch.operator for ch in channels))
    judged = op if op in ops else (ops[0] if len(ops) == 1 else None)
    if judged is None and ops:
        judged = _upstream(trace, trace.records("watermark", operator=op), set(ops))
    gate_holders: tuple[Channel, ...] = ()
    if judged is None and ops and wm == MIN:  # no watermark yet: the operator its elements left
        fed = _fed_by(trace, op)
        gated = fed is not None and any(gate_owner(other) == fed for other in ops)
        judged = fed if fed in ops or gated else None
        if gated and fed not in ops:  # a two-input operator before its first input record:
            channels = [  # both inputs active at MIN (CombinedWatermarkStatus' start)
                *channels,
                *(Channel(str(fed), i, k, MIN, False, None) for i, k in enumerate(COMBINED_INPUTS)),
            ]
            gate_holders = tuple(  # no gate emitted yet: what holds each at MIN
                ch
                for ch in channels
                if gate_owner(ch.operator) == fed
                and ch.watermark == MIN
                and not ch.idle
                and ch.aligned
            )
    mine = [ch for ch in channels if ch.operator == judged]
    active = [ch for ch in mine if not ch.idle and ch.aligned]
    holders = tuple(
        sorted((ch for ch in active if ch.watermark < target), key=lambda ch: ch.watermark)
    )
    idle = tuple(ch for ch in mine if ch.idle)
    unaligned = tuple(ch for ch in mine if not ch.idle and not ch.aligned)
    others: int | None = None
    seen_in = mine  # where the trace may show with_idleness for the holder
    side_idleness = False
    if len(holders) == 1 and holders[0].input in COMBINED_INPUTS:  # its side only
        h = holders[0]
        gate = f"{judged}/{h.input}"
        seen_in = [h, *(ch for ch in channels if ch.operator == gate)]
        marks = [
            r
            for r in trace.records("channel_watermark", operator=judged)
            if r.detail == (h.channel, h.input)
        ]
        side_idleness = _upstream(trace, marks, with_idleness) is not None
    if len(holders) == 1:
        rest = [ch.watermark for ch in active if ch is not holders[0]]
        others = min(rest) if rest else None
    return WatermarkHeld(
        operator=op,
        watermark=wm,
        max_timestamp=max_ts,
        target=target,
        channels_of=judged,
        holders=holders,
        idle=idle,
        unaligned=unaligned,
        others=others,
        idleness_seen=any(ch.idle_seen for ch in seen_in)
        or side_idleness
        or judged in with_idleness
        or any(ch.input in with_idleness for ch in seen_in),
        idleness_would_help=len(holders) == 1 and others is not None and others >= target,
        gate_holders=gate_holders,
    )


def _upstream(trace: Trace, marks: list[Any], until: set[str]) -> str | None:
    """The operator of ``until`` whose watermark reaches ``marks`` (watermark or channel records)
    over one input at each step, walked up: the operator whose watermark records since the last
    restore start with the values of ``marks``, each just before it (what a one-input operator
    takes is each watermark its upstream emits; of several such, the one that wrote last before
    it). None: no such operator."""
    since = max((r.seq for r in trace.records("restore")), default=-1)
    runs: dict[str, list[Any]] = {}
    for r in trace.records("watermark"):
        if r.seq > since and r.detail != "restore":
            runs.setdefault(r.operator, []).append(r)
    mine = [r for r in marks if r.seq > since and r.detail != "restore"]
    seen: set[str] = set()
    while mine:
        found = [
            (theirs[len(mine) - 1].seq, other)
            for other, theirs in runs.items()
            if other not in seen
            and len(theirs) >= len(mine)
            and all(t.ts == m.ts and t.seq < m.seq for t, m in zip(theirs, mine, strict=False))
        ]
        if not found:
            return None
        at = max(found)[1]
        if at in until:
            return at
        seen.add(at)
        mine = runs[at]
    return None


def _fed_by(trace: Trace, op: str) -> str | None:
    """The operator ``op``'s first element came from: the operator of the last ``emitted``
    record before it with its processing time and value (None: none, as for an operator that
    reads a source's records)."""
    first = trace.records("element", operator=op)[:1]
    if not first:
        return None
    sent = [
        r
        for r in trace.records("emitted")
        if r.seq < first[0].seq
        and r.operator != op
        and (r.proc_time, r.detail) == (first[0].proc_time, first[0].detail)
    ]
    return sent[-1].operator if sent else None


def _channels(trace: Trace) -> list[Channel]:
    """The last watermark and idleness of every input channel or partition
    (``winviz.trace.channels.channel_states``; one that wrote none: ``unrecorded_channel``)."""
    records = trace.records(*CHANNEL_KINDS, "watermark", "restore")
    folded = [r for r in records if r.kind != "watermark"]
    state: dict[tuple[str, int | None], Channel] = dict(channel_states(folded))
    per_operator: dict[str, list[tuple[Any, ...]]] = {}
    for r in records:
        if r.kind in ("watermark", "restore"):
            for op in [r.operator] if r.kind == "watermark" else list(per_operator):
                if op in per_operator:
                    per_operator[op].append(
                        (r.seq, r.kind, r.proc_time, r.watermark, r.watermark, None, None)
                    )
            continue
        channel, name = r.detail
        value = r.ts if r.kind == "channel_watermark" else None
        per_operator.setdefault(r.operator, []).append(
            (r.seq, r.kind, r.proc_time, value, r.watermark, channel, name)
        )
        gate = per_operator.get(f"{r.operator}/{name}") if name in COMBINED_INPUTS else None
        if gate is not None and value is not None:  # what the gate emitted: its watermark
            gate.append((r.seq, "watermark", r.proc_time, value, value, None, None))
    for op, rows in per_operator.items():
        sink = len(trace.rows_where(kind="sink", operator=op)) > 0
        silent = unrecorded_channel(op, rows, sink=sink)
        if silent is not None:
            state[(op, None)] = Channel(op, silent.channel, silent.input, MIN, False, None)
    return list(state.values())


# the channel table's columns: a channel without records has no index nor time it advanced
# (<NA>, the numbers staying ints: a float column would show 1199.0); watermarks are printed
# by name (MIN)
_CHANNEL_TYPES = {
    "operator": object, "channel": "Int64", "input": object, "watermark": object,
    "last_advanced": "Int64", "idle": bool, "aligned": bool,
}  # fmt: skip
