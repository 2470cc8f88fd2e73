"""Questions a learner asks, answered from the trace alone.

* ``why_fired(trace, key, window)`` — each firing of a window: what caused it (an element, an
  event-time timer at t, a processing-time timer, the end of input, a session merge), whether
  it is the window's first firing or a re-firing, whether it is a late firing, and the input
  channel or partition whose watermark advance raised the watermark.
* ``why_not_fired(trace, key, window)`` — why a window has not fired (``trace.until(t)``
  asks it of the run as it stood at processing time t): no element reached it, or the
  operator's watermark is below the window's max timestamp because one *active* input channel
  or partition holds the minimum (an idle one holds nothing back), several do (no single
  cause), or the trigger never said FIRE.
* ``why_dropped(trace, index)`` — what happened to the source record at ``index``: on time, late
  but accepted, dropped, or sent to the side output, window by window, and which firing it
  caused at once; at an interval join, late (dropped or side output) or buffered and joined.
  A record a restore replayed arrived more than once: the answer is about its last arrival
  (the fate the results keep), ``arrival=k`` asks about another, and it says so.

The words are ``winviz.trace.vocabulary``'s (Flink's). Each answer is a list of typed claims
(``Firing``, ``WatermarkHeld``, ``ElementFate`` …: what the trace shows, as data) and a
short table; the sentence is rendered from the claims only (``render``), so a test can check
each claim against the engine (tests/test_why_truth.py re-runs jobs with the named cause
removed). They read the trace's records only (``winviz.trace.schema`` states the order rules
they rely on). Times are printed by name: MIN, MAX (end of input).

In BATCH mode (``winviz.batch_execution``) a key's watermark jumps to MAX once its records are
done: a firing it causes is caused by the *end of key*. A source paused for watermark
alignment (``winviz.trace.paused``) is named where it holds a window back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.batch_execution import END_OF_KEY
from winviz.time import MAX, MIN
from winviz.trace import Trace
from winviz.trace import vocabulary as words
from winviz.trace.causes import firing_causes
from winviz.trace.channels import CHANNEL_KINDS, unrecorded_channel
from winviz.trace.paused import PausedSpan, paused_note, still_paused

if TYPE_CHECKING:
    import pandas as pd


# -- claims: what an answer says, as data ----------------------------------------------------


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
class NoEventTimer:
    """The watermark is below the max timestamp, but the trigger registered no event-time
    timer at the max timestamp for the window (a CountTrigger, a custom trigger): the
    watermark reaching it would not fire the window; the trigger decides."""

    operator: str
    watermark: int
    max_timestamp: int
    calls: tuple[Any, ...]


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
"""What an answer can claim (each a dataclass of what the trace shows)."""


@dataclass(frozen=True)
class Answer:
    """A question's answer: its ``claims`` (typed, what the trace shows), the ``sentence``
    rendered from them only, and a ``table``. Shown as plain text."""

    question: str
    claims: tuple[Claim, ...]
    table: pd.DataFrame

    @property
    def sentence(self) -> str:
        return render(self.claims)

    def __repr__(self) -> str:
        body = "" if self.table.empty else "\n\n" + self.table.to_string(index=False)
        return f"{self.question}\n{self.sentence}{body}"


def _frame(rows: Any = None) -> pd.DataFrame:
    import pandas as pd  # imported when a question is asked: the engine needs no pandas

    return pd.DataFrame(rows)


def _missing(value: Any) -> bool:
    """A missing cell of a table (``<NA>`` in a nullable column)."""
    import pandas as pd

    return bool(pd.isna(value))


def _time(t: int | None) -> str:
    """A time as printed: MIN and MAX by name, never ±9223372036854775808."""
    if t is None:
        return "none"
    if t == MAX:
        return "MAX (end of input)"
    if t == MIN:
        return "MIN"
    return str(t)


def _window_of(window: Any) -> tuple[int, int]:
    bounds = (
        (window.start, window.end)
        if hasattr(window, "start") and window.start is not None
        else window
    )
    if (
        isinstance(bounds, (tuple, list))
        and len(bounds) == 2
        and all(b.__class__ is int for b in bounds)
    ):
        return bounds[0], bounds[1]
    raise TypeError(f"window {window!r}: expected a TimeWindow or a (start, end) pair of ints")


def _trace_of(source: Any) -> Trace:
    """The trace of a ``Trace`` or of a result with ``.trace``; a clear error for anything
    else."""
    trace = source if isinstance(source, Trace) else getattr(source, "trace", None)
    if not isinstance(trace, Trace):
        raise TypeError(
            f"expected a winviz Trace or a job result with .trace, got {type(source).__name__}"
            + (" (the job ran with trace=False)" if hasattr(source, "trace") else "")
        )
    return trace


def _window_rows(
    trace: Trace, key: Any, window: Any, operator: str | None, *kinds: str
) -> np.ndarray:
    return trace.rows_where(kind=kinds or None, operator=operator, key=key, window=window)


def _operator_of(trace: Trace, key: Any, window: tuple[int, int], operator: str | None) -> str:
    if operator is not None:
        return operator
    rows = _window_rows(trace, key, window, None, "assigned", "fired", "skipped_late_window")
    if len(rows):
        return trace.records_at(rows[:1])[0].operator
    ops = trace.operators("assigned", "fired", "late_dropped", "skipped_late_window")
    if not ops:
        raise ValueError("the trace has no window operator (no assigned / fired records)")
    return ops[0]


def _before(rows: np.ndarray, row: int) -> int:
    """The last of the sorted ``rows`` before ``row`` (-1: none)."""
    k = int(np.searchsorted(rows, row)) - 1
    return int(rows[k]) if k >= 0 else -1


# -- why did it fire ----------------------------------------------------------------------------


def why_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Each firing of ``window`` for ``key``: its cause, first firing or re-firing, late
    firing or not, and the watermark advance behind it."""
    trace = _trace_of(trace)
    bounds = _window_of(window)
    question = f"Why did window [{bounds[0]}, {bounds[1]}) of key {key!r} fire when it did?"
    op = _operator_of(trace, key, bounds, operator)
    fired = _window_rows(trace, key, bounds, op, "fired")
    if not len(fired):
        return Answer(question, (NeverFired(op, key, bounds),), _frame())
    claims = _firings(trace, op, bounds[1] - 1, fired)
    rows = [
        {
            "seq": f.seq,
            "proc_time": f.proc_time,
            "watermark": _firing_watermark(f),
            "cause": _cause_text(f),
            "raised by": f.raised_by,
            "firing": words.firing_order(f.earlier_firings),
            "late firing": f.late_firing,
        }
        for f in claims
    ]
    return Answer(question, tuple(claims), _frame(rows))


def _firings(
    trace: Trace, op: str, max_ts: int, fired: np.ndarray, *, earlier: int = 0
) -> list[Firing]:
    """The ``Firing`` claims of one window's ``fired`` rows (in seq order; ``earlier``
    firings of it came before the first)."""
    c = trace.columns()
    calls, timer_rows = firing_causes(c, fired)
    marks = trace.rows_where(kind="watermark", operator=op)
    elements = trace.rows_where(kind="element", operator=op)
    raisers = trace.rows_where(kind=_RAISERS)
    timed = timer_rows[timer_rows >= 0]
    timers = dict(zip(timed.tolist(), trace.records_at(timed), strict=True))
    out = []
    for i, (record, call, t) in enumerate(
        zip(trace.records_at(fired), calls.tolist(), timer_rows.tolist(), strict=True)
    ):
        timer = timers.get(t)
        wm = MIN if record.watermark is None else record.watermark
        before, raised_by, timer_ts = wm, "", None
        element_seq = element_ts = None
        if call == "on_event_time" and timer is not None:
            cause = "end of input" if wm == MAX else "event-time timer"
            timer_ts = timer.ts
            mark = _before(marks, record.seq)  # the advance that fired the timer
            if mark >= 0 and trace.records_at([mark])[0].detail == END_OF_KEY:  # BATCH mode
                cause, before = words.END_OF_KEY, MIN
                raised_by = (
                    f"the end of key {timer.key!r}: in BATCH mode a key's watermark jumps "
                    "to MAX once its records are done (winviz.batch_execution)"
                )  # the key's watermark was MIN until then: each key starts anew
            elif mark >= 0:
                raised_by = _raised_by(trace, mark, raisers)
                prior = _before(marks, mark)
                before = MIN if prior < 0 else int(c.ts.get(prior))
        elif call == "on_processing_time" and timer is not None:
            cause, timer_ts = "processing-time timer", timer.ts
        elif call in ("on_element", "on_merge"):
            cause = "element" if call == "on_element" else "session merge"
            e = _before(elements, record.seq)
            if e >= 0:
                element = trace.records_at([e])[0]
                element_seq, element_ts = element.seq, element.ts
        else:
            cause = "cause not traced"
        out.append(
            Firing(
                operator=op,
                seq=record.seq,
                proc_time=record.proc_time,
                watermark=wm,
                max_timestamp=max_ts,
                cause=cause,
                timer=timer_ts,
                element_seq=element_seq,
                element_ts=element_ts,
                raised_by=raised_by,
                earlier_firings=earlier + i,
                watermark_before=before,
                late_firing=words.is_late_firing(before, max_ts),
            )
        )
    return out


def _firing_watermark(f: Firing) -> str:
    """The watermark a firing saw, as printed (MAX by the end of a key in BATCH mode)."""
    return "MAX (end of key)" if f.cause == words.END_OF_KEY else _time(f.watermark)


def _cause_text(f: Firing) -> str:
    """A firing's cause in a few words (the table's "cause" column)."""
    if f.cause == "event-time timer":
        return f"event-time timer at {f.timer}"
    if f.cause == "processing-time timer":
        return f"processing-time timer at {f.timer}"
    if f.cause in ("element", "session merge") and f.element_seq is not None:
        what = "element" if f.cause == "element" else "session merge on the element"
        return f"{what} at seq {f.element_seq} (timestamp {_time(f.element_ts)})"
    return f.cause


_RAISERS = ("channel_watermark", "channel_idle", "channel_active", "watermark_generated")


def _raised_by(trace: Trace, mark_row: int, raisers: np.ndarray | None = None) -> str:
    """Which input raised the watermark record at ``mark_row``: the latest channel or
    partition watermark before it at the same processing time, else the generator
    (``raisers``: the rows of those kinds, when known)."""
    c = trace.columns()
    proc = c.proc_time.get(mark_row)
    if c.ts.get(mark_row) == MAX:
        return "the end of input (every source emits the MAX watermark when it finishes)"
    channels = trace.rows_where(kind=_RAISERS) if raisers is None else raisers
    channels = channels[channels < mark_row]
    if not len(channels):
        return ""
    r, *before = trace.records_at(channels[-1:-3:-1])
    if r.proc_time != proc:
        return ""
    if (
        r.kind == "channel_active"
        and before
        and before[0].kind == "channel_watermark"
        and (before[0].operator, before[0].detail, before[0].proc_time)
        == (r.operator, r.detail, proc)
    ):
        r = before[0]  # a record on an idle channel: it advances, then is active again
    if r.kind == "channel_watermark":
        channel, name = r.detail
        return f"{name} (channel {channel} of {r.operator!r}) advancing to {_time(r.ts)}"
    if r.kind == "channel_idle":
        channel, name = r.detail
        return (
            f"{name} (channel {channel} of {r.operator!r}) going idle: the minimum then ignores it"
        )
    if r.kind == "channel_active":
        channel, name = r.detail
        return f"{name} (channel {channel} of {r.operator!r}) becoming active again"
    return f"the watermark generator of {r.operator!r} emitting {_time(r.ts)}"


# -- why has it not fired -----------------------------------------------------------------------


def why_not_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Why ``window`` has not fired for ``key`` (by the end of the trace)."""
    trace = _trace_of(trace)
    bounds = _window_of(window)
    max_ts = bounds[1] - 1
    question = f"Why has window [{bounds[0]}, {bounds[1]}) of key {key!r} not fired?"
    op = _operator_of(trace, key, bounds, operator)
    fired = _window_rows(trace, key, bounds, op, "fired")
    if len(fired):
        return Answer(question, (DidFire(op, len(fired)),), _frame())
    assigned = _window_rows(trace, key, bounds, op, "assigned")
    skipped = _window_rows(trace, key, bounds, op, "skipped_late_window")
    marks = trace.records("watermark", operator=op)
    wm = marks[-1].ts if marks else MIN
    if not len(assigned):
        return Answer(question, (NoContents(op, len(skipped)), *_paused(trace)), _frame())
    if wm >= max_ts:
        calls = tuple(
            r.detail for r in trace.records("trigger", operator=op, key=key, window=bounds)
        )
        return Answer(question, (TriggerDecides(op, wm, max_ts, calls[-5:]),), _frame())
    target = _next_trigger_timer(trace, op, key, bounds)
    if target is None:
        calls = tuple(
            r.detail for r in trace.records("trigger", operator=op, key=key, window=bounds)
        )
        return Answer(question, (NoEventTimer(op, wm, max_ts, calls[-5:]),), _frame())
    if target <= wm:
        return Answer(question, (TimerDue(op, wm, target),), _frame())
    channels = _channels(trace)
    held = _held(op, wm, target, channels, max_ts, _with_idleness(trace))
    table = _frame(
        [
            {
                "operator": ch.operator,
                "channel": ch.channel,
                "input": ch.input,
                "watermark": _time(ch.watermark),
                "last_advanced": ch.last_advanced,
                "idle": ch.idle,
            }
            for ch in channels
        ]
    )
    return Answer(question, (held, *_paused(trace)), _typed(table, _CHANNEL_TYPES))


def _paused(trace: Trace) -> tuple[PausedForAlignment, ...]:
    """The claim that sources are still paused for watermark alignment (none: nothing is)."""
    spans = tuple(still_paused(trace))
    return (PausedForAlignment(spans),) if spans else ()


def _next_trigger_timer(trace: Trace, op: str, key: Any, window: tuple[int, int]) -> int | None:
    """The earliest event-time timer the window's *trigger* registered and that has neither
    fired nor been deleted (None: none). A trigger registers its timers inside its call
    (``onElement`` after the ``assigned`` record, ``onEventTime`` after ``timer_fired``), so
    before that call's ``trigger`` record; the window operator's cleanup timer (max timestamp
    + allowed lateness, ``WindowOperator.registerCleanupTimer``) is registered after it, and
    is not the trigger's."""
    pending: set[int] = set()
    since: list[int] = []  # event-time timers registered in this call, before its record
    for r in trace.records(
        "assigned", "timer_registered", "timer_fired", "timer_deleted", "trigger",
        operator=op, key=key, window=window,
    ):  # fmt: skip
        if r.kind == "trigger":
            pending.update(since)
            since = []
        elif r.kind == "assigned":  # (a new element's processing: a cleanup timer before)
            since = []
        elif r.detail[0] != "event":
            continue
        elif r.kind == "timer_registered":
            since.append(r.ts)
        else:
            pending.discard(r.ts)
            since = [] if r.kind == "timer_fired" else since
    return min(pending) if pending else None


def _with_idleness(trace: Trace) -> set[str]:
    """The timestamps-and-watermarks operators whose strategy has ``with_idleness``: the
    ``idleness`` records the run wrote when it started (none in a trace written before that
    record kind existed)."""
    return {str(r.detail[1]) for r in trace.records("idleness")}


def _held(
    op: str,
    wm: int,
    target: int,
    channels: list[Channel],
    max_ts: int,
    with_idleness: set[str] | frozenset[str] = frozenset(),
) -> WatermarkHeld:
    """Which input channels hold ``op``'s watermark ``wm`` below ``target`` (the window's
    next trigger timer; ``max_ts`` its max timestamp): those of ``op``
    itself when it has channels, else of the one operator upstream that has (Flink's
    ``StatusWatermarkValve`` / ``WatermarkOutputMultiplexer``: the minimum over the *active*
    channels; an idle channel holds nothing back). ``with_idleness``: ``_with_idleness``."""
    ops = list(dict.fromkeys(ch.operator for ch in channels))
    judged = op if op in ops else (ops[0] if len(ops) == 1 else None)
    mine = [ch for ch in channels if ch.operator == judged]
    active = [ch for ch in mine if not ch.idle]
    holders = tuple(sorted((ch for ch in active if ch.watermark < target), key=_by_watermark))
    idle = tuple(ch for ch in mine if ch.idle)
    others: int | None = None
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
        others=others,
        idleness_seen=any(ch.idle_seen for ch in mine)
        or judged in with_idleness
        or any(ch.input in with_idleness for ch in mine),
        idleness_would_help=len(holders) == 1 and others is not None and others >= target,
    )


def _by_watermark(ch: Channel) -> int:
    return ch.watermark


def _channels(trace: Trace) -> list[Channel]:
    """The last watermark and idleness of every input channel or partition in the trace: a
    channel is at MIN until its first watermark record, and a channel that wrote no record at
    all is found by ``winviz.trace.channels.unrecorded_channel``."""
    state: dict[tuple[str, int | None], dict[str, Any]] = {}
    per_operator: dict[str, list[tuple[Any, ...]]] = {}
    for r in trace.records(*CHANNEL_KINDS, "watermark"):
        if r.kind == "watermark":
            if r.operator in per_operator:
                per_operator[r.operator].append(
                    (r.seq, r.kind, r.proc_time, r.watermark, r.watermark, None, None)
                )
            continue
        channel, name = r.detail
        value = r.ts if r.kind == "channel_watermark" else None
        per_operator.setdefault(r.operator, []).append(
            (r.seq, r.kind, r.proc_time, value, r.watermark, channel, name)
        )
        entry = state.setdefault(
            (r.operator, channel),
            {"operator": r.operator, "channel": channel, "input": name, "watermark": MIN,
             "last_advanced": None, "idle": False, "idle_seen": False},
        )  # fmt: skip
        if r.kind == "channel_watermark":
            entry["watermark"], entry["last_advanced"] = r.ts, r.proc_time
        else:
            entry["idle"] = r.kind == "channel_idle"
            entry["idle_seen"] = entry["idle_seen"] or entry["idle"]
    for op, records in per_operator.items():
        sink = len(trace.rows_where(kind="sink", operator=op)) > 0
        silent = unrecorded_channel(op, records, sink=sink)
        if silent is not None:
            state[(op, None)] = {
                "operator": op, "channel": silent.channel, "input": silent.input,
                "watermark": MIN, "last_advanced": None, "idle": False, "idle_seen": False,
            }  # fmt: skip
    return [Channel(**entry) for entry in state.values()]


# the channel table's columns: a channel without records has no index nor time it advanced
# (<NA>, the numbers staying ints: a float column would show 1199.0); watermarks are printed
# by name (MIN)
_CHANNEL_TYPES = {
    "operator": object, "channel": "Int64", "input": object, "watermark": object,
    "last_advanced": "Int64", "idle": bool,
}  # fmt: skip


def _typed(frame: pd.DataFrame, types: dict[str, Any]) -> pd.DataFrame:
    """``frame`` with these column types (an empty frame as it is)."""
    return frame if frame.empty else frame.astype(types)


# -- why was it dropped -------------------------------------------------------------------------


def why_dropped(
    trace: Trace, index: int, *, source: str | None = None, arrival: int | None = None
) -> Answer:
    """What became of the source record at ``index``: on time, late but accepted, dropped or
    side output, window by window, and the firing it caused at once. A record a restore
    replayed arrived more than once (its watermarks differ: they start again at MIN after a
    restore): ``arrival`` picks one (0 the first; by default the last, whose fate the results
    keep), and the answer says how many there were."""
    trace = _trace_of(trace)
    if index.__class__ is not int:
        raise TypeError(f"index {index!r}: expected the int index of a source record")
    arrivals = [
        r
        for r in trace.records("arrival", operator=source)
        if isinstance(r.detail, tuple) and r.detail[1] == index
    ]
    question = f"What happened to source record {index}?"
    if not arrivals:
        raise ValueError(f"no arrival record with index {index} in the trace")
    # the same source's arrivals of the record: more than one only when a restore replayed it
    arrivals = [r for r in arrivals if r.operator == arrivals[0].operator]
    if arrival is None:
        arrival = len(arrivals) - 1
    elif arrival.__class__ is not int or not 0 <= arrival < len(arrivals):
        raise ValueError(
            f"arrival {arrival!r}: source record {index} arrived {len(arrivals)} time(s); "
            f"expected an int from 0 to {len(arrivals) - 1}"
        )
    replayed = (Replayed(index, len(arrivals), arrival + 1),) if len(arrivals) > 1 else ()
    answer = _fate_of(trace, index, arrivals[arrival], question)
    return Answer(question, replayed + answer.claims, answer.table)


def _fate_of(trace: Trace, index: int, arrival: Any, question: str) -> Answer:
    """``why_dropped`` for one arrival record of the source record at ``index``."""
    value = arrival.detail[0]
    elements = trace.rows_where(kind="element")
    elements = elements[elements > arrival.seq]
    element = next(
        (r for r in trace.records_at(elements[:64]) if _carries(r.detail, value)),
        None,
    )
    if element is None:
        return Answer(question, (NotKeyed(index),), _frame())
    op = element.operator
    group = trace.rows_where(
        kind=(
            "element",
            "assigned",
            "skipped_late_window",
            "late_dropped",
            "side_output",
            "fired",
            "buffered",
        ),
        operator=op,
    )
    # the element's own processing: up to its operator's next element, watermark or timer
    # firing (a firing's ProcessWindowFunction may write side outputs too: one written
    # before a fired record of this processing is not the element's late-data side output,
    # as frames.late_side_outputs rules)
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
        return Answer(question, (_join_fate(trace, index, element, own, end),), _frame())
    lateness = _allowed_lateness(trace, op)
    outcomes = []
    for r in own:
        if r.kind not in ("assigned", "skipped_late_window"):
            continue
        w = r.window
        w_max = w.max_timestamp() if hasattr(w, "max_timestamp") else MAX
        cleanup = w_max + lateness if lateness is not None and w_max != MAX else None
        fired = _window_rows(trace, element.key, w, op, "fired")
        earlier = int((fired < element.seq).sum())
        later = fired[fired > element.seq]
        nxt_firing = (
            _firings(trace, op, w_max, later[:1], earlier=earlier)[0]
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
    tag = None
    if "late_dropped" in kinds:
        fate = words.DROPPED
    elif "side_output" in kinds:
        fate = words.SIDE_OUTPUT
        tag = next(r.detail[0] for r in own if r.kind == "side_output")
    elif words.is_late(ts, wm):
        fate = words.LATE_ACCEPTED
    else:
        fate = words.ON_TIME
    claim = ElementFate(index, op, ts, wm, fate, tuple(outcomes), tag)
    table = _frame(
        [
            {
                "window": o.window,
                "max timestamp": _time(o.max_timestamp),
                "cleanup time": _time(o.cleanup),
                "watermark": _time(wm),
                "outcome": _outcome_text(o),
            }
            for o in outcomes
        ]
    )
    return Answer(question, (claim,), table)


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
    """What an interval join did with an element (Flink's ``IntervalJoinOperator``): below
    the watermark it is late (``isLate``: timestamp < watermark), not joined and dropped or sent
    to the side output; else buffered, joined with the other input's buffered elements within
    the bounds, and removed by its cleanup timer (``own``: the records of its processing,
    which ends before row ``end``)."""
    op = element.operator
    kinds = {r.kind for r in own}
    fate = (
        words.DROPPED
        if "late_dropped" in kinds
        else words.SIDE_OUTPUT
        if "side_output" in kinds
        else words.BUFFERED
    )
    if fate != words.BUFFERED:
        tag = next((r.detail[0] for r in own if r.kind == "side_output"), None)
        return JoinFate(index, op, element.ts, element.watermark, fate, side_output=tag)
    later = [
        r
        for r in trace.records("joined", "timer_registered", operator=op)
        if element.seq < r.seq < end
    ]
    pairs = sum(r.kind == "joined" for r in later)
    cleanup = next((r.ts for r in later if r.kind == "timer_registered"), None)
    return JoinFate(index, op, element.ts, element.watermark, fate, pairs=pairs, cleanup=cleanup)


def _outcome_text(o: WindowOutcome) -> str:
    if not o.added:
        return "not added: past cleanup"
    f = o.next_firing
    if f is None:
        return "added; no firing after it"
    what = words.firing_words(f.earlier_firings, f.late_firing)
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


# -- the sentence, rendered from the claims only -------------------------------------------------

FIRINGS_SPELLED = 4  # firings a sentence spells out; the table has them all


def render(claims: tuple[Claim, ...]) -> str:
    """The sentence of an answer: each claim in words, in order (nothing else is said)."""
    firings = [c for c in claims if isinstance(c, Firing)]
    parts = []
    if firings:
        parts.append(_render_firings(firings))
    parts += [_RENDER[type(c)](c) for c in claims if not isinstance(c, Firing)]
    return " ".join(parts)


def _render_firings(firings: list[Firing]) -> str:
    op_text = f"It fired {len(firings)} time(s) at {firings[0].operator!r}."
    spelled = [_render_firing(f) for f in firings[:FIRINGS_SPELLED]]
    more = len(firings) - FIRINGS_SPELLED
    tail = [f"{more} more in the table."] if more > 0 else []
    return " ".join([op_text, *spelled, *tail])


def _render_firing(f: Firing) -> str:
    what = words.firing_order(f.earlier_firings).capitalize()
    head = f"{what} at processing time {f.proc_time}"
    if f.cause == "event-time timer":
        body = (
            f"caused by the event-time timer at {f.timer}: the watermark reached "
            f"{_time(f.watermark)} ≥ {f.timer}"
            + (f", raised by {f.raised_by}" if f.raised_by else "")
        )
    elif f.cause == "end of input":
        body = "caused by the end of input: the watermark reached MAX"
    elif f.cause == words.END_OF_KEY:
        body = (
            f"caused by the end of key: the watermark reached {_firing_watermark(f)} ≥ "
            f"{f.timer}, raised by {f.raised_by}"
        )
    elif f.cause == "processing-time timer":
        body = f"caused by the processing-time timer at {f.timer}"
    elif f.cause in ("element", "session merge") and f.element_seq is not None:
        merge = " (it merged sessions into this window)" if f.cause == "session merge" else ""
        body = (
            f"caused by the element at seq {f.element_seq} (timestamp "
            f"{_time(f.element_ts)}){merge}: the trigger fired on it"
        )
    else:
        body = "cause not traced (no trigger record before it)"
    late = (
        f"; a late firing: the watermark {_time(f.watermark_before)} had already passed the "
        f"max timestamp {f.max_timestamp}"
        if f.late_firing
        else ""
    )
    return f"{head}, {body}{late}."


def _render_never(c: NeverFired) -> str:
    return (
        f"It never fired at {c.operator!r}; ask why_not_fired(trace, {c.key!r}, {list(c.window)})."
    )


def _render_did(c: DidFire) -> str:
    return f"It did fire, {c.firings} time(s), at {c.operator!r}: ask why_fired."


def _render_empty(c: NoContents) -> str:
    why = (
        f"{c.skipped} element(s) came for it after it was past cleanup and were not added"
        if c.skipped
        else "no element of that key was ever assigned to it"
    )
    return f"It has no contents at {c.operator!r}: {why}."


def _render_trigger(c: TriggerDecides) -> str:
    return (
        f"The watermark ({_time(c.watermark)}) is past its max timestamp {c.max_timestamp}, "
        f"but the trigger never returned FIRE (its calls: {list(c.calls)}); the trigger "
        "decides, not the watermark, for GlobalWindows or a custom trigger."
    )


def _render_no_timer(c: NoEventTimer) -> str:
    return (
        f"Its trigger registered no event-time timer at its max timestamp {c.max_timestamp} "
        f"(the watermark of {c.operator!r} is {_time(c.watermark)}): the watermark alone "
        f"will not fire it; the trigger decides (its calls so far: {list(c.calls)})."
    )


def _channel_words(ch: Channel) -> str:
    where = (
        f"channel {ch.channel} of {ch.operator!r}"
        if ch.channel is not None
        else f"a channel of {ch.operator!r} that wrote no record"
    )
    return f"{ch.input} ({where}) at {_time(ch.watermark)}"


def _render_held(c: WatermarkHeld) -> str:
    if c.target == c.max_timestamp:
        out = (
            f"The watermark of {c.operator!r} is stuck at {_time(c.watermark)}, below the "
            f"window's max timestamp {c.max_timestamp}: it fires once the watermark ≥ "
            f"{c.max_timestamp}."
        )
    else:
        out = (
            f"The watermark of {c.operator!r} is stuck at {_time(c.watermark)}, below "
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
    if len(c.holders) > 1:
        held = ", ".join(_channel_words(ch) for ch in c.holders)
        return out + (
            f" No single input holds it: {held} are all active and below {c.target}; "
            "it fires once each of them reaches it or goes idle."
        )
    if not c.holders:
        return out + (
            " No active input is below it now: every input is idle, and the watermark stays "
            "where it is until an input is active again and advances."
        )
    h = c.holders[0]
    advanced = (
        f"last advanced at processing time {h.last_advanced}"
        if h.last_advanced is not None
        else "never advanced (the trace has no watermark of it)"
    )
    out += f" The minimum is held by {_channel_words(h)}, {advanced}; it is not idle"
    if not c.idleness_would_help:
        return out + (
            f": the window fires only after its watermark reaches {c.target} or it goes idle."
        )
    others = _time(c.others)
    if c.idleness_seen:
        return out + (
            f", so it holds everyone back; once the job's idleness timeout marks it idle, the "
            f"other inputs raise the watermark to {others}."
        )
    return out + (
        ", so it holds everyone back: once it is marked idle the other inputs advance the "
        f"watermark to {others}. with_idleness(t) marks an input idle after t ms without "
        "records (the trace records no idleness timeout for it and shows no idle input; its "
        "later records may then be late)."
    )


def _render_fate(c: ElementFate) -> str:
    at = f"at {c.operator!r} (timestamp {_time(c.ts)}, watermark {_time(c.watermark)} at arrival)"
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


def _render_join_fate(c: JoinFate) -> str:
    at = f"at {c.operator!r} (timestamp {_time(c.ts)}, watermark {_time(c.watermark)} at arrival)"
    if c.fate == words.BUFFERED:
        return (
            f"Buffered {at}: not below the watermark (Flink's isLate is timestamp < watermark), "
            f"so it was joined with {c.pairs} buffered element(s) of the other input on arrival "
            f"and stays buffered for later ones until its cleanup timer at {_time(c.cleanup)} "
            "fires."
        )
    where = "dropped" if c.fate == words.DROPPED else f"sent to the side output {c.side_output!r}"
    return (
        f"Late {at}: an interval join takes no element whose timestamp is below its "
        "watermark (Flink's IntervalJoinOperator.isLate: timestamp < watermark), so it was "
        f"joined with nothing and {where}."
    )


def _render_outcome(c: ElementFate, o: WindowOutcome) -> str:
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
    order = words.firing_order(f.earlier_firings)
    if o.fired_now:
        before = f"had fired {o.earlier_firings} time(s) and " if o.earlier_firings else ""
        return f"Window {o.window} {before}fired at once on it ({order}{late})."
    return (
        f"Window {o.window} fired next at processing time {f.proc_time} ({order}{late}), "
        f"caused by {_cause_text(f)}."
    )


_RENDER: dict[type, Any] = {
    NeverFired: _render_never,
    DidFire: _render_did,
    NoContents: _render_empty,
    TriggerDecides: _render_trigger,
    NoEventTimer: _render_no_timer,
    TimerDue: lambda c: (
        f"Its trigger's event-time timer at {c.timer} is at or below the watermark of "
        f"{c.operator!r} ({_time(c.watermark)}): it fires on the operator's next watermark "
        "advance."
    ),
    WatermarkHeld: _render_held,
    ElementFate: _render_fate,
    JoinFate: _render_join_fate,
    PausedForAlignment: lambda c: paused_note(c.spans),
    Replayed: lambda c: (
        f"Source record {c.index} arrived {c.arrivals} times: a restore replayed it, with the "
        "watermarks starting again at MIN. "
        + (
            f"Its last arrival, whose fate the results keep ({c.arrivals} of {c.arrivals}):"
            if c.shown == c.arrivals
            else f"Arrival {c.shown} of {c.arrivals}, rolled back by a restore:"
        )
    ),
    NotKeyed: lambda c: "It never reached a keyed operator.",
}
