"""``explore``: sliders and dropdowns that re-run a pipeline and redraw its charts in place.

    wv.explore(clicks, records,               # clicks(records, bound=1000, size=5000)
               bound=(0, 5000, 500),          # (min, max, step): an integer slider
               size=[1000, 5000, 10000],      # a list: a dropdown
               charts=("timeline", "scrubber"))

A change of an engine control (an ipywidget) calls the pipeline with every current value as a
keyword argument and sets each chart's new spec on its ``ExplorerChart``; a browser control (the
scrubber's processing time *t*, a Vega parameter) is synced back (``explorer.param("t")``). A
control starts at the pipeline's default for its parameter when it can take it, else at its
first value. A summary line follows every run; a run that raises shows its error in place of
the charts (``explorer.error``).

Drawing ahead: while the kernel is idle the explorer computes, one per event-loop callback, the
runs of the neighbouring control values (``neighbours``) into a small cache keyed on all the
values (``Ahead``): a change to one of them is shown at once, exact because the pipeline is
deterministic and a scrubber whose *t* moved since is redrawn (``Run.keep``). The collector is
paused while a run is made; a dropped run is freed once the kernel is idle (``Ahead.spent``).
A lesson page (no kernel) shows runs precomputed on a grid of the controls (``winviz.viz.grid``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import inspect
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import altair as alt
import ipywidgets as widgets
import numpy as np
from altair.utils.schemapi import debug_mode

from winviz import _charts
from winviz.collector import paused
from winviz.trace import Trace, restores, vocabulary
from winviz.viz import (
    fates,
    firings,
    grid,
    pages,
    palette,
    trace_view,
    value_texts,
    watermark_steps,
)
from winviz.viz.controls import (
    ControlValueError,  # noqa: F401 (imported from here too)
    check_control_value,
    is_dropdown,
    make_control,
    option_index,
    option_label,
    option_values,
)
from winviz.viz.explorer_chart import ExplorerChart
from winviz.viz.export import (
    EXPLORER_KEY,
    EXPORT_MIMETYPE,
    EXPORT_RENDERER,
    JUPYTER_EMBED_OPTIONS,
)
from winviz.viz.scrubber import PARAM as SCRUB_PARAM
from winviz.viz.spec import altair_chart, chart_dict

NO_DATA: Any = object()  # ``explore(fn)`` without data: fn is called with the values only

CHART_NAMES = tuple(_charts.EXPLORE_CHARTS)


@dataclass(frozen=True)
class Summary:
    """What a run did, from its trace: window firings by cause (``firings.fired_by``) and
    elements reaching window operators by fate (``fates.element_fates``) — as the run keeps
    them (``winviz.trace.restores``): the firings a restore rolled back are counted apart
    (``rolled_back_firings``), and an element the replay read again once, as read again
    (``read_again``: its first reading was rolled back)."""

    fired: int
    by_element: int
    by_event_time_timer: int
    by_processing_time_timer: int
    at_end_of_input: int
    elements: int
    on_time: int
    late_accepted: int
    dropped: int
    side_output: int
    by_session_merge: int = 0
    cause_not_traced: int = 0
    """Firings with no traced trigger call or timer; ``text()`` states these two when not 0."""
    late_firings: int = 0
    rolled_back_firings: int = 0
    read_again: int = 0

    def text(self) -> str:
        rare = "".join(
            f" · {name} {n}"
            for name, n in (
                ("session merge", self.by_session_merge),
                ("cause not traced", self.cause_not_traced),
            )
            if n
        )
        fired = f"{self.fired}{vocabulary.more_rolled_back(self.rolled_back_firings)}"
        elements = f"{self.elements}{vocabulary.read_again_after(self.read_again)}"
        return (
            f"fired {fired} (event-time timer {self.by_event_time_timer} · element "
            f"{self.by_element} · processing-time timer {self.by_processing_time_timer} · end "
            f"of input {self.at_end_of_input}{rare}) · {vocabulary.LATE_FIRING}s "
            f"{self.late_firings} · elements {elements}: on time "
            f"{self.on_time} · late, accepted {self.late_accepted} · dropped {self.dropped} · "
            f"side output {self.side_output}"
        )


def summarize(trace: Any) -> Summary:
    """The ``Summary`` of a trace (a Trace, its frame or a result with ``.trace``); raises
    TraceInputError when it cannot be read."""
    view = trace_view.open_trace(trace)
    rows = view.select("fired")
    undone = restores.undone(view.trace, rows)  # (all False without a restore: no scan)
    if undone.any():
        rows = rows[~undone]
    by = Counter(firings.fired_by(view, rows).tolist())  # (vocabulary.FIRED_BY's categories)
    counts = np.zeros(len(palette.FATES), dtype=np.int64)
    late_firings = read_again = 0
    for op in trace_view.window_operators(view):
        elements = fates.element_fate_columns(view, op)
        codes = elements["fate_code"]
        rolled_back = restores.undone(view.trace, np.asarray(elements["seq"]))
        if rolled_back.any():  # (a reading a restore rolled back: the replay reads it again)
            codes, read_again = codes[~rolled_back], read_again + int(rolled_back.sum())
        counts += np.bincount(codes, minlength=len(palette.FATES))
        late_firings += firings.late_firing_count(view, op)
    on_time, late_accepted, dropped, side_output = counts.tolist()
    return Summary(
        fired=len(rows),
        by_element=by["element"],
        by_event_time_timer=by["event-time timer"],
        by_processing_time_timer=by["processing-time timer"],
        at_end_of_input=by["end of input"],
        by_session_merge=by["session merge"],
        cause_not_traced=by["cause not traced"],
        elements=on_time + late_accepted + dropped + side_output,
        on_time=on_time,
        late_accepted=late_accepted,
        dropped=dropped,
        side_output=side_output,
        late_firings=late_firings,
        rolled_back_firings=int(undone.sum()),
        read_again=read_again,
    )


class Stages:
    """The time each stage of a run took, stage name → seconds: ``wall`` and ``cpu`` (this
    process's CPU time); ``with stages.time("engine"): ...``."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[name] = time.perf_counter() - wall
            self.cpu[name] = time.process_time() - cpu


@dataclass(frozen=True)
class Run:
    """One run of an explorer's pipeline (``Explorer.compute``): its values and call, and
    either its result, charts and summary, or the exception (``error``) and message cards;
    each chart's ``spec.chart_dict`` and the scrubber start time it was drawn with (``keep``);
    its number among the runs cached (``Ahead.put``: the page's key of its specs)."""

    values: dict[str, Any]
    call: str
    result: Any
    charts: list[alt.TopLevelMixin]
    summary: Summary | None
    error: BaseException | None
    stages: Stages
    keep: list[int | None]
    specs: list[dict[str, Any]]
    view: Any = None
    """What the named charts were drawn from (the trace's view, else the result)."""
    number: int = 0

    def status(self) -> str:
        """The line a page shows under the controls: the summary, or what raised."""
        if self.error is not None:
            return f"{_raised(self.call, self.error)}: {self.error}"
        return self.summary.text() if self.summary else ""


@dataclass(frozen=True)
class AtTime:
    """The run at processing time ``t``: the window operator's watermark in effect (None
    before the first), the (key, window) panes fired (a late firing is not another pane) and
    the elements arrived by t — after a restore, what its checkpoint kept plus what the replay
    redid by t (``restores.kept_at``); ``restarted``: the last restore by t, in the charts'
    words ("restarted from checkpoint 1 at 12,100 ms"), else None."""

    t: int
    operator: str | None
    watermark: int | None
    fired: int
    elements: int
    restarted: str | None = None

    def text(self) -> str:
        wm = "none yet" if self.watermark is None else palette.format_time(self.watermark)
        restart = "" if self.restarted is None else f" · {self.restarted}"
        return (
            f"at t = {palette.format_time(self.t)}: watermark {wm} · {self.fired} window(s) "
            f"fired · {self.elements} element(s) arrived{restart}"
        )


def state_at(trace: Any, t: int) -> AtTime:
    """``AtTime`` of a trace's first window operator at processing time ``t`` (a pane: a
    distinct (key, window) fired, keys told apart as the engine does, ``value_texts.key_texts``)."""
    view = trace_view.open_trace(trace)
    ops = trace_view.window_operators(view) or view.operators("element")
    if not ops:
        return AtTime(t=int(t), operator=None, watermark=None, fired=0, elements=0)

    spans = restores.rolled_back(view.trace) if len(view.select("restore")) else []

    def by_t(kind: str) -> np.ndarray:
        rows = view.select(kind, operator=ops[0])
        return restores.kept_at(rows, view.numbers("proc_time", rows), t, spans)

    marks, fired = by_t("watermark"), by_t("fired")
    restarted = [
        f"{r.words()} at {palette.format_time(r.proc_time)}"
        for r in watermark_steps.restarts(view)
        if r.failed_at is not None and r.proc_time <= t
    ]
    panes = 0
    if len(fired):
        keys = value_texts.key_texts(view.column("key", fired))
        windows = [value_texts.short(w, 200) for w in view.column("window", fired).tolist()]
        panes = len(set(zip(keys, windows, strict=True)))
    return AtTime(
        t=int(t),
        operator=ops[0],
        watermark=view.column("watermark", marks[-1:])[0] if len(marks) else None,
        fired=panes,
        elements=len(by_t("element")),
        restarted=restarted[-1] if restarted else None,
    )


AHEAD_GAP_S = 0.02  # before each neighbour's run: the event loop polls its sockets meanwhile
KEPT_RUNS = 2  # runs kept besides the neighbours: the one shown and the one before it

ControlKey = tuple[tuple[str, Hashable], ...]


def control_key(
    controls: Mapping[str, widgets.Widget], values: Mapping[str, Any]
) -> ControlKey | None:
    """The cache key of these control values: per control its name and, for a dropdown, the
    index of the option (options need not be hashable), else the value; None when a value is
    unhashable (the run is not cached)."""
    key = []
    for name, widget in controls.items():
        value = values[name]
        if is_dropdown(widget):
            index = option_index(option_values(widget), value)
            if index is None:
                return None
            key.append((name, ("option", index)))
            continue
        try:
            hash(value)
        except TypeError:
            return None
        key.append((name, (type(value).__name__, value)))
    return tuple(key)


def neighbours(
    controls: Mapping[str, widgets.Widget],
    values: Mapping[str, Any],
    moved: str | None = None,
    direction: int = 1,
) -> list[dict[str, Any]]:
    """The control values one step from ``values``: each slider one ``step`` down and up
    within ``[min, max]``, each dropdown its previous and next option; the control ``moved``
    last comes first, its ``direction`` (+1 up, -1 down) first. Other widgets have none."""
    found: list[dict[str, Any]] = []
    for name in sorted(controls, key=lambda name: name != moved):
        widget, value = controls[name], values[name]
        for step in (direction, -direction) if name == moved else (1, -1):
            if is_dropdown(widget):
                options = option_values(widget)
                index = option_index(options, value)
                at = -1 if index is None else index + step  # (options[-1:0] is empty)
                found.extend({**values, name: v} for v in options[at : at + 1])
            elif isinstance(widget, (widgets.IntSlider, widgets.FloatSlider)):
                new = value + step * widget.step
                if isinstance(widget, widgets.FloatSlider):  # on the grid, as the browser steps
                    new = widget.min + round((new - widget.min) / widget.step) * widget.step
                if widget.min <= new <= widget.max:
                    found.append({**values, name: new})
    return found


def _direction(widget: widgets.Widget | None, change: Mapping[str, Any]) -> int:
    """+1 when a control moved up (a larger value, a later option), else -1."""
    old, new = change.get("old"), change.get("new")
    if widget is not None and is_dropdown(widget):
        values = option_values(widget)
        old, new = option_index(values, old) or 0, option_index(values, new) or 0
    try:
        return 1 if new > old else -1
    except TypeError:
        return 1


class Ahead:
    """The explorer's cache of runs by control values (``control_key``), least recently used
    first, holding at most ``limit`` runs, and the queue of values still to compute."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ready: OrderedDict[ControlKey, Run] = OrderedDict()
        self.queue: list[dict[str, Any]] = []
        self.spent: list[Any] = []  # runs dropped from the cache or from view: freed when idle
        self.computed = 0  # runs put so far (the last one's ``Run.number``)

    def get(self, key: ControlKey | None) -> Run | None:
        if key is None or key not in self.ready:
            return None
        self.ready.move_to_end(key)
        return self.ready[key]

    def put(self, key: ControlKey, run: Run, wanted: set[ControlKey]) -> Run:
        """Keep ``run`` under ``key``, numbered after the runs before it, and return it; drop
        the least recently used runs not ``wanted`` while there are more than ``limit``."""
        self.computed += 1
        run = self.ready[key] = dataclasses.replace(run, number=self.computed)
        self.ready.move_to_end(key)
        for old in list(self.ready):
            if len(self.ready) <= self.limit:
                break
            if old not in wanted:
                self.spent.append(self.ready.pop(old))
        return run

    def clear(self) -> None:
        self.ready.clear()
        self.queue.clear()
        self.spent.clear()


# -- the explorer -------------------------------------------------------------------------------


class Explorer:
    """The controls, summary line and charts of one ``explore(...)`` call (module docstring).

    ``controls``, ``charts``, ``summary``, ``status`` and ``at_t`` are the live widgets; after
    each run ``result``, ``error``, ``runs`` (shown), ``ahead_runs`` (computed into ``ahead``;
    ``last_ahead``: the last shown was one), ``last_values``, ``last_stages`` and ``last_at``."""

    def __init__(
        self,
        pipeline: Callable[..., Any],
        data: Any,
        controls: Mapping[str, Any],
        charts: Sequence[str | Callable[[Any], alt.TopLevelMixin]],
    ) -> None:
        if not callable(pipeline):
            raise TypeError(f"explore: the pipeline must be a function, got {pipeline!r}")
        self.pipeline = pipeline
        self.data = data
        self._chart_fns = [_chart_function(c) for c in charts]
        self._uses_t = [isinstance(c, str) and c == "scrubber" for c in charts]  # draws its t
        if not self._chart_fns:
            raise ValueError("explore: charts must name at least one chart")
        defaults = _defaults(pipeline, list(controls), data is not NO_DATA)
        self.controls: dict[str, widgets.Widget] = {
            name: make_control(name, spec, defaults.get(name, inspect.Parameter.empty))
            for name, spec in controls.items()
        }
        self.result: Any = None
        self.error: BaseException | None = None
        self.runs = self.ahead_runs = 0
        self.last_values: dict[str, Any] = {}
        self.last_stages = Stages()
        self.last_summary: Summary | None = None
        self.last_at: AtTime | None = None
        self.last_ahead = False
        self._kept_t: list[int | None] = [None] * len(self._chart_fns)
        self._holding = False
        self.summary, self.status, self.at_t = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.ahead = Ahead(limit=2 * len(self.controls) + KEPT_RUNS)
        self._moved: tuple[str | None, int] = (None, 1)
        self._wanted: set[ControlKey] = set()
        self._ahead_handle: asyncio.TimerHandle | None = None
        self._group = secrets.token_hex(8)  # the page switches the charts together
        self.page_changes = 0  # the controls' changes made in the page (``_on_change``)
        run = self.compute(self.values)
        # the first charts are validated once, by JupyterChart's to_dict; their specs then come
        # from chart_dict like every update's (the same content, datasets named rows-N)
        self.charts = [
            ExplorerChart(
                _altair(c),
                embed_options=JUPYTER_EMBED_OPTIONS,
                _group=self._group,
                _run=self.runs,
                _call=run.call,
            )
            for c in self._show(run)
        ]
        for jc, spec in zip(self.charts, run.specs, strict=True):
            jc.spec = spec
            jc.on_page = self._plan_ahead  # a new view in the page: send the runs again
        self._remember(run)
        for widget in self.controls.values():
            widget.observe(self._on_change, names="value")
        self._watch_scrubbers()
        controls = widgets.VBox(list(self.controls.values()))
        self.widget = widgets.VBox([controls, self.summary, self.status, *self.charts, self.at_t])
        self._plan_ahead()

    @property
    def values(self) -> dict[str, Any]:
        """The controls' current values (the keyword arguments of the next run)."""
        return {name: w.value for name, w in self.controls.items()}

    def param(self, name: str, chart: int | None = None) -> Any:
        """The browser's value of the Vega parameter ``name`` in chart number ``chart`` (else
        the first chart that has it); ``explorer.param("t")``: the scrubber's time."""
        pool = self.charts if chart is None else [self.charts[chart]]
        for jc in pool:
            if name in jc.params.trait_names():
                return getattr(jc.params, name)
        raise KeyError(f"no chart has a Vega parameter {name!r}")

    def specs(self) -> list[dict[str, Any]]:
        """The current Vega-Lite spec of every chart (what the browser shows)."""
        return [jc.spec for jc in self.charts]

    def _on_change(self, change: dict[str, Any]) -> None:
        """A control changed: re-run now (a burst of key presses in the page is computed as its
        first value and its latest: ipywidgets merges those made meanwhile)."""
        name = next((n for n, w in self.controls.items() if w is change.get("owner")), None)
        self._moved = (name, _direction(self.controls.get(name), change))
        if getattr(change.get("owner"), "_property_lock", None):  # (set while syncing)
            self.page_changes += 1
        if not self._holding:
            self.update()

    def set(self, **values: Any) -> None:
        """Set several controls at once and re-run the pipeline once."""
        unknown = [n for n in values if n not in self.controls]
        if unknown:
            raise KeyError(
                f"no control named {unknown[0]!r}; the controls are {', '.join(self.controls)}"
            )
        for name, value in values.items():
            check_control_value(name, self.controls[name], value)
        self._holding = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._holding = False
        if values:
            self._moved = (list(values)[-1], 1)
        self.update()

    def update(self) -> None:
        """Show the run of the current values (computed now, or ahead: ``last_ahead``, its
        scrubbers redrawn where their t moved) and plan the neighbours ahead."""
        self.ahead.spent.clear()  # (left by the last change when no event loop freed them)
        # the scrubbers' t as the learner left it (kept through a failed run's message card)
        self._kept_t = self._keep_now()
        key = control_key(self.controls, self.values)
        # Altair's schema checks were made on the first run's charts, of the same shape
        with paused(), debug_mode(False):
            cached = self.ahead.get(key)
            self.last_ahead = cached is not None
            if cached is not None:
                stages, keep = Stages(), self._kept_t
                with stages.time("ahead"):
                    redo = [
                        i
                        for i, (was, now) in enumerate(zip(cached.keep, keep, strict=True))
                        if self._uses_t[i] and was != now and cached.error is None
                    ]
                    if redo:
                        charts, specs = list(cached.charts), list(cached.specs)
                        for i in redo:
                            charts[i] = self._chart_fns[i](cached.result, cached.view, keep[i])
                            specs[i] = chart_dict(charts[i])
                        cached = self.ahead.ready[key] = dataclasses.replace(
                            cached, charts=charts, specs=specs, keep=list(keep)
                        )
                run = dataclasses.replace(cached, stages=stages)
            else:
                run = self.compute(self.values, self._kept_t)
                cached = self._remember(run)
            charts = self._show(run)
            with self.last_stages.time("widget"):
                for i, (jc, chart) in enumerate(zip(self.charts, charts, strict=True)):
                    key_i = self._chart_key(cached, i)
                    jc.show(_altair(chart), run.specs[i], key_i, self.runs, run.call)
        with self.last_stages.time("at_t"):
            self._watch_scrubbers()
        self._plan_ahead()
        # the runs dropped meanwhile are freed once the change is shown (without an event
        # loop: at the next change or work_ahead())
        with suppress(RuntimeError):
            asyncio.get_running_loop().call_soon(self.ahead.spent.clear)

    def _keep_now(self) -> list[int | None]:
        """Each scrubber's t in the browser now (else the one it had before a message card)."""
        now = [_scrub_t(getattr(jc.params, SCRUB_PARAM, None)) for jc in self.charts]
        return [old if t is None else t for t, old in zip(now, self._kept_t, strict=True)]

    def _remember(self, run: Run) -> Run | None:
        """Keep a run in the cache under its values: the run numbered (None: not cached)."""
        key = control_key(self.controls, run.values)
        if key is None:
            return None
        return self.ahead.put(key, run, self._wanted | {key})

    def _chart_key(self, run: Run | None, i: int) -> str:
        """The page's key of chart ``i``'s spec of a cached run (``ExplorerChart.prepare``)."""
        if run is None:
            return ""
        return f"{run.number}:{i}:{run.keep[i] if self._uses_t[i] else ''}"

    def _plan_ahead(self) -> None:
        """Queue the neighbours of the shown values and schedule them."""
        moved, direction = self._moved
        wanted = neighbours(self.controls, self.values, moved, direction)
        keys = [control_key(self.controls, v) for v in wanted]
        current = control_key(self.controls, self.values)
        self._wanted = {k for k in [*keys, current] if k is not None}
        self.ahead.queue = [v for v, k in zip(wanted, keys, strict=True) if k is not None]
        kept = [self.ahead.ready[k] for k in keys if k in self.ahead.ready]
        for i, jc in enumerate(self.charts):  # the page keeps the views of these runs only
            jc.keep({self._chart_key(r, i) for r in kept})
        self._schedule_ahead()

    def _schedule_ahead(self) -> None:
        """Schedule the next queued neighbour (one per event-loop callback, ``AHEAD_GAP_S``
        apart), or tell the page it has every run ahead."""
        if self._ahead_handle is not None:
            self._ahead_handle.cancel()
            self._ahead_handle = None
        if not self.ahead.queue:
            for jc in self.charts:  # the page has every run computed ahead for the shown one
                jc.send({"type": "done"})
            return
        with suppress(RuntimeError):  # no event loop (a script): work_ahead() when asked
            loop = asyncio.get_running_loop()
            self._ahead_handle = loop.call_later(AHEAD_GAP_S, self.work_ahead, 1)

    def work_ahead(self, most: int | None = None) -> int:
        """Compute the queued neighbours not cached yet (at most ``most``), cache them and send
        them to the page; return how many runs it made (without an event loop: for scripts and
        tests). A run whose spec cannot be written is not cached: a change to it shows the error."""
        done, queue = 0, self.ahead.queue
        for _ in range(len(queue) if most is None else min(most, len(queue))):
            values = queue.pop(0)
            cached = self.ahead.get(control_key(self.controls, values))
            if cached is None:
                try:
                    with paused(), debug_mode(False):
                        run = self.compute(values, self._keep_now())
                except Exception:
                    continue
                done, self.ahead_runs = done + 1, self.ahead_runs + 1
                cached = self._remember(run)
            if cached is not None:  # (None: values that cannot be a key are not cached)
                for i, (jc, spec) in enumerate(zip(self.charts, cached.specs, strict=True)):
                    jc.prepare(self._chart_key(cached, i), spec)
        self.ahead.spent.clear()
        self._schedule_ahead()
        return done

    def _watch_scrubbers(self) -> None:
        """Follow the scrubber's t as the browser moves it (again after each update: a new
        chart may have a new ``params``)."""
        for jc in self.charts:
            if SCRUB_PARAM in jc.params.trait_names():
                jc.params.observe(self._on_scrub, names=SCRUB_PARAM)
                self._on_scrub({"new": getattr(jc.params, SCRUB_PARAM)})

    def _on_scrub(self, change: dict[str, Any]) -> None:
        t = _scrub_t(change["new"])
        if self.result is None or t is None:
            self.at_t.value = ""
            return
        self.last_at = state_at(self.result, t)
        self.at_t.value = html.escape(self.last_at.text())

    @paused()
    def compute(self, values: Mapping[str, Any], keep: list[int | None] | None = None) -> Run:
        """The ``Run`` of ``values`` (the pipeline's keyword arguments), leaving the explorer
        as it is; ``keep``: the time each scrubber starts at (None: the end of the run)."""
        values = dict(values)
        keep = list(keep or [None] * len(self._chart_fns))
        call, stages, error = self.call(values), Stages(), None
        try:
            with stages.time("engine"):
                result = (
                    self.pipeline(**values)
                    if self.data is NO_DATA
                    else self.pipeline(self.data, **values)
                )
            if result is None:
                raise TypeError(
                    f"the pipeline {_name(self.pipeline)} returned None; it must return the "
                    "result of env.execute() (or its trace)"
                )
            with stages.time("read"):  # one view: the charts and summary share its tables
                trace = result if isinstance(result, Trace) else getattr(result, "trace", None)
                # (without a trace: the result, the charts say what is missing)
                view = trace_view.TraceView(trace) if isinstance(trace, Trace) else result
            with stages.time("charts"):
                charts = [
                    fn(result, view, at) for fn, at in zip(self._chart_fns, keep, strict=True)
                ]
            with stages.time("summary"):
                summary = summarize(view)
        except Exception as exc:  # shown in place, kept on the explorer: not swallowed
            card = palette.message_chart(
                "The pipeline failed for these values.",
                f"{_raised(call, exc)}: {exc}. Change a control to try other values; the "
                "exception is kept in explorer.error.",
                chart="explore",
            )
            charts, result, summary, view, error = [card] * len(keep), None, None, None, exc
        with stages.time("spec"):
            specs = [chart_dict(chart) for chart in charts]
        return Run(values, call, result, charts, summary, error, stages, keep, specs, view)

    def _show(self, run: Run) -> list[alt.TopLevelMixin]:
        """Make ``run`` the explorer's current run (result, error, summary and status line,
        ``last_stages``) and return its charts."""
        self.last_stages = run.stages
        self.last_values = run.values
        self.ahead.spent.append(self.result)
        self.runs += 1
        self.error, self.result, self.last_summary = run.error, run.result, run.summary
        if run.error is not None:
            raised = html.escape(_raised(run.call, run.error))
            self.status.value = (
                f'<div style="color:{palette.ERROR_INK}"><b>{raised}</b>: '
                f"{html.escape(str(run.error))}</div>"
            )
            self.summary.value = ""
            self.at_t.value, self.last_at = "", None
        else:
            self.status.value = ""
            self.summary.value = html.escape(run.summary.text())
        return run.charts

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if alt.renderers.active == EXPORT_RENDERER:  # make lessons: runs on the slider grid
            return {
                EXPORT_MIMETYPE: {EXPLORER_KEY: grid.export_grid(self)},
                # plain text (the page writer escapes it), not the widget's escaped HTML
                "text/plain": f"{self!r}: {self.last_summary.text() if self.last_summary else ''}",
            }
        return self.widget._repr_mimebundle_(**kwargs)

    def call(self, values: dict[str, Any]) -> str:
        """The pipeline call a run at ``values`` stands for: ``fn(data, k=v, ...)``."""
        args = (["data"] if self.data is not NO_DATA else []) + [
            f"{k}={option_label(v) if not isinstance(v, str) else repr(v)}"
            for k, v in values.items()
        ]
        return f"{_name(self.pipeline)}({', '.join(args)})"

    def page(self, *, title: str = "winviz explorer") -> str:
        """The explorer on a page of its own, as a lesson page shows it (``save_html`` writes
        it): its runs precomputed on its slider grid (``grid.export_grid``)."""
        payload = grid.export_grid(self)
        markup, _ = pages.explorer_html({"text/plain": repr(self)}, payload, grid.MAX_BYTES)
        return pages.page(markup, title=title, what="the explorer page")

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"<Explorer {_name(self.pipeline)}({values}): {self.runs} run(s)>"


def explore(
    pipeline: Callable[..., Any],
    data: Any = NO_DATA,
    *,
    charts: Sequence[str | Callable[[Any], alt.TopLevelMixin]] = ("timeline",),
    **controls: Any,
) -> Explorer:
    """An ``Explorer`` (module docstring): ``pipeline(data, **values)`` (without ``data``:
    ``pipeline(**values)``) returns ``env.execute()``'s result or a Trace; ``charts``: names
    (``CHART_NAMES``) or functions result → chart; ``controls``: per parameter ``(min, max,
    step[, value])`` (a slider), a list or dict (a dropdown) or a widget; bad ones raise at once."""
    return Explorer(pipeline, data, controls, charts)


def _defaults(pipeline: Callable[..., Any], names: list[str], with_data: bool) -> dict[str, Any]:
    """The pipeline's default for each control; raises ValueError for a control the pipeline
    cannot take."""
    try:
        sig = inspect.signature(pipeline)
    except (TypeError, ValueError):  # a builtin without a signature: take it on trust
        return {}
    params = list(sig.parameters.values())
    by_name = {
        p.name: p
        for p in params[1 if with_data else 0 :]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    unknown = [n for n in names if n not in by_name]
    if unknown and all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in params):
        raise ValueError(
            f"explore: {_name(pipeline)} has no parameter {unknown[0]!r} for the control of "
            f"that name; its parameters are {', '.join(by_name) or '(none)'}"
        )
    return {n: by_name[n].default for n in names if n in by_name}


def _chart_function(chart: str | Callable[..., Any]) -> Callable[[Any, Any, int | None], Any]:
    """A function (result, its trace's view, scrubber start time) → chart for a chart name or
    a user's function (given the result)."""
    if callable(chart):
        return lambda result, view, at: chart(result)
    if chart not in CHART_NAMES:
        raise ValueError(
            f"explore: unknown chart {chart!r}; choose from {', '.join(CHART_NAMES)} or pass "
            "a function result → chart"
        )
    fn = _charts.load(chart).vega_lite  # the chart's dict (palette.public_chart)
    if chart == "scrubber":
        return lambda result, view, at: fn(view, at=at)
    return lambda result, view, at: fn(view)


def _raised(call: str, error: BaseException) -> str:
    """What a failed run's messages say first: the call and the exception's type."""
    return f"{call} raised {type(error).__name__}"


def _scrub_t(value: Any) -> int | None:
    """The scrubber's t as the browser synced it; None when it is no number (unset, NaN)."""
    return int(value) if isinstance(value, (int, float)) and value == value else None


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _altair(chart: Any) -> Any:
    """A chart dict as its Altair chart, for the widget; an Altair chart as it is."""
    return altair_chart(chart) if isinstance(chart, dict) else chart
