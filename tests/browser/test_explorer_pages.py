"""An explorer on a `make lessons` page in a real browser: its slider and dropdown switch
between the engine runs precomputed when the page was built, offline.

Builds the purpose-made lesson (conftest ``write_explorer_notebook``: a bound slider 0…3000
ms by 1000 and a window-size dropdown 5000 / 10000 ms, the timeline and the scrubber; 8
runs) exactly as ``make lessons`` does and opens it in Debian's Chromium from ``file://``,
every request leaving the machine blocked and recorded, every console message kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import wait_until
from tests.browser.site_check import check_page
from tools.browser import open_drawn
from winviz.viz import lessons, pages

EXPLORER = "div.winviz-explorer"
TIMELINE = f"{EXPLORER} div.winviz-chart >> nth=0"
SCRUBBER = f"{EXPLORER} div.winviz-chart >> nth=1"
T = f'{EXPLORER} .vega-bindings input[type="range"][name="t"]'


@pytest.fixture(scope="module")
def built(explorer_notebook: Path, tmp_path_factory) -> lessons.LessonPage:
    return lessons.build_lessons(explorer_notebook.parent, tmp_path_factory.mktemp("site"))[0]


def _ready(pg, run: int) -> None:
    """Wait until the explorer has drawn grid point ``run`` (bound index × 2 + size index)."""
    wait_until(
        pg,
        f"(() => {{ const e = document.querySelector('{EXPLORER}');"
        f" return e.dataset.state === 'ready' && e.dataset.run === '{run}'; }})()",
        what=f"the explorer at run {run}",
    )


def test_the_page_carries_every_run(built: lessons.LessonPage) -> None:
    page = built.path.read_text(encoding="utf-8")
    assert (built.charts, built.widgets) == (2, 0)
    assert "Interactive widget" not in page and "are not precomputed" not in page
    assert "for every one of its 8 combinations" in page
    assert "<code>counts(data, bound=1000, size=5000)</code>" in page
    assert pages.external_resources(page) == []


def test_slider_and_dropdown_switch_between_real_runs(
    built: lessons.LessonPage, page, shots: Path
) -> None:
    pg, net = page
    console = open_drawn(pg, built.path)
    assert pg.evaluate("window.winvizCharts") == {"done": True, "charts": 2, "errors": []}
    _ready(pg, 2)  # the lesson's values: bound 1000 (index 1), size 5000 (index 0)
    status = pg.locator(f"{EXPLORER} div.winviz-explorer-status")
    # bound 1000: ts 3000 arriving at 500 ms is late and goes to the side output
    assert status.inner_text().endswith("dropped 0 · side output 1")
    bound = pg.locator(f'{EXPLORER} input[type="range"][name="bound"]')
    assert (bound.get_attribute("min"), bound.get_attribute("max")) == ("0", "3")
    assert pg.locator(f"{EXPLORER} label.winviz-explorer-control output").first.inner_text() == (
        " 1000"
    )
    timeline = pg.inner_html(TIMELINE)

    # the scrubber at 150 ms stays there when the run changes
    pg.locator(T).fill("150")
    wait_until(pg, f"document.querySelector('{T}').value === '150'")

    bound.fill("3")  # bound 3000: ts 3000 is on time, nothing goes to the side output
    _ready(pg, 6)
    assert status.inner_text().endswith("dropped 0 · side output 0")
    assert pg.inner_html(TIMELINE) != timeline
    assert pg.locator(T).input_value() == "150"
    assert pg.locator(f"{EXPLORER} label.winviz-explorer-control output").first.inner_text() == (
        " 3000"
    )
    bound_3000 = pg.inner_html(TIMELINE)

    pg.select_option(f'{EXPLORER} select[name="size"]', "1")  # windows of 10 s: 2 fire
    _ready(pg, 7)
    assert status.inner_text().startswith("fired 2 (")
    assert pg.inner_html(TIMELINE) != bound_3000
    pg.locator(EXPLORER).screenshot(path=str(shots / "explorer_page.png"))

    bound.fill("1")  # back to the lesson's bound: the same marks as the first run
    pg.select_option(f'{EXPLORER} select[name="size"]', "0")
    _ready(pg, 2)
    assert pg.inner_html(TIMELINE) == timeline
    assert net.blocked == []
    assert console == []  # no error and no Vega warning


def test_site_check_of_the_built_page(built: lessons.LessonPage, browser) -> None:
    """What ``python -m tests.browser.site_check`` reports for every page of a build."""
    report = check_page(browser, built.path)
    assert report.ok, report.line()
    assert (report.charts, report.explorers, report.explorers_switched) == (2, 1, 1)


def test_quick_changes_end_at_the_last_choice(built: lessons.LessonPage, page) -> None:
    """Controls moved faster than runs are drawn: each redraw waits for the one before, and
    the explorer ends on the run of the last values, drawn once per chart."""
    pg, net = page
    open_drawn(pg, built.path)
    _ready(pg, 2)
    pg.evaluate(
        """() => {
        const ex = document.querySelector("div.winviz-explorer");
        const bound = ex.querySelector("input[name=bound]");
        const size = ex.querySelector("select[name=size]");
        for (const [b, s] of [[0, 0], [3, 1], [2, 0], [0, 1], [3, 0], [3, 1]]) {
            bound.value = String(b);
            bound.dispatchEvent(new Event("input"));
            size.value = String(s);
            size.dispatchEvent(new Event("input"));
        }
    }"""
    )
    _ready(pg, 7)  # bound 3000, size 10000
    status = pg.locator(f"{EXPLORER} div.winviz-explorer-status").inner_text()
    assert status.startswith("fired 2 (") and status.endswith("side output 0")
    assert pg.locator(f"{EXPLORER} div.winviz-view.vega-embed").count() == 2
    assert pg.locator(f"{EXPLORER} div.winviz-view svg.marks").count() == 2
    assert pg.evaluate("window.winvizCharts.errors") == []
    assert net.blocked == []
