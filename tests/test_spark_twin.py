"""The Spark twin against real local Spark (PySpark 4.x, needs Java): exact per-batch results.

Every expected value below is what Spark itself produced (batchId, numInputRows, the progress
watermark, numRowsDroppedByWatermark, the rows foreachBatch saw); each test also checks that
the pure-Python model (winviz.spark.model) predicts the same, batch by batch.
"""

from __future__ import annotations

import random
import time

import pytest
from jobs import spark_and_model

from winviz.spark import OutputRow, TwinSpec, get_spark, predict, run_twin
from winviz.spark.session import SESSION_CONF

pytestmark = pytest.mark.spark

Row = OutputRow


@pytest.fixture(scope="session")
def spark():
    started = time.perf_counter()
    session = get_spark()
    session.range(1).collect()
    print(f"\nSpark session ready in {time.perf_counter() - started:.1f} s")
    return session


def rec(key, ts, value=1):
    return {"key": key, "ts": ts, "value": value}


# A late row: a@2000 arrives after a@8000 has moved the watermark (delay 2 s) to 6000.
LATE_RECORDS = [rec("a", 1000, 1), rec("a", 8000, 2), rec("a", 2000, 3), rec("b", 6000, 4)]
LATE_RECORDS += [rec("a", 20000, 1)]
LATE_ARRIVALS = [0, 1000, 2000, 2000, 3000]  # trigger interval 1000: four micro-batches


def late_spec(mode: str, drive: str) -> TwinSpec:
    return TwinSpec(
        size=5000,
        watermark_delay=2000,
        value_field="value",
        aggregate="sum",
        output_mode=mode,
        drive=drive,
        trigger_interval=1000,
    )


def run_and_model(records, arrivals, spec):
    return spark_and_model(run_twin, predict, records, arrivals, spec)


# (batch_id, numInputRows, watermark, numRowsDroppedByWatermark, rows)
EXPECTED = {
    ("append", "per_batch"): [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        # the no-data batch Spark adds because batch 1 raised the watermark to 8000-2000
        (2, 0, 6000, 0, (Row(0, 5000, "a", 1, 1),)),
        # a@2000 (window end 5000 <= 6000) is dropped: counted, never added
        (3, 2, 6000, 1, ()),
        (4, 1, 6000, 0, ()),
        (5, 0, 18000, 0, (Row(5000, 10000, "a", 1, 2), Row(5000, 10000, "b", 1, 4))),
    ],
    ("update", "per_batch"): [
        (0, 1, 0, 0, (Row(0, 5000, "a", 1, 1),)),
        (1, 1, 0, 0, (Row(5000, 10000, "a", 1, 2),)),
        (2, 0, 6000, 0, ()),
        (3, 2, 6000, 1, (Row(5000, 10000, "b", 1, 4),)),
        (4, 1, 6000, 0, (Row(20000, 25000, "a", 1, 1),)),
        (5, 0, 18000, 0, ()),
    ],
    ("append", "available_now"): [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        # no no-data batch in between: batch 2 evicts with 6000 but filters late rows with
        # batch 1's watermark (0), so a@2000 still counts
        (2, 2, 6000, 0, (Row(0, 5000, "a", 2, 4),)),
        (3, 1, 6000, 0, ()),
        (4, 0, 18000, 0, (Row(5000, 10000, "a", 1, 2), Row(5000, 10000, "b", 1, 4))),
    ],
    ("update", "available_now"): [
        (0, 1, 0, 0, (Row(0, 5000, "a", 1, 1),)),
        (1, 1, 0, 0, (Row(5000, 10000, "a", 1, 2),)),
        (2, 2, 6000, 0, (Row(0, 5000, "a", 2, 4), Row(5000, 10000, "b", 1, 4))),
        (3, 1, 6000, 0, (Row(20000, 25000, "a", 1, 1),)),
        (4, 0, 18000, 0, ()),
    ],
}


@pytest.mark.parametrize(("mode", "drive"), list(EXPECTED))
def test_late_row_scenario(spark, mode: str, drive: str) -> None:
    ran = run_and_model(LATE_RECORDS, LATE_ARRIVALS, late_spec(mode, drive))
    assert ran.summary() == EXPECTED[(mode, drive)]


def test_watermark_lags_one_batch_and_late_filter_uses_previous_batch(spark) -> None:
    ran = run_twin(LATE_RECORDS, LATE_ARRIVALS, late_spec("append", "available_now"))
    assert [b.max_event_time for b in ran.batches] == [1000, 8000, 6000, 20000, None]
    assert ran.watermarks == [0, 0, 6000, 6000, 18000]  # max(wm, max event time - 2000), late
    assert [b.late_watermark for b in ran.batches] == [0, 0, 0, 6000, 6000]
    assert [b.proc_time for b in ran.batches] == [1000, 2000, 3000, 4000, 4000]


def test_late_rows_counted_per_window_and_key(spark) -> None:
    # three late rows, two (window, key) groups: Spark counts state-operator input rows
    records = [rec("a", 9000), rec("a", 1000), rec("a", 1500), rec("b", 1200), rec("a", 6000)]
    spec = TwinSpec(size=5000, watermark_delay=1000, value_field="value")
    ran = run_and_model(records, [0, 1000, 1000, 1000, 1000], spec)
    assert ran.summary() == [(0, 1, 0, 0, ()), (1, 0, 8000, 0, ()), (2, 4, 8000, 2, ())]


def test_sliding_window_copies_dropped_one_by_one(spark) -> None:
    # ts 4000 is in [0,6000), [2000,8000), [4000,10000); with watermark 8000 two copies are late
    records = [rec("a", 9000), rec("a", 4000), rec("a", 12000)]
    spec = TwinSpec(size=6000, slide=2000, watermark_delay=1000, value_field="value")
    ran = run_and_model(records, [0, 1000, 2000], spec)
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 0, 8000, 0, ()),
        (2, 1, 8000, 2, ()),
        (3, 1, 8000, 0, ()),
        (4, 0, 11000, 0, (Row(4000, 10000, "a", 2, 2),)),
    ]


def test_available_now_adds_no_final_batch_when_the_watermark_did_not_rise(spark) -> None:
    records = [rec("a", 9000), rec("a", 1000)]
    spec = TwinSpec(size=5000, watermark_delay=0, value_field="value", drive="available_now")
    ran = run_and_model(records, [0, 1000], spec)
    assert ran.summary() == [(0, 1, 0, 0, ()), (1, 1, 9000, 0, (Row(0, 5000, "a", 1, 1),))]


def test_negative_event_times_are_late_against_the_initial_watermark_0(spark) -> None:
    records = [rec("a", -6000), rec("a", -1000), rec("a", 3000)]
    spec = TwinSpec(size=5000, slide=2000, watermark_delay=0, value_field="value")
    ran = run_and_model(records, [0, 0, 1000], spec)
    assert ran.summary() == [
        (0, 2, 0, 3, ()),  # the three windows of -6000 all end <= 0
        (1, 1, 0, 0, ()),
        (2, 0, 3000, 0, (Row(-4000, 1000, "a", 1, 1), Row(-2000, 3000, "a", 1, 1))),
    ]


def test_trace_of_a_spark_run(spark) -> None:
    ran = run_twin(LATE_RECORDS, LATE_ARRIVALS, late_spec("append", "per_batch"))
    kinds = ran.trace.kinds()
    assert kinds == {
        "arrival": 5,
        "batch": 6,
        "watermark": 2,
        "element": 5,
        "late_dropped": 1,
        "fired": 3,
        "emitted": 3,
    }
    # Spark only counts the drop; the trace names the row: ts 2000, window end 5000 <= 6000
    (dropped,) = ran.trace.records("late_dropped")
    assert (dropped.key, dropped.ts, dropped.watermark) == ("a", 2000, 6000)
    fired = [(r.key, r.window, r.detail) for r in ran.trace.records("fired")]
    assert fired == [
        ("a", (0, 5000), (1, 0, "on_time", 1)),
        ("a", (5000, 10000), (2, 0, "on_time", 1)),
        ("b", (5000, 10000), (4, 0, "on_time", 1)),
    ]
    frame = ran.to_pandas()
    assert list(frame["watermark"]) == [0, 0, 6000, 6000, 6000, 18000]
    assert list(ran.rows_frame()["batch_id"]) == [2, 5, 5]


def test_session_settings(spark) -> None:
    for key, value in SESSION_CONF.items():
        assert spark.conf.get(key) == value
    assert get_spark() is spark


def random_case(seed: int) -> tuple[list, list[int], TwinSpec]:
    """Small random inputs, late rows likely; seeds cycle through the drives and modes."""
    rng = random.Random(seed)
    size = rng.choice([2000, 3000, 5000])
    slide = rng.choice([None, size // 2 if size % 2 == 0 else size, 1000])
    n = rng.randint(3, 14)
    arrivals = sorted(rng.randrange(0, 6000) for _ in range(n))
    records = [
        rec(rng.choice("ab"), rng.randint(0, 3 * a + 2000), rng.randint(1, 9)) for a in arrivals
    ]
    spec = TwinSpec(
        size=size,
        slide=slide,
        watermark_delay=rng.choice([0, 500, 1000, 3000]),
        value_field="value",
        aggregate=rng.choice(["count", "sum"]),
        output_mode=("append", "update")[seed // 2 % 2],
        drive=("per_batch", "available_now")[seed % 2],
        trigger_interval=rng.choice([500, 1000, 2000]),
    )
    return records, arrivals, spec


@pytest.mark.parametrize("seed", range(8))
def test_model_agrees_with_spark_on_random_inputs(spark, seed: int) -> None:
    records, arrivals, spec = random_case(seed)
    started = time.perf_counter()
    ran = run_and_model(records, arrivals, spec)
    took = time.perf_counter() - started
    print(f" [{len(ran.batches)} batches, Spark and model, in {took:.2f} s]", end="")
