"""The timers chart's de-duplicated registrations (``winviz.viz.timers``): a registration
that found its timer — key, namespace, domain, timestamp — already queued, so it did nothing
(Flink's ``InternalTimerServiceImpl.registerEventTimeTimer`` adds to a
``HeapPriorityQueueSet``, which keeps one element per timer; the trace's ``timer_registered``
with ``deduplicated=True``). Each is drawn as a ▼ at its processing time beside its
timestamp's rules (``timer_places.dedups_beside``), several near one another as one ▼ with
"×n", and where timers crowd too closely in a row above the plot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import axes, palette, piles, scale, spec
from winviz.viz.palette import TimeAxis
from winviz.viz.timer_places import (
    COUNT_FONT,
    EVENT_PX,
    Plot,
    Taken,
    count_text,
    dedup_boxes,
    dedups_beside,
    keys_text,
)
from winviz.viz.value_texts import key_texts

# a registration that found its timer queued: named by what it is (issue 26)
DEDUP_EVENT = "registration of a timer that already existed (de-duplicated)"


def dedup_bins(
    records: pd.DataFrame,
    dedup: np.ndarray,
    x: TimeAxis,
    y: TimeAxis,
    px: Plot,
    by_key: set[str] | None = None,
) -> list[dict[str, Any]]:
    """The de-duplicated registrations (``dedup``: their positions in ``records``) in bins:
    those of one (domain, timestamp) — and key, for the keys ``by_key`` only, if given —
    whose processing times fall in one ``EVENT_PX`` row of the plot (one ▼ would cover the
    others) — twice as tall rows while there are more bins than rows a layer may hold. Per
    bin, in order of its first registration: its group (domain, x), x, y (of its first), n,
    first / last processing time, keys, domain, the timestamp's text and the first's seq."""
    if by_key is not None and len(dedup):
        shown = [k in by_key for k in key_texts(records["key"].to_numpy()[dedup])]
        dedup = dedup[np.asarray(shown, dtype=bool)]
    if not len(dedup):
        return []
    stamps = records["ts"].to_numpy()[dedup].tolist()
    procs = records["proc_time"].to_numpy()[dedup].tolist()
    tx = [c for c, _ in x.clip_all(stamps)]
    ty = [c for c, _ in y.clip_all(procs)]
    domains, _ = pd.factorize(records["domain"].to_numpy()[dedup], use_na_sentinel=False)
    xs, _ = pd.factorize(np.asarray(tx, dtype=object), use_na_sentinel=False)
    rows_px = np.asarray([0.0 if v is None else px.py(v) for v in ty])
    keys = key_texts(records["key"].to_numpy()[dedup])
    tall = float(EVENT_PX)
    while True:
        frame = pd.DataFrame({"d": domains, "x": xs, "b": np.floor(rows_px / tall)})
        if by_key is not None:
            frame["k"] = keys
        bins = frame.groupby(list(frame.columns), sort=False).indices
        if len(bins) <= scale.ROW_LIMIT // 2:
            break
        tall *= 2
    doms, seqs = records["domain"].to_numpy()[dedup].tolist(), records["seq"].to_numpy()[dedup]
    out = []
    for members in sorted(bins.values(), key=lambda m: int(m[0])):
        i = int(members[0])
        times = [procs[j] for j in members.tolist()]
        out.append(
            {
                "group": (doms[i], tx[i]),
                "x": tx[i],
                "y": ty[i],
                "n": len(members),
                "first": min(times),
                "last": max(times),
                "keys": list(dict.fromkeys(keys[j] for j in members.tolist())),
                "domain": doms[i],
                "timestamp": x.fmt(stamps[i]),
                "reg_seq": int(seqs[i]),
            }
        )
    return out


def dedup_layers(
    records: pd.DataFrame,
    dedup: np.ndarray,
    extents_of: Any,
    plot: tuple[TimeAxis, TimeAxis, Plot],
    drawn_with: Any,
    keys: list[str],
    notes: list[str],
) -> tuple[list[dict[str, Any]], list[spec.ChartDict]]:
    """The de-duplicated registrations: their ▼ rows, placed beside their timestamp's rules
    clear of every rule, line and mark (``dedups_beside``; ``drawn_with(key)``:
    the lines' segments and the marks' boxes drawn when the dropdown shows ``key``), and the
    layers of their "×n" texts and of the row above the plot; the subtitle says how they are
    drawn. With a key dropdown (``keys``), each key's ▼ are placed again for the view of that
    key alone (its registrations merged only with its own, beside its own rules): each row's
    ``view`` is the dropdown value that shows it ("": every key)."""
    x, y, px = plot
    views: dict[Any, list[dict[str, Any]]] = {None: dedup_bins(records, dedup, x, y, px)}
    if keys:
        views = {"": views[None]}
        for b in dedup_bins(records, dedup, x, y, px, by_key=set(keys)):
            views.setdefault(b["keys"][0], []).append(b)
    marks: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    above_marks: list[dict[str, Any]] = []
    above_texts: list[dict[str, Any]] = []
    for view, bins in views.items():
        if not bins:
            continue
        lines, boxes = drawn_with(view)

        taken = Taken()
        for seg, rule in lines:
            taken.add_segment(seg, rule)
        for box in boxes:
            taken.add_box(box)
        # the timers' (domain, timestamp) as their rules' x: the bins' groups
        extents = {(d, x.clip(ts)[0]): e for (d, ts), e in extents_of(view).items()}
        placed, above = dedups_beside(bins, extents, taken.copy, px)
        rows, counts = _dedup_rows(placed, y)
        ups, up_counts = _dedup_rows(above, y)
        for r, b in zip(ups, above, strict=True):
            r["above"] = -b["above"]
        for t, b in zip(up_counts, (b for b in above if b["n"] > 1), strict=True):
            t["above"] = -b["above"]
        if view is not None:
            for r in (*rows, *counts, *ups, *up_counts):
                r["view"] = view
        marks += rows
        texts += counts
        above_marks += ups
        above_texts += up_counts
        if view:
            continue
        beside = sum(r["n"] for r in placed)
        if beside > len(rows) or above:
            notes.append(
                f"de-duplicated registrations ▼: {beside:,} drawn as {len(rows):,} ▼ at their "
                "processing time beside their timestamp's rules (a ▼ with ×n: n of one "
                "timestamp at or near its processing time; hover for their times)"
            )
        if above:
            notes.append(
                f"{len(dedup) - beside:,} of timers too crowded for a ▼ beside their rule: "
                f"{len(above):,} ▼ in a row above the plot, at their timer's timestamp (×n: n "
                "of them; hover for their times)"
            )
    layers = [_count_layer(texts, axes.xy(x, y))] if texts else []
    if above_marks:
        layers += _row_above_layers(above_marks, above_texts, x)
    return marks, layers


def placed_boxes(rows: list[dict[str, Any]], px: Plot) -> list[Any]:
    """The boxes of the ▼ rows placed on the plot (``dedup_layers``) and of their "×n"."""
    return [
        b
        for r in rows
        for b in dedup_boxes(px.px(r["x"]) + r["dx"], px.py(r["y"]), r["registrations"])
    ]


def _count_layer(texts: list[dict[str, Any]], xy: dict[str, Any]) -> spec.ChartDict:
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


def _row_above_layers(
    marks: list[dict[str, Any]], texts: list[dict[str, Any]], x: TimeAxis
) -> list[spec.ChartDict]:
    """The ▼ of crowded timers in the row above the plot (``above``: pixels from the plot's
    top, drawn as they are: no scale) and their "×n"."""
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


def _dedup_rows(
    placed: list[dict[str, Any]], y: TimeAxis
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ▼ rows (timer events) of the placed bins, and the "×n" text of each standing for
    more than one registration (``piles.ALSO_HERE``: how many besides its first)."""
    marks, counts = [], []
    for b in placed:
        y0 = b["y"]
        mark = {
            "kind": "timer event",
            "event": DEDUP_EVENT,
            "x": b["x"],
            "y": y0,
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
        marks.append(mark)
        if b["n"] > 1:
            counts.append(
                {"kind": "dedup count", "x": b["x"], "y": y0,
                 "dx": b["dx"] + EVENT_PX / 2 + 1,
                 "text": count_text(b["n"])}
            )  # fmt: skip
    return marks, counts
