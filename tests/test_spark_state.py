"""The KeyedProcessFunction analogue on Spark's state APIs (transformWithStateInPandas and
applyInPandasWithState with EventTimeTimeout), against real local Spark.

Every expected value is what Spark 4.x produced; each run is checked against the model
(winviz.spark.state_twins.StateModel), and random inputs must agree batch by batch.
"""

from __future__ import annotations

import random

import pytest
from jobs import spark_and_model

from winviz.errors import InputError
from winviz.spark import get_spark
from winviz.spark.readback import SparkQueryError
from winviz.spark.results import TimerRow
from winviz.spark.spec import StateSpec
from winviz.spark.state_twins import predict_state, run_processing_time_probe, run_state_twin

T = TimerRow
TWS, APPLY = "transform_with_state", "apply_in_pandas_with_state"


@pytest.fixture(scope="module")
def spark():
    return get_spark()


def rec(key, ts, value=1):
    return {"key": key, "ts": ts, "value": value}


def spec(api: str, drive: str = "per_batch", timeout: int = 2000, delay: int = 1000) -> StateSpec:
    return StateSpec(
        timeout=timeout, watermark_delay=delay, api=api, value_field="value", drive=drive
    )


def run_and_model(records, arrivals, state_spec):
    return spark_and_model(run_state_twin, predict_state, records, arrivals, state_spec)


# a's timer 1000 + 2000 = 3000 is exactly the watermark after b@4000 (delay 1000)
RECORDS = [rec("a", 1000), rec("b", 4000), rec("a", 2500), rec("c", 9000), rec("a", 1500)]
ARRIVALS = [0, 1000, 2000, 3000, 4000]


@pytest.mark.spark
def test_transform_with_state_fires_a_timer_equal_to_the_watermark(spark) -> None:
    ran = run_and_model(RECORDS, ARRIVALS, spec(TWS))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        (2, 0, 3000, 0, (T("a", 3000, 1, 1),)),  # t <= wm: fires in the no-data batch
        (3, 1, 3000, 1, ()),  # a@2500 <= 3000 is late: dropped, counted
        (4, 1, 3000, 0, ()),
        (5, 0, 8000, 0, (T("b", 6000, 1, 1),)),
        (6, 1, 8000, 1, ()),
    ]
    fired = [(r.key, r.ts) for r in ran.trace.records("timer_fired")]
    assert fired == [("a", 3000), ("b", 6000)]


@pytest.mark.spark
def test_apply_in_pandas_with_state_times_out_only_below_the_watermark(spark) -> None:
    ran = run_and_model(RECORDS, ARRIVALS, spec(APPLY))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        (2, 0, 3000, 0, ()),  # timeout 3000 is not < 3000
        (3, 1, 3000, 1, ()),
        (4, 1, 3000, 0, ()),
        (5, 0, 8000, 0, (T("a", 3000, 1, 1), T("b", 6000, 1, 1))),
        (6, 1, 8000, 1, ()),
    ]


@pytest.mark.spark
@pytest.mark.parametrize("api", [TWS, APPLY])
def test_available_now_moves_the_timer_with_a_row_per_batch_would_drop(spark, api) -> None:
    ran = run_and_model(RECORDS, ARRIVALS, spec(api, "available_now"))
    assert ran.summary() == [
        (0, 1, 0, 0, ()),
        (1, 1, 0, 0, ()),
        (2, 1, 3000, 0, ()),  # a@2500 filtered with batch 1's watermark (0): timer -> 4500
        (3, 1, 3000, 0, ()),
        (4, 1, 8000, 1, (T("a", 4500, 2, 2), T("b", 6000, 1, 1))),
    ]


@pytest.mark.spark
def test_a_timeout_spark_refuses_names_the_batch_and_row_and_keeps_completed_batches(
    spark,
) -> None:
    # available_now: batch 2 runs with watermark 8000 but filters with 0, so a@2000 gets in
    # and its timeout 4000 is below 8000: INVALID_TIMEOUT_TIMESTAMP fails the query
    records = [rec("a", 1000), rec("b", 9000), rec("c", 500), rec("a", 2000)]
    state_spec = spec(APPLY, "available_now")
    with pytest.raises(SparkQueryError) as info:
        run_state_twin(records, [0, 1000, 2000, 2000], state_spec)
    err = info.value
    assert (err.batch_id, err.input_batch.seq, err.row, err.index) == (2, 2, 1, 3)
    assert str(err).startswith(
        "Spark failed in micro-batch 2, input batch 2 (proc time 3000), row 1 (record 3: "
        "{'key': 'a', 'ts': 2000, 'value': 1}): "
    )
    assert "INVALID_TIMEOUT_TIMESTAMP" in str(err)
    assert [(b.batch_id, b.input_rows, b.watermark) for b in err.outcomes] == [
        (0, 1, 0),
        (1, 1, 0),
    ]
    with pytest.raises(SparkQueryError) as modelled:
        predict_state(records, [0, 1000, 2000, 2000], state_spec)
    assert (modelled.value.batch_id, modelled.value.row, modelled.value.index) == (2, 1, 3)
    assert [b.batch_id for b in modelled.value.outcomes] == [0, 1]


def test_state_spec_checks_its_options() -> None:
    with pytest.raises(InputError, match="api"):
        StateSpec(timeout=5, api="map_groups_with_state")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="timeout"):
        StateSpec(timeout=0)


def random_case(seed: int) -> tuple[list, list[int], StateSpec]:
    rng = random.Random(3000 + seed)
    n = rng.randint(3, 12)
    arrivals = sorted(rng.randrange(0, 6000) for _ in range(n))
    records = [
        rec(rng.choice("abc"), rng.randint(1, 3 * a + 2000), rng.randint(1, 9)) for a in arrivals
    ]
    state_spec = StateSpec(
        timeout=rng.choice([500, 1000, 3000]),
        watermark_delay=rng.choice([0, 500, 1000, 3000]),
        api=(TWS, APPLY)[seed // 2 % 2],
        value_field="value",
        drive=("per_batch", "available_now")[seed % 2],
        trigger_interval=rng.choice([500, 1000, 2000]),
    )
    return records, arrivals, state_spec


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(4))
def test_state_model_agrees_with_spark_on_random_inputs(spark, seed: int) -> None:
    records, arrivals, state_spec = random_case(seed)
    try:
        predict_state(records, arrivals, state_spec)  # when the model fails, Spark fails alike
    except SparkQueryError as expected:
        with pytest.raises(SparkQueryError) as info:
            run_state_twin(records, arrivals, state_spec)
        got = (info.value.batch_id, info.value.index, len(info.value.outcomes))
        assert got == (expected.batch_id, expected.index, len(expected.outcomes))
        return
    run_and_model(records, arrivals, state_spec)


@pytest.mark.spark
def test_processing_time_timers_keep_spark_running_no_data_batches(spark) -> None:
    # TransformWithStateExec.shouldRunAnotherBatch is always true in processing time:
    # processAllAvailable() does not return within the bound, Spark keeps running empty batches
    records, arrivals = [rec("a", 1000), rec("b", 2000)], [0, 1000]
    probe = run_processing_time_probe(
        records, arrivals, StateSpec(timeout=60_000, value_field="value"), bound_seconds=5
    )
    assert probe.returned is False
    assert probe.no_data_batches >= 1
    assert probe.batches == probe.no_data_batches + 2
