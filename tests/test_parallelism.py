"""Parallel operators: subtasks, key-group routing, exchanges and the valves that combine
their watermarks (Flink's ``KeyGroupStreamPartitioner``, ``RebalancePartitioner``,
``ForwardPartitioner``, one ``StatusWatermarkValve`` per subtask; see ``winviz.runtime``).

Key groups are Flink's (``tests/test_keygroups.py`` checks them against Flink's jar): with the
default max parallelism 128, "alice" is in key group 116, "bob" 87, "carol" 15, "dave" 121 and
"eve" 99; with 3 subtasks that puts carol on subtask 0 and the others on subtask 2. The
channels asserted here were also checked against Flink 2.3.0's ``KeyGroupStreamPartitioner``
(``setup(3)`` with 128 key groups: 2 2 0 2 2; ``setup(2)`` with 4: 0 1 1 0 1; with 128:
1 1 0 1 1).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import (
    ASSIGNERS,
    KAFKA_ARRIVALS,
    KAFKA_PARTITIONS,
    bounded,
    build,
    count_pipeline,
    jobs,
    kafka_readers,
)

import winviz as wv
from winviz.errors import InputError, UserFunctionError
from winviz.trace import split_subtask

KEYS = ["alice", "bob", "carol", "dave", "eve"]


def strategy(idle: int | None = None) -> wv.WatermarkStrategy:
    s = bounded(0)
    return s.with_idleness(idle) if idle else s


def keyed_counts(parallelism: int, max_parallelism: int | None = None) -> wv.JobExecutionResult:
    """Five users, one click each at ts 100·i, counted per user in 1 s windows."""
    env = wv.StreamExecutionEnvironment()
    env.set_parallelism(parallelism)
    if max_parallelism is not None:
        env.set_max_parallelism(max_parallelism)
    (
        env.from_collection([(k, 100 * i) for i, k in enumerate(KEYS)], arrival_interval=10)
        .assign_timestamps_and_watermarks(strategy())
        .set_parallelism(1)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .process(lambda k, ctx, els, out: out.collect((k, len(els))))
        .set_parallelism(parallelism)
        .sink_to("counts")
    )
    return env.execute()


def subtask_of_each_key(result: wv.JobExecutionResult) -> dict[str, str]:
    return {r.key: r.operator for r in result.trace.records("element")}


# -- key_by: key -> key group -> subtask ---------------------------------------------------


def test_key_by_routes_each_key_to_the_subtask_owning_its_key_group() -> None:
    result = keyed_counts(3)
    assert subtask_of_each_key(result) == {
        "alice": "window#2",
        "bob": "window#2",
        "carol": "window#0",
        "dave": "window#2",
        "eve": "window#2",
    }
    exchanges = [r for r in result.trace.records("exchange") if r.detail[0] == "hash"]
    assert [(r.operator, r.key, r.detail[1:4]) for r in exchanges] == [
        ("watermarks", "alice", ("window#2", 2, 116)),
        ("watermarks", "bob", ("window#2", 2, 87)),
        ("watermarks", "carol", ("window#0", 0, 15)),
        ("watermarks", "dave", ("window#2", 2, 121)),
        ("watermarks", "eve", ("window#2", 2, 99)),
    ]
    assert sorted(r.value for r in result.outputs["counts"]) == [(k, 1) for k in sorted(KEYS)]
    # window#1 owns none of these keys: it saw nothing but watermarks
    assert result.metrics["window#1"]["num_records_in"] == 0
    assert result.metrics["window#2"]["num_records_in"] == 4


def test_keyed_state_and_timers_live_in_the_owning_subtask() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(3)
    env.enable_checkpointing(at_records=[5])
    (
        env.from_collection([(k, 100 * i) for i, k in enumerate(KEYS)], arrival_interval=10)
        .assign_timestamps_and_watermarks(strategy())
        .set_parallelism(1)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    states = env.execute().checkpoints[0].operator_states
    timers = {
        name: sorted(t[1] for t in states[name]["timers"]["window-timers"]["event"])
        for name in ("window#0", "window#1", "window#2")
    }
    assert timers == {
        "window#0": ["carol"],
        "window#1": [],
        "window#2": ["alice", "bob", "dave", "eve"],
    }


def test_the_max_parallelism_decides_the_key_groups() -> None:
    # 4 key groups on 2 subtasks: groups 0-1 on subtask 0, 2-3 on subtask 1
    assert subtask_of_each_key(keyed_counts(2, max_parallelism=4)) == {
        "alice": "window#0",  # key group 0
        "bob": "window#1",  # 3
        "carol": "window#1",  # 3
        "dave": "window#0",  # 1
        "eve": "window#1",  # 3
    }
    # the default (128 key groups) splits them differently
    assert subtask_of_each_key(keyed_counts(2)) == {
        "alice": "window#1",
        "bob": "window#1",
        "carol": "window#0",
        "dave": "window#1",
        "eve": "window#1",
    }


def test_max_parallelism_is_validated_like_flink() -> None:
    env = wv.StreamExecutionEnvironment()
    # Flink's messages (OperatorValidationUtils.validateMaxParallelism)
    for bad in (0, -1):
        with pytest.raises(InputError, match="The maximum parallelism must be greater than 0"):
            env.set_max_parallelism(bad)
    with pytest.raises(InputError, match="Maximum parallelism must be between 1 and 32768"):
        env.set_max_parallelism(32769)
    assert env.set_max_parallelism(32768).get_max_parallelism() == 32768
    with pytest.raises(InputError, match="must be an int"):
        env.set_max_parallelism(True)
    for bad in (0, 32769):
        with pytest.raises(InputError, match="parallelism of an operator must be at least 1"):
            env.set_parallelism(bad)
    stream = env.from_collection([1]).map(lambda x: x)
    stream.set_parallelism(5).set_max_parallelism(4)
    stream.sink_to("out")
    with pytest.raises(InputError) as err:
        env.execute()
    assert "The parallelism (5) of operator 'map' is higher than its maximum parallelism (4)" in (
        str(err.value)
    )


def test_a_none_key_into_a_parallel_keyed_operator_names_the_record() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(2)
    count_pipeline(env, [("a", 1), (None, 2)], 10, strategy())
    with pytest.raises(InputError) as err:
        env.execute()
    assert err.value.index == 1 and err.value.value == (None, 2)
    assert "Assigned key must not be null" in str(err.value)


def test_a_failing_key_selector_in_an_exchange_names_operator_and_record() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(2)
    (
        env.from_collection([{"user": "a"}, {}])
        .key_by(lambda e: e["user"])
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    with pytest.raises(UserFunctionError) as err:
        env.execute()
    assert err.value.function == "key selector" and err.value.index == 1
    assert err.value.operator == "source"


# -- rebalance and forward -------------------------------------------------------------------


def routed(result: wv.JobExecutionResult, operator: str | None = None) -> list[tuple[str, str]]:
    return [
        (r.operator, r.detail[1])
        for r in result.trace.records("exchange")
        if operator is None or r.operator == operator
    ]


def test_rebalance_is_round_robin_from_a_fixed_start() -> None:
    env = wv.StreamExecutionEnvironment()
    src = env.from_collection(range(7), arrival_interval=1)
    src.map(lambda x: x).set_parallelism(3).sink_to("out")  # 1 -> 3: rebalance by default
    result = env.execute()
    assert routed(result, "source") == [("source", f"map#{i % 3}") for i in range(7)]
    # the sink has parallelism 1: rebalance 3 -> 1, every map subtask to the one sink
    assert routed(result, "map#1") == [("map#1", "out")] * 2
    assert [r.detail[0] for r in result.trace.records("exchange")] == ["rebalance"] * 14
    assert [r.value for r in result.outputs["out"]] == list(range(7))


def test_each_upstream_subtask_starts_its_round_robin_at_its_own_index() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions([[0, 2, 4, 6], [1, 3, 5, 7]], arrival_interval=1)
        .set_parallelism(2)
        .rebalance()
        .map(lambda x: x)
        .set_parallelism(3)
        .sink_to("out")
    )
    result = env.execute()
    assert routed(result, "source#0") == [("source#0", f"map#{i}") for i in (0, 1, 2, 0)]
    assert routed(result, "source#1") == [("source#1", f"map#{i}") for i in (1, 2, 0, 1)]
    # one record at a time, in arrival order (equal arrivals: the lower partition first)
    assert [r.value for r in result.outputs["out"]] == [0, 1, 2, 3, 4, 5, 6, 7]


def test_forward_keeps_subtask_i_on_subtask_i_and_writes_no_exchange() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(2)
    (
        env.from_partitions([["a", "b"], ["c"]], arrival_interval=1)
        .map(str.upper)
        .forward()
        .map(lambda s: s + "!")
        .sink_to("out")
    )
    result = env.execute()
    assert result.trace.records("exchange") == []  # equal parallelism: forward by default
    assert result.metrics["map_2#0"]["num_records_in"] == 2
    assert result.metrics["map_2#1"]["num_records_in"] == 1
    emitted = [(r.operator, r.detail) for r in result.trace.records("emitted")]
    assert emitted == [
        ("map#0", "A"),
        ("map_2#0", "A!"),
        ("map#1", "C"),
        ("map_2#1", "C!"),
        ("map#0", "B"),
        ("map_2#0", "B!"),
    ]


def test_forward_refuses_a_change_of_parallelism() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1]).forward().map(lambda x: x).set_parallelism(2).sink_to("out")
    with pytest.raises(InputError) as err:
        env.execute()
    assert str(err.value).startswith(
        "field 'parallelism', value 2: Forward partitioning does not allow change of "
        "parallelism. Upstream operation: source parallelism: 1, downstream operation: map "
        "parallelism: 2"
    )


def test_non_parallel_operators_stay_at_one_subtask() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(3)
    src = env.from_collection([("a", 1), ("b", 5), ("c", 12)], arrival_interval=1)
    with pytest.raises(InputError, match="The parallelism of non parallel operator must be 1"):
        src.set_parallelism(2)
    counted = (
        src.assign_timestamps_and_watermarks(strategy())
        .window_all(wv.TumblingEventTimeWindows.of(10))
        .aggregate(wv.CountAggregate())
    )
    with pytest.raises(InputError, match="non parallel operator"):
        counted.set_parallelism(2)
    counted.sink_to("out")
    result = env.execute()
    assert [(r.value, r.timestamp) for r in result.outputs["out"]] == [(2, 9), (1, 19)]
    names = {split_subtask(r.operator) for r in result.trace.records("element")}
    assert names == {("window", None)}  # one window subtask fed by watermarks#0..2
    assert {r.detail[1] for r in result.trace.records("channel_watermark")} == {
        "watermarks#0",
        "watermarks#1",
        "watermarks#2",
    }


def test_unions_partitionings_and_side_outputs_have_no_parallelism_of_their_own() -> None:
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([1])
    for stream in (a.union(a), a.rebalance(), a.get_side_output(wv.OutputTag("x"))):
        with pytest.raises(InputError, match="no operator"):
            stream.set_parallelism(2)
    with pytest.raises(InputError, match="no side outputs"):
        a.rebalance().get_side_output(wv.OutputTag("x"))


# -- watermarks across exchanges ---------------------------------------------------------------


def window_watermarks(result: wv.JobExecutionResult, op: str) -> list[tuple[int, int]]:
    return [(r.proc_time, r.ts) for r in result.trace.records("watermark", operator=op)]


def test_each_subtask_takes_the_minimum_over_its_input_channels() -> None:
    result = kafka_readers(2, None)
    # window#0 and window#1 both see both readers: the same watermarks (broadcast)
    expected = [
        (200, 99),  # reader 0: 99, reader 1: 199
        (600, 199),  # reader 0 moves to 599 first: the minimum is reader 1's 199 ...
        (600, 599),  # ... until reader 1 moves to 699
        (1200, 699),
        (1200, 1199),
        (1600, 1299),
        (1600, 1899),
        (1600, wv.MAX),
    ]
    assert window_watermarks(result, "window#0") == expected
    assert window_watermarks(result, "window#1") == expected
    channel = [
        (r.proc_time, r.ts, r.detail)
        for r in result.trace.records("channel_watermark", operator="window#0")
    ]
    assert channel[:3] == [
        (200, 99, (0, "watermarks#0")),
        (200, 199, (1, "watermarks#1")),
        (600, 599, (0, "watermarks#0")),
    ]
    assert [(r.value, r.timestamp, r.processing_time) for r in result.outputs["counts"]] == [
        (4, 999, 1200),
        (4, 1999, 1600),
    ]


def test_a_reader_without_partitions_holds_everything_back() -> None:
    """Flink's Kafka source docs: a reader without partitions does not go idle on its own."""
    result = kafka_readers(3, None)
    assert window_watermarks(result, "window#1") == [(1600, wv.MAX)]
    assert [(r.timestamp, r.processing_time) for r in result.outputs["counts"]] == [
        (999, 1600),
        (1999, 1600),
    ]
    assert result.trace.records("idle") == []


def test_idleness_lets_a_reader_without_partitions_go_idle() -> None:
    result = kafka_readers(3, 500)
    # the empty reader's idleness timer starts at the first periodic emit (200) and reports
    # idle once more than 500 ms have passed: at 800
    assert [(r.proc_time, r.operator, r.kind) for r in result.trace.records("idle", "active")] == [
        (800, "watermarks#2", "idle"),
        (1600, "watermarks#2", "active"),  # the end of input: MAX from every reader
    ]
    assert [
        (r.proc_time, r.kind, r.detail)
        for r in result.trace.records("channel_idle", "channel_active", operator="window#0")
    ] == [(800, "channel_idle", (2, "watermarks#2")), (1600, "channel_active", (2, "watermarks#2"))]
    assert window_watermarks(result, "window#0")[0] == (800, 599)
    assert [(r.timestamp, r.processing_time) for r in result.outputs["counts"]] == [
        (999, 1200),
        (1999, 1600),
    ]


def test_partitions_are_spread_over_the_readers_and_checkpointed_per_reader() -> None:
    env = wv.StreamExecutionEnvironment()
    env.enable_checkpointing(at_records=[4])
    (
        env.from_partitions([[1, 2], [3], [4, 5], [6]], arrival_interval=1, name="kafka")
        .set_parallelism(3)
        .map(lambda x: x)
        .sink_to("out")
    )
    result = env.execute()
    # partition p on reader p % 3; records in arrival order, then partition order
    assert [r.value for r in result.outputs["out"]] == [1, 3, 4, 6, 2, 5]
    assert dict(result.checkpoints[0].positions) == {
        "kafka#0": 2,
        "kafka[0]": 1,
        "kafka[3]": 1,
        "kafka#1": 1,
        "kafka[1]": 1,
        "kafka#2": 1,
        "kafka[2]": 1,
    }


# -- whole jobs ----------------------------------------------------------------------------------


def test_the_trace_of_a_parallel_job_is_deterministic() -> None:
    one, two = kafka_readers(3, 500), kafka_readers(3, 500)
    assert one.trace.to_json() == two.trace.to_json()
    assert len(one.trace) > 100


def test_jobs_without_parallelism_write_no_exchange_and_keep_their_names() -> None:
    result = keyed_counts(1)
    assert result.trace.kinds().get("exchange") is None
    assert {r.operator for r in result.trace} == {"source", "watermarks", "window", "counts"}


@settings(max_examples=150, deadline=None)
@given(jobs(), st.integers(2, 4))
def test_parallel_batched_and_one_by_one_runs_agree(job, parallelism) -> None:
    fast = build(job, False).set_parallelism(parallelism).execute()
    slow = build(job, True).set_parallelism(parallelism).execute()
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics


@settings(max_examples=150, deadline=None)
@given(jobs(), st.integers(2, 4), st.sampled_from([None, 4, 16]))
def test_keyed_windows_give_the_same_results_on_any_number_of_subtasks(
    job, parallelism, max_parallelism
) -> None:
    """With the watermarks generated before the exchange (parallelism 1), every window
    subtask sees the same watermarks as one window operator would: the same results, only
    spread over subtasks (and so interleaved differently)."""

    def run(par: int) -> list:
        env = wv.StreamExecutionEnvironment(auto_watermark_interval=job["interval"])
        if max_parallelism is not None and par > 1:
            env.set_max_parallelism(max_parallelism)
        late = wv.OutputTag("late")
        (
            env.from_collection(job["events"], arrival_times=job["arrivals"])
            .assign_timestamps_and_watermarks(bounded(job["bound"]))
            .key_by(lambda e: e[0])
            .window(ASSIGNERS[job["assigner"]]())
            .allowed_lateness(job["lateness"])
            .side_output_late_data(late)
            .process(lambda k, ctx, els, o: o.collect((k, ctx.window(), sorted(e[2] for e in els))))
            .set_parallelism(par)
            .sink_to("out")
        )
        result = env.execute()
        return sorted(map(repr, result.outputs["out"])) + sorted(
            map(repr, result.side_outputs.get("late", []))
        )

    assert run(parallelism) == run(1)


def test_watermarks_cross_every_stage_of_a_multi_stage_pipeline() -> None:
    """2 readers -> 3 maps (rebalance) -> 2 windows (key_by) -> 2 maps (forward): each
    subtask's valve takes the minimum over its channels, stage after stage."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(KAFKA_PARTITIONS, arrival_times=KAFKA_ARRIVALS, name="kafka")
        .assign_timestamps_and_watermarks(strategy())
        .set_parallelism(2)
        .map(lambda e: e)
        .set_parallelism(3)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .set_parallelism(2)
        .map(lambda c: c * 10)
        .set_parallelism(2)
        .sink_to("out")
    )
    result = env.execute()
    expected = [
        (200, 99),
        (600, 199),
        (600, 599),
        (1200, 699),
        (1200, 1199),
        (1600, 1299),
        (1600, 1899),
        (1600, wv.MAX),
    ]
    for op in ("map#0", "map#1", "map#2", "window#0", "window#1", "map_2#0", "map_2#1"):
        assert window_watermarks(result, op) == expected, op
    # each map subtask: 2 channels (the readers); each window subtask: 3 (the maps)
    inputs = {
        op: sorted({r.detail[1] for r in result.trace.records("channel_watermark", operator=op)})
        for op in ("map#1", "window#0", "map_2#0")
    }
    assert inputs == {
        "map#1": ["watermarks#0", "watermarks#1"],
        "window#0": ["map#0", "map#1", "map#2"],
        "map_2#0": [],  # forward from window#0: one channel, no valve
    }
    # p0 and p1 are separate keys: 2 per window, fired at 1200 and 1600
    assert [(r.value, r.timestamp, r.processing_time) for r in result.outputs["out"]] == [
        (20, 999, 1200),
        (20, 999, 1200),
        (20, 1999, 1600),
        (20, 1999, 1600),
    ]


def test_a_bad_key_in_a_batch_is_named_and_what_came_before_it_went_on() -> None:
    def run(trace: bool):
        env = wv.StreamExecutionEnvironment(trace=trace).set_parallelism(2)
        (
            env.from_collection([("a", 1), ("b", 2), ("c", 3), (None, 4), ("d", 5)])
            .assign_timestamps_and_watermarks(strategy())
            .set_parallelism(1)
            .key_by(lambda e: e[0])
            .window(wv.TumblingEventTimeWindows.of(10))
            .aggregate(wv.CountAggregate())
            .sink_to("out")
        )
        with pytest.raises(InputError) as err:
            env.execute()
        return err.value

    fast, slow = run(False), run(True)
    assert fast.index == slow.index == 3
    assert str(fast) == str(slow)
    for err in (fast, slow):  # the window subtasks got exactly the three records before it
        metrics = err.partial_result.metrics
        # "b" and "c" on subtask 0, "a" on subtask 1 (Flink's key groups, parallelism 2)
        assert [metrics[f"window#{i}"]["num_records_in"] for i in (0, 1)] == [2, 1]


def test_exchange_records_name_their_fields_and_subtask_names_split() -> None:
    record = keyed_counts(3).trace.records("exchange")[-1]
    assert record.details() == {
        "partitioner": "hash",
        "target": "window#2",
        "channel": 2,
        "key_group": 99,
        "value": ("eve", 400),
    }
    assert (record.operator, record.key, record.ts) == ("watermarks", "eve", 400)
    assert split_subtask("window#2") == ("window", 2)
    assert split_subtask("window") == ("window", None)
    assert split_subtask("side:#late") == ("side:#late", None)
