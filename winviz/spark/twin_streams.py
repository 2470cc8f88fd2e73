"""The input streams a Spark twin reads from the job graph: for each stream feeding a window or
a join side, its rows (after ``map`` / ``filter`` / ``flat_map``, run here in Python), its
watermark delay (``withWatermark(ts, delay)``) and its timestamp assigner; what has no twin is
added to ``reasons`` (``NO_TWIN``). Read by ``winviz.spark.builder`` for window
and join twins alike."""

from __future__ import annotations

from typing import Any

from winviz.graph import (
    FilterSpec,
    FlatMapSpec,
    MapSpec,
    SourceSpec,
    SplitWatermarksSpec,
    UnionSpec,
    WatermarksSpec,
)
from winviz.spark.no_twin import NO_TWIN

Row = tuple[int, Any, Any]  # (arrival, value, source timestamp)
Stream = tuple[list[Row], int, Any]  # rows, watermark delay, timestamp assigner


def streams_of(node: Any, reasons: list[str]) -> list[Stream]:
    """Each input stream of the window: its rows after map/filter/flat_map,
    its watermark delay and timestamp assigner."""
    if isinstance(node.spec, UnionSpec):
        return [s for n in node.inputs for s in streams_of(n, reasons)]
    if isinstance(node.spec, SplitWatermarksSpec):
        reasons.append(NO_TWIN["partitions"])
        return []
    if not isinstance(node.spec, WatermarksSpec):
        reasons.append(NO_TWIN["shape"])
        return []
    strategy = node.spec.strategy
    delay = _delay(strategy, reasons)
    rows = _source_rows(node.inputs[0], reasons)
    return [(rows, delay, strategy.timestamp_assigner)]


def _delay(strategy: Any, reasons: list[str]) -> int:
    from winviz.watermarks import BoundedOutOfOrdernessWatermarks

    if strategy.idle_timeout is not None:
        reasons.append(NO_TWIN["idleness"])
    generator = strategy.generator_factory()
    if not isinstance(generator, BoundedOutOfOrdernessWatermarks) or (
        strategy.timestamp_assigner is None
    ):
        reasons.append(NO_TWIN["watermarks"])
        return 0
    return generator.bound


def _source_rows(node: Any, reasons: list[str]) -> list[Row]:
    spec = node.spec
    if isinstance(spec, MapSpec | FilterSpec | FlatMapSpec):  # what the operator emits
        rows = _source_rows(node.inputs[0], reasons)
        return [(arrival, v, ts) for arrival, value, ts in rows for v in spec.apply(value)]
    if not isinstance(spec, SourceSpec):
        reasons.append(NO_TWIN["shape"])
        return []
    if spec.partitioned:
        reasons.append(NO_TWIN["partitions"])
        return []
    return [(arrival, value, ts) for arrival, _, value, ts in spec.records]
