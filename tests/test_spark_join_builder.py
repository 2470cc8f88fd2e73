"""build_twin of an interval join: the Spark stream-stream join twin (``build_join_twin``),
or the precise reason there is none.

The expected batches of the exclusive-bounds case are what real local Spark 4.3 produced (the
``spark``-marked test runs it and checks the model against it batch by batch): its NULL rows
come in the batch whose watermark is exactly 1500, which only the strict inequality's state
watermark (``W - 500``, no ``- 1``) evicts.
"""

from __future__ import annotations

import dataclasses

import pytest
from jobs import bounded, spark_and_model

import winviz as wv
from winviz.spark import get_spark, predict_join, run_join_twin
from winviz.spark.batches import LEFT, RIGHT
from winviz.spark.builder import NO_TWIN, NoTwinError, TwinPlan, build_twin
from winviz.spark.join_model import JoinSpec
from winviz.spark.results import JoinRow
from winviz.spark.twins import join_condition

J = JoinRow

# the lesson's orders (left) and clicks (right), watermarks 200 ms behind
ORDERS = [("ann", 1_000), ("bob", 2_000), ("cy", 1_900), ("ann", 4_000), ("bob", 6_000)]
ORDER_ARRIVALS = [0, 100, 300, 2_000, 4_000]
CLICKS = [("ann", 700), ("cy", 2_100), ("bob", 2_400), ("ann", 1_600), ("ann", 4_900)]
CLICKS += [("bob", 1_700), ("ann", 5_000)]
CLICK_ARRIVALS = [50, 400, 500, 1_500, 2_600, 4_500, 5_000]


def first(e):
    return e[0]


def join_env(
    left=ORDERS,
    left_arrivals=ORDER_ARRIVALS,
    right=CLICKS,
    right_arrivals=CLICK_ARRIVALS,
    *,
    bounds=(-500, 1_000),
    delays=(200, 200),
    exclusive=(False, False),
    function=None,
    late_tag=False,
):
    env = wv.StreamExecutionEnvironment()
    left_stream = env.from_collection(left, arrival_times=left_arrivals, name="orders")
    right_stream = env.from_collection(right, arrival_times=right_arrivals, name="clicks")
    joined = (
        left_stream.assign_timestamps_and_watermarks(bounded(delays[0]))
        .key_by(first)
        .interval_join(
            right_stream.assign_timestamps_and_watermarks(bounded(delays[1])).key_by(first)
        )
        .between(*bounds)
    )
    if exclusive[0]:
        joined = joined.lower_bound_exclusive()
    if exclusive[1]:
        joined = joined.upper_bound_exclusive()
    if late_tag:
        joined = joined.side_output_right_late_data(wv.OutputTag("late-clicks"))
    joined.process(function or wv.PairJoinFunction()).sink_to("pairs")
    return env


def test_an_interval_join_becomes_the_join_spec_and_each_sides_rows() -> None:
    plan = build_twin(join_env(), "pairs")
    assert isinstance(plan, TwinPlan) and plan.possible
    assert (plan.reasons, plan.caveats) == ((), ())
    assert plan.spec == JoinSpec(lower=-500, upper=1_000, left_delay=200, right_delay=200)
    assert plan.left == tuple({"key": k, "ts": t} for k, t in ORDERS)
    assert plan.right == tuple({"key": k, "ts": t} for k, t in CLICKS)
    assert (plan.left_arrivals, plan.right_arrivals) == (
        tuple(ORDER_ARRIVALS),
        tuple(CLICK_ARRIVALS),
    )
    got = plan.predict()
    assert got.summary() == [
        (0, 6, 0, 0, (J("ann", 0, 1000, 0, 700), J("bob", 1, 2000, 2, 2400),
                      J("cy", 2, 1900, 1, 2100))),
        (1, 0, 1800, 0, ()),
        (2, 1, 1800, 1, ()),  # ann@1600 <= 1800: late
        (3, 2, 1800, 0, (J("ann", 3, 4000, 4, 4900),)),
        (4, 0, 3800, 0, ()),
        (5, 2, 3800, 1, ()),  # bob@1700 <= 3800: late
        (6, 0, 4700, 0, ()),
        (7, 1, 4700, 0, (J("ann", 3, 4000, 6, 5000),)),
        (8, 0, 4800, 0, ()),
    ]  # fmt: skip
    assert [b.state_watermarks for b in got.batches][:2] == [(-1001, -501), (799, 1299)]


def test_the_twin_and_flinks_interval_join_pair_the_same_rows_on_the_lessons_data() -> None:
    env = join_env()
    plan = build_twin(env, "pairs")
    # flink() reruns the engine's interval join on the twin's rows: the pipeline's own pairs
    pipeline = [(ORDERS.index(o), CLICKS.index(c)) for o, c in _values(env.execute())]
    assert [r.value for r in plan.flink().outputs["pairs"]] == pipeline
    frame = plan.compare()
    assert [(r.left_index, r.right_index, r.flink, r.spark) for r in frame.itertuples()] == [
        (0, 0, True, True),
        (0, 3, False, False),
        (3, 4, True, True),
        (3, 6, True, True),
        (1, 2, True, True),
        (1, 5, False, False),
        (2, 1, True, True),
    ]
    assert frame["reason"][1] == (
        "Flink dropped right row 3 (ts 1600) as late: 1600 < watermark 1799; Spark dropped "
        "right row 3 (ts 1600) as late in batch 2: 1600 <= watermark of previous batch 1800"
    )


def _values(result):
    return [r.value for r in result.outputs["pairs"]]


# Exclusive bounds, delays 0: between(-500, 500) with both bounds exclusive joins
# l + 500 > r > l - 500. In batch 3 the watermark is exactly 1500: Spark's state watermarks
# are 1500 - 500 = 1000 on both sides (strict inequalities: no "- 1"), so b@1000 (left) and
# c@1000 (right), never matched, leave with their NULL rows in a full outer join.
C_LEFT = [("a", 1000), ("b", 1000), ("a", 1500)]
C_LEFT_ARR = [0, 0, 1000]
C_RIGHT = [("a", 1500), ("a", 1499), ("c", 1000), ("a", 1900), ("a", 1000)]
C_RIGHT_ARR = [0, 0, 0, 1000, 1000]
C_PAIRS = (J("a", 2, 1500, 0, 1500), J("a", 2, 1500, 1, 1499), J("a", 2, 1500, 3, 1900))
C_INNER = [
    (0, 5, 0, 0, (J("a", 0, 1000, 1, 1499),)),  # a@1000 + 500 = a@1500 is not in (500, 1500)
    (1, 0, 1000, 0, ()),
    (2, 3, 1000, 1, C_PAIRS),  # right a@1000 <= 1000: late
    (3, 0, 1500, 0, ()),
]
C_NULLS = (J("b", 1, 1000, None, None), J("c", None, None, 2, 1000))
C_FULL_OUTER = [*C_INNER[:3], (3, 0, 1500, 0, C_NULLS)]


def exclusive_plan() -> TwinPlan:
    env = join_env(
        C_LEFT, C_LEFT_ARR, C_RIGHT, C_RIGHT_ARR, bounds=(-500, 500), delays=(0, 0),
        exclusive=(True, True),
    )  # fmt: skip
    return build_twin(env, "pairs")


def test_exclusive_bounds_are_strict_inequalities_with_their_own_state_watermarks() -> None:
    plan = exclusive_plan()
    assert (plan.spec.lower_inclusive, plan.spec.upper_inclusive) == (False, False)
    assert join_condition(plan.spec) == (
        "lkey = rkey AND rt > lt + INTERVAL -500 MILLISECONDS AND rt < lt + INTERVAL 500 "
        "MILLISECONDS"
    )
    got = plan.predict()
    assert got.summary() == C_INNER
    assert got.batches[3].state_watermarks == (1000, 1000)
    assert got.batches[3].evicted == ((LEFT, 0, True), (LEFT, 1, False), (RIGHT, 2, False))
    full = predict_join(*plan.inputs, dataclasses.replace(plan.spec, join_type="full_outer"))
    assert full.summary() == C_FULL_OUTER
    # the same as Flink's moved bounds (lower + 1, upper - 1) taken inclusively
    moved = JoinSpec(lower=-499, upper=499, join_type="full_outer")
    assert predict_join(*plan.inputs, moved).batches == full.batches
    # Flink is not behind Spark here: right a@1000 arrives at 1000 ms, when Flink's watermark
    # is 999 (late means below it), so Flink joins it with a@1000; Spark's late filter drops it
    frame = plan.compare()
    columns = ["left_index", "right_index", "flink", "spark"]
    assert frame.loc[1, columns].tolist() == [0, 4, True, False]
    assert frame["reason"][1] == (
        "Spark dropped right row 4 (ts 1000) as late in batch 2: 1000 <= watermark of previous "
        "batch 1000"
    )


@pytest.mark.spark
def test_exclusive_bounds_twin_matches_real_spark_batch_by_batch() -> None:
    get_spark()
    plan = exclusive_plan()
    assert spark_and_model(plan.run, plan.predict).summary() == C_INNER
    full_spec = dataclasses.replace(plan.spec, join_type="full_outer")
    # the NULL rows witness the evictions
    full = spark_and_model(run_join_twin, predict_join, *plan.inputs, full_spec)
    assert full.summary() == C_FULL_OUTER


# -- no twin ------------------------------------------------------------------------------------


class OrderClick(wv.ProcessJoinFunction):
    def process_element(self, order, click, ctx, out):
        out.collect((order[0], order[1], click[1]))


def refused(plan) -> tuple[str, ...]:
    assert not plan.possible and plan.spec is None
    with pytest.raises(NoTwinError, match="no Spark twin for sink 'pairs'"):
        plan.predict()
    with pytest.raises(NoTwinError):
        plan.run()
    return plan.reasons


def test_another_process_join_function_is_refused() -> None:
    assert refused(build_twin(join_env(function=OrderClick()), "pairs")) == (
        NO_TWIN["join_function"],
    )

    class Pairs(wv.PairJoinFunction):  # a subclass can do anything
        pass

    assert refused(build_twin(join_env(function=Pairs()), "pairs")) == (NO_TWIN["join_function"],)


def test_a_late_side_output_is_refused_unless_approximate() -> None:
    env = join_env(late_tag=True)
    assert refused(build_twin(env, "pairs")) == (NO_TWIN["join_side_output"],)
    plan = build_twin(env, "pairs", approximate=True)
    assert plan.possible and plan.caveats == (NO_TWIN["join_side_output"],)
    assert plan.predict().summary() == build_twin(join_env(), "pairs").predict().summary()


def test_window_joins_and_co_groups_are_refused() -> None:
    for how in ("join", "co_group"):
        env = wv.StreamExecutionEnvironment()
        a = env.from_collection(ORDERS, arrival_times=ORDER_ARRIVALS)
        b = env.from_collection(CLICKS, arrival_times=CLICK_ARRIVALS)
        a, b = (
            a.assign_timestamps_and_watermarks(bounded(0)),
            b.assign_timestamps_and_watermarks(bounded(0)),
        )
        two = getattr(a, how)(b).where(lambda e: e[0]).equal_to(lambda e: e[0])
        two = two.window(wv.TumblingEventTimeWindows.of(2_000))
        if how == "join":
            two.apply(lambda x, y: (x, y)).sink_to("pairs")
        else:
            two.apply(lambda xs, ys, out: out.collect(len(xs))).sink_to("pairs")
        assert refused(build_twin(env, "pairs")) == (NO_TWIN["window_join"],), how


def test_a_union_on_one_side_batch_mode_and_bad_keys_are_refused() -> None:
    env = wv.StreamExecutionEnvironment()
    one = env.from_collection(ORDERS[:2], arrival_times=[0, 0]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    two = env.from_collection(ORDERS[2:], arrival_times=[0, 0, 0])
    two = two.assign_timestamps_and_watermarks(bounded(0))
    clicks = env.from_collection(CLICKS, arrival_times=CLICK_ARRIVALS)
    clicks = clicks.assign_timestamps_and_watermarks(bounded(0)).key_by(lambda e: e[0])
    (
        one.union(two).key_by(lambda e: e[0]).interval_join(clicks).between(0, 1)
        .process(wv.PairJoinFunction()).sink_to("pairs")
    )  # fmt: skip
    assert refused(build_twin(env, "pairs")) == (NO_TWIN["join_union"],)

    env = join_env()
    env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)
    assert refused(build_twin(env, "pairs")) == (NO_TWIN["batch"],)

    keys = [(("ann", 1), 1_000)]
    assert refused(build_twin(join_env(keys, [0]), "pairs")) == (
        "the join twin's key must be a str or an int (Spark's key column is a string or a "
        "long): key_by gave tuple ('ann', 1) for left record 0",
    )
