"""Keeping every layer under Altair's inline-data limit (5,000 rows, never disabled).

Each layer is reduced to at most ``ROW_LIMIT`` rows before it is drawn, and the chart's subtitle
says how: ``bin_points`` / ``bin_fates`` (grid cells with counts), ``keep_extremes`` /
``thin_steps`` (M4: a line's first, last, lowest and highest vertex per bin), ``every_kth`` (a
regular sample).
"""

from __future__ import annotations

import math
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


def bin_points(
    xs: np.ndarray,
    ys: np.ndarray,
    values: pd.Series,
    by: str,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    limit: int,
) -> tuple[pd.DataFrame, int, int]:
    """Points counted per grid cell and ``by`` value (``values``; a missing one forms no cell):
    (cells, nx, ny). The grid starts at 120 × 80 and is coarsened by √2 per side until the cells
    fit ``limit`` (``_cells``)."""
    # one code per ``by`` value, in sorted order (the cells are ordered by (ix, iy, by))
    codes, labels = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=True)
    rank = np.argsort(np.argsort(np.asarray(labels, dtype=object), kind="stable"))
    labels = np.asarray(labels, dtype=object)[np.argsort(rank)]
    if (codes < 0).any():  # like groupby: rows whose ``by`` is missing form no cell
        keep = codes >= 0
        xs, ys, codes = xs[keep], ys[keep], codes[keep]
    codes = rank[codes] if len(codes) else codes
    return _bin_codes(xs, ys, codes, labels, by, x_range, y_range, limit)


def _bin_codes(
    xs: np.ndarray,
    ys: np.ndarray,
    codes: np.ndarray,
    labels: np.ndarray,
    by: str,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    limit: int,
) -> tuple[pd.DataFrame, int, int]:
    """``bin_points`` of ``by`` values given as codes: ``labels[code]``, the labels sorted."""
    nx, ny = 120, 80
    while True:
        cell = _cell_ids(xs, ys, codes, len(labels), x_range, y_range, nx, ny)
        size = nx * ny * len(labels)
        if size <= 4 * len(cell) + 100_000:  # counted directly per possible cell
            fits = np.count_nonzero(np.bincount(cell, minlength=size)) <= limit
        else:
            fits = len(np.unique(cell)) <= limit
        if fits or (nx == 1 and ny == 1):
            return _cells(xs, ys, cell, labels, by, x_range, y_range, nx, ny), nx, ny
        nx, ny = max(1, int(nx / math.sqrt(2))), max(1, int(ny / math.sqrt(2)))


def _cell_ids(
    xs: np.ndarray,
    ys: np.ndarray,
    codes: np.ndarray,
    n_labels: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    nx: int,
    ny: int,
) -> np.ndarray:
    """Each point's cell of an nx × ny grid per ``by`` code (``n_labels`` of them): one integer
    per (ix, iy, code), ordered as the sorted (ix, iy, code) triples."""
    (x0, x1), (y0, y1) = x_range, y_range
    wx, wy = max((x1 - x0) / nx, 1e-9), max((y1 - y0) / ny, 1e-9)
    ix = _bin_index(xs - x0, wx, nx)
    iy = _bin_index(ys - y0, wy, ny)
    return (ix * ny + iy) * n_labels + codes


def bin_elements(
    elements: pd.DataFrame,
    x_domain: tuple[int, int],
    y_domain: tuple[int, int],
    max_points: int,
    fate_codes: np.ndarray,
) -> tuple[pd.DataFrame, int, int]:
    """Elements (``ts``, ``proc_time``) clipped to the domains and binned per fate
    (``bin_fates``; ``fate_codes``: each fate's position in ``palette.FATES``)."""
    xs = np.clip(np.asarray(elements["ts"], dtype=float), *x_domain)
    ys = np.clip(np.asarray(elements["proc_time"], dtype=float), *y_domain)
    return bin_fates(xs, ys, fate_codes, x_domain, y_domain, max_points)


def bin_fates(
    xs: np.ndarray,
    ys: np.ndarray,
    fate_codes: np.ndarray,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    limit: int,
) -> tuple[pd.DataFrame, int, int]:
    """``bin_points`` by ``fate`` of float arrays, fates as positions in ``palette.FATES``."""
    present = np.flatnonzero(np.bincount(fate_codes, minlength=len(FATES)))
    order = sorted(present.tolist(), key=FATES.__getitem__)  # the fates present, sorted
    labels = np.array([FATES[i] for i in order], dtype=object)
    rank = np.zeros(len(FATES), dtype=np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[fate_codes]
    return _bin_codes(xs, ys, codes, labels, "fate", x_range, y_range, limit)


def _bin_index(offsets: np.ndarray, width: float, n: int) -> np.ndarray:
    """``np.clip(offsets // width, 0, n - 1).astype(np.int64)``, with ``floor(offsets /
    width)`` (faster) wherever the quotient is not within 1e-6 of an integer."""
    quotient = offsets / width
    index = np.floor(quotient)
    near = np.abs(quotient - np.rint(quotient)) < 1e-6
    if near.any():
        index[near] = offsets[near] // width
    return np.clip(index, 0, n - 1).astype(np.int64)


def _cells(
    xs: np.ndarray,
    ys: np.ndarray,
    cell: np.ndarray,
    labels: Any,
    by: str,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    nx: int,
    ny: int,
) -> pd.DataFrame:
    """The non-empty cells of an nx × ny grid per ``by`` code (each point's ``_cell_ids``):
    count, mean x / y (where drawn), bounds (x_lo, x_hi, y_lo, y_hi), the extent of its own
    points (x_min … y_max)."""
    (x0, x1), (y0, y1) = x_range, y_range
    wx, wy = max((x1 - x0) / nx, 1e-9), max((y1 - y0) / ny, 1e-9)
    size = nx * ny * len(labels)
    if size <= 4 * len(cell) + 100_000:  # counted directly per possible cell
        counts = np.bincount(cell, minlength=size)
        ids = np.flatnonzero(counts)
        count = counts[ids]
        mean_x = np.bincount(cell, weights=xs, minlength=size)[ids] / count
        mean_y = np.bincount(cell, weights=ys, minlength=size)[ids] / count
        at, n_at = cell, size
    else:
        ids, inverse, count = np.unique(cell, return_inverse=True, return_counts=True)
        mean_x = np.bincount(inverse, weights=xs, minlength=len(ids)) / count
        mean_y = np.bincount(inverse, weights=ys, minlength=len(ids)) / count
        at, n_at = inverse, len(ids)
    lo_x, hi_x, lo_y, hi_y = (
        _extreme(f, at, v, n_at)
        for f, v in ((np.minimum, xs), (np.maximum, xs), (np.minimum, ys), (np.maximum, ys))
    )
    if at is cell:
        lo_x, hi_x, lo_y, hi_y = lo_x[ids], hi_x[ids], lo_y[ids], hi_y[ids]
    cx, rest = np.divmod(ids, ny * len(labels))
    cy, cb = np.divmod(rest, len(labels))
    x_lo = x0 + cx * wx
    y_lo = y0 + cy * wy
    return pd.DataFrame(
        {
            by: pd.Series(np.asarray(labels, dtype=object)[cb], dtype=object),
            "count": count.astype(np.int64),
            "x": mean_x,
            "y": mean_y,
            "x_lo": x_lo,
            "x_hi": x_lo + wx,
            "y_lo": y_lo,
            "y_hi": y_lo + wy,
            "x_min": lo_x,
            "x_max": hi_x,
            "y_min": lo_y,
            "y_max": hi_y,
        }
    )


def _extreme(ufunc: Any, at: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """``ufunc`` (np.minimum / np.maximum) of ``values`` per group ``at`` (0 .. n-1)."""
    out = np.full(n, np.inf if ufunc is np.minimum else -np.inf)
    ufunc.at(out, at, values)
    return out


KEPT = "each processing-time bucket's first, last, lowest and highest kept"
"""How every thinned line says what it kept (``thin_steps``, ``keep_extremes``)."""


def thin_steps(
    frame: pd.DataFrame, time: str, group: str, limit: int, value: str | None = None
) -> pd.DataFrame:
    """Per group, the first and last row of each equal time bucket and, given a non-monotone
    ``value`` column (a queue size), its lowest and highest (M4, as ``keep_extremes``). Rows
    in seq order; without ``value`` the line is monotone (watermark steps)."""
    if len(frame) <= limit:
        return frame
    groups = max(1, frame[group].nunique())
    buckets = max(1, limit // ((2 if value is None else 4) * groups))
    t = frame[time].astype(float)
    lo, hi = float(t.min()), float(t.max())
    width = max((hi - lo) / buckets, 1e-9)
    bucket = np.minimum(((t - lo) // width).astype(np.int64), buckets - 1)
    cells = pd.DataFrame({"g": frame[group].to_numpy(), "b": bucket.to_numpy()})
    keep = np.array(~cells.duplicated(keep="last") | ~cells.duplicated(keep="first"))
    if value is not None:
        cells["v"] = pd.to_numeric(frame[value], errors="coerce").to_numpy()
        cells["i"] = np.arange(len(cells))
        by = cells.groupby(["g", "b"], sort=False)["v"]
        for found in (by.idxmin(), by.idxmax()):
            keep[found.dropna().astype(np.int64).to_numpy()] = True
    return frame[keep]


def keep_extremes(
    xs: np.ndarray, ys: np.ndarray, parts: np.ndarray, limit: int
) -> tuple[np.ndarray, int]:
    """The vertices of a line to draw when it has more than ``limit``: per part and each of
    ``limit // (4 × parts)`` x bins, its first, last, lowest and highest (M4, Jugel et al.
    2014: never a value the line did not have). Returns the sorted positions kept and the
    number of bins (0: nothing thinned). ``xs`` non-decreasing within a part, parts in order."""
    n = len(xs)
    if n <= limit:
        return np.arange(n), 0
    xs, ys, parts = (np.asarray(a, dtype=np.float64) for a in (xs, ys, parts))
    groups = max(1, len(np.unique(parts)))
    bins = max(1, limit // (4 * groups))
    lo, hi = float(xs.min()), float(xs.max())
    width = max((hi - lo) / bins, 1e-9)
    b = np.minimum(((xs - lo) // width).astype(np.int64), bins - 1)
    _, part_codes = np.unique(parts, return_inverse=True)
    key = part_codes.astype(np.int64) * bins + b
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], n] - 1
    by_value = np.lexsort((ys, np.repeat(np.arange(len(starts)), ends - starts + 1)))
    keep = np.unique(np.concatenate([starts, ends, by_value[starts], by_value[ends]]))
    return keep, bins


def every_kth(rows: Rows, limit: int = ROW_LIMIT) -> tuple[Rows, int]:
    """A regular sample of at most ``limit`` rows (of a frame or a list); returns (sample, k)."""
    if len(rows) <= limit:
        return rows, 1
    k = math.ceil(len(rows) / limit)
    return rows.iloc[::k] if isinstance(rows, pd.DataFrame) else rows[::k], k
