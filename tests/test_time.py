"""winviz.time: Java long arithmetic and the timestamp time-zone rules, with exact values.

Epoch-millisecond expectations were cross-checked with ``java.time`` on JDK 17
(``LocalDateTime.parse(s).atZone(zone).toInstant().toEpochMilli()`` and
``OffsetDateTime.parse(s).toInstant().toEpochMilli()``); the Asia/Shanghai value is the one in
the project's seed: "2019-08-24 17:51:44.152" in Asia/Shanghai is 1566640304152.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from winviz.errors import InputError
from winviz.time import (
    MAX,
    MIN,
    TimestampNormalizer,
    duration_ms,
    format_ms,
    hours,
    in_long_range,
    java_rem,
    minutes,
    seconds,
    to_millis,
    wrap_long,
)

SEED_MS = 1566640304152  # 2019-08-24T09:51:44.152Z == 2019-08-24 17:51:44.152 in Shanghai
SEED_AS_UTC_MS = 1566669104152  # the same wall-clock text read as UTC (8 h later)
SHANGHAI = "Asia/Shanghai"
UTC8 = dt.timezone(dt.timedelta(hours=8))


# --- Java long arithmetic ------------------------------------------------------------------


def test_sentinels() -> None:
    """MIN/MAX are Long.MIN_VALUE/Long.MAX_VALUE."""
    assert MIN == -9223372036854775808
    assert MAX == 9223372036854775807


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, 0),
        (-1, -1),
        (MAX, MAX),
        (MIN, MIN),
        (MAX + 1, MIN),  # Java: Long.MAX_VALUE + 1 == Long.MIN_VALUE
        (MIN - 1, MAX),
        (MAX * 2, -2),  # Java: Long.MAX_VALUE * 2 == -2
        (MIN * -1, MIN),  # Java: Long.MIN_VALUE * -1 == Long.MIN_VALUE
        (2**64, 0),
        (2**64 + 5, 5),
        (-(2**64) - 5, -5),
    ],
)
def test_wrap_long(value: int, expected: int) -> None:
    """Two's-complement 64-bit wrapping, as Java's long arithmetic overflows."""
    assert wrap_long(value) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (7, 5, 2),
        (-7, 5, -2),  # Python: -7 % 5 == 3
        (7, -5, 2),  # Python: 7 % -5 == -3
        (-7, -5, -2),
        (0, 3, 0),
        (-10, 5, 0),
        (MIN, -1, 0),
        (MIN, 1000, -808),
        (-1, 1000, -1),
    ],
)
def test_java_rem(a: int, b: int, expected: int) -> None:
    """Java's % truncates toward zero: the sign follows the dividend."""
    assert java_rem(a, b) == expected


@pytest.mark.parametrize(
    "value, expected", [(0, True), (MIN, True), (MAX, True), (MIN - 1, False), (MAX + 1, False)]
)
def test_in_long_range(value: int, expected: bool) -> None:
    """Inclusive bounds [Long.MIN_VALUE, Long.MAX_VALUE]."""
    assert in_long_range(value) is expected


# --- durations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, 0),
        (1500, 1500),
        (-5, -5),
        (dt.timedelta(seconds=90), 90_000),
        (dt.timedelta(microseconds=1999), 1),  # floored
        (dt.timedelta(microseconds=-1), -1),  # floored, not truncated
        (pd.Timedelta("1500us"), 1),
        (pd.Timedelta("5min"), 300_000),
        (pd.Timedelta("-1ns"), -1),
    ],
)
def test_duration_ms(value: Any, expected: int) -> None:
    """int ms pass through; timedeltas become whole (floored) milliseconds."""
    assert duration_ms(value) == expected


@pytest.mark.parametrize("value", [True, 1.5, "5s", None])
def test_duration_ms_rejects(value: Any) -> None:
    """Anything but int ms or a timedelta is an InputError naming the value and ``what``."""
    with pytest.raises(InputError) as info:
        duration_ms(value, what="window size")
    assert "window size" in str(info.value)
    assert repr(value) in str(info.value)


@pytest.mark.parametrize(
    "func, n, expected",
    [
        (seconds, 0, 0),
        (seconds, 1, 1_000),
        (seconds, 90, 90_000),  # Duration.ofSeconds(90).toMillis()
        (seconds, 1.5, 1_500),
        (seconds, 0.001, 1),
        (minutes, 5, 300_000),  # Duration.ofMinutes(5).toMillis()
        (minutes, 0.5, 30_000),
        (hours, 1, 3_600_000),
        (hours, 2, 7_200_000),  # Duration.ofHours(2).toMillis()
        (hours, 24, 86_400_000),
    ],
)
def test_duration_helpers(func: Any, n: float, expected: int) -> None:
    """seconds/minutes/hours give milliseconds."""
    assert func(n) == expected


@pytest.mark.parametrize(
    "ms, expected",
    [(None, "-"), (MIN, "MIN"), (MAX, "MAX"), (0, "0"), (-5, "-5"), (SEED_MS, "1566640304152")],
)
def test_format_ms(ms: int | None, expected: str) -> None:
    """Sentinels are named; other values print as plain integers."""
    assert format_ms(ms) == expected


# --- accepted timestamps ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, tz, expected",
    [
        # int: already epoch ms, whatever the zone
        (0, None, 0),
        (SEED_MS, None, SEED_MS),
        (SEED_MS, SHANGHAI, SEED_MS),
        (-1, None, -1),
        (MIN, None, MIN),
        (MAX, None, MAX),
        # float with whole milliseconds
        (1566640304152.0, None, SEED_MS),
        (-0.0, None, 0),
        (-5.0, None, -5),
        # naive datetime: UTC by default, else wall-clock time in tz
        (dt.datetime(2019, 8, 24, 17, 51, 44, 152000), None, SEED_AS_UTC_MS),
        (dt.datetime(2019, 8, 24, 17, 51, 44, 152000), "UTC", SEED_AS_UTC_MS),
        (dt.datetime(2019, 8, 24, 17, 51, 44, 152000), SHANGHAI, SEED_MS),
        (dt.datetime(1970, 1, 1), None, 0),
        (dt.datetime(1900, 1, 1), SHANGHAI, -2209017943000),  # LMT +08:05:43, as in java.time
        # aware datetime: exact, tz ignored
        (dt.datetime(2019, 8, 24, 9, 51, 44, 152000, tzinfo=dt.UTC), None, SEED_MS),
        (dt.datetime(2019, 8, 24, 17, 51, 44, 152000, tzinfo=UTC8), None, SEED_MS),
        (dt.datetime(2019, 8, 24, 17, 51, 44, 152000, tzinfo=ZoneInfo(SHANGHAI)), "UTC", SEED_MS),
        (dt.datetime(1, 1, 1, tzinfo=dt.UTC), None, -62135596800000),
        (dt.datetime.max.replace(tzinfo=dt.UTC), None, 253402300799999),
        # pandas Timestamp, naive and aware
        (pd.Timestamp("2019-08-24 17:51:44.152"), None, SEED_AS_UTC_MS),
        (pd.Timestamp("2019-08-24 17:51:44.152"), SHANGHAI, SEED_MS),
        (pd.Timestamp("2019-08-24 17:51:44.152", tz=SHANGHAI), None, SEED_MS),
        (pd.Timestamp("2019-08-24 09:51:44.152", tz="UTC"), SHANGHAI, SEED_MS),
        (pd.Timestamp.min, None, -9223372036855),  # 1677-09-21T00:12:43.145224193, floored
        # ISO strings
        ("2019-08-24T09:51:44.152Z", None, SEED_MS),
        ("2019-08-24T09:51:44.152Z", SHANGHAI, SEED_MS),  # an offset wins over tz
        ("2019-08-24T17:51:44.152+08:00", None, SEED_MS),
        ("2019-08-24T17:51:44.152+08:00", "America/New_York", SEED_MS),
        ("2019-08-24 17:51:44.152", None, SEED_AS_UTC_MS),
        ("2019-08-24 17:51:44.152", SHANGHAI, SEED_MS),
        ("2019-08-24T17:51:44.152", SHANGHAI, SEED_MS),
        ("  2019-08-24T09:51:44.152Z\n", None, SEED_MS),  # surrounding blanks ignored
        ("2019-08-24", None, 1566604800000),  # a date-only string is midnight
        # DST edges, as java.time's LocalDateTime.atZone resolves them
        ("2021-03-14 02:30:00", "America/New_York", 1615707000000),  # gap: moved 1 h on
        ("2021-11-07 01:30:00", "America/New_York", 1636263000000),  # overlap: earlier offset
    ],
)
def test_to_millis(value: Any, tz: str | None, expected: int) -> None:
    """Exact epoch milliseconds for every accepted kind of value."""
    assert to_millis(value, tz=tz) == expected
    assert type(to_millis(value, tz=tz)) is int


@pytest.mark.parametrize(
    "value, expected",
    [
        # sub-millisecond parts are floored, as Instant.toEpochMilli does (also before 1970)
        ("2019-08-24T09:51:44.152999Z", SEED_MS),
        ("1970-01-01T00:00:00.0009Z", 0),
        ("1969-12-31T23:59:59.9999Z", -1),
        ("1969-12-31T23:59:59.998999Z", -2),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC), -1),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999001, tzinfo=dt.UTC), -1),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 998999, tzinfo=dt.UTC), -2),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), -1),  # naive, read as UTC
        (pd.Timestamp("2019-08-24 09:51:44.152999999", tz="UTC"), SEED_MS),
        (pd.Timestamp("1969-12-31 23:59:59.999999999", tz="UTC"), -1),  # 1 ns before epoch
        (pd.Timestamp("1969-12-31 23:59:59.9995", tz="UTC"), -1),
        (pd.Timestamp("1969-12-31 23:59:59.998000001"), -2),
        (pd.Timestamp("1970-01-01 00:00:00.000000001"), 0),
    ],
)
def test_sub_millisecond_floored(value: Any, expected: int) -> None:
    """Floor toward negative infinity, never truncation toward zero."""
    assert to_millis(value) == expected


# --- rejected timestamps ------------------------------------------------------------------

REJECTED = [
    (True, "bool"),
    (False, "bool"),
    (None, "None"),
    (1.5, "whole milliseconds"),
    (-0.25, "whole milliseconds"),
    (math.nan, "NaN"),
    (math.inf, "infinite"),
    (-math.inf, "infinite"),
    ("yesterday", "unparseable"),
    ("", "unparseable"),
    ("2019-13-01T00:00:00", "unparseable"),
    (pd.NaT, "NaT"),
    (dt.date(2019, 8, 24), "date"),
    (dt.time(17, 51), "unsupported"),
    ({"ts": 1}, "unsupported"),
    (2**63, "long range"),
    (MIN - 1, "long range"),
    (float(2**63), "long range"),
    (-1e19, "long range"),
]


@pytest.mark.parametrize("value, reason", REJECTED, ids=[repr(v) for v, _ in REJECTED])
def test_rejection_names_record_field_and_value(value: Any, reason: str) -> None:
    """Every rejection is an InputError naming the record index, the field and the value."""
    normalize = TimestampNormalizer()
    with pytest.raises(InputError) as info:
        normalize(value, index=7, field_name="createTime")
    message = str(info.value)
    assert "record 7" in message
    assert "createTime" in message
    assert repr(value) in message
    assert reason in message
    assert info.value.index == 7
    assert info.value.field == "createTime"


@pytest.mark.parametrize("value, reason", REJECTED, ids=[repr(v) for v, _ in REJECTED])
def test_to_millis_rejects(value: Any, reason: str) -> None:
    """to_millis raises the same InputError (no record index to name)."""
    with pytest.raises(InputError, match=reason):
        to_millis(value)


def test_unknown_time_zone_is_an_input_error() -> None:
    """A tz that is not an IANA name is bad input, so it must be an InputError naming it."""
    with pytest.raises(InputError, match="Not/AZone"):
        to_millis(dt.datetime(2019, 8, 24, 17, 51, 44, 152000), tz="Not/AZone")


# --- one stream, one kind -----------------------------------------------------------------


def test_stream_of_naive_then_aware_rejected_on_the_aware_one() -> None:
    """The first naive value fixes the kind; an aware one later is rejected."""
    normalize = TimestampNormalizer(tz=SHANGHAI)
    assert normalize("2019-08-24 17:51:44.152", index=0) == SEED_MS
    assert normalize(SEED_MS, index=1) == SEED_MS  # int ms has no kind
    aware = dt.datetime(2019, 8, 24, 9, 51, 44, 152000, tzinfo=dt.UTC)
    with pytest.raises(InputError) as info:
        normalize(aware, index=7, field_name="createTime")
    message = str(info.value)
    assert "mixed naive and aware" in message
    assert "record 7" in message
    assert "createTime" in message
    assert repr(aware) in message


def test_stream_of_aware_then_naive_rejected_on_the_naive_one() -> None:
    """The first aware value fixes the kind; a naive pandas Timestamp later is rejected."""
    normalize = TimestampNormalizer()
    assert normalize("2019-08-24T09:51:44.152Z", index=0) == SEED_MS
    assert normalize(pd.Timestamp("2019-08-24 17:51:44.152", tz=SHANGHAI), index=1) == SEED_MS
    naive = pd.Timestamp("2019-08-24 09:51:44.152")
    with pytest.raises(InputError) as info:
        normalize(naive, index=7, field_name="createTime")
    message = str(info.value)
    assert "this one is naive, earlier ones were aware" in message
    assert "record 7" in message
    assert "createTime" in message
    assert repr(naive) in message


def test_stream_of_one_kind_is_accepted() -> None:
    """All-naive and all-aware streams pass; ints may be mixed with either."""
    naive = TimestampNormalizer(tz=SHANGHAI)
    assert [
        naive(v)
        for v in (
            "2019-08-24 17:51:44.152",
            dt.datetime(2019, 8, 24, 17, 51, 44, 153000),
            pd.Timestamp("2019-08-24 17:51:44.154"),
            SEED_MS + 3,
        )
    ] == [SEED_MS, SEED_MS + 1, SEED_MS + 2, SEED_MS + 3]
    assert naive.first_kind == "naive"
    aware = TimestampNormalizer()
    assert [
        aware(v)
        for v in (
            "2019-08-24T09:51:44.152Z",
            "2019-08-24T17:51:44.153+08:00",
            pd.Timestamp("2019-08-24 09:51:44.154", tz="UTC"),
            SEED_MS + 3,
        )
    ] == [SEED_MS, SEED_MS + 1, SEED_MS + 2, SEED_MS + 3]
    assert aware.first_kind == "aware"


def test_to_millis_does_not_remember_kinds() -> None:
    """Each to_millis call is its own one-value stream."""
    assert to_millis("2019-08-24 17:51:44.152", tz=SHANGHAI) == SEED_MS
    assert to_millis("2019-08-24T09:51:44.152Z") == SEED_MS
