"""Saving charts without the network, and notebook rendering set-up.

``save_html`` writes one self-contained page (``pages.chart_page``: Vega inlined, the spec as
escaped JSON data, a strict Content-Security-Policy), ``save_svg`` / ``save_png`` static images
rendered by vl-convert, and ``setup_rendering`` makes notebooks draw charts offline. Nothing
here runs at import time.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import altair as alt
import vl_convert as vlc

from winviz.viz import pages

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
    """The chart's page (``html_page``) in a sandboxed iframe: the whole page is the
    ``srcdoc`` attribute, HTML-escaped (quotes too), so it cannot end the attribute."""
    spec = _without_schema(spec)
    page = html_page(spec)
    width = int(spec.get("width", 640)) if isinstance(spec.get("width"), int) else 640
    height = int(spec.get("height", 400)) if isinstance(spec.get("height"), int) else 400
    return {
        "text/html": (
            f'<iframe srcdoc="{html.escape(page, quote=True)}" '
            f'style="border:none;width:{width + 260}px;height:{height + 160}px" '
            'sandbox="allow-scripts"></iframe>'
        )
    }


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
