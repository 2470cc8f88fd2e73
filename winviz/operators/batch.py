"""A batch: records that arrive while nothing on the processing clock is due, handed from
operator to operator at once with the same results and trace as one by one
(``StreamOperator.process_batch``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from winviz.copies import all_immutable

if TYPE_CHECKING:
    from winviz.trace.writer import TraceWriter

# One record of a batch: (arrival time, source record index, value, timestamp or None).
BatchItem = tuple[int, int | None, Any, int | None]


@dataclass(slots=True)
class Batch:
    """Records in arrival order as four columns — arrival times, source record indices,
    values, timestamps — iterated as ``(arrival, index, value, timestamp)``; ``immutable``:
    every value is (``winviz.copies.all_immutable``), so loops may skip copying them."""

    arrivals: Sequence[int]
    indices: Sequence[int | None]
    values: Sequence[Any]
    stamps: Sequence[int | None]
    immutable: bool = field(default=False, compare=False)

    @classmethod
    def of(cls, items: Iterable[BatchItem]) -> Batch:
        """A batch from ``(arrival, index, value, timestamp)`` tuples."""
        rows = list(items)
        values = [r[2] for r in rows]
        return cls(
            [r[0] for r in rows],
            [r[1] for r in rows],
            values,
            [r[3] for r in rows],
            all_immutable(values),
        )

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[BatchItem]:
        return zip(self.arrivals, self.indices, self.values, self.stamps, strict=True)

    @overload
    def __getitem__(self, i: int) -> BatchItem: ...

    @overload
    def __getitem__(self, i: slice) -> Batch: ...

    def __getitem__(self, i: int | slice) -> BatchItem | Batch:
        """Record ``i``, or the records of a slice as a batch."""
        if isinstance(i, slice):
            return Batch(
                self.arrivals[i], self.indices[i], self.values[i], self.stamps[i], self.immutable
            )
        return (self.arrivals[i], self.indices[i], self.values[i], self.stamps[i])

    def restamped(self, stamps: Sequence[int | None]) -> Batch:
        """The same records (the first ``len(stamps)`` of them) with new timestamps."""
        n = len(stamps)
        if n == len(self.values):
            return Batch(self.arrivals, self.indices, self.values, stamps, self.immutable)
        return Batch(self.arrivals[:n], self.indices[:n], self.values[:n], stamps, self.immutable)

    def take(self, positions: Sequence[int]) -> Batch:
        """The records at ``positions``, in that order."""
        return Batch(
            [self.arrivals[k] for k in positions],
            [self.indices[k] for k in positions],
            [self.values[k] for k in positions],
            [self.stamps[k] for k in positions],
            self.immutable,
        )


@dataclass(eq=False, slots=True)
class SourceArrival:
    """A source batch chained into a loop (``winviz.operators.chaining``): the source's name
    and watermark (its ``arrival`` records), its first record's offset; ``taken``: how many
    records the loop took (one that failed too)."""

    source: str
    watermark: int
    position: int
    taken: int = 0

    def write(
        self, trace: TraceWriter, now: int, value: Any, source_ts: int | None, position: int
    ) -> None:
        """Write the source's ``arrival`` trace record of one of its records."""
        trace.arrival(now, self.watermark, self.source, None, source_ts, value, position)

    def hand_over(
        self,
        trace: TraceWriter,
        job: Any,
        batch: Batch,
        stamps: Sequence[int | None],
        collect: Callable[[Any, int | None], None],
    ) -> None:
        """The first ``len(stamps)`` records of ``batch`` to ``collect`` with timestamps
        ``stamps``, one by one after their ``arrival`` records, counted in ``taken``."""
        write, source, wm, position = trace.arrival, self.source, self.watermark, self.position
        done = 0
        try:
            for now, index, value, source_ts, ts in zip(
                batch.arrivals, batch.indices, batch.values, batch.stamps, stamps, strict=False
            ):  # (the first len(stamps) records)
                job.now, job.record_index = now, index
                write(now, wm, source, None, source_ts, value, position + done)
                done += 1
                collect(value, ts)
        finally:
            self.taken = done
