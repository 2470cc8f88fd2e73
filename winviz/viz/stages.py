"""``stage_watermarks``: every operator's input and output watermark at one moment.

At a processing time ``at`` (or after trace record ``seq``) each operator (each subtask
``op#i``) is a box with its input channels (latest ``channel_watermark``, idle or not), its
input watermark — for several channels the MIN over the active ones, the MAX over all when
every one is idle (Flink's ``StatusWatermarkValve``, ``CombinedWatermarkStatus``) — and its
output watermark (= input, ``AbstractStreamOperator.processWatermark``; an assigner,
``TimestampsAndWatermarksOperator``, emits its generator's and forwards only MAX). Arrows join
an operator to those it reads from as the trace tells (a channel's ``input``, else the
operator whose equal watermark came last before its first). ``stage_watermark_table`` gives
the same as two tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from winviz.time import MAX, MIN, format_ms
from winviz.trace import TraceRecord, split_subtask
from winviz.trace.channels import Channel, channel_states, gate_owner
from winviz.viz import palette, spec
from winviz.viz.diagram import FIT_PLOT, Arrow, Box, Frame, box_px, diagram
from winviz.viz.flow import trace_records
from winviz.viz.operator_pick import require_records
from winviz.viz.trace_view import TraceInputError, TraceView, open_trace
from winviz.viz.watermark_channels import grouped
from winviz.viz.watermark_steps import is_user_operator

CHART = "stage_watermarks"
KINDS = (
    "watermark",
    "channel_watermark",
    "channel_idle",
    "channel_active",
    "idle",
    "active",
    "restore",
)
OPERATOR_COLUMNS = (
    "operator",
    "stage",
    "subtask",
    "input_watermark",
    "input_rule",
    "output_watermark",
    "idle",
    "assigner",
    "upstream",
)
CHANNEL_COLUMNS = ("operator", "channel", "input", "watermark", "idle", "holds_minimum")
SOURCE_RULE = "a source: no input"
BOX_W, COLUMN_GAP, ROW_GAP, EDGE, LABEL_DROP = 250, 30, 60, 4, 17
"""A box's width, the px between boxes and between rows, around the drawing, and from an
upstream box's bottom to its arrows' labels' foot."""


@dataclass(frozen=True)
class StageWatermarks:
    """The stages after trace record ``seq``: its processing time, one row per operator
    (``OPERATOR_COLUMNS``) and one per input channel (``CHANNEL_COLUMNS``)."""

    seq: int
    proc_time: int | None
    operators: pd.DataFrame
    channels: pd.DataFrame


@palette.public_chart(CHART)
def stage_watermarks(
    trace: Any,
    at: int | None = None,
    *,
    seq: int | None = None,
    start: int | None = None,
    width: int | None = None,
    height: int | None = None,
) -> spec.ChartDict:
    """Each operator's input channels, input and output watermark at processing time ``at``
    (records up to and including it), after trace record ``seq``, or at the end (see the
    module docstring). ``start``: times shown as ms after it (``+303,328``). ``width`` /
    ``height``: of the drawing (default: what the boxes need). Operators go top-down, one
    row per stage, as many side by side as fit. A trace that cannot be drawn gives a message
    card; a wrong ``at`` or ``seq`` raises ``ValueError``."""
    table = _table(open_trace(trace), at, seq)
    if start is not None and start.__class__ is not int:
        raise ValueError(f"start {start!r}: expected an int time (ms) or None")
    return _chart(table, at, start, width, height)


def stage_watermark_table(
    trace: Any, at: int | None = None, *, seq: int | None = None
) -> StageWatermarks:
    """What ``stage_watermarks`` draws, as tables (watermarks as ints: MIN / MAX exact)."""
    return _table(open_trace(trace), at, seq)


def _cut(view: TraceView, at: int | None, seq: int | None) -> int:
    """The position of the last record counted."""
    n = len(view)
    require_records(view)
    if at is not None and seq is not None:
        raise ValueError(f"give at (processing time) or seq, not both: at={at!r}, seq={seq!r}")
    if seq is not None:
        if seq.__class__ is not int or not 0 <= seq < n:
            raise ValueError(f"seq {seq!r}: expected an int record position in 0 … {n - 1}")
        return seq
    if at is None:
        return n - 1
    if at.__class__ is not int:
        raise ValueError(f"at {at!r}: expected an int processing time (ms)")
    times = view.column("proc_time", np.arange(n)).tolist()
    inside = [i for i, t in enumerate(times) if t is not None and t <= at]
    if not inside:
        first = min(t for t in times if t is not None)
        raise ValueError(
            f"at {at}: the trace starts at processing time {first}; expected at ≥ {first}"
        )
    return inside[-1]


def _table(view: TraceView, at: int | None, seq: int | None) -> StageWatermarks:
    """``stage_watermark_table`` of a trace view."""
    cut = _cut(view, at, seq)
    rows = view.select(*KINDS)
    records = trace_records(view, rows)
    generated = set(view.operators("watermark_generated"))
    sources = set(view.operators("arrival"))
    written = view.operators("watermark", "channel_watermark", "channel_idle", "arrival")
    owners = dict.fromkeys(gate_owner(op) or op for op in written)  # (a gate: its operator)
    ops = grouped([op for op in owners if is_user_operator(op)])
    if not len(view.select("watermark", "channel_watermark")):
        raise TraceInputError(
            "No watermark in this trace. Watermarks come from "
            "assign_timestamps_and_watermarks(...) on an event-time job."
        )
    shown = [r for r in records if r.seq <= cut]
    own: dict[str, int] = {}
    idle: dict[str, bool] = {}
    for r in shown:
        if r.kind == "restore":  # every watermark back to MIN, every input active (Channel)
            own, idle = {op: MIN for op in own}, {}
        elif r.kind == "watermark":
            own[r.operator] = r.ts if r.ts is not None else MIN
        elif r.kind in ("idle", "active"):
            idle[r.operator] = r.kind == "idle"
    channels: dict[str, dict[int, Channel]] = {}
    states = channel_states(r for r in shown if r.kind not in ("watermark", "idle", "active"))
    for (op, number), state in states.items():
        channels.setdefault(op, {})[number] = state
    upstream = _upstreams(records, ops, generated, sources, channels)
    op_rows, ch_rows = [], []
    for op in ops:
        out, chans, ups = own.get(op, MIN), channels.get(op, {}), upstream.get(op, [])
        if chans:
            active = [c for c in chans.values() if not c.idle]
            if active:
                rule = "MIN over the active channels"
                below = [c for c in active if c.watermark < out]
                if any(not c.aligned for c in below):  # (a StatusWatermarkValve's channel)
                    rule += " (one below it is not aligned yet: it rejoins once it catches up)"
                elif below:  # a CombinedWatermarkStatus: every active input is in its minimum
                    rule += " (one below it: the watermark only rises, it waits for that one)"
            else:
                rule = "all channels idle: MAX over them"
            inp = out
        elif op in generated or op in sources:
            inp = own.get(ups[0], MIN) if ups else None
            rule = (
                SOURCE_RULE
                if op in sources
                else "ignored except MAX (TimestampsAndWatermarksOperator)"
            )
        else:
            inp = out
            rule = f"from {ups[0]!r}" if ups else "one input (not named in the trace)"
        for number, c in sorted(chans.items()):
            holds = not c.idle and c.watermark == inp
            ch_rows.append((op, number, c.input, c.watermark, c.idle, holds))
        assigner = op in generated
        op_rows.append(
            (op, *split_subtask(op), inp, rule, out, idle.get(op, False), assigner, tuple(ups))
        )
    operators = pd.DataFrame(op_rows, columns=list(OPERATOR_COLUMNS), dtype=object)
    channels_frame = pd.DataFrame(ch_rows, columns=list(CHANNEL_COLUMNS), dtype=object)
    return StageWatermarks(
        cut, view.column("proc_time", np.array([cut])).tolist()[0], operators, channels_frame
    )


def _upstreams(
    records: list[TraceRecord],
    ops: list[str],
    generated: set[str],
    sources: set[str],
    channels: dict[str, dict[int, Channel]],
) -> dict[str, list[str]]:
    """Each operator's upstream operators, as the trace tells them (module docstring)."""
    known = set(ops)
    out: dict[str, list[str]] = {}
    # channel inputs: an operator's name, or a partition name[p] of a source
    named: dict[str, list[str]] = {}
    for r in records:
        if r.kind in ("channel_watermark", "channel_idle", "channel_active"):
            name = str(r.detail[1])
            base = name.split("[", 1)[0] if name.endswith("]") else name
            at = gate_owner(r.operator) or r.operator  # (a gate's upstream: its operator's)
            own = split_subtask(at)[1]
            if base not in known and own is not None and f"{base}#{own}" in known:
                base = f"{base}#{own}"  # a partition read by this subtask's own reader
            if base in known and base != at:
                named.setdefault(at, [])
                if base not in named[at]:
                    named[at].append(base)
    watermarks = [r for r in records if r.kind == "watermark"]
    for op in ops:
        if op in named:
            out[op] = named[op]
            continue
        if op in sources and op not in generated:
            continue
        if op in channels:
            continue
        mine = [r for r in watermarks if r.operator == op]
        if op in generated:
            mine = [r for r in mine if r.ts == MAX]
        else:
            mine = [r for r in mine if r.ts is not None and r.ts != MIN]
        if not mine:
            continue
        first = mine[0]
        before = [
            r
            for r in watermarks
            if r.seq < first.seq
            and r.operator != op
            and r.ts == first.ts
            and r.proc_time == first.proc_time
            and is_user_operator(r.operator)
        ]
        if before:
            out[op] = [before[-1].operator]
    return out


# -- chart --------------------------------------------------------------------------------------


def _depths(ops: list[str], upstream: dict[str, list[str]]) -> dict[str, int]:
    """The stage (row) of each operator: one under its deepest upstream (0: none); one whose
    upstream is not told one under the operator before it, beside its own subtasks."""
    depth = dict.fromkeys(ops, 0)
    for _ in ops:  # longest paths: at most one pass per operator
        changed = False
        for i, op in enumerate(ops):
            ups = upstream.get(op)
            if ups is None:
                stage = split_subtask(op)[0] == split_subtask(ops[i - 1])[0]  # its subtasks
                new = depth[ops[i - 1]] + (0 if stage else 1) if i else 0
            else:
                new = 1 + max((depth[u] for u in ups if u in depth), default=-1)
            if new != depth[op]:
                depth[op], changed = new, True
        if not changed:
            break
    return depth


def _lines(row: Any, chans: pd.DataFrame, fmt: Any = format_ms) -> list[str]:
    """A box's text: its channels, its input watermark and rule, its output watermark."""
    lines = []
    for c in chans.itertuples():
        state = ", idle" if c.idle else (", holds the MIN" if c.holds_minimum else "")
        lines.append(f"ch {c.channel} {c.input}: {fmt(c.watermark)}{state}")
    if row.input_rule == SOURCE_RULE:
        lines.append(SOURCE_RULE)
    elif row.assigner:
        ups = row.upstream
        origin = f" from {ups[0]!r}" if ups else ""
        lines.append(f"input: {fmt(row.input_watermark)}{origin}, ignored")
        lines.append("(only MAX is forwarded)")
    elif len(chans):
        lines.append(f"input: {fmt(row.input_watermark)}")
        lines.append(f"= {row.input_rule}")
    else:
        lines.append(f"input: {fmt(row.input_watermark)}, {row.input_rule}")
    own = ", its generator's" if row.assigner else ""
    lines.append(f"output: {fmt(row.output_watermark)}{own}" + (" (idle)" if row.idle else ""))
    return lines


def relative(start: int | None) -> Any:
    """How a time is printed: MIN / MAX by name, else ``t - start`` (``+303,328``) or ``t``."""

    def fmt(value: int | None) -> str:
        if start is None or value is None or value in (MIN, MAX):
            return format_ms(value)
        return f"{value - start:+,}"

    return fmt


def _chart(
    table: StageWatermarks,
    at: int | None,
    start: int | None,
    width: int | None,
    height: int | None,
) -> spec.ChartDict:
    fmt = relative(start)
    ops_frame = table.operators
    ops = ops_frame["operator"].tolist()
    upstream = dict(zip(ops, (list(u) for u in ops_frame["upstream"]), strict=True))
    sources = set(ops_frame.loc[ops_frame["input_rule"] == SOURCE_RULE, "operator"])
    # what feeds each operator is told: its upstreams, or none (a source, or an operator whose
    # channels name no operator: they start at the top)
    told = [op for op in ops if upstream[op] or op in sources or _has_channels(table, op)]
    depth = _depths(ops, {op: upstream[op] for op in told})
    boxes = _layout(table, depth, fmt, width)
    by_op = dict(zip(ops_frame["operator"], ops_frame["output_watermark"], strict=True))
    box = {b.id: b for b in boxes}
    arrows = [  # each label just under its upstream box, left of an arrow going left
        Arrow(
            u,
            op,
            fmt(by_op[u]),
            on=True,
            at=min(0.5, LABEL_DROP / (box[op].y - box[op].h / 2 - box[u].y - box[u].h / 2)),
            right=box[op].x < box[u].x,
        )
        for op in ops
        for u in upstream[op]
        if u in by_op
    ]
    w = max(b.x + b.w / 2 for b in boxes)
    h = max(b.y + b.h / 2 for b in boxes)
    frame = Frame(
        -EDGE, w + EDGE, -EDGE, h + EDGE, width or int(w + 2 * EDGE), height or int(h + 2 * EDGE)
    )
    chart = diagram(boxes, arrows, frame, None)
    moment = (
        f"at processing time {fmt(at)}: after trace record {table.seq}"
        if at is not None
        else f"after trace record {table.seq} (processing time {fmt(table.proc_time)})"
    )
    unknown = [op for op in ops if op not in told]
    notes = [
        f"{moment}; on each arrow: the upstream operator's output watermark"
        + ("" if start is None else f"; times in ms after {start}"),
        "several input channels: input = MIN over the active channels, every channel idle: "
        "MAX over all (StatusWatermarkValve, CombinedWatermarkStatus)",
        "output = input, forwarded after the operator's timers fired "
        "(AbstractStreamOperator.processWatermark); an assigner emits its generator's own "
        "(TimestampsAndWatermarksOperator)",
    ]
    if unknown:
        notes.append(
            "the trace does not tell what feeds " + ", ".join(map(repr, unknown)) + " (no arrow)"
        )
    heading = "Input and output watermarks per stage"
    return palette.finish(chart, name=CHART, notes=notes, heading=heading)


def _layout(
    table: StageWatermarks, depth: dict[str, int], fmt: Any, width: int | None
) -> list[Box]:
    """The operators' boxes (px as data units): a row per ``depth``, as many side by side as
    fit ``width`` (default ``FIT_PLOT``), each row centred and as high as its highest box."""
    per_row = max(1, int((width or FIT_PLOT) - 2 * EDGE + COLUMN_GAP) // (BOX_W + COLUMN_GAP))
    levels: dict[int, list[Any]] = {}
    for row in table.operators.itertuples():
        levels.setdefault(depth[row.operator], []).append(row)
    rows = [
        ops[i : i + per_row]
        for _, ops in sorted(levels.items())
        for i in range(0, len(ops), per_row)
    ]
    across = max(len(r) for r in rows) * (BOX_W + COLUMN_GAP) - COLUMN_GAP
    boxes: list[Box] = []
    top = 0.0
    for row_ops in rows:
        left = (across - (len(row_ops) * (BOX_W + COLUMN_GAP) - COLUMN_GAP)) / 2
        drawn = []
        for row in row_ops:
            chans = table.channels[table.channels["operator"] == row.operator]
            full = _lines(row, chans, fmt)
            title = (
                row.operator
                if row.subtask is None or row.subtask != row.subtask
                else f"{row.stage} (subtask {int(row.subtask)})"
            )
            drawn.append((row.operator, full, *box_px(title, full, BOX_W)))
        high = max(h for *_, h in drawn)
        for i, (op, full, heading, text, h) in enumerate(drawn):
            x = left + i * (BOX_W + COLUMN_GAP) + BOX_W / 2
            tip = "\n".join(full)
            boxes.append(Box(op, x, top + h / 2, BOX_W, h, heading, text, on=True, tip=tip))
        top += high + ROW_GAP
    return boxes


def _has_channels(table: StageWatermarks, op: str) -> bool:
    """Whether the operator has input channels."""
    return bool(table.channels["operator"].eq(op).any())
