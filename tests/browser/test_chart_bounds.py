"""Every data point stays on its plot and off the legends and axes (issue 26), checked on what
Chromium drew: the gallery (tests/browser/gallery.py) on one page, each chart's Vega scenegraph
read back. Marks drawn side by side at one point (firings, cleanups, timer events) are moved
right by a few pixels each; at the plot's right edge that must not carry them off the plot and
over the legend. Counted over the whole gallery:

- a point mark whose centre lies outside its plot (the group it is drawn in);
- a point mark crossing a guide's text (a legend entry or title, an axis label or title).

And every chart fits a JupyterLab output ``CONTAINER_PX`` wide (``test_every_chart_fits``):
nothing drawn past the container's edges, no text shortened by a limit (Vega's ellipsis).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.browser.gallery import SLACK, _overlap, gallery, open_gallery

# Per chart: every data symbol's box with the box of the group that holds it (its plot), and
# every guide text's box; all in the canvas' coordinates (each group's x, y added on the way).
BOUNDS_JS = """() => {
  const out = [];
  Array.from(document.querySelectorAll("div.winviz-chart")).forEach(function (box) {
    const view = box.winvizView;
    if (!view) { out.push(null); return; }
    const points = [], guides = [];
    function visible(item) {
      const o = item.opacity === undefined ? 1 : item.opacity;
      return o > 0 && item.bounds && !item.bounds.empty();
    }
    function walk(mark, ox, oy, plot) {
      (mark.items || []).forEach(function (item) {
        if (mark.marktype === "group") {
          const gx = ox + (item.x || 0), gy = oy + (item.y || 0);
          const w = item.width || 0, h = item.height || 0;
          const inner = (mark.role === "scope" || mark.role === "frame") && w > 0 && h > 0
            ? [gx, gy, gx + w, gy + h] : plot;
          (item.items || []).forEach(function (m) { walk(m, gx, gy, inner); });
          return;
        }
        if (!visible(item)) return;
        const b = item.bounds;
        const abs = [ox + b.x1, oy + b.y1, ox + b.x2, oy + b.y2];
        if (mark.marktype === "symbol" && mark.role === "mark") {
          points.push({box: abs, plot: plot, mark: mark.name || "",
                       datum: item.datum ? String(item.datum.label || item.datum.what ||
                       item.datum.event || item.datum.kind || "") : "",
                       above: !!item.datum && typeof item.datum.above === "number"});
        } else if (mark.marktype === "text" && /legend|axis/.test(mark.role || "")) {
          const t = Array.isArray(item.text) ? item.text.join(" ") : String(item.text || "");
          if (t.trim() !== "") guides.push({box: abs, text: t});
        }
      });
    }
    const root = view.scenegraph().root;
    const r = root.items[0];
    walk(root, 0, 0, [r.x || 0, r.y || 0, (r.x || 0) + (r.width || 0),
                      (r.y || 0) + (r.height || 0)]);
    out.push({points: points, guides: guides});
  });
  return out;
}"""


def bounds_defects(scene: dict[str, Any]) -> dict[str, list[str]]:
    """A scene's (``BOUNDS_JS``) points whose centre is off their plot (but for the timers
    chart's row above the plot), and points crossing a guide's text."""
    found: dict[str, list[str]] = {"off plot": [], "point/guide": []}
    for p in scene["points"]:
        x1, y1, x2, y2 = p["box"]
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        px1, py1, px2, py2 = p["plot"]
        on_x = px1 - SLACK <= cx <= px2 + SLACK
        # the timers chart's row above the plot (timers._row_above_layers: registrations of
        # crowded timers, drawn there on purpose, under the chart's title)
        row_above = p.get("above") and on_x and cy < py1
        if not (on_x and py1 - SLACK <= cy <= py2 + SLACK) and not row_above:
            found["off plot"].append(f"{p['mark']} {p['datum']!r} at ({cx:.0f}, {cy:.0f})")
        for g in scene["guides"]:
            if _overlap(p["box"], g["box"]):
                found["point/guide"].append(f"{p['mark']} {p['datum']!r} × {g['text']!r}")
    return found


CONTAINER_PX = 840
"""The output width the charts must fit: JupyterLab in a 1280-px browser window with the file
browser open gives a cell's output about 848 px (a new-user trial, issue 26: the timeline's
legend was cut there)."""

# Per chart: its container's and its SVG's page boxes, and every drawn item's page box (each
# group's x, y added on the way down, the view's origin and the SVG's place on the page);
# a text's ``cut``: a line of it is wider than its ``limit`` (Vega draws it shortened, "…"),
# measured with the font it is drawn in.
FIT_JS = """() => {
  const ctx = document.createElement("canvas").getContext("2d");
  function cut(item) {
    if (!(item.limit > 0)) return false;
    ctx.font = [item.fontStyle || "normal", item.fontWeight || "normal",
                (item.fontSize || 11) + "px", item.font || "sans-serif"].join(" ");
    const lines = Array.isArray(item.text) ? item.text : [String(item.text)];
    return lines.some(function (t) { return ctx.measureText(String(t)).width > item.limit + 1; });
  }
  return Array.from(document.querySelectorAll("div.winviz-chart")).map(function (box) {
    const view = box.winvizView, svg = box.querySelector("svg");
    if (!view || !svg) return null;
    const c = box.getBoundingClientRect(), s = svg.getBoundingClientRect();
    const o = view.origin(), items = [];
    function walk(mark, ox, oy) {
      (mark.items || []).forEach(function (item) {
        if (mark.marktype === "group") {
          (item.items || []).forEach(function (m) {
            walk(m, ox + (item.x || 0), oy + (item.y || 0));
          });
          return;
        }
        const op = item.opacity === undefined ? 1 : item.opacity;
        if (!(op > 0) || !item.bounds || item.bounds.empty()) return;
        const b = item.bounds, x = s.left + o[0] + ox, y = s.top + o[1] + oy;
        const text = mark.marktype !== "text" ? "" :
          (Array.isArray(item.text) ? item.text.join(" ") : String(item.text || ""));
        if (mark.marktype === "text" && text.trim() === "") return;
        items.push({box: [x + b.x1, y + b.y1, x + b.x2, y + b.y2], role: mark.role || "",
                    marktype: mark.marktype, text: text, cut: text !== "" && cut(item)});
      });
    }
    walk(view.scenegraph().root, 0, 0);
    return {container: [c.left, c.right], svg: [s.left, s.right], items: items};
  });
}"""


def fit_defects(scene: dict[str, Any]) -> dict[str, list[str]]:
    """A scene's (``FIT_JS``) defects at its container's width: an SVG wider than its
    container (the output scrolls sideways), an item drawn past the container's left or
    right edge ("past the edge": cut off where the output ends), a text shortened by its
    limit ("shortened")."""
    found: dict[str, list[str]] = {"svg": [], "past the edge": [], "shortened": []}
    left, right = scene["container"]
    if scene["svg"][1] - scene["svg"][0] > right - left + SLACK:
        found["svg"].append(f"{scene['svg'][1] - scene['svg'][0]:.0f} px wide")
    for item in scene["items"]:
        x1, _, x2, _ = item["box"]
        what = f"{item['role']} {item['text'] or item['marktype']!r}"
        if x1 < left - SLACK or x2 > right + SLACK:
            found["past the edge"].append(f"{what} at {x1 - left:.0f}..{x2 - left:.0f}")
        if item["cut"]:
            found["shortened"].append(what)
    return found


KNOWN_LEFT: dict[tuple[str, str], int] = {}
"""Defects the gallery still shows: each (kind, chart) and how many (the goal: none)."""


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[Path, list[str]]:
    return gallery(tmp_path_factory.mktemp("gallery") / "gallery.html")


def test_bounds_defects_finds_a_point_off_its_plot_and_one_over_a_legend() -> None:
    scene = {
        "points": [
            {"box": [95, 10, 105, 20], "plot": [0, 0, 100, 100], "mark": "m", "datum": "on edge"},
            {"box": [104, 10, 114, 20], "plot": [0, 0, 100, 100], "mark": "m", "datum": "off"},
        ],
        "guides": [{"box": [110, 12, 160, 22], "text": "on time"}],
    }
    assert bounds_defects(scene) == {
        "off plot": ["m 'off' at (109, 15)"],
        "point/guide": ["m 'off' × 'on time'"],
    }


def test_only_the_timers_row_above_the_plot_may_lie_above_it() -> None:
    plot = [0, 30, 100, 130]
    scene = {
        "points": [
            {"box": [40, 10, 50, 20], "plot": plot, "mark": "m", "datum": "row", "above": True},
            {"box": [40, 10, 50, 20], "plot": plot, "mark": "m", "datum": "not", "above": False},
            {"box": [140, 10, 150, 20], "plot": plot, "mark": "m", "datum": "out", "above": True},
            {"box": [40, 140, 50, 150], "plot": plot, "mark": "m", "datum": "low", "above": True},
        ],
        "guides": [],
    }
    assert bounds_defects(scene)["off plot"] == [
        "m 'not' at (45, 15)",
        "m 'out' at (145, 15)",
        "m 'low' at (45, 145)",
    ]


def test_every_point_stays_on_its_plot_and_off_the_guides(drawn, page, shots: Path) -> None:
    path, names = drawn
    pg, net = page
    open_gallery(pg, path)
    scenes = pg.evaluate(BOUNDS_JS)
    assert len(scenes) == len(names) and all(scenes)
    found: dict[str, list[str]] = {"off plot": [], "point/guide": []}
    for name, scene in zip(names, scenes, strict=True):
        for what, items in bounds_defects(scene).items():
            found[what] += [f"{name}: {item}" for item in items]
    (shots / "chart_bounds.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    counts = Counter((what, item.split(":")[0]) for what, items in found.items() for item in items)
    assert dict(counts) == KNOWN_LEFT, found
    assert net.blocked == []


def test_fit_defects_finds_a_wide_svg_an_item_past_the_edge_and_a_shortened_text() -> None:
    def item(x1: float, x2: float, text: str = "", cut: bool = False) -> dict[str, Any]:
        kind = "text" if text else "symbol"
        return {"box": [x1, 0, x2, 10], "role": "legend-label", "marktype": kind,
                "text": text, "cut": cut}  # fmt: skip

    scene = {
        "container": [8, 848],
        "svg": [8, 880],
        "items": [
            item(8, 848, "fits"),
            item(7.5, 848.5),
            item(700, 870, "watermarks, window (same)"),
            item(2, 20),
            item(100, 200, "accepts late elements…", cut=True),
        ],
    }
    assert fit_defects(scene) == {
        "svg": ["872 px wide"],
        "past the edge": [
            "legend-label 'watermarks, window (same)' at 692..862",
            "legend-label 'symbol' at -6..12",
        ],
        "shortened": ["legend-label 'accepts late elements…'"],
    }


def test_every_chart_fits_an_840_px_output(drawn, page, shots: Path) -> None:
    """The gallery in a page whose charts are ``CONTAINER_PX`` wide (the body's 8 px margins
    around): no chart wider, nothing drawn past the edge, no text shortened."""
    path, names = drawn
    pg, net = page
    pg.set_viewport_size({"width": CONTAINER_PX + 16, "height": 1000})
    open_gallery(pg, path)
    scenes = pg.evaluate(FIT_JS)
    assert len(scenes) == len(names) and all(scenes)
    assert {round(s["container"][1] - s["container"][0]) for s in scenes} == {CONTAINER_PX}
    found: dict[str, list[str]] = {}
    for name, scene in zip(names, scenes, strict=True):
        for what, items in fit_defects(scene).items():
            found.setdefault(what, []).extend(f"{name}: {item}" for item in items)
    (shots / "chart_fit.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    counts = Counter((what, item.split(":")[0]) for what, items in found.items() for item in items)
    assert dict(counts) == {}, found
    assert net.blocked == []
