"""``why_fired``: each firing of a window, its cause and what raised the watermark (Flink's
``WindowOperator.onEventTime`` / ``onElement`` and ``StatusWatermarkValve``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from winviz.batch_execution import END_OF_KEY
from winviz.time import MAX, MIN
from winviz.trace import Trace
from winviz.trace import vocabulary as words
from winviz.trace.causes import fired_by, firing_causes, timer_domains
from winviz.trace.restores import is_rolled_back, kept_before, rolled_back, started_from
from winviz.why.claims import Firing, NeverFired
from winviz.why.reading import row_before, table_frame, time_text, window_asked
from winviz.why.render import Answer, cause_text, firing_order, firing_watermark


def why_fired(trace: Trace, key: Any, window: Any, *, operator: str | None = None) -> Answer:
    """Each firing of ``window`` for ``key``: its cause, first firing or re-firing, late
    firing or not, and the watermark advance behind it."""
    trace, bounds, op, fired = window_asked(trace, key, window, operator)
    question = f"Why did window [{bounds[0]}, {bounds[1]}) of key {key!r} fire when it did?"
    if not len(fired):
        return Answer(question, (NeverFired(op, key, bounds),), table_frame())
    claims = firings_of(trace, op, bounds[1] - 1, fired)
    rows = [
        {
            "seq": f.seq,
            "proc_time": f.proc_time,
            "watermark": firing_watermark(f),
            "cause": cause_text(f),
            "raised by": f.raised_by,
            "firing": firing_order(f, rolled_back=f.rolled_back),
            "late firing": f.late_firing,
        }
        for f in claims
    ]
    return Answer(question, tuple(claims), table_frame(rows))


def firings_of(
    trace: Trace, op: str, max_ts: int, fired: np.ndarray, *, history: np.ndarray | None = None
) -> list[Firing]:
    """The ``Firing`` claims of one window's ``fired`` rows (``history``: all its ``fired`` rows,
    by default ``fired``). Its earlier firings are those the run still keeps when it fires: a
    restore rolls back the firings after the checkpoint it restores (``restores.rolled_back``)."""
    history = fired if history is None else history
    spans = rolled_back(trace)
    snapshot = started_from(trace)
    c = trace.columns()
    calls, timer_rows = firing_causes(c, fired)
    _, named, event = timer_domains(c, timer_rows)
    records = trace.records_at(fired)
    watermarks = [MIN if r.watermark is None else r.watermark for r in records]
    categories = fired_by(calls, named, event, np.array(watermarks, dtype=object))  # the rule
    marks = trace.rows_where(kind="watermark", operator=op)
    elements = trace.rows_where(kind="element", operator=op)
    raisers = trace.rows_where(kind=_RAISERS)
    timed = timer_rows[timer_rows >= 0]
    timers = dict(zip(timed.tolist(), trace.records_at(timed), strict=True))
    out = []
    for record, cause, t in zip(records, categories.tolist(), timer_rows.tolist(), strict=True):
        timer = timers.get(t)
        wm = MIN if record.watermark is None else record.watermark
        before, raised_by, timer_ts = wm, "", None
        element_seq = element_ts = None
        if cause in (words.EVENT_TIME_TIMER, words.END_OF_INPUT) and timer is not None:
            timer_ts = timer.ts
            mark = row_before(marks, record.seq)  # the advance that fired the timer
            if mark >= 0 and trace.records_at([mark])[0].detail == END_OF_KEY:  # BATCH mode
                cause, before = words.END_OF_KEY, MIN
                raised_by = (
                    f"the end of key {timer.key!r}: in BATCH mode a key's watermark jumps "
                    "to MAX once its records are done (winviz.batch_execution)"
                )  # the key's watermark was MIN until then: each key starts anew
            elif mark >= 0:
                raised_by = _raised_by(trace, mark, raisers)
                prior = row_before(marks, mark)
                before = MIN if prior < 0 else int(c.ts.get(prior))
        elif cause == words.PROCESSING_TIME_TIMER and timer is not None:
            timer_ts = timer.ts
        elif cause in (words.ELEMENT, words.SESSION_MERGE):
            e = row_before(elements, record.seq)
            if e >= 0:
                element = trace.records_at([e])[0]
                element_seq, element_ts = element.seq, element.ts
        out.append(
            Firing(
                operator=op,
                seq=record.seq,
                proc_time=record.proc_time,
                watermark=wm,
                max_timestamp=max_ts,
                cause=cause,
                timer=timer_ts,
                element_seq=element_seq,
                element_ts=element_ts,
                raised_by=raised_by,
                earlier_firings=kept_before(history, record.seq, spans),
                watermark_before=before,
                late_firing=words.is_late_firing(before, max_ts),
                rolled_back=is_rolled_back(record.seq, spans),
                started_from=snapshot,
            )
        )
    return out


_RAISERS = ("channel_watermark", "channel_idle", "channel_active", "watermark_generated")
# how each channel record raised an operator's watermark ({}: the channel's new watermark)
_CHANNEL_CHANGES = {
    "channel_watermark": "advancing to {}",
    "channel_idle": "going idle: the minimum then ignores it",
    "channel_active": "becoming active again",
}


def _raised_by(trace: Trace, mark_row: int, raisers: np.ndarray) -> str:
    """Which input raised the watermark record at ``mark_row``: the latest channel or
    partition watermark before it at the same processing time, else the generator
    (``raisers``: the rows of those kinds)."""
    c = trace.columns()
    proc = c.proc_time.get(mark_row)
    if c.ts.get(mark_row) == MAX:
        return "the end of input (every source emits the MAX watermark when it finishes)"
    channels = raisers[raisers < mark_row]
    if not len(channels):
        return ""
    r, *before = trace.records_at(channels[-1:-3:-1])
    if r.proc_time != proc:
        return ""
    if (
        r.kind == "channel_active"
        and before
        and before[0].kind == "channel_watermark"
        and (before[0].operator, before[0].detail, before[0].proc_time)
        == (r.operator, r.detail, proc)
    ):
        r = before[0]  # a record on an idle channel: it advances, then is active again
    if r.kind in _CHANNEL_CHANGES:
        channel, name = r.detail
        what = _CHANNEL_CHANGES[r.kind].format(time_text(r.ts))
        return f"{name} (channel {channel} of {r.operator!r}) {what}"
    return f"the watermark generator of {r.operator!r} emitting {time_text(r.ts)}"
