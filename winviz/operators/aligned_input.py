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
    WatermarkAlignmentParams,
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
class _Aligned:
    """The alignment of one reader subtask: its watermark operator, Flink's reader-side
    state, its source's coordinator, and what the runtime keeps for them."""

    gen: TimestampsAndWatermarksOperator
    state: SourceReaderAlignment
    coordinator: AlignmentCoordinator
    subtask: int
    input_name: str  # the reader as the trace names it (the source's subtask)
    main_clock: PausableClock
    next_report: int = 0
    partition_names: dict[Any, str] = field(default_factory=dict)
    split_clocks: dict[Any, PausableClock] = field(default_factory=dict)
    seen_split_watermark: dict[Any, int] = field(default_factory=dict)
    seen_split_idle: dict[Any, bool] = field(default_factory=dict)


@dataclass(eq=False)
class _Reader:
    """One source subtask: its records not read yet, per partition (None: the source has
    none), and its alignment (None: its strategy has none)."""

    source: SourceOperator
    order: int  # the source's place among the job's sources (definition order)
    queues: dict[Any, deque[int]]
    aligned: _Aligned | None = None

    def blocked(self, partition: Any) -> bool:
        a = self.aligned
        if a is None:
            return False
        return (a.state.waiting and not a.state.finished) or partition in a.state.paused_splits

    def remaining(self) -> int:
        return sum(len(q) for q in self.queues.values())

    def done(self) -> bool:
        """Finished reading: every record read and, if aligned, finished for alignment."""
        return not self.remaining() and (self.aligned is None or self.aligned.state.finished)


def _alignment_of(op: Any) -> WatermarkAlignmentParams | None:
    """The enabled alignment of an operator's watermark strategy, if any."""
    params = getattr(getattr(op, "strategy", None), "alignment", None)
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
        self.coordinators: list[tuple[AlignmentCoordinator, list[_Aligned]]] = []
        self.next_announce: dict[AlignmentCoordinator, int] = {}
        self.last_change = 0
        self.signature: Any = None
        by_logical: dict[str, tuple[AlignmentCoordinator, list[_Aligned]]] = {}
        aligned_gens = set()
        for source in runtime.sources:
            reader = self._reader(source)
            self.readers.append(reader)
            nexts = targets[source]
            gen = nexts[0] if len(nexts) == 1 else None
            params = _alignment_of(gen)
            if params is None or not isinstance(gen, TimestampsAndWatermarksOperator):
                continue
            aligned_gens.add(gen)
            logical = source.logical_name
            if logical not in by_logical:
                by_logical[logical] = (AlignmentCoordinator(logical, params, self.store), [])
                self.coordinators.append(by_logical[logical])
            coordinator, members = by_logical[logical]
            reader.aligned = self._align(source, gen, params, coordinator)
            members.append(reader.aligned)
        for op in runtime.order:  # an aligned strategy anywhere else is a mistake
            if _alignment_of(op) is not None and op not in aligned_gens:
                raise InputError(
                    f"operator {op.name!r}: watermark alignment works only for a strategy applied "
                    "right after a source (Flink's fromSource); this one follows another "
                    "operator, where Flink ignores it",
                    field="strategy",
                    value=op.strategy.name,  # type: ignore[attr-defined]
                    expected="assign_timestamps_and_watermarks(strategy) directly on "
                    "env.from_collection / from_partitions",
                )

    @staticmethod
    def any_aligned(operators: list[Any]) -> bool:
        return any(_alignment_of(op) is not None for op in operators)

    def _reader(self, source: SourceOperator) -> _Reader:
        n = len(source.records)
        if source.partitions is None:
            queues: dict[Any, deque[int]] = {None: deque(range(n))}
        else:
            queues = {p: deque() for p in source.partition_ids}
            for k in range(n):
                queues[source.partitions[k]].append(k)
        return _Reader(source, source.logical_index, queues)  # type: ignore[attr-defined]

    def _align(
        self,
        source: SourceOperator,
        gen: TimestampsAndWatermarksOperator,
        params: WatermarkAlignmentParams,
        coordinator: AlignmentCoordinator,
    ) -> _Aligned:
        """The reader's alignment; its generators' idleness timers read pausable clocks."""
        split = isinstance(gen, SplitWatermarksOperator)
        splits = gen.partition_ids if isinstance(gen, SplitWatermarksOperator) else None
        a = _Aligned(
            gen,
            SourceReaderAlignment(params, self.buffer_size, splits),
            coordinator,
            source.subtask,
            source.name,
            PausableClock(self.job),
        )
        if isinstance(gen, SplitWatermarksOperator):
            for p, g in zip(gen.partition_ids, gen.generators, strict=True):
                a.partition_names[p] = f"{source.logical_name}[{p}]"
                a.split_clocks[p] = clock = PausableClock(self.job)
                if isinstance(g, WatermarksWithIdleness):
                    g.clock = clock
                a.seen_split_watermark[p] = gen.multiplexer.partials[gen.local[p]].watermark
                a.seen_split_idle[p] = False
        main = gen.main_generator if split else gen.generator  # type: ignore[attr-defined]
        if isinstance(main, WatermarksWithIdleness):
            main.clock = a.main_clock
        return a

    def _aligned(self) -> list[_Aligned]:
        return [r.aligned for r in self.readers if r.aligned is not None]

    # -- the clock ------------------------------------------------------------------------------

    def start(self, start: int) -> None:
        for a in self._aligned():
            a.next_report = start + a.state.params.update_interval
        for coordinator, _ in self.coordinators:
            self.next_announce[coordinator] = start + coordinator.params.update_interval
        self.last_change = start

    def next_due(self) -> int | None:
        """The next report or announcement (none of finished readers and their sources)."""
        times = [a.next_report for a in self._aligned() if not a.state.finished]
        times += [
            self.next_announce[c]
            for c, members in self.coordinators
            if not all(a.state.finished for a in members)
        ]
        return min(times, default=None)

    def tick(self, now: int) -> None:
        """Reports, then announcements, due at ``now`` (the module's interleaving rule)."""
        for a in self._aligned():
            if a.state.finished or a.next_report > now:
                continue
            a.next_report = now + a.state.params.update_interval
            decisions, report = a.state.sample_and_report()
            self._apply(a, decisions)
            if report is not None:
                a.coordinator.report(a.subtask, report)
        for coordinator, members in self.coordinators:
            if self.next_announce[coordinator] > now:
                continue
            self.next_announce[coordinator] = now + coordinator.params.update_interval
            max_allowed, receivers = coordinator.announce()
            by_subtask = {a.subtask: a for a in members}
            for subtask in receivers:
                a = by_subtask[subtask]
                if a.state.finished:
                    continue  # (its task has finished: Flink drops the event)
                self._apply(a, a.state.on_alignment_event(max_allowed))

    # -- what the readers' watermarks did ---------------------------------------------------

    def sync(self, gen: Any) -> None:
        """After ``gen`` saw a record or emitted periodically: tell its reader's alignment
        what changed, in Flink's order (a split's status, then its watermark; then the
        reader's status and its watermark downstream)."""
        for a in self._aligned():
            if a.gen is gen:
                self._sync(a)

    def _sync(self, a: _Aligned) -> None:
        gen, state = a.gen, a.state
        decisions: list[Decision] = []
        if isinstance(gen, SplitWatermarksOperator):
            for p in gen.partition_ids:
                partial = gen.multiplexer.partials[gen.local[p]]
                if partial.idle != a.seen_split_idle[p]:
                    a.seen_split_idle[p] = partial.idle
                    decisions += state.update_split_idle(p, partial.idle)
                if partial.watermark > a.seen_split_watermark[p]:
                    a.seen_split_watermark[p] = partial.watermark
                    decisions += state.update_split_watermark(p, partial.watermark)
        if gen.status.idle != state.idle:
            state.update_idle(gen.status.idle)
        watermark = gen._watermark
        if not state.finished and state.sampler.latest < watermark < MAX:
            decisions += state.update_effective_watermark(watermark)
        self._apply(a, decisions)

    def _apply(self, a: _Aligned, decisions: list[Decision]) -> None:
        """Pause or resume the clocks of what was decided, and trace it."""
        for kind, split, oldest, max_allowed in decisions:
            clock = a.main_clock if split is None else a.split_clocks[split]
            if kind == "paused":
                clock.pause()
            else:
                clock.unpause()
            name = a.input_name if split is None else a.partition_names[split]
            gen, trace = a.gen, a.gen.trace
            if trace is not None:
                write = trace.paused if kind == "paused" else trace.resumed
                write(
                    gen.current_processing_time(), gen._watermark, gen.name, oldest,
                    name, max_allowed, a.state.params.group,
                )  # fmt: skip

    # -- reading ---------------------------------------------------------------------------------

    def _next_record(self) -> tuple[_Reader, Any, int] | None:
        """The record to read next: of the queues not paused, the head that comes first in
        the runtime's order (arrival, source, place in the source, subtask)."""
        best, best_key = None, None
        for reader in self.readers:
            source = reader.source
            for partition, queue in reader.queues.items():
                if not queue or reader.blocked(partition):
                    continue
                k = queue[0]
                place = k if source.order is None else source.order[k]
                key = (source.records.arrivals[k], reader.order, place, source.subtask)
                if best_key is None or key < best_key:
                    best, best_key = (reader, partition, k), key
        return best

    def _finish_if_done(self, reader: _Reader) -> None:
        """A reader that has read everything finishes when it next reads (not while it waits
        for alignment: then when it resumes)."""
        a = reader.aligned
        if a is None or a.state.finished or a.state.waiting or reader.remaining():
            return
        decisions, report = a.state.finish()
        self._apply(a, decisions)
        if report is not None:
            a.coordinator.report(a.subtask, report)

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
                if all(r.done() for r in self.readers):
                    return
                self._watch_stall(horizon)
                assert due is not None  # (an unfinished aligned reader still reports)
                runtime.advance_clock(due)
                continue
            reader, partition, k = pick
            records = reader.source.records
            arrival = max(records.arrivals[k], job.now)
            if due is not None and due <= arrival:
                runtime.advance_clock(due)
                continue
            job.now = arrival
            job.record_index = records.indices[k]
            reader.queues[partition].popleft()
            reader.source.process_record(k)
            self.last_change = job.now
            if reader.aligned is not None:
                self._sync(reader.aligned)

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

    def _state(self) -> str:
        """Everything that can release a held record, as text to compare."""
        aligned = [
            (
                a.gen._watermark,
                a.state.snapshot_state(),
                a.state.idle,
                sorted(a.seen_split_idle.items()),
            )
            for a in self._aligned()
        ]
        store = sorted((g, sorted(agg.watermarks.items())) for g, agg in self.store.items())
        return repr((aligned, store))

    def _watch_stall(self, horizon: int) -> None:
        """Raise ``AlignmentStallError`` once nothing has changed for ``horizon`` ms."""
        state = self._state()
        now = self.job.now
        if state != self.signature:
            self.signature = state
            self.last_change = max(self.last_change, now)
            return
        if now - self.last_change <= horizon:
            return
        held = []
        for r in self.readers:
            if r.remaining():
                paused = sorted(r.aligned.state.paused_splits) if r.aligned is not None else []
                held.append(
                    f"{r.source.name}: {r.remaining()} record(s)"
                    + (f" (paused partitions {paused})" if paused else "")
                )
        raise AlignmentStallError(
            "watermark alignment holds back every record left and nothing can resume them: "
            + "; ".join(held)
            + f". The group's slowest watermark has not moved since processing time "
            f"{self.last_change} (a source or partition that sends no more records holds it); "
            "real Flink would wait here forever. Give the strategy with_idleness(...) so the "
            "quiet one is left out, or raise max_drift."
        )
