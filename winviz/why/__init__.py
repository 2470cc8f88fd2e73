"""Questions a learner asks, answered from the trace alone, in ``winviz.trace.vocabulary``'s
(Flink's) words:

* ``why_fired(trace, key, window)`` — each firing of a window: its cause, first firing or re-firing,
  late or not, and the input whose watermark advance raised the watermark.
* ``why_not_fired(trace, key, window)`` — no element reached it, the trigger decides, or one
  *active* input channel or partition (or several) holds the watermark below its max timestamp.
* ``why_dropped(trace, index)`` — a source record's fate, window by window (or at an interval join),
  and the firing it caused at once; for a record a restore replayed, its last arrival.

Each answer is typed claims (``claims``) and a table; its sentence is rendered from the claims only
(``render``), so tests/test_why_truth.py can check each claim against the engine."""

from __future__ import annotations

from winviz.why.claims import (
    Channel,
    Claim,
    DidFire,
    ElementFate,
    Firing,
    JoinFate,
    NeverFired,
    NoContents,
    NoEventTimer,
    NotKeyed,
    PausedForAlignment,
    Replayed,
    TimerDue,
    TriggerDecides,
    WatermarkHeld,
    WindowOutcome,
)
from winviz.why.dropped import why_dropped
from winviz.why.fired import why_fired
from winviz.why.not_fired import why_not_fired
from winviz.why.render import FIRINGS_SPELLED, Answer, render

__all__ = [
    "FIRINGS_SPELLED",
    "Answer",
    "Channel",
    "Claim",
    "DidFire",
    "ElementFate",
    "Firing",
    "JoinFate",
    "NeverFired",
    "NoContents",
    "NoEventTimer",
    "NotKeyed",
    "PausedForAlignment",
    "Replayed",
    "TimerDue",
    "TriggerDecides",
    "WatermarkHeld",
    "WindowOutcome",
    "render",
    "why_dropped",
    "why_fired",
    "why_not_fired",
]
