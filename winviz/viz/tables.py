"""Readable tables for lessons: a trace's or a Spark run's pandas frame as a learner reads it.

``readable`` returns a display copy (keep the original for assertions): whole floats as ints,
``Long.MIN_VALUE`` / ``Long.MAX_VALUE`` as MIN / MAX, times relative to a lesson's ``START``
(an absolute ``0`` there, Spark's watermark before its first batch, as ``epoch``).
``show_full_rows()`` makes pandas cut no cell or column.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from winviz.time import MAX, MIN

__all__ = ["RELATIVE", "readable", "show_full_rows"]

RELATIVE = "+ms"
"""The label of a time column shown relative to a lesson's ``START``: ``watermark (+ms)``."""


def show_full_rows() -> None:
    """Show every column and every cell in full (no ``...``) in this kernel's frames."""
    pd.set_option("display.max_columns", None)
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.width", None)


def _shown(value: object, start: int | None) -> object:
    """One cell: MIN / MAX by name, a whole number as an int (minus ``start`` when given)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer, float, np.floating)):
        if value <= MIN:
            return "MIN"
        if value >= MAX:  # float(MAX) rounds up to 2**63
            return "MAX"
        if isinstance(value, (float, np.floating)) and value != int(value):
            return value
        if start is not None and value == 0 and start != 0:
            return "epoch"  # e.g. Spark's watermark before the first batch: 0, not a START time
        return int(value) - (start or 0)
    return value


def _whole(column: pd.Series) -> bool:
    """Whether every present value of a float column is a whole number."""
    values = column.dropna().to_numpy(dtype=float)
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def readable(
    frame: pd.DataFrame,
    *,
    start: int | None = None,
    times: Iterable[str] = (),
    relative: Iterable[str] = (),
) -> pd.DataFrame:
    """A display copy of ``frame``: whole floats as ints (a gap empty), ``MIN``/``MAX`` by
    name, the ``times`` columns as ``t - start`` named ``"<column> (+ms)"`` (``RELATIVE``); the
    ``relative`` columns (already relative) only renamed. ``times`` needs a ``start``."""
    times, relative = list(times), list(relative)
    if times and start is None:
        raise ValueError(f"readable(): times={times!r} need a start to be relative to")
    missing = [c for c in times + relative if c not in frame.columns]
    if missing:
        raise KeyError(f"readable(): no column(s) {missing!r} in {list(frame.columns)!r}")
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        shift = start if name in times else None
        numeric = pd.api.types.is_integer_dtype(column) or (
            pd.api.types.is_float_dtype(column) and _whole(column)
        )
        nullable_bools = pd.api.types.is_bool_dtype(column) and column.isna().any()
        if (
            numeric
            or nullable_bools  # (a ``boolean`` column's gaps as empty cells, not <NA>)
            or column.dtype == object
            or pd.api.types.is_string_dtype(column)
        ):
            plain_ints = numeric and shift is None and pd.api.types.is_integer_dtype(column)
            if plain_ints and not column.isna().any() and not column.isin([MIN, MAX]).any():
                continue  # a plain int column stays as it is
            out[name] = [_shown(v, shift) for v in column]
    return out.rename(columns={c: f"{c} ({RELATIVE})" for c in times + relative})
