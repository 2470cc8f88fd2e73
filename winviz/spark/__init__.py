"""The Spark twin: winviz pipelines on PySpark Structured Streaming (``run_twin``, needs Java) and
a pure-Python model of Spark's rules (``predict``), both a ``TwinResult`` with a trace;
``build_twin(env, sink)`` makes an engine pipeline's twin, ``compare`` sets both side by side.

    spec = TwinSpec(size=5000, watermark_delay=2000, trigger_interval=1000)
    predict(records, arrival_times, spec).to_pandas()      # one row per micro-batch
    compare(env.execute(), build_twin(env, "counts").run())
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
