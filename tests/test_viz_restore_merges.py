"""A restored session job's windows as the run kept them (``winviz.trace.restores``): the merges
the run keeps are applied once (``window_lives.kept_merges``), and what a restore rolled back
is said apart (``window_lives.rolled_back_lives``) on the timeline's and the scrubber's bands and
on the lanes' bars. The job (``session_restored``): session gap 500 ms, a@0, a@300, a@700,
a@5000 arriving every 100 ms, a checkpoint after the first record, a failure after the third.
The failed attempt merged [0, 500) into [0, 800) (seq 9) and that into [0, 1200) (seq 22),
assigning a@300 and a@700 (seq 13, 26); all rolled back, the replay does the same again (seq 35,
48; 39, 52). The run keeps 1 element in [0, 500), 2 in [0, 800) (a@0 inherited), 3 in
[0, 1200)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import vl_convert as vlc
from jobs import count_pipeline, two_keys_restored

import winviz as wv
from winviz import viz
from winviz.viz import window_lives
from winviz.viz.trace_view import open_trace

ROLLED = "rolled back by a restore"


def session_restored(fail_at: int | None = 3) -> wv.JobExecutionResult:
    """The module's job (see its docstring); ``fail_at`` None: the same without the failure."""
    env = wv.StreamExecutionEnvironment()
    env.enable_checkpointing(at_records=[1])
    events = [("a", 0), ("a", 300), ("a", 700), ("a", 5000)]
    gap = wv.EventTimeSessionWindows.with_gap(500)
    return count_pipeline(env, events, gap, arrival_interval=100).execute(fail_at=fail_at)


@pytest.fixture(scope="module")
def session() -> Any:
    return session_restored()


def bands(chart: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Each window band's tooltip elements, firings and close."""
    return {
        r["window"]: (r["elements"], r["firings"], r["closed"])
        for rows in chart["datasets"].values()
        for r in rows
        if r.get("kind") == "window"
    }


def test_the_restored_session_band_counts_what_the_run_kept(session) -> None:
    """Fails on main: [0, 1200) said 9 elements, [0, 800) said 4 — every merge applied, the
    rolled-back ones and their replays, on top of the rolled-back assignments."""
    want = {
        "[0 ms, 500 ms)": ("1", "0", "merged into [0, 800) at 100 ms"),
        "[0 ms, 800 ms)": (f"2 (1 more {ROLLED})", "0", "merged into [0, 1200) at 200 ms"),
        "[0 ms, 1,200 ms)": (f"3 (2 more {ROLLED})", "1", "300 ms"),
        "[5,000 ms, 5,500 ms)": ("1", "1", "300 ms"),
    }
    assert bands(viz.timeline(session).to_dict()) == want
    assert bands(viz.scrubber(session).to_dict()) == want
    drawn = vlc.vegalite_to_svg(viz.timeline(session).to_dict())  # (the tooltip Vega draws)
    said = re.findall(r"window: \[0 ms, 1,200 ms\); keys: 1; elements: ([^;\"]*)", drawn)
    assert said == [f"3 (2 more {ROLLED})"]


def test_the_lives_apply_the_kept_merges_and_say_what_was_rolled_back(session) -> None:
    """The lives' elements: every assignment of the window, rolled back or not, and what the
    kept merges passed on (main: 1, 4, 9 — each merge applied twice); ``rolled_back_lives``: the
    rolled-back assignments through the same merges, no firing rolled back, the kept closes."""
    view = open_trace(session.trace)
    lives = window_lives.window_lives(view, "window")
    assert lives[["window_start", "window_end", "elements", "merged_into"]].values.tolist() == [
        [0, 500, 1, "[0, 800)"],
        [0, 800, 3, "[0, 1200)"],
        [0, 1200, 5, None],
        [5000, 5500, 1, None],
    ]
    undone = window_lives.rolled_back_lives(view, "window")
    assert undone.elements.tolist() == [0, 1, 2, 0]
    assert undone.firings.tolist() == [0, 0, 0, 0]
    assert undone.closed.tolist() == [100.0, 200.0, 300.0, 300.0]
    chains = window_lives.merge_chains(view, "window")
    assert {w: window_lives.chain_text(c) for w, c in chains.items()} == {
        ("a", 0, 500): "[0, 800) at 100 ms → [0, 1200) at 200 ms",
        ("a", 0, 800): "[0, 1200) at 200 ms",
    }
    unrestored = open_trace(session_restored(fail_at=None).trace)
    assert window_lives.rolled_back_lives(unrestored, "window") is None


def bars(chart: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each lane bar's key, window, status, elements, firings and close."""
    fields = ("key", "window", "status", "elements", "firings", "closed")
    return [
        tuple(r[f] for f in fields)
        for rows in chart["datasets"].values()
        for r in rows
        if r.get("kind") == "window" and "status" in r
    ]


def test_the_lanes_say_what_the_run_kept(session) -> None:
    """Fails on main: the restored session's [0, 1200) bar said 9 elements; two keys' [0, 1000)
    bars said 2 firings and "closed: 1,700" (the failed attempt's cleanup), their [1000, 2000)
    bars 2 elements where the run kept 1."""
    assert bars(viz.window_lanes(session).to_dict()) == [
        ("a", "[0 ms, 500 ms)", "merged away", "1", "0", "merged into [0, 800)"),
        (
            "a",
            "[0 ms, 800 ms)",
            "merged away",
            f"2 (1 more {ROLLED})",
            "0",
            "merged into [0, 1200)",
        ),
        ("a", "[0 ms, 1,200 ms)", "fired", f"3 (2 more {ROLLED})", "1", "300"),
        ("a", "[5,000 ms, 5,500 ms)", "fired", "1", "1", "300"),
    ]
    drawn = vlc.vegalite_to_svg(viz.window_lanes(session).to_dict())  # (as Vega draws the bar)
    assert re.findall(r"x2: 1200; [^\"]*; elements: ([^;\"]*)", drawn) == [f"3 (2 more {ROLLED})"]
    again = f"1 (1 more {ROLLED})"
    close = f"1,600 (1,700 {ROLLED})"
    assert bars(viz.window_lanes(two_keys_restored()).to_dict()) == [
        ("a", "[0 ms, 1,000 ms)", "fired", "1", again, close),
        ("a", "[1,000 ms, 2,000 ms)", "fired", again, "1", "3,100"),
        ("a", "[3,000 ms, 4,000 ms)", "fired", again, "1", "3,100"),
        ("b", "[0 ms, 1,000 ms)", "fired", "1", again, close),
        ("b", "[1,000 ms, 2,000 ms)", "fired", again, "1", "3,100"),
        ("b", "[3,000 ms, 4,000 ms)", "fired", "1", "1", "3,100"),
    ]


def test_without_a_restore_the_lanes_count_as_before() -> None:
    """No restore: the bars' counts stay numbers, the close a time."""
    chart = viz.window_lanes(session_restored(fail_at=None)).to_dict()
    assert bars(chart) == [
        ("a", "[0 ms, 500 ms)", "merged away", 1, 0, "merged into [0, 800)"),
        ("a", "[0 ms, 800 ms)", "merged away", 2, 0, "merged into [0, 1200)"),
        ("a", "[0 ms, 1,200 ms)", "fired", 3, 1, "300"),
        ("a", "[5,000 ms, 5,500 ms)", "fired", 1, 1, "300"),
    ]
