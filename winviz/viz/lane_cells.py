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

HORIZON_TITLE = "allowed lateness"
"""The legend title of the lanes' horizon lines, one bar's or one cell's."""
MIN_BAR_PX = 4
"""With more windows than ``width // MIN_BAR_PX`` in one lane, the lanes are aggregated
(``window_lanes``)."""
AGGREGATE_BIN_PX = 8
"""Aggregated lanes: one cell per key and event-time bin of about this many pixels."""
CELL_HORIZON = "horizons of a cell's windows: earliest to latest"


def horizon_rules(
    rows: list[dict[str, Any]],
    x: TimeAxis,
    lanes: dict[str, Any],
    dashes: dict[str, list[int]],
    tooltip: list[dict[str, str]],
    **mark: Any,
) -> spec.ChartDict:
    """The lanes' allowed-lateness horizon lines from ``x`` to ``x2`` on the lanes (``lanes``:
    their y channels), their legend's entries dashed as ``dashes`` says."""
    return spec.layer(
        rows,
        {"type": "rule", "color": palette.HORIZON_COLOR, "strokeWidth": 2, "opacity": 0.8, **mark},
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            **lanes,
            "strokeDash": {
                "field": "line",
                "type": "nominal",
                "title": HORIZON_TITLE,
                "scale": {"domain": list(dashes), "range": list(dashes.values())},
            },
            "tooltip": tooltip,
        },
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
    ``AGGREGATE_BIN_PX`` pixels) counting the windows that start in it — how many fired,
    never fired or were merged away, their elements (each once, in the window whose pane holds
    it) and firings — shaded by the share that fired; with allowed lateness > 0, the span of
    its windows' horizons (``_horizon_spans``). ``lanes``: the lanes' y channel (titled)."""
    starts = bars["window_start"].to_numpy(dtype=np.int64)
    ends = bars["window_end"].to_numpy(dtype=np.int64)
    processing = window_lives.processing_time_windows(view, op)
    lo, hi = int(starts.min()), int(ends.max())
    horizons, derived = window_lives.every_horizon(view, op)
    stamps = [horizons.get(w) for w in zip(starts.tolist(), ends.tolist(), strict=True)]
    x = palette.time_axis(
        "processing time" if processing else "event time",
        [lo, hi, *(t for t in stamps if t is not None and not palette.is_off_chart(t))],
    )
    size = max(1, -(-(hi - lo) // max(1, width // AGGREGATE_BIN_PX)))
    status = bars["status"].to_numpy(dtype=object)
    table = pd.DataFrame(
        {
            "key": bars["key"].to_numpy(dtype=object),
            "bin": (starts - lo) // size,
            "fired": status == "fired",
            "not_fired": status == "not fired",
            "merged": status == "merged away",
            # a merged-away window's elements are counted in the window they went into
            "elements": np.where(status == "merged away", 0, bars["elements"].astype("int64")),
            "firings": bars["firings"].astype("int64").to_numpy(),
        }
    )

    def starting_in(b: int) -> str:
        b0 = lo + int(b) * size
        return f"[{x.fmt(b0)}, {x.fmt(b0 + size)})"

    cells = table.groupby(["key", "bin"], sort=False).agg(
        windows=("fired", "size"),
        fired=("fired", "sum"),
        not_fired=("not_fired", "sum"),
        merged=("merged", "sum"),
        elements=("elements", "sum"),
        firings=("firings", "sum"),
    )
    rows = [
        {
            "x": x.clip(lo + int(b) * size)[0],
            "x2": x.clip(lo + int(b) * size + size)[0],
            "key": key,
            "kind": "windows (aggregated)",
            "starting in": starting_in(b),
            "windows": int(c.windows),
            "fired": int(c.fired),
            "not fired": int(c.not_fired),
            "merged away": int(c.merged),
            "elements": int(c.elements),
            "firings": int(c.firings),
            "share fired": round(int(c.fired) / int(c.windows), 3),
        }
        for (key, b), c in zip(cells.index.tolist(), cells.itertuples(index=False), strict=True)
    ]
    most = int(table.groupby("key", sort=False).size().max())
    notes.append(
        f"aggregated: a lane holds up to {most:,} windows, more than {width // MIN_BAR_PX:,} "
        f"({MIN_BAR_PX} px each) — one cell per key and {size:,} ms of window starts, shaded "
        "by the share of its windows that fired; hover for the counts (timeline / explore "
        "draw each window)"
    )
    layers = [
        spec.layer(
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
    ]
    lines = _horizon_spans(table, stamps, derived, (starts, ends), x, lanes, starting_in)
    if lines is not None:
        layers.append(lines)
        lateness = window_lives.allowed_lateness(view, op)
        notes.append(
            "allowed lateness"
            + ("" if lateness is None else f" {lateness:,} ms")
            + ": per cell a line from the earliest to the latest horizon (max timestamp + "
            "lateness) of its windows"
        )
    height = max(60, min(900, len(lanes["scale"]["domain"]) * 24))
    chart = {"layer": layers, "width": width, "height": height}
    return palette.finish(chart, name="window_lanes", notes=notes, heading="Window lanes")


def _horizon_spans(
    table: pd.DataFrame,
    stamps: list[int | None],
    derived: frozenset[tuple[int, int]],
    windows: tuple[np.ndarray, np.ndarray],
    x: TimeAxis,
    lanes: dict[str, Any],
    starting_in: Any,
) -> spec.ChartDict | None:
    """Per cell (rows of ``table`` by key and bin), a line from the earliest to the latest
    allowed-lateness horizon of its windows (``stamps``: each window's, None without one;
    ``derived``: those with no ``cleanup`` record); None when no window has one."""
    has = np.array([t is not None for t in stamps], dtype=bool)
    if not has.any():
        return None
    starts, ends = windows
    found = table[has].assign(
        horizon=np.array([t for t in stamps if t is not None], dtype=np.int64),
        derived=[w in derived for w in zip(starts[has].tolist(), ends[has].tolist(), strict=True)],
    )
    spans = found.groupby(["key", "bin"], sort=False).agg(
        windows=("horizon", "size"),
        earliest=("horizon", "min"),
        latest=("horizon", "max"),
        derived=("derived", "sum"),
    )
    lines = [
        {
            "x": x.clip(int(c.earliest))[0],
            "x2": x.clip(int(c.latest))[0],
            "key": key,
            "line": CELL_HORIZON,
            "kind": "allowed-lateness horizons (aggregated)",
            "windows starting in": starting_in(b),
            "windows with a horizon": int(c.windows),
            "earliest horizon": x.fmt(int(c.earliest)),
            "latest horizon": x.fmt(int(c.latest)),
            "derived (no cleanup record)": int(c.derived),
        }
        for (key, b), c in zip(spans.index.tolist(), spans.itertuples(index=False), strict=True)
    ]
    foot = {k: v for k, v in lanes.items() if k not in ("title", "axis")}
    tips = spec.tooltips(lines, ["x", "x2", "line"])
    foot |= {"bandPosition": 0.85}  # (at the lane's foot; square caps: one horizon a dot)
    dash = {CELL_HORIZON: palette.HORIZON_DASH}
    return horizon_rules(lines, x, {"y": foot}, dash, tips, strokeCap="square")
