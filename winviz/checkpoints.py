"""Checkpoints: consistent snapshots of a whole job, and recovery from them (Flink's
``CheckpointCoordinator``, barriers and operator state snapshots; docs/checkpoints.md).

The engine is synchronous, so a checkpoint is taken at a **cut**: "after the first ``n`` source
records" (a periodic one at ``T``: before the first record arriving at or after ``T``, the clock
first run to ``T``: periodic watermark emissions and processing-time timers due by then go
before the barrier, as in Flink, where the trigger comes at ``T``). It holds
source positions, subtask states and metrics, exchange positions, the clock, and what sinks and side
outputs received (rolled back on a restore). **Watermarks are not checkpointed** (Flink 2.3): a
restored job starts every watermark at MIN (a ``watermark`` record at MIN, input ``"restore"``, for
each subtask that was above). A planned failure happens once; winviz does not rescale."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from winviz.copies import first_uncopyable
from winviz.errors import (
    ArgumentTypeError,
    DamagedSnapshotError,
    InputError,
    SnapshotMismatchError,
    StateCopyError,
)
from winviz.time import MAX, MIN

if TYPE_CHECKING:
    from winviz.runtime import JobRuntime


CHECKPOINT_VERSION = 2
"""The layout of checkpoints; a restore refuses a snapshot of another version."""


@dataclass(frozen=True)
class CheckpointConfig:
    """When to checkpoint: every ``interval`` ms and/or at the ``at_records`` cuts."""

    interval: int | None = None
    at_records: tuple[int, ...] = ()


@dataclass(frozen=True)
class CompletedCheckpoint:
    """One completed checkpoint (Flink's ``CompletedCheckpoint``): the cut, each source's (and
    ``"name[p]"`` partition's) position, each subtask's state, the side outputs, the exchanges'
    positions, the job's manifest and format ``version``. Deep copies behind read-only mappings:
    it can be restored any number of times."""

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
    """Each subtask's registered state (Flink's ``KeyedBackendSerializationProxy`` meta info)."""


@dataclass(frozen=True)
class Restore:
    """A failure (``failed_at``; None: ``restore_from``) and its checkpoint (None: none)."""

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
    """A read-only copy of an operator's snapshot, else ``StateCopyError`` naming the entry."""
    try:
        return _read_only(snapshot)
    except Exception as exc:
        where = f"its {next(iter(snapshot), 'state')!r}"
        for part, value in snapshot.items():
            found = first_uncopyable(value.items() if isinstance(value, dict) else [(part, value)])
            if found is not None:
                where = f"{part} entry {found[0]!r} = {found[1]!r}"
                break
        raise StateCopyError(
            f"checkpoint {checkpoint_id}: the state of operator {name!r} cannot be copied "
            f"({where}): {type(exc).__name__}: {exc}. Flink serializes state with its type's "
            "serializer and fails the checkpoint the same way; keep plain data in state "
            "(numbers, strings, tuples, lists, dicts)"
        ) from exc


def job_manifest(operators: Iterable[tuple[Sequence[Any], int]]) -> dict[str, str]:
    """Each subtask by name (winviz's uid) → its class, subtask count and key groups when keyed:
    what a snapshot must match. ``operators``: each operator's subtasks and key groups."""
    manifest: dict[str, str] = {}
    for subs, key_groups in operators:
        groups = f", {key_groups} key groups" if subs[0].is_keyed else ""
        for op in subs:
            manifest[op.name] = f"{type(op).__name__} ({len(subs)} subtask(s){groups})"
    return manifest


def _names(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in sorted(names))


def check_snapshot(rt: JobRuntime, snapshot: Any) -> None:
    """Raise unless ``snapshot`` is a complete snapshot of the job ``rt`` runs: same version,
    operators, sources, exchanges and registered state types (Flink's
    ``StateMigrationException``: a state the job registers again with another type or
    namespace serializer; a state only one side has is accepted)."""
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
    differences += _differing(ours, theirs, "operator {!r} is")
    held = snapshot.state_descriptors
    _lacks(cid, "its state_descriptors", held, [])
    for op in rt.order:
        registers = f"operator {op.name!r} registers {{}} as"
        differences += _differing(op.state_descriptors(), held.get(op.name, {}), registers)
    if differences:
        raise SnapshotMismatchError(
            f"checkpoint {cid} is not a snapshot of this job: " + "; ".join(differences)
        )
    _check_parts(rt, snapshot)


def _differing(ours: Mapping[str, str], theirs: Mapping[str, str], what: str) -> list[str]:
    """For each name both have with different values: ``what`` (formatted with the name),
    ours "in the job", theirs "in the snapshot"."""
    return [
        f"{what.format(name)} {ours[name]} in the job, {theirs[name]} in the snapshot"
        for name in sorted(ours.keys() & theirs.keys())
        if ours[name] != theirs[name]
    ]


def _damaged(cid: int, what: str) -> DamagedSnapshotError:
    return DamagedSnapshotError(f"checkpoint {cid} is damaged: {what}")


def _lacks(cid: int, what: str, held: Any, needed: Iterable[str]) -> None:
    """``held`` is a mapping with every ``needed`` name, else ``DamagedSnapshotError`` naming
    ``what`` it is."""
    if not isinstance(held, Mapping):
        raise _damaged(cid, f"{what} is {type(held).__name__}, not a mapping")
    if missing := [n for n in needed if n not in held]:
        raise _damaged(cid, f"{what} lack(s) {_names(missing)}")


def _check_parts(rt: JobRuntime, snapshot: CompletedCheckpoint) -> None:
    """Every part the job needs is in the snapshot (the manifest matched)."""
    cid = snapshot.checkpoint_id
    operators, sources = rt.order, rt.sources
    _lacks(cid, "its operator_states", snapshot.operator_states, [op.name for op in operators])
    _lacks(cid, "its exchange_states", snapshot.exchange_states, rt.exchanges)
    _lacks(cid, "its positions", snapshot.positions, [src.name for src in sources])
    for op in operators:  # a fresh operator's snapshot: the parts its restore reads
        state = snapshot.operator_states[op.name]
        _lacks(cid, f"the state of operator {op.name!r}", state, op.snapshot())
    for src in sources:
        position = snapshot.positions[src.name]
        held = snapshot.operator_states[src.name]["position"]
        if not isinstance(position, int) or position != held:
            raise _damaged(
                cid,
                f"source {src.name!r} is at position {position!r} in its positions but "
                f"{held!r} in its operator state",
            )
        if not 0 <= position <= len(src.records):
            raise SnapshotMismatchError(
                f"checkpoint {cid} read {position} record(s) of source {src.name!r}, which "
                f"has {len(src.records)} in this job: not the input it was taken on"
            )
    if sum(snapshot.positions[src.name] for src in sources) != snapshot.source_records:
        raise _damaged(
            cid,
            f"its source positions do not add up to its cut ({snapshot.source_records} "
            "source records)",
        )


class CheckpointCoordinator:
    """Plans and takes the checkpoints of one run, injects the planned failures and restores
    (Flink's ``CheckpointCoordinator``); the runtime calls ``at_cut`` between two records."""

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
        self.initial: CompletedCheckpoint | None = None
        """The snapshot the run started from (``restore_from``), if any."""

    @property
    def active(self) -> bool:
        return bool(self.planned or self.failures or self.config.interval)

    def _check_cuts(self, low: int, high: int, message: str) -> None:
        """Every planned cut (checkpoint or failure) in ``low..high``, else ``InputError``."""
        for what, cuts in (("at_records", self.planned), ("fail_at", self.failures)):
            if wrong := sorted(n for n in cuts if not low <= n <= high):
                bound = f"0 <= n <= {high}" if low == 0 else f"n >= {low}"
                raise InputError(message.format(what), field=what, value=wrong[0], expected=bound)

    def start(self, origin: int, total_records: int) -> None:
        """The run starts at processing time ``origin`` with ``total_records`` to read."""
        message = "{} must be cuts between 0 and the number of source records"
        self._check_cuts(0, total_records, message)
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
            # Flink triggers it at ``t``: what the clock has due until then (periodic
            # watermark emissions, processing-time timers) runs before the barrier
            self.runtime.advance_clock(t)
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
        """Snapshot every operator now (each has seen exactly the records before the barrier)."""
        rt = self.runtime
        positions: dict[str, int] = {}
        for src in rt.sources:
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
            processing_time=rt.job.now,
            positions=MappingProxyType(positions),
            operator_states=MappingProxyType(
                {op.name: _operator_state(op.name, op.snapshot(), checkpoint_id) for op in rt.order}
            ),
            side_outputs=MappingProxyType(
                {tag: tuple(copy.deepcopy(recs)) for tag, recs in rt.result.side_outputs.items()}
            ),
            exchange_states=_read_only({name: x.snapshot() for name, x in rt.exchanges.items()}),
            operators=MappingProxyType(rt.manifest()),
            state_descriptors=MappingProxyType(
                {op.name: MappingProxyType(op.state_descriptors()) for op in rt.order}
            ),
        )
        self.completed.append(checkpoint)
        if rt.trace is not None:
            rt.trace.writer.checkpoint(
                rt.job.now, None, "job", checkpoint.checkpoint_id, consumed, dict(positions)
            )
        return checkpoint

    # -- restoring ------------------------------------------------------------------------------

    def restore_from(self, snapshot: Any) -> dict[str, int]:
        """Start the run from ``snapshot`` (checked, then loaded); returns the source positions."""
        check_snapshot(self.runtime, snapshot)
        cut = snapshot.source_records
        message = f"{{}} is a cut before the snapshot's ({cut} source records): the restored run"
        self._check_cuts(cut, MAX, message + " starts after it")
        self.initial = snapshot
        positions = self._load(snapshot)
        self._emit_restore(snapshot, snapshot.source_records, positions, None)
        return positions

    def _load(self, checkpoint: CompletedCheckpoint) -> dict[str, int]:
        """Load ``checkpoint`` into the fresh operators, sinks and side outputs and the clock."""
        rt = self.runtime
        part = "operator"
        name = ""
        try:
            for op in rt.order:
                name = op.name
                op.restore(copy.deepcopy(dict(checkpoint.operator_states[op.name])))
            part = "exchange"
            for name, exchange in rt.exchanges.items():
                exchange.restore(checkpoint.exchange_states[name])
            part, name = "side outputs", ""
            side_outputs = {
                tag: list(copy.deepcopy(recs)) for tag, recs in checkpoint.side_outputs.items()
            }
        except Exception as exc:
            raise _damaged(
                checkpoint.checkpoint_id,
                f"the state of {part} {name!r} cannot be loaded ({type(exc).__name__}: {exc})",
            ) from exc
        rt.result.side_outputs.update(side_outputs)
        rt.set_clock(checkpoint.processing_time)
        self._schedule_after(checkpoint.processing_time)
        self._restored_at = checkpoint.source_records
        return {src.name: src.position for src in rt.sources}

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
                rt.job.now, None, "job", checkpoint_id, consumed, shown, failed_at
            )

    # -- after a failure ----------------------------------------------------------------------

    def recover(self, failure: SimulatedFailure) -> dict[str, int]:
        """Restart from the latest completed checkpoint (or the run's snapshot, or the beginning):
        fresh operators, every watermark at MIN; returns the source positions to replay from."""
        rt = self.runtime
        checkpoint = self.completed[-1] if self.completed else self.initial
        above_min = [
            op.name for op in rt.order if op.traces_watermarks and op.current_watermark() > MIN
        ]
        rt.restart()
        if checkpoint is None:  # no checkpoint yet: start over
            positions: dict[str, int] = {src.name: 0 for src in rt.sources}
            self._schedule_after(self.origin)
            self._restored_at = None
            consumed = 0
        else:
            positions = self._load(checkpoint)
            consumed = checkpoint.source_records
        self._emit_restore(checkpoint, consumed, positions, failure.failed_at)
        if rt.trace is not None:  # every watermark starts again at MIN (module docstring)
            for name in above_min:
                rt.trace.writer.watermark(rt.job.now, MIN, name, None, MIN, "restore")
        return positions
