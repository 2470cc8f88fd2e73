"""Data never becomes code (issue 16), without a browser: the one function that writes specs
into pages (``winviz.viz.pages``), the Content-Security-Policy and its hashes, every chart fed
a job whose every name and value is hostile (``hostile_job``), the
lesson index, and no chart building a Vega expression from a data value.
(tests/browser/test_hostile_pages.py opens the same pages in Chromium.)"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from typing import Any

import hostile_job as hj
import pytest
import vl_convert as vlc

from winviz.viz import export, grid, lessons, pages
from winviz.viz.export import EXPLORER_KEY

# Fragments that only the hostile payloads contain.
MARKERS = ("pwned", "<img", "</script", "\u2028", "\u2029", "<!--", "<b>long")


@pytest.fixture(scope="module")
def hostile() -> dict[str, Any]:
    return hj.charts(hj.run())


@pytest.fixture(scope="module")
def hostile_specs(hostile) -> dict[str, dict[str, Any]]:
    return {name: export.chart_spec(chart) for name, chart in hostile.items()}


# -- script_json ---------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [*hj.PAYLOADS, "\ud800 lone surrogate", "é · → 😀"])
def test_script_json_has_no_markup_and_round_trips(payload: str) -> None:
    value = {payload: [payload, {"k": payload}], "n": 1, "f": 0.5, "none": None}
    text = pages.script_json(value)
    assert json.loads(text) == value
    for ch in "<>&\u2028\u2029":
        assert ch not in text
    assert text.isascii()


def test_script_json_exact_escapes() -> None:
    assert pages.script_json("</script>&\u2028\u2029é") == (
        '"\\u003c/script\\u003e\\u0026\\u2028\\u2029\\u00e9"'
    )
    assert pages.script_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


def test_script_json_refuses_non_finite_numbers_naming_the_path() -> None:
    with pytest.raises(pages.PageError, match=r"at \$\['data'\]\['values'\]\[1\] \(nan\)"):
        pages.script_json({"data": {"values": [1.0, float("nan")]}})
    with pytest.raises(pages.PageError, match=r"\$\[0\] \(inf\)"):
        pages.script_json([float("inf")])


# -- scripts and the policy --------------------------------------------------------------


def test_script_hash_is_the_csp_hash() -> None:
    # the example of the W3C CSP Level 2 recommendation (section 4.2.4)
    assert pages.script_hash("alert('Hello, world.');") == (
        "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='"
    )


@pytest.mark.parametrize("bad", ["x='</script>'", "x='</SCRIPT'", "/*<!--*/", "'<script'"])
def test_script_element_refuses_what_could_end_it(bad: str) -> None:
    with pytest.raises(pages.PageError, match="an inline script may not contain"):
        pages.script_element(bad)


def test_policy_allows_only_the_pages_scripts_and_no_network() -> None:
    policy = pages.content_security_policy(["a()", "b()", "a()"])
    assert policy == (
        "default-src 'none'; connect-src 'none'; img-src data: blob:; font-src data:; "
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; object-src 'none'; "
        f"script-src {pages.script_hash('a()')} {pages.script_hash('b()')}"
    )
    assert pages.content_security_policy().endswith("script-src 'none'")
    assert "unsafe-eval" not in policy


def test_the_bundle_needs_no_escape_beyond_script_closers() -> None:
    bundle = pages.javascript_bundle()
    assert "window.vegaEmbed=" in bundle
    assert re.search(r"</script|<!--|<script", bundle, re.I) is None
    assert pages.script_element(bundle) == f"<script>{bundle}</script>"


def _page(head: str, body: str) -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def test_check_page_finds_what_is_unsafe() -> None:
    ok = _page(pages.csp_meta(["go()"]), '<script>go()</script><script type="application/json">1')
    assert pages.check_page(ok + "</script>") == []
    assert pages.check_page(_page("", "<script>go()</script>")) == [
        "expected one Content-Security-Policy meta tag, found []"
    ]
    assert pages.check_page(_page(pages.csp_meta(["go()"]), "<script>evil()</script>")) == [
        "an inline script the policy does not allow: 'evil()'"
    ]
    assert pages.check_page(_page(pages.csp_meta(), '<script src="x.js"></script>')) == [
        "a script is loaded from 'x.js'"
    ]
    late = _page("<script>go()</script>" + pages.csp_meta(["go()"]), "")
    assert pages.check_page(late) == ["a script comes before the Content-Security-Policy meta tag"]
    loose = pages.csp_meta(["go()"]).replace("script-src", "script-src 'unsafe-inline'")
    allowed = sorted(["'unsafe-inline'", pages.script_hash("go()")])
    assert pages.check_page(_page(loose, "")) == [f"script-src allows more than hashes: {allowed}"]
    network = pages.csp_meta().replace("connect-src 'none'", "connect-src *")
    assert pages.check_page(_page(network, "")) == [
        "directive 'connect-src' is 'connect-src *', expected \"connect-src 'none'\""
    ]
    fetching = _page(pages.csp_meta(), '<img src="https://x.org/a.png">')
    assert pages.check_page(fetching) == [
        'it would fetch from another host: <img src="https://x.org/a.png'
    ]


def test_a_chart_page_that_would_fetch_from_another_host_is_refused(tmp_path) -> None:
    chart = {"data": {"url": "https://x.org/cars.json"}, "mark": "point"}
    with pytest.raises(pages.PageError) as info:
        export.save_html(chart, tmp_path / "c.html")
    assert str(info.value) == (
        "the chart page is not safe to write: it would fetch from another host: "
        "Vega-Lite data url 'https://x.org/cars.json'"
    )
    assert not (tmp_path / "c.html").exists()


# -- vega-embed options ------------------------------------------------------------------


def test_embed_options_are_csp_safe_and_keep_tooltips_sanitized() -> None:
    # ast: Vega interprets expressions (no Function(), no 'unsafe-eval'); no "tooltip" or
    # "sanitize" option: vega-tooltip's default handler HTML-escapes keys and values
    assert pages.EMBED_OPTIONS == {
        "renderer": "svg",
        "actions": {"export": True, "source": False, "compiled": False, "editor": False},
        "ast": True,
    }
    assert export.JUPYTER_EMBED_OPTIONS == {"actions": pages.ACTIONS}
    embed = pages.embed_script()
    # every page, a lesson's too (lessons.render_page), draws with these options
    assert pages.page_parts("")["embed"] == pages.script_element(embed)
    assert '"ast":true' in embed and "sanitize" not in embed and "innerHTML" not in embed


def test_jupyter_renderer_gets_the_safe_actions(monkeypatch) -> None:
    import altair as alt

    monkeypatch.delenv(export.RENDERER_ENV, raising=False)
    before = alt.renderers.active
    try:
        assert export.setup_rendering() == "jupyter"
        assert alt.renderers.options["embed_options"] == export.JUPYTER_EMBED_OPTIONS
    finally:
        alt.renderers.enable(before)


def test_the_charts_import_anywidget_so_jupyter_is_the_only_notebook_renderer() -> None:
    """A chart is shown in JupyterLab by Altair's "jupyter" renderer (an anywidget): the
    charts cannot be imported without anywidget (a dependency of the package), so no other
    notebook renderer is needed."""
    import subprocess
    import sys

    code = (
        "import sys, winviz.viz.export\n"
        "assert 'anywidget' in sys.modules\n"
        "sys.modules['anywidget'] = None  # as if it were not installed\n"
        "for name in [m for m in sys.modules if m.startswith(('winviz.viz', 'altair.jupyter'))]:\n"
        "    del sys.modules[name]\n"
        "try:\n"
        "    import winviz.viz.timeline\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "anywidget" in out.stdout


# -- hostile charts through every writer -------------------------------------------------


class _Blocks(HTMLParser):
    """The text of every ``script.winviz-spec`` data block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self._in = tag == "script" and a.get("class") == pages.SPEC_CLASS
        if tag == "script" and self._in:
            self.blocks.append("")

    def handle_data(self, data: str) -> None:
        if self._in:
            self.blocks[-1] += data

    def handle_endtag(self, tag: str) -> None:
        self._in = False


def _blocks(page: str) -> _Blocks:
    parser = _Blocks()
    parser.feed(page)
    parser.close()
    return parser


def _assert_safe(page: str, specs: list[dict[str, Any]]) -> None:
    """The page's policy holds, no payload is in it as markup, its data blocks give back
    exactly the specs, and its only ``</script`` are the ends of its own elements."""
    assert pages.check_page(page) == []
    ours = page.replace(pages.script_element(pages.javascript_bundle()), "")  # Vega has "<img"
    for payload in hj.PAYLOADS:
        assert payload not in ours
    for marker in ("<img", "pwned=1</script", "\u2028", "\u2029", "<b>long"):
        assert marker not in ours
    assert [json.loads(b) for b in _blocks(page).blocks] == specs
    assert len(re.findall(r"<script\b", page)) == len(re.findall(r"</script>", page))


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def test_hostile_charts_are_drawn(hostile_specs) -> None:
    """The hostile names and values reach the charts (so the page tests test something)."""
    spec_text = "\n".join(_strings(hostile_specs))
    for name in (hj.WINDOW_OP, hj.PROCESS_OP, hj.SOURCE):
        assert name in spec_text
    # the side output's pseudo-operator "side:<tag>" is drawn by no chart (legends name only
    # the user's operators), so the hostile tag reaches no page
    assert "side:" + hj.LATE_TAG.id not in spec_text
    for key in hj.KEYS:
        assert key[:12] in spec_text
    assert hj.LONG in spec_text
    for name, spec in hostile_specs.items():
        assert spec["usermeta"]["winviz"]["status"] == "ok", name


@pytest.mark.parametrize("name", ["timeline", "window_lanes", "timers_chart", "scrubber"])
def test_save_html_of_hostile_charts(name, hostile, hostile_specs, tmp_path) -> None:
    page = export.save_html(hostile[name], tmp_path / "c.html").read_text("utf-8")
    _assert_safe(page, [hostile_specs[name]])


def test_save_html_title_is_text(hostile, tmp_path) -> None:
    chart = hostile["propagation_chart"]
    page = export.save_html(chart, tmp_path / "p.html", title=hj.SCRIPT).read_text("utf-8")
    _assert_safe(page, [export.chart_spec(chart)])
    assert f"<title>{html.escape(hj.SCRIPT)}</title>" in page


def _explorer_output(spec: dict[str, Any], fallback: str = "") -> dict[str, Any]:
    """An explorer's output for a lesson page (winviz.viz.grid) whose call, control label,
    option labels, status line and chart are hostile."""
    blob = grid.encode({"specs": [spec], "status": hj.SCRIPT, "error": False})
    payload = {
        "format": 1,
        "call": f"{hj.SCRIPT}(bound=1)",
        "controls": [
            {
                "name": hj.IMG,
                "label": hj.SCRIPT,
                "kind": "dropdown",
                "labels": [hj.IMG, hj.EXPR],
                "initial": 0,
            }
        ],
        "runs": [0, 0],
        "blobs": [blob],
        "combinations": 2,
        "fallback": fallback,
    }
    return {
        export.EXPORT_MIMETYPE: {EXPLORER_KEY: payload},
        "text/plain": f"<Explorer {hj.SCRIPT}(bound=1)>: {hj.IMG}",
    }


def test_lesson_page_and_notes_of_hostile_output(hostile_specs) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    chart = nbformat.v4.new_output(
        "display_data", data={export.EXPORT_MIMETYPE: hostile_specs["timeline"]}
    )
    explorer = nbformat.v4.new_output(
        "display_data", data=_explorer_output(hostile_specs["window_lanes"])
    )
    frozen = nbformat.v4.new_output(
        "display_data", data=_explorer_output(hostile_specs["timers_chart"], fallback=hj.IMG)
    )
    widget = nbformat.v4.new_output(
        "display_data",
        data={lessons.WIDGET_MIMETYPE: {"model_id": "x"}, "text/plain": hj.IMG},
    )
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[chart, explorer, frozen, widget])]
    static, charts, widgets = lessons.staticize(nb)
    assert (charts, widgets) == (3, 1)
    page = lessons.render_page(static, hj.SCRIPT, pages.javascript_bundle())
    _assert_safe(page, [hostile_specs["timeline"], hostile_specs["timers_chart"]])
    call = html.escape(f"{hj.SCRIPT}(bound=1)", quote=True)
    assert page.count(f"(<code>{call}</code>)") == 2
    assert f"because {html.escape(hj.IMG, quote=True)}." in page
    # the explorer's data block gives back exactly its payload, the run exactly its spec
    (block,) = [json.loads(b) for b in pages.data_blocks(page, pages.EXPLORER_CLASS)]
    assert (
        block
        == _explorer_output(hostile_specs["window_lanes"])[export.EXPORT_MIMETYPE][EXPLORER_KEY]
    )
    assert grid.decode(block["blobs"][0])["specs"] == [hostile_specs["window_lanes"]]


def test_index_page_is_text_and_runs_nothing(tmp_path) -> None:
    page = lessons.LessonPage(
        lesson=hj.IMG,
        path=tmp_path / f"{hj.SCRIPT[:9]}.html",
        size=1,
        seconds=0.0,
        charts=1,
        widgets=0,
        title=hj.SCRIPT,
    )
    index = lessons.index_page([page])
    assert pages.check_page(index) == []
    assert "script-src 'none'" in index
    assert hj.IMG not in index and hj.SCRIPT not in index
    assert f"{html.escape(hj.IMG)}</a> — {html.escape(hj.SCRIPT)}" in index


# -- no Vega expression is built from data -----------------------------------------------

# Where Vega and Vega-Lite take expression strings.
EXPR_KEYS = {"expr", "signal", "update", "test", "calculate", "filter", "init"}


def _expressions(node: Any, key: str = "", out: list[str] | None = None) -> list[str]:
    """Every expression string of a Vega or Vega-Lite spec (data values are skipped)."""
    out = [] if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("values", "datasets"):
                continue
            _expressions(v, k, out)
    elif isinstance(node, list):
        for v in node:
            _expressions(v, key, out)
    elif isinstance(node, str) and key in EXPR_KEYS:
        out.append(node)
    return out


def test_no_expression_holds_a_data_value(hostile_specs) -> None:
    """Filters and conditions compare fields to parameters: neither the Vega-Lite specs nor
    the Vega they compile to (vl-convert) have an expression with a hostile value in it."""
    for name, spec in hostile_specs.items():
        vega = vlc.vegalite_to_vega(spec, vl_version=pages.vega_lite_version())
        found = _expressions(spec) + _expressions(vega)
        assert len(found) > 5, name  # the walk finds the charts' own expressions
        bad = [e for e in found if any(m in e for m in MARKERS) or "win " in e]
        assert bad == [], name


def test_the_guard_catches_a_sort_array() -> None:
    """A sort array of keys is what the walk must catch: Vega-Lite compiles it to an
    expression holding the keys (why lanes and timers order by a scale domain)."""
    spec = {
        "data": {"values": [{"k": hj.IMG}]},
        "mark": "point",
        "encoding": {"y": {"field": "k", "type": "nominal", "sort": [hj.IMG]}},
    }
    vega = vlc.vegalite_to_vega(spec, vl_version=pages.vega_lite_version())
    assert any("<img" in e for e in _expressions(vega))


def test_svg_exports_hold_hostile_text_as_text(hostile) -> None:
    """A browser runs scripts in an SVG file too: vl-convert's SVG holds the payloads as
    escaped text — well-formed XML with no element but SVG's own."""
    import xml.etree.ElementTree as ET

    svg_ns = "{http://www.w3.org/2000/svg}"
    for name, chart in hostile.items():
        root = ET.fromstring(export.svg_text(chart))
        tags = {el.tag for el in root.iter()}
        assert all(t.startswith(svg_ns) for t in tags), name
        assert not {f"{svg_ns}script", f"{svg_ns}foreignObject"} & tags, name
        shown = "".join(root.itertext())
        assert hj.SCRIPT in shown or hj.IMG in shown, name
