"""The chart registry: every public name of ``winviz.viz``, by the module under ``winviz/viz/``
that defines it. ``winviz.viz`` (its names and ``__all__``), ``explore`` (its chart menu) and
``winviz`` (its lazy ``wv.timeline``…) all read these tables, so adding a chart is its module
plus one line here. Importing this module imports nothing (``import winviz`` stays free of
Altair); ``load`` imports a chart's module when it is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

EXPLORE_CHARTS: dict[str, str] = {
    "timeline": "timeline",
    "window_lanes": "lanes",
    "timers_chart": "timers",
    "scrubber": "scrubber",
    "propagation_chart": "propagation",
    "skew_chart": "skew",
}
"""Charts of a whole trace, decorated with ``palette.public_chart``: ``explore``'s chart names,
in this order."""

OTHER_CHARTS: dict[str, str] = {"operator_flow": "flow", "stage_watermarks": "stages"}
"""Charts that need more than the trace (an element, a time), so ``explore`` cannot draw them."""

TOOLS: dict[str, str] = {
    "explore": "explore",
    "save_html": "export",
    "save_svg": "export",
    "save_png": "export",
    "setup_rendering": "export",
}

TOP_LEVEL: dict[str, str] = {**EXPLORE_CHARTS, **OTHER_CHARTS, **TOOLS}
"""The names ``winviz`` also gives (``wv.timeline``), importing ``winviz.viz`` when first used."""

PUBLIC: dict[str, str] = {**TOP_LEVEL, "Explorer": "explore", "TraceInputError": "trace_view"}
"""``winviz.viz.__all__``."""


def load(name: str) -> Any:
    """The object ``name`` of ``PUBLIC``, from its module (imported now if it was not)."""
    return getattr(importlib.import_module(f"winviz.viz.{PUBLIC[name]}"), name)
