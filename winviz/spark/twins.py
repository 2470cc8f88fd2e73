"""The Spark twins on real Spark: the window twin (``run_twin``) and the stream-stream join twin
(``run_join_twin``), run, as the state twin is, by ``execute``: one file per micro-batch, Spark's
file source, each batch's output captured with ``foreachBatch``, then ``winviz.spark.readback``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from winviz.spark.batches import (
    INDEX,
    KEY,
    STREAM,
    TS,
    VALUE,
    InputBatch,
    form_batches,
    write_batch_file,
)
from winviz.spark.join_model import JoinModel, JoinSpec, join_batches
from winviz.spark.readback import SparkQueryError, marked_record, to_outcomes
from winviz.spark.results import (
    BatchOutcome,
    JoinRow,
    OutputRow,
    TwinResult,
    with_inputs,
)
from winviz.spark.session import get_spark
from winviz.spark.spec import TwinSpec

EVENT_TIME = "event_time"


def run_twin(
    records: Sequence[Any],
    arrival_times: Sequence[int],
    spec: TwinSpec,
    *,
    spark: Any = None,
) -> TwinResult:
    """Run ``spec`` on Spark over ``records`` arriving at ``arrival_times`` (ms); the result
    holds every executed micro-batch and a trace. ``spark`` defaults to ``get_spark()``. A
    failure mid-query raises ``SparkQueryError`` (the completed batches on ``.outcomes``)."""
    inputs = form_batches(records, arrival_times, spec)
    outcomes = execute(spark, spec, inputs, build_query, OutputRow)
    return TwinResult(spec, outcomes, "spark", inputs)


def run_join_twin(
    left: Sequence[Any],
    left_arrivals: Sequence[int],
    right: Sequence[Any],
    right_arrivals: Sequence[int],
    spec: JoinSpec,
    *,
    spark: Any = None,
) -> TwinResult:
    """Run the join of ``spec`` on Spark, micro-batch by micro-batch; ``spark`` defaults to
    ``get_spark()``."""
    inputs = join_batches(left, left_arrivals, right, right_arrivals, spec)
    # in the files, each row's index is its index within its side
    files = [dataclasses.replace(b, indexes=tuple(i for _, i in b.indexes)) for b in inputs]  # type: ignore[misc]
    outcomes = execute(spark, spec, files, build_join_query, JoinRow)
    return TwinResult(spec, explain_run(spec, inputs, outcomes), "spark", inputs)


def execute(
    spark: Any,
    spec: Any,
    inputs: Sequence[InputBatch],
    build: Callable[..., Any],
    row_type: Any,
    conf: dict[str, str] | None = None,
) -> list[BatchOutcome]:
    """Every micro-batch of the streaming DataFrame ``build(spark, spec, inputs, watched_dir)``
    run on ``spark`` (default ``get_spark()``) over ``inputs`` under ``spec.drive``, in fresh
    directories, with ``multipleWatermarkPolicy`` = ``spec.watermark_policy`` and the session
    settings ``conf``; each collected row becomes a ``row_type``. A failure mid-query raises
    ``SparkQueryError`` (the completed batches on ``.outcomes``)."""
    spark = spark if spark is not None else get_spark()
    conf = {"spark.sql.streaming.multipleWatermarkPolicy": spec.watermark_policy, **(conf or {})}
    progress: list[dict[str, Any]] = []  # the query's progress reports, as dicts
    captured: dict[int, list[Any]] = {}  # batch id -> its output rows
    files_written = 0

    def capture(frame: Any, batch_id: int) -> None:
        rows = [row_type(*row) for row in frame.collect()]
        captured[batch_id] = sorted(rows, key=row_type.order)

    query = None
    try:
        with query_dirs(spark, conf, "winviz-twin-") as root:
            watched, staging = root / "input", root / "staging"
            try:
                writer = (
                    build(spark, spec, inputs, watched)
                    .writeStream.outputMode(spec.output_mode)
                    .foreachBatch(capture)
                    .option("checkpointLocation", str(root / "checkpoint"))
                )
                if spec.drive == "per_batch":
                    query = writer.start()
                written = 0
                for batch in inputs:
                    write_batch_file(batch, watched, staging)
                    files_written += 1
                    written += len(batch.rows)
                    if query is not None:  # a call can return on a check begun before the file
                        await_rows(query, written, query.processAllAvailable)
                        query.processAllAvailable()  # the no-data batch the data batch called for
                if query is None:  # available_now: every file first, then one run
                    query = writer.trigger(availableNow=True).start()
                    query.awaitTermination()
                if query.exception() is not None:
                    raise query.exception()
            finally:
                if query is not None:
                    progress = [json.loads(p.json) for p in query.recentProgress]
                    query.stop()
    except Exception as exc:
        from pyspark.errors import StreamingQueryException

        if not isinstance(exc, StreamingQueryException):
            raise
        done = to_outcomes(progress, captured, inputs, complete=False)
        data_done = sum(1 for b in done if not b.is_no_data)
        message = str(exc)
        raise SparkQueryError(
            batch_id=len(done),
            # the first file not yet read, if it was written; else a no-data batch
            input_batch=inputs[data_done] if data_done < files_written else None,
            index=marked_record(message),
            outcomes=done,
            spark_message=message,
        ) from exc
    return to_outcomes(progress, captured, inputs)


def await_rows(query: Any, rows: int, wait: Callable[[], Any], seconds: float = 300) -> None:
    """Call ``wait`` until Spark's progress reports say it has read ``rows`` input rows (a
    ``TimeoutError`` after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        wait()
        if sum(p.numInputRows for p in query.recentProgress) >= rows:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"Spark read fewer than {rows} rows in {seconds} s")


def build_query(spark: Any, spec: TwinSpec, inputs: Sequence[InputBatch], watched: Path) -> Any:
    """The streaming DataFrame: file source -> event time -> watermark -> window aggregation,
    projected to ``OutputRow``'s columns (window bounds as epoch ms)."""
    from pyspark.sql import functions as F

    stream = watermarked(input_stream(spark, spec, inputs, watched), spec)
    if spec.is_session:
        window = F.session_window(EVENT_TIME, f"{spec.session_gap} milliseconds")
    else:
        size, slide = f"{spec.size} milliseconds", f"{spec.window_slide} milliseconds"
        window = F.window(EVENT_TIME, size, slide)
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


def watermarked(source: Any, spec: TwinSpec) -> Any:
    """``source``'s ``stream_parts`` as one stream (a union's ``unionByName``-ed)."""
    return functools.reduce(lambda union, part: union.unionByName(part), stream_parts(source, spec))


def stream_parts(source: Any, spec: Any) -> list[Any]:
    """``source`` with its event-time column, one part per watermark delay of ``spec``, each
    with its own ``withWatermark``: a union's streams (or a join's sides) are the rows of each
    ``stream`` index of the one file source (so one batch reads them all)."""
    from pyspark.sql import functions as F

    with_time = source.withColumn(EVENT_TIME, F.timestamp_millis(TS))
    if len(spec.delays) == 1:
        return [with_time.withWatermark(EVENT_TIME, f"{spec.delays[0]} milliseconds")]
    return [
        with_time.where(F.col(STREAM) == i).withWatermark(EVENT_TIME, f"{delay} milliseconds")
        for i, delay in enumerate(spec.delays)
    ]


def build_join_query(
    spark: Any, spec: JoinSpec, inputs: Sequence[InputBatch], watched: Path
) -> Any:
    """file source -> two sides with their own watermark -> the stream-stream join, projected
    to ``JoinRow``'s columns (event times as epoch ms)."""
    from pyspark.sql import functions as F

    source = input_stream(spark, spec, inputs, watched, indexed=True)
    left, right = (  # the event time keeps its watermark under its new name
        part.select(
            F.col(KEY).alias(f"{p}key"),
            F.col(INDEX).alias(f"{p}idx"),
            F.col(EVENT_TIME).alias(f"{p}t"),
        )
        for part, p in zip(stream_parts(source, spec), "lr", strict=True)
    )
    condition = F.expr(join_condition(spec))
    joined = left.join(right, condition, spec.join_type)  # Spark names the JOIN_TYPES alike
    semi = spec.join_type == "left_semi"  # a left semi row has no right side
    key = F.col("lkey") if semi else F.coalesce("lkey", "rkey")
    right_side = [F.lit(None).cast("long")] * 2 if semi else [F.col("ridx"), F.unix_millis("rt")]
    return joined.select(key.alias("key"), F.col("lidx"), F.unix_millis("lt"), *right_side)


def join_condition(spec: JoinSpec) -> str:
    """The join condition as Spark SQL: key equality and the time range (an exclusive bound
    as a strict inequality)."""
    above = ">=" if spec.lower_inclusive else ">"
    below = "<=" if spec.upper_inclusive else "<"
    return (
        f"lkey = rkey AND rt {above} lt + INTERVAL {spec.lower} MILLISECONDS "
        f"AND rt {below} lt + INTERVAL {spec.upper} MILLISECONDS"
    )


def explain_run(
    spec: JoinSpec, inputs: Sequence[InputBatch], outcomes: Sequence[BatchOutcome]
) -> list[BatchOutcome]:
    """Spark's batches with the state watermarks and late / evicted rows ``JoinModel`` derives
    from Spark's watermarks."""
    model = JoinModel(spec)
    for o, batch in with_inputs(outcomes, inputs):
        model.run_batch(batch, o.proc_time, watermark=o.watermark)
    return [
        dataclasses.replace(
            o,
            state_watermarks=d.state_watermarks,
            late=d.late,
            evicted=d.evicted,
            arrived=d.arrived,
        )
        for d, o in zip(model.outcomes, outcomes, strict=True)
    ]


def input_stream(
    spark: Any, spec: Any, inputs: Sequence[InputBatch], watched: Path, *, indexed: bool = False
) -> Any:
    """Spark's file source over ``watched``, one file per micro-batch, with ``input_schema``
    (and each row's input ``index`` when ``indexed``)."""
    from pyspark.sql.types import LongType, StructField

    schema = input_schema(spec, inputs)
    if indexed:
        schema = schema.add(StructField(INDEX, LongType()))
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(watched))


def input_schema(spec: Any, inputs: Sequence[InputBatch]) -> Any:
    """The JSON files' schema: ``key`` (long if every key is an int, else string), ``ts``,
    ``value`` (double if a value is a float, else long) and ``stream`` where the spec has them."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    ints = all(isinstance(r[KEY], int) for b in inputs for r in b.rows)
    fields = [
        StructField(KEY, LongType() if ints else StringType()),
        StructField(TS, LongType()),
    ]
    if spec.value_field is not None:
        floats = any(isinstance(r.get(VALUE), float) for b in inputs for r in b.rows)
        fields.append(StructField(VALUE, DoubleType() if floats else LongType()))
    if spec.stream_field is not None:
        fields.append(StructField(STREAM, LongType()))
    return StructType(fields)


@contextlib.contextmanager
def query_dirs(spark: Any, conf: dict[str, str], prefix: str) -> Iterator[Path]:
    """A fresh temporary directory with ``input`` (watched) and ``staging`` made in it, while the
    Spark session settings ``conf`` are set (a query reads them when it starts); afterwards the
    settings are restored and the directory removed."""
    previous = {k: spark.conf.get(k, None) for k in conf}
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        (root / "input").mkdir()
        (root / "staging").mkdir()
        for k, v in conf.items():
            spark.conf.set(k, v)
        yield root
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
        shutil.rmtree(root, ignore_errors=True)
