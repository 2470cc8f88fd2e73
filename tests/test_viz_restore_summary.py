"""The explorer's summary line, the band tooltip's close and the subtitles' counts, as the run
keeps them after a restore (``winviz.trace.restores``), and counts of one said in the singular
(``vocabulary.counted``). The jobs: lesson 05's restore (``test_viz_restore_at_t``: [0, 10000)
fired at 12,200 ms, rolled back, fired again at 16,300 ms; f read as a side output, rolled back,
read again on time) and ``jobs.two_keys_restored`` ([0, 1000) cleaned up at 1,700 ms in the
failed attempt, at 1,600 ms in the replay)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import vl_convert as vlc
from chart_jobs import JOBS
from jobs import count_per_key, count_pipeline, two_keys_restored
from test_viz_restore_at_t import lesson_05_restore

import winviz as wv
from winviz import viz
from winviz.trace import vocabulary
from winviz.viz.explore import Summary, summarize
from winviz.viz.window_lives import pairs_text

ROLLED = "rolled back by a restore"
AGAIN = "read again after a restore"


@pytest.fixture(scope="module")
def lesson_05() -> Any:
    return lesson_05_restore()


@pytest.fixture(scope="module")
def two_keys() -> Any:
    return two_keys_restored()


def test_the_summary_counts_what_the_run_kept(lesson_05, two_keys) -> None:
    """Fails on main: "fired 4 (event-time timer 3 …) … elements 9: on time 8 … side output 1"
    on lesson 05 (the rolled-back firing and f's rolled-back side-output reading counted), "fired
    8 … elements 9: on time 9" on two keys."""
    assert summarize(lesson_05).text() == (
        f"fired 3 (1 more {ROLLED}) (event-time timer 2 · element 0 · processing-time timer 0 "
        f"· end of input 1) · late firings 0 · elements 8 (1 {AGAIN}): on time 8 · late, "
        "accepted 0 · dropped 0 · side output 0"
    )
    assert summarize(two_keys).text() == (
        f"fired 6 (2 more {ROLLED}) (event-time timer 4 · element 0 · processing-time timer 0 "
        f"· end of input 2) · late firings 0 · elements 6 (3 {AGAIN}): on time 6 · late, "
        "accepted 0 · dropped 0 · side output 0"
    )
    s = summarize(lesson_05)
    assert (s.fired, s.rolled_back_firings, s.elements, s.read_again, s.side_output) == (
        3, 1, 8, 1, 0
    )  # fmt: skip


def test_a_rolled_back_late_firing_is_not_counted() -> None:
    """a@200 arrives after the watermark passed 2,499 ms: accepted late (allowed lateness 3 s),
    [0, 1000) fires late at 200 ms — after checkpoint 1, so the failure right after rolls it
    back; the replay (the watermark starts again) reads a@200 on time. Fails on main: "fired 4
    (… element 1 …) · late firings 1 · elements 5: on time 4 · late, accepted 1"."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[2])
    events = [("a", 100), ("a", 2500), ("a", 200), ("a", 300)]
    count_pipeline(env, events, 1000, lateness=3000, arrival_interval=100)
    assert summarize(env.execute(fail_at=3)).text() == (
        f"fired 2 (2 more {ROLLED}) (event-time timer 0 · element 0 · processing-time timer 0 "
        f"· end of input 2) · late firings 0 · elements 4 (1 {AGAIN}): on time 4 · late, "
        "accepted 0 · dropped 0 · side output 0"
    )


def test_a_summary_without_a_restore_is_unchanged() -> None:
    """No restore: nothing said apart, the line as before (late firings and a session merge
    counted as ever)."""
    s = summarize(JOBS["late_union"]().trace)
    assert (s.rolled_back_firings, s.read_again) == (0, 0)
    assert "restore" not in s.text()
    assert summarize(JOBS["kernel"]().trace).text() == (  # (main's line, byte for byte)
        "fired 80 (event-time timer 60 · element 0 · processing-time timer 0 · end of input 20) "
        "· late firings 0 · elements 3000: on time 3000 · late, accepted 0 · dropped 0 · side "
        "output 0"
    )
    line = Summary(5, 1, 3, 0, 1, 9, 6, 1, 1, 1, by_session_merge=2, late_firings=1).text()
    assert line == (
        "fired 5 (event-time timer 3 · element 1 · processing-time timer 0 · end of input 1 · "
        "session merge 2) · late firings 1 · elements 9: on time 6 · late, accepted 1 · dropped "
        "1 · side output 1"
    )


def band_rows(chart: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Each window band's tooltip close and drawn processing-time extent (y, y2)."""
    return {
        r["window"]: (r["closed"], r["y"], r["y2"])
        for rows in chart["datasets"].values()
        for r in rows
        if r.get("kind") == "window"
    }


def test_the_band_says_the_close_the_run_kept(two_keys, lesson_05) -> None:
    """Fails on main: the timeline's [0, 1000) said "closed: 1,700 ms" — the failed attempt's
    cleanup — where the run that survived closed it at 1,600 ms. The timeline still draws the
    band up to the rolled-back cleanup (its mark is there); the scrubber draws the run at t."""
    said = f"1,600 ms (1,700 ms {ROLLED})"
    timeline = band_rows(viz.timeline(two_keys).to_dict())
    assert timeline == {
        "[0 ms, 1,000 ms)": (said, 100, 1700),
        "[1,000 ms, 2,000 ms)": ("3,100 ms", 1500, 3100),
        "[3,000 ms, 4,000 ms)": ("3,100 ms", 3000, 3100),
    }
    scrubber = band_rows(viz.scrubber(two_keys).to_dict())
    assert scrubber["[0 ms, 1,000 ms)"] == (said, 100, 1600)
    drawn = vlc.vegalite_to_svg(viz.timeline(two_keys).to_dict())  # (the tooltip Vega draws)
    assert re.findall(r"window: \[0 ms, 1,000 ms\);[^\"]*closed: ([^;\"]*)", drawn) == [said]
    # lesson 05: the rolled-back firing did not clean up: the close is the replay's
    assert band_rows(viz.timeline(lesson_05).to_dict())["[0 ms, 10,000 ms)"] == (
        "16,300 ms", 1200, 16300
    )  # fmt: skip


def test_a_count_of_one_is_singular() -> None:
    """Fails on main: "1 elements", "1 (key, window) pairs in 1 windows", "1 firings" and the
    lanes' "1 keys, 1 windows"."""
    assert vocabulary.counted(1, "element") == "1 element"
    assert vocabulary.counted(1_234, "element") == "1,234 elements"
    assert vocabulary.counted(0, "firing") == "0 firings"
    assert vocabulary.counted(7) == "7"
    assert vocabulary.elements_count(1, 0) == "1 element"
    assert vocabulary.elements_count(1, 1) == f"1 element (1 {AGAIN})"
    assert (
        vocabulary.elements_count(8, 0) + vocabulary.read_again_after(2)
        == f"8 elements (2 {AGAIN})"
    )
    assert vocabulary.more_rolled_back(0) == vocabulary.read_again_after(0) == ""
    assert vocabulary.kept_count(1, 2, "firing") == f"1 firing (2 more {ROLLED})"
    assert pairs_text(1, 1) == "1 (key, window) pair in 1 window"
    assert pairs_text(2) == "2 (key, window) pairs"
    one = count_per_key([("a", 100)], 1000).trace
    assert viz.timeline(one).to_dict()["usermeta"]["winviz"]["notes"][0] == (
        "operator 'window': 1 element, 1 (key, window) pair, 1 firing"
    )
    assert viz.window_lanes(one).to_dict()["usermeta"]["winviz"]["notes"][0] == (
        "operator 'window': 1 key, 1 window"
    )
    assert viz.scrubber(one).to_dict()["usermeta"]["winviz"]["notes"][0] == (
        "operator 'window': 1 element, 1 (key, window) pair in 1 window; move the slider to see "
        "the run at processing time t; tick play to replay it"
    )
