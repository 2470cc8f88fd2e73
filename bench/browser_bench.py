"""A slider step on every lesson explorer, timed in Chromium (``python bench/browser_bench.py``).

Where a learner feels it: Debian's Chromium (``/usr/bin/chromium`` or ``$WINVIZ_CHROMIUM``,
headless, every request off this machine aborted — as ``tests/browser`` launches it), driven
by Playwright, on

* **JupyterLab** (``lab``): ``jupyter lab`` from this Python on 127.0.0.1 (a free port, a
  random token, a temporary root holding copies of the lessons, temporary config, settings and
  workspaces). Each lesson with an explorer (``wv.explore`` in ``notebooks/``) is opened and
  run with JupyterLab's "run all cells"; then the first control of each of its explorers is
  stepped ``--steps`` times (a slider's handle gets an arrow key, a dropdown its next option);
* **exported pages** (``pages``): the same lessons built as ``make lessons`` builds them
  (``winviz.viz.lessons``; ``--site DIR`` reuses a build), opened from ``file://``, the same
  steps on the page's controls (which switch between runs precomputed at build time).

A step is timed from the input event (``keydown`` / ``input``, in the page) to the paint of
the charts' last change: a ``MutationObserver`` on the explorer's charts notes each change and
the end of the next animation frame after it (``requestAnimationFrame``, then a message: the
frame has been drawn). The step is over when the page has been quiet for ``QUIET_MS`` (and, in
JupyterLab, the kernel is idle). Each step is split where the page lets us see it:

* JupyterLab: ``kernel`` — input to the first new spec in the page (the explorer's chart
  widget, ``winviz.viz.explorer_chart``, starts a re-embed with
  ``structuredClone(model.get("spec"))``, which the bench notes, or marks ``winviz-show``
  with ``performance.mark`` when the kernel's message naming the run to show has been
  applied); ``browser`` — from there to the paint (vega-embed: Vega-Lite compile, Vega
  parse, dataflow, SVG; or moving the views drawn ahead into place). Before
  each step the bench waits, as a learner looking at the charts would, until the kernel has
  computed the runs next to the shown one and the page has drawn them (``data-ahead``), and
  counts the steps that showed views drawn ahead;
* pages: ``decode`` — input to the first ``vegaEmbed`` call (inflating the run's gzip/base64
  data and parsing it); ``embed`` — from there to the paint.

Each step also counts the page's ``<svg>`` ``getBoundingClientRect`` calls up to the paint and
the ms spent in them ("svg rects"): Vega reads it on every event of a view (its event
extension; a scrubber's replay was a Vega timer stream that sent its view an event every
100 ms, playing or not, until ``winviz.viz.view_script`` played it); when the page's layout is
not clean, each such call runs a layout.

Prints each explorer's median (and the quartiles) and the goal lines of issue 30: median ≤
100 ms in JupyterLab, ≤ 80 ms on exported pages. A bench reports; it always exits 0 (a
missing Chromium or Playwright is reported, not raised).

    python bench/browser_bench.py [--steps 9] [--only 01_event_time_and_watermarks]
                                  [--where lab,pages] [--site build/lessons] [--burst 5]
                                  [--repeat 3]

``--repeat N``: the whole measurement N times, the two places taking turns (pages, lab,
pages, lab, …: on a shared machine a burst of load then falls on both); after each run its
detailed table, at the end one line per lesson explorer and place (``summary``): the runs'
medians and their median, the 90th percentile of all its steps, the medians of the page's
main-thread CPU and of the kernel's CPU, and the load average at the end of each run.

``--burst N``: each slider step is N arrow-key presses made at once, as a learner
hurrying along; the step is timed from the first press to the paint of the charts' last
change (the explorer shows the latest value: ``winviz.viz.explorer_chart``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(ROOT))  # for tools/: `python bench/x.py` puts only bench/ on the path

from tools.browser import (  # noqa: E402  (Chromium and JupyterLab as tests/browser use them)
    ALL_RAN,
    CHARTS_DRAWN,
    KERNEL,
    STDERR,
    chromium,
    chromium_path,
    jupyter_lab,
    new_page,
    wait_until,
)

GOALS_MS = {"lab": 100.0, "pages": 80.0}
QUIET_MS = 400  # no chart change for this long (and an idle kernel): the step is over
STEP_TIMEOUT_S = 60.0
AHEAD_TIMEOUT_S = 240.0  # the kernel's runs ahead and their drawing, on a loaded machine
# Installed before any page script runs. window.__bb.mark(root) starts a step: from then on
# every change under a chart of ``root`` (its .vega-embed / .winviz-view elements) is noted,
# and the end of the animation frame that follows it is the step's paint time. The input
# event's time is taken by a capturing listener, before the page's own handlers run.
# structuredClone(spec) is where Altair's JupyterChart starts a re-embed (its index.js);
# vegaEmbed is wrapped on exported pages, once their script has defined it.
PROBE_JS = """(() => {
  const bb = window.__bb = {step: 0, input: null, specs: [], embeds: [], changes: 0,
                            lastChange: null, paint: null, observer: null, rects: 0, rectMs: 0};
  const now = () => performance.now();
  // an <svg>'s getBoundingClientRect: what Vega's event extension reads on every event of a
  // view, a replay timer's tick too (a layout, when the page's is not clean)
  const rect = SVGSVGElement.prototype.getBoundingClientRect;
  SVGSVGElement.prototype.getBoundingClientRect = function () {
    const start = now();
    try { return rect.call(this); } finally { bb.rects += 1; bb.rectMs += now() - start; }
  };
  for (const type of ["keydown", "input", "change"]) {
    document.addEventListener(type, () => {
      if (bb.input === null) { bb.input = now(); performance.mark("bb-in-" + bb.step); }
    }, true);
  }
  const clone = window.structuredClone;
  window.structuredClone = function (value, options) {
    if (value && typeof value === "object" && ("datasets" in value || "$schema" in value
        || "layer" in value || "hconcat" in value || "vconcat" in value || "mark" in value)) {
      bb.specs.push(now());
      if (bb.specs.length === 1) performance.mark("bb-first-" + bb.step);
    }
    return clone.call(this, value, options);
  };
  new PerformanceObserver((list) => {  // the explorer chart's page script: a run to show
    for (const e of list.getEntries()) if (e.name === "winviz-show") bb.specs.push(e.startTime);
  }).observe({type: "mark"});
  bb.wrapEmbed = () => {
    if (!window.vegaEmbed || window.vegaEmbed.__bb) return !!window.vegaEmbed;
    const embed = window.vegaEmbed;
    const wrapped = function () {
      bb.embeds.push(now());
      if (bb.embeds.length === 1) performance.mark("bb-first-" + bb.step);
      return embed.apply(this, arguments);
    };
    Object.assign(wrapped, embed);
    wrapped.__bb = true;
    window.vegaEmbed = wrapped;
    return true;
  };
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    bb.paint = now(); bb.paintRects = [bb.rects, bb.rectMs];
    performance.mark("bb-paint-" + bb.step);
  };
  bb.step = 0;
  bb.mark = (root) => {
    bb.step += 1;
    if (bb.observer) bb.observer.disconnect();
    bb.input = null; bb.specs = []; bb.embeds = []; bb.changes = 0; bb.lastChange = null;
    bb.paint = null; bb.rects = 0; bb.rectMs = 0; bb.paintRects = [0, 0];
    bb.observer = new MutationObserver((records) => {
      const chart = (node) => {
        const el = node.nodeType === 1 ? node : node.parentElement;
        return el && el.closest(".vega-embed, .winviz-view");
      };
      if (!records.some((r) => chart(r.target) || Array.from(r.addedNodes).some(chart))) return;
      bb.changes += 1;
      bb.lastChange = now();
      requestAnimationFrame(() => channel.port2.postMessage(0));
    });
    bb.observer.observe(root, {subtree: true, childList: true, attributes: true,
                               characterData: true});
  };
  bb.read = () => ({step: bb.step, input: bb.input, specs: bb.specs, embeds: bb.embeds,
                    changes: bb.changes, lastChange: bb.lastChange, paint: bb.paint,
                    rects: bb.paintRects, now: now()});
})();"""

# JupyterLab: every explorer of the open notebook (an explorer is a VBox whose first child
# is the VBox of its controls and which holds its charts), marked data-bb="N".
LAB_EXPLORERS = """() => {
  const found = [];
  for (const box of document.querySelectorAll(".jp-OutputArea-output .widget-vbox")) {
    const first = box.firstElementChild;
    if (!first || !first.classList.contains("widget-vbox")) continue;
    if (!box.querySelector(".vega-embed")) continue;
    if (!first.querySelector(".widget-slider, .widget-dropdown")) continue;
    box.dataset.bb = String(found.length);
    found.push(first.querySelector(".widget-slider, .widget-dropdown")
                 .classList.contains("widget-slider") ? "slider" : "dropdown");
  }
  return found;
}"""
# JupyterLab: every chart of the explorer (its ExplorerChart's element) has the runs next to
# the shown one drawn ahead / showed a view drawn ahead on the last step
LAB_AHEAD_DONE = """() => Array.from(document.querySelectorAll('%s [data-drawn]'))
  .every(el => el.dataset.ahead === 'done')"""
LAB_PREPARED = """() => Array.from(document.querySelectorAll('%s [data-drawn]'))
  .every(el => el.dataset.drawn === 'prepared')"""
AHEAD_DONE = "() => document.querySelectorAll('div.winviz-explorer')[%d].dataset.ahead !== 'busy'"
KERNEL_ID = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id"
SHUTDOWN = "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }"


@dataclass
class Step:
    number: int  # the page's step count (its performance marks' suffix)
    total: float  # ms, input → paint
    first: float | None  # ms, input → first spec (lab) / first vegaEmbed (pages)
    cpu: float | None = None  # ms of the page's main thread's CPU, input → paint
    cpu_first: float | None = None  # … input → first spec / first vegaEmbed
    kernel_cpu: float | None = None  # ms of the kernel process's CPU during the step (lab)
    phases: dict[str, float] = field(default_factory=dict)  # ms of CPU by PHASES
    rects: int = 0  # <svg> getBoundingClientRect calls, input → paint (Vega events, ticks)
    rect_ms: float = 0.0  # ms in them (layouts they forced)

    @property
    def rest(self) -> float | None:
        return None if self.first is None else self.total - self.first


@dataclass
class Explorer:
    where: str  # "lab" or "pages"
    lesson: str
    number: int
    control: str
    steps: list[Step] = field(default_factory=list)
    note: str = ""
    prepared: int = 0  # pages: steps that showed views drawn ahead (data-drawn="prepared")
    run: int = 1  # which of the --repeat runs measured it
    load: float | None = None  # the 1-minute load average when its run ended


def explorer_lessons(only: list[str]) -> list[Path]:
    """The lesson notebooks that call ``wv.explore`` (or those named in ``only``)."""
    found = []
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        if any(re.search(r"\bexplore\(", c) for c in code) and (not only or path.stem in only):
            found.append(path)
    return found


# -- measuring one step -------------------------------------------------------------------


def finish_step(pg, *, lab: bool) -> Step | None:
    """Wait for the step's last chart change to be painted and the page to be quiet; the
    step's times (None when no chart changed)."""
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while True:
        pg.wait_for_timeout(100)
        r = pg.evaluate("window.__bb.read()")
        idle = not lab or pg.evaluate(KERNEL) == "connected/idle"
        quiet = r["lastChange"] is None or r["now"] - r["lastChange"] >= QUIET_MS
        started = r["input"] is not None and (r["changes"] > 0 or r["now"] - r["input"] > 5000)
        if started and quiet and idle and (r["lastChange"] is None or r["paint"] is not None):
            break
        if time.monotonic() > deadline:
            raise TimeoutError("a step did not finish in time")
    if r["lastChange"] is None or r["input"] is None:
        return None
    marks = r["specs"] if lab else r["embeds"]
    first = min((t for t in marks if r["input"] <= t <= r["paint"]), default=None)
    step = Step(r["step"], r["paint"] - r["input"], None if first is None else first - r["input"])
    step.rects, step.rect_ms = r["rects"]
    return step


class MainThreadCPU:
    """The CPU time of the page's main thread between a step's performance marks, from
    Chromium's trace (the "toplevel" and "blink.user_timing" categories: each mark carries
    the thread's CPU clock, ``tts``). On a shared machine the wall clock counts the waits for
    a core; this does not."""

    def __init__(self, context, pg) -> None:
        self.cdp = context.new_cdp_session(pg)
        self.events: list[dict] = []
        self.done = False
        self.cdp.on("Tracing.dataCollected", lambda e: self.events.extend(e["value"]))
        self.cdp.on("Tracing.tracingComplete", lambda e: setattr(self, "done", True))

    def start(self) -> None:
        self.events, self.done = [], False
        config = {"includedCategories": ["toplevel", "blink.user_timing", "devtools.timeline"]}
        self.cdp.send("Tracing.start", {"traceConfig": config, "transferMode": "ReportEvents"})

    def stop(self, pg, steps: list[Step]) -> None:
        """End the trace; set each step's ``cpu``, ``cpu_first`` and ``phases``."""
        self.cdp.send("Tracing.end")
        deadline = time.monotonic() + 30
        while not self.done and time.monotonic() < deadline:
            pg.wait_for_timeout(50)
        marks: dict[str, dict] = {}  # the first input and first spec of a step, its last paint
        shows = []  # the page script's marks of a run to show (winviz-show)
        for e in self.events:
            name = e.get("name", "")
            if name.startswith("bb-") and "tts" in e:
                keep = max if name.startswith("bb-paint-") else min
                marks[name] = keep(marks.get(name, e), e, key=lambda m: m["tts"])
            elif name == "winviz-show" and "tts" in e:
                shows.append(e)
        main = {(m["pid"], m["tid"]) for m in marks.values()}
        work = [
            e
            for e in self.events
            if e.get("ph") == "X" and e.get("name") in PHASES and (e["pid"], e["tid"]) in main
        ]
        for step in steps:
            start = marks.get(f"bb-in-{step.number}")
            end = marks.get(f"bb-paint-{step.number}")
            first = marks.get(f"bb-first-{step.number}")
            if start is None or end is None:
                continue
            if first is None:
                first = min(
                    (e for e in shows if start["ts"] <= e["ts"] <= end["ts"]),
                    key=lambda e: e["ts"],
                    default=None,
                )
            step.cpu = (end["tts"] - start["tts"]) / 1000
            if first is not None and first["tts"] <= end["tts"]:
                step.cpu_first = (first["tts"] - start["tts"]) / 1000
            step.phases = {}
            covered = start["ts"]  # an event inside one already counted is not counted again
            for e in sorted(work, key=lambda e: (e["ts"], -e.get("dur", 0))):
                stop = e["ts"] + e.get("dur", 0)
                if e["ts"] < covered or stop > end["ts"]:
                    continue
                covered = stop
                phase = PHASES[e["name"]]
                step.phases[phase] = step.phases.get(phase, 0.0) + e.get("tdur", 0) / 1000


# Main-thread trace events (devtools.timeline) counted by phase: the browser's own work of a
# step (its script is the rest of the step's CPU time).
PHASES = {
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
}


def walk(position: int, count: int, steps: int, stride: int = 1) -> Iterator[int]:
    """The direction (+1 / -1) of each step from ``position`` among ``count`` values, each
    step ``stride`` values (fewer at an end): up to the end, then back down, and so on (every
    step a change)."""
    direction = 1 if position < count - 1 else -1
    for _ in range(steps):
        if not 0 <= position + direction < count:
            direction = -direction
        position = min(max(position + direction * stride, 0), count - 1)
        yield direction


# -- JupyterLab ---------------------------------------------------------------------------


def bench_lab(context, lessons: list[Path], steps: int, log, burst: int = 1) -> list[Explorer]:
    from playwright.sync_api import Error as PlaywrightError  # (its timeouts too)

    results: list[Explorer] = []
    with tempfile.TemporaryDirectory(prefix="winviz-browser-bench-") as tmp:
        root = Path(tmp) / "lessons"
        root.mkdir()
        for path in lessons:
            shutil.copy(path, root / path.name)
        with jupyter_lab(root, Path(tmp) / "jupyter") as (url, token, server, _log):
            for path in lessons:
                started = time.monotonic()
                try:
                    found = lab_lesson(context, url, token, server, path, steps, burst)
                except (TimeoutError, RuntimeError, PlaywrightError) as exc:
                    found = [Explorer("lab", path.stem, 0, "?", note=str(exc))]
                log(
                    f"  lab   {path.stem}: {len(found)} explorer(s), "
                    f"{time.monotonic() - started:.0f} s"
                )
                results.extend(found)
    return results


def kernel_process(server: int, kernel_id: str):
    """The kernel's process (a child of the server whose connection file names its id)."""
    import psutil

    for child in psutil.Process(server).children(recursive=True):
        try:
            if any(kernel_id in part for part in child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


def cpu_ms(process) -> float | None:
    if process is None:
        return None
    times = process.cpu_times()
    return (times.user + times.system + times.children_user + times.children_system) * 1000


def lab_lesson(
    context, url: str, token: str, server: int, path: Path, steps: int, burst: int = 1
) -> list[Explorer]:
    pg, net = new_page(context)
    pg.add_init_script(PROBE_JS)
    pg.set_default_timeout(60_000)
    try:
        pg.goto(f"{url}/lab/workspaces/{path.stem}/tree/{path.name}?token={token}")
        wait_until(pg, "() => window.jupyterapp !== undefined", 60, "JupyterLab")
        pg.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
        wait_until(pg, f"() => ({KERNEL})() === 'connected/idle'", 90, "the kernel")
        pg.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        wait_until(pg, ALL_RAN, 600, f"{path.stem}'s cells")
        if pg.locator(STDERR).count():
            text = pg.locator(STDERR).first.inner_text()[:300]
            return [Explorer("lab", path.stem, 0, "?", note=f"a cell failed: {text}")]
        kinds = pg.evaluate(LAB_EXPLORERS)
        kernel = kernel_process(server, pg.evaluate(KERNEL_ID))
        cpu = MainThreadCPU(context, pg)
        found = []
        for number, kind in enumerate(kinds):
            ex = Explorer("lab", path.stem, number, kind)
            box = f'.widget-vbox[data-bb="{number}"]'
            pg.locator(box).scroll_into_view_if_needed()
            pg.wait_for_timeout(QUIET_MS)
            cpu.start()
            for direction in lab_walk(pg, box, kind, steps):
                # a learner looking at the charts before the next step: the kernel has
                # computed the runs next to it ahead and the page drawn them (explorer_chart)
                wait_until(pg, LAB_AHEAD_DONE % box, AHEAD_TIMEOUT_S, "the runs drawn ahead")
                pg.evaluate(f"window.__bb.mark(document.querySelector('{box}'))")
                kernel_before = cpu_ms(kernel)
                if kind == "slider":  # (focused once: focusing makes JupyterLab select the
                    # cell and its editors measure themselves, in the step)
                    handle = pg.locator(f"{box} .widget-slider .noUi-handle").first
                    if not handle.evaluate("h => h === document.activeElement"):
                        handle.focus()
                    for _ in range(burst):  # (--burst: quick presses, one step)
                        pg.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
                else:
                    select = pg.locator(f"{box} .widget-dropdown select").first
                    at, count = select.evaluate("s => [s.selectedIndex, s.options.length]")
                    # (a step the page did not take leaves the walk off by one: turn back)
                    index = at + direction if 0 <= at + direction < count else at - direction
                    select.select_option(index=index)
                step = finish_step(pg, lab=True)
                if step is not None:
                    if kernel_before is not None:
                        step.kernel_cpu = cpu_ms(kernel) - kernel_before
                    ex.steps.append(step)
                    ex.prepared += pg.evaluate(LAB_PREPARED % box)
            cpu.stop(pg, ex.steps)
            if net.blocked:
                ex.note = f"{len(net.blocked)} request(s) off the machine blocked"
            found.append(ex)
        pg.evaluate(SHUTDOWN)
        return found
    finally:
        pg.close()


def lab_walk(pg, box: str, kind: str, steps: int) -> Iterator[int]:
    """The direction of each step of an explorer's first control in JupyterLab (a slider's
    position is read from its handle before each step: up to its end, then back)."""
    if kind == "dropdown":
        select = pg.locator(f"{box} .widget-dropdown select").first
        count = select.evaluate("s => s.options.length")
        yield from walk(select.evaluate("s => s.selectedIndex"), count, steps)
        return
    handle = pg.locator(f"{box} .widget-slider .noUi-handle").first
    direction = 1
    for _ in range(steps):
        lo, hi, now = (
            float(handle.get_attribute(a))
            for a in ("aria-valuemin", "aria-valuemax", "aria-valuenow")
        )
        if (direction > 0 and now >= hi) or (direction < 0 and now <= lo):
            direction = -direction
        yield direction


# -- exported pages -----------------------------------------------------------------------


def build_site(lessons: list[Path], out: Path, log) -> None:
    from winviz.viz import lessons as site

    started = time.monotonic()
    site.build_lessons(NOTEBOOKS, out, only=[p.stem for p in lessons], log=None)
    log(f"  built {len(lessons)} lesson page(s) in {time.monotonic() - started:.0f} s ({out})")


def bench_pages(
    context, lessons: list[Path], site: Path, steps: int, log, burst: int = 1
) -> list[Explorer]:
    results = []
    for path in lessons:
        page = site / f"{path.stem}.html"
        if not page.is_file():
            results.append(Explorer("pages", path.stem, 0, "?", note=f"no page {page}"))
            continue
        started = time.monotonic()
        try:
            found = page_lesson(context, page, path.stem, steps, burst)
        except (TimeoutError, RuntimeError) as exc:
            found = [Explorer("pages", path.stem, 0, "?", note=str(exc))]
        log(f"  pages {path.stem}: {len(found)} explorer(s), {time.monotonic() - started:.0f} s")
        results.extend(found)
    return results


def page_lesson(context, page: Path, lesson: str, steps: int, burst: int = 1) -> list[Explorer]:
    pg, net = new_page(context)
    pg.add_init_script(PROBE_JS)
    try:
        pg.goto(page.as_uri())
        wait_until(pg, CHARTS_DRAWN, 120, "charts")
        pg.evaluate("window.__bb.wrapEmbed()")
        count = pg.locator("div.winviz-explorer").count()
        cpu = MainThreadCPU(context, pg)
        found = []
        for number in range(count):
            box = f"div.winviz-explorer >> nth={number}"
            root = pg.locator(box)
            control = root.locator("div.winviz-explorer-controls input, select").first
            kind = "slider" if control.evaluate("e => e.tagName") == "INPUT" else "dropdown"
            ex = Explorer("pages", lesson, number, kind)
            root.scroll_into_view_if_needed()
            if kind == "slider":
                count_values = int(control.get_attribute("max") or 0) + 1
            else:
                count_values = control.evaluate("s => s.options.length")
            position = int(control.input_value())
            if count_values < 2:
                ex.note = "its first control has one value"
                found.append(ex)
                continue
            cpu.start()
            stride = burst if kind == "slider" else 1
            for direction in walk(position, count_values, steps, stride):
                # a learner looking at the chart before the next step: the page has drawn
                # the runs next to it ahead (pages.py), when it does
                wait_until(pg, AHEAD_DONE % number, AHEAD_TIMEOUT_S, "the runs drawn ahead")
                root.evaluate("e => window.__bb.mark(e)")
                position = min(max(position + direction * stride, 0), count_values - 1)
                if kind == "slider" and burst > 1:  # (--burst: quick arrow presses, one step)
                    control.focus()
                    for _ in range(burst):
                        pg.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
                elif kind == "slider":
                    control.fill(str(position))
                else:
                    control.select_option(index=position)
                step = finish_step(pg, lab=False)
                if step is not None:
                    ex.steps.append(step)
                    ex.prepared += root.get_attribute("data-drawn") == "prepared"
            cpu.stop(pg, ex.steps)
            if pg.evaluate("window.winvizCharts.errors").__len__():
                ex.note = "page errors: " + "; ".join(pg.evaluate("window.winvizCharts.errors"))
            if net.blocked:
                ex.note = f"{len(net.blocked)} request(s) off the machine blocked"
            found.append(ex)
        return found
    finally:
        pg.close()


# -- report -------------------------------------------------------------------------------


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ms(value: float | None) -> str:
    return "   –  " if value is None else f"{value:6.0f}"


def _quartiles(values: list[float]) -> tuple[float | None, float | None]:
    if len(values) >= 2:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return q1, q3
    return _median(values), _median(values)


def _col(steps: list[Step], value) -> float | None:
    return _median([v for v in map(value, steps) if v is not None])


def report(results: list[Explorer]) -> str:
    """Per explorer, medians over its steps (ms): the wall clock of a step (and quartiles),
    of its two parts; then CPU time: the page's main thread (``page``) — split into its
    script (the rest: JavaScript, garbage collection, DOM), style, layout and paint — and, in
    JupyterLab, the kernel process and the sum of both (about what a step costs on an idle
    machine). The goal lines judge the wall clock, and show the CPU sum next to it."""
    lines = []
    for where, parts in (("lab", ("kernel", "browser")), ("pages", ("decode", "embed"))):
        rows = [r for r in results if r.where == where]
        if not rows:
            continue
        title = "JupyterLab" if where == "lab" else "exported pages (file://)"
        lines.append(
            f"\n{title}: a step, input → charts painted (ms, medians over the steps). Wall "
            f"clock: the step (quartiles), {parts[0]} / {parts[1]}. CPU: the page's main "
            "thread: script, style, layout, paint"
            + ("; the kernel process; page + kernel" if where == "lab" else "")
        )
        lines.append(
            f"  {'lesson / explorer':<38} {'n':>2} {'wall':>6} {'q1':>6} {'q3':>6} "
            f"{parts[0]:>7} {parts[1]:>7} | {'page':>6} {'script':>6} {'style':>6} "
            f"{'layout':>6} {'paint':>6}" + (f" {'kernel':>6} {'sum':>6}" if where == "lab" else "")
        )
        worst = worst_cpu = None
        for r in rows:
            totals = [s.total for s in r.steps]
            name = f"{r.lesson} #{r.number} ({r.control})"
            median = _median(totals)
            q1, q3 = _quartiles(totals)
            cpu = _col(r.steps, lambda s: s.cpu)

            def phase(name: str, steps: list[Step] = r.steps) -> float | None:
                return _col(steps, lambda st: st.phases.get(name, 0.0) if st.phases else None)

            script = _col(
                r.steps,
                lambda s: None if s.cpu is None or not s.phases else s.cpu - sum(s.phases.values()),
            )
            line = (
                f"  {name:<38} {len(totals):>2} {_ms(median)} {_ms(q1)} {_ms(q3)} "
                f"{_ms(_col(r.steps, lambda s: s.first)):>7} "
                f"{_ms(_col(r.steps, lambda s: s.rest)):>7} | {_ms(cpu)} {_ms(script)} "
                f"{_ms(phase('style'))} {_ms(phase('layout'))} {_ms(phase('paint'))}"
            )
            both = cpu
            if where == "lab":
                both = _col(
                    r.steps,
                    lambda s: None if s.cpu is None else s.cpu + (s.kernel_cpu or 0.0),
                )
                line += f" {_ms(_col(r.steps, lambda s: s.kernel_cpu))} {_ms(both)}"
            if r.prepared:
                line += f"  ({r.prepared} drawn ahead)"
            line += (
                (
                    f"  svg rects {_col(r.steps, lambda s: s.rects):.0f}: "
                    f"{_col(r.steps, lambda s: s.rect_ms):.1f} ms"
                )
                if r.steps
                else ""
            )
            lines.append(line + (f"  note: {r.note}" if r.note else ""))
            if median is not None and (worst is None or median > worst[0]):
                worst = (median, name)
            if both is not None and (worst_cpu is None or both > worst_cpu[0]):
                worst_cpu = (both, name)
        goal = GOALS_MS[where]
        if worst is None:
            lines.append(f"  goal ≤ {goal:.0f} ms median on every explorer: no measurement")
            continue
        verdict = "met" if worst[0] <= goal else "NOT met"
        lines.append(
            f"  goal ≤ {goal:.0f} ms median on every explorer (wall clock): {verdict} "
            f"(slowest: {worst[1]}, {worst[0]:.0f} ms)"
        )
        if worst_cpu is not None:
            what = "page + kernel" if where == "lab" else "the page's main thread"
            lines.append(
                f"  the same in CPU time ({what}): "
                f"{'met' if worst_cpu[0] <= goal else 'NOT met'} "
                f"(slowest: {worst_cpu[1]}, {worst_cpu[0]:.0f} ms)"
            )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines.append(f"\nload average at the end: {load} on {os.cpu_count()} CPUs")
    return "\n".join(lines)


def _p90(values: list[float]) -> float | None:
    if len(values) >= 2:
        return statistics.quantiles(values, n=10, method="inclusive")[-1]
    return _median(values)


def summary(results: list[Explorer]) -> str:
    """One line per lesson explorer and place, over every run of it (ms): the median of the
    runs' median wall clock (each run's median after it), the 90th percentile of all its
    steps, the median over the runs of the page's main-thread CPU median and of the kernel
    process's CPU median (JupyterLab), and the goal of its place (issue 30); then the load
    average at the end of each run."""
    groups: dict[tuple[str, int, str], list[Explorer]] = {}
    for r in results:
        groups.setdefault((r.lesson, r.number, r.where), []).append(r)
    lines = [
        "\nsummary: a step, input → charts painted (ms). median: the median of the runs' "
        "medians (each run's after it); p90: all its steps; CPU: medians over the runs of "
        "each run's median",
        f"  {'lesson #explorer (control)':<40} {'where':<5} {'runs':>4} {'steps':>5} "
        f"{'median':>6} {'p90':>6} {'page':>6} {'kernel':>6} {'goal':>5}  {'':<4} runs' medians",
    ]
    for (lesson, number, where), runs in sorted(groups.items()):
        measured = [r for r in runs if r.steps]
        medians = [statistics.median(s.total for s in r.steps) for r in measured]
        every = [s.total for r in measured for s in r.steps]
        page = _median([v for r in measured if (v := _col(r.steps, lambda s: s.cpu)) is not None])
        kernel = _median(
            [v for r in measured if (v := _col(r.steps, lambda s: s.kernel_cpu)) is not None]
        )
        median = _median(medians)
        goal = GOALS_MS[where]
        verdict = "–" if median is None else ("met" if median <= goal else "OVER")
        notes = "; ".join(sorted({r.note for r in runs if r.note}))
        lines.append(
            f"  {f'{lesson} #{number} ({runs[0].control})':<40} {where:<5} {len(measured):>4} "
            f"{len(every):>5} {_ms(median)} {_ms(_p90(every))} {_ms(page)} {_ms(kernel)} "
            f"{goal:>5.0f}  {verdict:<4} {' '.join(f'{m:.0f}' for m in medians)}"
            + (f"  note: {notes}" if notes else "")
        )
    loads = {}
    for r in results:
        loads.setdefault((r.run, r.where), r.load)
    lines.append(
        "  load average (1 min) at the end of each run: "
        + ", ".join(
            f"{where} {run}: {load:.1f}" for (run, where), load in loads.items() if load is not None
        )
        + f" on {os.cpu_count()} CPUs"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=9, help="steps per explorer")
    parser.add_argument("--only", action="append", default=[], help="lesson stem (repeat)")
    parser.add_argument(
        "--where", default="pages,lab", help="lab, pages or both (in turn, in this order)"
    )
    parser.add_argument("--site", type=Path, help="a built lessons folder (else built anew)")
    parser.add_argument(
        "--burst",
        type=int,
        default=1,
        help="key presses per slider step, made at once (the step: the first press → "
        "the charts' last paint)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="the measurement this many times, the places taking turns; a summary over them",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="every lesson explorer in both places (as with no --only and no --where)",
    )
    args = parser.parse_args(argv)
    if args.all:
        args.only, args.where = [], "pages,lab"
    # the places in turn, run after run: pages, lab, pages, lab, … (--where's order)
    order = list(dict.fromkeys(w.strip() for w in args.where.split(",")))
    order = [w for w in order if w in GOALS_MS]

    def log(line: str) -> None:
        print(line, flush=True)

    try:
        executable = chromium_path()
    except FileNotFoundError as missing:
        log(f"browser bench skipped: {missing}")
        return 0
    try:
        import playwright.sync_api  # noqa: F401  (tools.browser.chromium drives it)
    except ImportError:
        log("browser bench skipped: Playwright is not installed (make setup-test)")
        return 0
    lessons = explorer_lessons(args.only)
    log(
        f"browser bench: {len(lessons)} lesson(s) with an explorer, {args.steps} steps each, "
        f"in {executable}"
    )
    results: list[Explorer] = []
    try:
        with (
            chromium(executable) as context,
            tempfile.TemporaryDirectory(prefix="winviz-site-") as tmp,
        ):
            site = args.site
            if "pages" in order and site is None:
                site = Path(tmp)
                build_site(lessons, site, log)
            for run in range(1, args.repeat + 1):
                for place in order:
                    log(f"run {run} of {args.repeat}: {place}")
                    if place == "pages":
                        found = bench_pages(context, lessons, site, args.steps, log, args.burst)
                    else:
                        found = bench_lab(context, lessons, args.steps, log, args.burst)
                    load = os.getloadavg()[0]
                    for ex in found:
                        ex.run, ex.load = run, load
                    log(report(found))
                    results += found
    except Exception:  # a bench reports: say what stopped it, keep what was measured
        log("browser bench stopped:\n" + traceback.format_exc())
    log(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
