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

One module a question (``fired``, ``not_fired``, ``dropped``), beside the claims
(``claims``), the sentence (``render``), the answer (``answer``) and what they all read off
the trace alike (``reading``).
"""

from __future__ import annotations

from winviz.why.answer import Answer
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
from winviz.why.render import FIRINGS_SPELLED, render

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
