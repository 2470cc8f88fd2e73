"""Fused paths, decided once when the job is built (Flink's ``OperatorChain``): a window
operator in the kernel's configuration gets its ``WindowKernel`` (``install_kernel``); a source
whose one downstream is a ``fusable`` timestamps operator gets a ``SourceChain`` (its traced
batches run that operator's steps, and the window kernel's after it); a kernel whose one target
is a sink keeps its firings' results for it (``straight_sink``). Speed only: the results and
trace are Flink's path's.
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
    """What a source's traced batches run through: the timestamps operator after it, and the
    window kernel after that (or None)."""

    timestamps: TimestampsAndWatermarksOperator
    window: WindowKernel | None

    def process_source_batch(self, batch: Batch, arrival: SourceArrival) -> None:
        """The source's traced batch through the chain, traced as one record at a time: the
        timestamps first, then the records that got one; a record whose timestamp failed gets
        its arrival record, then the error."""
        timestamps, window = self.timestamps, self.window
        stamps: list[int] = []
        failure: Exception | None = None
        try:
            timestamps.assign_timestamp_column(batch, stamps)
        except Exception as exc:  # the records before it go through first
            failure = exc
        try:
            if window is None:
                arrival.hand_over(
                    timestamps.trace,  # type: ignore[arg-type]
                    timestamps.job, batch, stamps, timestamps.output.collect,
                )  # fmt: skip
            elif stamps:
                window.process_source_batch(batch, stamps, arrival)
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
        try:
            if isinstance(failure, WinvizError):
                raise failure
            raise timestamps.assigner_error(failure, value, index) from failure
        finally:
            failure = None  # (no cycle through this frame: the job can be freed at once)


def install_kernel(op: StreamOperator, traced: bool) -> None:
    """Give a window operator in the kernel's configuration its kernel."""
    if isinstance(op, WindowOperator) and WindowKernel.takes(op):
        op.fuse(WindowKernel(op, traced))


def chain_operators(
    operators: Iterable[StreamOperator], downstream: Callable[[StreamOperator], list[Any]]
) -> None:
    """Set each source's ``chain`` and each window kernel's ``straight_sink``;
    ``downstream(op)``: what ``op``'s output hands records to."""
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
