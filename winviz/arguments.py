"""The checks the DataStream API makes of its arguments when the pipeline is built (Flink's
builders: ``checkNotNull``, ``OperatorValidationUtils``; a windowed stream's and the window joins'
too), each raising ``ArgumentTypeError`` / ``InputError`` naming the field, the value and what was
expected."""

from __future__ import annotations

import inspect
from typing import Any

from winviz.errors import ArgumentTypeError
from winviz.functions import OutputTag
from winviz.time import duration_at_least
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger


def checked_function(
    fn: Any,
    what: str,
    field: str,
    expected: str,
    arity: int | None = None,
    *,
    it: str = "its function",
    hint: str = "",
) -> Any:
    """``fn`` when it can be called (with ``arity`` positional arguments, when given), else
    ``ArgumentTypeError`` (Flink's ``checkNotNull``) naming the call ``what`` (``map`` is shown
    ``map()``; ``for_punctuated(fn)`` as it is), ending with ``hint`` when not callable;
    ``it``: how ``callable_with`` names ``fn``."""
    call = what if "(" in what else f"{what}()"
    if not callable(fn):
        no = "None is no function (Flink's checkNotNull)" if fn is None else ""
        raise ArgumentTypeError(
            f"{call} takes a function; {no or f'{type(fn).__name__} is not callable'}{hint}",
            field=field,
            value=fn,
            expected=expected,
        )
    if arity is None:
        return fn
    return callable_with(fn, arity, call, field, expected, it)


def callable_with(fn: Any, arity: int, what: str, field: str, expected: str, it: str) -> Any:
    """``fn`` when it can be called with ``arity`` positional arguments, as the engine will call
    it (a callable whose signature Python cannot read is taken as it is), else
    ``ArgumentTypeError``: "``what`` calls ``it`` with …"."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    try:
        signature.bind(*([None] * arity))
    except TypeError:
        name = getattr(fn, "__qualname__", type(fn).__name__)
        raise ArgumentTypeError(
            f"{what} calls {it} with {arity} argument{'' if arity == 1 else 's'}; "
            f"{name}{signature} cannot take them",
            field=field,
            value=fn,
            expected=expected,
        ) from None
    return fn


AGGREGATE_METHODS = ("create_accumulator", "add", "get_result")


def checked_methods(
    obj: Any, what: str, field: str, methods: tuple[str, ...], expected: str
) -> Any:
    """``obj`` when it has these methods, else ``ArgumentTypeError`` naming the first one
    missing."""
    for method in methods:
        if not callable(getattr(obj, method, None)):
            raise ArgumentTypeError(
                f"{what}() takes {expected}; {type(obj).__name__} has no {method}()",
                field=field,
                value=obj,
                expected=f"{expected} (with {', '.join(m + '()' for m in methods)})",
            )
    return obj


def checked_window_function(function: Any, what: str, *, required: bool = False) -> Any:
    """A ``ProcessWindowFunction`` or a function ``(key, context, elements, out)``; None if
    optional."""
    if function is None and not required:
        return None
    if callable(getattr(function, "process", None)) or callable(function):
        return function
    raise ArgumentTypeError(
        f"{what}() takes a window function; {type(function).__name__} is not one",
        field="process_function",
        value=function,
        expected="a ProcessWindowFunction or a function (key, context, elements, out)",
    )


def checked_output_tag(tag: Any, what: str) -> OutputTag:
    """``tag`` if it is an ``OutputTag``; ``what`` names the call in the error."""
    example = f"OutputTag({tag!r})" if isinstance(tag, str) else "OutputTag('late')"
    return checked_instance(tag, OutputTag, "tag", f"{what}() takes", example)


def checked_watermark_interval(interval: Any) -> int:
    return duration_at_least(
        interval,
        0,
        "auto_watermark_interval",
        "auto_watermark_interval must be >= 0",
        expected=">= 0 ms (0 turns periodic watermarks off)",
    )


def checked_instance(value: Any, kind: type, field: str, method: str, example: str) -> Any:
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
    return checked_instance(
        assigner, WindowAssigner, "assigner", method, "TumblingEventTimeWindows.of(5000)"
    )


def checked_trigger(trigger: Any) -> Trigger:
    return checked_instance(trigger, Trigger, "trigger", "trigger() takes", "CountTrigger.of(3)")


def checked_evictor(evictor: Any) -> Evictor:
    return checked_instance(evictor, Evictor, "evictor", "evictor() takes", "CountEvictor.of(3)")


def checked_lateness(lateness: Any) -> int:
    """The allowed lateness in ms (Flink: "The allowed lateness cannot be negative.")."""
    return duration_at_least(
        lateness,
        0,
        "allowed lateness",
        "The allowed lateness cannot be negative.",
        field="allowed_lateness",
    )
