"""Window assigners (Flink's ``WindowAssigner``s): tumbling (``getWindowStartWithOffset(ts, offset,
size)``), sliding (``size / slide`` windows, the last from ``getWindowStartWithOffset(ts, offset,
slide)``), session (``[ts, ts + gap)``, merging) and global (one window, fired only by a custom
trigger). Processing-time variants use the current processing time; ``is_event_time`` decides
whether lateness applies (global windows: never late)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.errors import InputError
from winviz.time import MIN, duration_at_least, duration_ms, java_rem, wrap_long
from winviz.windows.triggers import (
    EndOfStreamTrigger,
    EventTimeTrigger,
    Factory,
    NeverTrigger,
    ProcessingTimeTrigger,
    Trigger,
)
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow

MAX_WINDOWS_PER_ELEMENT = 10_000
"""winviz refuses a sliding assigner that would put one element into more windows than this."""

NO_TIMESTAMP_MESSAGE = (
    "Record has Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic "
    "set to 'ProcessingTime', or did you forget to call "
    "'DataStream.assign_timestamps_and_watermarks(...)'?"
)


def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
    """``TimeWindow.getWindowStartWithOffset`` (Flink ≥ 1.12): the start of the window of
    ``window_size`` aligned to ``offset`` that contains ``timestamp``, for negative
    timestamps too. Java's truncating ``%`` and wrapping arithmetic are reproduced."""
    remainder = java_rem(wrap_long(timestamp - offset), window_size)
    if remainder < 0:
        return wrap_long(timestamp - (remainder + window_size))
    return wrap_long(timestamp - remainder)


class WindowAssigner(Factory):
    """Base of all assigners."""

    is_event_time: bool = True
    is_merging: bool = False

    def assign_windows(
        self, element: Any, timestamp: int | None, current_processing_time: int
    ) -> list[Any]:
        raise NotImplementedError

    def default_trigger(self) -> Trigger:
        """What each of Flink's time-window assigners returns: ``EventTimeTrigger`` for event
        time, else ``ProcessingTimeTrigger`` (abstract in Flink's ``WindowAssigner``)."""
        return EventTimeTrigger() if self.is_event_time else ProcessingTimeTrigger()

    def merge_windows(
        self, windows: list[TimeWindow], callback: Callable[[set[TimeWindow], TimeWindow], None]
    ) -> None:
        raise NotImplementedError


def _check_timestamp(timestamp: int | None) -> int:
    if timestamp is None or timestamp == MIN:
        raise InputError(NO_TIMESTAMP_MESSAGE, field="timestamp", value=timestamp)
    return timestamp


class TumblingEventTimeWindows(WindowAssigner):
    """Fixed-size, non-overlapping event-time windows (Flink's TumblingEventTimeWindows)."""

    def __init__(self, size: Any, offset: Any = 0) -> None:
        self.size = duration_ms(size, what="window size")
        self.offset = duration_ms(offset, what="window offset")
        if self.size <= 0 or abs(self.offset) >= self.size:
            raise InputError(
                f"{type(self).__name__} parameters must satisfy abs(offset) < size "
                f"(got size={self.size}, offset={self.offset})",
                field="size" if self.size <= 0 else "offset",
                value=self.size if self.size <= 0 else self.offset,
                expected="size > 0 and abs(offset) < size",
            )
        self._last: TimeWindow | None = None

    def _window_for(self, t: int) -> list[Any]:
        last = self._last  # consecutive elements mostly share a window: reuse the object
        if last is not None and last.start <= t < last.end:
            return [last]
        start = get_window_start_with_offset(t, self.offset, self.size)
        self._last = w = TimeWindow(start, wrap_long(start + self.size))
        return [w]

    def assign_windows(self, element, timestamp, current_processing_time):
        if timestamp is None or timestamp == MIN:
            _check_timestamp(timestamp)
        return self._window_for(timestamp)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, offset={self.offset})"


class TumblingProcessingTimeWindows(TumblingEventTimeWindows):
    """Tumbling windows over the operator's processing time."""

    is_event_time = False

    def assign_windows(self, element, timestamp, current_processing_time):
        return self._window_for(current_processing_time)


class SlidingEventTimeWindows(WindowAssigner):
    """Windows of ``size`` every ``slide`` (Flink's SlidingEventTimeWindows)."""

    def __init__(self, size: Any, slide: Any, offset: Any = 0) -> None:
        self.size = duration_ms(size, what="window size")
        self.slide = duration_ms(slide, what="window slide")
        self.offset = duration_ms(offset, what="window offset")
        if abs(self.offset) >= self.slide or self.size <= 0:
            bad = (
                ("size", self.size)
                if self.size <= 0
                else (("slide", self.slide) if self.slide <= 0 else ("offset", self.offset))
            )
            raise InputError(
                f"{type(self).__name__} parameters must satisfy abs(offset) < slide and size > 0 "
                f"(got size={self.size}, slide={self.slide}, offset={self.offset})",
                field=bad[0],
                value=bad[1],
                expected="size > 0, slide > 0, abs(offset) < slide",
            )
        per_element = -(-self.size // self.slide)
        if per_element > MAX_WINDOWS_PER_ELEMENT:
            raise InputError(
                f"size {self.size} / slide {self.slide} puts every element into {per_element} "
                f"windows, more than winviz's limit of {MAX_WINDOWS_PER_ELEMENT}",
                field="slide",
                value=self.slide,
                expected=f"slide >= size / {MAX_WINDOWS_PER_ELEMENT}",
            )

    def _windows_for(self, t: int) -> list[Any]:
        size, slide = self.size, self.slide
        windows = []
        start = get_window_start_with_offset(t, self.offset, slide)
        while start > wrap_long(t - size):  # Java's long arithmetic, overflow included
            windows.append(TimeWindow(start, wrap_long(start + size)))
            start = wrap_long(start - slide)
        return windows

    def assign_windows(self, element, timestamp, current_processing_time):
        return self._windows_for(_check_timestamp(timestamp))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, slide={self.slide}, offset={self.offset})"


class SlidingProcessingTimeWindows(SlidingEventTimeWindows):
    """Sliding windows over the operator's processing time."""

    is_event_time = False

    def assign_windows(self, element, timestamp, current_processing_time):
        return self._windows_for(current_processing_time)


class EventTimeSessionWindows(WindowAssigner):
    """Session windows: ``[ts, ts + gap)`` per element, merged when they overlap or touch."""

    is_merging = True

    def __init__(self, gap: Any = None, gap_extractor: Callable[[Any], Any] | None = None) -> None:
        self.gap_extractor = gap_extractor
        self.gap = None if gap is None else duration_ms(gap, what="session gap")
        if gap_extractor is None and (self.gap is None or self.gap <= 0):
            raise InputError(
                f"{type(self).__name__} parameters must satisfy 0 < size",
                field="gap",
                value=self.gap,
                expected="gap > 0",
            )

    @classmethod
    def with_gap(cls, gap: Any) -> EventTimeSessionWindows:
        return cls(gap)

    @classmethod
    def with_dynamic_gap(cls, extractor: Callable[[Any], Any]) -> EventTimeSessionWindows:
        """Flink's ``DynamicEventTimeSessionWindows``: the gap is a function of the element."""
        return cls(gap_extractor=extractor)

    def _gap_for(self, element: Any) -> int:
        if self.gap_extractor is None:
            return self.gap  # type: ignore[return-value]
        return duration_at_least(
            self.gap_extractor(element),
            1,
            "dynamic session gap",
            "Dynamic session time gap must satisfy 0 < gap",
            field="gap",
            expected="gap > 0",
        )

    def assign_windows(self, element, timestamp, current_processing_time):
        if timestamp is None:
            _check_timestamp(timestamp)
        return [TimeWindow(timestamp, wrap_long(timestamp + self._gap_for(element)))]

    def merge_windows(self, windows, callback):
        """``TimeWindow.mergeWindows``: sort by start, sweep, and report every group of more
        than one overlapping-or-touching window with the window that covers the group."""
        current: TimeWindow | None = None
        group: list[TimeWindow] = []
        groups: list[tuple[TimeWindow, list[TimeWindow]]] = []
        for candidate in sorted(windows, key=lambda w: w.start):
            if current is None:
                current, group = candidate, [candidate]
            elif current.intersects(candidate):
                current = current.cover(candidate)
                group.append(candidate)
            else:
                groups.append((current, group))
                current, group = candidate, [candidate]
        if current is not None:
            groups.append((current, group))
        for cover, members in groups:
            unique = list(dict.fromkeys(members))
            if len(unique) > 1:
                callback(unique, cover)

    def __repr__(self) -> str:
        gap = "dynamic" if self.gap_extractor else self.gap
        return f"{type(self).__name__}(gap={gap})"


class ProcessingTimeSessionWindows(EventTimeSessionWindows):
    """Session windows over the operator's processing time."""

    is_event_time = False

    def assign_windows(self, element, timestamp, current_processing_time):
        now = current_processing_time
        return [TimeWindow(now, wrap_long(now + self._gap_for(element)))]


class GlobalWindows(WindowAssigner):
    """One global window per key; its default trigger never fires (Flink's GlobalWindows)."""

    is_event_time = False

    def __init__(self, trigger: Trigger | None = None) -> None:
        self._default = trigger

    @classmethod
    def create_with_end_of_stream_trigger(cls) -> GlobalWindows:
        """Global windows that fire once, at the end of a bounded input."""
        return cls(EndOfStreamTrigger())

    def assign_windows(self, element, timestamp, current_processing_time):
        return [GLOBAL_WINDOW]

    def default_trigger(self) -> Trigger:
        return self._default or NeverTrigger()

    def __repr__(self) -> str:
        return "GlobalWindows()"
