"""Every firing in sight on the scrubber (issue 26: "no mark hides another"), checked on what
Chromium drew: firings of one cause at one point (several keys' windows fired by one timer,
every window the end of input fires at once) are one square, and a count badge "×n" beside
it says how many. Before the badge the square said "firings: 20" only in its tooltip while the
subtitle said "80 firings".

The scrubber of the gallery's jobs with such firings (tests/browser/gallery.py), in its
timeline and skew modes, on one page; each chart's Vega scenegraph read back: every firing
square, every badge (its text and where it was drawn). Counted per chart: the firings the
squares and badges show (1 per square without a badge, n per square with "×n") equal the
trace's firings; every badge lies within ``LABEL_REACH_PX`` of a square of its point (so it is
read as that square's) or is joined to it by a leader line; the gallery's overlap rules
(``gallery.defects``) hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.gallery import JOBS, SCAN_JS, SLACK, _overlap, defects
from tools.browser import open_drawn
from winviz import viz
from winviz.viz import export, pages
from winviz.viz.firings import firing_marks
from winviz.viz.labels import LABEL_REACH_PX
from winviz.viz.operator_pick import pick_operator
from winviz.viz.trace_view import open_trace

COINCIDING = ("timers", "restore", "late union", "dense", "coinciding firings", "sessions")
"""The gallery's jobs whose firings meet at one point (and two whose firings do not all)."""

# Each drawn chart's firing squares and count badges: their datum's fields and box, as
# SCAN_JS walks the scenegraph (group offsets added on the way down).
FIRINGS_JS = """() => Array.from(document.querySelectorAll("div.winviz-chart")).map(box => {
  const view = box.winvizView;
  if (!view) return null;
  const squares = [], badges = [], leaders = [];
  function walk(mark, ox, oy) {
    (mark.items || []).forEach(item => {
      if (mark.marktype === "group") {
        (item.items || []).forEach(m => walk(m, ox + (item.x || 0), oy + (item.y || 0)));
        return;
      }
      const d = item.datum || {};
      const o = item.opacity === undefined ? 1 : item.opacity;
      if (o <= 0 || !item.bounds || item.bounds.empty()) return;
      const b = item.bounds;
      const rec = {x: d.x, y: d.y, firings: d.firings, text: item.text,
                   uncounted: d["firings here (no badge)"] || 0, stroke: item.strokeWidth || 0,
                   box: [ox + b.x1, oy + b.y1, ox + b.x2, oy + b.y2]};
      if (mark.marktype === "symbol" && d.kind === "fired") squares.push(rec);
      if (mark.marktype === "text" && d.kind === "firing count") badges.push(rec);
      if (mark.marktype === "rule" && d.kind === "leader")
        leaders.push(d.label + "@" + d.x + "," + d.y);
    });
  }
  walk(view.scenegraph().root, 0, 0);
  return {squares: squares, badges: badges, leaders: leaders};
})"""


def _gap(a: list[float], b: list[float]) -> float:
    """How far (px) box ``b`` lies from the centre of box ``a``."""
    cx, cy = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    dx, dy = max(b[0] - cx, cx - b[2], 0.0), max(b[1] - cy, cy - b[3], 0.0)
    return (dx * dx + dy * dy) ** 0.5


def shown_firings(drawn: dict[str, Any]) -> tuple[int, list[str]]:
    """How many firings a chart's squares and badges show (a square: 1, or n when a badge
    "×n" beside it names it, or when it has a thick outline and its tooltip says n where no
    badge found a place — named as wrong too, to be listed), and what is wrong: a badge whose
    number is not its square's, or that lies farther than ``LABEL_REACH_PX`` from every square
    of its point with no leader line to it."""
    wrong = []
    badged: dict[int, int] = {}
    for b in drawn["badges"]:
        if b["text"] != f"×{b['firings']}":
            wrong.append(f"badge {b['text']!r} says not its {b['firings']} firings")
        near = [
            (i, _gap(s["box"], b["box"]))
            for i, s in enumerate(drawn["squares"])
            if (s["x"], s["y"]) == (b["x"], b["y"]) and i not in badged
        ]
        i, far = min(near, key=lambda n: n[1], default=(None, float("inf")))
        joined = f"{b['text']}@{b['x']},{b['y']}" in drawn["leaders"]
        if i is None or (far > LABEL_REACH_PX + SLACK and not joined):
            wrong.append(f"badge {b['text']!r} at ({b['x']}, {b['y']}): {far:.1f} px from a square")
            continue
        badged[i] = b["firings"]
    for i, s in enumerate(drawn["squares"]):  # no place for its badge: a thick outline
        if s["uncounted"] and i not in badged and s["stroke"] >= 2:
            badged[i] = s["uncounted"]
            wrong.append(f"no badge, outlined: {s['uncounted']} firings")
    return sum(badged.get(i, 1) for i in range(len(drawn["squares"]))), wrong


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[Path, list[str], list[int]]:
    """The page: each job's scrubber in both modes; the charts' names and each one's firings
    as the trace has them (``firings.firing_marks``: of time windows, with a place)."""
    names, elements, expected = [], [], []
    for job in COINCIDING:
        run = JOBS[job]()
        view = open_trace(run.trace)
        marks = firing_marks(view, pick_operator(view, None))
        placed = [
            a is not None and p is not None
            for a, p in zip(marks["at"].tolist(), marks["proc_time"].tolist(), strict=True)
        ]
        for mode in ("timeline", "skew"):
            names.append(f"scrubber ({mode}) · {job}")
            elements.append(pages.chart_element(export.chart_spec(viz.scrubber(run, view=mode))))
            expected.append(sum(placed))
    path = tmp_path_factory.mktemp("scrubbers") / "scrubbers.html"
    path.write_text(pages.page("\n".join(elements), title="scrubbers"), encoding="utf-8")
    return path, names, expected


def test_every_firing_is_in_sight(drawn, page, shots: Path) -> None:
    path, names, expected = drawn
    pg, net = page
    console = open_drawn(pg, path)
    assert pg.evaluate("window.winvizCharts.errors") == []
    charts, scenes = pg.evaluate(FIRINGS_JS), pg.evaluate(SCAN_JS)
    assert len(charts) == len(scenes) == len(names) and all(charts)
    pg.screenshot(path=str(shots / "scrubber_firings.png"), full_page=True)
    shown, wrong, found = {}, [], []
    for name, chart, scene in zip(names, charts, scenes, strict=True):
        shown[name], bad = shown_firings(chart)
        wrong += [f"{name}: {w}" for w in bad]
        found += [
            f"{name}: {kind}: {item}" for kind, items in defects(scene).items() for item in items
        ]
    assert shown == dict(zip(names, expected, strict=True))
    # the jobs' coinciding firings, as the trace has them: 2 keys' [0, 5000) at one timer
    # (timers), 2 keys' [1000, 2000) at the end of input (restore), 3 keys a window (late
    # union), 20 keys a window (dense) — each such square has its badge
    assert sum(len(c["badges"]) for c in charts) > 0
    # the one badge with no free place: the end of input's 20 firings at the skew mode's
    # top right corner, among the elements (right of it is the plot's edge)
    assert wrong == ["scrubber (skew) · dense: no badge, outlined: 20 firings"]
    # no text a line crosses: each badge lies on the side of its square the "now" rule has
    # passed (below it; left of it in the skew mode), the skew mode's "watermark lag" label
    # off its own line (skew.py)
    assert found == []
    # the end of input's square outlined over the elements: no element drawn after its
    # outline covers any of it (before, the dense run's last elements hid most of its square)
    covered, ends = [], 0
    for name, scene in zip(names, scenes, strict=True):
        marks = scene["points"] + scene["solids"]
        for sq in [p for p in scene["points"] if p["kind"] == "end of input (outline)"]:
            ends += 1
            covered += [
                f"{name}: {m['kind']}"
                for m in marks
                if m["kind"] in ("element", "elements (binned)")
                and m["order"] > sq["order"]
                and _overlap(sq["box"], m["box"])
            ]
    assert (ends, covered) == (20, [])  # 10 squares a mode (restore 2, sessions 2 / 4, …)
    assert (console, net.blocked) == ([], [])
