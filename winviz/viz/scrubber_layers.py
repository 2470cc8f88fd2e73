"""The scrubber's data and layers (``scrubber``): its windows (``window_rows``) and the layers
drawn at processing time *t* — windows by state, idle periods, the *now* rule, the watermark at
*t*, firings and elements — each a Vega-Lite layer whose filters and colours read the slider's
parameter ``PARAM`` in the browser."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import bands, idle, labels, palette, piles, replay, scale, spec, watermark_steps
from winviz.viz.fates import element_detail_lists
from winviz.viz.firings import firing_columns, firing_marks
from winviz.viz.labels import STACK_STEPS
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceView
from winviz.viz.window_lives import merged_text, window_life_columns, window_lives
from winviz.viz.window_marks import DETAIL_LIMIT

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
    windows: pd.DataFrame, x: TimeAxis, y: TimeAxis, across: bool = False, height: int = 400
) -> spec.ChartDict | None:
    """The windows as they stand at t: a window from its opening (first element) to its
    close or t, whichever comes first, once t has reached its opening. ``across``:
    processing-time windows, whose [start, end) is processing time: each spans the whole
    event-time axis (it holds elements of any timestamp) over its life. As the timeline's
    bands (``bands._visible_span``), a drawn window is at least ``bands.MIN_BAND_PX`` high in
    the plot's ``height``: shorter (one opened and fired at one time, or t just past its
    opening), it is drawn that high centred on its middle, inside the axis (``y`` and ``y2``
    below; its tooltip gives no times)."""
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
        *_visible_span_at_t(y, height),
    ]
    encoding = {
        "x": x.channel("x"),
        "x2": {"field": "x2"},
        "y": y.channel("y"),
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


def _visible_span_at_t(y: TimeAxis, height: int) -> list[dict[str, str]]:
    """``bands._visible_span`` in Vega, for a window drawn from ``datum.opened`` to
    ``datum.y2`` (its close or t): as ``y`` and ``y2``, itself when at least
    ``bands.MIN_BAND_PX`` high, else that high centred on its middle, moved inside the axis
    at its ends."""
    least = bands.least_span(y, height)
    short = f"datum.y2 - datum.opened < {least}"
    low = f"clamp((datum.opened + datum.y2) / 2 - {least / 2}, {y.lo}, {y.hi - least})"
    return [
        {"calculate": f"{short} ? {low} : datum.opened", "as": "y"},
        {"calculate": f"{short} ? datum.y + {least} : datum.y2", "as": "y2"},
    ]


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
    avoid: Sequence[Any] = (),
) -> tuple[spec.ChartDict | None, list[spec.ChartDict]]:
    """The firings made by t (``firings.firing_marks``: at the event time of the timer that
    fired them, else the window end, and their processing time), coloured by cause as on the
    timeline ("fired: …", ``palette.FIRED_EVENT``); firings of one cause at one point are one
    mark, and a count badge "×n" beside it (``_count_layer``) shows how many: every firing
    is in sight. ``across``: processing-time windows, drawn on the right edge. ``skew``: the
    skew mode's axes (x: processing time, y: processing time − that event time). ``avoid``:
    the layers drawn with them (elements, labels) whose marks a badge keeps off. Returns the
    squares' layer (None: no firing), drawn under the elements, and the layers drawn over
    them: the end of input's square outlines (``_end_outline``) then the badges'
    (``_count_layer``)."""
    marks = firing_marks(view, op)
    if not len(marks):
        return None, []
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
    words = _firing_words(view, op, marks)
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
                **({} if words is None else {"firing": _counted_words(words[i] for i in idx)}),
            }
        )
    k = -(-len(rows) // scale.ROW_LIMIT)  # a regular sample of at most ROW_LIMIT marks
    rows = rows[::k]
    placed = _side_by_side(rows, x, y, size)
    here = _firings_here(rows, placed)
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
    badges = _count_layer(rows, here, labels.Plot(x, y, *size), avoid, notes, skew=skew)
    present = [c for c in palette.WINDOW_EVENTS if any(r["what"] == c for r in rows)]
    colours = dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_COLORS, strict=True))
    squares = spec.layer(
        rows,
        {
            "type": "point",
            "filled": True,
            "shape": FIRING_SHAPE,
            "size": FIRING_SIZE,
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
            **_pile_outline(placed, any(UNCOUNTED in r for r in rows)),
        },
        [{"filter": f"datum.fired <= {PARAM}"}],
    )
    return squares, [*_end_outline(rows, x, y), *badges]


FIRING_SIZE = 80
"""A firing square's area (px²)."""
END_OUTLINE = "end of input (outline)"
"""The kind of the end of input's square outlines (``_end_outline``)."""
END_OUTLINE_SIZE = round((FIRING_SIZE**0.5 - 1) ** 2)
"""The outline's area (px²): its 1.5 px stroke within the 0.5 px edge of the square."""


def _end_outline(rows: list[dict[str, Any]], x: TimeAxis, y: TimeAxis) -> list[spec.ChartDict]:
    """The end of input's firing squares again, as outlines drawn over the elements: it fires
    where the run ends, among its last elements, which would hide its square (drawn under
    them, as every firing's, so an element there stays in sight: inside the outline)."""
    end = palette.FIRED_EVENT["end of input"]
    out = [r | {"kind": END_OUTLINE} for r in rows if r["what"] == end]
    if not out:
        return []
    mark = {
        "type": "point",
        "filled": False,
        "shape": FIRING_SHAPE,
        "size": END_OUTLINE_SIZE,
        "color": dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_COLORS, strict=True))[end],
        "strokeWidth": 1.5,
        "xOffset": {"expr": "datum.dx"},
    }
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "tooltip": spec.tooltips(out, ["x", "y", "fired"]),
    }
    return [spec.layer(out, mark, encoding, [{"filter": f"datum.fired <= {PARAM}"}])]


def _firing_words(view: TraceView, op: str, marks: Columns) -> list[str] | None:
    """Each of ``marks``' firings in the one vocabulary (``firings.firing_columns``:
    "first firing" / "re-firing", ", late firing" when it is one), in their order; None over
    ``DETAIL_LIMIT`` firings (the words are the timeline's detail: not read for many)."""
    if len(marks) > DETAIL_LIMIT:
        return None
    cols = firing_columns(view, op)
    said = {
        s: f + (", late firing" if late else "")
        for s, f, late in zip(
            cols["seq"].tolist(), cols["firing"].tolist(), cols["late_firing"].tolist(),
            strict=True,
        )
    }  # fmt: skip
    return [said[s] for s in marks["seq"].tolist()]


def _counted_words(words: Iterable[str]) -> str:
    """The firings of one mark in words, each once with how many: "first firing ×2;
    re-firing, late firing"."""
    counts = Counter(words)
    return "; ".join(w if n == 1 else f"{w} ×{n}" for w, n in counts.items())


def _firings_here(rows: list[dict[str, Any]], placed: piles.Placement) -> list[int]:
    """How many firings each of ``rows``' marks stands for: its own (``firings``) and those
    of the marks counted on it (``piles``: they are not drawn)."""
    here = [r["firings"] for r in rows]
    for row, on in zip(rows, placed.counted_on, strict=True):
        if on is not None and 0 <= on - placed.first < len(rows):
            here[on - placed.first] += row["firings"]
    return [n for n, on in zip(here, placed.counted_on, strict=True) if on is None]


BADGE_PLACES = tuple(
    (align, dx if align == "left" else -dx, dy)
    for dx, dy in ((7, 0), (7, -9), (7, 9), (7, -15), (7, 15), (19, -21), (19, 21), (31, 0),
                   (19, -33), (19, 33), (43, 0), (31, -45), (31, 45))
    for align in ("left", "right")
)  # fmt: skip
"""Where a count badge may go, in order of preference: (align, dx, dy) from its square —
right of it, left of it, above or below (within ``labels.LABEL_REACH_PX`` of the square, so
it is read as its), then farther out, joined to its square by a leader line
(``labels.label_leaders``, as a firing label far from its mark) — first those on the side
of the square the "now" rule has passed (``_behind_now``)."""

UNCOUNTED = "firings here (no badge)"
"""The tooltip field of a square whose count badge found no free place: how many firings it
stands for (a thick outline marks it, as a square others were counted on)."""

COUNT_NOTE = (
    "×n beside a firing square: n firings at that point (one cause, one processing time — "
    "e.g. one timer firing the window of n keys); hover the square for each one's first "
    "firing / re-firing and late firing"
)
"""The subtitle's words for the count badges (``_count_layer``)."""


def _count_layer(
    rows: list[dict[str, Any]],
    here: list[int],
    plot: labels.Plot,
    avoid: Sequence[Any],
    notes: list[str],
    *,
    skew: bool = False,
) -> list[spec.ChartDict]:
    """A count badge "×n" beside each firing mark (``rows``, drawn) that stands for n > 1
    firings (``here``), shown once made: at the first place of ``BADGE_PLACES`` inside the
    plot that crosses no firing mark, no point or text of the ``avoid`` layers and no other
    badge (a text's box measured as ``labels`` measures one; off the "now" rule first,
    ``skew``: the skew mode's rule), with its leader line if it lies
    farther out: the leaders' layer and the badges', none when no mark stands for several
    or no badge found a place (the subtitle says how many did not)."""
    badges = [
        {"x": r["x"], "y": r["y"], "label": f"×{n}", "row": r, "firings": n}
        for r, n in zip(rows, here, strict=True)
        if n > 1
    ]
    if not badges:
        return []
    taken = labels._Boxes()
    labels._taken_by_marks(taken, avoid, plot, lines=False)
    taken.add_small(_text_boxes(avoid, plot))
    half = math.sqrt(FIRING_SIZE) / 2 + 1
    taken.add_small(
        [
            (plot.px(r["x"]) + r["dx"] - half, plot.py(r["y"]) - half,
             plot.px(r["x"]) + r["dx"] + half, plot.py(r["y"]) + half)
            for r in rows
        ]
    )  # fmt: skip
    placed: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    hidden = 0
    for b in sorted(badges, key=lambda b: (-b["y"], b["x"])):  # top to bottom, left to right
        px, py, shift = plot.px(b["x"]) + b["row"]["dx"], plot.py(b["y"]), b["row"]["dx"]
        boxes = [(p, labels._text_box(px, py, b["label"], *p)) for p in BADGE_PLACES]
        boxes.sort(key=lambda pb: not _behind_now(pb[1], plot, b, skew))  # (stable)
        for (align, dx, dy), box in boxes:
            if _inside(box, plot) and not taken.hits(box):
                taken.add(box)
                row = {k: v for k, v in b.items() if k != "row"} | {"shift": shift}
                row |= {"fired": b["row"]["fired"], "window": b["row"]["window"]}
                placed.setdefault((align, dx + shift, dy), []).append(row)
                break
        else:
            hidden += 1
            b["row"][UNCOUNTED] = b["firings"]
    notes.append(COUNT_NOTE)
    if hidden:
        notes.append(
            f"{hidden} count badge(s) left out where they would cross a mark: a thick outline "
            f"marks their square (hover it: '{UNCOUNTED}')"
        )
    if not placed:
        return []
    out = [
        {k: v for k, v in r.items() if k != "shift"}
        | {"kind": "firing count", "align": align, "dx": dx, "dy": dy}
        for (align, dx, dy), rows in placed.items()
        for r in rows
    ]
    shown = [{"filter": f"datum.fired <= {PARAM}"}]
    channels = {"x": plot.x.channel("x"), "y": plot.y.channel("y")}
    layers = []
    fired = {(r["x"], r["y"], r["label"]): r["fired"] for r in out}
    leaders = [
        r | {"fired": fired[(r["x"], r["y"], r["label"])], "kind": "leader"}
        for r in labels.label_leaders(placed, radius=math.sqrt(FIRING_SIZE) / 2)
    ]
    if leaders:  # from a square to its badge placed beyond reach
        ends = {k: {"expr": f"datum.{k}"} for k in ("xOffset", "yOffset", "x2Offset", "y2Offset")}
        mark = {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 0.75} | ends
        encoding = channels | {"x2": {"field": "x"}, "y2": {"field": "y"}}
        layers.append(spec.layer(leaders, mark, encoding, shown))
    text = {
        "type": "text",
        "align": {"expr": "datum.align"},
        "baseline": "middle",
        "dx": {"expr": "datum.dx"},
        "dy": {"expr": "datum.dy"},
        "fontSize": labels.LABEL_FONT,
        "font": "sans-serif",
        "color": palette.INK,
    }
    tips = [{"field": "firings", "type": "quantitative"}, {"field": "window", "type": "nominal"}]
    encoding = channels | {"text": {"field": "label", "type": "nominal"}, "tooltip": tips}
    return [*layers, spec.layer(out, text, encoding, shown)]


def _inside(box: labels.Box, plot: labels.Plot) -> bool:
    return box[0] >= 0 and box[1] >= 0 and box[2] <= plot.width and box[3] <= plot.height


def _behind_now(box: labels.Box, plot: labels.Plot, badge: dict[str, Any], skew: bool) -> bool:
    """Whether a badge's ``box`` lies wholly on the side of its firing's processing time that
    the "now" rule (``now_layer``; 1 px wide) has passed once the badge is shown (t ≥ that
    time), so the rule never crosses it: below it (processing time runs up), or left of it in
    the skew mode (processing time runs right). A badge goes there where it finds room (at
    the plot's edge it may not: then the rule crosses it only while t is near its time)."""
    if skew:
        return box[2] < plot.px(badge["x"]) - 0.5
    return box[1] > plot.py(badge["y"]) + 0.5


def _text_boxes(layers: Sequence[Any], plot: labels.Plot) -> list[labels.Box]:
    """The pixel boxes of the texts of ``layers``' text marks whose place is fixed (align,
    baseline, dx, dy numbers: the skew chart's "watermark lag" label), as ``labels`` measures
    a text."""
    boxes = []
    for layer in layers:
        mark = layer["mark"]
        if mark["type"] != "text" or isinstance(mark.get("align", "left"), dict):
            continue
        h = mark.get("fontSize", labels.LABEL_FONT) + 2
        char = labels.CHAR_PX * h / (labels.LABEL_FONT + 2)
        for r in spec.rows(layer):
            text, px, py = str(r.get("text", "")), plot.px(r["x"]), plot.py(r["y"])
            w = char * len(text)
            left = (
                px
                + mark.get("dx", 0)
                - {"left": 0, "center": w / 2, "right": w}[mark.get("align", "center")]
            )
            top = (
                py
                + mark.get("dy", 0)
                - {"top": 0, "middle": h / 2, "bottom": h}[mark.get("baseline", "middle")]
            )
            boxes.append((left, top, left + w, top + h))
    return boxes


def _pile_outline(placed: piles.Placement, uncounted: bool) -> dict[str, Any]:
    """A thick outline on a firing mark others were counted on (``piles``), if any was, and
    on one whose count badge found no place (``uncounted``: any did, ``UNCOUNTED``)."""
    tests = [f"datum[{piles.ALSO_HERE!r}] > 0"] if placed.counted else []
    tests += [f"datum[{UNCOUNTED!r}] > 1"] if uncounted else []
    if not tests:
        return {}
    test = " || ".join(tests)
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
