"""HTML pages the kit writes: the one place where specs and data enter a page.

A trace is untrusted input, so every value that reaches a page is *data*, never markup or
code: specs and an explorer's runs enter only as JSON data blocks (``script_json``: no value
can close the element), read by the page script with ``JSON.parse`` and shown with
``textContent``; values in markup go through ``text``. The kit's own inline scripts are allowed
by hash in the strict ``content_security_policy`` every page carries (no network; ``check_page``
names what is wrong with a page). Charts are drawn by vega-embed with ``ast: true`` (no
``'unsafe-eval'``), tooltips sanitized, "View Source" off. A page that would fetch from another
host is refused (``external_resources``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import math
import re
from collections.abc import Sequence
from html.parser import HTMLParser
from typing import Any

import altair as alt
import vl_convert as vlc

from winviz.viz import grid, palette, view_script

SPEC_CLASS = "winviz-spec"
EXPLORER_CLASS = "winviz-explorer-data"
"""The class of an explorer's data block (``explorer_element``)."""
ACTIONS: dict[str, bool] = {"export": True, "source": False, "compiled": False, "editor": False}
"""vega-embed's action menu: "Save as SVG/PNG" only (no unescaped source, no remote editor)."""
EMBED_OPTIONS: dict[str, Any] = {"renderer": "svg", "actions": ACTIONS, "ast": True}
"""vega-embed options of every chart in a page the kit writes."""

CSP_FIXED = (
    "default-src 'none'",
    "connect-src 'none'",
    "img-src data: blob:",
    "font-src data:",
    "style-src 'unsafe-inline'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
)
"""The policy apart from ``script-src`` (inline styles: nbconvert's and Vega's; with every
fetch refused a style can neither run code nor send anything)."""

# Draws every chart (div.winviz-chart) and explorer (div.winviz-explorer: controls over the
# runs of winviz.viz.grid), then sets window.winvizCharts = {done, charts, errors}. An
# explorer draws the runs next to the shown one ahead (winviz.viz.view_script); its
# dataset.drawn says "prepared" (moved into place) or "embedded", dataset.ahead "busy"/"done".
_EMBED_JS = """(function () {
  const options = %(options)s;
  %(view_script)s
  const all = Array.from(document.querySelectorAll("div.winviz-chart"));
  const boxes = all.filter(function (box) { return !box.closest("div.winviz-explorer"); });
  const state = window.winvizCharts = {done: false, charts: all.length, errors: []};
  function fail(box, what, e) {
    const msg = what + " could not be drawn: " + e;
    state.errors.push(msg);
    showError(box, msg);
  }
  function inflate(text) {
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  function param(spec, name) {
    return (spec.params || []).find(function (p) { return p.name === name; });
  }
  function explorer(ex, number) {
    const data = JSON.parse(ex.querySelector("script.%(explorer_class)s").textContent);
    const boxes = Array.from(ex.querySelectorAll("div.winviz-chart"));
    const slots = boxes.map(viewSlot);
    const scrubbed = boxes.map(function () { return false; });  // the view shown has a t
    const status = ex.querySelector("div.winviz-explorer-status");
    const picked = data.controls.map(function (c) { return c.initial; });
    const runs = new Map();
    const ahead = aheadViews(function () { return options; }, function () {
      ex.dataset.ahead = ahead.busy() ? "busy" : "done";
    });
    ahead.holder.style.width = ex.clientWidth + "px";
    let moved = {control: 0, direction: 1};
    let latest = 0;
    let current = -1;
    let queue = Promise.resolve();  // one redraw at a time, in the order asked
    function decode(run) {
      if (!runs.has(run)) runs.set(run, inflate(data.blobs[run]));
      return runs.get(run);
    }
    function preparable(r) {  // no scrubber (its t follows the shown chart), fixed size
      return !r.error && r.specs.every(function (spec) {
        return !param(spec, "t") && spec.width !== "container" && spec.height !== "container";
      });
    }
    function neighbours() {  // on the control moved last: first towards where it moved
      const k = moved.control;
      const order = [];
      [moved.direction, -moved.direction].forEach(function (d) {
        const at = picked[k] + d;
        if (at < 0 || at >= data.controls[k].labels.length) return;
        const next = picked.slice();
        next[k] = at;
        order.push(data.runs[gridIndex(next)]);
      });
      return order;
    }
    function prepareAround() {
      const order = neighbours();
      ahead.keep(new Set(order));
      ex.dataset.ahead = "busy";
      order.forEach(function (run) {
        ahead.want(run, function () {
          return decode(run).then(function (r) { return preparable(r) ? r.specs : null; });
        });
      });
    }
    function draw(run, r) {
      status.textContent = r.status;
      status.className = "winviz-explorer-status" + (r.error ? " winviz-explorer-error" : "");
      if (run === current) return null;
      current = run;
      const ready = ahead.take(run);
      return (ready && ready.made ? ready.made : Promise.resolve(null)).then(function (made) {
        if (made) {
          slots.forEach(function (slot, i) { slot.place(made[i]); scrubbed[i] = false; });
          ex.dataset.drawn = "prepared";
          return null;
        }
        ex.dataset.drawn = "embedded";
        return embed(r);
      });
    }
    function embed(r) {
      return Promise.all(slots.map(function (slot, i) {
        const spec = JSON.parse(JSON.stringify(r.specs[i]));
        const t = param(spec, "t");
        if (scrubbed[i] && t && t.bind) {  // the scrubber stays at the time it was at
          t.value = Math.min(Math.max(slot.view().signal("t"), t.bind.min), t.bind.max);
        }
        scrubbed[i] = !!t;
        return slot.embed(spec, options)
          .catch(function (e) {
            scrubbed[i] = false;
            fail(boxes[i], "explorer " + number + " chart " + i, e);
          });
      }));
    }
    function gridIndex(values) {
      let index = 0;
      data.controls.forEach(function (c, k) { index = index * c.labels.length + values[k]; });
      return index;
    }
    function show() {
      const index = gridIndex(picked);
      const run = data.runs[index];
      const ticket = ++latest;
      ex.dataset.state = "drawing";
      const decoded = decode(run);
      queue = queue.then(function () { return decoded; }).then(function (r) {
        return ticket === latest ? draw(run, r) : null;  // skipped: a newer choice follows
      }).then(function () {
        if (ticket === latest) {
          ex.dataset.state = "ready";
          ex.dataset.run = String(index);
          // after the frame that shows this run: the next frame is not held up
          requestAnimationFrame(function () {
            setTimeout(function () { if (ticket === latest) prepareAround(); }, 0);
          });
        }
      }).catch(function (e) { fail(ex, "explorer " + number, e); });
      return queue;
    }
    const controls = ex.querySelector("div.winviz-explorer-controls");
    function el(tag, props) { return Object.assign(document.createElement(tag), props); }
    data.controls.forEach(function (c, k) {  // a dropdown, or a slider with its value shown
      const dropdown = c.kind === "dropdown";
      const last = String(c.labels.length - 1);
      const input = dropdown ? el("select") : el("input", {type: "range", min: "0", max: last,
        step: "1", disabled: c.labels.length < 2});
      if (dropdown) {
        c.labels.forEach(function (text, i) {
          input.appendChild(el("option", {value: String(i), textContent: text}));
        });
      }
      Object.assign(input, {name: c.name, value: String(c.initial)});
      const out = el("output", {textContent: dropdown ? "" : " " + c.labels[c.initial]});
      input.addEventListener("input", function () {
        const value = Number(input.value);
        moved = {control: k, direction: value < picked[k] ? -1 : 1};
        picked[k] = value;
        out.textContent = dropdown ? "" : " " + c.labels[value];
        show();
      });
      const row = el("label", {className: "winviz-explorer-control"});
      row.append(el("span", {textContent: c.label + " "}), input, out);
      controls.appendChild(row);
    });
    return show();
  }
  const jobs = boxes.map(function (box, i) {
    return Promise.resolve().then(function () {
      const spec = JSON.parse(box.querySelector("script.%(spec_class)s").textContent);
      return viewSlot(box).embed(spec, options);
    }).catch(function (e) { fail(box, "chart " + i, e); });
  });
  Array.from(document.querySelectorAll("div.winviz-explorer")).forEach(function (ex, n) {
    jobs.push(Promise.resolve().then(function () { return explorer(ex, n); })
      .catch(function (e) { fail(ex, "explorer " + n, e); }));
  });
  Promise.all(jobs).then(function () { state.done = true; });
})();
"""

CHART_CSS = (
    ".winviz-chart { margin: 4px 0; overflow-x: auto; }\n"
    f".winviz-chart-error {{ color: {palette.ERROR_INK}; white-space: pre-wrap; }}\n"
    f".winviz-widget-note {{ border-left: 4px solid {palette.NOTE_BORDER}; "
    f"background: {palette.NOTE_BACKGROUND}; padding: 6px 10px; }}\n"
    ".winviz-explorer-control { display: block; margin: 2px 0; font: 13px sans-serif; }\n"
    ".winviz-explorer-control input[type=range] { width: 260px; vertical-align: middle; }\n"
    ".winviz-explorer-status { font: 13px sans-serif; margin: 4px 0; }\n"
    f".winviz-explorer-error {{ color: {palette.ERROR_INK}; }}\n"
    "#vg-tooltip-element { font-family: sans-serif; font-size: 12px; }\n"
)

# what ends a script element early or switches the HTML parser into its escaped states
_SCRIPT_BREAKERS = re.compile(r"</script|<!--|<script", re.IGNORECASE)
_JS_TYPES = {
    "",
    "module",
    "text/javascript",
    "application/javascript",
    "application/ecmascript",
    "text/ecmascript",
}


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


class PageError(ValueError):
    """A page or a piece of one that the kit refuses to write (names what and why)."""


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: keys sorted, compact, ``<``,
    ``>``, ``&`` and every non-ASCII character as ``\\uXXXX``. A NaN or infinity raises
    ``PageError`` naming its path."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise PageError(
            f"a page cannot hold the non-JSON number at {_first_non_finite(value, '$')}; "
            "expected a finite number or null"
        ) from None
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _first_non_finite(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity in ``value`` (None: none)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path} ({value!r})"
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{path}[{k!r}]", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    for where, item in items:
        found = _first_non_finite(item, where)
        if found:
            return found
    return None


def text(value: Any) -> str:
    """A value shown as text in markup: ``str(value)`` HTML-escaped (quotes too)."""
    return html.escape(str(value), quote=True)


def chart_element(spec: dict[str, Any]) -> str:
    """A chart's place in a page: an empty view and its spec as a data block."""
    block = f'<script type="application/json" class="{SPEC_CLASS}">{script_json(spec)}</script>'
    return f'<div class="winviz-chart"><div class="winviz-view"></div>{block}</div>'


def explorer_element(payload: dict[str, Any], charts: int) -> str:
    """An explorer's place in a page: room for its controls and status line, ``charts`` empty
    views, and ``payload`` (``winviz.viz.grid``) as a data block."""
    views = '<div class="winviz-chart"><div class="winviz-view"></div></div>' * charts
    return (
        '<div class="winviz-explorer"><div class="winviz-explorer-controls"></div>'
        f'<div class="winviz-explorer-status"></div>{views}'
        f'<script type="application/json" class="{EXPLORER_CLASS}">{script_json(payload)}'
        "</script></div>"
    )


def script_element(code: str) -> str:
    """One of the kit's own scripts, inline (``PageError`` for code that could break out)."""
    found = _SCRIPT_BREAKERS.search(code)
    if found:
        near = code[max(0, found.start() - 40) : found.end() + 40]
        raise PageError(f"an inline script may not contain {found.group(0)!r}; near {near!r}")
    return f"<script>{code}</script>"


def script_hash(code: str) -> str:
    """The CSP source that allows exactly this inline script: ``'sha256-<base64>'``."""
    digest = hashlib.sha256(code.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(scripts: Sequence[str] = ()) -> str:
    """The policy of a page whose only scripts are ``scripts`` (their text): each allowed by
    its hash, nothing else runs (``script-src 'none'`` without scripts), nothing is fetched."""
    allowed = " ".join(dict.fromkeys(script_hash(s) for s in scripts)) or "'none'"
    return "; ".join((*CSP_FIXED, f"script-src {allowed}"))


def csp_meta(scripts: Sequence[str] = ()) -> str:
    """The policy as the ``<meta http-equiv>`` tag that goes first in the page's head."""
    policy = content_security_policy(scripts)  # no '"', '<', '&': readable in the page
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def vega_lite_version() -> str:
    """The Vega-Lite version of the installed Altair, as vl-convert names it ("6.4")."""
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"{major}.{minor}"


@functools.cache
def javascript_bundle() -> str:
    """Vega, Vega-Lite (Altair's version) and vega-embed as one script (vl-convert, offline),
    ``</script`` written ``<\\/script`` (the same to JavaScript)."""
    bundle = vlc.javascript_bundle(vl_version=vega_lite_version())
    bundle = re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)
    script_element(bundle)  # raises if anything else could break the element
    return bundle


def embed_script() -> str:
    """The script that draws every ``chart_element`` of a page (``EMBED_OPTIONS``)."""
    return _EMBED_JS % {
        "options": script_json(EMBED_OPTIONS),
        "spec_class": SPEC_CLASS,
        "explorer_class": EXPLORER_CLASS,
        "view_script": view_script.SCRIPT,
    }


def chart_page(
    specs: Sequence[dict[str, Any]], *, title: str = "winviz chart", note: str | None = None
) -> str:
    """A self-contained page drawing ``specs`` (Vega-Lite dicts); ``note``, if given, said
    above the charts as text (e.g. that the run failed, and why)."""
    said = f'<p role="note"><strong>{text(note)}</strong></p>\n' if note else ""
    body = said + "\n".join(chart_element(s) for s in specs)
    return page(body, title=title, what="the chart page")


def page_parts(bundle: str) -> dict[str, str]:
    """What every page the kit writes carries besides its body: the policy (``<meta>``), the
    charts' CSS, the Vega ``bundle`` and the page script (``embed_script``) as script elements."""
    embed = embed_script()
    return {
        "policy": csp_meta([bundle, embed]),
        "css": CHART_CSS,
        "bundle": script_element(bundle),
        "embed": script_element(embed),
    }


def page(body: str, *, title: str, what: str = "the page") -> str:
    """A self-contained page around ``body`` (chart and explorer elements): Vega inlined, the
    page script, the strict policy; checked by ``require_safe``."""
    parts = page_parts(javascript_bundle())
    written = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"{parts['policy']}\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)}</title>\n"
        f"<style>\nbody {{ font-family: sans-serif; margin: 8px; }}\n{parts['css']}</style>\n"
        f"</head>\n<body>\n{body}\n{parts['bundle']}\n{parts['embed']}\n"
        "</body>\n</html>\n"
    )
    require_safe(written, what)
    return written


class _Scripts(HTMLParser):
    """Collects a page's ``<script>`` elements and ``<meta http-equiv>`` policies in order."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.policies: list[str] = []
        self.first_script_before_policy = False
        self._open: dict[str, str | None] | None = None
        self._text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self._open, self._text = a, []
            if not self.policies:
                self.first_script_before_policy = True
        elif tag == "meta" and (a.get("http-equiv") or "").lower() == ("content-security-policy"):
            self.policies.append(a.get("content") or "")

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._open is not None:
            self.scripts.append((self._open, "".join(self._text)))
            self._open = None


def data_blocks(page: str, cls: str) -> list[str]:
    """The text of every data block (``<script type="application/json">``) of class ``cls``
    in the page, in order."""
    return [
        body
        for attrs, body in _Scripts(page).scripts
        if (attrs.get("type") or "").strip().lower() == "application/json"
        and cls in (attrs.get("class") or "").split()
    ]


def check_page(page: str) -> list[str]:
    """What is wrong with a page, in words (empty: safe): not exactly one policy before any
    script with the fixed directives, an inline script not allowed by hash, a script URL, a
    fetch from another host (``external_resources``)."""
    parser = _Scripts(page)
    problems = []
    if len(parser.policies) != 1:
        problems.append(f"expected one Content-Security-Policy meta tag, found {parser.policies}")
        return problems
    if parser.first_script_before_policy:
        problems.append("a script comes before the Content-Security-Policy meta tag")
    policy = parser.policies[0]
    directives = {d.strip().split(" ", 1)[0]: d.strip() for d in policy.split(";") if d.strip()}
    for fixed in CSP_FIXED:
        name = fixed.split(" ", 1)[0]
        if directives.get(name) != fixed:
            problems.append(f"directive {name!r} is {directives.get(name)!r}, expected {fixed!r}")
    allowed = set(directives.get("script-src", "").split()[1:])
    if allowed - {"'none'"} and any(not a.startswith("'sha256-") for a in allowed):
        problems.append(f"script-src allows more than hashes: {sorted(allowed)}")
    for attrs, body in parser.scripts:
        if "src" in attrs:
            problems.append(f"a script is loaded from {attrs['src']!r}")
        elif (attrs.get("type") or "").strip().lower() in _JS_TYPES and (
            script_hash(body) not in allowed
        ):
            problems.append(f"an inline script the policy does not allow: {body[:80]!r}")
    return problems + [f"it would fetch from another host: {u}" for u in external_resources(page)]


def require_safe(page: str, what: str) -> None:
    """Raise ``PageError`` naming ``what`` when ``check_page`` finds anything."""
    problems = check_page(page)
    if problems:
        raise PageError(f"{what} is not safe to write: {'; '.join(problems[:3])}")


def external_resources(page: str) -> list[str]:
    """Every reference in an HTML page that would make a browser fetch from another host:
    tag attributes (``src``, ``href`` of ``<link>``, ``srcset``, ``data``…), CSS
    ``@import`` / ``url()``, ``<meta http-equiv=refresh>`` and Vega-Lite ``"url"`` data
    sources inside the chart specs. Empty for a self-contained page."""
    found = [m.group(0) for m in _ATTR.finditer(page)]
    found += [m.group(0) for m in _CSS.finditer(page)]
    found += [m.group(0) for m in _META_REFRESH.finditer(page)]
    for spec in data_blocks(page, SPEC_CLASS):
        found += [f"Vega-Lite data url {u!r}" for u in _data_urls(json.loads(spec))]
    for block in data_blocks(page, EXPLORER_CLASS):
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


FROZEN = "<b>Explorer</b> at the values the lesson set"
"""How an explorer whose runs are not on the page begins its note (``count_explorers``)."""


def explorer_html(data: dict[str, Any], payload: dict[str, Any], room: int) -> tuple[str, int]:
    """An explorer (``wv.explore``) on a static page and the bytes of precomputed runs it
    adds: its controls switching between the runs ``make lessons`` precomputed on its
    slider grid (``winviz.viz.grid``), when they fit in ``room`` bytes; else a note saying
    why (with the sizes) and its charts at the lesson's values."""
    shown = str(data.get("text/plain", "an explorer")).strip().splitlines()[0][:300]
    call = text(payload.get("call") or shown)
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
            f'<div class="winviz-widget-note">{FROZEN} '
            f"(<code>{call}</code>): its runs are not precomputed on this page because "
            f"{text(why)}. Open the lesson in JupyterLab (<code>make lab</code>) to move "
            "its sliders.</div>"
        )
        return note + "".join(chart_element(spec) for spec in specs), 0
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
    return note + explorer_element(payload, len(specs)), size


def _lesson_run(payload: dict[str, Any]) -> dict[str, Any]:
    """The run at the lesson's values of an explorer's payload (decoded)."""
    index = 0
    for control in payload["controls"]:
        index = index * len(control["labels"]) + control["initial"]
    return grid.decode(payload["blobs"][payload["runs"][index]])
