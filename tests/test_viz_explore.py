"""winviz.viz.explore without a browser: controls are set programmatically (``widget.value``),
and the tests check that the explorer re-ran the engine with those values, replaced the specs
on the same ``alt.JupyterChart`` objects with the charts of the new run (exact data), updated
the summary line, read a Vega parameter back (the scrubber's t, as the browser would sync it)
and shows a pipeline's exception in place.

The job: six records of key "a" arriving every 100 ms, bounded out-of-orderness ``bound``,
tumbling windows of ``size``, allowed lateness ``lateness``, late data to a side output.
Periodic watermarks every 200 ms (a record arriving at an emit time is not yet in it):

* bound 1000: watermarks 1499 (200 ms), 4999 (400 ms: [0, 5000) fires with 1000, 2500,
  4000), 10999 and MAX at the end of input (500 ms); ts 3000 arriving at 500 ms is late →
  side output;
* bound 0: 2499, 5999, 11999, MAX — ts 3000 is late again;
* bound 0, lateness 2000: [0, 5000) is kept until 6999 > 5999, so ts 3000 (late: 3000 <= the
  watermark 5999) is accepted and fires the window again on the element (count 4);
* bound 3000: 2999 at 400 ms fires nothing; ts 3000 is on time; everything fires at the end.
"""

from __future__ import annotations

import html
import json
import sys

import altair as alt
import ipywidgets as widgets
import pytest
from jobs import RECORDS, bounded, count_pipeline, counts

import winviz as wv
from winviz.errors import InputError
from winviz.viz import propagation_chart, timeline
from winviz.viz.explore import (
    AtTime,
    ControlValueError,
    Explorer,
    Summary,
    explore,
    summarize,
)
from winviz.viz.export import EXPORT_MIMETYPE, EXPORT_RENDERER, chart_spec, export_renderer
from winviz.viz.spec import inline_datasets

MAX = wv.MAX


class Recorder:
    """The pipeline, recording the values of every call."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, records, bound=1000, lateness=0, size=5000):
        self.calls.append({"bound": bound, "lateness": lateness, "size": size})
        return counts(records, bound, lateness, size)


def window_watermarks(spec: dict) -> list[tuple[int, int]]:
    """The window operator's watermark points in a propagation chart (processing time,
    watermark; MAX is drawn at the top edge). Where the window's watermark equals the
    source's at the same time the two lines share one dot, the source's, whose ``also``
    names the window's record."""
    points = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "point")
    return [
        (p["x"], MAX if p["note"] else p["y"])
        for p in spec["datasets"][points["data"]["name"]]
        if p["line"] == "window" or (p["also"] or "").startswith("window (")
    ]


def same(a: dict, b: dict) -> bool:
    """Equal specs up to the names of their datasets: the explorer's specs name them rows-N
    (``spec.chart_dict``), Altair's ``to_dict`` by a hash of their rows."""
    return json.dumps(inline_datasets(a), sort_keys=True) == json.dumps(
        inline_datasets(b), sort_keys=True
    )


@pytest.fixture
def explorer() -> tuple[Explorer, Recorder]:
    run = Recorder()
    ex = explore(
        run,
        RECORDS,
        bound=(0, 5000, 500),
        lateness=(0, 10000, 1000),
        size=[2000, 5000, 10000],
        charts=("propagation_chart", "timeline"),
    )
    return ex, run


def test_controls_start_at_the_pipelines_defaults(explorer) -> None:
    ex, run = explorer
    bound, lateness, size = ex.controls.values()
    assert isinstance(bound, widgets.IntSlider)
    assert (bound.min, bound.max, bound.step, bound.value) == (0, 5000, 500, 1000)
    assert bound.description == "out-of-orderness bound (ms)"
    assert bound.continuous_update is False  # every change re-runs the engine: on release
    assert (lateness.value, lateness.description) == (0, "allowed lateness (ms)")
    assert isinstance(size, widgets.Dropdown)
    assert (size.options, size.value) == ((("2000", 2000), ("5000", 5000), ("10000", 10000)), 5000)
    assert run.calls == [{"bound": 1000, "lateness": 0, "size": 5000}]
    assert ex.runs == 1 and ex.error is None
    # [0, 5000) and [5000, 10000) fire at the watermarks 4999 and 10999, [10000, 15000) when
    # the input ends (watermark MAX); ts 3000 at 500 ms is late (3000 <= 4999) with its window
    # past cleanup: side output
    assert ex.summary.value == (
        "fired 3 (event-time timer 2 · element 0 · processing-time timer 0 · end of input 1) · "
        "late firings 0 · elements 6: on time 5 · late, accepted 0 · dropped 0 · side output 1"
    )
    assert all(isinstance(jc, alt.JupyterChart) for jc in ex.charts)
    prop, tl = ex.specs()
    assert window_watermarks(prop) == [(200, 1499), (400, 4999), (500, 10999), (500, MAX)]
    assert same(tl, timeline(counts(RECORDS)).to_dict())
    assert ex.charts[0] in ex.widget.children and bound in ex.widget.children[0].children


def test_a_slider_change_reruns_the_engine_and_updates_the_charts_in_place(explorer) -> None:
    ex, run = explorer
    before = list(ex.charts)
    ex.controls["bound"].value = 0
    assert run.calls[-1] == {"bound": 0, "lateness": 0, "size": 5000}
    assert ex.runs == 2 and ex.last_values == {"bound": 0, "lateness": 0, "size": 5000}
    assert ex.charts == before  # the same widgets, new specs
    prop, tl = ex.specs()
    assert window_watermarks(prop) == [(200, 2499), (400, 5999), (500, 11999), (500, MAX)]
    assert same(tl, timeline(counts(RECORDS, bound=0)).to_dict())
    assert ex.result.outputs["counts"] == counts(RECORDS, bound=0).outputs["counts"]

    ex.controls["lateness"].value = 2000  # ts 3000 is now accepted late: a late pane
    assert run.calls[-1] == {"bound": 0, "lateness": 2000, "size": 5000}
    assert ex.last_summary == Summary(
        fired=4,
        by_element=1,  # the late ts 3000 fires [0, 5000) again (EventTimeTrigger.onElement)
        by_event_time_timer=2,
        by_processing_time_timer=0,
        at_end_of_input=1,
        elements=6,
        on_time=5,
        late_accepted=1,
        dropped=0,
        side_output=0,
        late_firings=1,  # the re-firing by ts 3000: the watermark 5999 had passed 4999
    )
    assert ex.summary.value.startswith(
        "fired 4 (event-time timer 2 · element 1 · processing-time timer 0 · end of input 1)"
    )
    assert [(r.value, r.timestamp, r.processing_time) for r in ex.result.outputs["counts"]] == [
        (3, 4999, 400),
        (4, 4999, 500),
        (1, 9999, 500),
        (1, 14999, 500),
    ]

    ex.controls["bound"].value = 3000  # nothing fires before the end of input
    assert window_watermarks(ex.specs()[0]) == [(200, -501), (400, 2999), (500, 8999), (500, MAX)]
    # ts 3000 arrives with the watermark at 2999: on time; 8999 at 500 ms fires [0, 5000),
    # the MAX watermark the other two
    assert ex.last_summary.side_output == 0 and ex.last_summary.late_accepted == 0
    assert (ex.last_summary.by_event_time_timer, ex.last_summary.at_end_of_input) == (1, 2)


def test_set_changes_several_controls_with_one_run(explorer) -> None:
    ex, run = explorer
    ex.set(bound=0, lateness=2000)
    assert run.calls[1:] == [{"bound": 0, "lateness": 2000, "size": 5000}]
    assert ex.summary.value.startswith(
        "fired 4 (event-time timer 2 · element 1 · processing-time timer 0 · end of input 1)"
    )
    with pytest.raises(KeyError, match="no control named 'gap'"):
        ex.set(gap=1)
    with pytest.raises(ControlValueError) as info:
        ex.set(size=1234)  # not an option: refused before anything re-runs
    assert str(info.value) == (
        "control 'size': value 1234 is not among its options (2000, 5000, 10000)"
    )
    assert len(run.calls) == 2


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"bound": -100},
            "control 'bound': value -100 is outside the slider's range [0, 5000] "
            "(ipywidgets would clamp it silently)",
        ),
        (
            {"bound": 5001},
            "control 'bound': value 5001 is outside the slider's range [0, 5000] "
            "(ipywidgets would clamp it silently)",
        ),
        (
            {"bound": 1.5},
            "control 'bound': value 1.5 is not an int (expected an int in [0, 5000])",
        ),
        (
            {"bound": True},
            "control 'bound': value True is not an int (expected an int in [0, 5000])",
        ),
        # one bad value among good ones: nothing is set, nothing re-runs
        (
            {"lateness": 1000, "size": 3000},
            "control 'size': value 3000 is not among its options (2000, 5000, 10000)",
        ),
    ],
)
def test_set_refuses_a_value_its_control_cannot_take(explorer, values, message) -> None:
    ex, run = explorer
    before = ex.values
    with pytest.raises(ControlValueError) as info:
        ex.set(**values)
    assert str(info.value) == message
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)
    assert ex.values == before  # not clamped, not half-set
    assert len(run.calls) == 1


def test_a_dropdown_change_reruns_with_the_option_value(explorer) -> None:
    ex, run = explorer
    ex.controls["size"].value = 2000
    assert run.calls[-1] == {"bound": 1000, "lateness": 0, "size": 2000}
    assert [(r.value, r.timestamp) for r in ex.result.outputs["counts"]] == [
        (1, 1999),
        (1, 3999),
        (1, 5999),
        (1, 7999),
        (1, 13999),
    ]
    assert ex.summary.value.startswith("fired 5 ")
    assert same(ex.specs()[1], timeline(counts(RECORDS, size=2000)).to_dict())


def test_a_dropdown_option_of_none_stays_selected_and_shows_its_run() -> None:
    """ipywidgets' Dropdown reads a value of None as "nothing selected" and blanks itself
    (lesson 07's idleness "none"); the explorer's dropdown selects the option holding None."""

    def job(records, size=None):
        return counts(records, size=5000 if size is None else size)

    def fired(ex):
        return [(r.value, r.timestamp) for r in ex.result.outputs["counts"]]

    ex = explore(job, RECORDS, size=[("none", None), ("2 s", 2000)], charts=("timeline",))
    size = ex.controls["size"]
    assert (size.index, size.label, size.value) == (0, "none", None)
    five = [(3, 4999), (1, 9999), (1, 14999)]
    assert fired(ex) == five
    size.index = 1
    assert (size.index, size.label, size.value) == (1, "2 s", 2000)
    assert fired(ex) == [(1, 1999), (1, 3999), (1, 5999), (1, 7999), (1, 13999)]
    size.index = 0  # what the browser sends when the learner picks "none"
    assert (size.index, size.label, size.value, ex.values) == (0, "none", None, {"size": None})
    assert fired(ex) == five
    size.value = 2000
    size.value = None  # from Python
    assert (size.index, size.label, fired(ex)) == (0, "none", five)


def test_the_scrubbers_t_is_read_back_and_kept_across_runs() -> None:
    ex = explore(counts, RECORDS, bound=(0, 5000, 500), size=[5000, 0], charts=("scrubber",))
    (jc,) = ex.charts
    assert ex.param("t") == 500  # the scrubber starts at the last processing time
    assert ex.at_t.value == (
        "at t = 500 ms: watermark MAX (Long.MAX_VALUE) · 3 window(s) fired · 6 element(s) arrived"
    )
    jc._params = {"t": 300}  # what the browser sends when the learner drags the slider
    assert ex.param("t") == 300
    # Python follows: bound 1000, at 300 ms the watermark is 1,499 (emitted at 200 ms)
    assert ex.last_at == AtTime(t=300, operator="window", watermark=1499, fired=0, elements=4)
    assert ex.at_t.value == (
        "at t = 300 ms: watermark 1,499 ms · 0 window(s) fired · 4 element(s) arrived"
    )
    ex.controls["bound"].value = 3000
    spec = ex.specs()[0]
    assert [p["value"] for p in spec["params"] if p["name"] == "t"] == [300]
    assert ex.param("t") == 300
    assert ex.last_at == AtTime(t=300, operator="window", watermark=-501, fired=0, elements=4)
    jc._params = {"t": 150}  # the new chart's t is followed too
    assert ex.last_at == AtTime(t=150, operator="window", watermark=None, fired=0, elements=2)
    assert ex.at_t.value.startswith("at t = 150 ms: watermark none yet · ")
    # a failed run shows a message card (no t) and forgets nothing: the next scrubber is at 150
    ex.controls["size"].value = 0
    assert ex.error is not None and ex.at_t.value == ""
    ex.controls["size"].value = 5000
    assert ex.param("t") == 150 and ex.last_at.t == 150
    with pytest.raises(KeyError, match="no chart has a Vega parameter 'nope'"):
        ex.param("nope")


def test_the_scrubbers_replay_is_in_the_widget_and_play_is_read_back() -> None:
    """Replay is on by default in an explorer's scrubber too: the JupyterChart's spec has the
    replay's settings (its page script plays them) and the play checkbox, and both parameters
    are synced back."""
    ex = explore(counts, RECORDS, bound=(0, 5000, 500), charts=("scrubber",))
    (jc,) = ex.charts
    t, play = ex.specs()[0]["params"]
    assert (t["name"], "on" in t, "on" in play) == ("t", False, False)  # no Vega timer
    assert ex.specs()[0]["usermeta"]["winviz"]["replay"] == {
        "param": "t",
        "switch": "play",
        "min": 0,
        "max": 500,
        "tick_ms": 100,
        "step": 5,
    }
    assert (play["name"], play["value"], play["bind"]["input"]) == ("play", False, "checkbox")
    assert ex.param("play") == 0  # JupyterChart keeps a boolean parameter as a float
    jc._params = {"t": 0, "play": True}  # the learner ticks play at t = 0 ...
    assert (ex.param("play"), ex.param("t")) == (1, 0)
    jc._params = {"t": 250, "play": True}  # ... and the timer moves t: Python follows
    assert ex.last_at == AtTime(t=250, operator="window", watermark=1499, fired=0, elements=3)
    ex.controls["bound"].value = 3000  # a re-run keeps the t the replay had reached
    assert [p["value"] for p in ex.specs()[0]["params"]] == [250, False]


def test_a_scrubber_shown_by_the_jupyter_renderer_is_a_widget_with_replay(monkeypatch) -> None:
    """Altair's "jupyter" renderer would re-validate the dict: a winviz chart hands itself to
    a JupyterChart with the renderer's options instead (``spec``): an ``ExplorerChart``, whose
    page script plays the replay (view_script) and does not re-tick "play" (explorer_chart)."""
    from winviz.viz import explorer_chart, scrubber, view_script
    from winviz.viz.explorer_chart import ExplorerChart

    made: list[ExplorerChart] = []

    class Recorded(ExplorerChart):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(sys.modules["winviz.viz.spec"], "ExplorerChart", Recorded)
    chart = scrubber(counts(RECORDS).trace)
    active = alt.renderers.active
    alt.renderers.enable("jupyter", offline=True, embed_options={"actions": False})
    try:
        bundle = chart._repr_mimebundle_()
    finally:
        alt.renderers.enable(active)
    data, _ = bundle  # a widget's (data, metadata)
    (widget,) = made
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert widget.embed_options == {"actions": False}
    assert widget.spec["usermeta"]["winviz"]["replay"]["tick_ms"] == 100
    assert explorer_chart.ESM.startswith(view_script.SCRIPT)  # the page's own script too


def test_a_failing_pipeline_shows_the_error_in_place_and_recovers() -> None:
    def fragile(records, size=5000):
        return counts(records, size=size)

    ex = explore(fragile, RECORDS, size=[5000, 0], charts=("propagation_chart",))
    ex.controls["size"].value = 0  # TumblingEventTimeWindows.of(0): the engine refuses it
    assert isinstance(ex.error, InputError)
    assert ex.result is None and ex.last_summary is None and ex.summary.value == ""
    assert "fragile(data, size=0) raised InputError" in ex.status.value
    assert str(ex.error) in html.unescape(ex.status.value)
    card = ex.specs()[0]
    assert card["usermeta"]["winviz"] == {
        "chart": "explore",
        "status": "message",
        "message": "The pipeline failed for these values.",
    }
    ex.controls["size"].value = 5000
    assert ex.error is None and ex.status.value == ""
    assert window_watermarks(ex.specs()[0]) == [(200, 1499), (400, 4999), (500, 10999), (500, MAX)]


def test_a_pipeline_returning_nothing_is_an_error_too() -> None:
    ex = explore(lambda records, bound=0: None, RECORDS, bound=(0, 10, 1))
    assert isinstance(ex.error, TypeError)
    assert "returned None" in str(ex.error)


def test_no_data_custom_charts_and_widgets() -> None:
    seen = []

    def job(bound=500):
        return counts(RECORDS, bound=bound).trace

    def chart(result):
        seen.append(len(result))
        return propagation_chart(result, operator="window")

    custom = widgets.IntText(value=0)
    ex = explore(job, bound=custom, charts=[chart])
    assert ex.controls["bound"] is custom and ex.values == {"bound": 0}
    custom.value = 1000
    assert len(seen) == 2 and ex.runs == 2
    assert window_watermarks(ex.specs()[0]) == []  # one panel of operator 'window':
    assert ex.specs()[0]["usermeta"]["winviz"]["notes"][1].startswith("operator 'window'")


def test_dict_options_and_float_sliders() -> None:
    triggers = {"event time": None, "count 2": wv.CountTrigger.of(2)}

    def job(records, trigger=None, ratio=0.5):
        return counts(records)

    ex = explore(job, RECORDS, trigger=triggers, ratio=(0.0, 1.0, 0.1))
    assert [label for label, _ in ex.controls["trigger"].options] == ["event time", "count 2"]
    assert ex.controls["trigger"].value is None
    assert isinstance(ex.controls["ratio"], widgets.FloatSlider)
    assert ex.controls["ratio"].value == 0.5


def test_bad_controls_raise_at_once() -> None:
    with pytest.raises(ValueError, match="counts has no parameter 'speed'"):
        explore(counts, RECORDS, speed=(0, 10, 1))
    with pytest.raises(ValueError, match=r"control 'bound': expected min <= max and step > 0"):
        explore(counts, RECORDS, bound=(10, 0, 1))
    with pytest.raises(ValueError, match=r"a slider is \(min, max, step\)"):
        explore(counts, RECORDS, bound=(0, 10))
    with pytest.raises(ValueError, match="control 'bound': value 20 is outside"):
        explore(counts, RECORDS, bound=(0, 10, 1, 20))
    with pytest.raises(ValueError, match="at least one option"):
        explore(counts, RECORDS, size=[])
    with pytest.raises(ValueError, match="unknown chart 'pie'"):
        explore(counts, RECORDS, charts=("pie",))


def test_summarize_reads_the_trace() -> None:
    result = counts(RECORDS, bound=0, lateness=2000)
    assert summarize(result) == summarize(result.trace.to_pandas())
    assert summarize(result).text() == (
        "fired 4 (event-time timer 2 · element 1 · processing-time timer 0 · end of input 1) · "
        "late firings 1 · elements 6: on time 5 · late, accepted 1 · dropped 0 · side output 0"
    )


def test_summary_parts_add_up_for_merged_session_windows_without_trigger_records() -> None:
    """The Spark twin's model of session windows (gap 1 s): [0, 1000) and [1000, 2000) merge
    into [0, 2000), emitted by the batch whose watermark passes its end. Its trace has no
    trigger call or timer: the firing's cause is not traced, and the summary says so instead
    of leaving its parts 1 short of "fired 1"."""
    from winviz.spark import TwinSpec, predict

    spec = TwinSpec(session_gap=1000, watermark_delay=0, value_field="value", aggregate="sum")
    rows = [{"key": "a", "ts": ts, "value": v} for ts, v in ((0, 1), (1000, 2), (5000, 4))]
    trace = predict(rows, [0, 0, 1000], spec).trace
    assert [(r.window.start, r.window.end, r.detail) for r in trace.records("fired")] == [
        (0, 2000, (3, 0, "on_time", 2))
    ]
    summary = summarize(trace)
    assert summary.text() == (
        "fired 1 (event-time timer 0 · element 0 · processing-time timer 0 · end of input 0 · "
        "cause not traced 1) · late firings 0 · elements 3: on time 3 · late, accepted 0 · "
        "dropped 0 · side output 0"
    )
    parts = (
        summary.by_event_time_timer, summary.by_element, summary.by_processing_time_timer,
        summary.at_end_of_input, summary.by_session_merge, summary.cause_not_traced,
    )  # fmt: skip
    assert sum(parts) == summary.fired


def test_for_a_lesson_page_the_explorer_gives_its_runs_on_the_slider_grid(explorer) -> None:
    """With the export renderer (``make lessons``) an explorer displays its runs precomputed
    on its slider grid (winviz.viz.grid), not a widget; its own state is unchanged."""
    from winviz.viz import grid

    ex, _ = explorer
    ex.set(bound=500)
    active = alt.renderers.active
    if EXPORT_RENDERER not in alt.renderers.names():
        alt.renderers.register(EXPORT_RENDERER, export_renderer)
    alt.renderers.enable(EXPORT_RENDERER)
    try:
        bundle = ex._repr_mimebundle_()
    finally:
        alt.renderers.enable(active)
    payload = bundle[EXPORT_MIMETYPE]["winviz_explorer"]
    # 11 bounds × 11 latenesses × 3 sizes = 363 > 64: 21 runs per size, bound keeps 5 values
    # and lateness 4 (evenly spaced, ends kept; the lesson's bound 500 replaces 1000)
    assert payload["combinations"] == 363 and len(payload["runs"]) == 5 * 4 * 3
    assert [c["labels"] for c in payload["controls"]] == [
        ["0", "500", "2500", "4000", "5000"],
        ["0", "3000", "7000", "10000"],
        ["2000", "5000", "10000"],
    ]
    lesson = grid.decode(payload["blobs"][payload["runs"][(1 * 4 + 0) * 3 + 1]])
    assert same(lesson["specs"][1], chart_spec(timeline(ex.result)))
    assert lesson["status"] == ex.last_summary.text()
    assert ex.values == {"bound": 500, "lateness": 0, "size": 5000}
    assert bundle["text/plain"].startswith(repr(ex))
    assert "widget" not in json.dumps(bundle)
    assert ex._repr_mimebundle_() != bundle  # back to the widget


def disordered(n: int) -> list[tuple[str, int]]:
    """n records of 5 keys, one per 10 ms of processing time, timestamps up to 3 s behind."""
    return [(f"k{i % 5}", i * 10 - (i * 7919) % 3000) for i in range(n)]


def clicks(records, bound=1000, lateness=1000, size=5000):
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        records,
        size,
        bounded(bound),
        lateness=lateness,
        late=wv.OutputTag("late"),
        arrival_interval=10,
    )
    return env.execute()


ALL_CHARTS = (
    "timeline",
    "window_lanes",
    "timers_chart",
    "scrubber",
    "propagation_chart",
    "skew_chart",
)


def test_a_slider_moves_spec_is_the_charts_to_dict_with_rows_n_dataset_names() -> None:
    """The fast update path (``spec.chart_dict`` set on the kept widget): for several slider
    values, every chart's spec is its chart's full, validated ``to_dict()`` — the same marks,
    encodings, parameters and data rows — with the datasets named rows-1, rows-2, … in the
    order they are met; and the widget keeps its ``params`` (the scrubber's t is the one
    the learner left)."""
    records = disordered(300)
    ex = explore(clicks, records, bound=(0, 3000, 100), size=[2000, 5000], charts=ALL_CHARTS)
    params = [jc.params for jc in ex.charts]
    for values in ({"bound": 0}, {"bound": 700}, {"bound": 3000, "size": 2000}, {"bound": 200}):
        ex.set(**values)
        assert ex.error is None
        for name, jc in zip(ALL_CHARTS, ex.charts, strict=True):
            spec = jc.spec
            full = jc.chart.to_dict()  # the chart this run built, validated
            assert same(spec, full), (values, name)
            assert spec != full  # the names differ: rows-N here, data-<hash> there
            named = sorted(spec["datasets"], key=lambda n: int(n.split("-")[1]))
            assert named == [f"rows-{i}" for i in range(1, len(named) + 1)], name
            assert len(named) >= len(full["datasets"]), name
        # the chart shown is the chart of these values, not a stale one
        rebuilt = wv.timeline(clicks(records, **ex.last_values))
        assert same(ex.specs()[0], rebuilt.to_dict())
        # the fast path kept the params of every chart without a selection; the timers
        # chart's point selection (its queue panel) makes JupyterChart set it up anew
        kept = [jc.params is p for jc, p in zip(ex.charts, params, strict=True)]
        assert kept == [True, True, False, True, True, True]
        assert any("select" in p for p in ex.specs()[2]["params"])
        params = [jc.params for jc in ex.charts]
        # the kept params took the new spec's initial values: the scrubber's t
        t = next(p["value"] for p in ex.specs()[3]["params"] if p["name"] == "t")
        assert ex.param("t") == t == ex.charts[3].params.t


def test_a_failing_run_and_the_next_good_one_go_through_jupyterchart() -> None:
    """A message card has other parameters than the scrubber: the widget sets it up anew
    (new params), and the next good run again (its t starts where the learner left it)."""

    def flaky(records, bound=1000):
        if bound == 500:
            raise ValueError("no 500s")
        return clicks(records, bound)

    ex = explore(flaky, disordered(100), bound=(0, 1000, 500), charts=("scrubber",))
    before = ex.charts[0].params
    ex.controls["bound"].value = 500
    card = ex.specs()[0]
    assert ex.error is not None and "params" not in card
    assert ex.charts[0].params is not before
    ex.controls["bound"].value = 0
    assert ex.error is None
    assert same(ex.specs()[0], ex.charts[0].chart.to_dict())
    names = set(ex.specs()[0]["datasets"])  # JupyterChart's spec rewritten by chart_dict
    assert names == {f"rows-{i}" for i in range(1, len(names) + 1)} and len(names) > 1
    assert ex.param("t") is not None and ex.charts[0].params is not before


def test_the_widget_sends_the_message_ipywidgets_would() -> None:
    """``ExplorerChart.send_state`` skips only the search of the spec for binary buffers:
    the update message (state, buffer paths, buffers) is ``Widget.send_state``'s, for the
    whole state and for what a slider move sends (spec and parameters)."""
    ex = explore(clicks, disordered(50), bound=(0, 1000, 500), charts=("scrubber",))
    jc = ex.charts[0]
    sent: list = []
    jc._send = lambda msg, buffers=None: sent.append((msg, buffers))
    for key in (None, {"spec", "_params"}, "spec"):
        sent.clear()
        jc.send_state(key)
        widgets.Widget.send_state(jc, key)
        assert len(sent) == 2 and sent[0] == sent[1], key
    assert sent[0][0]["state"]["spec"] is jc.spec and sent[0][0]["buffer_paths"] == []


def test_an_update_names_its_stages() -> None:
    """``last_stages`` has every stage of an update (wall and CPU time; no figures are
    asserted here: timings live in bench/explore_bench.py); a failed run has only the engine
    stage before the message card's spec and widget stages."""

    def flaky(records, bound=1000):
        if bound == 500:
            raise ValueError("no 500s")
        return clicks(records, bound)

    ex = explore(flaky, disordered(50), bound=(0, 1000, 500), charts=("scrubber",))
    ex.controls["bound"].value = 0
    stages = ["engine", "read", "charts", "summary", "spec", "widget", "at_t"]
    assert list(ex.last_stages.wall) == list(ex.last_stages.cpu) == stages
    assert all(v >= 0 for v in [*ex.last_stages.wall.values(), *ex.last_stages.cpu.values()])
    ex.controls["bound"].value = 500
    assert list(ex.last_stages.wall) == ["engine", "spec", "widget", "at_t"]


def test_save_html_writes_an_explorer_as_its_lesson_page_shows_it(tmp_path) -> None:
    """``wv.save_html(explorer, path)`` (issue 28): the explorer element ``make lessons``
    writes for it (``lessons.explorer_html``), its runs precomputed on the slider grid, on
    a self-contained page with the strict policy; a value that is neither a chart nor an
    explorer is refused."""
    from winviz.viz import grid, pages
    from winviz.viz.lessons import explorer_html

    ex = explore(Recorder(), RECORDS, bound=[0, 500, 1000], size=[2000, 5000], charts=("timeline",))
    ex.set(bound=500)
    path = wv.save_html(ex, tmp_path / "explorer.html", title="bounds <explored>")
    page = path.read_text(encoding="utf-8")
    assert pages.check_page(page) == []
    assert "<title>bounds &lt;explored&gt;</title>" in page
    payload = grid.export_grid(ex)
    markup, size = explorer_html({"text/plain": repr(ex)}, payload, grid.MAX_BYTES)
    assert markup in page and size > 0
    (block,) = pages.data_blocks(page, pages.EXPLORER_CLASS)
    assert json.loads(block) == payload
    assert payload["combinations"] == len(payload["runs"]) == 3 * 2
    assert [c["labels"] for c in payload["controls"]] == [["0", "500", "1000"], ["2000", "5000"]]
    assert ex.values == {"bound": 500, "size": 5000}
    with pytest.raises(wv.errors.ArgumentTypeError, match="save_html writes a chart or an"):
        wv.save_html("timeline", tmp_path / "no.html")
