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


# The widget's page script (explorer_chart) on a blank page with two fake models of one
# explorer's charts and a fake vegaEmbed: each embed is noted (the spec's run) and takes
# ``delay`` ms (chart 1 is slower); data-run changes are noted per chart with their time.
WIDGET_HARNESS = """
window.embeds = [[], []];
window.switches = [];
const delays = [300, 600];
window.vegaEmbed = function (div, spec, options) {
  window.embeds[spec.chart].push(spec.run);
  const view = {signal() { return null; }, addSignalListener() {}, data() { return []; },
                runAsync() { return Promise.resolve(); }};
  return new Promise((resolve) => setTimeout(
    () => resolve({view: view, finalize() {}}), delays[spec.chart]));
};
function fakeModel(chart) {
  const handlers = {};
  const state = {_group: "g", _run: 1, _key: "1:" + chart, _spec_key: "1:" + chart,
                 _call: "f(x=1)", spec: {run: 1, chart: chart}, _params: {},
                 _vl_selections: {}, embed_options: null};
  return {
    state: state, sent: [],
    get(name) { return state[name]; },
    set(attrs) { Object.assign(state, attrs); },
    save_changes() {},
    send(msg) { this.sent.push(msg); },
    on(event, callback) { (handlers[event] = handlers[event] || []).push(callback); },
    change(attrs) {  // as a kernel's update message: several values, one "change" event
      Object.assign(state, attrs);
      const names = Object.keys(attrs);
      names.forEach((n) => (handlers["change:" + n] || []).forEach((cb) => cb()));
      (handlers.change || []).forEach((cb) => cb({hasChanged: (n) => names.includes(n)}));
    },
  };
}
window.models = [fakeModel(0), fakeModel(1)];
window.els = window.models.map((model) => {
  const el = document.createElement("div");
  document.body.appendChild(el);
  new MutationObserver(() => window.switches.push(
    [window.els.indexOf(el), el.dataset.run, performance.now()])
  ).observe(el, {attributes: true, attributeFilter: ["data-run"]});
  render({model: model, el: el});
  return el;
});
window.runTo = function (run, charts) {  // the kernel shows run ``run`` (its spec, no key)
  for (const chart of charts) window.models[chart].change({
    spec: {run: run, chart: chart}, _spec_key: run + ":" + chart, _key: run + ":" + chart,
    _run: run, _call: "f(x=" + run + ")"});
};
"""


def test_the_widget_shows_the_latest_run_only_and_the_charts_switch_together(page) -> None:
    """The widget's script alone (``explorer_chart._WIDGET_JS``), with fake models: five runs
    sent while run 2 is being drawn make exactly one more drawing per chart, run 6's (latest
    wins; run 2, drawn, is never shown), and both charts switch to it at the same moment
    although chart 1 draws 300 ms slower (``_group``). A chart that cannot draw its run
    (its spec never comes) holds the other back ``GROUP_WAIT_MS`` only."""
    from winviz.viz import explorer_chart, view_script

    pg, net = page
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.set_content("<!doctype html><html><body></body></html>")
    widget = explorer_chart._WIDGET_JS.replace("export default { render };", "")
    pg.add_script_tag(content=view_script.SCRIPT + widget + WIDGET_HARNESS)
    both_at = "(run) => window.els.every((el) => el.dataset.run === String(run))"
    pg.wait_for_function(both_at, arg=1)
    assert pg.evaluate("window.embeds") == [[1], [1]]
    pg.evaluate(  # runs 3 … 6 while run 2 is being drawn
        "async () => { window.runTo(2, [0, 1]); await new Promise((r) => setTimeout(r, 20));"
        " [3, 4, 5, 6].forEach((run) => window.runTo(run, [0, 1])); }"
    )
    pg.wait_for_function(both_at, arg=6)
    pg.wait_for_timeout(500)
    assert pg.evaluate("window.embeds") == [[1, 2, 6], [1, 2, 6]]
    switches = pg.evaluate("window.switches")
    assert [(c, r) for c, r, _ in switches] == [(0, "1"), (1, "1"), (0, "6"), (1, "6")]
    assert switches[3][2] - switches[2][2] < 1  # together (one observer callback)
    assert (
        pg.evaluate("window.els.map((el) => [el.dataset.call, el.dataset.drawn])")
        == [["f(x=6)", "embedded"]] * 2
    )

    # chart 1 is told run 7 with a key whose spec it lacks: it asks for it ("need")
    pg.evaluate(
        "window.runTo(7, [0]); window.models[1].change({_key: 'x', _run: 7, _call: 'f(x=7)'})"
    )
    pg.wait_for_timeout(1500)
    assert pg.evaluate("window.els.map((el) => el.dataset.run)") == ["6", "6"]
    pg.wait_for_function("window.els[0].dataset.run === '7'", timeout=5000)
    assert pg.evaluate("window.models[1].sent.filter((m) => m.type === 'need').length") == 1
    assert pg.evaluate("window.els[1].dataset.run") == "6"
    assert console == [] and net.blocked == []


def test_quick_steps_onto_a_run_asked_ahead_but_not_yet_drawn(explorer_page: Path, page) -> None:
    """Arrow presses quicker than drawing ahead: a step onto a run asked ahead whose drawing
    has not started (``take`` hands over ``{made: null}``) draws it when chosen (browser_bench
    ``--burst 5`` on the lesson pages: "explorer 0 could not be drawn: TypeError")."""
    pg, net = page
    console = open_drawn(pg, explorer_page)
    assert _settled(pg, 2) == "embedded"  # bound 1000, size 5000
    pg.locator(BOUND).focus()
    for key in ["ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft", "ArrowLeft"] * 2:
        pg.keyboard.press(key)
        pg.wait_for_timeout(40)
    assert _settled(pg, 0) in ("embedded", "prepared")  # bound 0
    assert pg.locator(f"{EXPLORER} div.winviz-view.vega-embed").count() == 1
    assert pg.evaluate("window.winvizCharts.errors") == []
    assert net.blocked == []
    assert console == []
