"""PyFlink's ``pyflink.datastream.window``: window assigners, windows and triggers, taking
``Time`` / ``Duration`` where PyFlink does, over winviz's (``winviz.windows``).

Count windows are Java Flink's: ``count_window(n)`` is ``GlobalWindows`` with
``PurgingTrigger.of(CountTrigger.of(n))``, ``count_window(n, s)`` ``GlobalWindows`` with
``CountEvictor.of(n)`` and ``CountTrigger.of(s)`` (``KeyedStream.countWindow``); PyFlink's
Python operator numbers its windows (``CountWindow(id)``), Java's window is the
``GlobalWindow``, which is what a window function receives here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Self

import winviz as wv
from winviz.pyflink.common.time import millis
from winviz.pyflink.datastream.functions import method_of

Window = object
TimeWindow = wv.TimeWindow
GlobalWindow = wv.GlobalWindow
WindowAssigner = wv.WindowAssigner
MergingWindowAssigner = wv.WindowAssigner
Trigger = wv.Trigger
TriggerResult = wv.TriggerResult


class CountWindow:
    """PyFlink's count window (its id); Java Flink's count windows are ``GlobalWindow``s."""

    def __init__(self, id: int) -> None:
        self.id = id

    def max_timestamp(self) -> int:
        return wv.MAX

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountWindow) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


class SessionWindowTimeGapExtractor(ABC):
    """``extract(element)``: the session gap (ms) after this element."""

    @abstractmethod
    def extract(self, element: Any) -> int:
        pass


def _offset(offset: Any) -> int:
    return 0 if offset is None else millis(offset, "offset")


class TumblingEventTimeWindows(wv.TumblingEventTimeWindows):
    @classmethod
    def of(cls, size: Any, offset: Any = None) -> TumblingEventTimeWindows:  # type: ignore[override]
        return cls(millis(size, "size"), _offset(offset))


class TumblingProcessingTimeWindows(wv.TumblingProcessingTimeWindows):
    @classmethod
    def of(cls, size: Any, offset: Any = None) -> TumblingProcessingTimeWindows:  # type: ignore[override]
        return cls(millis(size, "size"), _offset(offset))


class SlidingEventTimeWindows(wv.SlidingEventTimeWindows):
    @classmethod
    def of(cls, size: Any, slide: Any, offset: Any = None) -> SlidingEventTimeWindows:  # type: ignore[override]
        return cls(millis(size, "size"), millis(slide, "slide"), _offset(offset))


class SlidingProcessingTimeWindows(wv.SlidingProcessingTimeWindows):
    @classmethod
    def of(cls, size: Any, slide: Any, offset: Any = None) -> SlidingProcessingTimeWindows:  # type: ignore[override]
        return cls(millis(size, "size"), millis(slide, "slide"), _offset(offset))


class _SessionGaps:
    """PyFlink's session-window factories, alike for both time domains: a gap (a ``Time`` or
    ms) or a ``SessionWindowTimeGapExtractor`` (or a function)."""

    @classmethod
    def with_gap(cls, size: Any) -> Self:
        return cls(millis(size, "size"))  # type: ignore[call-arg]

    @classmethod
    def with_dynamic_gap(cls, extractor: Any) -> Self:
        return cls(gap_extractor=method_of(extractor, "extract"))  # type: ignore[call-arg]


class EventTimeSessionWindows(_SessionGaps, wv.EventTimeSessionWindows):
    pass


class ProcessingTimeSessionWindows(_SessionGaps, wv.ProcessingTimeSessionWindows):
    pass


class DynamicEventTimeSessionWindows(EventTimeSessionWindows):
    pass


class DynamicProcessingTimeSessionWindows(ProcessingTimeSessionWindows):
    pass


class GlobalWindows(wv.GlobalWindows):
    pass


class CountTumblingWindowAssigner:
    """``count_window(size)``; applied as Java's ``countWindow`` (see the module doc)."""

    def __init__(self, window_size: int, window_slide: int = 0) -> None:
        if window_size <= 0:
            raise ValueError(f"window_size must be > 0, not {window_size}")
        self.window_size = window_size
        self.window_slide = window_slide

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        return CountTumblingWindowAssigner(window_size)

    def apply(self, keyed: Any) -> Any:
        """The winviz windowed stream of ``keyed`` (a winviz ``KeyedStream``)."""
        windowed = keyed.window(wv.GlobalWindows.create())
        if self.window_slide:
            return windowed.evictor(wv.CountEvictor.of(self.window_size)).trigger(
                wv.CountTrigger.of(self.window_slide)
            )
        return windowed.trigger(wv.PurgingTrigger.of(wv.CountTrigger.of(self.window_size)))


class CountSlidingWindowAssigner(CountTumblingWindowAssigner):
    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:  # type: ignore[override]
        if window_slide <= 0:
            raise ValueError(f"window_slide must be > 0, not {window_slide}")
        return CountSlidingWindowAssigner(window_size, window_slide)


class EventTimeTrigger(wv.EventTimeTrigger):
    pass


class ProcessingTimeTrigger(wv.ProcessingTimeTrigger):
    pass


class CountTrigger(wv.CountTrigger):
    pass


class PurgingTrigger(wv.PurgingTrigger):
    pass


class NeverTrigger(wv.NeverTrigger):
    @staticmethod
    def create() -> NeverTrigger:
        return NeverTrigger()


class ContinuousEventTimeTrigger(wv.ContinuousEventTimeTrigger):
    @classmethod
    def of(cls, interval: Any) -> ContinuousEventTimeTrigger:  # type: ignore[override]
        return cls(millis(interval, "interval"))


class ContinuousProcessingTimeTrigger(wv.ContinuousProcessingTimeTrigger):
    @classmethod
    def of(cls, interval: Any) -> ContinuousProcessingTimeTrigger:  # type: ignore[override]
        return cls(millis(interval, "interval"))


__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]
