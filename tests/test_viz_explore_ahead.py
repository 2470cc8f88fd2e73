"""Runs computed ahead by an explorer (winviz.viz.explore): the neighbours of the shown control
values, computed when the kernel is idle and shown on the change to them.

Every served run must be the run a fresh explorer draws at those values: the specs are
compared as JSON, byte for byte (datasets are named rows-N by ``spec.chart_dict``, so equal
charts give equal text). The job is tests/jobs.py's ``counts`` over its six ``RECORDS``."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref

import ipywidgets as widgets
from jobs import RECORDS, counts

from winviz.viz.explore import Explorer, explore, neighbours


class Recorder:
    """The pipeline, recording the values of every call (the explorer's runs and those it
    computes ahead)."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.during: list = []  # functions called inside the next call (a message arriving)

    def __call__(self, records, bound=1000, lateness=0, size=5000):
        self.calls.append({"bound": bound, "lateness": lateness, "size": size})
        while self.during:
            self.during.pop(0)()
        return counts(records, bound, lateness, size)


CONTROLS = {"bound": (0, 5000, 500), "lateness": (0, 10000, 1000), "size": [2000, 5000, 10000]}


def make(run=None, charts=("propagation_chart", "timeline")) -> Explorer:
    return explore(run or Recorder(), RECORDS, charts=charts, **CONTROLS)


def test_a_dropdown_of_the_learners_own_offers_its_options_values() -> None:
    """A Dropdown widget passed as a control with a dict label → value: its values are the
    dict's values (as ipywidgets reads them), for ``set`` and for the runs ahead."""
    size = widgets.Dropdown(options={"5 s": 5000, "10 s": 10000})
    ex = explore(lambda records, size=5000: counts(records, 1000, 0, size), RECORDS, size=size)
    assert neighbours(ex.controls, ex.values) == [{"size": 10000}]
    ex.set(size=10000)
    assert ex.values == {"size": 10000} and ex.error is None and ex.runs == 2


def fresh_specs(values: dict, charts=("propagation_chart", "timeline"), t=None) -> str:
    """The specs a new explorer draws at ``values`` (its scrubber at ``t``), as JSON text."""
    ex = make(charts=charts)
    if t is not None:
        ex.charts[0]._params = {"t": t}
    ex.set(**values)
    assert not ex.last_ahead
    return json.dumps(ex.specs())


def test_the_neighbours_are_one_step_of_each_control_the_moved_one_first() -> None:
    ex = make()
    ex.set(bound=500, lateness=0, size=5000)
    assert neighbours(ex.controls, ex.values, moved="size", direction=-1) == [
        {"bound": 500, "lateness": 0, "size": 2000},  # the way it moved first
        {"bound": 500, "lateness": 0, "size": 10000},
        {"bound": 1000, "lateness": 0, "size": 5000},
        {"bound": 0, "lateness": 0, "size": 5000},
        {"bound": 500, "lateness": 1000, "size": 5000},  # lateness 0 has no step down
    ]


def test_a_neighbour_is_served_from_the_cache_exactly_as_a_fresh_run() -> None:
    run = Recorder()
    ex = make(run)
    assert run.calls == [{"bound": 1000, "lateness": 0, "size": 5000}]
    assert ex.work_ahead() == 5  # bound 1500, 500; lateness 1000; size 2000, 10000
    assert ex.ahead_runs == 5 and len(run.calls) == 6 and ex.runs == 1
    ex.controls["bound"].value = 1500
    assert ex.last_ahead and len(run.calls) == 6  # no pipeline call: the run was ready
    assert ex.runs == 2 and ex.last_values == {"bound": 1500, "lateness": 0, "size": 5000}
    assert list(ex.last_stages.wall) == ["ahead", "widget", "at_t"]
    assert json.dumps(ex.specs()) == fresh_specs({"bound": 1500})
    assert ex.result.outputs["counts"] == counts(RECORDS, bound=1500).outputs["counts"]
    assert ex.summary.value.startswith("fired 3 ")
    # the next neighbours, bound 2000 first (the way it moved), then back to 1000
    assert ex.ahead.queue[:2] == [
        {"bound": 2000, "lateness": 0, "size": 5000},
        {"bound": 1000, "lateness": 0, "size": 5000},
    ]
    assert ex.work_ahead() == 4  # bound 1000 was run already: only sent to the page
    assert len(run.calls) == 10
    ex.ahead.clear()
    ex.controls["size"].value = 2000  # not computed ahead: run now
    assert not ex.last_ahead and len(run.calls) == 11
    assert "ahead" not in ex.last_stages.wall and "engine" in ex.last_stages.wall
    assert json.dumps(ex.specs()) == fresh_specs({"bound": 1500, "size": 2000})


def test_a_failing_run_is_served_from_the_cache_as_its_message_card() -> None:
    ex = explore(counts, RECORDS, bound=(0, 5000, 500), size=[5000, 0], charts=("timeline",))
    ex.work_ahead()
    ex.controls["size"].value = 0  # size 0 raises in the engine: computed ahead all the same
    assert ex.last_ahead and ex.error is not None
    assert "raised" in ex.status.value and ex.summary.value == ""
    assert json.dumps(ex.specs()) == json.dumps(
        explore(counts, RECORDS, bound=(0, 5000, 500), size=[0], charts=("timeline",)).specs()
    )


def test_a_scrubber_moved_since_the_run_was_computed_starts_where_the_learner_left_it() -> None:
    charts = ("scrubber", "timeline")
    ex = make(charts=charts)
    ex.work_ahead()  # computed with the scrubber at its end, 500 ms
    ex.charts[0]._params = {"t": 300}  # then the learner scrubs back to 300 ms
    ex.controls["bound"].value = 1500
    assert ex.last_ahead
    (t,) = [p["value"] for p in ex.specs()[0]["params"] if p["name"] == "t"]
    assert t == 300
    assert json.dumps(ex.specs()) == fresh_specs({"bound": 1500}, charts, t=300)


def test_the_cache_is_bounded() -> None:
    ex = make()
    for bound in range(0, 5001, 500):
        ex.controls["bound"].value = bound
        ex.work_ahead()
        assert len(ex.ahead.ready) <= ex.ahead.limit == 2 * 3 + 2
    # the shown run and its neighbours are kept
    for values in neighbours(ex.controls, ex.values):
        assert ex.ahead.get(tuple_key(ex, values)) is not None


def test_no_collector_pass_in_a_change_and_a_dropped_run_is_freed_when_idle() -> None:
    """The cyclic collector is paused while a run is made and shown; a run dropped from the
    cache or from view is freed by reference counting (a run leaves no reference cycle:
    nothing to collect) once the kernel is idle: after the change, not during it."""
    enabled: list[bool] = []
    results: list[weakref.ref] = []

    def run(records, bound=1000, lateness=0, size=5000):
        enabled.append(gc.isenabled())
        result = counts(records, bound, lateness, size)
        results.append(weakref.ref(result))
        return result

    assert gc.isenabled()
    ex = make(run)
    assert enabled == [False] and gc.isenabled()
    assert ex.work_ahead() == 5  # the 5 neighbours
    assert enabled == [False] * 6 and all(r() is not None for r in results)
    ex.controls["bound"].value = 1500  # from the cache: no run
    gc.disable()  # (only reference counting from here on)
    try:
        ex.ahead.clear()  # every run dropped but the one shown (bound 1500)
        assert [r() is not None for r in results] == [False, True, False, False, False, False]
        ex.controls["lateness"].value = 1000  # a run, not computed ahead
        assert len(enabled) == 7 and not ex.last_ahead
        # the run shown before (bound 1500) is kept until the kernel is idle (no event loop
        # here: the next work ahead frees it)
        assert [r() is not None for r in results] == [False, True, False, False, False, False, True]
        ex.work_ahead()
        assert [r() is not None for r in results[:7]] == [False] * 6 + [True]
    finally:
        gc.enable()
    assert not any(enabled)


def test_on_the_event_loop_a_run_dropped_from_view_is_freed_right_after_the_change() -> None:
    results: list[weakref.ref] = []

    def run(records, bound=1000, lateness=0, size=5000):
        result = counts(records, bound, lateness, size)
        results.append(weakref.ref(result))
        return result

    async def scenario() -> list[bool]:
        ex = make(run)
        ex.ahead.clear()  # (no neighbour: only the runs shown)
        ex.controls["bound"].value = 2000
        held = [r() is not None for r in results]
        await asyncio.sleep(0)  # the loop's next callbacks: the change was shown
        return [held, [r() is not None for r in results], ex.runs]

    held, after, runs = asyncio.run(scenario())
    assert runs == 2 and held == [True, True] and after == [False, True]


def tuple_key(ex: Explorer, values: dict):
    from winviz.viz.explore import control_key

    return control_key(ex.controls, values)


def test_on_the_event_loop_one_neighbour_per_callback_and_a_change_is_served_first() -> None:
    """In a kernel the work runs on its asyncio loop: one neighbour per callback. A change
    arriving while a neighbour runs (posted to the loop during that run, as a widget message
    is received) is served before the next neighbour starts."""
    run = Recorder()

    async def scenario() -> Explorer:
        ex = make(run)  # plans 5 neighbours on the running loop
        assert len(ex.ahead.queue) == 5 and ex.ahead_runs == 0
        loop = asyncio.get_running_loop()
        # during the first neighbour's run, the learner moves the size dropdown
        run.during.append(lambda: loop.call_soon(setattr, ex.controls["size"], "value", 10000))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if ex.ahead_runs >= 1 and ex.runs == 2:
                break
        assert ex.runs == 2 and ex.ahead_runs == 1  # the change came before the 2nd neighbour
        while ex.ahead.queue or ex._ahead_handle is not None:
            await asyncio.sleep(0.01)
        return ex

    ex = asyncio.run(scenario())
    assert run.calls[:3] == [
        {"bound": 1000, "lateness": 0, "size": 5000},  # the first run
        {"bound": 1500, "lateness": 0, "size": 5000},  # the first neighbour (bound up)
        {"bound": 1000, "lateness": 0, "size": 10000},  # the change, served next
    ]
    assert not ex.last_ahead  # size 10000 was not computed yet: run at once
    # then the new values' neighbours (size 10000 moved up: it has no next; 5000 is cached)
    assert run.calls[3:] == [
        {"bound": 1500, "lateness": 0, "size": 10000},
        {"bound": 500, "lateness": 0, "size": 10000},
        {"bound": 1000, "lateness": 1000, "size": 10000},
    ]


def test_the_page_gets_the_runs_ahead_and_the_key_of_the_one_shown(monkeypatch) -> None:
    """Each run computed ahead is sent to the page under a key per chart (``prepare``); the
    change to it shows its spec with that key (the page moves that view into place), and the
    page is told to drop the views no longer next to the shown run (``keep``). A scrubber
    moved since is drawn anew: its key is another."""
    from winviz.viz.explorer_chart import ExplorerChart

    sent: list[tuple[int, dict]] = []
    monkeypatch.setattr(ExplorerChart, "send", lambda self, msg: sent.append((id(self), msg)))
    ex = make(charts=("scrubber", "timeline"))
    ex.work_ahead()
    ahead = {(who, m["key"]): m["spec"] for who, m in sent if m["type"] == "ahead"}
    assert len(ahead) == 5 * 2  # five neighbours, two charts each
    ex.controls["size"].value = 10000
    scrubber, tl = ex.charts
    assert ahead[(id(tl), tl._key)] == tl.spec and ahead[(id(scrubber), scrubber._key)] == (
        scrubber.spec
    )
    keeps = [m["keys"] for who, m in sent if m["type"] == "keep" and who == id(tl)]
    assert keeps[-1] == []  # none of the five is next to size 10000 but size 5000, not sent
    sent.clear()
    assert ex.work_ahead() == 3  # bound 1500, 500, lateness 1000; size 5000: only sent
    assert len([m for who, m in sent if who == id(tl) and m["type"] == "ahead"]) == 4
    scrubber._params = {"t": 200}
    ex.controls["bound"].value = 1500
    assert ex.last_ahead
    ahead = {(who, m["key"]): m["spec"] for who, m in sent if m["type"] == "ahead"}
    assert (id(tl), tl._key) in ahead and (id(scrubber), scrubber._key) not in ahead


def test_a_run_sent_ahead_is_shown_by_its_key_alone(monkeypatch) -> None:
    """The page has the spec of a run sent ahead: showing it sends its key, not the spec
    (250 KB for a lesson's timeline) again (``ExplorerChart.show``); a view of the widget
    that lacks it asks ("need") and gets the spec with its key (``_spec_key``). A run not
    sent ahead is shown with its spec."""
    from winviz.viz.explorer_chart import ExplorerChart

    states: list[tuple[int, dict]] = []
    monkeypatch.setattr(ExplorerChart, "send", lambda self, msg: None)
    monkeypatch.setattr(
        ExplorerChart, "_send", lambda self, msg, buffers=None: states.append((id(self), msg))
    )
    ex = make(charts=("scrubber", "timeline"))
    ex.work_ahead()
    states.clear()
    ex.controls["size"].value = 10000  # a neighbour, sent ahead
    assert ex.last_ahead
    tl = ex.charts[1]
    (update,) = [m["state"] for who, m in states if who == id(tl)]
    assert update == {"_key": tl._key, "_run": 2, "_call": tl._call}  # (explorer_chart)
    states.clear()
    tl._on_page_message(tl, {"type": "need"}, [])
    (update,) = [m["state"] for who, m in states if who == id(tl)]
    assert update == {"spec": tl.spec, "_spec_key": tl._key}
    states.clear()
    ex.ahead.clear()
    ex.controls["size"].value = 5000  # computed now: never sent
    (update,) = [m["state"] for who, m in states if who == id(tl)]
    assert update == {
        "spec": tl.spec,
        "_spec_key": tl._key,
        "_key": tl._key,
        "_run": 3,
        "_call": tl._call,
    }
    assert tl._key != ""
