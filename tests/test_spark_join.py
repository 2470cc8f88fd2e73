"""The Spark stream-stream join twin (winviz.spark.join_model / twins / join_compare).

The expected batches are what real local Spark 4.x produced (the ``spark``-marked tests run it
and check the model against it batch by batch); the model-only tests pin the rules that Spark
reports no number for (which rows were late or evicted, the state watermarks).
"""

from __future__ import annotations

import random

import pytest
from jobs import spark_and_model

from winviz.errors import InputError
from winviz.spark import compare, get_spark
from winviz.spark.batches import LEFT, RIGHT
from winviz.spark.join_compare import flink_interval_join
from winviz.spark.join_model import JOIN_TYPES, JoinSpec, predict_join, state_watermarks
from winviz.spark.results import JoinRow
from winviz.spark.twins import run_join_twin

J = JoinRow


def rec(key, ts):
    return {"key": key, "ts": ts}


@pytest.fixture(scope="module")
def spark():
    return get_spark()


# Case A (per_batch, delays 0, between(-500, 500)): b@1000 and c@1500 never match; the
# watermark reaches 1500 = 1000 + upper in batch 3 and b@1000 stays (state watermark
# 1500 - 500 - 1 = 999); it is evicted, with its NULL row, only in batch 5 (watermark 2600).
A_LEFT = [rec("a", 1000), rec("b", 1000), rec("a", 3000), rec("d", 1500), rec("d", 1501)]
A_LEFT_ARR = [0, 0, 2000, 1000, 2000]
A_RIGHT = [rec("a", 1400), rec("c", 1500), rec("a", 2600), rec("a", 900), rec("a", 3499)]
A_RIGHT += [rec("d", 1501)]
A_RIGHT_ARR = [0, 0, 2000, 3000, 3000, 2000]
A_INPUTS = (A_LEFT, A_LEFT_ARR, A_RIGHT, A_RIGHT_ARR)


def spec_a(join_type: str = "full_outer") -> JoinSpec:
    return JoinSpec(lower=-500, upper=500, join_type=join_type)


A_FULL_OUTER = [
    (0, 4, 0, 0, (J("a", 0, 1000, 0, 1400),)),
    (1, 0, 1000, 0, ()),
    (2, 1, 1000, 0, ()),
    (3, 0, 1500, 0, ()),  # b@1000 kept: left state watermark 999
    (4, 4, 1500, 0, (J("a", 2, 3000, 2, 2600), J("d", 3, 1500, 5, 1501), J("d", 4, 1501, 5, 1501))),
    (5, 0, 2600, 0, (J("b", 1, 1000, None, None), J("c", None, None, 1, 1500))),
    (6, 2, 2600, 1, (J("a", 2, 3000, 4, 3499),)),  # a@900 <= 2600: dropped as late
    (7, 0, 3000, 0, ()),
]

# Case B (available_now, between(-500, 0)): no no-data batches between the data batches, so
# batch 2 runs with watermark 5000 while its late filter still uses 1000. Right rows a@1100
# and b@1200 are past the right state watermark 5000 - 500 - 1 = 4499 when they arrive:
# a@1100 still joins left a@1300 of the same batch and is not stored; b@1200 never matched,
# so the right outer join stores it and its eviction emits the NULL row in the same batch.
B_LEFT = [rec("a", 1000), rec("a", 5000), rec("a", 1300)]
B_LEFT_ARR = [0, 1000, 2000]
B_RIGHT = [rec("a", 1000), rec("a", 5000), rec("a", 1100), rec("b", 1200)]
B_RIGHT_ARR = [0, 1000, 2000, 2000]
B_INPUTS = (B_LEFT, B_LEFT_ARR, B_RIGHT, B_RIGHT_ARR)
SPEC_B = JoinSpec(lower=-500, upper=0, join_type="right_outer", drive="available_now")
B_RIGHT_OUTER = [
    (0, 2, 0, 0, (J("a", 0, 1000, 0, 1000),)),
    (1, 2, 1000, 0, (J("a", 1, 5000, 1, 5000),)),
    (
        2,
        3,
        5000,
        0,
        (J("a", 2, 1300, 0, 1000), J("a", 2, 1300, 2, 1100), J("b", None, None, 3, 1200)),
    ),
]


def run_and_model(inputs, join_spec):
    return spark_and_model(run_join_twin, predict_join, *inputs, join_spec)


# -- real Spark ------------------------------------------------------------------------------


@pytest.mark.spark
def test_full_outer_join_emits_null_rows_only_when_the_state_watermark_passes(spark) -> None:
    ran = run_and_model(A_INPUTS, spec_a())
    assert ran.summary() == A_FULL_OUTER


@pytest.mark.spark
def test_right_outer_join_with_available_now_evicts_rows_in_the_batch_they_arrive(spark) -> None:
    ran = run_and_model(B_INPUTS, SPEC_B)
    assert ran.summary() == B_RIGHT_OUTER
    last = ran.batches[-1]
    assert (last.watermark, last.late_watermark, last.state_watermarks) == (
        5000,
        1000,
        (4999, 4499),
    )
    assert last.evicted == (
        (LEFT, 0, True),
        (LEFT, 2, True),
        (RIGHT, 0, True),
        (RIGHT, 2, True),
        (RIGHT, 3, False),
    )


def random_case(seed: int):
    rng = random.Random(seed)

    def side(n: int):
        recs = [rec(rng.choice("ab"), rng.randrange(0, 4000, 100)) for _ in range(n)]
        return recs, sorted(rng.randrange(0, 4000, 250) for _ in range(n))

    left, left_arr = side(rng.randint(3, 6))
    right, right_arr = side(rng.randint(3, 6))
    lower = rng.choice([-1000, -500, -300, 0, 200])
    join_spec = JoinSpec(
        lower=lower,
        upper=lower + rng.choice([0, 300, 500, 1000]),
        left_delay=rng.choice([0, 200, 500]),
        right_delay=rng.choice([0, 200, 500]),
        join_type=JOIN_TYPES[seed % len(JOIN_TYPES)],
        drive=rng.choice(["per_batch", "available_now"]),
        watermark_policy=rng.choice(["min", "max"]),
    )
    return (left, left_arr, right, right_arr), join_spec


@pytest.mark.spark
def test_random_joins_match_spark_batch_by_batch(spark) -> None:
    # one per join type (inner, left/right/full outer, left semi), each with joined rows,
    # late rows and evictions (outer joins: NULL rows)
    for seed in (0, 11, 52, 13, 14):
        inputs, join_spec = random_case(seed)
        run_and_model(inputs, join_spec)


# -- the model's rules (no JVM) --------------------------------------------------------------


def test_state_watermarks_solve_the_range_condition_minus_one() -> None:
    # rt <= lt + upper bounds the left side, rt >= lt + lower the right side
    assert state_watermarks(JoinSpec(lower=-500, upper=500), 2600) == (2099, 2099)
    assert state_watermarks(JoinSpec(lower=-500, upper=0), 5000) == (4999, 4499)
    assert state_watermarks(JoinSpec(lower=200, upper=1000), 3000) == (1999, 3199)


def test_model_names_the_late_and_evicted_rows_of_case_a() -> None:
    batches = predict_join(*A_INPUTS, spec_a()).batches
    assert [b.state_watermarks for b in batches] == [
        (-501, -501), (499, 499), (499, 499), (999, 999), (999, 999),
        (2099, 2099), (2099, 2099), (2499, 2499),
    ]  # fmt: skip
    assert batches[5].evicted == (
        (LEFT, 0, True), (LEFT, 1, False), (LEFT, 3, True), (LEFT, 4, True),
        (RIGHT, 0, True), (RIGHT, 1, False), (RIGHT, 5, True),
    )  # fmt: skip
    assert batches[6].late == ((RIGHT, 3),)
    assert [b.late_watermark for b in batches] == [0, 0, 1000, 1000, 1500, 1500, 2600, 2600]


@pytest.mark.parametrize(
    ("join_type", "nulls"),
    [
        ("inner", ()),
        ("left_outer", (J("b", 1, 1000, None, None),)),
        ("right_outer", (J("c", None, None, 1, 1500),)),
        ("full_outer", (J("b", 1, 1000, None, None), J("c", None, None, 1, 1500))),
    ],
)
def test_each_outer_side_gets_its_null_rows_at_eviction(join_type, nulls) -> None:
    batches = predict_join(*A_INPUTS, spec_a(join_type)).batches
    assert batches[5].rows == nulls
    pairs = [r for b in batches for r in b.rows if not r.is_outer]
    assert pairs == [r for _, _, _, _, rows in A_FULL_OUTER for r in rows if not r.is_outer]


def test_spark_loses_a_pair_only_to_the_late_filter() -> None:
    # the state watermarks keep every row that a non-late row of the other side can join
    for seed in range(300):
        (left, left_arr, right, right_arr), join_spec = random_case(seed)
        if join_spec.join_type == "left_semi":
            continue
        batches = predict_join(left, left_arr, right, right_arr, join_spec).batches
        output = {(r.left_index, r.right_index) for b in batches for r in b.rows}
        late = {row for b in batches for row in b.late}
        for i, lr in enumerate(left):
            for j, rr in enumerate(right):
                if (
                    lr["key"] == rr["key"]
                    and join_spec.lower <= rr["ts"] - lr["ts"] <= join_spec.upper
                ):
                    assert (i, j) in output or (LEFT, i) in late or (RIGHT, j) in late, seed


def test_left_semi_outputs_each_left_row_once() -> None:
    left = [rec("a", 1000), rec("a", 1100)]
    right = [rec("a", 1200), rec("a", 1300), rec("a", 1050)]
    got = predict_join(left, [0, 0], right, [0, 1000, 2000], spec_a("left_semi"))
    rows = [(b.batch_id, b.rows) for b in got.batches if b.rows]
    # both left rows match a@1200 in batch 0; later right rows output nothing more
    assert rows == [(0, (J("a", 0, 1000, None, None), J("a", 1, 1100, None, None)))]


def test_max_policy_follows_the_faster_side() -> None:
    # the right side stops at 1200: with "min" the global watermark stays there and b@1000
    # waits (left state watermark 1200 - 500 - 1 = 699); with "max" the left side's 9000
    # drives it and b@1000 is evicted with its NULL row
    left, right = [rec("b", 1000), rec("a", 9000)], [rec("a", 1200)]
    slow = JoinSpec(lower=-500, upper=500, join_type="left_outer")
    fast = JoinSpec(lower=-500, upper=500, join_type="left_outer", watermark_policy="max")
    got = predict_join(left, [0, 1000], right, [0], slow).batches
    assert [(b.watermark, b.rows) for b in got] == [(0, ()), (1000, ()), (1000, ()), (1200, ())]
    got = predict_join(left, [0, 1000], right, [0], fast).batches
    assert [b.watermark for b in got] == [0, 1200, 1200, 9000]
    assert got[-1].rows == (J("b", 0, 1000, None, None),)


def test_bad_records_and_specs_are_named() -> None:
    with pytest.raises(InputError, match=r"right record 1: no field 'ts'"):
        predict_join([rec("a", 1)], [0], [rec("a", 1), {"key": "a"}], [0, 0], spec_a())
    with pytest.raises(InputError, match="lower bound 5 > upper bound 2"):
        JoinSpec(lower=5, upper=2)
    with pytest.raises(InputError, match="join_type"):
        JoinSpec(lower=0, upper=1, join_type="left_anti")
    with pytest.raises(InputError, match="left_arrivals"):
        predict_join([rec("a", 1)], [], [], [], spec_a())


# -- Flink beside Spark ----------------------------------------------------------------------


def test_compare_with_flinks_interval_join() -> None:
    spec = spec_a("left_outer")
    engine = flink_interval_join(*A_INPUTS, spec)
    frame = compare(engine, predict_join(*A_INPUTS, spec))
    got = [
        (r.key, r.left_index, r.right_index, r.flink_time, r.spark_batch, r.reason)
        for r in frame.astype(object).where(frame.notna(), None).itertuples()
    ]
    later = "the same pair, later: Spark outputs a micro-batch's rows when the batch runs, "
    later += "Flink when the second row of the pair arrives"
    assert got == [
        ("a", 0, 0, 0, 0, later),
        (
            "a",
            0,
            3,
            None,
            None,
            "Flink dropped right row 3 (ts 900) as late: 900 < watermark 2599; Spark dropped "
            "right row 3 (ts 900) as late in batch 6: 900 <= watermark of previous batch 2600",
        ),
        ("a", 2, 2, 2000, 4, later),
        ("a", 2, 4, 3000, 6, later),
        (
            "b",
            1,
            None,
            None,
            5,
            "Spark left_outer: left row 1 never matched; emitted with NULLs when evicted in "
            "batch 5 (ts 1000 <= left state watermark 2099); Flink's interval join has no "
            "outer rows",
        ),
        ("d", 3, 5, 2000, 4, later),
        ("d", 4, 5, 2000, 4, later),
    ]
    assert list(frame["flink"]) == [True, False, True, True, False, True, True]
    assert list(frame["spark"]) == [True, False, True, True, True, True, True]


def test_the_docs_example() -> None:
    # docs/spark_join.md's example, its batch table and its comparison frame
    left, right = [rec("a", 1000), rec("b", 1000), rec("a", 3000)], [rec("a", 1400)]
    right += [rec("a", 2600), rec("a", 900), rec("a", 3499)]
    inputs = (left, [0, 0, 2000], right, [0, 2000, 3000, 3000])
    spec = spec_a("left_outer")
    model = predict_join(*inputs, spec)
    table = model.to_pandas()
    assert list(table["watermark"]) == [0, 1000, 1000, 2600, 2600, 3000]
    assert list(table["left_state_watermark"]) == [-501, 499, 499, 2099, 2099, 2499]
    assert list(table["late"]) == [[], [], [], [], ["right 2"], []]
    assert list(table["evicted"]) == [[], [], [], ["left 0", "left 1", "right 0"], [], []]
    assert list(table["null_rows"]) == [0, 0, 0, 1, 0, 0]
    frame = compare(flink_interval_join(*inputs, spec), model)
    assert list(frame["flink_time"].astype(object).where(frame["flink"], None)) == [
        0, None, 2000, 3000, None,
    ]  # fmt: skip
    assert list(frame["spark_batch"].astype(object).where(frame["spark"], None)) == [
        0, None, 2, 4, 3,
    ]  # fmt: skip
    assert frame["reason"][4].startswith("Spark left_outer: left row 1 never matched")


def test_compare_explains_a_pair_both_engines_lose_for_different_reasons() -> None:
    # delays 0: Flink's watermark reaches 1500 (max ts 1501 - 0 - 1) at 200 ms and fires the
    # cleanup timer of left a@1000 at 1000 + 500; right a@1500 arriving at 1000 ms is on time
    # (1500 is not below 1500) but finds the buffer empty. Spark's watermark is 1501 (max ts
    # - 0), so a@1500 is late there: Spark loses no pair to eviction that is not also late
    # (the state watermark keeps every row a non-late row of the other side can join).
    left, right = [rec("a", 1000), rec("x", 1501)], [rec("y", 1501), rec("a", 1500)]
    inputs = (left, [0, 0], right, [0, 1000])
    spec = JoinSpec(lower=-500, upper=500)
    frame = compare(flink_interval_join(*inputs, spec), predict_join(*inputs, spec))
    assert list(frame["reason"]) == [
        "Flink removed left row 0 (ts 1000) from its buffer at watermark 1500 before right row 1 "
        "arrived; Spark dropped right row 1 (ts 1500) as late in batch 2: 1500 <= watermark of "
        "previous batch 1501"
    ]
