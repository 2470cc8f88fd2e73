"""Real-browser fixtures: Debian's Chromium driven by Playwright, with no network.

The browser is the executable Debian's ``chromium`` package installs (``/usr/bin/chromium``,
or ``$WINVIZ_CHROMIUM``), never one downloaded by ``playwright install``. When it is missing
the tests FAIL (not skip) and say how to get it: ``make browser`` as root installs it.
Every page is opened with all requests routed through ``Network``: anything not to
``file:``, ``data:``, ``blob:`` or 127.0.0.1 is aborted and recorded, and tests assert that
nothing was asked for.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "browser"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL = ("file:", "data:", "blob:", "about:", "http://127.0.0.1", "ws://127.0.0.1")


def chromium_path() -> str:
    """The Chromium executable, or a test failure saying how to install it."""
    path = os.environ.get("WINVIZ_CHROMIUM", "/usr/bin/chromium")
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"Chromium not found at {path!r}: the browser tests need Debian's chromium. "
            "Install it with `make browser` (as root: apt-get update && apt-get install -y "
            "chromium) or point WINVIZ_CHROMIUM at a Chromium executable. "
            "(`playwright install` downloads a browser and is not used.)",
            pytrace=False,
        )
    return path


class Network:
    """Records every request a page makes and aborts those leaving this machine."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if url.startswith(LOCAL):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


@pytest.fixture(scope="session")
def shots() -> Path:
    """Where the tests save their screenshots: build/browser/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    profile = tempfile.mkdtemp(prefix="winviz-chromium-")
    with sync_playwright() as pw:
        # a fresh user-data-dir per module: launch_persistent_context owns it
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser) -> Iterator[tuple[object, Network]]:
    """A fresh page whose requests go through a ``Network`` (page, network)."""
    net = Network()
    pg = browser.new_page()
    pg.route("**/*", net.route)
    try:
        yield pg, net
    finally:
        pg.close()


@pytest.fixture(scope="module")
def check_notebook(tmp_path_factory) -> Path:
    """The purpose-made lesson ``90_browser_check.ipynb`` in a fresh folder (see
    ``write_check_notebook``)."""
    return write_check_notebook(tmp_path_factory.mktemp("lessons") / "90_browser_check.ipynb")


def write_check_notebook(path: Path) -> Path:
    """Write the purpose-made lesson the browser tests use: the README's job, its scrubber
    (four clicks arriving at processing times 0, 100, 200 and 900 ms) and an ipywidgets
    slider."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Browser check\n\nThe README's job, scrubbed."),
        nbformat.v4.new_code_cell(
            "import ipywidgets\n"
            "import winviz as wv\n\n"
            "wv.setup_rendering()\n"
            "env = wv.StreamExecutionEnvironment()\n"
            "clicks = env.from_collection(\n"
            '    [("alice", 1_000), ("bob", 2_500), ("alice", 4_999), ("alice", 900)],\n'
            "    arrival_times=[0, 100, 200, 900],\n"
            ")\n"
            "sums = (clicks\n"
            "        .assign_timestamps_and_watermarks(\n"
            "            wv.WatermarkStrategy.for_bounded_out_of_orderness(500)\n"
            "            .with_timestamp_assigner(lambda e, _: e[1]))\n"
            "        .key_by(lambda e: e[0])\n"
            "        .window(wv.TumblingEventTimeWindows.of(wv.seconds(5)))\n"
            "        .aggregate(wv.CountAggregate()))\n"
            'sums.sink_to("counts")\n'
            "result = env.execute()"
        ),
        nbformat.v4.new_code_cell("wv.scrubber(result.trace)"),
        nbformat.v4.new_code_cell('ipywidgets.IntSlider(value=3, min=0, max=9, description="n")'),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)
    return path


def wait_until(pg, expression: str, *, timeout: float = 30.0, what: str = "") -> object:
    """Poll ``expression`` in the page until it is truthy and return its value; fail after
    ``timeout`` seconds naming ``what``. (Playwright's ``wait_for_function`` compiles its
    predicate in the page, which the pages' policy forbids: no ``'unsafe-eval'``; this
    evaluates through the debugging protocol instead.)"""
    deadline = time.monotonic() + timeout
    while True:
        value = pg.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what or expression}")
        pg.wait_for_timeout(50)  # polling the page, as wait_for_function would


@pytest.fixture(scope="module")
def explorer_notebook(tmp_path_factory) -> Path:
    """The purpose-made lesson ``91_explorer_check.ipynb`` in a fresh folder (see
    ``write_explorer_notebook``)."""
    return write_explorer_notebook(tmp_path_factory.mktemp("lessons") / "91_explorer_check.ipynb")


def write_explorer_notebook(path: Path) -> Path:
    """Write a purpose-made lesson with one explorer: six records of key "a" arriving every
    100 ms, tumbling windows of ``size`` (a dropdown: 5000 or 10000 ms) with out-of-orderness
    ``bound`` (a slider: 0, 1000, …, 3000 ms), late data to a side output; charts: the
    timeline and the scrubber. Its grid is 4 × 2 = 8 runs, all precomputed."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Explorer check\n\nA bound and a window size."),
        nbformat.v4.new_code_cell(
            "import winviz as wv\n\n"
            "wv.setup_rendering()\n"
            'RECORDS = [("a", 1000), ("a", 2500), ("a", 6000), ("a", 4000), ("a", 12000),\n'
            '           ("a", 3000)]\n\n\n'
            "def counts(records, bound=1000, size=5000):\n"
            "    env = wv.StreamExecutionEnvironment()\n"
            '    late = wv.OutputTag("late")\n'
            "    (env.from_collection(records, arrival_times=[0, 100, 200, 300, 400, 500])\n"
            "        .assign_timestamps_and_watermarks(\n"
            "            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound)\n"
            "            .with_timestamp_assigner(lambda e, _: e[1]))\n"
            "        .key_by(lambda e: e[0])\n"
            "        .window(wv.TumblingEventTimeWindows.of(size))\n"
            "        .side_output_late_data(late)\n"
            "        .aggregate(wv.CountAggregate())\n"
            '        .sink_to("counts"))\n'
            "    return env.execute()"
        ),
        nbformat.v4.new_code_cell(
            "ex = wv.explore(counts, RECORDS, bound=(0, 3000, 1000), size=[5000, 10000],\n"
            '                charts=("timeline", "scrubber"))\n'
            "ex"
        ),
        nbformat.v4.new_code_cell("ex.set(bound=3000)  # the page shows the lesson's first run"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)
    return path
