"""The checks the DataStream API makes of its arguments when the pipeline is built (Flink's
builders: ``checkNotNull``, ``OperatorValidationUtils``), each raising ``ArgumentTypeError`` /
``InputError`` naming the field, the value and what was expected."""

from __future__ import annotations

from typing import Any

from winviz.errors import ArgumentTypeError, InputError
from winviz.functions import OutputTag
from winviz.time import duration_ms


def checked_function(fn: Any, what: str, field: str, expected: str) -> Any:
    """``fn`` when it can be called, else ``ArgumentTypeError`` (Flink's ``checkNotNull``)."""
    if not callable(fn):
        raise ArgumentTypeError(
            f"{what}() takes a function; {type(fn).__name__} is not callable",
            field=field,
            value=fn,
            expected=expected,
        )
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
    if not isinstance(tag, OutputTag):
        raise ArgumentTypeError(
            f"{what} needs an OutputTag",
            field="tag",
            value=tag,
            expected=f"an OutputTag, e.g. OutputTag({tag!r})"
            if isinstance(tag, str)
            else "an OutputTag",
        )
    return tag


def checked_watermark_interval(interval: Any) -> int:
    ms = duration_ms(interval, what="auto_watermark_interval")
    if ms < 0:
        raise InputError(
            "auto_watermark_interval must be >= 0",
            field="auto_watermark_interval",
            value=interval,
            expected=">= 0 ms (0 turns periodic watermarks off)",
        )
    return ms
