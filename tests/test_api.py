"""The fluent API end to end: pipelines that read like Flink code, their outputs, side
outputs, metrics and trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobs import bounded, timestamped

import winviz as wv

DATA = Path(__file__).resolve().parent.parent / "data"


def _clicks_job(bound: int = 500):
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    clicks = env.from_collection(
        [("alice", 1_000), ("bob", 2_500), ("alice", 4_999), ("alice", 900), ("bob", 100)],
        arrival_times=[0, 100, 200, 900, 5_000],
    )
    counts = (
        clicks.assign_timestamps_and_watermarks(bounded(bound))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(5)))
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
    )
    counts.sink_to("counts")
    return env, late


def test_readme_pipeline_counts_per_key_and_window() -> None:
    env, _ = _clicks_job()
    result = env.execute()
    # The periodic watermark at 200 ms is 4999 - 500 - 1 = 4498: nothing fires until the end
    # of input (watermark MAX), when both windows [0, 5000) fire, stamped 4999.
    assert sorted((r.value, r.timestamp, r.processing_time) for r in result.outputs["counts"]) == [
        (2, 4999, 5_000),
        (3, 4999, 5_000),
    ]
    assert result.side_outputs == {}


def test_late_element_goes_to_side_output_once_the_window_is_gone() -> None:
    env, _ = _clicks_job(bound=0)
    result = env.execute()
    # bound 0: watermark 4998 after alice@4999 (periodic at 400 ms) — alice@900 arrives at
    # 900 ms: window [0,5000) not late yet (4999 > 4998), so it is counted; bob@100 arrives at
    # 5000 ms: still not late. Nothing is late here.
    assert sorted(r.value for r in result.outputs["counts"]) == [2, 3]


def test_allowed_lateness_refires_accumulating_and_cleans_up_at_max_ts_plus_lateness() -> None:
    """Seed 003: window [0, 5000), allowed lateness 1000 → kept until watermark 5999."""
    env = wv.StreamExecutionEnvironment()
    events = [("A", 0), ("A", 4999), ("A", 5000), ("A", 1), ("A", 2), ("A", 3)]
    wms = {0: None, 4999: 5000, 5000: None, 1: 5998, 2: 5999, 3: None}
    late = wv.OutputTag("late")
    (
        env.from_collection(events, arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_punctuated(lambda e, ts: wms[e[1]]).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .side_output_late_data(late)
        .process(lambda k, ctx, els, out: out.collect(sorted(t for _, t in els)))
        .sink_to("out")
    )
    result = env.execute()
    values = [r.value for r in result.outputs["out"]]
    # A punctuated watermark follows its element. wm 5000 fires [0, 4999]; element 1 (wm 5000)
    # re-fires at once, accumulating; element 2 (wm 5998) re-fires again; then watermark 5999
    # reaches cleanup time 4999 + 1000, so element 3 finds the window gone: side output.
    assert values[:3] == [[0, 4999], [0, 1, 4999], [0, 1, 2, 4999]]
    assert [r.value for r in result.side_outputs["late"]] == [("A", 3)]
    fired = result.trace.records("fired")
    assert [(f.details()["pane"], f.details()["timing"]) for f in fired[:3]] == [
        (0, "on_time"),
        (1, "late"),
        (2, "late"),
    ]
    cleanup = result.trace.records("cleanup")[0]
    assert (cleanup.window, cleanup.watermark, cleanup.detail) == (
        wv.TimeWindow(0, 5000),
        5999,
        5999,
    )


def test_trace_is_byte_for_byte_deterministic() -> None:
    a = _clicks_job()[0].execute().trace.to_json()
    b = _clicks_job()[0].execute().trace.to_json()
    assert a == b
    doc = json.loads(a)
    assert doc["schema_version"] == wv.SCHEMA_VERSION
    assert doc["records"][0]["kind"] == "arrival"


def test_trace_off_gives_same_outputs() -> None:
    env, _ = _clicks_job()
    env.trace_enabled = False
    result = env.execute()
    assert result.trace is None
    assert sorted(r.value for r in result.outputs["counts"]) == [2, 3]


def test_bad_timestamp_names_record_field_value_and_keeps_trace() -> None:
    env = wv.StreamExecutionEnvironment()
    timestamped(
        env,
        [{"ts": 1}, {"ts": 2}, {"ts": "yesterday"}],
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
            lambda e, _: e["ts"]
        ),
    ).sink_to("out")
    with pytest.raises(
        wv.InputError, match=r"record 2, field 'timestamp', value 'yesterday'"
    ) as err:
        env.execute()
    assert len(err.value.trace.records("arrival")) == 3
    assert [r.value for r in err.value.partial_result.outputs["out"]] == [{"ts": 1}, {"ts": 2}]


def test_user_function_error_names_operator_key_window_and_record() -> None:
    env = wv.StreamExecutionEnvironment()

    def boom(a, b):
        raise ZeroDivisionError("no")

    (
        env.from_collection([("k", 1), ("k", 2)], timestamps=[1, 2])
        .assign_timestamps_and_watermarks(wv.WatermarkStrategy.for_monotonous_timestamps())
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10))
        .reduce(boom)
        .sink_to("out")
    )
    with pytest.raises(wv.UserFunctionError) as err:
        env.execute()
    e = err.value
    assert (e.operator, e.key, e.window, e.record, e.index) == (
        "window",
        "k",
        wv.TimeWindow(0, 10),
        ("k", 2),
        1,
    )
    assert "boom" in str(e) and "ZeroDivisionError" in str(e)
    assert isinstance(e.__cause__, ZeroDivisionError)


def test_trigger_returning_garbage_is_an_illegal_state() -> None:
    class Bad(wv.Trigger):
        def on_element(self, element, timestamp, window, ctx):
            return "FIRE"

    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([1], timestamps=[5])
        .key_by(lambda e: e)
        .window(wv.TumblingEventTimeWindows.of(10))
        .trigger(Bad())
        .reduce(lambda a, b: a + b)
        .sink_to("out")
    )
    with pytest.raises(wv.IllegalStateError, match=r"returned 'FIRE'.*expected a TriggerResult"):
        env.execute()


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: wv.TumblingEventTimeWindows.of(0), "size"),
        (lambda: wv.TumblingEventTimeWindows.of(10, 10), "offset"),
        (lambda: wv.SlidingEventTimeWindows.of(10, 0), "slide"),
        (lambda: wv.SlidingEventTimeWindows.of(-1, 5), "size"),
        (lambda: wv.SlidingEventTimeWindows.of(100_001, 10), "slide"),
        (lambda: wv.EventTimeSessionWindows.with_gap(0), "gap"),
        (lambda: wv.WatermarkStrategy.for_bounded_out_of_orderness(-1), "max_out_of_orderness"),
    ],
)
def test_bad_window_parameters_name_the_field(make, field) -> None:
    with pytest.raises(wv.InputError, match=f"field '{field}'"):
        make()


def test_negative_lateness_is_refused() -> None:
    env = wv.StreamExecutionEnvironment()
    ws = env.from_collection([1]).key_by(lambda e: e).window(wv.TumblingEventTimeWindows.of(5))
    with pytest.raises(wv.InputError, match="allowed lateness cannot be negative"):
        ws.allowed_lateness(-1)


def test_periodic_watermarks_follow_the_simulated_clock() -> None:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    timestamped(
        env,
        [10, 20, 3000, 3001],
        wv.WatermarkStrategy.for_bounded_out_of_orderness(5).with_timestamp_assigner(
            lambda e, _: e
        ),
        arrival_times=[0, 50, 1000, 1500],
    ).sink_to("out")
    result = env.execute()
    generated = [(r.proc_time, r.ts) for r in result.trace.records("watermark_generated")]
    # first periodic emit at 200 ms: max 20 - 5 - 1 = 14 (the emits at 400..1000 repeat it and
    # are dropped); 3000 arrives at 1000 ms and the 1200 ms emit gives 2994; 3001 arrives at
    # 1500 ms and the end of input emits once more (2995), then MAX
    assert generated == [(200, 14), (1200, 2994), (1500, 2995), (1500, wv.MAX)]


def test_ingestion_time_stamps_arrival_time() -> None:
    env = wv.StreamExecutionEnvironment()
    timestamped(
        env, ["a", "b"], wv.WatermarkStrategy.ingestion_time(), arrival_times=[100, 250]
    ).sink_to("out")
    result = env.execute()
    assert [r.timestamp for r in result.outputs["out"]] == [100, 250]


def test_keyed_process_function_with_event_time_timer_and_side_output() -> None:
    alerts = wv.OutputTag("alerts")

    class Timeout(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)
            if value[1] > 5:
                ctx.output(alerts, value)

        def on_timer(self, ts, ctx, out):
            out.collect((ctx.get_current_key(), ts, ctx.time_domain()))

    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("x", 1), ("x", 9), ("y", 2)], timestamps=[0, 0, 50])
        .assign_timestamps_and_watermarks(wv.WatermarkStrategy.for_monotonous_timestamps())
        .key_by(lambda e: e[0])
        .process(Timeout())
        .sink_to("out")
    )
    result = env.execute()
    assert [r.value for r in result.outputs["out"]] == [
        ("x", 100, "EVENT_TIME"),
        ("y", 150, "EVENT_TIME"),
    ]
    assert [r.value for r in result.side_outputs["alerts"]] == [("x", 9)]
    regs = result.trace.records("timer_registered")
    assert [r.details()["deduplicated"] for r in regs] == [False, True, False]


def test_window_all_and_session_merge_in_trace() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([1, 2, 10, 4], timestamps=[1, 2, 10, 4])
        .assign_timestamps_and_watermarks(wv.WatermarkStrategy.no_watermarks())
        .window_all(wv.EventTimeSessionWindows.with_gap(3))
        .reduce(lambda a, b: a + b)
        .sink_to("out")
    )
    result = env.execute()
    assert sorted((r.value, r.timestamp) for r in result.outputs["out"]) == [(7, 6), (10, 12)]
    merged = result.trace.records("merged")
    assert [m.window for m in merged] == [wv.TimeWindow(1, 5), wv.TimeWindow(1, 7)]


def test_named_timer_services_share_the_clocks_but_not_their_timers() -> None:
    from winviz.operators.base import JobContext
    from winviz.operators.keyed_process import KeyedProcessOperator

    fired = []

    class Target:
        def on_event_time(self, timer):
            fired.append(("cleanup", timer.key, timer.timestamp))

        def on_processing_time(self, timer):
            fired.append(("cleanup-proc", timer.key, timer.timestamp))

    op = KeyedProcessOperator("p", lambda e: e, wv.KeyedProcessFunction())
    op.open(JobContext())
    other = op.get_internal_timer_service("cleanup", Target())
    assert op.get_internal_timer_service("cleanup") is other
    op.current_key = "k"
    other.register_event_time_timer(None, 10)
    op.timers.register_event_time_timer(None, 10)
    assert (other.num_event_time_timers(), op.timers.num_event_time_timers()) == (1, 1)
    op.process_watermark(10)
    assert fired == [("cleanup", "k", 10)]
    assert other.current_watermark == op.timers.current_watermark == 10


def test_from_pandas_rows_with_arrival_column() -> None:
    import pandas as pd

    frame = pd.DataFrame({"user": ["a", "b", "a"], "ts": [1, 2, 12], "arrival": [0, 5, 9]})
    env = wv.StreamExecutionEnvironment()
    (
        env.from_pandas(frame, arrival_column="arrival")
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e["ts"]
            )
        )
        .key_by(lambda e: e["user"])
        .window(wv.TumblingEventTimeWindows.of(10))
        .aggregate(
            wv.CountAggregate(),
            lambda k, ctx, els, out: out.collect(
                {"user": k, "start": ctx.window().start, "n": els[0]}
            ),
        )
        .sink_to("counts")
    )
    result = env.execute()
    frame_out = result.output_frame("counts").sort_values(["start", "user"])
    assert frame_out[["user", "start", "n", "timestamp"]].values.tolist() == [
        ["a", 0, 1, 9],
        ["b", 0, 1, 9],
        ["a", 10, 1, 19],
    ]
    with pytest.raises(wv.InputError, match="no column 'when'"):
        env.from_pandas(frame, arrival_column="when")


def test_processing_time_windows_fire_as_the_simulated_clock_passes_their_end() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(["a", "b", "c", "d"], arrival_times=[100, 900, 1_100, 2_500])
        .key_by(lambda e: "all")
        .window(wv.TumblingProcessingTimeWindows.of(1_000))
        .process(lambda k, ctx, els, out: out.collect((ctx.window().start, sorted(els))))
        .sink_to("out")
    )
    result = env.execute(until_processing_time=3_000)
    # [0,1000) fires when the clock passes 999 (before "c" arrives at 1100); [2000,3000) fires
    # at 2999 only because the clock is moved on to 3000 before the end of input
    assert [(r.value, r.processing_time) for r in result.outputs["out"]] == [
        ((0, ["a", "b"]), 999),
        ((1_000, ["c"]), 1_999),
        ((2_000, ["d"]), 2_999),
    ]
    assert all(r.timestamp == r.value[0] + 999 for r in result.outputs["out"])


def test_pending_processing_time_timers_do_not_fire_at_the_end_of_a_bounded_input() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(["a"], arrival_times=[100])
        .key_by(lambda e: e)
        .window(wv.TumblingProcessingTimeWindows.of(1_000))
        .process(lambda k, ctx, els, out: out.collect(els))
        .sink_to("out")
    )
    assert env.execute().outputs["out"] == []


def test_idleness_marks_a_quiet_source_idle_on_the_processing_clock() -> None:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=100)
    timestamped(
        env,
        [1, 2],
        wv.WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda e, _: e)
        .with_idleness(250),
        arrival_times=[0, 1_000],
    ).sink_to("out")
    result = env.execute()
    status = [(r.kind, r.proc_time) for r in result.trace.records("idle", "active")]
    # emits at 100 (activity seen), 200 (starts the countdown), 300, 400 (400-200 = 200 ≤ 250),
    # 500 (300 > 250: idle). The emit due at 1000 comes before the record that arrives then
    # (still idle); the record is activity, and the final emit at the end of input (still at
    # 1000) emits watermark 1, which makes the output active again.
    assert status == [("idle", 500), ("active", 1_000)]


def test_trace_columns_match_the_records() -> None:
    env, _ = _clicks_job()
    trace = env.execute().trace
    kinds = trace.column("kind")
    assert kinds == [r.kind for r in trace]
    assert trace.column("seq") == list(range(len(trace)))
    i = kinds.index("fired")
    assert trace.column("window")[i] == trace[i].window
    assert trace.column("detail")[i] == trace[i].detail
    with pytest.raises(wv.InputError, match="no field 'colour' in a trace record"):
        trace.column("colour")
