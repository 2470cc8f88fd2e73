"""Lessons as static pages: ``make lessons`` → ``build/lessons/NN_*.html`` and an index.

``python -m winviz.viz.lessons [notebooks] [build/lessons]`` executes every lesson notebook
(``NN_*.ipynb``) on a clean kernel in its folder with ``WINVIZ_RENDERER=export``, so each chart
outputs its plain Vega-Lite spec (``export.EXPORT_MIMETYPE``), then writes each as one
self-contained HTML page:

* nbconvert's ``lab`` template with every block that would load from a CDN emptied
  (require.js, MathJax, mermaid, the widget manager), and one inlined copy of Vega, Vega-Lite
  and vega-embed that draws every chart as SVG (tooltips and the scrubber's slider work);
* data never becomes code (``winviz.viz.pages``): specs as escaped JSON data blocks, a strict
  Content-Security-Policy, each page checked (``pages.check_page``) before writing;
* an explorer (``wv.explore``) keeps its controls, switching between its runs precomputed on
  the slider grid (``winviz.viz.grid``); one whose runs do not fit is shown at the lesson's
  values with a note saying why; other widgets become a note (they need a kernel);
* a page that would fetch anything from another host fails the build
  (``external_resources``), naming the lesson and the reference.

A lesson cell that raises fails the build: ``LessonBuildError`` names the lesson and shows the
cell and its traceback. ``--jobs N`` builds N lessons at once (``make lessons`` uses 2).
No Flink class is mirrored here: this is the kit's publishing step (``jupyter nbconvert
--execute --to html`` with the network taken out).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import jinja2
import nbformat
from jupyter_client.manager import KernelManager
from jupyter_core.paths import jupyter_runtime_dir
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from traitlets import CaselessStrEnum, default

from winviz.viz import grid
from winviz.viz import pages as safe
from winviz.viz.export import EXPLORER_KEY, EXPORT_MIMETYPE, RENDERER_ENV

LESSON_GLOB = "[0-9][0-9]_*.ipynb"
"""Lesson notebooks: two digits, an underscore, a name (``00_tour.ipynb``)."""
WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"
EMBED_OPTIONS: dict[str, Any] = safe.EMBED_OPTIONS
"""vega-embed options for every chart (``pages.EMBED_OPTIONS``)."""

# Resource references that make a browser fetch: tag attributes, CSS, Vega-Lite data URLs.
# A plain link (<a href>) fetches nothing until clicked, so it is not one; nor is an XML
# namespace or a string inside a script.
_ATTR = re.compile(
    r"""<(?!a\b)[a-z][a-z0-9-]*\b[^>]*?\b(?:src|href|srcset|data|poster|background|action)"""
    r"""\s*=\s*["']?\s*((?:https?:|ftp:|wss?:)?//[^"'\s>]*)""",
    re.IGNORECASE,
)
_CSS = re.compile(
    r"""(?:@import\s+(?:url\()?\s*["']?|url\(\s*["']?)\s*((?:https?:|ftp:)?//[^"')\s]*)""",
    re.IGNORECASE,
)
_META_REFRESH = re.compile(r"""<meta\b[^>]*http-equiv\s*=\s*["']?refresh""", re.IGNORECASE)

_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head -%}
{{ resources.winviz_csp }}
{{ super() }}
{%- endblock html_head -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
<style type="text/css">
{{ resources.winviz_css }}</style>
{%- endblock extra_css -%}
{%- block footer_js -%}
{{ resources.winviz_bundle }}
{{ resources.winviz_embed }}
{%- endblock footer_js -%}
"""


class LessonBuildError(RuntimeError):
    """A lesson could not be built into a page (names the lesson and the reason)."""


@dataclass(frozen=True)
class LessonPage:
    """One built page: its lesson, file, size, the time it took, its charts, its explorers
    (``wv.explore``: interactive on the page, or ``frozen`` at the lesson's values when their
    runs did not fit) and its other widgets (each shown as a note: they need a kernel)."""

    lesson: str
    path: Path
    size: int
    seconds: float
    charts: int
    widgets: int
    title: str
    explorers: int = 0
    frozen: int = 0


def find_lessons(folder: str | Path) -> list[Path]:
    """The lesson notebooks of ``folder`` (``NN_*.ipynb``), sorted by name."""
    folder = Path(folder)
    if not folder.is_dir():
        raise LessonBuildError(f"lesson folder {str(folder)!r} does not exist")
    return sorted(folder.glob(LESSON_GLOB))


class IPCKernelManager(KernelManager):
    """A kernel on this machine reached over Unix sockets (ZeroMQ's IPC transport) in the
    Jupyter runtime folder, instead of TCP ports on localhost. With TCP, ipykernel (≥ 7)
    warns at every start that the kernel "is running over TCP without encryption" — 11 times
    in ``make lessons``, and a user cannot act on it; IPC is the remedy that warning names."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("ip")
    def _ip_default(self) -> str:
        # IPC's "ip" is the sockets' path prefix; jupyter_client's default is "kernel-ipc"
        # in the working folder (the lesson's), so name a private one in the runtime folder.
        runtime = Path(jupyter_runtime_dir())
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(runtime / f"winviz-kernel-{os.getpid()}-{id(self):x}-ipc")


def execute(path: str | Path, *, timeout: int = 600) -> nbformat.NotebookNode:
    """Run the notebook on a clean kernel in its own folder, charts in export mode."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=IPCKernelManager,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    client.execute(env={**os.environ, RENDERER_ENV: "export"})
    return nb


def external_resources(page: str) -> list[str]:
    """Every reference in an HTML page that would make a browser fetch from another host:
    tag attributes (``src``, ``href`` of ``<link>``, ``srcset``, ``data``…), CSS
    ``@import`` / ``url()``, ``<meta http-equiv=refresh>`` and Vega-Lite ``"url"`` data
    sources inside the chart specs. Empty for a self-contained page."""
    found = [m.group(0) for m in _ATTR.finditer(page)]
    found += [m.group(0) for m in _CSS.finditer(page)]
    found += [m.group(0) for m in _META_REFRESH.finditer(page)]
    for spec in safe.data_blocks(page, safe.SPEC_CLASS):
        found += [f"Vega-Lite data url {u!r}" for u in _data_urls(json.loads(spec))]
    for block in safe.data_blocks(page, safe.EXPLORER_CLASS):
        for blob in json.loads(block)["blobs"]:  # an explorer's precomputed runs
            specs = grid.decode(blob)["specs"]
            found += [f"Vega-Lite data url {u!r} (explorer)" for u in _data_urls(specs)]
    return found


def _data_urls(node: Any) -> list[str]:
    """The ``url`` of every data source in a Vega-Lite spec that points to another host."""
    if isinstance(node, list):
        return [u for item in node for u in _data_urls(item)]
    if not isinstance(node, dict):
        return []
    urls = []
    url = node.get("url")
    if isinstance(url, str) and re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", url, re.I):
        urls.append(url)
    for value in node.values():
        urls += _data_urls(value)
    return urls


def chart_html(spec: dict[str, Any]) -> str:
    """A chart's place in the page (``pages.chart_element``: its spec as escaped JSON)."""
    return safe.chart_element(spec)


def _widget_html(data: dict[str, Any]) -> str:
    """The static note standing in for an ipywidgets output."""
    shown = str(data.get("text/plain", "a widget")).strip().splitlines()[0][:120]
    return (
        '<div class="winviz-widget-note"><b>Interactive widget</b> '
        f"(<code>{safe.text(shown)}</code>): it needs a running Python kernel, so it is "
        "not part of this static page. Open the lesson in JupyterLab (<code>make lab</code>) "
        "to use it.</div>"
    )


_FROZEN = "<b>Explorer</b> at the values the lesson set"
"""How an explorer whose runs are not on the page begins its note (``count_explorers``)."""


def explorer_html(data: dict[str, Any], payload: dict[str, Any], room: int) -> tuple[str, int]:
    """An explorer (``wv.explore``) on a static page and the bytes of precomputed runs it
    adds: its controls switching between the runs ``make lessons`` precomputed on its
    slider grid (``winviz.viz.grid``), when they fit in ``room`` bytes; else a note saying
    why (with the sizes) and its charts at the lesson's values."""
    shown = str(data.get("text/plain", "an explorer")).strip().splitlines()[0][:300]
    call = safe.text(payload.get("call") or shown)
    size = sum(len(b) for b in payload["blobs"])
    runs = len(payload["runs"])
    why = payload.get("fallback") or ""
    if not why and size > room:
        why = (
            f"its {runs} runs take {size / 1e6:.2f} MB and the explorers above already use "
            f"{(grid.MAX_BYTES - room) / 1e6:.2f} MB of the {grid.MAX_BYTES / 1e6:g} MB a page "
            "may hold"
        )
    specs = _lesson_run(payload)["specs"]
    if why:
        note = (
            f'<div class="winviz-widget-note">{_FROZEN} '
            f"(<code>{call}</code>): its runs are not precomputed on this page because "
            f"{safe.text(why)}. Open the lesson in JupyterLab (<code>make lab</code>) to move "
            "its sliders.</div>"
        )
        return note + "".join(chart_html(spec) for spec in specs), 0
    combinations = payload["combinations"]
    grid_text = (
        f"every one of its {combinations} combinations"
        if runs == combinations
        else f"{runs} of its {combinations} combinations (thinned evenly; the lesson's values "
        "are among them)"
    )
    note = (
        f'<div class="winviz-widget-note"><b>Explorer</b> (<code>{call}</code>): its sliders '
        f"and dropdowns switch between engine runs precomputed when this page was built, for "
        f"{grid_text}. Open the lesson in JupyterLab (<code>make lab</code>) to re-run the "
        "engine for any value.</div>"
    )
    return note + safe.explorer_element(payload, len(specs)), size


def _lesson_run(payload: dict[str, Any]) -> dict[str, Any]:
    """The run at the lesson's values of an explorer's payload (decoded)."""
    index = 0
    for control in payload["controls"]:
        index = index * len(control["labels"]) + control["initial"]
    return grid.decode(payload["blobs"][payload["runs"][index]])


ANSWER_TAGS = frozenset({"check", "solution"})
"""Cells a lesson page leaves out: an exercise's check (its code knows the answer; the lesson
shows it collapsed) and worked solutions (tagged ``solution``, collapsed in JupyterLab)."""


FACT_TAGS = frozenset({"facts"})
"""Cells a lesson page also leaves out: the lesson's own checks of what its prose says
(asserts over the trace, tagged ``facts``, collapsed in JupyterLab) — they run on every build
and test, and the page shows what they check in its prose, tables and charts."""


def without_tags(nb: nbformat.NotebookNode, tags: frozenset[str]) -> nbformat.NotebookNode:
    """A copy of ``nb`` without the cells tagged with any of ``tags``."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.cells = [c for c in nb.cells if not tags & set(c.metadata.get("tags", []))]
    return nb


def without_answers(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without the cells tagged ``check`` or ``solution`` (``ANSWER_TAGS``)."""
    return without_tags(nb, ANSWER_TAGS)


def count_charts(page: str) -> int:
    """The charts a built page draws: its chart placeholders (what the index counts)."""
    return page.count('<div class="winviz-chart">')


def count_explorers(page: str) -> tuple[int, int]:
    """The explorers a built page holds: (interactive ones — their data blocks —, frozen ones
    shown at the lesson's values with a note)."""
    return len(safe.data_blocks(page, safe.EXPLORER_CLASS)), page.count(_FROZEN)


def staticize(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, int, int]:
    """The executed notebook made ready for a static page: chart specs become chart
    placeholders, widget outputs a note, widget state is dropped. Returns (notebook, number
    of charts, number of widgets); the input is not changed."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    charts = widgets = 0
    room = grid.MAX_BYTES  # precomputed explorer runs a page may still hold
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            exported = data.get(EXPORT_MIMETYPE)
            if isinstance(exported, dict) and EXPLORER_KEY in exported:
                payload = exported[EXPLORER_KEY]  # an explorer: its runs on the slider grid
                markup, used = explorer_html(data, payload, room)
                output["data"] = {"text/html": markup}
                room -= used
                charts += markup.count('<div class="winviz-chart">')
            elif EXPORT_MIMETYPE in data:
                output["data"] = {"text/html": chart_html(data[EXPORT_MIMETYPE])}
                charts += 1
            elif WIDGET_MIMETYPE in data:
                output["data"] = {"text/html": _widget_html(data)}
                widgets += 1
    nb.metadata.pop("widgets", None)
    return nb, charts, widgets


def javascript_bundle() -> str:
    """Vega, Vega-Lite (the version Altair writes) and vega-embed as one script that sets
    ``window.vega``, ``window.vegaLite`` and ``window.vegaEmbed`` (built offline)."""
    return safe.javascript_bundle()


def _exporter() -> HTMLExporter:
    return HTMLExporter(
        template_name="lab",
        template_file="winviz_lesson.html.j2",
        extra_loaders=[jinja2.DictLoader({"winviz_lesson.html.j2": _TEMPLATE})],
        exclude_anchor_links=True,
    )


def render_page(nb: nbformat.NotebookNode, title: str, bundle: str) -> str:
    """The HTML page of an executed, staticized notebook (see the module docstring)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.metadata["title"] = title
    embed = safe.embed_script(EMBED_OPTIONS)
    body, _ = _exporter().from_notebook_node(
        nb,
        resources={
            "winviz_csp": safe.csp_meta([bundle, embed]),
            "winviz_css": safe.CHART_CSS,
            "winviz_bundle": safe.script_element(bundle),
            "winviz_embed": safe.script_element(embed),
        },
    )
    return body


def lesson_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown heading of the notebook, else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#+\s+(.+?)\s*$", cell.source, re.M)
            if m:
                return re.sub(r"[*_`]", "", m.group(1))
    return fallback


def build_lesson(
    path: str | Path, out: str | Path, bundle: str, *, timeout: int = 600
) -> LessonPage:
    """Execute one lesson and write ``out/<lesson>.html``; raises ``LessonBuildError`` if the
    page would load anything from another host."""
    path, out = Path(path), Path(out)
    start = time.perf_counter()
    try:
        executed = execute(path, timeout=timeout)
    except CellExecutionError as exc:
        raise LessonBuildError(
            f"lesson {path.name}: a cell failed on a clean kernel:\n{exc}"
        ) from exc
    nb, _, widgets = staticize(without_tags(executed, ANSWER_TAGS | FACT_TAGS))
    title = lesson_title(nb, path.stem)
    page = render_page(nb, title, bundle)
    try:
        safe.require_safe(page, f"lesson {path.name}")
    except safe.PageError as exc:
        raise LessonBuildError(str(exc)) from None
    charts = count_charts(page)
    explorers, frozen = count_explorers(page)
    bad = external_resources(page)
    if bad:
        raise LessonBuildError(
            f"lesson {path.name}: the page would load {len(bad)} external resource(s), "
            f"expected none; first: {bad[:3]}"
        )
    target = out / f"{path.stem}.html"
    out.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return LessonPage(
        lesson=path.stem,
        path=target,
        size=len(page.encode("utf-8")),
        seconds=time.perf_counter() - start,
        charts=charts,
        widgets=widgets,
        title=title,
        explorers=explorers,
        frozen=frozen,
    )


def index_page(pages: Sequence[LessonPage]) -> str:
    """The index: one link per lesson page (relative links; no script — its policy allows
    none —, no external URL)."""
    items = "\n".join(
        f'<li><a href="{safe.text(p.path.name)}">{safe.text(p.lesson)}</a> — '
        f"{safe.text(p.title)} <small>({_count(p.charts, 'chart', 'charts')})</small></li>"
        for p in pages
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"{safe.csp_meta()}\n<title>winviz lessons</title>\n"
        "<style>body{font-family:sans-serif;max-width:50em;"
        "margin:2em auto;line-height:1.5}</style>\n</head>\n<body>\n<h1>winviz lessons</h1>\n"
        "<p>Flink's time semantics, one lesson per page. Charts are interactive (tooltips, "
        "the scrubber's slider and replay) and need no network; an explorer's sliders and "
        "dropdowns switch between engine runs precomputed when the pages were built. To "
        "re-run the engine for any value, and for other widgets, open the notebooks in "
        "JupyterLab (<code>make lab</code>).</p>\n"
        f"<ol>\n{items}\n</ol>\n</body>\n</html>\n"
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def report_line(page: LessonPage) -> str:
    """What ``make lessons`` prints for a page: its size, charts, explorers (interactive, or
    frozen at the lesson's values), the other widgets shown as a note, the time it took."""
    parts = [f"{page.path}", f"{page.size / 1e6:.2f} MB", _count(page.charts, "chart", "charts")]
    if page.explorers or page.frozen:
        explorers = _count(page.explorers + page.frozen, "explorer", "explorers")
        if page.frozen:
            explorers += f" ({page.frozen} at the lesson's values only)"
        parts.append(explorers)
    if page.widgets:
        parts.append(_count(page.widgets, "widget", "widgets") + " as a note (needs a kernel)")
    parts.append(f"{page.seconds:.1f} s")
    return "  ".join(parts)


def _report(page: LessonPage, log: Any) -> None:
    if log:
        log(report_line(page))


def build_lessons(
    src: str | Path,
    out: str | Path,
    *,
    only: Sequence[str] = (),
    timeout: int = 600,
    jobs: int = 1,
    log: Any = None,
) -> list[LessonPage]:
    """Build every lesson of ``src`` (or those whose stem is in ``only``) into ``out``, with
    ``out/index.html``; ``jobs`` lessons at a time (each on its own kernel, in its own
    process). ``log``: a callable given one line per page built, in lesson order."""
    lessons = find_lessons(src)
    if only:
        unknown = sorted(set(only) - {p.stem for p in lessons})
        if unknown:
            raise LessonBuildError(
                f"no lesson named {unknown} in {str(src)!r}; lessons: {[p.stem for p in lessons]}"
            )
        lessons = [p for p in lessons if p.stem in only]
    if not lessons:
        raise LessonBuildError(f"no lesson notebook ({LESSON_GLOB}) in {str(src)!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    bundle = javascript_bundle()
    build = partial(build_lesson, out=out, bundle=bundle, timeout=timeout)
    pages = []
    if jobs == 1:
        for path in lessons:
            pages.append(build(path))
            _report(pages[-1], log)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for page in pool.map(build, lessons):
                pages.append(page)
                _report(page, log)
    index = index_page(pages)
    safe.require_safe(index, "index.html")
    bad = external_resources(index)
    if bad:  # pragma: no cover - the index is ours
        raise LessonBuildError(f"index.html would load external resources: {bad[:3]}")
    (Path(out) / "index.html").write_text(index, encoding="utf-8")
    return pages


def _positive(text: str) -> int:
    """An argparse type: an int >= 1 (a count of jobs, seconds per cell)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int (expected an int >= 1)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1 (expected an int >= 1)")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m winviz.viz.lessons",
        description="Build the lesson notebooks into self-contained HTML pages.",
    )
    parser.add_argument("src", nargs="?", default="notebooks", help="lesson folder")
    parser.add_argument("out", nargs="?", default="build/lessons", help="output folder")
    parser.add_argument("--only", action="append", default=[], help="lesson stem (repeat)")
    parser.add_argument("--timeout", type=_positive, default=600, help="seconds per cell")
    parser.add_argument("--jobs", type=_positive, default=1, help="lessons built at once")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        pages = build_lessons(
            args.src, args.out, only=args.only, timeout=args.timeout, jobs=args.jobs, log=print
        )
    except LessonBuildError as exc:
        print(f"make lessons: {exc}", file=sys.stderr)
        return 1
    total = sum(p.size for p in pages)
    print(
        f"{len(pages)} lessons → {Path(args.out) / 'index.html'}  {total / 1e6:.1f} MB  "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
