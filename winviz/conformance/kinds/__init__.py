"""One driver per transcript kind, running steps as Flink's test harness for that operator does;
``DRIVERS`` maps each kind to its driver."""

from __future__ import annotations

from winviz.conformance.kinds.driver import Driver
from winviz.conformance.kinds.inputs import PartitionerDriver, TwoInputDriver
from winviz.conformance.kinds.timers import TimersDriver, TimerServiceDriver
from winviz.conformance.kinds.watermarks import (
    BoundedOutOfOrdernessDriver,
    ValveDriver,
    WatermarkGeneratorDriver,
)
from winviz.conformance.kinds.windows import (
    AssignerDriver,
    MergingWindowSetDriver,
    TriggerDriver,
    WindowDriver,
)

DRIVERS: dict[str, type[Driver]] = {
    "window": WindowDriver,
    "timers": TimersDriver,
    "timer_service": TimerServiceDriver,
    "trigger": TriggerDriver,
    "assigner": AssignerDriver,
    "merging_window_set": MergingWindowSetDriver,
    "valve": ValveDriver,
    "bounded_out_of_orderness": BoundedOutOfOrdernessDriver,
    "watermark_generator": WatermarkGeneratorDriver,
    "partitioner": PartitionerDriver,
    "two_input": TwoInputDriver,
}
