"""Saving charts without the network, and notebook rendering set-up.

``save_html`` writes one self-contained page (``pages.chart_page``: Vega inlined, the spec as
escaped JSON data, a strict Content-Security-Policy), ``save_svg`` / ``save_png`` static images
rendered by vl-convert, and ``setup_rendering`` makes notebooks draw charts offline. Nothing
here runs at import time.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import altair as alt
import vl_convert as vlc

from winviz.viz import pages, palette

_EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""",
    re.IGNORECASE,
)


def chart_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite spec as a dict, without ``$schema``."""
    return _without_schema(chart.to_dict())


def external_urls(page: str) -> list[str]:
    """Tags of an HTML page that would fetch something from another host."""
    return [m.group(0) for m in _EXTERNAL.finditer(page)]


def html_page(chart: alt.TopLevelMixin | dict[str, Any], *, title: str = "winviz chart") -> str:
    """A self-contained HTML page showing the chart (a chart or its Vega-Lite dict;
    interactive: tooltips and sliders work), written by ``pages.chart_page``."""
    spec = chart_spec(chart) if not isinstance(chart, dict) else _without_schema(chart)
    page = pages.chart_page([spec], title=title)
    bad = external_urls(page)
    if bad:  # pragma: no cover - guards a vl-convert change
        raise RuntimeError(f"the exported page would load external resources: {bad[:3]}")
    return page


def save_html(chart: Any, path: str | Path, *, title: str = "winviz chart") -> Path:
    """Write the chart (an Altair chart or its Vega-Lite dict) or an explorer
    (``wv.explore``) as one self-contained HTML page (no external URL, strict
    Content-Security-Policy, data shown as text); returns the path. An explorer's page is
    the one ``make lessons`` makes of it (``Explorer.page``)."""
    if isinstance(chart, (alt.TopLevelMixin, dict)):
        page = html_page(chart, title=title)
    elif isinstance(chart, OwnPage):
        page = chart.page(title=title)
    else:
        from winviz.errors import ArgumentTypeError

        raise ArgumentTypeError(
            "save_html writes a chart or an explorer",
            field="chart",
            value=chart,
            expected="an Altair chart, its Vega-Lite dict or an explorer (wv.explore)",
        )
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


@runtime_checkable
class OwnPage(Protocol):
    """What ``save_html`` asks to write its own page: an explorer (``Explorer.page``)."""

    def page(self, *, title: str) -> str: ...


def save_svg(chart: alt.TopLevelMixin, path: str | Path) -> Path:
    """Write the chart as SVG (rendered offline by vl-convert); returns the path."""
    path = Path(path)
    path.write_text(svg_text(chart), encoding="utf-8")
    return path


def svg_text(chart: alt.TopLevelMixin) -> str:
    """The chart rendered to SVG text."""
    return vlc.vegalite_to_svg(chart_spec(chart), vl_version=pages.vega_lite_version())


def save_png(chart: alt.TopLevelMixin, path: str | Path, *, scale: float = 2.0) -> Path:
    """Write the chart as PNG (``scale`` × the chart's pixel size; 2 for slides)."""
    path = Path(path)
    path.write_bytes(
        vlc.vegalite_to_png(chart_spec(chart), vl_version=pages.vega_lite_version(), scale=scale)
    )
    return path


def _without_schema(spec: dict[str, Any]) -> dict[str, Any]:
    spec = dict(spec)
    spec.pop("$schema", None)
    return spec


def iframe_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    """The chart's page (``html_page``) in a sandboxed iframe ``frame_size`` big: the whole
    page is the ``srcdoc`` attribute, HTML-escaped (quotes too), so it cannot end the
    attribute."""
    spec = _without_schema(spec)
    page = html_page(spec)
    width, height = frame_size(spec)
    return {
        "text/html": (
            f'<iframe srcdoc="{html.escape(page, quote=True)}" '
            f'style="border:none;width:{width}px;height:{height}px" '
            'sandbox="allow-scripts"></iframe>'
        )
    }


VIEW_PX = 300
"""A view's width or height when the spec gives none as a number (Altair's default)."""
CONCAT_PX = 20  # Vega-Lite's spacing between concatenated views
PAGE_PX = 8 + 4 + 5
"""Around the chart on each side of its page: the body's margin (``pages.page``), the chart
element's (``pages.CHART_CSS``, above and below) and Vega's padding."""
AXIS_ROOM = (150, 64)
"""Room (px) for the axes: left of the plot (tick labels and title) and under it."""
TITLE_PX, SUBTITLE_PX = 24, 15  # the title's heading line and each subtitle line
LEGEND_TITLE_PX, LEGEND_ROW_PX, LEGEND_GAP_PX, GRADIENT_PX = 18, 20, 12, 60
UNKNOWN_ENTRIES = 8  # a legend's entries when its scale names no domain
_LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "size", "opacity", "strokeDash")


def frame_size(spec: dict[str, Any]) -> tuple[int, int]:
    """The iframe's width and height (px) that hold the chart drawn from ``spec`` whole: its
    title's lines and its views (``_block``: each with its axes and its legends) inside the
    page's margins (``PAGE_PX``); at least ``palette.FIT_WIDTH`` wide (a chart fits in
    it)."""
    width, height = _block(spec)
    width += AXIS_ROOM[0] if _has_axes(spec) else 0
    return max(palette.FIT_WIDTH, width) + 2 * PAGE_PX, _title_px(spec) + height + 2 * PAGE_PX


def _has_axes(spec: Any) -> bool:
    """Whether any view of the spec draws an x or y axis (a diagram's are ``None``)."""
    if isinstance(spec, list):
        return any(_has_axes(s) for s in spec)
    if not isinstance(spec, dict):
        return False
    encoding = spec.get("encoding") or {}
    for channel in ("x", "y"):
        enc = encoding.get(channel)
        if isinstance(enc, dict) and not ("axis" in enc and enc["axis"] is None):
            return True
    return any(_has_axes(spec.get(k)) for k in ("layer", "hconcat", "vconcat", "concat"))


def _title_px(spec: dict[str, Any]) -> int:
    """The height of a view's title: its heading and its subtitle's lines (none: 0)."""
    title = spec.get("title")
    if not title:
        return 0
    subtitle = title.get("subtitle") or [] if isinstance(title, dict) else []
    return TITLE_PX + SUBTITLE_PX * len([subtitle] if isinstance(subtitle, str) else subtitle)


def _block(spec: dict[str, Any]) -> tuple[int, int]:
    """A view's extent (px) with the room around its plot: concatenated views side by side
    or one under the other (``CONCAT_PX`` apart, each with its title), else the plot
    (``_plot``), the room of the axis under it (``AXIS_ROOM``; the room left of the plots:
    ``frame_size``) and the legends under it (as
    ``palette.LEGEND_CONFIG`` lays them out: each its title and rows of
    ``palette.LEGEND_COLUMNS`` entries, one under the other; ``_legends``)."""
    for key, across in (("hconcat", True), ("vconcat", False), ("concat", True)):
        parts = [p for p in spec.get(key) or [] if isinstance(p, dict)]
        if parts:
            sizes = [(w, h + _title_px(p)) for p in parts for w, h in [_block(p)]]
            gaps = CONCAT_PX * (len(sizes) - 1)
            if across:
                return sum(w for w, _ in sizes) + gaps, max(h for _, h in sizes)
            return max(w for w, _ in sizes), sum(h for _, h in sizes) + gaps
    width, height = _plot(spec)
    legends = sum(
        LEGEND_TITLE_PX + LEGEND_GAP_PX
        + (GRADIENT_PX if n is None else math.ceil(n / palette.LEGEND_COLUMNS) * LEGEND_ROW_PX)
        for n in _legends(spec).values()
    )  # fmt: skip
    return width, height + (AXIS_ROOM[1] if _has_axes(spec) else 0) + legends


def _plot(spec: dict[str, Any]) -> tuple[int, int]:
    """A view's plot (px): its ``width`` × ``height``, else its layers' largest, else
    ``VIEW_PX``."""
    layers = [_plot(s) for s in spec.get("layer") or [] if isinstance(s, dict)]
    out = []
    for i, key in enumerate(("width", "height")):
        v = spec.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            out.append(v)
        else:
            out.append(max([VIEW_PX, *(size[i] for size in layers)]) if layers else VIEW_PX)
    return out[0], out[1]


def _legends(
    spec: Any, found: dict[tuple[str, str], int | None] | None = None
) -> dict[tuple[str, str], int | None]:
    """The legends the spec draws, one per (field, title): how many entries (its scale's
    domain; ``UNKNOWN_ENTRIES`` if none is named), None for a gradient (a quantitative
    scale). A channel with ``legend: null`` draws none."""
    found = {} if found is None else found
    if isinstance(spec, list):
        for s in spec:
            _legends(s, found)
    elif isinstance(spec, dict):
        encoding = spec.get("encoding")
        if isinstance(encoding, dict):
            for channel in _LEGEND_CHANNELS:
                enc = encoding.get(channel)
                if not isinstance(enc, dict) or "field" not in enc:
                    continue
                if "legend" in enc and enc["legend"] is None:
                    continue
                name = (str(enc["field"]), str(enc.get("title", enc["field"])))
                domain = (enc.get("scale") or {}).get("domain")
                n = len(domain) if isinstance(domain, list) else UNKNOWN_ENTRIES
                gradient = enc.get("type") == "quantitative" and channel in ("color", "fill")
                found[name] = None if gradient else max(n, found.get(name) or 0)
        for key in ("layer", "hconcat", "vconcat", "concat"):
            _legends(spec.get(key), found)
    return found


RENDERER_ENV = "WINVIZ_RENDERER"
"""Environment variable read by ``setup_rendering``; ``export`` selects "winviz-export"."""
EXPORT_MIMETYPE = "application/vnd.winviz.vegalite+json"
"""The output type of the "winviz-export" renderer: the chart's Vega-Lite spec (a dict), or a
list of specs (an explorer's current charts)."""
EXPORT_RENDERER = "winviz-export"
EXPLORER_KEY = "winviz_explorer"
"""The key of an explorer's output for ``make lessons`` (under ``EXPORT_MIMETYPE``): its
runs precomputed on the slider grid (``winviz.viz.grid``)."""


def export_renderer(spec: dict[str, Any], **_: Any) -> dict[str, Any]:
    """The "winviz-export" renderer: the chart's spec under ``EXPORT_MIMETYPE``."""
    return {
        EXPORT_MIMETYPE: _without_schema(spec),
        "text/plain": "<Vega-Lite chart: drawn when the lesson page is built (make lessons)>",
    }


JUPYTER_EMBED_OPTIONS: dict[str, Any] = {"actions": dict(pages.ACTIONS)}
"""vega-embed options of charts in JupyterLab (the ``jupyter`` renderer, explorers): no
"View Source" — vega-embed writes the spec unescaped into a new window of JupyterLab's own
origin — and no "Open in Vega Editor" (a remote site)."""


def setup_rendering() -> str:
    """Make charts render offline in JupyterLab; returns the renderer enabled.

    Call once at the top of a notebook. Altair's default renderer loads Vega from a CDN and
    its ``mimetype`` one emits Vega-Lite 6, which JupyterLab 4 does not render: this enables
    ``alt.renderers.enable("jupyter", offline=True)`` when anywidget is installed, else
    "winviz-offline" (``iframe_renderer``: the chart's page in a sandboxed iframe). With
    ``WINVIZ_RENDERER=export`` (``make lessons``) it enables "winviz-export": each chart's
    output is its Vega-Lite spec under ``EXPORT_MIMETYPE``, for ``winviz.viz.lessons``."""
    mode = os.environ.get(RENDERER_ENV, "")
    if mode not in ("", "export"):
        raise ValueError(f"{RENDERER_ENV} must be 'export' or unset, got {mode!r}")
    if mode == "export":
        if EXPORT_RENDERER not in alt.renderers.names():
            alt.renderers.register(EXPORT_RENDERER, export_renderer)
        alt.renderers.enable(EXPORT_RENDERER)
        return EXPORT_RENDERER
    try:
        import anywidget  # noqa: F401
    except ImportError:
        if "winviz-offline" not in alt.renderers.names():
            alt.renderers.register("winviz-offline", iframe_renderer)
        alt.renderers.enable("winviz-offline")
        return "winviz-offline"
    alt.renderers.enable("jupyter", offline=True, embed_options=JUPYTER_EMBED_OPTIONS)
    return "jupyter"


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The Vega-Lite spec as canonical JSON (sorted keys) — for diffs and tests."""
    return json.dumps(chart_spec(chart), sort_keys=True)
