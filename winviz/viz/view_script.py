"""The script of every view the kit draws in a browser, exported page and notebook widget alike.

Drawing ahead (``aheadViews``): the runs next to the shown one are drawn out of sight when the
browser is idle, and choosing one moves its views into place (``viewSlot.place``) instead of
drawing them (``viewSlot.embed``). The scrubber's replay (``replay``): while "play" is ticked,
``t`` advances by the spec's ``usermeta.winviz.replay`` settings (``view.signal().runAsync()``).
The exported page (``winviz.viz.pages``) and the widget (``winviz.viz.explorer_chart``) run
``SCRIPT`` first. No Flink class is mirrored: this is the kit's drawing step.
"""

from __future__ import annotations

SCRIPT = """
// -- winviz.viz.view_script: shared by the page script and the widget ---------------------
function idle() {  // the browser is idle (or 500 ms have passed)
  return new Promise(function (resolve) {
    if (window.requestIdleCallback) window.requestIdleCallback(function () { resolve(); },
      {timeout: 500});
    else setTimeout(resolve, 0);
  });
}
function showError(box, message) {  // a chart not drawn: the message as text (a <pre>)
  const p = document.createElement("pre");
  p.className = "winviz-chart-error";
  p.textContent = message;
  box.appendChild(p);
  console.error(message);
}
// The scrubber's replay (its settings: usermeta.winviz.replay, scrubber.replay_settings):
// while "play" is ticked, t advances by step every tick_ms ms, and "play" unticks itself when
// t reaches the end (or was moved there); ticked at the end, it starts again at min. Signal
// listeners only schedule ticks (a run inside one is refused: the dataflow is running).
// Returns what stops it.
function replay(view, spec) {
  const s = ((spec.usermeta || {}).winviz || {}).replay;
  if (!s) return function () {};
  let timer = null;
  let stopped = false;
  let fromEnd = false;  // ticked at the end: the next tick starts again
  function later(ms) {
    if (!stopped && timer === null && view.signal(s.switch)) timer = setTimeout(tick, ms);
  }
  function tick() {
    timer = null;
    if (stopped || !view.signal(s.switch)) return;
    const started = performance.now();
    const t = view.signal(s.param);
    const next = t < s.max ? Math.min(s.max, t + s.step) : fromEnd ? s.min : t;
    fromEnd = false;
    view.signal(s.param, next);
    if (next >= s.max) view.signal(s.switch, false);
    view.runAsync().then(function () {  // the next tick: tick_ms after this one started
      later(Math.max(0, s.tick_ms - (performance.now() - started)));
    });
  }
  view.addSignalListener(s.switch, function (name, on) {
    if (on && timer === null) fromEnd = view.signal(s.param) >= s.max;
    later(s.tick_ms);
  });
  later(s.tick_ms);
  return function () { stopped = true; clearTimeout(timer); };
}
function embedView(div, spec, options) {  // vegaEmbed, and the replay of a scrubber
  return vegaEmbed(div, spec, options).then(function (result) {
    const stop = replay(result.view, spec);
    const finalize = result.finalize;
    result.finalize = function () { stop(); finalize(); };
    return result;
  });
}
function finalizeViews(views) {
  (views || []).forEach(function (v) { v.result.finalize(); v.div.remove(); });
}
// One place of a view (box: its div.winviz-view child is the view shown): a view drawn
// ahead is moved into it, or a spec is drawn in it. box.winvizView: the view shown.
function viewSlot(box) {
  let shown = null;  // {div, result}
  function swap(div) {
    if (shown) shown.result.finalize();
    shown = null;
    div.classList.add("winviz-view");
    const old = box.querySelector(":scope > div.winviz-view");
    if (old) box.replaceChild(div, old);
    else box.appendChild(div);
  }
  return {
    view: function () { return shown && shown.result.view; },
    place: function (made) {
      swap(made.div);
      shown = made;
      box.winvizView = made.result.view;
    },
    embed: function (spec, options) {  // a Promise of the view (null: no spec)
      const div = document.createElement("div");
      swap(div);
      if (spec == null) return Promise.resolve(null);
      return embedView(div, spec, options).then(function (result) {
        shown = {div: div, result: result};
        box.winvizView = result.view;  // for checks reading the rendered scenegraph
        return result.view;
      });
    },
    clear: function () { if (shown) shown.result.finalize(); shown = null; },
  };
}
// The runs drawn ahead, by key: want(key, specs) asks for one (specs: a function giving the
// run's specs, or null when it is not to be drawn ahead), drawn one at a time when the browser
// is idle, in the order asked; keep(keys) drops the others; take(key) hands one over ({made: a
// Promise of its views, or null}; undefined: never asked). settled() is called when the last
// one asked is drawn; busy() says whether any is still to draw.
function aheadViews(options, settled) {
  const holder = document.createElement("div");
  holder.className = "winviz-prepared";
  holder.setAttribute("aria-hidden", "true");
  holder.style.cssText = "position:absolute;left:0;top:0;visibility:hidden;pointer-events:none";
  document.body.appendChild(holder);
  const runs = new Map();  // key -> {specs, made: null (not yet) or a Promise of views or null}
  let drawing = false;
  let alive = true;
  function drawn(specs) {  // a Promise of the views of specs, or null (drawn when chosen)
    return Promise.allSettled((specs || []).map(function (spec) {
      const div = document.createElement("div");
      holder.appendChild(div);
      return embedView(div, spec, options()).then(function (result) {
        return {div: div, result: result};
      }, function (e) { div.remove(); throw e; });
    })).then(function (all) {
      const views = all.filter(function (a) { return a.status === "fulfilled"; })
        .map(function (a) { return a.value; });
      if (specs && views.length === all.length) return views;
      finalizeViews(views);
      return null;
    });
  }
  async function draw() {
    if (drawing) return;
    drawing = true;
    try {
      for (;;) {
        const next = Array.from(runs.entries()).find(function (e) { return e[1].made === null; });
        if (!next || !alive) break;
        await idle();
        const key = next[0], run = next[1];
        if (runs.get(key) !== run || run.made !== null) continue;
        run.made = Promise.resolve().then(run.specs).then(drawn)
          .catch(function () { return null; });
        await run.made;
      }
    } finally {
      drawing = false;
      settled();
    }
  }
  function drop(run) { if (run.made) run.made.then(finalizeViews); }
  return {
    holder: holder,
    want: function (key, specs) {
      if (!runs.has(key)) runs.set(key, {specs: specs, made: null});
      draw();
    },
    keep: function (keys) {
      Array.from(runs.entries()).forEach(function (e) {
        if (!keys.has(e[0])) { runs.delete(e[0]); drop(e[1]); }
      });
    },
    take: function (key) {
      const run = runs.get(key);
      runs.delete(key);
      return run;
    },
    busy: function () {
      return drawing || Array.from(runs.values()).some(function (r) { return r.made === null; });
    },
    close: function () {
      alive = false;
      runs.forEach(drop);
      runs.clear();
      holder.remove();
    },
  };
}
// -----------------------------------------------------------------------------------------
"""
"""The shared script's function declarations (the page's script and the widget's module start
with it)."""
