"""winviz.viz.timers_chart and winviz.viz.scrubber: layers, encodings, parameter binding and
the exact data each mark gets for small jobs run on the real engine; the scrubber's slider
checked by rendering with the parameter value overridden (vl-convert, no browser)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import vl_convert as vlc

import winviz as wv
from winviz.viz import frames, scale
from winviz.viz.scrubber import replay_settings, scrubber, with_replay
from winviz.viz.timers import timers_chart


def event_job() -> wv.Trace:
    """Tumbling 5 s event-time windows, out-of-orderness 1500 ms, allowed lateness 1000 ms.

    Each new (key, window) registers two event-time timers: window end - 1 (fire) and
    end - 1 + lateness (cleanup). a@4500 at 300 ms and a@9000 at 400 ms register them again:
    de-duplicated. Watermark 5499 at 200 ms fires the [0, 5000) timers at 4999; 7499 at
    600 ms fires the cleanup timers at 5999 (and deletes the already-fired 4999 timer: a
    no-op); the end-of-input watermark at 700 ms fires a's [5000, 10000) timers."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 1000), ("b", 1200), ("a", 7000), ("a", 4500), ("a", 9000), ("a", 2000)],
            arrival_times=[0, 50, 100, 300, 400, 700],
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(1500).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .aggregate(wv.CountAggregate())
        .sink_to("counted")
    )
    return env.execute().trace


def processing_job() -> wv.Trace:
    """Tumbling 1 s processing-time windows: a's timer at 999 fires; b's at 1999 is still
    queued when the input ends at 1200 ms."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 1), ("a", 2), ("b", 3)], arrival_times=[0, 100, 1200])
        .key_by(lambda e: e[0])
        .window(wv.TumblingProcessingTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


@pytest.fixture(scope="module")
def trace() -> wv.Trace:
    return event_job()


def data(spec: dict[str, Any], lay: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["datasets"][lay["data"]["name"]]


# -- timers_chart -------------------------------------------------------------------------------


def test_timers_layers_and_encodings(trace) -> None:
    spec = timers_chart(trace).to_dict()
    assert spec["usermeta"]["winviz"]["status"] == "ok"
    assert spec["usermeta"]["winviz"]["notes"] == [
        "operator 'window': 6 timers (0 still pending at the end), 3 de-duplicated registrations"
    ]
    top, bottom = spec["vconcat"]
    bars, ends, dedup, labels = top["layer"]
    assert [lay["mark"]["type"] for lay in top["layer"]] == ["bar", "point", "point", "text"]
    assert bars["encoding"]["y"] == {
        "field": "lane",
        "type": "nominal",
        "sort": None,  # lanes in first-registration order: a scale domain, no sort array
        "scale": {"domain": ["a · [0, 5000)", "b · [0, 5000)", "a · [5000, 10000)"]},
        "title": None,
        "axis": {"labelLimit": 220},
    }
    assert bars["encoding"]["x"]["field"] == "x" and bars["encoding"]["x2"] == {"field": "x2"}
    assert bars["encoding"]["x"]["scale"] == {"domain": [-21, 721], "nice": False, "zero": False}
    # one sub-lane per timer of a lane, apart: 4999 and 5999 are two bars, not one
    slot = {"field": "slot", "type": "nominal", "scale": {"paddingInner": 0.25}}
    assert bars["encoding"]["yOffset"] == slot
    assert ends["encoding"]["yOffset"] == slot == dedup["encoding"]["yOffset"]
    assert labels["encoding"]["text"] == {"field": "label", "type": "nominal"}
    assert labels["encoding"]["yOffset"] == slot
    assert bars["encoding"]["color"]["scale"] == {
        "domain": ["event", "processing"],
        "range": ["#0072B2", "#E69F00"],
    }
    assert bars["encoding"]["strokeDash"]["scale"]["range"] == [[1, 0], [4, 2]]
    assert ends["encoding"]["x"]["field"] == "x2"
    assert ends["encoding"]["shape"]["scale"] == {
        "domain": ["fired", "deleted", "pending at end"],
        "range": ["square", "cross", "triangle-right"],
    }
    # the de-duplication marker: black (not the processing-time orange), in the legend
    assert dedup["mark"]["color"] == "#000000"
    assert dedup["encoding"]["shape"] == {
        "field": "mark",
        "type": "nominal",
        "title": "registration",
        "scale": {"domain": ["de-duplicated"], "range": ["triangle-down"]},
    }
    assert "#000000" not in bars["encoding"]["color"]["scale"]["range"]
    assert bottom["mark"] == {"type": "line", "interpolate": "step-after", "strokeWidth": 1.5}
    assert bottom["encoding"]["y"] == {
        "field": "size",
        "type": "quantitative",
        "title": "timers queued",
    }


def test_timers_bar_data(trace) -> None:
    spec = timers_chart(trace).to_dict()
    bars = data(spec, spec["vconcat"][0]["layer"][0])
    got = [
        (
            b["lane"],
            b["timestamp"],
            b["x"],
            b["x2"],
            b["end"],
            b["domain"],
            b["reg_seq"],
            b["end_seq"],
        )
        for b in bars
    ]
    assert got == [
        ("a · [0, 5000)", "4,999 ms", 0, 200, "fired", "event", 3, 21),
        ("a · [0, 5000)", "5,999 ms", 0, 600, "fired", "event", 5, 48),
        ("b · [0, 5000)", "4,999 ms", 50, 200, "fired", "event", 9, 26),
        ("b · [0, 5000)", "5,999 ms", 50, 600, "fired", "event", 11, 52),
        ("a · [5000, 10000)", "9,999 ms", 100, 700, "fired", "event", 15, 64),
        ("a · [5000, 10000)", "10,999 ms", 100, 700, "fired", "event", 17, 69),
    ]
    # timers 4999 and 5999 of one window: two sub-lanes, each timestamp written on its bar
    assert [(b["lane"], b["slot"], b["label"]) for b in bars] == [
        ("a · [0, 5000)", 0, "@ 4,999 ms"),
        ("a · [0, 5000)", 1, "@ 5,999 ms"),
        ("b · [0, 5000)", 0, "@ 4,999 ms"),
        ("b · [0, 5000)", 1, "@ 5,999 ms"),
        ("a · [5000, 10000)", 0, "@ 9,999 ms"),
        ("a · [5000, 10000)", 1, "@ 10,999 ms"),
    ]
    assert data(spec, spec["vconcat"][0]["layer"][3]) == data(spec, spec["vconcat"][0]["layer"][0])
    assert bars[0]["watermark"] == "MIN (Long.MIN_VALUE)"
    tips = {t["field"] for t in spec["vconcat"][0]["layer"][0]["encoding"]["tooltip"]}
    assert {"key", "namespace", "domain", "timestamp", "registered", "ended", "watermark"} <= tips


def test_timers_dedup_and_queue(trace) -> None:
    spec = timers_chart(trace).to_dict()
    marks = data(spec, spec["vconcat"][0]["layer"][2])
    # each in the sub-lane of the timer it found queued
    assert [
        (m["lane"], m["x"], m["slot"], m["timestamp"], m["count"], m["first_seq"], m["mark"])
        for m in marks
    ] == [
        ("a · [0, 5000)", 300, 1, "5,999 ms", 1, 38, "de-duplicated"),
        ("a · [5000, 10000)", 400, 0, "9,999 ms", 1, 42, "de-duplicated"),
        ("a · [5000, 10000)", 400, 1, "10,999 ms", 1, 44, "de-duplicated"),
    ]
    queue = data(spec, spec["vconcat"][1])
    assert [(q["x"], q["size"]) for q in queue] == [
        (0, 2),
        (50, 4),
        (100, 6),
        (200, 4),
        (600, 2),
        (700, 0),
    ]


def test_timers_processing_domain_and_pending() -> None:
    spec = timers_chart(processing_job()).to_dict()
    bars = data(spec, spec["vconcat"][0]["layer"][0])
    assert [(b["lane"], b["domain"], b["x"], b["x2"], b["end"], b["ended"]) for b in bars] == [
        ("a · [0, 1000)", "processing", 0, 999, "fired", "999 ms"),
        ("b · [1000, 2000)", "processing", 1200, 1200, "pending at end", ""),
    ]
    marks = data(spec, spec["vconcat"][0]["layer"][2])
    assert [(m["x"], m["count"]) for m in marks] == [(0, 1), (100, 2), (1200, 1)]


def test_timers_frame_input_agrees(trace) -> None:
    a = timers_chart(trace).to_dict()
    b = timers_chart(trace.to_pandas()).to_dict()
    for i in range(3):
        assert data(a, a["vconcat"][0]["layer"][i]) == data(b, b["vconcat"][0]["layer"][i])
    assert data(a, a["vconcat"][1]) == data(b, b["vconcat"][1])


def test_timers_aggregates_many_lanes(trace) -> None:
    spec = timers_chart(trace, max_lanes=2).to_dict()
    notes = spec["usermeta"]["winviz"]["notes"]
    assert any("aggregated to one lane per namespace" in n for n in notes)
    bars = data(spec, spec["vconcat"][0]["layer"][0])
    assert [(b["lane"], b["timestamp"], b["keys"], b["x"], b["x2"]) for b in bars] == [
        ("[0, 5000)", "4,999 ms", 2, 0, 200),
        ("[0, 5000)", "5,999 ms", 2, 0, 600),
        ("[5000, 10000)", "9,999 ms", 1, 100, 700),
        ("[5000, 10000)", "10,999 ms", 1, 100, 700),
    ]


def test_timers_large_trace_respects_row_limit() -> None:
    env = wv.StreamExecutionEnvironment()
    n = 12_000
    (
        env.from_collection([(f"k{i % 50}", i * 10) for i in range(n)], arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("o")
    )
    spec = timers_chart(env.execute().trace).to_dict()
    assert all(len(rows) <= scale.ROW_LIMIT for rows in spec["datasets"].values())
    assert any("aggregated" in n for n in spec["usermeta"]["winviz"]["notes"])


def test_timers_message_cards() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).sink_to("s")
    spec = timers_chart(env.execute().trace).to_dict()
    assert spec["usermeta"]["winviz"]["status"] == "message"
    assert spec["usermeta"]["winviz"]["chart"] == "timers_chart"
    assert timers_chart(None).to_dict()["usermeta"]["winviz"]["status"] == "message"
    with pytest.raises(ValueError):
        timers_chart(wv.Trace(), max_lanes=0)


# -- scrubber -----------------------------------------------------------------------------------


def test_scrubber_param_and_layers(trace) -> None:
    spec = scrubber(trace).to_dict()
    assert spec["params"] == [
        {
            "name": "t",
            "value": 700,
            "bind": {
                "input": "range",
                "min": 0,
                "max": 700,
                "step": 1,
                "name": "processing time t (ms) ",
            },
            # replay: 10 s at one tick per 100 ms = 100 ticks over 700 ms → 7 ms per tick
            "on": [
                {
                    "events": {"type": "timer", "throttle": 100},
                    "update": "play ? (t >= 700 ? 0 : min(700, t + 7)) : t",
                }
            ],
        },
        {
            "name": "play",
            "value": False,
            "bind": {"input": "checkbox", "name": "play "},
            "on": [{"events": {"signal": "t"}, "update": "play && t < 700"}],
        },
    ]
    kinds = [(lay["mark"]["type"], data(spec, lay)[0]["kind"]) for lay in spec["layer"]]
    assert kinds == [
        ("rect", "window"),
        ("rule", "now"),
        ("rule", "watermark at t"),
        ("text", "watermark at t"),
        ("point", "element"),  # future, faded
        ("point", "element"),  # arrived by t
    ]
    windows, now, wm, _, fut, arrived = spec["layer"]
    assert windows["transform"][0]["calculate"].startswith("t < datum.opened ? 'not yet'")
    assert now["transform"] == [{"calculate": "t", "as": "y"}]
    assert wm["transform"][0] == {"filter": "datum.proc <= t"}
    assert fut["transform"] == [{"filter": "datum.arrived > t"}]
    assert arrived["transform"] == [{"filter": "datum.arrived <= t"}]
    assert arrived["encoding"]["color"]["field"] == "fate"
    assert scrubber(trace, at=250).to_dict()["params"][0]["value"] == 250
    assert len(scrubber(trace, future="hide").to_dict()["layer"]) == 5


def test_scrubber_replay_settings_and_handlers(trace) -> None:
    spec = scrubber(trace, replay_seconds=2).to_dict()
    # 2 s = 20 ticks over 700 ms: 35 ms per tick (a multiple of the slider's 1 ms step)
    assert spec["usermeta"]["winviz"]["replay"] == {
        "param": "t",
        "switch": "play",
        "min": 0,
        "max": 700,
        "tick_ms": 100,
        "step": 35,
    }
    assert spec["params"][0]["on"][0]["update"] == "play ? (t >= 700 ? 0 : min(700, t + 35)) : t"
    # a slider step of 10 ms: the tick is rounded up to a multiple of it
    assert replay_settings(0, 25_000, 10, 10.0)["step"] == 250
    assert replay_settings(0, 25_003, 10, 10.0)["step"] == 260
    assert replay_settings(5, 5, 1, 10.0)["step"] == 1  # one processing time: one step
    # no replay: only the slider, no handlers, no settings
    plain = scrubber(trace, replay=False).to_dict()
    assert [p["name"] for p in plain["params"]] == ["t"] and "on" not in plain["params"][0]
    assert "replay" not in plain["usermeta"]["winviz"]
    # Altair validated the spec without the handlers; a spec without settings is unchanged
    assert with_replay({"params": [{"name": "t"}]}) == {"params": [{"name": "t"}]}
    for bad in (0, 0.1, True, "10", 4000):
        with pytest.raises(ValueError, match="replay_seconds"):
            scrubber(trace, replay_seconds=bad)  # type: ignore[arg-type]


def test_scrubber_replay_compiles_to_vega_timer(trace) -> None:
    """Vega-Lite copies the handlers into the Vega signals: a timer stream on t, t on play."""
    vg = vlc.vegalite_to_vega(scrubber(trace).to_dict())
    signals = {s["name"]: s for s in vg["signals"]}
    assert signals["t"]["on"][0]["events"] == {"type": "timer", "throttle": 100}
    assert signals["t"]["bind"]["input"] == "range"
    assert signals["play"]["on"] == [{"events": {"signal": "t"}, "update": "play && t < 700"}]
    assert signals["play"]["bind"] == {"input": "checkbox", "name": "play "}


def test_scrubber_data(trace) -> None:
    spec = scrubber(trace).to_dict()
    windows, _, wm, _, _, arrived = spec["layer"]
    assert [
        (w["x"], w["x2"], w["opened"], w["fired"], w["closed"]) for w in data(spec, windows)
    ] == [
        (0, 5000, 0, 200, 600),
        (5000, 10000, 100, 700, 700),
    ]
    # no session merge here: "merged away" is not in the legend
    assert windows["encoding"]["color"]["scale"]["domain"] == ["open", "fired", "gone"]
    assert [(w["proc"], w["x"]) for w in data(spec, wm)] == [(200, 5499), (600, 7499), (700, 10300)]
    assert [(e["x"], e["arrived"], e["fate"]) for e in data(spec, arrived)] == [
        (1000, 0, "on time"),
        (1200, 50, "on time"),
        (7000, 100, "on time"),
        (4500, 300, "late, accepted"),
        (9000, 400, "on time"),
        (2000, 700, "dropped"),
    ]


def render(spec: dict[str, Any], t: int) -> str:
    spec = json.loads(json.dumps(spec))
    spec["params"][0]["value"] = t
    return vlc.vegalite_to_svg(json.dumps(spec))


def labels(svg: str, prefix: str) -> list[str]:
    return [m for m in re.findall(r'aria-label="([^"]*)"', svg) if m.startswith(prefix)]


def test_scrubber_slider_changes_marks(trace) -> None:
    """Render at t = 150 and t = 650 (the slider's value in the spec) and read the marks."""
    spec = scrubber(trace).to_dict()
    early, late = render(spec, 150), render(spec, 650)

    # coloured element symbols carry the fate legend field ("element: ...")
    def arrived(svg: str) -> list[str]:
        return [s for s in labels(svg, "x: ") if "element: " in s]

    def faded(svg: str) -> list[str]:
        return [s for s in labels(svg, "x: ") if "kind: element" in s and "element: " not in s]

    def states(svg: str) -> list[str]:
        return re.findall(r"state at t: (\w+)", svg)

    assert len(arrived(early)) == 3 and len(faded(early)) == 3
    assert len(arrived(late)) == 5 and len(faded(late)) == 1
    # windows: at 150 both open; at 650 [0, 5000) gone, [5000, 10000) open
    assert states(early) == ["open", "open"]
    assert states(late) == ["gone", "open"]
    assert "fired" in states(render(spec, 300))
    # watermark at t: none before the first watermark (200 ms), 7,499 ms at 650
    assert "watermark 7,499 ms" in late and "watermark 5,499 ms" not in late
    assert "watermark " not in "".join(labels(early, "watermark"))
    assert "watermark 5,499 ms" in render(spec, 200)


def test_scrubber_html_is_self_contained(trace, tmp_path) -> None:
    from winviz.viz import save_html

    path = tmp_path / "s.html"
    save_html(scrubber(trace), str(path))
    html = path.read_text()
    assert '"bind"' in html and '"input": "range"' in html.replace(
        '"input":"range"', '"input": "range"'
    )


def test_scrubber_binned_large() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([(f"k{i % 5}", i * 10) for i in range(6000)], arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .aggregate(wv.CountAggregate())
        .sink_to("o")
    )
    spec = scrubber(env.execute().trace).to_dict()
    assert all(len(rows) <= scale.ROW_LIMIT for rows in spec["datasets"].values())
    assert any("binned" in n for n in spec["usermeta"]["winviz"]["notes"])
    assert spec["layer"][-1]["encoding"]["size"]["field"] == "count"


def test_scrubber_message_card() -> None:
    spec = scrubber(wv.Trace()).to_dict()
    assert spec["usermeta"]["winviz"] == {
        "chart": "scrubber",
        "status": "message",
        "message": "The trace is empty.",
    }
    with pytest.raises(ValueError):
        scrubber(wv.Trace(), future="blink")  # type: ignore[arg-type]


def test_frames_timer_lives_match_records(trace) -> None:
    view = frames.open_trace(trace)
    lives = frames.timer_lives(frames.timer_records(view, "window"))
    assert lives["end"].tolist() == ["fired"] * 6
