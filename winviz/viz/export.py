"""Saving charts without the network (``save_html``: a page of ``winviz.viz.pages``;
``save_svg`` / ``save_png``: vl-convert), and notebook rendering set-up (``setup_rendering``).
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import vl_convert as vlc

from winviz.errors import ArgumentTypeError
from winviz.viz import pages, palette


def chart_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite spec as a dict, without ``$schema``."""
    return _without_schema(chart.to_dict())


def html_page(chart: alt.TopLevelMixin | dict[str, Any], *, title: str = "winviz chart") -> str:
    """A self-contained HTML page showing the chart (a chart or its Vega-Lite dict)."""
    spec = chart_spec(chart) if not isinstance(chart, dict) else _without_schema(chart)
    return pages.chart_page([spec], title=title)


def save_html(chart: Any, path: str | Path, *, title: str = "winviz chart") -> Path:
    """Write the chart (an Altair chart or its Vega-Lite dict) or an explorer (``wv.explore``:
    its ``page``, as ``make lessons`` makes it) as one self-contained HTML page; returns the
    path."""
    if isinstance(chart, (alt.TopLevelMixin, dict)):
        page = html_page(chart, title=title)
    elif callable(getattr(chart, "page", None)):
        page = chart.page(title=title)
    else:
        raise ArgumentTypeError(
            "save_html writes a chart or an explorer",
            field="chart",
            value=chart,
            expected="an Altair chart, its Vega-Lite dict or an explorer (wv.explore)",
        )
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


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
    """A copy of ``spec`` without ``$schema``."""
    spec = dict(spec)
    spec.pop("$schema", None)
    return spec


def iframe_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    """The chart's page (``html_page``) in a sandboxed iframe ``frame_size`` big, as its
    ``srcdoc`` attribute (HTML-escaped, quotes too)."""
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
    """The iframe's width and height (px) that hold the chart drawn from ``spec`` whole (its
    title, views, axes and legends, the page's margins); at least ``palette.FIT_WIDTH`` wide."""
    width, height = _block(spec)
    width += AXIS_ROOM[0] if _has_axes(spec) else 0
    return max(palette.FIT_WIDTH, width) + 2 * PAGE_PX, _title_px(spec) + height + 2 * PAGE_PX


def _views(spec: Any) -> Iterator[dict[str, Any]]:
    """The spec (a dict or a list of them) and every layer and sub-chart in it, depth first."""
    if isinstance(spec, list):
        for s in spec:
            yield from _views(s)
    elif isinstance(spec, dict):
        yield spec
        for key in ("layer", "hconcat", "vconcat", "concat"):
            yield from _views(spec.get(key))


def _has_axes(spec: Any) -> bool:
    """Whether any view of the spec draws an x or y axis (a diagram's are ``None``)."""
    return any(
        isinstance(enc := (view.get("encoding") or {}).get(channel), dict)
        and not ("axis" in enc and enc["axis"] is None)
        for view in _views(spec)
        for channel in ("x", "y")
    )


def _title_px(spec: dict[str, Any]) -> int:
    """The height of a view's title: its heading and its subtitle's lines (none: 0)."""
    title = spec.get("title")
    if not title:
        return 0
    subtitle = title.get("subtitle") or [] if isinstance(title, dict) else []
    return TITLE_PX + SUBTITLE_PX * len([subtitle] if isinstance(subtitle, str) else subtitle)


def _block(spec: dict[str, Any]) -> tuple[int, int]:
    """A view's extent (px): concatenated views side by side or stacked (``CONCAT_PX`` apart,
    each with its title), else the plot, the axis under it and the legends under that (as
    ``palette.LEGEND_CONFIG`` lays them out)."""
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


def _legends(spec: Any) -> dict[tuple[str, str], int | None]:
    """The legends the spec draws, one per (field, title): its entries (its scale's domain;
    else ``UNKNOWN_ENTRIES``), None for a gradient."""
    found: dict[tuple[str, str], int | None] = {}
    for view in _views(spec):
        encoding = view.get("encoding")
        for channel in _LEGEND_CHANNELS if isinstance(encoding, dict) else ():
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
"""vega-embed options of charts in JupyterLab (the safe actions only)."""


def setup_rendering() -> str:
    """Make charts render offline in JupyterLab (call once per notebook); returns the renderer
    enabled: Altair's "jupyter" (offline) with anywidget installed, else "winviz-offline"
    (``iframe_renderer``); with ``WINVIZ_RENDERER=export`` (``make lessons``) "winviz-export"
    (each chart's output its spec under ``EXPORT_MIMETYPE``)."""
    mode = os.environ.get(RENDERER_ENV, "")
    if mode not in ("", "export"):
        raise ValueError(f"{RENDERER_ENV} must be 'export' or unset, got {mode!r}")
    if mode == "export":
        if EXPORT_RENDERER not in alt.renderers.names():
            alt.renderers.register(EXPORT_RENDERER, export_renderer)
        alt.renderers.enable(EXPORT_RENDERER)
        return EXPORT_RENDERER
    if importlib.util.find_spec("anywidget") is None:
        if "winviz-offline" not in alt.renderers.names():
            alt.renderers.register("winviz-offline", iframe_renderer)
        alt.renderers.enable("winviz-offline")
        return "winviz-offline"
    alt.renderers.enable("jupyter", offline=True, embed_options=JUPYTER_EMBED_OPTIONS)
    return "jupyter"


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The Vega-Lite spec as canonical JSON (sorted keys) — for diffs and tests."""
    return json.dumps(chart_spec(chart), sort_keys=True)
