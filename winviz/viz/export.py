"""Saving charts without the network (``save_html``: a page of ``winviz.viz.pages``;
``save_svg`` / ``save_png``: vl-convert), and notebook rendering set-up (``setup_rendering``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import altair as alt
import vl_convert as vlc

from winviz.errors import ArgumentTypeError
from winviz.viz import pages


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
    enabled: Altair's "jupyter" (offline: the chart's widget, ``explorer_chart``); with
    ``WINVIZ_RENDERER=export`` (``make lessons``) "winviz-export" (each chart's output its spec
    under ``EXPORT_MIMETYPE``)."""
    mode = os.environ.get(RENDERER_ENV, "")
    if mode not in ("", "export"):
        raise ValueError(f"{RENDERER_ENV} must be 'export' or unset, got {mode!r}")
    if mode == "export":
        if EXPORT_RENDERER not in alt.renderers.names():
            alt.renderers.register(EXPORT_RENDERER, export_renderer)
        alt.renderers.enable(EXPORT_RENDERER)
        return EXPORT_RENDERER
    alt.renderers.enable("jupyter", offline=True, embed_options=JUPYTER_EMBED_OPTIONS)
    return "jupyter"


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The Vega-Lite spec as canonical JSON (sorted keys) — for diffs and tests."""
    return json.dumps(chart_spec(chart), sort_keys=True)
