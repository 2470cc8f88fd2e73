"""The scrubber after a restore as Chromium draws it: on lesson 05's restore job [0, 10000)'s
firing at 12,200 ms is rolled back (the job failed at 12,500 ms, the clock went back to 12,100
ms) and its replayed firing comes at 16,300 ms: its band is "open" (the window colour), not
"fired", until then, and the rolled-back firing's square is faint grey from when it is made —
one run at each t (``restores``: where the failed attempt and its replay overlap, t shows the
replay; on main the square was green at 12,200..12,499 ms on the open band). The bands' legend
names the states they take over the slider's t, no other. Read from the chart's Vega
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
    # before the failure at 12,500 ms as after it: the band open, the rolled-back square faint
    at_12300 = pg.evaluate(BANDS_JS, 12_300)
    pg.screenshot(path=str(shots / "scrubber_restore_12300.png"), full_page=True)
    assert at_12300 == {
        "[0 ms, 10,000 ms)": ["open", opened],
        "[10,000 ms, 20,000 ms)": ["open", opened],
        "fired at 12,200 ms": [palette.FADED_COLOR, 0.35],
    }
    assert pg.evaluate(BANDS_JS, 16_300)["[0 ms, 10,000 ms)"][0] == "gone"
    assert net.blocked == []


# The states of every window rectangle at each t the slider takes (its min, then step by step).
STATES_JS = """async () => {
  const view = document.querySelector("div.winviz-chart").winvizView;
  const input = document.querySelector("input[type=range]");
  const [lo, hi, step] = [Number(input.min), Number(input.max), Number(input.step)];
  const states = new Set();
  function walk(mark) {
    (mark.items || []).forEach(item => {
      if (mark.marktype === "group") { (item.items || []).forEach(walk); return; }
      if (mark.marktype === "rect" && (item.datum || {}).kind === "window")
        states.add(item.datum.state);
    });
  }
  for (let t = lo; t <= hi; t += step) {
    await view.signal("t", t).runAsync();
    walk(view.scenegraph().root);
  }
  return [...states].sort();
}"""


# Each legend Vega draws: its title, then its labels.
LEGENDS_JS = """() => {
  const view = document.querySelector("div.winviz-chart").winvizView;
  const out = [];
  function texts(mark, role, found) {
    (mark.items || []).forEach(item => {
      if (mark.role === role) found.push(item.text);
      (item.items || []).forEach(m => texts(m, role, found));
    });
    return found;
  }
  function walk(mark) {
    (mark.items || []).forEach(item => {
      if (mark.role === "legend") {
        const title = texts({items: [item]}, "legend-title", []);
        out.push([...title, ...texts({items: [item]}, "legend-label", [])]);
      } else (item.items || []).forEach(walk);
    });
  }
  walk(view.scenegraph().root);
  return out;
}"""


def test_the_bands_legend_names_the_states_taken_over_t(restore_page, page) -> None:
    """Lesson 05's bands take "open" and "gone" over the slider's 2,391 values of t, never
    "fired" (each window is cleaned up when it fires): the legend says just those two (main:
    open, fired, gone under "window at t")."""
    pg, _ = page
    open_drawn(pg, restore_page)
    assert pg.evaluate(STATES_JS) == ["gone", "open"]
    legends = pg.evaluate(LEGENDS_JS)
    assert [entries for entries in legends if entries[0].startswith("window")] == [
        ["window at some t", "open", "gone"]
    ]
