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
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

START_TIMEOUT = 60  # s for the server to answer /api/status


@dataclass(frozen=True)
class Lab:
    url: str
    token: str
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(folder: Path) -> None:
    """User settings that keep JupyterLab off the network: no news, no update checks."""
    target = folder / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


def _log_tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-30:])


@pytest.fixture(scope="module")
def lab(check_notebook: Path, tmp_path_factory) -> Iterator[Lab]:
    home = tmp_path_factory.mktemp("jupyter")
    _settings(home / "settings")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    log = home / "lab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={check_notebook.parent}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        *(["--allow-root"] if os.geteuid() == 0 else []),  # CI runs as root
    ]
    with log.open("w") as out:
        # its own process group, so that a server that will not stop is killed with its kernel
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{_log_tail(log)}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"jupyter lab did not answer in {START_TIMEOUT} s:\n{_log_tail(log)}"
                    )
                time.sleep(0.25)  # polling a server that is starting, not waiting on a page
        yield Lab(url, token, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# The open notebook's kernel, as "connectionStatus/status" ("none" before it has one).
KERNEL = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return k ? k.connectionStatus + '/' + k.status : 'none';
}"""
# True when every code cell has an execution count and the kernel is idle again, or as soon
# as a cell has written to stderr (an error stops "run all": the test then says which).
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
ALL_RAN = (
    "() => {\n"
    f"    if (document.querySelector({json.dumps(STDERR)})) return true;\n"
    """    const w = window.jupyterapp.shell.currentWidget;
    const cells = w.content.widgets.filter(c => c.model.type === 'code');
    const k = w.sessionContext.session.kernel;
    return cells.length === 3 && cells.every(c => c.model.executionCount !== null)
        && k.status === 'idle';
}"""
)


def test_lesson_runs_in_jupyterlab_with_charts_and_widgets(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    pg, net = page
    pg.set_default_timeout(45_000)
    pg.goto(f"{lab.url}/lab/tree/{check_notebook.name}?token={lab.token}")
    pg.wait_for_function("window.jupyterapp !== undefined")
    pg.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    pg.wait_for_function(f"({KERNEL})() === 'connected/idle'")  # the kernel has started
    # run all cells through JupyterLab's own command (not awaited: we wait on the cells)
    pg.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    pg.wait_for_function(ALL_RAN, polling=250, timeout=90_000)  # a loaded machine is slow
    errors = pg.locator(STDERR)
    assert errors.count() == 0, errors.all_inner_texts()

    chart = pg.locator(".jp-OutputArea .vega-embed")
    chart.first.wait_for()
    assert chart.count() == 1
    marks = chart.first.locator(".role-mark")  # Altair's JupyterChart draws SVG
    marks.first.wait_for(state="attached")
    assert marks.count() == 7  # windows, now, watermark line + label, firings, elements (2)
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
    play.uncheck()
    pg.screenshot(path=str(shots / "jupyterlab_lesson.png"))
    assert net.blocked == []


# every code cell has run and the kernel is idle again (or a cell wrote to stderr)
ALL_CELLS_RAN = (
    "() => {\n"
    f'    if (document.querySelector("{STDERR}")) return true;\n'
    """    const w = window.jupyterapp.shell.currentWidget;
    const cells = w.content.widgets.filter(c => c.model.type === 'code');
    const k = w.sessionContext.session.kernel;
    return cells.length > 0 && cells.every(c => c.model.executionCount !== null)
        && k.status === 'idle';
}"""
)
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
    pg.goto(f"{lab.url}/lab/workspaces/explorer/tree/{notebook.name}?token={lab.token}")
    pg.wait_for_function("window.jupyterapp !== undefined")
    pg.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    pg.wait_for_function(f"({KERNEL})() === 'connected/idle'")
    assert pg.evaluate("window.jupyterapp.shell.currentWidget.context.path") == notebook.name
    pg.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    pg.wait_for_function(ALL_CELLS_RAN, polling=250, timeout=90_000)
    errors = pg.locator(STDERR)
    assert errors.count() == 0, errors.all_inner_texts()

    charts = pg.locator(".jp-OutputArea .widget-vbox .vega-embed")
    charts.first.wait_for()
    assert charts.count() == 2  # the timeline and the scrubber
    charts.first.locator(".role-mark").first.wait_for(state="attached")
    readout = pg.locator(READOUT).first
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '3000'")
    pg.wait_for_timeout(500)  # the widget's debounce: let the last spec's redraw finish
    at_3000 = _timeline_svg(pg)

    handle = pg.locator(".jp-OutputArea .widget-vbox .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    pg.keyboard.press("ArrowLeft")
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '2000'")
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
    bad = [m for m in console if m.startswith(("error", "warning"))]
    assert bad == [], bad
    assert net.blocked == []


# each explorer chart's widget element (ExplorerChart's page script sets data-drawn on it)
DRAWN = ".jp-OutputArea [data-drawn]"
PREPARED_READY = f"""() => {{
  const holders = Array.from(document.querySelectorAll("div.winviz-prepared"));
  const charts = Array.from(document.querySelectorAll("{DRAWN}"));
  return holders.length === 2 && holders.every(h => h.querySelectorAll("svg").length >= 2)
    && charts.length === 2 && charts.every(el => el.dataset.ahead === "done");
}}"""
RUN_IN_KERNEL = """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await k.requestExecute({code: code}).done;
}"""


def _chart_svgs(pg) -> list[str]:
    """Each explorer chart as drawn (its SVG's markup; Vega's clip ids, numbered per page,
    left out)."""
    return pg.evaluate(
        f"""Array.from(document.querySelectorAll('{DRAWN}')).map(
          el => el.querySelector('svg').outerHTML.replace(/clip\\d+/g, 'clip'))"""
    )


def _drawn(pg) -> list[str]:
    return pg.evaluate(
        f"Array.from(document.querySelectorAll('{DRAWN}')).map(el => el.dataset.drawn)"
    )


def test_a_slider_step_to_a_run_drawn_ahead_shows_that_runs_marks(
    lab: Lab, check_notebook: Path, page, shots: Path
) -> None:
    """The explorer computes the runs next to the shown one in the kernel while it is idle
    and the page draws them out of sight (``winviz.viz.ahead``, ``ExplorerChart``): at bound
    3000 (the slider's end), bound 2000 and size 10000. A key press to bound 2000 then moves
    the views drawn ahead into place (``data-drawn="prepared"``) — and they must be the views
    of bound 2000: each chart's SVG is the one the page draws when the kernel sends that run
    afresh (``data-drawn="embedded"``, the cache emptied), and not the one it showed before."""
    from tests.browser.conftest import write_explorer_notebook

    notebook = write_explorer_notebook(check_notebook.parent / "92_explorer_ahead.ipynb")
    pg, net = page
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.set_default_timeout(45_000)
    pg.goto(f"{lab.url}/lab/workspaces/ahead/tree/{notebook.name}?token={lab.token}")
    pg.wait_for_function("window.jupyterapp !== undefined")
    pg.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    pg.wait_for_function(f"({KERNEL})() === 'connected/idle'")
    pg.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    pg.wait_for_function(ALL_CELLS_RAN, polling=250, timeout=90_000)
    assert pg.locator(STDERR).count() == 0, pg.locator(STDERR).all_inner_texts()
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '3000'")
    pg.wait_for_function(PREPARED_READY, polling=250, timeout=90_000)
    pg.wait_for_timeout(500)  # the widget's debounce: the last redraw has finished
    at_3000 = _chart_svgs(pg)
    assert len(at_3000) == 2  # the timeline and the scrubber

    handle = pg.locator(".jp-OutputArea .widget-vbox .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    pg.keyboard.press("ArrowLeft")
    pg.wait_for_function(f"document.querySelector('{READOUT}').textContent.trim() === '2000'")
    pg.wait_for_function(
        f"Array.from(document.querySelectorAll('{DRAWN}')).every(el => el.dataset.drawn === "
        "'prepared')"
    )
    pg.wait_for_timeout(500)
    prepared = _chart_svgs(pg)
    assert prepared[0] != at_3000[0] and prepared[1] != at_3000[1]

    # the same run sent afresh: the cache emptied, via bound 1000
    pg.evaluate(RUN_IN_KERNEL, "ex.set(bound=1000)")
    pg.evaluate(RUN_IN_KERNEL, "ex.ahead.clear(); ex.set(bound=2000)")
    pg.wait_for_function(
        f"Array.from(document.querySelectorAll('{DRAWN}')).every(el => el.dataset.drawn === "
        "'embedded')"
    )
    pg.wait_for_timeout(500)
    assert _chart_svgs(pg) == prepared
    pg.screenshot(path=str(shots / "jupyterlab_explorer_ahead.png"))
    bad = [m for m in console if m.startswith(("error", "warning")) and " to activate." not in m]
    assert bad == []  # (JupyterLab warns of plugins slow to start on a loaded machine)
    assert net.blocked == []
