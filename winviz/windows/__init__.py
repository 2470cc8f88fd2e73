"""Windows, window assigners, triggers, evictors and the merging window set."""

from winviz.windows.assigners import (
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
    get_window_start_with_offset,
)
from winviz.windows.evictors import (
    CountEvictor,
    DeltaEvictor,
    Evictor,
    TimeEvictor,
    TimestampedValue,
)
from winviz.windows.merging import MergingWindowSet
from winviz.windows.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    DeltaTrigger,
    EndOfStreamTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from winviz.windows.window import GLOBAL_WINDOW, GlobalWindow, TimeWindow

__all__ = [
    "GLOBAL_WINDOW",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountTrigger",
    "DeltaEvictor",
    "DeltaTrigger",
    "EndOfStreamTrigger",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "GlobalWindow",
    "GlobalWindows",
    "MergingWindowSet",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeEvictor",
    "TimeWindow",
    "TimestampedValue",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
    "get_window_start_with_offset",
]
