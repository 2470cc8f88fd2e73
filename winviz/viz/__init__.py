"""winviz.viz — charts of a winviz trace, with Altair.

    import winviz as wv
    from winviz import viz
    result = env.execute()
    viz.timeline(result.trace)          # event time × processing time, watermark, firings
    viz.window_lanes(result.trace)      # one lane per key: windows, firings, merges
    viz.timers_chart(result.trace)      # timers at their timestamps, the watermark, queue size
    viz.skew_chart(result.trace)        # long runs: processing − event time, the watermark lag
    viz.scrubber(result.trace)          # the timeline at processing time t (slider)
    viz.propagation_chart(result.trace) # per-channel watermarks, the minimum, idle periods
    viz.operator_flow(result.trace, 3)  # element 3's path through the WindowOperator
    viz.stage_watermarks(result.trace, at=1200)  # each operator's input / output watermark
    viz.explore(pipeline, records, bound=(0, 5000, 500), size=[1000, 5000])   # sliders
    viz.save_html(chart, "t.html")      # self-contained page, no external URL
    viz.save_svg(chart, "t.svg"); viz.save_png(chart, "t.png")   # offline, for slides

Charts read only the trace (a ``Trace``, its ``to_pandas()`` frame or a result with
``.trace``). Input that cannot be drawn gives a **message card** (``usermeta.winviz.status`` is
"message") instead of raising; wrong *arguments* raise ``ValueError``. Every layer holds at most
5,000 rows: larger traces are binned or sampled and the subtitle says so. Importing this package
changes no global Altair setting; in a notebook, call ``setup_rendering()`` once.
"""

from __future__ import annotations

from winviz.viz.explore import Explorer, explore
from winviz.viz.export import save_html, save_png, save_svg, setup_rendering
from winviz.viz.flow import operator_flow
from winviz.viz.lanes import window_lanes
from winviz.viz.propagation import propagation_chart
from winviz.viz.scrubber import scrubber
from winviz.viz.skew import skew_chart
from winviz.viz.stages import stage_watermarks
from winviz.viz.timeline import timeline
from winviz.viz.timers import timers_chart
from winviz.viz.trace_view import TraceInputError

__all__ = [
    "Explorer",
    "TraceInputError",
    "explore",
    "operator_flow",
    "propagation_chart",
    "save_html",
    "save_png",
    "save_svg",
    "scrubber",
    "setup_rendering",
    "skew_chart",
    "stage_watermarks",
    "timeline",
    "timers_chart",
    "window_lanes",
]
