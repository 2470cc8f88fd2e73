"""Charts fit a JupyterLab output (issue 26): the one rule (``palette.FIT_WIDTH``) — legends
under the plot, stacked, their entries in ``LEGEND_COLUMNS`` columns; subtitle lines wrapped;
a side panel's room taken from its chart's plot. What Chromium draws is checked by
tests/browser/test_chart_bounds.py (``test_every_chart_fits_an_840_px_output``)."""

from __future__ import annotations

import vl_convert as vlc
from chart_jobs import session_job

from winviz import viz
from winviz.viz import export, palette

LONG = (
    "operator 'window': 160 elements, 128 (key, window) pairs in 128 windows; move the slider "
    "to see the run at processing time t; tick play to replay it"
)  # 148 characters


def test_long_title_lines_are_wrapped_at_the_width_and_short_ones_kept() -> None:
    assert palette.FIT_WIDTH == 840 and int(palette.FIT_WIDTH / palette.TITLE_CHAR_PX) == 131
    assert len(LONG) == 148
    assert palette.fitted_lines(["short", LONG, "x" * 131]) == [
        "short",
        # two lines (it needs two at 131), of about equal length: no short last line
        "operator 'window': 160 elements, 128 (key, window) pairs in 128 windows;",
        "move the slider to see the run at processing time t; tick play to replay it",
        "x" * 131,
    ]
    # 399 characters: four lines at 131 (3 × 131 = 393), so four of 99
    assert palette.fitted_lines(["w " * 199 + "w"]) == ["w " * 49 + "w"] * 4
    # a word longer than a line stays whole, on its own line
    assert palette.fitted_lines(["a " + "y" * 140 + " b"]) == ["a", "y" * 140, "b"]
    assert palette.fitted_lines(["z" * 300]) == ["z" * 300]
    assert palette.fitted_lines(["z" * 300 + " a"]) == ["z" * 300, "a"]


def test_finish_wraps_the_drawn_subtitle_and_keeps_the_notes_whole() -> None:
    chart = palette.finish({"layer": []}, name="x", notes=["one", LONG], heading="X")
    assert chart["title"]["subtitle"] == ["one", *palette.fitted_lines([LONG])]
    assert chart["usermeta"]["winviz"]["notes"] == ["one", LONG]
    # a title set before (the scrubber's, the timers chart's) is wrapped too
    given = {"layer": [], "title": palette.title("Y", [LONG])}
    assert len(palette.finish(given, name="y", notes=[LONG])["title"]["subtitle"]) == 2
    assert chart["config"]["legend"] == {
        "orient": "bottom",
        "direction": "horizontal",
        "columns": 2,
        "layout": {"expr": "{bottom: {direction: 'vertical', anchor: 'start', margin: 10}}"},
        "titleFontSize": 12,
        "labelFontSize": 11,
        "symbolSize": 80,
        "labelLimit": 290,
    }


def test_the_legend_layout_reaches_vega() -> None:
    """Vega-Lite passes the layout expression on as a signal Vega reads as its legend layout
    (``config.legend.layout``): the legends under the plot stacked, at its left."""
    spec = export.chart_spec(viz.window_lanes(session_job()))
    vega = vlc.vegalite_to_vega(spec)
    assert vega["config"]["legend"]["layout"] == {
        "signal": "{bottom: {direction: 'vertical', anchor: 'start', margin: 10}}"
    }
    assert vega["config"]["legend"]["orient"] == "bottom"


def test_the_timers_chart_gives_its_queue_panel_room() -> None:
    """The timers panel and the queue panel beside it share ``WIDTH``: 640 - 126 px, 110 px
    and 16 between."""
    spec = viz.timers_chart(session_job()).to_dict()
    main, panel = spec["hconcat"]
    assert (main["width"], panel["width"], spec["spacing"]) == (514, 110, 16)
    assert main["width"] + panel["width"] + spec["spacing"] <= palette.WIDTH
