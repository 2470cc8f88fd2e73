"""``scrubber``: the timeline as it stood at processing time *t*, with *t* on a slider.

*t* is a Vega-Lite parameter (``PARAM``) bound to a range input (no kernel needed): it drives
only the filters and colours of the layers — windows by state, idle periods, the *now* rule,
the watermark at *t*, elements and firings. The window bands and elements are the timeline's
(``bands._bands``, ``timeline._elements``) with an as-of-t filter; the firings are squares
per point and cause with a count badge "×n" (issue 26). A "play" checkbox replays the run,
as in Akidau's streaming animations: the spec carries the settings (``replay_settings``), the
page's script (``view_script``) plays them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from winviz.trace import restores
from winviz.viz import (
    bands,
    idle,
    labels,
    palette,
    piles,
    replay,
    scale,
    spec,
    watermark_steps,
    window_marks,
)
from winviz.viz.boxes import Taken
from winviz.viz.fates import element_fate_columns
from winviz.viz.firings import firing_columns, firing_marks
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.skew import skew_of_view
from winviz.viz.timeline import _elements, auto_view
from winviz.viz.trace_view import Columns, TraceView, open_trace
from winviz.viz.validation import check_size
from winviz.viz.window_lives import pairs_text, processing_time_windows, window_life_columns
from winviz.viz.window_marks import DETAIL_LIMIT

PARAM = "t"  # the slider's Vega-Lite parameter: processing time t
PLAY_PARAM = "play"
STATE_COLORS = {
    "open": palette.WINDOW_COLOR, "fired": palette.WINDOW_FIRED_COLOR,
    "merged away": palette.MERGED_AWAY_COLOR, "gone": palette.GONE_COLOR,
}  # fmt: skip

Size = tuple[int, int]  # a chart's width and height in pixels
Rows = list[dict[str, Any]]  # a layer's rows
TICK_MS = 100  # replay: t advances once per this many milliseconds while "play" is ticked
REPLAY_SECONDS = 10.0  # replay: the default time from the first processing time to the last


@palette.public_chart("scrubber")
def scrubber(
    trace: Any,
    *,
    operator: str | None = None,
    at: int | None = None,
    future: Literal["fade", "hide"] = "fade",
    max_points: int = scale.ROW_LIMIT,
    replay: bool = True,
    replay_seconds: float = REPLAY_SECONDS,
    width: int = palette.WIDTH,
    height: int = palette.HEIGHT,
    view: Literal["timeline", "skew", "auto"] = "timeline",
) -> spec.ChartDict:
    """The timeline at processing time ``t``, with a slider for ``t`` starting at ``at``
    (default: the end). ``future``: elements not yet arrived drawn faint ("fade") or not at
    all ("hide"). ``replay``: a "play" checkbox running ``t`` to the end in about
    ``replay_seconds``. ``view``: "skew" scrubs the skew chart (``skew_scrubber``), "auto"
    when ``timeline.auto_view`` would. Bad input gives a message card."""
    if future not in ("fade", "hide"):
        raise ValueError(f"future must be 'fade' or 'hide', got {future!r}")
    if not 1 <= max_points <= scale.ROW_LIMIT:
        raise ValueError(f"max_points must be in 1..{scale.ROW_LIMIT}, got {max_points}")
    if isinstance(replay_seconds, bool) or not (
        isinstance(replay_seconds, (int, float)) and 0.5 <= replay_seconds <= 3600
    ):
        raise ValueError(f"replay_seconds must be a number in 0.5..3600, got {replay_seconds!r}")
    if view not in ("timeline", "skew", "auto"):
        raise ValueError(f"view must be 'timeline', 'skew' or 'auto'; got {view!r}")
    check_size(width, height)
    opened, seconds = open_trace(trace), replay_seconds if replay else None
    if view != "timeline":
        op = pick_operator(opened, operator)
        reason = auto_view(opened, op) if view == "auto" else None
        if view == "skew" or reason is not None:
            return skew_scrubber(opened, op, at, max_points, seconds, (width, height), reason)
    return _scrubber(opened, operator, at, future, max_points, seconds, (width, height))


SCRUBBER_PARTS: dict[str, tuple[str, ...] | None] = {
    "operator": None,  # (whole: cheaper than the part of the many kinds selected by operator)
    "proc_time": ("element", "watermark", "fired", "cleanup", "assigned"),
    "watermark": ("element", "watermark"),
}
"""The fields the scrubber reads for several kinds, each read once (``TraceView.read_parts``)."""


def _scrubber(
    view: TraceView,
    operator: str | None,
    at: int | None,
    future: str,
    max_points: int,
    replay_seconds: float | None,
    size: Size,
) -> spec.ChartDict:
    view.read_parts(SCRUBBER_PARTS)
    op = pick_operator(view, operator)
    elements = element_fate_columns(view, op)
    drawn = ~np.isnan(elements["ts"]) & ~np.isnan(elements["proc_time"])
    if not drawn.all():
        elements = elements.take(drawn)
    steps = watermark_steps.watermark_steps(view)
    steps = steps[steps["operator"] == op]
    lives = window_life_columns(view, op)
    per_window = None if lives is None else bands.per_window(view, op, lives)  # (as kept)
    windows = [w for w in per_window or () if w.window_start < w.window_end]  # (as the bands)
    # processing-time windows: [start, end) is processing time, nothing on the event-time axis
    across = bool(windows) and processing_time_windows(view, op)
    spans = [] if across else [np.array([w[i] for w in windows], dtype=np.int64) for i in (0, 1)]
    drawn = len(elements) or len(windows)
    x_extent = scale.extent(elements["ts"], *spans) if drawn else scale.extent(steps["watermark"])
    x = palette.time_axis("event time", x_extent)
    times = [w.opened for w in windows] + [w.closed for w in windows if w.closed is not None]
    times = np.array(times, dtype=np.int64)
    finite = scale.extent(elements["proc_time"], steps["proc_time"], times)
    y = palette.time_axis("processing time", finite)
    if len(view.select("fired", operator=op)):  # room for the last firings' count badges
        y = labels._label_room(y, size[1])
    notes = [
        f"operator {op!r}: {replay.elements_text(view.trace, elements)}, "
        f"{pairs_text(sum(w.keys for w in windows), len(windows))}"
        "; move the slider to see the run at processing time t"
    ]
    if across:
        notes.append(
            "processing-time windows: [start, end) is processing time — a window holds the "
            "elements that reached the operator then, whatever their timestamps: it spans the "
            "event-time axis over its life in processing time"
        )
    fired = bands.kept_times(view, op, "fired")
    t_range = (min(finite), max(finite)) if finite else (y.lo, y.hi)
    window_drawn = window_layer(per_window, fired, x, y, notes, across, size[1], t_range)
    if spans := idle.idle_spans(view):
        notes.append(idle.lines_text(spans) + " as they stand at t")
    element_notes: list[str] = []  # (said after the firings')
    points = element_layers(view, elements, x, y, future, max_points, element_notes)
    # firings under the elements (an element on a square stays in sight), badges over both
    firings, badges = firing_layer(view, op, x, y, size, notes, across=across, avoid=points)
    notes += element_notes
    idle_at_t = [  # an idle period begun by t, up to its end or t
        {"filter": f"datum.y <= {PARAM}"},
        {"calculate": f"datum.y2 < {PARAM} ? datum.y2 : {PARAM}", "as": "y2_at_t"},
    ]
    layers = [
        window_drawn,
        idle.strip_layer(spans, x, y, idle_at_t, y2="y2_at_t"),
        now_layer(y),
        *watermark_layers(steps, x, y),
        firings,
        *points,
        *badges,
    ]
    if replay_seconds is not None:
        notes[0] += "; tick play to replay it"
    layers = [lay for lay in layers if lay is not None]
    return _finished(layers, "Scrubber", notes, size, t_range, at, replay_seconds)


def skew_scrubber(
    view: TraceView,
    op: str,
    at: int | None,
    max_points: int,
    replay_seconds: float | None,
    size: Size,
    chosen: str | None = None,
) -> spec.ChartDict:
    """The skew chart (``skew.skew_of_view``) as it stood at processing time t, t a vertical
    rule. ``chosen``: why ``view="auto"`` drew it."""
    chart = skew_of_view(view, op, max_points, *size)
    meta = chart["usermeta"]["winviz"]
    if meta.get("status") != "ok":
        return chart
    layers = chart["layer"]
    enc = layers[0]["encoding"]
    (x_lo, x_hi), (y_lo, y_hi) = enc["x"]["scale"]["domain"], enc["y"]["scale"]["domain"]
    kind = palette.time_axis("processing time", [x_lo, x_hi]).kind
    x = TimeAxis("processing time", kind, x_lo, x_hi)
    y = TimeAxis("processing time − event time", "ms", y_lo, y_hi)
    notes = [] if chosen is None else [chosen.replace("timeline(", "scrubber(")]
    notes += meta.get("notes", [])
    timed = ("element", "elements (binned)", "watermark lag", "label")  # (x: a processing time)
    xs = [r["x"] for lay in layers for r in spec.rows(lay) if r.get("kind") in timed]
    kinds = [spec.rows(lay)[0].get("kind") if spec.rows(lay) else None for lay in layers]
    for layer, kind in zip(layers, kinds, strict=True):
        if kind in timed:
            layer["transform"] = [{"filter": f"datum.x <= {PARAM}"}]
    if "elements (binned)" in kinds:
        notes.append("a binned mark shows once its cell's mean processing time is reached")
    t_range = (max(x_lo, int(min(xs))), min(x_hi, int(max(xs)))) if xs else (x_lo, x_hi)
    squares, badges = firing_layer(view, op, x, y, size, notes, skew=True, avoid=layers)
    # the squares under the elements (as in the timeline mode), the badges over all
    points = [i for i, k in enumerate(kinds) if k in ("element", "elements (binned)")]
    under = points[0] if points else len(layers)
    layers = [*layers[:under], *([squares] if squares is not None else []), *layers[under:]]
    layers = [*layers, now_layer(x, "x"), *badges]
    notes[1 if chosen else 0] += "; move the slider to see the run at processing time t"
    return _finished(layers, "Scrubber (skew)", notes, size, t_range, at, replay_seconds)


def replay_settings(t_lo: int, t_hi: int, step: int, seconds: float) -> dict[str, Any]:
    """What the replay needs: the parameters, the slider's range, the tick's period and the
    step ``t`` advances per tick (a multiple of the slider's ``step``)."""
    frames_ = max(1, round(seconds * 1000 / TICK_MS))
    span = max(0, t_hi - t_lo)
    per_tick = max(step, -(-span // (frames_ * step)) * step)
    return {
        "param": PARAM,
        "switch": PLAY_PARAM,
        "min": int(t_lo),
        "max": int(t_hi),
        "tick_ms": TICK_MS,
        "step": int(per_tick),
    }


def _finished(
    layers: list[Any],
    title: str,
    notes: list[str],
    size: Size,
    t_range: tuple[int, int],
    at: int | None,
    replay_seconds: float | None,
) -> spec.ChartDict:
    """A scrubber's layers as its chart: the slider over ``t_range`` starting at ``at`` (None:
    its end), and the play switch and settings given ``replay_seconds``."""
    t_lo, t_hi = t_range
    span = max(1, t_hi - t_lo)
    step = 1 if span <= 2000 else 10 ** max(0, len(str(span // 1000)) - 1)
    start = t_hi if at is None else int(min(max(at, t_lo), t_hi))
    slider = {"input": "range", "max": t_hi, "min": t_lo, "name": "processing time t (ms) "}
    params = [{"name": PARAM, "bind": {**slider, "step": step}, "value": start}]
    if replay_seconds is not None:
        params.append(
            {"name": PLAY_PARAM, "bind": {"input": "checkbox", "name": "play "}, "value": False}
        )
    chart = {
        "layer": layers,
        "width": size[0],
        "height": size[1],
        "params": params,
        "title": palette.title(title, notes),
        "resolve": {"scale": {"color": "independent", "shape": "independent"}},
    }
    chart = palette.finish(chart, name="scrubber", notes=notes)
    if replay_seconds is not None:
        chart["usermeta"]["winviz"]["replay"] = replay_settings(t_lo, t_hi, step, replay_seconds)
    return chart


def window_layer(
    per_window: list[bands._Window] | None,
    fired: dict[tuple[int, int], float],
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    across: bool = False,
    height: int = 400,
    t_range: tuple[float, float] = (-math.inf, math.inf),
) -> spec.ChartDict | None:
    """The timeline's window bands (``bands._bands``; ``fired``: each one's first firing) as
    they stand at t: from the opening to the close or t, at least ``bands.MIN_BAND_PX`` high
    in ``height``, coloured by the window's state at t. The legend names the states some band
    takes at some t of ``t_range`` (``states_over_t``): the browser computes each state, and
    a legend of fixed colours cannot follow t."""
    layer, _ = bands._bands(per_window, {}, x, y, notes, frozenset(), None, across, height, fired)
    if layer is None:
        return None
    shown = states_over_t(spec.rows(layer), *t_range)
    state = (
        f"{PARAM} < datum.opened_at ? 'not yet' : "
        f"(datum.closed_at != null && {PARAM} >= datum.closed_at) ? "
        "(datum.merged_into != '' ? 'merged away' : 'gone') : "
        f"(datum.fired_at != null && {PARAM} >= datum.fired_at) ? 'fired' : 'open'"
    )
    least = bands.least_span(y, height)
    short = f"datum.y2 - datum.opened_at < {least}"
    low = f"clamp((datum.opened_at + datum.y2) / 2 - {least / 2}, {y.lo}, {y.hi - least})"
    top = f"datum.closed_at != null && datum.closed_at < {PARAM} ? datum.closed_at : {PARAM}"
    layer["transform"] = [
        {"calculate": state, "as": "state"},
        {"filter": "datum.state != 'not yet'"},
        {"calculate": top, "as": "y2"},
        {"calculate": f"{short} ? {low} : datum.opened_at", "as": "y"},
        {"calculate": f"{short} ? datum.y + {least} : datum.y2", "as": "y2"},
    ]
    colors = {"domain": shown, "range": [STATE_COLORS[st] for st in shown]}
    layer["encoding"]["color"] = {
        "field": "state", "type": "nominal", "title": STATES_TITLE, "scale": colors
    }  # fmt: skip
    state_tip = {"field": "state", "type": "nominal", "title": "state at t"}
    tips = layer["encoding"]["tooltip"]
    tips.insert(1 + [t["field"] for t in tips].index("window"), state_tip)
    layer["mark"] = {"type": "rect", "fillOpacity": 0.35, "strokeWidth": 1}
    layer["encoding"]["stroke"] = {"value": palette.WINDOW_COLOR}
    return layer


STATES_TITLE = "window at some t"
"""The title of the bands' legend: the states a band takes at some t (``states_over_t``), not
those at the slider's t (the tooltip's "state at t")."""


def states_over_t(rows: Rows, t_lo: float, t_hi: float) -> list[str]:
    """The states (``STATE_COLORS``) that some band (``rows``, with ``bands.AS_OF``'s fields)
    takes at some t in ``t_lo`` .. ``t_hi``, by ``window_layer``'s rule: open from its opening
    until its first firing or close, fired from then until the close, gone (merged away)
    from the close."""
    found = set()
    for r in rows:
        opened, fired, closed = r["opened_at"], r["fired_at"], r["closed_at"]
        end, fired = math.inf if closed is None else closed, math.inf if fired is None else fired
        spans = [("open", opened, min(fired, end)), ("fired", max(opened, fired), end)]
        spans.append(("merged away" if r["merged_into"] else "gone", max(opened, end), math.inf))
        found |= {st for st, a, b in spans if a < b and a <= t_hi and b > t_lo}
    return [st for st in STATE_COLORS if st in found]


FIRING_STEP_PX = 11  # the step of firing squares side by side (80 px²: about 9 px wide)
FIRING_SIZE = 80
SHOWN = [{"filter": f"datum.fired <= {PARAM}"}]  # a firing's marks, once it is made


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
    """The firings made by t at their timer's event time (``firings.firing_marks``) and
    processing time, one square per point and cause, coloured as on the timeline, with a
    count badge; one a restore rolled back faint (``faint_if_undone``).
    ``across``: processing-time windows, on the right edge; ``skew``: the skew
    mode's axes; ``avoid``: layers a badge keeps off. Returns the squares' layer (None: no
    firing), drawn under the elements, and the layers over them."""
    marks = firing_marks(view, op)
    if not len(marks):
        return None, []
    groups: dict[tuple[Any, Any, str, bool], list[int]] = {}
    undone = restores.undone(view.trace, np.asarray(marks["seq"])).tolist()
    clipped = 0  # (skew mode) firings whose skew lies beyond the axis: drawn on its edge
    columns = (marks[c].tolist() for c in ("at", "proc_time", "fired_by"))
    for i, (at, proc, by) in enumerate(zip(*columns, strict=True)):
        if proc is None or at is None:
            continue
        if skew:
            sy, edge = y.clip(int(proc) - int(at))
            clipped += bool(edge)
            point = (x.clip(proc)[0], sy)
        else:
            point = (x.hi if across else x.clip(at)[0], y.clip(proc)[0])
        what = palette.FIRED_EVENT.get(by, palette.FIRED_EVENT["cause not traced"])
        groups.setdefault((*point, what, undone[i]), []).append(i)
    starts, ends = marks["window_start"].tolist(), marks["window_end"].tolist()
    procs = marks["proc_time"].tolist()
    words = None  # (each firing in the one vocabulary, ``firings.firing_columns``)
    if len(marks) <= DETAIL_LIMIT:
        cols = firing_columns(view, op)
        late = zip(*(cols[c].tolist() for c in ("seq", "firing", "late_firing")), strict=True)
        said = {s: f + (", late firing" if lt else "") for s, f, lt in late}
        words = [said[s] for s in marks["seq"].tolist()]
    proc_axis = x if skew else y
    rows = []
    for (fx, fy, what, gone), idx in groups.items():
        windows = list(dict.fromkeys(f"[{x.fmt(starts[i])}, {x.fmt(ends[i])})" for i in idx))
        rows.append(
            {
                "x": fx,
                "y": fy,
                "fired": proc_axis.clip(procs[idx[0]])[0],
                "what": what,
                "kind": "fired",
                "firings": len(idx),
                "window": ", ".join(windows[:3])
                + (f" … ({len(windows)})" if len(windows) > 3 else ""),
                "proc_time": proc_axis.fmt(procs[idx[0]]),
                **({} if words is None else {"firing": counted_words(words[i] for i in idx)}),
                **({UNDONE: True} if gone else {}),
            }
        )
    rows, k = scale.every_kth(rows)
    # squares closer than their width side by side, by the charts' one rule
    sx, sy = size[0] / max(1, x.hi - x.lo), size[1] / max(1, y.hi - y.lo)
    places = [((r["x"] - x.lo) * sx, (r["y"] - y.lo) * sy) for r in rows]
    grid = piles.Grid(FIRING_STEP_PX, reach=FIRING_STEP_PX - 1)
    placed = piles.side_by_side(places, FIRING_STEP_PX, size[0], most=labels.STACK_STEPS, grid=grid)
    for row, d in zip(rows, placed.dx, strict=True):
        row["dx"] = d
    here = _firings_here(rows, placed)
    if placed.counted:
        rows = piles.count_on(rows, placed)
    n = len(marks)
    notes.append(
        f"{n:,} firing{'' if n == 1 else 's'} (squares, by cause, as on the timeline) shown once "
        "made" + (f"; every {scale.nth(k)} firing mark drawn" if k > 1 else "")
    )
    notes += piles.moved_note(placed, "firing mark", FIRING_STEP_PX, "a thick outline")
    if clipped:
        notes.append(
            f"{clipped:,} firing(s) lie beyond the skew axis (processing time − their timer's "
            "time): drawn on its edge"
        )
    badges = _count_layer(rows, here, labels.Plot(x, y, *size), avoid, notes, skew=skew)
    # a thick outline on a square others were counted on, or whose badge found no place
    tests = [f"datum[{piles.ALSO_HERE!r}] > 0"] if placed.counted else []
    tests += [f"datum[{UNCOUNTED!r}] > 1"] if any(UNCOUNTED in r for r in rows) else []
    outline = {"condition": {"test": " || ".join(tests), "value": 2.5}, "value": 0.5}
    mark = {"type": "point", "filled": True, "size": FIRING_SIZE, "stroke": palette.INK}
    mark |= {"strokeWidth": 0.5, "xOffset": {"expr": "datum.dx"}}
    width = {"strokeWidth": outline} if tests else {}
    skip = ["fired", UNDONE]
    squares = window_marks._what_layer(rows, mark, x, y, skip, **width) | {"transform": SHOWN}
    window_marks._with_category_scales([squares])  # (as on the timeline: squares)
    for channel in ("color", "shape"):
        squares["encoding"][channel]["title"] = "firing"
    if n_undone := faint_if_undone(squares, sum(undone)):
        notes.append(
            f"{n_undone:,} firing{'' if n_undone == 1 else 's'} rolled back by a restore: drawn "
            f"faint grey once made, as the run keeps {'it' if n_undone == 1 else 'them'} at no t "
            "(where the failed attempt and its replay overlap, t shows the replay)"
        )
    return squares, [*_end_outline(rows, x, y), *badges]


FAINT = {"color": palette.FADED_COLOR, "filled": True, "opacity": 0.35}
"""How the scrubber draws what the run does not have at t: an element not yet arrived, a
firing a restore rolled back."""
UNDONE = "rolled_back"  # a firing square's field: true when a restore rolled it back
GONE = f"datum.{UNDONE} == true"  # (a firing the run has at no t: ``restores.undone``)


def faint_if_undone(layer: spec.ChartDict, n: int) -> int:
    """The ``n`` marks of ``layer`` a restore rolled back (rows with ``UNDONE``: firings,
    element readings) ``FAINT`` from when they are made: the run at t (``restores.kept_at``)
    has them at no t, for where the failed attempt and its replay overlap t shows the replay.
    Returns ``n``."""
    if n:
        enc = layer["encoding"]
        enc["color"]["condition"] = {"test": GONE, "value": FAINT["color"]}
        enc["opacity"] = {"condition": {"test": GONE, "value": FAINT["opacity"]}}
    return n


END_OUTLINE = "end of input (outline)"


def _end_outline(rows: Rows, x: TimeAxis, y: TimeAxis) -> list[spec.ChartDict]:
    """The end of input's squares again as outlines over the elements, among which it fires."""
    end = palette.FIRED_EVENT["end of input"]
    out = [r | {"kind": END_OUTLINE} for r in rows if r["what"] == end]
    if not out:
        return []
    mark = {
        "type": "point",
        "filled": False,
        "shape": "square",
        "size": round((FIRING_SIZE**0.5 - 1) ** 2),  # its 1.5 px stroke within the square
        "color": palette.WINDOW_EVENT_COLORS[palette.WINDOW_EVENTS.index(end)],
        "strokeWidth": 1.5,
        "xOffset": {"expr": "datum.dx"},
    }
    tips = spec.tooltips(out, ["x", "y", "fired"])
    return [
        spec.layer(out, mark, {"x": x.channel("x"), "y": y.channel("y"), "tooltip": tips}, SHOWN)
    ]


def counted_words(words: Iterable[str]) -> str:
    """Words counted: "first firing ×2; re-firing, late firing"."""
    counts = Counter(words)
    return "; ".join(w if n == 1 else f"{w} ×{n}" for w, n in counts.items())


def _firings_here(rows: Rows, placed: piles.Placement) -> list[int]:
    """How many firings each drawn mark stands for: its own and those counted on it."""
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
"""Where a count badge may go, in order of preference: (align, dx, dy) from its square; past
``labels.LABEL_REACH_PX`` with a leader line."""
UNCOUNTED = "firings here (no badge)"  # a square's tooltip field when its badge found no place

COUNT_NOTE = (
    "×n beside a firing square: n firings at that point (one cause, one processing time — "
    "e.g. one timer firing the window of n keys); hover the square for each one's first "
    "firing / re-firing and late firing"
)


def _count_layer(
    rows: Rows,
    here: list[int],
    plot: labels.Plot,
    avoid: Sequence[Any],
    notes: list[str],
    *,
    skew: bool = False,
) -> list[spec.ChartDict]:
    """A badge "×n" beside each square standing for n > 1 firings (``here``): at the first of
    ``BADGE_PLACES`` on the plot off every square, ``avoid`` mark and badge, the places the
    "now" rule has passed first; the leaders' layer and the badges'."""
    badges = [(r, n) for r, n in zip(rows, here, strict=True) if n > 1]
    if not badges:
        return []
    taken = Taken()
    labels._taken_by_marks(taken, avoid, plot, lines=False)
    taken.add_array(_text_boxes(avoid, plot))
    half = math.sqrt(FIRING_SIZE) / 2 + 1
    centres = [(plot.px(r["x"]) + r["dx"], plot.py(r["y"])) for r in rows]
    taken.add_array([(cx - half, cy - half, cx + half, cy + half) for cx, cy in centres])
    placed: dict[tuple[str, int, int], Rows] = {}
    hidden = 0
    for r, n in sorted(badges, key=lambda b: (-b[0]["y"], b[0]["x"])):  # top down, left first
        label, shift = f"×{n}", r["dx"]
        px, py = plot.px(r["x"]) + shift, plot.py(r["y"])
        boxes = [(p, labels._text_box(px, py, label, *p)) for p in BADGE_PLACES]
        # first the places the "now" rule has passed once shown: below, left in the skew mode
        if skew:
            boxes.sort(key=lambda pb: not pb[1][2] < plot.px(r["x"]) - 0.5)  # (stable)
        else:
            boxes.sort(key=lambda pb: not pb[1][1] > py + 0.5)
        for (align, dx, dy), box in boxes:
            if plot.holds(box) and not taken.hits(box):
                taken.add(box)
                row = {"x": r["x"], "y": r["y"], "label": label, "firings": n, "shift": shift}
                row |= {"fired": r["fired"], "window": r["window"]}
                row |= {UNDONE: r[UNDONE]} if UNDONE in r else {}
                placed.setdefault((align, dx + shift, dy), []).append(row)
                break
        else:
            hidden += 1
            r[UNCOUNTED] = n
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
        layers.append(spec.layer(leaders, mark, encoding, SHOWN))
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
    if any(UNDONE in r for r in out):  # (a rolled-back square's badge faint with it)
        encoding["opacity"] = {"condition": {"test": GONE, "value": FAINT["opacity"]}}
    return [*layers, spec.layer(out, text, encoding, SHOWN)]


def _text_boxes(layers: Sequence[Any], plot: labels.Plot) -> list[labels.Box]:
    """The pixel boxes of the fixed texts of ``layers`` (the skew chart's labels)."""
    boxes = []
    for layer in layers:
        mark = layer["mark"]
        if mark["type"] != "text" or isinstance(mark.get("align", "left"), dict):
            continue
        h = mark.get("fontSize", labels.LABEL_FONT) + 2
        char = labels.CHAR_PX * h / (labels.LABEL_FONT + 2)
        shift = {"left": 0, "center": 0.5, "right": 1}[mark.get("align", "center")]
        drop = {"top": 0, "middle": 0.5, "bottom": 1}[mark.get("baseline", "middle")]
        for r in spec.rows(layer):
            w = char * len(str(r.get("text", "")))
            left = plot.px(r["x"]) + mark.get("dx", 0) - shift * w
            top = plot.py(r["y"]) + mark.get("dy", 0) - drop * h
            boxes.append((left, top, left + w, top + h))
    return boxes


def now_layer(axis: TimeAxis, channel: str = "y") -> spec.ChartDict:
    """The "now" rule at processing time t, on ``axis``, the ``channel`` of processing time."""
    return spec.layer(
        [{"kind": "now"}],
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 1, "strokeDash": [2, 2]},
        {
            channel: axis.channel(channel),
            "tooltip": [{"field": channel, "type": "quantitative", "title": "t (processing time)"}],
        },
        [{"calculate": PARAM, "as": channel}],
    )


def watermark_layers(steps: pd.DataFrame, x: TimeAxis, y: TimeAxis) -> list:
    """The rule at the watermark in effect at t and its label above the plot, on the side of
    the rule towards the axis' middle."""
    if steps.empty:
        return []
    thinned = scale.thin_steps(steps, "proc_time", "operator", scale.ROW_LIMIT)
    rows = [
        {"proc": y.clip(p)[0], "x": x.clip(w)[0], "seq": q, "kind": "watermark at t",
         "watermark": x.fmt(w)}
        for p, w, q in zip(
            thinned["proc_time"].tolist(), thinned["watermark"].tolist(),
            thinned["seq"].astype("int64").tolist(), strict=True,
        )
    ]  # fmt: skip
    latest = [
        {"filter": f"datum.proc <= {PARAM}"},
        {
            "window": [{"op": "row_number", "field": "", "as": "rank"}],
            "sort": [{"field": "seq", "order": "descending"}],
        },
        {"filter": "datum.rank == 1"},
    ]
    tips = [{"field": "kind", "type": "nominal"}, {"field": "watermark", "type": "nominal"}]
    rule = spec.layer(
        rows,
        {"type": "rule", "color": palette.WATERMARK_COLOR, "strokeWidth": 2},
        {"x": x.channel("x"), "tooltip": tips},
        latest,
    )
    right_half = f"datum.x > {(x.lo + x.hi) / 2}"
    label = spec.text_layer(
        rows,
        {"x": x.channel("x"), "y": {"value": 0}},
        text="label",
        transform=[*latest, {"calculate": "'watermark ' + datum.watermark", "as": "label"}],
        align={"expr": f"{right_half} ? 'right' : 'left'"},
        baseline="bottom",
        dx={"expr": f"{right_half} ? -4 : 4"},
        dy=-3,
    )
    return [rule, label]


def element_layers(
    view: TraceView,
    elements: Columns,
    x: TimeAxis,
    y: TimeAxis,
    future: str,
    max_points: int,
    notes: list[str],
) -> list:
    """The timeline's elements (``timeline._elements``; over ``max_points`` binned) as of t:
    those arrived by t (a binned mark once its cell's first element has arrived), later ones
    faint (``future="fade"``), readings again hollow in their own legend, readings a restore
    rolled back faint once arrived (as the firings, ``faint_if_undone``)."""
    restarts = watermark_steps.restarts(view)
    drawn = _elements(view, elements, x, y, max_points, notes, restarts, arrived=True)
    if drawn[0] is None:
        return []
    at = "arrived" if "arrived" in spec.rows(drawn[0])[0] else "y"  # (binned: the first's)
    layers = []
    if future == "fade":
        faint = {"type": "point"} | FAINT
        enc = {c: drawn[0]["encoding"][c] for c in ("x", "y", "tooltip")}
        later = [{"filter": f"datum.{at} > {PARAM}"}]
        layers.append(
            drawn[0] | {"mark": faint | {"size": 40}, "encoding": enc, "transform": later}
        )
    if at == "arrived":
        notes.append("a binned mark shows once its cell's first element has arrived")
    undone = 0
    for layer, title in zip(drawn, ("element", replay.LEGEND), strict=True):
        if layer is not None:  # each layer its own legend (the scrubber's are independent)
            window_marks._with_category_scales([layer])
            for channel in ("color", "shape"):
                layer["encoding"][channel]["title"] = title
            if at == "y" and len(view.select("restore")):  # (a binned cell has no seq)
                rows = spec.rows(layer)
                gone = restores.undone(view.trace, np.array([r["seq"] for r in rows]))
                for row in (r for r, g in zip(rows, gone.tolist(), strict=True) if g):
                    row[UNDONE] = True
                undone += faint_if_undone(layer, int(gone.sum()))
            layers.append(layer | {"transform": [{"filter": f"datum.{at} <= {PARAM}"}]})
    if undone:
        notes.append(
            f"{undone:,} element reading{'' if undone == 1 else 's'} rolled back by a restore "
            "(read again by the replay): drawn faint grey once arrived"
        )
    return layers
