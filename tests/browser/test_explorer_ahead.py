"""An explorer page draws the runs next to the shown one ahead, out of sight, and a step to
one of them moves those views into place: the same drawing as drawing it when chosen.

The page is ``wv.save_html`` of an explorer (tests/jobs.py's ``counts``: a bound slider 0…3000
ms by 1000, a window-size dropdown 5000 / 10000 ms; the timeline only — an explorer with a
scrubber draws each run when chosen, its t following the shown chart), opened in Debian's
Chromium from ``file://``, every request leaving the machine blocked and recorded, every
console message kept. ``data-drawn`` on the explorer says how the last run was shown
("prepared": drawn ahead; "embedded": drawn when chosen), ``data-ahead`` whether drawing
ahead is "busy" or "done".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import winviz as wv
from tests.browser.conftest import wait_until
from tests.jobs import RECORDS, counts
from tools.browser import open_drawn

EXPLORER = "div.winviz-explorer"
BOUND = f'{EXPLORER} input[type="range"][name="bound"]'


@pytest.fixture(scope="module")
def explorer_page(tmp_path_factory) -> Path:
    ex = wv.explore(
        counts, RECORDS, bound=(0, 3000, 1000), size=[5000, 10000], charts=("timeline",)
    )
    return wv.save_html(ex, tmp_path_factory.mktemp("ahead") / "explorer.html")


def _settled(pg, run: int) -> str:
    """Wait until grid point ``run`` (bound index × 2 + size index) is shown and drawing
    ahead is done; how it was shown (``data-drawn``)."""
    wait_until(
        pg,
        f"(() => {{ const e = document.querySelector('{EXPLORER}');"
        f" return e.dataset.state === 'ready' && e.dataset.run === '{run}'"
        " && e.dataset.ahead === 'done'; })()",
        what=f"the explorer at run {run}, drawn ahead around it",
    )
    return pg.locator(EXPLORER).get_attribute("data-drawn")


def _timeline(pg) -> str:
    """The shown timeline's SVG, its generated ids (clip paths) numbered in order."""
    svg = pg.inner_html(f"{EXPLORER} div.winviz-view svg")
    ids: dict[str, str] = {}
    return re.sub(
        r"\b(clip|gradient|pattern)\d+\b", lambda m: ids.setdefault(m[0], f"id{len(ids)}"), svg
    )


def test_a_step_shows_the_run_drawn_ahead_as_drawing_it_would(explorer_page: Path, page) -> None:
    pg, net = page
    console = open_drawn(pg, explorer_page)
    assert _settled(pg, 2) == "embedded"  # the first run: bound 1000, size 5000
    # bound 0 and 2000 are drawn ahead, out of the explorer: one view per chart and run
    assert pg.locator("div.winviz-prepared > div.vega-embed").count() == 2
    status = pg.locator(f"{EXPLORER} div.winviz-explorer-status")

    pg.locator(BOUND).fill("2")  # bound 2000: a neighbour, drawn ahead
    assert _settled(pg, 4) == "prepared"
    ahead = _timeline(pg)
    ahead_status = status.inner_text()
    assert pg.locator(f"{EXPLORER} div.winviz-view.vega-embed").count() == 1
    assert pg.locator(f"{EXPLORER} svg.marks").count() == 1

    pg.locator(BOUND).fill("0")  # two notches: not drawn ahead, drawn when chosen
    assert _settled(pg, 0) == "embedded"
    pg.locator(BOUND).fill("2")
    assert _settled(pg, 4) == "embedded"
    assert _timeline(pg) == ahead
    assert status.inner_text() == ahead_status

    # views drawn ahead that are no longer next to the shown run are taken down
    assert pg.locator("div.winviz-prepared > div").count() == 2
    assert pg.evaluate("window.winvizCharts.errors") == []
    assert net.blocked == []
    assert console == []
