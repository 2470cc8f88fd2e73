"""The sending side of an exchange between parallel operators (Flink's ``RecordWriter`` with
its ``StreamPartitioner``): behind every upstream subtask of a ``rebalance`` or ``key_by``
edge, a record goes to the channel its partitioner picks; watermarks and statuses go to every
channel, in subtask order. Trace: ``exchange`` per record sent (detail ``partitioner``,
``target``, ``channel``, ``key_group``, ``value``), none between operators of parallelism 1.
"""

from __future__ import annotations

from typing import Any

from winviz.copies import copy_record
from winviz.errors import InputError, UserFunctionError, WinvizError
from winviz.keygroups import KeyRule, null_key_error
from winviz.operators.base import StreamOperator
from winviz.operators.batch import Batch
from winviz.partitioners import HASH, KeyGroupStreamPartitioner, RebalancePartitioner


class Exchange:
    """Routes the records of one upstream subtask to ``targets[j]`` (named ``names[j]``), the
    subtasks of one downstream operator; watermarks and statuses go to their ``gates``, if
    any, on channel ``channel_index``."""

    def __init__(
        self,
        upstream: StreamOperator,
        targets: list[Any],
        names: list[str],
        partitioner: RebalancePartitioner | KeyGroupStreamPartitioner,
        traced: bool,
    ) -> None:
        self.upstream = upstream
        self.targets = targets
        self.names = names
        self.partitioner = partitioner
        self.kind = HASH if isinstance(partitioner, KeyGroupStreamPartitioner) else "rebalance"
        self.traced = traced
        self.gates: list[Any] | None = None
        self.channel_index = 0
        self.key_rule = KeyRule()  # the receiving keyed operator's (keys routed by it)

    def _route(self, value: Any) -> tuple[Any, int, int | None]:
        """(key, channel, key group) of one record."""
        p = self.partitioner
        if isinstance(p, RebalancePartitioner):
            return None, p.select_channel(value), None
        job = self.upstream.job
        try:
            key = p.key_selector(copy_record(value))  # (winviz.copies: a copy)
        except WinvizError:
            raise
        except Exception as exc:
            raise UserFunctionError(
                function="key selector",
                operator=self.upstream.name,
                record=value,
                index=job.record_index,
                cause=exc,
            ) from exc
        if key is None:  # Flink: "Assigned key must not be null!"
            raise null_key_error(value, job.record_index)
        internal = None  # the key's internal key (winviz.keygroups), when it is not the key
        if key.__class__ is not str:
            internal = self.key_rule.internal_key(key, job.record_index)  # the receiver's rule
        try:
            group, channel = p.route(key, internal)
        except InputError as exc:
            raise InputError(
                str(exc), index=job.record_index, field="key", value=key, expected=None
            ) from exc
        return key, channel, group

    def process_element(self, value: Any, ts: int | None) -> None:
        key, channel, group = self._route(value)
        up = self.upstream
        if self.traced and up.trace is not None:
            up.trace.exchange(
                up.current_processing_time(), up.current_watermark(), up.name, key, ts,
                self.kind, self.names[channel], channel, group, value,
            )  # fmt: skip
        self.targets[channel].process_element(value, ts)

    def process_batch(self, batch: Batch) -> None:
        """Consecutive records for the same channel go on as one batch, in their order."""
        targets = self.targets
        job = self.upstream.job
        current, start = -1, 0
        for i, (_, index, value, _) in enumerate(batch):
            job.record_index = index  # an error names this record
            try:
                _, channel, _ = self._route(value)
            except WinvizError:
                if i > start:  # what came before the bad record goes on first
                    targets[current].process_batch(batch[start:i])
                job.record_index = index
                raise
            if channel != current and i > start:
                targets[current].process_batch(batch[start:i])
                start = i
            current = channel
        if len(batch) > start:
            targets[current].process_batch(batch[start:])

    def process_watermark(self, watermark: int) -> None:
        gates = self.gates
        if gates is not None:  # broadcast, in subtask order
            channel = self.channel_index
            if self.traced:
                for gate in gates:
                    gate.channel_watermark(channel, watermark)
                return
            for gate in gates:  # InputGate.channel_watermark without a trace, inlined
                valve = gate.valve
                valve.input_watermark(watermark, channel)
                if valve.emitted:
                    gate._forward()
            return
        for t in self.targets:
            t.process_watermark(watermark)

    def process_watermark_status(self, idle: bool) -> None:
        gates = self.gates
        if gates is not None:
            channel = self.channel_index
            for gate in gates:
                gate.channel_status(channel, idle)
            return
        for t in self.targets:
            t.process_watermark_status(idle)

    def snapshot(self) -> Any:
        """The round-robin position (Flink starts at a random channel after a restore;
        winviz keeps it so that a replay is exact)."""
        p = self.partitioner
        return p.snapshot() if isinstance(p, RebalancePartitioner) else None

    def restore(self, snap: Any) -> None:
        p = self.partitioner
        if isinstance(p, RebalancePartitioner):
            p.restore(snap)
