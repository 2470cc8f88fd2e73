"""``skew_chart``: event-time skew against processing time — the view of a long run.

On a long run the timeline is one thick diagonal; subtracting it keeps the lesson (Akidau,
*Streaming Systems*, ch. 2–3: processing-time lag and event-time skew). x: processing time;
y: processing time − event time (the element's *skew*); elements coloured and shaped by fate
(``fates.element_fates``), binned above ``max_points``. The black line is the watermark lag,
processing time − the operator's watermark: an element is late (timestamp ≤ the watermark)
exactly when it lies on or above it, since ``ts <= W`` ⇔ ``t - ts >= t - W``. MIN and MAX
have no finite lag: the line starts at the first finite watermark and stops at MAX. The
watermark generator mirrored: Flink's ``BoundedOutOfOrdernessWatermarks``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from winviz.viz import axes, palette, replay, scale, spec, watermark_steps
from winviz.viz.boxes import Box, crosses
from winviz.viz.fates import element_detail_lists, element_fate_columns
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import TraceInputError, TraceView, open_trace
from winviz.viz.validation import check_size
from winviz.viz.watermark_steps import Restart

WIDE = 2**62
"""Processing times beyond ±WIDE: skews and lags as exact Python ints (int64 could wrap)."""


@palette.public_chart("skew_chart")
def skew_chart(
    trace: Any,
    *,
    operator: str | None = None,
    max_points: int = scale.ROW_LIMIT,
    width: int = palette.WIDTH,
    height: int = palette.HEIGHT,
) -> spec.ChartDict:
    """Each element's event-time skew against processing time, coloured by fate, under the
    watermark lag (see the module docstring). ``trace``: a Trace, its ``to_pandas()`` frame,
    or a JobExecutionResult; ``operator``: the window operator (default: the first);
    ``max_points``: elements drawn one by one up to this many, binned above (≤ 5,000)."""
    if not 1 <= max_points <= scale.ROW_LIMIT:
        raise ValueError(f"max_points must be in 1..{scale.ROW_LIMIT}, got {max_points}")
    check_size(width, height)
    view = open_trace(trace)
    return _skew(view, pick_operator(view, operator), max_points, width, height)


def skew_of_view(
    view: TraceView,
    operator: str,
    max_points: int,
    width: int,
    height: int,
    *,
    chosen: str | None = None,
) -> spec.ChartDict:
    """The skew chart of an opened trace (``timeline(view="skew")``); ``chosen``: why the
    timeline drew it instead (the first subtitle line). Bad input gives its message card."""
    try:
        return _skew(view, operator, max_points, width, height, chosen)
    except TraceInputError as exc:
        return palette.input_card(exc, chart="skew_chart")


def _elements(view: TraceView, operator: str) -> dict[str, Any]:
    """The elements of ``operator`` the chart draws (``fates.element_fate_columns``; those
    with a processing time and a timestamp within ±2**53) as arrays: seq, proc_time, ts (int64),
    skew (int64, or exact Python ints beyond ``WIDE``), fate, fate_code; and ``wide``."""
    fates = element_fate_columns(view, operator)
    stamps, has_ts = view.ints("ts", fates["seq"])
    procs, has_proc = view.ints("proc_time", fates["seq"])
    keep: Any = has_ts & has_proc & (stamps >= -palette.EXACT) & (stamps <= palette.EXACT)
    left_out = len(keep) - int(keep.sum())
    keep = keep if left_out else slice(None)  # (every one: the shared arrays, not copies)
    procs, stamps = procs[keep], stamps[keep]
    wide = bool(len(procs)) and (int(procs.max()) > WIDE or int(procs.min()) < -WIDE)
    return {
        "seq": fates["seq"][keep],
        "proc_time": procs,
        "ts": stamps,
        "skew": procs.astype(object) - stamps.astype(object) if wide else procs - stamps,
        "fate": fates["fate"][keep],
        "fate_code": fates["fate_code"][keep],
        "wide": wide,
        "left_out": left_out,
    }


def _finite(marks: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Which watermarks have a lag to draw: those present within ±2**53 (not MIN, not MAX)."""
    return present & (marks >= -palette.EXACT) & (marks <= palette.EXACT)


def lag_vertices(
    times: np.ndarray, marks: np.ndarray, present: np.ndarray, t_end: int
) -> np.ndarray:
    """The watermark lag of the watermark records at ``times`` (``marks``, ``present`` where
    there is one; int64), one row (part, processing time, lag) per vertex: from each finite
    watermark w_i at t_i, (t_i, t_i − w_i) rising to (t_{i+1}, t_{i+1} − w_i) just before the
    next record, the last held to ``t_end``. MIN, MAX and a missing watermark start a new
    ``part``, and so does a restart (the watermark goes to MIN). int64, or exact Python ints
    beyond ``WIDE``."""
    n = len(times)
    finite = _finite(marks, present)
    ends = [t_end, int(times.max()), int(times.min())] if n else [t_end]
    dtype: Any = object if max(map(abs, ends)) > WIDE else np.int64
    t = times.astype(dtype)
    until = np.empty(n, dtype=dtype)
    until[:-1] = np.maximum(t[1:], t[:-1])
    if n:
        until[-1] = max(int(times[-1]), t_end)
    w = marks[finite].astype(dtype)
    t0, t1 = t[finite], until[finite]
    out = np.empty((2 * len(w), 3), dtype=dtype)
    out[0::2, 0] = out[1::2, 0] = np.cumsum(~finite)[finite]
    out[0::2, 1], out[0::2, 2] = t0, t0 - w
    out[1::2, 1], out[1::2, 2] = t1, t1 - w
    return out


def _skew(
    view: TraceView,
    op: str,
    max_points: int,
    width: int,
    height: int,
    chosen: str | None = None,
) -> spec.ChartDict:
    e = _elements(view, op)
    procs, skew, n = e["proc_time"], e["skew"], len(e["seq"])
    if not n:
        raise TraceInputError(
            f"No element with a timestamp reached {op!r}. The skew chart places elements by "
            "processing time − event time; assign timestamps (WatermarkStrategy) first."
        )
    rows = view.select("watermark", operator=op)
    steps = (view.ints("proc_time", rows)[0], *view.ints("watermark", rows))
    lags = lag_vertices(*steps, int(procs.max()))
    drawn = len(lags)
    if len(lags) > scale.ROW_LIMIT:  # the true vertices' extremes per time bin (M4)
        keep, bins = scale.keep_extremes(lags[:, 1], lags[:, 2], lags[:, 0], scale.ROW_LIMIT)
        lags = lags[keep]
    x = palette.time_axis("processing time", [*scale.extent(procs), *scale.extent(lags[:, 1])])
    skews = [int(skew.min()), int(skew.max())]
    skews += [int(lags[:, 2].min()), int(lags[:, 2].max())] if len(lags) else []
    lo, hi = min(skews), max(skews)
    pad = max(1, round((hi - lo) * 0.03)) if hi > lo else 1000
    y = TimeAxis("processing time − event time", "ms", lo - pad, hi + pad)

    notes = [] if chosen is None else [chosen]
    counts = (replay.elements_text(view.trace, e), replay.fates_text(view.trace, e))
    notes.append(f"operator {op!r}: " + ": ".join(counts))
    if e["left_out"]:
        notes.append(
            f"{e['left_out']:,} element(s) not drawn: no timestamp, or one off the chart (MIN, "
            "MAX, beyond ±2^53 ms) has no skew to draw"
        )
    notes.append(
        "black line: the watermark's lag (processing time − watermark); an element on or "
        "above it has timestamp ≤ watermark: it is late"
    )
    if len(lags) < drawn:
        notes.append(
            f"watermark lag line thinned: {len(lags):,} of its {drawn:,} vertices, each of "
            f"{bins:,} time bins keeping its first, last, lowest and highest (its peaks are "
            "the true ones)"
        )
    restarts = watermark_steps.restarts(view)
    for r in restarts:  # (a run started from a snapshot did not go back: the timeline's words)
        notes.append(
            f"at {x.fmt(r.proc_time)} the job {r.words()}: the clock went back and the "
            "watermark to MIN (the lag line breaks there)"
            if r.failed_at is not None
            else f"the run {r.words()}: every watermark started at MIN"
        )
    if n <= max_points or e["wide"]:
        before = _before_a_step(view, e, *steps)
        if before:
            notes.append(
                f"{before:,} element(s) arrived at the processing time of a watermark step, "
                "before it: the line there is the new watermark's lag, their colour the "
                "watermark they met"
            )
    vertices = lags.tolist()  # (part, processing time, lag) each
    layers = [
        _lag_layer(lags, x, y),
        *_elements_layers(view, e, x, y, max_points, restarts, notes),
    ]
    if vertices:  # the "watermark lag" label, off the elements and the line
        ex, ey = np.asarray(procs, dtype=np.float64), np.asarray(skew, dtype=np.float64)
        (at, lag), (align, baseline, dy) = _lag_label_place(vertices, ex, ey, x, y, width, height)
        label = [{"kind": "label", "x": x.clip(at)[0], "y": lag, "text": "watermark lag"}]
        style = {"align": align, "baseline": baseline, "dy": dy}
        layers.append(spec.text_layer(label, axes.xy(x, y), color=palette.INK, **style))
    chart = {"layer": layers, "width": width, "height": height}
    return palette.finish(chart, name="skew_chart", notes=notes, heading="Event-time skew")


LABEL_PLACES = tuple(
    (align, baseline, dy)
    for gap in (4, 16, 28, 40)
    for align in ("right", "left")
    for baseline, dy in (("bottom", -gap), ("top", gap))
)
"""Where the "watermark lag" label may sit at a point of the line: left of it or right,
above or below, 4, 16, 28 or 40 px off (align, baseline, dy), in this order of preference."""


def _lag_label_place(
    vertices: list[list[int]],
    procs: np.ndarray,
    skews: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    width: int,
    height: int,
) -> tuple[tuple[int, int], tuple[str, str, int]]:
    """The "watermark lag" label's point (processing time, lag) and place (``LABEL_PLACES``):
    tried at the last 40 vertices backwards and the middles of the segments between them, the
    first place on the plot whose box crosses no line segment and no element, else the one
    crossing the fewest segments, then elements. A place is not counted once it cannot beat
    the best so far."""
    sx, sy = width / max(1, x.hi - x.lo), height / max(1, y.hi - y.lo)
    ex, ey = (procs - x.lo) * sx, height - (skews - y.lo) * sy
    line = _line_segments(vertices, x, y, sx, sy, height)
    w, h, r = 6.6 * len("watermark lag"), 13.0, 4.0  # 11 px sans-serif; an element's half side
    best: tuple[tuple[int, int], tuple[Any, Any], tuple[str, str, int]] | None = None
    tail = vertices[-40:]
    # the last vertices backwards, each followed by the middle of the segment before it
    spots = [
        spot
        for i in range(len(tail) - 1, -1, -1)
        for spot in (
            (tail[i][1], tail[i][2]),
            *(
                [((tail[i - 1][1] + tail[i][1]) // 2, (tail[i - 1][2] + tail[i][2]) // 2)]
                if i and tail[i - 1][0] == tail[i][0]  # (one part of the line)
                else []
            ),
        )
    ]
    points = [((x.clip(t)[0] - x.lo) * sx, height - (lag - y.lo) * sy) for t, lag in spots]
    pxs, pys = [p[0] for p in points], [p[1] for p in points]
    if points and np.isfinite(pxs).all() and np.isfinite(pys).all():
        # only the elements within reach of some place tried can cross its box
        reach = max(abs(p[2]) for p in LABEL_PLACES) + h + r + 1
        near = (
            (ex > min(pxs) - w - r - 1)
            & (ex < max(pxs) + w + r + 1)
            & (ey > min(pys) - reach)
            & (ey < max(pys) + reach)
        )
        ex, ey = ex[near], ey[near]
    # the elements by x: those whose box spans across a label's (ex + r > left and
    # ex - r < left + w, both rising with ex) are one slice of them
    by_x = np.argsort(ex, kind="stable")
    ex, ey = ex[by_x], ey[by_x]
    ex_right, ex_left, ey_bottom, ey_top = ex + r, ex - r, ey + r, ey - r
    for (t, lag), (px, py) in zip(spots, points, strict=True):
        boxes = [
            ((left, top, left + w, top + h), (align, baseline, dy))
            for align, baseline, dy in LABEL_PLACES
            for left in [px - w if align == "right" else px]
            for top in [py + dy - h if baseline == "bottom" else py + dy]
            if not (left < 0 or top < 0 or left + w > width or top + h > height)
        ]
        # the elements whose box may meet each label's: a slice of them by x
        sides = np.array([box for box, _ in boxes], dtype=np.float64).reshape(-1, 4)
        firsts = ex_right.searchsorted(sides[:, 0], side="right").tolist()
        ends = ex_left.searchsorted(sides[:, 2], side="left").tolist()
        for (box, place), i, j in zip(boxes, firsts, ends, strict=True):
            top, bottom = box[1], box[3]
            n = (
                int(np.count_nonzero((ey_bottom[i:j] > top) & (ey_top[i:j] < bottom)))
                if i < j
                else 0
            )
            # a place that cannot beat the best so far is not counted
            if best is not None and best[0][0] - (n >= best[0][1]) < 0:
                continue
            score = (_across(line, box), n)
            if best is None or score < best[0]:
                best = (score, (t, lag), place)
            if score == (0, 0):
                return best[1], best[2]
    if best is None:
        return (vertices[-1][1], vertices[-1][2]), LABEL_PLACES[0]
    return best[1], best[2]


def _line_segments(
    vertices: list[list[int]], x: TimeAxis, y: TimeAxis, sx: float, sy: float, height: int
) -> np.ndarray:
    """The lag line's segments in pixels, an (n, 4) array of x1, y1, x2, y2: each pair of
    consecutive vertices of one part (the line is drawn per part, ``_lag_layer``)."""
    if len(vertices) < 2:
        return np.zeros((0, 4))
    v = np.asarray(vertices)
    px = (np.clip(v[:, 1].astype(np.float64), x.lo, x.hi) - x.lo) * sx
    py = height - (v[:, 2].astype(np.float64) - y.lo) * sy
    same = v[1:, 0] == v[:-1, 0]
    return np.column_stack([px[:-1], py[:-1], px[1:], py[1:]])[same]


def _across(segments: np.ndarray, box: Box) -> int:
    """How many of the (n, 4) ``segments`` run through ``box`` (``boxes.crosses``; one whose
    bounding box only touches it does not)."""
    left, top, right, bottom = box
    x1, y1, x2, y2 = segments.T
    meets = (np.minimum(x1, x2) < right) & (np.maximum(x1, x2) > left)
    meets &= (np.minimum(y1, y2) < bottom) & (np.maximum(y1, y2) > top)
    return sum(crosses(segment, box) for segment in segments[meets].tolist())


def _before_a_step(
    view: TraceView, e: dict[str, Any], times: np.ndarray, marks: np.ndarray, present: np.ndarray
) -> int:
    """How many elements the line's rule ("on or above it: late") misjudges: those that
    arrived at the processing time of a watermark step before it (the steps' ``times`` and
    ``marks``, in seq order), on the other side of the line than the watermark they met."""
    if not len(times):
        return 0
    at = np.searchsorted(times, e["proc_time"], side="right") - 1  # each one's last step
    step = np.maximum(at, 0)
    # a step with no line there (none yet, or MAX: the line stops) misjudges none
    lined = (at >= 0) & _finite(marks, present)[step]
    shown, (met, has_met) = marks[step], view.ints("watermark", e["seq"])
    ts = e["ts"]
    wrong = ~(has_met & (met == shown)) & ((has_met & (ts <= met)) != (ts <= shown))
    return int(np.count_nonzero(lined & wrong))


def _lag_layer(lags: np.ndarray, x: TimeAxis, y: TimeAxis) -> spec.ChartDict:
    """The watermark lag line through ``lags`` (``lag_vertices``), one line per part."""
    at = np.clip(lags[:, 1], x.lo, x.hi).tolist()  # (``x.clip`` of each)
    rows = [
        {"kind": "watermark lag", "i": i, "part": part, "x": t, "y": lag}
        for i, (part, t, lag) in enumerate(
            zip(lags[:, 0].tolist(), at, lags[:, 2].tolist(), strict=True)
        )
    ]
    return spec.layer(
        rows,
        {"type": "line", "color": palette.WATERMARK_COLOR, "strokeWidth": 1.2},
        {
            **axes.xy(x, y),
            "order": {"field": "i", "type": "quantitative"},
            "detail": {"field": "part", "type": "nominal"},
        },
    )


def _fate_encoding(
    rows: list[dict[str, Any]],
    x: TimeAxis,
    y: TimeAxis,
    codes: np.ndarray,
    types: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The elements' channels, the legend naming only the fates drawn (``codes``: the
    elements' positions in ``palette.FATES``); ``types``: their tooltip fields' types where
    known (``spec.tooltips``)."""
    drawn = [palette.FATES[i] for i in np.unique(codes).tolist()]
    return {
        **axes.xy(x, y),
        **{
            channel: {
                "field": "fate",
                "type": "nominal",
                "title": "element",
                "scale": palette.drawn_scale(palette.FATES, values, drawn),
            }
            for channel, values in (("color", palette.FATE_COLORS), ("shape", palette.FATE_SHAPES))
        },
        "tooltip": spec.tooltips(rows, ["x", "y", "kind"], types),
    }


BINNED_TYPES = {
    "fate": "nominal",
    "count": "quantitative",
    "processing time": "nominal",
    "skew": "nominal",
}
"""The types of a binned elements row's tooltip fields (``_binned``: texts, and the count)."""


def _elements_layers(
    view: TraceView,
    e: dict[str, Any],
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    restarts: list[Restart],
    notes: list[str],
) -> list[spec.ChartDict]:
    """The elements' layer, the common fate first (the rarer ones drawn on top): binned
    above ``max_points`` (``_binned``); else one mark each, and, where the job restarted,
    the layer of those read again (``replay``: hollow, around the first reading)."""
    order = np.argsort(e["fate_code"] != 0, kind="stable")
    if len(order) > max_points:
        binned = (e[c][order] for c in ("proc_time", "skew", "fate_code"))
        return [_binned(*binned, x, y, max_points, notes)]
    d = element_detail_lists(view, e["seq"])
    again: list[str | None] = [None] * len(order)
    if restarts:
        seqs, stamps = e["seq"].tolist(), e["ts"].tolist()
        again = replay.read_again(seqs, d["source_index"], stamps, d["value"], restarts)
    at = order.tolist()
    seqs, procs, stamps, skews, marks, fates, keys, values, again = (
        [column[i] for i in at]
        for column in (
            *(e[c].tolist() for c in ("seq", "proc_time", "ts", "skew")),
            view.column("watermark", e["seq"]).tolist(),
            e["fate"].tolist(),
            d["key"],
            d["value"],
            again,
        )
    )
    # event times and watermarks as dates or ms (the event times' extent says which)
    event = palette.time_axis("event time", [min(stamps), max(stamps)])
    rows = [
        {
            "kind": "element",
            "x": x.clip(p)[0],
            "y": int(s),
            "fate": fate,
            "key": key,
            "value": value,
            "timestamp": t,
            "processing time": p_text,
            "skew": f"{int(s):,} ms",
            "watermark": w,
            "seq": int(seq),
        }
        for seq, p, p_text, t, s, w, fate, key, value in zip(
            seqs,
            procs,
            x.fmt_all(procs),
            event.fmt_all(stamps),
            skews,
            event.fmt_all(marks),
            fates,
            keys,
            values,
            strict=True,
        )
    ]
    mark = {"type": "point", "filled": True, "size": 40, "opacity": 0.85}
    rows, replayed = replay.split(rows, again)
    layers = [spec.layer(rows, mark, _fate_encoding(rows, x, y, e["fate_code"]))]
    if replayed:
        notes.append(replay.note(replayed))
        again_mark = replay.mark(mark, mark["size"])
        encoding = _fate_encoding(replayed, x, y, e["fate_code"])
        layers.append(spec.layer(replayed, again_mark, encoding))
    return layers


def _binned(
    procs: np.ndarray,
    skews: np.ndarray,
    codes: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
) -> spec.ChartDict:
    """The elements' layer binned (``scale.bin_fates``): their processing times, skews and
    fates (``codes``: positions in ``palette.FATES``), the common fate first."""
    xs, ys = np.asarray(procs).astype(float), np.asarray(skews).astype(float)
    c = scale.bin_fates(xs, ys, codes, (x.lo, x.hi), (y.lo, y.hi), max_points, notes)
    rows = [
        {
            "kind": "elements (binned)",
            "x": cx,
            "y": cy,
            "fate": fate,
            "count": n,
            "processing time": procs,
            "skew": skew,
        }
        for cx, cy, fate, n, procs, skew in zip(
            c["x"],
            c["y"],
            c["fate"],
            c["count"],
            x.fmt_ranges(c["x_min"], c["x_max"]),
            map("{:,} .. {:,} ms".format, c["y_min"], c["y_max"]),
            strict=True,
        )
    ]
    encoding = _fate_encoding(rows, x, y, codes, BINNED_TYPES)
    encoding["size"] = scale.BY_COUNT | {"title": "elements"}
    return spec.layer(rows, {"type": "point", "filled": True, "opacity": 0.75}, encoding)
