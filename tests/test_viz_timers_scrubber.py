"""winviz.viz.timers_chart and winviz.viz.scrubber: layers, encodings, parameter binding and
the exact data each mark gets for small jobs run on the real engine; the scrubber's slider
checked by rendering with the parameter value overridden (vl-convert, no browser)."""

from __future__ import annotations

import json
import re
from typing import Any

import altair as alt
import pytest
import vl_convert as vlc
from jobs import bounded, count_pipeline

import winviz as wv
from winviz.viz import palette, scale, timers
from winviz.viz.scrubber import replay_settings, scrubber
from winviz.viz.spec import rows as spec_rows
from winviz.viz.timer_records import timer_lives, timer_records
from winviz.viz.timers import timers_chart
from winviz.viz.trace_view import open_trace

DEDUP = "registration of a timer that already existed (de-duplicated)"


def event_job() -> wv.Trace:
    """Tumbling 5 s event-time windows, out-of-orderness 1500 ms, allowed lateness 1000 ms.

    Each new (key, window) registers two event-time timers: window end - 1 (fire) and
    end - 1 + lateness (cleanup). a@4500 at 300 ms and a@9000 at 400 ms register them again:
    de-duplicated. Watermark 5499 at 200 ms fires the [0, 5000) timers at 4999; 7499 at
    600 ms fires the cleanup timers at 5999 (and deletes the already-fired 4999 timer: a
    no-op); the end-of-input watermark at 700 ms fires a's [5000, 10000) timers."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("b", 1200), ("a", 7000), ("a", 4500), ("a", 9000), ("a", 2000)],
        5000,
        bounded(1500),
        lateness=1000,
        sink="counted",
        arrival_times=[0, 50, 100, 300, 400, 700],
    )
    return env.execute().trace


def processing_job() -> wv.Trace:
    """Tumbling 1 s processing-time windows: a's timer at 999 fires; b's at 1999 is still
    queued when the input ends at 1200 ms."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", 1), ("a", 2), ("b", 3)]
    processing = wv.TumblingProcessingTimeWindows.of(1000)
    count_pipeline(env, events, processing, None, arrival_times=[0, 100, 1200])
    return env.execute().trace


@pytest.fixture(scope="module")
def trace() -> wv.Trace:
    return event_job()


def data(spec: dict[str, Any], lay: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["datasets"][lay["data"]["name"]]


# -- timers_chart -------------------------------------------------------------------------------


def layer_of(spec: dict[str, Any], kind: str) -> dict[str, Any]:
    """The layer of the timers chart's left panel whose rows are of this ``kind``."""
    for lay in spec["hconcat"][0]["layer"]:
        rows = data(spec, lay)
        if rows and rows[0].get("kind") == kind:
            return lay
    raise AssertionError(f"no layer of kind {kind!r}")


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return data(spec, layer_of(spec, kind))


def test_timers_layers_and_encodings(trace) -> None:
    spec = timers_chart(trace).to_dict()
    assert spec["usermeta"]["winviz"]["status"] == "ok"
    assert spec["usermeta"]["winviz"]["notes"] == [
        "operator 'window': 6 timers of 2 key(s) (0 still queued at the end), "
        "3 de-duplicated registrations",
        "an event-time timer fires when the watermark (black staircase) reaches its timestamp: "
        "at the next advance if it is already at or below it",
        # issue 26: who set each timer (derived: the trace does not record it)
        "set by (derived with WindowOperator.cleanupTime: the trace does not record it): "
        "3 trigger timers, 3 cleanup timers; cleanup timers are thin",
        "the watermark reached MAX (end of input) at 700 ms: its last step leaves the chart to "
        "the right",
    ]
    main, panel = spec["hconcat"]
    kinds = [data(spec, lay)[0].get("kind", "vertex") for lay in main["layer"]]
    # first the queue panel's processing time drawn across (the link), then the watermark
    assert kinds == [
        "queue size",
        "vertex",
        "timer",
        "timer event",
        "watermark",  # the watermark's dots over the timer events, never under one (issue 26)
        "timestamp",
        "label",
    ]
    link = main["layer"][0]
    assert link["mark"]["type"] == "rule" and set(link["encoding"]) == {"y"}
    assert link["transform"] == [{"filter": {"param": "queue_at", "empty": False}}]
    rule = layer_of(spec, "timer")
    assert rule["mark"] == {"type": "rule", "strokeWidth": 2.5, "xOffset": {"expr": "datum.dx"}}
    enc = rule["encoding"]
    # x: the timer's timestamp; y: processing time from registration (y) to its end (y2)
    assert (enc["x"]["field"], enc["y"]["field"], enc["y2"]) == ("x", "y", {"field": "y2"})
    assert enc["x"]["axis"]["title"] == "timer timestamp (event time or processing time) (ms)"
    assert enc["y"]["axis"]["title"] == "processing time (ms)"
    assert enc["x"]["scale"]["domain"] == [4819, 11179]  # 4999..10999, padded 3 %
    assert enc["y"]["scale"]["domain"] == [-21, 721]
    # two keys: coloured by key; the domain is the line's dash
    assert enc["color"] == {
        "field": "key",
        "type": "nominal",
        "title": "timer of key",
        # keys in identity colours, none of them a domain's (issue 26: orange was key "b" here
        # and processing time when coloured by domain)
        "scale": {"domain": ["a", "b"], "range": ["#332288", "#88CCEE"]},
    }
    # only event-time timers here: the dash legend names that domain alone
    assert enc["strokeDash"]["scale"] == {"domain": ["event"], "range": [[1, 0]]}
    # every timer event is a shape of one legend, de-duplicated registrations included, in
    # the de-duplication grey (neither domain's colour, nor the watermark's black)
    events = layer_of(spec, "timer event")
    assert events["mark"]["color"] == "#5C5C5C"
    assert events["encoding"]["shape"] == {
        "field": "event",
        "type": "nominal",
        "title": "timer event",
        "scale": {
            # (only the events drawn: no timer of this job is deleted or still queued)
            "domain": ["registered", DEDUP, "fired"],
            "range": ["circle", "triangle-down", "square"],
        },
        "legend": {"labelLimit": 0},
    }
    # the queue size: a panel on the same processing-time axis; its points pick the time
    line, points = panel["layer"]
    assert line["mark"]["type"] == "line" and points["mark"]["type"] == "point"
    assert line["encoding"]["x"]["title"] == "timers queued"
    assert line["encoding"]["x"]["axis"] == {"format": "d", "values": [0, 2, 4, 6]}
    assert line["encoding"]["x"]["scale"] == {"zero": True}
    assert line["encoding"]["y"] == enc["y"]
    assert spec["params"] == [
        {
            "name": "queue_at",
            "select": {
                "type": "point",
                "clear": "pointerout",
                "fields": ["y"],
                "nearest": True,
                "on": "pointerover",
            },
            "views": ["queue_points_1"],
        }
    ]
    assert "timer_key" not in {p["name"] for p in spec["params"]}  # two keys: no dropdown


def test_timers_rules_at_their_timestamps(trace) -> None:
    spec = timers_chart(trace).to_dict()
    got = [
        (r["key"], r["namespace"], r["x"], r["dx"], r["y"], r["y2"], r["end"], r["reg_seq"])
        for r in rows_of(spec, "timer")
    ]
    # a's and b's timers at 4999 (and 5999) stand 4 px apart; each ends where it fired
    assert got == [
        ("a", "[0, 5000)", 4999, -2.0, 0, 200, "fired", 3),
        ("a", "[0, 5000)", 5999, -2.0, 0, 600, "fired", 5),
        ("b", "[0, 5000)", 4999, 2.0, 50, 200, "fired", 9),
        ("b", "[0, 5000)", 5999, 2.0, 50, 600, "fired", 11),
        ("a", "[5000, 10000)", 9999, 0.0, 100, 700, "fired", 15),
        ("a", "[5000, 10000)", 10999, 0.0, 100, 700, "fired", 17),
    ]
    first = rows_of(spec, "timer")[0]
    assert (first["timestamp"], first["registered"], first["ended"], first["end_seq"]) == (
        "4,999 ms",
        "0 ms",
        "200 ms",
        21,
    )
    # the watermark that fired it: 5499 >= 4999
    assert first["watermark at registration"] == "MIN (Long.MIN_VALUE)"
    assert first["watermark at end"] == "5,499 ms"
    assert [(r["x"], r["y"], r["dx"], r["text"]) for r in rows_of(spec, "timestamp")] == [
        (4999, 100.0, -2.0, "@ 4,999 ms"),
        (5999, 300.0, -2.0, "@ 5,999 ms"),
        (9999, 400.0, 0.0, "@ 9,999 ms"),
        (10999, 400.0, 0.0, "@ 10,999 ms"),
    ]


def test_timers_watermark_staircase(trace) -> None:
    """The operator's watermark: 5499 at 200 ms, 7499 at 600 ms, MAX at 700 ms (on the right
    edge) — each event-time rule ends on the step that reached its timestamp."""
    spec = timers_chart(trace).to_dict()
    vertices = data(spec, spec["hconcat"][0]["layer"][1])
    assert [(v["x"], v["y"]) for v in vertices] == [
        (5499, 200),
        (5499, 600),
        (7499, 600),
        (7499, 700),
        (11179, 700),
        (11179, 721),
    ]
    assert [(w["watermark"], w["proc_time"]) for w in rows_of(spec, "watermark")] == [
        ("5,499 ms", "200 ms"),
        ("7,499 ms", "600 ms"),
        ("MAX (Long.MAX_VALUE)", "700 ms"),
    ]
    steps = {200: 5499, 600: 7499, 700: 2**63 - 1}
    for timer in rows_of(spec, "timer"):
        ts = int(timer["timestamp"].replace(",", "").removesuffix(" ms"))
        before = [w for t, w in steps.items() if t < timer["y2"]]
        assert steps[timer["y2"]] >= ts and all(w < ts for w in before)


def test_timers_events_and_dedup(trace) -> None:
    spec = timers_chart(trace).to_dict()
    events = [(e["event"], e["key"], e["x"], e["dx"], e["y"]) for e in rows_of(spec, "timer event")]
    assert events == [
        ("registered", "a", 4999, -2.0, 0),
        ("fired", "a", 4999, -2.0, 200),
        ("registered", "a", 5999, -2.0, 0),
        ("fired", "a", 5999, -2.0, 600),
        ("registered", "b", 4999, 2.0, 50),
        ("fired", "b", 4999, 2.0, 200),
        ("registered", "b", 5999, 2.0, 50),
        ("fired", "b", 5999, 2.0, 600),
        ("registered", "a", 9999, 0.0, 100),
        ("fired", "a", 9999, 0.0, 700),
        ("registered", "a", 10999, 0.0, 100),
        ("fired", "a", 10999, 0.0, 700),
        # each at the timestamp of the timer it found queued, 8 px right of its rightmost
        # rule (a's at -2 px, b's at +2 px at 5,999; a's alone at 9,999 and 10,999), not on
        # the rule, where it could not be seen (issue 26)
        (DEDUP, "a", 5999, 10.0, 300),
        (DEDUP, "a", 9999, 8.0, 400),
        (DEDUP, "a", 10999, 8.0, 400),
    ]
    dedup = [e for e in rows_of(spec, "timer event") if e["event"] == DEDUP]
    assert [e["reg_seq"] for e in dedup] == [38, 42, 44]
    queue = data(spec, spec["hconcat"][1]["layer"][0])
    assert [(q["y"], q["size"]) for q in queue] == [
        (0, 2),
        (50, 2),
        (50, 4),
        (100, 4),
        (100, 6),
        (200, 6),
        (200, 4),
        (600, 4),
        (600, 2),
        (700, 2),
        (700, 0),
        (700, 0),
    ]


def test_timers_processing_domain_and_pending() -> None:
    """Processing-time timers against the diagonal: a's 999 fires when the clock reaches 999;
    b's 1999 is still queued at the end (1,200 ms): its rule reaches the top edge."""
    spec = timers_chart(processing_job()).to_dict()
    rules = rows_of(spec, "timer")
    assert [
        (r["key"], r["domain"], r["x"], r["y"], r["y2"], r["end"], r["ended"]) for r in rules
    ] == [
        ("a", "processing", 999, 0, 999, "fired", "999 ms"),
        ("b", "processing", 1999, 1200, 1236, "queued at the end", ""),
    ]
    # both axes span the clock (0..1,200 ms) and the timestamps: the diagonal crosses them
    diagonal = rows_of(spec, "processing time")
    assert [(d["x"], d["y"]) for d in diagonal] == [(-36, -36), (1236, 1236)]
    notes = spec["usermeta"]["winviz"]["notes"]
    assert notes[1] == (
        "a processing-time timer fires when processing time (grey diagonal) reaches its timestamp"
    )
    # no event-time timer: no watermark staircase
    assert not any(
        (data(spec, lay) or [{}])[0].get("kind") == "watermark"
        for lay in spec["hconcat"][0]["layer"]
    )
    dedup = [e for e in rows_of(spec, "timer event") if e["event"] == DEDUP]
    # the window's trigger and its cleanup both ask for timer 999 (a@1 at 0 ms: one
    # de-duplicated; a@2 at 100 ms: two); b's 1999 likewise at 1,200 ms; each 8 px right
    # of its rule; the two at 100 ms (one ▼ would cover the other) are one ▼ "×2" (issue 26)
    assert [
        (e["x"], e["y"], e["dx"], e["registered"], e["registrations"], e["reg_seq"]) for e in dedup
    ] == [
        (999, 0, 8.0, "0 ms", 1, 5),
        (999, 100, 8.0, "100 ms", 2, 9),
        (1999, 1200, 8.0, "1,200 ms", 1, 24),
    ]
    assert [(t["x"], t["y"], t["dx"], t["text"]) for t in rows_of(spec, "dedup count")] == [
        (999, 100, 13.0, "×2")  # right of its ▼ (8 px + its half, 4 px, + 1)
    ]
    assert notes[-2:] == [
        "de-duplicated registrations ▼: 4 drawn as 3 ▼ at their processing time beside their "
        "timestamp's rules (a ▼ with ×n: n of one timestamp at or near its processing time; "
        "hover for their times)",
        # b's rule (1,200 to 1,236 ms, at the top edge): no room on the plot for "@ 1,999 ms"
        "1 timestamp label(s) left out where they would cross a mark",
    ]


def test_timers_frame_input_agrees(trace) -> None:
    a = timers_chart(trace).to_dict()
    b = timers_chart(trace.to_pandas()).to_dict()
    assert a["datasets"] == b["datasets"]


def many_keys_job(keys: int, n: int) -> wv.Trace:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [(f"k{i % keys}", i * 10) for i in range(n)],
        1000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        sink="o",
        arrival_interval=10,
    )
    return env.execute().trace


def test_timers_key_dropdown_for_many_keys() -> None:
    """Ten keys: coloured by domain, a dropdown of the keys; the timer layers keep the rows of
    the chosen key ("" = every key)."""
    spec = timers_chart(many_keys_job(10, 40)).to_dict()
    assert [p for p in spec["params"] if p["name"] == "timer_key"] == [
        {
            "name": "timer_key",
            "value": "",
            "bind": {
                "input": "select",
                "options": ["", *[f"k{i}" for i in range(10)]],
                "labels": ["every key", *[f"k{i}" for i in range(10)]],
                "name": "key ",
            },
        }
    ]
    keep = [{"filter": "timer_key === '' || datum.key === timer_key"}]
    assert layer_of(spec, "timer")["transform"] == keep
    # the timer events' layer holds ▼ placed for one dropdown value each (their ``view``)
    by_view = "isDefined(datum.view) ? datum.view === timer_key : (" + keep[0]["filter"] + ")"
    assert layer_of(spec, "timer event")["transform"] == [{"filter": by_view}]
    assert "transform" not in layer_of(spec, "watermark")
    assert layer_of(spec, "timer")["encoding"]["color"]["field"] == "domain"
    rules = rows_of(spec, "timer")
    # 10 keys' timers at 999 spread 2.4 px apart around it
    at_999 = [r["dx"] for r in rules if r["x"] == 999]
    assert at_999 == [-10.8, -8.4, -6.0, -3.6, -1.2, 1.2, 3.6, 6.0, 8.4, 10.8]
    assert spec["usermeta"]["winviz"]["notes"][-1] == "10 keys: the dropdown shows one key's timers"


def test_timers_dropdown_filters_in_the_renderer() -> None:
    """Rendered with timer_key = "k3": only k3's timer is drawn (1 of 10: each key's four
    elements fall in [0, 1000))."""
    spec = timers_chart(many_keys_job(10, 40)).to_dict()

    key = next(p for p in spec["params"] if p["name"] == "timer_key")

    def rules(value: str) -> list[str]:
        key["value"] = value
        svg = vlc.vegalite_to_svg(spec)
        return re.findall(r'aria-label="([^"]*)"[^>]*aria-roledescription="rule mark"', svg)

    assert [re.search(r"key: (k\d+)", r).group(1) for r in rules("k3")] == ["k3"]
    assert len(rules("")) == 10


def test_timers_dropdown_shows_each_keys_dedups() -> None:
    """A key picked in the dropdown shows all its de-duplicated registrations, placed for its
    view alone, and only their "×n" (issue 26): k7's four elements (arrivals 70, 170, 270,
    370 ms) each re-register the window's timer 999 (the trigger's; the first's cleanup timer
    is the same timer): 1, 2, 2 and 2 registrations. Before, the every-key view's ▼ of 370 –
    380 ms (k7's and k8's, ×4) was the only one at 370 ms and was hidden for k7, and every
    other ▼'s "×2" stayed drawn with its ▼ hidden."""
    spec = timers_chart(many_keys_job(10, 40)).to_dict()
    dedups = [r for r in rows_of(spec, "timer event") if r["event"] == timers.DEDUP_EVENT]
    views = {r["view"] for r in dedups}
    assert views == {"", *[f"k{i}" for i in range(10)]}
    # every view counts its key's registrations once: 7 per key, 70 for every key
    layers = [data(spec, lay) for lay in spec["hconcat"][0]["layer"]]
    above = next(rows for rows in layers if rows and "above" in rows[0] and "text" not in rows[0])
    for view in views:
        n = sum(r["registrations"] for r in [*dedups, *above] if r["view"] == view)
        assert n == (70 if view == "" else 7), view
    k7 = [(r["key"], r["y"], r["registrations"], r["registered"]) for r in dedups
          if r["view"] == "k7"]  # fmt: skip
    assert k7 == [
        ("k7", 70, 1, "70 ms"),
        ("k7", 170, 2, "170 ms"),
        ("k7", 270, 2, "270 ms"),
        ("k7", 370, 2, "370 ms"),
    ]

    key = next(p for p in spec["params"] if p["name"] == "timer_key")

    def drawn(value: str) -> tuple[list[tuple[str, str]], list[str]]:
        key["value"] = value
        svg = vlc.vegalite_to_svg(spec)
        points = re.findall(r'aria-label="([^"]*)"[^>]*aria-roledescription="point"', svg)
        marks = [
            re.search(r"registered: ([^;]*);.*registrations: (\d+)", p).groups()
            for p in points
            if timers.DEDUP_EVENT in p
        ]
        return marks, re.findall(r">(×\d+)<", svg)

    assert drawn("k7") == (
        [("70 ms", "1"), ("170 ms", "2"), ("270 ms", "2"), ("370 ms", "2")],
        ["×2", "×2", "×2"],
    )
    every, counts = drawn("")
    assert (len(every), sum(int(n) for _, n in every)) == (39, 70)
    assert every[-2:] == [("370 ms – 380 ms", "4"), ("390 ms", "2")]  # (390: the row above)
    assert len(counts) == 29


def test_timers_aggregate_large_traces() -> None:
    spec = timers_chart(many_keys_job(50, 12_000)).to_dict()
    assert all(len(rows) <= scale.ROW_LIMIT for rows in spec["datasets"].values())
    notes = spec["usermeta"]["winviz"]["notes"]
    assert notes[0].startswith("operator 'window': 6,000 timers of 50 key(s)")
    assert "6,000 timers drawn as one rule per (domain, timestamp)" in notes[2]
    rules = rows_of(spec, "timer")
    assert len(rules) == 120  # one per window end 999, 1999, ...
    assert [(r["x"], r["timers"], r["keys"], r["end"]) for r in rules[:2]] == [
        (999, 50, 50, "fired"),
        (1999, 50, 50, "fired"),
    ]
    assert [p["name"] for p in spec["params"]] == ["queue_at"]  # no key dropdown


def test_epoch_axes_are_quantitative_with_utc_labels() -> None:
    """Epoch times (2019-08-24 16:00 UTC here) are drawn on a quantitative scale with the
    labels written as UTC times: Vega-Lite's utc scale with a millisecond domain makes Vega warn
    ("Infinite extent for field data") on the lesson pages."""
    midnight = 1_566_662_400_000
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", midnight - 2_000), ("a", midnight + 500)],
        1000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        sink="o",
        arrival_times=[midnight - 1_000, midnight + 1_000],
    )
    spec = timers_chart(env.execute().trace).to_dict()
    enc = layer_of(spec, "timer")["encoding"]
    assert enc["x"]["type"] == enc["y"]["type"] == "quantitative"
    assert enc["x"]["axis"] == {
        "title": "timer timestamp (event time or processing time) (UTC)",
        "labelExpr": "utcFormat(datum.value, '%H:%M:%S')",
        "labelOverlap": True,
    }
    assert [r["x"] for r in rows_of(spec, "timer")] == [midnight - 1_001, midnight + 999]
    assert rows_of(spec, "timer")[0]["timestamp"] == "2019-08-24 15:59:58.999 UTC"


def test_timers_message_cards() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).sink_to("s")
    spec = timers_chart(env.execute().trace).to_dict()
    assert spec["usermeta"]["winviz"]["status"] == "message"
    assert spec["usermeta"]["winviz"]["chart"] == "timers_chart"
    assert timers_chart(None).to_dict()["usermeta"]["winviz"]["status"] == "message"
    with pytest.raises(ValueError):
        timers_chart(wv.Trace(), width=10)


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
        },
        {"name": "play", "value": False, "bind": {"input": "checkbox", "name": "play "}},
    ]
    # replay: 10 s at one tick per 100 ms = 100 ticks over 700 ms → 7 ms per tick
    assert spec["usermeta"]["winviz"]["replay"]["step"] == 7
    kinds = [(lay["mark"]["type"], data(spec, lay)[0]["kind"]) for lay in spec["layer"]]
    assert kinds == [
        ("rect", "window"),
        ("rule", "now"),
        ("rule", "watermark at t"),
        ("text", "watermark at t"),
        ("point", "fired"),  # firings made by t (issue 26), under the elements
        ("point", "element"),  # future, faded
        ("point", "element"),  # arrived by t
        ("point", "end of input (outline)"),  # its square's outline over them (issue 26)
        ("text", "firing count"),  # "×2": a's and b's [0, 5000) fired at one point, over all
    ]
    windows, now, wm, _, _, fut, arrived, _, _ = spec["layer"]
    assert windows["transform"][0]["calculate"].startswith("t < datum.opened_at ? 'not yet'")
    assert now["transform"] == [{"calculate": "t", "as": "y"}]
    assert wm["transform"][0] == {"filter": "datum.proc <= t"}
    assert fut["transform"] == [{"filter": "datum.y > t"}]
    assert arrived["transform"] == [{"filter": "datum.y <= t"}]
    assert arrived["encoding"]["color"]["field"] == "what"  # (the timeline's element layer)
    assert arrived["encoding"]["color"]["title"] == "element"
    assert scrubber(trace, at=250).to_dict()["params"][0]["value"] == 250
    assert len(scrubber(trace, future="hide").to_dict()["layer"]) == 8


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
    # no event handler in the spec: the page's script plays it (winviz.viz.view_script)
    assert [sorted(p) for p in spec["params"]] == [["bind", "name", "value"]] * 2
    # a slider step of 10 ms: the tick is rounded up to a multiple of it
    assert replay_settings(0, 25_000, 10, 10.0)["step"] == 250
    assert replay_settings(0, 25_003, 10, 10.0)["step"] == 260
    assert replay_settings(5, 5, 1, 10.0)["step"] == 1  # one processing time: one step
    # no replay: only the slider, no handlers, no settings
    plain = scrubber(trace, replay=False).to_dict()
    assert [p["name"] for p in plain["params"]] == ["t"] and "on" not in plain["params"][0]
    assert "replay" not in plain["usermeta"]["winviz"]
    for bad in (0, 0.1, True, "10", 4000):
        with pytest.raises(ValueError, match="replay_seconds"):
            scrubber(trace, replay_seconds=bad)  # type: ignore[arg-type]


def test_scrubber_replay_compiles_to_no_vega_timer(trace) -> None:
    """No timer stream in the Vega spec (Vega 6 ran its interval from the view's start, playing
    or not, each tick measuring the view's <svg>): "play" and t are plain bound signals, in
    every to_dict and in the html renderers' bundle; the page's script plays them."""
    chart = scrubber(trace)
    vg = vlc.vegalite_to_vega(chart.to_dict())
    signals = {s["name"]: s for s in vg["signals"]}
    assert '"timer"' not in json.dumps(vg)
    assert "on" not in signals["t"] and "on" not in signals["play"]
    assert signals["t"]["bind"]["input"] == "range"
    assert signals["play"]["bind"] == {"input": "checkbox", "name": "play "}
    expected = chart.to_dict()["params"]
    assert chart.to_dict(context={"pre_transform": False})["params"] == expected
    active = alt.renderers.active
    alt.renderers.enable("mimetype")
    try:
        bundle = chart._repr_mimebundle_()
    finally:
        alt.renderers.enable(active)
    data_, _ = bundle if isinstance(bundle, tuple) else (bundle, None)
    shown = data_["application/vnd.vegalite.v6.json"]
    assert shown["params"] == expected
    assert shown["usermeta"]["winviz"]["replay"] == chart.to_dict()["usermeta"]["winviz"]["replay"]


def test_scrubber_data(trace) -> None:
    spec = scrubber(trace).to_dict()
    windows, _, wm, _, _, arrived, _, _, _ = spec["layer"]  # (the last: the count badge)
    assert [
        (w["x"], w["x2"], w["opened_at"], w["fired_at"], w["closed_at"])
        for w in data(spec, windows)
    ] == [
        (0, 5000, 0, 200, 600),
        (5000, 10000, 100, 700, 700),
    ]
    # no session merge here: "merged away" is not in the legend
    assert windows["encoding"]["color"]["scale"]["domain"] == ["open", "fired", "gone"]
    assert [(w["proc"], w["x"]) for w in data(spec, wm)] == [(200, 5499), (600, 7499), (700, 10300)]
    assert [(e["x"], e["y"], e["what"]) for e in data(spec, arrived)] == [
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
    count_pipeline(
        env,
        [(f"k{i % 5}", i * 10) for i in range(6000)],
        5000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        sink="o",
        arrival_interval=10,
    )
    spec = scrubber(env.execute().trace).to_dict()
    assert all(len(rows) <= scale.ROW_LIMIT for rows in spec["datasets"].values())
    assert any("binned" in n for n in spec["usermeta"]["winviz"]["notes"])
    # the binned elements over the firings, the end of input's square outline over them, the
    # firings' count badges (5 keys a window) last, with the leader lines of those placed
    # beyond reach (below their squares: off "now")
    assert spec["layer"][-4]["encoding"]["size"]["field"] == "count"
    assert spec["layer"][-3]["mark"]["filled"] is False  # the end of input's outline
    assert [lay["mark"]["type"] for lay in spec["layer"][-2:]] == ["rule", "text"]


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
    view = open_trace(trace)
    lives = timer_lives(timer_records(view, "window"))
    assert lives["end"].tolist() == ["fired"] * 6


def test_more_timer_events_than_a_layer_holds_are_drawn_as_layers_alike(monkeypatch: Any) -> None:
    """A key dropdown's views may hold an event twice (``timer_places.side_by_side``): past
    ``scale.ROW_LIMIT`` rows the events are split over layers drawn alike."""
    monkeypatch.setattr(scale, "ROW_LIMIT", 2)
    axis = palette.time_axis("t", [0, 10])
    rows = [{"kind": "timer event", "event": "fired", "x": i, "y": i, "dx": 0.0} for i in range(3)]
    layers = timers._event_layers(rows, axis, axis)
    assert [spec_rows(layer) for layer in layers] == [rows[:2], rows[2:]]
    assert layers[0]["mark"] == layers[1]["mark"]
    assert layers[0]["encoding"] == layers[1]["encoding"]
    monkeypatch.setattr(scale, "ROW_LIMIT", 5000)
    assert [spec_rows(layer) for layer in timers._event_layers(rows, axis, axis)] == [rows]
