"""A gallery of charts for the overlap check (issue 26): every chart kind × tricky jobs
(coinciding firings, session merges, idle partitions, parallel partitions, a restore and
lesson 05's, dense runs), on one page, and the script that reads their rendered Vega scenegraphs.

The check reads what Vega drew (``view.scenegraph()``), not a list of marks: a mark added to
a chart later is checked too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import winviz as wv
from tests.browser.conftest import wait_until
from tests.chart_jobs import kernel_job, late_union_job, session_job
from tests.jobs import bounded, kafka_readers, keyed_window
from tests.test_checkpoints import late_after_a_firing
from tests.test_viz_restore_at_t import lesson_05_restore
from tests.test_viz_stages import parallel_job, union
from tools.browser import open_drawn
from winviz import datasets, viz
from winviz.viz import export, grid, labels, lessons, pages, palette
from winviz.viz.boxes import crosses
from winviz.viz.labels import EDGE_PLACES, LABEL_PLACES, LABEL_REACH_PX

RUNNING_EVENTS = [
    ("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 7_000),
    ("e", 12_000), ("f", 4_000), ("g", 16_000), ("h", 25_000),
]  # fmt: skip
RUNNING_ARRIVALS = [1_200, 3_100, 3_500, 7_300, 12_100, 12_500, 16_200, 25_100]


def running_example() -> wv.JobExecutionResult:
    """The lessons' running example a–h: 10 s windows, bound 1 s, late data to a side output."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(RUNNING_EVENTS, arrival_times=RUNNING_ARRIVALS)
        .assign_timestamps_and_watermarks(bounded(1_000))
        .key_by(lambda e: "all")
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(10)))
        .side_output_late_data(wv.OutputTag("late"))
        .process(lambda key, ctx, els, out: out.collect("".join(e[0] for e in els)))
        .sink_to("windows")
    )
    return env.execute()


def coinciding_firings() -> wv.JobExecutionResult:
    """Sliding windows of 2 ms every 1 ms, allowed lateness 1 s: at 400 ms the watermark 1499
    fires [998, 1000) at its timer 999 (on time) and the late a@998 that follows it re-fires
    [997, 999) at its end 999 (a late firing) and [998, 1000): firings of one point."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 998), ("a", 999), ("a", 1500), ("a", 998)], arrival_times=[0, 100, 300, 400]
        )
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.SlidingEventTimeWindows.of(2, 1))
        .allowed_lateness(1_000)
        .aggregate(wv.CountAggregate())
        .sink_to("o")
    )
    return env.execute()


def timers_job() -> wv.JobExecutionResult:
    """Tumbling 5 s windows, bound 1.5 s, lateness 1 s: re-registered (de-duplicated) timers
    (tests/test_viz_timers_scrubber.py ``event_job``)."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 1000), ("b", 1200), ("a", 7000), ("a", 4500), ("a", 9000), ("a", 2000)],
            arrival_times=[0, 50, 100, 300, 400, 700],
        )
        .assign_timestamps_and_watermarks(bounded(1500))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .aggregate(wv.CountAggregate())
        .sink_to("o")
    )
    return env.execute()


def restored() -> wv.JobExecutionResult:
    """A checkpoint after three records, a failure after the fourth, the restore."""
    return late_after_a_firing().enable_checkpointing(at_records=[3]).execute(fail_at=4)


JOBS: dict[str, Callable[[], wv.JobExecutionResult]] = {
    "running example": running_example,
    "coinciding firings": coinciding_firings,
    "timers": timers_job,
    "sessions": session_job,
    "idle partitions": lambda: kafka_readers(2, idle=300),
    "parallel partitions": lambda: kafka_readers(1),
    "restore": restored,
    "lesson 05 restore": lesson_05_restore,
    "late union": late_union_job,
    "dense": lambda: kernel_job(3000),
}

CHARTS: dict[str, Callable[[Any], Any]] = {
    "timeline": lambda r: viz.timeline(r, view="timeline"),
    "lanes": viz.window_lanes,
    "timers": viz.timers_chart,
    "skew": viz.skew_chart,
    "propagation": viz.propagation_chart,
    "scrubber": viz.scrubber,
}


def lesson_04_walk(
    data: list[tuple[str, int]] | None = None,
    arrivals: list[int] | None = None,
    *,
    assigner: Any = None,
    lateness: int = 0,
    late: bool = False,
) -> wv.JobExecutionResult:
    """Lesson 04's ``walk``: key A, 1000, 3000 and 6000 arriving at 0, 100 and 1000 ms, bound
    0, 5 s tumbling windows, a count per window (``assigner``, ``lateness``, ``late``: the
    tests' other jobs of ``operator_flow``, tests/test_viz_flow.py)."""
    env = wv.StreamExecutionEnvironment()
    windowed = keyed_window(
        env,
        data or [("A", 1000), ("A", 3000), ("A", 6000)],
        assigner or wv.TumblingEventTimeWindows.of(wv.seconds(5)),
        arrival_times=arrivals or [0, 100, 1000],
        lateness=lateness or None,
        late=wv.OutputTag("late") if late else None,
    )
    windowed.aggregate(wv.CountAggregate()).sink_to("panes")
    return env.execute()


def lesson_07_stages() -> wv.JobExecutionResult:
    """Lesson 07's ``two_stages``: the clickstream's two partitions, bound 2 s, idleness
    30 s, per-user minute counts, then the top user per 5 minutes."""
    clicks = datasets.clickstream()
    parts = [[c for c in clicks if c.partition == p] for p in (0, 1)]
    arrivals = [[c.arrival_time for c in part] for part in parts]
    strategy = (
        wv.WatermarkStrategy.for_bounded_out_of_orderness(wv.seconds(2))
        .with_timestamp_assigner(lambda c, _: c.event_time)
        .with_idleness(wv.seconds(30))
    )
    env = wv.StreamExecutionEnvironment()
    per_user = (
        env.from_partitions(parts, arrival_times=arrivals, name="clicks")
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda c: c.user)
        .window(wv.TumblingEventTimeWindows.of(wv.minutes(1)))
        .side_output_late_data(wv.OutputTag("late1"))
        .process(lambda user, ctx, els, out: out.collect((user, len(list(els)))))
        .name("per_user")
    )
    (
        per_user.key_by(lambda r: "all")
        .window(wv.TumblingEventTimeWindows.of(wv.minutes(5)))
        .side_output_late_data(wv.OutputTag("late2"))
        .process(lambda k, ctx, els, out: out.collect(max(els, key=lambda e: (e[1], e[0]))))
        .name("top_user")
        .sink_to("top")
    )
    return env.execute()


LESSON_07_START = 1_767_603_600_000  # lesson 07's START (2026-01-05T09:00:00Z)
LATE = [("A", 1000), ("A", 6000), ("A", 2000)]  # tests/test_viz_flow.py's LATE_DATA
SESSION = [("A", 1000), ("A", 3000), ("A", 2000)]


def open_gallery(pg: Any, path: Path) -> list[str]:
    """Open the drawn gallery page and wait until its explorer is ready; the console
    messages the page gives (``tools.browser.open_drawn``)."""
    console = open_drawn(pg, path)
    wait_until(
        pg,
        "document.querySelector('div.winviz-explorer').dataset.state === 'ready'",
        what="the explorer",
    )
    return console


DIAGRAMS: dict[str, Callable[[], Any]] = {
    "operator_flow · lesson 04 walk": lambda: viz.operator_flow(lesson_04_walk(), 0),
    "operator_flow · late firing": lambda: viz.operator_flow(
        lesson_04_walk(LATE, [0, 1000, 2000], lateness=2000), 2
    ),
    "operator_flow · side output": lambda: viz.operator_flow(
        lesson_04_walk(LATE, [0, 1000, 2000], late=True), 2
    ),
    "operator_flow · session merge": lambda: viz.operator_flow(
        lesson_04_walk(SESSION, [0, 10, 20], assigner=wv.EventTimeSessionWindows.with_gap(1500)),
        2,
    ),
    "operator_flow · sliding": lambda: viz.operator_flow(
        lesson_04_walk(LATE, [0, 1000, 2000], assigner=wv.SlidingEventTimeWindows.of(4000, 2000)),
        0,
    ),
    "stage_watermarks · lesson 07": lambda: viz.stage_watermarks(
        lesson_07_stages(), at=LESSON_07_START + 306_873, start=LESSON_07_START
    ),
    "stage_watermarks · lesson 07 end": lambda: viz.stage_watermarks(
        lesson_07_stages(), start=LESSON_07_START
    ),
    "stage_watermarks · union": lambda: viz.stage_watermarks(union(), 800),
    "stage_watermarks · parallel": lambda: viz.stage_watermarks(parallel_job(), 700),
}
"""The lesson diagrams (``operator_flow``, ``stage_watermarks``) with the jobs the lessons
and their tests draw them with: lesson 04's walk (and the tests' late, side-output, session
and sliding jobs: the longest box texts), lesson 07's two stages at its moment and at the
end, the tests' union and two parallel subtasks (the widest)."""


LABELLED: dict[str, Callable[[], Any]] = {
    "timeline · lesson 01 element labels": lambda: viz.timeline(
        running_example(), element_labels=0
    ),
    "timeline · sessions element labels": lambda: viz.timeline(
        session_job(), view="timeline", element_labels=0
    ),
    "timeline · late union element labels": lambda: viz.timeline(
        late_union_job(), view="timeline", element_labels=0
    ),
    "timeline · dense element labels": lambda: viz.timeline(
        kernel_job(3000), view="timeline", element_labels=0
    ),
}
"""Timelines with each element dot labelled (``element_labels``): lesson 01's a–h, and
crowds of dots whose labels are placed a line or two away from their dot (the sessions', the
late union's, the dense job's)."""


def _explorer() -> Any:
    """An explorer as the lessons draw one: the running example's bound, timeline and
    scrubber."""

    def job(records: list[tuple[str, int]], bound: int = 1000) -> wv.JobExecutionResult:
        env = wv.StreamExecutionEnvironment()
        (
            env.from_collection(records, arrival_times=RUNNING_ARRIVALS)
            .assign_timestamps_and_watermarks(bounded(bound))
            .key_by(lambda e: "all")
            .window(wv.TumblingEventTimeWindows.of(wv.seconds(10)))
            .allowed_lateness(2_000)
            .side_output_late_data(wv.OutputTag("late"))
            .aggregate(wv.CountAggregate())
            .sink_to("counts")
        )
        return env.execute()

    return wv.explore(job, RUNNING_EVENTS, bound=(0, 2000, 1000), charts=("timeline", "scrubber"))


def gallery(
    path: Path, jobs: list[str] | None = None, charts: list[str] | None = None
) -> tuple[Path, list[str]]:
    """Write the gallery page (all of it, or these ``jobs`` × ``charts`` only); returns it and
    each chart's name, in page order (the lesson diagrams, ``DIAGRAMS``, the element-labelled
    timelines, ``LABELLED``, then the explorer's two charts last)."""
    runs = {name: make() for name, make in JOBS.items() if jobs is None or name in jobs}
    names, elements = [], []
    for job, run in runs.items():
        for kind, chart in CHARTS.items():
            if charts is None or kind in charts:
                names.append(f"{kind} · {job}")
                elements.append(pages.chart_element(export.chart_spec(chart(run))))
    if charts is None or "diagrams" in charts:
        for name, draw in DIAGRAMS.items():
            names.append(name)
            elements.append(pages.chart_element(export.chart_spec(draw())))
    if charts is None or "labelled" in charts:
        for name, draw in LABELLED.items():
            names.append(name)
            elements.append(pages.chart_element(export.chart_spec(draw())))
    markup = ""
    if charts is None or "explorer" in charts:
        markup = _explorer_markup()
        names += ["explorer timeline", "explorer scrubber"]
    path.write_text(pages.page("\n".join(elements) + markup, title="gallery"), encoding="utf-8")
    return path, names


def _explorer_markup() -> str:
    ex = _explorer()
    payload = grid.export_grid(ex)
    markup, _ = lessons.explorer_html({"text/plain": "explorer"}, payload, grid.MAX_BYTES)
    return markup


# Reads every drawn chart's scenegraph (div.winviz-chart's ``winvizView``, see
# winviz/viz/pages.py): item bounds are in their group's coordinates, so each group's x, y is
# added on the way down. Returns per chart: its text items (data marks and guides) and its
# symbol / rect items, in drawing order, with absolute boxes, its rules' and lines' segments
# (absolute ends), and its canvas size.
SCAN_JS = """() => {
  const out = [];
  const boxes = Array.from(document.querySelectorAll("div.winviz-chart"));
  boxes.forEach(function (box, chart) {
    const view = box.winvizView;
    if (!view) { out.push(null); return; }
    const texts = [], points = [], solids = [], rules = [], lines = [];
    let order = 0;
    function visible(item) {
      const o = item.opacity === undefined ? 1 : item.opacity;
      return o > 0 && item.bounds && !item.bounds.empty();
    }
    function walk(mark, ox, oy, clip, path) {
      const name = path + "/" + (mark.name || mark.marktype);
      if (mark.marktype === "line") {  // its items are its vertices: a segment per pair
        let last = null;
        const path = order++, style = (mark.items || [])[0] || {};
        (mark.items || []).forEach(function (item) {
          const o = item.opacity === undefined ? 1 : item.opacity;
          if (item.defined === false || !(o > 0) || item.x === undefined) { last = null; return; }
          const at = [ox + item.x, oy + (item.y || 0)];
          if (last) lines.push({ends: [last[0], last[1], at[0], at[1]], mark: name,
                                role: mark.role, kind: item.datum ? (item.datum.kind || "") : "",
                                path: path, width: style.strokeWidth === undefined ? 1 :
                                style.strokeWidth, dash: style.strokeDash || null,
                                offset: style.strokeDashOffset || 0,
                                line: item.datum ? String(item.datum.line || "") : ""});
          last = at;
        });
        return;
      }
      (mark.items || []).forEach(function (item) {
        if (mark.marktype === "group") {
          const gx = ox + (item.x || 0), gy = oy + (item.y || 0);
          const c = item.clip ? [gx, gy, gx + (item.width || 0), gy + (item.height || 0)] : clip;
          (item.items || []).forEach(function (m) { walk(m, gx, gy, c, name); });
          return;
        }
        if (!visible(item)) return;
        const b = item.bounds;
        const abs = [ox + b.x1, oy + b.y1, ox + b.x2, oy + b.y2];
        const fo = item.fillOpacity === undefined ? 1 : item.fillOpacity;
        const op = item.opacity === undefined ? 1 : item.opacity;
        const filled = item.fill && item.fill !== "transparent" && item.fill !== "none";
        const rec = {box: abs, mark: name, role: mark.role, order: order++,
                     clip: clip, datum: item.datum ? (item.datum.label || item.datum.what ||
                     item.datum.event || item.datum.kind || "") : "",
                     kind: item.datum ? (item.datum.kind || "") : "",
                     window: item.datum && item.datum.window !== undefined
                       ? [String(item.datum.key), String(item.datum.window)] : null,
                     slot: item.datum && item.datum.slot !== undefined ? item.datum.slot : null,
                     opaque: !!filled && fo * op >= 0.6};
        if (mark.marktype === "text") {
          const t = Array.isArray(item.text) ? item.text.join(" ") : String(item.text || "");
          if (t.trim() === "") return;
          rec.text = t;
          // where it is drawn from, and how (for ``avoidable``: its other places)
          rec.at = [ox + (item.x || 0), oy + (item.y || 0)];
          rec.place = [item.align || "left", item.baseline || "alphabetic", item.dx || 0,
                       item.dy || 0];
          rec.across = item.datum ? (item.datum.across || "") : "";
          rec.shift = item.datum ? (item.datum.shift || 0) : 0;
          texts.push(rec);
        } else if (mark.marktype === "symbol") {
          points.push(rec);
        } else if (mark.marktype === "rect") {
          solids.push(rec);
        } else if (mark.marktype === "rule") {
          const x = ox + (item.x || 0), y = oy + (item.y || 0);
          rec.ends = [x, y, item.x2 === undefined ? x : ox + item.x2,
                      item.y2 === undefined ? y : oy + item.y2];
          rules.push(rec);
        }
      });
    }
    walk(view.scenegraph().root, 0, 0, null, "");
    const svg = box.querySelector("svg");
    const origin = view.origin();
    out.push({texts: texts, points: points, solids: solids, rules: rules, lines: lines,
              plot: [view.width(), view.height()],
              width: svg ? Number(svg.getAttribute("width")) : 0,
              height: svg ? Number(svg.getAttribute("height")) : 0,
              origin: origin});
  });
  return out;
}"""

SLACK = 1.0  # pixels two boxes may share (anti-aliasing, Vega's rounding of text bounds)
MERGE_MIN_PX = 8.0  # a "merged" mark's box is at least this wide and high (issue 26)
DEFECTS = (
    "text/text", "text/point", "text/line", "hidden", "cut", "far", "small", "on line",
    "line/line", "point/bar",
)  # fmt: skip
"""What ``defects`` counts: see its docstring."""


def _overlap(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > SLACK and min(a[3], b[3]) - max(a[1], b[1]) > SLACK


def _inside(a: list[float], b: list[float]) -> bool:
    return (
        a[0] >= b[0] - SLACK and a[1] >= b[1] - SLACK and a[2] <= b[2] + SLACK
        and a[3] <= b[3] + SLACK
    )  # fmt: skip


def _crosses(ends: list[float], box: list[float]) -> bool:
    """Whether the segment ``ends`` (x1, y1, x2, y2) runs through ``box`` shrunk by ``SLACK``
    on every side (Liang–Barsky clipping)."""
    x1, y1, x2, y2 = ends
    left, top, right, bottom = box[0] + SLACK, box[1] + SLACK, box[2] - SLACK, box[3] - SLACK
    if left >= right or top >= bottom:
        return False
    lo, hi = 0.0, 1.0
    for p, q in (
        (x1 - x2, x1 - left),
        (x2 - x1, right - x1),
        (y1 - y2, y1 - top),
        (y2 - y1, bottom - y1),
    ):
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
    return lo <= hi


GUIDES = (palette.IDEAL,)
"""The lines of a chart that are guides, not marks (their rows' ``kind``): a text may cross
one only where it says so (its datum's ``across`` names it) and it had no other place
(``avoidable``)."""


def avoidable(t: dict[str, Any], scene: dict[str, Any]) -> tuple[Any, ...] | None:
    """The first other place of text ``t`` (a firing or element label: ``LABEL_PLACES``; the
    watermark's edge text: ``EDGE_PLACES``), sized as placement sizes it, where it would be
    free in the drawn ``scene``: inside the plot (a label), off the guides (``boxes.crosses``,
    as placement tells), crossing no other text, no point mark, no line or rule, and a
    label's leader line (``labels._leader``) no text and no point but its own mark — a place
    a text drawn across a guide could have taken instead; None where there is none."""
    (ax, ay), (align, baseline, dx, dy) = t["at"], t["place"]
    if t["kind"] in ("firing label", "element label"):
        places = [(a, d + t["shift"], e) for a, d, e in LABEL_PLACES]
        boxes = [labels._text_box(ax, ay, t["text"], *p) for p in places]
        inside = [0, 0, *scene["plot"]]
    else:
        places = list(EDGE_PLACES)
        boxes = labels._edge_places(ax, ay, t["text"], align)
        inside = None
    others = [u["box"] for u in scene["texts"] if u is not t]
    points = [p["box"] for p in scene["points"] if p["role"] == "mark"]
    segs = [
        s["ends"]
        for s in [*scene["rules"], *scene["lines"]]
        if s["role"] == "mark" and s["kind"] not in GUIDES
        and not (s["kind"] == "leader" and s.get("datum") == t["text"])
    ]  # fmt: skip
    guides = [s["ends"] for s in scene["lines"] if s["role"] == "mark" and s["kind"] in GUIDES]
    for place, box in zip(places, boxes, strict=True):
        if place in ((align, dx, dy), (baseline, dy)):
            continue  # (its own)
        box = list(box)
        if inside is not None and not _inside(box, inside):
            continue
        if any(_overlap(box, b) for b in others + points) or any(_crosses(e, box) for e in segs):
            continue
        if any(crosses(tuple(e), tuple(box)) for e in guides):
            continue  # (across a guide too)
        line = labels._leader(t["shift"], t["text"], *place) if inside is not None else None
        if line is not None:
            x1, y1, x2, y2 = line
            ends = [ax - t["shift"] + x1, ay + y1, ax - t["shift"] + x2, ay + y2]
            start = [ends[0], ends[1], ends[0], ends[1]]
            crossed = [b for b in others + points if not _inside(start, b)]
            if any(_crosses(ends, b) for b in crossed):
                continue
        return place
    return None


def defects(scene: dict[str, Any]) -> dict[str, list[str]]:
    """The defects of one chart's scene (``SCAN_JS``): data text crossing text (data or
    guide), data text crossing a point, data text crossed by a data line or rule (a
    watermark, a horizon, a leader line — but its own), points hidden under an opaque point
    drawn later, data text outside the canvas or its clipping group, a firing label farther
    than ``LABEL_REACH_PX`` from its own mark with no leader line joining them, a
    "merged" mark smaller than ``MERGE_MIN_PX`` either way, and a point lying mid-way on a
    line (``on_lines``)."""
    found: dict[str, list[str]] = {kind: [] for kind in DEFECTS}
    texts = scene["texts"]
    data_texts = [t for t in texts if t["role"] == "mark"]
    for i, t in enumerate(data_texts):
        for u in texts:
            if u is t or (u["role"] == "mark" and data_texts.index(u) < i):
                continue
            if _overlap(t["box"], u["box"]):
                found["text/text"].append(f"{t['text']!r} × {u['text']!r}")
        for p in scene["points"]:
            if p["role"] == "mark" and _overlap(t["box"], p["box"]):
                found["text/point"].append(f"{t['text']!r} × {p['mark']} {p['datum']!r}")
        for seg in [*scene["rules"], *scene["lines"]]:
            own = seg["kind"] == "leader" and seg.get("datum") == t["text"]
            if seg["role"] == "mark" and not own and _crosses(seg["ends"], t["box"]):
                if seg["kind"] in GUIDES and t["across"] == seg["kind"]:
                    free = avoidable(t, scene)
                    if free is None:
                        continue  # (across the guide: no other place was free)
                    found["text/line"].append(f"{t['text']!r} × {seg['kind']!r}, free: {free}")
                    continue
                found["text/line"].append(f"{t['text']!r} × {seg['mark']} {seg['kind']!r}")
        ox, oy = scene["origin"]
        box = t["box"]
        canvas = [-ox, -oy, scene["width"] - ox, scene["height"] - oy]
        if not _inside(box, canvas) or (t["clip"] and not _inside(box, t["clip"])):
            found["cut"].append(repr(t["text"]))
    points = [p for p in scene["points"] if p["role"] == "mark"]
    for p in points:
        over = [
            q
            for q in points
            if q["order"] > p["order"] and q["opaque"] and _inside(p["box"], q["box"])
        ]
        if over:
            found["hidden"].append(f"{p['mark']} {p['datum']!r} under {over[0]['datum']!r}")
    found["far"] = far_labels(scene)
    for p in points:
        w, h = p["box"][2] - p["box"][0], p["box"][3] - p["box"][1]
        if p["kind"] == "merged" and min(w, h) < MERGE_MIN_PX:
            found["small"].append(f"{p['mark']} merged mark {w:.1f} × {h:.1f} px")
    found["on line"] = on_lines(points, scene["rules"])
    found["line/line"] = hidden_lines(scene["lines"])
    found["point/bar"] = on_other_bars(points, scene["solids"])
    return found


def _left_in_sight(under: dict[str, Any], over: dict[str, Any]) -> bool:
    """Whether a line segment stays in sight under another drawn later on the same pixels:
    the later is at least 1 px thinner (the earlier shows on both sides), or both are dashed
    alike and take turns (the same dash array, other offsets: ``winviz.viz.coinciding``)."""
    if under["width"] - over["width"] >= 1:
        return True
    return bool(under["dash"]) and under["dash"] == over["dash"] and (
        under["offset"] % sum(under["dash"]) != over["offset"] % sum(over["dash"])
    )  # fmt: skip


def hidden_lines(lines: list[dict[str, Any]]) -> list[str]:
    """Data line segments lying exactly under a segment of another line drawn later (the
    same two ends, within ``SLACK``, either way round) that does not leave them in sight
    (``_left_in_sight``): only the last drawn of coinciding lines would be seen (issue 26:
    the propagation chart's operators with one watermark)."""
    at: dict[tuple[int, ...], list[dict[str, Any]]] = {}
    for seg in lines:
        if seg["role"] != "mark" or seg["ends"][:2] == seg["ends"][2:]:
            continue
        a, b = sorted([tuple(seg["ends"][:2]), tuple(seg["ends"][2:])])
        at.setdefault(tuple(round(v / SLACK) for v in (*a, *b)), []).append(seg)
    out = []
    for segs in at.values():
        for under in segs:
            over = [
                o for o in segs
                if o["path"] > under["path"] and not _left_in_sight(under, o)
            ]  # fmt: skip
            if over:
                out.append(f"{under['mark']} {under['line']!r} under {over[0]['line']!r}")
    return out


def on_other_bars(points: list[dict[str, Any]], solids: list[dict[str, Any]]) -> list[str]:
    """Point marks of one window (their datum's ``key`` and ``window``) lying on the bar of
    another window in a lane of windows (a rect of kind "window" on a key's sub-lane,
    ``slot``: the window lanes' bars; the timeline's window bands, shared by every key, lie
    under the marks of their windows by design): the reader cannot tell which window the
    mark belongs to, and it covers part of the other bar (issue 26: a cleanup mark beside
    its window's end sat on the next window's bar)."""
    bars = [
        b
        for b in solids
        if b["role"] == "mark" and b["kind"] == "window" and b["window"] and b["slot"] is not None
    ]
    out = []
    for p in points:
        if not p["window"]:
            continue
        for b in bars:
            if b["window"] != p["window"] and _overlap(p["box"], b["box"]):
                out.append(f"{p['mark']} {p['datum']!r} of {p['window']} on {b['window']}")
                break
    return out


ON_LINE = (
    "registration of a timer that already existed (de-duplicated)",
    "de-duplicated registration",  # (its name before issue 26's fix)
)
"""The point marks ``on_lines`` checks (their ``datum``): marks that are not a line's end."""


def on_lines(points: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[str]:
    """Point marks of ``ON_LINE`` lying on a vertical rule (a data mark) drawn under them:
    the rule runs through the point's box, and the point's centre is more than its half
    height from either end of the rule — on a line that neither starts nor ends there it
    reads as part of the line (issue 26: a de-duplicated timer registration ▼ on its timer's
    rule, in the rule's colour, could not be seen)."""
    out = []
    for p in points:
        if p["datum"] not in ON_LINE:
            continue
        b = p["box"]
        half, mid = (b[3] - b[1]) / 2, (b[1] + b[3]) / 2
        for r in rules:
            x1, y1, x2, y2 = r["ends"]
            if (
                r["role"] == "mark"
                and r["order"] < p["order"]
                and abs(x1 - x2) <= SLACK
                and b[0] + SLACK < x1 < b[2] - SLACK
                and min(y1, y2) + half < mid < max(y1, y2) - half
            ):
                out.append(f"{p['mark']} {p['datum']!r} on {r['mark']}")
                break
    return out


def _gap(a: list[float], b: list[float]) -> float:
    """The distance (px) between two boxes (0 where they touch or cross)."""
    dx = max(a[0] - b[2], b[0] - a[2], 0.0)
    dy = max(a[1] - b[3], b[1] - a[3], 0.0)
    return (dx * dx + dy * dy) ** 0.5


def _reach(mark: list[float], label: list[float]) -> float:
    """How far (px) a label's box lies from the centre of its mark's box."""
    cx, cy = (mark[0] + mark[2]) / 2, (mark[1] + mark[3]) / 2
    return _gap([cx, cy, cx, cy], label)


def _own_marks(t: dict[str, Any], points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The marks a firing or element label may name: the firing points whose label is its
    text; the element dots centred on the point the label is drawn from (its ``at``)."""
    if t["kind"] == "firing label":
        return [p for p in points if p["kind"] == "fired" and p["datum"] == t["text"]]
    at = [*t["at"], *t["at"]]
    return [p for p in points if p["kind"] == "element" and _reach(p["box"], at) <= SLACK]


def far_labels(scene: dict[str, Any]) -> list[str]:
    """Firing and element labels (texts of kind "firing label", "element label") whose box
    lies farther than ``LABEL_REACH_PX`` from the centre of their own mark (``_own_marks``)
    with no leader line (a rule of kind "leader" of that label) running from that mark's box
    to the label's box."""
    out = []
    for t in scene["texts"]:
        if t["kind"] not in ("firing label", "element label"):
            continue
        own = _own_marks(t, scene["points"])
        if not own:
            out.append(f"{t['text']!r}: no mark of its own")
            continue
        mark = min(own, key=lambda p, box=t["box"]: _reach(p["box"], box))
        far = _reach(mark["box"], t["box"])
        if far <= LABEL_REACH_PX + SLACK:
            continue
        joined = any(
            r["kind"] == "leader"
            and r["datum"] == t["text"]
            and _gap([*r["ends"][:2], *r["ends"][:2]], mark["box"]) <= 2 * SLACK
            and _gap([*r["ends"][2:], *r["ends"][2:]], t["box"]) <= 2 * SLACK
            for r in scene["rules"]
        )
        if not joined:
            out.append(f"{t['text']!r}: {far:.1f} px from its mark, no leader line")
    return out
