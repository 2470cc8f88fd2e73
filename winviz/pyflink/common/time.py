"""PyFlink's ``pyflink.common.time``: ``Time`` and ``Duration`` (amounts of time) and
``Instant``. winviz keeps every time as int milliseconds; ``millis(x)`` reads one of these
(or an int of ms) wherever PyFlink takes a ``Time`` or ``Duration``."""

from __future__ import annotations

from typing import Any

from winviz.pyflink.errors import PyFlinkArgumentError


class Duration:
    """Java's ``java.time.Duration`` as PyFlink exposes it (``Duration.of_seconds(2)``)."""

    __slots__ = ("_ms",)

    def __init__(self, millis: int) -> None:
        self._ms = millis

    @staticmethod
    def of_days(days: int) -> Duration:
        return Duration(days * 86_400_000)

    @staticmethod
    def of_hours(hours: int) -> Duration:
        return Duration(hours * 3_600_000)

    @staticmethod
    def of_minutes(minutes: int) -> Duration:
        return Duration(minutes * 60_000)

    @staticmethod
    def of_seconds(seconds: int) -> Duration:
        return Duration(seconds * 1000)

    @staticmethod
    def of_millis(millis: int) -> Duration:
        return Duration(millis)

    @staticmethod
    def of_nanos(nanos: int) -> Duration:
        """Truncated to whole milliseconds (winviz's time unit, as Flink's watermarks)."""
        return Duration(nanos // 1_000_000)

    def to_milliseconds(self) -> int:
        return self._ms

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other._ms == self._ms

    def __hash__(self) -> int:
        return hash(("Duration", self._ms))

    def __repr__(self) -> str:
        return f"Duration({self._ms} ms)"


class Time(Duration):
    """Flink's (deprecated, still PyFlink's) ``Time``: ``Time.milliseconds(5)``,
    ``Time.seconds(1)``…; ``to_milliseconds()`` gives the amount in ms."""

    __slots__ = ()

    @staticmethod
    def milliseconds(milliseconds: int) -> Time:
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> Time:
        return Time(seconds * 1000)

    @staticmethod
    def minutes(minutes: int) -> Time:
        return Time(minutes * 60_000)

    @staticmethod
    def hours(hours: int) -> Time:
        return Time(hours * 3_600_000)

    @staticmethod
    def days(days: int) -> Time:
        return Time(days * 86_400_000)

    def __repr__(self) -> str:
        return f"Time({self._ms} ms)"


class Instant:
    """Java's ``Instant`` (``Instant.of_epoch_milli(ms)``)."""

    def __init__(self, epoch_milli: int) -> None:
        self.epoch_milli = epoch_milli

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        return Instant(epoch_milli)

    def to_epoch_milli(self) -> int:
        return self.epoch_milli

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and other.epoch_milli == self.epoch_milli

    def __hash__(self) -> int:
        return hash(("Instant", self.epoch_milli))


def millis(value: Any, what: str) -> int:
    """A ``Time`` / ``Duration`` (or int ms, which PyFlink takes in some places, e.g.
    ``allowed_lateness(time_ms)``) as int milliseconds."""
    if isinstance(value, Duration):
        return value.to_milliseconds()
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise PyFlinkArgumentError(
        f"{what} takes a Time or Duration",
        field=what,
        value=value,
        expected="e.g. Time.milliseconds(5) or Duration.of_seconds(2)",
    )
