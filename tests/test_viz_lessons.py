"""winviz.viz.lessons without a kernel or a browser: the external-resource check, the
static stand-ins for charts and widgets, the page template, and setup_rendering's export
mode. (tests/browser builds and opens real pages.)"""

from __future__ import annotations

import json

import altair as alt
import nbformat
import pytest

from winviz.viz import export, grid, lessons, pages
from winviz.viz.export import EXPLORER_KEY


@pytest.mark.parametrize(
    "snippet",
    [
        '<script src="https://cdn.jsdelivr.net/npm/vega@6"></script>',
        "<script src='//cdn.example.org/x.js'></script>",
        '<link rel="stylesheet" href="http://example.org/a.css">',
        '<img srcset="https://example.org/a.png 2x">',
        '<object data="https://example.org/a.svg"></object>',
        '<video poster="https://example.org/p.png"></video>',
        "<style>@import url(https://fonts.example.org/css);</style>",
        '<style>@import "https://fonts.example.org/css";</style>',
        "<div style=\"background: url('https://example.org/bg.png')\"></div>",
        '<meta http-equiv="refresh" content="0; url=https://example.org">',
    ],
)
def test_external_resources_finds_every_kind_of_fetch(snippet: str) -> None:
    assert len(pages.external_resources(f"<html><body>{snippet}</body></html>")) == 1


def test_external_resources_allows_links_namespaces_and_local_references() -> None:
    page = (
        '<a href="https://nightlies.apache.org/flink/">Flink docs</a>'
        '<svg xmlns="http://www.w3.org/2000/svg"></svg>'
        '<img src="data:image/png;base64,AAAA"><link rel="icon" href="favicon.ico">'
        '<script>const u = "https://vega.github.io/schema/vega/v6.json";</script>'
    )
    assert pages.external_resources(page) == []


def test_external_resources_finds_a_vega_lite_data_url() -> None:
    spec = {"layer": [{"data": {"values": [1]}}, {"data": {"url": "https://x.org/cars.json"}}]}
    page = pages.chart_element(spec)
    assert pages.external_resources(page) == ["Vega-Lite data url 'https://x.org/cars.json'"]


def test_chart_html_escapes_the_spec_for_a_script_element() -> None:
    spec = {"title": "</script><b>", "mark": "point"}
    html = pages.chart_element(spec)
    assert "</script><b>" not in html
    body = html.split('class="winviz-spec">')[1].removesuffix("</script></div>")
    assert json.loads(body) == spec


def _notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    chart = nbformat.v4.new_output(
        "display_data", data={export.EXPORT_MIMETYPE: {"mark": "point"}, "text/plain": "chart"}
    )
    widget = nbformat.v4.new_output(
        "execute_result",
        data={lessons.WIDGET_MIMETYPE: {"model_id": "abc"}, "text/plain": "IntSlider(value=3)"},
        execution_count=2,
    )
    nb.cells = [
        nbformat.v4.new_markdown_cell("Intro\n\n## The *scrubber* lesson\n\ntext"),
        nbformat.v4.new_code_cell("chart", outputs=[chart]),
        nbformat.v4.new_code_cell("slider", outputs=[widget], execution_count=2),
    ]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nb


def test_staticize_replaces_charts_and_widgets_and_leaves_the_input_alone() -> None:
    nb = _notebook()
    before = json.dumps(nb, sort_keys=True)
    out, charts, widgets = lessons.staticize(nb)
    assert json.dumps(nb, sort_keys=True) == before
    assert (charts, widgets) == (1, 1)
    assert "widgets" not in out.metadata
    chart_html = out.cells[1].outputs[0].data["text/html"]
    assert chart_html == pages.chart_element({"mark": "point"})
    note = out.cells[2].outputs[0].data
    assert list(note) == ["text/html"]
    assert "<code>IntSlider(value=3)</code>" in note["text/html"]
    assert "make lab" in note["text/html"]


def test_lesson_title_is_the_first_heading() -> None:
    assert lessons.lesson_title(_notebook(), "fallback") == "The scrubber lesson"
    assert lessons.lesson_title(nbformat.v4.new_notebook(), "fallback") == "fallback"


def test_render_page_has_one_bundle_no_cdn_and_the_embed_script() -> None:
    nb, _, _ = lessons.staticize(_notebook())
    page = lessons.render_page(nb, "A <title>", "window.vegaEmbed=function(){};")
    assert page.count("window.vegaEmbed=function(){};") == 1
    assert "<title>A &lt;title&gt;</title>" in page
    assert '"renderer":"svg"' in page and "window.winvizCharts" in page
    assert pages.external_resources(page) == []
    assert pages.check_page(page) == []  # the policy allows exactly its two scripts
    for cdn in ("require.js", "mathjax", "mermaid", "unpkg", "jsdelivr", "cdnjs"):
        assert cdn not in page.lower(), cdn


def test_find_lessons_and_unknown_names(tmp_path) -> None:
    for name in ("01_b.ipynb", "00_a.ipynb", "notes.ipynb", "1_c.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in lessons.find_lessons(tmp_path)] == ["00_a.ipynb", "01_b.ipynb"]
    with pytest.raises(lessons.LessonBuildError, match=r"no lesson named \['02_x'\]"):
        lessons.build_lessons(tmp_path, tmp_path / "out", only=["02_x"])
    with pytest.raises(lessons.LessonBuildError, match="does not exist"):
        lessons.find_lessons(tmp_path / "missing")


@pytest.fixture
def restore_renderer():
    active = alt.renderers.active
    yield
    alt.renderers.enable(active)


def test_setup_rendering_export_mode(monkeypatch, restore_renderer) -> None:
    monkeypatch.setenv(export.RENDERER_ENV, "export")
    assert export.setup_rendering() == "winviz-export"
    chart = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    bundle = chart._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    spec = bundle[export.EXPORT_MIMETYPE]
    assert "$schema" not in spec
    assert spec["mark"] == {"type": "point"} and spec["encoding"]["x"]["field"] == "a"


def test_setup_rendering_rejects_an_unknown_mode(monkeypatch, restore_renderer) -> None:
    monkeypatch.setenv(export.RENDERER_ENV, "pdf")
    with pytest.raises(ValueError, match="WINVIZ_RENDERER must be 'export' or unset, got 'pdf'"):
        export.setup_rendering()


def test_render_page_is_deterministic() -> None:
    nb, _, _ = lessons.staticize(_notebook())
    pages = {lessons.render_page(nb, "t", "window.vegaEmbed=1;") for _ in range(2)}
    assert len(pages) == 1


def test_build_lessons_needs_at_least_one_job(tmp_path) -> None:
    (tmp_path / "00_a.ipynb").write_text("{}")
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        lessons.build_lessons(tmp_path, tmp_path / "out", jobs=0)


def test_staticize_gives_an_explorer_its_precomputed_runs() -> None:
    """An explorer's output (its runs on the slider grid, winviz.viz.grid) becomes a note,
    the explorer block with its data and one empty view per chart; a grid that could not be
    precomputed becomes the note saying why and the lesson's run as plain charts."""
    specs = [{"mark": "point"}, {"mark": "line"}]
    blob = grid.encode({"specs": specs, "status": "fired 3", "error": False})
    payload = {
        "format": 1,
        "call": "counts(data, bound=1000)",
        "controls": [
            {"name": "bound", "label": "b", "kind": "slider", "labels": ["0", "1000"], "initial": 1}
        ],
        "runs": [0, 0],
        "blobs": [blob],
        "combinations": 2,
        "fallback": "",
    }

    def output(payload):
        data = {
            export.EXPORT_MIMETYPE: {EXPLORER_KEY: payload},
            "text/plain": "<Explorer counts(bound=1000): 1 run(s)>: fired 3",
        }
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("ex", outputs=[nbformat.v4.new_output(
            "display_data", data=data)])]  # fmt: skip
        out, charts, widgets = lessons.staticize(nb)
        return out.cells[0].outputs[0].data["text/html"], charts, widgets

    page, charts, widgets = output(payload)
    assert (charts, widgets) == (2, 0)
    assert "<code>counts(data, bound=1000)</code>): its sliders and dropdowns switch" in page
    assert page.endswith(pages.explorer_element(payload, 2))
    page, charts, _ = output({**payload, "fallback": "its dropdowns alone make 99 combinations"})
    assert charts == 2 and "winviz-explorer-data" not in page
    assert "not precomputed on this page because its dropdowns alone make 99 combinations." in (
        page
    )
    assert page.endswith(pages.chart_element(specs[0]) + pages.chart_element(specs[1]))


def test_external_resources_reads_data_blocks_whatever_the_attribute_order() -> None:
    """nbconvert writes ``class`` before ``type``: the data-url check still reads the spec."""
    spec = '{"data":{"url":"https://example.org/d.json"},"mark":"point"}'
    for tag in (
        '<script type="application/json" class="winviz-spec">',
        '<script class="winviz-spec" type="application/json">',
    ):
        assert pages.external_resources(f"<div>{tag}{spec}</script></div>") == [
            "Vega-Lite data url 'https://example.org/d.json'"
        ]
