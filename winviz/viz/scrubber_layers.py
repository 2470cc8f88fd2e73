"""The scrubber's data and layers (``scrubber``): its windows (``window_rows``) and the layers
drawn at processing time *t* — windows by state, idle periods, the *now* rule, the watermark at
*t*, firings and elements — each a Vega-Lite layer whose filters and colours read the slider's
parameter ``PARAM`` in the browser."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import idle, palette, piles, replay, scale, spec, watermark_steps
from winviz.viz.fates import element_detail_lists
from winviz.viz.firings import firing_marks
from winviz.viz.labels import STACK_STEPS
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceView
from winviz.viz.window_lives import merged_text, window_life_columns, window_lives

PARAM = "t"
"""The slider's Vega-Lite parameter: processing time *t* (``scrubber``)."""

STATES = ("open", "fired", "merged away", "gone")
STATE_COLORS = (
    palette.WINDOW_COLOR, palette.WINDOW_FIRED_COLOR, palette.MERGED_AWAY_COLOR, palette.GONE_COLOR
)  # fmt: skip
FUTURE_COLOR = palette.FADED_COLOR


FIRING_SHAPE = "square"


Size = tuple[int, int]  # a chart's width and height in pixels


# -- data ---------------------------------------------------------------------------------------


def window_rows(view: TraceView, op: str) -> pd.DataFrame:
    """One row per window (all keys): window_start, window_end, keys, opened (first element),
    fired (first firing; NaN if none), closed (last cleanup or session merge; NaN while any
    key's pane is kept), merged_into ("[s, e)" when every key's pane of it was merged away,
    else ""), by (start, end)."""
    # as columns when there is no session merge (no DataFrame), else the frame
    lives = window_life_columns(view, op)
    if lives is None:
        lives = window_lives(view, op)
    columns = ["window_start", "window_end", "keys", "opened", "fired", "closed", "merged_into"]
    if lives.empty:
        return pd.DataFrame(columns=columns)
    # (key, window) rows grouped by window, in (start, end) order; a group's rows in their
    # order in ``lives`` (a stable sort)
    starts = np.asarray(lives["window_start"], dtype=np.int64)
    ends = np.asarray(lives["window_end"], dtype=np.int64)
    order = np.lexsort((ends, starts))
    s_sorted, e_sorted = starts[order], ends[order]
    first = np.flatnonzero(
        np.r_[True, (s_sorted[1:] != s_sorted[:-1]) | (e_sorted[1:] != e_sorted[:-1])]
    )
    sizes = np.diff(np.r_[first, len(order)])
    opened = np.minimum.reduceat(np.asarray(lives["opened"], dtype=np.int64)[order], first)
    closed = lives["closed"]
    if isinstance(closed, pd.Series):  # (ints and None when a session merge closed some)
        closed = pd.to_numeric(closed)
    closed_all = np.asarray(closed, dtype=np.float64)[order]
    cleaned = np.add.reduceat((~np.isnan(closed_all)).astype(np.int64), first)
    closed = np.fmax.reduceat(closed_all, first)  # NaN only where no pane was cleaned
    closed[cleaned < sizes] = np.nan  # a key's pane is kept
    texts = np.asarray(lives["merged_into"], dtype=object)[order].tolist()
    if all(t is None for t in texts):  # no session merge: no text
        merged_into = [""] * len(first)
    else:
        bounds = np.r_[first, len(order)].tolist()
        merged_into = [merged_text(texts[a:b]) for a, b in pairwise(bounds)]
    # the first firing of each window: only the fired records' windows and processing times
    # (not firings.firings, which also words every firing's cause and result)
    rows = view.select("fired", operator=op)
    start, end, present = view.bounds(rows)
    procs = view.numbers("proc_time", rows[present])
    timed = ~np.isnan(procs)  # (a firing without a processing time is no first firing)
    f_start, f_end, f_proc = start[present][timed], end[present][timed], procs[timed]
    by_window = np.lexsort((f_end, f_start))
    f_start, f_end, f_proc = f_start[by_window], f_end[by_window], f_proc[by_window]
    f_first = np.flatnonzero(np.r_[True, (f_start[1:] != f_start[:-1]) | (f_end[1:] != f_end[:-1])])
    first_fired: dict[tuple[int, int], float] = (
        dict(
            zip(
                zip(f_start[f_first].tolist(), f_end[f_first].tolist(), strict=True),
                np.minimum.reduceat(f_proc, f_first).tolist(),
                strict=True,
            )
        )
        if len(f_proc)
        else {}
    )
    w_start, w_end = s_sorted[first], e_sorted[first]
    per = pd.DataFrame(
        {
            "window_start": w_start,
            "window_end": w_end,
            "keys": sizes.astype(np.int64),
            "opened": opened,
            "fired": np.array(
                [
                    first_fired.get(k, np.nan)
                    for k in zip(w_start.tolist(), w_end.tolist(), strict=True)
                ],
                dtype=np.float64,
            ),
            "closed": closed,
            "merged_into": pd.Series(merged_into, dtype=object),
        }
    )
    kept = per["window_start"] < per["window_end"]
    out = per[kept].reset_index(drop=True)
    out.attrs["wrapped"] = int((~kept).sum())  # (the subtitle says how many have no rectangle)
    return out


# -- layers -------------------------------------------------------------------------------------


def window_layer(
    windows: pd.DataFrame, x: TimeAxis, y: TimeAxis, across: bool = False
) -> spec.ChartDict | None:
    """The windows as they stand at t. ``across``: processing-time windows, whose [start,
    end) is processing time: each spans the whole event-time axis (it holds elements of any
    timestamp) over its life."""
    if windows.empty:
        return None
    windows, _ = scale.every_kth(windows, scale.ROW_LIMIT)
    fired, closed = windows["fired"].tolist(), windows["closed"].tolist()
    merged = windows["merged_into"].astype(str).tolist()
    rows = [
        {
            "x": x.lo if across else x.clip(a)[0],
            "x2": x.hi if across else x.clip(b)[0],
            "opened": y.clip(o)[0],
            # NaN (never) → None: JSON null; the expressions below test for it
            "fired": None if f != f else y.clip(f)[0],
            "closed": None if c != c else y.clip(c)[0],
            "kind": "window",
            "window": f"[{x.fmt(a)}, {x.fmt(b)})",
            "keys": k,
            "merged_into": m,
        }
        for a, b, o, f, c, k, m in zip(
            windows["window_start"].tolist(),
            windows["window_end"].tolist(),
            windows["opened"].tolist(),
            fired,
            closed,
            windows["keys"].astype("int64").tolist(),
            merged,
            strict=True,
        )
    ]
    # "merged away" is in the legend only when a session merge absorbed a window
    merged_any = any(m != "" for m in merged)
    shown = set(STATES) if merged_any else set(STATES) - {"merged away"}
    state = (
        f"{PARAM} < datum.opened ? 'not yet' : "
        f"(datum.closed != null && {PARAM} >= datum.closed) ? "
        "(datum.merged_into != '' ? 'merged away' : 'gone') : "
        f"(datum.fired != null && {PARAM} >= datum.fired) ? 'fired' : 'open'"
    )
    transform = [
        {"calculate": state, "as": "state"},
        {"filter": "datum.state != 'not yet'"},
        {
            "calculate": f"datum.closed != null && datum.closed < {PARAM} ? datum.closed : {PARAM}",
            "as": "y2",
        },
    ]
    encoding = {
        "x": x.channel("x"),
        "x2": {"field": "x2"},
        "y": y.channel("opened"),
        "y2": {"field": "y2"},
        "color": {
            "field": "state",
            "type": "nominal",
            "title": "window at t",
            "scale": {
                "domain": [st for st in STATES if st in shown],
                "range": [c for st, c in zip(STATES, STATE_COLORS, strict=True) if st in shown],
            },
        },
        "stroke": {"value": palette.WINDOW_COLOR},
        "tooltip": [
            {"field": "window", "type": "nominal"},
            {"field": "state", "type": "nominal", "title": "state at t"},
            {"field": "keys", "type": "quantitative"},
            {"field": "merged_into", "type": "nominal", "title": "merged into"},
        ],
    }
    mark = {"type": "rect", "fillOpacity": 0.35, "strokeWidth": 1}
    return spec.layer(rows, mark, encoding, transform)


def idle_layer(spans: list[idle.IdleSpan], x: TimeAxis, y: TimeAxis) -> spec.ChartDict | None:
    """The idle periods as they stand at t (``idle.strip_layer``): a span begun by t, drawn
    up to its end or to t, whichever comes first."""
    return idle.strip_layer(
        spans,
        x,
        y,
        [
            {"filter": f"datum.y <= {PARAM}"},
            {"calculate": f"datum.y2 < {PARAM} ? datum.y2 : {PARAM}", "as": "y2_at_t"},
        ],
        y2="y2_at_t",
    )


FIRING_STEP_PX = 11
"""How far right a firing mark of another cause at the point of one is drawn (the timeline's
step for marks at one point): the square is 80 px², about 9 px wide."""


def _side_by_side(
    rows: list[dict[str, Any]], x: TimeAxis, y: TimeAxis, size: Size
) -> piles.Placement:
    """Firing marks that would cover one another (closer than a square's width in pixels),
    side by side by the charts' one rule (``piles.side_by_side``: ``FIRING_STEP_PX`` steps
    right, then left, on the plot; each row's ``dx``, its x / y stay the trace's times)."""
    width, height = size
    sx = width / max(1, x.hi - x.lo)
    sy = height / max(1, y.hi - y.lo)
    places = [((r["x"] - x.lo) * sx, (r["y"] - y.lo) * sy) for r in rows]
    grid = piles.Grid(FIRING_STEP_PX, reach=FIRING_STEP_PX - 1)
    placed = piles.side_by_side(places, FIRING_STEP_PX, width, most=STACK_STEPS, grid=grid)
    for row, d in zip(rows, placed.dx, strict=True):
        row["dx"] = d
    return placed


def firing_layer(
    view: TraceView,
    op: str,
    x: TimeAxis,
    y: TimeAxis,
    size: Size,
    notes: list[str],
    *,
    across: bool = False,
    skew: bool = False,
) -> spec.ChartDict | None:
    """The firings made by t (``firings.firing_marks``: at the event time of the timer that
    fired them, else the window end, and their processing time), coloured by cause as on the
    timeline ("fired: …", ``palette.FIRED_EVENT``); firings at one point are one mark with
    their count. ``across``: processing-time windows, drawn on the right edge. ``skew``: the
    skew mode's axes (x: processing time, y: processing time − that event time)."""
    marks = firing_marks(view, op)
    if not len(marks):
        return None
    groups: dict[tuple[Any, Any, str], list[int]] = {}
    clipped = 0  # (skew mode) firings whose skew lies beyond the axis: drawn on its edge
    for i, (at, proc, by) in enumerate(
        zip(
            marks["at"].tolist(),
            marks["proc_time"].tolist(),
            marks["fired_by"].tolist(),
            strict=True,
        )
    ):
        if proc is None or at is None:
            continue
        if skew:
            sy, edge = y.clip(int(proc) - int(at))
            clipped += bool(edge)
            point = (x.clip(proc)[0], sy)
        else:
            point = (x.hi if across else x.clip(at)[0], y.clip(proc)[0])
        what = palette.FIRED_EVENT.get(by, palette.FIRED_EVENT["cause not traced"])
        groups.setdefault((*point, what), []).append(i)
    starts, ends = marks["window_start"].tolist(), marks["window_end"].tolist()
    procs = marks["proc_time"].tolist()
    rows = []
    for (fx, fy, what), idx in groups.items():
        windows = list(dict.fromkeys(f"[{x.fmt(starts[i])}, {x.fmt(ends[i])})" for i in idx))
        rows.append(
            {
                "x": fx,
                "y": fy,
                "fired": y.clip(procs[idx[0]])[0] if not skew else x.clip(procs[idx[0]])[0],
                "what": what,
                "kind": "fired",
                "firings": len(idx),
                "window": ", ".join(windows[:3])
                + (f" … ({len(windows)})" if len(windows) > 3 else ""),
                "proc_time": (x if skew else y).fmt(procs[idx[0]]),
            }
        )
    k = -(-len(rows) // scale.ROW_LIMIT)  # a regular sample of at most ROW_LIMIT marks
    rows = rows[::k]
    placed = _side_by_side(rows, x, y, size)
    if placed.counted:
        rows = piles.count_on(rows, placed)
    n = len(marks)
    notes.append(
        f"{n:,} firing{'' if n == 1 else 's'} (squares, by cause, as on the timeline) shown once "
        "made" + (f"; every {k}th firing mark drawn" if k > 1 else "")
    )
    notes += piles.moved_note(placed, "firing mark", FIRING_STEP_PX, "a thick outline")
    if clipped:
        notes.append(
            f"{clipped:,} firing(s) lie beyond the skew axis (processing time − their timer's "
            "time): drawn on its edge"
        )
    present = [c for c in palette.WINDOW_EVENTS if any(r["what"] == c for r in rows)]
    colours = dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_COLORS, strict=True))
    return spec.layer(
        rows,
        {
            "type": "point",
            "filled": True,
            "shape": FIRING_SHAPE,
            "size": 80,
            "stroke": palette.INK,
            "strokeWidth": 0.5,
            "xOffset": {"expr": "datum.dx"},
        },
        {
            "x": x.channel("x"),
            "y": y.channel("y"),
            "color": {
                "field": "what",
                "type": "nominal",
                "title": "firing",
                "scale": {"domain": present, "range": [colours[c] for c in present]},
            },
            "tooltip": spec.tooltips(rows, ["x", "y", "fired"]),
            **_pile_outline(placed),
        },
        [{"filter": f"datum.fired <= {PARAM}"}],
    )


def _pile_outline(placed: piles.Placement) -> dict[str, Any]:
    """A thick outline on a firing mark others were counted on (``piles``), if any was."""
    if not placed.counted:
        return {}
    test = f"datum[{piles.ALSO_HERE!r}] > 0"
    return {"strokeWidth": {"condition": {"test": test, "value": 2.5}, "value": 0.5}}


def now_layer(x: TimeAxis, y: TimeAxis) -> spec.ChartDict:
    return spec.layer(
        [{"kind": "now"}],
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 1, "strokeDash": [2, 2]},
        {
            "y": y.channel("y"),
            "tooltip": [{"field": "y", "type": "quantitative", "title": "t (processing time)"}],
        },
        [{"calculate": PARAM, "as": "y"}],
    )


def watermark_layers(steps: pd.DataFrame, x: TimeAxis, y: TimeAxis) -> list:
    if steps.empty:
        return []
    thinned = scale.thin_steps(steps, "proc_time", "operator", scale.ROW_LIMIT)
    marks = thinned["watermark"].tolist()
    rows = [
        {
            "proc": y.clip(p)[0],
            "x": x.clip(w)[0],
            "seq": q,
            "kind": "watermark at t",
            "watermark": x.fmt(w),
        }
        for p, w, q in zip(
            thinned["proc_time"].tolist(),
            marks,
            thinned["seq"].astype("int64").tolist(),
            strict=True,
        )
    ]
    # the last watermark record at or before t
    latest = [
        {"filter": f"datum.proc <= {PARAM}"},
        {
            "window": [{"op": "row_number", "field": "", "as": "rank"}],
            "sort": [{"field": "seq", "order": "descending"}],
        },
        {"filter": "datum.rank == 1"},
    ]
    rule = spec.layer(
        rows,
        {"type": "rule", "color": palette.WATERMARK_COLOR, "strokeWidth": 2},
        {
            "x": x.channel("x"),
            "tooltip": [
                {"field": "kind", "type": "nominal"},
                {"field": "watermark", "type": "nominal"},
            ],
        },
        latest,
    )
    # above the plot's top edge, where no mark is (inside it crossed the elements); right of
    # the rule in the left half of the axis, left of it in the right half: it never runs off
    # the plot into the legend (issue 26: "watermark MAX …" at the right edge crossed the
    # legend's title)
    right_half = f"datum.x > {(x.lo + x.hi) / 2}"
    label = spec.layer(
        rows,
        {
            "type": "text",
            "align": {"expr": f"{right_half} ? 'right' : 'left'"},
            "baseline": "bottom",
            "dx": {"expr": f"{right_half} ? -4 : 4"},
            "dy": -3,
            "fontSize": 11,
            "font": "sans-serif",
        },
        {"x": x.channel("x"), "y": {"value": 0}, "text": {"field": "label", "type": "nominal"}},
        [*latest, {"calculate": "'watermark ' + datum.watermark", "as": "label"}],
    )
    return [rule, label]


def element_layers(
    view: TraceView,
    elements: Columns,
    fate_codes: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    future: str,
    max_points: int,
    notes: list[str],
) -> list:
    if elements.empty:
        return []
    again: list[str | None] | None = None
    if len(elements) > max_points:
        rows = _binned(elements, fate_codes, x, y, max_points, notes)
    else:
        d = element_detail_lists(view, elements["seq"])
        procs = elements["proc_time"].tolist()
        restarts = watermark_steps.restarts(view)
        if restarts:
            seqs = elements["seq"].astype("int64").tolist()
            again = replay.read_again(seqs, d["source_index"], d["ts"], d["value"], restarts)
        rows = [
            {
                "x": ex,
                "y": py,
                "arrived": py,
                "fate": fate,
                "kind": "element",
                "seq": seq,
                "key": key,
                "value": value,
                "ts": ts,
                "proc_time": proc,
            }
            for (ex, _), (py, _), fate, seq, key, value, ts, proc in zip(
                x.clip_all(d["ts"]),
                y.clip_all(procs),
                elements["fate"].tolist(),
                elements["seq"].astype("int64").tolist(),
                d["key"],
                d["value"],
                x.fmt_all(d["ts"]),
                y.fmt_all(procs),
                strict=True,
            )
        ]
    columns = list(rows[0]) if rows else []
    tips = [  # the integer columns (seq, count) are quantitative
        {"field": c, "type": "quantitative" if c in ("seq", "count") else "nominal"}
        for c in columns
        if c not in ("x", "y", "arrived")
    ]
    layers = []
    if future == "fade":
        layers.append(
            spec.layer(
                rows,
                {
                    "type": "point",
                    "color": FUTURE_COLOR,
                    "filled": True,
                    "opacity": 0.35,
                    "size": 40,
                },
                {"x": x.channel("x"), "y": y.channel("y"), "tooltip": tips},
                [{"filter": f"datum.arrived > {PARAM}"}],
            )
        )
    size: dict[str, Any] = {"value": 70}
    if "count" in columns:
        size = {
            "field": "count",
            "type": "quantitative",
            "scale": {"type": "sqrt", "range": [8, 160]},
            "title": "elements",
        }
    fates = {"domain": list(palette.FATES)}
    arrived = {"type": "point", "filled": True, "opacity": 0.9}
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "color": {
            "field": "fate",
            "type": "nominal",
            "title": "element",
            "scale": {**fates, "range": list(palette.FATE_COLORS)},
        },
        "shape": {
            "field": "fate",
            "type": "nominal",
            "title": "element",
            "scale": {**fates, "range": list(palette.FATE_SHAPES)},
        },
        "size": size,
        "tooltip": tips,
    }
    shown = [{"filter": f"datum.arrived <= {PARAM}"}]
    rows, replayed = replay.split(rows, [None] * len(rows) if again is None else again)
    layers.append(spec.layer(rows, arrived, encoding, shown))
    if replayed:  # read again after a restart: hollow, around the first reading
        notes.append(replay.note(replayed))
        tips = [*tips, {"field": replay.FIELD, "type": "nominal"}]
        del encoding["size"]
        # its own legend (the scrubber's legends are independent): the fates read again
        present = [f for f in palette.FATES if any(r["fate"] == f for r in replayed)]
        for channel, values in (("color", palette.FATE_COLORS), ("shape", palette.FATE_SHAPES)):
            kept = [values[palette.FATES.index(f)] for f in present]
            legend = {"title": replay.LEGEND, "scale": {"domain": present, "range": kept}}
            encoding[channel] = encoding[channel] | legend
        layers.append(
            spec.layer(
                replayed,
                replay.mark(arrived, size["value"]),
                encoding | {"tooltip": tips},
                shown,
            )
        )
    return layers


def _binned(
    elements: Columns,
    fate_codes: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
) -> list[dict[str, Any]]:
    cells, nx, ny = scale.bin_elements(elements, (x.lo, x.hi), (y.lo, y.hi), max_points, fate_codes)
    notes.append(
        f"{len(elements):,} elements binned on a {nx} × {ny} grid (a cell shows once its "
        "first element has arrived)"
    )
    return [
        {
            "x": cx,
            "y": cy,
            "arrived": lo,
            "fate": fate,
            "count": count,
            "kind": "elements (binned)",
            "proc_time": f"{y.fmt(a)} .. {y.fmt(b)}",
        }
        for cx, cy, lo, fate, count, a, b in zip(
            cells["x"].round().astype("int64").tolist(),
            cells["y"].round().astype("int64").tolist(),
            cells["y_min"].round().astype("int64").tolist(),
            cells["fate"].tolist(),
            cells["count"].astype("int64").tolist(),
            cells["y_min"].round().tolist(),
            cells["y_max"].round().tolist(),
            strict=True,
        )
    ]
