"""PyFlink's ``WatermarkStrategy`` and ``TimestampAssigner``, over winviz's
``WatermarkStrategy`` (Flink's ``BoundedOutOfOrdernessWatermarks`` /
``AscendingTimestampsWatermarks`` / ``NoWatermarksGenerator``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import winviz as wv
from winviz.pyflink.common.time import Duration, millis
from winviz.pyflink.errors import PyFlinkArgumentError, unsupported


class TimestampAssigner(ABC):
    """PyFlink's ``TimestampAssigner``: ``extract_timestamp(value, record_timestamp)``."""

    @abstractmethod
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        pass


class WatermarkStrategy:
    """PyFlink's ``WatermarkStrategy``; ``strategy`` is the winviz one it stands for."""

    def __init__(self, strategy: wv.WatermarkStrategy) -> None:
        self.strategy = strategy

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        return WatermarkStrategy(wv.WatermarkStrategy.for_monotonous_timestamps())

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy:
        ms = millis(max_out_of_orderness, "max_out_of_orderness")
        return WatermarkStrategy(wv.WatermarkStrategy.for_bounded_out_of_orderness(ms))

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        return WatermarkStrategy(wv.WatermarkStrategy.no_watermarks())

    def with_timestamp_assigner(self, timestamp_assigner: TimestampAssigner) -> WatermarkStrategy:
        extract = getattr(timestamp_assigner, "extract_timestamp", None)
        if not callable(extract):
            raise PyFlinkArgumentError(
                "with_timestamp_assigner takes a TimestampAssigner",
                field="timestamp_assigner",
                value=timestamp_assigner,
                expected="a TimestampAssigner with extract_timestamp(value, record_timestamp)",
            )

        def assign(value: Any, record_timestamp: Any) -> Any:
            return extract(value, record_timestamp)

        return WatermarkStrategy(self.strategy.with_timestamp_assigner(assign))

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy:
        return WatermarkStrategy(self.strategy.with_idleness(millis(idle_timeout, "idle_timeout")))

    def with_watermark_alignment(self, *args: Any, **kwargs: Any) -> WatermarkStrategy:
        raise unsupported(
            "WatermarkStrategy.with_watermark_alignment (watermark alignment)",
            "winviz's sources are bounded collections read in arrival order; drop the call "
            "(it only throttles fast sources, it does not change results)",
        )

    def __repr__(self) -> str:
        return f"WatermarkStrategy({self.strategy.name})"
