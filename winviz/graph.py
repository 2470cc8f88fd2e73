"""The job graph: Flink's ``StreamGraph`` of nodes, each holding a frozen operator spec (Flink's
``StreamOperatorFactory``) that ``build``s one fresh operator per subtask at ``env.execute()``,
so a pipeline can run again and again. As Flink ships each task its own copy of the job's
functions, each subtask is built from ``OperatorSpec.shipped`` (a deep copy; one that cannot be
copied raises ``FunctionNotSerializableError``). Unions and partitionings are no operators."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

from winviz.copies import first_uncopyable
from winviz.errors import FunctionNotSerializableError
from winviz.functions import AggregateFunction, CoProcessFunction, KeyedProcessFunction, OutputTag
from winviz.operators.base import StreamOperator
from winviz.operators.batch import Batch
from winviz.operators.co_process import CoProcessOperator, KeyedCoProcessOperator
from winviz.operators.interval_join import IntervalJoinOperator
from winviz.operators.keyed_process import KeyedProcessOperator, RollingReduceFunction
from winviz.operators.simple import (
    FilterOperator,
    FlatMapOperator,
    MapOperator,
    Record,
    SideOutputPassthrough,
    SinkOperator,
)
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.operators.split_watermarks import SplitWatermarksOperator
from winviz.operators.window_functions import (
    AggregateWindowFunction,
    ApplyWindowFunction,
    InternalWindowFunction,
    ListWindowFunction,
    ReduceWindowFunction,
)
from winviz.operators.window_operator import WindowOperator
from winviz.watermarks import WatermarkStrategy
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger

KeySelector = Callable[[Any], Any]


@dataclass(frozen=True)
class BuildContext:
    """What building one subtask's operator needs beyond its spec."""

    name: str  # the subtask's name: the node's, or ``node#i`` when parallel
    node_name: str
    subtask: int
    parallelism: int
    auto_watermark_interval: int
    tz: str | None
    outputs: dict[str, list[Record]]  # the job result's sink outputs, filled by the sinks


class OperatorSpec:
    """What one node of the job graph builds (Flink's ``StreamOperatorFactory``)."""

    kind: ClassVar[str]
    """How the API and error messages name this kind of node."""
    functions: ClassVar[tuple[str, ...]] = ()
    """The fields that hold the user's functions (and objects as assigners and triggers):
    copied for every subtask (``shipped``)."""
    operator: ClassVar[Callable[..., StreamOperator] | None] = None
    """What ``build`` makes, called with the subtask's name and the ``functions``."""

    def shipped(self, operator: str) -> OperatorSpec:
        """This spec with its own deep copy of its ``functions``, taken together (see the
        module docstring); ``operator`` names the node in the error."""
        if not self.functions:
            return self
        values = tuple(getattr(self, name) for name in self.functions)
        try:
            copied = copy.deepcopy(values)
        except Exception as exc:
            named = zip(self.functions, values, strict=True)
            field, value = first_uncopyable(named) or (self.functions[0], values[0])
            what = type(value).__qualname__
            raise FunctionNotSerializableError(
                f"the {_FIELD_WORDS.get(field, field)} of operator {operator!r} (a {what}) cannot "
                f"be copied for its subtasks: {type(exc).__name__}: {exc}. Flink ships every "
                f"subtask its own deserialized copy of the job's functions and refuses this one "
                f"(InvalidProgramException: the implementation of {what} is not serializable); "
                "keep plain data in function objects and create locks, files or generators "
                "inside the function's methods"
            ) from exc
        return replace(self, **dict(zip(self.functions, copied, strict=True)))

    two_inputs: ClassVar[bool] = False
    """True for a two-input operator (``connect``, an interval join): input ``k`` of the node
    is its ``inputs[k]``, and records reach ``process_element1`` / ``process_element2``."""

    def key_selector_of(self, input_index: int) -> KeySelector | None:
        """The key selector records of input ``input_index`` are routed by (``key_by``)."""
        return None

    def build(self, ctx: BuildContext) -> StreamOperator:
        """A fresh operator for one subtask."""
        if self.operator is None:  # unions and partitionings
            raise TypeError(f"a {self.kind} node is no operator")
        return self.operator(ctx.name, *(getattr(self, name) for name in self.functions))


_FIELD_WORDS = {
    "fn": "function",
    "process_function": "window function",
    "strategy": "watermark strategy",
    "key_selector": "key selector",
    "key_selectors": "key selectors",
}
"""How ``OperatorSpec.shipped``'s error names a spec's function fields."""


def owned_partitions(num_partitions: int, ctx: BuildContext) -> list[int]:
    """The partitions (splits) a partitioned source's subtask reads: ``p % parallelism``."""
    return [p for p in range(num_partitions) if p % ctx.parallelism == ctx.subtask]


@dataclass(frozen=True)
class SourceSpec(OperatorSpec):
    """A bounded source (``from_collection``, ``from_pandas``, ``from_partitions``): its
    records in arrival order; for a partitioned source each record's partition."""

    kind: ClassVar[str] = "source"
    records: Batch
    partitions: tuple[int, ...] | None = None
    num_partitions: int | None = None

    @property
    def partitioned(self) -> bool:
        return self.num_partitions is not None

    def build(self, ctx: BuildContext) -> StreamOperator:
        if self.partitions is None or self.num_partitions is None:
            return SourceOperator(ctx.name, self.records)
        owned = owned_partitions(self.num_partitions, ctx)
        mine = [k for k, p in enumerate(self.partitions) if p in owned]
        return SourceOperator(
            ctx.name,
            self.records.take(mine),
            [self.partitions[k] for k in mine],
            self.num_partitions,
            partition_ids=owned,
            order=mine,
        )


@dataclass(frozen=True)
class WatermarksSpec(OperatorSpec):
    """``assign_timestamps_and_watermarks`` (Flink's ``TimestampsAndWatermarksOperator``)."""

    kind: ClassVar[str] = "watermarks"
    functions: ClassVar[tuple[str, ...]] = ("strategy",)
    strategy: WatermarkStrategy

    def build(self, ctx: BuildContext) -> StreamOperator:
        return TimestampsAndWatermarksOperator(
            ctx.name, self.strategy, ctx.auto_watermark_interval, ctx.tz
        )


@dataclass(frozen=True)
class SplitWatermarksSpec(OperatorSpec):
    """``assign_timestamps_and_watermarks`` right after a partitioned source: one generator
    per partition inside the source reader (Flink's per-split watermarks)."""

    kind: ClassVar[str] = "split_watermarks"
    functions: ClassVar[tuple[str, ...]] = ("strategy",)
    strategy: WatermarkStrategy
    source_name: str
    num_partitions: int

    def build(self, ctx: BuildContext) -> StreamOperator:
        return SplitWatermarksOperator(
            ctx.name,
            self.strategy,
            ctx.auto_watermark_interval,
            ctx.tz,
            self.source_name,
            self.num_partitions,
            partition_ids=owned_partitions(self.num_partitions, ctx),
        )


@dataclass(frozen=True)
class MapSpec(OperatorSpec):
    """``map``: one record out per record in."""

    kind: ClassVar[str] = "map"
    functions: ClassVar[tuple[str, ...]] = ("fn",)
    operator = MapOperator
    fn: Callable[[Any], Any]

    def apply(self, value: Any) -> list[Any]:
        """What the operator emits for ``value`` (the Spark twin replays it)."""
        return [self.fn(value)]


@dataclass(frozen=True)
class FilterSpec(OperatorSpec):
    """``filter``: the records ``fn`` keeps."""

    kind: ClassVar[str] = "filter"
    functions: ClassVar[tuple[str, ...]] = ("fn",)
    operator = FilterOperator
    fn: Callable[[Any], bool]

    def apply(self, value: Any) -> list[Any]:
        return [value] if self.fn(value) else []


@dataclass(frozen=True)
class FlatMapSpec(OperatorSpec):
    """``flat_map``: any number of records out per record in."""

    kind: ClassVar[str] = "flat_map"
    functions: ClassVar[tuple[str, ...]] = ("fn",)
    operator = FlatMapOperator
    fn: Callable[[Any], Iterable[Any]]

    def apply(self, value: Any) -> list[Any]:
        return list(self.fn(value))


@dataclass(frozen=True)
class KeyedSpec(OperatorSpec):
    """A one-input operator after ``key_by``: its records are routed by ``key_selector``."""

    key_selector: KeySelector

    def key_selector_of(self, input_index: int) -> KeySelector | None:
        return self.key_selector


@dataclass(frozen=True)
class KeyedProcessSpec(KeyedSpec):
    """``key_by(...).process(function)`` (Flink's ``KeyedProcessOperator``)."""

    kind: ClassVar[str] = "process"
    functions: ClassVar[tuple[str, ...]] = ("key_selector", "function")
    operator = KeyedProcessOperator
    function: KeyedProcessFunction


@dataclass(frozen=True)
class RollingReduceSpec(KeyedSpec):
    """``key_by(...).reduce(fn)``: the running reduction per key (no windows)."""

    kind: ClassVar[str] = "rolling_reduce"
    functions: ClassVar[tuple[str, ...]] = ("key_selector", "fn")
    fn: Callable[[Any, Any], Any]

    def build(self, ctx: BuildContext) -> StreamOperator:
        return KeyedProcessOperator(ctx.name, self.key_selector, RollingReduceFunction(self.fn))


@dataclass(frozen=True)
class CoProcessSpec(OperatorSpec):
    """``a.connect(b).process(function)`` (``CoProcessOperator``), keyed after
    ``key_by(k1, k2)`` (``KeyedCoProcessOperator``)."""

    kind: ClassVar[str] = "co_process"
    functions: ClassVar[tuple[str, ...]] = ("function", "key_selectors")
    two_inputs: ClassVar[bool] = True
    function: CoProcessFunction
    key_selectors: tuple[KeySelector, KeySelector] | None = None

    def key_selector_of(self, input_index: int) -> KeySelector | None:
        return None if self.key_selectors is None else self.key_selectors[input_index]

    def build(self, ctx: BuildContext) -> StreamOperator:
        if self.key_selectors is None:
            return CoProcessOperator(ctx.name, self.function)
        return KeyedCoProcessOperator(ctx.name, *self.key_selectors, self.function)


@dataclass(frozen=True)
class IntervalJoinSpec(OperatorSpec):
    """``a.key_by(k1).interval_join(b.key_by(k2)).between(lower, upper).process(function)``
    (Flink's ``IntervalJoinOperator``; bounds as given, with their inclusiveness)."""

    kind: ClassVar[str] = "interval_join"
    functions: ClassVar[tuple[str, ...]] = ("key_selectors", "function")
    two_inputs: ClassVar[bool] = True
    key_selectors: tuple[KeySelector, KeySelector]
    lower: int
    upper: int
    lower_inclusive: bool
    upper_inclusive: bool
    function: Any
    left_late_tag: OutputTag | None = None
    right_late_tag: OutputTag | None = None

    def key_selector_of(self, input_index: int) -> KeySelector | None:
        return self.key_selectors[input_index]

    def build(self, ctx: BuildContext) -> StreamOperator:
        return IntervalJoinOperator(
            ctx.name,
            *self.key_selectors,
            self.lower,
            self.upper,
            self.lower_inclusive,
            self.upper_inclusive,
            self.function,
            self.left_late_tag,
            self.right_late_tag,
        )


@dataclass(frozen=True)
class WindowSpec(KeyedSpec):
    """``key_by(...).window(assigner)`` (Flink's ``WindowOperator``; ``window_all``: one subtask).
    ``function_kind``: ``reduce`` / ``aggregate`` (``fn``, incremental, optionally with a
    ``process_function``), ``process`` or ``apply``."""

    kind: ClassVar[str] = "window"
    functions: ClassVar[tuple[str, ...]] = (
        "key_selector",
        "assigner",
        "fn",
        "process_function",
        "trigger",
        "evictor",
    )
    assigner: WindowAssigner
    function_kind: str = "process"
    fn: Callable[[Any, Any], Any] | AggregateFunction | None = None
    process_function: Any = None
    trigger: Trigger | None = None
    evictor: Evictor | None = None
    allowed_lateness: int = 0
    late_data_tag: OutputTag | None = None
    window_all: bool = False

    def window_function(self) -> InternalWindowFunction:
        if self.function_kind == "reduce":
            return ReduceWindowFunction(self.fn, self.process_function)
        if self.function_kind == "aggregate":
            return AggregateWindowFunction(self.fn, self.process_function)
        if self.function_kind == "apply":
            return ApplyWindowFunction(self.process_function)
        return ListWindowFunction(self.process_function)

    def build(self, ctx: BuildContext) -> StreamOperator:
        return WindowOperator(
            ctx.name,
            self.key_selector,
            self.assigner,
            self.window_function(),
            self.trigger,
            self.allowed_lateness,
            self.late_data_tag,
            self.evictor,
        )


@dataclass(frozen=True)
class SideOutputSpec(OperatorSpec):
    """``get_side_output(tag)``: the records its producer sends to side output ``tag``."""

    kind: ClassVar[str] = "side"
    operator = SideOutputPassthrough
    tag: OutputTag


@dataclass(frozen=True)
class SinkSpec(OperatorSpec):
    """``sink_to(name)``: collects into ``result.outputs[name]`` (every subtask appends to
    one list; subtask 0 checkpoints it)."""

    kind: ClassVar[str] = "sink"

    def build(self, ctx: BuildContext) -> StreamOperator:
        shared = ctx.outputs.setdefault(ctx.node_name, [])
        return SinkOperator(ctx.name, shared, owner=ctx.subtask == 0)


@dataclass(frozen=True)
class UnionSpec(OperatorSpec):
    """``union``: no operator; the consumer gets one input channel per united stream."""

    kind: ClassVar[str] = "union"


@dataclass(frozen=True)
class PartitionSpec(OperatorSpec):
    """``rebalance()`` / ``forward()``: no operator; how records travel to the consumer."""

    kind: ClassVar[str] = "partition"
    partitioner: str


@dataclass(eq=False)
class Node:
    """One node of the job graph: its operator's spec, name and inputs, and where it runs
    (parallelism, key groups). Nodes compare by identity."""

    spec: OperatorSpec
    name: str
    inputs: list[Node]
    parallelism: int | None = None  # None: the environment's default
    max_parallelism: int | None = None  # None: the environment's, else Flink's default rule
    non_parallel: bool = False  # Flink's non-parallel operators (fromCollection, windowAll)

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def is_virtual(self) -> bool:
        """A union or partitioning: no operator of its own."""
        return isinstance(self.spec, UnionSpec | PartitionSpec)

    @property
    def side_of(self) -> OutputTag | None:
        """The tag of a side-output node (``get_side_output``), else None."""
        return self.spec.tag if isinstance(self.spec, SideOutputSpec) else None


class StreamGraph(Protocol):
    """What the runtime reads of a job (Flink's ``StreamGraph``): the nodes in topological order and
    the job-wide settings."""

    nodes: list[Node]
    parallelism: int
    max_parallelism: int | None
    auto_watermark_interval: int
    tz: str | None
    trace_enabled: bool
    timer_firing_budget: int
    checkpoint_config: Any  # a winviz.checkpoints.CheckpointConfig or None
