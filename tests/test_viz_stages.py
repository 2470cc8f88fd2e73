"""winviz.viz.stage_watermarks / stage_watermark_table: each operator's input channels, its
combined input watermark and its output watermark at a moment, read off the trace — a
partitioned source (MIN over the active partitions, one idle), a union whose inputs both go
idle (MAX over all), an assigner (its input ignored), parallel subtasks (channels per
upstream subtask), a moment given by seq; the chart validates and names MIN / MAX; bad
arguments raise naming them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jobs import build, count_pipeline, restored_after_idle
from test_why import UNALIGNED_JOB

import winviz as wv
from winviz.time import MAX, MIN
from winviz.viz import palette
from winviz.viz import spec as charts
from winviz.viz.stages import stage_watermark_table, stage_watermarks

PARTS = [[("a", 1000), ("a", 3000), ("a", 7000)], [("b", 2000), ("b", 2500)]]
PART_ARRIVALS = [[0, 500, 1500], [100, 600]]
ASSIGNER = "ignored except MAX (TimestampsAndWatermarksOperator)"


def strategy(idle: int | None = None) -> wv.WatermarkStrategy:
    s = wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
        lambda e, _: e[1]
    )
    return s if idle is None else s.with_idleness(idle)


def two_stages() -> wv.JobExecutionResult:
    """A partitioned source (idleness 500 ms), per-key 2 s counts, then 4 s totals."""
    env = wv.StreamExecutionEnvironment()
    per_key = (
        env.from_partitions(PARTS, arrival_times=PART_ARRIVALS, name="clicks")
        .assign_timestamps_and_watermarks(strategy(500))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(2)))
        .aggregate(wv.CountAggregate(), lambda k, ctx, n, out: out.collect((k, n[0])))
        .name("per_key")
    )
    (
        per_key.key_by(lambda r: "all")
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(4)))
        .aggregate(wv.CountAggregate())
        .name("total")
        .sink_to("out")
    )
    return env.execute()


def union() -> wv.JobExecutionResult:
    """Two sources, each with its assigner (idleness 300 ms), united into one window."""
    env = wv.StreamExecutionEnvironment()
    a = (
        env.from_collection([("a", 1000), ("a", 1500)], arrival_times=[0, 100], name="src_a")
        .assign_timestamps_and_watermarks(strategy(300))
        .name("wm_a")
    )
    b = (
        env.from_collection([("b", 500), ("b", 3000)], arrival_times=[0, 2000], name="src_b")
        .assign_timestamps_and_watermarks(strategy(300))
        .name("wm_b")
    )
    (
        a.union(b)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(1)))
        .aggregate(wv.CountAggregate())
        .name("counts")
        .sink_to("out")
    )
    return env.execute()


def rows(frame: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in frame.itertuples(index=False)]


def test_a_partitioned_source_takes_the_min_over_its_active_partitions() -> None:
    run = two_stages()
    at_800 = stage_watermark_table(run, 800)
    assert (at_800.seq, at_800.proc_time) == (48, 800)
    assert rows(at_800.operators) == [
        ("clicks", "clicks", None, None, "a source: no input", MIN, False, False, ()),
        ("watermarks", "watermarks", None, 2499, "MIN over the active channels", 2499, False,
         False, ("clicks",)),
        ("per_key", "per_key", None, 2499, "from 'watermarks'", 2499, False, False,
         ("watermarks",)),
        ("total", "total", None, 2499, "from 'per_key'", 2499, False, False, ("per_key",)),
    ]  # fmt: skip
    assert rows(at_800.channels) == [
        ("watermarks", 0, "clicks[0]", 2999, False, False),
        ("watermarks", 1, "clicks[1]", 2499, False, True),  # holds the minimum
    ]
    # at 1400 partition 0 is idle (500 ms without a record): it drops out of the minimum
    at_1400 = stage_watermark_table(run, 1400)
    assert rows(at_1400.channels) == [
        ("watermarks", 0, "clicks[0]", 2999, True, False),
        ("watermarks", 1, "clicks[1]", 2499, False, True),
    ]
    # the valve's output is the trace's watermark record of the operator at that moment
    last = [r.ts for r in run.trace.records("watermark", operator="watermarks") if r.seq <= 49]
    assert at_1400.operators["input_watermark"].tolist()[1] == last[-1] == 2499


def test_a_restore_starts_every_channel_again_active_at_min() -> None:
    """``restored_after_idle`` at seq 65: partition 1 was idle at 1499 before the failure; after
    the restore it is active at MIN and holds the minimum (the engine's watermark stays MIN)."""
    at_65 = stage_watermark_table(restored_after_idle(), seq=65)
    assert rows(at_65.channels) == [
        ("watermarks", 0, "source[0]", 4999, False, False),
        ("watermarks", 1, "source[1]", MIN, False, True),
    ]
    assert at_65.operators["input_watermark"].tolist()[1:] == [MIN, MIN]


def test_every_channel_idle_flushes_the_max_and_an_assigner_ignores_its_input() -> None:
    run = union()
    at_800 = stage_watermark_table(run, 800)
    assert rows(at_800.operators) == [
        ("src_a", "src_a", None, None, "a source: no input", MIN, False, False, ()),
        ("src_b", "src_b", None, None, "a source: no input", MIN, False, False, ()),
        ("wm_a", "wm_a", None, MIN, ASSIGNER, 1499, True, True, ("src_a",)),
        ("counts", "counts", None, 1499, "all channels idle: MAX over them", 1499, True, False,
         ("wm_a", "wm_b")),
        ("wm_b", "wm_b", None, MIN, ASSIGNER, 499, True, True, ("src_b",)),
    ]  # fmt: skip
    assert rows(at_800.channels) == [
        ("counts", 0, "wm_a", 1499, True, False),
        ("counts", 1, "wm_b", 499, True, False),
    ]
    at_200 = stage_watermark_table(run, 200)  # both active: the minimum, wm_b's
    assert at_200.operators.set_index("operator").loc["counts", "input_watermark"] == 499
    assert rows(at_200.channels) == [
        ("counts", 0, "wm_a", 1499, False, False),
        ("counts", 1, "wm_b", 499, False, True),
    ]


def test_a_moment_by_seq_and_the_end_of_input() -> None:
    run = union()
    # seq 53: src_a ended (MAX), wm_a forwarded MAX, wm_b still idle: the window is at MAX
    by_seq = stage_watermark_table(run, seq=53).operators.set_index("operator")
    assert by_seq.loc["wm_a", "input_watermark"] == MAX  # an assigner forwards MAX
    assert by_seq.loc["wm_a", "output_watermark"] == MAX
    assert by_seq.loc["counts", "input_watermark"] == MAX
    assert by_seq.loc["wm_b", "output_watermark"] == 499
    end = stage_watermark_table(run)
    assert end.seq == len(run.trace.columns()) - 1
    assert end.operators["output_watermark"].tolist() == [MAX] * 5


def parallel_job() -> wv.JobExecutionResult:
    """Two parallel subtasks reading a partitioned source (the browser gallery draws it too)."""
    env = wv.StreamExecutionEnvironment().set_parallelism(2)
    count_pipeline(
        env,
        PARTS,
        wv.TumblingEventTimeWindows.of(wv.seconds(2)),
        strategy(),
        partitioned=True,
        arrival_times=PART_ARRIVALS,
        name="clicks",
    )
    return env.execute()


def test_parallel_subtasks_read_one_channel_per_upstream_subtask() -> None:
    table = stage_watermark_table(parallel_job(), 700)
    ops = table.operators
    assert list(zip(ops["operator"], ops["subtask"], ops["upstream"], strict=True)) == [
        ("clicks#0", 0, ()),
        ("clicks#1", 1, ()),
        ("watermarks#0", 0, ("clicks#0",)),
        ("watermarks#1", 1, ("clicks#1",)),
        ("window#0", 0, ("watermarks#0", "watermarks#1")),
        ("window#1", 1, ("watermarks#0", "watermarks#1")),
    ]
    assert rows(table.channels)[2:4] == [
        ("window#0", 0, "watermarks#0", 2999, False, False),
        ("window#0", 1, "watermarks#1", 1999, False, True),
    ]
    assert ops["input_watermark"].tolist()[4:] == [1999, 1999]


def test_the_chart_validates_and_names_min_and_max() -> None:
    run = union()
    chart = stage_watermarks(run, 800)
    assert isinstance(chart, charts.CHECKED_CHARTS)
    spec = chart.to_dict()
    data = [r for rs in spec["datasets"].values() for r in rs]
    boxes = {r["id"]: r["text"].split("\n") for r in data if "id" in r}
    assert boxes["counts"] == [
        "ch 0 wm_a: 1499, idle",
        "ch 1 wm_b: 499, idle",
        "input: 1499",
        "= all channels idle: MAX over them",
        "output: 1499 (idle)",
    ]
    assert boxes["src_a"] == ["a source: no input", "output: MIN"]
    arrows = sorted({(r["edge"], r["label"]) for r in data if "edge" in r})
    assert arrows == [
        ("src_a → wm_a", "MIN"),
        ("src_b → wm_b", "MIN"),
        ("wm_a → counts", "1499"),
        ("wm_b → counts", "499"),
    ]
    text = json.dumps(spec) + json.dumps(stage_watermarks(run).to_dict())
    assert "MAX" in text and "9223372036854775807" not in text
    assert "9223372036854775808" not in text
    assert spec["usermeta"]["winviz"]["status"] == "ok"


def test_bad_arguments_name_themselves() -> None:
    run = union()
    with pytest.raises(ValueError, match=r"give at \(processing time\) or seq, not both"):
        stage_watermark_table(run, 800, seq=3)
    with pytest.raises(ValueError, match=r"seq 10000: expected an int record position in 0"):
        stage_watermarks(run, seq=10_000)
    with pytest.raises(ValueError, match=r"at '800': expected an int processing time"):
        stage_watermarks(run, "800")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"at -5: the trace starts at processing time 0"):
        stage_watermarks(run, -5)
    card = stage_watermarks(None)
    assert card.to_dict()["usermeta"]["winviz"]["status"] == "message"


def test_times_relative_to_a_start() -> None:
    spec = stage_watermarks(union(), 800, start=1000).to_dict()
    data = [r for rs in spec["datasets"].values() for r in rs]
    boxes = {r["id"]: r["text"].split("\n") for r in data if "id" in r}
    assert boxes["counts"][0] == "ch 0 wm_a: +499, idle"
    assert boxes["wm_b"][-1] == "output: -501, its generator's (idle)"
    assert boxes["src_a"][-1] == "output: MIN"  # MIN and MAX by name, never shifted
    assert spec["usermeta"]["winviz"]["notes"][0].startswith(
        "at processing time -200: after trace record 39"
    )
    with pytest.raises(ValueError, match=r"start '0': expected an int time"):
        stage_watermarks(union(), 800, start="0")  # type: ignore[arg-type]


def boxes_of(chart: Any) -> dict[str, dict[str, Any]]:
    """The chart's boxes by operator (``diagram.box_rows``)."""
    spec = chart.to_dict()
    return {r["id"]: r for rs in spec["datasets"].values() for r in rs if "id" in r}


def test_the_stages_go_top_down_and_fit_the_output_width() -> None:
    # one row per stage, centred: sources, assigners, the union's window (issue 26: the
    # stages side by side made the chart 938 px wide, wider than palette.FIT_WIDTH)
    chart = stage_watermarks(union(), 800)
    boxes = boxes_of(chart)
    assert {op: (b["x"], b["x2"], b["y"], b["y2"]) for op, b in boxes.items()} == {
        "src_a": (0.0, 250.0, 0.0, 51.0),  # title 4 + 13, gap 2, 2 lines of 13, bottom 6
        "src_b": (280.0, 530.0, 0.0, 51.0),  # 30 px right of it
        "wm_a": (0.0, 250.0, 111.0, 175.0),  # 60 px under the row above
        "wm_b": (280.0, 530.0, 111.0, 175.0),
        "counts": (140.0, 390.0, 235.0, 325.0),  # centred
    }
    spec = chart.to_dict()
    assert (spec["width"], spec["height"]) == (538, 333)
    # at most as many side by side as fit the width asked for: here one
    narrow = boxes_of(stage_watermarks(union(), 800, width=300))
    assert [narrow[op]["y"] for op in ("src_a", "src_b", "wm_a", "wm_b", "counts")] == [
        0.0, 111.0, 222.0, 346.0, 470.0
    ]  # fmt: skip
    # the default fits palette.FIT_WIDTH: three a row (4 px edge each side)
    assert 3 * 250 + 2 * 30 + 8 <= palette.FIT_WIDTH < 4 * 250 + 3 * 30 + 8


def test_a_long_line_is_wrapped_never_cut() -> None:
    # the lesson's times after a start are long: "ch 1 clicks[1]: +1,303,328, holds the MIN"
    run = two_stages()
    boxes = boxes_of(stage_watermarks(run, 800, start=-10_000_000))
    assert boxes["watermarks"]["text"].split("\n") == [
        "ch 0 clicks[0]: +10,002,999",
        "ch 1 clicks[1]: +10,002,499, holds the MIN",
        "input: +10,002,499",
        "= MIN over the active channels",
        "output: +10,002,499",
    ]
    for box in boxes_of(stage_watermarks(run, 800)).values():
        assert "…" not in box["text"] + box["title"]
    # a line too long for its box goes on as many lines as it needs, whole
    wide = boxes_of(stage_watermarks(run, 800, start=-(10**30)))["watermarks"]["text"]
    assert wide.split("\n")[:3] == [
        "ch 0 clicks[0]:",
        "+1,000,000,000,000,000,000,000,000,002,999",
        "ch 1 clicks[1]:",
    ]


def test_a_channel_below_the_output_is_not_aligned_at_a_valve_and_holds_at_partitions() -> None:
    """One rule with why_not_fired (``trace.channels.channel_states``). A union's window
    subtask (a StatusWatermarkValve): watermarks#1 came back from idle at 79, below 273, so
    it is not aligned and left out of the minimum. Partitions (a WatermarkOutputMultiplexer,
    no alignment): clicks[1] is active again at 1999 below 4999 and holds the watermark
    there until it catches up (Flink's CombinedWatermarkStatus only rises)."""
    trace = build(UNALIGNED_JOB, True).set_parallelism(2).execute().trace
    at_314 = stage_watermark_table(trace, 314)
    row = at_314.operators[at_314.operators["operator"] == "window#1"].iloc[0]
    assert (row.input_watermark, row.output_watermark) == (273, 273)
    assert row.input_rule == (
        "MIN over the active channels (one below it is not aligned yet: it rejoins once it "
        "catches up)"
    )
    env = wv.StreamExecutionEnvironment()
    parts = [[("a", 1000), ("a", 5000), ("a", 9000)], [("b", 100), ("b", 2000)]]
    (
        env.from_partitions(parts, arrival_times=[[0, 1000, 3000], [0, 1500]], name="clicks")
        .assign_timestamps_and_watermarks(strategy(500))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10000))
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    at_1700 = stage_watermark_table(env.execute(), 1700)
    assert rows(at_1700.channels) == [
        ("watermarks", 0, "clicks[0]", 4999, False, True),
        ("watermarks", 1, "clicks[1]", 1999, False, False),
    ]
    assert at_1700.operators["input_rule"].tolist()[1] == (
        "MIN over the active channels (one below it: the watermark only rises, it waits for "
        "that one)"
    )
