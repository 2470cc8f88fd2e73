"""The Spark twin: the windowed aggregation of a ``TwinSpec`` run on real (local) Spark.

``run_twin(records, arrival_times, spec)`` cuts the input into micro-batches
(``winviz.spark.batches``), writes one JSON-lines file per batch into a fresh watched directory,
runs the streaming query over Spark's file source and captures every batch's output with
``foreachBatch`` (``ForeachBatchSink``; the function must consume its DataFrame — here with
``collect()`` — or the batch's state is not committed). Then ``winviz.spark.readback`` turns
``query.recentProgress`` and the captured rows into ``BatchOutcome``s and a trace.

Drives (``spec.drive``):

- ``"per_batch"``: the query runs with the default trigger; after each file is added,
  ``StreamingQuery.processAllAvailable()`` waits until Spark has processed it *and* run the
  no-data batch that a raised watermark calls for.
- ``"available_now"``: all files are written first, then the query runs with
  ``trigger(availableNow=True)`` (``Trigger.AvailableNow``): one batch per file
  (``maxFilesPerTrigger=1``), back to back, and a final no-data batch; it then stops by itself.

Input and checkpoint directories are fresh temporary directories, removed afterwards.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winviz.spark.batches import (
    KEY,
    TS,
    VALUE,
    InputBatch,
    form_batches,
    value_type,
    write_batch_file,
)
from winviz.spark.readback import to_outcomes
from winviz.spark.results import OutputRow, TwinResult, row_order
from winviz.spark.session import get_spark
from winviz.spark.spec import TwinSpec
from winviz.spark.tracing import build_trace

EVENT_TIME = "event_time"


def run_twin(
    records: Sequence[Any],
    arrival_times: Sequence[int],
    spec: TwinSpec,
    *,
    spark: Any = None,
) -> TwinResult:
    """Run ``spec`` on Spark over ``records`` arriving at ``arrival_times`` (ms); the result
    holds every executed micro-batch and a trace. ``spark`` defaults to ``get_spark()``."""
    inputs = form_batches(records, arrival_times, spec)
    spark = spark if spark is not None else get_spark()
    root = Path(tempfile.mkdtemp(prefix="winviz-twin-"))
    try:
        progress, captured = _run_query(spark, spec, inputs, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    outcomes = to_outcomes(progress, captured, inputs)
    return TwinResult(spec, outcomes, build_trace(spec, inputs, outcomes), source="spark")


def build_query(spark: Any, spec: TwinSpec, inputs: Sequence[InputBatch], watched: Path) -> Any:
    """The streaming DataFrame: file source -> event time -> watermark -> window aggregation,
    projected to ``OutputRow``'s columns (window bounds as epoch ms)."""
    from pyspark.sql import functions as F

    schema = input_schema(spec, inputs)
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(watched))
    stream = stream.withColumn(EVENT_TIME, F.timestamp_millis(TS)).withWatermark(
        EVENT_TIME, f"{spec.watermark_delay} milliseconds"
    )
    window = F.window(EVENT_TIME, f"{spec.size} milliseconds", f"{spec.window_slide} milliseconds")
    aggregates = [F.count(F.lit(1)).alias("count")]
    if spec.value_field is not None:
        aggregates.append(F.sum(VALUE).alias("sum"))
    agg = stream.groupBy(window.alias("window"), KEY).agg(*aggregates)
    total = F.col("sum") if spec.value_field is not None else F.lit(None)
    return agg.select(
        F.unix_millis("window.start").alias("window_start"),
        F.unix_millis("window.end").alias("window_end"),
        F.col(KEY).alias("key"),
        F.col("count"),
        total.alias("sum"),
    )


def input_schema(spec: TwinSpec, inputs: Sequence[InputBatch]) -> Any:
    """The JSON files' schema: ``key`` (long if every key is an int, else string), ``ts``
    (long ms) and ``value`` (long or double)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    ints = all(isinstance(r[KEY], int) for b in inputs for r in b.rows)
    fields = [
        StructField(KEY, LongType() if ints else StringType()),
        StructField(TS, LongType()),
    ]
    if spec.value_field is not None:
        vtype = DoubleType() if value_type(inputs) == "double" else LongType()
        fields.append(StructField(VALUE, vtype))
    return StructType(fields)


def _run_query(
    spark: Any, spec: TwinSpec, inputs: Sequence[InputBatch], root: Path
) -> tuple[list[dict[str, Any]], dict[int, list[OutputRow]]]:
    """Run the query to the end of the input; returns the progress reports (as dicts) and
    each batch's captured output rows."""
    watched, staging, checkpoint = root / "input", root / "staging", root / "checkpoint"
    watched.mkdir()
    staging.mkdir()
    captured: dict[int, list[OutputRow]] = {}

    def capture(frame: Any, batch_id: int) -> None:
        rows = [OutputRow(*row) for row in frame.collect()]
        captured[batch_id] = sorted(rows, key=row_order)

    writer = (
        build_query(spark, spec, inputs, watched)
        .writeStream.outputMode(spec.output_mode)
        .foreachBatch(capture)
        .option("checkpointLocation", str(checkpoint))
    )
    query = None
    try:
        if spec.drive == "per_batch":
            query = writer.start()
            written = 0
            for batch in inputs:
                write_batch_file(batch, watched, staging)
                written += len(batch.rows)
                _process_all(query, written)
        else:
            for batch in inputs:
                write_batch_file(batch, watched, staging)
            query = writer.trigger(availableNow=True).start()
            query.awaitTermination()
        if query.exception() is not None:
            raise query.exception()
        progress = [json.loads(p.json) for p in query.recentProgress]
    finally:
        if query is not None:
            query.stop()
    return progress, captured


def _process_all(query: Any, rows_written: int) -> None:
    """``processAllAvailable()`` until Spark has read every row written so far, then once more:
    a call can return on a "no new data" check that began before the newest file was renamed
    in; the final call returns only after a check that began after the data batch, i.e. after
    any no-data batch it called for."""
    for _ in range(100):
        query.processAllAvailable()
        read = sum(p.numInputRows for p in query.recentProgress)
        if read >= rows_written:
            query.processAllAvailable()
            return
    raise TimeoutError(f"Spark read fewer than {rows_written} rows")
