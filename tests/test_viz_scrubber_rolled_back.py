"""The scrubber draws a firing a restore rolled back faint grey from when it is made: the run
at t is what the run keeps (``restores``' rule: where the failed attempt and its replay
overlap, t shows the replay). On lesson 05's restore job
(``test_viz_restore_at_t.lesson_05_restore``: a checkpoint at 12,100 ms, [0, 10000) fired at
12,200 ms, the job failed after f at 12,500 ms and restored checkpoint 1) the firing at 12,200
ms is faint at every t, as its band is "open" until the replay's firing at 16,300 ms, which
stands. On main the square was the event-time timer's green from 12,200 to 12,499 ms (faint only
from the failure) while its band already showed the replay ("open"): two runs at one t."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import vl_convert as vlc
from jobs import two_keys_restored
from test_viz_restore_at_t import lesson_05_restore

from winviz import viz
from winviz.trace.restores import rolled_back, undone_by
from winviz.viz import palette

GREEN = "#009E73"  # the event-time timer's firing colour (Vega-Lite draws points at opacity 0.7)
SQUARE = re.compile(
    r'<path aria-label="x: ([0-9,]+); y: ([0-9,]+); firing: [^"]*" role="graphics-symbol" '
    r'aria-roledescription="point"[^>]* fill="(#[0-9A-Fa-f]+)"[^>]*?(?: opacity="([0-9.]+)")?/>'
)


@pytest.fixture(scope="module")
def chart() -> dict[str, Any]:
    return viz.scrubber(lesson_05_restore()).to_dict()


def squares_at(chart: dict[str, Any], t: int) -> list[tuple[str, str, str, str]]:
    """The firing squares Vega draws at ``t``: (x, y, fill, opacity)."""
    shown = json.loads(json.dumps(chart))
    (param,) = [p for p in shown["params"] if p["name"] == "t"]
    param["value"] = t
    return [
        (x, y, fill, op or "1") for x, y, fill, op in SQUARE.findall(vlc.vegalite_to_svg(shown))
    ]


def test_undone_by_names_the_restore() -> None:
    spans = rolled_back(lesson_05_restore().trace)  # [(39, 54)]
    assert [undone_by(seq, spans) for seq in (39, 47, 53, 54, 79)] == [None, 54, 54, None, None]


def test_the_rolled_back_square_fades_from_the_failure(chart) -> None:
    (firings,) = [
        lay for lay in chart["layer"] if lay["encoding"].get("color", {}).get("title") == "firing"
    ]
    rows = chart["datasets"][firings["data"]["name"]]
    assert [(r["y"], r.get("rolled_back")) for r in rows] == [
        (12_200, True), (16_300, None), (25_100, None), (25_100, None)
    ]  # fmt: skip
    faint = ("9,999", "12,200", palette.FADED_COLOR, "0.35")
    assert squares_at(chart, 12_199) == []
    assert squares_at(chart, 12_200) == [faint]
    assert squares_at(chart, 12_300) == [faint]  # (main: GREEN, the band already "open")
    assert squares_at(chart, 12_499) == [faint]
    assert squares_at(chart, 14_000) == [faint]
    assert squares_at(chart, 16_300) == [faint, ("9,999", "16,300", GREEN, "0.7")]
    assert chart["usermeta"]["winviz"]["notes"][2] == (
        "1 firing rolled back by a restore: drawn faint grey once made, as the run keeps it at "
        "no t (where the failed attempt and its replay overlap, t shows the replay)"
    )


def test_the_skew_scrubber_fades_it_too() -> None:
    chart = viz.scrubber(lesson_05_restore(), view="skew").to_dict()  # (x: processing time)
    assert squares_at(chart, 12_400) == [("12,200", "2,201", palette.FADED_COLOR, "0.35")]
    assert squares_at(chart, 14_000) == [("12,200", "2,201", palette.FADED_COLOR, "0.35")]


BADGE = re.compile(r'<text aria-label="x: ([0-9,]+); y: ([0-9,]+); label: ×2;[^>]*>')


def test_a_rolled_back_squares_badge_fades_with_it() -> None:
    run = two_keys_restored()
    assert [(r.seq, r.proc_time, r.key) for r in run.trace.records("fired")][:4] == [
        (35, 1_700, "a"), (42, 1_700, "b"), (67, 1_600, "a"), (74, 1_600, "b")
    ]  # fmt: skip
    assert rolled_back(run.trace) == [(12, 51)]
    chart = viz.scrubber(run).to_dict()
    badges = {}
    for t in (1_700, 2_999, 3_000):
        shown = json.loads(json.dumps(chart))
        (param,) = [p for p in shown["params"] if p["name"] == "t"]
        param["value"] = t
        badges[t] = [
            (m.group(1), m.group(2), 'opacity="0.35"' in m.group(0))
            for m in BADGE.finditer(vlc.vegalite_to_svg(shown))
        ]
    assert badges == {
        1_700: [("999", "1,700", True), ("999", "1,600", False)],
        2_999: [("999", "1,700", True), ("999", "1,600", False)],
        3_000: [("999", "1,700", True), ("999", "1,600", False)],
    }
    assert squares_at(chart, 1_700)[:2] == [
        ("999", "1,700", palette.FADED_COLOR, "0.35"), ("999", "1,600", GREEN, "0.7")
    ]  # fmt: skip
    said = " ".join(chart["title"]["subtitle"])
    assert (
        "2 firings rolled back by a restore: drawn faint grey once made, as the run keeps them "
        "at no t (where the failed attempt and its replay overlap, t shows the replay)"
    ) in said
