"""The lanes' marks as the run kept them after a restore (``winviz.trace.restores``): a mark of
records a restore rolled back is a mark of its own, drawn faint grey as the scrubber draws a
rolled-back firing, its firing named as the firings table names it; and the bars' fill legend
titled so that a bar's screen-reader text (Vega's aria-label) names its bounds. The jobs: lesson
05's restore (``test_viz_restore_at_t``: [0, 10000) fired at 12,200 ms (seq 47, "abcd"), rolled
back, fired again at 16,300 ms (seq 79, "abcdf")), ``jobs.two_keys_restored`` and the restored
session job of ``test_viz_restore_merges``."""

from __future__ import annotations

import re
from typing import Any

import pytest
import vl_convert as vlc
from jobs import two_keys_restored
from test_viz_restore_at_t import lesson_05_restore
from test_viz_restore_merges import session_restored

from winviz import viz

ROLLED = "rolled back by a restore"
NOTE = "drawn faint grey; the bars and the other marks are what the run kept"


@pytest.fixture(scope="module")
def lesson_05() -> dict[str, Any]:
    return viz.window_lanes(lesson_05_restore()).to_dict()


def marks(chart: dict[str, Any], *whats: str) -> list[tuple[Any, ...]]:
    """Each event mark of a kind in ``whats`` (a prefix): window, seq, label, rolled back,
    firing words, detail."""
    return [
        (r["window"], r["seq"], r["label"], r.get("rolled_back"), r.get("firing"), r["detail"])
        for rows in chart["datasets"].values()
        for r in rows
        if "what" in r and r["what"].startswith(whats)
    ]


def test_a_rolled_back_firing_is_a_faint_mark_of_its_own(lesson_05) -> None:
    """Fails on main: one mark "×2" (seq "47, 79", detail "abcd", "abcdf") counted the
    rolled-back firing with the kept one, said apart nowhere."""
    assert marks(lesson_05, "fired") == [
        ("[0 ms, 10,000 ms)", "47", "", True, f"first firing ({ROLLED})", '[0,10000,"abcd"]'),
        ("[0 ms, 10,000 ms)", "79", "", None, "first firing", '[0,10000,"abcdf"]'),
        ("[10,000 ms, 20,000 ms)", "96", "", None, "first firing", '[10000,20000,"eg"]'),
        ("[20,000 ms, 30,000 ms)", "106", "", None, "first firing", '[20000,30000,"h"]'),
    ]
    assert marks(lesson_05, "cleanup")[:2] == [
        ("[0 ms, 10,000 ms)", "49", "", True, "", f"cleanup time 9,999 ms ({ROLLED})"),
        ("[0 ms, 10,000 ms)", "81", "", None, "", "cleanup time 9,999 ms"),
    ]
    assert lesson_05["title"]["subtitle"] == [
        "operator 'window': 1 key, 3 windows",
        f"2 marks of what a restore rolled back: {NOTE}",
    ]
    # faint as the scrubber draws a rolled-back firing (``scrubber.FAINT``)
    faint = [
        (layer["encoding"]["color"]["condition"], layer["encoding"]["opacity"])
        for layer in lesson_05["layer"]
        if "opacity" in layer.get("encoding", {})
    ]
    gone = "datum.rolled_back == true"
    assert (
        faint
        == [({"test": gone, "value": "#BBBBBB"}, {"condition": {"test": gone, "value": 0.35}})] * 2
    )  # (the event-time timer's layer, the cleanups')


def test_the_rolled_back_merges_and_cleanups_are_faint() -> None:
    """Fails on main: the failed attempt's merges (seq 9, 22) and two keys' rolled-back firings
    and cleanups drawn as the kept ones."""
    chart = viz.window_lanes(session_restored()).to_dict()
    assert marks(chart, "merged") == [
        ("[0 ms, 800 ms)", "9", "", True, None, f"merged [0, 500) ({ROLLED})"),
        ("[0 ms, 1,200 ms)", "22", "", True, None, f"merged [0, 800) ({ROLLED})"),
        ("[0 ms, 800 ms)", "35", "", None, None, "merged [0, 500)"),
        ("[0 ms, 1,200 ms)", "48", "", None, None, "merged [0, 800)"),
    ]
    two = viz.window_lanes(two_keys_restored()).to_dict()
    gone = [(w, q, f) for w, q, _, undone, f, _ in marks(two, "fired", "cleanup") if undone]
    assert gone == [
        ("[0 ms, 1,000 ms)", "35", f"first firing ({ROLLED})"),
        ("[0 ms, 1,000 ms)", "42", f"first firing ({ROLLED})"),
        ("[0 ms, 1,000 ms)", "37", ""),
        ("[0 ms, 1,000 ms)", "44", ""),
    ]
    assert two["title"]["subtitle"][1] == f"4 marks of what a restore rolled back: {NOTE}"


def test_without_a_restore_no_mark_is_rolled_back() -> None:
    """No restore: no firing words, nothing faint, no note."""
    chart = viz.window_lanes(session_restored(fail_at=None)).to_dict()
    assert {m[3:5] for m in marks(chart, "fired", "merged", "cleanup")} == {(None, None)}
    assert chart["title"]["subtitle"] == ["operator 'window': 1 key, 4 windows"]
    assert not any("opacity" in layer.get("encoding", {}) for layer in chart["layer"])


def test_a_bars_screen_reader_text_names_its_bounds(lesson_05) -> None:
    """Fails on main: the fill legend titled "window", the tooltip's field of the bounds, so
    Vega's aria-label of each bar read "window: fired"."""
    drawn = vlc.vegalite_to_svg(lesson_05)
    said = re.findall(r'aria-label="x: [^"]*; kind: window; window: ([^;"]*); status: (\w+)', drawn)
    assert said == [
        ("[0 ms, 10,000 ms)", "fired"),
        ("[10,000 ms, 20,000 ms)", "fired"),
        ("[20,000 ms, 30,000 ms)", "fired"),
    ]
    assert re.findall(r"Symbol legend titled '([^']*)' for [a-z ]*fill color", drawn) == [
        "what happened",
        "window status",
    ]
