"""A pure-Python model of Spark Structured Streaming's windowed aggregation, batch by batch.

No JVM: it predicts, for the same input and ``TwinSpec``, every micro-batch Spark executes,
its two watermarks, its ``numRowsDroppedByWatermark`` and its output rows. Each rule below was
checked against real local Spark 4.x (``tests/test_spark_twin.py`` pins the evidence):

1. **Watermark** (``EventTimeWatermarkExec`` + ``WatermarkTracker``, policy ``min`` with one
   stream): starts at 0; after a batch, ``wm = max(wm, max event time of the batch - delay)``
   over *all* its input rows, late ones included. The new value is used from the next batch on:
   batch N runs with the eviction watermark computed after batch N-1.
2. **Late rows** (``spark.sql.streaming.statefulOperator.allowMultiple``, default since 3.4):
   batch N filters input with the *late-events* watermark = the eviction watermark of batch N-1
   (0 for batch 0), after partial aggregation: each (window, key) group of the late copies
   (``winviz.spark.late_filter``) counts once in ``numRowsDroppedByWatermark``.
3. **Append** (``StateStoreSaveExec``, ``OutputMode.Append``): after merging the batch,
   windows with ``end <= eviction watermark`` are output once and removed from state.
4. **Update**: every (window, key) the batch changed is output with its new aggregate; then
   windows with ``end <= eviction watermark`` are removed from state without output.
5. **No-data batches** (``spark.sql.streaming.noDataMicroBatches.enabled``): when the watermark
   computed after a batch is higher than that batch's eviction watermark and no new data is
   waiting, Spark runs an extra batch with no input. With the ``per_batch`` drive that happens
   after every batch that raised the watermark; with ``available_now`` only after the last one
   (the other batches find the next file waiting).
6. **Multiple watermarks** (``WatermarkTracker.updateWatermark``, ``MultipleWatermarkPolicy``):
   with a union of streams each ``withWatermark`` keeps its own value — set to ``max event time
   of its rows in the batch - its delay`` the first time it sees rows (even below 0), raised
   when a later batch gives more, and 0 while it has seen none. The global watermark is the
   ``min`` (or ``max``) over the streams, and only ever rises (from 0). Progress reports
   ``eventTime.max`` of the first stream with rows only (``reported_max_event_time``).
7. **Sessions** (``session_window``: ``SessionWindowStateStoreRestoreExec`` /
   ``MergingSessionsExec`` / ``SessionWindowStateStoreSaveExec``): each row opens
   ``[ts, ts + gap)``; the batch's rows are first partially aggregated per (key, session of
   the row), i.e. per distinct (key, ts);
   a partial group with ``ts + gap <= late watermark`` is dropped and counted once. The rest
   merge with the key's sessions in state: sessions that overlap or touch (``start <= end`` of
   the one before, checked on Spark) become one. Append mode outputs and removes the sessions
   with ``end <= eviction watermark``.
8. **Windows** (``TimeWindowing``, ``startTime`` 0): ``winviz.spark.spec.spark_windows``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from winviz.spark.batches import KEY, STREAM, TS, VALUE, InputBatch, form_batches
from winviz.spark.results import BatchOutcome, OutputRow, TwinResult
from winviz.spark.spec import TwinSpec, spark_windows

Group = tuple[int, int, Any]  # (window_start, window_end, key)


def merge_sessions(sessions: Sequence[list[Any]]) -> list[list[Any]]:
    """Rule 7: ``[start, end, count, sum]`` sessions of one key merged where they overlap or
    touch, earliest first."""
    merged: list[list[Any]] = []
    for start, end, n, total in sorted(sessions, key=lambda x: (x[0], x[1])):
        if merged and start <= merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] += n
            last[3] = sum_ignoring_nulls(last[3], total)
        else:
            merged.append([start, end, n, total])
    return merged


def reported_max_event_time(rows: Sequence[dict[str, Any]], streams: int) -> int | None:
    """Progress ``eventTime.max``: ``ProgressReporter`` shows the event-time statistics of the
    *first* ``withWatermark`` (in plan order: stream 0, 1, ...) that saw rows in the batch, so
    for a union it is the largest event time of one stream only (checked on Spark)."""
    for i in range(streams):
        times = [r[TS] for r in rows if r.get(STREAM, 0) == i]
        if times:
            return max(times)
    return None


class WatermarkTracker:
    """Rule 6 (and 1): Spark's ``WatermarkTracker`` — one watermark per ``withWatermark``
    (stream), combined by the policy into the global watermark, which never falls."""

    def __init__(self, delays: Sequence[int], policy: str) -> None:
        self.delays = tuple(delays)
        self.policy = policy
        self.per_stream: dict[int, int] = {}
        self.global_watermark = 0

    def update(self, rows: Sequence[dict[str, Any]]) -> None:
        """After a batch: raise each stream's watermark from the batch's rows, then the
        global one."""
        for i, delay in enumerate(self.delays):
            times = [r[TS] for r in rows if r.get(STREAM, 0) == i]
            if times:
                new = max(times) - delay
                if i not in self.per_stream or new > self.per_stream[i]:
                    self.per_stream[i] = new
            else:
                self.per_stream.setdefault(i, 0)
        values = list(self.per_stream.values())
        chosen = min(values) if self.policy == "min" else max(values)
        self.global_watermark = max(self.global_watermark, chosen)


class MicroBatchModel:
    """What every modelled query shares: its spec, its ``WatermarkTracker`` (rule 6, from the
    spec's ``delays`` and ``watermark_policy``), the last executed batch's eviction watermark
    (``previous``) and rule 5: a no-data batch runs when the watermark has moved past it. A
    subclass runs one batch (``run_batch``) and ends it with ``_record``;
    ``run_micro_batches`` drives it."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.tracker = WatermarkTracker(spec.delays, spec.watermark_policy)
        self.previous = 0  # the last executed batch's eviction watermark
        self.outcomes: list[BatchOutcome] = []

    @property
    def watermark(self) -> int:
        """The next batch's eviction watermark."""
        return self.tracker.global_watermark

    @property
    def needs_no_data_batch(self) -> bool:
        """Rule 5: the watermark moved past the last batch's eviction watermark."""
        return self.watermark > self.previous

    def run_batch(self, batch: InputBatch | None, proc_time: int) -> Any:
        raise NotImplementedError

    def _record(
        self,
        batch: InputBatch | None,
        proc_time: int,
        dropped: int,
        out: tuple[Any, ...],
        evict: int | None = None,
        **extra: Any,
    ) -> BatchOutcome:
        """End a batch (``None``: a no-data batch) run with eviction watermark ``evict``
        (default: the current one): its ``BatchOutcome`` (with ``extra`` fields) is kept, and
        the watermark advances."""
        evict = self.watermark if evict is None else evict
        rows = batch.rows if batch is not None else ()
        outcome = BatchOutcome(
            batch_id=len(self.outcomes),
            interval=batch.interval if batch is not None else None,
            proc_time=proc_time,
            input_rows=len(rows),
            max_event_time=reported_max_event_time(rows, len(self.tracker.delays)),
            watermark=evict,
            late_watermark=self.previous,
            dropped=dropped,
            rows=out,
            **extra,
        )
        self.outcomes.append(outcome)
        self.previous = evict  # the previous batch now; its rows raise the next watermark
        self.tracker.update(rows)
        return outcome


def run_micro_batches(model: MicroBatchModel, inputs: Sequence[InputBatch]) -> TwinResult:
    """The model's result: every micro-batch Spark runs for these input batches under the
    spec's ``drive``: each batch, and with a per-batch trigger a no-data batch after it when
    the watermark moved (rule 5); with ``available_now`` one no-data batch after the last."""
    drive = model.spec.drive
    for batch in inputs:
        model.run_batch(batch, batch.proc_time)
        if drive == "per_batch" and model.needs_no_data_batch:
            model.run_batch(None, batch.proc_time)
    if drive == "available_now" and inputs and model.needs_no_data_batch:
        model.run_batch(None, inputs[-1].proc_time)
    return TwinResult(model.spec, model.outcomes, "model", inputs)


class SparkModel(MicroBatchModel):
    """The state of one modelled query: the watermark(s), the previous batch's watermark and
    the aggregation state (window, key) -> [count, sum] (sessions: key -> sessions)."""

    def __init__(self, spec: TwinSpec) -> None:
        super().__init__(spec)
        self.state: dict[Group, list[Any]] = {}
        self.sessions: dict[Any, list[list[Any]]] = {}

    def run_batch(self, batch: InputBatch | None, proc_time: int) -> BatchOutcome:
        """Execute one micro-batch (``None``: a no-data batch) and advance the watermark."""
        evict, late = self.watermark, self.previous
        rows = batch.rows if batch is not None else ()
        if self.spec.is_session:
            n_dropped, out = self._session_batch(rows, late, evict)
        else:
            n_dropped, out = self._window_batch(rows, late, evict)
        return self._record(batch, proc_time, n_dropped, tuple(sorted(out, key=OutputRow.order)))

    def _window_batch(
        self, rows: Sequence[dict[str, Any]], late: int, evict: int
    ) -> tuple[int, list[OutputRow]]:
        """Rules 2-4 for time windows: (rows dropped, output)."""
        partial = self._partial_aggregate(rows)
        dropped = [g for g in partial if g[1] <= late]
        changed = [g for g in partial if g[1] > late]
        for g in changed:
            acc = self.state.setdefault(g, [0, None])
            acc[0] += partial[g][0]
            acc[1] = sum_ignoring_nulls(acc[1], partial[g][1])
        return len(dropped), self._output(changed, evict)

    def _session_batch(
        self, rows: Sequence[dict[str, Any]], late: int, evict: int
    ) -> tuple[int, list[OutputRow]]:
        """Rule 7: (partial groups dropped, sessions output)."""
        gap = self.spec.session_gap
        assert gap is not None
        partial: dict[tuple[Any, int], list[Any]] = {}
        for r in rows:
            acc = partial.setdefault((r[KEY], r[TS]), [r[TS], r[TS] + gap, 0, None])
            acc[2] += 1
            acc[3] = sum_ignoring_nulls(acc[3], r.get(VALUE))
        dropped = 0
        for (key, _), acc in partial.items():
            if acc[1] <= late:
                dropped += 1
            else:
                self.sessions[key] = merge_sessions([*self.sessions.get(key, []), acc])
        out = []
        for key in list(self.sessions):
            keep = []
            for start, end, n, total in self.sessions[key]:
                if end <= evict:
                    out.append(OutputRow(start, end, key, n, total))
                else:
                    keep.append([start, end, n, total])
            if keep:
                self.sessions[key] = keep
            else:
                del self.sessions[key]
        return dropped, out

    def _partial_aggregate(self, rows: Sequence[dict[str, Any]]) -> dict[Group, list[Any]]:
        spec = self.spec
        partial: dict[Group, list[Any]] = {}
        for r in rows:
            for start, end in spark_windows(r[TS], spec.size, spec.window_slide):
                acc = partial.setdefault((start, end, r[KEY]), [0, None])
                acc[0] += 1
                acc[1] = sum_ignoring_nulls(acc[1], r.get(VALUE))
        return partial

    def _output(self, changed: list[Group], evict: int) -> list[OutputRow]:
        final = [g for g in self.state if g[1] <= evict]
        shown = final if self.spec.output_mode == "append" else changed
        out = [OutputRow(g[0], g[1], g[2], *self.state[g]) for g in shown]
        for g in final:
            del self.state[g]
        return out


def sum_ignoring_nulls(total: Any, value: Any) -> Any:
    """Spark SQL's ``sum`` step: a null value is skipped; the sum of no values is null."""
    if value is None:
        return total
    return value if total is None else total + value


def predict(records: Sequence[Any], arrival_times: Sequence[int], spec: TwinSpec) -> TwinResult:
    """The model's answer for what ``winviz.spark.run_twin`` gets from Spark."""
    return run_micro_batches(SparkModel(spec), form_batches(records, arrival_times, spec))
