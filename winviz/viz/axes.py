"""Time channels for the timers and skew charts that Vega draws without a warning: an epoch
axis is a quantitative scale over the milliseconds, its ticks written as UTC times by the axis
(``labelExpr``). Vega-Lite 6 compiles a ``utc`` scale with a domain in epoch milliseconds into
a domain Vega reads as data fields ("Infinite extent for field "data"", "Conflicting scale
property domain"). Plain millisecond axes are ``TimeAxis.channel``. (No Flink class: drawing.)
"""

from __future__ import annotations

from typing import Any

from winviz.viz.palette import TimeAxis

DAY_MS = 86_400_000


def channel(axis: TimeAxis, field: str) -> dict[str, Any]:
    """The x or y channel of ``field`` on ``axis`` (a Vega-Lite dict)."""
    if axis.kind != "epoch":
        return axis.channel(field)
    fmt = "%H:%M:%S" if axis.hi - axis.lo <= DAY_MS else "%Y-%m-%d %H:%M"
    return {
        "field": field,
        "type": "quantitative",
        "scale": {"domain": [axis.lo, axis.hi], "nice": False, "zero": False},
        "axis": {
            "title": axis.title + " (UTC)",
            "labelExpr": f"utcFormat(datum.value, '{fmt}')",
            "labelOverlap": True,
        },
    }


def xy(x: TimeAxis, y: TimeAxis) -> dict[str, Any]:
    """The x and y channels (``channel``) of the fields ``x`` and ``y`` on these axes."""
    return {"x": channel(x, "x"), "y": channel(y, "y")}
