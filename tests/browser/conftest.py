"""Real-browser fixtures: Debian's Chromium driven by Playwright, with no network.

The browser, its launch and the pages' ``Network`` are ``tools/browser.py``'s (shared with
``bench/browser_bench.py``): Debian's ``chromium`` (``/usr/bin/chromium`` or
``$WINVIZ_CHROMIUM``), never one downloaded by ``playwright install``. When it is missing the
tests FAIL (not skip) and say how to get it: ``make browser`` as root installs it. Every page
is opened with all requests routed through a ``Network``: anything not to ``file:``,
``data:``, ``blob:`` or 127.0.0.1 is aborted and recorded, and tests assert that nothing was
asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from lesson_notebook import write_lesson

from tools.browser import Network, chromium, chromium_path, new_page, wait_until

__all__ = ["wait_until"]  # the tests' page poll (tools.browser)

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "browser"


@pytest.fixture(scope="session")
def shots() -> Path:
    """Where the tests save their screenshots: build/browser/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Chromium (a fresh profile per module), or a test failure saying how to install it."""
    try:
        executable = chromium_path()
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
    with chromium(executable) as context:
        yield context


@pytest.fixture
def page(browser) -> Iterator[tuple[object, Network]]:
    """A fresh page whose requests go through a ``Network`` (page, network)."""
    pg, net = new_page(browser)
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
    return write_lesson(
        path,
        [
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
            nbformat.v4.new_code_cell(
                'ipywidgets.IntSlider(value=3, min=0, max=9, description="n")'
            ),
        ],
    )


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
    return write_lesson(
        path,
        [
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
            nbformat.v4.new_code_cell(
                "ex.set(bound=3000)  # the page shows the lesson's first run"
            ),
        ],
    )
