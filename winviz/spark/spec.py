"""What a Spark twin computes (``TwinSpec``, ``StateSpec``) and Spark's ``window()`` and late
filter. A ``TwinSpec`` stands for this query (``EventTimeWatermark``, ``TimeWindow``)::

    (spark.readStream.schema(...).option("maxFilesPerTrigger", 1).json(input_dir)
        .withColumn("event_time", timestamp_millis(ts_field))
        .withWatermark("event_time", f"{watermark_delay} milliseconds")
        .groupBy(window("event_time", f"{size} milliseconds", f"{slide} milliseconds"), key)
        .agg(count("*"), sum(value_field))
        .writeStream.outputMode(output_mode).foreachBatch(...))

``session_gap`` groups by ``session_window`` (``SessionWindow``). A tuple of delays is a union
of streams, each with its ``withWatermark``, combined by ``multipleWatermarkPolicy``. Drives:
``"per_batch"`` adds each trigger interval's file, then ``processAllAvailable()`` (a raised
watermark gets a no-data batch before the next data); ``"available_now"`` writes every file,
then runs ``trigger(availableNow=True)`` (one no-data batch, at the end).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from winviz.errors import InputError

DRIVES = ("per_batch", "available_now")
OUTPUT_MODES = ("append", "update")
AGGREGATES = ("count", "sum")
WATERMARK_POLICIES = ("min", "max")

Drive = Literal["per_batch", "available_now"]
OutputMode = Literal["append", "update"]


@dataclass(frozen=True)
class TwinSpec:
    """A windowed count/sum per key with a watermark (times in ms): ``size`` (and ``slide``) or
    ``session_gap``; one ``watermark_delay``, or one per stream of a union (``stream_field``
    names each record's stream). The ``*_field``s are dict keys or tuple indexes."""

    size: int | None = None
    watermark_delay: int | tuple[int, ...] = 0
    slide: int | None = None
    session_gap: int | None = None
    stream_field: str | int | None = None
    watermark_policy: Literal["min", "max"] = "min"
    key_field: str | int = "key"
    ts_field: str | int = "ts"
    value_field: str | int | None = None
    aggregate: Literal["count", "sum"] = "count"
    output_mode: OutputMode = "append"
    trigger_interval: int = 1000
    drive: Drive = "per_batch"

    def __post_init__(self) -> None:
        exactly_one = "give exactly one of size (time windows) and session_gap (session windows)"
        check((self.size is None) != (self.session_gap is None), exactly_one, "size", self.size)
        if self.is_session:
            positive_ms(self.session_gap, "session_gap")
            check(self.slide is None, "session windows have no slide", "slide", self.slide)
            only = "the session-window twin runs in append mode only"
            check(self.output_mode == "append", only, "output_mode", self.output_mode, "'append'")
        else:
            positive_ms(self.size, "size")
            positive_ms(self.window_slide, "slide")
            gaps = "a slide larger than the window leaves gaps"
            check(self.window_slide <= self.size, gaps, "slide", self.slide)
        positive_ms(self.trigger_interval, "trigger_interval")
        delay, union = self.watermark_delay, isinstance(self.watermark_delay, tuple)
        ints = "must be an int >= 0 (or a tuple of them, one per stream)"
        check(all(is_ms(d) and d >= 0 for d in self.delays), ints, "watermark_delay", delay)
        at_least_two = "a union needs one delay per stream, at least two"
        check(not union or len(self.delays) >= 2, at_least_two, "watermark_delay", delay)
        named = "a union of streams needs a stream_field naming each record's stream"
        check(not union or self.stream_field is not None, named, "stream_field", None)
        one_each = "stream_field needs one watermark delay per stream (a tuple)"
        check(union or self.stream_field is None, one_each, "watermark_delay", delay)
        one_of(self.watermark_policy, WATERMARK_POLICIES, "watermark_policy")
        one_of(self.output_mode, OUTPUT_MODES, "output_mode")
        one_of(self.drive, DRIVES, "drive")
        one_of(self.aggregate, AGGREGATES, "aggregate")
        needs = "aggregate='sum' needs a value_field"
        check(self.aggregate != "sum" or self.value_field is not None, needs, "value_field", None)

    @property
    def window_slide(self) -> int:
        """The slide in ms (``size`` for tumbling windows; 0 for session windows)."""
        if self.size is None:
            return 0
        return self.size if self.slide is None else self.slide

    @property
    def is_session(self) -> bool:
        return self.session_gap is not None

    @property
    def delays(self) -> tuple[int, ...]:
        """The watermark delay of each input stream (one for a single stream)."""
        d = self.watermark_delay
        return d if isinstance(d, tuple) else (d,)


def spark_windows(ts: int, size: int, slide: int) -> list[tuple[int, int]]:
    """The windows ``[start, end)`` Spark's ``window()`` puts event time ``ts`` in, earliest
    first (``TimeWindowing``, ``startTime`` 0: the last starts at ``ts - floorMod(ts, slide)``)."""
    last_start = ts - ts % slide  # Python's % is floorMod
    overlapping = -(-size // slide)
    starts = [last_start - i * slide for i in range(overlapping)]
    return [(s, s + size) for s in reversed(starts) if s <= ts < s + size]


def copies(spec: Any, ts: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` groups a row at ``ts`` goes into: its windows, its session ``[ts,
    ts + gap)``, or ``(ts, ts)`` for a state or join twin's row. Spark's late filter
    (``WatermarkSupport``) drops a copy with ``end <= late-events watermark``."""
    if type(spec) is not TwinSpec:
        return [(ts, ts)]
    if spec.session_gap is not None:
        return [(ts, ts + spec.session_gap)]
    return spark_windows(ts, spec.size, spec.window_slide)


def is_dropped(spec: Any, ts: int, late_watermark: int) -> bool:
    """Whether Spark's late filter drops the whole row: its last copy, which ends latest, is
    late."""
    return copies(spec, ts)[-1][1] <= late_watermark


def is_ms(value: object) -> bool:
    """Whether ``value`` is an int (not a bool) of milliseconds."""
    return isinstance(value, int) and not isinstance(value, bool)


def check(ok: bool, message: str, field: str, value: object, expected: str | None = None) -> None:
    """Raise ``InputError(message, field=field, value=value, expected=expected)`` unless ``ok``."""
    if not ok:
        raise InputError(message, field=field, value=value, expected=expected)


def positive_ms(value: object, name: str) -> None:
    check(is_ms(value) and value > 0, "must be a positive int (milliseconds)", name, value)  # type: ignore[operator]


def non_negative_ms(value: object, name: str) -> None:
    check(is_ms(value) and value >= 0, "must be an int >= 0 (milliseconds)", name, value)  # type: ignore[operator]


def one_of(value: object, allowed: tuple[str, ...], name: str) -> None:
    check(value in allowed, "unknown option", name, value, f"one of {allowed}")


STATE_APIS = ("transform_with_state", "apply_in_pandas_with_state")


@dataclass(frozen=True)
class StateSpec:
    """The ``KeyedProcessFunction`` twin of ``winviz.spark.state_twins``: per key, count (and
    sum) rows with one event-time timer at largest event time + ``timeout`` (ms), on ``api``."""

    timeout: int
    watermark_delay: int = 0
    api: Literal["transform_with_state", "apply_in_pandas_with_state"] = "transform_with_state"
    key_field: str | int = "key"
    ts_field: str | int = "ts"
    value_field: str | int | None = None
    trigger_interval: int = 1000
    drive: Drive = "per_batch"

    # TwinSpec's answers for the parts a state twin does not have (batches, model, query)
    stream_field = None
    watermark_policy = "min"
    output_mode = "append"

    def __post_init__(self) -> None:
        positive_ms(self.timeout, "timeout")
        positive_ms(self.trigger_interval, "trigger_interval")
        non_negative_ms(self.watermark_delay, "watermark_delay")
        one_of(self.api, STATE_APIS, "api")
        one_of(self.drive, DRIVES, "drive")

    @property
    def delays(self) -> tuple[int, ...]:
        return (self.watermark_delay,)
