"""An operator's timers as tables (Flink's ``InternalTimerServiceImpl``): its timer records,
each timer's life from registration to firing or deletion, who set each timer of a window
operator, and the size of its timer queues.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from winviz.operators.window_rules import cleanup_time
from winviz.trace.coded import first_of_each, object_array, value_codes
from winviz.viz.trace_view import TraceView, _objects, _times
from winviz.viz.value_texts import key_texts, short
from winviz.viz.window_lives import _group_ids, allowed_lateness, processing_time_windows

TIMER_KINDS = ("timer_registered", "timer_deleted", "timer_fired")
TIMER_COLUMNS = [
    "key",
    "namespace",
    "domain",
    "timestamp",
    "registered",
    "ended",
    "end",
    "reg_seq",
    "end_seq",
    "watermark",
    "end_watermark",
]


def timer_operators(view: TraceView) -> list[str]:
    """Operators that wrote timer records, in order of first appearance."""
    return view.operators(*TIMER_KINDS)


def timer_records(view: TraceView, operator: str) -> pd.DataFrame:
    """The timer records of ``operator``: seq, kind, proc_time, watermark, key, namespace
    (text), ts, domain, flag (``deduplicated`` of a registration, ``existed`` of a deletion),
    and timer: one integer per timer identity (key, namespace text, domain, timestamp)."""
    rows = view.select(*TIMER_KINDS, operator=operator)
    codes = view.kind_codes(rows)  # the kind as a categorical of TIMER_KINDS
    order = np.select([codes == view.kind_code(k) for k in TIMER_KINDS], [0, 1, 2], -1)
    kinds = pd.Categorical.from_codes(order, categories=list(TIMER_KINDS))
    columns: dict[str, Any] = {"seq": rows.copy(), "kind": kinds}
    for name in ("proc_time", "watermark"):
        columns[name] = _times(view, name, rows)
    columns["key"] = _objects(view.column("key", rows))
    columns["ts"] = _times(view, "ts", rows)
    # detail is (domain, namespace[, flag]); a run shares a few detail objects among many
    # records: each distinct object (by id(): alive throughout) is read once
    details = view.part("detail", rows)[rows]
    objects, object_firsts = first_of_each(np.fromiter(map(id, details), np.int64, len(details)))
    at, firsts = value_codes(details[object_firsts])  # (each object's value once)
    at, firsts = at[objects], object_firsts[firsts]  # (numbered in order of first appearance)
    distinct = [details[i] for i in firsts.tolist()]
    texts = _namespace_texts(list(map(itemgetter(1), distinct)))
    text_codes = _codes(object_array(texts))
    columns["namespace"] = _objects(object_array(texts)[at])
    ns_codes = text_codes[at]
    distinct_domains = list(map(itemgetter(0), distinct))
    domains = object_array(distinct_domains)[at]
    columns["domain"] = _objects(domains)
    flags = [bool(d[2]) if len(d) > 2 else False for d in distinct]
    columns["flag"] = np.array(flags, dtype=bool)[at]
    if len(rows):
        stamps = columns["ts"]
        ts_codes = (
            pd.factorize(stamps.to_numpy())[0]
            if stamps.dtype != object
            else _codes(stamps.to_numpy(dtype=object))
        )
        columns["timer"] = _group_ids(
            view.part("key", rows).codes[rows],
            ns_codes,
            _codes(object_array(distinct_domains))[at],
            ts_codes,
        )
    else:
        columns["timer"] = np.zeros(0, dtype=np.int64)
    return pd.DataFrame(columns, copy=False)  # (every column made here, for this frame only)


def _namespace_texts(values: list[Any]) -> list[str]:
    """Timer namespaces as text: a window (a TimeWindow or a [start, end] pair) as
    "[start, end)", anything else ``short`` (equal values: the first one's text)."""
    texts: dict[Any, str] = {}
    for v in values:
        if (ident := _identity(v)) in texts:
            continue
        if hasattr(v, "start") and hasattr(v, "end"):
            texts[ident] = f"[{v.start}, {v.end})"
        elif isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(b, int) for b in v):
            texts[ident] = f"[{v[0]}, {v[1]})"
        else:
            texts[ident] = short(v, 30)
    return [texts[_identity(v)] for v in values]


def _identity(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return short(v, 200)


def timer_lives(records: pd.DataFrame) -> pd.DataFrame:
    """One row per timer of ``timer_records`` (``TIMER_COLUMNS``; ended None and end
    "pending" while queued; watermark at registration, end_watermark when it left). A timer
    is (key, namespace, domain, timestamp), as in Flink's timer queues: per timer, in seq
    order, a registration not de-duplicated starts one unless one is live, and a firing or
    deletion ends the live one."""
    n = len(records)
    if n == 0:
        return pd.DataFrame([], columns=TIMER_COLUMNS)
    kinds = records["kind"]
    is_reg = (kinds == "timer_registered").to_numpy()
    is_fired = (kinds == "timer_fired").to_numpy()
    counted = np.flatnonzero(~(is_reg & records["flag"].to_numpy(dtype=bool)))
    ident = records["timer"].to_numpy()[counted]  # timer_records' identities
    order = np.argsort(ident, kind="stable")  # per timer, in seq order
    group, reg, pos = ident[order], is_reg[counted][order], counted[order]
    same = np.zeros(len(order), dtype=bool)
    same[1:] = group[1:] == group[:-1]
    prev_reg = np.zeros(len(order), dtype=bool)
    prev_reg[1:] = reg[:-1]
    keep = reg != (same & prev_reg)  # a start after no live timer, an end of a live one
    group, reg, pos = group[keep], reg[keep], pos[keep]
    starts = np.flatnonzero(reg)
    nxt = np.minimum(starts + 1, len(pos) - 1)
    ended = (starts + 1 < len(pos)) & (group[nxt] == group[starts]) & ~reg[nxt]
    start_pos = pos[starts]
    end_pos = np.where(ended, pos[nxt], -1)
    by_seq = np.argsort(start_pos, kind="stable")
    start_pos, end_pos = start_pos[by_seq], end_pos[by_seq]
    has_end = end_pos >= 0
    end_at = np.where(has_end, end_pos, 0)

    def col(name: str, at: np.ndarray) -> list[Any]:
        return records[name].to_numpy()[at].tolist()  # Python ints / objects as they are

    end_text = np.where(is_fired[end_at], "fired", "deleted")
    end_text = np.where(has_end, end_text, "pending").tolist()
    ends = has_end.tolist()
    values = (
        records["key"].to_numpy(dtype=object)[start_pos],
        col("namespace", start_pos),
        col("domain", start_pos),
        col("ts", start_pos),
        col("proc_time", start_pos),
        [p if e else None for p, e in zip(col("proc_time", end_at), ends, strict=True)],
        end_text,
        col("seq", start_pos),
        [q if e else None for q, e in zip(col("seq", end_at), ends, strict=True)],
        col("watermark", start_pos),
        [w if e else None for w, e in zip(col("watermark", end_at), ends, strict=True)],
    )
    frame = {c: pd.Series(v, dtype=object) for c, v in zip(TIMER_COLUMNS, values, strict=True)}
    if len(start_pos):  # the keys as texts (the string column assigning them would make)
        frame["key"] = pd.Series(key_texts(values[0]), dtype="str")
    return pd.DataFrame(frame)


def _codes(values: np.ndarray) -> np.ndarray:
    """Integer codes of an object column, in order of first appearance (unhashable values
    by their ``short`` text)."""
    try:
        codes, _ = pd.factorize(values, use_na_sentinel=False)
    except TypeError:
        codes, _ = pd.factorize(
            object_array([_identity(v) for v in values.tolist()]),
            use_na_sentinel=False,
        )
    return codes


def timer_queue(records: pd.DataFrame) -> pd.DataFrame:
    """Live timers per domain after each timer record that changes them: seq, proc_time,
    domain, size."""
    kinds = records["kind"]
    flag = records["flag"].to_numpy(dtype=bool)
    delta = np.where(
        (kinds == "timer_registered").to_numpy(),
        np.where(flag, 0, 1),
        np.where((kinds == "timer_fired").to_numpy(), -1, np.where(flag, -1, 0)),
    )
    keep = np.flatnonzero(delta != 0)
    domains = records["domain"].to_numpy()[keep]
    codes, _ = pd.factorize(domains, use_na_sentinel=False)
    size = np.zeros(len(keep), dtype=np.int64)
    steps = delta[keep]
    for code in range(int(codes.max()) + 1 if len(codes) else 0):  # a running sum per domain
        mine = codes == code
        size[mine] = np.cumsum(steps[mine])
    return pd.DataFrame(
        {
            "seq": records["seq"].to_numpy()[keep],
            "proc_time": pd.Series(records["proc_time"].to_numpy()[keep].tolist(), dtype=object),
            "domain": pd.Series(domains, dtype=object),
            "size": size,
        }
    )


ROLES = (TRIGGER_TIMER, CLEANUP_TIMER, BOTH_TIMER, UNKNOWN_ROLE) = (
    "trigger timer",
    "cleanup timer",
    "cleanup timer at the max timestamp (the trigger's too)",
    "trigger or cleanup (no cleanup record yet)",
)
ROLE_WIDTHS = (2.5, 1.0, 2.5, 2.5)


def timer_roles(view: TraceView, op: str, lives: pd.DataFrame) -> list[str] | None:
    """Who set each timer of a window operator (None without window timers), by Flink's rule
    (``WindowOperator.registerCleanupTimer``): the cleanup timer is at ``cleanupTime(window)``
    in the assigner's domain (``window_rules.cleanup_time``, the allowed lateness read off
    the cleanup records); every other timer of the window is its trigger's. With allowed
    lateness 0 an ``EventTimeTrigger``'s timer and the cleanup timer are one."""
    if lives.empty:
        return None
    seqs = np.asarray(lives["reg_seq"].to_numpy(), dtype=np.int64)
    _, ends, present = view.bounds(seqs)
    if not present.any():
        return None
    cleanup_domain = "processing" if processing_time_windows(view, op) else "event"
    allowed = 0 if cleanup_domain == "processing" else allowed_lateness(view, op)
    roles = []
    for end, has, domain, ts in zip(
        ends.tolist(),
        present.tolist(),
        lives["domain"].tolist(),
        lives["timestamp"].tolist(),
        strict=True,
    ):
        if not has or domain != cleanup_domain:
            roles.append(TRIGGER_TIMER)
        elif allowed is None:
            roles.append(UNKNOWN_ROLE)
        elif ts != cleanup_time(end - 1, allowed):
            roles.append(TRIGGER_TIMER)
        else:
            roles.append(BOTH_TIMER if allowed == 0 else CLEANUP_TIMER)
    return roles
