"""Shared look: the palette, mark shapes, time axes, titles and the message card a chart returns
when there is nothing it can honestly draw.

Every colour a chart draws means one thing in every chart (``COLOR_MEANINGS``); charts name
colours from here. Fates and firing causes take colour-blind-safe hues (mostly Okabe & Ito's),
keys and channels Paul Tol's ``IDENTITY_COLORS``; every categorical colour is paired with a
shape. A time axis is milliseconds, drawn as UTC dates when every time lies in 2000..2100 as
epoch ms; times beyond 2**53 (MIN, MAX) are clipped to the axis' edge and labelled
(``TimeAxis.clip``).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pandas as pd

from winviz.trace import vocabulary
from winviz.viz import spec
from winviz.viz.trace_view import TraceInputError, gc_paused

# Okabe–Ito's colours (not their sky blue), white and two greys: charts name the meanings below.
BLACK = "#000000"
ORANGE = "#E69F00"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
WHITE = "#FFFFFF"
GREY = "#7F7F7F"
LIGHT_GREY = "#D9D9D9"

# Keys and input channels: Paul Tol's "muted" set, no colour of which has a meaning below.
IDENTITY_COLORS: tuple[str, ...] = (
    "#332288",  # indigo
    "#88CCEE",  # cyan
    "#44AA99",  # teal
    "#117733",  # green
    "#999933",  # olive
    "#DDCC77",  # sand
    "#CC6677",  # rose
    "#882255",  # wine
    "#AA4499",  # purple
)

# Meanings (tests/test_viz_palette.py checks the distances for each colour-vision deficiency).
COLOR_MEANINGS: dict[str, str] = {}
"""Each colour a chart draws a mark in, and the one thing it means (identities aside)."""


def _means(color: str, meaning: str) -> str:
    """``color``, entered in ``COLOR_MEANINGS`` as meaning ``meaning``."""
    COLOR_MEANINGS[color] = meaning
    return color


WATERMARK_COLOR = _means(
    BLACK, "the watermark (of the 1st operator drawn; a firing by the end-of-input watermark MAX)"
)
# The n-th operator's watermark line (past five the shades start again with the next dash):
# shades told apart by lightness and tint, each ≥ 3:1 against white.
WATERMARK_2_COLOR = _means("#68909C", "the watermark (of the 2nd operator drawn)")
WATERMARK_3_COLOR = _means("#746450", "the watermark (of the 3rd operator drawn)")
WATERMARK_4_COLOR = _means("#504028", "the watermark (of the 4th operator drawn)")
WATERMARK_5_COLOR = _means("#2C1C00", "the watermark (of the 5th operator drawn)")
WATERMARK_SHADES: tuple[str, ...] = tuple(COLOR_MEANINGS)
ON_TIME_COLOR = _means(BLUE, "element on time")
LATE_ACCEPTED_COLOR = _means(ORANGE, "element late, accepted")
DROPPED_COLOR = _means(VERMILLION, "element dropped")
SIDE_OUTPUT_COLOR = _means(PURPLE, "element sent to the side output")
EVENT_TIME_COLOR = _means(GREEN, "event-time timer")
PROCESSING_TIME_COLOR = _means("#762A83", "processing-time timer")
# an element's arrival: a FIRE in Trigger.onElement, a pair of IntervalJoinOperator
ELEMENT_FIRING_COLOR = _means(
    YELLOW, "output caused by an element's arrival (a firing, a joined pair)"
)
NOT_TRACED_COLOR = _means(WHITE, "firing whose cause is not traced")  # drawn hollow
MERGE_COLOR = _means("#543005", "session merge")
MERGED_AWAY_COLOR = _means("#E3CDB5", "window merged away")  # the merge colour's pale tint
# cleanup (and a join's buffer removal), purge, evict: told apart by shape
REMOVED_COLOR = _means(GREY, "removed from window state (cleanup, purge, evict)")
GONE_COLOR = _means(LIGHT_GREY, "window state gone (cleaned up)")
WINDOW_COLOR = _means("#8DA0CB", "window (not fired yet)")
WINDOW_FIRED_COLOR = _means("#6676AE", "window that has fired")
HORIZON_COLOR = _means("#B36B00", "allowed-lateness horizon")  # a darker "late" orange
GUIDE_COLOR = _means("#A6A6A6", "guide (diagonal, restart, now, pointer)")  # by dash, label
FADED_COLOR = _means("#BBBBBB", "not (yet) happened in this view (after t, off the path)")
IDLE_COLOR = _means("#C4C4C4", "input idle")
PAUSED_COLOR = _means("#333333", "input paused by watermark alignment")
DEDUP_COLOR = _means("#5C5C5C", "timer registration de-duplicated")
PATH_FILL = _means("#E8E8F4", "step on the element's path")

# Ink: text, outlines, frames and page chrome — no meaning of their own.
INK = BLACK
NOTE_INK = "#444444"  # subtitles
FADED_INK = "#8A8A8A"  # text of a step off the path
GRID_INK = "#EEEEEE"
FRAME_INK = LIGHT_GREY
ERROR_INK = "#B00000"  # a page's error text
NOTE_BORDER = "#999999"  # a page's widget note
NOTE_BACKGROUND = "#F4F4F4"
PAPER = "#FAFAFA"  # the fill of a plain box (a diagram's step off the path)

INK_COLORS: tuple[str, ...] = (INK, NOTE_INK, FADED_INK, GRID_INK, FRAME_INK, ERROR_INK, PAPER)
"""Colours of text, outlines and frames only."""
MEANING_COLORS: tuple[str, ...] = tuple(COLOR_MEANINGS)

# An element's fate at a window operator (``fates.element_fates``).
FATES: tuple[str, ...] = vocabulary.ELEMENT_FATES
FATE_COLORS: tuple[str, ...] = (
    ON_TIME_COLOR, LATE_ACCEPTED_COLOR, DROPPED_COLOR, SIDE_OUTPUT_COLOR
)  # fmt: skip
FATE_SHAPES: tuple[str, ...] = ("circle", "diamond", "cross", "triangle-up")

# What made a window fire (``firings.fired_by``, the one rule).
FIRED_BY: tuple[str, ...] = vocabulary.FIRED_BY
FIRED_EVENT = {cause: f"fired: {cause}" for cause in FIRED_BY}

# What happened to a window (timeline / lanes "what happened" legend).
WINDOW_EVENTS: tuple[str, ...] = (
    *FIRED_EVENT.values(),
    "purged",
    "evicted",
    "merged",
    "cleanup",
)
WINDOW_EVENT_COLORS: tuple[str, ...] = (
    ELEMENT_FIRING_COLOR,  # fired: element
    EVENT_TIME_COLOR,  # fired: event-time timer
    PROCESSING_TIME_COLOR,  # fired: processing-time timer
    WATERMARK_COLOR,  # fired: end of input (the watermark MAX)
    MERGE_COLOR,  # fired: session merge
    NOT_TRACED_COLOR,  # fired: cause not traced (hollow)
    REMOVED_COLOR,  # purged
    REMOVED_COLOR,  # evicted
    MERGE_COLOR,  # merged
    REMOVED_COLOR,  # cleanup
)
MERGE_SHAPE = "M-1,-1L0,0L-1,1ZM1,-1L0,0L1,1Z"
"""The "merged" mark ▶◀: two triangles meeting at a point (a Vega symbol path)."""
WINDOW_EVENT_SHAPES: tuple[str, ...] = (
    *(["square"] * len(FIRED_EVENT)),
    "triangle-left",
    "triangle-right",
    MERGE_SHAPE,
    "triangle-down",
)

# What an interval join did (timeline "what happened" legend): a pair joined, at the output's
# timestamp; a cleanup timer removed a buffer's bucket, at the bucket's timestamp.
JOIN_EVENTS: tuple[str, ...] = ("joined", "buffer removed")
JOIN_EVENT_COLORS: tuple[str, ...] = (ELEMENT_FIRING_COLOR, REMOVED_COLOR)
JOIN_EVENT_SHAPES: tuple[str, ...] = ("square", "triangle-down")


def drawn_scale(
    names: Sequence[str], values: Sequence[Any], drawn: Iterable[Any]
) -> dict[str, Any]:
    """A nominal scale naming only the ``names`` drawn (in ``names``' order), each with its
    fixed value (a colour, shape or dash): a legend names what is there, nothing else."""
    present = set(drawn)
    kept = [(n, v) for n, v in zip(names, values, strict=True) if n in present]
    return {"domain": [n for n, _ in kept], "range": [v for _, v in kept]}


# The reference lines of the timeline (each its own legend, by dash pattern).
IDEAL = "event time = processing time (ideal)"
IDEAL_DASH = [4, 4]
HORIZON = "allowed-lateness horizon (max timestamp + lateness)"
HORIZON_DASH = [3, 2]

WATERMARK_DASHES: tuple[list[int], ...] = ([1, 0], [6, 3], [2, 2], [8, 2, 2, 2], [1, 3])

WINDOW_FILL = WINDOW_COLOR
WINDOW_OPACITY = 0.12

EPOCH_LO = 946_684_800_000  # 2000-01-01T00:00:00Z in ms
EPOCH_HI = 4_102_444_800_000  # 2100-01-01T00:00:00Z in ms
EXACT = 2**53  # beyond this magnitude a time is "off the chart"
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1

WIDTH = 640
HEIGHT = 400


def is_off_chart(value: float | int | None) -> bool:
    """A time too large in magnitude to draw (|v| > 2**53, e.g. wv.MIN / wv.MAX)."""
    return value is not None and not _nan(value) and abs(value) > EXACT


def _nan(value: Any) -> bool:
    """Whether ``value`` is a float NaN."""
    return isinstance(value, float) and math.isnan(value)


def format_time(value: Any, kind: Literal["epoch", "ms"] = "ms") -> str:
    """A time for a tooltip: "12,000 ms", "2019-08-24 09:51:44.152 UTC", "MAX (Long.MAX_VALUE)"
    (MAX read as a float rounds up past Long.MAX_VALUE: still MAX)."""
    if value is None or value != value:  # None or NaN
        return ""
    v = int(value)
    if -EXACT <= v <= EXACT:  # the usual case first
        if kind == "epoch":
            stamp = datetime.fromtimestamp(v / 1000, tz=UTC)
            return stamp.strftime("%Y-%m-%d %H:%M:%S.") + f"{v % 1000:03d} UTC"
        return f"{v:,} ms"
    if v >= LONG_MAX:
        return "MAX (Long.MAX_VALUE)"
    if v <= LONG_MIN:
        return "MIN (Long.MIN_VALUE)"
    return f"{v:,} ms (off the chart)"  # |v| > 2**53: is_off_chart


@functools.lru_cache(maxsize=1 << 16)
def _format_cached(value: Any, kind: Literal["epoch", "ms"]) -> str:
    """``format_time`` of a hashable value, remembered (values equal as keys — 5, 5.0, True —
    have the same text)."""
    return format_time(value, kind)


@dataclass(frozen=True)
class TimeAxis:
    """One time axis: its title, how values are shown and the visible domain [lo, hi]."""

    title: str
    kind: Literal["epoch", "ms"]
    lo: int
    hi: int

    def clip(self, value: Any) -> tuple[float | None, str]:
        """(position, note): a value inside the domain is itself with note ""; one outside is
        put on the nearer edge with note "MAX ▶" / "◀ MIN" (off-chart) or "▶" / "◀"."""
        if value.__class__ is int and self.lo <= value <= self.hi:  # the usual case first
            return value, ""
        if value is None or _nan(value):
            return None, ""
        if value > self.hi:
            return self.hi, "MAX ▶" if is_off_chart(value) else "▶"
        if value < self.lo:
            return self.lo, "◀ MIN" if is_off_chart(value) else "◀"
        return int(value), ""

    def axis(self) -> dict[str, Any]:
        """The Vega-Lite axis of this time axis: its title, tick labels."""
        if self.kind == "epoch":
            values, fmt = epoch_ticks(self.lo, self.hi)
            return {
                "title": self.title + " (UTC)",
                "values": values,
                "labelExpr": f"utcFormat(datum.value, '{fmt}')",
                "labelOverlap": True,
            }
        return {"title": self.title + " (ms)", "format": ",d", "labelOverlap": True}

    def channel(self, field: str) -> dict[str, Any]:
        """The x or y channel of ``field`` on this axis as a Vega-Lite dict."""
        # (a temporal scale with a fixed domain makes Vega-Lite warn once per layer)
        scale = {"domain": [self.lo, self.hi], "nice": False, "zero": False}
        return {"field": field, "type": "quantitative", "scale": scale, "axis": self.axis()}

    def fmt(self, value: Any) -> str:
        try:
            return _format_cached(value, self.kind)
        except TypeError:  # not hashable
            return format_time(value, self.kind)

    def fmt_all(self, values: list[Any]) -> list[str]:
        """``fmt`` of each value (when most values repeat, each distinct one once)."""
        try:
            distinct = list(dict.fromkeys(values))
        except TypeError:  # something unhashable
            distinct = values
        if len(distinct) * 2 <= len(values):  # e.g. a run's watermarks (one per element)
            texts = dict(zip(distinct, self._fmt_each(distinct), strict=True))
            return [texts[v] for v in values]
        return self._fmt_each(values)

    def fmt_ranges(self, los: list[Any], his: list[Any]) -> list[str]:
        """``f"{fmt(lo)} .. {fmt(hi)}"`` of each pair (a binned cell's extent)."""
        if self.kind != "ms":
            return [
                f"{a} .. {b}" for a, b in zip(self.fmt_all(los), self.fmt_all(his), strict=True)
            ]
        write, fmt = "{:,} ms .. {:,} ms".format, self.fmt
        return [
            write(a, b)
            if a.__class__ is int
            and b.__class__ is int
            and -EXACT <= a <= EXACT
            and -EXACT <= b <= EXACT
            else f"{fmt(a)} .. {fmt(b)}"
            for a, b in zip(los, his, strict=True)
        ]

    def _fmt_each(self, values: list[Any]) -> list[str]:
        if self.kind == "ms":  # the usual case: "12,000 ms" written directly
            write = "{:,} ms".format
            return [
                write(v) if v.__class__ is int and -EXACT <= v <= EXACT else self.fmt(v)
                for v in values
            ]
        return [self.fmt(v) for v in values]

    def clip_all(self, values: list[Any]) -> list[tuple[float | None, str]]:
        """``clip`` of each value; ints and floats inside the domain (a NaN is not) as ints."""
        lo, hi, clip = self.lo, self.hi, self.clip
        return [
            (int(v), "")
            if (v.__class__ is int or v.__class__ is float) and lo <= v <= hi
            else clip(v)
            for v in values
        ]


# tick steps of a date axis, in ms, and the UTC label format of each
_TICK_STEPS: tuple[tuple[int, str], ...] = (
    *((ms, "%H:%M:%S.%L") for ms in (1, 2, 5, 10, 20, 50, 100, 200, 500)),
    *((s * 1000, "%H:%M:%S") for s in (1, 2, 5, 10, 15, 30)),
    *((m * 60_000, "%H:%M") for m in (1, 2, 5, 10, 15, 30)),
    *((h * 3_600_000, "%b %d %H:%M") for h in (1, 2, 3, 6, 12)),
    *((d * 86_400_000, "%Y-%m-%d") for d in (1, 2, 7, 14, 28, 91, 182, 364, 728, 1820, 3640)),
)
MAX_TICKS = 8


def epoch_ticks(lo: int, hi: int) -> tuple[list[int], str]:
    """Tick values of a date axis over [lo, hi] (epoch ms): the multiples of the smallest
    step in ``_TICK_STEPS`` giving at most ``MAX_TICKS`` ticks (steps of a day or less fall on
    UTC clock boundaries), and the UTC label format for that step."""
    step, fmt = next(
        ((step, fmt) for step, fmt in _TICK_STEPS if (hi - lo) // step <= MAX_TICKS),
        _TICK_STEPS[-1],
    )
    first = -(-lo // step) * step
    return list(range(first, hi + 1, step)), fmt


EDGE_ROOM = 0.06
"""Ticks nearer than this share of the axis to an edge labelled MIN / MAX are left out."""


def edge_named_axis(axis: TimeAxis, lo_min: bool, hi_max: bool) -> dict[str, Any]:
    """``axis`` as a Vega-Lite axis whose low edge is labelled "MIN" (``lo_min``) and high edge
    "MAX" (``hi_max``), where ``TimeAxis.clip`` draws them, other ticks at round values away
    from those edges (``EDGE_ROOM``)."""
    lo, hi = axis.lo, axis.hi
    if axis.kind == "epoch":
        ticks, fmt = epoch_ticks(lo, hi)
        number = f"utcFormat(datum.value, '{fmt}')"
    else:
        raw = max(1, (hi - lo) / 6)
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
        ticks = list(range(-(-lo // step) * step, hi + 1, step))
        number = "format(datum.value, ',d')"
    room = (hi - lo) * EDGE_ROOM
    ticks = [t for t in ticks if not (lo_min and t - lo < room) and not (hi_max and hi - t < room)]
    values = ([lo] if lo_min else []) + ticks + ([hi] if hi_max else [])
    expr = number
    if hi_max:
        expr = f"datum.value === {hi} ? 'MAX' : {expr}"
    if lo_min:
        expr = f"datum.value === {lo} ? 'MIN' : {expr}"
    return axis.axis() | {"values": values, "labelExpr": expr}


def time_axis(title: str, values: list[int]) -> TimeAxis:
    """The axis for these times (off-chart values ignored), padded by 3 % each side
    (1 s each side when all values are equal; 0..1000 when there are none)."""
    values = list(values)
    if all(v.__class__ is int for v in values):  # the usual case (extents): no conversion
        inside = [v for v in values if -EXACT <= v <= EXACT]
        if not inside:
            return TimeAxis(title, "ms", 0, 1000)
        lo, hi = min(inside), max(inside)
    else:
        nums = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        nums = nums[nums.abs() <= EXACT]
        if nums.empty:
            return TimeAxis(title, "ms", 0, 1000)
        lo, hi = int(nums.min()), int(nums.max())
    kind: Literal["epoch", "ms"] = "epoch" if lo >= EPOCH_LO and hi <= EPOCH_HI else "ms"
    pad = max(1, round((hi - lo) * 0.03)) if hi > lo else 1000
    return TimeAxis(title, kind, lo - pad, hi + pad)


def title(text: str, subtitle: list[str]) -> dict[str, Any]:
    """A left-aligned title; the subtitle lines say what was reduced or clipped."""
    out: dict[str, Any] = {"text": text, "anchor": "start", "fontSize": 15}
    if subtitle:
        out["subtitle"] = subtitle
    return out | {"subtitleColor": NOTE_INK, "subtitleFontSize": 11}


def message_chart(headline: str, detail: str, *, chart: str) -> dict[str, Any]:
    """The chart returned in place of a plot: ``headline`` as title, ``detail`` (what is wrong,
    what to do) as text; ``usermeta.winviz.status`` is "message"."""
    lines = _wrap(detail, 90)
    card = spec.layer(
        [{"line": line, "row": i} for i, line in enumerate(lines)],
        {"type": "text", "align": "left", "baseline": "top", "color": INK, "fontSize": 13},
        {
            "text": {"field": "line", "type": "nominal"},
            "x": {"value": 0},
            "y": {"axis": None, "field": "row", "type": "ordinal"},
        },
    )
    return card | {
        "config": {"view": {"stroke": None}},
        "height": 20 * len(lines),
        "title": {
            "text": headline,
            "anchor": "start",
            "fontSize": 15,
            "subtitle": f"winviz.viz.{chart}: nothing to draw",
            "subtitleColor": NOTE_INK,
        },
        "usermeta": {"winviz": {"chart": chart, "status": "message", "message": headline}},
        "width": WIDTH,
    }


def input_card(exc: Exception, *, chart: str) -> dict[str, Any]:
    """The message card of input a chart cannot draw (a ``TraceInputError``): its first
    sentence the headline, the whole message the detail."""
    return message_chart(str(exc).split(". ")[0] + ".", str(exc), chart=chart)


def public_chart(name: str) -> Callable[[Callable[..., spec.ChartDict]], Callable[..., Any]]:
    """The decorator of the public chart function ``name``: ``fn`` (→ chart dict) drawn with
    the garbage collector paused, input it cannot draw (``TraceInputError``) given as its
    message card (a ``ValueError`` still raises), is its ``vega_lite``; the public function
    takes the same arguments and returns its Altair chart (``spec.altair_chart``)."""

    def public(fn: Callable[..., spec.ChartDict]) -> Callable[..., Any]:
        @gc_paused
        @functools.wraps(fn)
        def drawn(*args: Any, **kwargs: Any) -> spec.ChartDict:
            try:
                return fn(*args, **kwargs)
            except TraceInputError as exc:
                return input_card(exc, chart=name)

        @functools.wraps(fn)
        def chart(*args: Any, **kwargs: Any) -> Any:
            return spec.altair_chart(drawn(*args, **kwargs))

        chart.vega_lite = drawn  # type: ignore[attr-defined]
        signature = inspect.signature(fn).replace(return_annotation="alt.TopLevelMixin")
        chart.__signature__ = signature  # type: ignore[attr-defined]
        return chart

    return public


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces."""
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return lines


FIT_WIDTH = 840
"""The widest a chart is drawn (px; a JupyterLab output in a 1280-px window is ~848): legends
under the plot (``LEGEND_CONFIG``), title lines wrapped (``finish``), a plot at most ``WIDTH``
wide with a side panel's room taken from it (``PANEL_ROOM``)."""
LEGEND_COLUMNS = 2
"""A legend's entries go in rows of this many (under the plot, where width is short)."""
LEGEND_LABEL_PX = 290
"""The longest legend label drawn in full (px): ``LEGEND_COLUMNS`` of them fit ``FIT_WIDTH``."""
PANEL_ROOM = 126
"""What a side panel (110 px) and its spacing (16 px) take from its chart's plot (px)."""
TITLE_CHAR_PX = 6.4
"""A generous average advance of an 11-px sans-serif character (a subtitle's)."""
# Vega's legend layout (an expression in Vega-Lite's schema): legends under the plot stacked
_LEGENDS_STACKED = "{bottom: {direction: 'vertical', anchor: 'start', margin: 10}}"
LEGEND_CONFIG = {
    "orient": "bottom",
    "direction": "horizontal",
    "columns": LEGEND_COLUMNS,
    "layout": {"expr": _LEGENDS_STACKED},
    "titleFontSize": 12,
    "labelFontSize": 11,
    "symbolSize": 80,
    "labelLimit": LEGEND_LABEL_PX,
}
AXIS_CONFIG = {"labelFontSize": 11, "titleFontSize": 12, "grid": True, "gridColor": GRID_INK}
VIEW_CONFIG = {"stroke": FRAME_INK}


def finish(
    chart: dict[str, Any], *, name: str, notes: list[str], heading: str | None = None
) -> dict[str, Any]:
    """``chart`` (changed in place and returned) with winviz's axis, legend and view config,
    ``usermeta.winviz`` (name, status "ok", the notes whole) and, given a ``heading``, the
    title over the notes; the subtitle's lines wrapped to fit ``FIT_WIDTH``."""
    if heading is not None:
        chart["title"] = title(heading, notes)
    if isinstance(chart.get("title"), dict) and chart["title"].get("subtitle"):
        chart["title"]["subtitle"] = fitted_lines(chart["title"]["subtitle"])
    chart["usermeta"] = {"winviz": {"chart": name, "status": "ok", "notes": notes}}
    chart["config"] = chart.get("config", {}) | {
        "axis": dict(AXIS_CONFIG),
        "legend": dict(LEGEND_CONFIG),
        "view": dict(VIEW_CONFIG),
    }
    return chart


def fitted_lines(lines: list[str]) -> list[str]:
    """Title lines as drawn: each longer than ``FIT_WIDTH`` / ``TITLE_CHAR_PX`` characters
    wrapped at spaces into as few lines of about equal length as it needs (a word is never
    cut)."""
    most = int(FIT_WIDTH / TITLE_CHAR_PX)
    out = []
    for line in lines:
        if len(line) <= most:
            out.append(line)
            continue
        n = len(_wrap(line, most))  # (as few lines as fit), the shortest width giving n
        out += next(
            even
            for width in range(min(-(-len(line) // n), most), most + 1)
            if len(even := _wrap(line, width)) <= n
        )
    return out
