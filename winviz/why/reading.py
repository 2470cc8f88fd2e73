"""What every why-question reads off the trace alike (pandas imported only when a question is
asked)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.errors import ArgumentTypeError, InputError
from winviz.time import MAX, format_ms
from winviz.trace import Trace
from winviz.windows.window import has_positive_size

if TYPE_CHECKING:
    import pandas as pd


def table_frame(rows: Any = None) -> pd.DataFrame:
    import pandas as pd  # imported when a question is asked: the engine needs no pandas

    return pd.DataFrame(rows)


def time_text(t: int | None) -> str:
    """A time as printed: MIN and MAX by name (``winviz.time.format_ms``), never
    ±9223372036854775808; MAX is the end of input."""
    if t is None:
        return "none"
    return "MAX (end of input)" if t == MAX else format_ms(t)


def window_bounds(window: Any) -> tuple[int, int]:
    bounds = (
        (window.start, window.end)
        if hasattr(window, "start") and window.start is not None
        else window
    )
    if not (
        isinstance(bounds, (tuple, list))
        and len(bounds) == 2
        and all(b.__class__ is int for b in bounds)
    ):
        raise ArgumentTypeError(
            "not a window",
            field="window",
            value=window,
            expected="a TimeWindow or a (start, end) pair of ints",
        )
    if not has_positive_size(bounds[0], bounds[1]):  # TimeWindow itself checks nothing
        raise InputError(
            "a window's end must be after its start",
            field="window",
            value=window,
            expected="[start, end) with end > start, as every window assigner makes",
        )
    return bounds[0], bounds[1]


def trace_of(source: Any) -> Trace:
    """The trace of a ``Trace`` or of a result with ``.trace``, else ``ArgumentTypeError``."""
    trace = source if isinstance(source, Trace) else getattr(source, "trace", None)
    if not isinstance(trace, Trace):
        raise ArgumentTypeError(
            "no trace to read"
            + (": the job ran with trace=False" if hasattr(source, "trace") else ""),
            field="source",
            value=type(source).__name__,
            expected="a winviz Trace or a job result with .trace",
        )
    return trace


def window_asked(
    source: Any, key: Any, window: Any, operator: str | None
) -> tuple[Trace, tuple[int, int], str, np.ndarray]:
    """The trace, the window's bounds, its operator (``operator``, else the first that assigned or
    fired it, else the first window operator) and the window's ``fired`` rows there."""
    trace = trace_of(source)
    bounds = window_bounds(window)
    op = operator
    if op is None:
        kinds = ("assigned", "fired", "skipped_late_window")
        rows = trace.rows_where(kind=kinds, key=key, window=bounds)
        if len(rows):
            op = trace.records_at(rows[:1])[0].operator
        else:
            ops = trace.operators("assigned", "fired", "late_dropped", "skipped_late_window")
            if not ops:
                raise InputError(
                    "the trace has no window operator",
                    field="source",
                    expected="a trace with assigned or fired records",
                )
            op = ops[0]
    return trace, bounds, op, trace.rows_where(kind="fired", operator=op, key=key, window=bounds)


def row_before(rows: np.ndarray, row: int) -> int:
    """The last of the sorted ``rows`` before ``row`` (-1: none)."""
    k = int(np.searchsorted(rows, row)) - 1
    return int(rows[k]) if k >= 0 else -1
