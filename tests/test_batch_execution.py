"""BATCH runtime mode (winviz.batch_execution) beside STREAMING, with expectations derived by
hand from Flink 2.3's rules (SortingDataInput, BatchExecutionInternalTimeService,
BatchExecutionKeyedStateBackend, BatchGroupedReduceOperator); tests/flink/batch.py checks the
same rules against real Flink on random jobs."""

from __future__ import annotations

import pytest
from jobs import count_windows

import winviz as wv
from winviz.errors import ArgumentTypeError, UnsupportedOperationError
from winviz.time import MAX, MIN

# (key, ts); one record every 100 ms of processing time, from 0 to 500
EVENTS = [("a", 1000), ("b", 1500), ("a", 6000), ("a", 2000), ("b", 7000), ("b", 3000)]


def _strategy() -> wv.WatermarkStrategy:
    return wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
        lambda e, _: e[1]
    )


def _source(mode: str, *, trace: bool = True):
    env = wv.StreamExecutionEnvironment(trace=trace)
    env.set_runtime_mode(mode)
    stream = env.from_collection(EVENTS, arrival_interval=100)
    return env, stream.assign_timestamps_and_watermarks(_strategy())


def _window_counts(mode: str) -> wv.JobExecutionResult:
    env, stream = _source(mode)
    late = wv.OutputTag("late")
    counts = (
        stream.key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
    )
    counts.sink_to("out")
    counts.get_side_output(late).sink_to("late")
    return env.execute()


def _values(records) -> list[tuple]:
    return [(r.value, r.timestamp) for r in records]


def test_late_data_dropped_in_streaming_is_counted_in_batch():
    # STREAMING: periodic watermarks every 200 ms. At 400 the largest timestamp seen is 7000,
    # so the watermark 6999 fires [0, 5000): a -> 2 (1000, 2000), b -> 1 (1500); b@3000
    # arrives at 500 behind it (late, window past cleanup): side output. MAX fires the rest.
    streaming = _window_counts("STREAMING")
    assert _values(streaming.outputs["out"]) == [(2, 4999), (1, 4999), (1, 9999), (1, 9999)]
    assert _values(streaming.outputs["late"]) == [(("b", 3000), 3000)]
    # BATCH: no watermark while a key's records go in; a's, then b's, each key's windows
    # fired at its end, in timestamp order: b@3000 is counted, nothing is late
    batch = _window_counts("BATCH")
    assert _values(batch.outputs["out"]) == [(2, 4999), (1, 9999), (2, 4999), (1, 9999)]
    assert batch.outputs.get("late", []) == []
    assert batch.num_late_records_dropped == 0
    # the sorted records go through once the input is read: the clock is at the last arrival
    assert {r.processing_time for r in batch.outputs["out"]} == {500}


def test_automatic_is_batch_for_bounded_sources():
    auto = _window_counts("AUTOMATIC")
    assert _values(auto.outputs["out"]) == [(2, 4999), (1, 9999), (2, 4999), (1, 9999)]
    env = wv.StreamExecutionEnvironment()
    assert env.get_runtime_mode() is wv.RuntimeExecutionMode.STREAMING
    assert env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH) is env
    assert env.get_runtime_mode() is wv.RuntimeExecutionMode.BATCH


class Timers(wv.KeyedProcessFunction):
    """An event-time timer at ts + 100 and a processing-time timer 1000 ms after arrival; a
    timer registers one at MAX (ignored in BATCH: the timer service is quiesced at key end)."""

    def process_element(self, e, ctx, out):
        timers = ctx.timer_service()
        out.collect(("el", e[1], timers.current_watermark(), timers.current_processing_time()))
        timers.register_event_time_timer(e[1] + 100)
        timers.register_processing_time_timer(timers.current_processing_time() + 1000)

    def on_timer(self, t, ctx, out):
        wm = ctx.timer_service().current_watermark()
        out.collect(("timer", ctx.get_current_key(), t, ctx.time_domain(), wm))
        if t != MAX:
            ctx.timer_service().register_event_time_timer(MAX)


def _timers(mode: str) -> wv.JobExecutionResult:
    env, stream = _source(mode)
    stream.key_by(lambda e: e[0]).process(Timers()).sink_to("out")
    return env.execute()


def test_processing_time_timers_fire_at_the_end_of_each_key_in_batch_only():
    # STREAMING: the processing-time timers (1000..1500) are still pending when the input ends
    # at 500 and never fire; event-time timers fire as the watermark passes them; the timer
    # at MAX registered by the first firing fires at the end of input, once per key.
    streaming = [r.value for r in _timers("STREAMING").outputs["out"]]
    assert [v for v in streaming if v[0] == "timer" and v[3] == "PROCESSING_TIME"] == []
    assert sorted(v[2] for v in streaming if v[0] == "timer") == [
        1100, 1600, 2100, 3100, 6100, 7100, MAX, MAX,
    ]  # fmt: skip
    # BATCH: key a's records (sorted by timestamp, watermark MIN, clock at 500), then a's
    # event-time timers in order, then its processing-time timers, at watermark MAX; the
    # timers on_timer registers are ignored. Then key b.
    batch = [r.value for r in _timers("BATCH").outputs["out"]]
    ev, pt = "EVENT_TIME", "PROCESSING_TIME"
    assert batch == [
        ("el", 1000, MIN, 500),
        ("el", 2000, MIN, 500),
        ("el", 6000, MIN, 500),
        ("timer", "a", 1100, ev, MAX),
        ("timer", "a", 2100, ev, MAX),
        ("timer", "a", 6100, ev, MAX),
        ("timer", "a", 1500, pt, MAX),
        ("el", 1500, MIN, 500),
        ("el", 3000, MIN, 500),
        ("el", 7000, MIN, 500),
        ("timer", "b", 1600, ev, MAX),
        ("timer", "b", 3100, ev, MAX),
        ("timer", "b", 7100, ev, MAX),
        ("timer", "b", 1500, pt, MAX),
    ]


def test_keyed_reduce_emits_one_final_result_per_key_in_batch():
    def run(mode: str) -> list[tuple]:
        env, stream = _source(mode)
        stream.key_by(lambda e: e[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).sink_to("out")
        return _values(env.execute().outputs["out"])

    # STREAMING: the rolling reduction, one result per record, at the record's timestamp
    assert run("STREAMING") == [
        (("a", 1000), 1000),
        (("b", 1500), 1500),
        (("a", 7000), 6000),
        (("a", 9000), 2000),
        (("b", 8500), 7000),
        (("b", 11500), 3000),
    ]
    # BATCH (BatchGroupedReduceOperator): the final reduction per key, at timestamp MAX
    assert run("BATCH") == [(("a", 9000), MAX), (("b", 11500), MAX)]


def test_trace_groups_records_by_key_with_a_max_watermark_at_each_key_end():
    result = _window_counts("BATCH")
    rows = [
        (r.kind, r.key, r.ts, r.watermark, r.detail)
        for r in result.trace.records()
        if r.operator == "window" and r.kind in ("element", "watermark", "timer_fired")
    ]
    end = "end of key"
    assert rows == [
        ("element", "a", 1000, MIN, ("a", 1000)),
        ("element", "a", 2000, MIN, ("a", 2000)),
        ("element", "a", 6000, MIN, ("a", 6000)),
        ("watermark", "a", MAX, MAX, end),
        ("timer_fired", "a", 4999, MAX, ("event", result.trace.records("fired")[0].window)),
        ("timer_fired", "a", 9999, MAX, ("event", result.trace.records("fired")[1].window)),
        ("element", "b", 1500, MIN, ("b", 1500)),
        ("element", "b", 3000, MIN, ("b", 3000)),
        ("element", "b", 7000, MIN, ("b", 7000)),
        ("watermark", "b", MAX, MAX, end),
        ("timer_fired", "b", 4999, MAX, ("event", result.trace.records("fired")[2].window)),
        ("timer_fired", "b", 9999, MAX, ("event", result.trace.records("fired")[3].window)),
        ("watermark", None, MAX, MAX, "input"),
    ]
    # no watermark generated before the end of input: the generator emits nothing in BATCH
    generated = [r.ts for r in result.trace.records("watermark_generated")]
    assert generated == [MAX]
    answer = wv.why_fired(result.trace, "a", (0, 5000))
    assert "end of key" in answer.sentence and "'a'" in answer.sentence
    # key b's watermark starts anew at MIN (a's end of key is not b's): a first firing, caused
    # by b's end of key, and not a late firing
    (firing,) = wv.why_fired(result.trace, "b", (0, 5000)).claims
    assert (firing.cause, firing.timer, firing.watermark_before, firing.late_firing) == (
        "end of key",
        4999,
        MIN,
        False,
    )


def test_batch_refuses_what_flink_batch_does_not_run():
    env, stream = _source("BATCH")
    env.enable_checkpointing(1000)
    count_windows(stream, 5000)
    with pytest.raises(UnsupportedOperationError, match="not supported in BATCH"):
        env.execute()
    with pytest.raises(ArgumentTypeError, match="RuntimeExecutionMode"):
        wv.StreamExecutionEnvironment().set_runtime_mode("STREAM")


class Rearm(wv.KeyedProcessFunction):
    """Registers an event-time timer at ts; every firing registers the next millisecond."""

    def process_element(self, e, ctx, out):
        ctx.timer_service().register_event_time_timer(e[1])

    def on_timer(self, t, ctx, out):
        out.collect((ctx.get_current_key(), t))
        ctx.timer_service().register_event_time_timer(t + 1)


def test_a_timer_that_rearms_itself_fires_once_per_key_end_in_batch():
    # BATCH: the timer service is quiesced while a key's timers fire: t + 1 is ignored
    env, stream = _source("BATCH")
    stream.key_by(lambda e: e[0]).process(Rearm()).sink_to("out")
    assert [r.value for r in env.execute().outputs["out"]] == [
        ("a", 1000), ("a", 2000), ("a", 6000), ("b", 1500), ("b", 3000), ("b", 7000),
    ]  # fmt: skip
    # STREAMING: at the end-of-input watermark MAX the chain t, t + 1, ... never ends
    env, stream = _source("STREAMING")
    stream.key_by(lambda e: e[0]).process(Rearm()).sink_to("out")
    env.set_timer_firing_budget(50)
    with pytest.raises(wv.TimerLoopError):
        env.execute()


def test_partitioned_sources_and_parallel_windows_in_batch():
    # two "kafka" partitions, two readers, per-partition watermarks with idleness: in BATCH
    # no watermark and no idleness flows; each window subtask sorts its own input
    env = wv.StreamExecutionEnvironment()
    env.set_runtime_mode("BATCH")
    parts = [[("k", 900), ("k", 100), ("j", 2500)], [("k", 1200), ("j", 400), ("k", 300)]]
    (
        env.from_partitions(parts, arrival_times=[[0, 10, 20], [5, 15, 25]])
        .assign_timestamps_and_watermarks(_strategy().with_idleness(1))
        .set_parallelism(2)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .process(lambda k, ctx, els, out: out.collect((k, ctx.window().start, [e[1] for e in els])))
        .set_parallelism(2)
        .sink_to("out")
    )
    result = env.execute()
    assert sorted(r.value for r in result.outputs["out"]) == [
        ("j", 0, [400]), ("j", 2000, [2500]), ("k", 0, [100, 300, 900]), ("k", 1000, [1200]),
    ]  # fmt: skip
    assert result.trace.records("idle") == []
    assert {r.ts for r in result.trace.records("watermark") if r.detail == "input"} == {MAX}


def test_batch_refuses_keyed_two_input_operators():
    env, stream = _source("BATCH")

    class Both(wv.KeyedCoProcessFunction):
        def process_element1(self, value, ctx, out):
            out.collect(value)

        def process_element2(self, value, ctx, out):
            out.collect(value)

    stream.connect(stream.map(lambda e: e)).key_by(lambda e: e[0], lambda e: e[0]).process(
        Both()
    ).sink_to("out")
    with pytest.raises(UnsupportedOperationError, match="MultiInputSortingDataInput"):
        env.execute()


def test_a_failing_key_selector_names_the_record_in_batch():
    env, stream = _source("BATCH")
    count_windows(stream, 5000, key=lambda e: {"a": 1}[e[0]])
    with pytest.raises(wv.UserFunctionError, match="record 1") as info:
        env.execute()
    # the trace up to the failure stays available: the two records read so far
    assert len(info.value.trace.records("arrival")) == 2


def test_a_second_keyed_stage_starts_when_the_first_has_finished():
    # blocking exchanges: the second window sorts the first one's whole output, which the
    # first one emits at its keys' ends (timestamp 4999 / 9999), then runs key by key itself
    env, stream = _source("BATCH")
    (
        stream.key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .aggregate(wv.CountAggregate())
        .name("per_key")
        .key_by(lambda n: "all")
        .window(wv.TumblingEventTimeWindows.of(10000))
        .reduce(lambda a, b: a + b)
        .name("total")
        .sink_to("out")
    )
    result = env.execute()
    assert [(r.value, r.timestamp) for r in result.outputs["out"]] == [(6, 9999)]
    records = list(result.trace)
    first_done = max(r.seq for r in records if r.operator == "per_key")
    second = [r for r in records if r.operator == "total"]
    assert min(r.seq for r in second) > first_done
    assert [(r.ts, r.watermark) for r in second if r.kind == "element"] == [
        (4999, MIN), (4999, MIN), (9999, MIN), (9999, MIN),
    ]  # fmt: skip


def test_keys_come_in_the_order_of_flinks_sorter():
    # Flink compares serialized keys as signed bytes, a shorter one first when it is a prefix:
    # String "b" = [2, 'b'] comes before "aa" = [3, 'a', 'a'] (the length comes first) and "é"
    # = [2, 0xE9, 0x01] before "a" = [2, 'a'] (0xE9 is negative); Integer 128 = 00 00 00 80
    # before 127 = 00 00 00 7F (0x80 is negative), and -1 = FF FF FF FF before both
    def order(keys: list) -> list:
        env = wv.StreamExecutionEnvironment(trace=False)
        env.set_runtime_mode("BATCH")
        env.from_collection(keys).key_by(lambda k: k).reduce(lambda a, b: a).sink_to("out")
        return [r.value for r in env.execute().outputs["out"]]

    assert order(["aa", "a", "é", "b"]) == ["é", "a", "b", "aa"]
    assert order([127, 128, -1, 0]) == [-1, 128, 0, 127]
