"""What a learner reads about the run after a checkpoint restore, read as Vega draws it. On lesson
05's restore job (``test_viz_restore_at_t.lesson_05_restore``: a checkpoint after e at 12,100
ms; [0, 10000) fired at 12,200 ms; the failure after f at 12,500 ms; the replay reads f again
and fires [0, 10000) at 16,300 ms) and on ``jobs.two_keys_restored`` (keys a and b; the
checkpoint at 200 ms, the failure at 3,000 ms; [0, 1000) fired and cleaned up at 1,700 ms,
rolled back, and again at 1,600 ms in the replay). On main:

* the band tooltip counted the firings a restore rolled back: "firings: 2" where the run fired
  [0, 10000) once (and "elements: 4" for [1000, 2000) of two keys, one element each);
* the subtitles counted both readings of a replayed element: "9 elements" for 8;
* between the rolled-back firing (12,200 ms) and the failure (12,500 ms) the firing's square
  was green while its band showed the replay ("open"): two runs at one t;
* the bands' legend "window at t" named "fired", a state no band of lesson 05's job takes at
  any t.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
import vl_convert as vlc
from chart_jobs import JOBS
from jobs import two_keys_restored
from test_viz_restore_at_t import lesson_05_restore

from winviz import viz
from winviz.trace import restores
from winviz.viz import palette
from winviz.viz.scrubber import STATES_TITLE, states_over_t

BAND = re.compile(
    r'aria-label="[^"]*window: (\[[^)]*\)); (?:state at t: ([a-z ]+); )?keys: \d+; '
    r"elements: ([^;]*); firings: ([^;]*);"
)
SQUARE = re.compile(
    r'<path aria-label="x: [0-9,]+; y: ([0-9,]+); firing: [^"]*" role="graphics-symbol" '
    r'aria-roledescription="point"[^>]* fill="(#[0-9A-Fa-f]+)"'
)


@pytest.fixture(scope="module")
def lesson_05() -> Any:
    return lesson_05_restore()


@pytest.fixture(scope="module")
def two_keys() -> Any:
    return two_keys_restored()


def svg_at(chart: dict[str, Any], t: int | None = None) -> str:
    """The SVG Vega draws of ``chart`` (a scrubber: with its slider at ``t``)."""
    shown = json.loads(json.dumps(chart))
    if t is not None:
        (param,) = [p for p in shown["params"] if p["name"] == "t"]
        param["value"] = t
    return vlc.vegalite_to_svg(shown)


def test_the_band_tooltip_counts_what_the_run_kept(lesson_05, two_keys) -> None:
    """Fails on main: [0, 10000) said "firings: 2", [1000, 2000) "elements: 4"."""
    tips = {
        (name, chart): [m[:1] + m[2:] for m in BAND.findall(svg_at(draw(run).to_dict()))]
        for name, run in (("lesson 05", lesson_05), ("two keys", two_keys))
        for chart, draw in (("timeline", viz.timeline), ("scrubber", viz.scrubber))
    }
    rolled = "more rolled back by a restore"
    assert tips[("lesson 05", "timeline")] == [
        ("[0 ms, 10,000 ms)", "5", f"1 (1 {rolled})"),
        ("[10,000 ms, 20,000 ms)", "2", "1"),
        ("[20,000 ms, 30,000 ms)", "1", "1"),
    ]
    assert tips[("lesson 05", "scrubber")] == tips[("lesson 05", "timeline")]
    assert tips[("two keys", "timeline")] == [
        ("[0 ms, 1,000 ms)", "2", f"2 (2 {rolled})"),
        ("[1,000 ms, 2,000 ms)", f"2 (2 {rolled})", "2"),
        ("[3,000 ms, 4,000 ms)", f"2 (1 {rolled})", "2"),
    ]
    assert tips[("two keys", "scrubber")] == tips[("two keys", "timeline")]


def test_a_job_without_a_restore_keeps_its_numbers() -> None:
    """No restore: the band's counts stay numbers (a quantitative tooltip, as on main)."""
    chart = viz.timeline(JOBS["sliding_count"]().trace).to_dict()
    (band,) = [lay for lay in chart["layer"] if lay.get("mark", {}).get("type") == "rect"]
    tips = {t["field"]: t["type"] for t in band["encoding"]["tooltip"]}
    assert (tips["elements"], tips["firings"]) == ("quantitative", "quantitative")


def test_subtitles_count_each_element_once(lesson_05, two_keys) -> None:
    """Fails on main: "9 elements" (f counted twice) and "elements: 8 on time, 1 side output"
    (9 readings); "4 firings" (one rolled back)."""

    def notes(run: Any, draw: Any, n: int) -> list[str]:
        return draw(run).to_dict()["usermeta"]["winviz"]["notes"][:n]

    again = "read again after a restore"
    assert notes(lesson_05, viz.timeline, 2) == [
        f"operator 'window': 8 elements (1 {again}), 3 (key, window) pairs, 3 firings "
        "(1 more rolled back by a restore)",
        "elements: 8 on time; rolled back by a restore: 1 side output",
    ]
    assert notes(lesson_05, viz.scrubber, 1) == [
        f"operator 'window': 8 elements (1 {again}), 3 (key, window) pairs in 3 windows; move "
        "the slider to see the run at processing time t; tick play to replay it"
    ]
    assert notes(lesson_05, viz.skew_chart, 1) == [
        f"operator 'window': 8 elements (1 {again}): 8 on time; rolled back by a restore: 1 "
        "side output"
    ]
    assert notes(two_keys, viz.timeline, 3) == [
        f"operator 'window': 6 elements (3 {again}), 6 (key, window) pairs, 6 firings (2 more "
        "rolled back by a restore)",
        "elements: 6 on time; rolled back by a restore: 3 on time",
        "3 elements read again after restore from checkpoint 1 (the replay): drawn hollow and "
        "larger, around the first reading where it is read at the same place",
    ]


def test_undone_marks_the_records_a_restore_rolled_back(lesson_05) -> None:
    trace = lesson_05.trace  # rolled_back: [(39, 54)]
    rows = np.array([34, 39, 40, 47, 53, 54, 58, 79], dtype=np.int64)
    assert restores.undone(trace, rows).tolist() == [
        False, False, True, True, True, False, False, False
    ]  # fmt: skip
    assert restores.undone(JOBS["kernel"]().trace, rows).tolist() == [False] * 8


def test_band_and_square_show_one_run_at_t(lesson_05, two_keys) -> None:
    """The run at t is what the run keeps (``restores``: where the failed attempt and the
    replay overlap, t shows the replay): [0, 10000) open and its rolled-back firing faint at
    every t until the replay fires it. Fails on main: at 12,200..12,499 ms the square was
    green on an open band; two keys' [0, 1000) was "fired" at 1,650 ms, cleaned up in the run
    at 1,600 ms (its close was the rolled-back cleanup at 1,700 ms)."""
    chart = viz.scrubber(lesson_05).to_dict()
    seen = {}
    for t in (12_200, 12_300, 12_499, 12_500, 14_000, 16_299):
        svg = svg_at(chart, t)
        band = {w: state for w, state, *_ in BAND.findall(svg)}["[0 ms, 10,000 ms)"]
        seen[t] = (band, SQUARE.findall(svg))
    faint = [("12,200", palette.FADED_COLOR)]
    assert seen == {t: ("open", faint) for t in seen}
    fired_at_16300 = SQUARE.findall(svg_at(chart, 16_300))
    assert fired_at_16300 == [*faint, ("16,300", "#009E73")]
    # two keys: [0, 1000) closed at the replay's cleanup (1,600 ms), not the rolled-back one
    chart = viz.scrubber(two_keys).to_dict()
    states = {t: {w: s for w, s, *_ in BAND.findall(svg_at(chart, t))} for t in (1_599, 1_650)}
    assert states == {
        1_599: {"[0 ms, 1,000 ms)": "open", "[1,000 ms, 2,000 ms)": "open"},
        1_650: {"[0 ms, 1,000 ms)": "gone", "[1,000 ms, 2,000 ms)": "open"},
    }


def test_a_rolled_back_reading_is_faint(lesson_05) -> None:
    """f's first reading (a side output, seq 51) a restore rolled back: faint grey once
    arrived; its replay (on time, seq 58) drawn as read. Fails on main (the side-output pink)."""
    chart = viz.scrubber(lesson_05).to_dict()
    reading = re.compile(
        r'<path aria-label="x: 4,000; y: 12,500; [^"]*seq: (\d+);[^"]*" role="graphics-symbol" '
        r'aria-roledescription="point"[^>]* (?:fill|stroke)="(#[0-9A-Fa-f]+)"[^>]*?'
        r'(?: opacity="([0-9.]+)")?/>'
    )
    assert reading.findall(svg_at(chart, 14_000)) == [
        ("51", palette.FADED_COLOR, "0.35"),
        ("58", palette.FATE_COLORS[0], "1"),
    ]
    assert chart["usermeta"]["winviz"]["notes"][-1] == (
        "1 element reading rolled back by a restore (read again by the replay): drawn faint "
        "grey once arrived"
    )


def band_states(chart: dict[str, Any]) -> tuple[str, list[str], set[str]]:
    """The bands' legend (title, entries), and the states Vega draws over the slider's t: at
    each time a band changes state (``bands.AS_OF``) and just before it (constant between)."""
    (layer,) = [
        lay for lay in chart["layer"] if lay["encoding"].get("color", {}).get("field") == "state"
    ]
    (param,) = [p for p in chart["params"] if p["name"] == "t"]
    lo, hi = param["bind"]["min"], param["bind"]["max"]
    times = {
        int(t) + d
        for r in chart["datasets"][layer["data"]["name"]]
        for t in (r["opened_at"], r["fired_at"], r["closed_at"])
        if t is not None
        for d in (-1, 0)
    }
    drawn = set()
    for t in sorted(times | {lo, hi}):
        if lo <= t <= hi:
            drawn |= {state for _, state, *_ in BAND.findall(svg_at(chart, t))}
    color = layer["encoding"]["color"]
    return color["title"], color["scale"]["domain"], drawn


def test_the_legend_names_the_states_bands_take(lesson_05) -> None:
    """Fails on main: lesson 05's legend was "window at t": open, fired, gone — no band of it is
    "fired" at any t (each is cleaned up when it fires)."""
    title, legend, drawn = band_states(viz.scrubber(lesson_05).to_dict())
    assert drawn == {"open", "gone"}
    assert legend == ["open", "gone"]
    assert title == STATES_TITLE == "window at some t"
    title, legend, drawn = band_states(viz.scrubber(JOBS["late_union"]().trace).to_dict())
    assert (legend, drawn) == (["open", "fired", "gone"], {"open", "fired", "gone"})


def test_states_over_t_follow_the_bands_rule() -> None:
    """Each state a band takes, over the slider's range: open from its opening until its
    first firing or close; fired from then until its close; gone (merged away) from the close."""

    def band(opened: int, fired: int | None, closed: int | None, into: str = "") -> dict:
        return {"opened_at": opened, "fired_at": fired, "closed_at": closed, "merged_into": into}

    assert states_over_t([band(0, 10, 10)], 0, 20) == ["open", "gone"]  # (fires at its close)
    assert states_over_t([band(0, 10, 15)], 0, 20) == ["open", "fired", "gone"]
    assert states_over_t([band(0, 10, 15)], 0, 12) == ["open", "fired"]  # (t never 15)
    assert states_over_t([band(0, 0, 15)], 0, 20) == ["fired", "gone"]  # (fired on opening)
    assert states_over_t([band(5, None, None)], 0, 20) == ["open"]
    assert states_over_t([band(5, None, 9, "[0, 30)")], 0, 20) == ["open", "merged away"]
    assert states_over_t([band(25, None, None)], 0, 20) == []  # (opens after the last t)
