"""The Spark twin: winviz pipelines run on real (local) PySpark Structured Streaming, and a
pure-Python model of Spark's semantics, both read back as a ``winviz.trace.Trace``.

    from winviz.spark import TwinSpec, run_twin, predict

    spec = TwinSpec(size=5000, watermark_delay=2000, output_mode="append",
                    trigger_interval=1000, drive="per_batch")
    spark_run = run_twin(records, arrival_times, spec)     # real Spark (needs Java)
    model_run = predict(records, arrival_times, spec)      # no JVM
    spark_run.to_pandas()                                  # one row per micro-batch

    plan = build_twin(env, "counts")                       # the twin of an engine pipeline
    compare(env.execute(), plan.run())                     # per (key, window): who, when, why

The path of a run: ``spec`` -> ``batches`` -> ``twins`` / ``state_twins`` (real Spark,
``session``, one runner for every twin) or ``model`` / ``join_model`` (no JVM, one driver for
every model) -> ``results`` (with the run's trace); ``builder`` makes a ``TwinPlan`` from an
engine pipeline, ``compare`` (``join_compare`` for a join) sets both side by side. The engine
core never imports this package; PySpark is imported only when a session starts.
"""

from winviz.spark.batches import BatchInputError, InputBatch, form_batches
from winviz.spark.builder import NoTwinError, TwinPlan, build_twin
from winviz.spark.compare import compare
from winviz.spark.join_compare import flink_interval_join
from winviz.spark.join_model import JoinSpec, predict_join
from winviz.spark.model import SparkModel, predict
from winviz.spark.readback import SparkQueryError
from winviz.spark.results import BatchOutcome, JoinRow, OutputRow, TimerRow, TwinResult
from winviz.spark.session import SparkUnavailableError, get_spark, stop_spark
from winviz.spark.spec import StateSpec, TwinSpec, spark_windows
from winviz.spark.state_twins import predict_state, run_processing_time_probe, run_state_twin
from winviz.spark.twins import run_join_twin, run_twin

__all__ = [
    "BatchInputError",
    "BatchOutcome",
    "InputBatch",
    "JoinRow",
    "JoinSpec",
    "NoTwinError",
    "OutputRow",
    "SparkModel",
    "SparkQueryError",
    "SparkUnavailableError",
    "StateSpec",
    "TimerRow",
    "TwinPlan",
    "TwinResult",
    "TwinSpec",
    "build_twin",
    "compare",
    "flink_interval_join",
    "form_batches",
    "get_spark",
    "predict",
    "predict_join",
    "predict_state",
    "run_join_twin",
    "run_processing_time_probe",
    "run_state_twin",
    "run_twin",
    "spark_windows",
    "stop_spark",
]
