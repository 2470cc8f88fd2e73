"""Lessons as static pages: ``make lessons`` → ``build/lessons/NN_*.html`` and an index.

``python -m winviz.viz.lessons [notebooks] [build/lessons] [--jobs N]`` executes each lesson
notebook on a clean kernel in its folder with ``WINVIZ_RENDERER=export`` (each chart outputs its
Vega-Lite spec, ``export.EXPORT_MIMETYPE``) and writes it with nbconvert's ``lab`` template, every
CDN block emptied, as a page of ``winviz.viz.pages`` (Vega inlined, specs as data, strict
policy, checked). An explorer keeps its controls over its precomputed runs (``winviz.viz.grid``);
other widgets become a note. A failing cell or a page that would fetch from another host fails
the build (``LessonBuildError``). No Flink class is mirrored: this is the publishing step.
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
from contextlib import nullcontext
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
from winviz.viz.pages import explorer_html

LESSON_GLOB = "[0-9][0-9]_*.ipynb"
"""Lesson notebooks: two digits, an underscore, a name (``00_tour.ipynb``)."""
WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"

_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head -%}
{{ resources.winviz_policy }}
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
    """A kernel reached over Unix sockets in the Jupyter runtime folder, not TCP (over which
    ipykernel ≥ 7 warns at every start that it runs without encryption)."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("ip")
    def _ip_default(self) -> str:
        # the sockets' path prefix (jupyter_client's default is in the lesson's folder)
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


def _widget_html(data: dict[str, Any]) -> str:
    """The static note standing in for an ipywidgets output."""
    shown = str(data.get("text/plain", "a widget")).strip().splitlines()[0][:120]
    return (
        '<div class="winviz-widget-note"><b>Interactive widget</b> '
        f"(<code>{safe.text(shown)}</code>): it needs a running Python kernel, so it is "
        "not part of this static page. Open the lesson in JupyterLab (<code>make lab</code>) "
        "to use it.</div>"
    )


ANSWER_TAGS = frozenset({"check", "solution"})
"""Cells a lesson page leaves out: an exercise's check (it knows the answer) and solutions."""
FACT_TAGS = frozenset({"facts"})
"""Cells a lesson page also leaves out: the lesson's asserts of what its prose says."""


def without_tags(nb: nbformat.NotebookNode, tags: frozenset[str]) -> nbformat.NotebookNode:
    """A copy of ``nb`` without the cells tagged with any of ``tags``."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.cells = [c for c in nb.cells if not tags & set(c.metadata.get("tags", []))]
    return nb


def count_charts(page: str) -> int:
    """The charts a built page draws: its chart placeholders (what the index counts)."""
    return page.count('<div class="winviz-chart">')


def count_explorers(page: str) -> tuple[int, int]:
    """The explorers a built page holds: (interactive ones — their data blocks —, frozen ones
    shown at the lesson's values with a note)."""
    return len(safe.data_blocks(page, safe.EXPLORER_CLASS)), page.count(safe.FROZEN)


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
                output["data"] = {"text/html": safe.chart_element(data[EXPORT_MIMETYPE])}
                charts += 1
            elif WIDGET_MIMETYPE in data:
                output["data"] = {"text/html": _widget_html(data)}
                widgets += 1
    nb.metadata.pop("widgets", None)
    return nb, charts, widgets


def render_page(nb: nbformat.NotebookNode, title: str, bundle: str) -> str:
    """The HTML page of an executed, staticized notebook (see the module docstring)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.metadata["title"] = title
    exporter = HTMLExporter(
        template_name="lab",
        template_file="winviz_lesson.html.j2",
        extra_loaders=[jinja2.DictLoader({"winviz_lesson.html.j2": _TEMPLATE})],
        exclude_anchor_links=True,
    )
    parts = safe.page_parts(bundle)
    body, _ = exporter.from_notebook_node(
        nb, resources={f"winviz_{name}": part for name, part in parts.items()}
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
    """Execute one lesson and write ``out/<lesson>.html`` (``LessonBuildError``: see the
    module docstring)."""
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
    target = out / f"{path.stem}.html"
    out.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    explorers, frozen = count_explorers(page)
    seconds = time.perf_counter() - start
    size = len(page.encode("utf-8"))
    return LessonPage(
        path.stem, target, size, seconds, count_charts(page), widgets, title, explorers, frozen
    )


def index_page(pages: Sequence[LessonPage]) -> str:
    """The index: one relative link per lesson page, no script."""
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
    """``n`` and the noun: "1 chart", "2 charts"."""
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
    build = partial(build_lesson, out=out, bundle=safe.javascript_bundle(), timeout=timeout)
    pages = []
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool:
        for page in pool.map(build, lessons) if pool else map(build, lessons):
            pages.append(page)
            if log:
                log(report_line(page))
    index = index_page(pages)
    safe.require_safe(index, "index.html")
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
