"""Errors that name what went wrong and keep what happened before it.

Every error the engine raises for bad input names the record (index), the field and the value,
and says what was expected. Errors raised while a job runs carry the trace written up to the
failure (``error.trace``) and the outputs collected so far (``error.partial_result``), so a
learner can still look at everything that happened before it.
"""

from __future__ import annotations

from typing import Any


class WinvizError(Exception):
    """Base class of the kit's errors."""

    trace: Any = None
    partial_result: Any = None


class InputError(WinvizError, ValueError):
    """Bad input: a record, a field or an argument that the engine cannot accept."""

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        field: str | None = None,
        value: Any = ...,
        expected: str | None = None,
    ) -> None:
        self.index = index
        self.field = field
        self.value = value
        parts = []
        if index is not None:
            parts.append(f"record {index}")
        if field is not None:
            parts.append(f"field {field!r}")
        if value is not ...:
            parts.append(f"value {value!r}")
        where = (", ".join(parts) + ": ") if parts else ""
        tail = f" (expected {expected})" if expected else ""
        super().__init__(where + message + tail)


class UserFunctionError(WinvizError, RuntimeError):
    """A user function raised: re-raised with the operator, key, window and record."""

    def __init__(
        self,
        *,
        function: str,
        operator: str,
        key: Any = None,
        window: Any = None,
        record: Any = None,
        index: int | None = None,
        cause: BaseException,
    ) -> None:
        self.function = function
        self.operator = operator
        self.key = key
        self.window = window
        self.record = record
        self.index = index
        parts = [f"{function} in operator {operator!r} raised {type(cause).__name__}: {cause}"]
        if index is not None:
            parts.append(f"record {index}")
        if key is not None:
            parts.append(f"key {key!r}")
        if window is not None:
            parts.append(f"window {window}")
        if record is not None:
            parts.append(f"value {record!r}")
        super().__init__("; ".join(parts))


class IllegalStateError(WinvizError, RuntimeError):
    """An internal contract was broken (Flink's IllegalStateException), e.g. a trigger
    returned something that is not a TriggerResult."""


class TimerLoopError(IllegalStateError):
    """A timer that re-registers itself at the time it fires, with nothing changing: the run
    could never end (``winviz.timers`` gives the exact criterion; Flink hangs, see
    FLINK-35069). ``key``, ``namespace`` (the window), ``timestamp``, ``domain`` and
    ``operator`` say which timer."""

    def __init__(
        self,
        message: str,
        *,
        operator: str,
        domain: str,
        key: Any,
        namespace: Any,
        timestamp: int,
    ) -> None:
        super().__init__(message)
        self.operator = operator
        self.domain = domain
        self.key = key
        self.namespace = namespace
        self.timestamp = timestamp


class UnsupportedOperationError(WinvizError, RuntimeError):
    """Flink's UnsupportedOperationException, e.g. a session merge that would end a window
    before the current watermark."""


class TraceFileError(InputError):
    """A file that is not a trace this winviz can read (``winviz.load_trace``): the message
    names the file and what was expected."""
