"""The Spark twin of a ``KeyedProcessFunction`` with event-time timers (``StateSpec``): per key,
count (and sum) the rows with one timer at *largest event time seen + timeout*; when it fires,
output ``TimerRow(key, timer, count, sum)`` and clear the key. On either state API:

- ``"transform_with_state"``: ``transformWithStateInPandas(processor, ..., "EventTime")``
  (``TransformWithStateInPandasExec``; needs the RocksDB state store and ``protobuf``);
- ``"apply_in_pandas_with_state"``: ``applyInPandasWithState(func, ..., "EventTimeTimeout")``
  (``FlatMapGroupsWithStateExec``; a timeout below the watermark fails the query,
  ``INVALID_TIMEOUT_TIMESTAMP``).

Processing-time timers are not twinned: ``TransformWithStateExec.shouldRunAnotherBatch`` is
then always true and ``processAllAvailable()`` never returns (``run_processing_time_probe``).

The model (``StateModel``, checked against Spark):
1. watermarks and (no-data) batches as for windows (``winviz.spark.model`` rules 1, 5);
2. the late filter (``winviz.spark.spec.is_dropped``) drops and counts rows;
3. a batch handles its input key by key, then fires the timers due at its eviction watermark
   ``wm``: ``transformWithState`` ``t <= wm``, ``applyInPandasWithState`` ``t < wm``;
4. ``applyInPandasWithState`` fails when a new timeout is below ``wm``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from winviz.spark.batches import (
    INDEX,
    KEY,
    TS,
    VALUE,
    InputBatch,
    form_batches,
    write_batch_file,
)
from winviz.spark.model import MicroBatchModel, run_micro_batches, sum_ignoring_nulls
from winviz.spark.readback import SparkQueryError, record_marker
from winviz.spark.results import BatchOutcome, TimerRow, TwinResult
from winviz.spark.session import get_spark
from winviz.spark.spec import StateSpec, is_dropped
from winviz.spark.twins import (
    EVENT_TIME,
    await_rows,
    execute,
    input_schema,
    input_stream,
    query_dirs,
    watermarked,
)

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
STATE_CONF = {"spark.sql.streaming.stateStore.providerClass": ROCKSDB}


def run_state_twin(
    records: Sequence[Any],
    arrival_times: Sequence[int],
    spec: StateSpec,
    *,
    spark: Any = None,
) -> TwinResult:
    """Run the state twin of ``spec`` on Spark; rows are ``TimerRow``s. A failure mid-query
    raises ``SparkQueryError`` naming the batch and row (completed batches kept)."""
    inputs = form_batches(records, arrival_times, spec)
    outcomes = execute(spark, spec, inputs, build_state_query, TimerRow, STATE_CONF)
    return TwinResult(spec, outcomes, "spark", inputs)


def build_state_query(
    spark: Any,
    spec: StateSpec,
    inputs: Sequence[InputBatch],
    watched: Path,
    processing_time: bool = False,
) -> Any:
    """file source -> event time -> watermark -> groupBy(key) -> the chosen state API; with
    ``processing_time``: file source -> groupBy(key) -> ``transformWithStateInPandas`` with
    processing-time timers (``run_processing_time_probe``)."""
    stream = input_stream(spark, spec, inputs, watched, indexed=True)
    columns = [KEY, TS, INDEX]
    if not processing_time:
        stream = watermarked(stream, spec)
        columns.append(EVENT_TIME)
    if spec.value_field is not None:
        columns.append(VALUE)
    grouped = stream.select(*columns).groupBy(KEY)
    # the output row and the per-key state (sum typed as the input's value)
    schema = input_schema(spec, inputs)
    sum_type = schema[VALUE].dataType.simpleString() if spec.value_field is not None else "long"
    out = f"key {schema[KEY].dataType.simpleString()}, timer long, count long, sum {sum_type}"
    state = f"count long, sum {sum_type}, max_ts long, timer long"
    with warnings.catch_warnings():  # PySpark 4.x: "does not yet fully support pandas >= 3"
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        if processing_time or spec.api == "transform_with_state":
            processor = make_processor(spec.timeout, state, processing_time)
            mode = "ProcessingTime" if processing_time else "EventTime"
            return grouped.transformWithStateInPandas(processor, out, "Append", mode)
        func = make_timeout_function(spec.timeout)
        return grouped.applyInPandasWithState(func, out, state, "append", "EventTimeTimeout")


def _fold(state: tuple | None, frames: Any) -> tuple[int, Any, int, int]:
    """(count, sum, max_ts, input index of the max_ts row) after adding ``frames``' rows."""
    count, total, max_ts = (0, None, None) if state is None else state[:3]
    at = -1
    for frame in frames:
        count += len(frame)
        if VALUE in frame.columns:
            s = frame[VALUE].sum().item()
            total = s if total is None else total + s
        i = int(frame[TS].idxmax())
        ts = int(frame[TS].loc[i])
        if max_ts is None or ts > max_ts:
            max_ts, at = ts, int(frame[INDEX].loc[i])
    return count, total, max_ts, at


def _expired(key: tuple, state: tuple) -> Any:
    """The output row of a key whose timer fired: ``key, timer, count, sum``."""
    import pandas as pd

    count, total, _, timer = state
    return pd.DataFrame({"key": [key[0]], "timer": [timer], "count": [count], "sum": [total]})


def make_processor(timeout: int, state_ddl: str, processing_time: bool = False) -> Any:
    """A ``StatefulProcessor`` for ``transformWithStateInPandas`` (defined here so that
    importing ``winviz.spark`` does not import PySpark; cloudpickle ships it by value). With
    ``processing_time`` the timer is the batch's processing time + timeout."""
    from pyspark.sql.streaming import StatefulProcessor

    class TimeoutCounter(StatefulProcessor):
        """Count per key; one event-time timer at max event time + timeout."""

        def init(self, handle: Any) -> None:
            self.handle = handle
            self.acc = handle.getValueState("acc", state_ddl)

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Any:
            old = self.acc.get() if self.acc.exists() else None
            count, total, max_ts, _ = _fold(old, rows)
            timer = max_ts + timeout
            if processing_time:
                timer = timerValues.getCurrentProcessingTimeInMs() + timeout
            if old is not None and old[3] != timer:
                self.handle.deleteTimer(old[3])
            if old is None or old[3] != timer:
                self.handle.registerTimer(timer)
            self.acc.update((count, total, max_ts, timer))
            yield from ()

        def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Any:
            row = _expired(key, self.acc.get())
            self.acc.clear()
            yield row

        def close(self) -> None:
            pass

    return TimeoutCounter()


def make_timeout_function(timeout: int) -> Any:
    """The ``applyInPandasWithState`` function: the same program with a ``GroupState`` and
    ``EventTimeTimeout``. A timeout Spark refuses raises with the record's ``record_marker``."""

    def func(key: tuple, frames: Any, state: Any) -> Any:
        if state.hasTimedOut:
            row = _expired(key, state.get)
            state.remove()
            yield row
            return
        count, total, max_ts, at = _fold(state.getOption, frames)
        timer = max_ts + timeout
        state.update((count, total, max_ts, timer))
        try:
            state.setTimeoutTimestamp(timer)
        except Exception as exc:
            raise ValueError(
                f"{record_marker(at)} key {key[0]!r}: timeout {timer} (event time {max_ts} + "
                f"{timeout}) refused by Spark: {exc}"
            ) from exc

    return func


class StateModel(MicroBatchModel):
    """Rules 1-4 of this module for one query: watermark, per-key state and timers."""

    def __init__(self, spec: StateSpec) -> None:
        super().__init__(spec)
        self.keys: dict[Any, list[Any]] = {}  # key -> [count, sum, max_ts, timer, index]

    def run_batch(self, batch: InputBatch, proc_time: int) -> BatchOutcome:
        evict, late = self.watermark, self.previous
        pairs = zip(batch.rows, batch.indexes, strict=True)
        kept = [(r, i) for r, i in pairs if not is_dropped(self.spec, r[TS], late)]
        for r, i in kept:
            acc = self.keys.setdefault(r[KEY], [0, None, None, None, i])
            acc[0] += 1
            acc[1] = sum_ignoring_nulls(acc[1], r.get(VALUE))
            if acc[2] is None or r[TS] > acc[2]:
                acc[2], acc[4] = r[TS], i
            acc[3] = acc[2] + self.spec.timeout
        strict = self.spec.api == "apply_in_pandas_with_state"
        if strict:  # FlatMapGroupsWithStateExec sorts by key: the first refused key fails
            for key in sorted({r[KEY] for r, _ in kept}):
                acc = self.keys[key]
                if acc[3] < evict:  # rule 4: Spark's INVALID_TIMEOUT_TIMESTAMP
                    raise SparkQueryError(
                        batch_id=len(self.outcomes),
                        input_batch=batch,
                        index=acc[4],
                        outcomes=self.outcomes,
                        spark_message=f"StateTimeoutRefused: {record_marker(acc[4])} key "
                        f"{key!r}: timeout {acc[3]} below the watermark {evict} (batch "
                        f"{len(self.outcomes)})",
                    )
        out = []
        for key, acc in list(self.keys.items()):
            if acc[3] < evict or (not strict and acc[3] == evict):
                out.append(TimerRow(key, acc[3], acc[0], acc[1]))
                del self.keys[key]
        return self._record(
            batch, proc_time, len(batch.rows) - len(kept), tuple(sorted(out, key=TimerRow.order))
        )


def predict_state(
    records: Sequence[Any], arrival_times: Sequence[int], spec: StateSpec
) -> TwinResult:
    """The model's answer for ``run_state_twin``. When Spark would fail (rule 4) it raises
    ``SparkQueryError`` naming the batch and row, as ``run_state_twin`` does."""
    return run_micro_batches(StateModel(spec), form_batches(records, arrival_times, spec))


@dataclass(frozen=True)
class ProcessingTimeProbe:
    """What ``run_processing_time_probe`` saw within its wall-clock bound."""

    bound_seconds: float
    returned: bool  # did processAllAvailable() return within the bound?
    batches: int  # micro-batches Spark ran
    no_data_batches: int


def run_processing_time_probe(
    records: Sequence[Any],
    arrival_times: Sequence[int],
    spec: StateSpec,
    *,
    bound_seconds: float = 3.0,
    spark: Any = None,
) -> ProcessingTimeProbe:
    """The state twin with *processing-time* timers (``timeMode="ProcessingTime"``), run for
    at most ``bound_seconds`` of wall-clock time once Spark has read every file (written
    before it starts), then stopped: ``processAllAvailable()`` runs in a thread, and
    ``query.stop()`` ends it (``TransformWithStateExec.shouldRunAnotherBatch``, see above)."""
    inputs = form_batches(records, arrival_times, spec)
    spark = spark if spark is not None else get_spark()
    batches: list[int] = []
    query = None
    with query_dirs(spark, STATE_CONF, "winviz-probe-") as root:
        try:
            for batch in inputs:
                write_batch_file(batch, root / "input", root / "staging")
            frame = build_state_query(spark, spec, inputs, root / "input", processing_time=True)
            query = (
                frame.writeStream.outputMode("append")
                .foreachBatch(lambda df, batch_id: batches.append(batch_id) or df.collect())
                .option("checkpointLocation", str(root / "checkpoint"))
                .start()
            )
            await_rows(query, sum(len(b.rows) for b in inputs), lambda: time.sleep(0.05))
            waiter = threading.Thread(target=_swallow_stop, args=(query,), daemon=True)
            waiter.start()
            waiter.join(bound_seconds)
            returned = not waiter.is_alive()
            query.stop()
            waiter.join(30)
            progress = [json.loads(p.json) for p in query.recentProgress]
            ran = {p["batchId"]: p["numInputRows"] for p in progress if p["batchId"] in batches}
        finally:
            if query is not None:
                query.stop()
    no_data = sum(1 for n in ran.values() if n == 0)
    return ProcessingTimeProbe(bound_seconds, returned, len(ran), no_data)


def _swallow_stop(query: Any) -> None:
    """``processAllAvailable()`` in a thread; ``query.stop()`` ends it with an exception that
    only says the query was stopped."""
    from pyspark.errors import StreamingQueryException

    with contextlib.suppress(StreamingQueryException):
        query.processAllAvailable()
