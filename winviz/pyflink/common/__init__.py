"""PyFlink's ``pyflink.common`` over winviz: types, rows, time, watermark strategies,
encoders, a configuration and the job result."""

from __future__ import annotations

from typing import Any

from winviz.pyflink.common.configuration import Configuration
from winviz.pyflink.common.job_execution_result import JobExecutionResult
from winviz.pyflink.common.serialization import Encoder, SimpleStringSchema
from winviz.pyflink.common.time import Duration, Instant, Time
from winviz.pyflink.common.typeinfo import TypeInformation, Types
from winviz.pyflink.common.types import Row, RowKind
from winviz.pyflink.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from winviz.pyflink.errors import module_getattr

__all__ = [
    "Configuration",
    "Duration",
    "Encoder",
    "Instant",
    "JobExecutionResult",
    "Row",
    "RowKind",
    "SimpleStringSchema",
    "Time",
    "TimestampAssigner",
    "TypeInformation",
    "Types",
    "WatermarkStrategy",
]

__getattr__: Any = module_getattr(
    "pyflink.common",
    {
        "RestartStrategies": "winviz replays a failed job with execute(fail_at=...) and "
        "env.enable_checkpointing(...); a restart strategy has nothing to choose",
    },
    default="winviz.pyflink models PyFlink's DataStream API over winviz's engine; this "
    "name of pyflink.common is not part of it (see docs/pyflink.md for what is)",
)
