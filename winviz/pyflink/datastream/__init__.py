"""PyFlink's ``pyflink.datastream`` over winviz's engine (see docs/pyflink.md)."""

from __future__ import annotations

from typing import Any

from winviz.pyflink.datastream.data_stream import (
    AllWindowedStream,
    CloseableIterator,
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
    WindowedStream,
)
from winviz.pyflink.datastream.execution_mode import RuntimeExecutionMode
from winviz.pyflink.datastream.functions import (
    AggregateFunction,
    AllWindowFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    TimeDomain,
    WindowFunction,
)
from winviz.pyflink.datastream.output_tag import OutputTag
from winviz.pyflink.datastream.stream_execution_environment import (
    ExecutionConfig,
    StreamExecutionEnvironment,
)
from winviz.pyflink.datastream.timerservice import TimerService
from winviz.pyflink.datastream.window import (
    CountWindow,
    GlobalWindow,
    MergingWindowAssigner,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)
from winviz.pyflink.errors import module_getattr

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AllWindowedStream",
    "CloseableIterator",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "DataStreamSink",
    "ExecutionConfig",
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "KeySelector",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "MergingWindowAssigner",
    "OutputTag",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "StreamExecutionEnvironment",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]

_NOT_MODELLED = {
    "BroadcastStream": "connect two streams with connect().key_by(...) and keep shared "
    "data in keyed state",
    "BroadcastConnectedStream": "connect two streams with connect().key_by(...)",
    "BroadcastProcessFunction": "use a KeyedCoProcessFunction on connect().key_by(...)",
    "KeyedBroadcastProcessFunction": "use a KeyedCoProcessFunction on connect().key_by(...)",
    "AsyncDataStream": "call the service in a map (winviz runs it synchronously)",
    "AsyncFunction": "call the service in a map (winviz runs it synchronously)",
    "SourceFunction": "use from_collection(...) or from_source(NumberSequenceSource(...))",
    "SinkFunction": "use print(), execute_and_collect() or FileSink.for_row_format(...)",
    "Partitioner": "use key_by(), rebalance() or forward()",
    "EmbeddedRocksDBStateBackend": "leave the default state backend: it changes no result",
}

__getattr__: Any = module_getattr(
    "pyflink.datastream",
    _NOT_MODELLED,
    default="winviz.pyflink models PyFlink's DataStream API over winviz's engine; this "
    "name of pyflink.datastream is not part of it (see docs/pyflink.md for what is)",
)
