"""The tables the propagation chart draws: the operators with several input
channels (Flink's ``StatusWatermarkValve``, ``WatermarkOutputMultiplexer``), their channel
records, the operators' watermark and idle / active records, and the idle spans.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import split_subtask
from winviz.trace.channels import CHANNEL_KINDS
from winviz.viz import palette
from winviz.viz.operator_pick import require_records
from winviz.viz.trace_view import TraceInputError, TraceView
from winviz.viz.watermark_steps import is_user_operator

STATUS_KINDS = ("idle", "active")


def channel_operators(view: TraceView) -> list[str]:
    """Operators with several input channels (they wrote channel records), in order of first
    appearance."""
    return view.operators(*CHANNEL_KINDS)


def watermark_operators(view: TraceView) -> list[str]:
    """The user's operators that wrote ``watermark`` records, in order of first appearance
    (the side-output node left out: ``watermark_steps.is_user_operator``)."""
    return [op for op in view.operators("watermark") if is_user_operator(op)]


def finite_watermark_operators(view: TraceView) -> set[str]:
    """Operators with a watermark (their own or a channel's) other than MIN / MAX — the
    end-of-input MAX alone says nothing about how the watermark moved."""
    out: set[str] = set()
    for kind, field in (("watermark", "watermark"), ("channel_watermark", "ts")):
        rows = view.select(kind)
        for op, v in zip(view.column("operator", rows), view.column(field, rows), strict=True):
            if v is not None and not palette.is_off_chart(v):
                out.add(op)
    return out


def pick_operators(
    view: TraceView, operator: str | list[str] | None, notes: list[str]
) -> tuple[list[str], bool]:
    """(operators to draw, whether they have channels); raises
    TraceInputError naming the choices. Operators left out of the default are named in
    ``notes``."""
    require_records(view)
    with_channels = channel_operators(view)
    with_watermarks = watermark_operators(view)
    finite = finite_watermark_operators(view)
    if not finite:
        raise TraceInputError(
            "No watermark in this trace (at most the end-of-input MAX). Watermarks come from "
            "assign_timestamps_and_watermarks(...) on an event-time job; this trace has "
            f"none before the end of input (kinds: {', '.join(sorted(view.counts()))})."
        )
    if operator is None:
        if with_channels:
            return grouped(with_channels), True
        shown = [o for o in with_watermarks if o in finite]
        hidden = [o for o in with_watermarks if o not in finite]
        if hidden:
            notes.append(
                "not drawn (their only watermark is the end-of-input MAX): "
                + ", ".join(map(repr, hidden))
            )
        return grouped(shown), False
    known = list(dict.fromkeys([*with_channels, *with_watermarks]))
    chosen: list[str] = []
    for name in [operator] if isinstance(operator, str) else operator:
        # a logical operator's name selects all its subtasks (name#0, name#1, ...)
        match = [o for o in known if split_subtask(o)[0] == name or o == name]
        if not match:
            raise TraceInputError(
                f"No operator named {name!r} wrote watermark records. "
                f"Choose one of: {', '.join(map(repr, known))}."
            )
        chosen += [o for o in match if o not in chosen]
    return grouped(chosen), True


def grouped(operators: list[str]) -> list[str]:
    """The subtasks of one operator next to each other, in subtask order; operators in order
    of first appearance (of any of their subtasks)."""
    first: dict[str, int] = {}
    for i, op in enumerate(operators):
        first.setdefault(split_subtask(op)[0], i)

    def place(op: str) -> tuple[int, int]:
        name, subtask = split_subtask(op)
        return first[name], -1 if subtask is None else subtask

    return sorted(operators, key=place)


def describe(op: str) -> str:
    """A panel's name: "operator 'm'" or "subtask 1 of 'window'"."""
    name, subtask = split_subtask(op)
    return f"operator {op!r}" if subtask is None else f"subtask {subtask} of {name!r}"


def channel_records(view: TraceView, op: str) -> pd.DataFrame:
    """The channel records of ``op``: seq, kind, proc_time, watermark (the
    channel's ``ts``), channel, input, line (the input's name, with the channel index when
    two channels share a name)."""
    cols = ["seq", "kind", "proc_time", "watermark", "channel", "input", "line"]
    rows = view.select(*CHANNEL_KINDS, operator=op)
    if not len(rows):
        return pd.DataFrame(columns=cols)
    kinds = view.kinds[rows]
    channel, inputs = [], []
    for kind in CHANNEL_KINDS:
        sel = rows[kinds == kind]
        channel += view.detail(kind, "channel", sel).tolist()
        inputs += view.detail(kind, "input", sel).tolist()
    order = np.concatenate([np.flatnonzero(kinds == k) for k in CHANNEL_KINDS])
    frame = pd.DataFrame(
        {
            "seq": rows[order],
            "kind": kinds[order],
            "proc_time": view.column("proc_time", rows[order]),
            "watermark": view.column("ts", rows[order]),
            "channel": [int(c) for c in channel],
            "input": [str(i) for i in inputs],
        }
    )
    frame = frame.sort_values("seq", kind="stable").reset_index(drop=True)
    names = frame.groupby("input")["channel"].nunique()
    shared = set(names[names > 1].index)
    frame["line"] = [
        f"{i} (channel {c})" if i in shared else i
        for i, c in zip(frame["input"], frame["channel"], strict=True)
    ]
    return frame[cols]


def _of_operators(view: TraceView, kinds: tuple[str, ...], ops: list[str]) -> np.ndarray:
    rows = view.select(*kinds)
    if not len(rows):
        return rows
    return rows[np.isin(view.column("operator", rows).astype(str), ops)]


def line_name(op: str, per_operator: bool) -> str:
    return op if per_operator else f"watermark of {op!r}"


def operator_records(
    view: TraceView, kinds: tuple[str, ...], ops: list[str], per_operator: bool
) -> pd.DataFrame:
    """The records of ``kinds`` of ``ops``: seq, kind, operator, proc_time,
    watermark, line (``line_name``)."""
    rows = _of_operators(view, kinds, ops)
    frame = pd.DataFrame(
        {
            "seq": rows,
            "kind": view.kinds[rows],
            "operator": view.column("operator", rows),
            "proc_time": view.column("proc_time", rows),
            "watermark": view.column("watermark", rows),
        }
    )
    frame["line"] = [line_name(op, per_operator) for op in frame["operator"]]
    return frame


def idle_spans(records: pd.DataFrame, idle: str, active: str, t_end: int) -> list[dict[str, Any]]:
    """Idle periods from status records in seq order (kind, proc_time, line):
    ``{"line", "start", "end", "open"}`` from each ``idle`` to the next ``active`` of its
    line, or to ``t_end`` (``open``)."""
    spans: list[dict[str, Any]] = []
    since: dict[str, int] = {}
    for kind, proc, line in zip(
        records["kind"], records["proc_time"], records["line"], strict=True
    ):
        if kind == idle and line not in since:
            since[line] = int(proc)
        elif kind == active and line in since:
            spans.append({"line": line, "start": since.pop(line), "end": int(proc), "open": False})
    for line, start in since.items():
        spans.append({"line": line, "start": start, "end": t_end, "open": True})
    return spans
