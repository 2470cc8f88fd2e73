"""Keeping every layer under Altair's inline-data limit (5,000 rows, never disabled).

Each layer is reduced to at most ``ROW_LIMIT`` rows before it is drawn, and the chart's subtitle
says how: ``cells`` / ``bin_points`` (rows counted per cell, on a grid), ``keep_extremes`` /
``thin_steps`` (M4: a line's first, last, lowest and highest vertex per bin), ``every_kth`` (a
regular sample).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from winviz.trace.vocabulary import ELEMENT_FATES as FATES

ROW_LIMIT = 5000  # Altair's default max_rows
Rows = TypeVar("Rows", pd.DataFrame, list[Any])
EXACT = 2**53  # palette.EXACT: beyond this magnitude a time is off the chart


def extent(*columns: pd.Series) -> list[int]:
    """The smallest and largest drawable time (|t| <= 2**53) of each column (non-numbers
    ignored): all ``palette.time_axis`` needs of them."""
    out: list[int] = []
    for column in columns:
        dtype = getattr(column, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind in "if":  # numpy ints / floats: direct
            a = np.asarray(column)
            if len(a):
                lo, hi = a.min(), a.max()
                if lo >= -EXACT and hi <= EXACT:  # the usual case: every one drawable (no NaN)
                    out += [int(lo), int(hi)]
                    continue
            a = a[np.abs(a) <= EXACT] if dtype.kind == "f" else a[(a >= -EXACT) & (a <= EXACT)]
            if len(a):
                out += [int(a.min()), int(a.max())]
            continue
        # an object column of Python ints only (the trace's exact times): no conversion
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            items = column.tolist()
            if all(v.__class__ is int for v in items):
                lo, hi = (min(items), max(items)) if items else (0, 0)
                if lo >= -EXACT and hi <= EXACT:  # the usual case: every one drawable
                    if items:
                        out += [lo, hi]
                    continue
                inside = [v for v in items if -EXACT <= v <= EXACT]
                if inside:
                    out += [min(inside), max(inside)]
                continue
        values = pd.to_numeric(pd.Series(column), errors="coerce").dropna()
        if values.dtype.kind == "f":
            values = values[values.abs() <= EXACT]
        elif len(values):  # exact ints (possibly MIN / MAX)
            values = values[(values >= -EXACT) & (values <= EXACT)]
        if len(values):
            out += [int(values.min()), int(values.max())]
    return out


def cells(
    keys: Sequence[Any],
    sizes: Sequence[int] | None = None,
    appearance: bool = False,
    **columns: tuple[str, Any],
) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """Rows counted per cell: the one way a chart draws a layer that would hold more rows than
    it can show (``bin_points``' grid cells of one category, a lane's windows per key and
    event-time bin, a window's firings per cause, the timers of one (domain, timestamp)). A
    cell is a distinct tuple of ``keys`` (columns of equal length): given ``sizes``, codes
    0 .. size - 1 (bins, category positions); else any sortable values. Returns, per cell in
    the order of its keys (``appearance``: of its first row), each key's value and a table:
    "count" (its rows) and per ``name=(how, values)`` the "sum", "min", "max" (of the numbers,
    NaN passed over) or "mean" of ``values`` over its rows."""
    n = len(keys[0])
    ids, size = np.zeros(n, dtype=np.int64), 1
    for j, key in enumerate(keys):
        if sizes is None:
            code, uniques = pd.factorize(np.asarray(key), sort=True, use_na_sentinel=False)
            width = len(uniques)  # (a missing value is a key of its own, sorted last)
        else:
            code, width = np.asarray(key, dtype=np.int64), sizes[j]
        if size * width >= 2**62:  # (the cells so far renumbered 0 .. m - 1, in order)
            ids, renumbered = pd.factorize(ids, sort=True)
            size = len(renumbered)
        ids, size = ids * width + code, size * width
    if size <= 4 * n + 100_000:  # counted directly per possible cell
        at = ids
    else:
        distinct, at = np.unique(ids, return_inverse=True)
        size = len(distinct)
    count = np.bincount(at, minlength=size)
    row = np.full(size, n)
    np.minimum.at(row, at, np.arange(n))
    kept = np.flatnonzero(count)
    if appearance:
        kept = kept[np.argsort(row[kept], kind="stable")]
    table = {"count": count[kept]}
    for name, (how, values) in columns.items():
        values = np.asarray(values)
        if how in ("sum", "mean"):
            total = np.bincount(at, weights=values, minlength=size)[kept]
            if how == "mean":
                table[name] = total / table["count"]
            else:  # (exact below 2**53)
                table[name] = total.astype(np.int64) if values.dtype.kind in "biu" else total
            continue
        if values.dtype.kind not in "biuf":
            values = values.astype(np.float64)
        ufunc = np.fmin if how == "min" else np.fmax
        if values.dtype.kind == "f":
            out = np.full(size, np.nan)
        else:
            info = np.iinfo(values.dtype)
            out = np.full(size, info.max if how == "min" else info.min, dtype=values.dtype)
        ufunc.at(out, at, values)
        table[name] = out[kept]
    return [np.asarray(key)[row[kept]] for key in keys], table


def bin_points(
    xs: np.ndarray,
    ys: np.ndarray,
    codes: np.ndarray,
    labels: Sequence[Any],
    by: str,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    limit: int,
) -> tuple[pd.DataFrame, int, int]:
    """Points counted per grid cell and category (``codes``: each point's position in
    ``labels``), as ``cells``: (cells, nx, ny). The grid starts at 120 × 80 and is coarsened by
    √2 per side until the cells fit ``limit``. A cell (ordered by x cell, y cell, its ``by``
    label) has its count, mean x / y, bounds (x_lo, x_hi, y_lo, y_hi) and the extent of its
    own points (x_min … y_max)."""
    present = np.flatnonzero(np.bincount(codes, minlength=len(labels)))
    order = sorted(present.tolist(), key=labels.__getitem__)  # the labels present, sorted
    rank = np.zeros(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(order))
    grid, sizes = [xs, ys, rank[codes]], [120, 80, len(order)]
    (x0, x1), (y0, y1) = x_range, y_range
    while True:
        nx, ny = sizes[0], sizes[1]
        wx, wy = max((x1 - x0) / nx, 1e-9), max((y1 - y0) / ny, 1e-9)
        grid[:2] = _bin_index(xs - x0, wx, nx), _bin_index(ys - y0, wy, ny)
        if len(cells(grid, sizes)[1]["count"]) <= limit or (nx == 1 and ny == 1):
            break
        sizes[:2] = max(1, int(nx / math.sqrt(2))), max(1, int(ny / math.sqrt(2)))
    extents = {f"{c}_{how}": (how, v) for c, v in (("x", xs), ("y", ys)) for how in ("min", "max")}
    (ix, iy, code), cell = cells(grid, sizes, x=("mean", xs), y=("mean", ys), **extents)
    named = np.array([labels[i] for i in order], dtype=object)
    x_lo, y_lo = x0 + ix * wx, y0 + iy * wy
    bounds = {"x_lo": x_lo, "x_hi": x_lo + wx, "y_lo": y_lo, "y_hi": y_lo + wy}
    frame = {by: pd.Series(named[code], dtype=object), "count": cell.pop("count")}
    x_y = {c: cell.pop(c) for c in ("x", "y")}
    return pd.DataFrame(frame | x_y | bounds | cell), nx, ny


def bin_fates(
    xs: np.ndarray,
    ys: np.ndarray,
    codes: np.ndarray,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    limit: int,
    notes: list[str],
) -> dict[str, list[Any]]:
    """Elements binned per fate (``bin_points``; ``codes``: positions in ``palette.FATES``),
    as columns: the common fate's cells first, then by count (both descending; the rarer
    fates drawn on top), each cell's fate, count, mean x / y and the extent of its own
    elements (x_min … y_max; not the cell's bounds, which can hold times none has), rounded
    (half to even); the subtitle told."""
    cells, nx, ny = bin_points(xs, ys, codes, FATES, "fate", x_range, y_range, limit)
    notes.append(
        f"{len(codes):,} elements binned on a {nx} × {ny} grid: a mark is a cell's elements "
        "of one fate, at their mean position, sized by count"
    )
    fates, counts = cells["fate"].to_numpy(dtype=object), cells["count"].to_numpy()
    order = np.lexsort((-counts, fates != FATES[0]))
    rounded = ("x", "y", "x_min", "x_max", "y_min", "y_max")
    out = {c: np.rint(cells[c].to_numpy(dtype=float)[order]).astype(np.int64) for c in rounded}
    return {"fate": fates[order].tolist(), "count": counts[order].tolist()} | {
        c: v.tolist() for c, v in out.items()
    }


BY_COUNT = {"field": "count", "type": "quantitative", "scale": {"type": "sqrt", "range": [8, 160]}}
"""A binned mark's size: its count (``bin_fates``' cells)."""


def _bin_index(offsets: np.ndarray, width: float, n: int) -> np.ndarray:
    """``np.clip(offsets // width, 0, n - 1).astype(np.int64)``, with ``floor(offsets /
    width)`` (faster) wherever the quotient is not within 1e-6 of an integer."""
    quotient = offsets / width
    index = np.floor(quotient)
    near = np.abs(quotient - np.rint(quotient)) < 1e-6
    if near.any():
        index[near] = offsets[near] // width
    return np.clip(index, 0, n - 1).astype(np.int64)


KEPT = "each processing-time bucket's first, last, lowest and highest kept"
"""How every thinned line says what it kept (``thin_steps``, ``keep_extremes``)."""


def thin_steps(
    frame: pd.DataFrame, time: str, group: str, limit: int, value: str | None = None
) -> pd.DataFrame:
    """``keep_extremes`` over a frame's rows (kept in seq order): per ``group``, each time
    bucket's first and last row and, given a non-monotone ``value`` column (a queue size),
    its first lowest and first highest; without ``value`` the line is monotone (watermark
    steps)."""
    if len(frame) <= limit:
        return frame
    ys = None if value is None else pd.to_numeric(frame[value], errors="coerce")
    keep, _ = keep_extremes(frame[time], ys, frame[group], limit, last_highest=False)
    return frame.iloc[keep]


def keep_extremes(
    xs: Any, ys: Any, parts: Any, limit: int, last_highest: bool = True
) -> tuple[np.ndarray, int]:
    """The vertices of a line to draw when it has more than ``limit``: per part and each of
    ``limit // (4 × parts)`` x bins, its first, last, lowest and highest (M4, Jugel et al.
    2014: never a value the line did not have; NaN values passed over); without ``ys`` (a
    monotone line) its first and last of ``limit // (2 × parts)`` bins. Of equal values the
    first is the lowest, and the highest the last (``last_highest``) or the first. Returns
    the sorted positions kept and the number of bins (0: nothing thinned)."""
    n = len(xs)
    if n <= limit:
        return np.arange(n), 0
    xs = np.asarray(xs, dtype=np.float64)
    codes, uniques = pd.factorize(np.asarray(parts))
    bins = max(1, limit // ((2 if ys is None else 4) * max(1, len(uniques))))
    lo, hi = float(xs.min()), float(xs.max())
    width = max((hi - lo) / bins, 1e-9)
    key = codes * bins + np.minimum(((xs - lo) // width).astype(np.int64), bins - 1)
    rows = [np.arange(n)]  # each (part, bin)'s rows, by key: its first and last are kept
    if ys is not None:
        ys = np.asarray(ys, dtype=np.float64)
        rows += [np.flatnonzero(~np.isnan(ys))]  # by key, value: its lowest and highest
    keep = []
    for by_value, at in enumerate(rows):
        values = (ys[at], key[at]) if by_value else (key[at],)
        order = at[np.lexsort(values)]
        firsts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
        lasts = np.r_[firsts[1:], len(order)] - 1
        keep += [order[firsts], order[lasts]]
        if by_value and not last_highest:  # the first of the highest values instead
            order = at[np.lexsort((-ys[at], key[at]))]
            keep[-1] = order[firsts]
    return np.unique(np.concatenate(keep)), bins


def nth(k: int) -> str:
    """``k`` as an ordinal ("2nd", "3rd", "11th", "21st"): the k of ``every_kth`` in words."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def every_kth(rows: Rows, limit: int = ROW_LIMIT) -> tuple[Rows, int]:
    """A regular sample of at most ``limit`` rows (of a frame or a list); returns (sample, k)."""
    if len(rows) <= limit:
        return rows, 1
    k = math.ceil(len(rows) / limit)
    return rows.iloc[::k] if isinstance(rows, pd.DataFrame) else rows[::k], k
