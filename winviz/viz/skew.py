"""``skew_chart``: event-time skew against processing time — the view of a long run.

On a long run the timeline (event time × processing time) is one thick diagonal: every
element sits within seconds of it on an axis of minutes or hours, so what the watermark does
to them cannot be seen. Subtracting the diagonal keeps the lesson (Akidau, *Streaming
Systems*, ch. 2–3: processing-time lag and event-time skew):

* x: **processing time**;
* y: **processing time − event time** — how far behind its own timestamp each element is
  processed (its *skew*);
* **elements**, coloured and shaped by fate (``fates.element_fates``: on time, late but
  accepted, dropped, side output);
* **the watermark lag** — processing time − the operator's watermark, a sawtooth: it grows
  with the clock while the watermark stands still and drops when the watermark advances.
  An element is late (Flink: timestamp ≤ the operator's current watermark) exactly when it
  lies **on or above** that line, since ``ts <= W`` ⇔ ``t - ts >= t - W``. A larger
  out-of-orderness bound lifts the line by the bound, so fewer elements are above it.

Watermarks MIN (before the first) and MAX (end of input) have no finite lag: the line starts
at the first finite watermark and stops at MAX. More than ``max_points`` elements are binned
(a mark per grid cell and fate, sized by count); the subtitle says so, and counts the
elements per fate. The watermark generator mirrored: Flink's ``BoundedOutOfOrdernessWatermarks``
(the line's height is the bound plus the skew of the largest timestamp seen).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace.coded import object_array
from winviz.viz import axes, palette, replay, scale, spec, watermark_steps
from winviz.viz.fates import element_detail_lists, element_fate_columns
from winviz.viz.labels import crosses
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceInputError, TraceView, open_trace
from winviz.viz.validation import check_size


@palette.public_chart("skew_chart")
def skew_chart(
    trace: Any,
    *,
    operator: str | None = None,
    max_points: int = scale.ROW_LIMIT,
    width: int = palette.WIDTH,
    height: int = palette.HEIGHT,
) -> spec.ChartDict:
    """Each element's event-time skew (processing time − event time) against processing
    time, coloured by fate, under the watermark lag (see the module docstring).

    ``trace``: a Trace, its ``to_pandas()`` frame, or a JobExecutionResult. ``operator``: the
    window operator (default: the first). ``max_points``: elements drawn one by one up to this
    many, binned above (≤ 5,000). Input that cannot be drawn gives a message card
    (``usermeta.winviz.status == "message"``)."""
    if not 1 <= max_points <= scale.ROW_LIMIT:
        raise ValueError(f"max_points must be in 1..{scale.ROW_LIMIT}, got {max_points}")
    check_size(width, height)
    view = open_trace(trace)
    return _skew(view, pick_operator(view, operator), max_points, width, height)


def element_skews(view: TraceView, operator: str, *, details: bool = True) -> pd.DataFrame:
    """``fates.element_fates`` of ``operator`` with exact ints: seq, proc_time, ts, skew
    (proc_time − ts), watermark (the one the element met), fate, key, value. Elements without
    a drawable timestamp (none, MIN, MAX) are left out. ``details=False`` leaves out key and
    value (their texts are only needed for elements drawn one by one, not binned)."""
    fates, procs, stamps, keep = _drawable(view, operator)
    seqs = fates["seq"][keep]
    procs_k, stamps_k = procs[keep], stamps[keep]
    # int64 columns when every skew fits (always, unless a processing time is near the long
    # range's ends), else exact Python ints
    exact = not len(procs_k) or (int(procs_k.max()) <= 2**62 and int(procs_k.min()) >= -(2**62))
    columns: dict[str, Any] = {
        "seq": seqs,
        "proc_time": procs_k if exact else pd.Series(procs_k.tolist(), dtype=object),
        "ts": stamps_k if exact else pd.Series(stamps_k.tolist(), dtype=object),
        "watermark": pd.Series(view.column("watermark", seqs), dtype=object),
        "fate": pd.Series(fates["fate"][keep], dtype=object),
    }
    if details:
        d = element_detail_lists(view, seqs)
        columns["key"], columns["value"] = object_array(d["key"]), object_array(d["value"])
    if exact:
        columns["skew"] = procs_k - stamps_k
    else:
        columns["skew"] = pd.Series(
            [p - t for p, t in zip(procs_k.tolist(), stamps_k.tolist(), strict=True)],
            dtype=object,
        )
    return pd.DataFrame(columns)  # one frame (a column added to it later costs more)


def _drawable(view: TraceView, operator: str) -> tuple[Columns, np.ndarray, np.ndarray, np.ndarray]:
    """The elements of ``operator`` (``fates.element_fate_columns``), their processing times
    and timestamps (int64), and which of them the chart draws: those with a processing time
    and a drawable timestamp (not none, MIN or MAX)."""
    fates = element_fate_columns(view, operator)
    stamps, has_ts = view.ints("ts", fates["seq"])
    procs, has_proc = view.ints("proc_time", fates["seq"])
    keep = has_ts & has_proc & (stamps >= -palette.EXACT) & (stamps <= palette.EXACT)
    return fates, procs, stamps, keep


def lag_vertices(steps: pd.DataFrame, t_end: int) -> list[tuple[int, int, int]]:
    """The watermark lag as (part, processing time, lag) vertices: from each finite watermark
    w_i at t_i, (t_i, t_i − w_i) rising to (t_{i+1}, t_{i+1} − w_i) just before the next
    record; the last finite one is held to ``t_end``. MIN and MAX break the line (a new
    ``part``), and so does a restart (the clock goes back to the checkpoint's and the
    watermark to MIN: the step before it ends at its own time)."""
    lags = _lag_array(steps["proc_time"].tolist(), steps["watermark"].tolist(), t_end)
    return [tuple(v) for v in lags.tolist()]


def _lag_array(procs: list[Any], marks: list[Any], t_end: int) -> np.ndarray:
    """``lag_vertices`` of the steps' processing times and watermarks, one row (part,
    processing time, lag) each, computed over whole columns: int64 (exact Python ints in an
    object array when a processing time is beyond ±2**62, where a lag could overflow)."""
    n = len(procs)
    times = [int(t) for t in procs]
    wide = max(map(abs, [t_end, *(times and [max(times), min(times)])])) > 2**62
    dtype: Any = object if wide else np.int64
    t = np.array(times, dtype=dtype)
    # each step's line rises to just before the next record (the last: to t_end)
    until = np.empty(n, dtype=dtype)
    until[:-1] = np.maximum(t[1:], t[:-1])
    if n:
        until[-1] = max(times[-1], t_end)
    # MIN, MAX (and anything off the chart) break the line: a new part after each
    finite = np.fromiter(
        (w is not None and -palette.EXACT <= w <= palette.EXACT for w in marks), bool, n
    )
    w = np.array([int(m) for m, f in zip(marks, finite.tolist(), strict=True) if f], dtype)
    t0, t1 = t[finite], until[finite]
    out = np.empty((2 * len(w), 3), dtype=dtype)
    out[0::2, 0] = out[1::2, 0] = np.cumsum(~finite)[finite]
    out[0::2, 1], out[0::2, 2] = t0, t0 - w
    out[1::2, 1], out[1::2, 2] = t1, t1 - w
    return out


def skew_of_view(
    view: TraceView,
    operator: str,
    max_points: int,
    width: int,
    height: int,
    *,
    chosen: str | None = None,
) -> spec.ChartDict:
    """The skew chart of an opened trace (``timeline(view="skew")`` / ``view="auto"``);
    ``chosen``: why the timeline drew it instead (the first subtitle line). Input that cannot
    be drawn gives the skew chart's message card."""
    try:
        return _skew(view, operator, max_points, width, height, chosen)
    except TraceInputError as exc:
        return palette.input_card(exc, chart="skew_chart")


class _Binned:
    """The elements of a skew chart that bins them (more than ``max_points``), as arrays: the
    common fate first (``_elements_layer``'s order), exact int64 processing times and skews,
    fates. What ``element_skews`` gives for them, without the frame (``_binned_elements``)."""

    def __init__(
        self, procs: np.ndarray, skews: np.ndarray, fates: np.ndarray, codes: np.ndarray
    ) -> None:
        self.procs, self.skews, self.fates = procs, skews, fates
        self.codes = codes  # each fate's position in palette.FATES

    def __len__(self) -> int:
        return len(self.procs)


def _binned_elements(view: TraceView, op: str, max_points: int) -> _Binned | None:
    """The elements of ``element_skews(view, op)`` when there are more than ``max_points``
    and every skew is an int64 (processing times within ±2**62): the chart bins them, so
    their watermarks, keys and values are not read. Else None (``element_skews``' frame)."""
    fates, procs, stamps, keep = _drawable(view, op)
    n = int(keep.sum())
    if n <= max_points:
        return None
    procs, stamps = procs[keep], stamps[keep]
    if int(procs.max()) > 2**62 or int(procs.min()) < -(2**62):
        return None
    codes = fates["fate_code"][keep]
    # the common fate first, so the rarer ones (the point of the lesson) are drawn on top
    order = np.argsort(codes != 0, kind="stable")
    procs, stamps = procs[order], stamps[order]
    return _Binned(procs, procs - stamps, fates["fate"][keep][order], codes[order])


def _skew(
    view: TraceView,
    op: str,
    max_points: int,
    width: int,
    height: int,
    chosen: str | None = None,
) -> spec.ChartDict:
    elements: pd.DataFrame | _Binned | None = _binned_elements(view, op, max_points)
    details = None  # (element_detail_lists of the elements drawn one by one)
    if elements is None:
        # key and value texts only for elements drawn one by one (tooltips), not when binned
        elements = element_skews(view, op, details=False)
        if len(elements) <= max_points:
            details = element_detail_lists(view, elements["seq"].to_numpy())
    if not len(elements):
        raise TraceInputError(
            f"No element with a timestamp reached {op!r}. The skew chart places elements by "
            "processing time − event time; assign timestamps (WatermarkStrategy) first."
        )
    if isinstance(elements, _Binned):
        procs, skew, fates = elements.procs, elements.skews, elements.fates
        rows = view.select("watermark", operator=op)  # (watermark_steps of the operator)
        t_end = int(procs.max())
        lags = _lag_array(
            view.column("proc_time", rows).tolist(), view.column("watermark", rows).tolist(), t_end
        )
    else:
        procs, skew, fates = elements["proc_time"], elements["skew"], elements["fate"]
        t_end = int(procs.max())
        steps = watermark_steps.watermark_steps(view)
        steps = steps[steps["operator"] == op]
        lags = _lag_array(steps["proc_time"].tolist(), steps["watermark"].tolist(), t_end)
    drawn = len(lags)
    if len(lags) > scale.ROW_LIMIT:  # the true vertices' extremes per time bin (M4)
        keep, bins = scale.keep_extremes(lags[:, 1], lags[:, 2], lags[:, 0], scale.ROW_LIMIT)
        lags = lags[keep]
    vertices = lags.tolist()  # (part, processing time, lag) each
    # (the axis of every value is the axis of their drawable extent, see scale.extent)
    x = palette.time_axis("processing time", [*scale.extent(procs), *(v[1] for v in vertices)])
    skews = [int(skew.min()), int(skew.max()), *(v[2] for v in vertices)]
    lo, hi = min(skews), max(skews)
    pad = max(1, round((hi - lo) * 0.03)) if hi > lo else 1000
    y = TimeAxis("processing time − event time", "ms", lo - pad, hi + pad)

    if isinstance(elements, _Binned):
        n = np.bincount(elements.codes, minlength=len(palette.FATES)).tolist()
        counts = {fate: n[i] for i, fate in enumerate(palette.FATES) if n[i]}
    else:
        counts = fates.value_counts().to_dict()
    notes = [] if chosen is None else [chosen]
    notes += [
        f"operator {op!r}: {len(elements):,} elements: "
        + ", ".join(f"{counts[f]:,} {f}" for f in palette.FATES if f in counts),
        "black line: the watermark's lag (processing time − watermark); an element on or "
        "above it has timestamp ≤ watermark: it is late",
    ]
    if len(vertices) < drawn:
        notes.append(
            f"watermark lag line thinned: {len(vertices):,} of its {drawn:,} vertices, each of "
            f"{bins:,} time bins keeping its first, last, lowest and highest (its peaks are "
            "the true ones)"
        )
    left_out = len(element_fate_columns(view, op)["seq"]) - len(elements)
    if left_out:  # (element_skews: no timestamp, or MIN / MAX / beyond ±2**53: no finite skew)
        notes.insert(
            len(notes) - 1,
            f"{left_out:,} element(s) not drawn: no timestamp, or one off the chart (MIN, MAX, "
            "beyond ±2^53 ms) has no skew to draw",
        )
    for r in watermark_steps.restarts(view):
        notes.append(
            f"at {x.fmt(r.proc_time)} the job restarted from "
            + ("the beginning" if r.checkpoint_id is None else f"checkpoint {r.checkpoint_id}")
            + ": the clock went back and the watermark to MIN (the lag line breaks there)"
        )
    if isinstance(elements, pd.DataFrame):
        before = _before_a_step(elements, steps)
        if before:
            notes.append(
                f"{before:,} element(s) arrived at the processing time of a watermark step, "
                "before it: the line there is the new watermark's lag, their colour the "
                "watermark they met"
            )
    if isinstance(elements, _Binned):
        points = _binned(
            elements.procs, elements.skews, elements.fates, x, y, max_points, notes, elements.codes
        )
    else:
        again = _read_again(view, elements, details)
        points = _elements_layer(elements, x, y, max_points, notes, again, details)
    layers = [_lag_layer(vertices, x, y), points]
    if isinstance(points, tuple):  # (the elements, those read again after a restart)
        layers[1:] = points
    if vertices:
        layers.append(_lag_label_layer(vertices, procs, skew, x, y, width, height))
    chart = {"layer": layers, "width": width, "height": height}
    return palette.finish(chart, name="skew_chart", notes=notes, heading="Event-time skew")


def _lag_label_layer(
    vertices: list[list[Any]],
    procs: Any,
    skew: Any,
    x: TimeAxis,
    y: TimeAxis,
    width: int,
    height: int,
) -> spec.ChartDict:
    """The "watermark lag" label, on the lag line where it is off the elements and the other
    marks (``_lag_label_place``)."""
    (at, lag), (align, baseline, dy) = _lag_label_place(
        vertices, np.asarray(procs, dtype=np.float64), np.asarray(skew, dtype=np.float64),
        x, y, width, height,
    )  # fmt: skip
    return spec.text_layer(
        [{"kind": "label", "x": x.clip(at)[0], "y": lag, "text": "watermark lag"}],
        axes.xy(x, y),
        color=palette.INK,
        align=align,
        baseline=baseline,
        dy=dy,
    )


LABEL_PLACES = tuple(
    (align, baseline, dy)
    for gap in (4, 16, 28, 40)
    for align in ("right", "left")
    for baseline, dy in (("bottom", -gap), ("top", gap))
)
"""Where the "watermark lag" label may sit at a point of the line: left of it or right,
above or below, 4, 16, 28 or 40 px off (align, baseline, dy), in this order of preference."""


def _lag_label_place(
    vertices: list[tuple[int, int, int]],
    procs: np.ndarray,
    skews: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    width: int,
    height: int,
) -> tuple[tuple[int, int], tuple[str, str, int]]:
    """The line's "watermark lag" label: at its last vertex above the line, else the first
    place (``LABEL_PLACES``, at the last vertices backwards and the middles of the segments
    between them) where its box crosses neither the line itself nor an element mark and
    stays on the plot (issue 26: it lay over elements, then the line's last vertical ran
    through it); else the place crossing the fewest line segments, then elements. Per place
    tried (at most 16 × 79) one vectorised count of the elements across its box (a slice of
    them sorted by x), then ``labels.crosses`` of the line's segments near it
    (``_Segments``), stopped once they are more than the best place's: a count beyond that
    cannot change the choice (the same place as counting everything, 20–100k events: ~10×
    faster)."""
    sx, sy = width / max(1, x.hi - x.lo), height / max(1, y.hi - y.lo)
    ex, ey = (procs - x.lo) * sx, height - (skews - y.lo) * sy
    line = _Segments(_line_segments(vertices, x, y, sx, sy, height))
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
        # the line's segments within reach of any of this point's boxes
        near = line.near(_around([box for box, _ in boxes])) if boxes else line
        # the elements whose box may meet each label's: a slice of them by x
        sides = np.array([box for box, _ in boxes], dtype=np.float64).reshape(-1, 4)
        firsts = ex_right.searchsorted(sides[:, 0], side="right").tolist()
        ends = ex_left.searchsorted(sides[:, 2], side="left").tolist()
        for (left, top, right, bottom), place in boxes:
            i, j = firsts.pop(0), ends.pop(0)
            n = (
                int(np.count_nonzero((ey_bottom[i:j] > top) & (ey_top[i:j] < bottom)))
                if i < j
                else 0
            )
            # the most segments this box may cross and still beat the best so far (the
            # count stops there: what it would be beyond cannot change the choice)
            most = None if best is None else best[0][0] - (n >= best[0][1])
            if most is not None and most < 0:
                continue
            crossed = near.across((left, top, right, bottom), most)
            if most is not None and crossed > most:
                continue
            score = (crossed, n)
            if best is None or score < best[0]:
                best = (score, (t, lag), place)
            if score == (0, 0):
                return best[1], best[2]
    if best is None:
        return (vertices[-1][1], vertices[-1][2]), LABEL_PLACES[0]
    return best[1], best[2]


def _line_segments(
    vertices: list[tuple[int, int, int]],
    x: TimeAxis,
    y: TimeAxis,
    sx: float,
    sy: float,
    height: int,
) -> np.ndarray:
    """The lag line's segments in pixels, an (n, 4) array of x1, y1, x2, y2: each pair of
    consecutive vertices of one part (the line is drawn per part, ``_lag_layer``)."""
    if len(vertices) < 2:
        return np.zeros((0, 4))
    parts = np.asarray([v[0] for v in vertices])
    px = (np.asarray([x.clip(v[1])[0] for v in vertices], dtype=np.float64) - x.lo) * sx
    py = height - (np.asarray([v[2] for v in vertices], dtype=np.float64) - y.lo) * sy
    same = parts[1:] == parts[:-1]
    return np.column_stack([px[:-1], py[:-1], px[1:], py[1:]])[same]


class _Segments:
    """Line segments in pixels (x1, y1, x2, y2 rows), with their bounding boxes, in their
    order: for counting those that run through a label's box."""

    def __init__(self, rows: np.ndarray, bounds: list[np.ndarray] | None = None) -> None:
        self.rows = rows
        if bounds is None:  # x_lo, x_hi, y_lo, y_hi of each
            xs, ys = rows[:, 0::2], rows[:, 1::2]
            bounds = [xs.min(1), xs.max(1), ys.min(1), ys.max(1)]
        self.bounds = bounds

    def _meeting(self, box: tuple[float, float, float, float]) -> np.ndarray:
        """Which ones' bounding box overlaps ``box`` (edges touching do not count)."""
        left, top, right, bottom = box
        x_lo, x_hi, y_lo, y_hi = self.bounds
        return (x_lo < right) & (x_hi > left) & (y_lo < bottom) & (y_hi > top)

    def near(self, box: tuple[float, float, float, float]) -> _Segments:
        """Those whose bounding box overlaps ``box`` (left, top, right, bottom); all of them
        when one of its sides is not finite (a first sieve for the boxes inside it,
        ``_around``)."""
        if not all(math.isfinite(side) for side in box):
            return self
        keep = self._meeting(box)
        return _Segments(self.rows[keep], [b[keep] for b in self.bounds])

    def across(self, box: tuple[float, float, float, float], most: int | None = None) -> int:
        """How many run through ``box`` (left, top, right, bottom): ``labels.crosses`` of
        each that its bounding box does not rule out. ``most``: stop counting past it (the
        count returned is then ``most + 1``)."""
        n = 0
        for row in self.rows[self._meeting(box)].tolist():
            if crosses(tuple(row), box):
                n += 1
                if most is not None and n > most:
                    break
        return n


def _around(boxes: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    """The smallest box (left, top, right, bottom) around all of ``boxes`` (not finite when
    one of their sides is not)."""
    if not all(math.isfinite(side) for box in boxes for side in box):
        return (math.nan,) * 4
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _segments_across(segments: np.ndarray, box: tuple[float, float, float, float]) -> int:
    """How many of the ``segments`` (x1, y1, x2, y2 rows) run through ``box`` (left, top,
    right, bottom): ``labels.crosses`` of each that its bounding box does not rule out."""
    return _Segments(segments).across(box)


def _before_a_step(elements: pd.DataFrame, steps: pd.DataFrame) -> int:
    """How many elements the line's rule ("on or above it: late") misjudges: those that
    arrived at a processing time where the watermark then advanced (records in seq order), so
    that the watermark they met is not the one whose lag the line shows there, and on the
    other side of it. ``steps``: the operator's ``watermark_steps``."""
    if steps.empty or elements.empty:
        return 0
    procs = np.asarray(steps["proc_time"].tolist(), dtype=object)
    marks = steps["watermark"].tolist()
    arrived = np.asarray(elements["proc_time"].tolist(), dtype=object)
    # each element's step: the last one at or before its arrival (one search for all)
    at = (np.searchsorted(procs, arrived, side="right") - 1).tolist()
    n = 0
    for ts, i, met in zip(elements["ts"].tolist(), at, elements["watermark"].tolist(), strict=True):
        if i < 0 or marks[i] is None or abs(int(marks[i])) > palette.EXACT:
            continue  # no line there (none yet, or MAX: the line stops)
        shown = int(marks[i])
        if met != shown and (met is not None and ts <= met) != (ts <= shown):
            n += 1
    return n


def _lag_layer(vertices: list[tuple[int, int, int]], x: TimeAxis, y: TimeAxis) -> spec.ChartDict:
    rows = [
        {"kind": "watermark lag", "i": i, "part": part, "x": x.clip(t)[0], "y": lag}
        for i, (part, t, lag) in enumerate(vertices)
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
    rows: list[dict[str, Any]], x: TimeAxis, y: TimeAxis, types: dict[str, str] | None = None
) -> dict[str, Any]:
    """The elements' channels; ``types``: their tooltip fields' types where known
    (``spec.tooltips``)."""
    return {
        **axes.xy(x, y),
        "color": {
            "field": "fate",
            "type": "nominal",
            "title": "element",
            "scale": {"domain": list(palette.FATES), "range": list(palette.FATE_COLORS)},
        },
        "shape": {
            "field": "fate",
            "type": "nominal",
            "title": "element",
            "scale": {"domain": list(palette.FATES), "range": list(palette.FATE_SHAPES)},
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


def _read_again(
    view: TraceView, elements: pd.DataFrame, details: dict[str, list[Any]] | None = None
) -> list[str | None] | None:
    """``replay.read_again`` of these elements (None: the job never restarted); ``details``:
    their ``element_detail_lists`` when read already."""
    restarts = watermark_steps.restarts(view)
    if not restarts:
        return None
    seqs = elements["seq"].to_numpy()
    d = element_detail_lists(view, seqs) if details is None else details
    return replay.read_again(
        seqs.tolist(), d["source_index"], elements["ts"].tolist(), d["value"], restarts
    )


def _elements_layer(
    elements: pd.DataFrame,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
    again: list[str | None] | None = None,
    details: dict[str, list[Any]] | None = None,
) -> spec.ChartDict | tuple[spec.ChartDict, spec.ChartDict]:
    """The elements' layer; with ``again`` (each element's ``replay.read_again``) where any
    was read again after a restart, it and the layer of those (hollow, around the first
    reading). ``details``: the elements' ``element_detail_lists`` (their key and value
    texts) when they are drawn one by one (at most ``max_points``); None: they are binned."""
    # the common fate first, so the rarer ones (the point of the lesson) are drawn on top
    common = (elements["fate"] == palette.FATES[0]).to_numpy()
    order = np.argsort(~common, kind="stable")
    at = order.tolist()
    if again is not None:
        again = [again[i] for i in at]
    if details is None:  # (more than max_points)
        elements = elements.iloc[order]
        return _binned(
            pd.to_numeric(elements["proc_time"]),
            pd.to_numeric(elements["skew"]),
            elements["fate"].to_numpy(),
            x,
            y,
            max_points,
            notes,
        )
    # each column in drawing order (as ``elements.iloc[order]`` would give them)
    seqs, procs, stamps, skews, marks, fates = (
        [values[i] for i in at]
        for values in (
            elements[c].tolist() for c in ("seq", "proc_time", "ts", "skew", "watermark", "fate")
        )
    )
    keys, values = ([d[i] for i in at] for d in (details["key"], details["value"]))
    # event times and watermarks as dates or ms (the event times' extent says which), each
    # text written once per distinct value and remembered (``TimeAxis.fmt_all``)
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
    rows, replayed = replay.split(rows, [None] * len(rows) if again is None else again)
    layer = spec.layer(rows, mark, _fate_encoding(rows, x, y))
    if not replayed:
        return layer
    notes.append(replay.note(replayed))
    again_mark = replay.mark(mark, mark["size"])
    return layer, spec.layer(replayed, again_mark, _fate_encoding(replayed, x, y))


def _binned(
    procs: Any,
    skews: Any,
    fates: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    max_points: int,
    notes: list[str],
    codes: np.ndarray | None = None,
) -> spec.ChartDict:
    """The elements' layer binned (``scale.bin_points``): their processing times and skews
    (int64 arrays or numeric Series) and fates, the common fate first; ``codes``: the fates'
    positions in ``palette.FATES`` when known (``scale.bin_fates``: the same cells)."""
    xs, ys = np.asarray(procs).astype(float), np.asarray(skews).astype(float)
    if codes is not None:
        cells, nx, ny = scale.bin_fates(xs, ys, codes, (x.lo, x.hi), (y.lo, y.hi), max_points)
    else:
        frame = pd.DataFrame({"x": xs, "y": ys, "fate": pd.Series(fates, dtype=object)})
        cells, nx, ny = scale.bin_points(
            frame, "x", "y", "fate", (x.lo, x.hi), (y.lo, y.hi), max_points
        )
    notes.append(
        f"{len(fates):,} elements binned on a {nx} × {ny} grid: a mark is a cell's elements "
        "of one fate, at their mean position, sized by count"
    )
    # the common fate first, then by count (both descending; ties keep the cells' order)
    cell_fates = cells["fate"].to_numpy(dtype=object)
    cell_counts = cells["count"].to_numpy(dtype=np.int64)
    order = np.lexsort((-cell_counts, cell_fates != palette.FATES[0]))

    def ints(column: str) -> list[int]:  # round() of each value (half to even, as numpy)
        return np.rint(cells[column].to_numpy(dtype=float)[order]).astype(np.int64).tolist()

    # the extent of each cell's own elements (not the cell's bounds, which can hold times none has)
    x_lo, x_hi, y_lo, y_hi = ints("x_min"), ints("x_max"), ints("y_min"), ints("y_max")
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
            ints("x"),
            ints("y"),
            cell_fates[order].tolist(),
            cell_counts[order].tolist(),
            x.fmt_ranges(x_lo, x_hi),
            map("{:,} .. {:,} ms".format, y_lo, y_hi),
            strict=True,
        )
    ]
    encoding = _fate_encoding(rows, x, y, BINNED_TYPES)
    encoding["size"] = {
        "field": "count",
        "type": "quantitative",
        "scale": {"type": "sqrt", "range": [8, 160]},
        "title": "elements",
    }
    return spec.layer(rows, {"type": "point", "filled": True, "opacity": 0.75}, encoding)
