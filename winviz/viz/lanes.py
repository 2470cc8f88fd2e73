"""``window_lanes``: one lane per key, its windows as bars over event time.

A bar is one (key, window) pair, filled by whether it fired or was merged away; windows of one
key stack in sub-lanes, none within the reach of another's bar, marks and horizon line. On
each bar: its firings at the event time of the timer that fired them (else its end), one mark
per cause with the count; its cleanup at its cleanup time (Flink's
``WindowOperator.cleanupTime``); with allowed lateness > 0, a line from its end to that horizon
(``window_lives.every_horizon``); purges at its end, evictions and session merges at its start.
At most ``max_keys`` lanes and ``max_bars`` bars. Past ``width // MIN_BAR_PX`` windows in
one lane, bars would blur into a texture: the lanes aggregate (``_aggregated``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import restores, vocabulary
from winviz.trace.vocabulary import counted
from winviz.viz import labels, palette, piles, scale, spec, value_texts, window_lives
from winviz.viz.firings import cleanup_columns, firing_causes, firing_marks, window_records
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.scrubber import UNDONE, counted_words, faint_if_undone
from winviz.viz.trace_view import Columns, TraceInputError, TraceView, memoized, open_trace
from winviz.viz.validation import check_size
from winviz.viz.value_texts import key_texts

Rows = list[dict[str, Any]]  # a layer's rows
STATUS = ("fired", "not fired", "merged away")
STATUS_FILL = (palette.WINDOW_FIRED_COLOR, palette.WINDOW_COLOR, palette.MERGED_AWAY_COLOR)
STATUS_TITLE = "window status"
"""The bars' fill legend title: not "window", the tooltip's field of a bar's bounds (Vega
writes a mark's screen-reader text from its channels' titles and its tooltip's fields)."""
# window event -> pixels from the time it claims; firings and cleanups (``CLAIMS_TIME``) move
# aside only when another mark of their bar falls on the same pixel
EVENT_DX = {
    "fired: element": 12,
    "fired: event-time timer": 0,
    "fired: processing-time timer": -12,
    "fired: end of input": 0,
    "fired: session merge": -12,
    "fired: cause not traced": 6,
    "cleanup": 8,
    "purged": 24,
    "evicted": 8,
    "merged": -8,
}
CLAIMS_TIME = ("fired: ", "cleanup")
HORIZON_ENTRY = "accepts late elements until max timestamp + lateness"
MERGED_HORIZON_ENTRY = "merged away: its cleanup timer, deleted at the merge"
HORIZON_DASHES = {HORIZON_ENTRY: palette.HORIZON_DASH, MERGED_HORIZON_ENTRY: [1, 2]}
WINDOW = ("key", "window_start", "window_end")
MARK_HALF_PX = 5.0  # what an event mark (size 70, 0.5 px stroke) reaches either side
ROOM_TRIES = 4  # how many times the axis is widened for marks beside their times
HORIZON_TITLE = "allowed lateness"  # the legend title of a bar's or a cell's horizon line
MIN_BAR_PX = 4
AGGREGATE_BIN_PX = 8  # aggregated lanes: one cell per key and event-time bin of ~8 pixels
CELL_HORIZON = "horizons of a cell's windows: earliest to latest"
SUB_LANE = {"field": "slot", "type": "nominal", "sort": "ascending"}
"""The sub-lanes (``slot``) of a key's lane, the same on every layer (else Vega-Lite warns
of conflicting sorts)."""


@palette.public_chart("window_lanes")
def window_lanes(
    trace: Any,
    *,
    operator: str | None = None,
    max_keys: int = 30,
    max_bars: int = scale.ROW_LIMIT,
    width: int = palette.WIDTH,
) -> spec.ChartDict:
    """Lanes of windows per key (see the module docstring). Bad input gives a message card."""
    if max_keys < 1 or not 1 <= max_bars <= scale.ROW_LIMIT:
        raise ValueError(f"max_keys must be >= 1 and max_bars in 1..{scale.ROW_LIMIT}")
    check_size(width)
    return _lanes(open_trace(trace), operator, max_keys, max_bars, width)


LANES_PARTS: dict[str, tuple[str, ...] | None] = {
    "operator": None,  # (whole: cheaper than the part of the many kinds selected by operator)
    "watermark": ("cleanup", "fired"),
    "ts": ("cleanup", "timer_fired"),
}
"""The fields the lanes read for several kinds, each read once (``TraceView.read_parts``)."""


def _lanes(
    view: TraceView, operator: str | None, max_keys: int, max_bars: int, width: int
) -> spec.ChartDict:
    view.read_parts(LANES_PARTS)
    op = pick_operator(view, operator)
    bars = window_lives.as_kept(view, op, window_lives.window_lives(view, op))
    bars["status"] = [
        "merged away" if isinstance(m, str) else ("fired" if f else "not fired")
        for m, f in zip(bars["merged_into"].tolist(), bars["firings"].tolist(), strict=True)
    ]
    if bars.empty:
        raise TraceInputError(
            f"Operator {op!r} has no time windows. Window lanes draw windows with a start and "
            "an end; the global window has neither (try timeline())."
        )
    keys, windows = counted(bars["key"].nunique(), "key"), counted(len(bars), "window")
    notes = [f"operator {op!r}: {keys}, {windows}"]
    # a window of an element near Long.MAX_VALUE (or MIN) can end before it starts (Flink's
    # ``TimeWindow`` end wraps around): as the timeline's bands, it gets no bar
    wrapped = (bars["window_start"] >= bars["window_end"]).to_numpy()
    if wrapped.any():
        notes.append(
            f"{int(wrapped.sum())} window(s) whose end overflowed the long range (start >= end) "
            "have no bar"
        )
        bars = bars[~wrapped].reset_index(drop=True)
        if bars.empty:
            raise TraceInputError(
                "Every window's end overflowed the long range (start >= end). Window lanes "
                "draw windows from start to end; try timeline()."
            )
    keys = list(dict.fromkeys(bars["key"]))
    if len(keys) > max_keys:  # the keys with most elements
        notes.append(f"lanes: the {max_keys} keys with most elements of {len(keys):,}")
        keys = window_lives.busiest(bars["key"], max_keys, bars["elements"].astype("int64"))
    bars = bars[bars["key"].isin(keys)]
    if int(bars.groupby("key", sort=False).size().max()) > max(1, width // MIN_BAR_PX):
        return _aggregated(view, op, bars, _key_lanes(keys), width, notes)
    if len(bars) > max_bars:
        bars = bars.sort_values(["window_start", "window_end"], kind="stable")
        cutoff = int(bars["window_start"].iloc[max_bars])
        earliest = bars[bars["window_start"] < cutoff].iloc[:max_bars]
        bars = earliest if len(earliest) else bars.iloc[:max_bars]  # (else all start at cutoff)
        notes.append(
            f"bars: the {len(bars):,} earliest windows (starting before {cutoff:,})"
            if len(earliest)
            else f"bars: {len(bars):,} of the earliest windows (all starting at {cutoff:,})"
        )
    bars = bars.reset_index(drop=True)
    # the axis holds every bar, the cleanup times of the drawn keys' windows and the horizons
    # of bars without a cleanup record (merged away, or still open)
    cleaned, cleaned_keys = _cleaned(view, op)
    drawn = set(keys)
    stamps = cleaned["cleanup_time"].tolist()
    times = [t for k, t in zip(cleaned_keys, stamps, strict=True) if k in drawn]
    reach = _reach(view, op, bars)
    axis = _axis_of(view, op)
    if axis == "processing time":
        notes.append("processing-time windows: the axis is processing time")
    x = palette.time_axis(axis, [*bars["window_start"], *bars["window_end"], *_on(times + reach)])
    # the marks, then the sub-lanes; the axis widened until every mark fits on the plot
    anchored: Rows = []
    edges = (x.lo, x.hi)  # (of the axis the marks were anchored on: clipped to its edges)
    for attempt in range(ROOM_TRIES):
        last = attempt == ROOM_TRIES - 1  # (else: marks placed past the edges, for room)
        if not attempt or any(r["x"] in edges for r in anchored):
            anchored, edges = _anchored_events(view, op, bars, x), (x.lo, x.hi)
        stacked, events, times = _stacked_and_placed(bars, anchored, reach, x, width, last)
        wider = None if last else _with_room(x, times, events, width)
        if wider is None:
            break
        x = wider
    slots = int(stacked["slot"].max()) + 1
    height = max(60, min(900, len(keys) * max(24, 14 * slots)))
    chains = window_lives.merge_chains(view, op)
    layers = [
        _bar_layer(stacked, x, chains),
        *_horizon_layer(view, op, stacked, x, chains),
        *_event_layers(events, x),
    ]
    if undone := sum(UNDONE in e for e in events):
        notes.append(
            f"{counted(undone, 'mark')} of what a restore rolled back: drawn faint grey; the "
            "bars and the other marks are what the run kept"
        )
    chart = {
        "layer": layers,
        "width": width,
        "height": height,
        "resolve": {"scale": {"fill": "independent", "strokeDash": "independent"}},
    }
    return palette.finish(chart, name="window_lanes", notes=notes, heading="Window lanes")


def _kept_texts(bars: pd.DataFrame) -> tuple[list[Any], list[Any], list[str]]:
    """Each bar's elements, firings and close as its tooltip says them: after a restore
    (``window_lives.as_kept``), what the run keeps, then what a restore rolled back
    (``vocabulary.kept_count``; "1,600 (1,700 rolled back by a restore)")."""
    closes = ["open at the end" if pd.isna(c) else f"{int(c):,}" for c in bars["closed"].tolist()]
    elements, firings = bars["elements"].tolist(), bars["firings"].tolist()
    if "undone_elements" not in bars.columns:
        return [int(e) for e in elements], [int(f) for f in firings], closes
    for i, later in enumerate(bars["rolled_back_close"].tolist()):
        if not pd.isna(later):
            closes[i] += f" ({int(later):,} {vocabulary.ROLLED_BACK})"
    kept = (bars[c].tolist() for c in ("undone_elements", "undone_firings"))
    return (
        [vocabulary.kept_count(int(n), int(u)) for n, u in zip(elements, next(kept), strict=True)],
        [vocabulary.kept_count(int(n), int(u)) for n, u in zip(firings, next(kept), strict=True)],
        closes,
    )


def _reach(view: TraceView, op: str, bars: pd.DataFrame) -> list[int | None]:
    """Each bar's allowed-lateness horizon (``window_lives.every_horizon``), else None."""
    horizons, _ = window_lives.every_horizon(view, op)
    bounds = zip(bars["window_start"].tolist(), bars["window_end"].tolist(), strict=True)
    return [horizons.get(w) for w in bounds] if horizons else [None] * len(bars)


def _on(times: list[Any]) -> list[Any]:
    """The times an axis holds: not None, not off the chart."""
    return [t for t in times if t is not None and not palette.is_off_chart(t)]


def _axis_of(view: TraceView, op: str) -> str:
    """The lanes' axis: a processing-time window's bounds, firings, cleanup are processing times."""
    return "processing time" if window_lives.processing_time_windows(view, op) else "event time"


def _key_lanes(keys: list[Any], *, axis: bool = True, rows: bool = False) -> dict[str, Any]:
    """The y channel of the lanes, one per key in the order of ``keys`` (a scale domain: a
    sort array becomes an expression a key can break), titled with ``axis``; with ``rows``
    (sub-lanes) a key's tick, grid line and label at its first row."""
    lanes = {"field": "key", "type": "nominal", "sort": None, "scale": {"domain": keys}}
    guide: dict[str, Any] = {"labelLimit": 160}
    if rows:  # (from the lane's centre, where Vega writes a band's label, to its row 0)
        offset = "scale('yOffset', 0) + bandwidth('yOffset') / 2 - bandwidth('y') / 2"
        guide |= {"bandPosition": 0, "labelOffset": {"expr": offset}}
    return lanes | {"title": "key", "axis": guide} if axis else lanes


def _stacked_and_placed(
    bars: pd.DataFrame, anchored: Rows, reach: list[Any], x: TimeAxis, width: int, edged: bool
) -> tuple[pd.DataFrame, Rows, list[float]]:
    """The bars by key and start with their sub-lane (``slot``), their marks placed
    (``_placed``; ``edged``: kept on the plot) and each drawn mark's time. A bar's extent along
    its row: the bar, its horizon (``reach``, or None) and its marks as far as they can be
    drawn (``EVENT_DX`` either way); restacked (at most 4 times) while marks set beside another
    land past it."""
    px_per_ms = width / max(1, x.hi - x.lo)

    def px(t: Any) -> float:
        return (float(x.clip(t)[0]) - x.lo) * px_per_ms

    lo = [px(s) for s in bars["window_start"].tolist()]
    hi = [px(e) for e in bars["window_end"].tolist()]
    for i, t in enumerate(reach):
        if t is not None:
            hi[i] = max(hi[i], px(t))
    for r in anchored:
        i, at, dx = r["slot"], (r["x"] - x.lo) * px_per_ms, EVENT_DX[r["what"]]
        lo[i] = min(lo[i], at + min(dx, 0) - MARK_HALF_PX)
        hi[i] = max(hi[i], at + max(dx, 0) + MARK_HALF_PX)
    extents = list(zip(lo, hi, strict=True))
    ordered = bars.sort_values(["key", "window_start", "window_end"], kind="stable")
    order, keys = ordered.index.tolist(), ordered["key"].tolist()
    slots = _stack(keys, [extents[i] for i in order])
    for attempt in range(4):
        slot_of = dict(zip(order, slots, strict=True))
        rows = [r | {"slot": slot_of[r["slot"]]} for r in anchored]
        events = _placed(rows, x, width, edged)
        at = {id(r): i for i, r in enumerate(rows)}  # (some may be counted on another)
        drawn = [at[id(r)] for r in events]
        grown = list(extents)
        for j, r in zip(drawn, events, strict=True):
            i = anchored[j]["slot"]
            c = (r["x"] - x.lo) * px_per_ms + r.get("dx", 0)
            lo, hi = grown[i]
            grown[i] = (min(lo, c - MARK_HALF_PX), max(hi, c + MARK_HALF_PX))
        if grown == extents or attempt == 3:  # (the marks as placed on these sub-lanes)
            break
        extents, before = grown, slots
        slots = _stack(keys, [extents[i] for i in order])
        if slots == before:  # (the marks of the same sub-lanes sit where they were)
            break
    return ordered.assign(slot=slots), events, [anchored[j]["x"] for j in drawn]


def _with_room(x: TimeAxis, times: list[float], events: Rows, width: int) -> TimeAxis | None:
    """``x`` widened at the end(s) where an event mark (``dx`` px beside its ``x``) lies past
    the plot's edge, so that it reaches the edge at the new scale; None when all fit."""
    k = width / max(1, x.hi - x.lo)
    hi, lo = x.hi, x.lo
    for t, r in zip(times, events, strict=True):
        at = (t - x.lo) * k  # its time's pixel, and its reach right and left of it
        c = (r["x"] - x.lo) * k + r.get("dx", 0)
        right, left = c + MARK_HALF_PX - at, at - c + MARK_HALF_PX
        if c + MARK_HALF_PX > width + 1e-6 and right < width:  # (t - lo)·W / S' + right = W
            hi = max(hi, math.ceil(x.lo + (t - x.lo) * width / (width - right)))
        if c - MARK_HALF_PX < -1e-6 and left < width:  # (hi - t)·W / S' + left = W
            lo = min(lo, math.floor(x.hi - (x.hi - t) * width / (width - left)))
    if (lo, hi) == (x.lo, x.hi):
        return None
    return dataclasses.replace(x, lo=lo, hi=hi)


def _stack(keys: list[Any], extents: list[tuple[float, float]]) -> list[int]:
    """Sub-lane per bar (by key and start): the first of its key whose last extent ends
    before this one's begins."""
    slots = []
    ends: dict[Any, list[float]] = {}
    for key, (lo, hi) in zip(keys, extents, strict=True):
        free = ends.setdefault(key, [])
        for i, last in enumerate(free):
            if last <= lo:
                free[i] = hi
                slots.append(i)
                break
        else:
            free.append(hi)
            slots.append(len(free) - 1)
    return slots


def _window_label(labels: dict[tuple[Any, Any], str], fmt: Any, start: Any, end: Any) -> str:
    """``"[start, end)"`` as the axis formats it, made once per pair of int bounds."""
    if start.__class__ is not int or end.__class__ is not int:
        return f"[{fmt(start)}, {fmt(end)})"
    label = labels.get((start, end))
    if label is None:
        label = labels[start, end] = f"[{fmt(start)}, {fmt(end)})"
    return label


def _bar_layer(bars: pd.DataFrame, x: TimeAxis, chains: window_lives.Chains) -> spec.ChartDict:
    """The bars; a merged-away bar's tooltip names where it merged into and its merge chain."""
    rows = []
    clip, fmt, windows = x.clip, x.fmt, {}
    fields = ("window_start", "window_end", "key", "slot", "status", "opened", "merged_into")
    for start, end, key, slot, status, opened, into, elements, firings, shut in zip(
        *(bars[c].tolist() for c in fields), *_kept_texts(bars), strict=True
    ):
        merged = isinstance(into, str)
        rows.append(
            {
                "x": clip(start)[0],
                "x2": clip(end)[0],
                "key": key,
                "slot": int(slot),
                "status": status,
                "kind": "window",
                "window": _window_label(windows, fmt, start, end),
                "elements": elements,
                "firings": firings,
                "opened": f"{int(opened):,}",
                "closed": f"merged into {into}" if merged else shut,
                "merged_into": into if merged else "",
            }
        )
    columns = ["kind", "key", "window", "status", "elements", "firings", "opened", "closed"]
    columns.append("merged_into")
    if any(c.count > 1 for c in chains.values()):  # (a column only when some chain goes on)
        columns.append("merge chain")
        for row, key, s, e in zip(rows, *(bars[c].tolist() for c in WINDOW), strict=True):
            chain = chains.get((key, int(s), int(e))) if row["merged_into"] else None
            row["merge chain"] = "" if chain is None else window_lives.chain_text(chain)
    return spec.layer(
        rows,
        {"type": "bar", "stroke": palette.INK, "strokeWidth": 1, "cornerRadius": 2, "opacity": 0.9},
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            "y": _key_lanes(list(dict.fromkeys(bars["key"])), rows=True),
            "yOffset": SUB_LANE | {"scale": {"paddingInner": 0.15}},
            "fill": {
                "field": "status",
                "type": "nominal",
                "title": STATUS_TITLE,
                "scale": palette.drawn_scale(STATUS, STATUS_FILL, bars["status"].tolist()),
            },
            "strokeDash": {
                "condition": {"test": "datum.status == 'merged away'", "value": [4, 3]},
                "value": [1, 0],
            },
            "tooltip": [{"field": c, "type": "nominal"} for c in columns],
        },
    )


def _anchored_events(view: TraceView, op: str, bars: pd.DataFrame, x: TimeAxis) -> Rows:
    """One row per drawn window event at the time it claims (``slot``: its bar's row): firings
    per (key, window, cause, timer time), cleanups, purges, evictions and merges."""
    slot = {k: i for i, k in enumerate(zip(*(bars[c].tolist() for c in WINDOW), strict=True))}
    rows: Rows = []
    # the firings of drawn windows: where each sits, then only the drawn ones' texts
    marks = firing_marks(view, op)
    key_text = key_texts(view.column("key", marks["seq"]))  # (of every time window's firing)
    starts, ends = marks["window_start"].tolist(), marks["window_end"].tolist()
    keep = np.fromiter(
        map(slot.__contains__, zip(key_text, starts, ends, strict=True)),
        dtype=bool,
        count=len(starts),
    )
    f = marks.take(keep)
    seqs, procs = f["seq"].tolist(), f["proc_time"].tolist()
    waters = view.column("watermark", f["seq"]).tolist()
    results = view.detail("fired", "result", f["seq"]).tolist()  # (short() only those shown)
    causes = firing_causes(view, f["seq"])[0]
    by: dict[tuple, list[int]] = {}
    drawn_keys = [k for k, p in zip(key_text, keep.tolist(), strict=True) if p]
    # after a restore, a firing it rolled back is a mark of its own, drawn faint, and each
    # firing is named as the firings table names it (``restores.firing_orders``)
    gone = restores.undone(view.trace, np.asarray(f["seq"])).tolist()
    spans = restores.rolled_back(view.trace) if restores.restored(view.trace) else []
    orders = None
    if any(gone):
        bounds = (f[c].tolist() for c in ("window_start", "window_end"))
        windows = list(zip(drawn_keys, *bounds, strict=True))
        orders = restores.firing_orders(view.trace, seqs, windows)
    columns = (f[c].tolist() for c in ("window_start", "window_end", "fired_by", "at"))
    for i, k in enumerate(zip(drawn_keys, *columns, gone, strict=True)):
        by.setdefault(k, []).append(i)
    short, mark = value_texts.short, _marker(slot, x, spans)
    for (key, s, e, cause, at, _), idx in by.items():
        what = palette.FIRED_EVENT.get(cause, "fired: cause not traced")
        texts = [short(results[i], 40) for i in idx[:50]]
        which = [seqs[i] for i in idx], [procs[i] for i in idx], waters[idx[-1]]
        row = mark(key, s, e, what, at, which, texts)
        if row is not None:
            row["cause"] = ", ".join(dict.fromkeys(causes[i] for i in idx))
            if orders is not None:
                row["firing"] = counted_words(orders[i] for i in idx)
        rows.append(row)
    cleaned, cleaned_keys = _cleaned(view, op)
    fmt, drawn = x.fmt, slot.__contains__
    fields = ("window_start", "window_end", "cleanup_time", "seq", "proc_time", "watermark")
    rows += [
        mark(key, s, e, "cleanup", t, ([seq], [proc], water), [f"cleanup time {fmt(t)}"])
        for key, s, e, t, seq, proc, water in zip(
            cleaned_keys, *(cleaned[c].tolist() for c in fields), strict=True
        )
        if drawn((key, int(s), int(e)))  # only drawn marks' tooltips are formatted
    ]
    other = window_records(view, op, "purged", "evicted")  # (purges at the end, evictions at
    other = other[other["window_start"].notna()]  # the start, per (key, window) and kind)
    other = other.assign(key_text=key_texts(other["key"]))
    other = other.assign(gone=restores.undone(view.trace, other["seq"].to_numpy(dtype=np.int64)))
    for kind in ("purged", "evicted"):
        part = other[other["kind"] == kind]
        if part.empty:
            continue
        seqs = part["seq"].to_numpy()
        if kind == "purged":
            info = [f"reason: {r}" for r in view.detail("purged", "reason", seqs)]
        else:
            whens = view.detail("evicted", "when", seqs)
            values = view.detail("evicted", "values", seqs)
            info = [f"{w}: {short(v, 50)}" for w, v in zip(whens, values, strict=True)]
        seqs, procs, waters = (part[c].tolist() for c in ("seq", "proc_time", "watermark"))
        by_window = window_lives.groups(part, ["key_text", "window_start", "window_end", "gone"])
        for (key, start, end, _), idx in by_window.items():
            which = [seqs[i] for i in idx], [procs[i] for i in idx], waters[idx[-1]]
            anchor = end if kind == "purged" else start
            texts = [info[i] for i in idx[:50]]
            rows.append(mark(key, start, end, kind, anchor, which, texts, "; "))
    for m in window_lives.merged(view, op).itertuples():
        merged_text = ", ".join(f"[{s}, {e})" for s, e in m.merged_windows)
        rows.append(
            mark(
                m.key_text, m.window_start, m.window_end, "merged", m.window_start,
                ([m.seq], [m.proc_time], m.watermark), [f"merged {merged_text}"],
            )
        )  # fmt: skip
    rows = [r for r in rows if r is not None]
    for column in ("cause", "firing"):  # a column of every row (the firings' come first)
        if any(column in r for r in rows):
            for r in rows:
                r.setdefault(column, "")
    return rows


def _placed(rows: Rows, x: TimeAxis, width: int, edged: bool = True) -> Rows:
    """The event marks where they are drawn: moved ``EVENT_DX`` pixels as event time (Vega
    offsets only text by pixels) unless claiming a time and ``_alone``, then side by side.
    ``edged``: kept on the plot, else placed past its edges as they need."""
    if rows:
        ms_per_px = (x.hi - x.lo) / width
        whats = [r["what"] for r in rows]
        at = np.array([r["x"] for r in rows], dtype=np.float64)
        shift = np.array([EVENT_DX[w] for w in whats], dtype=np.float64) * ms_per_px
        alone = _alone(rows, at / ms_per_px)
        for i, (w, a) in enumerate(zip(whats, alone, strict=True)):
            if a and w.startswith(CLAIMS_TIME):
                shift[i] = 0.0
        lo, hi = (x.lo, x.hi) if edged else (-np.inf, np.inf)
        for r, v in zip(rows, np.clip(at + shift, lo, hi).round(3).tolist(), strict=True):
            r["x"] = v
        rows = _side_by_side(rows, x, width, width if edged else math.inf)
    return rows


def _side_by_side(rows: Rows, x: TimeAxis, width: int, edge: float) -> Rows:
    """Marks of one lane row (key and slot) at one point side by side (``piles``): each row's
    ``dx``; the rows drawn. ``edge``: the farthest right a mark may go. Each lane row is
    placed on its own, rows alike once."""
    span = max(1, x.hi - x.lo)
    px = [(r["x"] - x.lo) / span * width for r in rows]
    of_row = window_lives.groups(rows, ["key", "slot"])
    dx: list[float] = [0] * len(rows)
    counted_on: list[int | None] = [None] * len(rows)
    alike: dict[tuple[float, ...], piles.Placement] = {}
    for idx in of_row.values():
        places = tuple(px[i] for i in idx)
        row = alike.get(places)
        if row is None:
            row = alike[places] = piles.side_by_side(
                [(p, 0.0) for p in places], labels.STACK_PX, edge, most=labels.STACK_STEPS
            )
        for i, d, on in zip(idx, row.dx, row.counted_on, strict=True):
            dx[i] = d
            if on is not None:  # (the index of the mark of this row it is counted on)
                counted_on[i] = idx[on]
    placed = piles.Placement(dx, counted_on)
    if placed.moved:  # (a column only when a mark moved)
        for r, d in zip(rows, placed.dx, strict=True):
            r["dx"] = d
    return piles.count_on(rows, placed) if placed.counted else rows


def _alone(rows: Rows, px: np.ndarray) -> list[bool]:
    """Whether each event mark (at ``px``) has no other of its lane row within a pixel."""
    alone = [True] * len(rows)
    for idx in window_lives.groups(rows, ["key", "slot"]).values():
        if len(idx) < 2:
            continue
        order = sorted(idx, key=lambda i: px[i])
        for a, b in itertools.pairwise(order):
            if px[b] - px[a] < 1.0:
                alone[a] = alone[b] = False
    return alone


def _cleaned(view: TraceView, op: str) -> tuple[Columns, list[str]]:
    """The cleanups of time windows (``firings.cleanup_columns``) and their keys' texts, made
    once per view."""
    cleaned = cleanup_columns(view, op)
    return cleaned, memoized(view, "lanes_cleaned", op, lambda: key_texts(cleaned["key"]))


def _horizon_layer(
    view: TraceView, op: str, bars: pd.DataFrame, x: TimeAxis, chains: window_lives.Chains
) -> list[spec.ChartDict]:
    """Per drawn (key, window) with a horizon, a line from its end to it: per ``cleanup``
    record, then per bar without one (still open, or merged away: the cleanup timer Flink's
    ``WindowOperator`` deleted at the merge, its own legend entry)."""
    horizons, _ = window_lives.every_horizon(view, op)
    if not horizons:
        return []
    cleaned, cleaned_keys = _cleaned(view, op)
    columns = (*WINDOW, "slot", "closed", "merged_into")
    drawn = list(zip(*(bars[c].tolist() for c in columns), strict=True))
    slot = {(k, s, e): int(i) for k, s, e, i, _, _ in drawn}
    # (key, start, end, slot, horizon, None: read off its record, else (into, at, chain))
    lines: list[tuple[Any, int, int, int, int, tuple | None]] = []
    starts, ends = cleaned["window_start"].tolist(), cleaned["window_end"].tolist()
    for key, s, e in zip(cleaned_keys, starts, ends, strict=True):
        w, t = (key, int(s), int(e)), horizons.get((int(s), int(e)))
        if w in slot and t is not None:
            lines.append((*w, slot[w], t, None))
    recorded, read = len(lines), {line[:3] for line in lines}
    for key, s, e, i, closed, into in drawn:
        w, t = (key, int(s), int(e)), horizons.get((int(s), int(e)))
        if t is not None and w not in read:  # merged away, or still open
            into = into if isinstance(into, str) else None
            at = "" if into is None else f"{int(closed):,} ms"
            lines.append((*w, int(i), t, (into, at, chains.get(w) if into else None)))
    if not lines:
        return []
    rows = []
    for key, s, e, i, t, derived in lines:
        into, at, chain = derived or (None, "", None)  # (into None: still open)
        rows.append(
            {
                "x": x.clip(e)[0],
                "x2": x.clip(t)[0],
                "key": key,
                "slot": i,
                "line": MERGED_HORIZON_ENTRY if into else HORIZON_ENTRY,
                **window_lives.horizon_texts(x.fmt, s, e, t),
                "from": window_lives.horizon_source(derived is not None, into, at, chain),
            }
        )
    tips = ["kind", "key", "window", "max timestamp", "allowed lateness", "horizon", "from"]
    if len(rows) == recorded:  # (every line read off its record: nothing to tell apart)
        tips = tips[:-1]
        for row in rows:
            del row["from"]
    dashes = {n: d for n, d in HORIZON_DASHES.items() if any(r["line"] == n for r in rows)}
    lanes = {
        "y": _key_lanes(list(dict.fromkeys(bars["key"])), axis=False),
        "yOffset": dict(SUB_LANE),
    }
    tooltip = [{"field": c, "type": "nominal"} for c in tips]
    return [_horizon_rules(rows, x, lanes, dashes, tooltip)]


def _marker(slot: dict, x: TimeAxis, spans: list[tuple[int, int]]) -> Any:
    """``mark(key, start, end, what, anchor, (seqs, procs, watermark), texts, sep)``: the row
    of one mark of some records (``watermark``: the last one's; ``texts``: the first 50's),
    past 50 only the last one's seq and time; None for a window with no bar. A mark of records
    a restore rolled back (``spans``: ``restores.rolled_back``; a mark's records are all
    rolled back or none) has ``UNDONE`` and, unless a firing (its ``firing`` words say it),
    a detail that says so."""
    where, clip, fmt, windows = slot.get, x.clip, x.fmt, {}

    def mark(
        key: str,
        start: Any,
        end: Any,
        what: str,
        anchor: Any,
        which: tuple[list[Any], list[Any], Any],
        texts: list[str],
        sep: str = ", ",
    ) -> dict[str, Any] | None:
        s = where((key, int(start), int(end)))
        if s is None:
            return None
        seqs, procs, watermark = which
        n = len(seqs)
        gone = bool(spans) and restores.is_rolled_back(int(seqs[0]), spans)
        if gone and not what.startswith("fired"):
            texts = [*texts[:-1], f"{texts[-1]} ({vocabulary.ROLLED_BACK})"]
        if n > 50:
            seqs, procs = seqs[-1:], procs[-1:]
        return ({UNDONE: True} if gone else {}) | {
            "x": clip(anchor)[0],
            "key": key,
            "slot": s,
            "what": what,
            "n": n,
            "label": f"×{n}" if n > 1 else "",
            "seq": ", ".join([str(int(q)) for q in seqs]),
            "window": _window_label(windows, fmt, start, end),
            "detail": sep.join(texts) + (" …" if n > 50 else ""),
            "proc_time": ", ".join([f"{int(p):,}" for p in procs]),
            "watermark": fmt(watermark),
        }

    return mark


def _event_layers(events: Rows, x: TimeAxis) -> list[spec.ChartDict]:
    """The window events' marks, a layer per kind ("what happened"), with their counts "×n"."""
    if not events:
        return []
    seen = {e["what"] for e in events}
    what = {"field": "what", "type": "nominal", "title": "what happened"}
    color, shape = (
        {**what, "scale": palette.drawn_scale(palette.WINDOW_EVENTS, values, seen)}
        for values in (palette.WINDOW_EVENT_COLORS, palette.WINDOW_EVENT_SHAPES)
    )
    columns = ["what", "key", "window", "detail", "n", "seq", "proc_time", "watermark"]
    for column, at in (("cause", 4), ("firing", 3)):  # (a firing's words before its detail)
        if column in events[0]:
            columns.insert(at, column)
    tips = [{"field": c, "type": "nominal"} for c in columns]
    # marks set side by side (``_side_by_side``) are drawn ``dx`` pixels right of their time
    moved = {"xOffset": {"expr": "datum.dx"}} if any(e.get("dx") for e in events) else {}
    base = {
        "x": x.channel("x"),
        "y": {"field": "key", "type": "nominal"},
        "yOffset": dict(SUB_LANE),
    }
    mark = {"type": "point", "filled": True, "size": 70, "stroke": palette.INK, "strokeWidth": 0.5}
    layers = []
    for what_ in color["scale"]["domain"]:
        part = [e for e in events if e["what"] == what_]
        encoding = {**base, "color": dict(color), "shape": shape, "tooltip": tips}
        layers.append(spec.layer(part, {**mark, **moved}, encoding))
        faint_if_undone(layers[-1], sum(UNDONE in e for e in part))  # (as the scrubber)
        if any(e["n"] > 1 for e in part):
            place = {"align": "left", "dx": 6, "dy": -6, **moved}
            layers.append(spec.text_layer(part, base, text="label", size=9, **place))
    return layers


def _horizon_rules(
    rows: Rows,
    x: TimeAxis,
    lanes: dict[str, Any],
    dashes: dict[str, list[int]],
    tooltip: list[dict[str, str]],
    **mark: Any,
) -> spec.ChartDict:
    """The lanes' allowed-lateness horizon lines from ``x`` to ``x2`` on the lanes (``lanes``:
    their y channels), their legend's entries dashed as ``dashes`` says."""
    return spec.layer(
        rows,
        {"type": "rule", "color": palette.HORIZON_COLOR, "strokeWidth": 2, "opacity": 0.8, **mark},
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            **lanes,
            "strokeDash": {
                "field": "line",
                "type": "nominal",
                "title": HORIZON_TITLE,
                "scale": {"domain": list(dashes), "range": list(dashes.values())},
            },
            "tooltip": tooltip,
        },
    )


def _aggregated(
    view: TraceView,
    op: str,
    bars: pd.DataFrame,
    lanes: dict[str, Any],
    width: int,
    notes: list[str],
) -> spec.ChartDict:
    """Lanes past a readable number of windows: per key, one cell per event-time bin (of
    ``AGGREGATE_BIN_PX`` pixels) counting the windows that start in it — how many fired,
    never fired or were merged away, their elements (each once, in the window whose pane holds
    it) and firings — shaded by the share that fired; with allowed lateness > 0, the span of
    its windows' horizons (``_horizon_spans``). ``lanes``: the lanes' y channel (titled)."""
    starts = bars["window_start"].to_numpy(dtype=np.int64)
    ends = bars["window_end"].to_numpy(dtype=np.int64)
    lo, hi = int(starts.min()), int(ends.max())
    _, derived = window_lives.every_horizon(view, op)
    stamps = _reach(view, op, bars)
    x = palette.time_axis(_axis_of(view, op), [lo, hi, *_on(stamps)])
    size = max(1, -(-(hi - lo) // max(1, width // AGGREGATE_BIN_PX)))
    status = bars["status"].to_numpy(dtype=object)
    by = [bars["key"].to_numpy(dtype=object), (starts - lo) // size]
    counted = {
        **{s: ("sum", status == s) for s in STATUS},
        # a merged-away window's elements are counted in the window they went into
        "elements": ("sum", np.where(status == "merged away", 0, bars["elements"].astype("int64"))),
        "firings": ("sum", bars["firings"].astype("int64").to_numpy()),
    }

    def starting_in(b: int) -> str:
        b0 = lo + int(b) * size
        return f"[{x.fmt(b0)}, {x.fmt(b0 + size)})"

    (keys, bins), sums = scale.cells(by, appearance=True, **counted)
    sizes = sums.pop("count").tolist()
    rows = [
        {
            "x": x.clip(lo + int(b) * size)[0],
            "x2": x.clip(lo + int(b) * size + size)[0],
            "key": key,
            "kind": "windows (aggregated)",
            "starting in": starting_in(b),
            "windows": n,
            **dict(zip(counted, map(int, c), strict=True)),
            "share fired": round(int(c[0]) / n, 3),
        }
        for key, b, n, *c in zip(keys, bins.tolist(), sizes, *sums.values(), strict=True)
    ]
    most = int(scale.cells(by[:1])[1]["count"].max())
    notes.append(
        f"aggregated: a lane holds up to {most:,} windows, more than {width // MIN_BAR_PX:,} "
        f"({MIN_BAR_PX} px each) — one cell per key and {size:,} ms of window starts, shaded "
        "by the share of its windows that fired; hover for the counts (timeline / explore "
        "draw each window)"
    )
    cell = {
        "type": "bar",
        "stroke": palette.INK,
        "strokeWidth": 0.5,
        "fill": palette.WINDOW_FIRED_COLOR,
    }
    layers = [
        spec.layer(
            rows,
            cell,
            {
                "x": x.channel("x"),
                "x2": {"field": "x2"},
                "y": lanes,
                "fillOpacity": {
                    "field": "share fired",
                    "type": "quantitative",
                    "title": "share of windows fired",
                    "scale": {"domain": [0, 1], "range": [0.08, 0.95]},
                },
                "tooltip": spec.tooltips(rows, ["x", "x2"]),
            },
        )
    ]
    has = np.array([t is not None for t in stamps], dtype=bool)
    if has.any():  # per cell, the span of its windows' horizons
        bounds = zip(starts[has].tolist(), ends[has].tolist(), strict=True)
        horizons = np.array([t for t in stamps if t is not None], dtype=np.int64)
        found = scale.cells(
            [c[has] for c in by],
            appearance=True,
            earliest=("min", horizons),
            latest=("max", horizons),
            derived=("sum", np.array([w in derived for w in bounds], dtype=bool)),
        )
        layers.append(_horizon_spans(found, x, lanes, starting_in))
        lateness = window_lives.allowed_lateness(view, op)
        notes.append(
            "allowed lateness"
            + ("" if lateness is None else f" {lateness:,} ms")
            + ": per cell a line from the earliest to the latest horizon (max timestamp + "
            "lateness) of its windows"
        )
    height = max(60, min(900, len(lanes["scale"]["domain"]) * 24))
    chart = {"layer": layers, "width": width, "height": height}
    return palette.finish(chart, name="window_lanes", notes=notes, heading="Window lanes")


def _horizon_spans(
    found: tuple[list[np.ndarray], dict[str, np.ndarray]],
    x: TimeAxis,
    lanes: dict[str, Any],
    starting_in: Any,
) -> spec.ChartDict:
    """Per cell (``found``: its windows with a horizon, by key and bin, ``scale.cells``), a
    line from the earliest to the latest horizon, and how many are ``derived`` (no
    ``cleanup`` record)."""
    (keys, bins), c = found
    lines = [
        {
            "x": x.clip(earliest)[0],
            "x2": x.clip(latest)[0],
            "key": key,
            "line": CELL_HORIZON,
            "kind": "allowed-lateness horizons (aggregated)",
            "windows starting in": starting_in(b),
            "windows with a horizon": n,
            "earliest horizon": x.fmt(earliest),
            "latest horizon": x.fmt(latest),
            "derived (no cleanup record)": d,
        }
        for key, b, n, earliest, latest, d in zip(
            keys, bins.tolist(), *(c[f].tolist() for f in c), strict=True
        )
    ]
    foot = {k: v for k, v in lanes.items() if k not in ("title", "axis")}
    tips = spec.tooltips(lines, ["x", "x2", "line"])
    foot |= {"bandPosition": 0.85}  # (at the lane's foot; square caps: one horizon a dot)
    dash = {CELL_HORIZON: palette.HORIZON_DASH}
    return _horizon_rules(lines, x, {"y": foot}, dash, tips, strokeCap="square")
