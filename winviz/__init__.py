"""winviz — Flink's time semantics, exactly, in a small Python engine with a full trace.

``import winviz as wv`` gives the whole public API: the environment and streams, watermark
strategies, window assigners, triggers, evictors, functions, the trace, time helpers and the
key-group rules.
"""

from winviz import _charts
from winviz.batch_execution import RuntimeExecutionMode
from winviz.checkpoints import CheckpointConfig, CompletedCheckpoint, Restore
from winviz.datastream import (
    ConnectedStreams,
    DataStream,
    KeyedStream,
    StreamExecutionEnvironment,
    WindowedStream,
)
from winviz.errors import (
    AlignmentStallError,
    DamagedSnapshotError,
    FunctionNotSerializableError,
    FunctionResultError,
    IllegalStateError,
    InputError,
    SnapshotMismatchError,
    TimerLoopError,
    TraceFileError,
    UnsupportedOperationError,
    UserFunctionError,
    WinvizError,
)
from winviz.functions import (
    AggregateFunction,
    CoGroupFunction,
    Collector,
    CoProcessFunction,
    CountAggregate,
    FlatJoinFunction,
    JoinFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    OutputTag,
    PairJoinFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    ReduceFunction,
    SumAggregate,
    TimeDomain,
)
from winviz.joins import CoGroupedStreams, IntervalJoin, IntervalJoined, JoinedStreams, TaggedUnion
from winviz.keygroups import (
    assign_key_to_subtask,
    assign_to_key_group,
    compute_default_max_parallelism,
    java_hash_code,
    murmur_hash,
)
from winviz.operators.simple import Record
from winviz.runtime import JobExecutionResult
from winviz.time import MAX, MIN, TimestampNormalizer, hours, minutes, seconds, to_millis
from winviz.trace import SCHEMA_VERSION, Trace, TraceRecord
from winviz.trace.store import load_trace
from winviz.valve import StatusWatermarkValve
from winviz.watermarks import (
    BoundedOutOfOrdernessWatermarks,
    PunctuatedWatermarks,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
)
from winviz.why import Answer, why_dropped, why_fired, why_not_fired
from winviz.windows.assigners import (
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from winviz.windows.evictors import CountEvictor, DeltaEvictor, Evictor, TimeEvictor
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

_LAZY = {
    **dict.fromkeys(_charts.TOP_LEVEL, "winviz.viz"),  # charts (winviz.viz imports Altair)
    # the Spark twin (winviz.spark imports PySpark only when a session starts)
    "build_twin": "winviz.spark",
    "compare": "winviz.spark",
}


def __getattr__(name: str):
    """``wv.timeline``, ``wv.compare``… come from ``winviz.viz`` / ``winviz.spark``, imported
    only when asked for, so the engine itself never imports Altair or Spark."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'winviz' has no attribute {name!r}")


__all__ = [name for name in dir() if not name.startswith("_")] + list(_LAZY)
__version__ = "0.1.0"
