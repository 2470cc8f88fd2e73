"""``operator_flow``: the path one element took through Flink's ``WindowOperator``.

The boxes are ``WindowOperator.processElement``'s steps (``winviz.operators.window_operator``
mirrors it): ``assignWindows``, ``MergingWindowSet.addWindow``, ``isWindowLate``, add to state,
``Trigger.onElement`` (FIRE: ``emitWindowContents``, PURGE: clear), ``registerCleanupTimer``,
``isElementLate`` (side output or dropped); then ``onEventTime`` / ``onProcessingTime``,
``isCleanupTime`` and ``clearAllState``. Filled are the steps the element's own records show,
read from the trace only: its ``element`` record and the operator's records up to its next
``element``, ``watermark`` or ``timer_fired`` record; its fate (``fates.element_fates``); and,
per window it was added to, the timer calls of that key and window up to its ``cleanup``.
``flow_steps`` gives the same as a table.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import pandas as pd

from winviz.time import format_ms
from winviz.trace import TraceRecord, vocabulary
from winviz.viz import palette, spec
from winviz.viz.diagram import FIT_PLOT, Arrow, Box, Frame, box_px, diagram
from winviz.viz.fates import element_fates
from winviz.viz.firings import firings
from winviz.viz.operator_pick import require_records
from winviz.viz.trace_view import (
    TraceInputError,
    TraceView,
    open_trace,
    window_operators,
)
from winviz.viz.validation import check_size
from winviz.viz.value_texts import short

CHART = "operator_flow"

# the boxes: id -> (title, column x, row y, a question?)
LATE, MAIN, SIDE, TIMERS, TIMER_SIDE = 0.0, 2.3, 4.6, 7.15, 9.45
NODES: dict[str, tuple[str, float, float, bool]] = {
    "element": ("processElement", MAIN, 0, False),
    "assign": ("WindowAssigner.assignWindows", MAIN, 1, False),
    "merge": ("MergingWindowSet.addWindow", SIDE, 1.75, False),
    "window_late": ("window late? (isWindowLate)", MAIN, 2, True),
    "skip": ("skip the window", LATE, 2, False),
    "add": ("add to the window's state", MAIN, 3, False),
    "on_element": ("Trigger.onElement", MAIN, 4, False),
    "emit": ("emitWindowContents", SIDE, 4, False),
    "purge": ("purge the contents", SIDE, 5.6, False),
    "cleanup_timer": ("registerCleanupTimer", MAIN, 7, False),
    "element_late": ("element late? (isElementLate)", LATE, 3.5, True),
    "side_output": ("side output", LATE - 0.5, 5, False),
    "dropped": ("dropped", LATE + 0.5, 5, False),
    "timer": ("a timer fires", TIMERS, 3, False),
    "on_timer": ("Trigger.onEventTime / onProcessingTime", TIMERS, 4, False),
    "timer_emit": ("emitWindowContents", TIMER_SIDE, 4, False),
    "timer_purge": ("purge the contents", TIMER_SIDE, 5.6, False),
    "is_cleanup": ("cleanup time? (isCleanupTime)", TIMERS, 6.25, True),
    "clear": ("clearAllState", TIMERS, 7.5, False),
}
EDGES: tuple[tuple[str, str, str], ...] = (
    ("element", "assign", ""),
    ("assign", "window_late", "not merging"),
    ("assign", "merge", "merging"),
    ("merge", "window_late", ""),
    ("window_late", "skip", "yes"),
    ("window_late", "add", "no"),
    ("add", "on_element", ""),
    ("on_element", "emit", "FIRE"),
    ("on_element", "purge", "PURGE"),
    ("on_element", "cleanup_timer", "CONTINUE"),
    ("emit", "purge", "FIRE_AND_PURGE"),
    ("emit", "cleanup_timer", ""),
    ("purge", "cleanup_timer", ""),
    ("skip", "element_late", "no window took it"),
    ("element_late", "side_output", "yes, tag set"),
    ("element_late", "dropped", "yes, no tag"),
    ("cleanup_timer", "timer", "later"),
    ("timer", "on_timer", ""),
    ("on_timer", "timer_emit", "FIRE"),
    ("on_timer", "timer_purge", "PURGE"),
    ("on_timer", "is_cleanup", "CONTINUE"),
    ("timer_emit", "timer_purge", "FIRE_AND_PURGE"),
    ("timer_emit", "is_cleanup", ""),
    ("timer_purge", "is_cleanup", ""),
    ("is_cleanup", "clear", "yes"),
)
STEP_COLUMNS = ("seq", "step", "window", "outcome")
_CALLS = {"on_event_time": "onEventTime", "on_processing_time": "onProcessingTime"}
GLOBAL = "global window"
MAX_LINES = 2  # outcome lines per box (the tooltip has all)
LATER = ((6.0, 7.0), (6.0, 3.0))  # the "later" arrow's bends: right of the middle labels
VIA: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {
    ("cleanup_timer", "timer"): LATER,
    ("assign", "merge"): ((SIDE, 1.0),),  # level, its label above it, then down into the box
}
BELOW = {"merge": 1.0}  # a box whose top stays GAP_PX / 2 under that level (the arrow's bend)
AT = {("on_element", "purge"): 0.3, ("on_timer", "timer_purge"): 0.3}  # labels not half-way
WIDE = 1.95  # a box's width (data units; the columns are 2.3 apart)
NARROW = 0.95  # the two boxes side by side under "element late?"
X_SPAN = (-1.15, 10.8)  # the data units across the plot
GAP_PX = 28  # px at least between two boxes one above the other (an arrow and its label)
EDGE_PX = 6  # px above the top box and under the lowest


@dataclasses.dataclass(frozen=True)
class ElementPath:
    """The element (its ``element`` record), its fate, and the steps it took."""

    record: TraceRecord
    position: int
    fate: str
    steps: pd.DataFrame


@palette.public_chart(CHART)
def operator_flow(
    trace: Any,
    element: int = 0,
    *,
    operator: str | None = None,
    width: int = FIT_PLOT,
    height: int | None = None,
) -> spec.ChartDict:
    """The path of one element through the window operator (see the module docstring).
    ``element``: its position among the elements that reached ``operator`` (default: the
    first window operator; negative counts from the end). ``width``: of the plot; ``height``:
    default as high as the wrapped boxes need. A trace that cannot be drawn gives a message
    card; a wrong ``element`` or ``operator`` raises ``ValueError``."""
    check_size(width, 100 if height is None else height, min_width=100, min_height=100)
    view = open_trace(trace)
    op = pick_window_operator(view, operator)
    path = element_path(view, op, element)
    others = [o for o in window_operators(view) if o != op]
    return _chart(path, op, others, width, height)


def flow_steps(trace: Any, element: int = 0, *, operator: str | None = None) -> pd.DataFrame:
    """The steps ``operator_flow`` marks, in seq order: seq (of the record that shows it),
    step (a box: ``NODES``), window (``[start, end)``, None for the element's own steps) and
    outcome (what the trace says happened)."""
    view = open_trace(trace)
    return element_path(view, pick_window_operator(view, operator), element).steps


def pick_window_operator(view: TraceView, operator: str | None) -> str:
    """The window operator to read: ``operator`` (checked), or the trace's first."""
    require_records(view)
    ops = window_operators(view)
    if operator is None:
        if not ops:
            raise TraceInputError(
                "No window operator in this trace. operator_flow draws a WindowOperator's "
                "steps; this trace has no assigned / fired records."
            )
        return ops[0]
    if operator.__class__ is not str or operator not in ops:
        raise ValueError(
            f"operator {operator!r} is not a window operator of this trace; "
            f"expected one of: {', '.join(map(repr, ops)) or '(none)'}"
        )
    return operator


def window_text(window: Any) -> str | None:
    """``[0, 5000)`` for a time window, "global window" for the global one, None for none."""
    if window is None:
        return None
    start, end = getattr(window, "start", None), getattr(window, "end", None)
    if start is None or end is None:
        return GLOBAL
    return f"[{format_ms(start)}, {format_ms(end)})"


def element_path(view: TraceView, operator: str, element: int) -> ElementPath:
    """The element's record, fate and steps (``flow_steps``)."""
    erows = view.select("element", operator=operator)
    n = len(erows)
    if element.__class__ is not int:
        raise ValueError(f"element must be an int position (0 = the first), got {element!r}")
    if not -n <= element < n:
        raise ValueError(
            f"element {element}: operator {operator!r} received {n} element(s); "
            f"expected 0 … {n - 1} (or -{n} … -1 from the end)"
        )
    position = element % n
    seq = int(erows[position])
    record = trace_records(view, erows[position : position + 1])[0]
    fates = element_fates(view, operator)
    fate = str(fates.loc[fates["seq"] == seq, "fate"].iloc[0])
    # the element's own processing: up to the operator's next element, watermark or timer
    ends = view.select("element", "watermark", "timer_fired", operator=operator)
    later = ends[ends > seq]
    end = int(later[0]) if len(later) else len(view)
    kinds = ("merged", "assigned", "skipped_late_window", "trigger", "fired", "purged")
    own = view.select(*kinds, "timer_registered", operator=operator)
    own = own[(own > seq) & (own < end)]
    records = trace_records(view, own)
    late = vocabulary.is_late(record.ts, record.watermark)
    arrived = (
        f"ts {format_ms(record.ts)} {'≤' if late else '>'} watermark "
        f"{format_ms(record.watermark)}: {'late' if late else vocabulary.ON_TIME}"
        if record.ts is not None
        else f"no event timestamp: {vocabulary.ON_TIME}"
    )
    windows = [r for r in records if r.kind in ("assigned", "skipped_late_window")]
    assigned = (
        ", ".join(str(window_text(r.window)) for r in windows)
        + (" (after the merge)" if any(r.kind == "merged" for r in records) else "")
        if windows
        else "no window"
    )
    steps: list[tuple[int, str, str | None, str]] = [
        (seq, "element", None, arrived),
        (seq, "assign", None, assigned),
    ]
    firing = _firing_words(view, operator)
    called: set[Any] = set()  # windows whose on_element call was seen (cleanup timers follow)
    last_call: dict[Any, int] = {}  # the global window: its call's last record
    for r in records:
        w = window_text(r.window)
        if r.kind == "merged":
            merged = ", ".join(str(window_text(m)) for m in r.details()["merged_windows"])
            steps.append((r.seq, "merge", w, f"merged {merged} into {w}"))
        elif r.kind == "skipped_late_window":
            steps.append((r.seq, "window_late", w, f"{w}: yes, past its cleanup time"))
            steps.append((r.seq, "skip", w, f"{w} skipped"))
        elif r.kind == "assigned":
            steps.append((r.seq, "window_late", w, f"{w}: no"))
            steps.append((r.seq, "add", w, f"added to {w}"))
        elif r.kind == "trigger" and r.details()["call"] == "on_element":
            called.add(r.window)
            steps.append((r.seq, "on_element", w, f"{w}: {r.details()['result']}"))
        elif r.kind == "fired":
            steps.append((r.seq, "emit", w, f"{w}: {firing.get(r.seq, 'fired')}"))
        elif r.kind == "purged":
            steps.append((r.seq, "purge", w, f"{w} purged"))
        elif r.kind == "timer_registered" and r.window in called:
            domain = "event-time" if r.details()["domain"] == "event" else "processing-time"
            again = ", already there" if r.details()["deduplicated"] else ""
            steps.append(
                (r.seq, "cleanup_timer", w, f"{w}: {domain} timer {format_ms(r.ts)}{again}")
            )
        if r.kind in ("trigger", "fired", "purged") and r.window in called and w == GLOBAL:
            last_call[r.window] = r.seq
    # registerCleanupTimer registers no timer for the cleanup time MAX (the global window)
    for at in last_call.values():
        steps.append((at, "cleanup_timer", GLOBAL, f"{GLOBAL}: cleanup time MAX, no timer"))
    if not any(r.kind == "assigned" for r in records):
        # isElementLate is asked once every window was skipped (after the last of them)
        asked = max([seq, *(r.seq for r in windows)])
        verdict = "yes: ts + allowed lateness ≤ watermark"
        if fate in (vocabulary.SIDE_OUTPUT, vocabulary.DROPPED):
            side = fate == vocabulary.SIDE_OUTPUT
            steps.append((asked, "element_late", None, verdict))
            # its side_output / late_dropped record, else the element's
            shown = view.select("side_output" if side else "late_dropped", operator=operator)
            shown = shown[(shown > seq) & (shown < end)]
            at = int(shown[0]) if len(shown) else seq
            steps.append((at, "side_output" if side else "dropped", None, fate))
        else:
            steps.append(
                (asked, "element_late", None, "no: ignored (ts + allowed lateness > watermark)")
            )
    steps += _timer_steps(
        view, operator, record, [r.window for r in windows if r.kind == "assigned"], firing
    )
    steps.sort(key=lambda step: step[0])  # (stable: a record's steps keep their order)
    frame = pd.DataFrame(
        {
            name: pd.Series(values, dtype=object if name == "window" else None)
            for name, values in zip(STEP_COLUMNS, zip(*steps, strict=True), strict=True)
        }
    )
    return ElementPath(record, position, fate, frame)


def trace_records(view: TraceView, rows: np.ndarray) -> list[TraceRecord]:
    """The records at these positions as ``TraceRecord``s (only their parts decoded)."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return []
    base = [view.column(name, rows).tolist() for name in ("proc_time", "watermark", "operator")]
    return list(
        map(
            TraceRecord,
            rows.tolist(),
            view.kinds_of(rows).tolist(),
            *base,
            view.column("key", rows).tolist(),
            list(view.part("window", rows).decode(rows)),
            view.column("ts", rows).tolist(),
            list(view.part("detail", rows)[rows]),
        )
    )


def _firing_words(view: TraceView, operator: str) -> dict[int, str]:
    """Each ``fired`` record's seq -> "first firing; cause: …" (``firings.firings``)."""
    f = firings(view, operator)
    out = {}
    for seq, order, late, cause, by in zip(
        f["seq"].tolist(),
        f["firing"].tolist(),
        f["late_firing"].tolist(),
        f["cause"].tolist(),
        f["fired_by"].tolist(),
        strict=True,
    ):
        words = order + (f", {vocabulary.LATE_FIRING}" if late else "")
        if by == vocabulary.FIRED_BY[3]:  # the MAX watermark of a finished input
            cause = f"{by} ({cause})"
        out[int(seq)] = f"{words}; cause: {cause or by}"
    return out


def _timer_steps(
    view: TraceView,
    operator: str,
    record: TraceRecord,
    windows: list[Any],
    firing: dict[int, str],
) -> list[tuple[int, str, str | None, str]]:
    """The timer calls of the element's windows after it, up to each window's cleanup: each
    ``timer_fired`` of the key and window and the records of that call."""
    if not windows:
        return []
    kinds = ("timer_fired", "trigger", "fired", "purged", "cleanup", "element", "watermark")
    rows = view.select(*kinds, operator=operator)
    rows = rows[rows > record.seq]
    keys = view.column("key", rows)
    mine = np.array([k == record.key and type(k) is type(record.key) for k in keys], dtype=bool)
    kind_of = view.kinds_of(rows)
    boundary = np.isin(kind_of, ("timer_fired", "element", "watermark"))
    keep = mine | boundary
    records = trace_records(view, rows[keep])
    steps: list[tuple[int, str, str | None, str]] = []
    wanted = set(windows)
    current: Any = None  # the window of the timer call being read
    last = -1  # the seq of the call's last record

    def call_ends() -> None:
        """A call that did not clean up answered "no" at ``isCleanupTime``."""
        if current is not None:
            steps.append((last, "is_cleanup", window_text(current), f"{window_text(current)}: no"))

    for r in records:
        if r.kind in ("element", "watermark") or (
            r.kind == "timer_fired" and (r.window not in wanted or r.key != record.key)
        ):
            call_ends()
            current = None
            continue
        w = window_text(r.window)
        if r.kind == "timer_fired":
            call_ends()
            current, last = r.window, r.seq
            domain = "event-time" if r.details()["domain"] == "event" else "processing-time"
            steps.append(
                (
                    r.seq,
                    "timer",
                    w,
                    f"{w}: {domain} timer {format_ms(r.ts)}, watermark {format_ms(r.watermark)}",
                )
            )
            continue
        if current is None or r.window != current:
            continue
        last = r.seq
        if r.kind == "trigger":
            call = _CALLS.get(r.details()["call"], r.details()["call"])
            steps.append((r.seq, "on_timer", w, f"{w}: {call} → {r.details()['result']}"))
        elif r.kind == "fired":
            steps.append((r.seq, "timer_emit", w, f"{w}: {firing.get(r.seq, 'fired')}"))
        elif r.kind == "purged":
            steps.append((r.seq, "timer_purge", w, f"{w} purged"))
        elif r.kind == "cleanup":
            cleanup = format_ms(r.details()["cleanup_time"])
            steps.append((r.seq, "is_cleanup", w, f"{w}: yes, cleanup time {cleanup}"))
            steps.append((r.seq, "clear", w, f"{w}: state cleared"))
            wanted.discard(r.window)
            current = None
    call_ends()
    return steps


# -- chart --------------------------------------------------------------------------------------


def _boxes(lines: dict[str, list[str]], width: int) -> tuple[list[Box], float, tuple[float, float]]:
    """The boxes at ``width`` px, each as high as its wrapped text; the px per data unit down
    the plot (boxes one above another ``GAP_PX`` apart at least) and the plot's top and
    bottom (data units)."""
    sx = width / (X_SPAN[1] - X_SPAN[0])
    laid = []  # the boxes, their heights in px
    for node, (title, x, y, question) in NODES.items():
        shown = lines.get(node, [])
        if len(shown) > MAX_LINES:
            shown = [*shown[: MAX_LINES - 1], f"and {len(shown) - MAX_LINES + 1} more (tooltip)"]
        w = NARROW if node in ("side_output", "dropped") else WIDE
        heading, text, h = box_px(title, shown, w * sx)
        tip = "\n".join(lines.get(node, [])) or "not taken by this element"
        laid.append(Box(node, x, y, w, h, heading, text, node in lines, question, tip))
    sy = 40.0
    for a, b in itertools.combinations(laid, 2):
        if abs(a.x - b.x) < (a.w + b.w) / 2 and a.y != b.y:
            sy = max(sy, ((a.h + b.h) / 2 + GAP_PX) / abs(a.y - b.y))
    for b in laid:
        if b.id in BELOW:
            sy = max(sy, (b.h / 2 + GAP_PX / 2) / (b.y - BELOW[b.id]))
    top = min(b.y - (b.h / 2 + EDGE_PX) / sy for b in laid)
    bottom = max(b.y + (b.h / 2 + EDGE_PX) / sy for b in laid)
    return [dataclasses.replace(b, h=b.h / sy) for b in laid], sy, (top, bottom)


def _chart(
    path: ElementPath, operator: str, others: list[str], width: int, height: int | None
) -> spec.ChartDict:
    steps = path.steps
    lines: dict[str, list[str]] = {}
    for step, outcome in zip(steps["step"], steps["outcome"], strict=True):
        lines.setdefault(step, []).append(outcome)
    boxes, sy, (top, bottom) = _boxes(lines, width)
    taken = taken_edges(steps)
    arrows = [
        Arrow(
            a,
            b,
            label,
            on=(a, b) in taken,
            dashed=a == "cleanup_timer",
            right=b in ("side_output", "timer"),
            via=VIA.get((a, b), ()),
            at=AT.get((a, b), 0.5),
        )
        for a, b, label in EDGES
    ]
    frame = Frame(
        *X_SPAN, top, bottom, width, round(sy * (bottom - top)) if height is None else height
    )
    chart = diagram(boxes, arrows, frame, ("taken by this element", "not taken"))
    r = path.record
    head = (
        f"element {path.position} at {operator!r}: key {short(r.key)}, value "
        f"{short(r.details()['value'])}, ts {format_ms(r.ts)}, watermark "
        f"{format_ms(r.watermark)} — {path.fate}"
    )
    notes = [
        head,
        "boxes: WindowOperator.processElement (left and middle) and its timer call-backs "
        "(right); filled: the steps this element's records show; dashed boxes are questions",
    ]
    if others:
        notes.append(f"other window operators (operator=…): {', '.join(map(repr, others))}")
    heading = "The element's path through the WindowOperator"
    return palette.finish(chart, name=CHART, notes=notes, heading=heading)


def taken_edges(steps: pd.DataFrame) -> set[tuple[str, str]]:
    """The arrows the element's steps went along: between consecutive steps of the element
    and of each of its windows, from the assigner to each window's first step, and "no
    window took it" when the element was asked whether it is late."""
    edges = {(a, b) for a, b, _ in EDGES}
    chains: dict[Any, list[str]] = {}
    for window, step in zip(steps["window"], steps["step"], strict=True):
        chains.setdefault(window, []).append(step)
    out: set[tuple[str, str]] = set()
    for window, chain in chains.items():
        if window is not None and "assign" in chains.get(None, []):
            out.add(("assign", chain[0]))
        out |= {pair for pair in itertools.pairwise(chain) if pair in edges}
    own = chains.get(None, [])
    if "element_late" in own and any("skip" in c for c in chains.values()):
        out.add(("skip", "element_late"))
    return out & edges
