"""``timeline``: event time (x) against processing time (y) for one window operator.

Layers, back to front:

1. **window bands** — one rectangle per window: its event-time extent [start, end) across,
   its life in processing time (first element assigned → state cleaned up) down; a window
   still open at the end of the trace reaches the top edge;
2. **allowed-lateness horizons** — with ``allowed_lateness > 0``, a dashed vertical line per
   window at its max timestamp + allowed lateness (Flink's ``cleanupTime``) over the band's
   life: until the watermark passes it, the window still accepts late elements;
   **idle periods** — a grey strip per input along the left edge over the processing
   times it was idle (``idle``), and watermark alignment's **paused** spans, a dark strip
   per paused input along the right edge;
3. **ideal diagonal** — event time = processing time, in its own legend (only where it makes
   sense, see ``_wants_diagonal``);
4. **watermark** — one step line per distinct staircase: operators whose ``watermark``
   records step at exactly the same processing times to the same values share one line and
   one legend entry ("watermarks, window (same)"); points carry the records' tooltips; the
   end-of-input watermark MAX is drawn on the right edge and labelled;
5. **elements** — coloured and shaped by fate (frames.element_fates): *late* in Flink's
   sense (timestamp ≤ the operator's watermark on arrival) but assigned is "late, accepted";
6. **firings** — at the event time of the timer that fired them (else the window end),
   coloured by what caused them ("fired: event-time timer", "fired: element", "fired:
   processing-time timer", "fired: end of input") and labelled "result · cause"; firings of
   several keys at the same point are one mark ("3 keys · end of input"); labels are placed
   so that they overlap neither each other nor the plot's edge (a label that fits nowhere is
   left to the tooltip, and the subtitle says so);
7. **cleanups** — at (cleanup time, processing time);
8. **merges** (session windows) — a "merged" mark per window merged away, at (its start,
   the merge's processing time): its tooltip names the window it merged into (``_merges``).

Times beyond 2**53 (MIN / MAX) are clipped to the axis edge; see palette.TimeAxis. Large
traces are reduced per layer (scale.py) and the subtitle says how. Layers are written as
Vega-Lite dicts over plain rows (spec.py): the spec Altair's chart API would build, without
its per-object validation and deep copies (``bench/viz_bench.py`` times it).

**Long runs** (``view="auto"``, the default). When the elements' event-time disorder is
negligible against the run's length, the timeline is one thick diagonal and shows nothing of
the watermark's work; then the skew chart (``skew.skew_chart``: processing time − event time
against processing time, under the watermark lag) is drawn instead, and its subtitle says so
and how to get the timeline (``view="timeline"``). The rule (``auto_view``): more than
``SKEW_MIN_ELEMENTS`` (1,000) elements with a timestamp reach the operator, and the spread of
their skews (max − min of processing time − timestamp) is less than ``SKEW_SPREAD`` (2%) of
their processing-time span — on a 400 px plot the diagonal is then at most 8 px thick.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, Literal, NamedTuple

import altair as alt
import numpy as np
import pandas as pd

from winviz.operators.window_rules import cleanup_time
from winviz.trace import detail_names as detail_fields
from winviz.viz import frames, idle, palette, scale, spec
from winviz.viz.frames import TraceInputError, TraceView
from winviz.viz.palette import TimeAxis
from winviz.viz.propagation import view_paused_spans

LABEL_LIMIT = 25  # firing labels drawn when there are at most this many firing marks
DETAIL_LIMIT = 2000  # above this many firings (cleanups): one mark per window and timing
VIEWS = ("auto", "timeline", "skew")
SKEW_MIN_ELEMENTS = 1000  # view="auto" never picks the skew chart for this many elements or fewer
SKEW_SPREAD = 0.02  # ... nor unless their skews spread over less than this share of the run


@frames.gc_paused
def timeline(
    trace: Any,
    *,
    operator: str | None = None,
    max_points: int = scale.ROW_LIMIT,
    labels: bool | None = None,
    diagonal: bool | None = None,
    view: Literal["auto", "timeline", "skew"] = "auto",
    width: int = palette.WIDTH,
    height: int = palette.HEIGHT,
    element_labels: ElementLabel | None = None,
) -> alt.TopLevelMixin:
    """The event-time × processing-time chart of a trace (see the module docstring).

    ``trace``: a Trace, its ``to_pandas()`` frame, or a JobExecutionResult. ``operator``: the
    window operator to show (default: the first one in the trace). ``max_points``: elements
    drawn one by one up to this many, binned above (≤ 5,000). ``labels``: firing labels
    (default: when there are at most ``LABEL_LIMIT`` (25) firing marks). ``diagonal``: draw
    event time = processing time (default: automatic). ``view``: "timeline" always draws the
    timeline, "skew" the skew chart (``skew_chart``), "auto" the skew chart only for a long run
    whose disorder the timeline could not show (``auto_view``; the subtitle says so).
    ``element_labels``: label each element dot by a field of its value — an index (``0``: the
    first field of a tuple, e.g. the running example's names a–h), a key of a dict value, or
    a function of the value; labels go where they cross no other label and no mark (those
    that fit nowhere are left to the tooltip, and the subtitle says how many).

    Input that cannot be drawn (empty trace, no elements, another schema version, ...) gives a
    message card instead of a plot (``usermeta.winviz.status == "message"``); nothing raises
    for bad data."""
    if not 1 <= max_points <= scale.ROW_LIMIT:
        raise ValueError(f"max_points must be in 1..{scale.ROW_LIMIT}, got {max_points}")
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")
    if (
        element_labels is not None
        and (isinstance(element_labels, bool) or not isinstance(element_labels, (int, str)))
        and not callable(element_labels)
    ):
        raise ValueError(
            "element_labels must be a field index (int), a key (str) or a function of the "
            f"element's value; got {element_labels!r}"
        )
    try:
        tv = frames.open_trace(trace)
        if view != "timeline":
            from winviz.viz.skew import skew_of_view  # skew.py imports this module

            op = pick_operator(tv, operator)
            reason = auto_view(tv, op) if view == "auto" else None
            if view == "skew" or reason is not None:
                return skew_of_view(tv, op, max_points, width, height, chosen=reason)
        return _timeline(tv, operator, max_points, labels, diagonal, width, height, element_labels)
    except TraceInputError as exc:
        return palette.message_chart(str(exc).split(". ")[0] + ".", str(exc), chart="timeline")


def auto_view(view: TraceView, operator: str) -> str | None:
    """Why ``view="auto"`` draws the skew chart instead of the timeline of ``operator``, or
    None to draw the timeline: more than ``SKEW_MIN_ELEMENTS`` elements with a timestamp (and
    |time| <= 2**53) reach it, and the spread of their skews (processing time − timestamp:
    max − min) is below ``SKEW_SPREAD`` of their processing-time span."""
    rows = view.select("element", operator=operator)
    stamps, has_ts = view.ints("ts", rows)
    procs, has_proc = view.ints("proc_time", rows)
    keep = has_ts & has_proc & (np.abs(stamps) <= palette.EXACT) & (np.abs(procs) <= palette.EXACT)
    if int(keep.sum()) <= SKEW_MIN_ELEMENTS:
        return None
    stamps, procs = stamps[keep], procs[keep]
    skews = procs - stamps
    spread = int(skews.max()) - int(skews.min())
    span = int(procs.max()) - int(procs.min())
    if span <= 0 or spread >= SKEW_SPREAD * span:
        return None
    return (
        f'drawn by timeline(view="auto"): the elements\' skews spread over {spread:,} ms of a '
        f"{span:,} ms run (< {SKEW_SPREAD:.0%}), so the timeline would be one thick diagonal; "
        'timeline(..., view="timeline") draws it anyway'
    )


def pick_operator(view: TraceView, operator: str | None) -> str:
    """The window operator to draw; raises TraceInputError naming the choices."""
    if len(view) == 0:
        raise TraceInputError("The trace is empty. The job recorded no records at all.")
    candidates = frames.window_operators(view) or view.operators("element")
    if not candidates:
        raise TraceInputError(
            "No element reached a keyed operator. The timeline places elements by event time "
            "at a window (or keyed) operator; this trace has none "
            f"(kinds: {', '.join(sorted(view.counts()))})."
        )
    if operator is None:
        return candidates[0]
    if operator not in candidates:
        raise TraceInputError(
            f"No window operator named {operator!r}. Choose one of: "
            f"{', '.join(map(repr, candidates))}."
        )
    return operator


def _timeline(
    view: TraceView,
    operator: str | None,
    max_points: int,
    labels: bool | None,
    diagonal: bool | None,
    width: int,
    height: int,
    element_labels: ElementLabel | None = None,
) -> alt.TopLevelMixin:
    view.read_parts(TIMELINE_PARTS)
    op = pick_operator(view, operator)
    elements = frames.element_fate_columns(view, op)
    n = len(elements)
    elements = _where_present(elements, "ts")
    untimed = n - len(elements)
    steps = frames.watermark_step_columns(view)
    # few firings (cleanups) are drawn one by one, with their texts; many are aggregated,
    # from their windows and times only
    fired = _window_marks(
        view, op, "fired", frames.firing_marks, frames.firing_columns, frames.firings
    )
    cleaned = _window_marks(
        view, op, "cleanup", frames.cleanup_marks, frames.cleanup_columns, frames.cleanups
    )
    lives = frames.window_life_columns(view, op)  # None: no window, or session merges
    if lives is None:
        lives = frames.window_lives(view, op)

    # processing-time windows: their start, end, firing and cleanup times are processing
    # times, not event times — they give the event-time axis nothing (see _bands)
    across = bool(len(lives)) and frames.processing_time_windows(view, op)
    horizons = {} if across else _horizons(lives, cleaned)
    per_window = _per_window(lives)  # once, for the bands and the horizons
    horizons, derived = _every_horizon(per_window, horizons, frames.allowed_lateness(view, op))
    x_values = (
        _extent(elements["ts"])
        if across
        else _extent(
            elements["ts"],
            lives["window_start"],
            lives["window_end"],
            cleaned["cleanup_time"],
            fired["at"],
            np.array([horizons[w] for w in derived], dtype=np.int64),
        )
    )
    if not x_values:
        x_values = _extent(steps["watermark"])
    y_values = _extent(
        elements["proc_time"],
        steps["proc_time"],
        fired["proc_time"],
        cleaned["proc_time"],
        lives["opened"],
    )
    x = palette.time_axis("event time", x_values)
    y = palette.time_axis("processing time", y_values)
    if not fired.empty:
        y = _label_room(y, height)

    notes: list[str] = [
        f"operator {op!r}: {len(elements):,} elements, {frames.pairs_text(len(lives))}, "
        f"{len(fired):,} firings"
    ]
    if untimed:
        notes.append(f"{untimed:,} elements without a timestamp are not drawn")
    if across:
        notes.append(
            "processing-time windows: [start, end) is processing time — a window holds the "
            "elements that reached the operator then, whatever their timestamps: its band "
            "spans the event-time axis over its life in processing time; firings and cleanups "
            "at their processing time, on the right edge"
        )
    not_drawn = _untimed_count(view, op, "fired", len(fired))
    if not_drawn:  # a GlobalWindow's firings: its window has no place on the event-time axis
        notes.append(
            f"{not_drawn:,} firings of the global window are not drawn (it has no start or end "
            "on the event-time axis)"
        )
    if steps.empty:
        notes.append("no watermark in this trace: no watermark line, nothing is late")

    plot = _Plot(x, y, width, height)
    # the firings' and cleanups' x: their event time (the timer's, else the window end and
    # cleanup time); of processing-time windows: the right edge (they have none)
    at_x = _RightEdge(x.title, x.kind, x.lo, x.hi) if across else x
    restarts = frames.restarts(view)
    watermark_layers = _watermarks(steps, x, y, notes, restarts)
    element_layer = _elements(view, elements, x, y, max_points, notes)
    # what labels keep off: the marks (elements, firings, cleanups) and the watermark line;
    # where firing and cleanup marks already sit (marks at one point are drawn side by side)
    occupied, points = _Centers(), _Boxes()
    _taken_by_marks(points, [element_layer, *watermark_layers], plot, lines=False)
    taken = points.copy()
    _taken_by_marks(taken, watermark_layers, plot, points=False)
    for box in _edge_boxes(watermark_layers, plot):
        taken.add(box)
    mark_plot = _Plot(at_x, y, width, height) if across else plot
    layers = [
        _bands(per_window, horizons, x, y, notes, across=across),
        _horizon_layer(per_window, horizons, x, y, derived),
        _idle_layer(view, x, y, notes),
        _paused_layer(view, x, y, notes),
        *_diagonal(elements, x, y, diagonal),
        *watermark_layers,
        element_layer,
        # the cleanups are placed after the firings' marks, before their labels
        *_firings(
            fired,
            mark_plot,
            labels,
            notes,
            taken,
            occupied,
            lambda: _cleanups(cleaned, at_x, y, notes, mark_plot, occupied, taken),
        ),
        _merges(view, op, x, y, notes),
        *_restarts(restarts, x, y, notes),
        _joins(view, op, x, y, notes),
    ]
    layers = [layer for layer in layers if layer is not None]
    points.add_small(occupied.boxes())
    layers = _edge_texts_off_marks(layers, plot, points, taken, notes)
    if element_labels is not None and element_layer is not None:
        layers += _element_label_layers(element_layer, element_labels, x, y, plot, taken, notes)
    layers = _drawing_order(layers)
    _with_category_scales(layers, _present_categories(layers))
    chart = spec.layer_chart(  # the layers are made here, for this chart only
        layers,
        width=width,
        height=height,
        title=palette.title("Timeline", notes),
        # one "what happened" legend; each reference line (watermark, ideal diagonal,
        # allowed-lateness horizon) its own dash legend
        resolve={
            "scale": {"color": "shared", "shape": "shared", "strokeDash": "independent"},
            "legend": {"strokeDash": "independent"},
        },
    )
    return palette.finish(chart, name="timeline", notes=notes, in_place=True)


TIMELINE_PARTS: dict[str, tuple[str, ...] | None] = {
    "operator": None,  # (whole: the records of nearly every kind are selected by operator)
    "proc_time": ("element", "watermark", "fired", "cleanup", "assigned"),
    "watermark": ("element", "watermark", "fired"),
    "ts": ("element", "timer_fired"),
    "window": ("fired", "cleanup", "assigned"),
    "key": ("fired", "cleanup", "assigned"),
}
"""The fields and kinds every timeline reads (``TraceView.read_parts``: each field's part
read once for all its kinds, on a trace not decoded yet): the elements' and firings' times;
the windows, keys and processing times of the window lives and marks; the firing timers'
timestamps; the operator of every record (None: the whole column, cheaper than the part of
the kinds it selects by operator, which are most of the trace's)."""

_extent = scale.extent
_Table = pd.DataFrame | frames.Columns  # a table the timeline reads (frames.Columns: few rows)


def _window_marks(
    view: TraceView,
    op: str,
    kind: str,
    marks: Callable[[TraceView, str], Any],
    columns: Callable[[TraceView, str], Any],
    records: Callable[[TraceView, str], Any],
) -> Any:
    """The firings or cleanups of ``op`` (records of ``kind``) to draw: aggregated marks
    (``marks``) when there are many, else one by one with their texts — as columns, or, when
    some record has no time window (``columns`` gives None), its records with one."""
    drawn = None
    if len(view.select(kind, operator=op)) > DETAIL_LIMIT:
        drawn = marks(view, op)
    if drawn is None or len(drawn) <= DETAIL_LIMIT:
        drawn = columns(view, op)
        if drawn is None:
            drawn = _where_present(records(view, op), "window_end")
    return drawn


def _untimed_count(view: TraceView, op: str, kind: str, drawn: int) -> int:
    """How many records of ``kind`` at ``op`` are not among the ``drawn`` ones: those of a
    window that is not a time window (Flink's ``GlobalWindow``)."""
    return len(view.select(kind, operator=op)) - drawn


def _where_present(frame: _Table, column: str) -> _Table:
    """The rows with a value in ``column`` (the frame itself when every row has one: no copy;
    nothing here changes a frame in place)."""
    values = frame[column]
    kind = values.dtype.kind if isinstance(values.dtype, np.dtype) else "O"
    if kind in "iub":  # numpy ints: every row has one
        return frame
    if kind == "f":
        present = ~np.isnan(np.asarray(values))
    else:
        present = np.asarray(pd.notna(values), dtype=bool)
    if present.all():
        return frame
    return frame.take(present) if isinstance(frame, frames.Columns) else frame[present]


# -- layers -------------------------------------------------------------------------------------


FLAT_BAND_PX = 4
"""The outline width of a window band of zero height (opened and closed at one processing
time); other bands have a 1 px outline."""


def _horizons(lives: _Table, cleaned: _Table) -> dict[tuple[int, int], int]:
    """The allowed-lateness horizon of each (start, end) window with lateness > 0: max
    timestamp + allowed lateness, read off its ``cleanup`` records (Flink's
    ``WindowOperator.cleanupTime``: ``window.maxTimestamp() + allowedLateness`` for event-time
    windows); a window cleaned at its max timestamp (lateness 0, or processing time) has
    none."""
    out: dict[tuple[int, int], int] = {}
    if cleaned.empty or lives.empty:
        return out
    column = cleaned["cleanup_time"]
    times = None if _int64(column) else column.tolist()
    if times is None or all(t.__class__ is int for t in times):  # the usual case
        stamps = np.array(column if times is None else times, dtype=np.int64)
        starts = np.asarray(cleaned["window_start"], dtype=np.int64)
        ends = np.asarray(cleaned["window_end"], dtype=np.int64)
        order = np.lexsort((stamps, ends, starts))  # per window, its latest cleanup last
        starts, ends, stamps = starts[order], ends[order], stamps[order]
        last = np.r_[(starts[1:] != starts[:-1]) | (ends[1:] != ends[:-1]), True]
        late = last & (stamps > ends - 1)
        keys = zip(starts[late].tolist(), ends[late].tolist(), strict=True)
        return dict(zip(keys, stamps[late].tolist(), strict=True))
    latest: dict[tuple[int, int], int] = {}  # the last cleanup time of each window
    for start, end, t in zip(
        cleaned["window_start"].tolist(),
        cleaned["window_end"].tolist(),
        times,
        strict=True,
    ):
        if _missing(t):
            continue
        window, t = (int(start), int(end)), int(t)
        if t > latest.get(window, t - 1):
            latest[window] = t
    for window, t in latest.items():
        if t > window[1] - 1:
            out[window] = t
    return out


def _every_horizon(
    per_window: list[_Window] | None,
    horizons: dict[tuple[int, int], int],
    allowed: int | None,
) -> tuple[dict[tuple[int, int], int], set[tuple[int, int]]]:
    """The horizon of every window, and which of them are derived rather than read off a
    ``cleanup`` record: a window merged away by a session merge (Flink's ``WindowOperator``
    deletes its cleanup timer at the merge, ``deleteCleanupTimer(m)``, and registers the
    result window's, so it never has a ``cleanup`` record) or still open at the end of the
    trace gets ``cleanup_time(max timestamp, allowed lateness)`` (``window_rules``: the one
    rule), ``allowed`` read off the operator's ``cleanup`` records
    (``frames.allowed_lateness``). Nothing is derived when they give no single lateness."""
    if not horizons or per_window is None or not allowed:
        return horizons, set()
    out = dict(horizons)
    derived = set()
    for w in per_window:
        window = (int(w.window_start), int(w.window_end))
        if window not in out and w.window_start < w.window_end:
            out[window] = cleanup_time(window[1] - 1, allowed)
            derived.add(window)
    return out, derived


def _int64(column: Any) -> bool:
    """Whether a table's column holds int64 values (numpy's, not objects)."""
    return isinstance(column.dtype, np.dtype) and column.dtype == np.int64


class _RightEdge(TimeAxis):
    """The event-time axis for the marks of processing-time windows (firings, cleanups): every
    time is put on its right edge (a processing time has no place on it); texts as the axis
    writes them."""

    def clip(self, value: Any) -> tuple[float | None, str]:
        if value is None or value != value:
            return None, ""
        return self.hi, ""

    def clip_all(self, values: list[Any]) -> list[tuple[float | None, str]]:
        return [self.clip(v) for v in values]


def _bands(
    per_window: list[_Window] | None,
    horizons: dict[tuple[int, int], int],
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    *,
    across: bool = False,
) -> alt.Chart | None:
    """The window bands; a window opened and closed at the same processing time — typically
    the last one, filled and cleaned up at the end of input — has no height: its outline is
    drawn ``FLAT_BAND_PX`` thick so that it does not vanish (its data stay exact).
    ``per_window``: ``_per_window(lives)``. ``across``: processing-time windows, whose
    [start, end) is processing time: each band spans the whole event-time axis (the window
    holds elements of any timestamp) over its life."""
    if per_window is None:
        return None
    wrapped = sum(w.window_start >= w.window_end for w in per_window)
    if wrapped:
        notes.append(
            f"{wrapped} window(s) whose end overflowed the long range (start >= end) have no band"
        )
        per_window = [w for w in per_window if w.window_start < w.window_end]
    per_window, k = _every_kth(per_window)
    if k > 1:
        notes.append(f"window bands: every {k}th of {len(per_window) * k:,} windows drawn")
    rows = []
    for w in per_window:
        if across:
            (x0, n0), (x1, n1) = (x.lo, ""), (x.hi, "")
        else:
            x0, n0 = x.clip(w.window_start)
            x1, n1 = x.clip(w.window_end)
        y0, _ = y.clip(w.opened)
        closed = w.closed
        y1 = y.hi if closed is None else y.clip(closed)[0]
        horizon = horizons.get((int(w.window_start), int(w.window_end)))
        rows.append(
            {
                "x": x0,
                "x2": x1,
                "y": y0,
                "y2": y1,
                "kind": "window",
                "window": f"[{x.fmt(w.window_start)}, {x.fmt(w.window_end)})",
                "keys": int(w.keys),
                "elements": int(w.elements),
                "firings": int(w.firings),
                "opened": y.fmt(w.opened),
                "closed": (
                    "still open at the end"
                    if closed is None
                    else (f"merged into {w.merged_into} at " if w.merged_into else "")
                    + y.fmt(closed)
                ),
                "accepts late elements until": "" if horizon is None else x.fmt(horizon),
                "note": (n0 + " " + n1).strip(),
            }
        )
    if not any(r["accepts late elements until"] for r in rows):
        for r in rows:
            del r["accepts late elements until"]
    mark = {
        "type": "rect",
        "fill": palette.WINDOW_FILL,
        "fillOpacity": palette.WINDOW_OPACITY,
        "stroke": palette.WINDOW_COLOR,
    }
    return spec.layer(
        rows,
        mark,
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            "y": y.channel("y"),
            "y2": {"field": "y2"},
            "strokeWidth": {
                "condition": {"test": "datum.y === datum.y2", "value": FLAT_BAND_PX},
                "value": 1,
            },
            "tooltip": spec.tooltips(rows, ["x", "x2", "y", "y2"]),
        },
    )


def _horizon_layer(
    per_window: list[_Window] | None,
    horizons: dict[tuple[int, int], int],
    x: TimeAxis,
    y: TimeAxis,
    derived: set[tuple[int, int]] | None = None,
) -> alt.Chart | None:
    """A dashed vertical line per window with lateness > 0 at its horizon (max timestamp +
    allowed lateness) over its band's life in processing time (``per_window``:
    ``_per_window(lives)``). ``derived``: the windows whose horizon ``_every_horizon``
    derived (no ``cleanup`` record: merged away, or still open); their tooltips say so."""
    if not horizons or per_window is None:
        return None
    rows = []
    for w in per_window:
        horizon = horizons.get((int(w.window_start), int(w.window_end)))
        if horizon is None:
            continue
        closed = w.closed
        hx, note = x.clip(horizon)
        rows.append(
            {
                "x": hx,
                "y": y.clip(w.opened)[0],
                "y2": y.hi if closed is None else y.clip(closed)[0],
                "line": palette.HORIZON,
                "kind": "allowed-lateness horizon",
                "window": f"[{x.fmt(w.window_start)}, {x.fmt(w.window_end)})",
                "max timestamp": x.fmt(int(w.window_end) - 1),
                "allowed lateness": f"{horizon - (int(w.window_end) - 1):,} ms",
                "horizon": x.fmt(horizon),
                "note": note,
            }
        )
        if derived:
            rows[-1]["from"] = _horizon_source(w, derived, y)
    rows, _ = _every_kth(rows)
    mark = {"type": "rule", "color": palette.HORIZON_COLOR, "strokeWidth": 1.5, "opacity": 0.8}
    return spec.layer(
        rows,
        mark,
        {
            "x": x.channel("x"),
            "y": y.channel("y"),
            "y2": {"field": "y2"},
            "strokeDash": _line_legend(palette.HORIZON, palette.HORIZON_DASH),
            "tooltip": spec.tooltips(rows, ["x", "y", "y2", "line"]),
        },
    )


def _horizon_source(w: _Window, derived: set[tuple[int, int]], y: TimeAxis) -> str:
    """Where a horizon comes from (the tooltip's "from"): the window's ``cleanup`` record, or
    the rule, for a window merged away (its contents then wait for the result window's
    horizon) or still open at the end of the trace."""
    if (int(w.window_start), int(w.window_end)) not in derived:
        return "its cleanup record"
    if w.merged_into:
        return (
            f"max timestamp + the operator's allowed lateness (merged into {w.merged_into} at "
            f"{y.fmt(w.closed)}: its contents then wait for that window's horizon)"
        )
    return "max timestamp + the operator's allowed lateness (still open at the end)"


def _line_legend(name: str, dash: list[int]) -> dict[str, Any]:
    """A strokeDash channel of one constant category: a legend entry explaining a line. It
    sits under the chart, where the plot's width holds the long label: in the right-hand legend
    column it widened the chart past a 1400 px JupyterLab window and was cut (issue 29)."""
    return {
        "field": "line",
        "type": "nominal",
        "title": None,
        "scale": {"domain": [name], "range": [dash]},
        "legend": {"orient": "bottom", "labelLimit": 0},
    }


class _Window(NamedTuple):
    """One (start, end) window over all keys (``_per_window``)."""

    window_start: int
    window_end: int
    keys: int
    elements: int
    firings: int
    opened: Any
    closed: int | None
    merged_into: str


def _per_window(lives: _Table) -> list[_Window] | None:
    """The windows of ``lives`` by (start, end), in that order: distinct keys, elements and
    firings summed, first opened, and closed (the last close) once every key's pane of it is
    cleaned up or merged away, else None; ``merged_into`` as ``frames.merged_text``. The
    (key, window) rows of ``window_lives`` (one per key text and window, ints) grouped with
    numpy."""
    if lives.empty:
        return None
    starts = np.asarray(lives["window_start"], dtype=np.int64)
    ends = np.asarray(lives["window_end"], dtype=np.int64)
    order = np.lexsort((ends, starts))  # by window; a window's rows in their order
    starts, ends = starts[order], ends[order]
    first = np.flatnonzero(np.r_[True, (starts[1:] != starts[:-1]) | (ends[1:] != ends[:-1])])
    bounds = np.r_[first, len(order)].tolist()
    present = np.asarray(pd.notna(np.asarray(lives["key"], dtype=object)), dtype=bool)
    keys = np.add.reduceat(present[order].astype(np.int64), first)
    elements = np.add.reduceat(np.asarray(lives["elements"], dtype=np.int64)[order], first)
    firings = np.add.reduceat(np.asarray(lives["firings"], dtype=np.int64)[order], first)
    opened = np.minimum.reduceat(np.asarray(lives["opened"], dtype=np.int64)[order], first)
    closed = _closed_per_window(np.asarray(lives["closed"]), order, first, bounds)
    merged_into = np.asarray(lives["merged_into"], dtype=object)[order]
    if pd.isna(merged_into).all():  # no session merge: no text
        texts = [""] * len(first)
    else:
        merged = merged_into.tolist()
        texts = [
            ", ".join(dict.fromkeys(group)) if all(isinstance(t, str) for t in group) else ""
            for group in (merged[a:b] for a, b in pairwise(bounds))
        ]
    return [
        _Window(*values)
        for values in zip(
            starts[first].tolist(),
            ends[first].tolist(),
            keys.tolist(),
            elements.tolist(),
            firings.tolist(),
            opened.tolist(),
            closed,
            texts,
            strict=True,
        )
    ]


def _closed_per_window(
    closed: np.ndarray, order: np.ndarray, first: np.ndarray, bounds: list[int]
) -> list[int | None]:
    """Per window (rows ``order``, windows starting at ``first``): the last close of its
    (key, window) rows, None while one of them is still open (missing)."""
    closed = closed[order]
    if closed.dtype.kind in "iu":  # every pane closed
        return np.maximum.reduceat(closed, first).tolist()
    if closed.dtype.kind == "f":  # NaN: still open
        still_open = np.logical_or.reduceat(np.isnan(closed), first).tolist()
        last = np.fmax.reduceat(closed, first).tolist()
        return [None if o else int(v) for o, v in zip(still_open, last, strict=True)]
    values = closed.tolist()
    return [
        None if any(map(_missing, values[a:b])) else int(max(values[a:b]))
        for a, b in pairwise(bounds)
    ]


def _wants_diagonal(elements: _Table, x: TimeAxis, y: TimeAxis, want: bool | None) -> bool:
    """Event time = processing time is drawn when asked, or — by default — when both axes are
    the same kind (both dates or both plain ms), their domains overlap, and at least half the
    elements arrive at or after their timestamp (so processing time reads like a real clock
    for these timestamps; simulated arrivals 0, 100, ... against timestamps in the thousands
    would make the line meaningless)."""
    if want is False or x.kind != y.kind:
        return False
    if max(x.lo, y.lo) >= min(x.hi, y.hi):
        return False
    if want:
        return True
    return bool(len(elements)) and bool((elements["proc_time"] >= elements["ts"]).mean() >= 0.5)


def _diagonal(elements: _Table, x: TimeAxis, y: TimeAxis, want: bool | None) -> list:
    if not _wants_diagonal(elements, x, y, want):
        return []
    lo, hi = max(x.lo, y.lo), min(x.hi, y.hi)
    rows = [{"x": v, "y": v, "line": palette.IDEAL, "kind": palette.IDEAL} for v in (lo, hi)]
    mark = {"type": "line", "color": palette.GUIDE_COLOR, "strokeWidth": 1}
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "strokeDash": _line_legend(palette.IDEAL, palette.IDEAL_DASH),
        "tooltip": [{"field": "kind", "type": "nominal"}],
    }
    return [spec.layer(rows, mark, encoding)]


def _watermarks(
    steps: _Table,
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    restarts: Sequence[frames.Restart] = (),
) -> list:
    """Step vertices (w_i, t_i), (w_i, t_{i+1}), (w_{i+1}, t_{i+1}), ... per operator, the last
    one held to the top edge; plus one point per record (tooltips). A restart (``restarts``)
    ends the line where the job failed: the watermarks start a new line at MIN at the
    restore's processing time (the clock went back to the checkpoint's)."""
    if steps.empty:
        return []
    seqs, operators, procs, marks = (
        steps[c].tolist() for c in ("seq", "operator", "proc_time", "watermark")
    )
    operators, kept = _shared_lines(operators, procs, marks)
    if kept is not None:
        seqs, procs, marks = ([v[i] for i in kept] for v in (seqs, procs, marks))
    if len(seqs) > scale.ROW_LIMIT // 2:  # thinned: a frame for scale.thin_steps
        frame = pd.DataFrame({c: steps[c] for c in frames.WATERMARK_STEP_COLUMNS})
        shared = frame if kept is None else frame.iloc[kept].assign(operator=operators)
        thinned = scale.thin_steps(shared, "proc_time", "operator", scale.ROW_LIMIT // 2)
        notes.append(f"watermark: {len(thinned):,} of {len(shared):,} records drawn ({scale.KEPT})")
        seqs, procs = thinned["seq"].tolist(), thinned["proc_time"].tolist()
        marks, operators = thinned["watermark"].tolist(), thinned["operator"].tolist()
    vertices, points, edges = [], [], []
    by_op: dict[Any, list[int]] = {}  # as groupby("operator", sort=False): first seen first
    for j, op in enumerate(operators):
        if not _missing(op):
            by_op.setdefault(op, []).append(j)
    for op, recs in by_op.items():
        # each operator's records clipped and formatted in bulk (as clip / fmt one by one)
        op_marks, op_procs = [marks[j] for j in recs], [procs[j] for j in recs]
        x_clipped = x.clip_all(op_marks)
        y_at = [c[0] for c in y.clip_all(op_procs)]
        proc_texts, mark_texts = y.fmt_all(op_procs), x.fmt_all(op_marks)
        attempts, ends = frames.steps_by_attempt([seqs[j] for j in recs], op_procs, restarts)
        for i, j in enumerate(recs):
            wx, note = x_clipped[i]
            t0 = y_at[i]
            t1 = y.hi if ends[i] is None else y.clip(ends[i])[0]
            attempt = attempts[i]
            vertices += [
                {"operator": op, "attempt": attempt, "i": 2 * i, "x": wx, "y": t0},
                {"operator": op, "attempt": attempt, "i": 2 * i + 1, "x": wx, "y": t1},
            ]
            points.append(
                {
                    "operator": op,
                    "x": wx,
                    "y": t0,
                    "kind": "watermark",
                    "seq": int(seqs[j]),
                    "proc_time": proc_texts[i],
                    "watermark": mark_texts[i],
                    "note": note,
                }
            )
            if note:
                edges.append({"x": wx, "y": t0, "text": _edge_text(note)})
    points = _one_dot_per_point(points)
    ops = list(dict.fromkeys(operators))
    dash = {
        "field": "operator",
        "type": "nominal",
        "title": "watermark of",
        "scale": {"domain": ops, "range": list(palette.WATERMARK_DASHES[: len(ops)])},
    }
    line = spec.layer(
        vertices,
        {"type": "line", "color": palette.WATERMARK_COLOR, "strokeWidth": 1.5},
        {
            "x": x.channel("x"),
            "y": y.channel("y"),
            "order": {"field": "i", "type": "quantitative"},
            "strokeDash": dash,
            "detail": {"field": "attempt", "type": "nominal"},  # a line per run attempt
        },
    )
    dots = spec.layer(
        points,
        {
            "type": "point",
            "color": palette.WATERMARK_COLOR,
            "size": 14,
            "filled": True,
            "opacity": 0.6,
        },
        {"x": x.channel("x"), "y": y.channel("y"), "tooltip": spec.tooltips(points, ["x", "y"])},
    )
    layers = [line, dots]
    if edges:
        mark = {
            "type": "text",
            "align": "right",
            "baseline": "top",
            "dx": -4,
            "dy": 4,
            "fontSize": 11,
            "font": "sans-serif",
        }
        encoding = {
            "x": x.channel("x"),
            "y": y.channel("y"),
            "text": {"field": "text", "type": "nominal"},
        }
        layers.append(spec.layer(_one_edge_text_per_point(edges), mark, encoding))
    return layers


def _restarts(
    restarts: Sequence[frames.Restart], x: TimeAxis, y: TimeAxis, notes: list[str]
) -> list[alt.Chart]:
    """A rule across the chart at each restore's processing time, with its text: the job
    restarted from a checkpoint, the clock went back to the checkpoint's and every watermark
    to MIN (what happens after it is drawn over what came before)."""
    if not restarts:
        return []
    rows = []
    for r in restarts:
        source = "the beginning" if r.checkpoint_id is None else f"checkpoint {r.checkpoint_id}"
        what = "started from" if r.failed_at is None else "restarted from"
        text = f"{what} {source} at {y.fmt(r.proc_time)}: watermarks back to MIN"
        rows += [
            {"x": x.lo, "y": y.clip(r.proc_time)[0], "text": text, "end": 0},
            {"x": x.hi, "y": y.clip(r.proc_time)[0], "text": text, "end": 1},
        ]
        if r.failed_at is not None:
            notes.append(
                f"a failure at {y.fmt(r.failed_at)}: the job {what} {source} — the clock went "
                f"back to {y.fmt(r.proc_time)} and every watermark to MIN; the replay is drawn "
                "over what came before"
            )
        else:
            notes.append(f"the run {what} {source}: every watermark started at MIN")
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "detail": {"field": "text", "type": "nominal"},
        "tooltip": [{"field": "text", "type": "nominal", "title": "restart"}],
    }
    rule = spec.layer(
        rows,
        {"type": "line", "color": palette.GUIDE_COLOR, "strokeWidth": 1, "strokeDash": [2, 2]},
        encoding,
    )
    label = spec.layer(
        [row for row in rows if row["end"] == 0],
        {"type": "text", "align": "left", "baseline": "bottom", "dx": 4, "dy": -2,
         "fontSize": 11, "font": "sans-serif", "color": palette.GUIDE_COLOR},
        {"x": x.channel("x"), "y": y.channel("y"), "text": {"field": "text", "type": "nominal"}},
    )  # fmt: skip
    return [rule, label]


def _shared_lines(
    operators: list[Any], procs: list[Any], marks: list[Any]
) -> tuple[list[Any], list[int] | None]:
    """The watermark steps (their operator, proc_time and watermark columns) with coinciding
    operators merged: operators whose records step at exactly the same processing times to
    exactly the same watermarks draw one line, named "a, b (same)" (the records of the first
    of them are kept); others keep their name. Returns the operators of the records kept and
    their positions (None: all of them, names unchanged)."""
    by_op: dict[Any, list[int]] = {}
    for i, op in enumerate(operators):
        by_op.setdefault(op, []).append(i)
    shared: dict[tuple, list[Any]] = {}
    for op, idx in by_op.items():
        shape = (tuple(map(procs.__getitem__, idx)), tuple(map(marks.__getitem__, idx)))
        shared.setdefault(shape, []).append(op)
    if len(shared) == len(by_op):
        return operators, None
    name: dict[Any, str | None] = {}
    for ops in shared.values():
        name[ops[0]] = ops[0] if len(ops) == 1 else ", ".join(map(str, ops)) + " (same)"
        for other in ops[1:]:
            name[other] = None
    kept = [i for i, op in enumerate(operators) if not _missing(name[op])]
    return [name[operators[i]] for i in kept], kept


def _one_dot_per_point(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One watermark dot per position: records at the same processing time with the same
    watermark (several operators', or a repeated one) would draw dots exactly under each
    other; the first one's dot stands for them, its tooltip naming each operator ("a; b")."""
    if len(points) < 2:
        return points
    seen: dict[tuple[Any, Any], dict[str, Any]] = {}
    out = []
    for p in points:
        at = (p["x"], p["y"])
        first = seen.get(at)
        if first is None:
            seen[at] = p
            out.append(p)
        elif p["operator"] not in str(first["operator"]).split("; "):
            first["operator"] = f"{first['operator']}; {p['operator']}"
    return out


def _one_edge_text_per_point(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One edge text per point (two lines clipped to the same edge point would print their
    texts over each other): the end-of-input one when there is one, else the first."""
    out: dict[tuple[Any, Any], dict[str, Any]] = {}
    for e in edges:
        seen = out.get((e["x"], e["y"]))
        if seen is None or (e["text"] == _edge_text("MAX ▶") != seen["text"]):
            out[(e["x"], e["y"])] = e
    return list(out.values())


def _edge_text(note: str) -> str:
    if note == "MAX ▶":
        return "watermark = MAX (end of input) →"
    if note == "◀ MIN":
        return "← watermark = MIN"
    return "watermark beyond the axis"


def _elements(
    view: TraceView,
    elements: _Table,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
) -> alt.Chart | None:
    if elements.empty:
        return None
    counts = _fate_counts(elements)
    notes.append(
        "elements: " + ", ".join(f"{counts[f]:,} {f}" for f in palette.FATES if f in counts)
    )
    if len(elements) > max_points:
        return _binned_elements(elements, x, y, max_points, notes)
    fates = elements["fate"].tolist()
    stamps_f = np.asarray(elements["ts"])
    off = int(((stamps_f < x.lo) | (stamps_f > x.hi)).sum())
    if off:
        notes.append(f"{off:,} element(s) beyond the event-time axis drawn on its edge")
    seqs = np.asarray(elements["seq"])
    d = frames.element_detail_lists(view, seqs)
    operators, keys, values = d["operator"], d["key"], d["value"]
    marks, stamps, sources = d["watermark"], d["ts"], d["source_index"]
    stamp_column = view.part("ts", seqs).take(seqs)
    proc_column = view.part("proc_time", seqs).take(seqs)
    procs = proc_column.tolist()  # exact ints
    if not all(s.__class__ is int for s in sources):
        sources = [None if _missing(s) else int(s) for s in sources]
    xs, x_notes = _positions(x, stamps, stamp_column)
    ys, _ = _positions(y, procs, proc_column)
    rows = [
        {
            "x": ex,
            "y": ey,
            "what": fate,
            "kind": "element",
            "seq": seq,
            "operator": operator,
            "key": key,
            "value": value,
            "ts": ts,
            "proc_time": proc,
            "watermark": mark,
            "windows": windows,
            "source_index": source,
            "note": note,
        }
        for seq, ey, fate, windows, ex, note, operator, key, value, ts, proc, mark, source in zip(
            seqs.tolist(),
            ys,
            fates,
            elements["windows"].tolist(),
            xs,
            x_notes,
            operators,
            keys,
            values,
            _texts(x, stamps, stamp_column),
            _texts(y, procs, proc_column),
            x.fmt_all(marks),
            sources,
            strict=True,
        )
    ]
    # every column but seq, windows and source_index holds texts (source_index: ints, or
    # None where the element has no source record, read off the rows)
    types = dict.fromkeys(rows[0], "nominal") | {"seq": "quantitative", "windows": "quantitative"}
    del types["source_index"]
    return spec.layer(
        rows,
        {"type": "point", "filled": True, "size": 70, "opacity": 0.9},
        _what_encoding(rows, x, y, ["x", "y"], types),
    )


def _fate_counts(elements: _Table) -> dict[str, int]:
    """How many elements of each fate there are (the fates present only)."""
    if isinstance(elements, frames.Columns):
        counts = np.bincount(elements["fate_code"], minlength=len(palette.FATES)).tolist()
        return {f: n for f, n in zip(palette.FATES, counts, strict=True) if n}
    return dict(Counter(elements["fate"].tolist()))


def _inside(column: Any, lo: int, hi: int) -> bool:
    """Every value of a time column (``TimeColumn``) present, an exact int and in [lo, hi]."""
    values = column.values
    return bool(
        column.exact
        and len(values)
        and column.present.all()
        and lo <= int(values.min())
        and int(values.max()) <= hi
    )


def _positions(axis: TimeAxis, values: list[Any], column: Any) -> tuple[list[Any], list[str]]:
    """``axis.clip_all(values)`` as positions and notes (``column``: the values' TimeColumn);
    when every value is an exact int inside the domain (the usual case), the values as they
    are, without a note."""
    if _inside(column, axis.lo, axis.hi):
        return values, [""] * len(values)
    clipped = axis.clip_all(values)
    return [c[0] for c in clipped], [c[1] for c in clipped]


def _texts(axis: TimeAxis, values: list[Any], column: Any) -> list[str]:
    """``axis.fmt_all(values)`` (``column``: the values' TimeColumn); on a ms axis, exact ints
    within ±2**53 written in one pass."""
    if axis.kind == "ms" and _inside(column, -palette.EXACT, palette.EXACT):
        return list(map("{:,} ms".format, values))
    return axis.fmt_all(values)


def _binned_elements(
    elements: _Table, x: TimeAxis, y: TimeAxis, max_points: int, notes: list[str]
) -> alt.Chart:
    """``elements``: ``frames.element_fate_columns`` (their fates as codes), or a frame."""
    codes = elements["fate_code"] if isinstance(elements, frames.Columns) else None
    cells, nx, ny = scale.bin_elements(elements, (x.lo, x.hi), (y.lo, y.hi), max_points, codes)
    notes.append(
        f"{len(elements):,} elements binned on a {nx} × {ny} grid: a mark is a cell's elements "
        "of one fate, at their mean position, sized by count"
    )
    # on-time cells first, so the rarer fates (the point of the lesson) are drawn on top: by
    # on time, then count, both descending, ties in their order (a stable sort, as
    # ``sort_values(["common", "count"], ascending=False, kind="stable")``)
    common = (cells["fate"] == "on time").to_numpy(dtype=bool)
    order = np.lexsort((-cells["count"].to_numpy(), ~common))
    cells = cells.take(order)
    rows = [
        {
            "x": cx,
            "y": cy,
            "what": fate,
            "count": count,
            "kind": "elements (binned)",
            "ts": f"{x.fmt(xa)} .. {x.fmt(xb)}",
            "proc_time": f"{y.fmt(ya)} .. {y.fmt(yb)}",
        }
        for cx, cy, fate, count, xa, xb, ya, yb in zip(
            cells["x"].round().astype("int64").tolist(),
            cells["y"].round().astype("int64").tolist(),
            cells["fate"].tolist(),
            cells["count"].astype("int64").tolist(),
            cells["x_min"].round().tolist(),
            cells["x_max"].round().tolist(),
            cells["y_min"].round().tolist(),
            cells["y_max"].round().tolist(),
            strict=True,
        )
    ]
    encoding = _what_encoding(rows, x, y, ["x", "y"])
    encoding["size"] = {
        "field": "count",
        "type": "quantitative",
        "scale": {"type": "sqrt", "range": [8, 160]},
        "title": "elements",
    }
    return spec.layer(rows, {"type": "point", "filled": True, "opacity": 0.75}, encoding)


def _fired_label(cause: str, fired_by: str, timer: Any, x: TimeAxis) -> str:
    """What a firing label says caused it: the timer ("event-time timer at 4999", on a date
    axis "event-time timer at 09:51:59.999"), "element", "end of input" (an event-time timer
    fired by the MAX watermark)."""
    if fired_by in ("end of input", "cause not traced") or not cause:
        return fired_by
    if x.kind == "epoch" and not _missing(timer) and not palette.is_off_chart(timer):
        stamp = x.fmt(int(timer))  # "2019-08-24 09:51:59.999 UTC": the time of day
        return f"{fired_by} at {stamp.split(' ')[1]}"
    return cause


def _firings(
    fired: _Table,
    plot: _Plot,
    labels: bool | None,
    notes: list[str],
    taken: _Boxes,
    occupied: _Centers,
    then: Callable[[], list] = list,
) -> list:
    """The firing marks (marks at one point side by side), the layers ``then`` makes (drawn
    next, before the labels are placed: the cleanups) and the firing labels."""
    if fired.empty:
        return then()
    x, y = plot.x, plot.y
    if len(fired) > DETAIL_LIMIT:
        return [_firings_aggregated(fired, x, y, notes), *then()]
    cols = {
        c: fired[c].tolist()
        for c in [
            "seq", "result", "pane", "count", "watermark", "proc_time", "cause", "timer",
            "firing", "late_firing",
        ]
    }  # fmt: skip
    cols["key"] = frames.key_texts(fired["key"])
    # each record's texts once (most marks are one firing)
    seqs, panes, counts = (_int_texts(cols[c]) for c in ("seq", "pane", "count"))
    results = frames.shorts(cols["result"], 40)
    # each firing in the one vocabulary (winviz.trace.vocabulary): first firing / re-firing,
    # and "late firing" when it is one (Flink has no pane timing)
    timings = [
        f + (", late firing" if late else "")
        for f, late in zip(cols["firing"], cols["late_firing"], strict=True)
    ]
    keys, causes, timers, marks = cols["key"], cols["cause"], cols["timer"], cols["watermark"]
    rows = []
    # a firing sits at the event time of the timer that fired it (see frames.firing_causes),
    # else at its window's end: early firings of one window are not stacked at the end
    by = ["window_start", "window_end", "at", "proc_time", "fired_by"]
    for (start, end, at, proc, fired_by), idx in frames.groups(fired, by).items():
        fx, note = x.clip(at)
        i = idx[0]
        if len(idx) == 1:
            cause, shown = causes[i], _fired_label(causes[i], fired_by, timers[i], x)
            shown += ", late firing" if cols["late_firing"][i] else ""
            key, result, label = keys[i], results[i], f"{results[i]} · {shown}"
            seq, pane, count, timing = seqs[i], panes[i], counts[i], timings[i]
        else:
            distinct = list(dict.fromkeys(causes[j] for j in idx))
            cause = ", ".join(distinct)
            shown = (
                _fired_label(distinct[0], fired_by, timers[i], x)
                if len(distinct) == 1
                else fired_by
            )
            late = sum(bool(cols["late_firing"][j]) for j in idx)
            if late:
                shown += ", late firing" if late == len(idx) else f", {late} late firing(s)"
            key = ", ".join(keys[j] for j in idx)
            result = ", ".join(results[j] for j in idx)
            if len(idx) <= 3:
                label = ", ".join(f"{keys[j]}={results[j]}" for j in idx) + f" · {shown}"
            else:
                label = f"{len(idx)} keys · {shown}"
            seq, pane, count = (", ".join(t[j] for j in idx) for t in (seqs, panes, counts))
            timing = ", ".join(dict.fromkeys(timings[j] for j in idx))
        rows.append(
            {
                "x": fx,
                "y": y.clip(proc)[0],
                "what": palette.FIRED_EVENT.get(fired_by, "fired: cause not traced"),
                "label": label,
                "kind": "fired",
                "seq": seq,
                "window": f"[{x.fmt(start)}, {x.fmt(end)})",
                "key": key,
                "result": result,
                "pane": pane,
                "cause": cause,
                "count": count,
                "proc_time": y.fmt(proc),
                "watermark": x.fmt(marks[i]),
                "firing": timing,
                "note": note,
            }
        )
    rows, k = _every_kth(rows)
    if k > 1:
        notes.append(f"firings: every {k}th firing mark drawn")
    offsets = _side_by_side(rows, plot, occupied, taken, "firing")
    marks = _offset_layers(
        rows,
        offsets,
        {"type": "point", "filled": True, "size": 90, "strokeWidth": 1, "stroke": palette.INK},
        _what_encoding(rows, x, y, ["x", "y", "what", "label"]),
        notes,
        "firing",
    )
    marks += then()
    show = labels if labels is not None else len(rows) <= LABEL_LIMIT
    if not show:
        if labels is None:
            notes.append(f"firing labels hidden ({len(rows):,} firing marks; hover for details)")
        return marks
    placed, hidden = _place_labels(rows, plot, taken, offsets)
    if hidden:
        notes.append(
            f"{hidden} firing label(s) left out where they would overlap (hover the marks)"
        )
    layers = [*marks]
    for (align, dx, dy), texts in placed.items():
        mark = {
            "type": "text",
            "align": align,
            "baseline": "middle",
            "dx": dx,
            "dy": dy,
            "fontSize": LABEL_FONT,
            "color": palette.INK,
            "font": "sans-serif",
        }
        encoding = {
            "x": x.channel("x"),
            "y": y.channel("y"),
            "text": {"field": "label", "type": "nominal"},
        }
        layers.append(spec.layer(texts, mark, encoding))
    return layers


# -- label placement ----------------------------------------------------------------------------

LABEL_FONT = 10
CHAR_PX = 6.0  # a generous average advance of a 10 px sans-serif character
LABEL_PLACES = (
    ("left", 7, -9),
    ("left", 7, 9),
    ("right", -7, -9),
    ("right", -7, 9),
    ("left", 7, -21),
    ("right", -7, -21),
    ("left", 7, 21),
    ("right", -7, 21),
)
"""Where a firing label may go, in order of preference: (align, dx, dy) from its mark —
right above, right below, left above, left below, then a line further away."""


LABEL_ROOM_PX = 28
"""Room kept above the last processing time for the labels of the last firings (at the end
of input they sit right under the top edge, beside the watermark's MAX note)."""


def _label_room(y: TimeAxis, height: int) -> TimeAxis:
    """``y`` with its top raised by ``LABEL_ROOM_PX`` pixels (of a ``height``-pixel plot)."""
    extra = math.ceil((y.hi - y.lo) * LABEL_ROOM_PX / max(1, height - LABEL_ROOM_PX))
    return TimeAxis(y.title, y.kind, y.lo, y.hi + extra)


class _Plot:
    """Data → pixel positions of a timeline (x across, y up, as Vega-Lite draws them)."""

    def __init__(self, x: TimeAxis, y: TimeAxis, width: int, height: int) -> None:
        self.x, self.y, self.width, self.height = x, y, width, height

    def px(self, vx: float) -> float:
        return (vx - self.x.lo) / max(1, self.x.hi - self.x.lo) * self.width

    def py(self, vy: float) -> float:
        return (1 - (vy - self.y.lo) / max(1, self.y.hi - self.y.lo)) * self.height


_Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels


def _text_box(px: float, py: float, text: str, align: str, dx: float, dy: float) -> _Box:
    w, h = CHAR_PX * len(text), LABEL_FONT + 2
    left = px + dx if align == "left" else px + dx - w
    return (left, py + dy - h / 2, left + w, py + dy + h / 2)


def _overlaps(a: _Box, b: _Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _place_labels(
    rows: list[dict[str, Any]],
    plot: _Plot,
    taken: _Boxes,
    offsets: list[int] | None = None,
    field: str = "label",
) -> tuple[dict[tuple[str, int, int], list[dict[str, Any]]], int]:
    """Each label (``row[field]``) at the first of ``LABEL_PLACES`` where it stays inside the
    plot and crosses no box already ``taken`` — the marks, the watermark line and its edge
    text, the labels placed before it — so no label runs into a mark, a line, the legend
    right of the plot or another label. ``offsets``: each row's mark drawn that many pixels
    right of its point (``_side_by_side``). Each placed label is added to ``taken``. Returns
    the rows per place (its dx including the mark's offset) and how many labels fit nowhere
    (left to the tooltip)."""
    placed: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    shift = [0] * len(rows) if offsets is None else offsets
    hidden = 0
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["y"], rows[i]["x"]))
    for i in order:  # top to bottom, left to right
        r = rows[i]
        px, py = plot.px(r["x"]) + shift[i], plot.py(r["y"])
        for align, dx, dy in LABEL_PLACES:
            box = _text_box(px, py, r[field], align, dx, dy)
            inside = box[0] >= 0 and box[2] <= plot.width and box[1] >= 0
            inside = inside and box[3] <= plot.height
            if inside and not taken.hits(box):
                taken.add(box)
                row = {"x": r["x"], "y": r["y"], "label": r[field], "kind": f"{_KINDS[field]}"}
                placed.setdefault((align, dx + shift[i], dy), []).append(row)
                break
        else:
            hidden += 1
    return placed, hidden


_KINDS = {"label": "firing label", "element_label": "element label"}


class _Boxes:
    """Pixel boxes (left, top, right, bottom) as one array: asking what a box crosses is one
    vectorised test over all of them (few questions are asked: a label's places, an edge
    text's)."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []
        self.cached: np.ndarray | None = None

    def copy(self) -> _Boxes:
        out = _Boxes()
        out.parts = list(self.parts)
        return out

    def add_small(self, boxes: list[_Box]) -> None:
        """Add these boxes (finite: the caller's)."""
        if boxes:
            self.parts.append(np.asarray(boxes, dtype=float).reshape(-1, 4))
            self.cached = None

    def add_array(self, boxes: np.ndarray) -> None:
        """Add these boxes (an n × 4 float array, finite)."""
        if len(boxes):
            self.parts.append(boxes)
            self.cached = None

    def add(self, box: _Box) -> None:
        if all(math.isfinite(v) for v in box):
            self.add_small([box])

    def hits(self, box: _Box) -> bool:
        if self.cached is None:
            self.cached = np.concatenate(self.parts) if self.parts else np.empty((0, 4))
        a = self.cached
        return bool(
            np.any(
                (a[:, 0] < box[2]) & (box[0] < a[:, 2]) & (a[:, 1] < box[3]) & (box[1] < a[:, 3])
            )
        )


def _point_radius(mark: dict[str, Any]) -> float:
    """Half the side of a point mark's box (its area ``size`` px², binned marks up to 160)."""
    return math.sqrt(mark.get("size", 160)) / 2 + 1


def _taken_by_marks(
    taken: _Boxes, layers: list[Any], plot: _Plot, lines: bool = True, points: bool = True
) -> None:
    """Add the boxes of these layers' point marks (and of their lines' segments) to ``taken``."""
    for layer in layers:
        if layer is None:
            continue
        kind, rows = layer.mark["type"], layer.data.values
        if kind == "point" and rows and points:
            r = _point_radius(layer.mark)
            # positions as floats (None, a missing position: NaN, left out below)
            xs = np.array([row["x"] for row in rows], dtype=float)
            ys = np.array([row["y"] for row in rows], dtype=float)
            px = (xs - plot.x.lo) / max(1, plot.x.hi - plot.x.lo) * plot.width
            py = (1 - (ys - plot.y.lo) / max(1, plot.y.hi - plot.y.lo)) * plot.height
            ok = np.isfinite(px) & np.isfinite(py)
            taken.add_array(np.column_stack((px - r, py - r, px + r, py + r))[ok])
        elif kind == "line" and lines:
            _taken_by_segments(taken, rows, plot)


_HALF_EXACT = 2**52


def _taken_by_segments(taken: _Boxes, rows: list[dict[str, Any]], plot: _Plot) -> None:
    """Add the box (1 px wider on every side) of each segment of a line layer's ``rows`` —
    between rows of one operator and attempt, both with a position — to ``taken``; when
    every position is an int within ±2**52 (the usual case) as arrays, with the values
    ``_Plot.px`` / ``py`` give."""
    pairs = [
        (a, b)
        for a, b in pairwise(rows)
        if a.get("operator") == b.get("operator") and a.get("attempt") == b.get("attempt")
        and None not in (a["x"], a["y"], b["x"], b["y"])
    ]  # fmt: skip
    values = [p[n][c] for p in pairs for n in (0, 1) for c in ("x", "y")]
    values += [plot.x.lo, plot.x.hi, plot.y.lo, plot.y.hi]
    if not all(v.__class__ is int and -_HALF_EXACT <= v <= _HALF_EXACT for v in values):
        for a, b in pairs:
            ax, ay, bx, by = plot.px(a["x"]), plot.py(a["y"]), plot.px(b["x"]), plot.py(b["y"])
            taken.add((min(ax, bx) - 1, min(ay, by) - 1, max(ax, bx) + 1, max(ay, by) + 1))
        return
    # (a difference of two of them is below 2**53: exact as a float too, so each operation
    # rounds as Python's does)
    v = np.array(values[:-4], dtype=np.int64).reshape(-1, 4)
    span_x, span_y = max(1, plot.x.hi - plot.x.lo), max(1, plot.y.hi - plot.y.lo)
    px = (v[:, [0, 2]] - plot.x.lo).astype(float) / span_x * plot.width
    py = (1 - (v[:, [1, 3]] - plot.y.lo).astype(float) / span_y) * plot.height
    boxes = np.column_stack(
        (px.min(axis=1) - 1, py.min(axis=1) - 1, px.max(axis=1) + 1, py.max(axis=1) + 1)
    )
    taken.add_array(boxes[np.isfinite(boxes).all(axis=1)])


STACK_PX = 11
"""How far apart (pixels) marks at one point are drawn: side by side, left to right."""


def _side_by_side(
    rows: list[dict[str, Any]], plot: _Plot, occupied: _Centers, taken: _Boxes | None, what: str
) -> list[int]:
    """Each mark's offset in pixels: 0, or ``STACK_PX`` steps right of its point while a firing
    or cleanup mark drawn before it sits there — so marks at one point (an on-time and a late
    firing, a cleanup at a firing) are all seen, none under another. Each mark goes to
    ``occupied`` (and its box to ``taken``, which labels keep off)."""
    half = STACK_PX / 2
    sx, sy = plot.width / max(1, plot.x.hi - plot.x.lo), plot.height / max(1, plot.y.hi - plot.y.lo)
    x0, y0, h = plot.x.lo, plot.y.lo, plot.height
    places = [((row["x"] - x0) * sx, h - (row["y"] - y0) * sy) for row in rows]
    offsets = stack_offsets(places, occupied)
    if taken is not None:
        arr = np.asarray(
            [
                (px + k - half, py - half, px + k + half, py + half)
                for (px, py), k in zip(places, offsets, strict=True)
            ],
            dtype=float,
        ).reshape(-1, 4)
        taken.add_array(arr[np.isfinite(arr).all(axis=1)])
    return offsets


def stack_offsets(places: list[tuple[float, float]], occupied: _Centers | None = None) -> list[int]:
    """The side-by-side rule for marks at (pixel) ``places``, in drawing order: each mark's
    offset, 0 or ``STACK_PX`` steps right of its place while a mark placed before it (in
    ``occupied``, which each mark joins) is nearer than ``STACK_PX``. Shared by the charts
    that draw firings and cleanups (the timeline, the window lanes)."""
    occupied = _Centers() if occupied is None else occupied
    offsets = []
    for px, py in places:
        k = occupied.first_free(px, py, 12)
        occupied.add(px + k * STACK_PX, py)
        offsets.append(k * STACK_PX)
    return offsets


class _Centers:
    """Mark centres on a grid of ``STACK_PX`` cells: is a centre nearer than ``STACK_PX`` (in
    both directions) to one already added?"""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[tuple[float, float]]] = {}
        # a mark's x -> the places tried right of it: [x, its cell column, a centre found
        # near it and that centre's cell (or None)]
        self.tries: dict[float, list[list[Any]]] = {}

    def add(self, px: float, py: float) -> None:
        if math.isfinite(px) and math.isfinite(py):
            self.cells.setdefault((int(px // STACK_PX), int(py // STACK_PX)), []).append((px, py))

    def near(self, px: float, py: float) -> bool:
        if not (math.isfinite(px) and math.isfinite(py)):
            return False
        step, get = STACK_PX, self.cells.get
        i, j = int(px // step), int(py // step)
        for key in (
            (i, j), (i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1),
            (i - 1, j - 1), (i - 1, j + 1), (i + 1, j - 1), (i + 1, j + 1),
        ):  # fmt: skip
            centres = get(key)
            if centres:
                for qx, qy in centres:
                    if -step < px - qx < step and -step < py - qy < step:
                        return True
        return False

    def first_free(self, px: float, py: float, most: int) -> int:
        """The least ``k`` below ``most`` where no centre is ``near(px + k * STACK_PX, py)``,
        else ``most`` — what ``k = 0; while k < most and near(px + k * STACK_PX, py): k += 1``
        gives. Marks piled at one point try the same places one after another: each place of
        ``px`` keeps the centre found near it, tried first the next time, before the cells."""
        if not (math.isfinite(px) and math.isfinite(py)):
            return 0
        step, get = STACK_PX, self.cells.get
        j = int(py // step)
        tries = self.tries.setdefault(px, [])
        for k in range(most):
            if k == len(tries):
                spot = px + k * step
                tries.append([spot, int(spot // step), None])
            tried = tries[k]
            spot, i, known = tried
            if known is not None:  # (a centre of the cells near() reads, near this place)
                qx, qy, ci, cj = known
                in_cells = -1 <= ci - i <= 1 and -1 <= cj - j <= 1
                if in_cells and -step < spot - qx < step and -step < py - qy < step:
                    continue
            known = _centre_near(get, spot, py, i, j)
            if known is None:
                return k
            tried[2] = known
        return most

    def boxes(self) -> list[_Box]:
        half = STACK_PX / 2
        return [
            (x - half, y - half, x + half, y + half)
            for centres in self.cells.values()
            for x, y in centres
        ]


_AROUND = ((0, 0), (0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (-1, 1), (1, -1), (1, 1))


def _centre_near(
    get: Callable[[tuple[int, int]], Any], px: float, py: float, i: int, j: int
) -> tuple[float, float, int, int] | None:
    """A centre ``_Centers.near(px, py)`` finds (``get``: its cells' ``get``; (i, j): the
    cell of (px, py)) and its cell, or None."""
    step = STACK_PX
    for di, dj in _AROUND:
        centres = get((i + di, j + dj))
        if centres:
            for qx, qy in centres:
                if -step < px - qx < step and -step < py - qy < step:
                    return qx, qy, i + di, j + dj
    return None


def _offset_layers(
    rows: list[dict[str, Any]],
    offsets: list[int],
    mark: dict[str, Any],
    encoding: dict[str, Any],
    notes: list[str],
    what: str,
) -> list[alt.Chart]:
    """The layer of these marks, each drawn ``offsets[i]`` pixels right of its point (its
    ``dx``, the mark's ``xOffset``) when any is moved; the subtitle says how many were."""
    moved = sum(1 for off in offsets if off)
    if not moved:
        return [spec.layer(rows, mark, encoding)]
    notes.append(
        f"{moved:,} {what} mark(s) at the point of another drawn beside it, {STACK_PX} px "
        "right (hover for its times)"
    )
    for row, off in zip(rows, offsets, strict=True):
        row["dx"] = off
    tooltip = [t for t in encoding.get("tooltip", []) if t.get("field") != "dx"]
    return [
        spec.layer(rows, mark | {"xOffset": {"expr": "datum.dx"}}, encoding | {"tooltip": tooltip})
    ]


def _drawing_order(layers: list[Any]) -> list[Any]:
    """The layers in drawing order: areas, lines and window marks first, then the elements,
    the watermark's dots, and every text last — so no dot lies under a larger mark and no
    label under a mark (a stable sort: each group keeps its order)."""

    def rank(layer: Any) -> int:
        kind = layer.mark["type"]
        rows = layer.data.values if hasattr(layer.data, "values") else []
        first = rows[0].get("kind") if rows else None
        if kind == "text":
            return 3
        if kind == "point" and first == "watermark":
            return 2
        if kind == "point" and first in ("element", "elements (binned)"):
            return 1
        return 0

    return sorted(layers, key=rank)


EDGE_PLACES = (("top", 4), ("bottom", -4), ("top", 18), ("bottom", -18))
"""Where the watermark's edge text may go, in order: right below its point (its place), right
above, a line further below, a line further above."""


def _edge_texts_off_marks(
    layers: list[Any], plot: _Plot, points: _Boxes, taken: _Boxes, notes: list[str]
) -> list[Any]:
    """The watermark's edge texts ("watermark = MAX (end of input) →", right-aligned below
    their point) moved to the first of ``EDGE_PLACES`` where they cross no mark (``points``;
    away from its place: no mark, line or label, ``taken``), and left out where none is free
    (the subtitle says so). Returns the layers, a layer per place used."""
    out = []
    for layer in layers:
        rows = layer.data.values if layer.mark["type"] == "text" else []
        if not rows or "text" not in rows[0] or layer.mark.get("baseline") != "top":
            out.append(layer)
            continue
        by: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for e in rows:
            px, py = plot.px(e["x"]), plot.py(e["y"])
            left = px - 4 - CHAR_PX * len(e["text"])
            for n, (baseline, dy) in enumerate(EDGE_PLACES):
                top = py + dy if baseline == "top" else py + dy - LABEL_FONT - 3
                box = (left, top, px - 4, top + LABEL_FONT + 3)
                if not (points if n == 0 else taken).hits(box):
                    taken.add(box)
                    by.setdefault((baseline, dy), []).append(e)
                    break
            else:
                notes.append(f"{e['text']}: its text is left out (it would cross marks)")
        encoding = {
            "x": plot.x.channel("x"),
            "y": plot.y.channel("y"),
            "text": {"field": "text", "type": "nominal"},
        }
        for (baseline, dy), part in by.items():
            if (baseline, dy) == EDGE_PLACES[0]:
                layer.data.values[:] = part
                out.append(layer)
            else:
                mark = dict(layer.mark) | {"baseline": baseline, "dy": dy}
                out.append(spec.layer(part, mark, encoding))
    return out


ElementLabel = int | str | Callable[[Any], Any]
"""How ``timeline(element_labels=...)`` labels an element: a field index of a tuple / list
value, a key of a dict value, or a function of the value."""


def element_label(value_text: Any, how: ElementLabel) -> str:
    """The label of an element whose value the trace holds as ``value_text`` (its JSON text):
    ``how`` applied to the value (an index, a key or a function); "" where it names nothing."""
    try:
        value = json.loads(value_text)
    except (TypeError, ValueError):
        value = value_text
    if callable(how):
        out = how(value)
    elif isinstance(how, int) and isinstance(value, list) and -len(value) <= how < len(value):
        out = value[how]
    elif isinstance(value, dict):
        out = value.get(how)
    else:
        out = None
    return "" if out is None else str(out)


def _element_label_layers(
    elements: alt.Chart,
    how: ElementLabel,
    x: TimeAxis,
    y: TimeAxis,
    plot: _Plot,
    taken: _Boxes,
    notes: list[str],
) -> list[alt.Chart]:
    """A label beside each element dot (``element_label``), placed as the firing labels are
    (``_place_labels``): crossing no mark, line or other label."""
    rows = [
        {"x": r["x"], "y": r["y"], "element_label": element_label(r.get("value"), how)}
        for r in elements.data.values
        if r.get("kind") == "element"
    ]
    rows = [r for r in rows if r["element_label"]]
    placed, hidden = _place_labels(rows, plot, taken, None, "element_label")
    if hidden:
        notes.append(f"{hidden} element label(s) left out where they would overlap (hover)")
    text = {"field": "label", "type": "nominal"}
    encoding = {"x": x.channel("x"), "y": y.channel("y"), "text": text}
    return [
        spec.layer(
            texts,
            {"type": "text", "align": align, "baseline": "middle", "dx": dx, "dy": dy,
             "fontSize": LABEL_FONT + 1, "fontWeight": "bold", "color": palette.INK,
             "font": "sans-serif"},
            encoding,
        )
        for (align, dx, dy), texts in placed.items()
    ]  # fmt: skip


def _edge_boxes(layers: list[alt.Chart], plot: _Plot) -> list[_Box]:
    """The pixel boxes of the watermark's edge texts ("watermark = MAX (end of input) →"),
    drawn right-aligned below their point (see ``_watermarks``)."""
    boxes = []
    for layer in layers:
        if layer.mark["type"] != "text":
            continue
        for e in layer.data.values:
            px, py = plot.px(e["x"]), plot.py(e["y"])
            w = CHAR_PX * len(e["text"])
            boxes.append((px - 4 - w, py + 4, px - 4, py + 4 + LABEL_FONT + 3))
    return boxes


CLEANUP_TIMER_TEXT = "the operator's cleanup timer (not the trigger's)"
"""What fired a cleanup: a ``cleanup`` record is written only when the timer the window
operator registered at ``cleanupTime(window)`` fires (``WindowOperator.registerCleanupTimer``
/ ``isCleanupTime``); a trigger's timer fires the window (the "fired: event-time timer"
marks), never cleans it — unless it is the same timer (allowed lateness 0)."""


def _cleanups(
    cleaned: _Table,
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    plot: _Plot | None = None,
    occupied: _Centers | None = None,
    taken: _Boxes | None = None,
) -> list[alt.Chart]:
    if cleaned.empty:
        return []
    if len(cleaned) > DETAIL_LIMIT:
        return [_cleanups_aggregated(cleaned, x, y, notes)]
    seqs, marks = cleaned["seq"].tolist(), cleaned["watermark"].tolist()
    keys = frames.key_texts(cleaned["key"])
    rows = []
    by = ["window_start", "window_end", "proc_time", "cleanup_time"]
    for (start, end, proc, ctime), idx in frames.groups(cleaned, by).items():
        cx, note = x.clip(ctime)
        rows.append(
            {
                "x": cx,
                "y": y.clip(proc)[0],
                "what": "cleanup",
                "kind": "cleanup",
                "seq": _join(seqs, idx),
                "window": f"[{x.fmt(start)}, {x.fmt(end)})",
                "key": ", ".join(keys[i] for i in idx),
                "cleanup_time": x.fmt(ctime),
                "timer": CLEANUP_TIMER_TEXT,
                "proc_time": y.fmt(proc),
                "watermark": x.fmt(marks[idx[0]]),
                "note": note,
            }
        )
    rows, k = _every_kth(rows)
    if k > 1:
        notes.append(f"cleanups: every {k}th cleanup mark drawn")
    offsets = [0] * len(rows)
    if plot is not None and occupied is not None:
        offsets = _side_by_side(rows, plot, occupied, taken, "cleanup")
    return _offset_layers(
        rows,
        offsets,
        {"type": "point", "filled": True, "size": 50},
        _what_encoding(rows, x, y, ["x", "y", "what"]),
        notes,
        "cleanup",
    )


def _idle_layer(view: TraceView, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """The idle periods of the run's inputs (``idle.idle_spans``): a grey strip per input
    along the left edge over the processing times it was idle, and the subtitle names them."""
    spans = idle.idle_spans(view)
    if spans:
        notes.append(idle.lines_text(spans))
    return idle.strip_layer(spans, x, y)


def _paused_layer(view: TraceView, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """Watermark alignment's paused spans (``propagation.view_paused_spans``): a dark strip
    per paused input along the right edge over the processing times it read nothing, and the
    subtitle names them (the propagation chart draws the same spans)."""
    spans = view_paused_spans(view)
    if spans:
        notes.append(idle.paused_text(spans))
    return idle.paused_layer(spans, x, y)


def _merges(view: TraceView, op: str, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """The session merges of ``op`` (Flink's ``MergingWindowSet.addWindow`` merging windows,
    one ``merged`` record each): a "merged" mark per window merged away, at (its start, the
    merge's processing time) — the corner where its band ends — naming the window it merged
    into; windows of several keys merged at one point are one mark. ``merged_windows`` holds
    the windows the set had before (the new element's own window is not among them, so the
    mark never sits on the element that caused the merge)."""
    if not len(view.select("merged", operator=op)):
        return None
    merges = frames.merged(view, op)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, m in enumerate(merges.itertuples()):
        into = (int(m.window_start), int(m.window_end))
        for w in m.merged_windows:
            if w != into:
                groups.setdefault((int(w[0]), int(w[1]), *into, int(m.proc_time)), []).append(i)
    seqs, marks = merges["seq"].tolist(), merges["watermark"].tolist()
    keys = merges["key_text"].tolist()
    rows = []
    for (start, end, into_start, into_end, proc), idx in groups.items():
        mx, note = x.clip(start)
        rows.append(
            {
                "x": mx,
                "y": y.clip(proc)[0],
                "what": "merged",
                "kind": "merged",
                "seq": _join(seqs, idx),
                "key": ", ".join(keys[i] for i in idx),
                "merged away": f"[{x.fmt(start)}, {x.fmt(end)})",
                "into": f"[{x.fmt(into_start)}, {x.fmt(into_end)})",
                "proc_time": y.fmt(proc),
                "watermark": x.fmt(marks[idx[0]]),
                "note": note,
            }
        )
    n = len(merges)
    notes.append(
        f'{n:,} session merge{"" if n == 1 else "s"} ("merged": at the start of each window '
        "merged away, when it merged)"
    )
    return spec.layer(
        rows,
        {"type": "point", "filled": True, "size": 160},
        _what_encoding(rows, x, y, ["x", "y", "what"]),
    )


def _joins(view: TraceView, op: str, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """An interval join's pairs (``joined``, at the output's timestamp: the larger of the two)
    and the buckets its cleanup timers removed (``buffer_removed``, at the bucket's timestamp),
    at the processing time they happened; None for an operator without them."""
    rows: list[dict[str, Any]] = []
    for kind, what in (("joined", "joined"), ("buffer_removed", "buffer removed")):
        if view.kind_code(kind) < 0:
            continue
        at = view.select(kind, operator=op)
        if not len(at):
            continue
        stamps, procs = view.ints("ts", at)[0].tolist(), view.ints("proc_time", at)[0].tolist()
        keys = frames.key_texts(view.column("key", at))
        first, second = (view.detail(kind, f, at).tolist() for f in detail_fields(kind))
        for i, seq in enumerate(at.tolist()):
            cx, note = x.clip(stamps[i])
            row = {"x": cx, "y": y.clip(procs[i])[0], "what": what, "seq": seq, "key": keys[i]}
            if kind == "joined":
                row |= {"left_ts": x.fmt(first[i]), "right_ts": x.fmt(second[i])}
            else:
                row |= {"side": first[i], "elements": second[i]}
            rows.append(row | {"ts": x.fmt(stamps[i]), "proc_time": y.fmt(procs[i]), "note": note})
        notes.append(
            f"{len(at):,} pairs joined (at the output's timestamp)"
            if kind == "joined"
            else f"{len(at):,} buffer buckets removed by cleanup timers"
        )
    if not rows:
        return None
    rows, k = _every_kth(rows)
    if k > 1:
        notes.append(f"joins: every {k}th mark drawn")
    return spec.layer(
        rows,
        {"type": "point", "filled": True, "size": 40},
        _what_encoding(rows, x, y, ["x", "y", "what"]),
    )


def _firings_aggregated(
    fired: pd.DataFrame, x: TimeAxis, y: TimeAxis, notes: list[str]
) -> alt.Chart:
    """One mark per (window, cause, event time of the firing timer — else the window end)
    at the first such firing's processing time."""
    starts = np.asarray(fired["window_start"], dtype=np.int64)
    ends = np.asarray(fired["window_end"], dtype=np.int64)
    at = np.asarray(pd.to_numeric(fired["at"])).astype(np.int64)
    proc = np.asarray(pd.to_numeric(fired["proc_time"]))
    causes, names = pd.factorize(np.asarray(fired["fired_by"], dtype=object))
    rank = np.argsort(np.argsort(np.asarray(names, dtype=object)))[causes]  # by cause name
    order = np.lexsort((rank, at, ends, starts))  # groups sorted as groupby(sort=True)
    keys = np.stack([starts, ends, at, rank])[:, order]
    first = np.flatnonzero(np.r_[True, (keys[:, 1:] != keys[:, :-1]).any(axis=0)])
    proc = proc[order]
    n = np.diff(np.r_[first, len(order)])
    firsts, lasts = np.fmin.reduceat(proc, first), np.fmax.reduceat(proc, first)
    cause = np.asarray(names, dtype=object)[causes[order][first]]
    agg = pd.DataFrame(
        {
            "window_start": keys[0, first],
            "window_end": keys[1, first],
            "at": keys[2, first],
            "fired_by": cause,
            "n": n,
            "first": firsts,
            "last": lasts,
        }
    )
    agg, k = scale.every_kth(agg, scale.ROW_LIMIT)
    notes.append(
        f"{len(fired):,} firings drawn as one mark per window and cause (at the first "
        "firing's processing time)" + (f"; every {k}th mark" if k > 1 else "")
    )
    rows = [
        {
            "x": x.clip(at)[0],
            "y": y.clip(first)[0],
            "what": palette.FIRED_EVENT.get(fired_by, "fired: cause not traced"),
            "kind": "fired (aggregated)",
            "window": f"[{x.fmt(start)}, {x.fmt(end)})",
            "fired by": fired_by,
            "firings": int(n),
            "proc_time": f"{y.fmt(first)} .. {y.fmt(last)}",
        }
        for start, end, at, fired_by, n, first, last in zip(
            agg["window_start"].tolist(),
            agg["window_end"].tolist(),
            agg["at"].tolist(),
            agg["fired_by"].tolist(),
            agg["n"].tolist(),
            agg["first"].tolist(),
            agg["last"].tolist(),
            strict=True,
        )
    ]
    return spec.layer(
        rows,
        {"type": "point", "filled": True, "size": 40, "strokeWidth": 0.5, "stroke": palette.INK},
        _what_encoding(rows, x, y, ["x", "y"]),
    )


def _cleanups_aggregated(
    cleaned: pd.DataFrame, x: TimeAxis, y: TimeAxis, notes: list[str]
) -> alt.Chart:
    """One mark per window at its last cleanup."""
    starts = np.asarray(cleaned["window_start"], dtype=np.int64)
    ends = np.asarray(cleaned["window_end"], dtype=np.int64)
    order = np.lexsort((ends, starts))  # windows in (start, end) order
    starts, ends = starts[order], ends[order]
    first = np.flatnonzero(np.r_[True, (starts[1:] != starts[:-1]) | (ends[1:] != ends[:-1])])
    agg = pd.DataFrame(
        {
            "window_start": starts[first],
            "window_end": ends[first],
            "keys": np.diff(np.r_[first, len(order)]),
            "proc": np.fmax.reduceat(np.asarray(pd.to_numeric(cleaned["proc_time"]))[order], first),
            "at": np.fmax.reduceat(
                np.asarray(pd.to_numeric(cleaned["cleanup_time"]))[order], first
            ),
        }
    )
    agg, k = scale.every_kth(agg, scale.ROW_LIMIT)
    notes.append(
        f"{len(cleaned):,} cleanups drawn as one mark per window (its last)"
        + (f"; every {k}th mark" if k > 1 else "")
    )
    rows = [
        {
            "x": x.clip(at)[0],
            "y": y.clip(proc)[0],
            "what": "cleanup",
            "kind": "cleanup (aggregated)",
            "window": f"[{x.fmt(start)}, {x.fmt(end)})",
            "keys": int(keys),
            "cleanup_time": x.fmt(at),
            "proc_time": y.fmt(proc),
        }
        for start, end, keys, at, proc in zip(
            agg["window_start"].tolist(),
            agg["window_end"].tolist(),
            agg["keys"].tolist(),
            agg["at"].tolist(),
            agg["proc"].tolist(),
            strict=True,
        )
    ]
    return spec.layer(
        rows, {"type": "point", "filled": True, "size": 30}, _what_encoding(rows, x, y, ["x", "y"])
    )


def _int_texts(values: list[Any]) -> list[str]:
    """Each value as ``_join`` writes it: an int as an int, missing as empty."""
    return [str(v) if v.__class__ is int else "" if _missing(v) else str(int(v)) for v in values]


def _join(values: list[Any], idx: list[int]) -> str:
    """The values at idx as "1, 2, 3" (ints as ints, missing as empty)."""
    return ", ".join("" if _missing(values[i]) else str(int(values[i])) for i in idx)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


# -- shared encodings -------------------------------------------------------------------------


def _what_encoding(
    rows: list[dict[str, Any]],
    x: TimeAxis,
    y: TimeAxis,
    skip: list[str],
    types: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Position, colour and shape by "what happened" (scales set by _with_category_scales),
    tooltips for the other columns (``types``: as ``spec.tooltips``)."""
    return {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "color": {"field": "what", "type": "nominal", "title": "what happened"},
        "shape": {"field": "what", "type": "nominal", "title": "what happened"},
        "tooltip": spec.tooltips(rows, skip, types),
    }


def _every_kth(rows: list[Any]) -> tuple[list[Any], int]:
    """scale.every_kth for a list of rows."""
    if len(rows) <= scale.ROW_LIMIT:
        return rows, 1
    k = math.ceil(len(rows) / scale.ROW_LIMIT)
    return rows[::k], k


def _present_categories(layers: list[alt.Chart]) -> list[str]:
    """The "what happened" categories drawn, in legend order."""
    seen: set[str] = set()
    for layer in layers:
        seen.update(r["what"] for r in layer.data.values if "what" in r)
    order = list(palette.FATES) + list(palette.WINDOW_EVENTS) + list(palette.JOIN_EVENTS)
    return [c for c in order if c in seen]


def _with_category_scales(layers: list[alt.Chart], present: list[str]) -> None:
    """One legend, "what happened", with only the categories present, each with its fixed
    colour and shape (set on every layer coloured by it)."""
    colors = (
        dict(zip(palette.FATES, palette.FATE_COLORS, strict=True))
        | dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_COLORS, strict=True))
        | dict(zip(palette.JOIN_EVENTS, palette.JOIN_EVENT_COLORS, strict=True))
    )
    shapes = (
        dict(zip(palette.FATES, palette.FATE_SHAPES, strict=True))
        | dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_SHAPES, strict=True))
        | dict(zip(palette.JOIN_EVENTS, palette.JOIN_EVENT_SHAPES, strict=True))
    )
    for layer in layers:
        enc = layer.encoding
        if getattr(enc, "color", alt.Undefined) is not alt.Undefined:
            enc["color"]["scale"] = {"domain": present, "range": [colors[c] for c in present]}
            enc["shape"]["scale"] = {"domain": present, "range": [shapes[c] for c in present]}
