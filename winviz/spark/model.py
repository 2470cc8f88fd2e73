"""A pure-Python model of Spark Structured Streaming's windowed aggregation: for the same input
and ``TwinSpec``, every micro-batch Spark runs, its watermarks, ``numRowsDroppedByWatermark``
and output rows, by these rules (checked against Spark 4.x: ``tests/test_spark_twin.py``):

1. **Watermark** (``EventTimeWatermarkExec``, ``WatermarkTracker``): starts at 0; after a batch,
   ``max(wm, max event time of all its rows - delay)``, used from the next batch on.
2. **Late rows**: batch N filters input with the *late-events* watermark, the eviction
   watermark of batch N-1, after partial aggregation: each late (window, key) group counts once.
3. **Append** (``StateStoreSaveExec``): windows with ``end <= eviction watermark`` are output
   once and removed from state.
4. **Update**: every (window, key) the batch changed is output; then windows with ``end <=
   eviction watermark`` are removed without output.
5. **No-data batches** (``noDataMicroBatches.enabled``): a batch that raised the watermark is
   followed by one with no input (``per_batch``: after each; ``available_now``: at the end).
6. **Multiple watermarks** (``MultipleWatermarkPolicy``): each ``withWatermark`` of a union
   keeps its own value (``max event time - delay`` once it saw rows, even below 0; 0 before);
   the global one is their ``min`` (or ``max``) and only rises.
7. **Sessions** (``MergingSessionsExec``, ``SessionWindowStateStoreSaveExec``): a row opens
   ``[ts, ts + gap)``; partial groups per (key, ts), late ones dropped; the rest merge with the
   key's sessions where they overlap or touch; append outputs those with ``end <= eviction
   watermark``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from winviz.spark.batches import KEY, NO_DATA, STREAM, TS, VALUE, InputBatch, form_batches
from winviz.spark.results import BatchOutcome, OutputRow, TwinResult
from winviz.spark.spec import TwinSpec, copies

Group = tuple[int, int, Any]  # (window_start, window_end, key)


def merge_sessions(sessions: Sequence[list[Any]]) -> list[list[Any]]:
    """Rule 7: one key's ``[start, end, count, sum]`` sessions merged, earliest first."""
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


def stream_max_times(rows: Sequence[dict[str, Any]], streams: int) -> list[int | None]:
    """The largest event time of each stream's rows (None: no rows)."""
    times: list[int | None] = [None] * streams
    for r in rows:
        i = r.get(STREAM, 0)
        if times[i] is None or r[TS] > times[i]:  # type: ignore[operator]
            times[i] = r[TS]
    return times


class WatermarkTracker:
    """Rules 1 and 6: Spark's ``WatermarkTracker``, one watermark per ``withWatermark``
    combined by the policy into the global watermark, which never falls."""

    def __init__(self, delays: Sequence[int], policy: str) -> None:
        self.delays = tuple(delays)
        self.policy = policy
        self.per_stream: dict[int, int] = {}
        self.global_watermark = 0

    def update(self, rows: Sequence[dict[str, Any]]) -> None:
        """After a batch: raise each stream's watermark from its rows, then the global one."""
        for i, (delay, most) in enumerate(
            zip(self.delays, stream_max_times(rows, len(self.delays)), strict=True)
        ):
            if most is None:
                self.per_stream.setdefault(i, 0)
            elif i not in self.per_stream or most - delay > self.per_stream[i]:
                self.per_stream[i] = most - delay
        values = list(self.per_stream.values())
        chosen = min(values) if self.policy == "min" else max(values)
        self.global_watermark = max(self.global_watermark, chosen)


class MicroBatchModel:
    """What every modelled query shares: its spec, its ``WatermarkTracker`` and the last batch's
    eviction watermark (``previous``); a subclass's ``run_batch`` ends with ``_record``."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.tracker = WatermarkTracker(spec.delays, spec.watermark_policy)
        self.previous = 0
        self.outcomes: list[BatchOutcome] = []

    @property
    def watermark(self) -> int:
        """The next batch's eviction watermark."""
        return self.tracker.global_watermark

    def run_batch(self, batch: InputBatch, proc_time: int) -> Any:
        raise NotImplementedError

    def _record(
        self,
        batch: InputBatch,
        proc_time: int,
        dropped: int,
        out: tuple[Any, ...],
        evict: int | None = None,
        **extra: Any,
    ) -> BatchOutcome:
        """Keep the ``BatchOutcome`` (``extra``: a join's fields) of a batch (``NO_DATA``: no data)
        run with eviction watermark ``evict`` (default: the current one); advance the
        watermark."""
        evict = self.watermark if evict is None else evict
        rows = batch.rows
        # progress reports eventTime.max of the first stream (in plan order) with rows
        most = next(
            (t for t in stream_max_times(rows, len(self.tracker.delays)) if t is not None), None
        )
        outcome = BatchOutcome(
            batch_id=len(self.outcomes),
            interval=batch.interval,
            proc_time=proc_time,
            input_rows=len(rows),
            max_event_time=most,
            watermark=evict,
            late_watermark=self.previous,
            dropped=dropped,
            rows=out,
            **extra,
        )
        self.outcomes.append(outcome)
        self.previous = evict
        self.tracker.update(rows)
        return outcome


def run_micro_batches(model: MicroBatchModel, inputs: Sequence[InputBatch]) -> TwinResult:
    """Every micro-batch Spark runs for ``inputs`` under the spec's ``drive`` (rule 5)."""
    drive = model.spec.drive
    for batch in inputs:
        model.run_batch(batch, batch.proc_time)
        if drive == "per_batch" and model.watermark > model.previous:
            model.run_batch(NO_DATA, batch.proc_time)
    if drive == "available_now" and inputs and model.watermark > model.previous:
        model.run_batch(NO_DATA, inputs[-1].proc_time)
    return TwinResult(model.spec, model.outcomes, "model", inputs)


class SparkModel(MicroBatchModel):
    """One modelled windowed aggregation; state: (window, key) -> ``[count, sum]`` (sessions:
    key -> ``[start, end, count, sum]`` sessions)."""

    def __init__(self, spec: TwinSpec) -> None:
        super().__init__(spec)
        self.state: dict[Group, list[Any]] = {}
        self.sessions: dict[Any, list[list[Any]]] = {}

    def run_batch(self, batch: InputBatch, proc_time: int) -> BatchOutcome:
        """Rules 2-4 and 7 for one micro-batch (``NO_DATA``: a no-data batch)."""
        evict, late, spec = self.watermark, self.previous, self.spec
        session = spec.is_session
        partial: dict[Group, list[Any]] = {}
        for r in batch.rows:
            for start, end in copies(spec, r[TS]):
                acc = partial.setdefault((start, end, r[KEY]), [0, None])
                acc[0] += 1
                acc[1] = sum_ignoring_nulls(acc[1], r.get(VALUE))
        changed = [g for g in partial if g[1] > late]
        for g in changed:
            n, total = partial[g]
            if session:
                key = g[2]
                self.sessions[key] = merge_sessions(
                    [*self.sessions.get(key, []), [*g[:2], n, total]]
                )
            else:
                acc = self.state.setdefault(g, [0, None])
                acc[0] += n
                acc[1] = sum_ignoring_nulls(acc[1], total)
        out = []
        if session:
            for key, sessions in list(self.sessions.items()):
                kept = [x for x in sessions if x[1] > evict]
                if len(kept) < len(sessions):
                    out += [OutputRow(s, e, key, n, t) for s, e, n, t in sessions if e <= evict]
                    if kept:
                        self.sessions[key] = kept
                    else:
                        del self.sessions[key]
        else:
            final = [g for g in self.state if g[1] <= evict]
            shown = final if spec.output_mode == "append" else changed
            out = [OutputRow(*g, *self.state[g]) for g in shown]
            for g in final:
                del self.state[g]
        out.sort(key=OutputRow.order)
        return self._record(batch, proc_time, len(partial) - len(changed), tuple(out))


def sum_ignoring_nulls(total: Any, value: Any) -> Any:
    """Spark SQL's ``sum`` step: a null value is skipped; the sum of no values is null."""
    if value is None:
        return total
    return value if total is None else total + value


def predict(records: Sequence[Any], arrival_times: Sequence[int], spec: TwinSpec) -> TwinResult:
    """The model's answer for what ``winviz.spark.run_twin`` gets from Spark."""
    return run_micro_batches(SparkModel(spec), form_batches(records, arrival_times, spec))
