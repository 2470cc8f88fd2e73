"""The Spark twin: winviz pipelines run on real (local) PySpark Structured Streaming, and a
pure-Python model of Spark's semantics, both read back as a ``winviz.trace.Trace``.

    from winviz.spark import TwinSpec, run_twin, predict

    spec = TwinSpec(size=5000, watermark_delay=2000, output_mode="append",
                    trigger_interval=1000, drive="per_batch")
    spark_run = run_twin(records, arrival_times, spec)     # real Spark (needs Java)
    model_run = predict(records, arrival_times, spec)      # no JVM
    spark_run.to_pandas()                                  # one row per micro-batch

Modules: ``spec`` (what runs), ``session`` (the one SparkSession), ``batches`` (input ->
micro-batches -> files), ``twins`` (the Spark query and its drive), ``readback`` (progress ->
outcomes), ``results`` (outcomes), ``tracing`` (outcomes -> trace), ``model`` (Spark's rules in
Python). The engine core never imports this package; PySpark is imported only when a session
starts.
"""

from winviz.spark.batches import BatchInputError, InputBatch, form_batches
from winviz.spark.model import SparkModel, predict, spark_windows
from winviz.spark.results import BatchOutcome, OutputRow, TwinResult
from winviz.spark.session import SparkUnavailableError, get_spark, stop_spark
from winviz.spark.spec import TwinSpec
from winviz.spark.twins import run_twin

__all__ = [
    "BatchInputError",
    "BatchOutcome",
    "InputBatch",
    "OutputRow",
    "SparkModel",
    "SparkUnavailableError",
    "TwinResult",
    "TwinSpec",
    "form_batches",
    "get_spark",
    "predict",
    "run_twin",
    "spark_windows",
    "stop_spark",
]
