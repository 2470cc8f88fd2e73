"""A Spark run as a ``winviz.trace.Trace``, so the engine's charts can draw Spark beside Flink.

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
- state twins (``TimerRow`` rows): ``timer_fired`` (domain ``EVENT_TIME``, namespace None) at the
  timer's time as ``ts``, then ``emitted`` (value = the row as a dict).

Operator name: ``OPERATOR``. ``ts`` of ``fired``/``emitted`` is the window's max timestamp.
"""

from __future__ import annotations

from collections.abc import Sequence

from winviz.spark.batches import InputBatch
from winviz.spark.late_filter import is_dropped
from winviz.spark.results import BatchOutcome, TimerRow, with_inputs
from winviz.spark.spec import StateSpec, TwinSpec
from winviz.trace import Trace, TraceWriter
from winviz.windows import TimeWindow

OPERATOR = "spark"


def build_trace(
    spec: TwinSpec | StateSpec, inputs: Sequence[InputBatch], outcomes: Sequence[BatchOutcome]
) -> Trace:
    """The trace of a run: ``outcomes`` in batch order; data batches take their input rows
    from ``inputs`` in order."""
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
