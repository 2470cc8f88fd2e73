"""compare(engine_result, spark_result): per (key, window), what Flink (the engine) and Spark
produced, when, and why they differ — exact tables for known scenarios."""

from __future__ import annotations

import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz.spark import get_spark
from winviz.spark.builder import build_twin
from winviz.spark.compare import APPEND_LATER, COLUMNS, LATE_REFIRE, compare


def strategy(bound: int):
    return bounded(bound)


def side_output_job():
    """The README's job: a late row goes to a side output."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [
            ("alice", 1_000),
            ("bob", 2_500),
            ("alice", 4_999),
            ("alice", 900),
            ("alice", 12_000),
            ("bob", 3_000),
            ("alice", 6_000),
        ],
        5000,
        strategy(500),
        late=wv.OutputTag("late"),
        sink="counts",
        arrival_times=[0, 100, 200, 900, 1500, 2500, 2600],
    )
    return env


def lateness_job():
    """Allowed lateness 2 s: Flink re-fires [0, 5000) twice; Spark drops a@2000 and b@4000."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 7000), ("a", 3000), ("a", 2000), ("b", 4000), ("a", 9500)],
        5000,
        strategy(1000),
        lateness=2000,
        sink="counts",
        arrival_times=[0, 1000, 1300, 2100, 2200, 3000],
    )
    return env


def table(env, spark_result=None):
    result = env.execute()
    plan = build_twin(env, "counts", approximate=True)
    return compare(result, spark_result or plan.predict())


def test_side_output_table() -> None:
    frame = table(side_output_job())
    assert list(frame.columns) == COLUMNS
    rows = frame.to_dict("records")
    assert [
        (r["key"], r["window_start"], r["window_end"], r["flink_result"], r["flink_time"])
        for r in rows
    ] == [
        ("alice", 0, 5000, 3, 1600),
        ("alice", 5000, 10000, None, None),
        ("alice", 10000, 15000, 1, 2600),
        ("bob", 0, 5000, 1, 1600),
    ]
    assert [(r["spark_result"], r["spark_batch"], r["spark_time"]) for r in rows] == [
        (3, 3, 2000),
        (None, None, None),
        (None, None, None),
        (1, 3, 2000),
    ]
    assert [r["same_result"] for r in rows] == [True, True, False, True]
    assert [r["reason"] for r in rows] == [
        APPEND_LATER,
        "side output 'late': Flink routed late row ts 6000 there (watermark 11499); dropped by "
        "Spark's late filter: ts 6000 (window end 10000) <= watermark of previous batch 11500 "
        "(batch 4)",
        "fired by Flink's end-of-input watermark (MAX); Spark's watermark stayed at 11500 < "
        "window end 15000, the window is still open in Spark's state",
        "side output 'late': Flink routed late row ts 3000 there (watermark 11499); dropped by "
        "Spark's late filter: ts 3000 (window end 5000) <= watermark of previous batch 11500 "
        f"(batch 4); {APPEND_LATER}",
    ]


def test_allowed_lateness_table() -> None:
    rows = table(lateness_job()).to_dict("records")
    assert [
        (r["key"], r["window_start"], r["flink_result"], r["flink_time"], r["flink_firings"])
        for r in rows
    ] == [("a", 0, 3, 2100, 3), ("a", 5000, 2, 3000, 1), ("b", 0, 1, 2200, 1)]
    assert [(r["spark_result"], r["spark_batch"], r["same_result"]) for r in rows] == [
        (2, 2, False),
        (None, None, False),
        (None, None, False),
    ]
    assert [r["reason"] for r in rows] == [
        f"{LATE_REFIRE}; dropped by Spark's late filter: ts 2000 (window end 5000) <= watermark "
        "of previous batch 6000 (batch 3)",
        "fired by Flink's end-of-input watermark (MAX); Spark's watermark stayed at 8500 < "
        "window end 10000, the window is still open in Spark's state",
        "dropped by Spark's late filter: ts 4000 (window end 5000) <= watermark of previous "
        "batch 6000 (batch 3)",
    ]


@pytest.mark.spark
def test_the_table_is_the_same_with_real_spark() -> None:
    get_spark()
    env = side_output_job()
    ran = build_twin(env, "counts", approximate=True).run()
    assert table(env, ran).equals(table(env))


def test_sessions_over_a_union_table() -> None:
    def strategy_of(bound):
        return strategy(bound)

    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("a", 1000), ("a", 8000), ("a", 2000)], arrival_times=[0, 1000, 3000])
    b = env.from_collection([("b", 3000), ("b", 12000)], arrival_times=[2000, 4000])
    (
        a.assign_timestamps_and_watermarks(strategy_of(1000))
        .union(b.assign_timestamps_and_watermarks(strategy_of(500)))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1500))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    rows = table(env).to_dict("records")
    assert [
        (r["key"], r["window_start"], r["window_end"], r["flink_time"], r["spark_time"])
        for r in rows
    ] == [
        ("a", 1000, 2500, 2200, 3000),
        ("a", 2000, 3500, 4000, 5000),
        ("a", 8000, 9500, 4000, None),
        ("b", 3000, 4500, 4000, 5000),
        ("b", 12000, 13500, 4000, None),
    ]
    still_open = "Spark's watermark stayed at 7000 < window end {}, the window is still open"
    assert [r["reason"] for r in rows] == [
        APPEND_LATER,
        APPEND_LATER,
        # a's input ended first: its channel's MAX lifted Flink's min to b's 11499
        f"fired by Flink at watermark 11499; {still_open.format(9500)} in Spark's state",
        APPEND_LATER,
        f"fired by Flink's end-of-input watermark (MAX); {still_open.format(13500)} in "
        "Spark's state",
    ]


def test_a_row_flink_calls_late_but_spark_counts() -> None:
    """Spark's late filter uses the previous batch's watermark: a row that Flink's periodic
    watermark already made late can still be counted by Spark, and the table says so."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 8000), ("a", 3000)],
        5000,
        strategy(500),
        late=wv.OutputTag("late"),
        sink="counts",
        arrival_times=[0, 100, 900],
    )
    first = table(env).to_dict("records")[0]
    assert (first["window_start"], first["flink_result"], first["spark_result"]) == (0, 1, 2)
    assert first["reason"] == (
        "side output 'late': Flink routed late row ts 3000 there (watermark 7499); counted by "
        "Spark: ts 3000 (window end 5000) > watermark of previous batch 0 (batch 0)"
    )


def test_a_session_flink_fired_inside_a_bigger_open_spark_session() -> None:
    """Flink fires [0, 1500) before a@1200 arrives; in Spark all three rows share a batch and
    merge into [0, 4000), still open: compare reads Spark's state by replaying the model."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 0), ("a", 2500), ("a", 1200)],
        wv.EventTimeSessionWindows.with_gap(1500),
        strategy(0),
        sink="counts",
        arrival_times=[0, 100, 300],
    )
    rows = table(env).to_dict("records")
    assert [(r["window_start"], r["window_end"], r["flink_result"]) for r in rows] == [
        (0, 1500, 1),
        (1200, 4000, 2),
    ]
    assert rows[0]["reason"] == (
        "Spark's session for this key is [0, 4000) with 3 rows, still open (its end is past "
        "Spark's watermark 2500): it grew past Flink's session through rows Flink did not add "
        "to it"
    )
