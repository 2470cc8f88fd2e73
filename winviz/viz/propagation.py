"""``propagation_chart``: how watermarks travel through an operator with several inputs.

An operator with several input channels — a partitioned source's watermark operator (Flink's
``WatermarkOutputMultiplexer``) or the operator after a ``union`` (``StatusWatermarkValve``) —
has as its watermark the minimum over its channels that are not idle. Processing time runs
across, the watermark up; one panel per such operator (per subtask: each has its own valve),
layers back to front: idle spans (a channel's in its colour, the operator's or input gate's
own a grey strip), a step line per channel, the operator's watermark (thick black), a dot per
record (one per place, naming the other lines there), paused-for-alignment strips
(``winviz.trace.paused``) and restarts. Lines are held flat to the end; MAX is drawn on the
top edge, MIN on the bottom, where every line starts, and where a channel that wrote no record
stays (``winviz.trace.channels``). Without such an operator: one panel, a line per operator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace.channels import UnrecordedChannel, gate_owner, unrecorded_channel
from winviz.trace.paused import PAUSE_KINDS, PausedSpan, paused_spans
from winviz.viz import coinciding, idle, palette, scale, spec, watermark_steps
from winviz.viz.boxes import Box, Taken, first_clear
from winviz.viz.labels import CHAR_PX, LABEL_FONT, Plot, point_boxes, segment_boxes
from winviz.viz.palette import LONG_MIN, TimeAxis
from winviz.viz.trace_view import TraceView, open_trace
from winviz.viz.validation import check_size
from winviz.viz.watermark_channels import (
    STATUS_KINDS,
    channel_records,
    describe,
    details,
    line_name,
    operator_records,
    pick_operators,
)
from winviz.viz.watermark_steps import (
    Restart,
    restart_layers,
    restart_left_out,
    staircase,
    step_lines,
)

CHART = "propagation_chart"
CHANNEL_COLORS: tuple[str, ...] = palette.IDENTITY_COLORS[:7]
CHANNEL_DASHES: tuple[list[int], ...] = (*palette.WATERMARK_DASHES[1:], [4, 1, 1, 1, 1, 1])
OPERATOR_COLOR = palette.WATERMARK_COLOR
IDLE_OPACITY = 0.15
OPERATOR_STRIP = 8  # px: the operator-idle strip along the top of a panel
PAUSED_STRIP = 7  # px: a paused-for-alignment strip along the bottom, one row per line
LINE_COLUMNS = ["seq", "proc_time", "watermark", "line", "role", "note"]


@palette.public_chart(CHART)
def propagation_chart(
    trace: Any,
    *,
    operator: str | list[str] | None = None,
    max_points: int = scale.ROW_LIMIT,
    width: int = palette.WIDTH,
    height: int = 260,
) -> spec.ChartDict:
    """Per-channel watermarks, the operator's minimum and idle periods (see the module
    docstring). ``operator``: the operator(s) to draw, one panel each (default: every operator
    with several input channels); ``max_points``: rows per layer (≤ 5,000), longer lines
    thinned; ``height``: of each panel. Bad input gives a message card."""
    if not 1 <= max_points <= scale.ROW_LIMIT:
        raise ValueError(f"max_points must be in 1..{scale.ROW_LIMIT}, got {max_points}")
    if operator is not None and not isinstance(operator, str) and not list(operator):
        raise ValueError("operator must be a name, a non-empty list of names, or None")
    check_size(width, height)
    return _propagation(open_trace(trace), operator, max_points, width, height)


def _propagation(
    view: TraceView,
    operator: str | list[str] | None,
    max_points: int,
    width: int,
    height: int,
) -> spec.ChartDict:
    notes: list[str] = []
    ops, with_channels = pick_operators(view, operator, notes)
    panels_data = (
        [_panel_data(view, [op], False) for op in ops]
        if with_channels
        else [_panel_data(view, ops, True)]
    )
    procs = [
        int(p)
        for d in panels_data
        for p in [*d["lines"]["proc_time"], *d["status"]["proc_time"]]
        if p is not None and not palette.is_off_chart(p)
    ]
    last = view.column("proc_time", np.array([len(view) - 1]))[0]
    t_end = max([*procs, *([int(last)] if last is not None else [])], default=0)
    x = palette.time_axis("processing time", [*procs, t_end])

    drawn = [_panel(d, x, t_end, max_points, width, height, notes) for d in panels_data]
    if any(len(d["lines"]) and d["lines"]["seq"].iloc[0] < 0 for d in panels_data):
        notes.append(
            "before its first watermark record a channel or operator is at MIN "
            "(Long.MIN_VALUE), drawn on the bottom edge"
        )
    head = (
        "the operator's watermark (thick black) is the minimum over its active input channels "
        "(coloured); shaded: idle"
        if with_channels
        else "no operator with several inputs: one line per operator's watermark; shaded: idle"
    )
    notes.insert(0, head)
    if len(drawn) == 1:
        chart, sub = drawn[0]
        notes.insert(1, sub)
    else:
        for panel, sub in drawn:
            panel["title"] = {"text": sub, "anchor": "start", "fontSize": 12}
        chart = {
            "vconcat": [panel for panel, _ in drawn],
            "resolve": {"scale": {"color": "independent", "strokeDash": "independent"}},
            "spacing": 16,
        }  # a legend per panel
    return palette.finish(chart, name=CHART, notes=notes, heading="Watermark propagation")


def _panel_data(view: TraceView, ops: list[str], per_operator: bool) -> dict[str, Any]:
    """Everything one panel draws: lines (``LINE_COLUMNS``), status (idle/active records),
    the silent channel, restarts and paused spans."""
    parts, status = [], []
    wm = operator_records(view, ("watermark",), ops, per_operator)
    st = operator_records(view, STATUS_KINDS, ops, per_operator)
    owner = None if per_operator else gate_owner(ops[0])
    if owner is not None:  # an input gate: its watermark and idleness are its operator's input's
        gate = f"input gate {ops[0]!r}"
        side = channel_records(view, owner)
        side = side[side["input"] == ops[0][len(owner) + 1 :]]
        side = side.assign(operator=ops[0], line=line_name(ops[0], False))
        wm = side[side["kind"] == "channel_watermark"]
        st = side[side["kind"] != "channel_watermark"]
    silent: UnrecordedChannel | None = None
    restarts = watermark_steps.restarts(view)
    if not per_operator:
        ch = channel_records(view, ops[0])
        parts.append(ch[ch["kind"] == "channel_watermark"].assign(role="channel", note=None))
        status.append(ch[ch["kind"] != "channel_watermark"].assign(role="channel"))
        sink = len(view.select("sink", operator=ops[0])) > 0
        silent = unrecorded_channel(ops[0], _rule_records(view, ch, wm, restarts), sink=sink)
        parts.append(_held_at_min(ch, wm, line_name(ops[0], False), silent))
    parts.append(wm.assign(role="channel" if per_operator else "operator", note=None))
    if not per_operator and restarts:
        parts.append(_channels_at_min(parts[0], restarts))
    status.append(st.assign(role="channel" if per_operator else "operator"))
    lines = _concat(parts, LINE_COLUMNS)
    stat = _concat(status, ["seq", "kind", "proc_time", "line", "role"])
    return {
        "name": "operators" if per_operator else describe(ops[0]) if owner is None else gate,
        "whose": "operator" if owner is None else "input gate",  # whose idle the top strip is
        "ops": ops,
        "per_operator": per_operator,
        "lines": lines,
        "status": stat,
        "silent": silent,
        "restarts": restarts,
        "paused": _paused_on_lines(view, ops, per_operator, lines),
    }


def view_paused_spans(view: TraceView) -> list[PausedSpan]:
    """Every paused-for-alignment span of the trace (``paused_spans``), in start order."""
    rows = view.select(*PAUSE_KINDS)
    if not len(rows):
        return []
    fields = details(view, rows, PAUSE_KINDS, ("input", "max_allowed", "group"))
    records = zip(
        view.kinds_of(rows).tolist(),
        view.column("proc_time", rows).tolist(),
        view.column("operator", rows).tolist(),
        view.column("ts", rows).tolist(),
        fields["input"].tolist(),
        fields["max_allowed"].tolist(),
        fields["group"].tolist(),
        strict=True,
    )
    return paused_spans(records)


def _paused_on_lines(
    view: TraceView, ops: list[str], per_operator: bool, lines: pd.DataFrame
) -> list[tuple[str, PausedSpan]]:
    """The paused spans this panel draws, each with its line: the operator's, else the
    channel of the paused partition or of the reader feeding it, else the operator's own."""
    spans = view_paused_spans(view)
    if not spans:
        return []
    out: list[tuple[str, PausedSpan]] = []
    if per_operator:
        return [(line_name(s.operator, True), s) for s in spans if s.operator in ops]
    op = ops[0]
    chan = lines[lines["role"] == "channel"]
    by_input = dict(zip(chan["line"], chan["line"], strict=True))
    for s in spans:
        if s.operator == op and s.input in by_input:
            out.append((by_input[s.input], s))
        elif s.operator == op:
            out.append((line_name(op, False), s))
        elif s.operator in by_input:  # the reader feeds this channel
            out.append((by_input[s.operator], s))
    return out


BEFORE_FIRST = "no watermark from this input yet: MIN, drawn on the bottom edge"
BEFORE_FIRST_OWN = "no watermark yet: MIN, drawn on the bottom edge"
NO_RECORD = "no record of this input in the trace: MIN throughout, drawn on the bottom edge"


def _rule_records(
    view: TraceView, ch: pd.DataFrame, wm: pd.DataFrame, restarts: list[watermark_steps.Restart]
) -> list[tuple[Any, ...]]:
    """The operator's channel, watermark and restore records in seq order
    (``unrecorded_channel``)."""
    rows = list(
        zip(
            ch["seq"].tolist(),
            ch["kind"].tolist(),
            ch["proc_time"].tolist(),
            ch["watermark"].tolist(),
            view.column("watermark", ch["seq"].to_numpy(dtype=np.int64)).tolist(),
            ch["channel"].tolist(),
            ch["input"].tolist(),
            strict=True,
        )
    )
    rows += [
        (s, "watermark", p, w, w, None, None)
        for s, p, w in zip(
            wm["seq"].tolist(), wm["proc_time"].tolist(), wm["watermark"].tolist(), strict=True
        )
    ]
    rows += [(r.seq, "restore", r.proc_time, None, None, None, None) for r in restarts]
    return sorted(rows, key=lambda r: r[0])


def _held_at_min(
    ch: pd.DataFrame, wm: pd.DataFrame, own: str, silent: UnrecordedChannel | None
) -> pd.DataFrame:
    """Rows at MIN (Flink's channels and operators start at Long.MIN_VALUE) at the first
    channel record (seq -1) for each line whose first watermark comes later or never: the
    channels, the ``silent`` one and the operator's own (``own``)."""
    if ch.empty:
        return pd.DataFrame(columns=LINE_COLUMNS)
    t0 = ch["proc_time"].iloc[0]
    marks = ch[ch["kind"] == "channel_watermark"]
    first = marks.groupby("line", sort=False)["proc_time"].first()
    rows = [
        (-1, t0, LONG_MIN, line, "channel", BEFORE_FIRST)
        for line in dict.fromkeys(ch["line"])
        if line not in first.index or first[line] > t0
    ]
    if silent is not None:
        rows.append((-1, t0, LONG_MIN, silent.input, "channel", NO_RECORD))
    if not wm.empty and wm["proc_time"].iloc[0] > t0:  # (a sink writes no watermark record)
        rows.append((-1, t0, LONG_MIN, own, "operator", BEFORE_FIRST_OWN))
    return pd.DataFrame(rows, columns=LINE_COLUMNS)


RESTARTED = "the job restarted: every watermark back to MIN (drawn on the bottom edge)"


def _channels_at_min(marks: pd.DataFrame, restarts: list[Restart]) -> pd.DataFrame:
    """A row at MIN at each restart for every channel with a watermark before it (a restored
    valve starts again at MIN; the engine writes MIN records only for the operators)."""
    rows = [
        (r.seq, r.proc_time, LONG_MIN, line, "channel", RESTARTED)
        for r in restarts
        for line in dict.fromkeys(marks.loc[marks["seq"] < r.seq, "line"])
    ]
    return pd.DataFrame(rows, columns=LINE_COLUMNS)


def _concat(parts: list[pd.DataFrame], cols: list[str]) -> pd.DataFrame:
    """The ``cols`` of the non-empty parts as one frame in seq order."""
    parts = [p[cols] for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=cols)
    frame = pd.concat(parts, ignore_index=True)
    return frame.sort_values("seq", kind="stable").reset_index(drop=True)


def _panel(
    d: dict[str, Any],
    x: TimeAxis,
    t_end: int,
    max_points: int,
    width: int,
    height: int,
    notes: list[str],
) -> tuple[spec.ChartDict, str]:
    """One panel and its one-line description."""
    lines: pd.DataFrame = d["lines"]
    status: pd.DataFrame = d["status"]
    channels, operator_lines, color, dash = _line_encodings(lines, status)

    y = palette.time_axis("watermark (event time)", lines["watermark"].tolist())

    thinned = scale.thin_steps(lines, "proc_time", "line", max_points // 2)
    if len(thinned) < len(lines):
        notes.append(
            f"{d['name']}: {len(thinned):,} of {len(lines):,} watermark records drawn "
            f"({scale.KEPT})"
        )
    restarts: list[Restart] = d["restarts"]
    vertices, points = _vertices(thinned, x, y, t_end, restarts)
    drawn = {p["watermark"] for p in points}  # the watermarks' texts: MIN / MAX on an edge
    y_axis = palette.edge_named_axis(
        y,
        palette.format_time(palette.LONG_MIN) in drawn,
        palette.format_time(palette.LONG_MAX) in drawn,
    )
    every = idle.spans_of(
        zip(status["seq"], status["kind"], status["proc_time"], status["line"], strict=True),
        restarts,
    )
    spans, k = scale.every_kth(every, max_points)
    if k > 1:
        notes.append(f"{d['name']}: every {scale.nth(k)} of {len(every):,} idle periods shaded")

    n_channels = len(channels)
    chan_spans = [s for s in spans if s.input not in operator_lines]
    op_spans = [s for s in spans if s.input in operator_lines]
    if d["per_operator"]:
        sub = f"{n_channels} operator(s), {len(chan_spans)} idle period(s)"
    else:
        sub = (
            f"{d['name']}: {n_channels} input channel(s), {len(chan_spans)} channel idle period(s)"
        )
        if op_spans:
            sub += f", idle itself {len(op_spans)} time(s)"
        silent: UnrecordedChannel | None = d["silent"]
        if silent is not None:
            notes.append(
                f"{d['name']}: {silent.input} wrote no record (no element, never idle), so "
                f"it is at MIN throughout; from {x.fmt(silent.since)} on every other channel "
                "is above the operator's watermark: it holds it back"
            )
    layers: list[spec.ChartDict] = []
    paused = d["paused"]
    if paused:
        sub += f", {len(paused)} paused span(s) (watermark alignment, bottom strips)"
        layers.append(_paused_layer(paused, x, y, t_end, height, color))
    layers += _idle_layers(chan_spans, op_spans, x, y, t_end, color, whose=d["whose"])
    y_channel = y.channel("y") | {"axis": y_axis}
    layers += _line_layers(vertices, x, y_channel, color, dash, channels, d, notes)
    if points:
        tooltip = [
            _tip("line"),
            {"field": "seq", "type": "quantitative"},
            _tip("proc_time", "processing time"),
            _tip("watermark"),
            _tip("note"),
            _tip("also", "also here"),
        ]
        mark = {"type": "point", "filled": True} | dict(sorted(_point_style(len(points)).items()))
        encoding = {"x": x.channel("x"), "y": y_channel, "color": color, "tooltip": tooltip}
        layers.append(spec.layer(points, mark, encoding))
    plot = Plot(x, y, width, height)
    dots = point_boxes(layers[-1], plot).tolist() if points else []  # (the dots' layer)
    steps = segment_boxes(vertices, plot, ("line", "role", "attempt")).tolist()
    at = [(plot.px(x.clip(r.proc_time)[0]), r.text(x)) for r in restarts]  # (text beside rule)
    places = [_restart_place(px, text, plot, dots, steps) for px, text in at]
    layers += restart_layers(restarts, x, places, time_on_x=True)
    left_out = [r for r, place in zip(restarts, places, strict=True) if place is None]
    notes += [f"{d['name']}: {restart_left_out(r, x)}" for r in left_out]
    return {"layer": layers, "width": width, "height": height}, sub


def _line_layers(
    vertices: list[dict[str, Any]],
    x: TimeAxis,
    y_channel: dict[str, Any],
    color: dict[str, Any],
    dash: dict[str, Any],
    channels: list[str],
    d: dict[str, Any],
    notes: list[str],
) -> list[spec.ChartDict]:
    """The watermark lines of one panel (the operator's thick, its channels' thin); channel
    lines that lie on each other drawn in turn (``watermark_steps.step_lines``; a note says
    which)."""
    layers: list[spec.ChartDict] = []
    encoding = {
        "x": x.channel("x"),
        "y": y_channel,
        "order": {"field": "i", "type": "quantitative"},
        "color": color,
        "strokeDash": dash,
    }
    for role, width_px in (("operator", 3.5), ("channel", 1.8)):
        part = [{k: v for k, v in r.items() if k != "role"} for r in vertices if r["role"] == role]
        if not part:
            continue
        mark = {"type": "line", "interpolate": "linear", "strokeWidth": width_px}
        cut = role == "channel"
        _, drawn, runs = step_lines(
            part, "line", mark, encoding, time_on_x=True, cut=cut, order=channels
        )
        layers += drawn
        if runs is not None:
            notes.append(("" if d["per_operator"] else f"{d['name']}: ") + _coinciding_text(runs))
    return layers


def _coinciding_text(cut: coinciding.Runs) -> str:
    """What the alternating dashes mean, and which lines coincide for how long."""
    together: dict[tuple[str, ...], float] = {}
    for paths, ms in cut.shared.items():
        names = tuple(dict.fromkeys(line for line, _ in paths))
        together[names] = together.get(names, 0.0) + ms
    said = [
        f"{', '.join(names[:-1])} and {names[-1]}: the same for {int(ms):,} ms of processing time"
        for names, ms in together.items()
        if len(names) > 1 and ms
    ]
    steps = [n for names, ms in together.items() if len(names) > 1 and not ms for n in names]
    if steps:
        said.append(f"steps up at one time: {', '.join(dict.fromkeys(steps))}")
    return (
        "lines that lie on each other are drawn in alternating dashes of their colours, "
        f"one dash each ({'; '.join(said)})"
    )


def _line_encodings(
    lines: pd.DataFrame, status: pd.DataFrame
) -> tuple[list[str], list[str], dict[str, Any], dict[str, Any]]:
    """A panel's channels and operator lines in legend order, and its lines' colour and
    dash encodings."""
    # legend (and colour) order: channels by their first record, then those held at MIN
    # before any record (seq -1), so a held line does not shift the other channels' colours
    recorded = lines["seq"] >= 0
    channels = list(dict.fromkeys(lines.loc[recorded & (lines["role"] == "channel"), "line"]))
    for more in (
        status.loc[status["role"] == "channel", "line"],
        lines.loc[~recorded & (lines["role"] == "channel"), "line"],
    ):
        channels += [c for c in dict.fromkeys(more) if c not in channels]
    operator_lines = list(dict.fromkeys(lines.loc[lines["role"] == "operator", "line"]))
    domain = [*operator_lines, *channels]
    colors = [OPERATOR_COLOR] * len(operator_lines) + [
        CHANNEL_COLORS[i % len(CHANNEL_COLORS)] for i in range(len(channels))
    ]
    dashes = [[1, 0]] * len(operator_lines) + [
        CHANNEL_DASHES[i % len(CHANNEL_DASHES)] for i in range(len(channels))
    ]
    legend = {"labelLimit": 260, "symbolOpacity": 1, "symbolStrokeWidth": 3, "symbolType": "stroke"}
    color, dash = (
        {
            "field": "line",
            **legends,
            "scale": {"domain": domain, "range": values},
            "title": "watermark line",
            "type": "nominal",
        }
        for legends, values in (({"legend": legend}, colors), ({}, dashes))
    )
    return channels, operator_lines, color, dash


def _idle_layers(
    chan_spans: list[idle.IdleSpan],
    op_spans: list[idle.IdleSpan],
    x: TimeAxis,
    y: TimeAxis,
    t_end: int,
    color: dict[str, Any],
    *,
    whose: str = "operator",
) -> list[spec.ChartDict]:
    """Each channel's idle spans (full height, in its colour) and the operator's own (a grey
    strip along the top labelled "``whose`` idle": an input gate's is the gate's, all its
    channels idle, not its operator's)."""
    layers: list[spec.ChartDict] = []
    along = {"time_on_x": True, "open_end": t_end}
    if chan_spans:
        places = [{"line": s.input} for s in chan_spans]
        style = {"opacity": IDLE_OPACITY}
        across = {"color": color}
        layers.append(
            idle.strip_layer(chan_spans, x, y, places=places, across=across, style=style, **along)
        )
    if op_spans:
        # the operator's (or input gate's) own idle span: a grey strip along the top, labelled
        across = {"y": {"value": 0}, "y2": {"value": OPERATOR_STRIP}}
        style = {"color": palette.IDLE_COLOR, "opacity": 0.5}
        places = [{"line": s.input} for s in op_spans]
        strip = idle.strip_layer(op_spans, x, y, places=places, across=across, style=style, **along)
        layers.append(strip)
        # labelled where the strip is wide enough to hold the words (≥ 10 % of the axis)
        wide = [r for r in spec.rows(strip) if r["x2"] - r["x"] >= (x.hi - x.lo) / 10]
        if wide:
            mark = {
                "type": "text",
                "align": "left",
                "baseline": "top",
                "dx": 3,
                "dy": OPERATOR_STRIP + 2,
                "fontSize": 10,
            }
            text = {"value": f"{whose} idle"}
            encoding = {"x": x.channel("x"), "y": {"value": 0}, "text": text}
            layers.append(spec.layer(wide, mark, encoding))
    return layers


RESTART_LINE_PX = 14
"""How far apart (px) the heights a restart's text tries beside its rule are: a line."""


def _restart_place(
    px: float, text: str, plot: Plot, dots: list[Box], steps: list[Box]
) -> tuple[str, int] | None:
    """The first place of a restart's ``text`` beside its rule at ``px`` — (align, its top in
    px): right of the rule, then left, a line (``RESTART_LINE_PX``) lower each time down the
    panel — inside it clear of the ``dots`` and ``steps`` (``boxes.first_clear``); its box
    added to ``dots`` (the next restart's text keeps off it); None where none is: its text is
    left out."""
    w, h = CHAR_PX * len(text), LABEL_FONT + 2
    lefts = {"left": px + 3, "right": px - 3 - w}
    tops = range(2, plot.height - h + 1, RESTART_LINE_PX)
    places = [(align, top) for top in tops for align in ("left", "right")]
    tries = [(p, [(lefts[p[0]], p[1], lefts[p[0]] + w, p[1] + h)]) for p in places]
    taken = Taken()
    taken.add_array(dots + steps)
    spot = first_clear(tries, taken, inside=(0, -math.inf, plot.width, math.inf), add=False)
    if spot is None:
        return None
    place, (box,) = spot
    dots.append(box)
    return place


def _paused_layer(
    paused: list[tuple[str, PausedSpan]],
    x: TimeAxis,
    y: TimeAxis,
    t_end: int,
    height: int,
    color: dict[str, Any],
) -> spec.ChartDict:
    """Paused-for-alignment spans: a strip per line along the bottom, in its colour."""
    at = {line: i for i, line in enumerate(dict.fromkeys(line for line, _ in paused))}
    places = [
        {
            "y": height - PAUSED_STRIP * (at[line] + 1),
            "y2": height - PAUSED_STRIP * at[line],
            "line": line,
        }
        for line, _ in paused
    ]
    across = {
        "y": {"axis": None, "field": "y", "scale": None, "type": "quantitative"},
        "y2": {"field": "y2"},
        "color": color,
    }
    spans = [s for _, s in paused]
    return idle.strip_layer(
        spans,
        x,
        y,
        kind="paused",
        time_on_x=True,
        places=places,
        across=across,
        style={"opacity": 0.75},
        open_end=t_end,
    )


def _point_style(n: int) -> dict[str, float]:
    """The dots' style: small and faint when there are many."""
    return {"size": 18, "opacity": 0.8} if n <= 300 else {"size": 8, "opacity": 0.35}


def _tip(field: str, title: str | None = None) -> dict[str, Any]:
    """A nominal tooltip channel of ``field`` (titled ``title``)."""
    return {"field": field, **({} if title is None else {"title": title}), "type": "nominal"}


def _vertices(
    lines: pd.DataFrame,
    x: TimeAxis,
    y: TimeAxis,
    t_end: int,
    restarts: list[Restart] = (),  # type: ignore[assignment]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Step vertices per line and run attempt (``watermark_steps.staircase``), the last held
    to ``t_end``, and the dots (``one_dot_per_place``): a row held at MIN (seq -1) names no
    record, its note says why."""
    groups = list(lines.groupby(["line", "role"], sort=False))
    vertices, points = staircase(
        (
            (
                {"line": line, "role": role},
                g["seq"].tolist(),
                g["proc_time"].tolist(),
                g["watermark"].tolist(),
            )
            for (line, role), g in groups
        ),
        x,
        y,
        restarts,
        time_on_x=True,
        end=t_end,
    )
    held = [note for _, g in groups for note in g["note"].tolist()]
    for p, why in zip(points, held, strict=True):
        del p["kind"]  # (its tooltip names the line)
        if p["seq"] < 0:  # (no record: held at MIN)
            p["seq"] = None
        if p["note"] == "MAX ▶":
            p["note"] = "end of input (MAX), drawn on the top edge"
        p["note"] = why or p["note"]
    return vertices, one_dot_per_place(points)


def one_dot_per_place(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One dot per place (x, y): the operator's (else the first), its ``also`` naming the
    others' ("kafka[1] (seq 7)")."""
    kept: dict[tuple[Any, Any], int] = {}  # place → index of its kept point
    others: dict[tuple[Any, Any], list[int]] = {}
    for i, p in enumerate(points):
        place = (p["x"], p["y"])
        first = kept.get(place)
        if first is None:
            kept[place], others[place] = i, []
        elif p["role"] == "operator" and points[first]["role"] != "operator":
            kept[place] = i
            others[place].append(first)
        else:
            others[place].append(i)
    out = []
    for place, i in sorted(kept.items(), key=lambda item: item[1]):
        p = {k: v for k, v in points[i].items() if k != "role"}
        names = [_named(points[j], p["watermark"]) for j in sorted(others[place])]
        out.append({**p, "also": "; ".join(names)})
    return out


def _named(p: dict[str, Any], watermark: str) -> str:
    """A dot as another's ``also``: its line, seq (or note) and any other watermark."""
    what = [f"seq {p['seq']}" if p["seq"] is not None else p["note"]]
    if p["watermark"] != watermark:
        what.append(f"watermark {p['watermark']}")
    return f"{p['line']} ({', '.join(what)})"
