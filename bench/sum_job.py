"""The job the engine benchmarks time (``run.py``, ``parallel_bench.py``, ``trace_bench.py``):
(key, ts, value) events summed per key in tumbling event-time windows — a ``ReduceFunction``,
which Flink's ``WindowOperator`` applies as each element is added — with watermarks of
bounded out-of-orderness, into one sink."""

from __future__ import annotations

from typing import Any

import winviz as wv


def sum_job(
    env: wv.StreamExecutionEnvironment,
    events: list[Any],
    size: int,
    bound: int,
    *,
    sink: str = "sums",
    partitioned: bool = False,
    **source: Any,
) -> wv.StreamExecutionEnvironment:
    """Adds the job to ``env`` and returns it: ``events`` read by ``env.from_collection``
    (``partitioned``: a list of partitions, ``env.from_partitions``) with ``source``'s keywords
    (``arrival_interval``, ``arrival_times``, ``name``), windows of ``size`` ms, bound ``bound``
    ms."""
    read = env.from_partitions if partitioned else env.from_collection
    (
        read(events, **source)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(size))
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
        .sink_to(sink)
    )
    return env
