"""build_twin: the Spark twin of an engine pipeline, or the precise reasons there is none."""

from __future__ import annotations

import pytest
from jobs import bounded, count_windows, spark_and_model

import winviz as wv
from winviz.errors import InputError
from winviz.spark import OutputRow, get_spark
from winviz.spark.builder import NO_TWIN, NoTwinError, build_twin

Row = OutputRow


def strategy(bound: int = 500):
    return bounded(bound)


def clicks(env):
    return env.from_collection(
        [("alice", 1_000, 2), ("bob", 2_500, 3), ("alice", 4_999, 4), ("alice", 12_000, 5)],
        arrival_times=[0, 100, 1200, 1500],
    )


def windowed(env, assigner=None):
    return (
        clicks(env)
        .assign_timestamps_and_watermarks(strategy())
        .key_by(lambda e: e[0])
        .window(assigner or wv.TumblingEventTimeWindows.of(5000))
    )


def test_a_tumbling_sum_becomes_a_twin_spec_and_rows() -> None:
    env = wv.StreamExecutionEnvironment()
    windowed(env).aggregate(wv.SumAggregate(lambda e: e[2])).sink_to("sums")
    plan = build_twin(env, "sums")
    assert plan.possible and plan.reasons == () and plan.caveats == ()
    assert (plan.spec.size, plan.spec.slide, plan.spec.watermark_delay) == (5000, None, 500)
    assert (plan.spec.aggregate, plan.spec.value_field, plan.spec.output_mode) == (
        "sum",
        "value",
        "append",
    )
    assert plan.records == (
        {"key": "alice", "ts": 1000, "value": 2},
        {"key": "bob", "ts": 2500, "value": 3},
        {"key": "alice", "ts": 4999, "value": 4},
        {"key": "alice", "ts": 12000, "value": 5},
    )
    assert plan.arrival_times == (0, 100, 1200, 1500)
    assert plan.inputs == (list(plan.records), list(plan.arrival_times))
    with pytest.raises(TypeError, match="for a window twin compare the job's own run"):
        plan.flink()  # the join twin's replay of its rows; a window job is run as it is
    assert plan.predict().summary() == [
        (0, 2, 0, 0, ()),
        (1, 0, 2000, 0, ()),  # the no-data batch after batch 0 raised the watermark
        (2, 2, 2000, 0, ()),
        (3, 0, 11500, 0, (Row(0, 5000, "alice", 2, 6), Row(0, 5000, "bob", 1, 3))),
    ]


def test_sessions_sliding_maps_filters_and_unions() -> None:
    env = wv.StreamExecutionEnvironment()
    windowed(env, wv.EventTimeSessionWindows.with_gap(1000)).aggregate(wv.CountAggregate()).sink_to(
        "s"
    )
    assert build_twin(env, "s").spec.session_gap == 1000

    env = wv.StreamExecutionEnvironment()
    windowed(env, wv.SlidingEventTimeWindows.of(4000, 2000)).aggregate(wv.CountAggregate()).sink_to(
        "w"
    )
    assert (build_twin(env, "w").spec.size, build_twin(env, "w").spec.slide) == (4000, 2000)

    env = wv.StreamExecutionEnvironment()
    a = clicks(env).filter(lambda e: e[0] == "alice").assign_timestamps_and_watermarks(strategy())
    b = (
        env.from_collection([("carol", 700, 1)], arrival_times=[50])
        .map(lambda e: (e[0], e[1] + 1, e[2]))
        .assign_timestamps_and_watermarks(wv.WatermarkStrategy.for_monotonous_timestamps()
                                          .with_timestamp_assigner(lambda e, _: e[1]))
    )  # fmt: skip
    count_windows(a.union(b), 5000, sink="u")
    plan = build_twin(env, "u")
    assert (plan.spec.watermark_delay, plan.spec.stream_field) == ((500, 0), "stream")
    assert plan.records == (
        {"key": "alice", "ts": 1000, "stream": 0},
        {"key": "carol", "ts": 701, "stream": 1},
        {"key": "alice", "ts": 4999, "stream": 0},
        {"key": "alice", "ts": 12000, "stream": 0},
    )
    assert plan.arrival_times == (0, 50, 1200, 1500)


def test_no_twin_for_allowed_lateness_side_outputs_evictors_and_triggers() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        windowed(env)
        .allowed_lateness(1000)
        .side_output_late_data(wv.OutputTag("late"))
        .evictor(wv.CountEvictor.of(2))
        .trigger(wv.CountTrigger.of(2))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    plan = build_twin(env, "counts")
    assert not plan.possible
    assert plan.reasons == tuple(
        NO_TWIN[k] for k in ("allowed_lateness", "side_output", "evictor", "trigger")
    )
    assert plan.reasons[0].startswith("late re-fire (allowed lateness) has no Spark equivalent")
    with pytest.raises(NoTwinError, match="no Spark twin for sink 'counts': late re-fire"):
        plan.run()


def test_approximate_twin_lists_what_it_leaves_out() -> None:
    env = wv.StreamExecutionEnvironment()
    windowed(env).allowed_lateness(1000).side_output_late_data(wv.OutputTag("late")).aggregate(
        wv.CountAggregate()
    ).sink_to("counts")
    plan = build_twin(env, "counts", approximate=True)
    assert plan.possible
    assert plan.caveats == (NO_TWIN["allowed_lateness"], NO_TWIN["side_output"])


def test_other_obstacles_each_have_their_reason() -> None:
    env = wv.StreamExecutionEnvironment()
    windowed(env).reduce(lambda a, b: a).sink_to("r")
    windowed(env, wv.TumblingProcessingTimeWindows.of(1000)).aggregate(wv.CountAggregate()).sink_to(
        "p"
    )
    windowed(env, wv.TumblingEventTimeWindows.of(1000, 100)).aggregate(wv.CountAggregate()).sink_to(
        "o"
    )
    (
        clicks(env)
        .assign_timestamps_and_watermarks(strategy().with_idleness(100))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("i")
    )
    assert build_twin(env, "r").reasons == (NO_TWIN["function"],)
    assert build_twin(env, "p").reasons == (NO_TWIN["assigner"],)
    assert build_twin(env, "o").reasons == (NO_TWIN["offset"],)
    assert build_twin(env, "i").reasons == (NO_TWIN["idleness"],)
    with pytest.raises(InputError, match="no such sink"):
        build_twin(env, "nowhere")


@pytest.mark.spark
def test_the_built_twin_runs_on_spark_like_its_model() -> None:
    get_spark()
    env = wv.StreamExecutionEnvironment()
    windowed(env).aggregate(wv.SumAggregate(lambda e: e[2])).sink_to("sums")
    plan = build_twin(env, "sums")
    ran = spark_and_model(plan.run, plan.predict)
    assert ran.summary()[3] == (
        3,
        0,
        11500,
        0,
        (Row(0, 5000, "alice", 2, 6), Row(0, 5000, "bob", 1, 3)),
    )
