"""What a Spark twin (or the model of one) produced, micro-batch by micro-batch.

A ``BatchOutcome`` is one executed micro-batch of Spark's ``MicroBatchExecution``: its
``batchId``, its input, the two watermarks it ran with and what it output. Spark keeps two
watermarks per batch since 3.4 (``spark.sql.streaming.statefulOperator.allowMultiple``, see
``OffsetSeqMetadata`` / ``WatermarkPropagator``): the *eviction* watermark that decides which
windows are final (emitted in append mode, removed from state) — the value progress reports as
``eventTime.watermark`` — and the *late-events* watermark, the eviction watermark of the batch
before, that decides which input rows are too late (``numRowsDroppedByWatermark``).

One ``TwinResult`` type holds every twin's run: a window twin's rows are ``OutputRow``s, a state
twin's ``TimerRow``s, a join twin's ``winviz.spark.join_model.JoinRow``s (its batches also say
which rows were late or evicted, and the state watermarks). A window or state twin's result
also holds its run as a ``winviz.trace.Trace`` (``build_trace``), made from its batches and
inputs, so the engine's charts can draw Spark beside Flink.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple

from winviz.spark.batches import SIDE_NAMES, InputBatch
from winviz.spark.late_filter import is_dropped
from winviz.spark.spec import StateSpec, TwinSpec
from winviz.trace import Trace, TraceWriter
from winviz.windows import TimeWindow

if TYPE_CHECKING:
    from winviz.spark.join_model import JoinSpec


class OutputRow(NamedTuple):
    """One row a batch output: a window ``[window_start, window_end)`` of ``key`` with the
    number of rows and the sum of their values (None without a value field).

    Each row type's ``order`` is the fixed order of a batch's rows (Spark's row order is not
    defined)."""

    window_start: int
    window_end: int
    key: Any
    count: int
    sum: int | float | None

    def order(self) -> tuple:
        """By window, then key."""
        return (self.window_start, self.window_end, str(type(self.key)), self.key)


class TimerRow(NamedTuple):
    """One row a state twin output (``winviz.spark.state_twins``): the event-time ``timer``
    of ``key`` fired with ``count`` rows (and their ``sum``) since the key's state was new."""

    key: Any
    timer: int
    count: int
    sum: int | float | None

    def order(self) -> tuple:
        """By timer, then key."""
        return (self.timer, str(type(self.key)), self.key)


class JoinRow(NamedTuple):
    """One output row: the key, and each side's input index and event time (None for the
    NULL side of an outer row; a left semi row has no right side)."""

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
        """By key, then left and right input index (a NULL side first)."""
        return (
            str(type(self.key)),
            self.key,
            -1 if self.left_index is None else self.left_index,
            -1 if self.right_index is None else self.right_index,
        )


@dataclass(frozen=True)
class BatchOutcome:
    """One executed micro-batch: ``interval`` is the trigger interval its input came from
    (None for a no-data batch), ``proc_time`` when it ran on the simulated processing clock,
    ``max_event_time`` progress ``eventTime.max`` (for a union, of the first stream with rows),
    ``dropped`` ``numRowsDroppedByWatermark`` and ``rows`` its sorted output.

    A join twin's batch also says what Spark does not report (``join_model`` rules 2-5):
    ``state_watermarks`` the (left, right) state watermarks; ``late`` (side, input index) of
    the input rows dropped as late; ``evicted`` (side, input index, matched) of the state rows
    removed, and of the right input rows not stored because the right state watermark had
    passed them; ``arrived`` (side, input index) of the batch's input rows."""

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
) -> list[tuple[BatchOutcome, InputBatch | None]]:
    """Each executed micro-batch with the input batch it read (None: a no-data batch); the
    data batches read ``inputs`` in order, one file each."""
    data = iter(inputs)
    return [(o, None if o.is_no_data else next(data)) for o in outcomes]


# a window or state twin's per-batch table: the fields every batch has but its rows (a join's
# table: ``join_table_row``)
TABLE_COLUMNS = [f.name for f in fields(BatchOutcome) if f.default is MISSING and f.name != "rows"]


@dataclass
class TwinResult:
    """Every micro-batch of one run, the spec it ran, its input batches and its trace
    (``winviz.trace.Trace``, ``build_trace`` of the batches and inputs; a join twin has
    none)."""

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
    """The trace of a run: ``outcomes`` in batch order; data batches take their input rows
    from ``inputs`` in order.

    The records use the engine's schema (``winviz.trace``) and one new kind:

    ``batch`` — a micro-batch ran (Spark's ``MicroBatchExecution`` executing one ``batchId``).
    ``proc_time`` is when it ran, ``watermark`` its eviction watermark; detail fields are
    ``DETAIL_FIELDS["batch"]``. Per batch, in this order:

    - ``arrival`` (value, index) for each input row, at its arrival time;
    - ``batch``;
    - ``watermark`` (input = ``"batch <id>"``) when the batch's eviction watermark is higher than
      the previous batch's;
    - ``element`` (value = the row) for each input row as the batch processes it (``watermark`` =
      the batch's late-events watermark), followed by ``late_dropped`` (value = the row) when
      Spark's late filter drops the whole row (``winviz.spark.late_filter``: Spark only counts
      ``numRowsDroppedByWatermark``, per partial aggregate, in the ``batch`` record's ``dropped``;
      which rows they were is derived from its rules);
    - ``fired`` (result, pane, timing, count) and ``emitted`` (value = the row as a dict) for each
      output row, with the row's key and window; ``timing`` is ``early`` when the window's end is
      above the batch's watermark, else ``on_time`` for the window's first output and ``late`` for
      later ones (Flink's ``fired`` timings); ``pane`` counts earlier outputs of the same window and
      key.
    - state twins (``TimerRow`` rows): ``timer_fired`` (domain ``EVENT_TIME``, namespace None) at
      the timer's time as ``ts``, then ``emitted`` (value = the row as a dict).

    Operator name: ``OPERATOR``. ``ts`` of ``fired``/``emitted`` is the window's max timestamp.
    """
    trace = Trace()
    write = trace.writer
    panes: dict[tuple, int] = {}
    previous_wm = 0
    for b, batch in with_inputs(outcomes, inputs):
        rows: Sequence[dict] = batch.rows if batch is not None else ()
        if batch is not None:
            for row, index, at in zip(rows, batch.indexes, batch.arrivals, strict=True):
                write.arrival(at, previous_wm, OPERATOR, row["key"], row["ts"], row, index)
        write.batch(
            b.proc_time, b.watermark, OPERATOR, b.batch_id, b.input_rows, b.late_watermark,
            b.max_event_time, b.dropped,
        )  # fmt: skip
        if b.watermark > previous_wm:
            write.watermark(b.proc_time, b.watermark, OPERATOR, None, None, f"batch {b.batch_id}")
        previous_wm = b.watermark
        for row in rows:
            key, ts = row["key"], row["ts"]
            write.element(b.proc_time, b.late_watermark, OPERATOR, key, ts, row)
            if is_dropped(spec, ts, b.late_watermark):
                write.late_dropped(b.proc_time, b.late_watermark, OPERATOR, key, ts, row)
        for r in b.rows:
            if isinstance(r, TimerRow):
                _timer_output(write, b, r)
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


def _timer_output(write: TraceWriter, b: BatchOutcome, r: TimerRow) -> None:
    """A state twin's timer firing and its output row."""
    write.timer_fired(b.proc_time, b.watermark, OPERATOR, r.key, None, r.timer, "EVENT_TIME", None)
    write.emitted(b.proc_time, b.watermark, OPERATOR, r.key, None, r.timer, r._asdict())
