"""Where the timers chart's marks and labels sit, in pixels (``labels.Plot``), placed in one
order, each off what is placed before it (a ``boxes.Taken``): the timer events side by side
(``piles``' rule), the staircase's label, the de-duplicated registrations ▼ (Flink's
``HeapPriorityQueueSet`` keeps one element per timer: ``timer_registered`` with
``deduplicated=True``) beside their timestamp's rules, and the timestamp labels. What cannot
be placed is counted or left to the tooltip, and the subtitle says how many.
"""

from __future__ import annotations

import itertools
import math
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace.coded import first_of_each
from winviz.viz import axes, palette, piles, scale, spec
from winviz.viz.boxes import Box, Segment, Taken, around, first_clear, overlaps
from winviz.viz.labels import Plot
from winviz.viz.palette import TimeAxis
from winviz.viz.value_texts import key_texts

Rows = list[dict[str, Any]]  # a layer's data: one dict per mark
EVENT_PX = 8  # the side of a timer event's box (size 45 px²), and the step between marks

EVENT_STEPS = 4  # places (``EVENT_PX`` apart) each way an event tries before it is counted
DEDUP_EVENT = "registration of a timer that already existed (de-duplicated)"


def place_marks(
    plot: tuple[TimeAxis, TimeAxis, Plot],
    rules: Rows,
    points: Rows,
    lines: tuple[list[spec.ChartDict], list[spec.ChartDict]],
    labels: list[spec.ChartDict],
    dedups: tuple[pd.DataFrame, np.ndarray],
    extents: dict[str, dict[Any, tuple[float, float]]],
    keys: list[str],
    notes: list[str],
) -> tuple[Rows, Rows, list[spec.ChartDict], list[spec.ChartDict]]:
    """Every mark and label of the timers plot placed, in the module's order: the timer
    events (``points``), the staircase's label (``lines``: the staircase's layers and the
    diagonal's), the ▼ (``dedups``: the timer records and the positions of those
    de-duplicated; ``extents``: ``timers._extents``), the timestamp ``labels``; per view of
    the key dropdown (``keys``; "": every key), clear of the ``rules`` and marks it draws.
    Returns the event and ▼ rows, the rings' rows, the layers of the ▼' "×n" and of the row
    above the plot, and the label layers kept."""
    px = plot[2]
    staircase, diagonal = lines
    events, rings, boxes = side_by_side(points, px, notes, keys)
    shared = [
        (seg, False)
        for layer, by in ((staircase, "attempt"), (diagonal, "kind"))
        if layer
        for seg in line_segments(spec.rows(layer[0]), px, by)
    ]
    every = _dot_boxes(staircase[1], px) if staircase else []  # the boxes every view shows

    def drawn(key: str | None) -> tuple[list[tuple[Segment, bool]], list[Box]]:
        """The segments and boxes drawn when the dropdown shows ``key`` (""/None: every key)."""
        mine = [r for r in rules if r["key"] == key] if key else rules
        return [(seg, True) for seg in rule_segments(mine, px)] + shared, boxes[key or ""] + every

    on_plot, marks = drawn("")[0], [b for view in boxes.values() for b in view] + every
    vertices = spec.rows(staircase[0]) if staircase else []
    label = watermark_label_off_marks(staircase[2:], px, marks, on_plot, vertices)
    every += marks[-1:] if label else []
    dedup_rows, layers = dedup_layers(*dedups, extents, plot, drawn, keys, notes)
    marks += [b for r in dedup_rows for b in dedup_boxes(*_at(r, px), r["registrations"])]
    if labels:
        labels = labels_off_marks(labels, px, marks, on_plot, extents[""], notes)
    return events + dedup_rows, rings, layers, [*labels, *label]


def _dot_boxes(dots: spec.ChartDict, px: Plot) -> list[Box]:
    """The boxes of the watermark's dots (a point layer: a circle of its mark's ``size``
    px²), drawn over every mark: what is placed keeps off them."""
    half = math.sqrt(dots["mark"]["size"] / math.pi)
    return [_square(_at(r, px), half) for r in spec.rows(dots) if None not in (r["x"], r["y"])]


RULES = (True,)  # the tags of the segments a ▼ keeps off: the rules (a text keeps off every line)


def _taken(lines: list[tuple[Segment, bool]], boxes: list[Box]) -> Taken:
    """``lines`` (each segment, and whether it is a timer's rule) and ``boxes``, taken."""
    out = Taken()
    for seg, rule in lines:
        out.add_segment(seg, rule)
    for box in boxes:
        out.add(box)
    return out


RULE_HALF_PX = 1.5  # half a timer rule's width (2.5 px), and a little


def rule_segments(rules: Rows, px: Plot) -> list[Segment]:
    """The timer rules in pixels: two vertical segments ``RULE_HALF_PX`` either side of each."""
    out = []
    for r in rules:
        cx, top, bottom = px.px(r["x"]) + r.get("dx", 0.0), px.py(r["y2"]), px.py(r["y"])
        out += [(cx - RULE_HALF_PX, top, cx - RULE_HALF_PX, bottom),
                (cx + RULE_HALF_PX, top, cx + RULE_HALF_PX, bottom)]  # fmt: skip
    return out


def line_segments(rows: Rows, px: Plot, by: str) -> list[Segment]:
    """A line layer's segments in pixels: consecutive rows (in ``i`` order) of one ``by``."""
    ordered = sorted(rows, key=lambda r: (str(r.get(by, "")), r.get("i", 0)))
    out = []
    for a, b in pairwise(ordered):
        if a.get(by) == b.get(by) and None not in (a["x"], a["y"], b["x"], b["y"]):
            out.append((px.px(a["x"]), px.py(a["y"]), px.px(b["x"]), px.py(b["y"])))
    return out


def _at(row: dict[str, Any], px: Plot) -> tuple[float, float]:
    """Where a row's mark is drawn, in pixels."""
    return px.px(row["x"]) + row.get("dx", 0.0), px.py(row["y"])


def _square(centre: tuple[float, float], half: float) -> Box:
    cx, cy = centre
    return (cx - half, cy - half, cx + half, cy + half)


RING_HALF_PX = EVENT_PX * 3**0.5 / 2 + 1  # half a ring's side: three times a mark's area


def side_by_side(
    points: Rows, px: Plot, notes: list[str], keys: list[str] = ()
) -> tuple[Rows, Rows, dict[str, list[Box]]]:
    """Timer events at one point side by side (``piles.side_by_side``: each row's ``dx``);
    those of a pile too deep counted on the mark at their point (``also here``, a ring). With
    a key dropdown (``keys``), each key's view places its own events again among its own
    marks; a row alike in both views is written once, else each gets the ``view`` (dropdown
    value) that shows it. Returns the event rows, the ring rows and, per view ("" and each
    key), the boxes it draws."""
    for r in points:  # right of the rightmost rule would leave the plot: left of the leftmost
        d = r.get("dx", 0.0)
        if d > 0 and px.px(r["x"]) + d + EVENT_PX / 2 > px.width:
            r["dx"] = -d
    wanted = set(keys)
    own = {k: [] for k in keys}  # per key, its events not drawn in every key's view
    for r in points:
        if r.get("key") in wanted:
            own[r["key"]].append(dict(r))
    drawn, rings = _placed(points, px, notes)
    boxes = {"": _boxes(drawn, rings, px)}
    for key, rows in own.items():
        shown = [
            {k: v for k, v in r.items() if k != piles.ALSO_HERE}
            for r in drawn
            if r.get("key") == key
        ]
        seqs = {(r["reg_seq"], r["event"]) for r in shown}
        again = [r for r in rows if (r["reg_seq"], r["event"]) not in seqs]
        mine, mine_rings = _placed(shown + again, px, [], tally=bool(rings))
        boxes[key] = _boxes(mine, mine_rings, px)
        _merge_view(drawn, mine, key)
        _merge_view(rings, mine_rings, key)
    return drawn, rings, boxes


def _placed(points: Rows, px: Plot, notes: list[str], tally: bool = False) -> tuple[Rows, Rows]:
    """``points`` placed side by side on a grid of their own: the rows drawn (with ``also
    here`` when some were counted, or ``tally``) and the rings'."""
    places = [_at(r, px) for r in points]
    grid = piles.Grid(EVENT_PX, reach=EVENT_PX / 2)  # (centres nearer than half a mark)
    placed = piles.side_by_side(
        places, EVENT_PX, px.width, most=EVENT_STEPS, grid=grid, rows=points
    )
    for row, d in zip(points, placed.dx, strict=True):
        row["dx"] = round(row.get("dx", 0.0) + d, 2)
    notes += piles.moved_note(placed, "timer event", EVENT_PX)
    drawn = piles.count_on(points, placed) if placed.counted or tally else points
    return drawn, piles.rings(grid)


def _merge_view(shared: Rows, own: Rows, key: str) -> None:
    """Rows of ``key``'s view (``own``) into every key's (``shared``): a row alike in both
    stays one; else the shared one gets ``view`` "" and ``key``'s own ``view`` key."""
    alike = {frozenset(r.items()) for r in own}
    same = set()
    for r in shared:
        if r.get("key") == key and "view" not in r:
            if frozenset(r.items()) in alike:
                same.add(frozenset(r.items()))
            else:
                r["view"] = ""
    shared += [{**r, "view": key} for r in own if frozenset(r.items()) not in same]


def _boxes(rows: Rows, rings: Rows, px: Plot) -> list[Box]:
    """The boxes of timer events' rows and of rings'."""
    return [_square(_at(r, px), EVENT_PX / 2) for r in rows] + [
        _square(_at(r, px), RING_HALF_PX) for r in rings
    ]


WATERMARK_STEPS_TRIED = 40  # the staircase's vertical steps the "watermark" label tries


def watermark_label_off_marks(
    layers: list[spec.ChartDict],
    px: Plot,
    marks: list[Box],
    lines: list[tuple[Segment, bool]],
    vertices: Rows,
) -> list[spec.ChartDict]:
    """The staircase's "watermark" label at the first of its vertical steps (``vertices``:
    the line's rows; at most ``WATERMARK_STEPS_TRIED``) on the plot clear of ``marks`` and
    ``lines``, its box added to ``marks``; else left out (the subtitle names the staircase)."""
    if not layers:
        return []
    row = spec.rows(layers[0])[0]
    half = 0.3 * 11 * len(row["text"])
    steps = [(a, b) for a, b in pairwise(vertices) if a["x"] == b["x"] and a["y"] != b["y"]]
    spots = (
        ((a["x"], mid), [(cx + 2, cy - half, cx + 3 + 11 + 1, cy + half)])
        for a, b in steps[:WATERMARK_STEPS_TRIED]
        if None not in (a["x"], a["y"], b["y"])
        for mid in [(a["y"] + b["y"]) / 2]
        for cx, cy in [(px.px(a["x"]), px.py(mid))]
    )
    spot = first_clear(spots, _taken(lines, marks), inside=px.area)
    if spot is None:
        return []
    (row["x"], row["y"]), box = spot
    marks += box
    return layers


LABEL_SPOTS = tuple(k / 20 for k in sorted(range(2, 19), key=lambda k: (abs(k - 10), k)))
"""Where along its rule (0: registration, 1: end) a timestamp label tries to sit: the middle
first, then a twentieth farther each, below before above."""

LABEL_FONT, LABEL_GAP = 9, 3  # the timestamp labels' size and their gap to their rule


def labels_off_marks(
    layers: list[spec.ChartDict],
    px: Plot,
    marks: list[Box],
    lines: list[tuple[Segment, bool]],
    extents: dict[Any, tuple[float, float]],
    notes: list[str],
) -> list[spec.ChartDict]:
    """The timestamp labels (vertical), each at the first place — left of its timestamp's
    leftmost rule, then right of its rightmost (``extents``: per ``group``, the rules' least
    and greatest dx), along its first timer's rule (``span``) at ``LABEL_SPOTS`` — clear of
    ``marks``, ``lines`` and the labels kept before it (their boxes added to ``marks``); the
    others are left to the tooltip (the subtitle says how many)."""
    taken = _taken(lines, marks)
    kept, left_out = [], 0
    for row in spec.rows(layers[0]):
        lo, hi = extents.get(row.pop("group"), (row["dx"], row["dx"]))
        start, end = row.pop("span")
        spots = (
            (at, [_vertical_text_box(at, px)])
            for dx in (lo, hi + 2 * LABEL_GAP + LABEL_FONT)
            for frac in LABEL_SPOTS
            for at in [{**row, "dx": dx, "y": start + (end - start) * frac}]
        )
        spot = first_clear(spots, taken, inside=px.area)
        if spot is None:
            left_out += 1
            continue
        marks += spot[1]
        kept.append(spot[0])
    if left_out:
        notes.append(f"{left_out} timestamp label(s) left out where they would cross a mark")
    spec.rows(layers[0])[:] = kept
    return layers if kept else []


def _vertical_text_box(row: dict[str, Any], px: Plot) -> Box:
    """A timestamp label's box (turned 270°, centred, its baseline ``LABEL_GAP`` px left)."""
    (cx, cy), half = _at(row, px), 0.3 * LABEL_FONT * len(row["text"])
    return (cx - LABEL_GAP - LABEL_FONT, cy - half, cx - LABEL_GAP - 1, cy + half)


COUNT_FONT = 9  # the "×n" of a ▼ standing for several registrations

COUNT_CHAR_PX = 5.5  # a generous advance of a 9 px sans-serif character


def dedup_bins(
    records: pd.DataFrame,
    dedup: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    px: Plot,
    by_key: set[str] | None = None,
) -> Rows:
    """The de-duplicated registrations (``dedup``: positions in ``records``) in bins: those
    of one (domain, timestamp) — and key, for the keys ``by_key`` only — in one ``EVENT_PX``
    row of the plot (twice as tall while there are more bins than a layer may hold; once a row
    spans the plot, of one ``EVENT_PX`` column, twice as wide …, instead of one timestamp). Per
    bin, in order of its first registration: group (domain, x), x, y (of its first), n, first
    / last processing time, keys, domain, timestamp text (a column's: their range), reg_seq,
    and the rows' ``tall`` and columns' ``wide`` px (0: a timestamp each)."""
    if not len(dedup):
        return []
    # a timer's key and domain are one (``timer_records``' timer: per identity): each read
    # once per timer, from its first registration
    timers, firsts = first_of_each(records["timer"].to_numpy()[dedup])
    firsts = dedup[firsts]  # (each timer's first registration, in records)
    timer_keys = np.asarray(key_texts(records["key"].to_numpy()[firsts]), dtype=object)
    timer_domains = pd.factorize(records["domain"].to_numpy()[firsts], use_na_sentinel=False)[0]
    if by_key is not None:
        shown = np.asarray([k in by_key for k in timer_keys[timers].tolist()], dtype=bool)
        dedup, timers = dedup[shown], timers[shown]
        if not len(dedup):
            return []
    keys, domains = timer_keys[timers], timer_domains[timers]
    stamps = records["ts"].to_numpy()[dedup]
    procs = records["proc_time"].to_numpy()[dedup]
    # x: each distinct timestamp clipped once (a run has few)
    at, distinct = pd.factorize(stamps, use_na_sentinel=False)
    tx_distinct = [c for c, _ in x.clip_all(distinct.tolist())]
    xs = pd.factorize(np.asarray(tx_distinct, dtype=object), use_na_sentinel=False)[0][at]
    rows_px = _rows_px(procs, y, px)
    cols_px = np.asarray([0.0 if c is None else px.px(c) for c in tx_distinct])[at]
    tall, wide = float(EVENT_PX), 0.0  # (wide: 0, a column per timestamp)
    while True:
        cols = np.floor(cols_px / wide) if wide else xs
        frame = pd.DataFrame({"d": domains, "x": cols, "b": np.floor(rows_px / tall)})
        if by_key is not None:
            frame["k"] = keys
        bins = frame.groupby(list(frame.columns), sort=False).indices
        if len(bins) <= scale.ROW_LIMIT // 2 or (wide and (cols == cols[0]).all()):
            break
        # one row as tall as the plot holds no fewer bins taller: then wider columns
        if (frame["b"] == frame["b"].iloc[0]).all():
            wide = 2 * wide or float(EVENT_PX)
        else:
            tall *= 2
    members_of = sorted(bins.values(), key=lambda m: int(m[0]))
    heads = np.asarray([m[0] for m in members_of], dtype=np.int64)  # (each bin's first)
    tx = [c for c, _ in x.clip_all(stamps[heads].tolist())]
    ty = [c for c, _ in y.clip_all(procs[heads].tolist())]
    first_stamps = stamps[heads].tolist()
    doms = records["domain"].to_numpy()[dedup[heads]].tolist()
    seqs = records["seq"].to_numpy()[dedup[heads]].tolist()
    out = []
    for b, members in enumerate(members_of):
        times = procs[members]
        out.append(
            {
                "group": (doms[b], tx[b]),
                "x": tx[b],
                "y": ty[b],
                "n": len(members),
                "first": _plain(times.min()),
                "last": _plain(times.max()),
                "keys": list(dict.fromkeys(timer_keys[pd.unique(timers[members])].tolist())),
                "domain": doms[b],
                "timestamp": (_stamps_text(stamps[members], x) if wide else x.fmt(first_stamps[b])),
                "reg_seq": int(seqs[b]),
                "tall": tall,
                "wide": wide,
            }
        )
    return out


def _stamps_text(stamps: np.ndarray, x: TimeAxis) -> str:
    """The timestamp of a bin's registrations, or the range of them (a bin of a column)."""
    lo, hi = _plain(stamps.min()), _plain(stamps.max())
    return x.fmt(lo) if lo == hi else x.fmt_ranges([lo], [hi])[0]


def _rows_px(procs: np.ndarray, y: TimeAxis, px: Plot) -> np.ndarray:
    """Each processing time's pixel row (``px.py`` of its ``y.clip``; 0 where none)."""
    if procs.dtype.kind == "i" and y.lo <= procs.min() and procs.max() <= y.hi:
        return np.asarray(px.py(procs), dtype=float)
    return np.asarray([0.0 if v is None else px.py(v) for v, _ in y.clip_all(procs.tolist())])


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (a Python value as it is)."""
    return value.item() if isinstance(value, np.generic) else value


def dedup_layers(
    records: pd.DataFrame,
    dedup: np.ndarray,
    extents: dict[str, dict[Any, tuple[float, float]]],
    plot: tuple[TimeAxis, TimeAxis, Plot],
    drawn: Any,
    keys: list[str],
    notes: list[str],
) -> tuple[Rows, list[spec.ChartDict]]:
    """The ▼ rows placed beside their timestamp's rules (``dedups_beside``; ``drawn(key)``:
    the segments and boxes drawn when the dropdown shows ``key``; with ``keys``, again per
    key's view), and the layers of their "×n" and of the row above the plot."""
    x, y, px = plot
    views: dict[Any, Rows] = {None: dedup_bins(records, dedup, x, y, px)}
    if keys:
        views = {"": views[None]}
        for b in dedup_bins(records, dedup, x, y, px, by_key=set(keys)):
            views.setdefault(b["keys"][0], []).append(b)
    marks, texts, above_marks, above_texts = [], [], [], []
    for view, bins in views.items():
        if not bins:
            continue
        placed, above = dedups_beside(bins, extents.get(view or "", {}), _taken(*drawn(view)), px)
        rows, counts = _dedup_rows(placed, y, view)
        ups, up_counts = _dedup_rows(above, y, view)
        marks, texts = marks + rows, texts + counts
        above_marks, above_texts = above_marks + ups, above_texts + up_counts
        if not view:
            notes += dedup_notes(placed, len(rows), above, len(dedup), bins[0])
    layers = [_count_layer(texts, axes.xy(x, y))] if texts else []
    if above_marks:
        layers += _row_above_layers(above_marks, above_texts, x)
    return marks, layers


def dedup_notes(
    placed: Rows, drawn: int, above: Rows, total: int, grid: dict[str, Any]
) -> list[str]:
    """What the ▼ of every key's view stand for: ``placed`` beside their rules (as ``drawn``
    ▼), the rest of ``total`` in the row ``above``; ``grid``: a bin's ``tall`` and ``wide``
    (``dedup_bins``). A ▼ of a column stands for registrations of several timestamps."""
    beside, tall, wide = sum(r["n"] for r in placed), grid["tall"], grid["wide"]
    column = (
        f"one per timer domain and {wide:g} px column of timestamps (whatever their processing "
        "time), at the timestamp{} of the column's first registration{} (×n: n registrations "
        "at timestamps within the column; hover for their timestamps' range and their times)"
    )
    out = []
    if drawn and (beside > drawn or above):
        near = (
            "at or near its processing time"
            if tall == EVENT_PX
            else f"registered within one {tall:g} px row of processing time (or a near ▼'s), "
            "drawn at the first's"
        )
        out.append(
            f"de-duplicated registrations ▼: {beside:,} drawn as {drawn:,} ▼, "
            + column.format(" and processing time", ", beside its timestamp's rules")
            if wide
            else f"de-duplicated registrations ▼: {beside:,} drawn as {drawn:,} ▼ at their "
            "processing time beside their timestamp's rules (a ▼ with ×n: n of one "
            f"timestamp {near}; hover for their times)"
        )
    if above:
        at = (
            column.format("", "")
            if wide
            else "at their timer's timestamp (×n: n of them; hover for their times)"
        )
        out.append(
            f"{total - beside:,} de-duplicated registrations too crowded for a ▼ beside their "
            f"timer's rule: {len(above):,} ▼ in a row above the plot, {at}"
        )
    return out


def count_text(n: int) -> str:
    return f"×{n:,}"


def keys_text(keys: list[str]) -> str:
    """The key of a ▼ (its registrations' keys: one, or how many and the first five)."""
    if len(keys) == 1:
        return keys[0]
    return f"{len(keys)} keys: " + ", ".join(keys[:5]) + (" …" if len(keys) > 5 else "")


def dedup_boxes(cx: float, cy: float, n: int) -> list[Box]:
    """A ▼'s box at (cx, cy) and, for ``n`` > 1, its "×n" text's box."""
    h = EVENT_PX / 2
    boxes = [(cx - h, cy - h, cx + h, cy + h)]  # (_square, inline: the ▼' hot loop)
    if n > 1:
        w = COUNT_CHAR_PX * len(count_text(n)) + 2
        boxes.append((cx + h + 1, cy - COUNT_FONT * 0.7, cx + h + 1 + w, cy + COUNT_FONT * 0.7))
    return boxes


FINE_PX = 1  # the step between the places a ▼ tries: it finds a gap a few px wider than it
NEAR_PX = 2 * EVENT_PX  # how far up or down a ▼ with no place may be from the one it joins


def _tries(lo: float, hi: float, text: float) -> list[float]:
    """The dx a ▼ tries, nearest first (right before left): from ``EVENT_PX`` right of the
    rightmost rule (``hi``) and left of the leftmost (``lo``, less its ``text`` px "×n")
    outwards, ``FINE_PX`` apart, ``EVENT_STEPS`` × ``EVENT_PX`` far."""
    out = []
    for k in range(EVENT_STEPS * EVENT_PX // FINE_PX):
        out += [hi + EVENT_PX + k * FINE_PX, lo - EVENT_PX - text - k * FINE_PX]
    return out


def dedup_places(
    rows: Rows,
    extents: dict[Any, tuple[float, float]],
    taken: Taken,
    px: Plot,
    start: int = 0,
) -> list[int]:
    """Each ▼ row's ``dx`` at the first place it tries (``_tries``; ``extents``: per
    ``group``, its rules' least and greatest dx) where its box and "×n" lie on the plot clear
    of ``taken`` (the ▼ of the rules, its text of every line: ``boxes.first_clear``), each
    then added to ``taken``; rows before ``start`` keep their ``dx``. Returns the positions of
    those with none."""
    failed = []
    for i, r in enumerate(rows):
        lo, hi = extents.get(r["group"], (0.0, 0.0))
        x0, cy, n = px.px(r["x"]), px.py(r["y"]), r["n"]
        if i < start:
            for b in dedup_boxes(x0 + r["dx"], cy, n):
                taken.add(b)
            continue
        text = boxes[1][2] - boxes[1][0] if len(boxes := dedup_boxes(0, 0, n)) > 1 else 0
        dxs = _tries(lo, hi, text)
        right, left = [dx for dx in dxs if dx > hi], [dx for dx in dxs if dx <= hi]
        k = _first_place(x0, cy, n, right, taken, px)
        j = _first_place(x0, cy, n, left[:k], taken, px)  # (right first at one distance)
        dx = left[j] if j < k else right[k] if k < len(right) else None
        if dx is not None:
            r["dx"] = dx
            for b in dedup_boxes(x0 + dx, cy, n):
                taken.add(b)
        else:
            failed.append(i)
    return failed


def _first_place(x0: float, cy: float, n: int, dxs: list[float], taken: Taken, px: Plot) -> int:
    """The position in ``dxs`` (one side's tries, outwards) of the first place clear of
    ``taken`` (``boxes.first_clear``), else ``len(dxs)``; tries a box met still meets are
    passed over (``_passed``)."""
    if not dxs:
        return 0
    ends = dedup_boxes(x0 + dxs[0], cy, n) + dedup_boxes(x0 + dxs[-1], cy, n)
    out = dxs[-1] > dxs[0]  # to the right
    tries = [(k, dedup_boxes(x0 + dx, cy, n)) for k, dx in enumerate(dxs)]
    spot = first_clear(
        tries,
        taken,
        inside=px.area,
        lines=(RULES, None),
        add=False,
        near=around(ends),
        passed=lambda b, boxes, segments: _passed(b, boxes, segments, out),
    )
    return len(dxs) if spot is None else spot[0]


def _passed(b: Box, boxes: list[Box], segments: list[tuple[Segment, bool]], out: bool) -> int:
    """How many tries on the next one that may be clear is, from the try whose box ``b`` met
    the first of ``boxes`` (if it overlaps it), else of ``segments`` (a slanted line: 1)."""
    if boxes and overlaps(b, boxes[0]):
        lo, hi = boxes[0][0], boxes[0][2]
    elif (s := segments[0][0])[0] == s[2] or s[1] == s[3]:
        lo, hi = min(s[0], s[2]), max(s[0], s[2])
    else:
        return 1
    ahead = (hi - b[0] if out else b[2] - lo) / FINE_PX
    return max(math.ceil(ahead - 1e-6), 1)


def dedups_beside(
    rows: Rows,
    extents: dict[Any, tuple[float, float]],
    taken: Taken,
    px: Plot,
) -> tuple[Rows, Rows]:
    """The ▼ rows placed beside their timestamp's rules (``dedup_places``), and those in the
    row above the plot (``in_row_above``). A ▼ with no place is counted on the nearest ▼ of
    its timestamp within ``NEAR_PX`` up or down (else it goes to the row above), and all are
    placed again (those before the first whose "×n" changed keep their place) until each has
    a place: every registration is drawn or counted in an "×n"."""
    rows, above, start = [dict(r) for r in rows], [], 0
    while True:
        failed = dedup_places(rows, extents, taken.copy(), px, start) if start < len(rows) else []
        if not failed:
            return rows, in_row_above(above, extents, px)
        gone: set[int] = set()
        counted_on, unplaced = len(rows), set(failed)
        of_group: dict[Any, list[int]] = {}  # (each row's mates are of its group)
        for j, s in enumerate(rows):
            of_group.setdefault(s["group"], []).append(j)
        for i in failed:
            r, cy = rows[i], px.py(rows[i]["y"])
            # a ▼ placed, else one that found no place either (placed again with both)
            mates = [
                (j in unplaced, abs(px.py(rows[j]["y"]) - cy), j)
                for j in of_group[r["group"]]
                if j != i and j not in gone and abs(px.py(rows[j]["y"]) - cy) <= NEAR_PX
            ]
            near = min(mates, default=None)
            if near is not None:
                size = dedup_boxes(0, 0, rows[near[2]]["n"])
                _count_on(rows[near[2]], r)
                if dedup_boxes(0, 0, rows[near[2]]["n"]) != size:  # a new or wider "×n"
                    counted_on = min(counted_on, near[2])
            else:
                above.append(r)
            gone.add(i)
        start = sum(i not in gone for i in range(counted_on))
        rows = [r for i, r in enumerate(rows) if i not in gone]


ROW_ABOVE_PX = 14  # the height of a line of the row above the plot


def in_row_above(rows: Rows, extents: dict[Any, tuple[float, float]], px: Plot) -> Rows:
    """The ▼ of crowded timers in a row above the plot, in order of x: one per timestamp
    (``n`` its registrations), at the middle of its rules, in the first line of the row
    (``above``: pixels above the plot) where it and its "×n" overlap no other."""
    by_group: dict[Any, dict[str, Any]] = {}
    for r in rows:
        if r["group"] in by_group:
            _count_on(by_group[r["group"]], r)
        else:
            by_group[r["group"]] = dict(r)
    # per box placed: its left, right and line (lines ``ROW_ABOVE_PX`` apart, taller than any
    # box: a box meets those of its own line that it meets across)
    placed, out = np.empty((2 * len(by_group), 3)), []
    for r in sorted(by_group.values(), key=lambda r: (px.px(r["x"]), r["reg_seq"])):
        lo, hi = extents.get(r["group"], (0.0, 0.0))
        r["dx"] = (lo + hi) / 2
        mine, now = dedup_boxes(px.px(r["x"]) + r["dx"], 0.0, r["n"]), placed[: 2 * len(out)]
        met = np.zeros(len(now), dtype=bool)
        for left, _, right, _ in mine:
            met |= (now[:, 0] < right) & (left < now[:, 1])
        taken = set(now[met, 2].tolist())
        line = next(line for line in itertools.count() if line not in taken)
        r["above"] = ROW_ABOVE_PX / 2 + 2 + line * ROW_ABOVE_PX
        # (two rows a ▼: its box and its "×n"'s, else its box again)
        placed[len(now) : len(now) + 2] = [(b[0], b[2], line) for b in (mine * 2)[:2]]
        out.append(r)
    return out


def _count_on(into: dict[str, Any], r: dict[str, Any]) -> None:
    into["n"] += r["n"]
    into["first"], into["last"] = min(into["first"], r["first"]), max(into["last"], r["last"])
    into["keys"] = list(dict.fromkeys([*into["keys"], *r["keys"]]))


def _dedup_rows(placed: Rows, y: TimeAxis, view: str | None) -> tuple[Rows, Rows]:
    """The ▼ rows of the placed bins and the "×n" of those standing for several, with their
    ``above`` (in the row above) and ``view``."""
    marks, counts = [], []
    for b in placed:
        mark = {
            "kind": "timer event",
            "event": DEDUP_EVENT,
            "x": b["x"],
            "y": b["y"],
            "dx": b["dx"],
            "key": keys_text(b["keys"]),
            "domain": b["domain"],
            "timestamp": b["timestamp"],
            "registered": y.fmt(b["first"])
            + ("" if b["first"] == b["last"] else f" – {y.fmt(b['last'])}"),
            "registrations": b["n"],
            piles.ALSO_HERE: b["n"] - 1,
            "reg_seq": b["reg_seq"],
        }
        count = {"kind": "dedup count", "x": b["x"], "y": b["y"],
                 "dx": b["dx"] + EVENT_PX / 2 + 1, "text": count_text(b["n"])}  # fmt: skip
        for row in (mark, count):
            row |= {"above": -b["above"]} if "above" in b else {}
            row |= {"view": view} if view is not None else {}
        marks.append(mark)
        counts += [count] if b["n"] > 1 else []
    return marks, counts


def _count_layer(texts: Rows, xy: dict[str, Any]) -> spec.ChartDict:
    """The "×n" texts of the ▼ standing for n registrations, right of them."""
    return spec.text_layer(
        texts,
        xy,
        size=COUNT_FONT,
        color=palette.INK,
        align="left",
        baseline="middle",
        xOffset={"expr": "datum.dx"},
    )


def _row_above_layers(marks: Rows, texts: Rows, x: TimeAxis) -> list[spec.ChartDict]:
    """The ▼ in the row above the plot (``above``: pixels from its top) and their "×n"."""
    xy = {
        "x": axes.channel(x, "x"),
        "y": {"field": "above", "type": "quantitative", "scale": None, "axis": None},
    }
    row = spec.layer(
        marks,
        {
            "type": "point",
            "shape": "triangle-down",
            "filled": True,
            "size": 45,
            "color": palette.DEDUP_COLOR,
            "opacity": 0.9,
            "xOffset": {"expr": "datum.dx"},
        },
        {**xy, "tooltip": spec.tooltips(marks, ["x", "y", "dx", "kind", "above", "view"])},
    )
    return [row, *([_count_layer(texts, xy)] if texts else [])]
