"""What a Spark twin (or its model) produced: ``BatchOutcome``s in a ``TwinResult``, and a window
or state twin's run as a ``winviz.trace.Trace`` the engine's charts draw beside Flink's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple

from winviz.spark.batches import NO_DATA, SIDE_NAMES, InputBatch
from winviz.spark.spec import StateSpec, TwinSpec, is_dropped
from winviz.trace import Trace
from winviz.windows.window import TimeWindow

if TYPE_CHECKING:
    from winviz.spark.join_model import JoinSpec


class OutputRow(NamedTuple):
    """A window twin's output row: window ``[window_start, window_end)`` of ``key``, its row
    count and value sum (None without a value field). Each row type's ``order`` fixes the order
    of a batch's rows (Spark's is not defined)."""

    window_start: int
    window_end: int
    key: Any
    count: int
    sum: int | float | None

    def order(self) -> tuple:
        return (self.window_start, self.window_end, str(type(self.key)), self.key)


class TimerRow(NamedTuple):
    """A state twin's output row: ``key``'s event-time ``timer`` fired with ``count`` rows (and
    their ``sum``) since the key's state was new."""

    key: Any
    timer: int
    count: int
    sum: int | float | None

    def order(self) -> tuple:
        return (self.timer, str(type(self.key)), self.key)


class JoinRow(NamedTuple):
    """A join twin's output row: the key, each side's input index and event time (None: the
    NULL side of an outer row, or a left semi row's right side)."""

    key: Any
    left_index: int | None
    left_ts: int | None
    right_index: int | None
    right_ts: int | None

    @property
    def is_outer(self) -> bool:
        """A NULL row of an outer join (one side missing)."""
        return self.left_index is None or self.right_index is None

    def order(self) -> tuple:
        return (
            str(type(self.key)),
            self.key,
            -1 if self.left_index is None else self.left_index,
            -1 if self.right_index is None else self.right_index,
        )


@dataclass(frozen=True)
class BatchOutcome:
    """One executed micro-batch (Spark's ``StreamingQueryProgress``): ``interval`` its input's
    trigger interval (None: no data), ``watermark`` the eviction watermark, ``late_watermark``
    the batch before's, ``dropped`` ``numRowsDroppedByWatermark``, ``rows`` its sorted output.
    A join twin's adds what Spark does not report (``join_model`` rules 2-5): the (left, right)
    ``state_watermarks``, (side, index) of rows ``late`` and ``arrived``, (side, index,
    matched) of rows ``evicted`` from state or never stored."""

    batch_id: int
    interval: int | None
    proc_time: int
    input_rows: int
    max_event_time: int | None
    watermark: int
    late_watermark: int
    dropped: int
    rows: tuple[Any, ...]  # OutputRow (window twins), TimerRow (state twins) or JoinRow (joins)
    state_watermarks: tuple[int, int] | None = None
    late: tuple[tuple[int, int], ...] = ()
    evicted: tuple[tuple[int, int, bool], ...] = ()
    arrived: tuple[tuple[int, int], ...] = ()

    @property
    def is_no_data(self) -> bool:
        return self.input_rows == 0


def with_inputs(
    outcomes: Sequence[BatchOutcome], inputs: Sequence[InputBatch]
) -> list[tuple[BatchOutcome, InputBatch]]:
    """Each executed micro-batch with the input batch it read (``NO_DATA``: a no-data batch);
    the data batches read ``inputs`` in order, one file each."""
    data = iter(inputs)
    return [(o, NO_DATA if o.is_no_data else next(data)) for o in outcomes]


# a window or state twin's per-batch table (a join's: ``join_table_row``)
TABLE_COLUMNS = [f.name for f in fields(BatchOutcome) if f.default is MISSING and f.name != "rows"]


@dataclass
class TwinResult:
    """Every micro-batch of one run, its spec, its input batches and its trace (a join twin
    has none)."""

    spec: TwinSpec | StateSpec | JoinSpec
    batches: list[BatchOutcome]
    source: str = "spark"  # "spark" (a real run) or "model" (winviz.spark.model)
    inputs: Sequence[InputBatch] = field(default=(), repr=False)
    trace: Trace | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        traced = isinstance(self.spec, TwinSpec | StateSpec)
        self.trace = build_trace(self.spec, self.inputs, self.batches) if traced else None

    @property
    def watermarks(self) -> list[int]:
        """The eviction watermark of each batch, in batch order."""
        return [b.watermark for b in self.batches]

    @property
    def dropped(self) -> list[int]:
        return [b.dropped for b in self.batches]

    def outputs(self) -> list[list[Any]]:
        """Each batch's output rows (``OutputRow``, ``TimerRow`` or ``JoinRow``)."""
        return [list(b.rows) for b in self.batches]

    def summary(self) -> list[tuple[int, int, int, int, tuple[Any, ...]]]:
        """``(batch_id, input_rows, watermark, dropped, rows)`` per batch: what Spark reports,
        the thing to compare between a run and the model."""
        return [(b.batch_id, b.input_rows, b.watermark, b.dropped, b.rows) for b in self.batches]

    def to_pandas(self):  # -> pandas.DataFrame
        """The per-batch table: one row per micro-batch (``rows`` holds its output rows)."""
        import pandas as pd

        if not isinstance(self.spec, TwinSpec | StateSpec):
            return pd.DataFrame([join_table_row(b) for b in self.batches])
        return pd.DataFrame(
            [
                {
                    **{c: getattr(b, c) for c in TABLE_COLUMNS},
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

        row_type = {TwinSpec: OutputRow, StateSpec: TimerRow}.get(type(self.spec), JoinRow)
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


def join_table_row(b: BatchOutcome) -> dict[str, Any]:
    """A join twin's batch as a row of ``TwinResult.to_pandas``."""
    assert b.state_watermarks is not None
    return {
        "batch_id": b.batch_id,
        "proc_time": b.proc_time,
        "input_rows": b.input_rows,
        "watermark": b.watermark,
        "late_watermark": b.late_watermark,
        "left_state_watermark": b.state_watermarks[0],
        "right_state_watermark": b.state_watermarks[1],
        "dropped": b.dropped,
        "late": [f"{SIDE_NAMES[s]} {i}" for s, i in b.late],
        "evicted": [f"{SIDE_NAMES[s]} {i}" for s, i, _ in b.evicted],
        "joined": sum(1 for r in b.rows if not r.is_outer),
        "null_rows": sum(1 for r in b.rows if r.is_outer),
        "rows": [r._asdict() for r in b.rows],
    }


OPERATOR = "spark"


def build_trace(
    spec: TwinSpec | StateSpec, inputs: Sequence[InputBatch], outcomes: Sequence[BatchOutcome]
) -> Trace:
    """The trace of a run (operator ``OPERATOR``; a ``batch`` record per executed ``batchId``):
    the rows' ``arrival``, ``element`` at the late-events watermark and ``late_dropped``; the
    raised ``watermark``; per output row ``fired`` (``early`` while the window's end is above
    the watermark) and ``emitted`` at the window's max timestamp, or ``timer_fired`` and
    ``emitted`` at a ``TimerRow``'s timer."""
    trace = Trace()
    write = trace.writer
    panes: dict[tuple, int] = {}
    previous_wm = 0
    for b, batch in with_inputs(outcomes, inputs):
        for row, index, at in zip(batch.rows, batch.indexes, batch.arrivals, strict=True):
            write.arrival(at, previous_wm, OPERATOR, row["key"], row["ts"], row, index)
        write.batch(
            b.proc_time, b.watermark, OPERATOR, b.batch_id, b.input_rows, b.late_watermark,
            b.max_event_time, b.dropped,
        )  # fmt: skip
        if b.watermark > previous_wm:
            write.watermark(b.proc_time, b.watermark, OPERATOR, None, None, f"batch {b.batch_id}")
        previous_wm = b.watermark
        for row in batch.rows:
            key, ts = row["key"], row["ts"]
            write.element(b.proc_time, b.late_watermark, OPERATOR, key, ts, row)
            if is_dropped(spec, ts, b.late_watermark):
                write.late_dropped(b.proc_time, b.late_watermark, OPERATOR, key, ts, row)
        for r in b.rows:
            if isinstance(r, TimerRow):
                write.timer_fired(
                    b.proc_time, b.watermark, OPERATOR, r.key, None, r.timer, "EVENT_TIME", None
                )
                write.emitted(b.proc_time, b.watermark, OPERATOR, r.key, None, r.timer, r._asdict())
                continue
            window = TimeWindow(r.window_start, r.window_end)
            pane = panes.get((r.key, window), 0)
            panes[(r.key, window)] = pane + 1
            timing = "early" if r.window_end > b.watermark else ("on_time" if pane == 0 else "late")
            result = r.count if spec.aggregate == "count" else r.sum
            ts = window.max_timestamp()
            write.fired(
                b.proc_time, b.watermark, OPERATOR, r.key, window, ts, result, pane, timing, r.count
            )
            write.emitted(b.proc_time, b.watermark, OPERATOR, r.key, window, ts, r._asdict())
    return trace
