"""Errors that name the record (index), field and value and say what was expected. An error raised
while a job runs carries the trace so far (``error.trace``) and the outputs collected
(``error.partial_result``)."""

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


class LongRangeError(InputError):
    """A time, duration or timer outside Java's ``long`` range: Flink could not hold it."""


class ArgumentTypeError(InputError, TypeError):
    """A value of the wrong type (a float, bool or str where int ms are expected, and the like)."""


class PositionError(InputError, IndexError):
    """A position outside a sequence (``trace[i]``), saying which positions there are."""


class NameClashError(InputError):
    """A name that is already taken (two sinks writing to ``outputs[name]``)."""


class KeySelectionError(InputError):
    """A key Flink could not route: null, or of a type Java cannot hash as winviz does."""


class StateCopyError(WinvizError, TypeError):
    """State a checkpoint cannot copy (a lock, a file): Flink fails the checkpoint the same way."""


class FunctionNotSerializableError(WinvizError, TypeError):
    """A user function that cannot be copied for the subtasks (Flink: not serializable)."""


class FunctionResultError(WinvizError, TypeError):
    """A user function returned something the operator cannot use (``flat_map`` an int, ``reduce``
    None …)."""

    def __init__(
        self,
        message: str,
        *,
        function: str,
        operator: str,
        value: Any,
        expected: str,
        index: int | None = None,
        key: Any = None,
        record: Any = ...,
    ) -> None:
        self.message = message
        self.function = function
        self.operator = operator
        self.value = value
        self.expected = expected
        self.index = index
        self.key = key
        self.record = record
        super().__init__(str(self))

    def __str__(self) -> str:
        """Built when shown: an operator may fill in ``index`` on the way out (a batch loop
        knows the record's index only then)."""
        head = f"{self.function} in operator {self.operator!r} {self.message}: got {self.value!r}"
        where = _where(self.index, self.key, None, self.record)
        return "; ".join([head, *where]) + f" (expected {self.expected})"


def _where(index: int | None, key: Any, window: Any, record: Any) -> list[str]:
    """The record index, key, window and value a function error names (``...``: no value)."""
    parts = [] if index is None else [f"record {index}"]
    if key is not None:
        parts.append(f"key {key!r}")
    if window is not None:
        parts.append(f"window {window}")
    return parts if record is ... else [*parts, f"value {record!r}"]


def returned_value_error(
    function: str,
    operator: str,
    value: Any,
    *,
    when: str = "",
    key: Any = None,
    index: int | None = None,
    record: Any = ...,
) -> FunctionResultError:
    """A process function (``process``, ``apply``, ``process_element``, ``on_timer``) returned
    something other than None: Flink's are ``void``, results go through the ``Collector``. ``when``
    says what was being processed (e.g. " when window [0, 1000) fired")."""
    return FunctionResultError(
        f"returned a value{when}, which Flink never reads",
        function=function,
        operator=operator,
        value=value,
        expected="None: results go through the collector, out.collect(result) for each, as "
        "Flink's process methods return void",
        index=index,
        key=key,
        record=record,
    )


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
        head = f"{function} in operator {operator!r} raised {type(cause).__name__}: {cause}"
        where = _where(index, key, window, ... if record is None else record)
        super().__init__("; ".join([head, *where]))


class IllegalStateError(WinvizError, RuntimeError):
    """An internal contract was broken (Flink's ``IllegalStateException``)."""


class TimerLoopError(IllegalStateError):
    """A chain of timer firings in one advance that would not end within the firing budget:
    counted, proved endless or foreseen (``winviz.timers``, ``InternalTimerService.loop_error``;
    Flink keeps firing and hangs, FLINK-35069); the attributes say which timer."""

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
    """Flink's ``UnsupportedOperationException``."""


class TraceFileError(InputError):
    """A file that is not a trace this winviz can read (``winviz.load_trace``)."""


class SnapshotRestoreError(InputError):
    """A snapshot that ``execute(restore_from=...)`` cannot load into this job."""


class SnapshotMismatchError(SnapshotRestoreError):
    """The snapshot belongs to another job; the message lists every difference."""


class DamagedSnapshotError(SnapshotRestoreError):
    """The snapshot is missing parts (an operator's state, a source position, a valve) or
    holds parts its operator cannot load; the message names the part."""


class AlignmentStallError(WinvizError):
    """Every record left is held back by watermark alignment and nothing can release it (Flink would
    wait forever; ``with_idleness`` leaves the quiet source out)."""
