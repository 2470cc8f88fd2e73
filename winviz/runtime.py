"""The simulated-clock executor (Flink's task execution): builds operator subtasks from the job
graph and replays the sources' records in arrival order on a deterministic processing clock.

Before a record is handed over at its arrival time, the clock steps through every earlier moment
something was due (periodic watermark emissions, processing-time timers); at equal times sources
first, then operators upstream to downstream. At the end of input every source emits MAX.

An operator of parallelism ``n`` runs as subtasks ``op#0`` … ``op#n-1`` (``op`` when ``n = 1``);
records cross exchanges, watermarks and statuses are broadcast, several input channels meet in an
``InputGate``. Flink runs subtasks concurrently; winviz one event at a time, so the same input gives
the same trace: a record travels depth-first through the job before the next."""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, count, repeat
from typing import Any

from winviz import batch_execution
from winviz.checkpoints import (
    CheckpointCoordinator,
    CompletedCheckpoint,
    Restore,
    SimulatedFailure,
    job_manifest,
)
from winviz.collector import fewer_full_collections, promote_to_oldest
from winviz.errors import InputError
from winviz.graph import (
    BuildContext,
    Node,
    PartitionSpec,
    SourceSpec,
    SplitWatermarksSpec,
    StreamGraph,
    UnionSpec,
    WindowSpec,
)
from winviz.keygroups import KeyRule, check_fits, compute_default_max_parallelism
from winviz.operators.aligned_input import AlignedInput
from winviz.operators.base import JobContext, Output, StreamOperator
from winviz.operators.chaining import chain_operators, install_kernel
from winviz.operators.co_process import CoInput, CoInputGate
from winviz.operators.exchange import Exchange
from winviz.operators.inputs import InputGate
from winviz.operators.simple import Record, _new_record
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.partitioners import (
    FORWARD,
    HASH,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    check_forward,
    default_partitioner,
)
from winviz.time import MAX
from winviz.trace import Trace


@dataclass
class JobExecutionResult:
    """What a run produced: sink and side-output records, per-operator metrics, the trace, and the
    checkpoints and restores."""

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
    """Sends records, watermarks and statuses to every downstream operator (or input channel); side
    outputs to that tag's consumers and to the result."""

    def __init__(self, runtime: JobRuntime) -> None:
        self.runtime = runtime
        self.targets: list[Any] = []  # StreamOperators and InputChannels
        self.side_targets: dict[str, list[Any]] = defaultdict(list)

    def collect(self, value, ts):
        for t in self.targets:
            t.process_element(value, ts)

    def wired(self) -> _FanOut:
        """This output, or with a single target a ``_ToOne`` (one frame less per record)."""
        return _ToOne(self) if len(self.targets) == 1 else self

    def collect_side(self, tag, value, ts):
        runtime = self.runtime
        runtime.result.side_outputs.setdefault(tag.id, []).append(
            _new_record(Record, (value, ts, runtime.job.now))  # (Record(value, ts, now))
        )
        for t in self.side_targets.get(tag.id, ()):
            t.process_element(value, ts)

    def collect_batch(self, batch):
        for t in self.targets:
            t.process_batch(batch)

    def _to_all(self, method: str, arg: Any) -> None:
        """``method(arg)`` of every target, then of every side target."""
        for t in (*self.targets, *chain.from_iterable(self.side_targets.values())):
            getattr(t, method)(arg)

    def emit_watermark(self, watermark):
        self._to_all("process_watermark", watermark)

    def emit_watermark_status(self, idle):
        self._to_all("process_watermark_status", idle)


class _ToOne(_FanOut):
    """A ``_FanOut`` with one target: ``collect`` is that target's ``process_element``, bound."""

    collect: Callable[[Any, int | None], None]

    def __init__(self, fanout: _FanOut) -> None:
        super().__init__(fanout.runtime)
        self.targets, self.side_targets = fanout.targets, fanout.side_targets
        self.collect = fanout.targets[0].process_element
        self.sided = any(fanout.side_targets.values())

    def emit_watermark(self, watermark):
        if self.sided:
            self._to_all("process_watermark", watermark)
        else:
            self.targets[0].process_watermark(watermark)


def _is_window_all(node: Node) -> bool:
    return isinstance(node.spec, WindowSpec) and node.spec.window_all


def _null_byte_key(_: Any) -> int:
    """Flink's ``NullByteKeySelector``: ``windowAll`` routes every record by the key ``(byte)
    0``."""
    return 0


class JobRuntime:
    """Builds and runs one execution of a job graph."""

    use_batches = True
    """Whether records may go through in batches; tests turn it off to compare the traces."""

    gc_full_collection_threshold: int | None = 100
    """CPython's third GC threshold during ``run`` (``winviz.collector.fewer_full_collections``):
    full collections would visit the whole trace again and again. None: the collector as it is."""

    def __init__(
        self,
        env: StreamGraph,
        job_name: str,
        fail_at: Iterable[int] = (),
        restore_from: Any = None,
    ) -> None:
        self.env = env
        self.restore_from = restore_from
        """A snapshot to start from (``execute(restore_from=...)``), else None."""
        self.batch = batch_execution.is_batch(
            getattr(env, "runtime_mode", batch_execution.RuntimeExecutionMode.STREAMING)
        )
        """BATCH execution (``env.set_runtime_mode``; ``winviz.batch_execution``)."""
        checkpoints = env.checkpoint_config is not None or fail_at or restore_from is not None
        if self.batch and checkpoints:
            raise batch_execution.UnsupportedOperationError(
                "checkpoints, failures and restores are not supported in BATCH mode (Flink: "
                "Checkpoints are not supported with sorted inputs in the BATCH runtime)"
            )
        self.trace = Trace() if env.trace_enabled else None
        self.job = JobContext(
            trace=None if self.trace is None else self.trace.writer,
            timer_firing_budget=env.timer_firing_budget,
        )
        self.result = JobExecutionResult(job_name, trace=self.trace, metrics=self.job.metrics)
        self.coordinator = CheckpointCoordinator(self, env.checkpoint_config, fail_at)
        self.result.checkpoints = self.coordinator.completed
        self.result.restores = self.coordinator.restores
        self.rebuild()

    def rebuild(self) -> None:
        """Build every operator from the job graph (again after a failure, as Flink restarts
        tasks)."""
        self.order: list[StreamOperator] = []
        self.sources: list[SourceOperator] = []
        self.generators: list[TimestampsAndWatermarksOperator] = []
        self.gates: dict[str, InputGate] = {}
        self.result.outputs.clear()
        self.result.side_outputs.clear()
        self.job.metrics.clear()  # the result's metrics: every operator registers on open
        self._build()
        # the only ones that can have processing-time timers (the others' clock is the job's)
        self.timer_owners = [
            op for op in self.order if op.is_keyed and op.registers_processing_timers
        ]

    # -- what the checkpoint coordinator calls (winviz.checkpoints) ---------------------------

    def manifest(self) -> dict[str, str]:
        return job_manifest(
            (subs, self._max_parallelism(node, len(subs))) for node, subs in self.subtasks.items()
        )

    def set_clock(self, now: int) -> None:
        """The clock of a restored job; the generators start their periodic emission from it."""
        self.job.now = now
        for g in self.generators:
            g.start(now)

    def restart(self) -> None:
        """Fresh operators, opened, the clock at the run's start (after a failure)."""
        self._drop_parts()
        self.rebuild()
        self.start(self.origin)

    def start(self, start: int) -> None:
        """Open every operator and start the clock and the periodic watermark emission."""
        self.origin = start
        for op in self.order:
            op.open(self.job)
        self.job.now = start
        for g in self.generators:
            g.start(start)
        if self.alignment is not None:
            self.alignment.start(start)

    # -- building ---------------------------------------------------------------------------

    def _parallelism(self, node: Node) -> int:
        """How many subtasks run ``node``: its own parallelism, else the environment's;
        non-parallel operators 1; per-split watermarks and side outputs as their input."""
        if isinstance(node.spec, SplitWatermarksSpec) or node.side_of is not None:
            return self._parallelism(node.inputs[0])
        if node.non_parallel:
            return 1
        return node.parallelism or self.env.parallelism

    def _max_parallelism(self, node: Node, parallelism: int) -> int:
        """The operator's key groups: its own, else the environment's, else Flink's default; never
        below its parallelism (``StreamingJobGraphGenerator``'s check)."""
        mp = node.max_parallelism or self.env.max_parallelism
        if mp is None:
            return compute_default_max_parallelism(parallelism)
        check_fits(parallelism, mp, f" of operator {node.name!r}")
        return mp

    def _make(self, node: Node, subtask: int, parallelism: int, name: str) -> StreamOperator:
        """One subtask's fresh operator, with its own copy of the user's functions."""
        return node.spec.shipped(node.name).build(
            BuildContext(
                name,
                node.name,
                subtask,
                parallelism,
                self.env.auto_watermark_interval,
                self.env.tz,
                self.result.outputs,
            )
        )

    @staticmethod
    def _resolve(node: Node, partitioner: str | None = None) -> list[tuple[Node, str | None]]:
        """The operators that feed ``node``'s consumer, one per edge, with the partitioner asked for
        on the way (the nearest wins): unions and partitionings are no operators."""
        if isinstance(node.spec, UnionSpec):
            return [e for parent in node.inputs for e in JobRuntime._resolve(parent, partitioner)]
        if isinstance(node.spec, PartitionSpec):
            inner = node.spec.partitioner if partitioner is None else partitioner
            return JobRuntime._resolve(node.inputs[0], inner)
        return [(node, partitioner)]

    def _edges(
        self, node: Node, inputs: list[Node], key_selector: Any
    ) -> list[tuple[Node, str, Any]]:
        """``(upstream node, partitioner, key selector)`` per edge of one input: ``key_by`` hashes,
        else the partitioner asked for, else Flink's default."""
        down = self.parallelism[node]
        edges = []
        for parent, asked in (e for i in inputs for e in self._resolve(i)):
            up = self.parallelism[parent]
            kind = HASH if key_selector is not None else asked or default_partitioner(up, down)
            if kind == FORWARD:
                check_forward(parent.name, up, node.name, down)
            edges.append((parent, kind, key_selector))
        return edges

    def _build(self) -> None:
        """Expand the job graph into subtasks and wire them (Flink's ``ExecutionGraph``): one input
        channel per upstream subtask that can send; several meet in an ``InputGate``."""
        self.parallelism: dict[Node, int] = {}
        self.subtasks: dict[Node, list[StreamOperator]] = {}
        self.exchanges: dict[str, Exchange] = {}
        outputs: dict[StreamOperator, _FanOut] = {}
        self.sorting_inputs: dict[StreamOperator, Any] = {}
        """BATCH: each keyed subtask's ``SortingDataInput`` (``winviz.batch_execution``)."""
        logical = 0
        for node in self.env.nodes:  # nodes are created after their inputs: a topological order
            if node.is_virtual:
                continue
            par = self.parallelism[node] = self._parallelism(node)
            max_par = self._max_parallelism(node, par)
            names = [node.name] if par == 1 else [f"{node.name}#{i}" for i in range(par)]
            subs = [self._make(node, i, par, name) for i, name in enumerate(names)]
            for op in subs:  # (before anything upstream binds the operator's methods)
                if self.batch:
                    sorting = batch_execution.prepare(op)
                    if sorting is not None:  # upstream is wired to it (_wire), not to op
                        self.sorting_inputs[op] = sorting
                else:
                    install_kernel(op, traced=self.trace is not None)
            self.subtasks[node] = subs
            if subs[0].is_keyed:  # one key rule for all subtasks (winviz.keygroups.KeyRule)
                rule = KeyRule(window_all=_is_window_all(node))
                for op in subs:
                    op.key_rule = rule  # type: ignore[attr-defined]
            for i, op in enumerate(subs):
                op.logical_name, op.subtask, op.parallelism = node.name, i, par
                self.order.append(op)
                outputs[op] = op.output = _FanOut(self)  # type: ignore[assignment]
                if isinstance(op, SourceOperator):
                    op.logical_index = logical  # type: ignore[attr-defined]
                    self.sources.append(op)
                elif isinstance(op, TimestampsAndWatermarksOperator):
                    self.generators.append(op)
            if isinstance(node.spec, SourceSpec):
                logical += 1
            if node.side_of is not None:  # a side output: subtask i of its producer feeds i
                parent = node.inputs[0]
                for up, op in zip(self.subtasks[parent], subs, strict=True):
                    outputs[up].side_targets[node.side_of.id].append(
                        self.sorting_inputs.get(op, op)
                    )
                continue
            if node.spec.two_inputs:
                inputs = [(k, [node.inputs[k]], node.spec.key_selector_of(k)) for k in (0, 1)]
            else:
                inputs = [(0, node.inputs, node.spec.key_selector_of(0))] if node.inputs else []
            for k, parents, selector in inputs:
                if _is_window_all(node):
                    selector = _null_byte_key  # windowAll: Flink's NullByteKeySelector
                edges = self._edges(node, parents, selector)
                self._wire(node, k, subs, edges, outputs, max_par)
        if not self.sources:
            raise InputError("the job has no source (use env.from_collection or from_pandas)")
        chain_operators(self.order, lambda op: outputs[op].targets)
        self.alignment: AlignedInput | None = None  # watermark alignment (aligned_input)
        # (in BATCH no watermark is generated, so no reader ever reports: no alignment)
        if AlignedInput.any_aligned(self.order) and not self.batch:
            self.alignment = AlignedInput(self, {op: outputs[op].targets for op in self.order})
        for op, out in outputs.items():
            op.output = out.wired()

    def _wire(
        self,
        node: Node,
        k: int,
        subs: list[StreamOperator],
        edges: list[tuple[Node, str, Any]],
        outputs: dict[StreamOperator, _FanOut],
        max_par: int,
    ) -> None:
        """Connect input ``k`` of every subtask of ``node`` to its upstream subtasks."""
        two_inputs = node.spec.two_inputs
        par = len(subs)
        # Every downstream subtask has the same channels: edge by edge, one (forward: from
        # upstream subtask j) or one per upstream subtask; offsets[e] is edge e's first.
        offsets: list[int] = []
        num_channels = 0
        for parent, kind, _ in edges:
            offsets.append(num_channels)
            num_channels += 1 if kind == FORWARD else len(self.subtasks[parent])
        up_names = [[up.name for up in self.subtasks[parent]] for parent, _, _ in edges]
        receivers: list[Any] = []  # where subtask j takes records: the operator or its input
        gates: list[Any] = []  # subtask j's input gate (with more than one channel)
        for j, op in enumerate(subs):
            receiver: Any = CoInput(op, k) if two_inputs else self.sorting_inputs.get(op, op)
            receivers.append(receiver)
            if num_channels == 1:
                gates.append(None)
                continue
            names: list[str] = []
            for e, (_, kind, _) in enumerate(edges):
                names += [up_names[e][j]] if kind == FORWARD else up_names[e]
            gate = CoInputGate(receiver, names) if two_inputs else InputGate(receiver, names)
            self.gates[gate.name] = gate
            gates.append(gate)

        def channel(j: int, index: int) -> Any:
            """What an upstream calls to reach channel ``index`` of subtask ``j``."""
            return receivers[j] if gates[j] is None else gates[j].channel(index)

        sub_names = [s.name for s in subs]  # shared by the exchanges (read only)
        for e, (parent, kind, selector) in enumerate(edges):
            ups = self.subtasks[parent]
            for i, up in enumerate(ups):
                if kind == FORWARD or len(ups) == par == 1:  # subtask i to i: a plain hand-over
                    outputs[up].targets.append(channel(i, offsets[e]))
                    continue
                if kind == HASH:
                    partitioner: Any = KeyGroupStreamPartitioner(selector, par, max_par)
                else:
                    partitioner = RebalancePartitioner(par, first=i % par)
                exchange = Exchange(up, receivers, sub_names, partitioner, self.trace is not None)
                if kind == HASH and subs[0].is_keyed:
                    exchange.key_rule = subs[0].key_rule  # type: ignore[attr-defined]
                if gates[0] is not None:  # the gates take this exchange's channel directly
                    exchange.gates, exchange.channel_index = gates, offsets[e] + i
                self.exchanges[f"{up.name}->{node.name}/{k + 1}.{e}"] = exchange
                outputs[up].targets.append(exchange)

    # -- the clock --------------------------------------------------------------------------

    def _next_due(self) -> int | None:
        """The earliest periodic watermark emission or processing-time timer, if any."""
        due = None
        for g in self.generators:
            t = g.next_periodic
            if t is not None and (due is None or t < due):
                due = t
        for op in self.timer_owners:
            t = op.next_processing_timer()
            if t is not None and (due is None or t < due):
                due = t
        if self.alignment is not None and (t := self.alignment.next_due()) is not None:
            due = t if due is None else min(due, t)
        return due

    def advance_clock(self, target: int) -> None:
        """Step the clock to ``target`` through everything due before or at it: at each due
        time, sources' periodic watermark emissions first, then operators' timers."""
        if target == MAX and self.timer_owners:
            # a chain of processing-time timers could run to MAX: count it as one advance
            # (winviz.timers, the firing budget)
            self.job.chain_watch = object()
            try:
                self._advance_clock(target)
            finally:
                self.job.chain_watch = None
            return
        self._advance_clock(target)

    def _advance_clock(self, target: int) -> None:
        job, generators, next_due = self.job, self.generators, self._next_due
        while (due := next_due()) is not None and due <= target:
            now = job.now = max(due, job.now)
            for g in generators:
                if g.next_periodic is not None and g.next_periodic <= now:
                    g.next_periodic = now + g.interval
                    g.periodic_emit()
                    if self.alignment is not None:
                        self.alignment.sync(g)
                    elif g.next_periodic < target:  # (else there is no period to skip)
                        self._skip_quiet_periods(g, target)
            if self.alignment is not None:  # reports, then announcements (aligned_input)
                self.alignment.tick(now)
            for op in self.timer_owners:
                op.advance_processing_time(now)
        if target > job.now:
            job.now = target

    def _skip_quiet_periods(self, g: TimestampsAndWatermarksOperator, target: int) -> None:
        """A generator without idleness that saw no event would repeat its watermark: skip such
        periods."""
        if g.strategy.idle_timeout is not None or g.events_since_emit:
            return
        timers = [t for op in self.timer_owners if (t := op.next_processing_timer()) is not None]
        limit = min([target, *timers])
        if g.next_periodic is not None and g.next_periodic < limit:
            steps = (limit - g.next_periodic) // g.interval
            g.next_periodic += steps * g.interval

    # -- running ----------------------------------------------------------------------------

    def _segments(
        self, positions: dict[str, int] | None = None
    ) -> Iterator[tuple[SourceOperator, int, int]]:
        """Runs ``(source, start, end)`` of one source (and partition) in arrival order over all
        sources (ties: the first defined), from ``positions`` (a replay) or the start."""
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
        # (arrival, source, place in the source's order, subtask, index): the subtasks of a
        # parallel source are read in the order of the whole source (arrival, then partition)
        merged = heapq.merge(
            *(
                zip(
                    src.records.arrivals,
                    repeat(src.logical_index),  # type: ignore[attr-defined]
                    count() if src.order is None else src.order,
                    repeat(s),
                    count(),
                )
                for s, src in enumerate(self.sources)
            )
        )
        current, start, end = None, 0, 0
        for _, _, _, s, k in merged:
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
        """Run the job with fewer full GC passes (``gc_full_collection_threshold``)."""
        with fewer_full_collections(self.gc_full_collection_threshold):
            if self.gc_full_collection_threshold is not None:
                promote_to_oldest()
            return self._run(until)

    def close(self) -> None:
        """The job is over: the runtime and its parts drop what they hold, undoing the job's
        reference cycles, so a dropped result and its trace go by reference counting alone."""
        self._drop_parts()
        vars(self).clear()

    def _drop_parts(self) -> None:
        """Drop what the operators, gates and exchanges hold (``close``, ``restart``)."""
        for part in (*self.order, *self.gates.values(), *self.exchanges.values()):
            vars(part).clear()

    def _run(self, until: int | None) -> JobExecutionResult:
        firsts = [src.records.arrivals[0] for src in self.sources if src.records]
        start = min(firsts) if firsts else 0
        # Records that arrive before the next thing on the processing clock may go through
        # in batches (same results). With a trace, the source still hands each record of a
        # batch downstream before the next one: the trace keeps the one-by-one order.
        batching = self.use_batches and all(op.takes_batches for op in self.order)
        job = self.job
        try:
            self.coordinator.start(start, sum(len(src.records) for src in self.sources))
            self.start(start)
            positions = None
            if self.restore_from is not None:
                positions = self.coordinator.restore_from(self.restore_from)
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
                self.trace.writer.error(self.job.now, None, "job", str(exc))
            exc.trace = self.trace  # type: ignore[attr-defined]
            exc.partial_result = self.result  # type: ignore[attr-defined]
            raise
        return self.result

    def _read_input(self, positions: dict[str, int] | None, batching: bool) -> None:
        """Hand every source record over at its arrival time (from ``positions`` on); a batch never
        runs past a cut where the checkpoint coordinator has something to do."""
        job = self.job
        coordinator = self.coordinator
        checkpointing = coordinator.active
        if self.alignment is not None:
            if checkpointing or positions is not None:
                raise InputError(
                    "watermark alignment and checkpointing / restoring together are not "
                    "supported by winviz (a held-back partition breaks the replay positions)",
                    field="checkpointing",
                    expected="a job with alignment and without enable_checkpointing / restore_from",
                )
            self.alignment.read()
            return
        consumed = sum(src.position for src in self.sources)
        # Without processing-time timers, only advance_clock moves the next due time (the
        # generators' periodic emissions): it is looked up once per clock step, and until the
        # clock reaches it a record just sets the clock.
        steady = not self.timer_owners
        due_at = self._next_due() if steady else None
        for src, i, end in self._segments(positions):
            records = src.records
            arrivals, indices = records.arrivals, records.indices
            while i < end:
                arrival = arrivals[i]
                if checkpointing:
                    coordinator.at_cut(consumed, arrival)
                if steady and (due_at is None or arrival < due_at):
                    if arrival > job.now:
                        job.now = arrival
                else:
                    self.advance_clock(arrival)
                    if steady:
                        due_at = self._next_due()
                if not batching:
                    job.record_index = indices[i]
                    src.process_element(records.values[i], records.stamps[i])
                    i += 1
                    consumed += 1
                    continue
                due = due_at if steady else self._next_due()
                if checkpointing and (t := coordinator.next_trigger_time) is not None:
                    due = t if due is None else min(due, t)
                # up to the first record from ``due`` on (a source's arrivals never decrease)
                j = end if due is None else bisect_left(arrivals, due, i + 1, end)
                if checkpointing and (cut := coordinator.next_cut(consumed)) is not None:
                    j = min(j, i + cut - consumed)
                src.process_batch(records[i:j])
                # (as one by one: the clock and record index the batch's last record set)
                job.now, job.record_index = arrivals[j - 1], indices[j - 1]
                consumed += j - i
                i = j
        if checkpointing:
            coordinator.at_cut(consumed, None)
