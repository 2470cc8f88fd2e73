"""What a Spark twin (or the model of one) produced, micro-batch by micro-batch.

A ``BatchOutcome`` is one executed micro-batch of Spark's ``MicroBatchExecution``: its
``batchId``, its input, the two watermarks it ran with and what it output. Spark keeps two
watermarks per batch since 3.4 (``spark.sql.streaming.statefulOperator.allowMultiple``, see
``OffsetSeqMetadata`` / ``WatermarkPropagator``): the *eviction* watermark that decides which
windows are final (emitted in append mode, removed from state) — the value progress reports as
``eventTime.watermark`` — and the *late-events* watermark, the eviction watermark of the batch
before, that decides which input rows are too late (``numRowsDroppedByWatermark``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from winviz.spark.spec import StateSpec, TwinSpec
from winviz.trace import Trace


class OutputRow(NamedTuple):
    """One row a batch output: a window ``[window_start, window_end)`` of ``key`` with the
    number of rows and the sum of their values (None without a value field)."""

    window_start: int
    window_end: int
    key: Any
    count: int
    sum: int | float | None


class TimerRow(NamedTuple):
    """One row a state twin output (``winviz.spark.state_twins``): the event-time ``timer``
    of ``key`` fired with ``count`` rows (and their ``sum``) since the key's state was new."""

    key: Any
    timer: int
    count: int
    sum: int | float | None


def row_order(r: OutputRow) -> tuple:
    """The order of a batch's rows: by window, then key (Spark's row order is not defined)."""
    return (r.window_start, r.window_end, str(type(r.key)), r.key)


def timer_row_order(r: TimerRow) -> tuple:
    """The order of a state twin's rows in a batch: by timer, then key."""
    return (r.timer, str(type(r.key)), r.key)


@dataclass(frozen=True)
class BatchOutcome:
    """One executed micro-batch: ``interval`` is the trigger interval its input came from
    (None for a no-data batch), ``proc_time`` when it ran on the simulated processing clock,
    ``max_event_time`` progress ``eventTime.max`` (for a union, of the first stream with rows),
    ``dropped`` ``numRowsDroppedByWatermark`` and ``rows`` its sorted output."""

    batch_id: int
    interval: int | None
    proc_time: int
    input_rows: int
    max_event_time: int | None
    watermark: int
    late_watermark: int
    dropped: int
    rows: tuple[Any, ...]  # OutputRow (window twins) or TimerRow (state twins)

    @property
    def is_no_data(self) -> bool:
        return self.input_rows == 0


@dataclass
class TwinResult:
    """Every micro-batch of one run, the spec it ran and its trace (``winviz.trace.Trace``)."""

    spec: TwinSpec | StateSpec
    batches: list[BatchOutcome]
    trace: Trace = field(repr=False)
    source: str = "spark"  # "spark" (a real run) or "model" (winviz.spark.model)

    @property
    def watermarks(self) -> list[int]:
        """The eviction watermark of each batch, in batch order."""
        return [b.watermark for b in self.batches]

    @property
    def dropped(self) -> list[int]:
        return [b.dropped for b in self.batches]

    def outputs(self) -> list[list[OutputRow]]:
        """Each batch's output rows."""
        return [list(b.rows) for b in self.batches]

    def summary(self) -> list[tuple[int, int, int, int, tuple[OutputRow, ...]]]:
        """``(batch_id, input_rows, watermark, dropped, rows)`` per batch: what Spark reports,
        the thing to compare between a run and the model."""
        return [(b.batch_id, b.input_rows, b.watermark, b.dropped, b.rows) for b in self.batches]

    def to_pandas(self):  # -> pandas.DataFrame
        """The per-batch table: one row per micro-batch (``rows`` holds its output rows)."""
        import pandas as pd

        columns = [f.name for f in fields(BatchOutcome) if f.name != "rows"]
        return pd.DataFrame(
            [
                {
                    **{c: getattr(b, c) for c in columns},
                    "output_rows": len(b.rows),
                    "rows": [r._asdict() for r in b.rows],
                }
                for b in self.batches
            ]
        )

    def rows_frame(self):  # -> pandas.DataFrame
        """One row per output row, with the batch that output it and that batch's watermark
        (without the ``sum`` column when the twin has no value field to sum)."""
        import pandas as pd

        row_type = TimerRow if isinstance(self.spec, StateSpec) else OutputRow
        columns = ["batch_id", "watermark", *row_type._fields]
        if row_type is OutputRow and getattr(self.spec, "value_field", None) is None:
            columns.remove("sum")  # no value field: every sum is None, an empty column
        return pd.DataFrame(
            [
                {"batch_id": b.batch_id, "watermark": b.watermark, **r._asdict()}
                for b in self.batches
                for r in b.rows
            ],
            columns=columns,
        )
