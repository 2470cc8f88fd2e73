"""Spark's late-row filter: which input rows a micro-batch drops as late.

Spark filters the input of a stateful operator with the *late-events watermark*
(``winviz.spark.results``); what counts as late depends on the operator:

- window aggregation (``TimeWindowing`` then ``StateStoreSaveExec``): each row is expanded into
  its windows, and a copy whose ``window end <= late watermark`` is dropped — a row of a
  sliding window can lose some copies and keep others;
- session windows (``SessionWindowStateStoreSaveExec``): a row whose session ``[ts, ts + gap)``
  has ``ts + gap <= late watermark``;
- the arbitrary-state APIs (``transformWithStateInPandas``, ``applyInPandasWithState``) and the
  stream-stream join (``OneSideHashJoiner.storeAndJoinWithOtherSide``): a row with
  ``ts <= late watermark``.

Spark only counts what it drops (``numRowsDroppedByWatermark``, ``winviz.spark.model`` rule
2); these functions derive which rows they were.
"""

from __future__ import annotations

from typing import Any

from winviz.spark.spec import TwinSpec, spark_windows


def late_copies(spec: Any, ts: int, late_watermark: int) -> list[tuple[int, int]]:
    """The copies of a row at ``ts`` that the late filter drops, as ``(start, end)`` of the
    window or session (a state or join twin's row, ``spec`` not a ``TwinSpec``: ``(ts, ts)``)."""
    if not isinstance(spec, TwinSpec):
        return [(ts, ts)] if ts <= late_watermark else []
    if spec.is_session:
        end = ts + spec.session_gap
        return [(ts, end)] if end <= late_watermark else []
    return [
        (s, e) for s, e in spark_windows(ts, spec.size, spec.window_slide) if e <= late_watermark
    ]


def is_dropped(spec: Any, ts: int, late_watermark: int) -> bool:
    """Whether the late filter drops the whole row (every copy of it is late)."""
    if not isinstance(spec, TwinSpec) or spec.is_session:
        return bool(late_copies(spec, ts, late_watermark))
    return len(late_copies(spec, ts, late_watermark)) == len(
        spark_windows(ts, spec.size, spec.window_slide)
    )
