"""The fallback renderer (``export.iframe_renderer``: JupyterLab without anywidget) shows the
whole chart: its iframe (``export.frame_size``) is as big as the page drawn in it, legends
under the plot included — checked in Chromium on gallery charts (tests/browser/gallery.py),
each iframe's drawn page measured from inside it."""

from __future__ import annotations

from pathlib import Path

from tests.browser.gallery import CHARTS, DIAGRAMS, JOBS
from tools.browser import CHARTS_DRAWN, open_drawn, wait_until
from winviz.viz import export

PICKED = [
    ("timeline", "running example"),
    ("timeline", "idle partitions"),
    ("lanes", "sessions"),
    ("timers", "timers"),
    ("skew", "dense"),
    ("propagation", "parallel partitions"),
    ("scrubber", "restore"),
]
"""Gallery charts (kind, job) with the most below their plot: long legends, several lines
of subtitle, a side panel."""
PICKED_DIAGRAMS = ["operator_flow · sliding", "stage_watermarks · parallel"]

# Per iframe: its box and the size of the page drawn in it (its document's scroll size).
SIZES_JS = """() => Array.from(document.querySelectorAll("iframe")).map(function (f) {
  return [f.clientWidth, f.clientHeight];
})"""
DRAWN_JS = """() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"""


def test_each_iframe_holds_its_whole_chart(page, tmp_path: Path, shots: Path) -> None:
    runs = {job: JOBS[job]() for job in {job for _, job in PICKED}}
    specs = [export.chart_spec(CHARTS[kind](runs[job])) for kind, job in PICKED]
    specs += [export.chart_spec(DIAGRAMS[name]()) for name in PICKED_DIAGRAMS]
    names = [f"{kind} · {job}" for kind, job in PICKED] + PICKED_DIAGRAMS
    frames = [export.iframe_renderer(spec)["text/html"] for spec in specs]
    path = tmp_path / "frames.html"
    path.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>frames</title></head><body>"
        + "\n".join(frames)
        + "<script>window.winvizCharts = {done: true};</script></body></html>",
        encoding="utf-8",
    )
    pg, net = page
    open_drawn(pg, path)
    inner = [f for f in pg.frames if f != pg.main_frame]
    assert len(inner) == len(specs)
    for frame in inner:
        wait_until(frame, CHARTS_DRAWN, 120, "an iframe's chart")
    boxes = pg.evaluate(SIZES_JS)
    drawn = [frame.evaluate(DRAWN_JS) for frame in inner]
    pg.screenshot(path=str(shots / "iframe_fallback.png"), full_page=True)
    too_small = {
        name: (box, size)
        for name, box, size in zip(names, boxes, drawn, strict=True)
        if size[0] > box[0] or size[1] > box[1]
    }
    assert too_small == {}
    assert net.blocked == []
