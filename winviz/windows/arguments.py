"""The checks a windowed stream's builder makes of its arguments, stated once for
``WindowedStream`` and for the window joins / coGroups built over it (Flink's
``WindowedStream`` / ``CoGroupedStreams.WithWindow`` check them when called, before the job
runs)."""

from __future__ import annotations

from typing import Any

from winviz.errors import ArgumentTypeError, InputError
from winviz.time import duration_ms
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger


def checked_assigner(assigner: Any, method: str = "window() takes") -> WindowAssigner:
    """``assigner`` if it is a ``WindowAssigner``; ``method`` names the call in the error."""
    if not isinstance(assigner, WindowAssigner):
        raise ArgumentTypeError(
            f"{method} a WindowAssigner, not {type(assigner).__name__}",
            field="assigner",
            value=assigner,
            expected="a WindowAssigner, e.g. TumblingEventTimeWindows.of(5000)",
        )
    return assigner


def checked_trigger(trigger: Any) -> Trigger:
    if not isinstance(trigger, Trigger):
        raise ArgumentTypeError(
            f"trigger() takes a Trigger, not {type(trigger).__name__}",
            field="trigger",
            value=trigger,
            expected="a Trigger, e.g. CountTrigger.of(3)",
        )
    return trigger


def checked_evictor(evictor: Any) -> Evictor:
    if not isinstance(evictor, Evictor):
        raise ArgumentTypeError(
            f"evictor() takes an Evictor, not {type(evictor).__name__}",
            field="evictor",
            value=evictor,
            expected="an Evictor, e.g. CountEvictor.of(3)",
        )
    return evictor


def checked_lateness(lateness: Any) -> int:
    """The allowed lateness in ms (Flink: "The allowed lateness cannot be negative.")."""
    ms = duration_ms(lateness, what="allowed lateness")
    if ms < 0:
        raise InputError(
            "The allowed lateness cannot be negative.",
            field="allowed_lateness",
            value=ms,
            expected=">= 0",
        )
    return ms
