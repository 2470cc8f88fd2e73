"""`make lessons` pages in a real browser: self-contained, charts drawn, the slider works.

Builds the purpose-made lesson (conftest: the README's job, its scrubber, an ipywidgets
slider) exactly as ``make lessons`` builds a lesson, then opens the page in Debian's Chromium
with every request leaving the machine blocked and recorded.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.browser.conftest import wait_until
from tests.browser.site_check import check_page
from tools.browser import open_drawn
from winviz.viz import export, lessons, pages

ARRIVED = ".vega-embed g.mark-symbol.layer_6_marks path"  # scrubber: elements arrived by t
FUTURE = ".vega-embed g.mark-symbol.layer_5_marks path"  # scrubber: elements after t (4: firings)


@pytest.fixture(scope="module")
def built(check_notebook: Path, tmp_path_factory) -> lessons.LessonPage:
    out = tmp_path_factory.mktemp("site")
    return lessons.build_lessons(check_notebook.parent, out)[0]


def test_built_page_is_self_contained(built: lessons.LessonPage) -> None:
    page = built.path.read_text(encoding="utf-8")
    assert pages.external_resources(page) == []
    assert (built.charts, built.widgets) == (1, 1)
    # one inlined copy of Vega per page, and no CDN loader of nbconvert's templates
    assert page.count("window.vegaEmbed=") == 1
    assert "require.js" not in page and "mathjax" not in page.lower()
    index = (built.path.parent / "index.html").read_text(encoding="utf-8")
    assert '<a href="90_browser_check.html">90_browser_check</a> — Browser check' in index
    assert pages.external_resources(index) == []


def test_charts_render_and_the_slider_moves_time(
    built: lessons.LessonPage, page, shots: Path
) -> None:
    pg, net = page
    console = open_drawn(pg, built.path)
    assert pg.evaluate("window.winvizCharts") == {"done": True, "charts": 1, "errors": []}
    for chart in pg.locator("div.winviz-chart").all():
        assert chart.locator(".role-mark").count() > 0
    # t starts at the end of the run: all four clicks have arrived
    assert (pg.locator(ARRIVED).count(), pg.locator(FUTURE).count()) == (4, 0)
    before = pg.inner_html("div.winviz-view svg")

    slider = pg.locator('.vega-bindings input[type="range"][name="t"]')
    assert (slider.get_attribute("min"), slider.get_attribute("max")) == ("0", "900")
    slider.focus()
    pg.keyboard.press("Home")  # t = 0: only the click arriving at 0 ms is in
    pg.wait_for_function(f"document.querySelectorAll('{ARRIVED}').length === 1")
    assert pg.locator(FUTURE).count() == 3
    assert pg.inner_html("div.winviz-view svg") != before

    slider.fill("150")  # arrivals 0 and 100 ms are in, 200 and 900 ms are still to come
    pg.wait_for_function(f"document.querySelectorAll('{ARRIVED}').length === 2")
    assert pg.locator(FUTURE).count() == 2

    pg.locator("div.winviz-chart").first.screenshot(path=str(shots / "scrubber_t150.png"))

    # replay on the lesson page: play moves t on from 150 ms; the click at 200 ms arrives
    play = pg.locator('.vega-bindings input[type="checkbox"][name="play"]')
    play.check()
    wait_until(pg, f"document.querySelectorAll('{ARRIVED}').length === 3", what="t ≥ 200")
    play.uncheck()
    assert int(slider.input_value()) >= 200
    assert net.blocked == []
    assert console == []  # no error and no Vega warning


def test_tooltip_and_widget_note(built: lessons.LessonPage, page, shots: Path) -> None:
    pg, net = page
    open_drawn(pg, built.path)
    pg.locator(ARRIVED).first.hover()
    tip = pg.locator("#vg-tooltip-element")
    tip.wait_for(state="visible", timeout=10_000)
    assert tip.inner_text().startswith("what\t\non time\n")  # the element's fate, as the timeline
    note = pg.locator("div.winviz-widget-note")
    assert note.count() == 1
    assert "IntSlider(value=3" in note.inner_text()
    assert "make lab" in note.inner_text()
    pg.screenshot(path=str(shots / "lesson_page.png"), full_page=True)
    assert net.blocked == []


def test_a_chart_that_cannot_be_drawn_says_so(tmp_path: Path, page) -> None:
    nb = nbformat.v4.new_notebook()
    bad = {
        "data": {"values": [{"a": 1}]},
        "transform": [{"calculate": "no_such_param * 2", "as": "b"}],
        "mark": "point",
    }
    out = nbformat.v4.new_output("display_data", data={export.EXPORT_MIMETYPE: bad})
    nb.cells = [nbformat.v4.new_code_cell("chart", outputs=[out])]
    nb, _, _ = lessons.staticize(nb)
    path = tmp_path / "bad.html"
    path.write_text(lessons.render_page(nb, "bad", pages.javascript_bundle()), "utf-8")
    pg, net = page
    open_drawn(pg, path)
    state = pg.evaluate("window.winvizCharts")
    assert (state["done"], state["charts"], len(state["errors"])) == (True, 1, 1)
    assert state["errors"][0] == (
        'chart 0 could not be drawn: Error: Unrecognized signal name: "no_such_param"'
    )
    assert pg.locator("pre.winviz-chart-error").inner_text() == state["errors"][0]
    assert net.blocked == []


def test_site_check_of_the_built_page(built: lessons.LessonPage, browser) -> None:
    """What ``python -m tests.browser.site_check`` reports for every page of a build: drawn,
    no console message (errors or Vega warnings), nothing fetched; no explorer here."""
    report = check_page(browser, built.path)
    assert report.ok, report.line()
    assert (report.charts, report.explorers) == (1, 0)
