"""Checkpoints: consistent snapshots of a whole job, and recovery from them (Flink's
``CheckpointCoordinator``, checkpoint barriers and operator state snapshotting).

In Flink the coordinator triggers checkpoint *n* periodically (``env.enableCheckpointing``);
every source puts a **barrier** into its stream and writes down its position; each operator,
once the barrier has reached it on all inputs, snapshots its state — keyed state, window
contents, trigger state, both timer queues of every timer service
(``InternalTimerServiceSerializationProxy``) — and passes the barrier on. On a failure every
operator is built anew, loads its part of the latest completed checkpoint
(``initializeState``) and the sources re-read from the saved positions; timers registered
before the checkpoint fire after the restore.

**Watermarks are not checkpointed** (Flink 2.3): a restored job starts with every watermark at
MIN — the operators' (``AbstractStreamOperator``, ``InternalTimerServiceImpl``), every
``StatusWatermarkValve`` channel, both inputs of a two-input operator, and the sources'
generators (``TimestampsAndWatermarksOperator.open()`` / ``SourceOperator.open()`` build new
ones, with a new ``WatermarkOutputMultiplexer``, the first periodic emission one interval
after the current time). So a record late before the failure can be on time in the replay:
it is added to its window (a new one if the old one was cleaned up) and the window fires
again; an event-time timer of the checkpoint fires only when the new watermark passes it.

Here the engine is synchronous and the processing clock simulated, so a barrier reaches every
operator at once: a checkpoint is a snapshot taken at a **cut** — "after the first ``n``
source records, in arrival order". It holds the source positions (per subtask and partition),
every operator subtask's metrics and own state (no watermark, generator or valve), the
position of every rebalance exchange, the simulated clock, and what the sinks and side
outputs received so far: on a restore they roll back, as Flink's exactly-once
(two-phase-commit) sinks commit only what a completed checkpoint covers. Metrics are restored
with the state (winviz's totals; Flink's restart at 0). One difference from Flink: a
``rebalance`` exchange resumes its round robin where it was (Flink's ``RebalancePartitioner``
starts at a random channel), so the same input gives the same trace. The trace shows the
restart: a ``restore`` record, then a ``watermark`` record at MIN (input ``"restore"``) for
every operator subtask whose watermark was above MIN.

    env.enable_checkpointing(1000)               # every 1000 ms of simulated processing time
    env.enable_checkpointing(at_records=[3, 8])  # or at cuts: after 3 and after 8 records
    result = env.execute(fail_at=6)              # fail after 6 records; restore; replay
    env.execute(restore_from=result.checkpoints[-1])  # Flink's ``flink run -s <path>``

A restore checks that the job built anew is the one the snapshot was taken of: the format
version (``CHECKPOINT_VERSION``), every operator subtask (name — winviz's uid —, kind, key
groups), the sources and exchanges, and what Flink's state backend checks: a state of the
snapshot registered again (``StreamOperator.state_descriptors``) must keep its state type and
namespace serializer (else Flink's ``StateMigrationException``). It raises
``SnapshotMismatchError`` listing every difference, ``DamagedSnapshotError`` naming a missing
or unloadable part. What Flink accepts is accepted: another trigger, lateness or window size
with the same state; a session assigner in place of tumbling windows (the merging-window set
is operator state, restored empty). Key types are not checked (Python keys have no
serializer). Flink could also rescale by redistributing key groups; winviz does not.

A periodic checkpoint triggered at processing time ``T`` (the run's start plus a multiple of
the interval) puts its barrier before the first record arriving at or after ``T``. A failure
"at ``k``" happens after the first ``k`` records (after a checkpoint at the same cut); the job
restarts from the latest completed checkpoint, or from the beginning. Each planned failure
happens once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from winviz.errors import (
    ArgumentTypeError,
    DamagedSnapshotError,
    InputError,
    SnapshotMismatchError,
    StateCopyError,
)
from winviz.time import MIN


class Participant(Protocol):
    """Anything whose state a checkpoint holds: an operator subtask or a rebalance exchange
    (Flink's ``CheckpointedFunction`` / operator state handles)."""

    def snapshot(self) -> Any: ...

    def restore(self, snap: Any) -> None: ...


class CheckpointedJob(Protocol):
    """What the coordinator sees of a running job (``winviz.runtime.JobRuntime`` is one): its
    participants by name, its sources' read positions, its side outputs, its clock and trace,
    and a restart with fresh operators. Nothing else of the runtime is reached into."""

    trace: Any

    def operator_subtasks(self) -> Sequence[Any]:
        """Every operator subtask (``name``, ``snapshot()``, ``restore()``), upstream first."""
        ...

    def exchange_participants(self) -> Mapping[str, Participant]: ...

    def source_subtasks(self) -> Sequence[Any]:
        """The source subtasks: ``name``, ``position``, ``records``, ``partitions``,
        ``partition_positions()``, ``logical_name``."""
        ...

    def manifest(self) -> dict[str, str]:
        """Each operator subtask by name → what it is (see ``job_manifest``)."""
        ...

    def side_outputs(self) -> dict[str, list[Any]]: ...

    def clock(self) -> int: ...

    def set_clock(self, now: int) -> None:
        """Set the simulated clock of a restored job; the watermark generators start their
        periodic emission from it (as Flink's operators do in ``open()`` at a restart)."""
        ...

    def restart(self) -> None:
        """Build every operator anew and start them (Flink restarts the tasks)."""
        ...


CHECKPOINT_VERSION = 2
"""The layout of ``CompletedCheckpoint`` and of the operators' snapshots; a restore refuses a
snapshot of another version."""


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
    ``operator_states`` each operator's (each subtask's) snapshot by name (no watermarks:
    see the module docstring); ``side_outputs`` what each side output received;
    ``exchange_states`` the round-robin position of every rebalance exchange; ``operators``
    the job it was taken of (subtask name → kind, see ``job_manifest``) and ``version`` the
    checkpoint format (``CHECKPOINT_VERSION``), which a restore checks.
    Everything is a deep copy behind read-only mappings: running on never changes it, and a
    restore copies it again, so one checkpoint can be restored any number of times.
    """

    checkpoint_id: int
    source_records: int
    processing_time: int
    positions: Mapping[str, int]
    operator_states: Mapping[str, Mapping[str, Any]]
    side_outputs: Mapping[str, tuple[Any, ...]]
    exchange_states: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    operators: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    version: int = CHECKPOINT_VERSION
    state_descriptors: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Each operator subtask's registered state (``StreamOperator.state_descriptors``): the
    meta info a restore checks, as Flink's ``KeyedBackendSerializationProxy`` writes it."""


@dataclass(frozen=True)
class Restore:
    """A failure and what the job restarted from (``checkpoint_id`` None: the beginning);
    ``failed_at`` None: the run started from a snapshot (``execute(restore_from=...)``)."""

    failed_at: int | None
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


def job_manifest(operators: Iterable[tuple[Sequence[Any], int]]) -> dict[str, str]:
    """Each operator subtask of the job by name (winviz's uid: names are unique) → its kind
    (the operator class), with its number of key groups when keyed: what a snapshot must
    match to be restored into the job. ``operators``: each operator's subtasks with its
    number of key groups."""
    manifest: dict[str, str] = {}
    for subs, key_groups in operators:
        groups = f", {key_groups} key groups" if subs[0].is_keyed else ""
        for op in subs:
            manifest[op.name] = f"{type(op).__name__} ({len(subs)} subtask(s){groups})"
    return manifest


def _names(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in sorted(names))


def check_snapshot(rt: CheckpointedJob, snapshot: Any) -> None:
    """Raise unless ``snapshot`` is a complete snapshot of the job ``rt`` runs (see the
    module docstring): ``SnapshotMismatchError`` listing every difference from the job,
    ``DamagedSnapshotError`` naming a missing part."""
    if not isinstance(snapshot, CompletedCheckpoint):
        raise ArgumentTypeError(
            "restore_from takes a snapshot of this job",
            field="restore_from",
            value=snapshot,
            expected="a CompletedCheckpoint, e.g. result.checkpoints[-1] of an earlier run",
        )
    cid = snapshot.checkpoint_id
    if snapshot.version != CHECKPOINT_VERSION:
        raise SnapshotMismatchError(
            f"checkpoint {cid} has format version {snapshot.version!r}; this winviz restores "
            f"version {CHECKPOINT_VERSION}"
        )
    theirs = dict(snapshot.operators) if isinstance(snapshot.operators, Mapping) else {}
    if not theirs:
        raise DamagedSnapshotError(
            f"checkpoint {cid} has no list of the operators it was taken of (its 'operators')"
        )
    ours = rt.manifest()
    differences = []
    if missing := ours.keys() - theirs.keys():
        differences.append(f"the job has operator(s) the snapshot lacks: {_names(missing)}")
    if extra := theirs.keys() - ours.keys():
        differences.append(f"the snapshot has state for operator(s) the job lacks: {_names(extra)}")
    for name in sorted(ours.keys() & theirs.keys()):
        if ours[name] != theirs[name]:
            differences.append(
                f"operator {name!r} is {ours[name]} in the job, {theirs[name]} in the snapshot"
            )
    differences += _state_differences(rt, snapshot)
    if differences:
        raise SnapshotMismatchError(
            f"checkpoint {cid} is not a snapshot of this job: " + "; ".join(differences)
        )
    _check_parts(rt, snapshot)


def _state_differences(rt: CheckpointedJob, snapshot: CompletedCheckpoint) -> list[str]:
    """What Flink's state backend refuses on a restore: a state (or timer service) of the
    snapshot that an operator of the job registers again under the same name with another
    type or namespace serializer (``StateMigrationException``: "incompatible state types",
    "new namespace serializer ... incompatible"). A state only the job has starts empty; a
    state only the snapshot has is not read — Flink accepts both."""
    held = snapshot.state_descriptors
    if not isinstance(held, Mapping):
        raise DamagedSnapshotError(
            f"checkpoint {snapshot.checkpoint_id} is damaged: its state_descriptors is "
            f"{type(held).__name__}, not a mapping"
        )
    differences = []
    for op in rt.operator_subtasks():
        theirs = held.get(op.name, {})
        for state, ours in op.state_descriptors().items():
            if state in theirs and theirs[state] != ours:
                differences.append(
                    f"operator {op.name!r} registers {state} as {ours} in the job, "
                    f"{theirs[state]} in the snapshot"
                )
    return differences


def _check_parts(rt: CheckpointedJob, snapshot: CompletedCheckpoint) -> None:
    """Every part the job needs is in the snapshot (the manifest matched)."""
    cid = snapshot.checkpoint_id
    operators, sources = rt.operator_subtasks(), rt.source_subtasks()

    def damaged(what: str) -> DamagedSnapshotError:
        return DamagedSnapshotError(f"checkpoint {cid} is damaged: {what}")

    parts = (
        ("operator_states", snapshot.operator_states, [op.name for op in operators]),
        ("exchange_states", snapshot.exchange_states, list(rt.exchange_participants())),
        ("positions", snapshot.positions, [src.name for src in sources]),
    )
    for part, held, needed in parts:
        if not isinstance(held, Mapping):
            raise damaged(f"its {part} is {type(held).__name__}, not a mapping")
        if missing := [n for n in needed if n not in held]:
            raise damaged(f"its {part} lack(s) {_names(missing)}")
    for op in operators:  # a fresh operator's snapshot: the parts its restore reads
        state = snapshot.operator_states[op.name]
        if not isinstance(state, Mapping):
            raise damaged(f"the state of operator {op.name!r} is {type(state).__name__}")
        if missing := [part for part in op.snapshot() if part not in state]:
            raise damaged(f"the state of operator {op.name!r} lacks {_names(missing)}")
    for src in sources:
        position = snapshot.positions[src.name]
        held = snapshot.operator_states[src.name]["position"]
        if not isinstance(position, int) or position != held:
            raise damaged(
                f"source {src.name!r} is at position {position!r} in its positions but "
                f"{held!r} in its operator state"
            )
        if not 0 <= position <= len(src.records):
            raise SnapshotMismatchError(
                f"checkpoint {cid} read {position} record(s) of source {src.name!r}, which "
                f"has {len(src.records)} in this job: not the input it was taken on"
            )
    if sum(snapshot.positions[src.name] for src in sources) != snapshot.source_records:
        raise damaged(
            f"its source positions do not add up to its cut ({snapshot.source_records} "
            "source records)"
        )


class CheckpointCoordinator:
    """Plans and takes the checkpoints of one run, injects the planned failures and restores
    (Flink's ``CheckpointCoordinator`` plus the restart that follows a failure).

    The runtime calls ``at_cut(n, next_arrival)`` between two source records (``next_arrival``
    None after the last one); ``next_cut`` and ``next_trigger_time`` tell it where a batch of
    records must stop so that no cut with something to do is skipped.
    """

    def __init__(
        self,
        runtime: CheckpointedJob,
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
        self.initial: CompletedCheckpoint | None = None
        """The snapshot the run started from (``execute(restore_from=...)``), if any: the
        latest completed checkpoint until a new one completes."""

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
        for src in rt.source_subtasks():
            positions[src.name] = src.position
            if src.partitions is not None:
                for p, n in src.partition_positions().items():
                    positions[f"{src.logical_name}[{p}]"] = n
        checkpoint_id = (
            len(self.completed) + 1 + (self.initial.checkpoint_id if self.initial else 0)
        )
        checkpoint = CompletedCheckpoint(
            checkpoint_id=checkpoint_id,
            source_records=consumed,
            processing_time=rt.clock(),
            positions=MappingProxyType(positions),
            operator_states=MappingProxyType(
                {
                    op.name: _operator_state(op.name, op.snapshot(), checkpoint_id)
                    for op in rt.operator_subtasks()
                }
            ),
            side_outputs=MappingProxyType(
                {tag: tuple(copy.deepcopy(recs)) for tag, recs in rt.side_outputs().items()}
            ),
            exchange_states=_read_only(
                {name: x.snapshot() for name, x in rt.exchange_participants().items()}
            ),
            operators=MappingProxyType(rt.manifest()),
            state_descriptors=MappingProxyType(
                {op.name: MappingProxyType(op.state_descriptors()) for op in rt.operator_subtasks()}
            ),
        )
        self.completed.append(checkpoint)
        if rt.trace is not None:
            rt.trace.writer.checkpoint(
                rt.clock(), None, "job", checkpoint.checkpoint_id, consumed, dict(positions)
            )
        return checkpoint

    # -- restoring ------------------------------------------------------------------------------

    def restore_from(self, snapshot: Any) -> dict[str, int]:
        """Start the run from ``snapshot`` (``execute(restore_from=...)``; the operators are
        built and open): check that it belongs to the job, load it; returns the source
        positions to read on from."""
        check_snapshot(self.runtime, snapshot)
        for what, cuts in (("at_records", self.planned), ("fail_at", self.failures)):
            if early := sorted(n for n in cuts if n < snapshot.source_records):
                raise InputError(
                    f"{what} is a cut before the snapshot's ({snapshot.source_records} source "
                    "records): the restored run starts after it",
                    field=what,
                    value=early[0],
                    expected=f"n >= {snapshot.source_records}",
                )
        self.initial = snapshot
        positions = self._load(snapshot)
        self._emit_restore(snapshot, snapshot.source_records, positions, None)
        return positions

    def _load(self, checkpoint: CompletedCheckpoint) -> dict[str, int]:
        """Load ``checkpoint`` into the freshly built and opened operators, roll sinks and side
        outputs back, set the clock; returns the source positions to replay from."""
        rt = self.runtime
        part = "operator"
        name = ""
        try:
            for op in rt.operator_subtasks():
                name = op.name
                op.restore(copy.deepcopy(dict(checkpoint.operator_states[op.name])))
            part = "exchange"
            for name, exchange in rt.exchange_participants().items():
                exchange.restore(checkpoint.exchange_states[name])
            part, name = "side outputs", ""
            side_outputs = {
                tag: list(copy.deepcopy(recs)) for tag, recs in checkpoint.side_outputs.items()
            }
        except Exception as exc:
            raise DamagedSnapshotError(
                f"checkpoint {checkpoint.checkpoint_id} is damaged: the state of {part} "
                f"{name!r} cannot be loaded ({type(exc).__name__}: {exc})"
            ) from exc
        rt.side_outputs().update(side_outputs)
        rt.set_clock(checkpoint.processing_time)
        self._schedule_after(checkpoint.processing_time)
        self._restored_at = checkpoint.source_records
        return {src.name: src.position for src in rt.source_subtasks()}

    def _emit_restore(
        self,
        checkpoint: CompletedCheckpoint | None,
        consumed: int,
        positions: dict[str, int],
        failed_at: int | None,
    ) -> None:
        checkpoint_id = None if checkpoint is None else checkpoint.checkpoint_id
        self.restores.append(Restore(failed_at, checkpoint_id, consumed))
        rt = self.runtime
        if rt.trace is not None:
            shown = dict(checkpoint.positions) if checkpoint is not None else positions
            rt.trace.writer.restore(
                rt.clock(), None, "job", checkpoint_id, consumed, shown, failed_at
            )

    # -- after a failure ----------------------------------------------------------------------

    def recover(self, failure: SimulatedFailure) -> dict[str, int]:
        """Restart the job from the latest completed checkpoint (the snapshot it started from
        when none completed since): build every operator anew (every watermark at MIN), load
        its snapshot, roll sinks and side outputs back, set the clock; returns the source
        positions to replay from."""
        rt = self.runtime
        checkpoint = self.completed[-1] if self.completed else self.initial
        above_min = [
            op.name
            for op in rt.operator_subtasks()
            if op.traces_watermarks and op.current_watermark() > MIN
        ]
        rt.restart()
        if checkpoint is None:  # no checkpoint yet: start over
            positions: dict[str, int] = {src.name: 0 for src in rt.source_subtasks()}
            self._schedule_after(self.origin)
            self._restored_at = None
            consumed = 0
        else:
            positions = self._load(checkpoint)
            consumed = checkpoint.source_records
        self._emit_restore(checkpoint, consumed, positions, failure.failed_at)
        if rt.trace is not None:  # every watermark starts again at MIN (module docstring)
            for name in above_min:
                rt.trace.writer.watermark(rt.clock(), MIN, name, None, MIN, "restore")
        return positions
