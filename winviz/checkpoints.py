"""Checkpoints: consistent snapshots of a whole job, and recovery from them (Flink's
``CheckpointCoordinator``, checkpoint barriers and operator state snapshotting).

In Flink the ``CheckpointCoordinator`` (on the JobManager) triggers checkpoint *n*
periodically (``env.enableCheckpointing(interval)``); every source puts a **barrier** into its
stream between two records and writes down its position (a Kafka partition's offset); each
operator, once the barrier has reached it on all inputs, writes a snapshot of its state —
keyed state, window contents, trigger state, *both timer queues of every timer service*
(``InternalTimerServiceSerializationProxy``) — and passes the barrier on. When every task has
acknowledged, the checkpoint is complete. On a failure the job is restarted: every operator is
built anew, loads its part of the latest completed checkpoint (``initializeState``), and the
sources re-read their input from the saved positions. Timers registered before the checkpoint
fire after the restore — Flink's promise that timers survive failures.

Here the engine is synchronous and the processing clock is simulated, so a barrier placed
between two source records reaches every operator at once: a checkpoint is a snapshot of every
operator taken at a **cut** — "after the first ``n`` source records, in arrival order, went in".
It holds:

* the source positions (per source subtask; per partition of a partitioned source),
* every operator's watermark, metrics and own state: watermark generators (per partition), the
  multiplexer's partial watermarks, idleness, the periodic-emit schedule, each input gate's
  valve, keyed state (window contents, trigger state), merging-window sets, pane counters,
  both timer queues of every timer service — for every parallel subtask (a keyed subtask holds
  the state and timers of the key groups it owns),
* the position of every rebalance exchange (Flink does not keep it: see below),
* the simulated processing clock,
* what the sinks and side outputs received so far. Sinks are part of the consistent state: on a
  restore their contents roll back to the checkpoint, as with Flink's exactly-once
  (two-phase-commit) sinks, which only commit what a completed checkpoint covers.

A replay from the saved positions after a restore therefore gives exactly the outputs, side
outputs and metrics of an uninterrupted run.

Deliberate difference from Flink: Flink does **not** checkpoint watermarks — after a restore
its operators start again at ``Long.MIN_VALUE`` and the watermark generators are created anew,
so a record that was late before the failure may be on time in the replay. winviz snapshots the
watermarks (and generator state) too, so the replay is exact and the lesson can compare the two
runs record for record. Likewise a ``rebalance`` exchange resumes its round robin where it
was (Flink's ``RebalancePartitioner`` starts at a random channel after a restore).

The API (``StreamExecutionEnvironment.enable_checkpointing`` and ``execute(fail_at=...)``)::

    env.enable_checkpointing(1000)               # every 1000 ms of simulated processing time
    env.enable_checkpointing(at_records=[3, 8])  # or at cuts: after 3 and after 8 records
    result = env.execute(fail_at=6)              # fail after 6 records; restore; replay
    result.checkpoints                           # [CompletedCheckpoint(...), ...]
    result.restores                              # [Restore(failed_at=6, checkpoint_id=1, ...)]

A periodic checkpoint triggered at processing time ``T`` (``T`` = the run's start plus a
multiple of the interval) puts its barrier in before the first record that arrives at or after
``T``. A failure "at ``k``" happens after the first ``k`` records went in (after a checkpoint
planned at the same cut); the job restarts from the latest completed checkpoint, or from the
beginning when there is none. Each planned failure happens once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from winviz.errors import InputError, StateCopyError

if TYPE_CHECKING:  # pragma: no cover
    from winviz.runtime import JobRuntime


@dataclass(frozen=True)
class CheckpointConfig:
    """When to checkpoint: every ``interval`` ms of simulated processing time, and/or at the
    cuts in ``at_records`` (after that many source records, in arrival order)."""

    interval: int | None = None
    at_records: tuple[int, ...] = ()


@dataclass(frozen=True)
class CompletedCheckpoint:
    """One completed checkpoint (Flink's ``CompletedCheckpoint``).

    ``source_records`` is the cut (how many source records went in before the barrier);
    ``positions`` the offset of every source (and ``"name[p]"`` of every partition);
    ``operator_states`` each operator's (each subtask's) snapshot by name, ``gate_states`` the
    watermark valve of each operator with several input channels (``name/inputK`` for an input
    of a two-input operator); ``side_outputs`` what each side output received;
    ``exchange_states`` the round-robin position of every rebalance exchange.
    Everything is a deep copy behind read-only mappings: running on never changes it, and a
    restore copies it again, so one checkpoint can be restored any number of times.
    """

    checkpoint_id: int
    source_records: int
    processing_time: int
    positions: Mapping[str, int]
    operator_states: Mapping[str, Mapping[str, Any]]
    gate_states: Mapping[str, Any]
    side_outputs: Mapping[str, tuple[Any, ...]]
    exchange_states: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Restore:
    """A failure and what the job restarted from (``checkpoint_id`` None: the beginning)."""

    failed_at: int
    checkpoint_id: int | None
    source_records: int


class SimulatedFailure(Exception):
    """The injected failure: a task dies after ``failed_at`` source records."""

    def __init__(self, failed_at: int) -> None:
        super().__init__(f"simulated failure after {failed_at} source records")
        self.failed_at = failed_at


def _read_only(snapshot: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(copy.deepcopy(snapshot))


def _operator_state(name: str, snapshot: dict[str, Any], checkpoint_id: int) -> Mapping[str, Any]:
    """``_read_only`` of an operator's snapshot; when a value cannot be copied, a
    ``StateCopyError`` naming the operator and the state entry (name, key, namespace)."""
    try:
        return _read_only(snapshot)
    except Exception as exc:
        where = f"its {next(iter(snapshot), 'state')!r}"
        for part, value in snapshot.items():
            entries = value.items() if isinstance(value, dict) else [(part, value)]
            for entry, item in entries:
                try:
                    copy.deepcopy(item)
                except Exception:
                    where = f"{part} entry {entry!r} = {item!r}"
                    break
            else:
                continue
            break
        raise StateCopyError(
            f"checkpoint {checkpoint_id}: the state of operator {name!r} cannot be copied "
            f"({where}): {type(exc).__name__}: {exc}. Flink serializes state with its type's "
            "serializer and fails the checkpoint the same way; keep plain data in state "
            "(numbers, strings, tuples, lists, dicts)"
        ) from exc


class CheckpointCoordinator:
    """Plans and takes the checkpoints of one run, injects the planned failures and restores
    (Flink's ``CheckpointCoordinator`` plus the restart that follows a failure).

    The runtime calls ``at_cut(n, next_arrival)`` between two source records (``next_arrival``
    None after the last one); ``next_cut`` and ``next_trigger_time`` tell it where a batch of
    records must stop so that no cut with something to do is skipped.
    """

    def __init__(
        self,
        runtime: JobRuntime,
        config: CheckpointConfig | None,
        fail_at: Iterable[int] = (),
    ) -> None:
        self.runtime = runtime
        self.config = config or CheckpointConfig()
        self.planned = frozenset(self.config.at_records)
        self.failures = set(fail_at)
        self.completed: list[CompletedCheckpoint] = []
        self.restores: list[Restore] = []
        self.origin = 0
        self.next_trigger_time: int | None = None
        self._restored_at: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.planned or self.failures or self.config.interval)

    def start(self, origin: int, total_records: int) -> None:
        """The run starts at processing time ``origin`` with ``total_records`` to read."""
        for what, cuts in (("at_records", self.planned), ("fail_at", self.failures)):
            for n in cuts:
                if not isinstance(n, int) or not 0 <= n <= total_records:
                    raise InputError(
                        f"{what} must be cuts between 0 and the number of source records",
                        field=what,
                        value=n,
                        expected=f"0 <= n <= {total_records}",
                    )
        self.origin = origin
        self._schedule_after(origin)

    def _schedule_after(self, now: int) -> None:
        """The first periodic trigger time after ``now``."""
        interval = self.config.interval
        if interval:
            self.next_trigger_time = self.origin + ((now - self.origin) // interval + 1) * interval

    def next_cut(self, consumed: int) -> int | None:
        """The next cut after ``consumed`` with a planned checkpoint or failure."""
        later = [n for n in (*self.planned, *self.failures) if n > consumed]
        return min(later) if later else None

    # -- at a cut -----------------------------------------------------------------------------

    def at_cut(self, consumed: int, next_arrival: int | None) -> None:
        """Between two source records: take a checkpoint if one is due, then fail if planned."""
        due = consumed in self.planned
        t = self.next_trigger_time
        if t is not None and next_arrival is not None and next_arrival >= t:
            due = True
            self._schedule_after(next_arrival)
        if consumed == self._restored_at:  # this cut is the checkpoint just restored
            due = False
        self._restored_at = None
        if due:
            self.trigger(consumed)
        if consumed in self.failures:
            self.failures.discard(consumed)
            raise SimulatedFailure(consumed)

    def trigger(self, consumed: int) -> CompletedCheckpoint:
        """Snapshot every operator now (all of them have seen exactly the records before the
        barrier: an aligned checkpoint)."""
        rt = self.runtime
        positions: dict[str, int] = {}
        for src in rt.sources:
            positions[src.name] = src.position
            if src.partitions is not None:
                for p, n in src.partition_positions().items():
                    positions[f"{src.logical_name}[{p}]"] = n
        checkpoint = CompletedCheckpoint(
            checkpoint_id=len(self.completed) + 1,
            source_records=consumed,
            processing_time=rt.job.now,
            positions=MappingProxyType(positions),
            operator_states=MappingProxyType(
                {
                    op.name: _operator_state(op.name, op.snapshot(), len(self.completed) + 1)
                    for op in rt.order
                }
            ),
            gate_states=_read_only({name: g.snapshot() for name, g in rt.gates.items()}),
            side_outputs=MappingProxyType(
                {tag: tuple(copy.deepcopy(recs)) for tag, recs in rt.result.side_outputs.items()}
            ),
            exchange_states=_read_only({name: x.snapshot() for name, x in rt.exchanges.items()}),
        )
        self.completed.append(checkpoint)
        if rt.trace is not None:
            rt.trace.emit(
                "checkpoint",
                rt.job.now,
                None,
                "job",
                None,
                None,
                None,
                (checkpoint.checkpoint_id, consumed, dict(positions)),
            )
        return checkpoint

    # -- after a failure ----------------------------------------------------------------------

    def recover(self, failure: SimulatedFailure) -> dict[str, int]:
        """Restart the job from the latest completed checkpoint: build every operator anew,
        load its snapshot, roll sinks and side outputs back, set the clock; returns the source
        positions to replay from."""
        rt = self.runtime
        checkpoint = self.completed[-1] if self.completed else None
        rt.rebuild()
        rt.start(self.origin)
        if checkpoint is None:  # no checkpoint yet: start over
            positions: dict[str, int] = {src.name: 0 for src in rt.sources}
            self._schedule_after(self.origin)
            self._restored_at = None
            consumed = 0
        else:
            for op in rt.order:
                op.restore(copy.deepcopy(dict(checkpoint.operator_states[op.name])))
            for name, gate in rt.gates.items():
                gate.restore(copy.deepcopy(checkpoint.gate_states[name]))
            for name, exchange in rt.exchanges.items():
                exchange.restore(checkpoint.exchange_states[name])
            rt.result.side_outputs.update(
                {tag: list(copy.deepcopy(recs)) for tag, recs in checkpoint.side_outputs.items()}
            )
            rt.job.now = checkpoint.processing_time
            positions = {src.name: src.position for src in rt.sources}
            self._schedule_after(checkpoint.processing_time)
            self._restored_at = consumed = checkpoint.source_records
        checkpoint_id = None if checkpoint is None else checkpoint.checkpoint_id
        self.restores.append(Restore(failure.failed_at, checkpoint_id, consumed))
        if rt.trace is not None:
            shown = dict(checkpoint.positions) if checkpoint is not None else positions
            rt.trace.emit(
                "restore",
                rt.job.now,
                None,
                "job",
                None,
                None,
                None,
                (checkpoint_id, consumed, shown, failure.failed_at),
            )
        return positions
