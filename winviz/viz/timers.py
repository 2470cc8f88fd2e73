"""``timers_chart``: the timer service of one operator (Flink's ``InternalTimerServiceImpl``).

Left panel — x: the timer's timestamp (event or processing time), y: processing time. Each
timer is a vertical rule at its timestamp from its registration up to its firing or deletion
(to the top edge while queued), solid for event time, dashed for processing time, coloured by
key (at most ``KEY_COLORS`` keys; else by domain, with a key dropdown). Over it: the
operator's watermark staircase (Flink's ``InternalTimeServiceManager.advanceWatermark``: an
event-time timer's rule ends where the staircase reaches its timestamp), the diagonal
timestamp = processing time (where a processing-time timer fires), and the timer events —
registered ●, fired ■, deleted ✕, queued at the end ▲, de-duplicated registration ▼ (one
that found its timer already queued). Marks and labels are placed by ``timer_places``.

Right panel: the timers queued per domain after each timer record; the pointer over it draws
that processing time across the timers. Above ``AGGREGATE_LIMIT`` timers, one rule per
(domain, timestamp).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import axes, palette, piles, scale, spec, timer_places, watermark_steps
from winviz.viz.operator_pick import pick_operator
from winviz.viz.palette import TimeAxis
from winviz.viz.timer_places import DEDUP_EVENT, Rows
from winviz.viz.timer_records import (
    ROLE_WIDTHS,
    ROLES,
    timer_lives,
    timer_operators,
    timer_queue,
    timer_records,
    timer_roles,
)
from winviz.viz.trace_view import TraceView, open_trace
from winviz.viz.validation import check_size
from winviz.viz.watermark_channels import operator_records
from winviz.viz.watermark_steps import Restart, staircase, step_lines
from winviz.viz.window_lives import busiest, groups

DOMAINS = ("event", "processing")
DOMAIN_COLORS = (palette.EVENT_TIME_COLOR, palette.PROCESSING_TIME_COLOR)
DOMAIN_DASHES = ([1, 0], [4, 2])
EVENTS = ("registered", DEDUP_EVENT, "fired", "deleted", "queued at the end")
EVENT_SHAPES = ("circle", "triangle-down", "square", "cross", "triangle-up")
KEY_COLORS = palette.IDENTITY_COLORS[:8]
KEY_PARAM = "timer_key"  # the key dropdown's Vega parameter ("" = every key)
KEY_OPTIONS = 60  # at most this many keys in the dropdown (the keys with the most timers)
AGGREGATE_LIMIT = 1500  # above this many timers: one rule per (domain, timestamp)
LABEL_LIMIT = 25  # timestamps written when there are at most this many distinct ones
DX_GAP = 4  # pixels between timers of one timestamp
QUEUE_VIEW = "queue_points_1"  # the queue panel's points (the view of LINK_PARAM)
LINK_PARAM = "queue_at"  # the queue panel's pointer: a processing time drawn across the timers
KEY_FILTER = f"{KEY_PARAM} === '' || datum.key === {KEY_PARAM}"  # a row of the key shown
# a row placed for one dropdown value (its ``view``) is shown for it alone
VIEW_FILTER = f"isDefined(datum.view) ? datum.view === {KEY_PARAM} : ({KEY_FILTER})"


@palette.public_chart("timers_chart")
def timers_chart(
    trace: Any,
    *,
    operator: str | None = None,
    width: int = palette.WIDTH - palette.PANEL_ROOM,
    height: int = palette.HEIGHT,
) -> spec.ChartDict:
    """The timers of one operator (default: the first with timer records), its watermark and
    its timer queue (see the module docstring). Bad input gives a message card."""
    check_size(width, height, min_width=100, min_height=60)
    return _timers(open_trace(trace), operator, width, height)


NO_TIMERS = (
    "No operator registered a timer. Timers are registered by window operators with event- "
    "or processing-time triggers and by keyed process functions; this trace has none"
)


def _timers(view: TraceView, operator: str | None, width: int, height: int) -> spec.ChartDict:
    named = "No operator named {!r} registered timers."
    op = pick_operator(view, operator, timer_operators(view), none=NO_TIMERS, named=named)
    records = timer_records(view, op)
    lives = timer_lives(records)
    queue = timer_queue(records)
    # the de-duplicated registrations, as positions in ``records``
    dedup = np.flatnonzero(
        (records["kind"] == "timer_registered").to_numpy() & records["flag"].to_numpy(dtype=bool)
    )
    steps = operator_records(view, ("watermark",), [op], True)

    # the processing times of the timer records and the trace's last: the end and the axis
    clock, present = view.ints("proc_time", np.append(records["seq"].to_numpy(), len(view) - 1))
    clock = clock[present]
    t_end = int(clock.max())
    clock = clock[(clock >= -palette.EXACT) & (clock <= palette.EXACT)]
    procs = [int(clock.min()), int(clock.max())] if len(clock) else []
    y = palette.time_axis("processing time", procs)
    has_event = bool((lives["domain"] == "event").any())
    has_processing = bool((lives["domain"] == "processing").any())
    if not has_event:
        steps = steps.iloc[:0]  # the watermark does not fire processing-time timers
    # processing-time timers are read against the diagonal: both axes span the clock
    x = palette.time_axis(
        "timer timestamp (event time or processing time)",
        [
            *lives["timestamp"].tolist(),
            *[int(v) for v in steps["watermark"] if v is not None and abs(int(v)) <= palette.EXACT],
            *(procs if has_processing else []),
        ],
    )
    n_pending = int((lives["end"] == "pending").sum())
    n_keys = int(lives["key"].nunique())
    notes = [
        f"operator {op!r}: {len(lives):,} timers of {n_keys:,} key(s) ({n_pending:,} still "
        f"queued at the end), {len(dedup):,} de-duplicated registrations",
    ]
    if has_event:
        notes.append(
            "an event-time timer fires when the watermark (black staircase) reaches its "
            "timestamp: at the next advance if it is already at or below it"
        )
    if has_processing:
        notes.append(
            "a processing-time timer fires when processing time (grey diagonal) reaches its "
            "timestamp"
        )
    by_key = n_keys <= len(KEY_COLORS)
    aggregated = len(lives) > AGGREGATE_LIMIT
    if aggregated:
        notes.append(
            f"{len(lives):,} timers drawn as one rule per (domain, timestamp): the earliest "
            "registration to the last end"
        )
        by_key = False
    dx = spread(lives)
    if aggregated:
        rules, ends_of = _aggregated_rows(lives, x, y, t_end)
    else:
        rules, ends_of = _rule_rows(lives, dx, x, y, t_end), {}
        _with_roles(rules, timer_roles(view, op, lives), notes)
    rules, k = scale.every_kth(rules, scale.ROW_LIMIT // 2)  # (two event marks a rule fit too)
    if k > 1:
        notes.append(f"timers: every {scale.nth(k)} rule drawn")
    points = _event_rows(rules, ends_of)
    if len(steps) and x.clip(steps["watermark"].iloc[-1])[1] == "MAX ▶":
        notes.append(
            f"the watermark reached MAX (end of input) at {y.fmt(steps['proc_time'].iloc[-1])}: "
            "its last step leaves the chart to the right"
        )
    keys = busiest(lives["key"], KEY_OPTIONS) if not by_key and not aggregated else []

    panel, queue_rows = _queue_panel(queue, y, t_end, height, notes)
    staircase = _watermark_layers(steps, x, y, watermark_steps.restarts(view))
    diagonal = _diagonal_layers(lives, x, y)
    plot = (x, y, timer_places.Plot(x, y, width, height))
    events, rings, dedup_layers, labels = timer_places.place_marks(
        plot,
        rules,
        points,
        (staircase, diagonal),
        _label_layers(rules, x, y),
        (records, dedup),
        _extents(lives, dx, x, ["", *keys]),
        keys,
        notes,
    )
    layers = [
        _link_layer(queue_rows, y),
        *staircase[:1],  # the line
        *diagonal,
        _rule_layer(rules, x, y, by_key),
        *_event_layers(events, x, y),
        *dedup_layers,
        piles.ring_layer(rings, axes.channel(x, "x"), axes.channel(y, "y"), 45),
        *staircase[1:2],  # its dots, over the timer events
        *labels,
    ]
    layers = [layer for layer in layers if layer is not None]
    chart = _two_panels(layers, panel, (width, height), by_key, keys, n_keys, notes)
    return palette.finish(chart, name="timers_chart", notes=notes)


def _two_panels(
    layers: list[spec.ChartDict],
    panel: spec.ChartDict,
    size: tuple[int, int],
    by_key: bool,
    keys: list[str],
    n_keys: int,
    notes: list[str],
) -> spec.ChartDict:
    """The timers panel (``layers``) beside the queue ``panel``, titled with the notes so far;
    with ``keys``, the key dropdown and the layers with a ``key`` column filtered by it."""
    width, height = size
    if keys:
        for layer in layers:
            rows = spec.rows(layer)
            if any("view" in r for r in rows):
                layer["transform"] = [{"filter": VIEW_FILTER}]
            elif rows and "key" in rows[0]:
                layer["transform"] = [{"filter": KEY_FILTER}]
    main = {"layer": layers, "width": width, "height": height}
    if not by_key:
        main["resolve"] = {"scale": {"color": "independent"}}
    # the queue panel's pointer, on the top-level chart with its view, as Altair lifts it
    params: Rows = [
        {
            "name": LINK_PARAM,
            "select": {
                "type": "point",
                "clear": "pointerout",
                "fields": ["y"],
                "nearest": True,
                "on": "pointerover",
            },
            "views": [QUEUE_VIEW],
        }
    ]
    # the subtitle: the notes so far (the dropdown's note is for usermeta only)
    title = palette.title("Timers", list(notes))
    if keys:
        options, labels = ["", *keys], ["every key", *keys]
        bind = {"input": "select", "options": options, "labels": labels, "name": "key "}
        params.append({"name": KEY_PARAM, "bind": bind, "value": ""})
        notes.append(
            f"{n_keys:,} keys: the dropdown shows one key's timers"
            + (f" (the {len(keys)} keys with the most timers)" if len(keys) < n_keys else "")
        )
    return {
        "hconcat": [main, panel],
        "params": params,
        "resolve": {
            "scale": {"color": "independent", "shape": "independent", "strokeDash": "shared"}
        },
        "spacing": 16,
        "title": title,
    }


def _rule_rows(
    lives: pd.DataFrame,
    dx: list[float],
    x: TimeAxis,
    y: TimeAxis,
    t_end: int,
) -> Rows:
    """One row per timer: x its timestamp, y its registration, y2 its end (the top edge
    while pending), dx (``spread``)."""
    rows = []
    for i, r in enumerate(lives.itertuples()):
        pending = r.end == "pending"
        ended = t_end if pending else r.ended
        rows.append(
            {
                "kind": "timer",
                "x": x.clip(r.timestamp)[0],
                "y": y.clip(r.registered)[0],
                "y2": y.hi if pending else y.clip(ended)[0],
                "dx": dx[i],
                "key": r.key,
                "namespace": r.namespace,
                "domain": r.domain,
                "timestamp": x.fmt(r.timestamp),
                "registered": y.fmt(r.registered),
                "ended": "" if pending else y.fmt(r.ended),
                "end": "queued at the end" if pending else r.end,
                "watermark at registration": x.fmt(r.watermark),
                "watermark at end": (
                    x.fmt(r.end_watermark) if r.domain == "event" and not pending else ""
                ),
                "reg_seq": int(r.reg_seq),
                "end_seq": None if pending else int(r.end_seq),
            }
        )
    return rows


def _aggregated_rows(
    lives: pd.DataFrame, x: TimeAxis, y: TimeAxis, t_end: int
) -> tuple[Rows, dict[tuple[Any, str], list[tuple[str, float, str]]]]:
    """One rule per (domain, timestamp) (``scale.cells``): the earliest registration to the
    last end, how many timers of how many keys, how they ended; and per (domain, timestamp
    text) each way its timers ended (sorted; "queued at the end" last, on the top edge), with
    the y and text of the last."""
    ends = lives["end"].to_numpy(dtype=object)
    pending = ends == "pending"
    ended = np.where(pending, t_end, pd.to_numeric(lives["ended"]).fillna(t_end)).astype(np.int64)
    by = [lives[c].to_numpy(dtype=object) for c in ("domain", "timestamp")]
    registered = ("min", lives["registered"].to_numpy(dtype=np.int64))
    (domains, stamps), cell = scale.cells(
        by, appearance=True, first=registered, last=("max", ended)
    )
    (*group, way), latest = scale.cells([*by, ends], last=("max", ended))
    ways: dict[tuple[Any, Any], dict[str, int]] = {}
    for domain, timestamp, end, t in zip(*group, way, latest["last"].tolist(), strict=True):
        ways.setdefault((domain, timestamp), {})[end] = t
    codes = pd.factorize(lives["key"].to_numpy(dtype=object))[0]  # (a missing key: -1)
    pairs = scale.cells([*(c[codes >= 0] for c in by), codes[codes >= 0]])[0]
    n_keys = collections.Counter(zip(pairs[0].tolist(), pairs[1].tolist(), strict=True))
    rows, ends_of = [], {}
    for domain, timestamp, n, first, last in zip(
        domains.tolist(),
        stamps.tolist(),
        *(cell[c].tolist() for c in ("count", "first", "last")),
        strict=True,
    ):
        how = ways[(domain, timestamp)]
        is_pending = "pending" in how
        rows.append(
            {
                "kind": "timer",
                "x": x.clip(timestamp)[0],
                "y": y.clip(first)[0],
                "y2": y.hi if is_pending else y.clip(last)[0],
                "dx": 0.0,
                "domain": domain,
                "timestamp": x.fmt(timestamp),
                "timers": n,
                "keys": n_keys[(domain, timestamp)],
                "registered": y.fmt(first),
                "ended": y.fmt(last),
                "end": "queued at the end" if is_pending else ", ".join(sorted(how)),
            }
        )
        marks = [(end, y.clip(t)[0], y.fmt(t)) for end, t in how.items() if end != "pending"]
        ends_of[(domain, x.fmt(timestamp))] = marks + (
            [("queued at the end", y.hi, "")] if is_pending else []
        )
    return rows, ends_of


def spread(lives: pd.DataFrame) -> list[float]:
    """Per timer, its pixel offset among the timers of its (domain, timestamp), in order of
    registration, centred, ``DX_GAP`` apart (closer when there are more than six)."""
    dx = [0.0] * len(lives)
    for members in groups(lives, ["domain", "timestamp"]).values():
        n = len(members)
        gap = min(DX_GAP, 24 / n)
        for j, i in enumerate(members):
            dx[i] = round((j - (n - 1) / 2) * gap, 2)
    return dx


def _event_rows(rules: Rows, ends_of: dict[tuple[Any, str], list[tuple[str, float, str]]]) -> Rows:
    """The timer events of each rule: registered and ended (an aggregated rule's: a mark per
    way its timers ended, ``ends_of``)."""
    rows: Rows = []
    for r in rules:
        base = {k: v for k, v in r.items() if k not in ("kind", "y", "y2", "end")}
        rows.append({**base, "kind": "timer event", "event": "registered", "y": r["y"]})
        ends = ends_of.get((r["domain"], r["timestamp"]), [])
        if len(ends) > 1:
            rows += [
                {**base, "ended": text, "kind": "timer event", "event": end, "y": at}
                for end, at, text in ends
            ]
        else:
            rows.append({**base, "kind": "timer event", "event": r["end"], "y": r["y2"]})
    return rows


def _extents(
    lives: pd.DataFrame, dx: list[float], x: TimeAxis, views: list[str]
) -> dict[str, dict[tuple[Any, Any], tuple[float, float]]]:
    """Per view of the key dropdown (``views``; "": every key), per (domain, x) of a
    timestamp, its rules' least and greatest ``dx``."""
    out: dict[str, dict[tuple[Any, Any], tuple[float, float]]] = {"": {}}
    out.update((k, {}) for k in views)
    cols = (lives["domain"].tolist(), lives["timestamp"].tolist(), dx, lives["key"].tolist())
    for dom, ts, d, k in zip(*cols, strict=True):
        for view in (out[""], out[k]) if k in out else (out[""],):
            lo, hi = view.get((dom, ts), (d, d))
            view[dom, ts] = (min(lo, d), max(hi, d))
    return {v: {(d, x.clip(ts)[0]): e for (d, ts), e in out.get(v, {}).items()} for v in views}


def _by_domain(rows: Rows, dashed: bool = False, **legend: Any) -> dict[str, Any]:
    """The colour (``dashed``: the dash) of a timer domain, its scale naming the domains of
    ``rows``; ``legend``: its title, or ``legend=None``."""
    values = [list(d) for d in DOMAIN_DASHES] if dashed else DOMAIN_COLORS
    scale = palette.drawn_scale(DOMAINS, values, (r["domain"] for r in rows))
    return {"field": "domain", "type": "nominal", "scale": scale} | legend


def _rule_layer(rows: Rows, x: TimeAxis, y: TimeAxis, by_key: bool) -> spec.ChartDict:
    if by_key:
        keys = list(dict.fromkeys(r["key"] for r in rows))
        color = {
            "field": "key",
            "type": "nominal",
            "title": "timer of key",
            "scale": {"domain": keys, "range": list(KEY_COLORS[: len(keys)])},
        }
    else:
        color = _by_domain(rows, title="timer domain")
    return spec.layer(
        rows,
        {"type": "rule", "strokeWidth": 2.5, "xOffset": {"expr": "datum.dx"}},
        {
            **axes.xy(x, y),
            "y2": {"field": "y2"},
            "color": color,
            "strokeDash": _by_domain(rows, True, title="timer domain"),
            "tooltip": spec.tooltips(rows, ["x", "y", "y2", "dx", "kind"]),
            **(_role_width(rows) if rows and "set by" in rows[0] else {}),
        },
    )


def _event_layers(rows: Rows, x: TimeAxis, y: TimeAxis) -> list[spec.ChartDict]:
    """The timer events' layers, of at most ``scale.ROW_LIMIT`` rows each (a key dropdown's
    views may hold an event twice)."""
    mark = {"type": "point", "filled": True, "size": 45, "color": palette.DEDUP_COLOR}
    mark |= {"opacity": 0.9, "xOffset": {"expr": "datum.dx"}}
    shape = palette.drawn_scale(EVENTS, EVENT_SHAPES, (r["event"] for r in rows))
    encoding = axes.xy(x, y) | {
        "shape": {
            "field": "event",
            "type": "nominal",
            "title": "timer event",
            "scale": shape,
            "legend": {"labelLimit": 0},
        }
    }
    parts = [rows[i : i + scale.ROW_LIMIT] for i in range(0, len(rows), scale.ROW_LIMIT)]
    # each tooltip: the columns of the first timer's events, then the last ▼'s others
    skip = ["x", "y", "dx", "kind", "view"]
    return [
        spec.layer(
            part,
            mark,
            encoding | {"tooltip": spec.tooltips([part[0] | part[-1] | part[0], *part], skip)},
        )
        for part in parts
    ]


def _with_roles(rules: Rows, roles: list[str] | None, notes: list[str]) -> None:
    """Each rule's "set by" (``timer_roles``) and the subtitle's count of each role."""
    if roles is None or len(roles) != len(rules):
        return
    for row, role in zip(rules, roles, strict=True):
        row["set by"] = role
    counts = {role: roles.count(role) for role in ROLES if role in roles}
    notes.append(
        "set by (derived with WindowOperator.cleanupTime: the trace does not record it): "
        + ", ".join(
            f"{n:,} {role}{'s' if n != 1 and role in ROLES[:2] else ''}"
            for role, n in counts.items()
        )
        + "; cleanup timers are thin"
    )


def _role_width(rows: Rows) -> dict[str, Any]:
    """The strokeWidth channel of the timers' roles: a cleanup timer thin."""
    drawn = [r for r in ROLES if any(row["set by"] == r for row in rows)]
    widths = dict(zip(ROLES, ROLE_WIDTHS, strict=True))
    return {
        "strokeWidth": {
            "field": "set by",
            "type": "ordinal",  # ordered as ROLES (a nominal width: Vega-Lite warns)
            "sort": drawn,
            "title": "timer set by",
            "scale": {"domain": drawn, "range": [widths[r] for r in drawn]},
        }
    }


def _label_layers(rows: Rows, x: TimeAxis, y: TimeAxis) -> list[spec.ChartDict]:
    """Each distinct timestamp written along its first timer's rule, when there are at most
    ``LABEL_LIMIT``."""
    first: dict[tuple[Any, Any], dict[str, Any]] = {}
    for r in rows:
        ident = (r["domain"], r["x"])
        if ident not in first or r["y"] < first[ident]["y"]:
            first[ident] = r
    if not first or len(first) > LABEL_LIMIT:
        return []
    labels = [
        {
            "kind": "timestamp",
            "x": r["x"],
            "y": (r["y"] + r["y2"]) / 2,
            "dx": r["dx"],
            "text": "@ " + r["timestamp"],
            "group": (r["domain"], r["x"]),  # (``labels_off_marks`` drops it and span)
            "span": (r["y"], r["y2"]),
        }
        for r in first.values()
    ]
    place = {"angle": 270, "align": "center", "baseline": "bottom", "dy": -timer_places.LABEL_GAP}
    beside = {"xOffset": {"expr": "datum.dx"}}
    font = timer_places.LABEL_FONT
    return [spec.text_layer(labels, axes.xy(x, y), size=font, color=palette.INK, **place, **beside)]


def _watermark_layers(
    steps: pd.DataFrame, x: TimeAxis, y: TimeAxis, restarts: list[Restart]
) -> list[spec.ChartDict]:
    """The operator's watermark as a staircase (``watermark_steps.staircase``: a line per run
    attempt, the last step held to the top edge), a dot per record and a label along its
    first step."""
    if steps.empty:
        return []
    thinned = scale.thin_steps(steps, "proc_time", "operator", scale.ROW_LIMIT // 2)
    line = ({}, *(thinned[c].tolist() for c in ("seq", "proc_time", "watermark")))
    vertices, points = staircase([line], y, x, restarts)
    xy = axes.xy(x, y)
    mark = {"type": "line", "color": palette.WATERMARK_COLOR, "strokeWidth": 1.5}
    order = {"order": {"field": "i", "type": "quantitative"}}
    line_layer, _, _ = step_lines(vertices, "attempt", mark, xy | order, cut=False)
    dots = spec.layer(
        points,
        {
            "type": "point",
            "color": palette.WATERMARK_COLOR,
            "size": 14,
            "filled": True,
            "opacity": 0.6,
        },
        {**xy, "tooltip": spec.tooltips(points, ["x", "y"])},
    )
    mid = (vertices[0]["y"] + vertices[1]["y"]) / 2
    label = spec.text_layer(
        [{"kind": "label", "x": vertices[0]["x"], "y": mid, "text": "watermark"}],
        xy,
        color=palette.INK,
        angle=270,
        align="center",
        baseline="top",
        dy=3,
    )
    return [line_layer, dots, label]


def _diagonal_layers(lives: pd.DataFrame, x: TimeAxis, y: TimeAxis) -> list[spec.ChartDict]:
    """The diagonal timestamp = processing time, when there are processing-time timers."""
    if not (lives["domain"] == "processing").any() or x.kind != y.kind:
        return []
    lo, hi = max(x.lo, y.lo), min(x.hi, y.hi)
    if lo >= hi:
        return []
    rows = [{"kind": "processing time", "x": v, "y": v} for v in (lo, hi)]
    line = spec.layer(
        rows,
        {"type": "line", "color": palette.GUIDE_COLOR, "strokeDash": [4, 4], "strokeWidth": 1},
        axes.xy(x, y),
    )
    label = spec.text_layer(
        [{"kind": "label", "x": hi, "y": hi, "text": "processing time = timestamp"}],
        axes.xy(x, y),
        size=10,
        color=palette.GUIDE_COLOR,
        align="right",
        baseline="top",
        dx=-6,
        dy=2,
    )
    return [line, label]


def _queue_panel(
    queue: pd.DataFrame, y: TimeAxis, t_end: int, height: int, notes: list[str]
) -> tuple[spec.ChartDict, Rows]:
    """Timers queued per domain against the same processing-time axis, as steps (a size
    holds until the next change, the last to the end)."""
    steps = queue[~queue.duplicated(["domain", "proc_time"], keep="last").to_numpy()]
    thinned = scale.thin_steps(steps, "proc_time", "domain", scale.ROW_LIMIT // 4, "size")
    if len(thinned) < len(steps):
        notes.append(f"queue size: {len(thinned):,} of {len(steps):,} steps drawn ({scale.KEPT})")
    rows: Rows = []
    for dom, g in thinned.groupby("domain", sort=False):
        procs, sizes = g["proc_time"].tolist(), g["size"].tolist()
        for i, (p, s) in enumerate(zip(procs, sizes, strict=True)):
            nxt = procs[i + 1] if i + 1 < len(procs) else t_end
            for j, t in enumerate((p, nxt)):
                rows.append(
                    {
                        "kind": "queue size",
                        "i": 2 * i + j,
                        "size": int(s),
                        "y": y.clip(t)[0],
                        "domain": dom,
                        "processing time": y.fmt(t),
                    }
                )
    top = max((r["size"] for r in rows), default=1)
    step = max(1, -(-top // 5))
    x = {
        "field": "size",
        "type": "quantitative",
        "title": "timers queued",
        "scale": {"zero": True},
        "axis": {"format": "d", "values": list(range(0, top + step, step))},  # ≤ 6 ticks
    }
    line = spec.layer(
        rows,
        {"type": "line", "strokeWidth": 1.5},
        {
            "x": x,
            "y": axes.channel(y, "y"),
            "order": {"field": "i", "type": "quantitative"},
            "color": _by_domain(rows, legend=None),
            "strokeDash": _by_domain(rows, True, title="timer domain"),
            "detail": {"field": "domain", "type": "nominal"},
        },
    )
    # the pointer picks the nearest step: its processing time is drawn across the timers
    points = spec.layer(
        rows,
        {"type": "point", "size": 18, "filled": True, "opacity": 0.5},
        {
            "x": x,
            "y": axes.channel(y, "y"),
            "color": _by_domain(rows, legend=None),
            "tooltip": spec.tooltips(rows, ["y", "i", "kind"]),
        },
    )
    points["name"] = QUEUE_VIEW
    return {"layer": [line, points], "width": 110, "height": height}, rows


def _link_layer(rows: Rows, y: TimeAxis) -> spec.ChartDict:
    """A line across the timers at the processing time the pointer picks in the queue."""
    layer = spec.layer(
        rows,
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeDash": [2, 2], "strokeWidth": 1},
        {"y": axes.channel(y, "y")},
    )
    layer["transform"] = [{"filter": {"param": LINK_PARAM, "empty": False}}]
    return layer
