"""The stream-stream join twin on real local Spark: ``run_join_twin(left, ..., right, ..., spec)``.

The query is the one ``winviz.spark.join_model`` describes, over one file source (both sides'
rows of a trigger interval in one file, ``stream`` 0 = left, 1 = right, so one batch reads
both), driven and read back as the window twins are (``winviz.spark.twins``).

Spark reports counts, not which rows a batch dropped or evicted; those (``BatchOutcome.late`` /
``.evicted``, and the state watermarks) are derived by replaying the batches through
``JoinModel`` with the watermarks Spark reported (``explain_run``), and the tests check the
model against Spark batch by batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winviz.spark.batches import INDEX, KEY, STREAM, TS, InputBatch
from winviz.spark.join_model import JoinModel, JoinSpec, join_batches
from winviz.spark.results import BatchOutcome, JoinRow, TwinResult, join_row_order, with_inputs
from winviz.spark.session import get_spark
from winviz.spark.twins import execute, input_stream


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
    spark = spark if spark is not None else get_spark()
    files = [_file_batch(b) for b in inputs]
    conf = {"spark.sql.streaming.multipleWatermarkPolicy": spec.watermark_policy}
    outcomes = execute(spark, spec, files, build_join_query, JoinRow, join_row_order, conf)
    return TwinResult(spec, explain_run(spec, inputs, outcomes), None, "spark", inputs)


def _file_batch(batch: InputBatch) -> InputBatch:
    """The batch as written to its file: each row's ``index`` is its index within its side."""
    return dataclasses.replace(batch, indexes=tuple(i for _, i in batch.indexes))  # type: ignore[misc]


def explain_run(
    spec: JoinSpec, inputs: Sequence[InputBatch], outcomes: Sequence[BatchOutcome]
) -> list[BatchOutcome]:
    """The batches Spark ran as Spark reported them, with the state watermarks and the late /
    evicted rows derived by ``JoinModel`` from Spark's watermarks."""
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


def build_join_query(
    spark: Any, spec: JoinSpec, inputs: Sequence[InputBatch], watched: Path
) -> Any:
    """file source -> two sides with their own watermark -> the stream-stream join, projected
    to ``JoinRow``'s columns (event times as epoch ms)."""
    from pyspark.sql import functions as F

    source = input_stream(spark, spec, inputs, watched, indexed=True)

    def side(stream: int, prefix: str, delay: int) -> Any:
        return (
            source.where(F.col(STREAM) == stream)
            .select(
                F.col(KEY).alias(f"{prefix}key"),
                F.col(INDEX).alias(f"{prefix}idx"),
                F.timestamp_millis(TS).alias(f"{prefix}t"),
            )
            .withWatermark(f"{prefix}t", f"{delay} milliseconds")
        )

    left = side(0, "l", spec.left_delay)
    right = side(1, "r", spec.right_delay)
    condition = F.expr(join_condition(spec))
    joined = left.join(right, condition, spec.join_type)  # Spark names the JOIN_TYPES alike
    if spec.join_type == "left_semi":
        return joined.select(
            F.col("lkey").alias("key"),
            F.col("lidx"),
            F.unix_millis("lt"),
            F.lit(None).cast("long"),
            F.lit(None).cast("long"),
        )
    return joined.select(
        F.coalesce("lkey", "rkey").alias("key"),
        F.col("lidx"),
        F.unix_millis("lt"),
        F.col("ridx"),
        F.unix_millis("rt"),
    )


def join_condition(spec: JoinSpec) -> str:
    """The join condition as Spark SQL: key equality and the time range (an exclusive bound
    as a strict inequality)."""
    above = ">=" if spec.lower_inclusive else ">"
    below = "<=" if spec.upper_inclusive else "<"
    return (
        f"lkey = rkey AND rt {above} lt + INTERVAL {spec.lower} MILLISECONDS "
        f"AND rt {below} lt + INTERVAL {spec.upper} MILLISECONDS"
    )
