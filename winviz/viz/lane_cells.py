"""Aggregated window lanes (``window_lanes`` past a readable number of windows): per key, one
cell per event-time bin of window starts with its counts, shaded by the share of its windows
that fired, and the span of its windows' allowed-lateness horizons. A lane is readable while
each of its windows can have ``MIN_BAR_PX`` pixels; past that, bars would blur into a texture.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import palette, spec, window_lives
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import TraceView
from winviz.viz.window_lives import processing_time_windows

HORIZON_TITLE = "allowed lateness"
"""The legend title of the lanes' horizon lines, one bar's or one cell's."""

MIN_BAR_PX = 4
"""A lane is readable while each of its windows can have this many pixels: with more windows
than ``width // MIN_BAR_PX`` in one lane, the lanes are aggregated (``aggregated``)."""
AGGREGATE_BIN_PX = 8
"""Aggregated lanes: one cell per key and event-time bin of about this many pixels."""


def too_many(bars: pd.DataFrame, width: int) -> bool:
    """Whether some lane holds more windows than it can show (``MIN_BAR_PX`` each)."""
    return bool(len(bars)) and int(bars.groupby("key", sort=False).size().max()) > max(
        1, width // MIN_BAR_PX
    )


def aggregated(
    view: TraceView,
    op: str,
    bars: pd.DataFrame,
    lanes: dict[str, Any],
    width: int,
    notes: list[str],
) -> spec.ChartDict:
    """Lanes past a readable number of windows: per key, one cell per event-time bin (of
    ``AGGREGATE_BIN_PX`` pixels) counting the windows that start in it — how many, how many
    fired, never fired or were merged away, their elements (each counted once, in the window
    whose pane holds it, not in a window merged away) and firings — shaded by the share
    that fired (the "fired" colour); the subtitle says so. With allowed lateness > 0, per cell
    a line from the earliest to the latest allowed-lateness horizon of its windows
    (``_horizons``). Per-window marks (firings, cleanups) are left to ``timeline``
    and ``explore``. ``lanes``: the y channel of the lanes (one per key, titled)."""
    starts = bars["window_start"].to_numpy(dtype=np.int64)
    ends = bars["window_end"].to_numpy(dtype=np.int64)
    axis = "processing time" if processing_time_windows(view, op) else "event time"
    lo, hi = int(starts.min()), int(ends.max())
    horizons, derived = window_lives.every_horizon(view, op)
    stamps = [horizons.get(w) for w in zip(starts.tolist(), ends.tolist(), strict=True)]
    x = palette.time_axis(
        axis, [lo, hi, *(t for t in stamps if t is not None and not palette.is_off_chart(t))]
    )
    n_bins = max(1, width // AGGREGATE_BIN_PX)
    size = max(1, -(-(hi - lo) // n_bins))
    bins = (starts - lo) // size
    status = bars["status"].to_numpy(dtype=object)
    table = pd.DataFrame(
        {
            "key": bars["key"].to_numpy(dtype=object),
            "bin": bins,
            "fired": status == "fired",
            "not_fired": status == "not fired",
            "merged": status == "merged away",
            # a merged-away window's elements are counted in the window they went into
            # (``window_lives``: a merge result's pane holds what it absorbed), once
            "elements": np.where(status == "merged away", 0, bars["elements"].astype("int64")),
            "firings": bars["firings"].astype("int64").to_numpy(),
        }
    )
    cells = table.groupby(["key", "bin"], sort=False).agg(
        windows=("fired", "size"),
        fired=("fired", "sum"),
        not_fired=("not_fired", "sum"),
        merged=("merged", "sum"),
        elements=("elements", "sum"),
        firings=("firings", "sum"),
    )
    rows = []
    for (key, b), c in zip(cells.index.tolist(), cells.itertuples(index=False), strict=True):
        b0 = lo + int(b) * size
        rows.append(
            {
                "x": x.clip(b0)[0],
                "x2": x.clip(b0 + size)[0],
                "key": key,
                "kind": "windows (aggregated)",
                "starting in": f"[{x.fmt(b0)}, {x.fmt(b0 + size)})",
                "windows": int(c.windows),
                "fired": int(c.fired),
                "not fired": int(c.not_fired),
                "merged away": int(c.merged),
                "elements": int(c.elements),
                "firings": int(c.firings),
                "share fired": round(int(c.fired) / int(c.windows), 3),
            }
        )
    most = int(table.groupby("key", sort=False).size().max())
    notes.append(
        f"aggregated: a lane holds up to {most:,} windows, more than {width // MIN_BAR_PX:,} "
        f"({MIN_BAR_PX} px each) — one cell per key and {size:,} ms of window starts, shaded "
        "by the share of its windows that fired; hover for the counts (timeline / explore "
        "draw each window)"
    )
    lines = _horizons(table, stamps, derived, starts, ends, lanes, x, lo, size)
    if lines is not None:
        lateness = window_lives.allowed_lateness(view, op)
        notes.append(
            "allowed lateness"
            + ("" if lateness is None else f" {lateness:,} ms")
            + ": per cell a line from the earliest to the latest horizon (max timestamp + "
            "lateness) of its windows"
        )
    height = max(60, min(900, len(lanes["scale"]["domain"]) * 24))
    layer = spec.layer(
        rows,
        {
            "type": "bar",
            "stroke": palette.INK,
            "strokeWidth": 0.5,
            "fill": palette.WINDOW_FIRED_COLOR,
        },
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            "y": lanes,
            "fillOpacity": {
                "field": "share fired",
                "type": "quantitative",
                "title": "share of windows fired",
                "scale": {"domain": [0, 1], "range": [0.08, 0.95]},
            },
            "tooltip": spec.tooltips(rows, ["x", "x2"]),
        },
    )
    chart = {"layer": [layer, *([lines] if lines else [])], "width": width, "height": height}
    return palette.finish(chart, name="window_lanes", notes=notes, heading="Window lanes")


CELL_HORIZON = "horizons of a cell's windows: earliest to latest"
"""The aggregated lanes' horizon lines' legend entry (``_horizons``)."""


def _horizons(
    table: pd.DataFrame,
    stamps: list[int | None],
    derived: frozenset[tuple[int, int]],
    starts: np.ndarray,
    ends: np.ndarray,
    lanes: dict[str, Any],
    x: TimeAxis,
    lo: int,
    size: int,
) -> spec.ChartDict | None:
    """Aggregated lanes' horizons: per cell (key, bin of window starts, rows of ``table``),
    the span of its windows' allowed-lateness horizons (``stamps``: each bar's, from
    ``window_lives.every_horizon``, None without one) — a line at the lane's foot from the
    earliest to the latest, drawn with square caps so a cell of one horizon shows a dot.
    Until the watermark passes a window's horizon it accepts late elements. The tooltip
    counts the windows with a horizon and how many were derived (merged away, or still
    open: no ``cleanup`` record). None when no window has a horizon."""
    has = np.array([t is not None for t in stamps], dtype=bool)
    if not has.any():
        return None
    found = table[has].assign(
        horizon=np.array([t for t in stamps if t is not None], dtype=np.int64),
        derived=[
            (s, e) in derived for s, e in zip(starts[has].tolist(), ends[has].tolist(), strict=True)
        ],
    )
    spans = found.groupby(["key", "bin"], sort=False).agg(
        windows=("horizon", "size"),
        earliest=("horizon", "min"),
        latest=("horizon", "max"),
        derived=("derived", "sum"),
    )
    rows = []
    for (key, b), c in zip(spans.index.tolist(), spans.itertuples(index=False), strict=True):
        b0 = lo + int(b) * size
        rows.append(
            {
                "x": x.clip(int(c.earliest))[0],
                "x2": x.clip(int(c.latest))[0],
                "key": key,
                "line": CELL_HORIZON,
                "kind": "allowed-lateness horizons (aggregated)",
                "windows starting in": f"[{x.fmt(b0)}, {x.fmt(b0 + size)})",
                "windows with a horizon": int(c.windows),
                "earliest horizon": x.fmt(int(c.earliest)),
                "latest horizon": x.fmt(int(c.latest)),
                "derived (no cleanup record)": int(c.derived),
            }
        )
    mark = {"type": "rule", "color": palette.HORIZON_COLOR, "strokeWidth": 2}
    return spec.layer(
        rows,
        {**mark, "opacity": 0.8, "strokeCap": "square"},
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            "y": {
                **{k: v for k, v in lanes.items() if k not in ("title", "axis")},
                "bandPosition": 0.85,
            },
            "strokeDash": {
                "field": "line",
                "type": "nominal",
                "title": HORIZON_TITLE,
                "scale": {"domain": [CELL_HORIZON], "range": [palette.HORIZON_DASH]},
            },
            "tooltip": spec.tooltips(rows, ["x", "x2", "line"]),
        },
    )
