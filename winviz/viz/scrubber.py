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
   the count (``scrubber_layers.firing_layer``).

All of this is computed in the browser from the same data: ``t`` only drives filters and
colours. Over 5,000 elements they are binned as in ``timeline`` (a cell shows once its
earliest element has arrived) and the subtitle says so.

**Replay** (``replay=True``, the default): a "play" checkbox next to the slider animates
processing time, as in Akidau's streaming animations — while it is ticked, ``t`` advances by
one step every ``TICK_MS`` and the run unfolds from the slider's position to its end in about
``replay_seconds``; it unticks itself at the end (tick it again to replay from the start)
and unticking it pauses. The slider follows ``t`` and can be dragged at any time. The spec
carries only the settings (``usermeta.winviz.replay``, ``replay_settings``); the script that
draws the chart plays them (``winviz.viz.view_script``: JupyterLab's widget, ``save_html``
and ``make lessons`` pages alike), not a Vega timer stream, which Vega 6 runs from the view's
start, playing or not, each tick measuring the view's ``<svg>``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from winviz.viz import idle, labels, palette, scale, spec
from winviz.viz.fates import element_fate_columns
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.scrubber_layers import (
    PARAM,
    Size,
    element_layers,
    firing_layer,
    idle_layer,
    now_layer,
    watermark_layers,
    window_layer,
    window_rows,
)
from winviz.viz.timeline import auto_view
from winviz.viz.trace_view import TraceInputError, TraceView, gc_paused, open_trace
from winviz.viz.validation import check_size
from winviz.viz.watermark_steps import watermark_steps
from winviz.viz.window_lives import pairs_text, processing_time_windows

PLAY_PARAM = "play"
TICK_MS = 100
"""Replay: ``t`` advances once per this many milliseconds while ``play`` is ticked."""
REPLAY_SECONDS = 10.0
"""Replay: the default time, in seconds, from the first processing time to the last."""


@spec.chart_function
@gc_paused
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
    check_size(width, height)
    mode = view
    try:
        view = open_trace(trace)
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
        return palette.input_card(exc, chart="scrubber")


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
) -> spec.ChartDict:
    view.read_parts(SCRUBBER_PARTS)
    op = pick_operator(view, operator)
    # element_fates as columns (no DataFrame: only a few columns are read, then binned)
    elements = element_fate_columns(view, op)
    drawn = ~np.isnan(elements["ts"]) & ~np.isnan(elements["proc_time"])
    if not drawn.all():
        elements = elements.take(drawn)
    fate_codes = elements["fate_code"]  # their fates as positions in palette.FATES
    steps = watermark_steps(view)
    steps = steps[steps["operator"] == op]
    windows = window_rows(view, op)
    # processing-time windows: their [start, end) is processing time, nothing on the
    # event-time axis (see window_layer)
    across = bool(len(windows)) and processing_time_windows(view, op)

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
    if len(view.select("fired", operator=op)):  # room for the last firings' count badges
        y = labels._label_room(y, height)  # (as the timeline's for its labels: the same axis)
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
        f"{pairs_text(int(windows['keys'].sum()) if len(windows) else 0, len(windows))}"
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
    element_notes: list[str] = []  # (said after the firings')
    drawn = element_layers(view, elements, fate_codes, x, y, future, max_points, element_notes)
    # firings under the elements: an element at a firing's point stays visible on its square;
    # their count badges over both, off the elements
    firings, badges = firing_layer(
        view, op, x, y, (width, height), notes, across=across, avoid=drawn
    )
    notes += element_notes
    layers = [
        window_layer(windows, x, y, across, height),
        idle_layer(spans, x, y),
        now_layer(x, y),
        *watermark_layers(steps, x, y),
        firings,
        *drawn,
        *badges,
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
) -> spec.ChartDict:
    """The skew mode: the skew chart (``skew.skew_of_view``: x processing time, y processing
    time − event time, under the watermark lag) as it stood at processing time t — elements
    (binned cells: once their mean processing time is reached), the lag line and firings up
    to t, t a vertical rule; the same slider and replay as the scrubber. Elements after t are
    not drawn (``future`` is the timeline mode's: on this x axis the future is simply right
    of t). ``chosen``: why ``view="auto"`` drew it."""
    del future
    from winviz.viz.skew import skew_of_view  # skew.py imports timeline, as this module

    chart = skew_of_view(view, op, max_points, width, height)
    meta = chart["usermeta"]["winviz"]
    if meta.get("status") != "ok":
        return chart
    layers = chart["layer"]
    enc = layers[0]["encoding"]
    (x_lo, x_hi), (y_lo, y_hi) = enc["x"]["scale"]["domain"], enc["y"]["scale"]["domain"]
    kind = palette.time_axis("processing time", [x_lo, x_hi]).kind
    x = TimeAxis("processing time", kind, x_lo, x_hi)
    y = TimeAxis("processing time − event time", "ms", y_lo, y_hi)
    notes = ([] if chosen is None else [chosen.replace("timeline(", "scrubber(")]) + list(
        meta.get("notes", [])
    )
    binned = False
    for layer in layers:
        rows = spec.rows(layer)
        if not rows or rows[0].get("kind") not in _SKEW_TIMED:
            continue
        binned |= rows[0].get("kind") == "elements (binned)"
        layer["transform"] = [{"filter": f"datum.x <= {PARAM}"}]
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
    firing = firing_layer(view, op, x, y, (width, height), notes, skew=True, avoid=layers)
    squares, badges = firing
    # the squares under the elements (as in the timeline mode: an element at a firing's point
    # stays in sight on its square), the badges over all
    under = next(
        (i for i, lay in enumerate(layers) if spec.rows(lay)[:1] and spec.rows(lay)[0].get("kind")
         in ("element", "elements (binned)")),
        len(layers),
    )  # fmt: skip
    layers = [*layers[:under], *([squares] if squares is not None else []), *layers[under:]]
    layers = [*layers, now, *badges]
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


def _time_range(layers: list[spec.ChartDict], lo: int, hi: int) -> tuple[int, int]:
    """The slider's range: the smallest and largest processing time (x) of the skew chart's
    elements and lag line (within the axis [lo, hi])."""
    xs = [r["x"] for layer in layers for r in (spec.rows(layer)) if r.get("kind") in _SKEW_TIMED]
    return (max(lo, int(min(xs))), min(hi, int(max(xs)))) if xs else (lo, hi)


# -- replay -------------------------------------------------------------------------------------


def replay_settings(t_lo: int, t_hi: int, step: int, seconds: float) -> dict[str, Any]:
    """What the replay needs (kept in ``usermeta.winviz.replay``, played by ``view_script``):
    the parameters, the slider's range, the tick's period and the step ``t`` advances per
    tick — a multiple of the slider's step, so that ``t`` stays on the slider's grid, and at
    least one step."""
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
    t: dict[str, Any],
    span: tuple[int, int, int],
    replay_seconds: float | None,
) -> spec.ChartDict:
    """A scrubber's layers as its chart (both views): the slider ``t``, the play switch and
    the replay settings when ``replay_seconds`` is given (``span``: the slider's lo, hi and
    step)."""
    params = [t]
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
        chart["usermeta"]["winviz"]["replay"] = replay_settings(*span, replay_seconds)
    return chart
