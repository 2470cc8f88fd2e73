"""``timeline``: event time (x) against processing time (y) for one window operator.

Layers, back to front: window bands and allowed-lateness horizons (``bands``), idle and
paused strips (``idle``), the ideal diagonal, the watermark (a step line per distinct
staircase, lines lying on each other drawn in turns: ``watermark_steps``), the elements by
fate (``fates``), the firings, cleanups, merges and joins (``window_marks``), the restarts
(``watermark_steps``), their
labels placed off every mark and line (``labels``). Large traces are reduced per layer
(``scale``); the subtitle says how. ``view="auto"`` draws the skew chart instead when the
timeline would be one thick diagonal (``auto_view``): more than ``SKEW_MIN_ELEMENTS``
elements whose skews (processing time − timestamp) spread over less than ``SKEW_SPREAD`` of
their processing-time span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from winviz.trace import restores, vocabulary
from winviz.viz import (
    bands,
    fates,
    idle,
    labels,
    palette,
    piles,
    replay,
    scale,
    spec,
    trace_view,
    watermark_steps,
    window_lives,
    window_marks,
)
from winviz.viz.boxes import Taken
from winviz.viz.labels import STACK_PX, ElementLabel, Plot
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.propagation import view_paused_spans
from winviz.viz.skew import skew_of_view
from winviz.viz.trace_view import Columns, TraceView
from winviz.viz.validation import check_size

VIEWS = ("auto", "timeline", "skew")
SKEW_MIN_ELEMENTS = 1000  # view="auto" never picks the skew chart for this many elements or fewer
SKEW_SPREAD = 0.02  # ... nor unless their skews spread over less than this share of the run


@palette.public_chart("timeline")
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
) -> spec.ChartDict:
    """The event-time × processing-time chart of a trace (see the module docstring).

    ``trace``: a Trace, its ``to_pandas()`` frame, or a JobExecutionResult. ``operator``: the
    window operator to show (default: the first one). ``max_points``: elements drawn one by
    one up to this many (≤ 5,000), binned above. ``labels``: firing labels (default: at most
    ``LABEL_LIMIT`` (25) firing marks). ``diagonal``: draw event time = processing time
    (default: automatic). ``view``: "timeline", "skew" (``skew_chart``) or "auto"
    (``auto_view``). ``element_labels``: label each element dot by a field index of a tuple
    value (``0``: its first field), a key of a dict value, or a function of the value; labels
    that fit nowhere are left to the tooltip. Input that cannot be drawn gives a message card
    (``usermeta.winviz.status == "message"``); nothing raises for bad data."""
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
    check_size(width, height)
    tv = trace_view.open_trace(trace)
    if view != "timeline":
        op = pick_operator(tv, operator)
        reason = auto_view(tv, op) if view == "auto" else None
        if view == "skew" or reason is not None:
            return skew_of_view(tv, op, max_points, width, height, chosen=reason)
    return _timeline(tv, operator, max_points, labels, diagonal, width, height, element_labels)


def auto_view(view: TraceView, operator: str) -> str | None:
    """Why ``view="auto"`` draws the skew chart instead of the timeline of ``operator`` (see
    the module docstring; times |t| <= 2**53 only), or None to draw the timeline."""
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


def _timeline(
    view: TraceView,
    operator: str | None,
    max_points: int,
    show_labels: bool | None,
    diagonal: bool | None,
    width: int,
    height: int,
    element_labels: ElementLabel | None,
) -> spec.ChartDict:
    view.read_parts(TIMELINE_PARTS)
    op = pick_operator(view, operator)
    every_element = fates.element_fate_columns(view, op)
    timed = ~np.isnan(every_element["ts"])  # (a float column)
    elements = every_element if timed.all() else every_element.take(timed)
    steps = watermark_steps.watermark_step_columns(view)
    # few firings (cleanups) are drawn one by one, with their texts; many are aggregated
    fired, cleaned = (window_marks._window_marks(view, op, k) for k in ("fired", "cleanup"))
    lives = window_lives.window_life_columns(view, op)  # None: no window, or session merges
    if lives is None:
        lives = window_lives.window_lives(view, op)
    # processing-time windows: their times are processing times, nothing on the event-time axis
    across = bool(len(lives)) and window_lives.processing_time_windows(view, op)
    horizons, derived = ({}, frozenset()) if across else window_lives.every_horizon(view, op)
    x, y, notes = _axes_and_notes(
        view, op, every_element, elements, steps, fired, cleaned, lives, horizons, derived, across
    )
    if not fired.empty:
        y = labels._label_room(y, height)
    plot = Plot(x, y, width, height)
    # the firings' and cleanups' plot: of processing-time windows, x on the right edge
    mark_plot = Plot(_RightEdge(x.title, x.kind, x.lo, x.hi), y, width, height) if across else plot
    restarts = watermark_steps.restarts(view)
    # (the watermark's shape for the labels; drawn: lines on each other cut into runs)
    watermark_layers, watermark_drawn = _watermarks(steps, x, y, notes, restarts)
    element_layer, replay_layer = _elements(view, elements, x, y, max_points, notes, restarts)
    # what labels keep off: the marks (elements, firings, cleanups) and the watermark line;
    # where firing and cleanup marks already sit (marks at one point are drawn side by side)
    occupied, points, lines = piles.Grid(STACK_PX), Taken(), Taken()
    labels._taken_by_marks(points, [element_layer, replay_layer, *watermark_layers], plot, False)
    occupied.avoid = points.copy()  # (a firing or cleanup moved aside keeps off them)
    labels._taken_by_marks(lines, watermark_layers, plot, points=False)  # (once, for both)
    taken = points.copy()
    taken.extend(lines)
    diagonal_layers = _diagonal(elements, x, y, diagonal)
    for layer in diagonal_layers:  # (a guide: kept off where a label has a place)
        a, b = spec.rows(layer)
        seg = (plot.px(a["x"]), plot.py(a["y"]), plot.px(b["x"]), plot.py(b["y"]))
        taken.add_segment(seg, a["kind"])
    for box in labels._edge_boxes(watermark_layers, plot):
        taken.add(box)
    # the allowed-lateness horizons are lines too: no label or edge text crosses one
    chains = window_lives.merge_chains(view, op) if derived else None
    per_window = bands.per_window(view, op, lives)
    band_layer, horizon_layer = bands._bands(
        per_window, horizons, x, y, notes, derived, chains, across, height
    )
    labels._taken_by_rules(taken, horizon_layer, plot)
    layers = [
        band_layer,
        horizon_layer,
        *_strip_layers(view, x, y, notes),
        *diagonal_layers,
        *watermark_drawn,
        element_layer,
        replay_layer,
    ]
    # the cleanups are placed after the firings' marks, before their labels
    marks, rows, offsets = window_marks._firings(fired, mark_plot, notes, taken, occupied)
    layers += marks + window_marks._cleanups(cleaned, mark_plot, notes, taken, occupied)
    # an interval join's pairs and buffer removals: placed as the firings and cleanups are
    layers += window_marks._joins(view, op, plot, notes, taken, occupied)
    layers += window_marks._firing_labels(rows, offsets, mark_plot, show_labels, notes, taken)
    # (after the cleanups are placed) a ring round each mark others were counted on
    ring_layer = piles.ring_layer(occupied, mark_plot.x.channel("x"), y.channel("y"), 90)
    merge_layer = window_marks._merges(view, op, x, y, notes)
    layers += [ring_layer, merge_layer]
    layers = [layer for layer in layers if layer is not None]
    points.add_array(occupied.boxes())
    # (an edge text at its own place keeps off the marks and the lines, not off its own box)
    points.extend(lines)
    labels._taken_by_rules(points, horizon_layer, plot)
    layers = labels._edge_texts_off_marks(layers, plot, points, taken, notes)
    if restarts or element_labels is not None:
        # the restarts' texts and the element labels keep off the "merged" marks, the rings
        # (at their offsets); the join marks were added to ``taken`` where they were placed
        labels._taken_by_marks(taken, [merge_layer], plot, lines=False)
        labels._taken_by_marks(taken, [ring_layer], mark_plot, lines=False)
    # the restarts' texts: off every mark, line and text so far; the element labels keep off
    places = watermark_steps.restart_places(restarts, plot, taken)
    layers += watermark_steps.restart_layers(restarts, y, places, notes=notes)
    if element_labels is not None and element_layer is not None:
        layers += labels._element_label_layers(element_layer, element_labels, plot, taken, notes)
    layers = labels._drawing_order(layers)
    window_marks._with_category_scales(layers)
    chart = {
        "layer": layers,
        "width": width,
        "height": height,
        # one "what happened" legend; each reference line its own dash legend
        "resolve": {
            "scale": {
                "color": "shared",
                "shape": "shared",
                "strokeDash": "independent",
                "stroke": "independent",
            },
            "legend": {"strokeDash": "independent", "stroke": "independent"},
        },
    }
    return palette.finish(chart, name="timeline", notes=notes, heading="Timeline")


def _axes_and_notes(
    view: TraceView,
    op: str,
    every_element: Columns,
    elements: Columns,
    steps: Columns,
    fired: Columns,
    cleaned: Columns,
    lives: Columns,
    horizons: dict[tuple[int, int], int],
    derived: frozenset[tuple[int, int]],
    across: bool,
) -> tuple[TimeAxis, TimeAxis, list[str]]:
    """The event-time and processing-time axes — their domains hold every element, window,
    firing, cleanup and derived horizon (of processing-time windows, ``across``: the
    timestamps only), else the watermarks — and the subtitle's first lines."""
    x_columns = [elements["ts"]]
    if not across:
        x_columns += [lives["window_start"], lives["window_end"], cleaned["cleanup_time"]]
        x_columns += [fired["at"], np.array([horizons[w] for w in derived], dtype=np.int64)]
    x_values = scale.extent(*x_columns) or scale.extent(steps["watermark"])
    y_values = scale.extent(
        elements["proc_time"],
        steps["proc_time"],
        fired["proc_time"],
        cleaned["proc_time"],
        lives["opened"],
    )
    undone = int(restores.undone(view.trace, np.asarray(fired["seq"])).sum())
    notes: list[str] = [
        f"operator {op!r}: {replay.elements_text(view.trace, elements)}, "
        f"{window_lives.pairs_text(len(lives))}, "
        + vocabulary.kept_count(len(fired) - undone, undone, "firing")
    ]
    if len(every_element) > len(elements):
        untimed = len(every_element) - len(elements)
        notes.append(_not_drawn(untimed, "element", "without a timestamp"))
    if across:
        notes.append(
            "processing-time windows: [start, end) is processing time — a window holds the "
            "elements that reached the operator then, whatever their timestamps: its band "
            "spans the event-time axis over its life in processing time; firings and cleanups "
            "at their processing time, on the right edge"
        )
    not_drawn = len(view.select("fired", operator=op)) - len(fired)
    if not_drawn:  # a GlobalWindow's firings: its window has no place on the event-time axis
        notes.append(
            _not_drawn(not_drawn, "firing", "of the global window")
            + " (it has no start or end on the event-time axis)"
        )
    if steps.empty:
        notes.append("no watermark in this trace: no watermark line, nothing is late")
    x = palette.time_axis("event time", x_values)
    return x, palette.time_axis("processing time", y_values), notes


def _not_drawn(n: int, noun: str, which: str) -> str:
    """A note that ``n`` things the trace holds are not drawn, counted as ``vocabulary.counted``
    with the verb agreeing: "1 element without a timestamp is not drawn"."""
    return f"{vocabulary.counted(n, noun)} {which} {'is' if n == 1 else 'are'} not drawn"


TIMELINE_PARTS: dict[str, tuple[str, ...] | None] = {
    "operator": None,  # (whole: the records of nearly every kind are selected by operator)
    "proc_time": ("element", "watermark", "fired", "cleanup", "assigned"),
    "watermark": ("element", "watermark", "fired", "cleanup"),
    "ts": ("element", "timer_fired", "fired", "watermark", "cleanup"),
    "window": ("fired", "cleanup", "assigned", "timer_fired"),
    "key": ("fired", "cleanup", "assigned", "element", "timer_fired"),
    "detail": ("element", "arrival", "fired", "timer_fired", "cleanup"),
}
"""The fields and kinds every timeline reads (``TraceView.read_parts``: each field's part read
once for all its kinds, on a trace not decoded yet)."""


class _RightEdge(TimeAxis):
    """The event-time axis for the marks of processing-time windows: every time on its right
    edge (a processing time has no place on it); texts as the axis writes them."""

    def clip(self, value: Any) -> tuple[float | None, str]:
        if value is None or value != value:
            return None, ""
        return self.hi, ""

    def clip_all(self, values: list[Any]) -> list[tuple[float | None, str]]:
        return [self.clip(v) for v in values]


def _diagonal(elements: Columns, x: TimeAxis, y: TimeAxis, want: bool | None) -> list:
    """The ideal diagonal, event time = processing time: when asked, or by default when both
    axes are of one kind, overlap, and half the elements arrive at or after their timestamp."""
    lo, hi = max(x.lo, y.lo), min(x.hi, y.hi)
    if want is False or x.kind != y.kind or lo >= hi:
        return []
    if not want and not (
        len(elements) and bool((elements["proc_time"] >= elements["ts"]).mean() >= 0.5)
    ):
        return []
    rows = [{"x": v, "y": v, "line": palette.IDEAL, "kind": palette.IDEAL} for v in (lo, hi)]
    mark = {"type": "line", "color": palette.GUIDE_COLOR, "strokeWidth": 1}
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "strokeDash": bands._line_legend(palette.IDEAL, palette.IDEAL_DASH),
        "tooltip": [{"field": "kind", "type": "nominal"}],
    }
    return [spec.layer(rows, mark, encoding)]


def _watermarks(
    steps: Columns,
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    restarts: Sequence[watermark_steps.Restart],
) -> tuple[list, list]:
    """The watermark (``watermark_steps.staircase``): step lines per operator and run attempt,
    the last held to the top edge, an operator in a shade and dash of its own; a dot per
    point; the edge texts. Returns the layers as one line (what labels keep off) and as
    drawn (``watermark_steps.step_lines``: lines on each other in turns)."""
    if steps.empty:
        return [], []
    seqs, operators, procs, marks = (
        steps[c].tolist() for c in ("seq", "operator", "proc_time", "watermark")
    )
    operators, kept = _shared_lines(operators, procs, marks)
    if kept is not None:
        seqs, procs, marks = ([v[i] for i in kept] for v in (seqs, procs, marks))
    if len(seqs) > scale.ROW_LIMIT // 2:  # thinned: a frame for scale.thin_steps
        frame = pd.DataFrame({c: steps[c] for c in watermark_steps.WATERMARK_STEP_COLUMNS})
        shared = frame if kept is None else frame.iloc[kept].assign(operator=operators)
        thinned = scale.thin_steps(shared, "proc_time", "operator", scale.ROW_LIMIT // 2)
        notes.append(f"watermark: {len(thinned):,} of {len(shared):,} records drawn ({scale.KEPT})")
        seqs, procs = thinned["seq"].tolist(), thinned["proc_time"].tolist()
        marks, operators = thinned["watermark"].tolist(), thinned["operator"].tolist()
    by_op: dict[Any, list[int]] = {}  # as groupby("operator", sort=False): first seen first
    for j, op in enumerate(operators):
        if not window_marks._missing(op):
            by_op.setdefault(op, []).append(j)
    lines = [
        ({"operator": op}, [seqs[j] for j in js], [procs[j] for j in js], [marks[j] for j in js])
        for op, js in by_op.items()
    ]
    vertices, points = watermark_steps.staircase(lines, y, x, restarts)
    one_dot: dict[tuple[Any, Any], dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
    for dot in points:
        op, place = dot["operator"], (dot["x"], dot["y"])
        dot["shade"] = op
        # one dot per point: the first one's stands for the others, naming each operator
        first = one_dot.setdefault(place, dot)
        if first is not dot and op not in str(first["operator"]).split("; "):
            first["operator"] = f"{first['operator']}; {op}"
        if dot["note"]:
            text = _EDGE_TEXTS.get(dot["note"], "watermark beyond the axis")
            edges.append({"x": dot["x"], "y": dot["y"], "text": text})
    ops = list(by_op)

    def by_operator(values: Sequence[Any], legend: bool = True, turn: int = 0) -> dict[str, Any]:
        """The n-th operator in the n-th of ``values``; past the fifth the shades start again,
        each round with the next dash, so no two of the first 25 operators are drawn alike."""
        encoding = {"field": "operator", "type": "nominal", "title": "watermark of"}
        rounds = len(palette.WATERMARK_SHADES)
        cycled = [values[(n + turn * (n // rounds)) % len(values)] for n in range(len(ops))]
        scale = {"scale": {"domain": ops, "range": cycled}}
        return encoding | scale | ({} if legend else {"legend": None})

    xy = {"x": x.channel("x"), "y": y.channel("y")}
    encoding = {
        **xy,
        "order": {"field": "i", "type": "quantitative"},
        "stroke": by_operator(palette.WATERMARK_SHADES),
        "strokeDash": by_operator(palette.WATERMARK_DASHES, turn=1),
    }
    mark = {"type": "line", "strokeWidth": 2}
    line, drawn, _ = watermark_steps.step_lines(
        vertices, "operator", mark, encoding, order=ops, legend=False
    )
    points = list(one_dot.values())
    fill = {"fill": by_operator(palette.WATERMARK_SHADES, legend=False) | {"field": "shade"}}
    dots = spec.layer(
        points,
        {"type": "point", "size": 14, "filled": True, "opacity": 0.6},
        {**xy, **fill, "tooltip": spec.tooltips(points, ["x", "y", "shade"])},
    )
    texts = [
        spec.text_layer(part, xy, align=align, baseline="top", dx=labels.EDGE_DX[align], dy=4)
        for align, part in _edge_sides(edges)
    ]
    return [line, dots, *texts], [*drawn, dots, *texts]


def _edge_sides(edges: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The edge texts, one per point (the end-of-input one where there is one, else the
    first), by alignment (``labels.EDGE_DX``): those at MIN left-aligned, the others right."""
    one: dict[tuple[Any, Any], dict[str, Any]] = {}
    for e in edges:
        seen = one.get((e["x"], e["y"]))
        if seen is None or (e["text"] == _EDGE_TEXTS["MAX ▶"] != seen["text"]):
            one[(e["x"], e["y"])] = e
    sides: dict[str, list[dict[str, Any]]] = {"right": [], "left": []}
    for e in one.values():
        sides["left" if e["text"] == _EDGE_TEXTS["◀ MIN"] else "right"].append(e)
    return [(align, part) for align, part in sides.items() if part]


_EDGE_TEXTS = {"MAX ▶": "watermark = MAX (end of input) →", "◀ MIN": "← watermark = MIN"}


def _shared_lines(
    operators: list[Any], procs: list[Any], marks: list[Any]
) -> tuple[list[Any], list[int] | None]:
    """Operators stepping at the same processing times to the same watermarks merged into one
    line "a, b (same)": the operators of the records kept and their positions (None: all)."""
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
        name |= dict.fromkeys(ops[1:])
    kept = [i for i, op in enumerate(operators) if not window_marks._missing(name[op])]
    return [name[operators[i]] for i in kept], kept


def _elements(
    view: TraceView,
    elements: Columns,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
    restarts: Sequence[watermark_steps.Restart] = (),
    arrived: bool = False,
) -> tuple[spec.ChartDict | None, spec.ChartDict | None]:
    """The elements' layer, and that of those read again after a restart (``replay``), or
    None. ``arrived``: a binned mark says when its cell's first element arrived (the
    scrubber's)."""
    if elements.empty:
        return None, None
    notes.append("elements: " + replay.fates_text(view.trace, elements))
    if len(elements) > max_points:
        return _binned_elements(elements, x, y, max_points, notes, arrived), None
    off = int(((elements["ts"] < x.lo) | (elements["ts"] > x.hi)).sum())
    if off:
        notes.append(f"{off:,} element(s) beyond the event-time axis drawn on its edge")
    seqs = np.asarray(elements["seq"])
    d = fates.element_detail_lists(view, seqs)
    values, stamps, sources = d["value"], d["ts"], d["source_index"]
    stamp_column = view.part("ts", seqs).take(seqs)
    proc_column = view.part("proc_time", seqs).take(seqs)
    procs = proc_column.tolist()  # exact ints
    if not all(s.__class__ is int for s in sources):
        sources = [None if window_marks._missing(s) else int(s) for s in sources]
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
        for ex, ey, fate, seq, operator, key, value, ts, proc, mark, windows, source, note in zip(
            xs,
            ys,
            elements["fate"].tolist(),
            seqs.tolist(),
            d["operator"],
            d["key"],
            values,
            _texts(x, stamps, stamp_column),
            _texts(y, procs, proc_column),
            x.fmt_all(d["watermark"]),
            elements["windows"].tolist(),
            sources,
            x_notes,
            strict=True,
        )
    ]
    # every column but seq, windows and source_index holds texts (source_index: read off)
    types = dict.fromkeys(rows[0], "nominal") | {"seq": "quantitative", "windows": "quantitative"}
    del types["source_index"]
    mark = {"type": "point", "filled": True, "size": 70, "opacity": 0.9}
    again = replay.read_again(seqs.tolist(), sources, stamps, values, restarts)
    rows, replayed = replay.split(rows, again)
    layer = window_marks._what_layer(rows, mark, x, y, [], types)
    if not replayed:
        return layer, None
    notes.append(replay.note(replayed))
    again_mark, types = replay.mark(mark, mark["size"]), types | {replay.FIELD: "nominal"}
    return layer, window_marks._what_layer(replayed, again_mark, x, y, [], types)


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
    """``axis.clip_all(values)`` as positions and notes (``column``: the values' TimeColumn;
    every value an exact int inside the domain: the values as they are)."""
    if _inside(column, axis.lo, axis.hi):
        return values, [""] * len(values)
    clipped = axis.clip_all(values)
    return [c[0] for c in clipped], [c[1] for c in clipped]


def _texts(axis: TimeAxis, values: list[Any], column: Any) -> list[str]:
    """``axis.fmt_all(values)`` (``column``: the values' TimeColumn); on a ms axis, exact ints
    as ``_MS_TEXTS`` remembers them, those not seen yet written in one call."""
    if axis.kind != "ms" or not _inside(column, -palette.EXACT, palette.EXACT):
        return axis.fmt_all(values)
    texts = list(map(_MS_TEXTS.get, values))
    if not all(texts):  # ("{:,} ms" is never empty)
        if len(_MS_TEXTS) > 1 << 17:
            _MS_TEXTS.clear()
        new = list(dict.fromkeys(v for v, t in zip(values, texts, strict=True) if t is None))
        written = ("{:,} ms\0" * len(new)).format(*new).split("\0")  # (and "" at the end)
        _MS_TEXTS.update(zip(new, written, strict=False))
        texts = list(map(_MS_TEXTS.__getitem__, values))
    return texts


_MS_TEXTS: dict[int, str] = {}
"""The text of each exact int time written by ``_texts`` (at most 2**17): an explorer redraws
the same times run after run."""


def _binned_elements(
    elements: Columns,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
    arrived: bool = False,
) -> spec.ChartDict:
    """The elements binned per fate on a grid (``scale.bin_fates``), a mark per cell;
    ``arrived``: each with its first element's processing time (position)."""
    xs = np.clip(np.asarray(elements["ts"], dtype=float), x.lo, x.hi)
    ys = np.clip(np.asarray(elements["proc_time"], dtype=float), y.lo, y.hi)
    ranges = (x.lo, x.hi), (y.lo, y.hi)
    c = scale.bin_fates(xs, ys, elements["fate_code"], *ranges, max_points, notes)
    rows = [
        {
            "x": cx,
            "y": cy,
            "what": fate,
            "count": count,
            "kind": "elements (binned)",
            "ts": ts,
            "proc_time": proc,
        }
        for cx, cy, fate, count, ts, proc in zip(
            c["x"],
            c["y"],
            c["fate"],
            c["count"],
            x.fmt_ranges(c["x_min"], c["x_max"]),
            y.fmt_ranges(c["y_min"], c["y_max"]),
            strict=True,
        )
    ]
    if arrived:
        for row, first in zip(rows, c["y_min"], strict=True):
            row["arrived"] = first
    mark = {"type": "point", "filled": True, "opacity": 0.75}
    size = scale.BY_COUNT | {"title": "elements"}
    return window_marks._what_layer(rows, mark, x, y, ["arrived"], size=size)


def _strip_layers(view: TraceView, x: TimeAxis, y: TimeAxis, notes: list[str]) -> list[Any]:
    """The idle periods of the run's inputs (``idle.idle_spans``) and watermark alignment's
    paused spans (``propagation.view_paused_spans``) as strips, named in the subtitle."""
    layers = []
    for kind, spans in (("idle", idle.idle_spans(view)), ("paused", view_paused_spans(view))):
        if spans:
            notes.append(idle.lines_text(spans, kind))
        layers.append(idle.strip_layer(spans, x, y, kind=kind))
    return layers
