"""One palette with meanings (issue 26): a colour means one thing across all charts.

Every chart kind is drawn on the jobs of tests/chart_jobs.py and on a few more that reach the
rarer categories (an interval join, idleness, watermark alignment, a purging evictor with a
processing-time trigger), and every (colour, meaning) pair is read from the specs: the
categories of each colour / fill / stroke scale (what the legend says the colour means) and the
colours written on marks. One colour, one meaning, in every chart; every meaning drawn in its
named palette colour; the fates and the firing causes apart for the colour-vision deficiencies;
and no colour written anywhere in winviz/viz but palette.py."""

from __future__ import annotations

import ast
import io
import itertools
import math
import re
import tokenize
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chart_jobs import CHARTS, JOBS
from jobs import RECORDS, aligned_job, counts

import winviz as wv
from winviz import viz
from winviz.viz import palette
from winviz.viz.trace_view import open_trace

VIZ = Path(viz.__file__).parent

# What each legend category means, written here (not read from the charts): the palette name
# of the one colour that meaning has. Labels of one meaning share a name — a firing by an
# event-time timer and the timers chart's event-time domain are the same meaning, and so are
# a firing the trigger returned in onElement and an interval join's pair, both emitted on an
# element's arrival (Flink's IntervalJoinOperator.processElement).
CATEGORY_COLOR: dict[str, str] = {
    "on time": "ON_TIME_COLOR",
    "late, accepted": "LATE_ACCEPTED_COLOR",
    "dropped": "DROPPED_COLOR",
    "side output": "SIDE_OUTPUT_COLOR",
    "fired: element": "ELEMENT_FIRING_COLOR",
    "joined": "ELEMENT_FIRING_COLOR",
    "fired: event-time timer": "EVENT_TIME_COLOR",
    "event": "EVENT_TIME_COLOR",
    "fired: processing-time timer": "PROCESSING_TIME_COLOR",
    "processing": "PROCESSING_TIME_COLOR",
    "fired: end of input": "WATERMARK_COLOR",
    "fired: session merge": "MERGE_COLOR",
    "merged": "MERGE_COLOR",
    "fired: cause not traced": "NOT_TRACED_COLOR",
    "purged": "REMOVED_COLOR",
    "evicted": "REMOVED_COLOR",
    "cleanup": "REMOVED_COLOR",
    "buffer removed": "REMOVED_COLOR",
    "merged away": "MERGED_AWAY_COLOR",
    "gone": "GONE_COLOR",
    "open": "WINDOW_COLOR",
    "not fired": "WINDOW_COLOR",
    "fired": "WINDOW_FIRED_COLOR",
    "taken by this element": "PATH_FILL",
    "on the path": "PATH_FILL",
    "not taken": "FADED_COLOR",
    "not on the path": "FADED_COLOR",
}
# What a layer drawn in one written colour shows, by its rows' ``kind``.
KIND_COLOR: dict[str, str] = {
    "watermark": "WATERMARK_COLOR",
    "watermark at t": "WATERMARK_COLOR",
    "watermark lag": "WATERMARK_COLOR",
    "window": "WINDOW_COLOR",
    "allowed-lateness horizon": "HORIZON_COLOR",
    "now": "GUIDE_COLOR",
    "queue size": "GUIDE_COLOR",  # the pointer's link across the timers
    palette.IDEAL: "GUIDE_COLOR",
    "processing time": "GUIDE_COLOR",  # the timers chart's processing time = timestamp
    "restart": "GUIDE_COLOR",
    "idle": "IDLE_COLOR",
    "paused": "PAUSED_COLOR",
    "element": "FADED_COLOR",  # the scrubber's elements that arrive after t
    "timer event": "DEDUP_COLOR",  # the timers chart's de-duplicated registrations
}
MEANING_NAMES = sorted(
    n for n in vars(palette) if re.fullmatch(r"[A-Z0-9_]+_COLOR", n) or n == "PATH_FILL"
)
# The watermark of the n-th operator a chart draws (the timeline's "watermark of" legend, in
# drawing order), cycling as its dashes do: one meaning per shade.
SHADE_NAMES = (
    "WATERMARK_COLOR",
    "WATERMARK_2_COLOR",
    "WATERMARK_3_COLOR",
    "WATERMARK_4_COLOR",
    "WATERMARK_5_COLOR",
)
DIAGRAMS = ("operator_flow", "stage_watermarks")  # boxes and arrows drawn in ink
FATE_NAMES = ("ON_TIME_COLOR", "LATE_ACCEPTED_COLOR", "DROPPED_COLOR", "SIDE_OUTPUT_COLOR")
CAUSE_NAMES = (
    "ELEMENT_FIRING_COLOR",
    "EVENT_TIME_COLOR",
    "PROCESSING_TIME_COLOR",
    "WATERMARK_COLOR",
    "MERGE_COLOR",
    "NOT_TRACED_COLOR",
)


def _strategy(bound: int) -> wv.WatermarkStrategy:
    return wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
        lambda e, _: e[1]
    )


class Pairs(wv.ProcessJoinFunction):
    def process_element(self, left, right, ctx, out):
        out.collect((left[2], right[2]))


def join_job() -> wv.JobExecutionResult:
    """An interval join ([-100, 100] ms) of two keyed streams: pairs joined, buffers removed
    by the cleanup timers, and late elements of the left input dropped."""
    env = wv.StreamExecutionEnvironment()
    left = [("k", (i * 37) % 400 + i * 20, i) for i in range(40)]
    right = [("k", (i * 53) % 300 + i * 20, -i) for i in range(40)]
    a = env.from_collection(left, arrival_interval=7).assign_timestamps_and_watermarks(
        _strategy(30)
    )
    b = env.from_collection(right, arrival_interval=5).assign_timestamps_and_watermarks(
        _strategy(30)
    )
    (
        a.key_by(lambda e: e[0])
        .interval_join(b.key_by(lambda e: e[0]))
        .between(-100, 100)
        .process(Pairs())
        .sink_to("pairs")
    )
    return env.execute()


def purging_job() -> wv.JobExecutionResult:
    """Processing-time windows (their ProcessingTimeTrigger purged by PurgingTrigger) with a
    count evictor: processing-time firings, purges and evictions."""
    env = wv.StreamExecutionEnvironment()
    events = [(f"k{i % 2}", (i * 31) % 300 + i * 10, i) for i in range(60)]
    (
        env.from_collection(events, arrival_interval=10)
        .assign_timestamps_and_watermarks(_strategy(50))
        .key_by(lambda e: e[0])
        .window(wv.TumblingProcessingTimeWindows.of(200))
        .trigger(wv.PurgingTrigger.of(wv.ProcessingTimeTrigger.create()))
        .evictor(wv.CountEvictor.of(2))
        .process(lambda k, ctx, els, o: o.collect((k, len(list(els)))))
        .sink_to("out")
    )
    return env.execute()


def idle_job() -> wv.JobExecutionResult:
    """Two partitions with ``with_idleness(300)``, partition 1 empty (tests/test_viz_cues.py's
    job): both inputs and the operator 'watermarks' are idle for a while."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(
            [[("a", 1_000), ("a", 3_000), ("a", 4_500), ("a", 9_000)], []],
            arrival_times=[[0, 500, 1_350, 2_500], []],
            name="kafka",
        )
        .assign_timestamps_and_watermarks(_strategy(0).with_idleness(300))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5_000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


def untraced() -> Any:
    """A trace frame without its trigger calls: the charts cannot tell what fired a window
    (one view of it, shared by the charts: a frame is checked once)."""
    frame = JOBS["sliding_count"]().trace.to_pandas()
    return open_trace(frame[~frame["kind"].isin(["trigger", "timer_fired"])])


EVERY = None
TRACES: dict[str, tuple[Callable[[], Any], tuple[str, ...] | None]] = {
    # the chart jobs but the 3,000-element one (the same categories, drawn slower)
    **{
        name: (lambda run=run: run().trace, EVERY)
        for name, run in JOBS.items()
        if "kernel" not in name
    },
    "join": (lambda: join_job().trace, EVERY),
    "purging": (lambda: purging_job().trace, EVERY),
    "idle": (lambda: idle_job().trace, ("timeline", "scrubber", "propagation_chart")),
    "aligned": (lambda: aligned_job().trace, ("timeline", "scrubber")),
    "untraced": (untraced, ("timeline", "window_lanes", "scrubber")),
}
KINDS: dict[str, Callable[[Any], Any]] = {
    **CHARTS,
    "skew_chart": viz.skew_chart,
    "scrubber_skew": lambda t: viz.scrubber(t, view="skew"),
}


def _colour(value: Any) -> str | None:
    return value.upper() if isinstance(value, str) and value.startswith("#") else None


def _rows(node: dict[str, Any], datasets: dict[str, list], inherited: list) -> list:
    data = node.get("data")
    if not isinstance(data, dict):
        return inherited
    if "name" in data:
        return datasets.get(data["name"], [])
    return data.get("values", inherited) if isinstance(data.get("values"), list) else inherited


def uses(chart: str, spec: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(colour, meaning, where) for every colour the spec draws a mark in: the categories of
    its colour scales (meaning: the palette name ``CATEGORY_COLOR`` gives the category, or
    "identity" for a key / channel in ``palette.IDENTITY_COLORS``) and the colours written on
    marks (meaning: the name ``KIND_COLOR`` gives the layer's ``kind``, else the palette name
    of that colour).
    Ink — text, outlines and the diagrams' boxes and arrows in ``palette.INK_COLORS`` — is
    left out."""
    datasets = spec.get("datasets", {})

    def walk(node: Any, rows: list) -> Iterator[tuple[str, str, str]]:
        if isinstance(node, list):
            for item in node:
                yield from walk(item, rows)
            return
        if not isinstance(node, dict):
            return
        rows = _rows(node, datasets, rows)
        mark = node.get("mark")
        mark_type = mark.get("type") if isinstance(mark, dict) else mark
        if mark_type is not None:
            yield from _mark_uses(chart, node, mark, mark_type, rows)
        for key in ("layer", "hconcat", "vconcat", "concat", "spec"):
            if key in node:
                yield from walk(node[key], rows)

    yield from walk(spec, [])


def _category_color(category: str) -> str | None:
    if category.startswith("watermark of "):  # the propagation chart's operator line
        return "WATERMARK_COLOR"
    return CATEGORY_COLOR.get(category)


def _ink(chart: str, colour: str, channel: str, mark_type: str) -> bool:
    return colour in palette.INK_COLORS and (
        mark_type == "text" or channel == "stroke" or chart in DIAGRAMS
    )


def _mark_uses(
    chart: str, node: dict, mark: Any, mark_type: str, rows: list
) -> Iterator[tuple[str, str, str]]:
    written = mark if isinstance(mark, dict) else {}
    encoding = node.get("encoding", {})
    kinds = {r.get("kind") for r in rows[:200] if isinstance(r, dict)}
    for channel in ("color", "fill", "stroke"):
        enc = encoding.get(channel)
        values = [written.get(channel)]
        if isinstance(enc, dict):
            values.append(enc.get("value"))
            scale = enc.get("scale")
            if isinstance(scale, dict) and isinstance(scale.get("range"), list):
                shaded = enc.get("title") == "watermark of"  # the n-th operator drawn
                for n, (category, value) in enumerate(
                    zip(scale["domain"], scale["range"], strict=True)
                ):
                    colour = _colour(value)
                    if colour is None or _ink(chart, colour, channel, mark_type):
                        continue
                    name = (
                        SHADE_NAMES[n % len(SHADE_NAMES)]
                        if shaded
                        else _category_color(str(category))
                    )
                    if name is None:
                        assert colour in palette.IDENTITY_COLORS, (chart, category, colour)
                        yield colour, "identity", f"{chart}: {channel} {category!r}"
                        continue
                    expected = getattr(palette, name)
                    assert colour == expected, (chart, category, colour, name)
                    where = f"{chart}: {channel} {category!r}"
                    yield colour, name, where
        for value in values:
            colour = _colour(value)
            if colour is None or _ink(chart, colour, channel, mark_type):
                continue
            assert colour in palette.COLOR_MEANINGS, (chart, mark_type, channel, colour)
            named = {KIND_COLOR[k] for k in kinds if k in KIND_COLOR}
            assert len(named) <= 1, (chart, kinds)
            for name in named:
                assert colour == getattr(palette, name), (chart, kinds, colour, name)
            where = f"{chart}: {mark_type} {channel} of {sorted(map(str, kinds))[:3]}"
            (name,) = named or {n for n in MEANING_NAMES if getattr(palette, n) == colour}
            yield colour, name, where


@pytest.fixture(scope="module")
def specs() -> dict[tuple[str, str], dict[str, Any]]:
    """Every chart kind on every job, and an explorer's charts."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for job, (read, kinds) in TRACES.items():
        trace = read()
        for kind, draw in KINDS.items():
            if kinds is None or kind in kinds:
                out[job, kind] = draw(trace).to_dict()
    explorer = viz.explore(counts, RECORDS, bound=(0, 2000, 500), charts=EXPLORER_CHARTS)
    for kind, spec in zip(EXPLORER_CHARTS, explorer.specs(), strict=True):
        out["explorer", kind] = spec
    return out


EXPLORER_CHARTS = ("timeline", "window_lanes", "timers_chart", "scrubber", "propagation_chart")


def test_one_meaning_per_colour_across_all_charts(specs) -> None:
    meanings: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for (job, kind), spec in specs.items():
        chart = spec.get("usermeta", {}).get("winviz", {}).get("chart", kind)
        for colour, meaning, at in uses(chart, spec):
            meanings[colour].add(meaning)
            where.setdefault((colour, meaning), f"{job} · {at}")
    clashes = {
        colour: sorted(where[colour, m] for m in ms)
        for colour, ms in meanings.items()
        if len(ms) > 1
    }
    assert clashes == {}
    # the rarer meanings were drawn too: the jobs reach every category of the legends
    drawn = {m for ms in meanings.values() for m in ms}
    assert drawn >= set(CATEGORY_COLOR.values()) | set(KIND_COLOR.values()) | {"identity"}
    # and the watermark's shades of as many operators as a timeline of these jobs draws (the
    # idle job's: its two watermark subtasks', its window subtasks' and its readers')
    assert sorted(n for n in drawn if n in SHADE_NAMES) == sorted(SHADE_NAMES[:4])


def test_every_meaning_has_one_colour_and_no_identity_has_one() -> None:
    """The palette's meaning names (``*_COLOR``, ``PATH_FILL``) name distinct colours, each
    described once in ``COLOR_MEANINGS`` (two names of one colour would collapse there)."""
    colours = [getattr(palette, n) for n in MEANING_NAMES]
    assert len(set(colours)) == len(colours) == len(palette.COLOR_MEANINGS)
    assert set(colours) == set(palette.COLOR_MEANINGS)
    meanings = list(palette.COLOR_MEANINGS.values())
    assert len(set(meanings)) == len(meanings)
    assert not set(palette.IDENTITY_COLORS) & set(palette.COLOR_MEANINGS)
    assert set(palette.FATE_COLORS) == {getattr(palette, n) for n in FATE_NAMES}
    causes = dict(zip(palette.WINDOW_EVENTS, palette.WINDOW_EVENT_COLORS, strict=True))
    assert {causes[e] for e in palette.FIRED_EVENT.values()} == {
        getattr(palette, n) for n in CAUSE_NAMES
    }


# -- colour-vision deficiencies: Machado, Oliveira & Fernandes (2009), severity 1, on linear
# sRGB; the distance is CIE76 ΔE in CIELAB (D65)
CVD = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
MIN_DELTA_E = 15.0  # Okabe–Ito's own fates are 17.2 apart at the least (tritanopia)


def _lab(hex_colour: str, vision: str) -> tuple[float, float, float]:
    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    rgb = [linear(int(hex_colour[i : i + 2], 16)) for i in (1, 3, 5)]
    r, g, b = (
        min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb, strict=True)))) for row in CVD[vision]
    )
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str, vision: str) -> float:
    return math.dist(_lab(a, vision), _lab(b, vision))


def test_fates_and_firing_causes_apart_for_colour_vision_deficiencies() -> None:
    """Every fate's colour and every firing cause's colour differ by ΔE ≥ 15 for normal vision
    and each dichromacy — no fate shares a colour (or a near one) with a cause, as "late,
    accepted" and "fired: element" did (both #E69F00: ΔE 0)."""
    fates = [getattr(palette, n) for n in FATE_NAMES]
    causes = [getattr(palette, n) for n in CAUSE_NAMES]
    nearest = min((round(delta_e(f, c, v), 1), f, c, v) for f in fates for c in causes for v in CVD)
    assert nearest[0] >= MIN_DELTA_E, nearest
    among = min(
        (round(delta_e(a, b, v), 1), a, b, v)
        for group in (fates, causes)
        for a, b in itertools.combinations(group, 2)
        for v in CVD
    )
    assert among[0] >= MIN_DELTA_E, among
    assert delta_e("#E69F00", "#E69F00", "normal") == 0  # the old clash, by this measure


# -- the source scan: colours are written in palette.py only

HEX = re.compile(r"#[0-9A-Fa-f]{3}(?:[0-9A-Fa-f]{3})?(?:[0-9A-Fa-f]{2})?(?![0-9A-Za-z_-])")
CSS_FUNCTION = re.compile(r"\b(?:rgba?|hsla?)\s*\(", re.IGNORECASE)
NAMED = re.compile(
    r"^(?:white|black|red|green|blue|orange|yellow|purple|gr[ae]y|silver|navy|teal|olive|"
    r"maroon|pink|brown|steelblue|crimson|gold|lightgr[ae]y|darkgr[ae]y)$",
    re.IGNORECASE,
)
CSS_NAMED = re.compile(
    r"(?:color|background|border[a-z-]*)\s*:\s*[^;\"']*\b(?:white|black|red|green|blue|"
    r"orange|yellow|purple|gr[ae]y)\b",
    re.IGNORECASE,
)
RAW_NAMES = re.compile(
    r"\bpalette\.(?:BLACK|ORANGE|GREEN|YELLOW|BLUE|VERMILLION|PURPLE|WHITE|GREY|LIGHT_GREY|SKY_BLUE)\b"
)


def colour_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every colour written in a string literal of ``source``: hex colours,
    rgb() / hsl(), CSS colour names as a whole string or in a CSS declaration; and every use of
    the palette's raw colours (``palette.BLUE``) instead of a meaning's name."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
            continue
        text = tok.string
        try:
            inner = ast.literal_eval(text)
        except (ValueError, SyntaxError):  # an f-string's part
            inner = text
        if (
            HEX.search(text)
            or CSS_FUNCTION.search(text)
            or (isinstance(inner, str) and NAMED.match(inner.strip()))
            or CSS_NAMED.search(text)
        ):
            found.append((tok.start[0], text))
    for n, line in enumerate(source.splitlines(), 1):
        if RAW_NAMES.search(line):
            found.append((n, line.strip()))
    return found


def test_no_colour_is_written_outside_palette() -> None:
    written = {
        path.name: hits
        for path in sorted(VIZ.glob("*.py"))
        if path.name != "palette.py" and (hits := colour_literals(path.read_text(encoding="utf-8")))
    }
    assert written == {}


def test_the_scan_finds_colours_written_in_a_chart() -> None:
    """The scan is not blind: the colours the charts wrote before issue 26's palette."""
    src = (
        'ON_FILL = "#D6ECFA"\n'
        'STATUS = (palette.SKY_BLUE, "#FFFFFF")\n'
        "x = '<div style=\"color:#D55E00\">'\n"
        'css = ".e { color: #b00; }"\n'
        'mark = {"color": "black"}\n'
        'css2 = "div { background: white; }"\n'
        'fill = "rgb(1, 2, 3)"\n'
        "stroke = palette.BLUE\n"
        "# a comment: #D6ECFA is not a string\n"
        'ok = "watermarks#2 #vg-tooltip-element # fmt: skip"\n'
    )
    assert sorted({n for n, _ in colour_literals(src)}) == [1, 2, 3, 4, 5, 6, 7, 8]


def _luminance(hex_colour: str) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""

    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(hex_colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_watermark_shades_one_meaning_each_apart_and_readable_on_white() -> None:
    """Each operator's watermark line in its own shade of the watermark colour (the timeline,
    where lines that lie on each other take turns dash by dash): the n-th operator drawn in
    the n-th shade, each meaning written once; the shades apart from each other (ΔE ≥ 15 for
    normal vision and each dichromacy; the first three, what most charts draw, ≥ 25) and from
    every other colour of the palette, meanings and identities (≥ 14 for normal vision, ≥ 8
    for each dichromacy), and each at least 3:1 against white (WCAG's contrast for graphics)."""
    shades = palette.WATERMARK_SHADES
    assert shades == tuple(getattr(palette, n) for n in SHADE_NAMES)
    assert shades == ("#000000", "#68909C", "#746450", "#504028", "#2C1C00")
    assert [palette.COLOR_MEANINGS[c] for c in shades] == [
        "the watermark (of the 1st operator drawn; a firing by the end-of-input watermark MAX)",
        "the watermark (of the 2nd operator drawn)",
        "the watermark (of the 3rd operator drawn)",
        "the watermark (of the 4th operator drawn)",
        "the watermark (of the 5th operator drawn)",
    ]
    apart = {
        (a, b): min(delta_e(a, b, v) for v in CVD) for a, b in itertools.combinations(shades, 2)
    }
    assert round(min(apart.values()), 1) == 15.3  # #746450 and #504028, for tritanopia
    assert round(min(apart[p] for p in itertools.combinations(shades[:3], 2)), 1) == 27.4
    others = [c for c in (*palette.COLOR_MEANINGS, *palette.IDENTITY_COLORS) if c not in shades]
    assert round(min(delta_e(s, o, "normal") for s in shades for o in others), 1) == 14.7
    nearest = min(
        (round(delta_e(s, o, v), 1), s, o, v) for s in shades for o in others for v in CVD
    )
    assert nearest == (8.5, "#68909C", "#CC79A7", "deuteranopia")  # side output, drawn as ▲
    assert [round(contrast(s, palette.WHITE), 2) for s in shades] == [21.0, 3.47, 5.7, 9.98, 16.49]
    assert contrast("#959595", palette.WHITE) < 3  # (the measure: a grey just too light)
