"""Per-partition watermarks: one watermark generator per source partition (Flink's per-split
watermarks — ``ProgressiveTimestampsAndWatermarks`` with a split-local output per split, what
``env.fromSource(kafkaSource, strategy, name)`` does for Kafka partitions).

``assign_timestamps_and_watermarks`` applied right after a partitioned source
(``env.from_partitions``) builds this operator instead of a plain
``TimestampsAndWatermarksOperator``. Each partition gets its own generator instance from the
strategy (and its own idleness timer with ``with_idleness``); a record updates only its own
partition's generator. The partition watermarks are combined as Flink combines split
watermarks, by a ``WatermarkOutputMultiplexer`` (``winviz.combined_watermark``). So one partition
that stops sending records holds the watermark back (the window that "never fires") until it
is marked idle — or until the end of the input, when the source emits the watermark MAX.

Trace: ``channel_watermark`` (channel = partition, input = ``source[p]``) when a partition's
watermark increases, ``watermark_dropped`` for a lower one, ``channel_idle`` /
``channel_active`` when a partition's idleness changes; then the operator's ``watermark`` and
``idle`` / ``active`` when the combined watermark or status changes.
"""

from __future__ import annotations

from winviz.combined_watermark import WatermarkOutputMultiplexer
from winviz.operators.base import StreamOperator
from winviz.operators.sources import TimestampsAndWatermarksOperator, emits_only_periodically
from winviz.time import MAX
from winviz.watermarks import WatermarkOutput, WatermarkStrategy


class _PartitionOutput(WatermarkOutput):
    """The split-local ``WatermarkOutput`` of one partition. ``immediate`` outputs (used by
    ``on_event``) recompute the combined watermark at once; deferred ones (periodic emits)
    leave that to ``SplitWatermarksOperator.periodic_emit``."""

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

    def mark_idle(self) -> None:
        self._set_idle(True)

    def mark_active(self) -> None:
        self._set_idle(False)

    def _set_idle(self, idle: bool) -> None:
        if self.partial.idle != idle:
            self.partial.idle = idle
            self._trace_status(idle)
        if self.immediate:
            self.op.combine()

    def _trace_status(self, idle: bool) -> None:
        """The partition's ``channel_idle`` / ``channel_active`` record."""
        self.op.trace_channel_status(idle, self.partition, self.input_name)


class _MainOutput(WatermarkOutput):
    """The reader's main output (Flink's ``IdlenessManager.getMainOutput()``), used here only
    by a reader subtask without partitions: its generator never sees an event, so without
    idleness it emits nothing above ``MIN`` and the reader holds back every downstream
    watermark; with ``with_idleness`` it marks the reader idle once the timeout has passed
    (the split-local side, with no split, counts as idle)."""

    def __init__(self, op: SplitWatermarksOperator) -> None:
        self.op = op

    def emit_watermark(self, watermark: int) -> None:
        op = self.op
        if watermark > op._watermark:
            op._set_idle(False)
            StreamOperator.process_watermark(op, watermark)

    def mark_idle(self) -> None:
        self.op._set_idle(True)

    def mark_active(self) -> None:
        self.op._set_idle(False)


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
        self.idle = False
        self.emits_watermarks_per_record = not emits_only_periodically(self.generator)

    def combine(self) -> None:
        """Recompute the combined watermark; an increase goes on as this operator's own
        watermark (making it active), all partitions idle makes it idle. Without partitions
        there is nothing to combine (Flink's ``CombinedWatermarkStatus`` with no partial
        watermarks neither emits nor marks idle)."""
        if not self.partition_ids:
            return
        self.multiplexer.update_combined()
        for what, value in self.multiplexer.drain():
            if what == "watermark":
                self._set_idle(False)
                StreamOperator.process_watermark(self, value)  # type: ignore[arg-type]
            else:
                self._set_idle(True)

    def _set_idle(self, idle: bool) -> None:
        if idle != self.idle:
            self.idle = idle
            self.trace_status(idle)
            self.output.emit_watermark_status(idle)

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
            self._set_idle(False)
            StreamOperator.process_watermark(self, MAX)

    # snapshot / restore: StreamOperator's. Flink checkpoints a split's position, never its
    # watermark: after a restore SourceOperator.open() creates the event-time logic anew (a
    # new WatermarkOutputMultiplexer, a new generator per split, everything at MIN).
