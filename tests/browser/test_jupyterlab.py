"""A lesson in real JupyterLab, headless: run every cell, see the charts and a widget.

Starts ``jupyter lab`` on 127.0.0.1 (a free port, a random token, a temporary root, config,
settings and workspaces; news and update checks off), opens the purpose-made lesson
(conftest: the README's job, ``wv.scrubber``, an ipywidgets slider) in Debian's Chromium,
runs all cells through JupyterLab's own command, waits for the kernel to be idle, and checks
that the Vega chart (Altair's offline ``jupyter`` renderer, what ``wv.setup_rendering()``
enables) and the ipywidgets slider are drawn. The browser may not reach anything but the
server: other requests are blocked, recorded and must not happen.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tools.browser import Lab, console_of, jupyter_lab, new_page, run_notebook, wait_until


@pytest.fixture(scope="module")
def lab(check_notebook: Path, tmp_path_factory) -> Iterator[Lab]:
    """JupyterLab serving the check notebook's folder (``tools.browser.jupyter_lab``)."""
    with jupyter_lab(check_notebook.parent, tmp_path_factory.mktemp("jupyter"), 60) as server:
        yield server


def test_lesson_runs_in_jupyterlab_with_charts_and_widgets(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    pg, net = page
    pg.set_default_timeout(45_000)
    assert run_notebook(pg, lab, check_notebook.name) == []

    chart = pg.locator(".jp-OutputArea .vega-embed")
    chart.first.wait_for()
    assert chart.count() == 1
    marks = chart.first.locator(".role-mark")  # Altair's JupyterChart draws SVG
    marks.first.wait_for(state="attached")
    # windows, now, watermark line + label, firings, elements (2), the end of input's
    # outline over them, ×n badges
    assert marks.count() == 9
    slider_t = chart.first.locator('.vega-bindings input[type="range"][name="t"]')
    assert (slider_t.get_attribute("min"), slider_t.get_attribute("max")) == ("0", "900")

    widget = pg.locator(".jp-OutputArea .jupyter-widgets.widget-slider")
    widget.first.wait_for()
    assert widget.count() == 1
    assert widget.locator(".widget-readout").first.inner_text().strip() == "3"
    assert widget.locator(".widget-label").first.inner_text().strip() == "n"

    # the widget is live: a key press moves it
    widget.first.scroll_into_view_if_needed()
    widget.locator(".noUi-handle").first.focus()
    pg.keyboard.press("ArrowRight")
    pg.wait_for_function(
        "document.querySelector('.jp-OutputArea .widget-slider .widget-readout')"
        ".textContent.trim() === '4'"
    )
    # and the scrubber's Vega slider moves its processing time t, in the browser: at t = 0
    # only the click that arrived at 0 ms is drawn as arrived, the other three as future
    # (layer 4: the firings, drawn under the elements)
    arrived = ".jp-OutputArea .vega-embed g.mark-symbol.layer_6_marks path"
    future = ".jp-OutputArea .vega-embed g.mark-symbol.layer_5_marks path"
    assert (pg.locator(arrived).count(), pg.locator(future).count()) == (4, 0)
    slider_t.focus()
    pg.keyboard.press("Home")
    pg.wait_for_function(f"document.querySelectorAll('{arrived}').length === 1")
    assert pg.locator(future).count() == 3
    # replay: ticking "play" animates t in the widget too (the timer runs in the browser)
    play = chart.first.locator('.vega-bindings input[type="checkbox"][name="play"]')
    play.check()
    pg.wait_for_function(f"document.querySelectorAll('{arrived}').length >= 2")
    assert int(slider_t.input_value()) >= 100
    # untick it, with one click, right after a replay tick moved t: the page's report of
    # that t to the kernel is still pending (debounced) and must not tick "play" again
    # (JupyterChart's script sent the model's older play = true with it and set it back on
    # the view: explorer_chart). The click is made by the page, in the task that shows the
    # tick's t in the slider's readout, so the race is the same on a slow machine.
    assert pg.evaluate(UNTICK_AFTER_A_TICK) == 1
    pg.wait_for_timeout(600)  # several ticks, and the reports' round trip to the kernel
    stopped_at = slider_t.input_value()
    assert not play.is_checked()
    pg.wait_for_timeout(400)
    assert (play.is_checked(), slider_t.input_value()) == (False, stopped_at)
    pg.screenshot(path=str(shots / "jupyterlab_lesson.png"))
    assert net.blocked == []


# the scrubber's play box unticked by one click, in the task of a replay tick (its t shown in
# the range input's readout span): the number of clicks made
UNTICK_AFTER_A_TICK = """() => new Promise((resolve) => {
  const bindings = document.querySelector(".jp-OutputArea .vega-embed .vega-bindings");
  const readout = bindings.querySelector('input[name="t"]').parentElement
    .querySelector("span:last-child");
  const play = bindings.querySelector('input[name="play"]');
  let clicks = 0;
  const watch = new MutationObserver(() => {
    watch.disconnect();
    if (play.checked) { play.click(); clicks += 1; }
    resolve(clicks);
  });
  watch.observe(readout, {childList: true, characterData: true, subtree: true});
})"""
EXPLORER_SVG = ".jp-OutputArea .widget-vbox .vega-embed svg"
READOUT = ".jp-OutputArea .widget-vbox .widget-slider .widget-readout"


def _timeline_svg(pg) -> str:
    """The explorer's timeline as drawn (its SVG's markup)."""
    return pg.evaluate(f"document.querySelector('{EXPLORER_SVG}').outerHTML")


def test_a_live_explorer_redraws_its_charts_from_the_kernels_specs(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    """``wv.explore`` in JupyterLab with a kernel: its charts are ``ExplorerChart`` widgets
    whose specs the kernel replaces on every slider move (``spec.chart_dict``, datasets named
    rows-N, sent without ipywidgets' buffer search). The notebook (conftest's explorer
    lesson) displays the explorer and then sets bound = 3000 from the kernel; a key press on
    the bound slider re-runs it at 2000 and another back at 3000: the timeline is redrawn
    each time, and drawn the same for the same value."""
    from tests.browser.conftest import write_explorer_notebook

    notebook = write_explorer_notebook(check_notebook.parent / "91_explorer_check.ipynb")
    pg, net = page
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.set_default_timeout(45_000)
    # a workspace of its own: the default one would reopen the other test's notebook
    assert run_notebook(pg, lab, notebook.name, workspace="explorer") == []
    assert pg.evaluate("window.jupyterapp.shell.currentWidget.context.path") == notebook.name

    charts = pg.locator(".jp-OutputArea .widget-vbox .vega-embed")
    charts.first.wait_for()
    assert charts.count() == 2  # the timeline and the scrubber
    charts.first.locator(".role-mark").first.wait_for(state="attached")
    readout = pg.locator(READOUT).first
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '3000'")
    pg.wait_for_timeout(500)  # the widget's debounce: let the last spec's redraw finish
    at_3000 = _timeline_svg(pg)

    handle = _press_down_to_2000(pg)
    pg.wait_for_function(
        f"document.querySelector('{EXPLORER_SVG}').outerHTML !== {json.dumps(at_3000)}"
    )
    handle.focus()
    pg.keyboard.press("ArrowRight")
    assert readout.inner_text().strip() in ("2000", "3000")
    pg.wait_for_function(
        f"document.querySelector('{EXPLORER_SVG}').outerHTML === {json.dumps(at_3000)}"
    )
    pg.screenshot(path=str(shots / "jupyterlab_explorer.png"))
    bad = [m for m in console if m.startswith(("error", "warning")) and " to activate." not in m]
    assert bad == [], bad  # (JupyterLab warns of plugins slow to start on a loaded machine)
    assert net.blocked == []


# each explorer chart's widget element (ExplorerChart's page script sets data-drawn on it)
DRAWN = ".jp-OutputArea [data-drawn]"
PREPARED_READY = f"""() => {{
  const holders = Array.from(document.querySelectorAll("div.winviz-prepared"));
  const charts = Array.from(document.querySelectorAll("{DRAWN}"));
  return holders.length === 2
    && holders.every(h => h.querySelectorAll(".vega-embed").length >= 2)
    && charts.length === 2 && charts.every(el => el.dataset.ahead === "done");
}}"""
RUN_IN_KERNEL = """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await k.requestExecute({code: code}).done;
}"""


def _charts_drawn(pg) -> list[str]:
    """Each explorer chart as drawn: its Vega scenegraph (every mark and item) and its SVG's
    markup (Vega's clip ids, numbered per page, left out)."""
    return pg.evaluate(
        f"""Array.from(document.querySelectorAll('{DRAWN}')).map(el => {{
          const svg = el.querySelector('.vega-embed svg.marks');
          return el.winvizView.scenegraph().toJSON()
            + (svg ? svg.outerHTML.replace(/clip\\d+/g, 'clip') : '');
        }})"""
    )


def _drawn(pg) -> list[str]:
    return pg.evaluate(
        f"Array.from(document.querySelectorAll('{DRAWN}')).map(el => el.dataset.drawn)"
    )


def test_a_slider_step_to_a_run_drawn_ahead_shows_that_runs_marks(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    """The explorer computes the runs next to the shown one in the kernel while it is idle
    and the page draws them out of sight (``winviz.viz.explore``, ``ExplorerChart``): at bound
    3000 (the slider's end), bound 2000 and size 10000. A key press to bound 2000 then moves
    the views drawn ahead into place (``data-drawn="prepared"``) — and they must be the views
    of bound 2000: each chart's scenegraph is the one the page draws when the kernel sends
    that run afresh (``data-drawn="embedded"``, the cache emptied), and not the one it showed
    before (the kernel sends a run drawn ahead by its key alone)."""
    from tests.browser.conftest import write_explorer_notebook

    notebook = write_explorer_notebook(check_notebook.parent / "92_explorer_ahead.ipynb")
    pg, net = page
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.set_default_timeout(45_000)
    errors = run_notebook(pg, lab, notebook.name, "ahead")
    assert errors == [], errors
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '3000'")
    pg.wait_for_function(PREPARED_READY, polling=250, timeout=90_000)
    pg.wait_for_timeout(500)  # the widget's debounce: the last redraw has finished
    at_3000 = _charts_drawn(pg)
    assert len(at_3000) == 2  # the timeline and the scrubber

    _step_bound_down_to_2000(pg)
    pg.wait_for_timeout(500)
    prepared = _charts_drawn(pg)
    assert prepared[0] != at_3000[0] and prepared[1] != at_3000[1]

    # the same run sent afresh: the cache emptied, via bound 1000
    pg.evaluate(RUN_IN_KERNEL, "ex.set(bound=1000)")
    pg.evaluate(RUN_IN_KERNEL, "ex.ahead.clear(); ex.set(bound=2000)")
    pg.wait_for_function(
        f"Array.from(document.querySelectorAll('{DRAWN}')).every(el => el.dataset.drawn === "
        "'embedded')"
    )
    pg.wait_for_timeout(500)
    assert _charts_drawn(pg) == prepared
    pg.screenshot(path=str(shots / "jupyterlab_explorer_ahead.png"))
    bad = [m for m in console if m.startswith(("error", "warning")) and " to activate." not in m]
    assert bad == []  # (JupyterLab warns of plugins slow to start on a loaded machine)
    assert net.blocked == []


def _press_down_to_2000(pg):
    """The key a learner presses on the explorer's slider at 3000, until the readout says
    2000; returns the slider's handle."""
    handle = pg.locator(".jp-OutputArea .widget-vbox .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    pg.keyboard.press("ArrowLeft")
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '2000'")
    return handle


def _step_bound_down_to_2000(pg) -> None:
    """One step of the explorer's slider down from 3000 (the key, as a learner steps), until
    the readout says 2000 and every chart shows its view drawn ahead."""
    _press_down_to_2000(pg)
    pg.wait_for_function(
        f"Array.from(document.querySelectorAll('{DRAWN}')).every(el => el.dataset.drawn === "
        "'prepared')"
    )


COUNT_UPDATES = """
updates = []
for _jc in ex.charts:  # every state update the page sends the kernel, per chart
    _jc.comm.on_msg(lambda msg, handle=_jc._handle_msg, n=ex.charts.index(_jc): (
        updates.append((n, msg["content"]["data"].get("state")))
        if msg["content"]["data"].get("method") == "update" else None, handle(msg)))
"""
READ_IN_KERNEL = """async (expression) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const reply = await k.requestExecute({code: "", user_expressions: {out: expression}}).done;
  return reply.content.user_expressions.out.data["text/plain"];
}"""


def test_a_step_sends_the_kernel_no_report_it_has_and_a_moved_t_is_reported(
    lab: Lab, check_notebook: Path, page
) -> None:
    """A slider step shows each chart's new view (drawn ahead) and sends the kernel no state
    update: the kernel sent each parameter's value with the step, and a view shown reports
    only what differs from the model (ipywidgets sends a state diff, none when it is empty);
    each update would make the kernel busy and JupyterLab redraw its status. Moving the
    scrubber's t in the page is reported (``_params.t``, ``ExplorerChart``'s ``connect``)."""
    from tests.browser.conftest import write_explorer_notebook

    notebook = write_explorer_notebook(check_notebook.parent / "93_explorer_reports.ipynb")
    pg, net = page
    pg.set_default_timeout(45_000)
    errors = run_notebook(pg, lab, notebook.name, "reports")
    assert errors == [], errors
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '3000'")
    pg.wait_for_function(PREPARED_READY, polling=250, timeout=90_000)
    pg.wait_for_timeout(500)  # the widget's debounce: the last report has been sent
    pg.evaluate(RUN_IN_KERNEL, COUNT_UPDATES)

    _step_bound_down_to_2000(pg)
    pg.wait_for_timeout(1000)
    assert pg.evaluate(READ_IN_KERNEL, "updates") == "[]"
    assert pg.evaluate(READ_IN_KERNEL, "ex.last_values['bound']") == "2000"

    t = float(pg.evaluate(READ_IN_KERNEL, "ex.param('t', 1)")) - 100
    pg.evaluate(
        f"async () => {{ const v = document.querySelectorAll('{DRAWN}')[1].winvizView;"
        f" v.signal('t', {t}); await v.runAsync(); }}"
    )
    for _ in range(100):  # the report is debounced
        if float(pg.evaluate(READ_IN_KERNEL, "ex.param('t', 1)")) == t:
            break
        pg.wait_for_timeout(100)
    assert pg.evaluate(READ_IN_KERNEL, "[(n, sorted(s)) for n, s in updates]") == (
        "[(1, ['_params'])]"
    )
    assert net.blocked == []


def write_burst_notebook(path: Path) -> Path:
    """A lesson with one explorer whose every run takes 0.4 s (a loaded machine): conftest's
    job, its bound a slider 0 … 10000 by 500 (starting at 1000), charts: the timeline and a
    learner's own Altair chart. ``calls``: every bound the pipeline ran (ahead too);
    ``shown``: the bound of every run the explorer showed."""
    from lesson_notebook import write_lesson

    return write_lesson(
        path,
        [
            nbformat.v4.new_code_cell(
                "import time\n\n"
                "import altair as alt\n"
                "import winviz as wv\n\n"
                "wv.setup_rendering()\n"
                'RECORDS = [("a", 1000), ("a", 2500), ("a", 6000), ("a", 4000), ("a", 12000),\n'
                '           ("a", 3000)]\n'
                "calls = []\n\n\n"
                "def counts(records, bound=1000, size=5000):\n"
                "    calls.append(bound)\n"
                "    time.sleep(0.4)\n"
                "    env = wv.StreamExecutionEnvironment()\n"
                "    (env.from_collection(records, arrival_times=[0, 100, 200, 300, 400, 500])\n"
                "        .assign_timestamps_and_watermarks(\n"
                "            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound)\n"
                "            .with_timestamp_assigner(lambda e, _: e[1]))\n"
                "        .key_by(lambda e: e[0])\n"
                "        .window(wv.TumblingEventTimeWindows.of(size))\n"
                "        .aggregate(wv.CountAggregate())\n"
                '        .sink_to("counts"))\n'
                "    return env.execute()\n\n\n"
                "def dots(result):\n"
                '    return alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q")'
            ),
            nbformat.v4.new_code_cell(
                "ex = wv.explore(counts, RECORDS, bound=(0, 10000, 500), size=[5000, 10000],\n"
                '                charts=("timeline", dots))\n'
                "shown = []\n"
                "_update = ex.update\n\n\n"
                "def counted_update():\n"
                "    _update()\n"
                '    shown.append(ex.last_values["bound"])\n\n\n'
                "ex.update = counted_update\n"
                "ex"
            ),
        ],
    )


# every change of a chart's run in the page: [chart, data-run, data-call, time]
WATCH_RUNS = f"""() => {{
  window.__runs = [];
  const charts = Array.from(document.querySelectorAll('{DRAWN}'));
  const watch = new MutationObserver((records) => {{
    const now = performance.now();
    for (const r of records) {{
      const el = r.target;
      window.__runs.push([charts.indexOf(el), el.dataset.run, el.dataset.call, now]);
    }}
  }});
  charts.forEach((el) => watch.observe(el, {{attributes: true, attributeFilter: ['data-run']}}));
}}"""
FINAL_CALL = "counts(data, bound=5000, size=5000)"
ALL_SHOW_FINAL = f"""() => {{
  const charts = Array.from(document.querySelectorAll('{DRAWN}'));
  return charts.length === 2 && charts.every(el => el.dataset.call === {json.dumps(FINAL_CALL)});
}}"""


def test_quick_key_presses_show_the_last_value_on_every_chart_together(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    """Eight quick key presses on a slider whose runs take 0.4 s each: latest wins. The
    kernel shows a run of the values the page has when it is free (``Explorer._later``;
    ipywidgets sends one change at a time), not every value in turn; the page shows each
    chart's latest run only, and the explorer's charts switch together (``_group``): every
    run a chart showed, the other showed at the same moment. Within 15 s every chart shows
    bound 5000 (``data-call``, the run's pipeline call); the Vega bundle was imported once
    (``LOADER``) and no widget failed to start."""
    notebook = write_burst_notebook(check_notebook.parent / "94_explorer_burst.ipynb")
    pg, net = page
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.set_default_timeout(45_000)
    errors = run_notebook(pg, lab, notebook.name, "burst")
    assert errors == [], errors
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '1000'")
    pg.wait_for_function(
        f"Array.from(document.querySelectorAll('{DRAWN}')).length === 2 && Array.from("
        f"document.querySelectorAll('{DRAWN}')).every(el => el.dataset.ahead === 'done')",
        polling=250,
        timeout=90_000,
    )
    assert (
        pg.evaluate(f"Array.from(document.querySelectorAll('{DRAWN}')).map(el => el.dataset.call)")
        == ["counts(data, bound=1000, size=5000)"] * 2
    )
    before = json.loads(pg.evaluate(READ_IN_KERNEL, "[len(calls), ex.page_changes]"))
    pg.evaluate(WATCH_RUNS)

    handle = pg.locator(".jp-OutputArea .widget-vbox .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    started = time.monotonic()
    for _ in range(8):
        pg.keyboard.press("ArrowRight")
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '5000'")
    pg.wait_for_function(ALL_SHOW_FINAL, polling=50, timeout=15_000)
    settled = time.monotonic() - started
    shown = json.loads(pg.evaluate(READ_IN_KERNEL, "shown"))
    calls, changes = json.loads(pg.evaluate(READ_IN_KERNEL, "[calls, ex.page_changes]"))
    pg.wait_for_timeout(1500)  # nothing older comes after it
    assert pg.evaluate(ALL_SHOW_FINAL)
    runs = pg.evaluate("window.__runs")
    pg.screenshot(path=str(shots / "jupyterlab_explorer_burst.png"))

    assert settled < 15
    assert shown[-1] == 5000 and len(shown) <= 3, shown  # not eight runs in turn
    assert changes - before[1] <= 8
    computed = calls[before[0] :]
    assert 5000 in computed and not {3000, 3500, 4000} <= set(computed), computed
    # each chart showed the same runs, switching together (one task: one observer callback)
    by_chart = [[(run, call) for i, run, call, _ in runs if i == n] for n in (0, 1)]
    assert by_chart[0] == by_chart[1] and by_chart[0][-1][1] == FINAL_CALL, runs
    for run in {r for _, r, _, _ in runs}:
        times = [t for _, r, _, t in runs if r == run]
        assert len(times) == 2 and max(times) - min(times) < 1, runs
    assert pg.evaluate("globalThis.__winvizBundleLoads") == 1
    assert not [m for m in console if "Failed to initialize model" in m]
    bad = [m for m in console if m.startswith(("error", "warning")) and " to activate." not in m]
    assert bad == []
    assert net.blocked == []


def _shut_down_kernels(lab: Lab) -> None:
    """Shut every kernel of ``lab`` down (JupyterLab's REST API), as a server restart would."""
    with urllib.request.urlopen(f"{lab.url}/api/kernels?token={lab.token}") as answer:
        kernels = json.load(answer)
    for kernel in kernels:
        urllib.request.urlopen(
            urllib.request.Request(
                f"{lab.url}/api/kernels/{kernel['id']}?token={lab.token}", method="DELETE"
            )
        )


SAVE = "() => { void window.jupyterapp.commands.execute('docmanager:save'); }"
SAVED = "!window.jupyterapp.shell.currentWidget.context.model.dirty"


def _saved_models(notebook: Path) -> Counter:
    """How many widget models of each kind ``notebook``'s metadata holds."""
    saved = nbformat.read(notebook, as_version=4).metadata["widgets"]
    models = saved["application/vnd.jupyter.widget-state+json"]["state"].values()
    return Counter(m["model_name"] for m in models)


def _reopened(pg, lab: Lab, notebook: Path, workspace: str, shot: Path) -> None:
    """Open ``notebook`` (its kernels shut down first) in ``pg``: its chart and slider drawn
    from the saved state as when it ran, no "Error displaying widget"."""
    _shut_down_kernels(lab)
    pg.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{notebook.name}?token={lab.token}")
    marks = pg.locator(".jp-OutputArea .vega-embed .role-mark")
    marks.first.wait_for(state="attached", timeout=45_000)
    assert pg.locator(".jp-OutputArea .vega-embed").count() == 1
    assert marks.count() == 9  # as drawn when run (test_lesson_runs_in_jupyterlab_…)
    slider = pg.locator(".jp-OutputArea .jupyter-widgets.widget-slider .widget-readout")
    assert slider.first.inner_text().strip() == "3"
    pg.screenshot(path=str(shot))
    assert pg.locator(".jp-OutputArea-output:has-text('Error displaying widget')").count() == 0


# the scrubber's ExplorerChart (anywidget), the Bundle of its script, the slider, their
# layouts and the slider's style
MODELS = {
    "AnyModel": 1,
    "WidgetModel": 1,
    "IntSliderModel": 1,
    "LayoutModel": 2,
    "SliderStyleModel": 1,
}


def test_a_lesson_saved_and_reopened_draws_its_widgets_from_the_saved_state(
    lab: Lab, check_notebook: Path, browser, shots: Path
) -> None:
    """Every chart is a widget (``ExplorerChart``): its output is a widget view, whose model
    lives in the page. ``make lab``'s settings (``tools/lab_overrides.json``, which
    ``jupyter_lab`` gives this server too) have JupyterLab save the widgets' state in the
    notebook's metadata on each save, so a lesson run, saved and reopened after its kernel
    was shut down draws its chart and slider from it, not "Error displaying widget: model
    not found". Saved again before it is run (JupyterLab autosaves: a reopened notebook is
    changed, its widgets restored), it keeps that state (``keepSaved`` in the chart's
    script), and draws it when opened once more."""
    notebook = check_notebook.parent / "92_reopened.ipynb"
    shutil.copy(check_notebook, notebook)
    consoles, nets = [], []
    for step in ("run", "reopened", "reopened_again"):
        pg, net = new_page(browser)
        consoles.append(console_of(pg))
        nets.append(net)
        pg.set_default_timeout(45_000)
        try:
            if step == "run":
                assert run_notebook(pg, lab, notebook.name, workspace=step) == []
                pg.locator(".jp-OutputArea .vega-embed .role-mark").first.wait_for(state="attached")
            else:
                _reopened(pg, lab, notebook, step, shots / f"jupyterlab_{step}.png")
                assert pg.evaluate(SAVED) is False  # restored widgets: JupyterLab will save
            pg.evaluate(SAVE)
            wait_until(pg, SAVED, 30, "the save")
            assert _saved_models(notebook) == MODELS, step
        finally:
            pg.close()
    bad = [
        m
        for console in consoles
        for m in console
        if m.startswith(("error", "warning")) and " to activate." not in m
    ]
    assert bad == [], bad
    assert [net.blocked for net in nets] == [[], [], []]
