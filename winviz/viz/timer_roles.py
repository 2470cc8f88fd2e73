"""Who set each timer of a window operator — its trigger or the operator's cleanup timer
(Flink's ``WindowOperator.registerCleanupTimer``) — derived with the one rule, since the trace
does not record it; the timers chart draws cleanup timers thin (``winviz.viz.timers``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from winviz.operators.window_rules import cleanup_time
from winviz.viz.trace_view import TraceView
from winviz.viz.window_lives import allowed_lateness, processing_time_windows

ROLES = (TRIGGER_TIMER, CLEANUP_TIMER, BOTH_TIMER, UNKNOWN_ROLE) = (
    "trigger timer",
    "cleanup timer",
    "cleanup timer at the max timestamp (the trigger's too)",
    "trigger or cleanup (no cleanup record yet)",
)
ROLE_WIDTHS = (2.5, 1.0, 2.5, 2.5)
"""A window operator's timer is either its trigger's or the operator's cleanup timer: the
cleanup timers' rules are thin."""


def timer_roles(view: TraceView, op: str, lives: pd.DataFrame) -> list[str] | None:
    """Who set each timer of a window operator (None for an operator without window timers):
    the trace does not record it, so it is derived with the one rule — Flink's
    ``WindowOperator.registerCleanupTimer`` registers, in the assigner's domain, a timer at
    ``cleanupTime(window)`` (``window_rules.cleanup_time``: max timestamp + allowed lateness
    for event time, the max timestamp for processing time), the allowed lateness read off the
    operator's cleanup records (``window_lives.allowed_lateness``); every other timer of the window
    is its trigger's. With allowed lateness 0 an ``EventTimeTrigger``'s timer and the cleanup
    timer are one timer (Flink's queue keeps one per key, window and time)."""
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


def with_roles(rules: list[dict[str, Any]], roles: list[str] | None, notes: list[str]) -> None:
    """Each rule's "set by" (``timer_roles``, rules in ``timer_lives`` order), and the
    subtitle's count of each role."""
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


def role_width(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The strokeWidth channel of the timers' roles: a thin rule for a cleanup timer, with a
    legend naming the roles drawn."""
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
