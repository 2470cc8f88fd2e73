"""The claims of a why-answer, as data read off the trace (frozen dataclasses); ``render`` words
them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from winviz.trace.channels import Channel
from winviz.trace.paused import PausedSpan


@dataclass(frozen=True)
class Firing:
    """One ``fired`` record: its cause (``vocabulary.FIRED_BY``; ``END_OF_KEY`` in BATCH mode), the
    timer or element behind it, the input that raised the watermark ("" when the trace does not
    say), the firings before it that the run keeps, the watermark before its cause (which makes it
    late or not), whether a later restore rolled it back (it came after the checkpoint the job
    restarted from: Flink replays from there), and the checkpoint of an earlier run the traced
    run started from (None: none; the firings before it are not in the trace)."""

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
    rolled_back: bool = False
    started_from: int | None = None  # the earlier run's checkpoint (its firings: not counted)


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
    """The watermark is below the max timestamp, but the trigger registered no event-time timer
    there (a CountTrigger, a custom trigger): the trigger decides."""


@dataclass(frozen=True)
class TimerDue:
    """The trigger's next event-time timer is already at or below the watermark: Flink fires it on
    the next watermark advance (``InternalTimerServiceImpl.advanceWatermark``)."""

    operator: str
    watermark: int
    timer: int


@dataclass(frozen=True)
class WatermarkHeld:
    """The operator's watermark is below ``target``, the trigger's next event-time timer.
    ``channels_of``: whose input channels were judged (None: a single input); ``holders``: the
    active aligned channels below the target; ``idle``: idle channels; ``others``: the lowest
    watermark of the other active aligned channels; ``idleness_seen``: the trace shows
    ``with_idleness`` there; ``idleness_would_help``: marking the one holder idle would raise the
    watermark to the target; ``unaligned``: active channels the minimum leaves out (back from idle
    below the operator's watermark: ``winviz.trace.channels``, Flink's ``StatusWatermarkValve``);
    ``gate_holders``: before a two-input operator's first input record, the channels of its
    input gates that hold them at MIN (active, at MIN)."""

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
    unaligned: tuple[Channel, ...] = ()
    gate_holders: tuple[Channel, ...] = ()


@dataclass(frozen=True)
class WindowOutcome:
    """What one window of an element did with it: ``added`` (else past cleanup), the firings before
    it, ``next_firing`` (None: none in the trace); ``fired_now``: the element caused it."""

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
    """A source record at an interval join (Flink's ``IntervalJoinOperator``): late (``DROPPED`` /
    ``SIDE_OUTPUT``, timestamp < watermark) or ``BUFFERED``, joined with ``pairs`` elements on
    arrival and kept until its cleanup timer at ``cleanup``."""

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
    """Sources or partitions still paused for watermark alignment when the trace ends."""

    spans: tuple[PausedSpan, ...]


@dataclass(frozen=True)
class Replayed:
    """The source record arrived ``arrivals`` times (a restore replayed it, every watermark again
    from MIN); the answer is about arrival ``shown`` (1-based), the last being the kept one."""

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
