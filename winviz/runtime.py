"""The simulated-clock executor: builds operators from the job graph, replays the sources'
records in arrival order and writes the trace.

The processing clock is simulated and deterministic. Before a record is handed over at its
arrival time, the clock steps through every earlier moment at which something was due — a
periodic watermark emission of a ``TimestampsAndWatermarksOperator`` or a processing-time
timer of an operator — in time order (at equal times: sources' emissions first, then operators
upstream to downstream). At the end of the input every source emits the watermark MAX.

With checkpointing (``env.enable_checkpointing``) the ``CheckpointCoordinator``
(``winviz.checkpoints``) is asked at every cut between two source records; a planned failure
(``env.execute(fail_at=...)``) makes the runtime rebuild every operator, restore the latest
checkpoint and replay the sources from their saved positions.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import count, repeat
from typing import Any

from winviz.checkpoints import (
    CheckpointCoordinator,
    CompletedCheckpoint,
    Restore,
    SimulatedFailure,
)
from winviz.datastream import Node, StreamExecutionEnvironment
from winviz.errors import InputError
from winviz.functions import OutputTag
from winviz.operators.base import JobContext, Output, StreamOperator
from winviz.operators.inputs import InputGate
from winviz.operators.keyed_process import KeyedProcessOperator
from winviz.operators.simple import (
    FilterOperator,
    FlatMapOperator,
    MapOperator,
    Record,
    SinkOperator,
)
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.operators.split_watermarks import SplitWatermarksOperator
from winviz.operators.window_functions import (
    AggregateWindowFunction,
    ApplyWindowFunction,
    ListWindowFunction,
    ReduceWindowFunction,
)
from winviz.operators.window_operator import WindowOperator
from winviz.trace import Trace


@dataclass
class JobExecutionResult:
    """What a run produced: each sink's records, each side output's records, per-operator
    metrics and the trace; with checkpointing, the completed checkpoints and the restores
    after failures."""

    job_name: str
    outputs: dict[str, list[Record]] = field(default_factory=dict)
    side_outputs: dict[str, list[Record]] = field(default_factory=dict)
    metrics: dict[str, dict[str, int]] = field(default_factory=dict)
    trace: Trace | None = None
    checkpoints: list[CompletedCheckpoint] = field(default_factory=list)
    restores: list[Restore] = field(default_factory=list)

    def output_frame(self, name: str):
        """A sink's records as a pandas DataFrame (dict values become columns)."""
        return _frame(self.outputs[name])

    def side_output_frame(self, tag: str | OutputTag):
        key = tag.id if isinstance(tag, OutputTag) else tag
        return _frame(self.side_outputs.get(key, []))

    @property
    def num_late_records_dropped(self) -> int:
        return sum(m.get("num_late_records_dropped", 0) for m in self.metrics.values())


def _frame(records: list[Record]):
    import pandas as pd

    rows = []
    for r in records:
        row = dict(r.value) if isinstance(r.value, dict) else {"value": r.value}
        row["timestamp"] = r.timestamp
        row["processing_time"] = r.processing_time
        rows.append(row)
    return pd.DataFrame(rows)


class _FanOut(Output):
    """Sends records, watermarks and watermark statuses to every downstream operator (or its
    input channel, when it has several inputs); side outputs to the consumers of that tag and
    to the result."""

    def __init__(self, runtime: JobRuntime, node: Node) -> None:
        self.runtime = runtime
        self.targets: list[Any] = []  # StreamOperators and InputChannels
        self.side_targets: dict[str, list[Any]] = defaultdict(list)
        self.node = node

    def collect(self, value, ts):
        for t in self.targets:
            t.process_element(value, ts)

    def collect_side(self, tag, value, ts):
        self.runtime.result.side_outputs.setdefault(tag.id, []).append(
            Record(value, ts, self.runtime.job.now)
        )
        for t in self.side_targets.get(tag.id, ()):
            t.process_element(value, ts)

    def collect_batch(self, batch):
        for t in self.targets:
            t.process_batch(batch)

    def emit_watermark(self, watermark):
        for t in self.targets:
            t.process_watermark(watermark)
        for targets in self.side_targets.values():
            for t in targets:
                t.process_watermark(watermark)

    def emit_watermark_status(self, idle):
        for t in self.targets:
            t.process_watermark_status(idle)
        for targets in self.side_targets.values():
            for t in targets:
                t.process_watermark_status(idle)


class _Passthrough(StreamOperator):
    """The node of ``get_side_output``: forwards what its side channel receives."""

    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        self.output.collect(value, ts)


class _RollingReduce:
    """KeyedStream.reduce: emits the running reduction per key."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def process_element(self, value, ctx, out):
        current = ctx.state("rolling")
        current = value if current is None else self.fn(current, value)
        ctx.update_state("rolling", current)
        out.collect(current)


def _window_function(p: dict[str, Any]):
    kind = p["function_kind"]
    if kind == "reduce":
        return ReduceWindowFunction(p["fn"], p["process_function"])
    if kind == "aggregate":
        return AggregateWindowFunction(p["fn"], p["process_function"])
    if kind == "apply":
        return ApplyWindowFunction(p["process_function"])
    return ListWindowFunction(p["process_function"])


class JobRuntime:
    """Builds and runs one execution of a job graph."""

    def __init__(
        self, env: StreamExecutionEnvironment, job_name: str, fail_at: Iterable[int] = ()
    ) -> None:
        self.env = env
        self.trace = Trace() if env.trace_enabled else None
        self.job = JobContext(trace=self.trace)
        self.result = JobExecutionResult(job_name, trace=self.trace, metrics=self.job.metrics)
        self.coordinator = CheckpointCoordinator(self, env.checkpoint_config, fail_at)
        self.result.checkpoints = self.coordinator.completed
        self.result.restores = self.coordinator.restores
        self.rebuild()

    def rebuild(self) -> None:
        """Build every operator from the job graph (again, after a failure: Flink restarts
        the tasks with fresh operators and then loads their state)."""
        self.operators: dict[Node, StreamOperator] = {}
        self.order: list[StreamOperator] = []
        self.sources: list[SourceOperator] = []
        self.generators: list[TimestampsAndWatermarksOperator] = []
        self.sinks: list[SinkOperator] = []
        self.gates: dict[str, InputGate] = {}
        self.result.outputs.clear()
        self.result.side_outputs.clear()
        self.job.metrics.clear()  # the result's metrics: every operator registers on open
        self._build()
        self.keyed = [op for op in self.order if op.is_keyed]

    def start(self, start: int) -> None:
        """Open every operator and start the clock and the periodic watermark emission."""
        for op in self.order:
            op.open(self.job)
        self.job.now = start
        for g in self.generators:
            g.start(start)

    # -- building ---------------------------------------------------------------------------

    def _make(self, node: Node) -> StreamOperator:
        p, name = node.params, node.name
        if node.kind == "source":
            return SourceOperator(
                name, p["records"], p.get("partitions"), p.get("num_partitions", 1)
            )
        if node.kind == "split_watermarks":
            source = node.inputs[0]
            return SplitWatermarksOperator(
                name,
                p["strategy"],
                self.env.auto_watermark_interval,
                self.env.tz,
                source.name,
                source.params["num_partitions"],
            )
        if node.kind == "watermarks":
            return TimestampsAndWatermarksOperator(
                name, p["strategy"], self.env.auto_watermark_interval, self.env.tz
            )
        if node.kind == "map":
            return MapOperator(name, p["fn"])
        if node.kind == "filter":
            return FilterOperator(name, p["fn"])
        if node.kind == "flat_map":
            return FlatMapOperator(name, p["fn"])
        if node.kind == "process":
            return KeyedProcessOperator(name, p["key_selector"], p["function"])
        if node.kind == "rolling_reduce":
            return KeyedProcessOperator(name, p["key_selector"], _RollingReduce(p["fn"]))
        if node.kind == "window":
            return WindowOperator(
                name,
                p["key_selector"],
                p["assigner"],
                _window_function(p),
                p["trigger"],
                p["allowed_lateness"],
                p["late_data_tag"],
                p["evictor"],
            )
        if node.kind == "side":
            return _Passthrough(name)
        if node.kind == "sink":
            return SinkOperator(name)
        raise InputError(f"unknown node kind {node.kind!r}")  # pragma: no cover

    @staticmethod
    def _channels(node: Node) -> list[Node]:
        """The operators that feed ``node``, one per input channel: a union is no operator,
        its inputs feed the union's consumer directly."""
        if node.kind != "union":
            return [node]
        return [c for parent in node.inputs for c in JobRuntime._channels(parent)]

    def _build(self) -> None:
        outputs: dict[Node, _FanOut] = {}
        for node in self.env.nodes:  # nodes are created after their inputs: a topological order
            if node.kind == "union":
                continue
            op = self._make(node)
            self.operators[node] = op
            self.order.append(op)
            outputs[node] = _FanOut(self, node)
            op.output = outputs[node]
            parents = [c for parent in node.inputs for c in self._channels(parent)]
            if node.side_of is not None:
                for parent in parents:
                    outputs[parent].side_targets[node.side_of.id].append(op)
            elif len(parents) == 1:  # one input: the upstream calls the operator directly
                outputs[parents[0]].targets.append(op)
            elif parents:  # several: through an input gate and its watermark valve
                gate = InputGate(op, [parent.name for parent in parents])
                self.gates[op.name] = gate
                for parent, channel in zip(parents, gate.channels, strict=True):
                    outputs[parent].targets.append(channel)
            if isinstance(op, SourceOperator):
                self.sources.append(op)
            elif isinstance(op, TimestampsAndWatermarksOperator):
                self.generators.append(op)
            elif isinstance(op, SinkOperator):
                self.sinks.append(op)
                self.result.outputs[op.name] = op.records
        if not self.sources:
            raise InputError("the job has no source (use env.from_collection or from_pandas)")

    # -- the clock --------------------------------------------------------------------------

    def _next_due(self) -> int | None:
        """The earliest periodic watermark emission or processing-time timer, if any."""
        due = None
        for g in self.generators:
            t = g.next_periodic
            if t is not None and (due is None or t < due):
                due = t
        for op in self.keyed:
            t = op.next_processing_timer()
            if t is not None and (due is None or t < due):
                due = t
        return due

    def advance_clock(self, target: int) -> None:
        """Step the clock to ``target`` through everything due before or at it: at each due
        time, sources' periodic watermark emissions first, then operators' timers."""
        job = self.job
        while (due := self._next_due()) is not None and due <= target:
            now = job.now = max(due, job.now)
            for g in self.generators:
                if g.next_periodic is not None and g.next_periodic <= now:
                    g.next_periodic = now + g.interval
                    g.periodic_emit()
                    self._skip_quiet_periods(g, target)
            for op in self.keyed:
                op.advance_processing_time(now)
        if target > job.now:
            job.now = target

    def _skip_quiet_periods(self, g: TimestampsAndWatermarksOperator, target: int) -> None:
        """A generator without idleness that saw no event emits the same watermark again
        (and it is dropped): jump over such periods up to the next thing that is due."""
        if g.strategy.idle_timeout is not None or g.events_since_emit:
            return
        timers = [t for op in self.keyed if (t := op.next_processing_timer()) is not None]
        limit = min([target, *timers])
        if g.next_periodic is not None and g.next_periodic < limit:
            steps = (limit - g.next_periodic) // g.interval
            g.next_periodic += steps * g.interval

    # -- running ----------------------------------------------------------------------------

    def _segments(
        self, positions: dict[str, int] | None = None
    ) -> Iterator[tuple[SourceOperator, int, int]]:
        """Runs ``(source, start, end)`` of consecutive records of one source (and of one of
        its partitions), in arrival order over all sources (equal arrival times: the source
        defined first goes first), from each source's ``positions`` (a replay) or the start."""
        for src, start, end in self._source_runs(positions or {}):
            parts = src.partitions
            if parts is None:
                yield src, start, end
                continue
            # a batch never spans two partitions
            for k in range(start + 1, end):
                if parts[k] != parts[k - 1]:
                    yield src, start, k
                    start = k
            yield src, start, end

    def _source_runs(self, positions: dict[str, int]) -> Iterator[tuple[SourceOperator, int, int]]:
        skip = [positions.get(src.name, 0) for src in self.sources]
        if len(self.sources) == 1:
            src = self.sources[0]
            if skip[0] < len(src.records):
                yield src, skip[0], len(src.records)
            return
        # one (arrival, source, index) iterator per source; each binds its own source number
        # (a nested generator expression would see only the last one: late binding)
        merged = heapq.merge(
            *(
                zip((rec[0] for rec in src.records), repeat(s), count())
                for s, src in enumerate(self.sources)
            )
        )
        current, start, end = None, 0, 0
        for _, s, k in merged:
            if k < skip[s]:  # read before the checkpoint: not replayed
                continue
            if s != current:
                if current is not None:
                    yield self.sources[current], start, end
                current, start = s, k
            end = k + 1
        if current is not None:
            yield self.sources[current], start, end

    def run(self, until: int | None = None) -> JobExecutionResult:
        firsts = [src.records[0][0] for src in self.sources if src.records]
        start = min(firsts) if firsts else 0
        # Without a trace, records that arrive before the next thing on the processing clock
        # may go through in batches (same results; the trace keeps the one-by-one order).
        batching = self.trace is None and all(op.batch_safe for op in self.order)
        job = self.job
        try:
            self.coordinator.start(start, sum(len(src.records) for src in self.sources))
            self.start(start)
            positions = None
            while True:
                try:
                    self._read_input(positions, batching)
                    break
                except SimulatedFailure as failure:
                    positions = self.coordinator.recover(failure)
            job.record_index = None
            job.partition = None
            if until is not None:
                self.advance_clock(until)
            for src in self.sources:
                src.end_of_input()
            for op in self.order:
                op.finish()
        except Exception as exc:
            if self.trace is not None:
                self.trace.emit("error", self.job.now, None, "job", None, None, None, str(exc))
            exc.trace = self.trace  # type: ignore[attr-defined]
            exc.partial_result = self.result  # type: ignore[attr-defined]
            raise
        return self.result

    def _read_input(self, positions: dict[str, int] | None, batching: bool) -> None:
        """Hand every source record over at its arrival time (from ``positions`` on, after a
        restore). With checkpointing the coordinator sees every cut between two records, and
        a batch never runs past a cut where it has something to do."""
        job = self.job
        coordinator = self.coordinator
        checkpointing = coordinator.active
        consumed = sum(src.position for src in self.sources)
        for src, i, end in self._segments(positions):
            records = src.records
            while i < end:
                arrival, index, value, ts = records[i]
                if checkpointing:
                    coordinator.at_cut(consumed, arrival)
                self.advance_clock(arrival)
                if not batching:
                    job.record_index = index
                    src.process_element(value, ts)
                    i += 1
                    consumed += 1
                    continue
                due = self._next_due()
                if checkpointing and (t := coordinator.next_trigger_time) is not None:
                    due = t if due is None else min(due, t)
                j = i + 1
                if due is None:
                    j = end
                else:
                    while j < end and records[j][0] < due:
                        j += 1
                if checkpointing and (cut := coordinator.next_cut(consumed)) is not None:
                    j = min(j, i + cut - consumed)
                src.process_batch(records[i:j])
                job.now = records[j - 1][0]
                consumed += j - i
                i = j
        if checkpointing:
            coordinator.at_cut(consumed, None)
