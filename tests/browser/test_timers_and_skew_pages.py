"""The timers chart and the skew chart in Debian's Chromium (issue 12): drawn with no console
message at all (Vega's warnings go to the console), the queue panel linked to the timers (the
pointer over it draws its processing time across them) and the key dropdown showing one key's
timers. Pages written by ``wv.save_html`` and opened from ``file://``."""

from __future__ import annotations

from pathlib import Path

import pytest

import winviz as wv
from tests.browser.gallery import SCAN_JS, defects
from tests.chart_jobs import kernel_job
from tests.test_viz_skew import clickstream_run, eight_events
from tests.test_viz_timers_scrubber import event_job, many_keys_job
from tools.browser import open_drawn, wait_until
from winviz.viz.timer_places import DEDUP_EVENT

LINK = "g.mark-rule.role-mark.concat_0_layer_0_marks line"  # the queue panel's time, across
DEDUPS = f"g.mark-symbol.role-mark path[aria-label*='{DEDUP_EVENT}']"
DENSE_K05 = 51  # the ▼ drawn for key k05 of the dense job (kernel_job(3000)), 514-px plot


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("timers_pages")
    charts = {
        "timers": wv.timers_chart(event_job()),
        "timers_keys": wv.timers_chart(many_keys_job(10, 40)),
        "timers_dense": wv.timers_chart(kernel_job(3000)),
        "skew": wv.skew_chart(eight_events(1_000)),
        "skew_dates": wv.skew_chart(clickstream_run(1_000)),
    }
    return {name: wv.save_html(chart, folder / f"{name}.html") for name, chart in charts.items()}


@pytest.mark.parametrize("name", ["timers", "timers_keys", "skew", "skew_dates"])
def test_drawn_without_a_console_message(name: str, pages, page) -> None:
    pg, net = page
    console = open_drawn(pg, pages[name])
    assert pg.evaluate("window.winvizCharts") == {"done": True, "charts": 1, "errors": []}
    assert pg.locator("div.winviz-chart .role-mark").count() > 0
    assert (console, net.blocked) == ([], [])


def test_the_queue_panel_points_at_a_processing_time(pages, page) -> None:
    pg, net = page
    console = open_drawn(pg, pages["timers"])
    assert pg.locator(LINK).count() == 0  # nothing picked yet
    # the queue panel's points: the pointer over the one at the top (700 ms)
    points = pg.locator("g.mark-symbol.role-mark.queue_points_1_marks path")
    assert points.count() == 12
    box = points.nth(9).bounding_box()
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    pg.wait_for_function(f"document.querySelectorAll({LINK!r}).length > 0", timeout=10_000)
    # the rule spans the timers panel at the point's height
    line = pg.locator(LINK).first.bounding_box()
    assert abs(line["y"] - (box["y"] + box["height"] / 2)) <= 2
    pg.mouse.move(1, 1)  # the pointer leaves: the line goes
    pg.wait_for_function(f"document.querySelectorAll({LINK!r}).length === 0", timeout=10_000)
    assert (console, net.blocked) == ([], [])


def test_the_key_dropdown_shows_one_keys_timers(pages, page) -> None:
    pg, net = page
    console = open_drawn(pg, pages["timers_keys"])
    rules = "g.mark-rule.role-mark line[aria-roledescription='rule mark']"
    timers = f"{rules.replace('line', 'path')}, {rules}"
    before = pg.locator(timers).count()
    pg.locator("select").select_option("k3")
    pg.wait_for_function(f"document.querySelectorAll({timers!r}).length < {before}", timeout=10_000)
    labels = [el.get_attribute("aria-label") or "" for el in pg.locator(timers).all()]
    shown = [label for label in labels if "key: " in label]
    assert shown and all("key: k3" in label for label in shown)
    # k3's de-duplicated registrations, placed for its view (issue 26): 1 at 30 ms, 2 at each
    # of 130, 230, 330 ms — all drawn, none hiding or hidden, no "×n" without its ▼
    scene = pg.evaluate(SCAN_JS)[0]
    dedups = [p for p in scene["points"] if p["datum"] == DEDUP_EVENT and p["role"] == "mark"]
    assert len(dedups) == 4
    assert sorted(t["text"] for t in scene["texts"] if t["kind"] == "dedup count") == ["×2"] * 3
    assert {kind: found for kind, found in defects(scene).items() if found} == {}
    assert (console, net.blocked) == ([], [])


def test_a_picked_key_shows_its_dedups_on_a_dense_job(pages, page) -> None:
    """The dense job (20 keys): every ▼ of the every-key view stands for several keys' registrations
    (hidden for any one key before issue 26's fix); with k05 picked, its own are drawn, and
    nothing hides or crosses anything."""
    pg, net = page
    console = open_drawn(pg, pages["timers_dense"])
    pg.locator("select").select_option("k05")
    pg.wait_for_function(
        f"document.querySelectorAll({DEDUPS!r}).length === {DENSE_K05}", timeout=10_000
    )
    scene = pg.evaluate(SCAN_JS)[0]
    dedups = [p for p in scene["points"] if p["datum"] == DEDUP_EVENT and p["role"] == "mark"]
    assert len(dedups) == DENSE_K05
    assert {kind: found for kind, found in defects(scene).items() if found} == {}
    assert (console, net.blocked) == ([], [])


# the timer events drawn (not ▼) and the events counted on the rings drawn, as Vega drew them
EVENTS_JS = """() => {
  const root = document.querySelector("div.winviz-chart").winvizView.scenegraph().root;
  let drawn = 0, counted = 0;
  (function walk(mark) {
    (mark.items || []).forEach(function (item) {
      const d = item.datum || {};
      if (mark.marktype === "symbol" && d.kind === "timer event" && d.event !== DEDUP) drawn++;
      if (mark.marktype === "symbol" && d.kind === "pile") counted += d["also here"];
      (item.items || []).forEach(walk);
    });
  })(root);
  return [drawn, counted];
}""".replace("DEDUP", repr(DEDUP_EVENT))


def test_a_picked_key_shows_every_timer_event_of_its_own(pages, page) -> None:
    """The dense job (20 keys, 8 timer events each: 4 timers registered and fired): every
    key's view draws 126 and counts 34 on the rings where they pile up; each key picked
    draws its 8, none counted on another key's mark it hides (issue 26: before the fix most
    keys lost some), and nothing hides or crosses anything."""
    pg, net = page
    console = open_drawn(pg, pages["timers_dense"])
    assert pg.evaluate(EVENTS_JS) == [126, 34]
    got = {}
    for i in range(20):
        key = f"k{i:02d}"
        pg.locator("select").select_option(key)
        got[key] = wait_until(
            pg, f"() => {{ const n = ({EVENTS_JS})(); return n[0] + n[1] < 160 && n; }}"
        )
        scene = pg.evaluate(SCAN_JS)[0]
        assert {kind: found for kind, found in defects(scene).items() if found} == {}, key
    assert got == {f"k{i:02d}": [8, 0] for i in range(20)}
    assert (console, net.blocked) == ([], [])
