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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

# One record of a batch: (arrival time, source record index, value, timestamp or None).
BatchItem = tuple[int, int | None, Any, int | None]


@dataclass(frozen=True, slots=True)
class Batch:
    """Records in arrival order, as four equally long columns (a ``range`` is a fine
    column: ``from_collection`` with a fixed arrival interval stores no list at all)."""

    arrivals: Sequence[int]
    indices: Sequence[int | None]
    values: Sequence[Any]
    stamps: Sequence[int | None]

    @classmethod
    def of(cls, items: Iterable[BatchItem]) -> Batch:
        """A batch from ``(arrival, index, value, timestamp)`` tuples."""
        rows = list(items)
        return cls(
            [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]
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
            return Batch(self.arrivals[i], self.indices[i], self.values[i], self.stamps[i])
        return (self.arrivals[i], self.indices[i], self.values[i], self.stamps[i])

    def restamped(self, stamps: Sequence[int | None]) -> Batch:
        """The same records (the first ``len(stamps)`` of them) with new timestamps."""
        n = len(stamps)
        if n == len(self.values):
            return Batch(self.arrivals, self.indices, self.values, stamps)
        return Batch(self.arrivals[:n], self.indices[:n], self.values[:n], stamps)

    def take(self, positions: Sequence[int]) -> Batch:
        """The records at ``positions``, in that order."""
        return Batch(
            [self.arrivals[k] for k in positions],
            [self.indices[k] for k in positions],
            [self.values[k] for k in positions],
            [self.stamps[k] for k in positions],
        )
