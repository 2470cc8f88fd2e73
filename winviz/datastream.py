"""The fluent API: Flink's DataStream API in snake_case.

Calls build a job graph of ``Node``s; nothing runs until ``env.execute()``, which builds fresh
operators from the graph (so one pipeline can be executed again and again, e.g. by a slider)
and hands them to the runtime::

    env = StreamExecutionEnvironment()
    (env.from_collection(events, arrival_times=arrivals)
        .assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness(500)
                                          .with_timestamp_assigner(lambda e, _: e["ts"]))
        .key_by(lambda e: e["user"])
        .window(TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .side_output_late_data(late)
        .reduce(lambda a, b: {**a, "n": a["n"] + b["n"]})
        .sink_to("totals"))
    result = env.execute()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from winviz.errors import InputError
from winviz.functions import AggregateFunction, KeyedProcessFunction, OutputTag
from winviz.time import TimestampNormalizer, duration_ms, in_long_range
from winviz.watermarks import WatermarkStrategy
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger


@dataclass
class Node:
    """One operator of the job graph: what to build and where its input comes from."""

    kind: str
    name: str
    inputs: list[Node]
    params: dict[str, Any] = field(default_factory=dict)
    side_of: OutputTag | None = None  # a side-output stream of its input node

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


class StreamExecutionEnvironment:
    """Where a job is defined and executed (Flink's ``StreamExecutionEnvironment``).

    ``auto_watermark_interval`` — ms of simulated processing time between periodic watermark
    emissions (0 turns periodic emission off). ``trace`` — record a trace (on by default).
    ``tz`` — the time zone naive timestamps are read in (UTC when None).
    """

    def __init__(
        self, *, auto_watermark_interval: int = 200, trace: bool = True, tz: str | None = None
    ) -> None:
        if auto_watermark_interval < 0:
            raise InputError(
                "auto_watermark_interval must be >= 0",
                field="auto_watermark_interval",
                value=auto_watermark_interval,
            )
        self.auto_watermark_interval = auto_watermark_interval
        self.trace_enabled = trace
        self.tz = tz
        self.nodes: list[Node] = []
        self._names: dict[str, int] = {}

    # -- naming ---------------------------------------------------------------------------

    def _unique(self, base: str) -> str:
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n + 1}"

    def _add(self, kind: str, base: str, inputs: list[Node], **params: Any) -> Node:
        node = Node(kind, self._unique(base), inputs, params)
        self.nodes.append(node)
        return node

    def set_auto_watermark_interval(self, interval: Any) -> StreamExecutionEnvironment:
        self.auto_watermark_interval = duration_ms(interval, what="auto_watermark_interval")
        return self

    # -- sources --------------------------------------------------------------------------

    def from_collection(
        self,
        data: Iterable[Any],
        *,
        arrival_times: Sequence[Any] | None = None,
        arrival_interval: int = 0,
        timestamps: Sequence[Any] | None = None,
        name: str = "source",
    ) -> DataStream:
        """A bounded source. Record ``i`` arrives at ``arrival_times[i]`` (processing time,
        non-decreasing), or at ``i * arrival_interval`` when no arrival times are given.
        ``timestamps`` optionally gives each record a source timestamp (like Kafka's)."""
        values = list(data)
        norm = TimestampNormalizer(self.tz)
        if arrival_times is None:
            arrivals = [i * arrival_interval for i in range(len(values))]
        else:
            arrivals = [
                norm(a, index=i, field_name="arrival_time") for i, a in enumerate(arrival_times)
            ]
            if len(arrivals) != len(values):
                raise InputError(
                    f"{len(arrivals)} arrival times for {len(values)} records",
                    field="arrival_times",
                    expected="one arrival time per record",
                )
        for i in range(1, len(arrivals)):
            if arrivals[i] < arrivals[i - 1]:
                raise InputError(
                    "arrival times must not decrease (processing time only moves "
                    f"forward); the previous record arrived at {arrivals[i - 1]}",
                    index=i,
                    field="arrival_time",
                    value=arrivals[i],
                )
        stamps: list[int | None] = [None] * len(values)
        if timestamps is not None:
            if len(timestamps) != len(values):
                raise InputError(
                    f"{len(timestamps)} timestamps for {len(values)} records",
                    field="timestamps",
                    expected="one timestamp per record",
                )
            stamps = [norm(t, index=i, field_name="timestamp") for i, t in enumerate(timestamps)]
        # (arrival, index, value, timestamp): the form the runtime hands to operators
        records = list(zip(arrivals, range(len(values)), values, stamps, strict=True))
        return DataStream(self, self._add("source", name, [], records=records))

    def from_pandas(
        self,
        frame: Any,
        *,
        arrival_column: str | None = None,
        arrival_interval: int = 0,
        name: str = "source",
    ) -> DataStream:
        """Each row becomes a dict record; ``arrival_column`` (optional) gives arrival times."""
        rows = frame.to_dict("records")
        arrivals = None
        if arrival_column is not None:
            if arrival_column not in frame.columns:
                raise InputError(
                    f"no column {arrival_column!r}",
                    field="arrival_column",
                    value=arrival_column,
                    expected=f"one of {list(frame.columns)}",
                )
            arrivals = [r.pop(arrival_column) for r in rows]
        return self.from_collection(
            rows, arrival_times=arrivals, arrival_interval=arrival_interval, name=name
        )

    # -- run ------------------------------------------------------------------------------

    def execute(self, job_name: str = "winviz job", *, until_processing_time: Any = None):
        """Run the job to the end of its bounded input; returns a ``JobExecutionResult``.

        ``until_processing_time`` moves the simulated clock on to that time before the end of
        input (processing-time timers due by then fire; Flink never fires processing-time
        timers that are still pending when a bounded job ends)."""
        from winviz.runtime import JobRuntime

        until = None
        if until_processing_time is not None:
            until = TimestampNormalizer(self.tz)(
                until_processing_time, field_name="until_processing_time"
            )
            if not in_long_range(until):
                raise InputError("out of range", value=until)
        return JobRuntime(self, job_name).run(until)


class DataStream:
    """A stream of records (Flink's ``DataStream`` / ``SingleOutputStreamOperator``)."""

    def __init__(self, env: StreamExecutionEnvironment, node: Node) -> None:
        self.env = env
        self.node = node

    def name(self, name: str) -> DataStream:
        """Rename the operator that produces this stream (its name in the trace)."""
        self.node.name = self.env._unique(name)
        return self

    def _then(self, kind: str, base: str, **params: Any) -> DataStream:
        return DataStream(self.env, self.env._add(kind, base, [self.node], **params))

    def map(self, fn: Callable[[Any], Any]) -> DataStream:
        return self._then("map", "map", fn=fn)

    def filter(self, fn: Callable[[Any], bool]) -> DataStream:
        return self._then("filter", "filter", fn=fn)

    def flat_map(self, fn: Callable[[Any], Iterable[Any]]) -> DataStream:
        return self._then("flat_map", "flat_map", fn=fn)

    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        if not isinstance(strategy, WatermarkStrategy):
            raise InputError("expected a WatermarkStrategy", field="strategy", value=strategy)
        return self._then("watermarks", "watermarks", strategy=strategy)

    def key_by(self, key_selector: Callable[[Any], Any]) -> KeyedStream:
        return KeyedStream(self, key_selector)

    def window_all(self, assigner: WindowAssigner) -> WindowedStream:
        """Windows over the whole (non-keyed) stream: every record has the same key (None)."""
        return WindowedStream(self, lambda _: None, assigner)

    def get_side_output(self, tag: OutputTag) -> DataStream:
        node = self.env._add("side", f"side:{tag.id}", [self.node], tag=tag)
        node.side_of = tag
        return DataStream(self.env, node)

    def sink_to(self, name: str) -> DataStream:
        """Collect this stream into ``result.outputs[name]``."""
        self.env._add("sink", name, [self.node])
        return self


class KeyedStream:
    """A stream partitioned by key (Flink's ``KeyedStream``)."""

    def __init__(self, stream: DataStream, key_selector: Callable[[Any], Any]) -> None:
        self.stream = stream
        self.key_selector = key_selector

    def process(self, function: KeyedProcessFunction) -> DataStream:
        return self.stream._then(
            "process", "process", key_selector=self.key_selector, function=function
        )

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        return WindowedStream(self.stream, self.key_selector, assigner)

    def reduce(self, fn: Callable[[Any, Any], Any]) -> DataStream:
        """A rolling reduce per key (no windows)."""
        return self.stream._then("rolling_reduce", "reduce", key_selector=self.key_selector, fn=fn)


class WindowedStream:
    """A keyed stream cut into windows (Flink's ``WindowedStream``)."""

    def __init__(
        self, stream: DataStream, key_selector: Callable[[Any], Any], assigner: WindowAssigner
    ) -> None:
        if not isinstance(assigner, WindowAssigner):
            raise InputError("expected a WindowAssigner", field="assigner", value=assigner)
        self.stream = stream
        self.params: dict[str, Any] = {
            "key_selector": key_selector,
            "assigner": assigner,
            "trigger": None,
            "evictor": None,
            "allowed_lateness": 0,
            "late_data_tag": None,
        }

    def trigger(self, trigger: Trigger) -> WindowedStream:
        if not isinstance(trigger, Trigger):
            raise InputError("expected a Trigger", field="trigger", value=trigger)
        self.params["trigger"] = trigger
        return self

    def evictor(self, evictor: Evictor) -> WindowedStream:
        if not isinstance(evictor, Evictor):
            raise InputError("expected an Evictor", field="evictor", value=evictor)
        self.params["evictor"] = evictor
        return self

    def allowed_lateness(self, lateness: Any) -> WindowedStream:
        ms = duration_ms(lateness, what="allowed lateness")
        if ms < 0:
            raise InputError(
                "The allowed lateness cannot be negative.",
                field="allowed_lateness",
                value=ms,
                expected=">= 0",
            )
        self.params["allowed_lateness"] = ms
        return self

    def side_output_late_data(self, tag: OutputTag) -> WindowedStream:
        self.params["late_data_tag"] = tag
        return self

    def _function(self, kind: str, **fn: Any) -> DataStream:
        return self.stream._then("window", "window", function_kind=kind, **fn, **self.params)

    def reduce(self, fn: Callable[[Any, Any], Any], process_function: Any = None) -> DataStream:
        return self._function("reduce", fn=fn, process_function=process_function)

    def aggregate(self, fn: AggregateFunction, process_function: Any = None) -> DataStream:
        return self._function("aggregate", fn=fn, process_function=process_function)

    def process(self, process_function: Any) -> DataStream:
        return self._function("process", fn=None, process_function=process_function)

    def apply(self, fn: Callable[[Any, Any, list[Any], Any], None]) -> DataStream:
        return self._function("apply", fn=None, process_function=fn)
