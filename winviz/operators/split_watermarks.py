"""Per-partition watermarks (Flink's per-split watermarks: ``ProgressiveTimestampsAndWatermarks``
with a split-local output per split, as for Kafka partitions): after a partitioned source each
partition has its own generator, and a ``WatermarkOutputMultiplexer`` combines them, so one
partition that stops sending holds the watermark back until it is idle or the input ends.
Trace: ``channel_watermark`` (channel = partition, input = ``source[p]``),
``watermark_dropped``, ``channel_idle`` / ``channel_active``; then the operator's ``watermark``
and ``idle`` / ``active``.
"""

from __future__ import annotations

from winviz.combined_watermark import WatermarkOutputMultiplexer
from winviz.operators.base import StreamOperator
from winviz.operators.sources import (
    TimestampsAndWatermarksOperator,
    check_watermark,
    emits_only_periodically,
)
from winviz.time import MAX
from winviz.watermarks import WatermarkOutput, WatermarkStrategy


class _PartitionOutput(WatermarkOutput):
    """The split-local ``WatermarkOutput`` of one partition; an ``immediate`` one (``on_event``)
    recomputes the combined watermark at once, a deferred one leaves it to ``periodic_emit``."""

    def __init__(
        self, op: SplitWatermarksOperator, partition: int, input_name: str, immediate: bool
    ) -> None:
        self.op = op
        self.partition = partition
        self.input_name = input_name
        self.immediate = immediate

    @property
    def partial(self):
        return self.op.multiplexer.partials[self.op.local[self.partition]]

    def emit_watermark(self, watermark: int) -> None:
        op, partial = self.op, self.partial
        check_watermark(op, watermark)
        was_idle = partial.idle
        trace = op.trace
        if partial.set_watermark(watermark):
            if trace is not None:
                trace.channel_watermark(
                    op.current_processing_time(), op._watermark, op.name, watermark,
                    self.partition, self.input_name,
                )  # fmt: skip
        elif watermark < partial.watermark and trace is not None:
            trace.watermark_dropped(
                op.current_processing_time(), op._watermark, op.name, watermark, "not increasing"
            )
        if was_idle:
            self._trace_status(idle=False)
        if self.immediate:
            op.combine()

    def set_idle(self, idle: bool) -> None:
        if self.partial.idle != idle:
            self.partial.idle = idle
            self._trace_status(idle)
        if self.immediate:
            self.op.combine()

    def _trace_status(self, idle: bool) -> None:
        """The partition's ``channel_idle`` / ``channel_active`` record."""
        self.op.trace_channel_status(idle, self.partition, self.input_name)


class _MainOutput(WatermarkOutput):
    """The reader's main output (Flink's ``IdlenessManager.getMainOutput()``), used only by a
    reader subtask without partitions: it holds every watermark back, or with
    ``with_idleness`` marks the reader idle after the timeout."""

    def __init__(self, op: SplitWatermarksOperator) -> None:
        self.op = op

    def emit_watermark(self, watermark: int) -> None:
        op = self.op
        check_watermark(op, watermark)
        if watermark > op._watermark:
            op.status.set_idle(False)
            StreamOperator.process_watermark(op, watermark)

    def set_idle(self, idle: bool) -> None:
        self.op.status.set_idle(idle)


class SplitWatermarksOperator(TimestampsAndWatermarksOperator):
    """Assigns timestamps and generates watermarks per partition of the source before it."""

    def __init__(
        self,
        name: str,
        strategy: WatermarkStrategy,
        interval: int,
        tz: str | None,
        source_name: str,
        num_partitions: int,
        partition_ids: list[int] | None = None,
    ) -> None:
        super().__init__(name, strategy, interval, tz)
        # the partitions of this reader subtask (all of them without parallelism)
        ids = list(range(num_partitions)) if partition_ids is None else list(partition_ids)
        self.partition_ids = ids
        self.local = {p: i for i, p in enumerate(ids)}  # partition -> index of its generator
        # Flink's main output has a generator of its own; it never sees a record (they all
        # come from partitions) and matters only for a reader without partitions
        self.main_generator = self.generator
        self.generators = [strategy.create_generator(self.current_processing_time) for _ in ids]
        names = [f"{source_name}[{p}]" for p in ids]
        self.outputs = [_PartitionOutput(self, p, n, True) for p, n in zip(ids, names, strict=True)]
        self.deferred = [
            _PartitionOutput(self, p, n, False) for p, n in zip(ids, names, strict=True)
        ]
        self.multiplexer = WatermarkOutputMultiplexer.of(len(ids))
        self.main_output = _MainOutput(self)
        self.emits_watermarks_per_record = not emits_only_periodically(self.generator)

    def combine(self) -> None:
        """Recompute the combined watermark: an increase goes on (active), all partitions
        idle makes the operator idle; without partitions nothing (as Flink's)."""
        if not self.partition_ids:
            return
        self.multiplexer.update_combined()
        for what, value in self.multiplexer.drain():
            if what == "watermark":
                self.status.set_idle(False)
                StreamOperator.process_watermark(self, value)  # type: ignore[arg-type]
            else:
                self.status.set_idle(True)

    def _select(self) -> None:
        """Point ``generator`` / ``emitter`` at the current record's partition."""
        p = self.local[self.job.partition or 0]
        self.generator = self.generators[p]
        self.emitter = self.outputs[p]  # type: ignore[assignment]

    def process_element(self, value, ts):
        self._select()
        super().process_element(value, ts)

    def process_batch(self, batch):
        self._select()  # the runtime never batches records of two partitions together
        super().process_batch(batch)

    def periodic_emit(self) -> None:
        for generator, output in zip(self.generators, self.deferred, strict=True):
            generator.on_periodic_emit(output)
        self.combine()  # Flink's multiplexer.onPeriodicEmit(): combine once, after every split
        if not self.partition_ids:  # a reader without partitions: only its main output
            self.main_generator.on_periodic_emit(self.main_output)
        self.events_since_emit = False

    def process_watermark(self, watermark):
        # Upstream watermarks are swallowed; at the end of input every partition emits once
        # more, then the source's watermark is MAX (Flink's source emits MAX_WATERMARK).
        if watermark == MAX and self._watermark != MAX:
            if self.interval > 0:
                self.periodic_emit()
            self.status.set_idle(False)
            StreamOperator.process_watermark(self, MAX)
