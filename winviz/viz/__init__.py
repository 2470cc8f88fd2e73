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

from winviz import _charts

globals().update({name: _charts.load(name) for name in _charts.PUBLIC})
__all__ = sorted(_charts.PUBLIC)  # the names, one place: winviz/_charts.py
