"""The timeline's window marks: the firings, cleanups, session merges and interval-join pairs
of one operator, drawn where the trace says they happened, and the "what
happened" legend they share (``_what_layer``, ``_with_category_scales``). Few marks are
drawn one by one with their texts, many (over ``DETAIL_LIMIT``) aggregated per window.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import detail_names as detail_fields
from winviz.viz import (
    firings,
    labels,
    palette,
    piles,
    scale,
    spec,
    value_texts,
    window_lives,
)
from winviz.viz.boxes import Taken
from winviz.viz.labels import Plot
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceView

LABEL_LIMIT = 25  # firing labels drawn when there are at most this many firing marks
DETAIL_LIMIT = 2000  # above this many firings (cleanups): one mark per window and timing


def _window_marks(view: TraceView, op: str, kind: str) -> Columns:
    """The firings or cleanups (``kind``) of ``op`` of a time window: without their texts
    (``firings.firing_marks``) when there are many, else with them (``firing_columns``)."""
    marks, columns = {
        "fired": (firings.firing_marks, firings.firing_columns),
        "cleanup": (firings.cleanup_marks, firings.cleanup_columns),
    }[kind]
    if len(view.select(kind, operator=op)) > DETAIL_LIMIT:
        drawn = marks(view, op)
        if len(drawn) > DETAIL_LIMIT:
            return drawn
    return columns(view, op)


def _fired_label(cause: str, fired_by: str, timer: Any, x: TimeAxis) -> str:
    """What a firing label says caused it: the timer ("event-time timer at 4999", on a date
    axis at the time of day), "element", "end of input", ..."""
    if fired_by in ("end of input", "cause not traced") or not cause:
        return fired_by
    if x.kind == "epoch" and not _missing(timer) and not palette.is_off_chart(timer):
        stamp = x.fmt(int(timer))  # "2019-08-24 09:51:59.999 UTC": the time of day
        return f"{fired_by} at {stamp.split(' ')[1]}"
    return cause


def _firings(
    fired: Columns, plot: Plot, notes: list[str], taken: Taken, occupied: piles.Grid
) -> tuple[list[spec.ChartDict], list[dict[str, Any]], list[float]]:
    """The firing marks (marks at one point side by side: ``_side_by_side``), and the rows
    and offsets of those to label (none when aggregated)."""
    if fired.empty:
        return [], [], []
    x, y = plot.x, plot.y
    if len(fired) > DETAIL_LIMIT:
        return [_firings_aggregated(fired, x, y, notes)], [], []
    seqs, panes, counts = (_int_texts(fired[c].tolist()) for c in ("seq", "pane", "count"))
    keys, results = value_texts.key_texts(fired["key"]), value_texts.shorts(fired["result"], 40)
    causes, timers, late_firing = (fired[c].tolist() for c in ("cause", "timer", "late_firing"))
    timings = [
        f + (", late firing" if late else "")
        for f, late in zip(fired["firing"].tolist(), late_firing, strict=True)
    ]
    marks, procs = x.fmt_all(fired["watermark"].tolist()), y.fmt_all(fired["proc_time"].tolist())
    starts, ends = (x.fmt_all(fired[c].tolist()) for c in ("window_start", "window_end"))
    rows = []
    # a firing sits at the event time of the timer that fired it, else at its window's end
    by = ["window_start", "window_end", "at", "proc_time", "fired_by"]
    for (_, _, at, proc, fired_by), idx in window_lives.groups(fired, by).items():
        fx, note = x.clip(at)
        i = idx[0]
        distinct = list(dict.fromkeys(causes[j] for j in idx))
        shown = fired_by
        if len(distinct) == 1:
            shown = _fired_label(distinct[0], fired_by, timers[i], x)
        late = sum(bool(late_firing[j]) for j in idx)
        if late:
            shown += ", late firing" if late == len(idx) else f", {late} late firing(s)"
        if len(idx) == 1:
            label = f"{results[i]} · {shown}"
        elif len(idx) <= 3:
            label = ", ".join(f"{keys[j]}={results[j]}" for j in idx) + f" · {shown}"
        else:
            label = f"{len(idx)} keys · {shown}"
        rows.append(
            {
                "x": fx,
                "y": y.clip(proc)[0],
                "what": palette.FIRED_EVENT.get(fired_by, "fired: cause not traced"),
                "label": label,
                "kind": "fired",
                "seq": ", ".join(seqs[j] for j in idx),
                "window": f"[{starts[i]}, {ends[i]})",
                "key": ", ".join(keys[j] for j in idx),
                "result": ", ".join(results[j] for j in idx),
                "pane": ", ".join(panes[j] for j in idx),
                "cause": ", ".join(distinct),
                "count": ", ".join(counts[j] for j in idx),
                "proc_time": procs[i],
                "watermark": marks[i],
                "firing": ", ".join(dict.fromkeys(timings[j] for j in idx)),
                "note": note,
            }
        )
    layer, rows, offsets = _beside(rows, plot, notes, taken, occupied, "firing")
    return [layer], rows, offsets


def _firing_labels(
    rows: list[dict[str, Any]],
    offsets: list[float],
    plot: Plot,
    show: bool | None,
    notes: list[str],
    taken: Taken,
) -> list:
    """The firing labels (``rows``: the marks drawn, ``offsets`` beside their points), placed
    off every mark, line and other label (``_place_labels``), with leader lines; none when
    ``show`` is False, or by default over ``LABEL_LIMIT`` marks."""
    if show is None and len(rows) > LABEL_LIMIT:
        notes.append(f"firing labels hidden ({len(rows):,} firing marks; hover for details)")
    if not (len(rows) <= LABEL_LIMIT if show is None else show):
        return []
    placed, hidden = labels._place_labels(rows, plot, taken, offsets)
    if hidden:
        notes.append(
            f"{hidden} firing label(s) left out where they would overlap (hover the marks)"
        )
    return labels.label_layers(placed, plot)


CLEANUP_TIMER_TEXT = "the operator's cleanup timer (not the trigger's)"
"""What fired a cleanup: the timer the window operator registered at ``cleanupTime(window)``
(``WindowOperator.registerCleanupTimer``), never a trigger's (unless it is the same timer)."""


def _cleanups(
    cleaned: Columns, plot: Plot, notes: list[str], taken: Taken, occupied: piles.Grid
) -> list[spec.ChartDict]:
    """The cleanup marks, at (cleanup time, processing time), beside the firings'."""
    if cleaned.empty:
        return []
    x, y = plot.x, plot.y
    if len(cleaned) > DETAIL_LIMIT:
        return [_cleanups_aggregated(cleaned, x, y, notes)]
    seqs, marks = cleaned["seq"].tolist(), cleaned["watermark"].tolist()
    keys = value_texts.key_texts(cleaned["key"])
    rows = []
    by = ["window_start", "window_end", "proc_time", "cleanup_time"]
    for (start, end, proc, ctime), idx in window_lives.groups(cleaned, by).items():
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
    return [_beside(rows, plot, notes, taken, occupied, "cleanup")[0]]


def _beside(
    rows: list[dict[str, Any]],
    plot: Plot,
    notes: list[str],
    taken: Taken,
    occupied: piles.Grid,
    what: str,
) -> tuple[spec.ChartDict, list[dict[str, Any]], list[float]]:
    """The layer of firing or cleanup marks (``what``; a cleanup as large and outlined as a
    firing: seen on the watermark line it often sits on), those at one point drawn side by
    side, ``dx`` pixels apart (``labels._side_by_side``); and the rows and offsets drawn."""
    rows = _sampled(rows, notes, f"{what}s: every {{}} {what} mark drawn")
    rows, offsets = labels._side_by_side(rows, plot, occupied, taken, what, notes)
    mark = {"type": "point", "filled": True, "size": 90, "strokeWidth": 1, "stroke": palette.INK}
    if any(offsets):
        for row, off in zip(rows, offsets, strict=True):
            row["dx"] = off
        mark["xOffset"] = {"expr": "datum.dx"}
    skip = ["what", "label", "dx"] if what == "firing" else ["what", "dx"]
    return _what_layer(rows, mark, plot.x, plot.y, skip), rows, offsets


def _merges(view: TraceView, op: str, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """The session merges of ``op`` (Flink's ``MergingWindowSet.addWindow``): a "merged" mark
    per window merged away, at (its start, the merge's processing time), naming its target."""
    if not len(view.select("merged", operator=op)):
        return None
    merges = window_lives.merged(view, op)
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
    if len(rows) > scale.ROW_LIMIT:
        rows = _merges_binned(groups, x, y, notes)
    return _what_layer(rows, {"type": "point", "filled": True, "size": 160}, x, y, ["what"])


def _merges_binned(
    groups: dict[tuple[Any, ...], list[int]], x: TimeAxis, y: TimeAxis, notes: list[str]
) -> list[dict[str, Any]]:
    """More "merged" marks than ``scale.ROW_LIMIT``: the windows merged away counted per grid
    cell (``scale.bin_points``), a mark per cell at their mean position."""
    sizes = [len(idx) for idx in groups.values()]
    n = sum(sizes)
    xs = np.repeat(np.array([x.clip(g[0])[0] for g in groups], dtype=float), sizes)
    ys = np.repeat(np.array([y.clip(g[4])[0] for g in groups], dtype=float), sizes)
    ranges, codes = ((x.lo, x.hi), (y.lo, y.hi)), np.zeros(n, dtype=np.int64)
    cells, nx, ny = scale.bin_points(xs, ys, codes, ["merged"], "what", *ranges, scale.ROW_LIMIT)
    notes.append(
        f"{len(groups):,} merged marks ({n:,} windows merged away) binned on a {nx} × {ny} "
        "grid: a mark is a cell's windows merged away, at their mean position, their count "
        "in its tooltip"
    )
    edges = {
        c: cells[c].round().astype("int64").tolist() for c in ("x_min", "x_max", "y_min", "y_max")
    }
    return _records(
        {
            "x": cells["x"].round().astype("int64").tolist(),
            "y": cells["y"].round().astype("int64").tolist(),
            "what": "merged",
            "kind": "merged (binned)",
            "windows merged away": cells["count"].astype("int64").tolist(),
            "start": x.fmt_ranges(edges["x_min"], edges["x_max"]),
            "proc_time": y.fmt_ranges(edges["y_min"], edges["y_max"]),
        }
    )


def _joins(
    view: TraceView, op: str, plot: Plot, notes: list[str], taken: Taken, occupied: piles.Grid
) -> list[spec.ChartDict]:
    """An interval join's pairs (``joined``, at the output's timestamp when they joined: most
    often the dot of the arriving element that joined them) and the buckets its cleanup
    timers removed (``buffer_removed``), at their processing time: drawn as firings and
    cleanups are (``_beside``: as large, those at one point side by side, counted under a
    ring)."""
    x, y = plot.x, plot.y
    layers = []
    for kind, what, mark, happened in (
        ("joined", "joined", "joined pair", "pairs joined (at the output's timestamp)"),
        (
            "buffer_removed",
            "buffer removed",
            "buffer removal",
            "buffer buckets removed by cleanup timers",
        ),
    ):
        if view.kind_code(kind) < 0:
            continue
        at = view.select(kind, operator=op)
        if not len(at):
            continue
        stamps, procs = view.ints("ts", at)[0].tolist(), view.ints("proc_time", at)[0].tolist()
        keys = value_texts.key_texts(view.column("key", at))
        first, second = (view.detail(kind, f, at).tolist() for f in detail_fields(kind))
        rows: list[dict[str, Any]] = []
        for i, seq in enumerate(at.tolist()):
            cx, note = x.clip(stamps[i])
            row = {"x": cx, "y": y.clip(procs[i])[0], "what": what, "seq": seq, "key": keys[i]}
            if kind == "joined":
                row |= {"left_ts": x.fmt(first[i]), "right_ts": x.fmt(second[i])}
            else:
                row |= {"side": first[i], "elements": second[i]}
            rows.append(row | {"ts": x.fmt(stamps[i]), "proc_time": y.fmt(procs[i]), "note": note})
        notes.append(f"{len(at):,} {happened}")
        layers.append(_beside(rows, plot, notes, taken, occupied, mark)[0])
    return layers


def groups_of(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts rows by these key columns (the first the most significant, ties
    in their order) and the position in it of each group's first row."""
    order = np.lexsort(keys[::-1])
    by = np.stack(keys)[:, order]
    return order, np.flatnonzero(np.r_[True, (by[:, 1:] != by[:, :-1]).any(axis=0)])


def _firings_aggregated(fired: Columns, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """One mark per (window, cause, event time of the firing timer — else the window end)
    at the first such firing's processing time (``scale.cells``)."""
    window = [np.asarray(fired[c], dtype=np.int64) for c in ("window_start", "window_end")]
    at = np.asarray(pd.to_numeric(fired["at"])).astype(np.int64)
    proc = np.asarray(pd.to_numeric(fired["proc_time"]))
    cause = np.asarray(fired["fired_by"], dtype=object)
    found, cell = scale.cells([*window, at, cause], lo=("min", proc), hi=("max", proc))
    starts, ends, at, fired_by = (v.tolist() for v in found)
    lo, hi = cell["lo"].tolist(), cell["hi"].tolist()
    rows = _records(
        {
            "x": [c[0] for c in x.clip_all(at)],
            "y": [c[0] for c in y.clip_all(lo)],
            "what": [palette.FIRED_EVENT.get(f, "fired: cause not traced") for f in fired_by],
            "kind": "fired (aggregated)",
            "window": _window_texts(x, starts, ends),
            "fired by": fired_by,
            "firings": cell["count"].tolist(),
            "proc_time": y.fmt_ranges(lo, hi),
        }
    )
    rows, k = scale.every_kth(rows)
    notes.append(
        f"{len(fired):,} firings drawn as one mark per window and cause (at the first "
        "firing's processing time)" + (f"; every {scale.nth(k)} mark" if k > 1 else "")
    )
    mark = {"type": "point", "filled": True, "size": 40, "strokeWidth": 0.5, "stroke": palette.INK}
    return _what_layer(rows, mark, x, y, [])


def _cleanups_aggregated(cleaned: Columns, x: TimeAxis, y: TimeAxis, notes: list[str]) -> Any:
    """One mark per window at its last cleanup (``scale.cells``)."""
    window = [np.asarray(cleaned[c], dtype=np.int64) for c in ("window_start", "window_end")]
    last = {
        c: ("max", np.asarray(pd.to_numeric(cleaned[c]))) for c in ("cleanup_time", "proc_time")
    }
    (starts, ends), cell = scale.cells(window, **last)
    at, proc = cell["cleanup_time"].tolist(), cell["proc_time"].tolist()
    rows = _records(
        {
            "x": [c[0] for c in x.clip_all(at)],
            "y": [c[0] for c in y.clip_all(proc)],
            "what": "cleanup",
            "kind": "cleanup (aggregated)",
            "window": _window_texts(x, starts.tolist(), ends.tolist()),
            "keys": cell["count"].tolist(),
            "cleanup_time": x.fmt_all(at),
            "proc_time": y.fmt_all(proc),
        }
    )
    rows, k = scale.every_kth(rows)
    notes.append(
        f"{len(cleaned):,} cleanups drawn as one mark per window (its last)"
        + (f"; every {scale.nth(k)} mark" if k > 1 else "")
    )
    mark = {"type": "point", "filled": True, "size": 30}
    return _what_layer(rows, mark, x, y, [])


def _window_texts(x: TimeAxis, starts: list[Any], ends: list[Any]) -> list[str]:
    """Each window's text, "[start, end)"."""
    return [f"[{a}, {b})" for a, b in zip(x.fmt_all(starts), x.fmt_all(ends), strict=True)]


def _records(columns: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a table given as columns: lists of equal length, or one value for every
    row."""
    n = max(len(v) for v in columns.values() if isinstance(v, list))
    lists = [v if isinstance(v, list) else [v] * n for v in columns.values()]
    return [dict(zip(columns, row, strict=True)) for row in zip(*lists, strict=True)]


def _int_texts(values: list[Any]) -> list[str]:
    """Each value's text: an int as an int, missing as empty."""
    return [str(v) if v.__class__ is int else "" if _missing(v) else str(int(v)) for v in values]


def _join(values: list[Any], idx: list[int]) -> str:
    """The values at idx as "1, 2, 3" (as ``_int_texts``)."""
    return ", ".join(_int_texts([values[i] for i in idx]))


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _what_layer(
    rows: list[dict[str, Any]],
    mark: dict[str, Any],
    x: TimeAxis,
    y: TimeAxis,
    skip: list[str],
    types: dict[str, str] | None = None,
    **channels: Any,
) -> spec.ChartDict:
    """A layer of ``mark`` at (x, y) coloured and shaped by "what happened" (scales set by
    ``_with_category_scales``), every other column but ``skip`` a tooltip (``types``: as
    ``spec.tooltips``)."""
    encoding = {
        "x": x.channel("x"),
        "y": y.channel("y"),
        "color": {"field": "what", "type": "nominal", "title": "what happened"},
        "shape": {"field": "what", "type": "nominal", "title": "what happened"},
        "tooltip": spec.tooltips(rows, ["x", "y", *skip], types),
    }
    return spec.layer(rows, mark, encoding | channels)


def _sampled(rows: list[Any], notes: list[str], note: str) -> list[Any]:
    """``scale.every_kth`` of ``rows``, ``note`` (a format string of "kth") said when sampled."""
    rows, k = scale.every_kth(rows)
    if k > 1:
        notes.append(note.format(scale.nth(k)))
    return rows


def _with_category_scales(layers: list[spec.ChartDict]) -> None:
    """One legend, "what happened", with only the categories drawn, in legend order, each
    with its fixed colour and shape (set on every layer coloured by it)."""
    seen: set[str] = set()
    for layer in layers:
        seen.update(map(dict.get, spec.rows(layer), repeat("what")))
    names = (*palette.FATES, *palette.WINDOW_EVENTS, *palette.JOIN_EVENTS)
    colors = (*palette.FATE_COLORS, *palette.WINDOW_EVENT_COLORS, *palette.JOIN_EVENT_COLORS)
    shapes = (*palette.FATE_SHAPES, *palette.WINDOW_EVENT_SHAPES, *palette.JOIN_EVENT_SHAPES)
    for layer in layers:
        enc = layer["encoding"]
        if "color" in enc:
            enc["color"]["scale"] = palette.drawn_scale(names, colors, seen)
            enc["shape"]["scale"] = palette.drawn_scale(names, shapes, seen)
