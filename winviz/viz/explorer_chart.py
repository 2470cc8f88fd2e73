"""The widget of one of an explorer's charts in JupyterLab: ``ExplorerChart``, Altair's
``JupyterChart`` whose page side draws the runs computed ahead out of sight.

The kernel sends each chart's spec of a run computed ahead under a key (``prepare``); the page
draws it when idle, with the script exported lesson pages run (``view_script``). On a change to
such a run only its key is sent (``_key``, ``data-drawn="prepared"``), any other run comes with
its spec (``"embedded"``). The latest run wins; the charts of one explorer (``_group``) switch
together once each has the run ``_run`` ready (or ``GROUP_WAIT_MS`` after the first). Vega
parameters are synced as ``JupyterChart`` syncs them, but a report reads every value from the
view, and the page's own reports are not applied back to it. The script is bundled with Vega by
vl-convert, held once per kernel by a ``Bundle`` widget and imported once per page (``LOADER``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, ClassVar

import altair as alt
import ipywidgets as widgets
import traitlets
from altair.jupyter.jupyter_chart import Params, collect_transform_params
from ipywidgets.widgets.widget import _remove_buffers

from winviz.viz import view_script

# The page's side (an anywidget ESM; vl-convert's bundle provides ``vegaEmbed``), after the
# drawing ahead it shares with exported pages (``view_script.SCRIPT``).
_WIDGET_JS = r"""
function debounce(fn, wait, maxWait) {
  let timer = null, first = null, last = null;
  const run = () => { timer = null; first = null; const a = last; last = null; fn(...a); };
  return function (...a) {
    last = a;
    const now = performance.now();
    if (first === null) first = now;
    if (timer !== null) clearTimeout(timer);
    if (maxWait && now - first >= wait) { run(); return; }
    timer = setTimeout(run, wait);
  };
}

// The charts of one explorer switch together (``_group``, module docstring).
const GROUP_WAIT_MS = 3000;
const groups = globalThis.__winvizGroups || (globalThis.__winvizGroups = new Map());
function joinGroup(id, wanted) {  // wanted(): the run the view's model asks for now
  const member = {wanted: wanted, offered: null};
  if (!id) {  // a chart of its own: placed at once
    return {offer: function (o) { o.commit(); }, leave: function () {}};
  }
  let group = groups.get(id);
  if (!group) groups.set(id, group = {members: new Set(), timer: null, run: null});
  group.members.add(member);
  function ready(m) { return m.offered !== null && m.offered.run === m.wanted(); }
  function commit(m) { const o = m.offered; m.offered = null; o.commit(); }
  function settle() {
    const all = Array.from(group.members);
    const waiting = all.filter(ready);
    if (!waiting.length) return;
    const run = waiting[0].offered.run;
    if (all.every(function (m) { return ready(m) && m.offered.run === run; })) {
      clearTimeout(group.timer);
      group.timer = null;
      all.forEach(commit);
      return;
    }
    if (group.timer !== null && group.run === run) return;
    clearTimeout(group.timer);
    group.run = run;
    group.timer = setTimeout(function () {  // a slow view: the others do not wait for ever
      group.timer = null;
      Array.from(group.members).filter(ready).forEach(commit);
    }, GROUP_WAIT_MS);
  }
  return {
    offer: function (o) {  // o: {run, commit(), discard()}
      if (member.offered) member.offered.discard();
      member.offered = o;
      settle();
    },
    leave: function () {
      if (member.offered) member.offered.discard();
      member.offered = null;
      group.members.delete(member);
      if (!group.members.size) { clearTimeout(group.timer); groups.delete(id); }
      else settle();
    },
  };
}

// JupyterLab saves the state of a kernel's live widgets only (``get_state_sync`` keeps the
// models whose comm is live), so a lesson reopened from its saved state and saved again
// before it is run would lose its charts' models: "model not found" when next opened
// (jupyter-widgets/ipywidgets#3888). Each save keeps the saved state of the models the
// notebook's outputs still show, and of the models they name (layouts, the Bundle).
const SAVED = "application/vnd.jupyter.widget-state+json";
function keepSaved(manager) {
  const context = manager && manager.context;
  if (!context || !context.model.getMetadata || manager.__winvizKeepsSaved) return;
  manager.__winvizKeepsSaved = true;
  const saved = ((context.model.getMetadata("widgets") || {})[SAVED] || {}).state;
  if (!saved) return;
  const live = manager.get_state_sync.bind(manager);
  manager.get_state_sync = function (options) {
    const state = live(options);
    const shown = JSON.stringify(context.model.toJSON().cells.map(c => c.outputs || []));
    const todo = Object.keys(saved).filter(id => shown.includes(id));
    while (todo.length) {
      const id = todo.pop();
      if (id in state.state) continue;
      state.state[id] = saved[id];
      const text = JSON.stringify(saved[id].state);
      todo.push(...Object.keys(saved).filter(other => text.includes(other)));
    }
    return state;
  };
}

async function render({ model, el }) {
  keepSaved(model.widget_manager);
  const slotBox = document.createElement("div");
  el.appendChild(slotBox);
  const slot = viewSlot(slotBox);
  let showing = false;  // a show() is running: a change of _params comes with its run
  let again_ = false;  // another change came meanwhile: show the latest once it is done
  let kernelDone = false;  // the kernel has sent every run it computed ahead for this one
  let shownKey = null;  // the key of the view in place
  el.dataset.ahead = "busy";
  const group = joinGroup(model.get("_group"), function () { return model.get("_run"); });

  function options() {
    const o = model.get("embed_options");
    return o == null ? undefined : structuredClone(o);
  }
  // data-ahead: "done" once the kernel's runs ahead are all drawn
  const ahead = aheadViews(options, function () {
    el.dataset.ahead = kernelDone && !ahead.busy() ? "done" : "busy";
  });

  model.on("msg:custom", function (msg) {
    if (msg.type === "ahead") {
      ahead.want(msg.key, () => [msg.spec]);
    } else if (msg.type === "keep") {  // (a run to show may still be waiting its turn)
      ahead.keep(new Set([...msg.keys, model.get("_key")]));
    } else if (msg.type === "done") {
      kernelDone = true;
      el.dataset.ahead = ahead.busy() ? "busy" : "done";
    }
  });
  // what the kernel sent ahead before this view listened is lost: it sends it again
  model.send({type: "ready"});

  // the page's own writes of _params / _vl_selections are not applied back to the view
  let fromPage = false;
  function save(attrs) {
    fromPage = true;
    try { model.set(attrs); } finally { fromPage = false; }
    model.save_changes();
  }

  function connect(view) {
    model.set("local_tz", Intl.DateTimeFormat().resolvedOptions().timeZone);
    const wait = model.get("debounce_wait") ?? 10;
    const maxWait = model.get("max_wait") ?? true;
    const current = () => slot.view() === view;
    // every value is read from the view when sent, never from the model (module docstring)
    const selectionNames = Object.keys(model.get("_vl_selections") ?? {});
    const paramNames = Object.keys(model.get("_params") ?? {});
    const state = () => ({
      _vl_selections: Object.fromEntries(selectionNames.map((name) => [name, {
        value: JSON.parse(JSON.stringify(view.signal(name) ?? {})),
        store: JSON.parse(JSON.stringify(view.data(name + "_store") ?? [])),
      }])),
      _params: Object.fromEntries(paramNames.map((name) => [name, view.signal(name) ?? null])),
    });
    const report = debounce(function () { if (current()) save(state()); }, wait, maxWait);
    for (const name of [...selectionNames, ...paramNames]) view.addSignalListener(name, report);
    save(state());
  }

  // the run the model names, made ready out of sight and offered to the group; placed by it
  async function show() {
    const key = model.get("_key"), run = model.get("_run"), call = model.get("_call");
    function shown(how) {
      shownKey = key;
      el.dataset.drawn = how;
      el.dataset.run = String(run);
      el.dataset.call = call;
    }
    if (key && key === shownKey && slot.view()) {  // the same view (a run shown again)
      group.offer({run: run, commit: () => shown(el.dataset.drawn), discard: () => {}});
      return;
    }
    const a = key ? ahead.take(key) : undefined;
    const made = a && a.made ? await a.made : null;
    let view = made ? made[0] : null;
    let failed = null;
    if (!view) {  // not drawn ahead (or its drawing failed: drawn now, with its error)
      let spec = null;
      if (a) spec = a.specs()[0];
      else if (model.get("_spec_key") === key) spec = structuredClone(model.get("spec"));
      else { model.send({type: "need"}); return; }  // sent ahead before this view started
      if (spec != null) {  // drawn in the holder of views ahead
        const div = document.createElement("div");
        ahead.holder.appendChild(div);
        try { view = {div: div, result: await embedView(div, spec, options())}; }
        catch (error) { div.remove(); failed = error; }
      }
    }
    const discard = () => { if (view) finalizeViews([view]); };
    if (model.get("_run") !== run) { discard(); return; }  // a later run came: latest wins
    group.offer({run: run, discard: discard, commit: function () {
      if (view) {
        slot.place(view);
        el.winvizView = view.result.view;
        shown(made ? "prepared" : "embedded");
        connect(view.result.view);
        return;
      }
      slot.embed(null);  // no spec, or its drawing failed: its error in place of the chart
      el.winvizView = null;
      shown("embedded");
      if (failed) {
        showError(slotBox, "JavaScript Error: " + failed.message);
        slotBox.lastChild.style.color = "red";  // (no page style sheet here)
      }
    }});
  }

  // latest wins: changes made while a run is made ready are not queued
  async function again() {
    performance.mark("winviz-show");  // a new run to show (bench/browser_bench.py)
    kernelDone = false;
    el.dataset.ahead = "busy";
    again_ = true;
    if (showing) return;
    showing = true;
    try {
      while (again_) {
        again_ = false;
        try { await show(); } catch (e) { console.error(e); }
      }
    } finally {
      showing = false;
    }
  }

  model.on("change:_params", function () {
    if (fromPage) return;
    Promise.resolve().then(async function () {  // after the rest of this update is set
      const view = slot.view();
      if (showing || !view) return;
      for (const [name, value] of Object.entries(model.get("_params") ?? {})) {
        if (view.signal(name) !== value) view.signal(name, value);
      }
      await view.runAsync();
    });
  });
  model.on("change", function (m) {  // one message may change several of them
    const names = ["spec", "_spec_key", "_key", "_run", "embed_options"];
    if (names.some((name) => m.hasChanged(name))) again();
  });
  await again();
  return function () {
    group.leave();
    ahead.close();
    slot.clear();
  };
}

globalThis.__winvizBundleLoads = (globalThis.__winvizBundleLoads || 0) + 1;
export default { render };
"""
ESM = view_script.SCRIPT + _WIDGET_JS
"""The widget's script: the drawing ahead it shares with exported pages, then its own side."""

LOADER = r"""
// The widget's module as anywidget loads it, per model: it imports the Vega bundle once per
// page, from the kernel's one Bundle widget (winviz.viz.explorer_chart).
const loaded = globalThis.__winvizBundles || (globalThis.__winvizBundles = new Map());
function bundled(model) {
  const sha = model.get("_bundle_sha");
  if (!loaded.has(sha)) {
    const module = model.widget_manager.get_model(model.get("_bundle")).then(function (b) {
      const url = URL.createObjectURL(new Blob([b.get("code")], {type: "text/javascript"}));
      return import(url).finally(function () { URL.revokeObjectURL(url); });
    });
    module.catch(function () { loaded.delete(sha); });  // (a later view tries again)
    loaded.set(sha, module);
  }
  return loaded.get(sha);
}
export default {
  async render(context) {
    const module = await bundled(context.model);
    return module.default.render(context);
  },
};
"""
"""The module of every ``ExplorerChart`` model (anywidget's ``_esm``)."""


class Bundle(widgets.Widget):
    """The widgets' bundled script (``ESM`` with vega-embed, Vega and Vega-Lite), held once
    per kernel: every ``ExplorerChart`` names it (``_bundle``), the page imports it once."""

    code = traitlets.Unicode("").tag(sync=True)


class ExplorerChart(alt.JupyterChart):
    """The ``alt.JupyterChart`` of one of an explorer's charts, whose spec (``spec.chart_dict``:
    datasets ``rows-1``, ``rows-2``, …) the explorer sets on a slider move (``show``): when
    the new chart has the same Vega parameters (names and kinds of value; no selections) it
    keeps ``params`` and sets their new initial values, else ``JupyterChart`` sets it up anew."""

    _quiet = False
    _key = traitlets.Unicode("").tag(sync=True)  # the shown spec's key (``prepare``)
    _spec_key = traitlets.Unicode("").tag(sync=True)  # the key of ``spec`` as last sent
    _run = traitlets.Int(0).tag(sync=True)  # the run shown (``Explorer.runs``)
    _call = traitlets.Unicode("").tag(sync=True)  # its pipeline call (``Explorer.call``)
    _group = traitlets.Unicode("").tag(sync=True)  # the explorer's id ("": a chart alone)
    _bundle = traitlets.Unicode("").tag(sync=True)  # the ``Bundle`` widget's model id
    _bundle_sha = traitlets.Unicode("").tag(sync=True)  # its SHA-256: imported once per page
    _unsent: frozenset[str] = frozenset()  # traits not to send (``_should_send_property``)
    _bundled: ClassVar[Bundle | None] = None
    _bundled_sha: ClassVar[str] = ""
    _esm = LOADER

    @classmethod
    def bundle(cls) -> Bundle:
        """The ``Bundle`` widget (``vl_convert.javascript_bundle`` for Altair's Vega-Lite
        version), made once per process (again if it was closed)."""
        if cls._bundled is None or cls._bundled.comm is None:
            import vl_convert

            version = "_".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
            code = vl_convert.javascript_bundle(ESM, vl_version=f"v{version}")
            cls._bundled = Bundle(code=code)
            cls._bundled_sha = hashlib.sha256(code.encode()).hexdigest()
        return cls._bundled

    def __init__(self, chart: Any, **kwargs: Any) -> None:
        bundle = self.bundle()
        if bundle is not None:  # (None: bench/explore_specs.py skips the bundling)
            kwargs.setdefault("_bundle", bundle.model_id)
            kwargs.setdefault("_bundle_sha", self._bundled_sha)
        super().__init__(chart, **kwargs)
        self._sent: set[str] = set()  # keys of the specs sent ahead to the page
        self.on_page: Callable[[], None] | None = None  # a view starts: resend the runs ahead
        self.on_msg(self._on_page_message)

    def _on_page_message(self, _: Any, content: Any, buffers: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ready":
            self._sent.clear()
            if self.on_page is not None:
                self.on_page()
        elif kind == "need":  # a view lacks the shown spec (sent ahead before it started)
            self.send_state(["spec", "_spec_key"])

    def _should_send_property(self, key: str, value: Any) -> bool:
        return key not in self._unsent and super()._should_send_property(key, value)

    def prepare(self, key: str, spec: dict[str, Any]) -> None:
        """Send ``spec`` to the page to be drawn out of sight under ``key`` (once per key)."""
        if key not in self._sent:
            self._sent.add(key)
            self.send({"type": "ahead", "key": key, "spec": spec})

    def keep(self, keys: set[str]) -> None:
        """Tell the page which keys' views it should still keep (the others are dropped)."""
        dropped = self._sent - keys
        if dropped:
            self._sent -= dropped
            self.send({"type": "keep", "keys": sorted(self._sent)})

    def send_state(self, key: Any = None) -> None:
        """``ipywidgets.Widget.send_state`` (the same message) without searching the spec, JSON
        with no bytes, for binary buffers (ipywidgets walks every data row)."""
        state = self.get_state(key=key)
        if not state:
            return
        if self._property_lock:  # as Widget.send_state: keep the lock's values current
            for name, value in state.items():
                if name in self._property_lock:
                    self._property_lock[name] = value
        spec = {name: state.pop(name) for name in ["spec"] if name in state}
        state, buffer_paths, buffers = _remove_buffers(state)
        state.update(spec)
        self._send({"method": "update", "state": state, "buffer_paths": buffer_paths}, buffers)

    @traitlets.observe("chart")
    def _on_change_chart(self, change: Any) -> None:
        if not self._quiet:
            super()._on_change_chart(change)

    def show(
        self, chart: Any, spec: dict[str, Any], key: str = "", run: int = 0, call: str = ""
    ) -> None:
        """Show ``chart`` (``spec``: its ``chart_dict``; ``key``: the key it was sent ahead
        under, ``prepare``) as the explorer's run ``run``."""
        initial = self._same_params(chart, spec)
        if initial is not None and key in self._sent:  # the page has it: its key is enough
            self._sent.discard(key)
            self._unsent = frozenset({"spec", "_spec_key"})
        try:
            with self.hold_sync():  # one message: the page draws the final spec once
                self._quiet = initial is not None  # (else JupyterChart's to_dict checks it)
                self.chart = chart
                self._quiet = False
                self.spec = spec
                self._spec_key = self._key = key
                self._run, self._call = run, call
                if initial is not None:
                    self._params = initial  # JupyterChart._on_change_params sets self.params
        finally:
            self._unsent, self._quiet = frozenset(), False

    def _same_params(self, chart: alt.TopLevelMixin, spec: dict[str, Any]) -> dict | None:
        """The new chart's parameters' initial values when they match the shown chart's."""
        if self._selection_types or self.spec is None:
            return None
        initial: dict[str, Any] = {}
        for param in spec.get("params", []):
            if "select" in param or not isinstance(param.get("name"), str):
                return None
            initial[param["name"]] = param.get("value")
        if collect_transform_params(chart):
            return None
        traits = self.params.traits()
        shown = set(self.params.trait_names()) - set(traitlets.HasTraits().trait_names())
        if set(initial) != shown or set(initial) != set(self._params):
            return None
        if any(
            type(traits[k]) is not type(Params({"p": v}).traits()["p"]) for k, v in initial.items()
        ):
            return None
        return initial
