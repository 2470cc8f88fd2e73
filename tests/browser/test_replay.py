"""Replay on the scrubber in a real browser: "play" animates processing time, pauses, and
stops at the end — on a ``save_html`` page (strict policy, Vega with ``ast: true``, no
page script of its own) opened from ``file://`` in Debian's Chromium, nothing fetched.

The job is the README's (conftest's check notebook): four clicks arriving at processing
times 0, 100, 200 and 900 ms; replay moves t by 9 ms every 100 ms (10 s for 900 ms).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import winviz as wv
from tests.browser.conftest import wait_until
from tests.jobs import RECORDS, counts
from tools.browser import open_drawn
from winviz.viz import save_html

ARRIVED = ".vega-embed g.mark-symbol.layer_6_marks path"  # elements arrived by t (4: firings)
SLIDER = '.vega-bindings input[type="range"][name="t"]'
PLAY = '.vega-bindings input[type="checkbox"][name="play"]'


def readme_trace() -> wv.Trace:
    env = wv.StreamExecutionEnvironment()
    clicks = env.from_collection(
        [("alice", 1_000), ("bob", 2_500), ("alice", 4_999), ("alice", 900)],
        arrival_times=[0, 100, 200, 900],
    )
    (
        clicks.assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(500).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(5)))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    return env.execute().trace


@pytest.fixture(scope="module")
def scrubber_page(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "scrubber.html"
    return save_html(wv.scrubber(readme_trace()), path)


def test_play_moves_time_and_the_marks_pause_holds_them(scrubber_page: Path, page, shots) -> None:
    pg, net = page
    console = open_drawn(pg, scrubber_page)
    slider, play = pg.locator(SLIDER), pg.locator(PLAY)
    assert (slider.input_value(), play.is_checked()) == ("900", False)
    assert pg.locator(ARRIVED).count() == 4
    slider.focus()
    pg.keyboard.press("Home")  # t = 0: one click has arrived
    wait_until(pg, f"document.querySelectorAll('{ARRIVED}').length === 1")
    at_zero = pg.inner_html("div.winviz-view svg")

    play.check()  # t advances by itself: the slider follows, the second click arrives
    wait_until(pg, f"document.querySelectorAll('{ARRIVED}').length === 2", what="t ≥ 100")
    assert int(slider.input_value()) >= 100
    assert pg.inner_html("div.winviz-view svg") != at_zero

    play.uncheck()  # pause: t and the marks stay where they are
    paused = int(slider.input_value())
    marks = pg.inner_html("div.winviz-view svg")
    pg.wait_for_timeout(600)  # six ticks of the replay timer
    assert int(slider.input_value()) == paused and paused < 900
    assert pg.inner_html("div.winviz-view svg") == marks

    play.check()  # resume: plays to the end of the run, then unticks itself
    wait_until(pg, f"!document.querySelector('{PLAY}').checked", timeout=30, what="the end")
    assert slider.input_value() == "900"
    assert pg.locator(ARRIVED).count() == 4
    pg.locator("div.winviz-chart").first.screenshot(path=str(shots / "replay_end.png"))

    play.check()  # ticked at the end: replays from the start
    wait_until(pg, f"document.querySelectorAll('{ARRIVED}').length < 4", what="a restart")
    assert int(slider.input_value()) < 900
    play.uncheck()
    assert net.blocked == []
    assert console == []


PLAYING = "div.winviz-explorer div.winviz-chart"  # the explorer's scrubber (its winvizView)


@pytest.fixture(scope="module")
def explorer_page(tmp_path_factory) -> Path:
    ex = wv.explore(counts, RECORDS, bound=(0, 3000, 1000), charts=("scrubber",))
    return wv.save_html(ex, tmp_path_factory.mktemp("replay") / "explorer.html")


def _signals(pg) -> tuple[float, bool]:
    return tuple(
        pg.evaluate(
            f"(() => {{ const v = document.querySelector('{PLAYING}').winvizView;"
            " return [v.signal('t'), v.signal('play')]; })()"
        )
    )


def test_play_on_an_explorer_page_advances_t_and_stops_at_the_end(explorer_page: Path, page):
    """The page's script plays the replay (winviz.viz.view_script; the spec has no timer):
    ticked, t advances by the settings' step per tick; at the end "play" unticks and t stays
    at the slider's end; paused, nothing ticks: no layout is read from the view's <svg>
    (Vega 6's timer stream read it 10 times a second, playing or not)."""
    pg, net = page
    console = open_drawn(pg, explorer_page)
    wait_until(pg, "document.querySelector('div.winviz-explorer').dataset.state === 'ready'")
    t_max, played = _signals(pg)  # the scrubber starts at its slider's end
    assert (t_max, played) == (int(pg.locator(f"{PLAYING} {SLIDER}").get_attribute("max")), False)
    pg.evaluate(  # count the <svg> rects read from here on
        "() => { window.__rects = 0; const own = Element.prototype.getBoundingClientRect;"
        " Element.prototype.getBoundingClientRect = function () {"
        " if (this.tagName === 'svg') window.__rects += 1; return own.call(this); }; }"
    )
    pg.wait_for_timeout(600)  # paused: six ticks of the old timer
    assert pg.evaluate("window.__rects") == 0

    slider = pg.locator(f"{PLAYING} {SLIDER}")
    slider.focus()
    pg.keyboard.press("Home")  # t = 0
    wait_until(pg, f"document.querySelector('{PLAYING}').winvizView.signal('t') === 0")
    pg.locator(f"{PLAYING} {PLAY}").check()
    wait_until(pg, f"document.querySelector('{PLAYING}').winvizView.signal('t') > 0")
    wait_until(
        pg,
        f"document.querySelector('{PLAYING}').winvizView.signal('play') === false",
        timeout=30,
        what="the end of the replay",
    )
    assert _signals(pg) == (t_max, False)
    assert not pg.locator(f"{PLAYING} {PLAY}").is_checked()
    pg.wait_for_timeout(300)  # stopped: t stays at the end
    assert _signals(pg) == (t_max, False)
    assert pg.evaluate("window.winvizCharts.errors") == []
    assert net.blocked == []
    assert console == []
