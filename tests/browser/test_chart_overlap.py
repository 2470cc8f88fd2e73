"""No mark hides another, no label crosses a mark (issue 26), checked on what Chromium drew:
the gallery (tests/browser/gallery.py: every chart kind × tricky jobs, and an explorer) on one
page, each chart's Vega scenegraph read back. Counted over the whole gallery:

- a data label (a text mark) crossing another text — a label, an axis label, a legend entry;
- a data label crossing a point mark;
- a data label crossed by a data line or rule (a watermark, a horizon, another label's leader);
- a point mark lying wholly under an opaque point drawn after it;
- a data label outside the canvas or its clipping group (cut off);
- a firing or element label farther than ``LABEL_REACH_PX`` from its own mark with no leader
  line to it;
- a "merged" mark smaller than ``MERGE_MIN_PX`` (8 px) either way;
- a de-duplicated timer registration lying mid-way on a timer's rule (``gallery.on_lines``);
- a line segment under an identical one drawn later that hides it (``gallery.hidden_lines``);
- a point mark of one window on the bar of another (``gallery.on_other_bars``: the window
  lanes' cleanup marks beside a window's end sat on the next window's bar).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.browser.gallery import DEFECTS, SCAN_JS, avoidable, defects, gallery, open_gallery
from winviz.viz import labels, palette
from winviz.viz.labels import LABEL_PLACES

KNOWN_LEFT: dict[tuple[str, str], int] = {}
"""Defects the gallery still shows (issue 26 left): each (kind, chart) and how many — none.
Lesson 05's restore job showed a "×2" count text on a watermark dot in the timers chart (its
placement did not take the dots; it does since) and, in its timeline, a restart text across
the watermark line, f's replay ring and side-output triangle (before it was placed by
``boxes.first_clear``). (The
running example's MAX text and "h · end of input", and the explorer timeline's MAX text and
"1 · end of input", cross the faint ideal diagonal at the end of input: no other place of
theirs was free, so they are marked ``across`` and not counted — ``gallery.avoidable``.)
The sessions' element labels crossed 28 "merged" marks and 2 pile rings until the labels
were kept off them (and off a ring at its ``dx``)."""


def _scene(texts: list[dict[str, Any]], guide: list[float]) -> dict[str, Any]:
    """A drawn scene (as ``SCAN_JS`` reads one) of these texts and an ideal diagonal."""
    line = {"ends": guide, "mark": "diag", "role": "mark", "kind": palette.IDEAL,
            "line": palette.IDEAL, "path": 0, "width": 1, "dash": [], "offset": 0}  # fmt: skip
    return {"texts": texts, "points": [], "solids": [], "rules": [], "lines": [line],
            "plot": [300, 300], "origin": [0, 0], "width": 300, "height": 300}  # fmt: skip


def _label(text: str, place: tuple[str, int, int], across: str = "") -> dict[str, Any]:
    """A firing label of mark (100, 100) drawn at ``place`` (align, dx, dy)."""
    box = list(labels._text_box(100, 100, text, *place))
    return {"text": text, "box": box, "role": "mark", "kind": "firing label", "clip": None,
            "mark": "t", "datum": text, "at": [100, 100], "across": across, "shift": 0,
            "place": [place[0], "middle", place[1], place[2]]}  # fmt: skip


def test_a_text_may_cross_the_diagonal_only_where_it_had_no_other_place() -> None:
    guide = [100.0, 100.0, 113.0, 87.0]  # through the first place only, (107, 85)–(125, 97)
    first = _label("abc", LABEL_PLACES[0], palette.IDEAL)
    # its next place, right below its mark, was free: an avoidable crossing
    assert avoidable(first, _scene([first], guide)) == ("left", 7, 9)
    assert defects(_scene([first], guide))["text/line"] == [
        f"'abc' × {palette.IDEAL!r}, free: ('left', 7, 9)"
    ]
    # every other place taken (by texts drawn there): the crossing is the only place
    others = [_label(f"x{n}", p) for n, p in enumerate(LABEL_PLACES[1:])]
    assert avoidable(first, _scene([first, *others], guide)) is None
    assert defects(_scene([first, *others], guide))["text/line"] == []
    # a text across the diagonal that does not say so is counted, free place or not
    unmarked = _label("abc", LABEL_PLACES[0])
    assert defects(_scene([unmarked, *others], guide))["text/line"] == [
        f"'abc' × diag {palette.IDEAL!r}"
    ]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[Path, list[str]]:
    return gallery(tmp_path_factory.mktemp("gallery") / "gallery.html")


def test_no_mark_hides_another_and_no_label_crosses_one(drawn, page, shots: Path) -> None:
    path, names = drawn
    pg, net = page
    console = open_gallery(pg, path)
    assert pg.evaluate("window.winvizCharts.errors") == []
    scenes = pg.evaluate(SCAN_JS)
    assert len(scenes) == len(names)
    assert all(scenes), [n for n, s in zip(names, scenes, strict=True) if not s]
    found: dict[str, list[str]] = {kind: [] for kind in DEFECTS}
    for name, scene in zip(names, scenes, strict=True):
        for what, items in defects(scene).items():
            found[what] += [f"{name}: {item}" for item in items]
    pg.screenshot(path=str(shots / "chart_overlap_gallery.png"), full_page=True)
    (shots / "chart_overlap.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    counts = Counter((what, item.split(":")[0]) for what, items in found.items() for item in items)
    # before issue 26's fixes: 17 text/text, 556 text/point, 290 hidden, 0 cut over the gallery
    # (and, counted since, 13 firing labels far from their mark with no leader line and 84
    # merge marks under 8 px, over the timelines; and 3 de-duplicated registrations on their
    # own timer's rule in "timers · timers", 686 on a rule over the gallery; 24 labels crossed
    # by a line or rule, 9 of them by an allowed-lateness horizon on the timelines; and
    # 239 point marks of one window on another window's bar over the lanes);
    # what is left is named here, chart by chart, so a regression or a fix both show
    assert dict(counts) == KNOWN_LEFT, found
    assert (console, net.blocked) == ([], [])
