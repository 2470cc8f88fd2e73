"""Session windows and the multiple-watermark policy over a union, on real local Spark.

Every expected value is what Spark 4.x itself produced; each run is also checked against the
pure-Python model (winviz.spark.model rules 6 and 7), and random inputs must agree batch by
batch.
"""

from __future__ import annotations

import random

import pytest
from jobs import spark_and_model

from winviz.errors import InputError
from winviz.spark import (
    BatchInputError,
    OutputRow,
    TwinSpec,
    form_batches,
    get_spark,
    predict,
    run_twin,
)
from winviz.spark.model import WatermarkTracker, merge_sessions

Row = OutputRow


@pytest.fixture(scope="module")
def spark():
    return get_spark()


def rec(key, ts, value=1, stream=None):
    r = {"key": key, "ts": ts, "value": value}
    if stream is not None:
        r["stream"] = stream
    return r


def session_spec(gap: int, delay: int, drive: str = "per_batch") -> TwinSpec:
    return TwinSpec(
        session_gap=gap, watermark_delay=delay, value_field="value", aggregate="sum", drive=drive
    )


def run_and_model(records, arrivals, spec):
    return spark_and_model(run_twin, predict, records, arrivals, spec)


# -- pure parts -------------------------------------------------------------------------------


def test_sessions_that_touch_merge() -> None:
    assert merge_sessions([[1000, 2000, 1, 1], [0, 1000, 1, 2], [2001, 3000, 1, 4]]) == [
        [0, 2000, 2, 3],
        [2001, 3000, 1, 4],
    ]


def test_tracker_min_holds_at_0_until_every_stream_has_data() -> None:
    tracker = WatermarkTracker((1000, 500), "min")
    tracker.update([{"ts": 8000, "stream": 0}])
    assert (tracker.per_stream, tracker.global_watermark) == ({0: 7000, 1: 0}, 0)
    tracker.update([{"ts": 3000, "stream": 1}, {"ts": 2000, "stream": 0}])
    assert (tracker.per_stream, tracker.global_watermark) == ({0: 7000, 1: 2500}, 2500)
    high = WatermarkTracker((1000, 500), "max")
    high.update([{"ts": 300, "stream": 1}])  # a stream's own watermark may start below 0
    assert (high.per_stream, high.global_watermark) == ({0: 0, 1: -200}, 0)


def test_spec_checks_sessions_and_unions() -> None:
    with pytest.raises(InputError, match="exactly one of size"):
        TwinSpec(size=5000, session_gap=1000)
    with pytest.raises(InputError, match="append mode only"):
        TwinSpec(session_gap=1000, output_mode="update")
    with pytest.raises(InputError, match="needs a stream_field"):
        TwinSpec(size=5000, watermark_delay=(0, 0))
    with pytest.raises(InputError, match="one delay per stream"):
        TwinSpec(size=5000, watermark_delay=(0,), stream_field="stream")
    with pytest.raises(InputError, match="watermark_policy"):
        TwinSpec(size=5000, watermark_delay=(0, 0), stream_field="s", watermark_policy="avg")


def test_a_row_of_an_unknown_stream_names_its_batch_and_row() -> None:
    spec = TwinSpec(size=5000, watermark_delay=(0, 0), stream_field="stream")
    records = [rec("a", 1, stream=0), rec("a", 2, stream=1), rec("a", 3, stream=2)]
    with pytest.raises(BatchInputError) as info:
        form_batches(records, [0, 1000, 1000], spec)
    assert (info.value.batch, info.value.row, info.value.index) == (1, 1, 2)
    assert "an int in 0..1" in str(info.value)


# -- session windows on Spark -----------------------------------------------------------------


@pytest.mark.spark
def test_touching_sessions_merge_and_close_when_the_watermark_passes_their_end(spark) -> None:
    records = [rec("a", 0, 1), rec("a", 1000, 2), rec("a", 5000, 4)]
    ran = run_and_model(records, [0, 0, 1000], session_spec(1000, 0))
    assert ran.summary() == [
        (0, 2, 0, 0, ()),
        (1, 0, 1000, 0, ()),  # [0,1000) + [1000,2000) = [0,2000): end 2000 > 1000
        (2, 1, 1000, 0, ()),
        (3, 0, 5000, 0, (Row(0, 2000, "a", 2, 3),)),
    ]


@pytest.mark.spark
def test_late_session_rows_counted_per_key_and_timestamp(spark) -> None:
    # (a,1000) twice, (a,1500) and (b,1000): ts + gap <= 8000, three partial groups dropped
    records = [rec("a", 9000), rec("a", 1000), rec("a", 1000), rec("a", 1500), rec("b", 1000)]
    records.append(rec("a", 20000))
    ran = run_and_model(records, [0, 1000, 1000, 1000, 1000, 2000], session_spec(2000, 1000))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 0, 8000, 0, ()),
        (2, 4, 8000, 3, ()),
        (3, 1, 8000, 0, ()),
        (4, 0, 19000, 0, (Row(9000, 11000, "a", 1, 1),)),
    ]


@pytest.mark.spark
def test_available_now_lets_a_row_extend_a_session(spark) -> None:
    # batch 2 filters with batch 1's watermark (1000): a@2500 still joins [1000, 3000)
    records = [rec("a", 1000), rec("a", 5000), rec("a", 2500), rec("a", 9000)]
    ran = run_and_model(records, [0, 1000, 2000, 3000], session_spec(2000, 0, "available_now"))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 1000, 0, ()),
        (2, 1, 5000, 0, (Row(1000, 4500, "a", 2, 2),)),
        (3, 1, 5000, 0, ()),
        (4, 0, 9000, 0, (Row(5000, 7000, "a", 1, 1),)),
    ]


# -- a union of two streams with their own watermarks ------------------------------------------

UNION_RECORDS = [rec("a", 1000, stream=0), rec("a", 8000, stream=0), rec("b", 3000, stream=1)]
UNION_RECORDS += [rec("a", 2000, stream=0), rec("b", 12000, stream=1), rec("a", 4000, stream=1)]
UNION_ARRIVALS = [0, 1000, 2000, 3000, 4000, 5000]


def union_spec(policy: str, drive: str = "per_batch") -> TwinSpec:
    return TwinSpec(
        size=5000,
        watermark_delay=(1000, 500),
        stream_field="stream",
        watermark_policy=policy,
        value_field="value",
        drive=drive,
    )


@pytest.mark.spark
def test_min_policy_waits_for_the_slower_stream(spark) -> None:
    ran = run_and_model(UNION_RECORDS, UNION_ARRIVALS, union_spec("min"))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),  # stream 0 is at 7000, stream 1 has no data yet: min = 0
        (2, 1, 0, 0, ()),
        (3, 0, 2500, 0, ()),  # stream 1 at 3000 - 500
        (4, 1, 2500, 0, ()),  # a@2000 is on time
        (5, 1, 2500, 0, ()),
        (6, 0, 7000, 0, (Row(0, 5000, "a", 2, 2), Row(0, 5000, "b", 1, 1))),
        (7, 1, 7000, 1, ()),  # stream 1's a@4000 is late against 7000
    ]


@pytest.mark.spark
def test_max_policy_follows_the_faster_stream(spark) -> None:
    ran = run_and_model(UNION_RECORDS, UNION_ARRIVALS, union_spec("max"))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        (2, 0, 7000, 0, (Row(0, 5000, "a", 1, 1),)),
        (3, 1, 7000, 1, ()),  # stream 1's b@3000 is late
        (4, 1, 7000, 1, ()),  # so is a@2000
        (5, 1, 7000, 0, ()),
        (6, 0, 11500, 0, (Row(5000, 10000, "a", 1, 1),)),
        (7, 1, 11500, 1, ()),
    ]


# -- random agreement --------------------------------------------------------------------------


def random_session_case(seed: int) -> tuple[list, list[int], TwinSpec]:
    rng = random.Random(1000 + seed)
    n = rng.randint(3, 12)
    arrivals = sorted(rng.randrange(0, 6000) for _ in range(n))
    records = [
        rec(rng.choice("ab"), rng.randint(0, 2 * a + 2000) // 250 * 250, rng.randint(1, 9))
        for a in arrivals
    ]
    spec = TwinSpec(
        session_gap=rng.choice([500, 1000, 2000]),
        watermark_delay=rng.choice([0, 500, 1000, 3000]),
        value_field="value",
        aggregate=rng.choice(["count", "sum"]),
        drive=("per_batch", "available_now")[seed % 2],
        trigger_interval=rng.choice([500, 1000, 2000]),
    )
    return records, arrivals, spec


def random_union_case(seed: int) -> tuple[list, list[int], TwinSpec]:
    rng = random.Random(2000 + seed)
    n = rng.randint(3, 12)
    arrivals = sorted(rng.randrange(0, 6000) for _ in range(n))
    records = [
        rec(rng.choice("ab"), rng.randint(0, 3 * a + 2000), rng.randint(1, 9), rng.randint(0, 1))
        for a in arrivals
    ]
    size = rng.choice([2000, 3000, 5000])
    spec = TwinSpec(
        size=size,
        slide=rng.choice([None, 1000]),
        watermark_delay=(rng.choice([0, 500, 2000]), rng.choice([0, 1000, 3000])),
        stream_field="stream",
        watermark_policy=("min", "max")[seed // 2 % 2],
        value_field="value",
        output_mode=rng.choice(["append", "update"]),
        drive=("per_batch", "available_now")[seed % 2],
        trigger_interval=rng.choice([500, 1000, 2000]),
    )
    return records, arrivals, spec


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(4))
def test_session_model_agrees_with_spark_on_random_inputs(spark, seed: int) -> None:
    run_and_model(*random_session_case(seed))


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(4))
def test_union_model_agrees_with_spark_on_random_inputs(spark, seed: int) -> None:
    run_and_model(*random_union_case(seed))
