"""An explorer in a live page, without a browser: the page's changes coalesce ("latest wins"),
every chart is told the run it shows, and the widgets start light.

A learner's key presses reach the kernel as ipywidgets state messages (``Widget.set_state``,
what the kernel's comm handler calls); the explorer shows the controls' values one event-loop
callback later (``Explorer._later``), so changes that arrive while a run is computed only set
their control and one update shows the last values.
"""

from __future__ import annotations

import asyncio
import json

from jobs import RECORDS, counts

from winviz.viz.explore import Explorer, explore
from winviz.viz.explorer_chart import LOADER, Bundle, ExplorerChart


class Counted:
    """``counts`` that records the bound of every call."""

    def __init__(self) -> None:
        self.bounds: list[int] = []

    def __call__(self, records, bound=1000, size=5000):
        self.bounds.append(bound)
        return counts(records, bound=bound, size=size)


def make(pipeline: Counted) -> Explorer:
    return explore(
        pipeline,
        RECORDS,
        bound=(0, 3000, 500),
        size=[5000, 10000],
        charts=("timeline", "propagation_chart"),
    )


def _shown(ex: Explorer) -> list[tuple[int, str]]:
    return [(jc._run, jc._call) for jc in ex.charts]


def test_a_change_from_the_page_is_shown_before_the_kernel_is_idle_again() -> None:
    """ipywidgets sends a control's next change when the kernel is idle after the last one,
    merging those made meanwhile: so the run is computed in the change's handler (the merged
    change then carries the latest value), not later."""
    pipeline = Counted()
    ex = make(pipeline)
    assert pipeline.bounds == [1000] and ex.runs == 1 and ex.page_changes == 0
    assert _shown(ex) == [(1, "Counted(data, bound=1000, size=5000)")] * 2

    async def change() -> None:  # (in the kernel: on its running event loop)
        ex.controls["bound"].set_state({"value": 2500})  # what the kernel's comm handler calls
        assert pipeline.bounds == [1000, 2500] and ex.runs == 2 and ex.page_changes == 1
        ex.controls["size"].set_state({"index": 1})  # (a dropdown syncs its index)
        assert pipeline.bounds == [1000, 2500, 2500] and ex.page_changes == 2
        ex._ahead_handle.cancel()  # (the runs ahead: the next test)

    asyncio.run(change())
    assert ex.last_values == {"bound": 2500, "size": 10000}
    assert _shown(ex) == [(3, "Counted(data, bound=2500, size=10000)")] * 2
    ex.controls["bound"].value = 500  # set by the kernel (a cell): not the page's
    assert ex.page_changes == 2 and _shown(ex)[0][0] == 4


def test_the_runs_ahead_follow_the_latest_values_only() -> None:
    """A change empties the queue of runs ahead: none is computed for the values passed."""
    pipeline = Counted()
    ex = make(pipeline)
    assert ex.work_ahead() == 3 and pipeline.bounds == [1000, 1500, 500, 1000]
    ex.controls["bound"].set_state({"value": 1500})  # drawn ahead: shown from the cache
    assert ex.last_ahead and pipeline.bounds == [1000, 1500, 500, 1000]
    assert [v["bound"] for v in ex.ahead.queue] == [2000, 1000, 1500]
    ex.controls["bound"].set_state({"value": 2500})  # before any of them was computed
    assert not ex.last_ahead
    assert ex.work_ahead() == 3
    assert pipeline.bounds == [1000, 1500, 500, 1000, 2500, 3000, 2000, 2500]
    assert ex.runs == 3 and _shown(ex) == [(3, "Counted(data, bound=2500, size=5000)")] * 2


def test_each_chart_update_names_its_run_and_the_explorer_in_one_message(monkeypatch) -> None:
    """The page shows the charts of one explorer (``_group``) together, when each has the run
    ``_run`` ready: the kernel sends the run's number and call with the chart's key (or spec),
    in one message per chart."""
    states: list[tuple[int, dict]] = []
    monkeypatch.setattr(ExplorerChart, "send", lambda self, msg: None)
    monkeypatch.setattr(
        ExplorerChart, "_send", lambda self, msg, buffers=None: states.append((id(self), msg))
    )
    ex = make(Counted())
    other = make(Counted())
    groups = {jc._group for jc in ex.charts}
    assert len(groups) == 1 and groups != {jc._group for jc in other.charts}
    assert len(ex.charts[0]._group) == 16
    ex.work_ahead()
    states.clear()
    ex.controls["size"].value = 10000  # a neighbour, sent ahead: its key alone
    assert ex.last_ahead
    tl = ex.charts[0]
    (update,) = [m["state"] for who, m in states if who == id(tl)]
    assert update == {
        "_key": tl._key,
        "_run": 2,
        "_call": "Counted(data, bound=1000, size=10000)",
    }


def test_the_widgets_module_is_small_and_the_bundle_is_sent_once_per_kernel() -> None:
    """anywidget gives each model 2 s to import its module: the charts' module is the small
    ``LOADER``, and the Vega bundle is one ``Bundle`` widget that every chart names."""
    a, b = make(Counted()), make(Counted())
    bundle = ExplorerChart.bundle()
    assert isinstance(bundle, Bundle) and len(bundle.code) > 500_000
    charts = [*a.charts, *b.charts]
    states = [jc.get_state() for jc in charts]
    assert all(s["_esm"] == LOADER for s in states) and len(LOADER) < 2000
    assert {(s["_bundle"], s["_bundle_sha"]) for s in states} == {
        (bundle.model_id, ExplorerChart._bundled_sha)
    }
    assert max(len(json.dumps({k: v for k, v in s.items() if k != "spec"})) for s in states) < (
        5000
    )
    assert bundle.code.endswith("export{__default as default};")  # the widget's module
