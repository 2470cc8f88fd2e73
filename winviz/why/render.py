"""A why-answer (``Answer``) and its sentence, rendered from its claims only: one function per
claim type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from winviz.trace import vocabulary as words
from winviz.trace.channels import COMBINED_INPUTS
from winviz.trace.paused import paused_note
from winviz.why import claims as cl
from winviz.why.reading import time_text

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Answer:
    """An answer to a why-question: the ``question``, its ``claims``, the ``sentence`` rendered
    from them only, and a ``table``."""

    question: str
    claims: tuple[cl.Claim, ...]
    table: pd.DataFrame

    @property
    def sentence(self) -> str:
        return render(self.claims)

    def __repr__(self) -> str:
        body = "" if self.table.empty else "\n\n" + self.table.to_string(index=False)
        return f"{self.question}\n{self.sentence}{body}"


def firing_watermark(f: cl.Firing) -> str:
    """The watermark a firing saw, as printed (MAX by the end of a key in BATCH mode)."""
    return "MAX (end of key)" if f.cause == words.END_OF_KEY else time_text(f.watermark)


def firing_order(f: cl.Firing, *, rolled_back: bool = False) -> str:
    """First firing or re-firing (``vocabulary.firing_order``); "first firing in this trace" when
    the run started from an earlier run's checkpoint (whose firings the trace does not hold)."""
    snapshot = f.started_from is not None
    return words.firing_order(f.earlier_firings, rolled_back=rolled_back, in_this_trace=snapshot)


def cause_text(f: cl.Firing) -> str:
    """A firing's cause in a few words (the table's "cause" column)."""
    if f.cause == "event-time timer":
        return f"event-time timer at {f.timer}"
    if f.cause == "processing-time timer":
        return f"processing-time timer at {f.timer}"
    if f.cause in ("element", "session merge") and f.element_seq is not None:
        what = "element" if f.cause == "element" else "session merge on the element"
        return f"{what} at seq {f.element_seq} (timestamp {time_text(f.element_ts)})"
    return f.cause


FIRINGS_SPELLED = 4  # firings a sentence spells out; the table has them all


def render(claims: tuple[cl.Claim, ...]) -> str:
    """The sentence of an answer: each claim in words, in order (nothing else is said)."""
    firings = [c for c in claims if isinstance(c, cl.Firing)]
    parts = []
    if firings:
        parts.append(_render_firings(firings))
    parts += [_RENDER[type(c)](c) for c in claims if not isinstance(c, cl.Firing)]
    return " ".join(parts)


def _render_firings(firings: list[cl.Firing]) -> str:
    op_text = f"It fired {len(firings)} time(s) at {firings[0].operator!r}."
    undone = sum(f.rolled_back for f in firings)
    if undone:
        op_text = (
            f"It fired {len(firings)} time(s) at {firings[0].operator!r}; a restore rolled back "
            f"{undone} of them ({'it' if undone == 1 else 'they'} came after the checkpoint it "
            "restored, in an attempt that then failed; Flink replays from the checkpoint), so the "
            f"run keeps {len(firings) - undone}."
        )
    if firings[0].started_from is not None:
        op_text += (
            f" The run started from checkpoint {firings[0].started_from} of an earlier run "
            "(restore_from): that run's firings are not in this trace, nor counted here."
        )
    spelled = [_render_firing(f) for f in firings[:FIRINGS_SPELLED]]
    more = len(firings) - FIRINGS_SPELLED
    tail = [f"{more} more in the table."] if more > 0 else []
    return " ".join([op_text, *spelled, *tail])


def _render_firing(f: cl.Firing) -> str:
    what = firing_order(f).capitalize()
    head = f"{what} at processing time {f.proc_time}"
    if f.cause == "event-time timer":
        body = (
            f"caused by the event-time timer at {f.timer}: the watermark reached "
            f"{time_text(f.watermark)} ≥ {f.timer}"
            + (f", raised by {f.raised_by}" if f.raised_by else "")
        )
    elif f.cause == "end of input":
        body = "caused by the end of input: the watermark reached MAX"
    elif f.cause == words.END_OF_KEY:
        body = (
            f"caused by the end of key: the watermark reached {firing_watermark(f)} ≥ "
            f"{f.timer}, raised by {f.raised_by}"
        )
    elif f.cause == "processing-time timer":
        body = f"caused by the processing-time timer at {f.timer}"
    elif f.cause in ("element", "session merge") and f.element_seq is not None:
        merge = " (it merged sessions into this window)" if f.cause == "session merge" else ""
        body = (
            f"caused by the element at seq {f.element_seq} (timestamp "
            f"{time_text(f.element_ts)}){merge}: the trigger fired on it"
        )
    else:
        body = "cause not traced (no trigger record before it)"
    late = (
        f"; a late firing: the watermark {time_text(f.watermark_before)} had already passed the "
        f"max timestamp {f.max_timestamp}"
        if f.late_firing
        else ""
    )
    undone = " It was rolled back by a restore." if f.rolled_back else ""
    return f"{head}, {body}{late}.{undone}"


def _render_empty(c: cl.NoContents) -> str:
    why = (
        f"{c.skipped} element(s) came for it after it was past cleanup and were not added"
        if c.skipped
        else "no element of that key was ever assigned to it"
    )
    return f"It has no contents at {c.operator!r}: {why}."


def _channel_words(ch: cl.Channel) -> str:
    where = (
        f"channel {ch.channel} of {ch.operator!r}"
        if ch.channel is not None
        else f"a channel of {ch.operator!r} that wrote no record"
    )
    return f"{ch.input} ({where}) at {time_text(ch.watermark)}"


def _gates(c: cl.WatermarkHeld) -> dict[str, str]:
    """The input gates that ``c.gate_holders`` hold, by the input they feed (``"co/input1"``:
    input1 of 'co')."""
    return {g.rpartition("/")[2]: g for g in dict.fromkeys(ch.operator for ch in c.gate_holders)}


def _gate_words(gate: str, side: str, c: cl.WatermarkHeld) -> str:
    """What holds input ``side``'s input gate ``gate`` at MIN (it emitted nothing yet)."""
    held = ", ".join(_channel_words(ch) for ch in c.gate_holders if ch.operator == gate)
    return (
        f" {side} is the output of input gate {gate!r}, which has emitted nothing yet: its "
        f"minimum is held by {held}."
    )


def _render_held(c: cl.WatermarkHeld) -> str:
    if c.target == c.max_timestamp:
        out = (
            f"The watermark of {c.operator!r} is stuck at {time_text(c.watermark)}, below the "
            f"window's max timestamp {c.max_timestamp}: it fires once the watermark ≥ "
            f"{c.max_timestamp}."
        )
    else:
        out = (
            f"The watermark of {c.operator!r} is stuck at {time_text(c.watermark)}, below "
            f"{c.target}, the time of its trigger's next event-time timer (the window's max "
            f"timestamp is {c.max_timestamp}): the trigger is asked once the watermark ≥ "
            f"{c.target}."
        )
    if c.channels_of is None:
        return out + (
            " The operator has one input: no later event raised the generator's watermark "
            "(max timestamp seen − bound − 1) that far."
        )
    if c.idle:
        names = ", ".join(ch.input for ch in c.idle)
        verb = "is" if len(c.idle) == 1 else "are"
        out += f" {names} {verb} idle and hold{'s' if len(c.idle) == 1 else ''} nothing back."
    if c.unaligned:
        names = ", ".join(_channel_words(ch) for ch in c.unaligned)
        out += (
            f" {names} {'is' if len(c.unaligned) == 1 else 'are'} active again but not aligned: "
            f"back from idle below the operator's watermark, left out of the minimum until a "
            f"watermark of {'it' if len(c.unaligned) == 1 else 'each'} reaches "
            f"{time_text(c.watermark)} (Flink's StatusWatermarkValve), so "
            f"{'it holds' if len(c.unaligned) == 1 else 'they hold'} nothing back."
        )
    if len(c.holders) > 1:
        held = ", ".join(_channel_words(ch) for ch in c.holders)
        return out + (
            f" No single input holds it: {held} are all active and below {c.target}; "
            "it fires once each of them reaches it or goes idle."
            + "".join(_gate_words(gate, side, c) for side, gate in _gates(c).items())
        )
    if not c.holders and c.unaligned:
        return out + (
            " No aligned input is below it now: the watermark stays where it is until an "
            "aligned input's watermark advances (an input is aligned again once its watermark "
            f"reaches {time_text(c.watermark)})."
        )
    if not c.holders:
        return out + (
            " No active input is below it now: every input is idle, and the watermark stays "
            "where it is until an input is active again and advances."
        )
    h = c.holders[0]
    if h.last_advanced is not None:
        advanced = f"last advanced at processing time {h.last_advanced}"
    elif h.restored_at is not None:
        advanced = (
            f"not advanced since the restore at processing time {h.restored_at} (watermarks "
            "are not checkpointed: every channel starts again at MIN)"
        )
    else:
        advanced = "never advanced (the trace has no watermark of it)"
    out += f" The minimum is held by {_channel_words(h)}, {advanced}; it is not idle"
    if not c.idleness_would_help:
        return out + (
            f": the window fires only after its watermark reaches {c.target} or it goes idle."
        )
    others = time_text(c.others)
    if c.idleness_seen:
        return out + (
            f", so it holds everyone back; once the job's idleness timeout marks it idle, the "
            f"other inputs raise the watermark to {others}."
        )
    side = " on its side" if h.input in COMBINED_INPUTS else ""  # (of a two-input operator)
    return out + (
        ", so it holds everyone back: once it is marked idle the other inputs advance the "
        f"watermark to {others}. with_idleness(t) marks an input idle after t ms without "
        f"records (the trace records no idleness timeout for it and shows no idle input{side}; "
        "its later records may then be late)."
    )


def _arrival_words(c: cl.ElementFate | cl.JoinFate) -> str:
    """Where and when an element arrived: its operator, timestamp and the watermark then."""
    return (
        f"at {c.operator!r} (timestamp {time_text(c.ts)}, "
        f"watermark {time_text(c.watermark)} at arrival)"
    )


def _render_fate(c: cl.ElementFate) -> str:
    at = _arrival_words(c)
    if c.fate == words.DROPPED:
        return (
            f"Dropped {at}: it is late (timestamp ≤ watermark) and every window it belongs to "
            "is past cleanup (max timestamp + allowed lateness ≤ watermark); counted in "
            "num_late_records_dropped."
        )
    if c.fate == words.SIDE_OUTPUT:
        return (
            f"Sent to the side output {c.side_output!r} {at}: late, and every window it "
            "belongs to is past cleanup."
        )
    if c.fate == words.ON_TIME:
        head = f"On time {at}: its timestamp > the watermark; it was added to its windows."
    else:
        head = (
            f"Late but accepted {at}: its timestamp ≤ the watermark, but a window it belongs "
            "to is not past cleanup (max timestamp + allowed lateness > watermark), so it was "
            "added."
        )
    return " ".join([head, *(_render_outcome(c, o) for o in c.windows if o.added)]).strip()


def _render_join_fate(c: cl.JoinFate) -> str:
    at = _arrival_words(c)
    if c.fate == words.BUFFERED:
        return (
            f"Buffered {at}: not below the watermark (Flink's isLate is timestamp < watermark), "
            f"so it was joined with {c.pairs} buffered element(s) of the other input on arrival "
            f"and stays buffered for later ones until its cleanup timer at {time_text(c.cleanup)} "
            "fires."
        )
    where = "dropped" if c.fate == words.DROPPED else f"sent to the side output {c.side_output!r}"
    return (
        f"Late {at}: an interval join takes no element whose timestamp is below its "
        "watermark (Flink's IntervalJoinOperator.isLate: timestamp < watermark), so it was "
        f"joined with nothing and {where}."
    )


def _render_outcome(c: cl.ElementFate, o: cl.WindowOutcome) -> str:
    f = o.next_firing
    if c.fate == words.ON_TIME and not o.fired_now:
        return ""
    if f is None:
        return f"Window {o.window} did not fire after it (by the end of the trace)."
    late = (
        f", a late firing: the watermark had passed its max timestamp {o.max_timestamp}"
        if f.late_firing
        else ""
    )
    order = firing_order(f)
    if o.fired_now:
        traced = " in this trace" if f.started_from is not None else ""
        before = f"had fired {o.earlier_firings} time(s){traced} and " if o.earlier_firings else ""
        return f"Window {o.window} {before}fired at once on it ({order}{late})."
    return (
        f"Window {o.window} fired next at processing time {f.proc_time} ({order}{late}), "
        f"caused by {cause_text(f)}."
    )


_RENDER: dict[type, Any] = {
    cl.NeverFired: lambda c: (
        f"It never fired at {c.operator!r}; ask why_not_fired(trace, {c.key!r}, {list(c.window)})."
    ),
    cl.DidFire: lambda c: f"It did fire, {c.firings} time(s), at {c.operator!r}: ask why_fired.",
    cl.NoContents: _render_empty,
    cl.TriggerDecides: lambda c: (
        f"The watermark ({time_text(c.watermark)}) is past its max timestamp {c.max_timestamp}, "
        f"but the trigger never returned FIRE (its calls: {list(c.calls)}); the trigger "
        "decides, not the watermark, for GlobalWindows or a custom trigger."
    ),
    cl.NoEventTimer: lambda c: (
        f"Its trigger registered no event-time timer at its max timestamp {c.max_timestamp} "
        f"(the watermark of {c.operator!r} is {time_text(c.watermark)}): the watermark alone "
        f"will not fire it; the trigger decides (its calls so far: {list(c.calls)})."
    ),
    cl.TimerDue: lambda c: (
        f"Its trigger's event-time timer at {c.timer} is at or below the watermark of "
        f"{c.operator!r} ({time_text(c.watermark)}): it fires on the operator's next watermark "
        "advance."
    ),
    cl.WatermarkHeld: _render_held,
    cl.ElementFate: _render_fate,
    cl.JoinFate: _render_join_fate,
    cl.PausedForAlignment: lambda c: paused_note(c.spans),
    cl.Replayed: lambda c: (
        f"Source record {c.index} arrived {c.arrivals} times: a restore replayed it, with the "
        "watermarks starting again at MIN. "
        + (
            f"Its last arrival, whose fate the results keep ({c.arrivals} of {c.arrivals}):"
            if c.shown == c.arrivals
            else f"Arrival {c.shown} of {c.arrivals}, rolled back by a restore:"
        )
    ),
    cl.NotKeyed: lambda c: "It never reached a keyed operator.",
}
