"""The tables the propagation chart draws: the operators with several input
channels (Flink's ``StatusWatermarkValve``, ``WatermarkOutputMultiplexer``), their channel
records, the operators' watermark and idle / active records.
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


def pick_operators(
    view: TraceView, operator: str | list[str] | None, notes: list[str]
) -> tuple[list[str], bool]:
    """(operators to draw, whether they have channels); raises
    TraceInputError naming the choices. Operators left out of the default are named in
    ``notes``."""
    require_records(view)
    with_channels = view.operators(*CHANNEL_KINDS)
    with_watermarks = [op for op in view.operators("watermark") if is_user_operator(op)]
    # operators with a watermark (their own or a channel's) other than MIN / MAX: the
    # end-of-input MAX alone says nothing about how the watermark moved
    finite: set[str] = set()
    for kind, field in (("watermark", "watermark"), ("channel_watermark", "ts")):
        rows = view.select(kind)
        for op, v in zip(view.column("operator", rows), view.column(field, rows), strict=True):
            if v is not None and not palette.is_off_chart(v):
                finite.add(op)
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
    fields = details(view, rows, CHANNEL_KINDS, ("channel", "input"))
    frame = _frame(view, rows, "ts").assign(
        channel=[int(c) for c in fields["channel"].tolist()],
        input=[str(i) for i in fields["input"].tolist()],
    )
    names = frame.groupby("input")["channel"].nunique()
    shared = set(names[names > 1].index)
    frame["line"] = [
        f"{i} (channel {c})" if i in shared else i
        for i, c in zip(frame["input"], frame["channel"], strict=True)
    ]
    return frame[cols]


def details(
    view: TraceView, rows: np.ndarray, kinds: tuple[str, ...], names: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """The detail fields ``names`` of ``rows`` (records of ``kinds``), in the rows' order."""
    kind_of = view.kinds_of(rows)
    order = np.concatenate([np.flatnonzero(kind_of == k) for k in kinds])
    back = np.argsort(order, kind="stable")  # (the fields are gathered kind by kind)
    return {
        name: np.concatenate([view.detail(k, name, rows[kind_of == k]) for k in kinds])[back]
        for name in names
    }


def line_name(op: str, per_operator: bool) -> str:
    return op if per_operator else f"watermark of {op!r}"


def operator_records(
    view: TraceView, kinds: tuple[str, ...], ops: list[str], per_operator: bool
) -> pd.DataFrame:
    """The records of ``kinds`` of ``ops``: seq, kind, operator, proc_time,
    watermark, line (``line_name``)."""
    parts = [view.select(*kinds, operator=op) for op in ops]
    rows = np.sort(np.concatenate([np.zeros(0, dtype=np.int64), *parts]))
    frame = _frame(view, rows, "watermark", operator=view.column("operator", rows))
    frame["line"] = [line_name(op, per_operator) for op in frame["operator"]]
    return frame


def _frame(view: TraceView, rows: np.ndarray, watermark: str, **more: Any) -> pd.DataFrame:
    """The records at ``rows`` as a table: seq, kind, ``more``, proc_time and watermark (their
    ``watermark`` field: a channel's is its ``ts``)."""
    return pd.DataFrame(
        {
            "seq": rows,
            "kind": view.kinds_of(rows),
            **more,
            "proc_time": view.column("proc_time", rows),
            "watermark": view.column(watermark, rows),
        }
    )
