"""One driver per transcript kind: it builds the operator from ``operator:`` and executes
steps the way Flink's test harness for that operator does (each driver's docstring names it).

One module a family: ``driver`` (the base and the shared value reading), ``windows``,
``timers``, ``watermarks`` and ``inputs``; ``DRIVERS`` maps each kind to its driver.
"""

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
