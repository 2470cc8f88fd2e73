"""The trace schema: the kinds of record, their fields, and the order rules readers rely on.

A trace is one record per thing that happened inside a run. Every record has the same base
fields (``BASE_FIELDS``): ``seq`` (its position, from 0), ``kind``, ``proc_time`` (the simulated
processing time), ``watermark`` (the current watermark of the operator that wrote it),
``operator``, ``key``, ``window`` (a ``TimeWindow``, the ``GlobalWindow`` or None) and ``ts`` (a
timestamp; what it means depends on the kind), plus a per-kind ``detail`` whose fields
``DETAIL_FIELDS`` names. Times are integers in Java's ``long`` range or None.

Record order (what the readers in ``winviz.viz`` and ``winviz.why`` rely on; tested in
``tests/test_trace_order.py``):

1. ``seq`` is the order in which things happened; records are never reordered or removed.
2. An ``arrival`` record (a source record entering the job) comes before every record its
   value causes downstream.
3. For one input record reaching a window operator: an ``element`` record, then — before that
   operator's next ``element`` record — its ``assigned`` / ``skipped_late_window`` records (one
   per window the assigner gave), the trigger and timer records of each window, and at most
   one ``late_dropped`` or ``side_output`` record. Records of *other* operators may interleave
   (a firing's output travelling downstream), so this grouping is per operator: each record of
   kind assigned / skipped_late_window / late_dropped / side_output belongs to the latest
   ``element`` record of its operator in ``seq`` order.
4. A ``watermark`` record of an operator comes before the ``timer_fired`` records that
   watermark causes, and each ``timer_fired`` before the ``trigger`` call and ``fired`` /
   ``purged`` / ``cleanup`` records of its window.
5. A ``merged`` record (session windows) comes before the ``assigned`` record of the element
   that caused the merge; the absorbed windows' timers are deleted (``timer_deleted``) after it.
6. For one input record reaching an interval join: an ``element`` record, then either a
   ``late_dropped`` / ``side_output`` record (late: nothing else follows) or a ``buffered``
   record, one ``joined`` record per pair (each before the ``emitted`` records of that pair) and
   the ``timer_registered`` record of its cleanup timer. A ``timer_fired`` record of namespace
   ``CLEANUP_LEFT`` / ``CLEANUP_RIGHT`` is followed by the ``buffer_removed`` record of its bucket.
7. Watermark alignment: ``paused`` and ``resumed`` records of one operator and input alternate,
   a ``paused`` first; the ``arrival`` records of what a pause held back come after the
   ``resumed`` record that released them (``winviz.trace.paused`` reads the spans).

Parallel subtasks: an operator ``op`` with parallelism ``n > 1`` runs as subtasks ``op#0`` …
``op#n-1`` and each writes under its own name (``split_subtask`` splits it again); with
parallelism 1 the name stays ``op``. ``exchange`` records a record crossing a rebalance / key_by
exchange. Two-input operators (``connect``) write ``channel_watermark`` / ``channel_idle`` /
``channel_active`` with channel 0 / 1 and input ``"input1"`` / ``"input2"``. An input k of
``op`` that comes over several channels has its own input gate (a ``StatusWatermarkValve``, as
Flink's ``StreamTwoInputProcessorFactory`` builds one per input): its channels' records are
written under the gate's name ``"op/inputk"`` (channel j of the gate, input the upstream
subtask), their ``watermark`` the gate's (what it last emitted: ``op``'s ``inputk`` record);
``winviz.trace.channels.gate_owner`` reads the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1

# kind -> names of the fields in its detail tuple (a single name: detail is that value itself)
DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "element": ("value",),  # a record arrived at the operator
    "arrival": ("value", "index"),  # a source record entered the job (input index)
    # the operator's watermark advanced (input name), or went back to MIN (input "restore")
    "watermark": ("input",),
    "watermark_generated": ("generator",),  # a watermark generator emitted a watermark
    "watermark_dropped": ("reason",),  # a non-increasing watermark was ignored
    "idle": ("input",),  # a source/channel was marked idle
    "idleness": ("timeout", "input"),  # a strategy's ``with_idleness(timeout)``, at the start
    "active": ("input",),  # ... and active again
    "channel_watermark": ("channel", "input"),  # a watermark of one input channel / partition
    "channel_idle": ("channel", "input"),  # one input channel / partition became idle
    "channel_active": ("channel", "input"),  # ... and active again
    "assigned": ("value",),  # element put into a window
    "skipped_late_window": ("value",),  # element not added: the window is late
    "timer_registered": ("domain", "namespace", "deduplicated"),
    "timer_deleted": ("domain", "namespace", "existed"),
    "timer_fired": ("domain", "namespace"),
    "trigger": ("call", "result"),  # a trigger call and its TriggerResult
    "fired": ("result", "pane", "timing", "count"),  # window contents emitted
    "purged": ("reason",),
    "merged": ("merged_windows", "state_window"),
    "cleanup": ("cleanup_time",),
    "late_dropped": ("value",),  # a late record dropped (counted by a window operator)
    "side_output": ("tag", "value"),
    "evicted": ("when", "values"),
    "emitted": ("value",),  # a record left the operator (main output)
    # an interval join: an element buffered; a pair joined; a cleanup timer removed a bucket
    "buffered": ("side", "value"),
    "joined": ("left_ts", "right_ts"),
    "buffer_removed": ("side", "count"),
    # a record crossed a rebalance / key_by exchange (written by the sending subtask)
    "exchange": ("partitioner", "target", "channel", "key_group", "value"),
    "sink": ("sink", "value"),  # a record reached a named sink
    "clock": ("reason",),  # the simulated processing clock moved
    "batch": ("batch_id", "input_rows", "late_watermark", "max_event_time", "dropped"),
    "checkpoint": ("checkpoint_id", "source_records", "positions"),  # a completed checkpoint
    # a restart from a checkpoint (failed_at None: a run started from a snapshot)
    "restore": ("checkpoint_id", "source_records", "positions", "failed_at"),
    "error": ("message",),
    # watermark alignment: a source reader or partition stopped / started reading (ts: its
    # oldest watermark sample, checked against the group's max_allowed)
    "paused": ("input", "max_allowed", "group"),
    "resumed": ("input", "max_allowed", "group"),
}

# kind -> its base fields besides proc_time, watermark and operator (the others are None)
KIND_BASE_FIELDS: dict[str, tuple[str, ...]] = {
    kind: tuple(base.split())
    for kinds, base in (
        (
            "element arrival watermark late_dropped side_output buffered joined "
            "buffer_removed exchange",
            "key ts",
        ),
        (
            "assigned skipped_late_window timer_registered timer_deleted timer_fired fired "
            "cleanup emitted",
            "key window ts",
        ),
        ("trigger purged merged evicted", "key window"),
        ("watermark_generated watermark_dropped channel_watermark sink paused resumed", "ts"),
        (
            "idle idleness active channel_idle channel_active clock batch checkpoint restore error",
            "",
        ),
    )
    for kind in kinds.split()
}

# the fields of a record as writers hand them over (seq is implicit: the position)
BASE_FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")

# the columns every row of to_pandas() starts with (detail fields follow)
FRAME_COLUMNS = (
    "seq",
    "kind",
    "proc_time",
    "watermark",
    "operator",
    "key",
    "window_start",
    "window_end",
    "ts",
)


def detail_names(kind: str) -> tuple[str, ...]:
    """The names of a kind's detail fields (``("detail",)`` for a kind the schema lacks)."""
    return DETAIL_FIELDS.get(kind, ("detail",))


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One thing that happened. ``window`` is a TimeWindow, GlobalWindow or None."""

    seq: int
    kind: str
    proc_time: int | None
    watermark: int | None
    operator: str
    key: Any
    window: Any
    ts: int | None
    detail: Any

    def details(self) -> dict[str, Any]:
        """The detail as a dict named by ``DETAIL_FIELDS``."""
        names = detail_names(self.kind)
        if len(names) == 1:
            return {names[0]: self.detail}
        return dict(zip(names, self.detail, strict=True))


def split_subtask(operator: str) -> tuple[str, int | None]:
    """``"window#2"`` -> ``("window", 2)``; an operator with parallelism 1 -> ``(name, None)``."""
    name, sep, index = operator.rpartition("#")
    if sep and index.isdigit():
        return name, int(index)
    return operator, None


def window_bounds(window: Any) -> tuple[int | None, int | None]:
    """(start, end) of a TimeWindow; (None, None) for the global window or no window."""
    start = getattr(window, "start", None)
    end = getattr(window, "end", None)
    return start, end
