"""Questions a learner asks, answered from the trace alone.

* ``why_fired(trace, key, window)`` — each firing of a window: what caused it (an element, an
  event-time timer at t, a processing-time timer, the end of input), the watermark then, and
  the input channel or partition whose watermark advance raised it.
* ``why_not_fired(trace, key, window)`` — why a window has not fired (``trace.until(t)``
  asks it of the run as it stood at processing time t): no element reached it, or
  the operator's watermark is stuck below the window's max timestamp because one input channel
  or partition holds the minimum (idle or not, and what ``with_idleness`` would change), or the
  trigger never said FIRE.
* ``why_dropped(trace, index)`` — what happened to the source record at ``index``: on time, late
  but accepted (its timestamp ≤ the watermark while a window was still within allowed
  lateness), dropped, or sent to the side output, window by window against the cleanup time.

Words are Flink's: an element is *late* when its timestamp ≤ the operator's current watermark;
it is still accepted while one of its windows is not past cleanup (max timestamp + allowed
lateness), and dropped (or side output) only when every window is. A window fires on event time
when the watermark ≥ its max timestamp (end − 1).

Each returns an ``Answer``: a sentence and a short table (a pandas DataFrame). They read the
trace's records only (``winviz.trace.schema`` states the order rules they rely on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.batch_execution import END_OF_KEY
from winviz.time import MAX, MIN
from winviz.trace import Trace
from winviz.trace.causes import firing_causes
from winviz.trace.channels import CHANNEL_KINDS, unrecorded_channel
from winviz.trace.columns import TraceColumns
from winviz.trace.paused import alignment_note

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Answer:
    """A question's answer: ``sentence`` and ``table``. Shown as plain text."""

    question: str
    sentence: str
    table: pd.DataFrame

    def __repr__(self) -> str:
        body = "" if self.table.empty else "\n\n" + self.table.to_string(index=False)
        return f"{self.question}\n{self.sentence}{body}"


def _frame(rows: Any = None) -> pd.DataFrame:
    import pandas as pd  # imported when a question is asked: the engine needs no pandas

    return pd.DataFrame(rows)


def _missing(value: Any) -> bool:
    """A missing cell of a table (``<NA>`` in a nullable column)."""
    import pandas as pd

    return bool(pd.isna(value))


def _time(t: int | None) -> str:
    if t is None:
        return "none"
    if t == MAX:
        return "MAX (end of input)"
    if t == -(2**63):
        return "MIN"
    return str(t)


def _window_of(window: Any) -> tuple[int, int]:
    bounds = (
        (window.start, window.end)
        if hasattr(window, "start") and window.start is not None
        else window
    )
    if (
        isinstance(bounds, (tuple, list))
        and len(bounds) == 2
        and all(b.__class__ is int for b in bounds)
    ):
        return bounds[0], bounds[1]
    raise TypeError(f"window {window!r}: expected a TimeWindow or a (start, end) pair of ints")


def _trace_of(source: Any) -> Trace:
    """The trace of a ``Trace`` or of a result with ``.trace``; a clear error for anything
    else."""
    trace = source if isinstance(source, Trace) else getattr(source, "trace", None)
    if not isinstance(trace, Trace):
        raise TypeError(
            f"expected a winviz Trace or a job result with .trace, got {type(source).__name__}"
            + (" (the job ran with trace=False)" if hasattr(source, "trace") else "")
        )
    return trace


def _window_rows(
    trace: Trace, key: Any, window: tuple[int, int], operator: str | None, *kinds: str
) -> np.ndarray:
    rows = trace.rows_where(kind=kinds or None, operator=operator, key=key, window=window)
    return rows


def _operator_of(trace: Trace, key: Any, window: tuple[int, int], operator: str | None) -> str:
    if operator is not None:
        return operator
    rows = _window_rows(trace, key, window, None, "assigned", "fired", "skipped_late_window")
    if len(rows):
        return trace.records_at(rows[:1])[0].operator
    ops = trace.operators("assigned", "fired", "late_dropped", "skipped_late_window")
    if not ops:
        raise ValueError("the trace has no window operator (no assigned / fired records)")
    return ops[0]


# -- why did it fire ----------------------------------------------------------------------------


def why_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Each firing of ``window`` for ``key``: its cause and the watermark advance behind it."""
    trace = _trace_of(trace)
    bounds = _window_of(window)
    question = f"Why did window [{bounds[0]}, {bounds[1]}) of key {key!r} fire when it did?"
    op = _operator_of(trace, key, bounds, operator)
    c = trace.columns()
    fired = _window_rows(trace, key, bounds, op, "fired")
    if not len(fired):
        return Answer(
            question,
            f"It never fired at {op!r}; ask why_not_fired(trace, {key!r}, {list(bounds)}).",
            _frame(),
        )
    calls, timer_rows = firing_causes(c, fired)
    marks = trace.rows_where(kind="watermark", operator=op)
    rows = []
    for record, call, t in zip(
        trace.records_at(fired), calls.tolist(), timer_rows.tolist(), strict=True
    ):
        timer = trace.records_at([t])[0] if t >= 0 else None
        raised_by = ""
        watermark = _time(record.watermark)
        if call == "on_event_time" and timer is not None:
            mark = marks[marks < t]
            cause = "end of input" if timer.watermark == MAX else f"event-time timer at {timer.ts}"
            if len(mark):
                raised_by = _raised_by(trace, c, int(mark[-1]))
                if trace.records_at(mark[-1:])[0].detail == END_OF_KEY:  # (BATCH mode)
                    cause, watermark = "end of key", "MAX (end of key)"
                    raised_by = (
                        f"the end of key {timer.key!r}: in BATCH mode a key's watermark jumps "
                        "to MAX once its records are done (winviz.batch_execution)"
                    )
        elif call == "on_processing_time" and timer is not None:
            cause = f"processing-time timer at {timer.ts}"
        elif call == "on_element":
            cause = "an element (the trigger fired on it)"
        elif call == "on_merge":
            cause = "a session merge"
        else:
            cause = call or "?"
        _result, pane, timing, _count = record.detail
        rows.append(
            {
                "seq": record.seq,
                "proc_time": record.proc_time,
                "watermark": watermark,
                "cause": cause,
                "raised by": raised_by,
                "pane": pane,
                "timing": timing,
            }
        )
    table = _frame(rows)
    first = rows[0]
    max_ts = bounds[1] - 1
    sentence = (
        f"It fired {len(rows)} time(s) at {op!r}. The first firing, at processing time "
        f"{first['proc_time']}, was caused by {first['cause']}"
        + (
            f": the watermark reached {first['watermark']} ≥ max timestamp {max_ts}"
            if first["cause"].startswith(("event-time", "end of"))
            else ""
        )
        + (f", raised by {first['raised by']}." if first["raised by"] else ".")
    )
    return Answer(question, sentence, table)


def _raised_by(trace: Trace, c: TraceColumns, mark_row: int) -> str:
    """Which input raised the watermark record at ``mark_row``: the latest channel or
    partition watermark before it at the same processing time, else the generator."""
    proc = c.proc_time.get(mark_row)
    if c.ts.get(mark_row) == MAX:
        return "the end of input (every source emits the MAX watermark when it finishes)"
    channels = trace.rows_where(
        kind=("channel_watermark", "channel_idle", "channel_active", "watermark_generated")
    )
    channels = channels[channels < mark_row]
    if not len(channels):
        return ""
    r = trace.records_at(channels[-1:])[0]
    if r.proc_time != proc:
        return ""
    if r.kind == "channel_watermark":
        channel, name = r.detail
        return f"{name} (channel {channel} of {r.operator!r}) advancing to {_time(r.ts)}"
    if r.kind == "channel_idle":
        channel, name = r.detail
        return (
            f"{name} (channel {channel} of {r.operator!r}) going idle: the minimum then ignores it"
        )
    if r.kind == "channel_active":
        channel, name = r.detail
        return f"{name} (channel {channel} of {r.operator!r}) becoming active again"
    return f"the watermark generator of {r.operator!r} emitting {_time(r.ts)}"


# -- why has it not fired -----------------------------------------------------------------------


def why_not_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Why ``window`` has not fired for ``key`` (by the end of the trace)."""
    trace = _trace_of(trace)
    bounds = _window_of(window)
    max_ts = bounds[1] - 1
    question = f"Why has window [{bounds[0]}, {bounds[1]}) of key {key!r} not fired?"
    op = _operator_of(trace, key, bounds, operator)
    fired = _window_rows(trace, key, bounds, op, "fired")
    if len(fired):
        return Answer(
            question,
            f"It did fire, {len(fired)} time(s), at {op!r}: ask why_fired.",
            _frame(),
        )
    assigned = _window_rows(trace, key, bounds, op, "assigned")
    skipped = _window_rows(trace, key, bounds, op, "skipped_late_window")
    marks = trace.records("watermark", operator=op)
    wm = marks[-1].ts if marks else None
    if not len(assigned):
        why = (
            f"{len(skipped)} element(s) came for it after it was past cleanup and were not added"
            if len(skipped)
            else "no element of that key was ever assigned to it"
        )
        return Answer(
            question, f"It has no contents at {op!r}: {why}." + alignment_note(trace), _frame()
        )
    if wm is not None and wm >= max_ts:
        triggers = [r.detail for r in trace.records("trigger", operator=op, key=key, window=bounds)]
        return Answer(
            question,
            f"The watermark ({_time(wm)}) is past its max timestamp {max_ts}, but the trigger "
            f"never returned FIRE (its calls: {triggers[-5:]}); the trigger decides, not the "
            "watermark, for GlobalWindows or a custom trigger.",
            _frame(),
        )
    table = _channel_table(trace)
    sentence = (
        f"The watermark of {op!r} is stuck at {_time(wm)}, below the window's max timestamp "
        f"{max_ts}: it fires once the watermark ≥ {max_ts}."
    )
    if not table.empty:
        active = table[~table["idle"]]
        holder = (active if not active.empty else table).sort_values("watermark").iloc[0]
        channel = (
            f"channel {holder['channel']} of {holder['operator']!r}"
            if not _missing(holder["channel"])
            else f"a channel of {holder['operator']!r} that wrote no record"
        )
        advanced = (
            f"last advanced at processing time {holder['last_advanced']}"
            if not _missing(holder["last_advanced"])
            else "never advanced (the trace has no watermark of it)"
        )
        sentence += (
            f" The minimum is held by {holder['input']} ({channel}) at "
            f"{_time(int(holder['watermark']))}, {advanced}"
            + (
                "; it is idle."
                if holder["idle"]
                else "; it is not idle, so it holds everyone back: with_idleness(t) would mark "
                "it idle after t ms without records and let the other inputs advance the "
                "watermark (and may make its later records late)."
            )
        )
    else:
        sentence += (
            " The operator has one input: no later event raised the generator's watermark "
            "(max timestamp seen − bound − 1) that far."
        )
    sentence += alignment_note(trace)  # a source held back by watermark alignment
    return Answer(question, sentence, table)


def _channel_table(trace: Trace) -> pd.DataFrame:
    """The last watermark and idleness of every input channel or partition in the trace: a
    channel is at MIN until its first watermark record, and a channel that wrote no record at
    all is found by ``winviz.trace.channels.unrecorded_channel``."""
    state: dict[tuple[str, int | None], dict[str, Any]] = {}
    per_operator: dict[str, list[tuple[Any, ...]]] = {}
    for r in trace.records(*CHANNEL_KINDS, "watermark"):
        if r.kind == "watermark":
            if r.operator in per_operator:
                per_operator[r.operator].append(
                    (r.seq, r.kind, r.proc_time, r.watermark, r.watermark, None, None)
                )
            continue
        channel, name = r.detail
        value = r.ts if r.kind == "channel_watermark" else None
        per_operator.setdefault(r.operator, []).append(
            (r.seq, r.kind, r.proc_time, value, r.watermark, channel, name)
        )
        entry = state.setdefault(
            (r.operator, channel),
            {"operator": r.operator, "channel": channel, "input": name, "watermark": MIN,
             "last_advanced": None, "idle": False},
        )  # fmt: skip
        if r.kind == "channel_watermark":
            entry["watermark"], entry["last_advanced"] = r.ts, r.proc_time
        else:
            entry["idle"] = r.kind == "channel_idle"
    for op, records in per_operator.items():
        sink = len(trace.rows_where(kind="sink", operator=op)) > 0
        silent = unrecorded_channel(op, records, sink=sink)
        if silent is not None:
            state[(op, None)] = {
                "operator": op, "channel": silent.channel, "input": silent.input,
                "watermark": MIN, "last_advanced": None, "idle": False,
            }  # fmt: skip
    return _typed(_frame(list(state.values())), _CHANNEL_TYPES)


# the channel table's columns: a channel without records has no index nor time it advanced
# (<NA>, the numbers staying ints: a float column would show 1199.0)
_CHANNEL_TYPES = {
    "operator": object, "channel": "Int64", "input": object, "watermark": "int64",
    "last_advanced": "Int64", "idle": bool,
}  # fmt: skip


def _typed(frame: pd.DataFrame, types: dict[str, Any]) -> pd.DataFrame:
    """``frame`` with these column types (an empty frame as it is)."""
    return frame if frame.empty else frame.astype(types)


# -- why was it dropped -------------------------------------------------------------------------


def why_dropped(trace: Trace, index: int, *, source: str | None = None) -> Answer:
    """What became of the source record at ``index``: on time, late but accepted, dropped or
    side output, window by window."""
    trace = _trace_of(trace)
    if index.__class__ is not int:
        raise TypeError(f"index {index!r}: expected the int index of a source record")
    arrivals = [
        r
        for r in trace.records("arrival", operator=source)
        if isinstance(r.detail, tuple) and r.detail[1] == index
    ]
    question = f"What happened to source record {index}?"
    if not arrivals:
        raise ValueError(f"no arrival record with index {index} in the trace")
    arrival = arrivals[0]
    value = arrival.detail[0]
    c = trace.columns()
    elements = trace.rows_where(kind="element")
    elements = elements[elements > arrival.seq]
    element = next(
        (r for r in trace.records_at(elements[:64]) if _carries(r.detail, value)),
        None,
    )
    if element is None:
        return Answer(question, "It never reached a keyed operator.", _frame())
    op = element.operator
    group = trace.rows_where(
        kind=(
            "element",
            "assigned",
            "skipped_late_window",
            "late_dropped",
            "side_output",
            "buffered",
        ),
        operator=op,
    )
    after = group[group > element.seq]
    nxt = trace.rows_where(kind="element", operator=op)
    nxt = nxt[nxt > element.seq]
    end = int(nxt[0]) if len(nxt) else len(c)
    own = trace.records_at(after[after < end])
    wm, ts = element.watermark, element.ts
    kinds = {r.kind for r in own}
    if "buffered" in kinds or (
        kinds & {"late_dropped", "side_output"} and not kinds & {"assigned", "skipped_late_window"}
    ):  # no windows: an interval join (winviz.operators.interval_join)
        return Answer(question, _interval_join_fate(trace, op, element, end, kinds), _frame())
    lateness = _allowed_lateness(trace, op)
    rows = []
    for r in own:
        if r.kind not in ("assigned", "skipped_late_window"):
            continue
        w = r.window
        w_max = w.max_timestamp() if hasattr(w, "max_timestamp") else MAX
        cleanup = w_max + lateness if lateness is not None and w_max != MAX else None
        rows.append(
            {
                "window": repr(w),
                "max timestamp": w_max,
                "cleanup time": cleanup,
                "watermark": _time(wm),
                "outcome": "added" if r.kind == "assigned" else "not added: past cleanup",
            }
        )
    table = _frame(rows)
    is_late = ts is not None and wm is not None and ts <= wm
    at = f"at {op!r} (timestamp {ts}, watermark {_time(wm)} at arrival)"
    if "late_dropped" in kinds:
        sentence = (
            f"Dropped {at}: it is late (timestamp ≤ watermark) and every window it belongs to "
            "is past cleanup (max timestamp + allowed lateness ≤ watermark); counted in "
            "num_late_records_dropped."
        )
    elif "side_output" in kinds:
        tag = next(r.detail[0] for r in own if r.kind == "side_output")
        sentence = (
            f"Sent to the side output {tag!r} {at}: late, and every window it belongs to is "
            "past cleanup."
        )
    elif is_late:
        sentence = (
            f"Late but accepted {at}: its timestamp ≤ the watermark, but a window it belongs to "
            "is still within allowed lateness (not past cleanup), so it was added and that "
            "window fires again (a late firing)."
        )
    else:
        sentence = f"On time {at}: its timestamp > the watermark; it was added to its windows."
    return Answer(question, sentence, table)


def _carries(detail: Any, value: Any) -> bool:
    """Whether an element record's value is ``value``, or a window join's ``TaggedUnion`` of it
    (``winviz.joins``: the window operator of a join holds its inputs' records tagged)."""
    if detail is value or detail == value:
        return True
    if hasattr(detail, "is_one"):
        inner = detail.one if detail.is_one else detail.two
        return inner is value or inner == value
    return False


def _interval_join_fate(trace: Trace, op: str, element: Any, end: int, kinds: set[str]) -> str:
    """What an interval join did with an element (Flink's ``IntervalJoinOperator``): below
    the watermark it is late (``isLate``: timestamp < watermark), not joined and dropped or sent
    to the side output; else buffered, joined with the other input's buffered elements within
    the bounds, and removed by its cleanup timer."""
    at = f"at {op!r} (timestamp {element.ts}, watermark {_time(element.watermark)} at arrival)"
    if "late_dropped" in kinds or "side_output" in kinds:
        where = (
            "dropped"
            if "late_dropped" in kinds
            else "sent to the side output "
            + repr(
                next(
                    r.detail[0]
                    for r in trace.records("side_output", operator=op)
                    if r.seq > element.seq
                )
            )
        )
        return (
            f"Late {at}: an interval join takes no element whose timestamp is below its "
            f"watermark (Flink's IntervalJoinOperator.isLate: timestamp < watermark), so it was "
            f"joined with nothing and {where}."
        )
    own = [r for r in trace.records("joined", "timer_registered", operator=op)]
    own = [r for r in own if element.seq < r.seq < end]
    pairs = sum(r.kind == "joined" for r in own)
    cleanup = next((r.ts for r in own if r.kind == "timer_registered"), None)
    return (
        f"Buffered {at}: not below the watermark (Flink's isLate is timestamp < watermark), so "
        f"it was joined with {pairs} buffered element(s) of the other input on arrival and "
        f"stays buffered for later ones until its cleanup timer at {_time(cleanup)} fires."
    )


def _allowed_lateness(trace: Trace, operator: str) -> int | None:
    """The operator's allowed lateness, read off a cleanup timer (cleanup − max timestamp);
    0 when its cleanup timers are its max timestamps; None when the trace cannot tell."""
    for r in trace.records("cleanup", operator=operator)[:1]:
        return int(r.detail) - r.window.max_timestamp()
    regs = trace.records("timer_registered", operator=operator)
    diffs = {
        r.ts - r.window.max_timestamp()
        for r in regs[:200]
        if hasattr(r.window, "max_timestamp") and r.window.start is not None
    }
    diffs.discard(0)
    return min(diffs) if diffs else (0 if regs else None)
