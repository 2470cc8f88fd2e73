"""The fluent API: Flink's DataStream API in snake_case (an example: the README). Calls build a job
graph (``winviz.graph``); nothing runs until ``env.execute()``, which builds fresh operators, so one
pipeline can be executed again and again."""

from __future__ import annotations

import copy
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from itertools import islice
from operator import le
from typing import Any

from winviz.alignment import DEFAULT_BUFFER_SIZE, check_buffer_size
from winviz.arguments import (
    AGGREGATE_METHODS,
    checked_assigner,
    checked_evictor,
    checked_function,
    checked_instance,
    checked_lateness,
    checked_methods,
    checked_output_tag,
    checked_trigger,
    checked_watermark_interval,
    checked_window_function,
)
from winviz.batch_execution import RuntimeExecutionMode, runtime_mode
from winviz.checkpoints import CheckpointConfig
from winviz.collector import paused
from winviz.copies import all_immutable, copy_record, kinds_of
from winviz.errors import ArgumentTypeError, InputError, NameClashError
from winviz.functions import AggregateFunction, CoProcessFunction, KeyedProcessFunction, OutputTag
from winviz.graph import (
    CoProcessSpec,
    FilterSpec,
    FlatMapSpec,
    KeyedProcessSpec,
    MapSpec,
    Node,
    OperatorSpec,
    PartitionSpec,
    RollingReduceSpec,
    SideOutputSpec,
    SinkSpec,
    SourceSpec,
    SplitWatermarksSpec,
    UnionSpec,
    WatermarksSpec,
    WindowSpec,
)
from winviz.joins import CoGroupedStreams, IntervalJoin, JoinedStreams
from winviz.keygroups import check_max_parallelism, check_parallelism
from winviz.operators.batch import Batch
from winviz.partitioners import FORWARD, REBALANCE
from winviz.time import MAX, MIN, TimestampNormalizer, count_arg, duration_at_least, duration_ms
from winviz.timers import DEFAULT_FIRING_BUDGET
from winviz.watermarks import WatermarkStrategy
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger


def _records_of(
    data: Any,
    what: str,
    field: str,
    expected: str = "an iterable of records (a list, a tuple, a generator)",
) -> tuple[Any, ...]:
    """The records of ``data`` as a tuple (the cyclic collector paused), else
    ``ArgumentTypeError``."""
    try:
        with paused():
            return tuple(data)
    except TypeError:
        if isinstance(data, Iterable):
            raise
        raise ArgumentTypeError(
            f"{what} takes the records", field=field, value=data, expected=expected
        ) from None


class StreamExecutionEnvironment:
    """Where a job is defined and executed (Flink's ``StreamExecutionEnvironment``).
    ``auto_watermark_interval``: ms of processing time between periodic watermarks (0: none);
    ``trace``: record a trace; ``tz``: the zone naive timestamps are read in (UTC when None)."""

    def __init__(
        self, *, auto_watermark_interval: int = 200, trace: bool = True, tz: str | None = None
    ) -> None:
        self.auto_watermark_interval = checked_watermark_interval(auto_watermark_interval)
        if trace.__class__ is not bool:
            raise ArgumentTypeError(
                "trace turns the trace on or off",
                field="trace",
                value=trace,
                expected="True (the default) or False",
            )
        self.trace_enabled = trace
        self.tz = tz
        self.nodes: list[Node] = []
        self._names: dict[str, int] = {}
        self.checkpoint_config: CheckpointConfig | None = None
        self.parallelism = 1
        self.max_parallelism: int | None = None
        self.timer_firing_budget = DEFAULT_FIRING_BUDGET
        self.watermark_alignment_buffer_size = DEFAULT_BUFFER_SIZE
        self.runtime_mode = RuntimeExecutionMode.STREAMING

    def set_runtime_mode(self, mode: RuntimeExecutionMode | str) -> StreamExecutionEnvironment:
        """Flink's ``env.setRuntimeMode``: STREAMING (the default), BATCH or AUTOMATIC (BATCH: every
        winviz source is bounded); see ``winviz.batch_execution``."""
        self.runtime_mode = runtime_mode(mode)
        return self

    def get_runtime_mode(self) -> RuntimeExecutionMode:
        return self.runtime_mode

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """Flink's ``env.setParallelism``: for every operator that sets none (non-parallel ones
        stay 1)."""
        self.parallelism = check_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        return self.parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """Flink's ``env.setMaxParallelism``: the key groups of every keyed operator that sets none
        (1..32768; else ``compute_default_max_parallelism``)."""
        self.max_parallelism = check_max_parallelism(max_parallelism)
        return self

    def get_max_parallelism(self) -> int | None:
        return self.max_parallelism

    def set_timer_firing_budget(self, budget: int) -> StreamExecutionEnvironment:
        """How many timers one advance may fire, each registered by an earlier firing of it, before
        ``TimerLoopError`` (``winviz.timers``; not Flink's: Flink keeps firing)."""
        self.timer_firing_budget = count_arg(budget, what="timer_firing_budget")
        return self

    # -- naming ---------------------------------------------------------------------------

    def _unique(self, base: str) -> str:
        """A new operator's name: ``base``, else the first free of ``base_2``, ``base_3``…"""
        taken = {node.name for node in self.nodes}
        n = self._names.get(base, 0)
        name = base if n == 0 else f"{base}_{n + 1}"
        while name in taken:
            n += 1
            name = f"{base}_{n + 1}"
        self._names[base] = n + 1
        return name

    def _claim(self, name: Any, what: str, node: Node | None = None) -> str:
        """``name`` exactly (never a silent rename), else ``NameClashError`` naming its holder."""
        if not isinstance(name, str) or not name:
            raise ArgumentTypeError(
                f"{what}: a name must be a non-empty str",
                field="name",
                value=name,
                expected="a non-empty str",
            )
        for other in self.nodes:
            if other.name == name and other is not node:
                kind = "a sink" if other.kind == "sink" else f"the {other.kind} operator"
                also = (
                    "two sinks cannot share result.outputs[name]"
                    if other.kind == "sink" and what.startswith("sink_to")
                    else "operator names are unique (the trace and the metrics are keyed by them)"
                )
                taken = sorted(n.name for n in self.nodes)
                raise NameClashError(
                    f"{what}: the name {name!r} is taken by {kind} {name!r}; {also}",
                    field="name",
                    value=name,
                    expected=f"a name no other operator has (taken: {taken})",
                )
        return name

    def _add(self, spec: OperatorSpec, base: str, inputs: list[Node]) -> Node:
        node = Node(spec, self._unique(base), inputs)
        self.nodes.append(node)
        return node

    def enable_checkpointing(
        self, interval: Any = None, *, at_records: Iterable[int] = ()
    ) -> StreamExecutionEnvironment:
        """Flink's ``enableCheckpointing(interval)``: every ``interval`` ms and/or after
        ``at_records`` source records (``winviz.checkpoints``)."""
        ms = None
        if interval is not None:
            ms = duration_at_least(
                interval,
                1,
                "checkpoint interval",
                "checkpoint interval must be > 0",
                field="interval",
                expected="ms > 0 (or None with at_records: checkpoints at record cuts only)",
            )
        cuts = _record_cuts(
            at_records,
            "at_records",
            "checkpoint",
            "a list of record counts (ints >= 0), e.g. at_records=[3] or [3, 8]",
        )
        self.checkpoint_config = CheckpointConfig(ms, cuts)
        return self

    def set_watermark_alignment_buffer_size(self, size: int) -> StreamExecutionEnvironment:
        """Flink 2.3's ``pipeline.watermark-alignment.buffer-size`` (``winviz.alignment``)."""
        self.watermark_alignment_buffer_size = check_buffer_size(size)
        return self

    def set_auto_watermark_interval(self, interval: Any) -> StreamExecutionEnvironment:
        """Flink's ``setAutoWatermarkInterval``: ms or a timedelta between watermarks (0: none)."""
        self.auto_watermark_interval = checked_watermark_interval(interval)
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
        """A bounded source. Record ``i`` arrives at ``arrival_times[i]`` (non-decreasing), or at
        ``i * arrival_interval``; ``timestamps``: source timestamps (as Kafka's). The records are
        copied as they are now, as Flink's ``FromElementsFunction`` serializes them."""
        values = _records_of(data, "from_collection", "data")
        records = self._records(values, arrival_times, arrival_interval, timestamps)
        node = self._add(SourceSpec(records), name, [])
        node.non_parallel = True  # Flink's fromCollection is a non-parallel source
        return DataStream(self, node)

    def _records(
        self,
        values: tuple[Any, ...],
        arrival_times: Sequence[Any] | None,
        arrival_interval: int,
        timestamps: Sequence[Any] | None,
        where: str = "",
    ) -> Batch:
        """The validated records as one ``Batch``; ``where`` (``[1]``) names a partition."""
        kinds = kinds_of(values)  # (also what all_immutable needs, found once)
        if _NONE_TYPE in kinds:
            index = next(i for i, v in enumerate(values) if v is None)
            raise InputError(
                "The collection contains a null element: a Flink stream record is never "
                "null (fromCollection / fromElements refuse one: "
                "FromElementsFunction.checkCollection)",
                index=index,
                field=f"partitions{where}" if where else "data",
                value=None,
                expected="records that are not None (leave it out, or wrap it: {'value': None})",
            )
        norm = TimestampNormalizer(self.tz)
        interval = duration_ms(arrival_interval, what="arrival_interval")
        n = len(values)
        arrivals: Sequence[int] = range(0, n * interval, interval) if interval else [0] * n
        if arrival_times is not None:
            arrivals = [
                a
                if a.__class__ is int and MIN <= a <= MAX  # what the normalizer gives an int
                else norm(a, index=i, field_name=f"arrival_time{where}")
                for i, a in enumerate(arrival_times)
            ]
            _one_per(len(arrivals), n, "arrival time", "record", f"arrival_times{where}")
        # non-decreasing (checked at C speed), unless made so: the first decrease is looked for
        made = arrival_times is None and interval >= 0
        if not made and not all(map(le, arrivals, islice(arrivals, 1, None))):
            i = next(i for i in range(1, n) if arrivals[i] < arrivals[i - 1])
            raise InputError(
                "arrival times must not decrease (processing time only moves forward); the "
                f"previous record arrived at {arrivals[i - 1]}",
                index=i,
                field=f"arrival_time{where}",
                value=arrivals[i],
            )
        stamps: Sequence[int | None] = (None,) * n
        if timestamps is not None:
            _one_per(len(timestamps), n, "timestamp", "record", f"timestamps{where}")
            stamps = [norm(t, index=i, field_name="timestamp") for i, t in enumerate(timestamps)]
        immutable = all_immutable(values, kinds)
        if not immutable:  # the records as they are now (see ``from_collection``)
            with paused():
                values = tuple(map(_snapshot, values))
        return Batch(arrivals, range(n), values, stamps, immutable)

    def from_partitions(
        self,
        partitions: Sequence[Iterable[Any]],
        *,
        arrival_times: Sequence[Sequence[Any]] | None = None,
        arrival_interval: int = 0,
        timestamps: Sequence[Sequence[Any]] | None = None,
        name: str = "source",
    ) -> DataStream:
        """A bounded source with several partitions (Flink's source splits): ``partitions[p]``,
        ``arrival_times[p]`` and ``timestamps[p]`` as in ``from_collection``, entering in arrival
        order (ties: the lower partition first). Partition ``p`` is read by subtask ``p % n``
        (Flink's Kafka enumerator); ``assign_timestamps_and_watermarks`` right after it makes
        watermarks per partition."""
        partitions = _records_of(
            partitions,
            "from_partitions",
            "partitions",
            "a list of partitions, each a list of records",
        )
        parts = [
            _records_of(p, "from_partitions", f"partitions[{i}]") for i, p in enumerate(partitions)
        ]
        if not parts:
            raise InputError(
                "a partitioned source needs at least one partition", field="partitions"
            )
        for what, given in (("arrival_times", arrival_times), ("timestamps", timestamps)):
            if given is not None:
                _one_per(len(given), len(parts), f"{what} list", "partition", what)
        per_partition = [
            self._records(
                values,
                None if arrival_times is None else arrival_times[p],
                arrival_interval,
                None if timestamps is None else timestamps[p],
                f"[{p}]",
            )
            for p, values in enumerate(parts)
        ]
        order = sorted(
            (arrival, p, i)
            for p, recs in enumerate(per_partition)
            for i, arrival in enumerate(recs.arrivals)
        )
        records = Batch.of(per_partition[p][i] for _, p, i in order)
        spec = SourceSpec(records, tuple(p for _, p, _ in order), len(parts))
        node = self._add(spec, name, [])
        return DataStream(self, node)

    def from_pandas(
        self,
        frame: Any,
        *,
        arrival_column: str | None = None,
        arrival_interval: int = 0,
        name: str = "source",
    ) -> DataStream:
        """Each row becomes a dict record; ``arrival_column`` (optional) gives arrival times."""
        if not callable(getattr(frame, "to_dict", None)) or not hasattr(frame, "columns"):
            raise ArgumentTypeError(
                f"from_pandas takes a pandas DataFrame, not {type(frame).__name__}",
                field="frame",
                value=frame,
                expected="a pandas DataFrame (for a list of records: from_collection)",
            )
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

    def execute(
        self,
        job_name: str = "winviz job",
        *,
        until_processing_time: Any = None,
        fail_at: int | Iterable[int] | None = None,
        restore_from: Any = None,
    ):
        """Run the job to the end of its bounded input: a ``JobExecutionResult``.
        ``until_processing_time``: the clock moves on to it before the end of input; ``fail_at``:
        fail after that many source records (or several), restore and replay; ``restore_from``: a
        ``CompletedCheckpoint`` of an earlier run to start from (``winviz.checkpoints``)."""
        from winviz.runtime import JobRuntime

        until = None
        if until_processing_time is not None:
            until = TimestampNormalizer(self.tz)(
                until_processing_time, field_name="until_processing_time"
            )
        failures = () if fail_at is None else (fail_at,) if isinstance(fail_at, int) else fail_at
        failures = _record_cuts(failures, "fail_at", "failure", "an int >= 0 or a list of them")
        runtime = JobRuntime(self, job_name, fail_at=failures, restore_from=restore_from)
        try:
            return runtime.run(until)
        finally:
            runtime.close()


def _record_cuts(cuts: Any, field: str, what: str, expected: str) -> tuple[int, ...]:
    """Record counts (ints >= 0), sorted, unique: the cuts of ``enable_checkpointing(at_records=
    ...)`` and of ``execute(fail_at=...)``; ``what`` names a cut in the errors."""
    if isinstance(cuts, (str, bytes, numbers.Number)) or not isinstance(cuts, Iterable):
        raise ArgumentTypeError(
            f"{field} takes the cuts of the {what}s: record counts",
            field=field,
            value=cuts,
            expected=expected,
        )
    counts = []
    for n in cuts:
        wrong_type = isinstance(n, bool) or not isinstance(n, numbers.Integral)
        if wrong_type or n < 0:
            raise (ArgumentTypeError if wrong_type else InputError)(
                f"each {what} cut is a record count", field=field, value=n, expected=expected
            )
        counts.append(int(n))
    return tuple(sorted(set(counts)))


class DataStream:
    """A stream of records (Flink's ``DataStream`` / ``SingleOutputStreamOperator``)."""

    def __init__(self, env: StreamExecutionEnvironment, node: Node) -> None:
        self.env = env
        self.node = node

    def name(self, name: str) -> DataStream:
        """Rename the operator that produces this stream (its name in the trace)."""
        self.node.name = self.env._claim(name, f"name({name!r})", self.node)
        return self

    def _then(self, spec: OperatorSpec, base: str, *others: DataStream) -> DataStream:
        """A node reading this stream (its first input) and ``others``."""
        inputs = [self.node, *(other.node for other in others)]
        return DataStream(self.env, self.env._add(spec, base, inputs))

    def _same_environment(
        self,
        other: Any,
        what: str,
        elsewhere: type[InputError] = ArgumentTypeError,
        field: str = "other",
    ) -> DataStream:
        """``other`` when it is a stream of this environment, else ``ArgumentTypeError`` naming
        ``field`` and the type given (a stream of another environment: ``elsewhere``)."""
        if not isinstance(other, DataStream) or other.env is not self.env:
            stream = isinstance(other, DataStream)
            raise (elsewhere if stream else ArgumentTypeError)(
                f"{what} needs a DataStream of the same environment"
                + ("" if stream else f", not {type(other).__name__}"),
                field=field,
                value=other,
                expected="a DataStream of this environment",
            )
        return other

    def _operator_node(self, what: str) -> Node:
        """The node whose parallelism ``set_parallelism`` / ``set_max_parallelism`` sets."""
        node = self.node
        if node.is_virtual or node.side_of is not None:
            raise InputError(
                f"{what}: this stream is no operator (a union, a partitioning or a side "
                "output); set it on the operator that produces or consumes it",
                field=what,
                value=node.name,
            )
        if isinstance(node.spec, SplitWatermarksSpec):  # they run inside the source reader
            return node.inputs[0]
        return node

    def set_parallelism(self, parallelism: int) -> DataStream:
        """Flink's ``setParallelism``; on ``assign_timestamps_and_watermarks`` right after a
        partitioned source it sets the source's (the watermarks are made in the reader)."""
        node = self._operator_node("parallelism")
        n = check_parallelism(parallelism)
        if node.non_parallel and n != 1:
            raise InputError(
                "The parallelism of non parallel operator must be 1.",
                field="parallelism",
                value=n,
                expected=f"1 for {node.name!r} (from_collection and window_all are not parallel)",
            )
        node.parallelism = n
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        """Flink's ``setMaxParallelism``: this operator's key groups (1..32768, >= its
        parallelism)."""
        self._operator_node("max_parallelism").max_parallelism = check_max_parallelism(
            max_parallelism
        )
        return self

    def rebalance(self) -> DataStream:
        """Flink's ``rebalance()``: records round-robin to the next operator's subtasks."""
        return self._then(PartitionSpec(REBALANCE), REBALANCE)

    def forward(self) -> DataStream:
        """Flink's ``forward()``: subtask ``i`` feeds subtask ``i`` (equal parallelisms)."""
        return self._then(PartitionSpec(FORWARD), FORWARD)

    def connect(self, other: DataStream) -> ConnectedStreams:
        """Flink's ``connect``: two streams into one two-input operator (``.process`` /
        ``.key_by(k1, k2).process``), whose watermark is the minimum of the two inputs'."""
        return ConnectedStreams(self, self._same_environment(other, "connect", InputError))

    def join(self, other: DataStream) -> Any:
        """Flink's window join: ``.where(k1).equal_to(k2).window(assigner).apply(fn)``
        (``winviz.joins``)."""
        return JoinedStreams(self, self._same_environment(other, "join()"))

    def co_group(self, other: DataStream) -> Any:
        """Flink's window coGroup: ``.where(k1).equal_to(k2).window(assigner).apply(fn)``."""
        return CoGroupedStreams(self, self._same_environment(other, "co_group()"))

    def map(self, fn: Callable[[Any], Any]) -> DataStream:
        return self._then(
            MapSpec(checked_function(fn, "map", "fn", "a function of one record")), "map"
        )

    def filter(self, fn: Callable[[Any], bool]) -> DataStream:
        fn = checked_function(fn, "filter", "fn", "a function of one record returning a bool")
        return self._then(FilterSpec(fn), "filter")

    def flat_map(self, fn: Callable[[Any], Iterable[Any]]) -> DataStream:
        fn = checked_function(
            fn, "flat_map", "fn", "a function of one record returning an iterable"
        )
        return self._then(FlatMapSpec(fn), "flat_map")

    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        """Timestamps and watermarks from ``strategy``; right after a partitioned source one
        generator per partition (Flink's per-split watermarks)."""
        checked_instance(
            strategy,
            WatermarkStrategy,
            "strategy",
            "assign_timestamps_and_watermarks takes",
            "WatermarkStrategy.for_bounded_out_of_orderness(500).with_timestamp_assigner("
            "lambda e, _: e['ts'])",
        )
        source = self.node.spec
        if isinstance(source, SourceSpec) and source.num_partitions is not None:
            spec = SplitWatermarksSpec(strategy, self.node.name, source.num_partitions)
            return self._then(spec, "watermarks")
        return self._then(WatermarksSpec(strategy), "watermarks")

    def union(self, *others: DataStream) -> DataStream:
        """Flink's ``DataStream.union``: not an operator; the next operator gets one input channel
        per stream (a stream united with itself: every record twice)."""
        for other in others:
            self._same_environment(other, "union()", InputError, "others")
        return self._then(UnionSpec(), "union", *others)

    def key_by(self, key_selector: Callable[[Any], Any]) -> KeyedStream:
        checked_function(key_selector, "key_by", "key_selector", "a function of one record")
        return KeyedStream(self, key_selector)

    def window_all(self, assigner: WindowAssigner) -> WindowedStream:
        """Windows over the whole stream, every record under the key None, in one subtask
        (``windowAll``)."""
        return WindowedStream(self, lambda _: None, assigner)._with(window_all=True)

    def get_side_output(self, tag: OutputTag) -> DataStream:
        checked_output_tag(tag, "get_side_output")
        if self.node.is_virtual:
            raise InputError(
                f"a {self.node.kind} has no side outputs (it is no operator)",
                field="tag",
                value=tag,
            )
        return self._then(SideOutputSpec(tag), f"side:{tag.id}")

    def sink_to(self, name: str) -> DataStream:
        """Collect into ``result.outputs[name]``; the sink is named ``name`` (``NameClashError``
        if taken)."""
        env = self.env
        node = Node(SinkSpec(), env._claim(name, f"sink_to({name!r})"), [self.node])
        env.nodes.append(node)
        return self


class KeyedStream:
    """A stream partitioned by key (Flink's ``KeyedStream``)."""

    def __init__(self, stream: DataStream, key_selector: Callable[[Any], Any]) -> None:
        self.stream = stream
        self.key_selector = key_selector

    def process(self, function: KeyedProcessFunction) -> DataStream:
        checked_methods(
            function, "process", "function", ("process_element",), "a KeyedProcessFunction"
        )
        return self.stream._then(KeyedProcessSpec(self.key_selector, function), "process")

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        return WindowedStream(self.stream, self.key_selector, assigner)

    def interval_join(self, other: KeyedStream) -> Any:
        """Flink's ``intervalJoin``: ``.between(lower, upper).process(fn)`` (``winviz.joins``)."""
        checked_instance(
            other, KeyedStream, "other", "interval_join takes", "other.key_by(lambda e: e['user'])"
        )
        return IntervalJoin(self, other)

    def reduce(self, fn: Callable[[Any, Any], Any]) -> DataStream:
        """A rolling reduce per key (no windows)."""
        fn = checked_function(fn, "reduce", "fn", "a function of two records returning one")
        return self.stream._then(RollingReduceSpec(self.key_selector, fn), "reduce")


class WindowedStream:
    """A keyed stream cut into windows (Flink's ``WindowedStream``)."""

    def __init__(
        self, stream: DataStream, key_selector: Callable[[Any], Any], assigner: WindowAssigner
    ) -> None:
        self.stream = stream
        self.spec = WindowSpec(
            key_selector, checked_assigner(assigner, "window() / window_all() take")
        )
        """The window operator so far; the window function completes it."""

    def _with(self, **changes: Any) -> WindowedStream:
        self.spec = replace(self.spec, **changes)
        return self

    def trigger(self, trigger: Trigger) -> WindowedStream:
        return self._with(trigger=checked_trigger(trigger))

    def evictor(self, evictor: Evictor) -> WindowedStream:
        return self._with(evictor=checked_evictor(evictor))

    def allowed_lateness(self, lateness: Any) -> WindowedStream:
        return self._with(allowed_lateness=checked_lateness(lateness))

    def side_output_late_data(self, tag: OutputTag) -> WindowedStream:
        """Send late records to the side output ``tag`` (``result.side_outputs[tag.id]``)."""
        return self._with(late_data_tag=checked_output_tag(tag, "side_output_late_data"))

    def _function(self, kind: str, fn: Any, process_function: Any) -> DataStream:
        spec = replace(self.spec, function_kind=kind, fn=fn, process_function=process_function)
        out = self.stream._then(spec, "window")
        if spec.window_all:  # Flink's windowAll runs in one subtask
            out.node.non_parallel = True
            out.node.parallelism = 1
        return out

    def reduce(self, fn: Callable[[Any, Any], Any], process_function: Any = None) -> DataStream:
        checked_function(fn, "reduce", "fn", "a function of two records returning one")
        return self._function("reduce", fn, checked_window_function(process_function, "reduce"))

    def aggregate(self, fn: AggregateFunction, process_function: Any = None) -> DataStream:
        checked_methods(fn, "aggregate", "fn", AGGREGATE_METHODS, "an AggregateFunction")
        return self._function(
            "aggregate", fn, checked_window_function(process_function, "aggregate")
        )

    def process(self, process_function: Any) -> DataStream:
        fn = checked_window_function(process_function, "process", required=True)
        return self._function("process", None, fn)

    def apply(self, fn: Callable[[Any, Any, list[Any], Any], None]) -> DataStream:
        fn = checked_function(fn, "apply", "fn", "a function (key, window, elements, out)")
        return self._function("apply", None, fn)


class ConnectedStreams:
    """Two connected streams (Flink's ``ConnectedStreams``), keyed after ``key_by``."""

    def __init__(
        self,
        first: DataStream,
        second: DataStream,
        key_selectors: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None,
    ) -> None:
        self.first = first
        self.second = second
        self.key_selectors = key_selectors

    def key_by(
        self, key_selector1: Callable[[Any], Any], key_selector2: Callable[[Any], Any]
    ) -> ConnectedStreams:
        """Key both inputs: equal keys meet in one subtask and share keyed state and timers."""
        for i, ks in enumerate((key_selector1, key_selector2), start=1):
            checked_function(ks, "key_by", f"key_selector{i}", "a function of one record")
        return ConnectedStreams(self.first, self.second, (key_selector1, key_selector2))

    def process(self, function: CoProcessFunction) -> DataStream:
        """Run a ``CoProcessFunction`` (a ``KeyedCoProcessFunction`` after ``key_by``)."""
        keyed = self.key_selectors is not None
        for method in ("process_element1", "process_element2"):
            if not callable(getattr(function, method, None)):
                raise ArgumentTypeError(
                    f"a co-process function needs {method}(value, ctx, out)",
                    field="function",
                    value=function,
                    expected="a CoProcessFunction" + (" / KeyedCoProcessFunction" if keyed else ""),
                )
        spec = CoProcessSpec(function, self.key_selectors)
        return self.first._then(spec, "co_process", self.second)


_NONE_TYPE = type(None)


def _one_per(count: int, n: int, what: str, per: str, field: str) -> None:
    """``InputError`` unless there are as many ``what`` (``count``) as ``per`` (``n``)."""
    if count != n:
        raise InputError(
            f"{count} {what}s for {n} {per}s", field=field, expected=f"one {what} per {per}"
        )


def _snapshot(value: Any) -> Any:
    """A source record as it is now (``copy_record``); one that cannot be copied stays itself."""
    try:
        return copy_record(value)
    except (TypeError, copy.Error):
        return value
