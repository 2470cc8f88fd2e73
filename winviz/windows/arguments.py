"""The checks of a windowed stream's builder, for ``WindowedStream`` and the window joins (Flink
checks them when called, before the job runs)."""

from __future__ import annotations

from typing import Any

from winviz.errors import ArgumentTypeError, InputError
from winviz.time import duration_ms
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger


def _instance(value: Any, kind: type, field: str, method: str, example: str) -> Any:
    """``value`` if it is a ``kind``; else ``ArgumentTypeError`` naming the call (``method``,
    e.g. "trigger() takes"), the value's type and an ``example`` of a ``kind``."""
    if not isinstance(value, kind):
        a_kind = ("an " if kind.__name__[0] in "AEIOU" else "a ") + kind.__name__
        raise ArgumentTypeError(
            f"{method} {a_kind}, not {type(value).__name__}",
            field=field,
            value=value,
            expected=f"{a_kind}, e.g. {example}",
        )
    return value


def checked_assigner(assigner: Any, method: str = "window() takes") -> WindowAssigner:
    """``assigner`` if it is a ``WindowAssigner``; ``method`` names the call in the error."""
    return _instance(
        assigner, WindowAssigner, "assigner", method, "TumblingEventTimeWindows.of(5000)"
    )


def checked_trigger(trigger: Any) -> Trigger:
    return _instance(trigger, Trigger, "trigger", "trigger() takes", "CountTrigger.of(3)")


def checked_evictor(evictor: Any) -> Evictor:
    return _instance(evictor, Evictor, "evictor", "evictor() takes", "CountEvictor.of(3)")


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
