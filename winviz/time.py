"""Time as Flink sees it: integer milliseconds in Java's ``long`` range, ``Long.MIN_VALUE`` for "no
timestamp" (and the initial watermark), ``Long.MAX_VALUE`` for the end of input; Java's wrapping
``long`` arithmetic; and the normalisation of user timestamps:

* ``int`` — epoch milliseconds (``bool`` is rejected).
* aware ``datetime`` / ``pandas.Timestamp`` / ISO string with an offset or ``Z`` — exact (sub-ms
  parts floored, as ``Instant.toEpochMilli``).
* naive ones — wall-clock time in the ``tz`` given (an IANA name), **UTC when none is given**.
* A stream must not mix naive and aware values (``TimestampNormalizer`` checks it)."""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from winviz.errors import ArgumentTypeError, InputError, LongRangeError

MIN: int = -(2**63)
"""Java's ``Long.MIN_VALUE``: no timestamp, and the watermark before any watermark."""
MAX: int = 2**63 - 1
"""Java's ``Long.MAX_VALUE``: the watermark that ends a bounded input."""

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_ONE_MS = _dt.timedelta(milliseconds=1)


def wrap_long(value: int) -> int:
    """Wrap an unbounded Python int to Java's two's-complement 64-bit ``long``."""
    return ((value + 2**63) % 2**64) - 2**63


def java_rem(a: int, b: int) -> int:
    """Java's ``%``: the remainder truncates toward zero (Python's ``%`` floors)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def in_long_range(value: int) -> bool:
    return MIN <= value <= MAX


def duration_ms(value: Any, *, what: str = "duration") -> int:
    """A duration as int ms or a ``timedelta`` (pandas' too) in Java's ``long`` range
    (``LongRangeError``); a float, bool or str: ``ArgumentTypeError``."""
    if value.__class__ is int:
        ms = value
    elif isinstance(value, bool) or not (
        isinstance(value, numbers.Integral | _dt.timedelta) or hasattr(value, "to_pytimedelta")
    ):
        raise ArgumentTypeError(
            f"{what} must be milliseconds (int) or a timedelta",
            field=what,
            value=value,
            expected="int milliseconds or a timedelta",
        )
    elif isinstance(value, numbers.Integral):
        ms = int(value)
    elif isinstance(value, _dt.timedelta):
        ms = value // _ONE_MS
    else:
        ms = value.to_pytimedelta() // _ONE_MS
    if not MIN <= ms <= MAX:
        raise _long_range_error(what, value)
    return ms


def duration_at_least(
    value: Any,
    least: int,
    what: str,
    message: str,
    *,
    field: str | None = None,
    expected: str | None = None,
) -> int:
    """``value`` as a duration in ms (``duration_ms``, naming ``what``) of at least ``least``
    (0: not negative, 1: positive), else ``InputError`` with ``message``, naming ``field``
    (default ``what``), the value as given and what was ``expected`` (default ``>= 0`` /
    ``> 0``)."""
    ms = duration_ms(value, what=what)
    if ms < least:
        expected = expected or ("> 0" if least == 1 else f">= {least}")
        raise InputError(message, field=field or what, value=value, expected=expected)
    return ms


def _long_range_error(what: str, value: Any) -> LongRangeError:
    return LongRangeError(
        f"{what} is outside Java's long range, so Flink could not hold it",
        field=what,
        value=value,
        expected="-2**63 <= ms <= 2**63-1",
    )


def count_arg(value: Any, *, what: str, minimum: int = 1, expected: str = "") -> int:
    """A count, or a time with ``minimum=MIN`` (an int, no bool/float/str:
    ``ArgumentTypeError``), of at least ``minimum`` (``InputError``), within Java's long
    (``LongRangeError``); ``expected`` (default: ``an int >= minimum``) for the errors."""
    expected = expected or f"an int >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(
            f"{what} must be an int, got {type(value).__name__}",
            field=what,
            value=value,
            expected=expected,
        )
    if not minimum <= value <= MAX:
        raise (InputError if MIN <= value <= MAX else LongRangeError)(
            f"{what} must be at least {minimum}"
            if value < minimum
            else f"{what} is outside Java's long range",
            field=what,
            value=value,
            expected=expected,
        )
    return int(value)


def _scaled(n: Any, unit_ms: int, what: str) -> int:
    """``n`` units of ``unit_ms`` ms, rounded (``n`` an int or finite float), in Java's ``long``
    range."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ArgumentTypeError(
            f"{what}() takes a number, not {type(n).__name__}",
            field="n",
            value=n,
            expected="an int or a finite float",
        )
    if isinstance(n, float) and not math.isfinite(n):
        raise InputError(
            f"{what}() takes a finite number", field="n", value=n, expected="a finite float"
        )
    ms = round(n * unit_ms)
    if not MIN <= ms <= MAX:
        raise LongRangeError(
            f"{what}({n!r}) is {ms} ms, outside Java's long range, so Flink could not hold it",
            field="n",
            value=n,
            expected="-2**63 <= ms <= 2**63-1",
        )
    return ms


def seconds(n: float) -> int:
    """``n`` seconds in milliseconds (Flink: ``Duration.ofSeconds``)."""
    return _scaled(n, 1000, "seconds")


def minutes(n: float) -> int:
    """``n`` minutes in milliseconds (Flink: ``Duration.ofMinutes``)."""
    return _scaled(n, 60_000, "minutes")


def hours(n: float) -> int:
    """``n`` hours in milliseconds (Flink: ``Duration.ofHours``)."""
    return _scaled(n, 3_600_000, "hours")


def _aware_to_ms(value: _dt.datetime) -> int:
    return (value - _EPOCH) // _ONE_MS


class _BadTimestamp(Exception):
    """A timestamp the normalizer cannot take (raised as an ``InputError`` naming it)."""


@dataclass
class TimestampNormalizer:
    """Turns one stream's user timestamps into epoch ms by the module's rules, refusing a mix of
    naive and aware values (``first_kind``)."""

    tz: str | None = None
    first_kind: str | None = field(default=None, init=False)

    def __call__(
        self, value: Any, *, index: int | None = None, field_name: str = "timestamp"
    ) -> int:
        try:
            ms, kind = self._convert(value)
            if kind is not None:
                if self.first_kind is None:
                    self.first_kind = kind
                elif kind != self.first_kind:
                    raise _BadTimestamp(
                        f"mixed naive and aware timestamps: this one is {kind}, earlier ones "
                        f"were {self.first_kind}; give all timestamps with an offset or none"
                    )
            if not in_long_range(ms):
                raise _BadTimestamp("timestamp outside Java's long range [-2**63, 2**63-1] ms")
        except _BadTimestamp as bad:
            raise InputError(str(bad), index=index, field=field_name, value=value) from None
        return ms

    def _zone(self) -> _dt.tzinfo:
        if not self.tz:
            return _dt.UTC
        try:
            return ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise InputError(
                "unknown time zone",
                field="tz",
                value=self.tz,
                expected="an IANA name such as 'UTC' or 'Asia/Shanghai'",
            ) from None

    def _convert(self, value: Any) -> tuple[int, str | None]:
        if value is None:
            raise _BadTimestamp("missing timestamp (None)")
        if isinstance(value, bool):
            raise _BadTimestamp(
                "a bool is not a timestamp; expected int ms, datetime, pandas Timestamp or ISO "
                "string"
            )
        if isinstance(value, int):
            return value, None
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                raise _BadTimestamp("timestamp is NaN or infinite")
            if not value.is_integer():
                raise _BadTimestamp("timestamp must be whole milliseconds")
            return int(value), None
        if isinstance(value, str):
            try:
                parsed = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                raise _BadTimestamp(
                    "unparseable timestamp string; expected ISO 8601 such as "
                    "'2019-08-24 17:51:44.152' or '2019-08-24T09:51:44.152Z'"
                ) from None
            return self._convert(parsed)
        to_pydatetime = getattr(value, "to_pydatetime", None)
        if to_pydatetime is not None and not isinstance(value, _dt.datetime):
            value = to_pydatetime()
        if type(value).__name__ == "NaTType" or value != value:  # pandas NaT
            raise _BadTimestamp("timestamp is NaT")
        if isinstance(value, _dt.datetime):
            if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
                return _aware_to_ms(value.replace(tzinfo=self._zone())), "naive"
            return _aware_to_ms(value), "aware"
        if isinstance(value, _dt.date):
            raise _BadTimestamp("a date has no time of day; give a datetime")
        raise _BadTimestamp(
            f"unsupported timestamp type {type(value).__name__}; expected int ms, datetime, "
            "pandas Timestamp or ISO string"
        )


def to_millis(value: Any, tz: str | None = None) -> int:
    """Normalise one timestamp to epoch milliseconds (see the module's time-zone rules)."""
    return TimestampNormalizer(tz)(value)


def format_ms(ms: int | None) -> str:
    """A readable form of a millisecond timestamp, with the sentinels named."""
    if ms is None:
        return "-"
    if ms == MIN:
        return "MIN"
    if ms == MAX:
        return "MAX"
    return str(ms)
