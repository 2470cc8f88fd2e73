"""Operator chaining, decided once when the job is built (Flink's
``StreamingJobGraphGenerator.isChainable`` and ``OperatorChain``).

Flink chains an operator to the one before it when nothing needs to go over the network in
between, and chained operators call each other directly (``ChainingOutput.collect`` calls the
next operator's ``processElement``). winviz's runtime hands records over the same way: an
operator's output calls its one downstream's ``process_element`` itself. On top of that, this
module decides, once, where a fused kernel beneath Flink's path takes over for speed:

- **Window kernels.** A ``WindowOperator`` in the window kernel's configuration
  (``WindowKernel.takes``; see ``winviz.operators.window_kernel``) gets the kernel installed
  when it is made: its batch loop (trace off) or element loop (trace on), and its timer
  service's event-time firing.
- **Source chains.** A ``SourceOperator`` whose one downstream is a
  ``TimestampsAndWatermarksOperator`` that can stamp a whole column (``fusable``) gets a
  ``SourceChain``: with a trace, its batches run that operator's steps inside the source's own
  loop (one record at a time, the trace's order), and when the timestamps operator's one
  downstream is a window with a kernel, the source batch goes into the kernel
  (``WindowKernel.process_source_batch``).
- **Sinks straight after a window kernel.** When a window with a kernel hands its records to
  one ``SinkOperator`` only, the kernel's ``straight_sink`` is that sink: its firings keep
  their results for it and hand them over at once (``SinkOperator.keep``).

Everything decided here changes speed only: with ``WindowKernel.enabled`` off no kernel and no
chain into a window is installed, and every record takes Flink's path with the same results
and the same trace (``tests/test_perf_paths.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from winviz.errors import WinvizError
from winviz.operators.base import StreamOperator
from winviz.operators.batch import Batch, SourceArrival
from winviz.operators.simple import SinkOperator
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.operators.window_kernel import WindowKernel
from winviz.operators.window_operator import WindowOperator


@dataclass(frozen=True)
class SourceChain:
    """What a source's traced batches run through: the timestamps operator right after it,
    and the window kernel right after that (or None)."""

    timestamps: TimestampsAndWatermarksOperator
    window: WindowKernel | None

    def process_source_batch(self, batch: Batch, arrival: SourceArrival) -> None:
        """The source's traced batch through the chain, with the trace of one record at a
        time: each record's ``arrival`` record, then what the chained operators write for
        it. ``arrival.taken`` says how many records the source handed over (including one
        that failed)."""
        timestamps = self.timestamps
        if self.window is None:
            timestamps.process_source_batch(batch, arrival)
            return
        # the timestamps of the whole batch first (the column kernel), then the window takes
        # the records that got one; a record whose timestamp failed gets its arrival record,
        # then the error
        stamps: list[int] = []
        failure: Exception | None = None
        try:
            timestamps.assign_timestamp_column(batch, stamps)
        except Exception as exc:  # the records before it go through first
            failure = exc
        try:
            if len(stamps) == 1:  # a batch of one: as one by one (no run to gather)
                self.window.one_record(batch, stamps[0], arrival)
            elif stamps:
                self.window.process_source_batch(batch, stamps, arrival)
        finally:
            timestamps.count_chained(arrival.taken, arrival.taken)
        if failure is None:
            return
        arrival_time, index, value, ts = batch[len(stamps)]
        job = timestamps.job
        job.now, job.record_index = arrival_time, index
        arrival.write(
            timestamps.trace,  # type: ignore[arg-type]
            arrival_time, value, ts, arrival.position + arrival.taken,
        )  # fmt: skip
        arrival.taken += 1
        timestamps.count_chained(1, 0)
        if isinstance(failure, WinvizError):
            raise failure
        raise timestamps.assigner_error(failure, value, index) from failure


def install_kernel(op: StreamOperator, traced: bool) -> None:
    """Give a window operator in the kernel's configuration its kernel (when the job is
    built, before it runs)."""
    if isinstance(op, WindowOperator) and WindowKernel.takes(op):
        op.fuse(WindowKernel(op, traced))


def chain_operators(
    operators: Iterable[StreamOperator], downstream: Callable[[StreamOperator], list[Any]]
) -> None:
    """Set each source's ``chain`` and each window kernel's ``straight_sink`` (see the module
    docstring); ``downstream(op)`` lists what ``op``'s output hands records to (operators,
    input channels, exchanges)."""
    for op in operators:
        if isinstance(op, WindowOperator) and op.kernel is not None:
            after = downstream(op)
            sink = after[0] if len(after) == 1 and type(after[0]) is SinkOperator else None
            op.kernel.straight_sink = sink
        if not isinstance(op, SourceOperator):
            continue
        op.chain = None
        targets = downstream(op)
        if len(targets) != 1 or type(targets[0]) is not TimestampsAndWatermarksOperator:
            continue
        timestamps = targets[0]
        if not timestamps.fusable:
            continue
        after = downstream(timestamps)
        kernel = None
        if len(after) == 1 and isinstance(after[0], WindowOperator):
            kernel = after[0].kernel
        op.chain = SourceChain(timestamps, kernel)
