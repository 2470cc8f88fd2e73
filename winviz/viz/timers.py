"""``timers_chart``: the timers of one operator over processing time.

Top panel, one lane per (key, namespace) — for a window operator the namespace is the window:

1. **timer bars** — one bar per timer, from its registration to its firing or deletion (a
   timer still queued when the trace ends reaches the right edge); colour *and* outline tell
   the domain (event time: blue, solid; processing time: orange, dashed). Each timer of a
   lane has a sub-lane of its own (timers 4999 and 5999 of one window are two bars, apart),
   and its **timestamp** is written on the bar ("@ 4,999 ms");
2. **ends** — a mark where the timer left the queue: fired ■, deleted ✕, still pending ▶;
3. **de-duplicated registrations** — ▼ (black; legend "registration: de-duplicated") in the
   sub-lane of the timer a registration found already queued — same key, namespace, domain
   and timestamp — so it did nothing (``timer_registered`` with ``deduplicated=True``), with
   how many at that point.

Bottom panel: **queue size** — live timers per domain after each timer record, a step line on
the same processing-time axis.

Scale: at most ``max_lanes`` lanes. With more (key, namespace) pairs the lanes are
aggregated by namespace (one bar per namespace, domain and timestamp: earliest registration
to last end, with the number of keys); beyond that the earliest ``max_lanes`` lanes are
kept. Every layer stays under 5,000 rows; the subtitle says what was done.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from winviz.viz import frames, palette, scale
from winviz.viz.frames import TraceInputError, TraceView
from winviz.viz.palette import TimeAxis

DOMAINS = ("event", "processing")
DOMAIN_COLORS = (palette.BLUE, palette.ORANGE)
DOMAIN_DASHES = ([1, 0], [4, 2])
ENDS = ("fired", "deleted", "pending at end")
END_SHAPES = ("square", "cross", "triangle-right")
# a colour neither domain uses (processing time is orange): the marker is about the queue
DEDUP_COLOR = palette.BLACK
DEDUP_LABEL = "de-duplicated"
LANE_HEIGHT = 24
SLOT_HEIGHT = 16


def timers_chart(
    trace: Any,
    *,
    operator: str | None = None,
    max_lanes: int = 40,
    width: int = palette.WIDTH,
) -> alt.TopLevelMixin:
    """Timers of one operator (default: the first with timer records) as bars over
    processing time, with the timer-queue size below (see the module docstring). Bad input
    gives a message card (``usermeta.winviz.status == "message"``), like ``timeline``."""
    if max_lanes < 1:
        raise ValueError(f"max_lanes must be >= 1, got {max_lanes}")
    try:
        view = frames.open_trace(trace)
        return _timers(view, operator, max_lanes, width)
    except TraceInputError as exc:
        return palette.message_chart(str(exc).split(". ")[0] + ".", str(exc), chart="timers_chart")


def _pick(view: TraceView, operator: str | None) -> str:
    if len(view) == 0:
        raise TraceInputError("The trace is empty. The job recorded no records at all.")
    candidates = frames.timer_operators(view)
    if not candidates:
        raise TraceInputError(
            "No operator registered a timer. Timers are registered by window operators with "
            "event- or processing-time triggers and by keyed process functions; this trace has "
            f"none (kinds: {', '.join(sorted(view.counts()))})."
        )
    if operator is None:
        return candidates[0]
    if operator not in candidates:
        raise TraceInputError(
            f"No operator named {operator!r} registered timers. Choose one of: "
            f"{', '.join(map(repr, candidates))}."
        )
    return operator


def _timers(view: TraceView, operator: str | None, max_lanes: int, width: int) -> alt.VConcatChart:
    op = _pick(view, operator)
    records = frames.timer_records(view, op)
    lives = frames.timer_lives(records)
    queue = frames.timer_queue(records)
    dedup = records[(records["kind"] == "timer_registered") & records["flag"]]

    procs = pd.to_numeric(records["proc_time"], errors="coerce")
    last = view.column("proc_time", np.array([len(view) - 1]))[0]
    t_end = max(int(procs.max()), int(last)) if last is not None else int(procs.max())
    x = palette.time_axis("processing time", [*procs.dropna().tolist(), t_end])

    n_pending = int((lives["end"] == "pending").sum())
    notes = [
        f"operator {op!r}: {len(lives):,} timers ({n_pending:,} still pending at the end), "
        f"{len(dedup):,} de-duplicated registrations"
    ]
    bars, lane_order, lane_of = _lane_bars(lives, x, t_end, max_lanes, notes)
    slot_of = {
        (lane, dom, ts): slot
        for lane, dom, ts, slot in zip(
            bars["lane"], bars["domain"], bars["timer_ts"], bars["slot"], strict=True
        )
    }
    marks = _dedup_marks(dedup, lane_of, slot_of, x, notes)
    bars = bars.drop(columns="timer_ts")

    slots = int(bars["slot"].max()) + 1 if len(bars) else 1
    height = max(60, min(900, len(lane_order) * max(LANE_HEIGHT, SLOT_HEIGHT * slots)))
    # lane order as a scale domain (data), never a sort array (Vega-Lite would build an
    # expression holding the lanes' keys)
    y = alt.Y(
        "lane:N",
        sort=None,
        scale=alt.Scale(domain=lane_order),
        title=None,
        axis=alt.Axis(labelLimit=220),
    )
    layers = [_bar_layer(bars, x, y), _end_layer(bars, x, y)]
    if not marks.empty:
        layers.append(_dedup_layer(marks, x, y))
    layers.append(_label_layer(bars, x, y))
    top = (
        alt.layer(*layers).properties(width=width, height=height).resolve_scale(shape="independent")
    )
    bottom = _queue_chart(queue, x, t_end, width, notes)
    chart = alt.vconcat(top, bottom, spacing=12).properties(title=palette.title("Timers", notes))
    return palette.finish(chart, name="timers_chart", notes=notes)


# -- data ---------------------------------------------------------------------------------------


def _lane_bars(
    lives: pd.DataFrame, x: TimeAxis, t_end: int, max_lanes: int, notes: list[str]
) -> tuple[pd.DataFrame, list[str], dict[tuple[str, str], str]]:
    """The bar rows, the lanes in order (first registration) and (key, namespace) → lane."""
    lanes = lives["key"] + " · " + lives["namespace"]
    n_lanes = lanes.nunique()
    if n_lanes <= max_lanes:
        agg = lives.assign(lane=lanes, keys=1)
        agg["reg_seq"] = agg["reg_seq"].astype("int64")
        lane_of = {
            (k, n): f"{k} · {n}" for k, n in zip(lives["key"], lives["namespace"], strict=True)
        }
    else:
        agg = _by_namespace(lives)
        notes.append(
            f"{n_lanes:,} (key, namespace) lanes aggregated to one lane per namespace: a bar is "
            "every key's timer of that namespace, domain and timestamp (earliest registration "
            "to last end)"
        )
        lane_of = {(k, n): n for k, n in zip(lives["key"], lives["namespace"], strict=True)}
    order = list(dict.fromkeys(agg.sort_values("registered", kind="stable")["lane"]))
    if len(order) > max_lanes:
        notes.append(f"the first {max_lanes} of {len(order):,} lanes shown (by first registration)")
        order = order[:max_lanes]
        agg = agg[agg["lane"].isin(set(order))]
    agg, k = scale.every_kth(agg, scale.ROW_LIMIT)
    if k > 1:
        notes.append(f"timer bars: every {k}th bar drawn")
    # one sub-lane per timer of a lane, in timestamp order (a lane's own slots: the bars of
    # a lane fill it, whatever timestamps other lanes hold)
    agg = agg.assign(
        ts_order=[t if isinstance(t, int) else 0 for t in agg["timestamp"]],
        dom_order=[DOMAINS.index(d) if d in DOMAINS else 2 for d in agg["domain"]],
    )
    agg = agg.sort_values(["lane", "dom_order", "ts_order"], kind="stable")
    agg["slot"] = agg.groupby("lane", sort=False).cumcount()
    agg = agg.sort_index()
    pending = agg["end"] == "pending"
    ended = agg["ended"].where(~pending, t_end)
    data = pd.DataFrame(
        {
            "lane": agg["lane"].to_numpy(),
            "x": [x.clip(v)[0] for v in agg["registered"]],
            "x2": [x.clip(v)[0] for v in ended],
            "domain": agg["domain"].to_numpy(),
            "end": np.where(pending, "pending at end", agg["end"]),
            "kind": "timer",
            "key": agg["key"].to_numpy(),
            "namespace": agg["namespace"].to_numpy(),
            "timestamp": [
                palette.format_time(v) if d == "event" else x.fmt(v)
                for v, d in zip(agg["timestamp"], agg["domain"], strict=True)
            ],
            "registered": [x.fmt(v) for v in agg["registered"]],
            "ended": ["" if p else x.fmt(v) for v, p in zip(ended, pending, strict=True)],
            "watermark": [palette.format_time(v) for v in agg["watermark"]],
            "keys": agg["keys"].astype("int64").to_numpy(),
            "slot": agg["slot"].astype("int64").to_numpy(),
            "label": [
                "@ " + (palette.format_time(v) if d == "event" else x.fmt(v))
                for v, d in zip(agg["timestamp"], agg["domain"], strict=True)
            ],
            "timer_ts": agg["timestamp"].to_numpy(dtype=object),
        }
    )
    if "reg_seq" in agg and (data["keys"] == 1).all():
        data["reg_seq"] = agg["reg_seq"].astype("int64").to_numpy()
        data["end_seq"] = [None if pd.isna(s) else int(s) for s in agg["end_seq"]]
        data = data.drop(columns="keys")
    return data.reset_index(drop=True), order, {k: v for k, v in lane_of.items() if v in order}


def _by_namespace(lives: pd.DataFrame) -> pd.DataFrame:
    work = lives.assign(
        ended_n=pd.to_numeric(lives["ended"]),
        pending=lives["end"] == "pending",
        deleted=lives["end"] == "deleted",
        wm=pd.to_numeric(lives["watermark"], errors="coerce"),
    )
    agg = (
        work.groupby(["namespace", "domain", "timestamp"], sort=False)
        .agg(
            registered=("registered", "min"),
            ended=("ended_n", "max"),
            keys=("key", "size"),
            pending=("pending", "any"),
            deleted=("deleted", "all"),
            watermark=("wm", "min"),
        )
        .reset_index()
    )
    agg["end"] = np.where(agg["pending"], "pending", np.where(agg["deleted"], "deleted", "fired"))
    agg["ended"] = [None if pd.isna(v) else int(v) for v in agg["ended"]]
    agg["watermark"] = [None if pd.isna(v) else int(v) for v in agg["watermark"]]
    agg["key"] = [f"{n} keys" for n in agg["keys"]]
    agg["lane"] = agg["namespace"]
    return agg


def _dedup_marks(
    dedup: pd.DataFrame,
    lane_of: dict[tuple[str, str], str],
    slot_of: dict[tuple[str, str, Any], int],
    x: TimeAxis,
    notes: list[str],
) -> pd.DataFrame:
    """De-duplicated registrations per (lane, processing time, domain, timestamp) with a
    count, in the sub-lane (slot) of the timer they found queued; binned on processing time
    when more than 5,000 remain (then in the lane's first sub-lane)."""
    if dedup.empty:
        return pd.DataFrame()
    keys = frames.key_texts(dedup["key"])
    lanes = [lane_of.get((k, n)) for k, n in zip(keys, dedup["namespace"], strict=True)]
    work = pd.DataFrame(
        {
            "lane": lanes,
            "proc": pd.to_numeric(dedup["proc_time"]).to_numpy(),
            "domain": dedup["domain"].to_numpy(),
            "timestamp": dedup["ts"].to_numpy(dtype=object),
            "seq": dedup["seq"].to_numpy(),
        }
    )
    work = work[work["lane"].notna()]
    if work.empty:
        return pd.DataFrame()
    by = ["lane", "proc", "domain", "timestamp"]
    cells = (
        work.groupby(by, sort=False).agg(count=("seq", "size"), seq=("seq", "min")).reset_index()
    )
    if len(cells) > scale.ROW_LIMIT:
        buckets = max(1, scale.ROW_LIMIT // max(1, work["lane"].nunique()) // 2)
        lo, hi = float(work["proc"].min()), float(work["proc"].max())
        w = max((hi - lo) / buckets, 1.0)
        work = work.assign(proc=lo + ((work["proc"] - lo) // w) * w)
        cells = (
            work.groupby(["lane", "proc", "domain"], sort=False)
            .agg(count=("seq", "size"), seq=("seq", "min"))
            .reset_index()
            .assign(timestamp=None)
        )
        cells, k = scale.every_kth(cells, scale.ROW_LIMIT)
        notes.append(
            f"{len(work):,} de-duplicated registrations counted per lane in "
            f"{x.fmt(round(w))} buckets" + (f"; every {k}th mark" if k > 1 else "")
        )
    return pd.DataFrame(
        {
            "lane": cells["lane"],
            "x": [x.clip(v)[0] for v in cells["proc"]],
            "slot": [
                slot_of.get((lane, dom, ts), 0)
                for lane, dom, ts in zip(
                    cells["lane"], cells["domain"], cells["timestamp"], strict=True
                )
            ],
            "mark": DEDUP_LABEL,
            "kind": "de-duplicated registration",
            "domain": cells["domain"],
            "timestamp": ["" if v is None else palette.format_time(v) for v in cells["timestamp"]],
            "proc_time": [x.fmt(v) for v in cells["proc"]],
            "count": cells["count"].astype("int64"),
            "first_seq": cells["seq"].astype("int64"),
        }
    ).reset_index(drop=True)


# -- layers -------------------------------------------------------------------------------------


def _domain_color(channel: type = alt.Color) -> Any:
    return channel(
        "domain:N",
        title="timer domain",
        scale=alt.Scale(domain=list(DOMAINS), range=list(DOMAIN_COLORS)),
    )


def _tips(data: pd.DataFrame, skip: list[str]) -> list[alt.Tooltip]:
    return [
        alt.Tooltip(f"{c}:{'Q' if pd.api.types.is_integer_dtype(data[c]) else 'N'}")
        for c in data.columns
        if c not in skip
    ]


def _bar_layer(bars: pd.DataFrame, x: TimeAxis, y: alt.Y) -> alt.Chart:
    return (
        alt.Chart(bars)
        .mark_bar(strokeWidth=1.5, fillOpacity=0.55)
        .encode(
            x=x.x("x"),
            x2=alt.X2("x2"),
            y=y,
            yOffset=_slot(),
            color=_domain_color(),
            stroke=_domain_color(alt.Stroke),
            strokeDash=alt.StrokeDash(
                "domain:N",
                title="timer domain",
                scale=alt.Scale(domain=list(DOMAINS), range=[list(d) for d in DOMAIN_DASHES]),
            ),
            tooltip=_tips(bars, ["x", "x2", "lane", "slot", "label"]),
        )
    )


def _end_layer(bars: pd.DataFrame, x: TimeAxis, y: alt.Y) -> alt.Chart:
    return (
        alt.Chart(bars)
        .mark_point(filled=True, size=40, color=palette.BLACK)
        .encode(
            x=x.x("x2"),
            y=y,
            yOffset=_slot(),
            shape=alt.Shape(
                "end:N",
                title="timer left the queue",
                scale=alt.Scale(domain=list(ENDS), range=list(END_SHAPES)),
            ),
            tooltip=_tips(bars, ["x", "x2", "lane", "slot", "label"]),
        )
    )


def _slot() -> alt.YOffset:
    """The sub-lane of a timer within its lane, with a gap between sub-lanes."""
    return alt.YOffset("slot:N", scale=alt.Scale(paddingInner=0.25))


def _label_layer(bars: pd.DataFrame, x: TimeAxis, y: alt.Y) -> alt.Chart:
    """The timer's timestamp written at the start of its bar."""
    return (
        alt.Chart(bars)
        .mark_text(align="left", baseline="middle", dx=3, fontSize=9, font="sans-serif")
        .encode(
            x=x.x("x"),
            y=y,
            yOffset=_slot(),
            text=alt.Text("label:N"),
            color=alt.value(palette.BLACK),
        )
    )


def _dedup_layer(marks: pd.DataFrame, x: TimeAxis, y: alt.Y) -> alt.Chart:
    return (
        alt.Chart(marks)
        .mark_point(filled=True, size=60, color=DEDUP_COLOR, stroke="#FFFFFF", strokeWidth=0.5)
        .encode(
            x=x.x("x"),
            y=y,
            shape=alt.Shape(
                "mark:N",
                title="registration",
                scale=alt.Scale(domain=[DEDUP_LABEL], range=["triangle-down"]),
            ),
            yOffset=_slot(),
            tooltip=_tips(marks, ["x", "lane", "slot", "mark"]),
        )
    )


def _queue_chart(
    queue: pd.DataFrame, x: TimeAxis, t_end: int, width: int, notes: list[str]
) -> alt.Chart:
    # the size after the last record at each processing time, per domain
    steps = queue.drop_duplicates(["domain", "proc_time"], keep="last")
    thinned = scale.thin_steps(steps, "proc_time", "domain", scale.ROW_LIMIT // 2)
    if len(thinned) < len(steps):
        notes.append(
            f"queue size: {len(thinned):,} of {len(steps):,} steps drawn (the last per "
            "processing-time bucket)"
        )
    rows = []
    for dom, g in thinned.groupby("domain", sort=False):
        procs, sizes, seqs = g["proc_time"].tolist(), g["size"].tolist(), g["seq"].tolist()
        for p, s, q in zip(procs, sizes, seqs, strict=True):
            rows.append(
                {
                    "x": x.clip(p)[0],
                    "size": int(s),
                    "domain": dom,
                    "kind": "queue size",
                    "proc_time": x.fmt(p),
                    "seq": int(q),
                }
            )
        if procs[-1] == t_end:
            continue
        rows.append(  # held to the end of the trace
            {
                "x": x.clip(t_end)[0],
                "size": int(sizes[-1]),
                "domain": dom,
                "kind": "queue size",
                "proc_time": x.fmt(t_end),
                "seq": int(seqs[-1]),
            }
        )
    data = pd.DataFrame(rows, columns=["x", "size", "domain", "kind", "proc_time", "seq"])
    return (
        alt.Chart(data)
        .mark_line(interpolate="step-after", strokeWidth=1.5)
        .encode(
            x=x.x("x"),
            y=alt.Y("size:Q", title="timers queued"),
            color=_domain_color(),
            tooltip=_tips(data, ["x"]),
        )
        .properties(width=width, height=90)
    )
