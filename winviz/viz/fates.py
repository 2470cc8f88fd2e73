"""The fate of each element reaching a window operator (``element_fates``), and its details.

An element is **late** when its timestamp is at or below the operator's watermark when it
arrives (``ts <= watermark`` of its ``element`` record: Flink's "late element"). Each
``assigned`` / ``late_dropped`` / ``side_output`` record belongs to the latest ``element``
record of its operator in ``seq`` order. Then, per element:

* ``dropped`` — it has a ``late_dropped`` record; ``side output`` — a ``side_output`` record;
* ``late, accepted`` — ``ts <= watermark`` and assigned to at least one window (fired or not:
  lateness is about the watermark, not about firings);
* ``on time`` — otherwise (``ts > watermark``, or no timestamp / no watermark yet).

``source_index`` is the ``index`` of the nearest earlier ``arrival`` record when its value
equals the element's value (elements made by a firing upstream get none).
"""

from __future__ import annotations

from operator import is_, itemgetter
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import jsonable, vocabulary
from winviz.viz.trace_view import (
    Columns,
    TraceView,
    _numbers,
    _objects,
    memoized,
    window_operators,
)
from winviz.viz.value_texts import key_text, shorts

_FATE_NAMES = np.array(list(vocabulary.ELEMENT_FATES), dtype=object)


def element_fates(view: TraceView, operator: str) -> pd.DataFrame:
    """One row per element reaching ``operator``: seq, proc_time, ts, fate, windows (how
    many it was assigned to), by the module docstring's rules."""

    def frame() -> pd.DataFrame:
        columns = element_fate_columns(view, operator)
        names = ("seq", "proc_time", "ts", "fate", "windows")
        return pd.DataFrame({n: _objects(columns[n]) if n == "fate" else columns[n] for n in names})

    return memoized(view, "element_fates", operator, frame)


def element_fate_columns(view: TraceView, operator: str) -> Columns:
    """``element_fates`` as ``Columns`` (fate an object array), and fate_code: each fate's
    position in ``palette.FATES``."""
    return memoized(view, "element_fate_columns", operator, lambda: _element_fates(view, operator))


def _element_fates(view: TraceView, operator: str) -> Columns:
    erows = view.select("element", operator=operator)
    n = len(erows)

    def elements_of(kind: str) -> tuple[np.ndarray, np.ndarray]:
        """The records of ``kind`` at the operator after its first element, and the element
        of each (the last element record before it)."""
        rows = view.select(kind, operator=operator)
        owner = np.searchsorted(erows, rows) - 1
        if len(owner) and owner[0] < 0:  # records before the first element (owner: ascending)
            return rows[owner >= 0], owner[owner >= 0]
        return rows, owner

    # Flink's "late element": timestamp <= the operator's watermark on arrival (exact int64
    # comparison, not float64, which would round near MIN / MAX)
    stamps, has_ts = view.ints("ts", erows)
    marks, has_mark = view.ints("watermark", erows)
    late = has_ts & has_mark & (stamps <= marks)
    n_windows = np.bincount(elements_of("assigned")[1], minlength=n)
    # the fate's position in palette.FATES; a late-data side output or a late_dropped record
    # overrides "late, accepted", late_dropped first
    fate = np.zeros(n, dtype=np.int64)
    # taken in: at a window operator, those assigned to a window; at an operator without
    # windows (KeyedProcessFunction) or an interval join (``buffered``), every one
    joins = view.kind_code("buffered") >= 0 and len(view.select("buffered", operator=operator))
    windowed = not joins and (n_windows.any() or operator in window_operators(view))
    fate[late & (n_windows > 0 if windowed else True)] = 1
    if view.kind_code("side_output") >= 0:
        side, owner = elements_of("side_output")
        fate[owner[late_side_outputs(view, side, owner, operator)]] = 3
    if view.kind_code("late_dropped") >= 0:
        fate[elements_of("late_dropped")[1]] = 2
    return Columns(
        {
            "seq": erows,
            "proc_time": view.numbers("proc_time", erows),
            "ts": _numbers(stamps, has_ts),  # view.numbers("ts", erows), read once
            "fate": _FATE_NAMES[fate],  # an object array (not pandas' str dtype)
            "windows": n_windows,
            "fate_code": fate,  # counted with bincount
        }
    )


def late_side_outputs(
    view: TraceView, side: np.ndarray, owner: np.ndarray, operator: str
) -> np.ndarray:
    """Which of these ``side_output`` records of ``operator`` (``owner``: the element of each)
    are the late-data side output of their element (Flink's ``WindowOperator.processElement``
    ``sideOutput(lateDataOutputTag, element)``), not a ProcessWindowFunction's output."""
    if not len(side):
        return np.zeros(0, dtype=bool)
    # the records of the element's own processing: up to its operator's next element,
    # watermark or timer firing; a side output counts when no firing of that processing
    # follows it
    elements = np.append(view.select("element", operator=operator), len(view))
    bounds = np.append(view.select("watermark", "timer_fired", operator=operator), len(view))
    start = elements[owner]
    end = np.minimum(elements[owner + 1], bounds[np.searchsorted(bounds, start)])
    fired = np.append(-1, view.select("fired", operator=operator))  # (-1: none)
    last = fired[np.searchsorted(fired, end) - 1]  # the last firing before its end
    return (side < end) & ((side > last) | (last < start))


def element_detail_lists(view: TraceView, seqs: np.ndarray) -> dict[str, list[Any]]:
    """Tooltip fields of element records as lists: operator, key and value texts, watermark
    and ts (exact ints, None where absent), source_index (an int or None)."""
    values = view.detail("element", "value", seqs).tolist()
    # a key's text once per distinct key (the key column's dictionary tells keys apart)
    key_column = view.part("key", seqs)
    key_codes = key_column.codes[seqs].tolist()
    texts = {code: key_text(key_column.values[code]) for code in set(key_codes)}
    return {
        "operator": view.column("operator", seqs).tolist(),
        "key": list(map(texts.__getitem__, key_codes)),
        "value": shorts(values),
        "watermark": view.part("watermark", seqs).take(seqs).tolist(),
        "ts": view.part("ts", seqs).take(seqs).tolist(),
        "source_index": _source_index(view, seqs, values),
    }


def _source_index(view: TraceView, seqs: np.ndarray, values: list[Any]) -> list[Any]:
    arrivals = view.select("arrival")
    if not len(arrivals):
        return [None] * len(values)
    pos = np.searchsorted(arrivals, seqs) - 1
    has = (pos >= 0).tolist()
    src_rows = arrivals[np.maximum(pos, 0)]
    sources = view.part("detail", src_rows)[src_rows].tolist()  # (value, index) of each
    # the engine hands the arrival's own object on: identity first, then equal JSON
    if all(has) and all(map(is_, map(itemgetter(0), sources), values)):
        indexes = list(map(itemgetter(1), sources))
        if set(map(type, indexes)) <= {int}:
            return indexes  # the usual case: every element its arrival's own object
    return [
        int(source[1]) if h and (source[0] is v or jsonable(source[0]) == jsonable(v)) else None
        for h, source, v in zip(has, sources, values, strict=True)
    ]
