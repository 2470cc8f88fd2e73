"""The scrubber's windows as Chromium draws them (issue 26): the running example's window
[20000, 30000), opened (h) and fired (end of input) at 25,100 ms, had no height and drew
nothing; at the slider's end it is drawn ``bands.MIN_BAND_PX`` high, as the timeline's band.
Moving the slider to 12,100 ms (the opening of [10000, 20000)) draws that one that high too;
at 12,090 ms it is not drawn. Read from the chart's Vega scenegraph (its rect items)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.gallery import running_example
from tools.browser import open_drawn
from winviz import viz
from winviz.viz import export, pages
from winviz.viz.bands import MIN_BAND_PX

# Each window rectangle's window and drawn height (px), after setting the slider's t (or not).
WINDOWS_JS = """async (t) => {
  const view = document.querySelector("div.winviz-chart").winvizView;
  if (t !== null) await view.signal("t", t).runAsync();
  const out = {};
  function walk(mark) {
    (mark.items || []).forEach(item => {
      if (mark.marktype === "group") { (item.items || []).forEach(walk); return; }
      const d = item.datum || {};
      if (mark.marktype === "rect" && d.kind === "window")
        out[d.window] = Math.round(Math.abs(item.y2 - item.y) * 1000) / 1000;
    });
  }
  walk(view.scenegraph().root);
  return out;
}"""


@pytest.fixture(scope="module")
def scrubber_page(tmp_path_factory) -> Any:
    element = pages.chart_element(export.chart_spec(viz.scrubber(running_example())))
    path = tmp_path_factory.mktemp("scrubber_bands") / "scrubber_bands.html"
    path.write_text(pages.page(element, title="scrubber bands"), encoding="utf-8")
    return path


def test_a_window_opened_and_fired_at_once_is_drawn(scrubber_page, page, shots) -> None:
    pg, net = page
    open_drawn(pg, scrubber_page)
    assert pg.evaluate("window.winvizCharts.errors") == []
    px = 400 / 27241  # the plot's px per ms (y: 483 to 27,724 ms over 400 px)
    end = pg.evaluate(WINDOWS_JS, None)
    pg.screenshot(path=str(shots / "scrubber_bands.png"), full_page=True)
    assert end == {
        "[0 ms, 10,000 ms)": round(11000 * px, 3),
        "[10,000 ms, 20,000 ms)": round(13000 * px, 3),
        "[20,000 ms, 30,000 ms)": MIN_BAND_PX,
    }
    assert MIN_BAND_PX == 8
    assert pg.evaluate(WINDOWS_JS, 12090) == {"[0 ms, 10,000 ms)": round(10890 * px, 3)}
    assert pg.evaluate(WINDOWS_JS, 12100) == {
        "[0 ms, 10,000 ms)": round(10900 * px, 3),
        "[10,000 ms, 20,000 ms)": MIN_BAND_PX,
    }
    assert net.blocked == []
