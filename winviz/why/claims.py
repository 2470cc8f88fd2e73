"""The claims of a why-answer: what an answer says, as data (a firing and its cause, a window
that never fired, a watermark held back by an input, an element's fate …), each a frozen
dataclass whose fields are read off the trace; ``winviz.why.render`` words them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from winviz.trace.paused import PausedSpan


@dataclass(frozen=True)
class Firing:
    """One ``fired`` record of the window: its cause (``vocabulary.FIRED_BY``, or
    ``vocabulary.END_OF_KEY`` in BATCH mode: then ``raised_by`` names the key), the timer
    (event-time or processing-time timestamp) or the element (its seq and timestamp) behind
    it, the input whose watermark change raised the watermark ("" when the trace does not
    say), how many firings of the window came before it, the operator's watermark before its
    cause and whether that makes it a late firing."""

    operator: str
    seq: int
    proc_time: int
    watermark: int
    max_timestamp: int
    cause: str
    timer: int | None
    element_seq: int | None
    element_ts: int | None
    raised_by: str
    earlier_firings: int
    watermark_before: int
    late_firing: bool


@dataclass(frozen=True)
class NeverFired:
    """The window has no ``fired`` record at the operator."""

    operator: str
    key: Any
    window: tuple[int, int]


@dataclass(frozen=True)
class DidFire:
    """Asked why it has not fired, of a window that did."""

    operator: str
    firings: int


@dataclass(frozen=True)
class NoContents:
    """No element was added to the window; ``skipped`` came after it was past cleanup."""

    operator: str
    skipped: int


@dataclass(frozen=True)
class TriggerDecides:
    """The watermark passed the max timestamp, but the trigger never returned FIRE."""

    operator: str
    watermark: int
    max_timestamp: int
    calls: tuple[Any, ...]


@dataclass(frozen=True)
class NoEventTimer(TriggerDecides):
    """The watermark is below the max timestamp, but the trigger registered no event-time
    timer at the max timestamp for the window (a CountTrigger, a custom trigger): the
    watermark reaching it would not fire the window; the trigger decides."""


@dataclass(frozen=True)
class TimerDue:
    """The trigger's next event-time timer ``timer`` is already at or below the operator's
    watermark (registered after the watermark passed it): Flink fires it on the next
    watermark advance (``InternalTimerServiceImpl.advanceWatermark``)."""

    operator: str
    watermark: int
    timer: int


@dataclass(frozen=True)
class Channel:
    """One input channel or partition of an operator as it stood: its watermark (MIN before
    its first), whether it is idle, and when its watermark last advanced (None: never)."""

    operator: str
    channel: int | None
    input: str
    watermark: int
    idle: bool
    last_advanced: int | None
    idle_seen: bool = False  # the trace shows it idle at some time so far


@dataclass(frozen=True)
class WatermarkHeld:
    """The operator's watermark is below ``target``, the window trigger's next event-time
    timer (its max timestamp with ``EventTimeTrigger``; an earlier one with a continuous
    trigger), and everything below is judged against it. ``channels_of``: the
    operator whose input channels were judged (None: a single input, no channels).
    ``holders``: the active channels below the max timestamp (one: it holds the watermark;
    several: no single input does); ``idle``: idle channels (they hold nothing back);
    ``others``: the lowest watermark of the other active channels (None: there is none);
    ``idleness_seen``: the job uses ``with_idleness`` there — the trace records its strategy's
    idleness timeout (an ``idleness`` record of that operator or of one of its inputs), or
    shows a channel of that operator going idle; ``idleness_would_help``: marking the one
    holder idle would let the other active channels raise the watermark to at least the max
    timestamp."""

    operator: str
    watermark: int
    max_timestamp: int
    target: int
    channels_of: str | None
    holders: tuple[Channel, ...]
    idle: tuple[Channel, ...]
    others: int | None
    idleness_seen: bool
    idleness_would_help: bool


@dataclass(frozen=True)
class WindowOutcome:
    """What one window of an element did with it: ``added`` (else past cleanup), the firings
    of the window before the element, and the window's next firing after it: ``next_firing``
    (that firing, None when the window did not fire again in the trace); ``fired_now``: that
    firing was caused by the element (its trigger's ``onElement`` / ``onMerge``)."""

    window: str
    max_timestamp: int
    cleanup: int | None
    added: bool
    earlier_firings: int
    next_firing: Firing | None
    fired_now: bool


@dataclass(frozen=True)
class ElementFate:
    """A source record at a window operator: its fate (``vocabulary.ELEMENT_FATES``) and what
    each of its windows did with it. ``side_output``: the tag, for that fate."""

    index: int
    operator: str
    ts: int | None
    watermark: int | None
    fate: str
    windows: tuple[WindowOutcome, ...]
    side_output: str | None = None


@dataclass(frozen=True)
class JoinFate:
    """A source record at an interval join (Flink's ``IntervalJoinOperator``, no windows): its
    fate — ``vocabulary.DROPPED`` or ``vocabulary.SIDE_OUTPUT`` (late: ``isLate``, timestamp
    < watermark; joined with nothing) or ``vocabulary.BUFFERED`` (joined with ``pairs``
    buffered elements of the other input on arrival, kept until its cleanup timer at
    ``cleanup``). ``side_output``: the tag, for that fate."""

    index: int
    operator: str
    ts: int | None
    watermark: int | None
    fate: str
    side_output: str | None = None
    pairs: int = 0
    cleanup: int | None = None


@dataclass(frozen=True)
class PausedForAlignment:
    """Sources or partitions still paused for watermark alignment when the trace ends
    (``winviz.trace.paused.still_paused``): none of their records are read until they resume,
    so a window waiting for their records or their watermark waits for that."""

    spans: tuple[PausedSpan, ...]


@dataclass(frozen=True)
class Replayed:
    """The source record arrived ``arrivals`` times: a restore replayed it from a checkpoint
    (``winviz.checkpoints``: the source re-reads from its saved position, every watermark
    starts again at MIN). The answer is about arrival ``shown`` (1-based); the last arrival's
    fate is the one the results keep (what came before the restore was rolled back)."""

    index: int
    arrivals: int
    shown: int


@dataclass(frozen=True)
class NotKeyed:
    """The record never reached a keyed window operator."""

    index: int


Claim = (
    Firing
    | NeverFired
    | DidFire
    | NoContents
    | TriggerDecides
    | NoEventTimer
    | TimerDue
    | WatermarkHeld
    | ElementFate
    | JoinFate
    | PausedForAlignment
    | Replayed
    | NotKeyed
)
