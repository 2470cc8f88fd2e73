"""Tidy frames derived from a trace, one concept a module, named here together for the charts:

- ``trace_view``: ``open_trace`` and ``TraceView`` (the only reader of trace records),
  ``Columns``, ``memoized``;
- ``value_texts``: how values and keys are written (``short``, ``key_text``);
- ``fates``: each element's fate at a window operator (on time, late accepted, dropped, side
  output);
- ``firings``: a window operator's firings and cleanups, and what caused each firing;
- ``window_lives``: one row per (key, window), session merges, allowed lateness;
- ``watermark_steps``: watermark records as steps, and restarts;
- ``timer_records``: timer records, timer lives and timer queues.
"""

from __future__ import annotations

from winviz.viz.fates import (
    element_detail_lists,
    element_details,
    element_fate_columns,
    element_fates,
    late_side_outputs,
)
from winviz.viz.firings import (
    cleanup_columns,
    cleanup_marks,
    cleanups,
    fired_by,
    fired_causes,
    firing_causes,
    firing_columns,
    firing_marks,
    firing_words,
    firings,
    late_firing_count,
    window_records,
)
from winviz.viz.timer_records import timer_lives, timer_operators, timer_queue, timer_records
from winviz.viz.trace_view import (
    LONG_MAX,
    WINDOW_KINDS,
    Columns,
    TraceInputError,
    TraceView,
    gc_paused,
    memoized,
    open_trace,
    window_operators,
)
from winviz.viz.value_texts import dataclass_json, key_text, key_texts, short, shorts
from winviz.viz.watermark_steps import (
    WATERMARK_STEP_COLUMNS,
    Restart,
    is_user_operator,
    restarts,
    steps_by_attempt,
    watermark_step_columns,
    watermark_steps,
)
from winviz.viz.window_lives import (
    allowed_lateness,
    groups,
    merged,
    merged_text,
    pairs_text,
    processing_time_windows,
    window_life_columns,
    window_lives,
)

__all__ = [
    "LONG_MAX",
    "WATERMARK_STEP_COLUMNS",
    "WINDOW_KINDS",
    "Columns",
    "Restart",
    "TraceInputError",
    "TraceView",
    "allowed_lateness",
    "cleanup_columns",
    "cleanup_marks",
    "cleanups",
    "dataclass_json",
    "element_detail_lists",
    "element_details",
    "element_fate_columns",
    "element_fates",
    "fired_by",
    "fired_causes",
    "firing_causes",
    "firing_columns",
    "firing_marks",
    "firing_words",
    "firings",
    "gc_paused",
    "groups",
    "is_user_operator",
    "key_text",
    "key_texts",
    "late_firing_count",
    "late_side_outputs",
    "memoized",
    "merged",
    "merged_text",
    "open_trace",
    "pairs_text",
    "processing_time_windows",
    "restarts",
    "short",
    "shorts",
    "steps_by_attempt",
    "timer_lives",
    "timer_operators",
    "timer_queue",
    "timer_records",
    "watermark_step_columns",
    "watermark_steps",
    "window_life_columns",
    "window_lives",
    "window_operators",
    "window_records",
]
