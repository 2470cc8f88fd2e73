"""What ``timeline``, ``window_marks`` and ``explore`` still read as ``frames.X`` — each name
lives in its concept module (``trace_view``, ``value_texts``, ``fates``, ``firings``,
``window_lives``, ``watermark_steps``); every other module imports those directly. This module
goes once those three do too (issue 30).
"""

from __future__ import annotations

from winviz.viz.fates import element_detail_lists, element_fate_columns
from winviz.viz.firings import (
    cleanup_columns,
    cleanup_marks,
    cleanups,
    fired_by,
    firing_columns,
    firing_marks,
    firings,
    late_firing_count,
)
from winviz.viz.trace_view import (
    Columns,
    TraceInputError,
    TraceView,
    gc_paused,
    open_trace,
    window_operators,
)
from winviz.viz.value_texts import key_texts, short, shorts
from winviz.viz.watermark_steps import (
    WATERMARK_STEP_COLUMNS,
    Restart,
    restarts,
    steps_by_attempt,
    watermark_step_columns,
)
from winviz.viz.window_lives import (
    allowed_lateness,
    groups,
    merged,
    pairs_text,
    processing_time_windows,
    window_life_columns,
    window_lives,
)

__all__ = [
    "WATERMARK_STEP_COLUMNS",
    "Columns",
    "Restart",
    "TraceInputError",
    "TraceView",
    "allowed_lateness",
    "cleanup_columns",
    "cleanup_marks",
    "cleanups",
    "element_detail_lists",
    "element_fate_columns",
    "fired_by",
    "firing_columns",
    "firing_marks",
    "firings",
    "gc_paused",
    "groups",
    "key_texts",
    "late_firing_count",
    "merged",
    "open_trace",
    "pairs_text",
    "processing_time_windows",
    "restarts",
    "short",
    "shorts",
    "steps_by_attempt",
    "watermark_step_columns",
    "window_life_columns",
    "window_lives",
    "window_operators",
]
