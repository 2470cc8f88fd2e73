"""Watermark strategies and generators (Flink's ``WatermarkStrategy`` / ``WatermarkGenerator``).

A watermark ``W`` says "no more elements with timestamp <= W are expected". Generators see every
event (``on_event``) and are asked every ``auto_watermark_interval`` ms (``on_periodic_emit``):
bounded out-of-orderness ``B`` gives ``max_ts - B - 1`` (from ``Long.MIN_VALUE``), monotonous
timestamps the same with ``B = 0``, punctuated a user function's watermark at once;
``with_idleness(timeout)`` marks the output idle after ``timeout`` ms without events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from winviz.alignment import DEFAULT_UPDATE_INTERVAL, WatermarkAlignmentParams
from winviz.arguments import checked_function
from winviz.errors import ArgumentTypeError
from winviz.time import MIN, duration_at_least, duration_ms


class WatermarkOutput:
    """Where a generator emits (Flink's ``WatermarkOutput``)."""

    def emit_watermark(self, watermark: int) -> None:
        raise NotImplementedError

    def mark_idle(self) -> None:
        self.set_idle(True)

    def mark_active(self) -> None:
        self.set_idle(False)

    def set_idle(self, idle: bool) -> None:
        """What ``mark_idle`` (True) and ``mark_active`` (False) do."""
        raise NotImplementedError


class WatermarkGenerator:
    """Base generator: subclasses override ``on_event`` and/or ``on_periodic_emit``."""

    def on_event(self, event: Any, timestamp: int, output: WatermarkOutput) -> None:
        pass

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        pass


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator):
    """``max_ts - bound - 1`` on every periodic emit (``Long.MIN_VALUE`` before any event)."""

    def __init__(self, max_out_of_orderness: Any) -> None:
        self.bound = bound = duration_at_least(
            max_out_of_orderness,
            0,
            "max out-of-orderness",
            "maxOutOfOrderness cannot be negative",
            field="max_out_of_orderness",
        )
        # start so that the first watermark is exactly Long.MIN_VALUE
        self.max_timestamp = MIN + bound + 1

    def on_event(self, event, timestamp, output):
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp

    def on_periodic_emit(self, output):
        output.emit_watermark(self.max_timestamp - self.bound - 1)


class AscendingTimestampsWatermarks(BoundedOutOfOrdernessWatermarks):
    """Monotonous timestamps: bounded out-of-orderness with bound 0."""

    def __init__(self) -> None:
        super().__init__(0)


class PunctuatedWatermarks(WatermarkGenerator):
    """Emits ``fn(event, timestamp)`` on every event where it is not None."""

    def __init__(self, fn: Callable[[Any, int], int | None]) -> None:
        self.fn = fn

    def on_event(self, event, timestamp, output):
        wm = self.fn(event, timestamp)
        if wm is not None:
            output.emit_watermark(wm)


class NoWatermarksGenerator(WatermarkGenerator):
    """Emits nothing (``WatermarkStrategy.no_watermarks()``)."""


class WatermarksWithIdleness(WatermarkGenerator):
    """Flink's ``WatermarksWithIdleness`` / ``IdlenessTimer``: each periodic emit checks for events
    since the last; without any the first check starts the timer, and the output is marked idle once
    ``now - start > timeout``. While idle, the wrapped generator is not asked."""

    def __init__(
        self, watermarks: WatermarkGenerator, timeout: Any, clock: Callable[[], int]
    ) -> None:
        self.watermarks = watermarks
        self.timeout = _idle_timeout(timeout)
        self.clock = clock
        self.counter = 0
        self.last_counter = 0
        self.start_of_inactivity: int | None = None
        self.is_idle_now = False

    def on_event(self, event, timestamp, output):
        self.watermarks.on_event(event, timestamp, output)
        self.counter += 1
        self.is_idle_now = False

    def check_if_idle(self) -> bool:
        if self.counter != self.last_counter:
            self.last_counter = self.counter
            self.start_of_inactivity = None
            return False
        if self.start_of_inactivity is None:
            self.start_of_inactivity = self.clock()
            return False
        return self.clock() - self.start_of_inactivity > self.timeout

    def on_periodic_emit(self, output):
        if self.check_if_idle():
            if not self.is_idle_now:  # mark idle once per idle period
                output.mark_idle()
                self.is_idle_now = True
        else:
            self.watermarks.on_periodic_emit(output)


class IngestionTimeAssigner:
    """Stamps each record with its arrival (processing) time: ingestion time."""


TimestampAssigner = Callable[[Any, int | None], Any]


@dataclass(frozen=True)
class WatermarkStrategy:
    """How a stream gets timestamps and watermarks (Flink's ``WatermarkStrategy``): a ``for_*``
    class method, refined with ``with_timestamp_assigner`` / ``with_idleness``."""

    generator_factory: Callable[[], WatermarkGenerator]
    timestamp_assigner: Any = None
    idle_timeout: int | None = None
    name: str = "custom"
    alignment: WatermarkAlignmentParams | None = None
    """Set by ``with_watermark_alignment`` (``winviz.alignment``)."""

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: Any) -> WatermarkStrategy:
        bound = duration_ms(max_out_of_orderness, what="max out-of-orderness")
        BoundedOutOfOrdernessWatermarks(bound)  # validate now, not at run time
        return cls(
            lambda: BoundedOutOfOrdernessWatermarks(bound),
            name=f"bounded_out_of_orderness({bound})",
        )

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        return cls(AscendingTimestampsWatermarks, name="monotonous")

    @classmethod
    def for_punctuated(cls, fn: Callable[[Any, int], int | None]) -> WatermarkStrategy:
        """A punctuated generator: ``fn(event, timestamp)`` returns a watermark or None. A
        ``fn`` that is not a function of two arguments is refused here (``ArgumentTypeError``),
        not by the first record at run time."""
        _function_of(
            fn,
            2,
            "for_punctuated(fn)",
            "fn",
            "a function (event, timestamp) returning a watermark (int ms) or None",
        )
        return cls(lambda: PunctuatedWatermarks(fn), name="punctuated")

    @classmethod
    def for_generator(cls, factory: Callable[[], WatermarkGenerator]) -> WatermarkStrategy:
        """Flink's ``forGenerator``: ``factory()`` makes a fresh ``WatermarkGenerator`` for each
        run, partition and subtask; it must be callable without arguments."""
        _function_of(
            factory,
            0,
            "for_generator(factory)",
            "factory",
            "a function of no arguments returning a WatermarkGenerator (e.g. its class)",
        )
        return cls(factory, name=getattr(factory, "__name__", "generator"))

    @classmethod
    def no_watermarks(cls) -> WatermarkStrategy:
        return cls(NoWatermarksGenerator, name="no_watermarks")

    @classmethod
    def ingestion_time(cls) -> WatermarkStrategy:
        """Ingestion time: timestamps are arrival times, watermarks follow them."""
        return cls(AscendingTimestampsWatermarks, IngestionTimeAssigner(), name="ingestion_time")

    def with_timestamp_assigner(self, assigner: TimestampAssigner) -> WatermarkStrategy:
        """Flink's ``withTimestampAssigner``: ``assigner(element, record_timestamp)`` returns the
        timestamp (int ms, datetime, ISO text); anything that cannot take those two arguments is
        refused here (``ArgumentTypeError``)."""
        _function_of(
            assigner,
            2,
            "with_timestamp_assigner(assigner)",
            "assigner",
            "a function (element, record_timestamp) returning the element's timestamp (int ms, "
            "a datetime or an ISO text), e.g. lambda e, _: e['ts']",
        )
        return replace(self, timestamp_assigner=assigner)

    def with_idleness(self, timeout: Any) -> WatermarkStrategy:
        return replace(self, idle_timeout=_idle_timeout(timeout))

    def with_watermark_alignment(
        self, group: str, max_drift: Any, update_interval: Any = DEFAULT_UPDATE_INTERVAL
    ) -> WatermarkStrategy:
        """Flink's ``withWatermarkAlignment(group, maxAllowedWatermarkDrift, updateInterval)``: a
        source read with this strategy pauses while its watermark is more than ``max_drift`` ahead
        of the slowest of ``group`` (applied right after a source only; ``winviz.alignment``)."""
        return replace(
            self, alignment=WatermarkAlignmentParams.of(group, max_drift, update_interval)
        )

    def create_generator(self, clock: Callable[[], int]) -> WatermarkGenerator:
        gen = self.generator_factory()
        missing = [
            m for m in ("on_event", "on_periodic_emit") if not callable(getattr(gen, m, None))
        ]
        if missing:
            raise ArgumentTypeError(
                f"the generator factory of WatermarkStrategy {self.name!r} returned "
                f"{gen!r} ({type(gen).__name__}), which has no {missing[0]}()",
                field="factory",
                value=gen,
                expected="a WatermarkGenerator (with on_event() and on_periodic_emit())",
            )
        if self.idle_timeout is not None:
            gen = WatermarksWithIdleness(gen, self.idle_timeout, clock)
        return gen


def _idle_timeout(timeout: Any) -> int:
    return duration_at_least(
        timeout, 1, "idleness timeout", "idleness timeout must be > 0", field="idle_timeout"
    )


def _function_of(fn: Any, arity: int, what: str, field: str, expected: str) -> None:
    """Refuse ``fn`` unless it can be called with ``arity`` positional arguments (an object
    with ``extract_timestamp``: told to pass that method)."""
    method = callable(getattr(fn, "extract_timestamp", None))
    hint = f"; pass its method: {what.split('(')[0]}(obj.extract_timestamp)" if method else ""
    checked_function(fn, what, field, expected, arity, it="it", hint=hint)
