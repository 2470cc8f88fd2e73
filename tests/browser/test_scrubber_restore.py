"""The scrubber after a restore as Chromium draws it: on lesson 05's restore job at t = 14,000
ms [0, 10000)'s firing at 12,200 ms has been rolled back (the clock went back to 12,100 ms) and
its replayed firing comes at 16,300 ms: its band is "open" (the window colour), not "fired",
until then, and the rolled-back firing's square is faint grey. Read from the chart's Vega
scenegraph (its rect items: state and fill; its firing squares: fill and opacity)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_viz_restore_at_t import lesson_05_restore
from tools.browser import open_drawn
from winviz import viz
from winviz.viz import export, pages, palette

# Each window rectangle's window, state at t and fill colour, after setting the slider's t.
BANDS_JS = """async (t) => {
  const view = document.querySelector("div.winviz-chart").winvizView;
  await view.signal("t", t).runAsync();
  const out = {};
  function walk(mark) {
    (mark.items || []).forEach(item => {
      if (mark.marktype === "group") { (item.items || []).forEach(walk); return; }
      const d = item.datum || {};
      if (mark.marktype === "rect" && d.kind === "window") out[d.window] = [d.state, item.fill];
      if (mark.marktype === "symbol" && d.kind === "fired" && d.proc_time)
        out["fired at " + d.proc_time] = [item.fill, item.opacity];
    });
  }
  walk(view.scenegraph().root);
  return out;
}"""


@pytest.fixture(scope="module")
def restore_page(tmp_path_factory) -> Any:
    element = pages.chart_element(export.chart_spec(viz.scrubber(lesson_05_restore())))
    path = tmp_path_factory.mktemp("scrubber_restore") / "scrubber_restore.html"
    path.write_text(pages.page(element, title="scrubber after a restore"), encoding="utf-8")
    return path


def test_a_rolled_back_firing_leaves_its_band_open(restore_page, page, shots) -> None:
    pg, net = page
    open_drawn(pg, restore_page)
    assert pg.evaluate("window.winvizCharts.errors") == []
    at_14000 = pg.evaluate(BANDS_JS, 14_000)
    pg.screenshot(path=str(shots / "scrubber_restore_14000.png"), full_page=True)
    opened = palette.WINDOW_COLOR
    assert at_14000 == {
        "[0 ms, 10,000 ms)": ["open", opened],
        "[10,000 ms, 20,000 ms)": ["open", opened],
        # the rolled-back firing's square faint, as what has not happened at t
        "fired at 12,200 ms": [palette.FADED_COLOR, 0.35],
    }
    at_12400 = pg.evaluate(BANDS_JS, 12_400)  # (before the failure at 12,500: a firing)
    assert at_12400["fired at 12,200 ms"] == ["#009E73", 0.7]
    assert pg.evaluate(BANDS_JS, 16_300)["[0 ms, 10,000 ms)"][0] == "gone"
    assert net.blocked == []
