"""``scrubber``: the timeline as it stood at processing time *t*, with *t* on a slider.

The slider is a Vega-Lite parameter ``t`` bound to a range input (what ``alt.binding_range``
makes; the layers are Vega-Lite dicts over inline rows, ``spec.layer``): it runs in the
browser with no kernel, so it also works in a page saved by ``save_html``. Axes
as in ``timeline`` (event time across, processing time down). Layers, back to front:

1. **windows** — one band per window from its first element to ``min(t, cleanup)``, coloured
   by its state at *t*: ``open`` (no firing yet), ``fired`` (fired at least once, state still
   kept), ``gone`` (cleaned up); windows not yet opened at *t* are not drawn;
   **idle periods** — a grey strip per input along the left edge, from its going idle to
   ``min(t, active again)`` (``idle``);
2. **now** — a horizontal rule at processing time *t*;
3. **watermark at t** — a vertical rule at the window operator's watermark in effect at *t*
   (its last ``watermark`` record at or before *t*), labelled; none before the first one;
4. **future elements** — elements arriving after *t*, faint grey (``future="hide"`` leaves
   them out);
5. **elements arrived by t** — coloured and shaped by fate, as in ``timeline``;
6. **firings made by t** — squares coloured by cause as on the timeline ("fired: …"), at the
   event time of the timer that fired them (else the window end), one mark per point with
   the count (``_firing_layer``).

All of this is computed in the browser from the same data: ``t`` only drives filters and
colours. Over 5,000 elements they are binned as in ``timeline`` (a cell shows once its
earliest element has arrived) and the subtitle says so.

**Replay** (``replay=True``, the default): a "play" checkbox next to the slider animates
processing time, as in Akidau's streaming animations — while it is ticked, ``t`` advances by
one step every ``TICK_MS`` and the run unfolds from the slider's position to its end in about
``replay_seconds``; it unticks itself at the end (tick it again to replay from the start)
and unticking it pauses. The slider follows ``t`` and can be dragged at any time. This is a
Vega timer event stream on the ``t`` signal (``on: [{events: {type: "timer", throttle:
TICK_MS}, update: ...}]``) and one on the ``play`` signal (it turns off at the end), so it
runs wherever the chart is drawn — JupyterLab's ``alt.JupyterChart`` (which syncs ``t`` and
``play`` back to Python), ``save_html`` pages and ``make lessons`` pages (no page script,
so nothing to add to their Content-Security-Policy; expressions run under ``ast: true``).
Vega-Lite copies a variable parameter's ``on`` into the Vega signal but its JSON schema does
not list it, so Altair would refuse it: the chart is a ``ScrubberChart``, whose ``to_dict``
adds the two handlers after Altair's validation, from what ``usermeta.winviz.replay`` says
(``with_replay``).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, Literal

import altair as alt
import numpy as np
import pandas as pd

from winviz.viz import frames, idle, palette, piles, replay, scale, spec
from winviz.viz.frames import TraceInputError, TraceView
from winviz.viz.palette import TimeAxis
from winviz.viz.timeline import STACK_STEPS, auto_view, pick_operator

PARAM = "t"
PLAY_PARAM = "play"
TICK_MS = 100
"""Replay: ``t`` advances once per this many milliseconds while ``play`` is ticked."""
REPLAY_SECONDS = 10.0
"""Replay: the default time, in seconds, from the first processing time to the last."""
STATES = ("open", "fired", "merged away", "gone")
STATE_COLORS = (
    palette.WINDOW_COLOR, palette.WINDOW_FIRED_COLOR, palette.MERGED_AWAY_COLOR, palette.GONE_COLOR
)  # fmt: skip
FUTURE_COLOR = palette.FADED_COLOR


@frames.gc_paused
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
) -> alt.TopLevelMixin:
    """The timeline at processing time ``t``, with a slider for ``t`` (see the module
    docstring). ``at``: the slider's start value (default: the last processing time, i.e. the
    whole run). ``future``: elements not yet arrived at ``t`` are drawn faint ("fade") or not
    at all ("hide"). ``replay``: a "play" checkbox that animates ``t`` from the slider's
    position to the end of the run in about ``replay_seconds``. ``view``: "skew" scrubs the
    skew chart instead (``skew_scrubber``: x processing time, y processing time − event
    time, for long runs), "auto" does so when the timeline's ``auto_view`` would. Bad input
    gives a message card, like ``timeline``."""
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
    mode = view
    try:
        view = frames.open_trace(trace)
        if mode != "timeline":
            op = pick_operator(view, operator)
            reason = auto_view(view, op) if mode == "auto" else None
            if mode == "skew" or reason is not None:
                return skew_scrubber(
                    view,
                    op,
                    at,
                    future,
                    max_points,
                    replay_seconds if replay else None,
                    width,
                    height,
                    reason,
                )
        return _scrubber(
            view,
            operator,
            at,
            future,
            max_points,
            replay_seconds if replay else None,
            width,
            height,
        )
    except TraceInputError as exc:
        return palette.message_chart(str(exc).split(". ")[0] + ".", str(exc), chart="scrubber")


SCRUBBER_PARTS: dict[str, tuple[str, ...] | None] = {
    "operator": None,  # (whole: cheaper than the part of the many kinds selected by operator)
    "proc_time": ("element", "watermark", "fired", "cleanup", "assigned"),
    "watermark": ("element", "watermark"),
}
"""The fields the scrubber reads for several kinds, each read once for all of them
(``TraceView.read_parts``; see ``timeline.TIMELINE_PARTS``)."""


def _scrubber(
    view: TraceView,
    operator: str | None,
    at: int | None,
    future: str,
    max_points: int,
    replay_seconds: float | None,
    width: int,
    height: int,
) -> alt.TopLevelMixin:
    view.read_parts(SCRUBBER_PARTS)
    op = pick_operator(view, operator)
    # element_fates as columns (no DataFrame: only a few columns are read, then binned)
    elements = frames.element_fate_columns(view, op)
    drawn = ~np.isnan(elements["ts"]) & ~np.isnan(elements["proc_time"])
    if not drawn.all():
        elements = elements.take(drawn)
    fate_codes = elements["fate_code"]  # their fates as positions in palette.FATES
    steps = frames.watermark_steps(view)
    steps = steps[steps["operator"] == op]
    windows = _windows(view, op)
    # processing-time windows: their [start, end) is processing time, nothing on the
    # event-time axis (see _window_layer)
    across = bool(len(windows)) and frames.processing_time_windows(view, op)

    # the axes from each column's drawable extent (the same axes as from every value)
    x = palette.time_axis(
        "event time",
        (
            scale.extent(elements["ts"])
            if across
            else scale.extent(elements["ts"], windows["window_start"], windows["window_end"])
        )
        if len(elements) or len(windows)
        else scale.extent(steps["watermark"]),
    )
    finite = scale.extent(
        elements["proc_time"], steps["proc_time"], windows["opened"], windows["closed"]
    )
    y = palette.time_axis("processing time", finite)
    t_lo, t_hi = (min(finite), max(finite)) if finite else (y.lo, y.hi)
    start = t_hi if at is None else int(min(max(at, t_lo), t_hi))
    span = max(1, t_hi - t_lo)
    step = 1 if span <= 2000 else 10 ** max(0, len(str(span // 1000)) - 1)
    t = {
        "name": PARAM,
        "bind": {
            "input": "range",
            "max": t_hi,
            "min": t_lo,
            "name": "processing time t (ms) ",
            "step": step,
        },
        "value": start,
    }

    notes = [
        f"operator {op!r}: {len(elements):,} elements, "
        f"{frames.pairs_text(int(windows['keys'].sum()) if len(windows) else 0, len(windows))}"
        "; move the slider to see the run at processing time t"
    ]
    if across:
        notes.append(
            "processing-time windows: [start, end) is processing time — a window holds the "
            "elements that reached the operator then, whatever their timestamps: it spans the "
            "event-time axis over its life in processing time"
        )
    wrapped = windows.attrs.get("wrapped", 0)
    if wrapped:  # as the timeline's bands: a wrapped [start, end) would span the whole axis
        notes.append(
            f"{wrapped} window(s) whose end overflowed the long range (start >= end) are not drawn"
        )
    spans = idle.idle_spans(view)
    if spans:
        notes.append(idle.lines_text(spans) + " as they stand at t")
    layers = [
        _window_layer(windows, x, y, across),
        _idle_layer(spans, x, y),
        _now_layer(x, y),
        *_watermark_layers(steps, x, y),
        # firings under the elements: an element at a firing's point stays visible on its square
        _firing_layer(view, op, x, y, (width, height), notes, across=across),
        *_element_layers(view, elements, fate_codes, x, y, future, max_points, notes),
    ]
    layers = [layer for layer in layers if layer is not None]
    if replay_seconds is not None:
        notes[0] += "; tick play to replay it"
    return _finished(
        layers, "Scrubber", notes, (width, height), t, (t_lo, t_hi, step), replay_seconds
    )


def skew_scrubber(
    view: TraceView,
    op: str,
    at: int | None,
    future: str,
    max_points: int,
    replay_seconds: float | None,
    width: int,
    height: int,
    chosen: str | None = None,
) -> alt.TopLevelMixin:
    """The skew mode: the skew chart (``skew.skew_of_view``: x processing time, y processing
    time − event time, under the watermark lag) as it stood at processing time t — elements
    (binned cells: once their mean processing time is reached), the lag line and firings up
    to t, t a vertical rule; the same slider and replay as the scrubber. Elements after t are
    not drawn (``future`` is the timeline mode's: on this x axis the future is simply right
    of t). ``chosen``: why ``view="auto"`` drew it."""
    del future
    from winviz.viz.skew import skew_of_view  # skew.py imports timeline, as this module

    chart = skew_of_view(view, op, max_points, width, height)
    meta = chart.usermeta["winviz"] if chart.usermeta is not alt.Undefined else {}
    if meta.get("status") != "ok":
        return chart
    layers = list(chart.layer)
    enc = layers[0].encoding
    (x_lo, x_hi), (y_lo, y_hi) = enc["x"]["scale"]["domain"], enc["y"]["scale"]["domain"]
    kind = palette.time_axis("processing time", [x_lo, x_hi]).kind
    x = TimeAxis("processing time", kind, x_lo, x_hi)
    y = TimeAxis("processing time − event time", "ms", y_lo, y_hi)
    notes = ([] if chosen is None else [chosen.replace("timeline(", "scrubber(")]) + list(
        meta.get("notes", [])
    )
    binned = False
    for layer in layers:
        rows = layer.data.values
        if not rows or rows[0].get("kind") not in _SKEW_TIMED:
            continue
        binned |= rows[0].get("kind") == "elements (binned)"
        layer.transform = [{"filter": f"datum.x <= {PARAM}"}]
    if binned:
        notes.append("a binned mark shows once its cell's mean processing time is reached")
    t_lo, t_hi = _time_range(layers, x_lo, x_hi)
    start = t_hi if at is None else int(min(max(at, t_lo), t_hi))
    step = 1 if t_hi - t_lo <= 2000 else 10 ** max(0, len(str((t_hi - t_lo) // 1000)) - 1)
    now = spec.layer(
        [{"kind": "now"}],
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 1, "strokeDash": [2, 2]},
        {
            "x": x.channel("x"),
            "tooltip": [{"field": "x", "type": "quantitative", "title": "t (processing time)"}],
        },
        [{"calculate": PARAM, "as": "x"}],
    )
    firing = _firing_layer(view, op, x, y, (width, height), notes, skew=True)
    layers = [*layers, now, *([firing] if firing is not None else [])]
    notes[len([chosen] if chosen else [])] += (
        "; move the slider to see the run at processing time t"
    )
    t = {
        "name": PARAM,
        "bind": {
            "input": "range",
            "max": t_hi,
            "min": t_lo,
            "name": "processing time t (ms) ",
            "step": step,
        },
        "value": start,
    }
    return _finished(
        layers, "Scrubber (skew)", notes, (width, height), t, (t_lo, t_hi, step), replay_seconds
    )


_SKEW_TIMED = ("element", "elements (binned)", "watermark lag", "label")
"""The skew chart's layers drawn up to t (their x is a processing time)."""


def _time_range(layers: list[alt.Chart], lo: int, hi: int) -> tuple[int, int]:
    """The slider's range: the smallest and largest processing time (x) of the skew chart's
    elements and lag line (within the axis [lo, hi])."""
    xs = [
        r["x"]
        for layer in layers
        for r in (layer.data.values or [])
        if r.get("kind") in _SKEW_TIMED
    ]
    return (max(lo, int(min(xs))), min(hi, int(max(xs)))) if xs else (lo, hi)


# -- replay -------------------------------------------------------------------------------------


def replay_settings(t_lo: int, t_hi: int, step: int, seconds: float) -> dict[str, Any]:
    """What ``with_replay`` needs (kept in ``usermeta.winviz.replay``): the parameters, the
    slider's range, the timer's period and the step ``t`` advances per tick — a multiple of
    the slider's step, so that ``t`` stays on the slider's grid, and at least one step."""
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


def replay_handlers(settings: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """The Vega event handlers of replay: (those of ``t``, those of ``play``). Every number
    comes from ``replay_settings`` (ints), every name is a constant of this module: no
    expression holds anything from a trace."""
    t, play = settings["param"], settings["switch"]
    lo, hi, inc = (int(settings[k]) for k in ("min", "max", "step"))
    tick = {"type": "timer", "throttle": int(settings["tick_ms"])}
    on_t = [
        {
            "events": tick,
            # a tick while playing: from the end, start again; else one step, at most to the end
            "update": f"{play} ? ({t} >= {hi} ? {lo} : min({hi}, {t} + {inc})) : {t}",
        }
    ]
    on_play = [{"events": {"signal": t}, "update": f"{play} && {t} < {hi}"}]  # off at the end
    return on_t, on_play


def with_replay(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (a scrubber's Vega-Lite dict, changed in place and returned) with the replay
    handlers on its ``t`` and ``play`` parameters, when ``usermeta.winviz.replay`` asks for
    them; other specs are returned as they are."""
    settings = ((spec.get("usermeta") or {}).get("winviz") or {}).get("replay")
    if not settings:
        return spec
    on_t, on_play = replay_handlers(settings)
    for param in spec.get("params", []):
        if param.get("name") == settings["param"]:
            param["on"] = on_t
        elif param.get("name") == settings["switch"]:
            param["on"] = on_play
    return spec


class ScrubberChart(spec.LayerChart):
    """The scrubber's layered chart: an ``alt.LayerChart`` (checked by the compiled schema,
    ``spec.LayerChart``) whose ``to_dict`` adds the replay handlers (``with_replay``) after the
    spec is validated — Vega-Lite passes a parameter's ``on`` through to Vega, but its schema
    does not list it."""

    def finished(self, spec: dict[str, Any]) -> dict[str, Any]:
        return with_replay(spec)

    def to_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return self.finished(super().to_dict(*args, **kwargs))

    def _repr_mimebundle_(self, *args: Any, **kwargs: Any) -> Any:
        # Altair's "jupyter" renderer rebuilds the chart from the dict with validation, which
        # would refuse the handlers: give the widget this chart itself, with the options
        # setup_rendering() enabled it with
        if alt.renderers.active == "jupyter":
            options = alt.renderers.options
            alt.JupyterChart.enable_offline(offline=bool(options.get("offline", False)))
            widget = alt.JupyterChart(self, embed_options=options.get("embed_options"))
            return widget._repr_mimebundle_()
        return super()._repr_mimebundle_(*args, **kwargs)


# -- data ---------------------------------------------------------------------------------------


def _windows(view: TraceView, op: str) -> pd.DataFrame:
    """One row per window (all keys): window_start, window_end, keys, opened (first element),
    fired (first firing; NaN if none), closed (last cleanup or session merge; NaN while any
    key's pane is kept), merged_into ("[s, e)" when every key's pane of it was merged away,
    else ""), by (start, end)."""
    # as columns when there is no session merge (no DataFrame), else the frame
    lives = frames.window_life_columns(view, op)
    if lives is None:
        lives = frames.window_lives(view, op)
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
        merged_into = [frames.merged_text(texts[a:b]) for a, b in pairwise(bounds)]
    # the first firing of each window: only the fired records' windows and processing times
    # (not frames.firings, which also words every firing's cause and result)
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


def _window_layer(
    windows: pd.DataFrame, x: TimeAxis, y: TimeAxis, across: bool = False
) -> alt.Chart | None:
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


def _idle_layer(spans: list[idle.IdleSpan], x: TimeAxis, y: TimeAxis) -> alt.Chart | None:
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


FIRING_SHAPE = "square"


Size = tuple[int, int]  # a chart's width and height in pixels


def _finished(
    layers: list[Any],
    title: str,
    notes: list[str],
    size: Size,
    t: dict[str, Any],
    span: tuple[int, int, int],
    replay_seconds: float | None,
) -> ScrubberChart:
    """A scrubber's layers as its chart (both views): the slider ``t``, the play switch and
    the replay settings when ``replay_seconds`` is given (``span``: the slider's lo, hi and
    step)."""
    params = [t]
    if replay_seconds is not None:
        params.append(
            {"name": PLAY_PARAM, "bind": {"input": "checkbox", "name": "play "}, "value": False}
        )
    chart = spec.layer_chart(  # the layers are made here, for this chart only
        layers,
        cls=ScrubberChart,
        width=size[0],
        height=size[1],
        title=palette.title(title, notes),
        resolve={"scale": {"color": "independent", "shape": "independent"}},
    )
    chart.params = [alt.VariableParameter(**p) for p in params]
    chart = palette.finish(chart, name="scrubber", notes=notes, in_place=True)
    if replay_seconds is not None:
        chart.usermeta["winviz"]["replay"] = replay_settings(*span, replay_seconds)
    return chart


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


def _firing_layer(
    view: TraceView,
    op: str,
    x: TimeAxis,
    y: TimeAxis,
    size: Size,
    notes: list[str],
    *,
    across: bool = False,
    skew: bool = False,
) -> alt.Chart | None:
    """The firings made by t (``frames.firing_marks``: at the event time of the timer that
    fired them, else the window end, and their processing time), coloured by cause as on the
    timeline ("fired: …", ``palette.FIRED_EVENT``); firings at one point are one mark with
    their count. ``across``: processing-time windows, drawn on the right edge. ``skew``: the
    skew mode's axes (x: processing time, y: processing time − that event time)."""
    marks = frames.firing_marks(view, op)
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


def _now_layer(x: TimeAxis, y: TimeAxis) -> alt.Chart:
    return spec.layer(
        [{"kind": "now"}],
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 1, "strokeDash": [2, 2]},
        {
            "y": y.channel("y"),
            "tooltip": [{"field": "y", "type": "quantitative", "title": "t (processing time)"}],
        },
        [{"calculate": PARAM, "as": "y"}],
    )


def _watermark_layers(steps: pd.DataFrame, x: TimeAxis, y: TimeAxis) -> list:
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


def _element_layers(
    view: TraceView,
    elements: frames.Columns,
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
        d = frames.element_detail_lists(view, elements["seq"])
        procs = elements["proc_time"].tolist()
        restarts = frames.restarts(view)
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
    elements: frames.Columns,
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
