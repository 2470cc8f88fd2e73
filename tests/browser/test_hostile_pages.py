"""Data never becomes code, in a real browser (issue 16).

The job of ``tests/hostile_job.py`` names its source, operators, sinks and side-output tag
with markup, script and quote payloads and keys its records by them. Its charts — every chart
of the kit — are saved with ``save_html`` and built
into a lesson page by ``make lessons``' builder; each page is opened in Debian's Chromium with
every request leaving the machine blocked and recorded. On every page: the sentinel global
``window.__pwned`` stays unset, no page error, no console error (a script the page's
Content-Security-Policy refused would log one), the charts are drawn, nothing is fetched, and
the payloads are shown as text.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import hostile_job as hj
import nbformat
import pytest
from lesson_notebook import write_lesson

import winviz as wv
from tests.browser.conftest import wait_until
from winviz.viz import lessons, palette

CHARTS = ("timeline", "window_lanes", "timers_chart", "scrubber", "propagation_chart")


@pytest.fixture(scope="module")
def hostile() -> dict[str, Any]:
    return hj.charts(hj.run())


@pytest.fixture(scope="module")
def saved(hostile, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("saved")
    return {name: wv.save_html(chart, out / f"{name}.html") for name, chart in hostile.items()}


class Watch:
    """A page's console errors and page errors, recorded from the moment it opens."""

    def __init__(self, pg) -> None:
        self.console: list[str] = []
        self.errors: list[str] = []
        pg.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: self.errors.append(str(e)))


def _open(pg, path: Path) -> Any:
    pg.goto(path.as_uri())
    # done drawing, or a payload ran: then the assertions below say which
    pg.wait_for_function(
        "(window.winvizCharts && window.winvizCharts.done) || window.__pwned !== undefined",
        timeout=30_000,
    )
    assert pg.evaluate("typeof window.__pwned") == "undefined"
    return pg


def _assert_clean(target, watch: Watch, net, charts: int) -> None:
    assert target.evaluate("window.winvizCharts") == {"done": True, "charts": charts, "errors": []}
    assert target.evaluate("typeof window.__pwned") == "undefined"
    assert (watch.errors, watch.console, net.blocked) == ([], [], [])
    # no payload became an element: no <img>, and no script but the page's own
    assert target.evaluate("document.querySelectorAll('img').length") == 0
    scripts = target.evaluate(
        "Array.from(document.scripts).map(s => s.type || 'js')"
        ".filter(t => t !== 'application/json')"
    )
    assert scripts == ["js", "js"]
    assert target.locator("div.winviz-chart .role-mark").count() > 0


@pytest.mark.parametrize("name", CHARTS)
def test_saved_page_shows_hostile_data_as_text(name, saved, hostile, page) -> None:
    pg, net = page
    watch = Watch(pg)
    target = _open(pg, saved[name])
    _assert_clean(target, watch, net, charts=1)
    # the chart's subtitle names the operator: the payload is SVG text, exactly
    subtitle = hostile[name].to_dict()["usermeta"]["winviz"]["notes"][
        -1 if name == "propagation_chart" else 0
    ]
    shown = target.evaluate("document.querySelector('div.winviz-view svg').textContent")
    lines = palette.fitted_lines([subtitle])  # (drawn wrapped to fit: issue 26)
    assert all(line in shown for line in lines)


def test_tooltips_show_hostile_keys_as_text(saved, page) -> None:
    pg, net = page
    watch = Watch(pg)
    _open(pg, saved["window_lanes"])
    tip = pg.locator("#vg-tooltip-element")
    seen = []
    bars = pg.locator("div.winviz-view g.mark-rect.role-mark path")
    assert bars.count() == 9
    for i in range(bars.count()):
        # off the chart first: the last bar's tooltip, drawn beside the pointer, can lie over
        # the next bar (sub-lanes stacked close) and would take the hover
        pg.mouse.move(0, 0)
        tip.wait_for(state="hidden", timeout=10_000)
        bars.nth(i).hover(force=True)
        tip.wait_for(state="visible", timeout=10_000)
        seen.append(tip.inner_text())
        assert tip.evaluate("el => el.querySelectorAll('img, script, b').length") == 0
    for key in hj.KEYS:
        assert any(key[:12] in text for text in seen), key
    assert pg.evaluate("typeof window.__pwned") == "undefined"
    assert (watch.errors, watch.console, net.blocked) == ([], [], [])


def _hostile_lesson(folder: Path) -> Path:
    """A lesson that draws every chart of the hostile job, an explorer named by a payload,
    printed payloads and a pandas table of them."""
    shutil.copy(Path(hj.__file__), folder / "hostile_job.py")
    cells = [
        nbformat.v4.new_markdown_cell("# Hostile data\n\nEvery name and value is a payload."),
        nbformat.v4.new_code_cell(
            "import pandas as pd\n"
            "import hostile_job\n"
            "import winviz as wv\n\n"
            "wv.setup_rendering()\n"
            "result = hostile_job.run()\n"
            "charts = hostile_job.charts(result)"
        ),
        *[nbformat.v4.new_code_cell(f'charts["{name}"]') for name in CHARTS],
        nbformat.v4.new_code_cell(
            "def job(bound=200):\n"
            "    return hostile_job.run()\n\n\n"
            "job.__name__ = hostile_job.SCRIPT\n"
            'wv.explore(job, bound=(0, 400, 200), charts=("scrubber",))'
        ),
        nbformat.v4.new_code_cell("print(hostile_job.SCRIPT)\nprint(hostile_job.IMG)"),
        nbformat.v4.new_code_cell("pd.DataFrame({'payload': hostile_job.PAYLOADS[:4]})"),
    ]
    return write_lesson(folder / "91_hostile.ipynb", cells)


@pytest.fixture(scope="module")
def lesson(tmp_path_factory) -> lessons.LessonPage:
    src = tmp_path_factory.mktemp("hostile_lessons")
    _hostile_lesson(src)
    return lessons.build_lessons(src, tmp_path_factory.mktemp("hostile_site"))[0]


def test_lesson_page_of_hostile_outputs(lesson, page) -> None:
    assert (lesson.charts, lesson.widgets) == (6, 0)
    pg, net = page
    watch = Watch(pg)
    _open(pg, lesson.path)
    _assert_clean(pg, watch, net, charts=6)
    text = pg.evaluate("document.body.innerText")
    assert hj.SCRIPT in text and hj.IMG in text  # printed, and in the pandas table
    note = pg.locator("div.winviz-widget-note").inner_text()
    assert note.startswith(f"Explorer ({hj.SCRIPT}(bound=200)): its sliders and dropdowns")
    # the explorer's slider switches to another precomputed run of the hostile job, safely
    explorer = pg.locator("div.winviz-explorer")
    assert explorer.get_attribute("data-run") == "1"
    explorer.locator('input[name="bound"]').fill("2")
    wait_until(
        pg,
        "document.querySelector('div.winviz-explorer').dataset.run === '2' && "
        "document.querySelector('div.winviz-explorer').dataset.state === 'ready'",
        what="the explorer at bound 400",
    )
    assert explorer.locator("label.winviz-explorer-control output").inner_text() == " 400"
    assert pg.evaluate("typeof window.__pwned") == "undefined"
    index = lesson.path.parent / "index.html"
    pg.goto(index.as_uri())
    assert pg.evaluate("typeof window.__pwned") == "undefined"
    assert (watch.errors, watch.console, net.blocked) == ([], [], [])
