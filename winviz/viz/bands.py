"""The timeline's window bands and allowed-lateness horizons.

A band per (start, end) window over all keys: its event-time extent across, its life in
processing time (first element assigned → cleaned up or merged away) down. With allowed
lateness > 0, a dashed line per window at its horizon — max timestamp + allowed lateness,
Flink's ``WindowOperator.cleanupTime`` — over the band's life: until the watermark passes
it, the window still accepts late elements.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from winviz.trace import restores, vocabulary
from winviz.viz import palette, scale, spec, window_lives
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceView
from winviz.viz.window_marks import _missing, groups_of

MIN_BAND_PX = 8
"""The least height in pixels a window band is drawn (``_visible_span``): a window opened and
closed at one processing time would draw nothing."""


def _bands(
    per_window: list[_Window] | None,
    horizons: dict[tuple[int, int], int],
    x: TimeAxis,
    y: TimeAxis,
    notes: list[str],
    derived: frozenset[tuple[int, int]],
    chains: dict[tuple[str, int, int], window_lives.MergeChain] | None,
    across: bool,
    height: int,
    fired: dict[tuple[int, int], float] | None = None,
) -> tuple[spec.ChartDict | None, spec.ChartDict | None]:
    """The window bands (``per_window``: ``_per_window(lives)``), each at least
    ``MIN_BAND_PX`` high, its tooltip the true times (``across``: of processing-time windows,
    spanning the whole event-time axis over their life), and a dashed vertical line per
    window at its horizon over its band's life. ``derived``: the windows whose horizon
    ``window_lives.every_horizon`` derived (no ``cleanup`` record); their tooltips say so and
    name the last window of their merge chain (``chains``: ``window_lives.merge_chains``)
    when every key's is the same. ``fired``: each window's first firing — the bands as of a
    time (the scrubber's), whose rows carry their times as positions (``AS_OF``)."""
    if per_window is None:
        return None, None
    chain_of: dict[tuple[int, int], set[window_lives.MergeChain]] = {}
    for (_, s, e), chain in (chains or {}).items():
        chain_of.setdefault((s, e), set()).add(chain)
    bands, lines = [], []
    undone = any(w.undone_elements or w.undone_firings for w in per_window)
    for w in per_window:
        s, e = w.window_start, w.window_end
        top = y.hi if w.closed is None else y.clip(w.closed)[0]  # (still open: the top edge)
        if fired is None and w.rolled_back_close is not None:  # (drawn over the failed run)
            top = y.clip(w.rolled_back_close)[0]
        y0, y1 = _visible_span(y.clip(w.opened)[0], top, y, height)
        horizon = horizons.get((s, e))
        if horizon is not None:
            hx, note = x.clip(horizon)
            texts = window_lives.horizon_texts(x.fmt, s, e, horizon)
            lines.append(
                {"x": hx, "y": y0, "y2": y1, "line": palette.HORIZON, **texts, "note": note}
            )
            if derived:
                at = "" if w.closed is None else y.fmt(w.closed)
                same = chain_of.get((s, e), set())
                chain = next(iter(same)) if len(same) == 1 else None
                source = window_lives.horizon_source((s, e) in derived, w.merged_into, at, chain)
                lines[-1]["from"] = source
        if s >= e:  # (its end overflowed: no band)
            continue
        (x0, n0), (x1, n1) = ((x.lo, ""), (x.hi, "")) if across else (x.clip(s), x.clip(e))
        if w.closed is None:
            closed = "still open at the end"
        else:
            into = f"merged into {w.merged_into} at " if w.merged_into else ""
            closed = into + y.fmt(w.closed)
        if w.rolled_back_close is not None:
            closed += f" ({y.fmt(w.rolled_back_close)} {vocabulary.ROLLED_BACK})"
        bands.append(
            {
                "x": x0,
                "x2": x1,
                "y": y0,
                "y2": y1,
                "kind": "window",
                "window": f"[{x.fmt(s)}, {x.fmt(e)})",
                "keys": w.keys,
                "elements": vocabulary.kept_count(w.elements, w.undone_elements)
                if undone
                else w.elements,
                "firings": vocabulary.kept_count(w.firings, w.undone_firings)
                if undone
                else w.firings,
                "opened": y.fmt(w.opened),
                "closed": closed,
                "accepts late elements until": "" if horizon is None else x.fmt(horizon),
                "note": (n0 + " " + n1).strip(),
            }
        )
        if fired is not None:
            f, c = fired.get((s, e)), w.closed
            at = (y.clip(w.opened)[0], None if f is None else y.clip(f)[0])
            at += (None if c is None else y.clip(c)[0], w.merged_into)
            bands[-1] |= dict(zip(AS_OF, at, strict=True))
    if len(bands) < len(per_window):
        notes.append(
            f"{len(per_window) - len(bands)} window(s) whose end overflowed the long range "
            "(start >= end) have no band"
        )
    bands, k = scale.every_kth(bands)
    if k > 1:
        notes.append(f"window bands: every {scale.nth(k)} of {len(bands) * k:,} windows drawn")
    if not any(r["accepts late elements until"] for r in bands):
        for r in bands:
            del r["accepts late elements until"]
    mark = {
        "type": "rect",
        "fill": palette.WINDOW_FILL,
        "fillOpacity": palette.WINDOW_OPACITY,
        "stroke": palette.WINDOW_COLOR,
        "strokeWidth": 1,
    }
    encoding = {"x": x.channel("x"), "x2": {"field": "x2"}, "y": y.channel("y")}
    encoding |= {
        "y2": {"field": "y2"},
        "tooltip": spec.tooltips(bands, ["x", "x2", "y", "y2", *AS_OF]),
    }
    if not horizons:
        return spec.layer(bands, mark, encoding), None
    lines, _ = scale.every_kth(lines)
    rule = {"type": "rule", "color": palette.HORIZON_COLOR, "strokeWidth": 1.5, "opacity": 0.8}
    line = {"x": x.channel("x"), "y": y.channel("y"), "y2": {"field": "y2"}}
    line["strokeDash"] = _line_legend(palette.HORIZON, palette.HORIZON_DASH)
    line["tooltip"] = spec.tooltips(lines, ["x", "y", "y2", "line"])
    return spec.layer(bands, mark, encoding), spec.layer(lines, rule, line)


AS_OF = ("opened_at", "fired_at", "closed_at", "merged_into")
"""The fields of a band as of a time (``_bands``' ``fired``): its opening, first firing and
close as positions on the processing-time axis (None: never), the window it merged into."""


def _visible_span(y0: Any, y1: Any, y: TimeAxis, height: int) -> tuple[Any, Any]:
    """A band's processing-time extent ``y0`` .. ``y1`` as drawn: at least ``MIN_BAND_PX``
    high in a plot ``height`` px high, centred on its middle (inside the axis)."""
    least = least_span(y, height)
    if y0 is None or y1 is None or y1 - y0 >= least:
        return y0, y1
    low = min(max((y0 + y1) / 2 - least / 2, y.lo), y.hi - least)
    return round(low, 3), round(low + least, 3)  # (µs: no float noise in the spec)


def least_span(y: TimeAxis, height: int) -> float:
    """``MIN_BAND_PX`` in the units of ``y`` on a plot ``height`` px high."""
    return MIN_BAND_PX * max(1, y.hi - y.lo) / max(1, height)


def _line_legend(name: str, dash: list[int]) -> dict[str, Any]:
    """A strokeDash channel of one constant category: a legend entry explaining a line, under
    the chart (where the plot's width holds the long label)."""
    scale = {"domain": [name], "range": [dash]}
    legend = {"orient": "bottom", "labelLimit": 0}
    return {"field": "line", "type": "nominal", "title": None, "scale": scale, "legend": legend}


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
    undone_elements: int = 0  # elements assigned, firings: those a restore rolled back
    undone_firings: int = 0
    rolled_back_close: int | None = None  # a later close a restore rolled back (``closed``: kept)


def per_window(view: TraceView, op: str, lives: pd.DataFrame | Columns) -> list[_Window] | None:
    """``_per_window(lives)`` as the run keeps it: each window's elements assigned and firings
    that a restore rolled back counted apart (``undone_elements``, ``undone_firings``), not in
    ``elements`` and ``firings``; ``closed`` the close the run keeps, a later one a restore
    rolled back in ``rolled_back_close``: the lives as kept (``window_lives.as_kept``, session
    merges included) summed per window by the one rule, ``_per_window``."""
    windows = _per_window(lives)
    if windows is None or window_lives.rolled_back_lives(view, op) is None:
        return windows
    columns = ("window_start", "window_end", "key", "opened", "merged_into")
    frame = pd.DataFrame({c: np.asarray(lives[c]) for c in (*columns, "elements", "firings")})
    kept = window_lives.as_kept(view, op, frame.assign(closed=np.asarray(lives["closed"])))
    return [
        k._replace(
            undone_elements=w.elements - k.elements,
            undone_firings=w.firings - k.firings,
            rolled_back_close=None if k.closed == w.closed else w.closed,
        )
        for w, k in zip(windows, _per_window(kept) or [], strict=True)
    ]


def kept_times(view: TraceView, op: str, kind: str) -> dict[tuple[int, int], float]:
    """Each (start, end) window's first ``kind`` record over all keys that no restore rolled
    back: its processing time (a rolled-back record is in the run at no t,
    ``restores.kept_at``)."""
    rows = view.select(kind, operator=op)
    if len(view.select("restore")):
        rows = restores.kept(rows, restores.rolled_back(view.trace))
    f_start, f_end, present = view.bounds(rows)
    procs = view.numbers("proc_time", rows[present])
    timed = ~np.isnan(procs)  # (a record without a processing time is none of these)
    f_start, f_end, procs = f_start[present][timed], f_end[present][timed], procs[timed]
    order = np.lexsort((-procs, f_end, f_start))  # per window, its first last
    at = zip(f_start[order].tolist(), f_end[order].tolist(), strict=True)
    return dict(zip(at, procs[order].tolist(), strict=True))


def _per_window(lives: pd.DataFrame | Columns) -> list[_Window] | None:
    """The windows of ``lives`` (``window_lives``' (key, window) rows) by (start, end), as
    ``scale.cells``: keys counted, elements and firings summed, first opened, last closed
    (None while a pane is open), ``merged_into`` as ``window_lives.merged_text``."""
    if lives.empty:
        return None
    window = [np.asarray(lives[c], dtype=np.int64) for c in ("window_start", "window_end")]
    ints = {c: np.asarray(lives[c], dtype=np.int64) for c in ("elements", "firings", "opened")}
    closed = np.asarray(lives["closed"])
    numeric = closed.dtype.kind in "iuf"  # (else exact ints or None: per window below)
    closes = {"closed": ("max", closed), "open": ("sum", np.isnan(closed))} if numeric else {}
    (starts, ends), cell = scale.cells(
        window,
        present=("sum", pd.notna(np.asarray(lives["key"], dtype=object))),
        elements=("sum", ints["elements"]),
        firings=("sum", ints["firings"]),
        opened=("min", ints["opened"]),
        **closes,
    )
    merged_into = np.asarray(lives["merged_into"], dtype=object)
    texts = [""] * len(starts)  # (no session merge: no text)
    if numeric:  # the last close of a window's rows, None while one of them is still open
        last = zip(cell["open"].tolist(), cell["closed"].tolist(), strict=True)
        closed_at = [None if o else int(v) for o, v in last]
    if not numeric or not pd.isna(merged_into).all():
        order, first = groups_of(*window)
        rows = list(pairwise(np.r_[first, len(order)].tolist()))
        if not numeric:
            values = closed[order].tolist()
            closed_at = [
                None if any(map(_missing, values[a:b])) else int(max(values[a:b])) for a, b in rows
            ]
        if not pd.isna(merged_into).all():
            merged = merged_into[order].tolist()
            texts = [window_lives.merged_text(merged[a:b]) for a, b in rows]
    return [
        _Window(*values)
        for values in zip(
            starts.tolist(),
            ends.tolist(),
            cell["present"].tolist(),
            cell["elements"].tolist(),
            cell["firings"].tolist(),
            cell["opened"].tolist(),
            closed_at,
            texts,
            strict=True,
        )
    ]
