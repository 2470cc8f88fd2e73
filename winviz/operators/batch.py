"""A batch: records that arrive one after another while nothing on the processing clock is
due, handed from operator to operator at once.

Flink hands records over one at a time; winviz may hand over a run of them when nothing can
happen in between (no periodic watermark, no processing-time timer, no checkpoint barrier),
which gives the same results and the same trace (see ``StreamOperator.process_batch``).

A ``Batch`` keeps its records as four columns — arrival (processing) times, source record
indices, values and timestamps — so that a source's whole input is one ``Batch`` and a run of
it is a slice, and an operator that only changes timestamps (``TimestampsAndWatermarksOperator``)
makes one new column instead of a new tuple per record. Iterating a batch gives
``(arrival, index, value, timestamp)`` per record, as one-by-one processing sees them.
``immutable`` says that every value is immutable (``winviz.copies.all_immutable``): loops that
hand values to user functions may then skip copying them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from winviz.copies import all_immutable

if TYPE_CHECKING:
    from winviz.trace.writer import TraceWriter

# One record of a batch: (arrival time, source record index, value, timestamp or None).
BatchItem = tuple[int, int | None, Any, int | None]


@dataclass(frozen=True, slots=True)
class Batch:
    """Records in arrival order, as four equally long columns (a ``range`` is a fine
    column: ``from_collection`` with a fixed arrival interval stores no list at all), and
    whether every value is known to be immutable (False: not known)."""

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


@dataclass(eq=False)
class SourceArrival:
    """Where the records of a source batch come from, for a loop that takes a source batch
    chained into it (``TimestampsAndWatermarksOperator.process_source_batch``,
    ``WindowKernel.process_source_batch``; ``winviz.operators.chaining``): the source's name
    and watermark (its ``arrival`` records carry them) and the source offset of the batch's
    first record. ``taken`` is set to how many records the loop took, including one that
    failed."""

    source: str
    watermark: int
    position: int
    taken: int = 0

    def write(
        self, trace: TraceWriter, now: int, value: Any, source_ts: int | None, position: int
    ) -> None:
        """Write the source's ``arrival`` trace record of one of its records."""
        trace.arrival(now, self.watermark, self.source, None, source_ts, value, position)
