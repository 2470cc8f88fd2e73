"""``scrubber``: the timeline as it stood at processing time *t*, with *t* on a slider.

*t* is a Vega-Lite parameter bound to a range input (no kernel needed): it drives only the
filters and colours of the layers (``scrubber_layers``) — windows by state, idle periods, the
*now* rule, the watermark at *t*, elements and firings. A "play" checkbox replays the run, as
in Akidau's streaming animations: the spec carries the settings (``replay_settings``), the
page's script (``view_script``) plays them.
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
    now_layer,
    watermark_layers,
    window_layer,
    window_rows,
)
from winviz.viz.skew import skew_of_view
from winviz.viz.timeline import auto_view
from winviz.viz.trace_view import TraceView, open_trace
from winviz.viz.validation import check_size
from winviz.viz.watermark_steps import watermark_steps
from winviz.viz.window_lives import pairs_text, processing_time_windows

PLAY_PARAM = "play"
TICK_MS = 100
"""Replay: ``t`` advances once per this many milliseconds while ``play`` is ticked."""
REPLAY_SECONDS = 10.0
"""Replay: the default time, in seconds, from the first processing time to the last."""


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
    steps = watermark_steps(view)
    steps = steps[steps["operator"] == op]
    windows = window_rows(view, op)
    # processing-time windows: [start, end) is processing time, nothing on the event-time axis
    across = bool(len(windows)) and processing_time_windows(view, op)
    spans = [] if across else [windows["window_start"], windows["window_end"]]
    drawn = len(elements) or len(windows)
    x_extent = scale.extent(elements["ts"], *spans) if drawn else scale.extent(steps["watermark"])
    x = palette.time_axis("event time", x_extent)
    finite = scale.extent(
        elements["proc_time"], steps["proc_time"], windows["opened"], windows["closed"]
    )
    y = palette.time_axis("processing time", finite)
    if len(view.select("fired", operator=op)):  # room for the last firings' count badges
        y = labels._label_room(y, size[1])
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
    points = element_layers(
        view, elements, elements["fate_code"], x, y, future, max_points, element_notes
    )
    # firings under the elements (an element on a square stays in sight), badges over both
    firings, badges = firing_layer(view, op, x, y, size, notes, across=across, avoid=points)
    notes += element_notes
    idle_at_t = [  # an idle period begun by t, up to its end or t
        {"filter": f"datum.y <= {PARAM}"},
        {"calculate": f"datum.y2 < {PARAM} ? datum.y2 : {PARAM}", "as": "y2_at_t"},
    ]
    layers = [
        window_layer(windows, x, y, across, size[1]),
        idle.strip_layer(spans, x, y, idle_at_t, y2="y2_at_t"),
        now_layer(y),
        *watermark_layers(steps, x, y),
        firings,
        *points,
        *badges,
    ]
    if replay_seconds is not None:
        notes[0] += "; tick play to replay it"
    t_range = (min(finite), max(finite)) if finite else (y.lo, y.hi)
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
    notes = ([] if chosen is None else [chosen.replace("timeline(", "scrubber(")]) + list(
        meta.get("notes", [])
    )
    timed = ("element", "elements (binned)", "watermark lag", "label")  # (x: a processing time)
    xs = [r["x"] for lay in layers for r in spec.rows(lay) if r.get("kind") in timed]
    binned = False
    for layer in layers:
        rows = spec.rows(layer)
        if not rows or rows[0].get("kind") not in timed:
            continue
        binned |= rows[0].get("kind") == "elements (binned)"
        layer["transform"] = [{"filter": f"datum.x <= {PARAM}"}]
    if binned:
        notes.append("a binned mark shows once its cell's mean processing time is reached")
    t_range = (max(x_lo, int(min(xs))), min(x_hi, int(max(xs)))) if xs else (x_lo, x_hi)
    squares, badges = firing_layer(view, op, x, y, size, notes, skew=True, avoid=layers)
    # the squares under the elements (as in the timeline mode), the badges over all
    under = next(
        (i for i, lay in enumerate(layers) if spec.rows(lay)[:1] and spec.rows(lay)[0].get("kind")
         in ("element", "elements (binned)")),
        len(layers),
    )  # fmt: skip
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
