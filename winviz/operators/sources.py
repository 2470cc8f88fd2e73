"""``SourceOperator`` replays a bounded collection, each record at its arrival (processing)
time; Flink's ``TimestampsAndWatermarksOperator`` stamps each record with the strategy's
assigner, shows it to the watermark generator (``on_event``) and asks it for a watermark every
``auto_watermark_interval`` ms (``on_periodic_emit``); watermarks that do not increase are
dropped, the end of the input is the watermark MAX.
"""

from __future__ import annotations

from itertools import repeat
from operator import countOf
from typing import TYPE_CHECKING, Any

from winviz.copies import copy_record
from winviz.errors import FunctionResultError, InputError, UserFunctionError, WinvizError
from winviz.operators.base import StreamOperator
from winviz.operators.batch import Batch, SourceArrival
from winviz.time import MAX, MIN, TimestampNormalizer
from winviz.watermarks import (
    AscendingTimestampsWatermarks,
    BoundedOutOfOrdernessWatermarks,
    IngestionTimeAssigner,
    NoWatermarksGenerator,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
    WatermarksWithIdleness,
)

if TYPE_CHECKING:
    from winviz.operators.chaining import SourceChain

# generators whose on_event only keeps the largest timestamp (inlined by the loops below)
_BOUNDED = (BoundedOutOfOrdernessWatermarks, AscendingTimestampsWatermarks)
_PERIODIC_ONLY = (
    BoundedOutOfOrdernessWatermarks,
    AscendingTimestampsWatermarks,
    NoWatermarksGenerator,
)


def emits_only_periodically(generator: WatermarkGenerator) -> bool:
    """True for the built-in generators whose ``on_event`` never emits a watermark."""
    if isinstance(generator, WatermarksWithIdleness):
        generator = generator.watermarks
    return type(generator) in _PERIODIC_ONLY


class SourceOperator(StreamOperator):
    """A bounded source: ``records`` is a ``Batch`` of its whole input, in arrival order; a
    partitioned one (Flink's source splits) has each record's partition in ``partitions``,
    set as ``job.partition`` while the record goes downstream."""

    def __init__(
        self,
        name: str,
        records: Batch,
        partitions: list[int] | None = None,
        num_partitions: int = 1,
        partition_ids: list[int] | None = None,
        order: list[int] | None = None,
    ) -> None:
        super().__init__(name)
        self.records = records
        self.partitions = partitions
        self.num_partitions = num_partitions
        # the partitions this reader subtask owns (all of them without parallelism)
        self.partition_ids = list(range(num_partitions)) if partition_ids is None else partition_ids
        # each record's place in the whole source's arrival order (a parallel source's
        # subtasks are read in that order), None: its own index
        self.order = order
        self.position = 0  # how many records were emitted (a checkpoint's source offset)
        self.chain: SourceChain | None = None  # (``winviz.operators.chaining``)

    def process_element(self, value, ts):
        self._hand_over(value, ts, self.position)

    def process_record(self, k: int) -> None:
        """Hand over record ``k`` (a reader that takes records out of order: watermark
        alignment, ``winviz.operators.aligned_input``)."""
        _, _, value, ts = self.records[k]
        self._hand_over(value, ts, k)

    def _hand_over(self, value: Any, ts: int | None, k: int) -> None:
        """Record ``k`` of the source goes downstream, after its ``arrival`` record."""
        self.metrics["num_records_in"] += 1
        if self.partitions is not None:
            self.job.partition = self.partitions[k]
        self.position += 1
        if self.trace is not None:
            self.trace.arrival(
                self.current_processing_time(), self._watermark, self.name, None, ts, value, k
            )
        self.metrics["num_records_out"] += 1
        self.output.collect(value, ts)

    def snapshot(self) -> dict[str, Any]:
        """The source's offset (Flink's split state): how many records went downstream."""
        snap = super().snapshot()
        snap["position"] = self.position
        return snap

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        self.position = snap["position"]

    def partition_positions(self) -> dict[int, int]:
        """The offset in each partition this subtask reads (where a replay starts)."""
        counts = dict.fromkeys(self.partition_ids, 0)
        for p in (self.partitions or [])[: self.position]:
            counts[p] += 1
        return counts

    def process_batch(self, batch):
        """The batch downstream whole; traced, record by record or through the ``chain``."""
        if self.partitions is not None:  # a batch never spans two partitions
            self.job.partition = self.partitions[self.position]
        trace = self.trace
        if trace is None:
            n = len(batch)
            self.metrics["num_records_in"] += n
            self.metrics["num_records_out"] += n
            self.position += n
            self.output.collect_batch(batch)
            return
        arrival = SourceArrival(self.name, self._watermark, self.position)
        try:
            if self.chain is not None:  # the operators chained to this source run it
                self.chain.process_source_batch(batch, arrival)
            else:
                arrival.hand_over(trace, self.job, batch, batch.stamps, self.output.collect)
        finally:  # (a record counts in and out before it goes on, as in process_element)
            self.position += arrival.taken
            self.metrics["num_records_in"] += arrival.taken
            self.metrics["num_records_out"] += arrival.taken

    def end_of_input(self) -> None:
        """A bounded source ends with the watermark MAX."""
        self.process_watermark(MAX)


def check_watermark(op: TimestampsAndWatermarksOperator, watermark: Any) -> None:
    """A generated watermark is a Java long, on the reader's output and on a partition's
    alike: else ``FunctionResultError`` naming ``op``'s generator and the record."""
    if watermark.__class__ is not int or not MIN <= watermark <= MAX:
        raise FunctionResultError(
            "emitted a watermark that is no long",
            function=f"the watermark generator of {op.strategy.name}",
            operator=op.name,
            value=watermark,
            expected="int milliseconds in Java's long range (or None: no watermark)",
            index=op.job.record_index,
        )


class _Emitter(WatermarkOutput):
    """Flink's ``WatermarkEmitter``: forwards only increasing watermarks, and idle / active."""

    def __init__(self, op: TimestampsAndWatermarksOperator) -> None:
        self.op = op
        self.idle = False

    def emit_watermark(self, watermark: int) -> None:
        op = self.op
        check_watermark(op, watermark)
        current = op._watermark
        if watermark <= current:
            if watermark < current and op.trace is not None:
                op.trace.watermark_dropped(
                    op.current_processing_time(), current, op.name, watermark, "not increasing"
                )
            return
        if self.idle:
            self.mark_active()
        if op.trace is not None:
            op.trace.watermark_generated(
                op.current_processing_time(), watermark, op.name, watermark, op.strategy.name
            )
        StreamOperator.process_watermark(op, watermark)

    def set_idle(self, idle: bool) -> None:
        if self.idle != idle:
            self.idle = idle
            self.op.trace_status(idle)
            self.op.output.emit_watermark_status(idle)


class TimestampsAndWatermarksOperator(StreamOperator):
    """Assigns timestamps and generates watermarks with a ``WatermarkStrategy``."""

    def __init__(
        self, name: str, strategy: WatermarkStrategy, interval: int, tz: str | None = None
    ) -> None:
        super().__init__(name)
        self.strategy = strategy
        self.interval = interval
        self.normalizer = TimestampNormalizer(tz)
        self.generator = strategy.create_generator(self.current_processing_time)
        self.status = self.emitter = _Emitter(self)
        """``status``: the operator's own output, whose idle / active is the operator's
        (``emitter``: where the generator emits, a partition's output per record after a
        partitioned source)."""
        self.next_periodic: int | None = None
        self.events_since_emit = True
        self.ingestion = isinstance(strategy.timestamp_assigner, IngestionTimeAssigner)
        # a punctuated (or custom) generator may emit on any event: records go one by one
        self.emits_watermarks_per_record = not emits_only_periodically(self.generator)

    @property
    def fusable(self) -> bool:
        """True with a timestamp assigner and a bounded out-of-orderness (or monotonous)
        generator: its steps are ``assign_timestamp_column``, which a source may run."""
        return (
            self.strategy.timestamp_assigner is not None
            and not self.ingestion
            and self.generator.__class__ in _BOUNDED
        )

    def start(self, now: int) -> None:
        if self.interval > 0:
            self.next_periodic = now + self.interval
        # (WatermarkStrategy.withIdleness)
        if self.strategy.idle_timeout is not None and self.trace is not None:
            self.trace.idleness(
                self.current_processing_time(), self._watermark, self.name,
                self.strategy.idle_timeout, self.name,
            )  # fmt: skip

    def assigner_error(self, exc: Exception, value: Any, index: int) -> UserFunctionError:
        """The error to raise when the timestamp assigner fails on record ``index``."""
        return UserFunctionError(
            function="timestamp assigner", operator=self.name, record=value, index=index, cause=exc
        )

    def generator_error(self, exc: Exception, value: Any, index: int | None) -> UserFunctionError:
        """The error to raise when the watermark generator fails on record ``index``."""
        return UserFunctionError(
            function=f"the watermark generator of {self.strategy.name}",
            operator=self.name,
            record=value,
            index=index,
            cause=exc,
        )

    def count_chained(self, received: int, stamped: int) -> None:
        """Count records a chained source ran through this operator's steps."""
        self.metrics["num_records_in"] += received
        self.metrics["num_records_out"] += stamped
        if stamped:
            self.events_since_emit = True

    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        assigner = self.strategy.timestamp_assigner
        index = self.job.record_index
        if self.ingestion:
            new_ts = self.current_processing_time()
        elif assigner is None:
            if ts is None:
                raise InputError(
                    "record has no timestamp; give the strategy a timestamp assigner "
                    "(with_timestamp_assigner) or the source timestamps",
                    index=index,
                    field="timestamp",
                    value=None,
                )
            new_ts = ts
        else:
            try:
                raw = assigner(copy_record(value), MIN if ts is None else ts)
            except WinvizError:
                raise
            except Exception as exc:
                raise self.assigner_error(exc, value, index) from exc
            if raw.__class__ is int and MIN <= raw <= MAX:
                new_ts = raw  # what the normalizer returns for an int in the long range
            else:
                new_ts = self.normalizer(raw, index=index, field_name="timestamp")
        self.events_since_emit = True
        self.metrics["num_records_out"] += 1
        self.output.collect(value, new_ts)
        bounded = self.generator if self.generator.__class__ in _BOUNDED else None
        if bounded is None:
            try:
                self.generator.on_event(value, new_ts, self.emitter)
            except WinvizError:
                raise
            except Exception as exc:
                raise self.generator_error(exc, value, index) from exc
        elif new_ts > bounded.max_timestamp:  # BoundedOutOfOrdernessWatermarks.on_event
            bounded.max_timestamp = new_ts

    def process_batch(self, batch):
        """``process_element`` per record; untraced and ``fusable``, the batch downstream
        with a new timestamp column."""
        if self.trace is not None or not self.fusable:
            super().process_batch(batch)
            return
        stamps: list[int] = []  # the new timestamp column
        try:
            self.assign_timestamp_column(batch, stamps)
        except Exception as exc:
            done = len(stamps)
            if done:  # what came before the bad record goes on first
                self.output.collect_batch(batch.restamped(stamps))
            index = batch.indices[done]
            self.job.record_index = index
            if isinstance(exc, WinvizError):
                raise
            raise self.assigner_error(exc, batch.values[done], index) from exc
        finally:
            self.metrics["num_records_in"] += len(stamps)
            self.metrics["num_records_out"] += len(stamps)
            self.events_since_emit = True
        self.output.collect_batch(batch.restamped(stamps))

    def assign_timestamp_column(self, batch: Batch, stamps: list[int]) -> None:
        """Fill ``stamps`` with the batch's timestamps and raise the bounded generator's
        largest timestamp; on a failure ``stamps`` holds the records before it."""
        assigner, bounded = self.strategy.timestamp_assigner, self.generator
        values = batch.values if batch.immutable else map(copy_record, batch.values)
        source = batch.stamps
        second = (
            repeat(MIN, len(source))
            if source.count(None) == len(source)
            else [MIN if t is None else t for t in source]
        )
        failure: Exception | None = None
        try:
            stamps.extend(map(assigner, values, second))  # (raw: normalized below if need be)
        except Exception as exc:
            failure = exc
        if failure is None and stamps and countOf(map(type, stamps), int) == len(stamps):
            low, high = min(stamps), max(stamps)
            if low >= MIN and high <= MAX:
                if high > bounded.max_timestamp:
                    bounded.max_timestamp = high
                return
        raws, stamps[:] = stamps[:], ()
        norm, max_ts = self.normalizer, bounded.max_timestamp
        try:
            for index, raw in zip(batch.indices, raws, strict=False):  # raws may stop early
                if raw.__class__ is not int or not MIN <= raw <= MAX:
                    raw = norm(raw, index=index, field_name="timestamp")
                stamps.append(raw)
                if raw > max_ts:
                    max_ts = raw
        finally:
            bounded.max_timestamp = max_ts
        if failure is not None:
            raise failure

    def periodic_emit(self) -> None:
        self.generator.on_periodic_emit(self.emitter)
        self.events_since_emit = False

    def process_watermark(self, watermark):
        # Upstream watermarks are swallowed, except the end of input (Flink does the same).
        if watermark == MAX and self._watermark != MAX:
            if self.interval > 0:
                self.periodic_emit()
            self.emitter.emit_watermark(MAX)

    def process_watermark_status(self, idle):
        # This operator generates its own watermarks and statuses: upstream ones stop here.
        pass
