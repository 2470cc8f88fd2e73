"""Reading sources under watermark alignment on the simulated clock (``winviz.alignment``).

A job with a source whose watermark strategy has ``with_watermark_alignment`` is read by
``AlignedInput`` instead of the runtime's arrival-order loop: a record of a paused reader (or
of a paused partition of it) is **held back** — it stays where it is, on the simulated clock,
until an announcement resumes what holds it, and then goes downstream at that moment, before
any later arrival (Flink's reader pauses its split fetchers; the records wait in the external
system, e.g. Kafka, and are read as soon as the reader resumes). Records go one by one.

The simulation's interleaving rule (Flink runs the reports, the coordinator's announcements
and the readers concurrently, driven by wall-clock timers): every ``update_interval`` ms from
the start of the job, after the sources' periodic watermark emissions due then, every aligned
reader subtask samples, checks and reports (sources in definition order, subtasks in order),
then every source's coordinator announces to its subtasks, which check at once. A reader that
has read all its records finishes: it reports MAX at once (Flink's ``DATA_FINISHED``) and
takes no further part (its task has finished: no more samples, announcements dropped); its
watermark downstream still becomes MAX only at the end of the whole input, as for every source
in winviz.

While a reader (a partition) is paused, its idleness timer does not run (Flink's
``PausableRelativeClock``): a paused source is never marked idle for being paused.

Trace: ``paused`` / ``resumed`` records, written by the watermark operator right after the
source (in Flink both are the one ``SourceOperator``), ``ts`` = the oldest watermark sample
that was checked, detail ``input`` (the reader — the source's name, or its subtask's — or the
partition ``source[p]``), ``max_allowed`` (the announced max desired watermark) and ``group``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from winviz.alignment import (
    DEFAULT_BUFFER_SIZE,
    AlignmentCoordinator,
    Decision,
    SourceReaderAlignment,
    WatermarkAggregator,
)
from winviz.errors import AlignmentStallError, InputError
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.operators.split_watermarks import SplitWatermarksOperator
from winviz.time import MAX
from winviz.watermarks import WatermarksWithIdleness

if TYPE_CHECKING:
    from winviz.runtime import JobRuntime


class PausableClock:
    """Flink's ``PausableRelativeClock``: the processing clock minus the time spent paused
    (what an idleness timer of a paused split or reader reads)."""

    def __init__(self, job: Any) -> None:
        self.job = job
        self.paused_since: int | None = None
        self.paused_total = 0

    def __call__(self) -> int:
        now = self.job.now if self.paused_since is None else self.paused_since
        return now - self.paused_total

    def pause(self) -> None:
        if self.paused_since is None:
            self.paused_since = self.job.now

    def unpause(self) -> None:
        if self.paused_since is not None:
            self.paused_total += self.job.now - self.paused_since
            self.paused_since = None


@dataclass(eq=False)
class _Reader:
    """One source subtask and the watermark operator right after it."""

    source: SourceOperator
    gen: TimestampsAndWatermarksOperator | None
    subtask: int
    order: int  # the source's place among the job's sources (definition order)
    queues: dict[Any, deque[int]]  # partition (None: the source has none) -> record indices
    state: SourceReaderAlignment | None = None
    coordinator: AlignmentCoordinator | None = None
    next_report: int | None = None
    input_name: str = ""
    partition_names: dict[Any, str] = field(default_factory=dict)
    main_clock: PausableClock | None = None
    split_clocks: dict[Any, PausableClock] = field(default_factory=dict)
    seen_split_watermark: dict[Any, int] = field(default_factory=dict)
    seen_split_idle: dict[Any, bool] = field(default_factory=dict)

    def blocked(self, partition: Any) -> bool:
        state = self.state
        if state is None:
            return False
        return (state.waiting and not state.finished) or partition in state.paused_splits

    def remaining(self) -> int:
        return sum(len(q) for q in self.queues.values())


def _aligned_strategy(op: Any) -> Any:
    strategy = getattr(op, "strategy", None)
    params = getattr(strategy, "alignment", None)
    return params if params is not None and params.enabled else None


class AlignedInput:
    """The sources of one job run, read under watermark alignment."""

    def __init__(self, runtime: JobRuntime, targets: dict[Any, list[Any]]) -> None:
        self.runtime = runtime
        self.job = runtime.job
        env = runtime.env
        self.buffer_size = getattr(env, "watermark_alignment_buffer_size", DEFAULT_BUFFER_SIZE)
        self.store: dict[str, WatermarkAggregator] = {}
        self.readers: list[_Reader] = []
        self.coordinators: list[tuple[AlignmentCoordinator, list[_Reader]]] = []
        self.next_announce: dict[AlignmentCoordinator, int] = {}
        self.last_change = 0
        self.signature: Any = None
        by_logical: dict[str, tuple[AlignmentCoordinator, list[_Reader]]] = {}
        aligned_gens = set()
        for source in runtime.sources:
            nexts = targets[source]
            gen = nexts[0] if len(nexts) == 1 else None
            if not isinstance(gen, TimestampsAndWatermarksOperator):
                gen = None
            reader = self._reader(source, gen)
            params = _aligned_strategy(gen)
            if params is not None:
                aligned_gens.add(gen)
                logical = source.logical_name
                if logical not in by_logical:
                    by_logical[logical] = (AlignmentCoordinator(logical, params, self.store), [])
                    self.coordinators.append(by_logical[logical])
                coordinator, members = by_logical[logical]
                members.append(reader)
                self._align(reader, params, coordinator)
            self.readers.append(reader)
        for op in runtime.order:  # an aligned strategy anywhere else is a mistake
            if _aligned_strategy(op) is not None and op not in aligned_gens:
                raise InputError(
                    f"operator {op.name!r}: watermark alignment works only for a strategy applied "
                    "right after a source (Flink's fromSource); this one follows another "
                    "operator, where Flink ignores it",
                    field="strategy",
                    value=op.strategy.name,
                    expected="assign_timestamps_and_watermarks(strategy) directly on "
                    "env.from_collection / from_partitions",
                )

    @staticmethod
    def any_aligned(operators: list[Any]) -> bool:
        return any(_aligned_strategy(op) is not None for op in operators)

    def _reader(self, source: SourceOperator, gen: Any) -> _Reader:
        n = len(source.records)
        if source.partitions is None:
            queues: dict[Any, deque[int]] = {None: deque(range(n))}
        else:
            queues = {p: deque() for p in source.partition_ids}
            for k in range(n):
                queues[source.partitions[k]].append(k)
        return _Reader(source, gen, source.subtask, source.logical_index, queues)  # type: ignore[attr-defined]

    def _align(self, reader: _Reader, params: Any, coordinator: AlignmentCoordinator) -> None:
        gen = reader.gen
        source = reader.source
        splits = gen.partition_ids if isinstance(gen, SplitWatermarksOperator) else None
        reader.state = SourceReaderAlignment(params, self.buffer_size, splits)
        reader.coordinator = coordinator
        reader.input_name = source.name
        reader.main_clock = PausableClock(self.job)
        if isinstance(gen, SplitWatermarksOperator):
            for p, g in zip(gen.partition_ids, gen.generators, strict=True):
                reader.partition_names[p] = f"{source.logical_name}[{p}]"
                reader.split_clocks[p] = clock = PausableClock(self.job)
                if isinstance(g, WatermarksWithIdleness):
                    g.clock = clock
                reader.seen_split_watermark[p] = gen.multiplexer.partials[gen.local[p]].watermark
                reader.seen_split_idle[p] = False
            if isinstance(gen.main_generator, WatermarksWithIdleness):
                gen.main_generator.clock = reader.main_clock
        elif isinstance(gen.generator, WatermarksWithIdleness):
            gen.generator.clock = reader.main_clock

    # -- the clock ------------------------------------------------------------------------------

    def start(self, start: int) -> None:
        for reader in self.readers:
            if reader.state is not None:
                reader.next_report = start + reader.state.params.update_interval
        for coordinator, _ in self.coordinators:
            self.next_announce[coordinator] = start + coordinator.params.update_interval
        self.last_change = start

    def next_due(self) -> int | None:
        due = None
        for reader in self.readers:
            t = reader.next_report
            if t is not None and not reader.state.finished and (due is None or t < due):  # type: ignore[union-attr]
                due = t
        for coordinator, members in self.coordinators:
            if all(r.state.finished for r in members):  # type: ignore[union-attr]
                continue  # (its announcements change nothing any more)
            t = self.next_announce[coordinator]
            if due is None or t < due:
                due = t
        return due

    def tick(self, now: int) -> None:
        """Reports, then announcements, due at ``now`` (the module's interleaving rule)."""
        for reader in self.readers:
            state = reader.state
            if state is None or state.finished or reader.next_report is None:
                continue
            if reader.next_report <= now:
                reader.next_report = now + state.params.update_interval
                decisions, report = state.sample_and_report()
                self._apply(reader, decisions)
                if report is not None:
                    reader.coordinator.report(reader.subtask, report)  # type: ignore[union-attr]
        for coordinator, members in self.coordinators:
            if self.next_announce[coordinator] <= now:
                self.next_announce[coordinator] = now + coordinator.params.update_interval
                max_allowed, receivers = coordinator.announce()
                by_subtask = {r.subtask: r for r in members}
                for subtask in receivers:
                    reader = by_subtask[subtask]
                    if reader.state.finished:  # type: ignore[union-attr]
                        continue  # (its task has finished: Flink drops the event)
                    self._apply(reader, reader.state.on_alignment_event(max_allowed))  # type: ignore[union-attr]

    # -- what the readers' watermarks did ---------------------------------------------------

    def sync(self, gen: Any) -> None:
        """After ``gen`` saw a record or emitted periodically: tell its reader's alignment
        what changed, in Flink's order (a split's status, then its watermark; then the
        reader's status and its watermark downstream)."""
        for reader in self.readers:
            if reader.gen is gen and reader.state is not None:
                self._sync(reader)

    def _sync(self, reader: _Reader) -> None:
        gen, state = reader.gen, reader.state
        decisions: list[Decision] = []
        if isinstance(gen, SplitWatermarksOperator):
            for p in gen.partition_ids:
                partial = gen.multiplexer.partials[gen.local[p]]
                if partial.idle != reader.seen_split_idle[p]:
                    reader.seen_split_idle[p] = partial.idle
                    decisions += state.update_split_idle(p, partial.idle)  # type: ignore[union-attr]
                if partial.watermark > reader.seen_split_watermark[p]:
                    reader.seen_split_watermark[p] = partial.watermark
                    decisions += state.update_split_watermark(p, partial.watermark)  # type: ignore[union-attr]
            idle = gen.idle
        else:
            idle = gen.emitter.idle  # type: ignore[union-attr]
        if idle != state.idle:  # type: ignore[union-attr]
            state.update_idle(idle)  # type: ignore[union-attr]
        watermark = gen._watermark  # type: ignore[union-attr]
        if not state.finished and watermark > state.sampler.latest and watermark != MAX:  # type: ignore[union-attr]
            decisions += state.update_effective_watermark(watermark)  # type: ignore[union-attr]
        self._apply(reader, decisions)

    def _apply(self, reader: _Reader, decisions: list[Decision]) -> None:
        gen = reader.gen
        for kind, split, oldest, max_allowed in decisions:
            clock = reader.main_clock if split is None else reader.split_clocks[split]
            if kind == "paused":
                clock.pause()  # type: ignore[union-attr]
            else:
                clock.unpause()  # type: ignore[union-attr]
            name = reader.input_name if split is None else reader.partition_names[split]
            gen.trace_event(kind, oldest, (name, max_allowed, reader.state.params.group))  # type: ignore[union-attr]

    # -- reading ---------------------------------------------------------------------------------

    def _key(self, reader: _Reader, k: int) -> tuple[int, int, int, int]:
        source = reader.source
        place = k if source.order is None else source.order[k]
        return (source.records.arrivals[k], reader.order, place, reader.subtask)

    def _next_record(self) -> tuple[_Reader, Any, int] | None:
        best = None
        best_key = None
        for reader in self.readers:
            for partition, queue in reader.queues.items():
                if not queue or reader.blocked(partition):
                    continue
                key = self._key(reader, queue[0])
                if best_key is None or key < best_key:
                    best, best_key = (reader, partition, queue[0]), key
        return best

    def _finish_if_done(self, reader: _Reader) -> None:
        """A reader that has read everything finishes when it next reads (not while it waits
        for alignment: then when it resumes)."""
        state = reader.state
        if (
            state is not None
            and not state.finished
            and not state.waiting
            and reader.remaining() == 0
        ):
            decisions, report = state.finish()
            self._apply(reader, decisions)
            if report is not None:
                reader.coordinator.report(reader.subtask, report)  # type: ignore[union-attr]

    def read(self) -> None:
        """Hand every record over: at its arrival, or — held back by a pause — when what
        paused it resumes."""
        runtime, job = self.runtime, self.job
        horizon = self._stall_horizon()
        while True:
            for reader in self.readers:
                self._finish_if_done(reader)
            pick = self._next_record()
            due = runtime._next_due()
            if pick is None:
                if all(r.state is None or r.state.finished for r in self.readers) and not any(
                    r.remaining() for r in self.readers
                ):
                    return
                self._watch_stall(horizon)
                runtime.advance_clock(due)  # type: ignore[arg-type]  (alignment ticks: never None)
                continue
            reader, partition, k = pick
            arrival = max(reader.source.records.arrivals[k], job.now)
            if due is not None and due <= arrival:
                runtime.advance_clock(due)
                continue
            job.now = arrival
            job.record_index = reader.source.records.indices[k]
            reader.queues[partition].popleft()
            reader.source.process_record(k)
            self.last_change = job.now
            if reader.state is not None:
                self._sync(reader)

    # -- a group that cannot move ---------------------------------------------------------------

    def _stall_horizon(self) -> int:
        """How long the alignment state may stay unchanged, with only held records left,
        before nothing can change it any more: the longest idleness timeout (a quiet source
        going idle), plus the sampling ring's delay and two announcement rounds, plus two
        periodic watermark emissions."""
        timeouts = [g.strategy.idle_timeout or 0 for g in self.runtime.generators]
        intervals = [c.params.update_interval for c, _ in self.coordinators]
        auto = max((g.interval for g in self.runtime.generators), default=0)
        return max(timeouts, default=0) + (self.buffer_size + 3) * max(intervals) + 2 * auto

    def _state(self) -> Any:
        return (
            tuple(
                (
                    r.gen._watermark if r.gen is not None else None,
                    r.state.snapshot_state() if r.state is not None else None,
                    r.state.idle if r.state is not None else None,
                    tuple(sorted(r.seen_split_idle.items())),
                )
                for r in self.readers
            ),
            tuple(sorted((g, tuple(sorted(a.watermarks.items()))) for g, a in self.store.items())),
        )

    def _watch_stall(self, horizon: int) -> None:
        state = repr(self._state())
        now = self.job.now
        if state != self.signature:
            self.signature = state
            self.last_change = max(self.last_change, now)
            return
        if now - self.last_change <= horizon:
            return
        held = [
            f"{r.input_name or r.source.name}: {r.remaining()} record(s)"
            + (
                f" (paused partitions {sorted(r.state.paused_splits)})"
                if r.state is not None and r.state.paused_splits
                else ""
            )
            for r in self.readers
            if r.remaining()
        ]
        raise AlignmentStallError(
            "watermark alignment holds back every record left and nothing can resume them: "
            + "; ".join(held)
            + f". The group's slowest watermark has not moved since processing time "
            f"{self.last_change} (a source or partition that sends no more records holds it); "
            "real Flink would wait here forever. Give the strategy with_idleness(...) so the "
            "quiet one is left out, or raise max_drift."
        )
