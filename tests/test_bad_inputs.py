"""The bad-input catalogue (issue 14): what a new user might get wrong, one test per case.

Each test asserts the error class, the words that name the record, field and value, and what
was expected; for errors raised while a job runs, that the trace and the outputs written
before the error are kept (``error.trace``, ``error.partial_result``). The timer-loop cases
are in ``tests/test_trigger_loops.py``.
"""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any

import pyarrow.parquet as pq
import pytest
from jobs import bounded, count_pipeline, global_sums, keyed_window, timestamped

import winviz as wv
from winviz.errors import (
    ArgumentTypeError,
    FunctionResultError,
    InputError,
    KeySelectionError,
    LongRangeError,
    NameClashError,
    StateCopyError,
    TimerLoopError,
    UserFunctionError,
)
from winviz.watermarks import WatermarkGenerator

BIG = 2**64 + 1000  # wraps to 1000 in Java's long


def _keyed(data=(("A", 500), ("A", 1500)), arrivals=(0, 100), env=None):
    env = env or wv.StreamExecutionEnvironment()
    stream = (
        env.from_collection(list(data), arrival_times=list(arrivals))
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
    )
    return env, stream


def _keep_first(stream, sink: str = "out") -> None:
    """Tumbling 1 s windows of a keyed stream, each keeping its first element."""
    stream.window(wv.TumblingEventTimeWindows.of(1000)).reduce(lambda a, b: a).sink_to(sink)


# -- 2. durations, timestamps and timers beyond Java's long, floats and bools -----------------


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: wv.TumblingEventTimeWindows.of(BIG), "window size"),
        (lambda: wv.SlidingEventTimeWindows.of(1000, BIG), "window slide"),
        (lambda: wv.EventTimeSessionWindows.with_gap(2**64 + 10), "session gap"),
        (lambda: wv.ContinuousEventTimeTrigger.of(2**63), "interval"),
        (lambda: wv.WatermarkStrategy.for_bounded_out_of_orderness(2**70), "max out-of-orderness"),
        (lambda: _keyed()[1].window(wv.GlobalWindows.create()).allowed_lateness(2**70), None),
    ],
)
def test_a_duration_beyond_javas_long_is_refused(make, field):
    with pytest.raises(LongRangeError) as info:
        make()
    message = str(info.value)
    assert "outside Java's long range" in message
    assert "(expected -2**63 <= ms <= 2**63-1)" in message
    assert info.value.field == (field or "allowed lateness")
    assert info.value.value >= 2**63


@pytest.mark.parametrize(
    ("count", "error", "message"),
    [
        (2**64, LongRangeError, "CountTrigger max_count is outside Java's long range"),
        (-(2**64), LongRangeError, "CountTrigger max_count must be at least 1"),
        (0, InputError, "CountTrigger max_count must be at least 1"),
    ],
)
def test_a_count_beyond_javas_long_is_a_long_range_error(count, error, message):
    with pytest.raises(InputError) as info:
        wv.CountTrigger.of(count)
    assert type(info.value) is error
    assert str(info.value) == (
        f"field 'CountTrigger max_count', value {count}: {message} (expected an int >= 1)"
    )


@pytest.mark.parametrize(
    ("make", "value"),
    [
        (lambda: wv.TumblingEventTimeWindows.of(1.5), 1.5),
        (lambda: wv.TumblingEventTimeWindows.of(True), True),
        (lambda: wv.EventTimeSessionWindows.with_gap("10"), "10"),
        (lambda: wv.ContinuousProcessingTimeTrigger.of(0.5), 0.5),
    ],
)
def test_a_duration_that_is_no_int_or_timedelta_is_refused(make, value):
    with pytest.raises(ArgumentTypeError, match="must be milliseconds \\(int\\) or a timedelta"):
        make()
    try:
        make()
    except ArgumentTypeError as exc:
        assert exc.value == value and isinstance(exc, TypeError)


def test_a_timedelta_and_a_numpy_int_are_durations():
    np = pytest.importorskip("numpy")
    assert wv.TumblingEventTimeWindows.of(dt.timedelta(seconds=2)).size == 2000
    assert wv.TumblingEventTimeWindows.of(np.int64(3000)).size == 3000


@pytest.mark.parametrize(
    ("count", "cls"),
    [
        (1.5, ArgumentTypeError),
        ("3", ArgumentTypeError),
        (True, ArgumentTypeError),
        (0, InputError),
    ],
)
def test_count_trigger_needs_a_positive_int(count, cls):
    with pytest.raises(cls) as info:
        wv.CountTrigger.of(count)
    assert info.value.field == "CountTrigger max_count" and info.value.value == count
    assert "(expected an int >= 1)" in str(info.value)


def test_count_evictor_needs_an_int():
    with pytest.raises(ArgumentTypeError, match="CountEvictor max_count must be an int, got float"):
        wv.CountEvictor.of(2.0)


@pytest.mark.parametrize(
    ("fail_at", "error", "message"),
    [
        (True, ArgumentTypeError, "value True: each failure cut is a record count"),
        (
            1.5,
            ArgumentTypeError,
            "value 1.5: fail_at takes the cuts of the failures: record counts",
        ),
        (
            "3",
            ArgumentTypeError,
            "value '3': fail_at takes the cuts of the failures: record counts",
        ),
        ([1, False], ArgumentTypeError, "value False: each failure cut is a record count"),
        (-1, InputError, "value -1: each failure cut is a record count"),
        ([2, -3], InputError, "value -3: each failure cut is a record count"),
    ],
)
def test_fail_at_must_be_record_counts(fail_at, error, message):
    env, stream = _keyed()
    stream.process(_Echo()).sink_to("out")
    with pytest.raises(error) as info:
        env.execute(fail_at=fail_at)
    assert type(info.value) is error
    assert str(info.value) == (
        f"field 'fail_at', {message} (expected an int >= 0 or a list of them)"
    )


@pytest.mark.parametrize(
    ("interval", "cls"),
    [(0.5, ArgumentTypeError), ("10", ArgumentTypeError), (2**64, LongRangeError)],
)
def test_arrival_interval_must_be_int_milliseconds(interval, cls):
    with pytest.raises(cls) as info:
        wv.StreamExecutionEnvironment().from_collection([1, 2], arrival_interval=interval)
    assert info.value.field == "arrival_interval" and info.value.value == interval


def test_set_auto_watermark_interval_refuses_a_negative_interval_like_the_constructor():
    for make in (
        lambda: wv.StreamExecutionEnvironment().set_auto_watermark_interval(-100),
        lambda: wv.StreamExecutionEnvironment(auto_watermark_interval=-100),
    ):
        with pytest.raises(InputError) as info:
            make()
        assert info.value.field == "auto_watermark_interval" and info.value.value == -100
        assert "(expected >= 0 ms (0 turns periodic watermarks off))" in str(info.value)


class _Echo(wv.KeyedProcessFunction):
    """Emits every record and registers an event-time timer at ``at`` (if given)."""

    def __init__(self, at: Any = None) -> None:
        self.at = at

    def process_element(self, value, ctx, out):
        out.collect(value)
        if self.at is not None:
            ctx.timer_service().register_event_time_timer(self.at)


@pytest.mark.parametrize(
    ("at", "cls"), [("soon", ArgumentTypeError), (2**64, LongRangeError), (1.5, ArgumentTypeError)]
)
def test_a_timer_that_is_no_long_is_refused_naming_operator_key_and_record(at, cls):
    env, stream = _keyed()
    stream.process(_Echo(at)).sink_to("out")
    with pytest.raises(cls) as info:
        env.execute()
    err = info.value
    assert str(err).startswith(
        f"record 0, field 'timestamp', value {at!r}: operator 'process', key 'A': an "
        "event-time timer needs an int timestamp in Java's long range (expected int "
        "milliseconds in [-2**63, 2**63-1])"
    )
    # the record was emitted before the timer was refused: kept
    assert [r.value for r in err.partial_result.outputs["out"]] == [("A", 500)]
    assert err.trace[-1].kind == "error"


def test_a_trigger_registering_a_timer_beyond_long_is_refused():
    class Far(wv.Trigger):
        def on_element(self, element, timestamp, window, ctx):
            ctx.register_event_time_timer(2**64)
            return wv.TriggerResult.CONTINUE

    env, stream = _keyed()
    stream.window(wv.TumblingEventTimeWindows.of(1000)).trigger(Far()).reduce(
        lambda a, b: a
    ).sink_to("out")
    with pytest.raises(LongRangeError, match="operator 'window', key 'A': an event-time timer"):
        env.execute()


# -- 3. names: a sink is never renamed silently ----------------------------------------------


def test_two_sinks_with_one_name_are_refused():
    _env, stream = _keyed()
    counted = stream.window(wv.TumblingEventTimeWindows.of(1000)).aggregate(wv.CountAggregate())
    counted.sink_to("out")
    with pytest.raises(NameClashError) as info:
        counted.map(lambda n: n * 2).sink_to("out")
    assert str(info.value).startswith(
        "field 'name', value 'out': sink_to('out'): the name 'out' is taken by a sink 'out'; "
        "two sinks cannot share result.outputs[name]"
    )
    assert "(expected a name no other operator has (taken: ['map', 'out', 'source', " in str(
        info.value
    )


def test_a_sink_named_like_an_operator_is_refused_not_renamed():
    env, stream = _keyed()
    counted = stream.window(wv.TumblingEventTimeWindows.of(1000)).aggregate(wv.CountAggregate())
    with pytest.raises(NameClashError, match="the name 'window' is taken by the window operator"):
        counted.sink_to("window")
    counted.sink_to("counts")
    assert [r.value for r in env.execute().outputs["counts"]] == [1, 1]


def test_an_operator_named_like_another_is_refused():
    _env, stream = _keyed()
    stream.process(_Echo()).sink_to("out")
    with pytest.raises(NameClashError, match=r"name\('out'\): the name 'out' is taken by a sink"):
        stream.process(_Echo()).name("out")


def test_a_sink_name_must_be_a_str():
    _env, stream = _keyed()
    with pytest.raises(ArgumentTypeError, match="a name must be a non-empty str"):
        stream.process(_Echo()).sink_to(None)


def test_generated_names_skip_names_a_sink_took():
    env, stream = _keyed()
    mapped = stream.process(_Echo()).sink_to("map").map(lambda e: e)
    mapped.sink_to("mapped")
    assert [n.name for n in env.nodes] == [
        "source",
        "watermarks",
        "process",
        "map",
        "map_2",
        "mapped",
    ]
    result = env.execute()
    assert [r.value for r in result.outputs["map"]] == [r.value for r in result.outputs["mapped"]]


# -- 9. the conformance runner reports every bad file and goes on -----------------------------

_GOOD = """name: good
operator: {kind: valve, channels: 2}
steps:
  - {channel: 0, watermark: 5}
  - {channel: 1, watermark: 7, expect_watermarks: [5]}
"""
_WRONG = _GOOD.replace("name: good", "name: wrong").replace("[5]", "[6]")
_TUMBLING = """name: {name}
operator:
  kind: window
  assigner: {{type: tumbling, size: 10}}
  trigger: {{type: count, n: {n}}}
  function: sum
steps:
  - {step}
"""


def _runner(tmp_path, files: dict[str, str | bytes], capsys) -> tuple[int, list[str], str]:
    from winviz.conformance.cli import main

    for name, text in files.items():
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    code = main(["run", str(tmp_path)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_the_runner_reports_every_bad_transcript_with_its_path_and_goes_on(tmp_path, capsys):
    both = _TUMBLING.format(
        name="both", n=1, step="{element: {key: a, value: 1, ts: 1}, watermark: 100}"
    )
    code, lines, _ = _runner(
        tmp_path,
        {
            "a_good.yaml": _GOOD,
            "b_binary.yaml": b"\x89PNG\r\n\x1a\n\xff\xfe\x00",
            "c_channels0.yaml": _GOOD.replace("channels: 2", "channels: 0"),
            "d_n0.yaml": _TUMBLING.format(name="n0", n=0, step="{watermark: 1}"),
            "e_both.yaml": both,
            "f_wrong.yaml": _WRONG,
            "g_good.yaml": _GOOD.replace("name: good", "name: good2"),
        },
        capsys,
    )
    assert code == 2
    assert lines[0] == "PASS good"
    assert lines[1].startswith(f"ERROR {tmp_path / 'b_binary.yaml'}: UnicodeDecodeError: ")
    assert lines[1].endswith("(the runner could not execute this transcript)")
    assert lines[2].startswith(f"ERROR {tmp_path / 'c_channels0.yaml'}: ")
    assert "channel" in lines[2]
    # winviz refuses the operator's trigger: the transcript cannot run (FORMAT.md: a bad
    # value is an error naming the file and the field, not a failure of the kit)
    assert lines[3] == (
        f"ERROR {tmp_path / 'd_n0.yaml'}: operator: field 'CountTrigger max_count', value 0: "
        "CountTrigger max_count must be at least 1 (expected an int >= 1)"
    )
    assert lines[4] == (
        f"ERROR {tmp_path / 'e_both.yaml'}: step 0: one of ['element', 'end', 'processing_time', "
        "'watermark'] per step, got ['element', 'watermark'] (split them into steps)"
    )
    assert lines[5] == (
        f"FAIL wrong ({tmp_path / 'f_wrong.yaml'}): step 1: expect_watermarks: expected [6], "
        "got [5]"
    )
    assert lines[6] == "PASS good2"
    assert lines[7] == "2 passed, 1 failed, 4 could not be run"


def test_the_runner_fails_when_it_finds_no_transcripts(tmp_path, capsys):
    code, lines, err = _runner(tmp_path, {"notes.txt": "not a transcript"}, capsys)
    assert code == 2 and lines == []
    # the one error names the directory; no second, redundant "no transcripts found" line
    assert err.splitlines() == [
        f"error: {tmp_path}: no transcripts (*.yaml, *.yml) in this directory"
    ]


def test_the_runner_reports_a_missing_path_and_runs_the_others(tmp_path, capsys):
    from winviz.conformance.cli import main

    (tmp_path / "good.yaml").write_text(_GOOD)
    code = main(["run", str(tmp_path / "good.yaml"), str(tmp_path / "nope.yaml")])
    out, err = capsys.readouterr()
    assert code == 2
    assert out.splitlines() == ["PASS good", "1 passed, 0 failed, 1 could not be run"]
    assert f"error: {tmp_path / 'nope.yaml'}: no such file or directory" in err


# -- 7 and 8. user functions that raise or return what cannot be used: no raw traceback, no
# silent loss ----------------------------------------------------------------------------------


def _windowed(function: str, fn, *, trace: bool = True, batches: bool = True):
    """Dict records of key "A" at 500, 600, 700 and 5500 into 1 s tumbling windows."""
    from winviz.runtime import JobRuntime

    data = [{"k": "A", "ts": t, "n": n} for t, n in ((500, 1), (600, 2), (700, 3), (5500, 4))]
    env = wv.StreamExecutionEnvironment(trace=trace)
    windowed = keyed_window(
        env,
        data,
        1000,
        bounded(0, lambda e: e["ts"]),
        key=lambda e: e["k"],
        arrival_times=[0, 10, 20, 30],
    )
    getattr(windowed, function)(fn).sink_to("out")
    JobRuntime.use_batches = batches
    try:
        with pytest.raises(FunctionResultError) as info:
            env.execute()
    finally:
        JobRuntime.use_batches = True
    return info.value


@pytest.mark.parametrize(("trace", "batches"), [(True, True), (False, True), (False, False)])
def test_a_reduce_returning_none_is_refused_on_every_path(trace, batches):
    err = _windowed(
        "reduce", lambda a, b: a.update(n=a["n"] + b["n"]), trace=trace, batches=batches
    )
    assert str(err) == (
        "reduce in operator 'window' returned None when adding a record to key 'A', window "
        "[0, 1000): got None; record 1; value {'k': 'A', 'ts': 600, 'n': 2} (expected the "
        "combined value: a reduce function returns a new value, e.g. lambda a, b: {**a, 'n': "
        "a['n'] + b['n']} (a.update(b) returns None))"
    )
    assert (err.index, err.operator, err.function) == (1, "window", "reduce")
    assert err.partial_result.outputs["out"] == []
    if trace:
        assert err.trace[-1].kind == "error"


class _ListAgg(wv.AggregateFunction):
    """An aggregate whose add appends in place and forgets to return the accumulator."""

    def create_accumulator(self):
        return []

    def add(self, value, acc):
        acc.append(value)

    def get_result(self, acc):
        return len(acc)

    def merge(self, a, b):
        return a + b


def test_an_aggregate_add_returning_none_is_refused():
    err = _windowed("aggregate", _ListAgg())
    assert str(err).startswith(
        "AggregateFunction.add in operator 'window' returned None for key 'A', window "
        "[0, 1000): got None; record 0;"
    )
    assert "(expected the new accumulator (add returns it" in str(err)


def test_a_rolling_reduce_returning_none_is_refused():
    env, stream = _keyed([("A", 1), ("A", 2), ("A", 3)], [0, 1, 2])
    stream.reduce(lambda a, b: None).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value).startswith(
        "reduce in operator 'reduce' returned None for key 'A': got None; record 1; value ('A', 2)"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 1)]


@pytest.mark.parametrize("returned", [None, 7])
def test_a_flat_map_returning_no_iterable_is_refused(returned):
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).flat_map(lambda v: [v] if v == 1 else returned).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value) == (
        f"flat_map in operator 'flat_map' returned no iterable: got {returned!r}; record 1; "
        "value 2 (expected an iterable of output records, e.g. a list ([] to drop the record))"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [1]


def _punctuated(fn, trace: bool):
    env = wv.StreamExecutionEnvironment(trace=trace)
    timestamped(
        env,
        [("A", 500), ("A", 1500), ("A", 2000)],
        wv.WatermarkStrategy.for_punctuated(fn).with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[0, 0, 0],
    ).sink_to("out")
    return env


@pytest.mark.parametrize("trace", [True, False])
def test_a_punctuated_watermark_function_that_raises_names_operator_and_record(trace):
    def fn(event, ts):
        if ts > 1000:
            raise KeyError("no such field")
        return ts

    with pytest.raises(UserFunctionError) as info:
        _punctuated(fn, trace).execute()
    assert str(info.value) == (
        "the watermark generator of punctuated in operator 'watermarks' raised KeyError: "
        "'no such field'; record 1; value ('A', 1500)"
    )
    # the record got its timestamp before the generator saw it: it went on, as in Flink
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 500), ("A", 1500)]


@pytest.mark.parametrize("trace", [True, False])
def test_a_punctuated_watermark_that_is_no_long_is_refused(trace):
    with pytest.raises(FunctionResultError) as info:
        _punctuated(lambda e, ts: "soon", trace).execute()
    assert str(info.value) == (
        "the watermark generator of punctuated in operator 'watermarks' emitted a watermark "
        "that is no long: got 'soon'; record 0 (expected int milliseconds in Java's long range "
        "(or None: no watermark))"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 500)]


def test_side_output_late_data_with_a_str_is_refused_at_build_time():
    _env, stream = _keyed()
    windowed = stream.window(wv.TumblingEventTimeWindows.of(1000))
    with pytest.raises(ArgumentTypeError) as info:
        windowed.side_output_late_data("late")
    assert str(info.value) == (
        "field 'tag', value 'late': side_output_late_data() takes an OutputTag, not str "
        "(expected an OutputTag, e.g. OutputTag('late'))"
    )


def test_a_checkpoint_of_state_that_cannot_be_copied_names_operator_and_entry():
    import threading

    class Locking(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            ctx.update_state("lock", threading.Lock())
            out.collect(value)

    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[1])
    env.from_collection([("A", 1), ("A", 2)]).key_by(lambda e: e[0]).process(Locking()).sink_to(
        "out"
    )
    with pytest.raises(StateCopyError) as info:
        env.execute()
    message = str(info.value)
    assert message.startswith(
        "checkpoint 1: the state of operator 'process' cannot be copied (state entry "
        "('lock', 'A', None) = <unlocked _thread.lock object at "
    )
    assert "TypeError: cannot pickle '_thread.lock' object" in message
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 1)]


# -- datasets ---------------------------------------------------------------------------------


def test_a_dataset_line_that_is_a_list_is_refused(tmp_path):
    from winviz.datasets import DatasetError, late_data

    good = '{"id": 1, "createTime": "2019-08-24 17:51:44.152", "amt": 1.5}'
    (tmp_path / "seed_002_late_data.jsonl").write_text(good + "\n[1, 2]\n")
    with pytest.raises(DatasetError) as info:
        late_data(tmp_path)
    assert str(info.value) == (
        "seed_002_late_data.jsonl, line 2: field '<json>' = [1, 2] is not a JSON object (a mapping)"
    )


@pytest.mark.parametrize("amt", ['"nan"', '"inf"', '"-Infinity"'])
def test_a_dataset_amount_that_is_not_finite_is_refused(tmp_path, amt):
    from winviz.datasets import DatasetError, late_data

    line = '{"id": 1, "createTime": "2019-08-24 17:51:44.152", "amt": ' + amt + "}"
    (tmp_path / "seed_002_late_data.jsonl").write_text(line + "\n")
    with pytest.raises(DatasetError, match=r"line 1: field 'amt' = .* is not a finite decimal"):
        late_data(tmp_path)


def test_seattle_temps_limit_and_mean_delay_are_checked():
    from winviz.datasets import seattle_temps

    assert seattle_temps(limit=0) == []
    assert [r["ts"] for r in seattle_temps(limit=2, mean_delay=0)] == [
        r["ts"] for r in seattle_temps(mean_delay=0)[:2]
    ]
    with pytest.raises(ArgumentTypeError, match="field 'mean_delay', value 'x'"):
        seattle_temps(mean_delay="x")
    with pytest.raises(InputError, match="mean_delay must not be negative"):
        seattle_temps(mean_delay=-1)
    with pytest.raises(InputError, match="field 'limit', value -1: limit must be at least 0"):
        seattle_temps(limit=-1)


# -- 6. an unreachable Spark master, and the Spark helpers' arguments -------------------------


def test_spark_master_addresses_are_parsed_as_spark_does():
    from winviz.spark.session import SparkUnavailableError, master_addresses

    assert master_addresses("spark://a:1") == [("a", 1)]
    assert master_addresses("spark://a:1,b") == [("a", 1), ("b", 7077)]
    with pytest.raises(SparkUnavailableError, match="'a:x' is not host:port"):
        master_addresses("spark://a:x")


def test_an_unreachable_spark_master_fails_at_once_with_the_jvms_cause():
    # Spark itself retries registering for about a minute, then fails with "Cannot call
    # methods on a stopped SparkContext"; the JVM's own connection error is named instead
    from winviz.spark import session

    with pytest.raises(session.SparkUnavailableError) as info:
        session._start("spark://127.0.0.1:1")
    assert str(info.value).startswith(
        "the Spark master 'spark://127.0.0.1:1' cannot be reached from the JVM (127.0.0.1:1: "
        "java.net.ConnectException: Connection refused"
    )
    assert session._session is None or session._session.sparkContext.master != "spark://127.0.0.1:1"


def test_build_twin_and_compare_name_a_wrong_argument():
    from winviz.spark import build_twin
    from winviz.spark.compare import compare

    with pytest.raises(ArgumentTypeError, match="build_twin needs the job's StreamExecutionEnv"):
        build_twin("env", "out")
    with pytest.raises(ArgumentTypeError) as info:
        compare(None, None)
    assert str(info.value) == (
        "field 'engine_result', value None: compare needs the engine's result with its trace "
        "(expected env.execute()'s JobExecutionResult of a run with the trace on)"
    )
    env, stream = _keyed()
    stream.process(_Echo()).sink_to("out")
    with pytest.raises(ArgumentTypeError, match="compare needs the Spark twin's result"):
        compare(env.execute(), None)


# -- 10. one rule for keys at every parallelism (Java's) --------------------------------------


def _count_by_key(keys, parallelism: int, trace: bool = True):
    env = wv.StreamExecutionEnvironment(trace=trace).set_parallelism(parallelism)
    count_pipeline(env, [(k, 100 * i) for i, k in enumerate(keys)], 1000, arrival_interval=1)
    return env


PARALLELISMS = [1, 2, 3, 4, 8]


def _per_key_counts(keys, parallelism: int):
    env = wv.StreamExecutionEnvironment().set_parallelism(parallelism)
    (
        keyed_window(env, [(k, 50 * i) for i, k in enumerate(keys)], 1000, arrival_interval=1)
        .process(lambda key, ctx, elements, out: out.collect((key, len(elements))))
        .sink_to("out")
    )
    return env.execute()


# keys Python takes for one (==, one hash) and Java for two (equals): Integer 1 / Boolean true,
# Integer 2 / Double 2.0, Double 0.0 / -0.0 (Double.equals compares the bits), also as fields
JAVA_PAIRS = [
    (1, True),
    (2, 2.0),
    (0.0, -0.0),
    (1.0, True),
    ((1, "a"), (True, "a")),
    (("a", 0.0), ("a", -0.0)),
]


def _shown(value: Any) -> str:
    """A value with its type, field by field (``1`` and ``True``, ``0.0`` and ``-0.0`` differ)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_shown, value)) + ")"
    return f"{type(value).__name__}:{value!r}"


@pytest.mark.parametrize("parallelism", PARALLELISMS)
@pytest.mark.parametrize(("first", "second"), JAVA_PAIRS, ids=repr)
def test_keys_equal_in_python_but_not_in_java_are_two_keys_at_every_parallelism(
    first, second, parallelism
):
    """Records of ``first``, ``second``, ``first`` at 0, 50 and 100 ms, one window [0, 1000):
    two keys, two windows, two firings, two outputs — each with the user's own key — at
    every parallelism, each key on the subtask its Java hashCode gives."""
    result = _per_key_counts([first, second, first], parallelism)
    outputs = [r.value for r in result.outputs["out"]]
    assert sorted(map(_shown, outputs)) == sorted([_shown((first, 2)), _shown((second, 1))])
    trace = result.trace
    fired = trace.records("fired")
    assert sorted(_shown(r.key) for r in fired) == sorted([_shown(first), _shown(second)])
    assert [r.window for r in fired] == [wv.TimeWindow(0, 1000)] * 2
    # the trace tells the keys apart (its dictionary keeps them apart), and so do its filters
    assert [_shown(r.key) for r in trace.records("element")] == list(
        map(_shown, [first, second, first])
    )
    assert [r.ts for r in trace.records("element", key=first)] == [0, 100]
    assert [r.ts for r in trace.records("element", key=second)] == [50]
    assert [_shown(r.key) for r in trace.records("assigned", key=second)] == [_shown(second)]
    # each key on the subtask Flink gives it (Boolean.hashCode 1231, Double.hashCode, ...)
    subtasks = {
        (_shown(r.key), int(r.operator.partition("#")[2] or 0)) for r in trace.records("element")
    }
    assert subtasks == {
        (_shown(k), wv.assign_key_to_subtask(k, parallelism)) for k in (first, second)
    }


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize(("first", "second"), JAVA_PAIRS[:3], ids=repr)
def test_session_windows_merge_per_java_key(first, second, parallelism):
    """Session windows (a MergingWindowSet per key): ``first`` at 0 and 400 ms merge into one
    session [0, 900); ``second`` at 200 ms is a session of its own, [200, 700)."""
    env = wv.StreamExecutionEnvironment().set_parallelism(parallelism)
    (
        env.from_collection([(first, 0), (second, 200), (first, 400)], arrival_interval=1)
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(500))
        .process(lambda key, ctx, elements, out: out.collect((key, len(elements))))
        .sink_to("out")
    )
    result = env.execute()
    assert sorted(_shown(r.value) for r in result.outputs["out"]) == sorted(
        [_shown((first, 2)), _shown((second, 1))]
    )
    fired = {(_shown(r.key), (r.window.start, r.window.end)) for r in result.trace.records("fired")}
    assert fired == {(_shown(first), (0, 900)), (_shown(second), (200, 700))}
    assert [_shown(r.key) for r in result.trace.records("merged")] == [_shown(first)]


@pytest.mark.parametrize("parallelism", [1, 3])
def test_the_untraced_kernel_keeps_1_and_true_apart(parallelism):
    """The same job without a trace (the window kernel's batch loop): 1, True and 1.0 are
    three keys, 2 and 2.0 two, 0.0 and -0.0 two."""
    keys = [1, True, 1, 1.0, 2, 2.0, 0.0, -0.0, True]
    result = _count_by_key(keys, parallelism, trace=False).execute()
    assert sorted(r.value for r in result.outputs["out"]) == [1, 1, 1, 1, 1, 2, 2]


def test_nan_is_one_key_as_java_double_equals_takes_it():
    """Java's Double.equals takes every NaN for one key (doubleToLongBits: the canonical NaN)."""
    other_nan = struct.unpack(">d", bytes.fromhex("7ff0000000000001"))[0]
    result = _per_key_counts([float("nan"), 1.5, other_nan], 1)
    assert sorted(repr(r.value) for r in result.outputs["out"]) == ["(1.5, 1)", "(nan, 2)"]
    assert [repr(r.key) for r in result.trace.records("fired")] == ["nan", "1.5"]


class _KeysAndTimers(wv.KeyedProcessFunction):
    """Counts per key in keyed state; a timer 10 ms after each record says the key and count."""

    def process_element(self, value, ctx, out):
        ctx.update_state("n", (ctx.state("n") or 0) + 1)
        ctx.timer_service().register_event_time_timer(value[1] + 10)

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), ctx.state("n"), timestamp))


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_keyed_state_timers_and_the_current_key_keep_1_and_true_apart(parallelism):
    env = wv.StreamExecutionEnvironment().set_parallelism(parallelism)
    (
        env.from_collection([(1, 0), (True, 0), (1, 5), (-0.0, 5), (0.0, 5)])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .process(_KeysAndTimers())
        .sink_to("out")
    )
    result = env.execute()
    outputs = sorted(map(_shown, (r.value for r in result.outputs["out"])))
    assert outputs == sorted(
        map(_shown, [(1, 2, 10), (1, 2, 15), (True, 1, 10), (-0.0, 1, 15), (0.0, 1, 15)])
    )
    fired = result.trace.records("timer_fired")
    assert sorted(_shown((r.key, r.ts)) for r in fired) == sorted(
        map(_shown, [(1, 10), (1, 15), (True, 10), (-0.0, 15), (0.0, 15)])
    )


def test_a_restore_keeps_1_and_true_apart():
    """A checkpoint after two records holds the windows of 1 and True apart; the job fails
    after three and the restore gives the same outputs as the run without a failure."""

    def job():
        env = wv.StreamExecutionEnvironment()
        (
            keyed_window(
                env, [(1, 0), (True, 100), (1, 200), (True, 300)], 1000, arrival_interval=1
            )
            .process(lambda key, ctx, elements, out: out.collect((key, len(elements))))
            .sink_to("out")
        )
        return env

    expected = job().execute()
    result = job().enable_checkpointing(at_records=[2]).execute(fail_at=3)
    assert len(result.restores) == 1
    shown = [_shown(r.value) for r in result.outputs["out"]]
    assert shown == [_shown(r.value) for r in expected.outputs["out"]]
    assert sorted(shown) == sorted([_shown((1, 2)), _shown((True, 2))])


def test_why_fired_asks_about_true_not_1():
    result = _per_key_counts([1, True, 1], 1)
    ones = wv.why_fired(result.trace, 1, (0, 1000))
    trues = wv.why_fired(result.trace, True, (0, 1000))
    assert ones.question == "Why did window [0, 1000) of key 1 fire when it did?"
    assert trues.question == "Why did window [0, 1000) of key True fire when it did?"
    assert len(ones.table) == len(trues.table) == 1
    assert wv.why_not_fired(result.trace, 1.0, (0, 1000)).sentence != ones.sentence


@pytest.mark.parametrize("parallelism", PARALLELISMS)
@pytest.mark.parametrize(
    ("key", "words"),
    [
        (None, "Assigned key must not be null!"),
        (b"a", "no Java hashCode rule for key type bytes"),
        ([1], "a key must be hashable; list is not"),
    ],
)
def test_a_key_flink_cannot_take_is_refused_at_every_parallelism(key, words, parallelism):
    env = _count_by_key(["a", key], parallelism)
    with pytest.raises(KeySelectionError) as info:
        env.execute()
    assert words in str(info.value)
    # what came before is kept: both arrivals, and the first record reached its window
    arrivals = [r.detail[0] for r in info.value.trace.records("arrival")]
    assert arrivals[0] == ("a", 0) and arrivals[1][1] == 100
    assert [r.key for r in info.value.trace.records("element")] == ["a"]


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_int_keys_and_tuple_keys_of_one_type_give_the_same_counts_at_every_parallelism(
    parallelism,
):
    result = _count_by_key([1, 2, 1, (1, "a"), (1, "a")], parallelism, trace=False).execute()
    assert sorted(r.value for r in result.outputs["out"]) == [1, 2, 2]


FLOAT_KEYS = [1.5, -0.0, 2.0, 1.5, 3.08, float("inf"), 2.0, -2.5, 1.5, ("a", 0.25), ("a", 0.25)]


@pytest.mark.parametrize("parallelism", [1, 4])
def test_float_keys_are_doubles_at_every_parallelism(parallelism):
    """Flink keys by a Double as by any key (Double.hashCode / equals): the same counts at
    parallelism 1 and 4, each key on the subtask its key group gives."""
    result = _per_key_counts(FLOAT_KEYS, parallelism)
    counts = [(1.5, 3), (-0.0, 1), (2.0, 2), (3.08, 1), (float("inf"), 1), (-2.5, 1)]
    counts.append((("a", 0.25), 2))
    assert sorted(repr(r.value) for r in result.outputs["out"]) == sorted(map(repr, counts))
    subtasks = {
        (r.key, int(r.operator.partition("#")[2] or 0)) for r in result.trace.records("element")
    }
    # Double.hashCode -> murmur -> key group of 128 -> subtask (see tests/test_keygroups.py)
    expected = {1.5: 2, -0.0: 3, 2.0: 2, 3.08: 0, float("inf"): 3, -2.5: 1, ("a", 0.25): 3}
    assert subtasks == {(k, s if parallelism == 4 else 0) for k, s in expected.items()}
    assert subtasks == {(k, wv.assign_key_to_subtask(k, parallelism)) for k in expected}


def test_window_all_keeps_its_single_key():
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 1), ("b", 5)])
        .assign_timestamps_and_watermarks(bounded(0))
        .window_all(wv.TumblingEventTimeWindows.of(10))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    assert [r.value for r in env.execute().outputs["out"]] == [2]


# -- 4. records handed to user functions are copies: the trace and the caller's data stay ------


def test_a_map_changing_its_input_changes_neither_the_trace_nor_the_callers_data():
    data = [{"k": "A", "ts": 500, "v": 1}, {"k": "A", "ts": 600, "v": 2}]

    def stamp(e):
        e.update(v=999)  # changes its input in place (Flink would hand it a copy)
        return e

    def add_in_place(a, b):
        a["v"] += b["v"]  # changes the window's state in place, returns it
        return a

    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(data, arrival_times=[0, 1])
        .map(stamp)
        .assign_timestamps_and_watermarks(bounded(0, lambda e: e["ts"]))
        .key_by(lambda e: e["k"])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .reduce(add_in_place)
        .sink_to("out")
    )
    result = env.execute()
    assert data == [{"k": "A", "ts": 500, "v": 1}, {"k": "A", "ts": 600, "v": 2}]
    assert [r.detail[0] for r in result.trace.records("arrival")] == data
    # the window's element records are what the map emitted, not what the reduce made of them
    assert [r.detail for r in result.trace.records("element")] == [
        {"k": "A", "ts": 500, "v": 999},
        {"k": "A", "ts": 600, "v": 999},
    ]
    assert [r.value for r in result.outputs["out"]] == [{"k": "A", "ts": 500, "v": 1998}]


def test_a_keyed_process_function_and_a_filter_get_copies_too():
    class Mark(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            value.append("seen")
            out.collect(len(value))

    data = [["A", 1], ["A", 2]]
    env = wv.StreamExecutionEnvironment()
    stream = env.from_collection(data).filter(lambda e: e.append("filtered") or True)
    stream.key_by(lambda e: e[0]).process(Mark()).sink_to("out")
    result = env.execute()
    assert data == [["A", 1], ["A", 2]]
    assert [r.value for r in result.outputs["out"]] == [3, 3]
    assert [r.detail for r in result.trace.records("element")] == [["A", 1], ["A", 2]]


class _AddTakingItsRecord(wv.AggregateFunction):
    """Sums ``v`` and then overwrites the record it was handed."""

    def create_accumulator(self):
        return 0

    def add(self, value, accumulator):
        v = value["v"]
        value["v"] = 999  # changes the record it was given
        return accumulator + v

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a + b


def _job_whose_functions_change_their_records(
    function: str, assigner: str, trace: bool, kernel: bool, batches: bool
):
    """A key selector, a timestamp assigner and a reduce (its second argument) or an
    AggregateFunction.add (its record) that each overwrite a field of the record they get."""
    from winviz.operators.window_kernel import WindowKernel
    from winviz.runtime import JobRuntime

    data = [
        {"k": "A", "ts": 500, "v": 1},
        {"k": "A", "ts": 600, "v": 2},
        {"k": "B", "ts": 700, "v": 4},
    ]
    original = [dict(e) for e in data]

    def key(e):
        k = e["k"]
        e["k"] = "changed by the key selector"
        return k

    def stamp(e, _):
        ts = e["ts"]
        e["ts"] = -1  # changed by the timestamp assigner
        return ts

    def reduce(a, b):
        total = {"k": a["k"], "ts": a["ts"], "v": a["v"] + b["v"]}
        b["v"] = 999  # changes its second argument
        return total

    windows = {
        "tumbling": wv.TumblingEventTimeWindows.of(1000),
        "sliding": wv.SlidingEventTimeWindows.of(1000, 500),  # each record in two windows
        "session": wv.EventTimeSessionWindows.with_gap(1000),
    }
    env = wv.StreamExecutionEnvironment(trace=trace)
    windowed = (
        env.from_collection(data, arrival_times=[0, 1, 2])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(stamp)
        )
        .key_by(key)
        .window(windows[assigner])
    )
    out = (
        windowed.reduce(reduce)
        if function == "reduce"
        else windowed.aggregate(_AddTakingItsRecord())
    )
    out.sink_to("out")
    before = WindowKernel.enabled, JobRuntime.use_batches
    WindowKernel.enabled, JobRuntime.use_batches = kernel, batches
    try:
        result = env.execute()
    finally:
        WindowKernel.enabled, JobRuntime.use_batches = before
    return data, original, result


@pytest.mark.parametrize("batches", [True, False])
@pytest.mark.parametrize("kernel", [True, False])
@pytest.mark.parametrize("trace", [True, False])
@pytest.mark.parametrize("assigner", ["tumbling", "sliding", "session"])
@pytest.mark.parametrize("function", ["reduce", "aggregate"])
def test_key_selectors_assigners_reduce_and_add_get_copies(
    function: str, assigner: str, trace: bool, kernel: bool, batches: bool
):
    data, original, result = _job_whose_functions_change_their_records(
        function, assigner, trace, kernel, batches
    )
    assert data == original  # the caller's records
    sums = {"tumbling": [3, 4], "sliding": [3, 4, 3, 4], "session": [3, 4]}[assigner]
    got = [r.value if function == "aggregate" else r.value["v"] for r in result.outputs["out"]]
    assert got == sums
    if function == "reduce":  # the first record of each window, as it came
        assert {r.value["k"] for r in result.outputs["out"]} == {"A", "B"}
        assert {r.value["ts"] for r in result.outputs["out"]} == {500, 700}
    if trace:
        assert [r.detail[0] for r in result.trace.records("arrival")] == original
        assert [r.detail for r in result.trace.records("element")] == original
        assigned = [r.detail for r in result.trace.records("assigned")]
        assert assigned == [e for e in original for _ in range(2 if assigner == "sliding" else 1)]
        assert [r.key for r in result.trace.records("element")] == ["A", "A", "B"]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_key_selector_of_a_keyed_process_function_gets_a_copy(parallelism: int):
    """At parallelism 2 the key selector runs in the exchange (``key_by``'s partitioner)
    as well as in the keyed operator."""

    def key(e):
        k = e["k"]
        e["k"] = "changed by the key selector"
        return k

    class Emit(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            out.collect((ctx.get_current_key(), value["k"]))

    data = [{"k": "A"}, {"k": "B"}, {"k": "A"}]
    env = wv.StreamExecutionEnvironment()
    env.set_parallelism(parallelism)
    env.from_collection(data).key_by(key).process(Emit()).sink_to("out")
    result = env.execute()
    assert data == [{"k": "A"}, {"k": "B"}, {"k": "A"}]
    assert sorted(r.value for r in result.outputs["out"]) == [("A", "A"), ("A", "A"), ("B", "B")]
    assert sorted(r.detail["k"] for r in result.trace.records("element")) == ["A", "A", "B"]


@pytest.mark.parametrize("session", [False, True])
def test_a_trigger_of_the_users_own_gets_a_copy_of_the_element(session: bool):
    class Overwriting(wv.Trigger):
        """Fires on every element, after overwriting it."""

        def on_element(self, element, timestamp, window, ctx):
            element["v"] = 999
            return wv.TriggerResult.FIRE

        def on_event_time(self, time, window, ctx):
            return wv.TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            return wv.TriggerResult.CONTINUE

        def can_merge(self):
            return True

        def on_merge(self, window, ctx):
            pass

    data = [{"k": "A", "ts": 1, "v": 1}, {"k": "A", "ts": 2, "v": 2}]
    env = wv.StreamExecutionEnvironment()
    assigner = (
        wv.EventTimeSessionWindows.with_gap(10) if session else wv.TumblingEventTimeWindows.of(10)
    )
    (
        env.from_collection(data)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e["ts"]
            )
        )
        .key_by(lambda e: e["k"])
        .window(assigner)
        .trigger(Overwriting())
        .aggregate(wv.SumAggregate(lambda e: e["v"]))
        .sink_to("out")
    )
    result = env.execute()
    assert data == [{"k": "A", "ts": 1, "v": 1}, {"k": "A", "ts": 2, "v": 2}]
    assert [r.detail for r in result.trace.records("element")] == data
    assert [r.value for r in result.outputs["out"]] == [1, 3]


def test_immutable_records_are_handed_over_as_they_are():
    from winviz.copies import copy_record

    record = ("A", 1, 2.5, None)
    assert copy_record(record) is record
    nested = ("A", [1])
    assert copy_record(nested) == nested and copy_record(nested)[1] is not nested[1]
    flat = {"a": 1}
    assert copy_record(flat) == flat and copy_record(flat) is not flat
    keyed = (("eu", "web"), 3, frozenset({"x"}))
    assert copy_record(keyed) is keyed
    deep = (("eu", ["web"]), 3)
    assert copy_record(deep) == deep and copy_record(deep)[0][1] is not deep[0][1]
    holder = {"key": ("eu", "web"), "n": 1}
    assert copy_record(holder) == holder and copy_record(holder)["key"] is holder["key"]


def test_a_batch_knows_when_every_value_is_immutable():
    """``all_immutable`` is True only when ``copy_record`` would hand every value over as it
    is (then the batch loops skip the copies); nested tuples and frozensets are looked into."""
    from winviz.copies import all_immutable, copy_record

    cases = [
        ([], True),
        ([1, "a", None, 2.5, b"x"], True),
        ([("a", 1, 2.5), ("b", 2, None)], True),
        ([("a", 1), 3, "x"], True),
        ([("a", 1), ("b", [1])], False),  # a list inside a tuple
        ([("a", 1), {"k": 1}], False),
        ([["a", 1]], False),
        ([("a", ("nested",))], True),  # a tuple key such as (("eu", "web"), 3)
        ([(("a", frozenset({1})), 3)], True),
        ([("a", ("b", [1]))], False),  # a list two levels down
        ([("a", object())], False),
    ]
    for values, expected in cases:
        assert all_immutable(values) is expected, values
        if expected:
            assert all(copy_record(v) is v for v in values), values


# -- issue 28: processing-time timer chains that run to MAX stop with TimerLoopError ----------
# (winviz.timers, the firing budget: while execute(until_processing_time=MAX) runs the clock
# to MAX, the firings of one key and namespace's timers registered during that advance count
# as one advance; a chain towards a finite time runs to the end)


class _NextMs(wv.KeyedProcessFunction):
    """Registers a processing-time timer 1 ms on at every element and every firing,
    ``stop_after`` firings at most (None: for ever)."""

    def __init__(self, step: int = 1, stop_after: int | None = None) -> None:
        self.step, self.stop_after = step, stop_after

    def process_element(self, value, ctx, out):
        service = ctx.timer_service()
        service.register_processing_time_timer(service.current_processing_time() + self.step)

    def on_timer(self, timestamp, ctx, out):
        out.collect(timestamp)
        fired = (ctx.state("fired") or 0) + 1
        ctx.update_state("fired", fired)
        if self.stop_after is None or fired < self.stop_after:
            ctx.timer_service().register_processing_time_timer(timestamp + self.step)


def _chain_job(function, budget: int, trace: bool = True):
    env = wv.StreamExecutionEnvironment(trace=trace).set_timer_firing_budget(budget)
    (
        env.from_collection([("A", 1)], arrival_times=[100])
        .key_by(lambda e: e[0])
        .process(function)
        .sink_to("out")
    )
    return env


@pytest.mark.parametrize("trace", [True, False])
def test_a_keyed_process_function_chaining_timers_to_max_stops(trace: bool):
    with pytest.raises(TimerLoopError) as info:
        _chain_job(_NextMs(), budget=5, trace=trace).execute(until_processing_time=wv.MAX)
    err = info.value
    message = str(err)
    # 101 was registered by the element (before the advance): not counted; 102..106 are
    # the 5 chained firings, and 107 would be the 6th
    assert message == (
        "timer loop in operator 'process': _NextMs.on_timer fired 5 processing-time timers "
        "of key 'A' in one advance of the processing time to MAX: each was registered by an "
        "earlier firing of the same advance, and the next one (at 107) is due too. With "
        "execute(until_processing_time=MAX) the simulated clock runs on to MAX, so a chain "
        "that registers its next timer at every firing only ends there (about as many firings "
        "as milliseconds to MAX, divided by its step). A real Flink job keeps firing such a "
        "chain for as long as it runs; winviz stops it here (a winviz guard, not Flink "
        "behaviour). Give until_processing_time a finite time (a chain towards it runs to the "
        "end), stop the chain, or, if it is meant to be this long, raise the budget. The "
        "firing budget: 5 firings per key and namespace in one advance "
        "(env.set_timer_firing_budget(n))."
    )
    assert (err.operator, err.domain, err.key, err.namespace, err.timestamp) == (
        "process",
        "processing",
        "A",
        None,
        107,
    )
    assert [r.value for r in err.partial_result.outputs["out"]] == [101, 102, 103, 104, 105, 106]
    if trace:
        fired = [(r.ts, r.proc_time) for r in err.trace.records("timer_fired")]
        assert fired == [(t, t) for t in range(101, 107)]
        assert err.trace[-1].kind == "error" and err.trace[-1].detail == message
    else:
        assert err.trace is None


def test_a_chain_towards_a_finite_processing_time_runs_to_the_end():
    # 1000 ms steps to 20_000: 19 chained firings, far past the budget of 5, and finite
    result = _chain_job(_NextMs(step=1000), budget=5).execute(until_processing_time=20_000)
    assert [r.value for r in result.outputs["out"]] == list(range(1100, 20_001, 1000))


def test_a_chain_that_ends_before_max_finishes_within_the_budget():
    # fires 101 (registered by the element), then 102..105: 4 chained firings
    result = _chain_job(_NextMs(stop_after=5), budget=4).execute(until_processing_time=wv.MAX)
    assert [r.value for r in result.outputs["out"]] == [101, 102, 103, 104, 105]
    with pytest.raises(TimerLoopError, match=r"fired 3 processing-time timers .* \(at 105\)"):
        _chain_job(_NextMs(stop_after=5), budget=3).execute(until_processing_time=wv.MAX)


def _global_processing(trigger, budget: int):
    return global_sums(trigger, [("A", 500), ("A", 700)], [0, 1500], budget=budget)


def test_continuous_processing_time_trigger_on_global_windows_to_max_stops():
    with pytest.raises(TimerLoopError) as info:
        _global_processing(wv.ContinuousProcessingTimeTrigger.of(1000), budget=3).execute(
            until_processing_time=wv.MAX
        )
    err = info.value
    # 1000 fires (registered by the first element) before 700 arrives at 1500; 2000 was
    # registered at 1000, before the advance to MAX; then 3000, 4000, 5000 are chained
    assert str(err).startswith(
        "timer loop in operator 'window': trigger ContinuousProcessingTimeTrigger(1000) fired "
        "3 processing-time timers of key 'A', window GlobalWindow in one advance of the "
        "processing time to MAX: each was registered by an earlier firing of the same advance, "
        "and the next one (at 6000) is due too. With execute(until_processing_time=MAX)"
    )
    assert str(err).endswith(
        "The firing budget: 3 firings per key and window in one advance "
        "(env.set_timer_firing_budget(n))."
    )
    assert (err.domain, err.key, err.timestamp) == ("processing", "A", 6000)
    assert err.namespace is wv.GLOBAL_WINDOW
    outputs = [(r.value, r.processing_time) for r in err.partial_result.outputs["out"]]
    assert outputs == [(("A", 500), 1000)] + [(("A", 1200), t) for t in (2000, 3000, 4000, 5000)]


class _CreepProcessing(wv.Trigger):
    """A user trigger that fires at every processing-time timer and registers the next one
    1 ms later."""

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_processing_time_timer(ctx.get_current_processing_time() + 1)
        return wv.TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        ctx.register_processing_time_timer(time + 1)
        return wv.TriggerResult.FIRE

    def __repr__(self) -> str:
        return "CreepProcessing()"


def test_a_user_trigger_chaining_processing_time_timers_to_max_stops():
    with pytest.raises(TimerLoopError) as info:
        _global_processing(_CreepProcessing(), budget=4).execute(until_processing_time=wv.MAX)
    err = info.value
    # 1..1500 fire before the second element arrives at 1500 (one per step of the clock,
    # which the budget of a finite advance does not count); 1501 (registered before the
    # advance to MAX), then 1502..1505 chained; 1506 refused
    assert str(err).startswith(
        "timer loop in operator 'window': trigger CreepProcessing() fired 4 processing-time "
        "timers of key 'A', window GlobalWindow in one advance of the processing time to MAX"
    )
    assert (err.key, err.timestamp) == ("A", 1506)
    assert len(err.partial_result.outputs["out"]) == 1505


class _CoNextMs(wv.KeyedCoProcessFunction):
    def process_element1(self, value, ctx, out):
        ctx.timer_service().register_processing_time_timer(1000)

    def process_element2(self, value, ctx, out):
        pass

    def on_timer(self, timestamp, ctx, out):
        out.collect(timestamp)
        ctx.timer_service().register_processing_time_timer(timestamp + 1000)


def test_a_keyed_co_process_function_chaining_timers_to_max_stops():
    env = wv.StreamExecutionEnvironment().set_timer_firing_budget(2)
    a = env.from_collection([("A", 1)], arrival_times=[0])
    b = env.from_collection([("A", 2)], arrival_times=[0])
    a.connect(b).key_by(lambda e: e[0], lambda e: e[0]).process(_CoNextMs()).sink_to("out")
    with pytest.raises(TimerLoopError) as info:
        env.execute(until_processing_time=wv.MAX)
    assert str(info.value).startswith(
        "timer loop in operator 'co_process': _CoNextMs.on_timer fired 2 processing-time "
        "timers of key 'A' in one advance of the processing time to MAX"
    )
    assert info.value.timestamp == 4000
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [1000, 2000, 3000]


# -- issue 28: a process function's return value, and filter's, are checked ------------------


class _ReturningWindow(wv.ProcessWindowFunction):
    """Returns its results instead of collecting them."""

    def process(self, key, context, elements, out):
        return [e["n"] for e in elements]


@pytest.mark.parametrize("evictor", [False, True])
def test_a_process_window_function_returning_its_results_is_refused(evictor: bool):
    data = [{"k": "A", "ts": t, "n": n} for t, n in ((500, 1), (600, 2), (5500, 4))]
    env = wv.StreamExecutionEnvironment()
    windowed = keyed_window(
        env,
        data,
        1000,
        bounded(0, lambda e: e["ts"]),
        key=lambda e: e["k"],
        arrival_times=[0, 10, 30],
    )
    if evictor:
        windowed = windowed.evictor(wv.CountEvictor.of(5))
    windowed.process(_ReturningWindow()).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    err = info.value
    # the periodic watermark 5499 fires [0, 1000) (no record is being processed then)
    assert str(err) == (
        "_ReturningWindow.process in operator 'window' returned a value when window "
        "[0, 1000) fired, which Flink never reads: got [1, 2]; key 'A' (expected "
        "None: results go through the collector, out.collect(result) for each, as Flink's "
        "process methods return void)"
    )
    assert (err.function, err.key, err.index) == ("_ReturningWindow.process", "A", None)
    assert err.partial_result.outputs["out"] == []
    assert err.trace[-1].kind == "error"


def test_a_window_function_of_apply_returning_a_value_is_refused():
    env, stream = _keyed([("A", 500), ("A", 1500)], [0, 100])
    stream.window(wv.TumblingEventTimeWindows.of(1000)).apply(
        lambda key, window, elements, out: len(elements)
    ).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value).startswith(
        "apply function <lambda> in operator 'window' returned a value when window [0, 1000) "
        "fired, which Flink never reads: got 1; key 'A' (expected None: results go "
        "through the collector"
    )


class _ReturningProcess(wv.KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect(value)
        if value[1] > 1000:
            return value


class _ReturningTimer(wv.KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        ctx.timer_service().register_event_time_timer(value[1])

    def on_timer(self, timestamp, ctx, out):
        return timestamp


def test_a_keyed_process_function_returning_a_value_is_refused():
    env, stream = _keyed()
    stream.process(_ReturningProcess()).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value) == (
        "_ReturningProcess.process_element in operator 'process' returned a value, which "
        "Flink never reads: got ('A', 1500); record 1; key 'A'; value ('A', 1500) (expected "
        "None: results go through the collector, out.collect(result) for each, as Flink's "
        "process methods return void)"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 500), ("A", 1500)]

    env, stream = _keyed()
    stream.process(_ReturningTimer()).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value).startswith(
        "_ReturningTimer.on_timer in operator 'process' returned a value when its event-time "
        "timer at 500 fired, which Flink never reads: got 500; key 'A' (expected None"
    )


def test_a_keyed_process_key_selector_that_raises_is_named_with_no_earlier_key():
    """The key selector runs in the operator (parallelism 1, no exchange): its error names the
    key selector, not ``process_element``, and no key (record 0's key was 1)."""

    class _Passing(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            out.collect(value)

    env = wv.StreamExecutionEnvironment()
    stream = env.from_collection([("A", 1), ("B", 0)]).key_by(lambda e: 1 // e[1])
    stream.process(_Passing()).sink_to("out")
    with pytest.raises(UserFunctionError) as info:
        env.execute()
    assert str(info.value) == (
        "key selector in operator 'process' raised ZeroDivisionError: integer division or "
        "modulo by zero; record 1; value ('B', 0)"
    )
    assert (info.value.function, info.value.key, info.value.index) == ("key selector", None, 1)


class _ReturningCo(wv.CoProcessFunction):
    def process_element1(self, value, ctx, out):
        out.collect(value)

    def process_element2(self, value, ctx, out):
        return [value]


@pytest.mark.parametrize("keyed", [False, True])
def test_a_co_process_function_returning_a_value_is_refused(keyed: bool):
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("A", 1)], arrival_times=[0])
    b = env.from_collection([("A", 2)], arrival_times=[5])
    connected = a.connect(b)
    if keyed:
        connected = connected.key_by(lambda e: e[0], lambda e: e[0])
    function = type("_ReturningKeyedCo", (wv.KeyedCoProcessFunction,), dict(vars(_ReturningCo)))
    connected.process(function() if keyed else _ReturningCo()).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    name = "_ReturningKeyedCo" if keyed else "_ReturningCo"
    key = "; key 'A'" if keyed else ""
    assert str(info.value).startswith(
        f"{name}.process_element2 in operator 'co_process' returned a value, which Flink "
        f"never reads: got [('A', 2)]; record 0{key}; value ('A', 2) (expected None"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [("A", 1)]


@pytest.mark.parametrize(
    ("fn", "result"),
    [
        (lambda e: "no", "'no'"),
        (lambda e: print(end=""), "None"),
        (lambda e: 1, "1"),
        (lambda e: [e], "[2]"),
    ],
)
def test_a_filter_returning_no_boolean_is_refused(fn, result):
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2, 3]).filter(lambda e: e == 1 or fn(e)).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value) == (
        f"filter in operator 'filter' returned no boolean: got {result}; record 1; value 2 "
        "(expected True to keep the record or False to drop it (Flink's FilterFunction "
        "returns a boolean), e.g. lambda e: e['n'] > 0)"
    )
    assert (info.value.index, info.value.record) == (1, 2)
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [1]


def test_a_filter_takes_python_and_numpy_booleans():
    np = pytest.importorskip("numpy")
    env = wv.StreamExecutionEnvironment()
    numbers = env.from_collection([1, 2, 3, 4])
    numbers.filter(lambda e: np.int64(e) % 2 == 0).sink_to("numpy")
    numbers.filter(lambda e: e > 2).sink_to("python")
    result = env.execute()
    assert [r.value for r in result.outputs["numpy"]] == [2, 4]
    assert [r.value for r in result.outputs["python"]] == [3, 4]


# -- issue 28: the edges ------------------------------------------------------------------------


def _window_trace():
    env, stream = _keyed([("A", 500), ("A", 1500)], [0, 100])
    _keep_first(stream)
    return env.execute().trace


@pytest.mark.parametrize(
    ("window", "what"),
    [
        ("0-1000", "a str"),
        ((0,), "a 1-item tuple"),
        ([0, 1000, 2000], "a 3-item list"),
        (1000, "a int"),
    ],
)
def test_a_window_filter_that_is_no_window_is_refused(window, what):
    trace = _window_trace()
    with pytest.raises(ArgumentTypeError) as info:
        trace.where(window=window)
    assert str(info.value) == (
        f"field 'window', value {window!r}: {what} is no window (expected a TimeWindow, a "
        "(start, end) pair of ints such as (0, 1000) or wv.TimeWindow(0, 1000), GLOBAL_WINDOW "
        "or None)"
    )
    with pytest.raises(ArgumentTypeError):
        trace.records("fired", window=window)
    # what is expected selects the window
    fired = [(r.kind, r.window) for r in trace.where(kind="fired", window=(0, 1000))]
    assert fired == [("fired", wv.TimeWindow(0, 1000))]


def _tampered(tmp_path, change):
    path = tmp_path / "trace.parquet"
    _window_trace().save(path)
    table = pq.read_table(path)
    columns = change(table)
    pq.write_table(table.from_pydict(columns, schema=table.schema), path)
    return path


def test_load_trace_refuses_swapped_window_bounds(tmp_path):
    def swap(table):
        columns = table.to_pydict()
        columns["window_start"], columns["window_end"] = (
            columns["window_end"],
            columns["window_start"],
        )
        return columns

    path = _tampered(tmp_path, swap)
    columns = pq.read_table(path).to_pydict()
    row = next(i for i, s in enumerate(columns["window_start"]) if s is not None)
    with pytest.raises(wv.errors.TraceFileError) as info:
        wv.load_trace(path)
    assert str(info.value) == (
        f"{path}: damaged trace file: record {row}: field 'window_end' value 0 is not after "
        "window_start 1000 (expected window_start < window_end: a time window [start, end) "
        "of positive size, end - start in Java's long arithmetic)"
    )


def test_load_trace_keeps_a_window_wrapped_past_max(tmp_path):
    # Flink's TumblingEventTimeWindows.of(1000) puts MAX - 5 into [MAX - 807, MAX + 193),
    # whose end wraps to MIN + 192 in Java's long: a window of size 1000, not swapped
    env, stream = _keyed([("A", wv.MAX - 5)], [0])
    _keep_first(stream)
    trace = env.execute().trace
    path = tmp_path / "wrapped.parquet"
    trace.save(path)
    windows = {r.window for r in wv.load_trace(path) if r.window is not None}
    assert windows == {wv.TimeWindow(wv.MAX - 807, wv.MIN + 192)}


@pytest.mark.parametrize("seq", ["reversed", "zero"])
def test_load_trace_refuses_a_seq_that_does_not_increase(tmp_path, seq):
    n = len(_window_trace())

    def renumber(table):
        columns = table.to_pydict()
        columns["seq"] = list(range(n - 1, -1, -1)) if seq == "reversed" else [0] * n
        return columns

    path = _tampered(tmp_path, renumber)
    value, previous = (n - 2, n - 1) if seq == "reversed" else (0, 0)
    with pytest.raises(wv.errors.TraceFileError) as info:
        wv.load_trace(path)
    assert str(info.value) == (
        f"{path}: damaged trace file: record 1: field 'seq' value {value} is not greater "
        f"than record 0's {previous} (expected seq to increase from record to record, as a "
        "trace numbers them)"
    )


@pytest.mark.parametrize("size", [-5, dt.timedelta(milliseconds=-1)])
def test_a_negative_time_evictor_size_is_refused_as_a_negative_count_is(size):
    with pytest.raises(InputError) as info:
        wv.TimeEvictor.of(size)
    assert str(info.value) == (
        f"field 'evictor window size', value {size!r}: TimeEvictor window size must be at "
        "least 0: a negative size evicts every element (expected an int >= 0 (ms) or a "
        "timedelta that is not negative)"
    )
    with pytest.raises(InputError, match="CountEvictor max_count must be at least 0"):
        wv.CountEvictor.of(-1)
    assert wv.TimeEvictor.of(0).window_size == 0


def test_a_conformance_trigger_step_with_a_window_that_ends_before_it_starts_is_refused(
    tmp_path,
):
    from winviz.conformance import TranscriptError, check_transcript, load

    path = tmp_path / "backwards.yaml"
    path.write_text(
        "name: backwards\noperator: {kind: trigger, trigger: {type: event_time}}\nsteps:\n"
        "  - {element: {value: 1, ts: 3}, window: [5, 2], expect_result: CONTINUE}\n"
    )
    with pytest.raises(TranscriptError) as info:
        check_transcript(load(path))
    assert str(info.value) == (
        f"{path}: step 0: window: window [5, 2]: end 2 is not after start 5 (expected "
        "[start, end] with start < end: a window of positive size, end - start in Java's long "
        "arithmetic)"
    )
    # a window wrapped past MAX has a positive size in Java's long arithmetic
    path.write_text(
        "name: wrapped\noperator: {kind: trigger, trigger: {type: event_time}}\nsteps:\n"
        "  - {element: {value: 1, ts: 3}, window: [9223372036854775000, "
        "-9223372036854775616], expect_result: FIRE}\n"
    )
    check_transcript(load(path))


def test_a_transcript_of_nested_yaml_aliases_is_refused_before_it_grows(tmp_path):
    from winviz.conformance import TranscriptError, load

    lines = ["name: laughs", "operator: {kind: valve, channels: 2}", "l0: &l0 [x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 5)}]" for i in range(1, 30)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join([*lines, "steps: [*l29]"]) + "\n")
    # 5**30 nodes once expanded (about 9·10^20): refused from the node graph, at once, at
    # l7 (1 + 5 * (1 + 5 * (… (1 + 5 * 6)))) = 488281 nodes)
    with pytest.raises(TranscriptError) as info:
        load(path)
    assert str(info.value) == (
        f"{path}: line 10: this value expands to 488281 YAML nodes through its aliases "
        "(*name), more than the 100000 a transcript may hold (expected a transcript written "
        "out, or aliases that expand to a few nodes; nested aliases grow exponentially)"
    )
    path.write_text("name: self\noperator: {kind: valve, channels: 2}\nsteps: &s [1, *s]\n")
    with pytest.raises(TranscriptError, match=r"line 3: this value contains itself through"):
        load(path)
    # a few aliases are fine
    path.write_text(
        "name: few\noperator: {kind: valve, channels: 1}\n"
        "steps:\n  - &w {channel: 0, watermark: 5}\n  - *w\n"
    )
    assert load(path)["steps"] == [{"channel": 0, "watermark": 5}] * 2


@pytest.mark.parametrize(
    ("cuts", "error", "value", "message"),
    [
        (3, ArgumentTypeError, 3, "at_records takes the cuts of the checkpoints: record counts"),
        ("38", ArgumentTypeError, "38", "at_records takes the cuts of the checkpoints: record "),
        ([3, "8"], ArgumentTypeError, "8", "each checkpoint cut is a record count"),
        ([True], ArgumentTypeError, True, "each checkpoint cut is a record count"),
        ([3, -1], InputError, -1, "each checkpoint cut is a record count"),
    ],
)
def test_enable_checkpointing_at_records_says_what_it_takes(cuts, error, value, message):
    with pytest.raises(error) as info:
        wv.StreamExecutionEnvironment().enable_checkpointing(at_records=cuts)
    assert type(info.value) is error
    assert str(info.value).startswith(f"field 'at_records', value {value!r}: {message}")
    assert str(info.value).endswith(
        "(expected a list of record counts (ints >= 0), e.g. at_records=[3] or [3, 8])"
    )
    config = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=range(8, 2, -5))
    assert config.checkpoint_config.at_records == (3, 8)


def test_seattle_temps_refuses_a_mean_delay_that_would_arrive_after_max():
    from winviz.datasets import seattle_temps

    with pytest.raises(InputError) as info:
        seattle_temps(mean_delay=wv.MAX)
    assert str(info.value) == (
        "record 2, field 'mean_delay': seattle-temps.csv, line 4: the reading at ts "
        "1262340000000 would arrive 9707558652627570688 ms later, after MAX (Long.MAX_VALUE): "
        "mean_delay MAX is too large (expected a mean_delay that keeps every arrival time "
        "(ts + delay) within Java's long range, e.g. the default 2000 ms)"
    )
    # a large delay that stays within the long range is kept as it is
    rows = seattle_temps(mean_delay=wv.MAX // 10**6, limit=3)
    assert [r["arrival_time"] for r in rows] == [2770527963854, 4871575191921, 10969898652627]


def test_continuous_event_time_trigger_wraps_its_next_fire_time_as_java_longs_do():
    # Flink 2.3's ContinuousEventTimeTrigger: next = Math.min(time + interval, maxTimestamp)
    # in long arithmetic. Interval 2**62 on GlobalWindows, an element at 2**62 + 5: start =
    # 2**62 and 2**62 + 2**62 wraps to MIN, so the fire-time timer is at MIN (not MAX). At
    # the watermark 2**62 + 4 it fires, registers MIN + 2**62 = -2**62 (due), then 0, 2**62,
    # MIN + … again: the chain cycles for ever, as in Flink (the single-step result is
    # checked on real Flink: tests/conformance/flinkdiff_continuous_event_time_next_fire_
    # wraps_past_max.yaml); winviz's firing budget stops it
    env = wv.StreamExecutionEnvironment().set_timer_firing_budget(6)
    (
        env.from_collection([("A", 2**62 + 5)], arrival_times=[0])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.GlobalWindows.create())
        .trigger(wv.ContinuousEventTimeTrigger.of(2**62))
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    with pytest.raises(TimerLoopError) as info:
        env.execute()
    err = info.value
    assert str(err).startswith(
        "timer loop in operator 'window': trigger ContinuousEventTimeTrigger(4611686018427387904) "
        "fired 6 event-time timers of key 'A', window GlobalWindow in one advance of the "
        "watermark to 4611686018427387908: each was registered by an earlier firing of the same "
        "advance, and the next one (at 4611686018427387904) is due too. The chain may never end"
    )
    cycle = [wv.MIN, -(2**62), 0, 2**62]
    registered = [r.ts for r in err.trace.records("timer_registered")]
    assert registered == [wv.MAX, *cycle, *cycle]  # the element: max timestamp, then MIN
    fired = [r.ts for r in err.trace.records("timer_fired")]
    assert fired == [*cycle, *cycle[:3]]
    assert err.partial_result.outputs["out"] == [(("A", 2**62 + 5), wv.MAX, 0)] * 7


def test_the_continuous_triggers_share_the_wrapping_next_fire_time():
    from winviz.windows.triggers import next_fire_time

    window = wv.TimeWindow(0, 10_000)
    assert next_fire_time(2_000, 1_000, window) == 3_000
    assert next_fire_time(9_500, 1_000, window) == 9_999  # capped at the max timestamp
    # Java: (MAX - 807) + 1000 wraps to MIN + 192, below GlobalWindow's max timestamp MAX
    assert next_fire_time(wv.MAX - 807, 1_000, wv.GLOBAL_WINDOW) == wv.MIN + 192


class _ReturningJoin(wv.ProcessJoinFunction):
    def process_element(self, left, right, ctx, out):
        return (left, right)


def test_a_process_join_function_returning_its_pair_is_refused():
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("A", 500)], arrival_times=[0]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    b = env.from_collection([("A", 600)], arrival_times=[10]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0])).between(0, 200).process(
        _ReturningJoin()
    ).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value).startswith(
        "_ReturningJoin.process_element in operator 'interval_join' returned a value when "
        "joining ('A', 500) with ('A', 600), which Flink never reads: got (('A', 500), "
        "('A', 600)); record 0; key 'A' (expected None: results go through the collector"
    )


# -- issue 28: per-window state on merging windows is refused as Flink refuses it -------------
# (WindowOperator.MergingWindowStateStore: "Per-window state is not allowed when using merging
# windows.", thrown as the function asks for the state — the job builds and runs until then)


class _StateOnLongSessions(wv.ProcessWindowFunction):
    """Emits each session; asks for per-window state only in sessions of several elements."""

    def process(self, key, context, elements, out):
        if len(elements) > 1:
            context.window_state().add(1)
        out.collect((key, context.window().start, context.window().end))


class _ClearingSessions(wv.ProcessWindowFunction):
    """Emits each session; clears per-window state at the window's cleanup."""

    def process(self, key, context, elements, out):
        out.collect((key, context.window().start, context.window().end))

    def clear(self, context):
        context.window_state().clear()


def _sessions(function: wv.ProcessWindowFunction) -> wv.StreamExecutionEnvironment:
    # the end of input (20 ms, watermark MAX) fires and cleans up A's session [1000, 2000)
    # (timer 1999), then B's [2000, 4000) (timer 3999)
    env, stream = _keyed([("A", 1000), ("B", 2000), ("B", 3000)], [0, 10, 20])
    stream.window(wv.EventTimeSessionWindows.with_gap(1000)).process(function).sink_to("out")
    return env


def _refusal(key: str, window: str) -> str:
    return (
        "Per-window state is not allowed when using merging windows. Operator 'window', "
        f"key {key!r}, window {window}: session windows merge, and Flink does not merge a "
        "function's per-window state with them (its MergingWindowStateStore refuses it). "
        "Keep the state in context.global_state() (per key, shared by the key's windows; "
        "clear what belongs to a window in the function's clear(context)), or use a window "
        "assigner that does not merge."
    )


def test_per_window_state_in_process_on_session_windows_is_refused_when_asked_for():
    env = _sessions(_StateOnLongSessions())
    with pytest.raises(wv.UnsupportedOperationError) as info:
        env.execute()
    err = info.value
    assert str(err) == _refusal("B", "[2000, 4000)")
    outputs = err.partial_result.outputs["out"]
    assert [(r.value, r.processing_time) for r in outputs] == [(("A", 1000, 2000), 20)]
    assert err.trace[len(err.trace) - 1].kind == "error"


def test_per_window_state_in_clear_on_session_windows_is_refused_at_the_cleanup():
    env = _sessions(_ClearingSessions())
    with pytest.raises(wv.UnsupportedOperationError) as info:
        env.execute()
    err = info.value
    assert str(err) == _refusal("A", "[1000, 2000)")
    # A's session fired, then its cleanup called clear
    assert [r.value for r in err.partial_result.outputs["out"]] == [("A", 1000, 2000)]
    assert err.trace[len(err.trace) - 1].kind == "error"


# -- issue 28: interval joins, window joins and coGroups: arguments refused at the call, a record
# without timestamp refused naming it, a function's returned value refused ---------------------


def _two_inputs() -> tuple[wv.StreamExecutionEnvironment, wv.DataStream, wv.DataStream]:
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("k", 1, "a")], arrival_times=[0], name="a")
    b = env.from_collection([("k", 2, "b"), ("k", 20, "c")], arrival_times=[1, 2], name="b")
    return (
        env,
        a.assign_timestamps_and_watermarks(bounded(0)),
        b.assign_timestamps_and_watermarks(bounded(0)),
    )


class _Pairs(wv.ProcessJoinFunction):
    def process_element(self, left, right, ctx, out):
        out.collect((left, right))


class _ThreeArgs(wv.ProcessJoinFunction):
    def process_element(self, left, right, out):  # no ctx
        out.collect((left, right))


def _interval_join():
    _env, a, b = _two_inputs()
    return a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0]))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: _interval_join().in_processing_time().between(0, 1),
            wv.UnsupportedOperationError,
            "Time-bounded stream joins are only supported in event time",
        ),
        (
            lambda: _interval_join().between(None, 1),
            InputError,
            "field 'lower bound', value None: A lower bound needs to be provided for a "
            "time-bounded join (expected int milliseconds or a timedelta)",
        ),
        (
            lambda: _interval_join().between(0, 1.5),
            ArgumentTypeError,
            "field 'upper bound', value 1.5: upper bound must be milliseconds (int) or a "
            "timedelta (expected int milliseconds or a timedelta)",
        ),
        (
            lambda: _interval_join().between(0, 2**63),
            LongRangeError,
            "field 'upper bound', value 9223372036854775808: upper bound is outside Java's "
            "long range, so Flink could not hold it (expected -2**63 <= ms <= 2**63-1)",
        ),
        (
            # Flink's IntervalJoinOperator constructor: checked when process() builds it
            lambda: _interval_join().between(5, 1).process(_Pairs()),
            InputError,
            "field 'between', value (5, 1): lowerBound <= upperBound must be fulfilled "
            "(expected lower <= upper)",
        ),
        (
            lambda: _interval_join().between(0, 1).side_output_left_late_data("late"),
            ArgumentTypeError,
            "field 'tag', value 'late': side_output_left_late_data() takes an OutputTag, not "
            "str (expected an OutputTag, e.g. OutputTag('late'))",
        ),
        (
            lambda: _interval_join().between(0, 1).process(lambda *a: None),
            ArgumentTypeError,
            "process() takes a ProcessJoinFunction with process_element(left, right, ctx, out) "
            "(expected a ProcessJoinFunction)",
        ),
        (
            lambda: _interval_join().between(0, 1).process(_ThreeArgs()),
            ArgumentTypeError,
            "process() calls its function with 4 arguments; _ThreeArgs.process_element(left, "
            "right, out) cannot take them (expected a ProcessJoinFunction with "
            "process_element(left, right, ctx, out))",
        ),
        (
            lambda: _two_inputs()[1].key_by(lambda e: e[0]).interval_join(_two_inputs()[2]),
            ArgumentTypeError,
            "interval_join takes a KeyedStream, not DataStream (expected a KeyedStream, e.g. "
            "other.key_by(lambda e: e['user']))",
        ),
    ],
)
def test_interval_join_arguments_are_refused_at_the_call(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).endswith(message)


def test_an_interval_join_element_without_timestamp_is_refused_naming_it():
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("k", 1)], name="a")
    b = env.from_collection([("k", 2)], name="b")
    a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0])).between(0, 1).process(_Pairs())
    with pytest.raises(InputError) as info:
        env.execute()
    assert str(info.value) == (
        "record 0, field 'timestamp', value None: operator 'interval_join', input 1: "
        "Long.MIN_VALUE timestamp: Elements used in interval stream joins need to have "
        "timestamps meaningful timestamps. (expected an event timestamp "
        "(assign_timestamps_and_watermarks before the join))"
    )
    # the trace up to the failure stays available: the element that failed is its last record
    last = info.value.trace.records("element", operator="interval_join")[-1]
    assert (last.ts, last.detail) == (None, ("k", 1))


def _join(co_group: bool = False):
    _env, a, b = _two_inputs()
    return a.co_group(b) if co_group else a.join(b)


def _windowed_join(co_group: bool = False):
    keyed = _join(co_group).where(lambda e: e[0]).equal_to(lambda e: e[0])
    return keyed.window(wv.TumblingEventTimeWindows.of(5))


class _TwoArgFlatJoin(wv.FlatJoinFunction):
    def join(self, first, second):  # no out
        return (first, second)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: _join().equal_to(lambda e: e[0]),
            InputError,
            "field 'where': join: call where(key) before equal_to(key)",
        ),
        (
            lambda: _join().where(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(5)),
            InputError,
            "field 'equal_to': join: call where(key).equal_to(key) before window()",
        ),
        (
            lambda: (
                _join(True)
                .where(lambda e: e[0])
                .equal_to(lambda e: e[0])
                .trigger(wv.CountTrigger.of(1))
            ),
            InputError,
            "field 'window': co_group: call where(...).equal_to(...).window(assigner) before "
            "trigger()",
        ),
        (
            lambda: _join().where(lambda e: e[0]).equal_to(lambda e: e[0]).apply(lambda a, b: a),
            InputError,
            "field 'window': join: call where(...).equal_to(...).window(assigner) before apply()",
        ),
        (
            lambda: _join().where(3),
            ArgumentTypeError,
            "field 'where', value 3: where() takes a function; int is not callable (expected a "
            "key selector (first) -> key)",
        ),
        (
            lambda: _join().where(lambda: 1),
            ArgumentTypeError,
            "where() calls its function with 1 argument; <lambda>.<locals>.<lambda>() cannot "
            "take them (expected a key selector (first) -> key)",
        ),
        (
            lambda: _join(True).where(lambda e: e[0]).equal_to(lambda e: e[0]).window(5),
            ArgumentTypeError,
            "field 'assigner', value 5: window() takes a WindowAssigner, not int (expected a "
            "WindowAssigner, e.g. TumblingEventTimeWindows.of(5000))",
        ),
        (
            lambda: _windowed_join(True).trigger("count"),
            ArgumentTypeError,
            "field 'trigger', value 'count': trigger() takes a Trigger, not str (expected a "
            "Trigger, e.g. CountTrigger.of(3))",
        ),
        (
            lambda: _windowed_join(True).evictor(3),
            ArgumentTypeError,
            "field 'evictor', value 3: evictor() takes an Evictor, not int (expected an "
            "Evictor, e.g. CountEvictor.of(3))",
        ),
        (
            lambda: _windowed_join(True).allowed_lateness(-1),
            InputError,
            "field 'allowed_lateness', value -1: The allowed lateness cannot be negative. "
            "(expected >= 0)",
        ),
        (
            lambda: _windowed_join(True).apply(42),
            ArgumentTypeError,
            "field 'apply', value 42: apply() takes a function; int is not callable (expected "
            "a CoGroupFunction or function (first, second, out))",
        ),
        (
            lambda: _windowed_join(True).apply(lambda first, second: None),
            ArgumentTypeError,
            "apply() calls its function with 3 arguments; <lambda>.<locals>.<lambda>(first, "
            "second) cannot take them (expected a CoGroupFunction or function (first, second, "
            "out))",
        ),
        (
            lambda: _windowed_join().apply(lambda first, second, out: None),
            ArgumentTypeError,
            "apply() calls its function with 2 arguments; <lambda>.<locals>.<lambda>(first, "
            "second, out) cannot take them (expected a JoinFunction or function (first, "
            "second) -> record; for join(first, second, out) subclass FlatJoinFunction)",
        ),
        (
            lambda: _windowed_join().apply(_TwoArgFlatJoin()),
            ArgumentTypeError,
            "apply() calls its function with 3 arguments; _TwoArgFlatJoin.join(first, second) "
            "cannot take them (expected a FlatJoinFunction with join(first, second, out))",
        ),
        (
            lambda: _two_inputs()[1].join([1, 2]),
            ArgumentTypeError,
            "field 'other', value [1, 2]: join() needs a DataStream of the same environment, "
            "not list (expected a DataStream of this environment)",
        ),
        (
            lambda: _two_inputs()[1].co_group(_two_inputs()[2]),
            ArgumentTypeError,
            "co_group() needs a DataStream of the same environment (expected a DataStream of "
            "this environment)",
        ),
    ],
)
def test_window_join_and_co_group_arguments_are_refused_at_the_call(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).endswith(message)


class _ReturningCoGroup(wv.CoGroupFunction):
    def co_group(self, first, second, out):
        return [len(first), len(second)]  # should have been out.collect(...)


class _ReturningFlatJoin(wv.FlatJoinFunction):
    def join(self, first, second, out):
        return (first[2], second[2])  # should have been out.collect(...)


@pytest.mark.parametrize(
    ("co_group", "function", "name", "got"),
    [
        (True, _ReturningCoGroup(), "_ReturningCoGroup.co_group", "[1, 1]"),
        (False, _ReturningFlatJoin(), "_ReturningFlatJoin.join", "('a', 'b')"),
    ],
)
def test_a_cogroup_or_flat_join_function_that_returns_a_value_is_refused(
    co_group, function, name, got
):
    """A CoGroupFunction / FlatJoinFunction collects its results (Flink's methods are void): a
    returned value is refused by the window operator's one rule, naming the user's function,
    key and window — never dropped in silence; the trace up to it stays."""
    env, a, b = _two_inputs()
    _windowed_join_of(a, b, co_group).apply(function).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value).startswith(
        f"apply function {name} in operator 'window' returned a value when window [0, 5) "
        f"fired, which Flink never reads: got {got}; key 'k' (expected None: results go "
        "through the collector"
    )
    assert info.value.partial_result.outputs["out"] == []
    assert info.value.trace[len(info.value.trace) - 1].kind == "error"


def _windowed_join_of(a: wv.DataStream, b: wv.DataStream, co_group: bool):
    two = a.co_group(b) if co_group else a.join(b)
    return (
        two.where(lambda e: e[0]).equal_to(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(5))
    )


# -- issue 28: watermark alignment and BATCH mode arguments (the range checks Flink makes, -1
# drift, 0 interval, a None group, are in tests/test_alignment.py; checkpointing in BATCH in
# tests/test_batch_execution.py) -----------------------------------------------------------------

_ALIGNED = wv.WatermarkStrategy.for_monotonous_timestamps()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: _ALIGNED.with_watermark_alignment(3, 10),
            ArgumentTypeError,
            "field 'group', value 3: with_watermark_alignment needs a watermark group name "
            "(Flink: 'watermarkGroup cannot be null') (expected a str naming the alignment group)",
        ),
        (
            lambda: _ALIGNED.with_watermark_alignment("g", 1.5),
            ArgumentTypeError,
            "field 'max_drift', value 1.5: max_drift must be milliseconds (int) or a timedelta "
            "(expected int milliseconds or a timedelta)",
        ),
        (
            lambda: _ALIGNED.with_watermark_alignment("g", 2**63),
            LongRangeError,
            "field 'max_drift', value 9223372036854775808: max_drift is outside Java's long "
            "range, so Flink could not hold it (expected -2**63 <= ms <= 2**63-1)",
        ),
        (
            lambda: _ALIGNED.with_watermark_alignment("g", 10, True),
            ArgumentTypeError,
            "field 'update_interval', value True: update_interval must be milliseconds (int) or "
            "a timedelta (expected int milliseconds or a timedelta)",
        ),
        (
            lambda: wv.StreamExecutionEnvironment().set_watermark_alignment_buffer_size(1.5),
            ArgumentTypeError,
            "field 'buffer_size', value 1.5: buffer_size must be an int, got float (expected an "
            "int >= 0 (Flink's default 3; 0: check the latest watermark))",
        ),
        (
            lambda: wv.StreamExecutionEnvironment().set_runtime_mode(None),
            ArgumentTypeError,
            "field 'mode', value None: set_runtime_mode takes a RuntimeExecutionMode (expected "
            "wv.RuntimeExecutionMode.STREAMING, BATCH or AUTOMATIC)",
        ),
    ],
)
def test_alignment_and_runtime_mode_arguments_are_refused_at_the_call(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_a_failure_or_a_restore_in_batch_mode_is_refused():
    def job() -> wv.StreamExecutionEnvironment:
        env, stream = _keyed()
        _keep_first(stream, "o")
        return env

    refusal = (
        "checkpoints, failures and restores are not supported in BATCH mode (Flink: "
        "Checkpoints are not supported with sorted inputs in the BATCH runtime)"
    )
    env = job().set_runtime_mode(wv.RuntimeExecutionMode.BATCH)
    with pytest.raises(wv.UnsupportedOperationError) as info:
        env.execute(fail_at=1)
    assert str(info.value) == refusal
    checkpointed = job().enable_checkpointing(at_records=[1])
    (checkpoint,) = checkpointed.execute().checkpoints
    with pytest.raises(wv.UnsupportedOperationError) as info:
        job().set_runtime_mode("batch").execute(restore_from=checkpoint)
    assert str(info.value) == refusal


class _HalfWatermarks(WatermarkGenerator):
    def on_event(self, event, timestamp, output):
        output.emit_watermark(timestamp + 0.5)


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_generated_watermark_that_is_no_long_is_refused_per_partition_too(partitioned):
    """The reader's output and a partition's (per-split watermarks) refuse it alike; a
    partition's took it as it was (the watermark 2.5 went downstream)."""
    env = wv.StreamExecutionEnvironment()
    source = env.from_partitions([[1, 2], [3]]) if partitioned else env.from_collection([1, 2, 3])
    strategy = wv.WatermarkStrategy.for_generator(_HalfWatermarks).with_timestamp_assigner(
        lambda e, _: e
    )
    source.assign_timestamps_and_watermarks(strategy).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value) == (
        "the watermark generator of _HalfWatermarks in operator 'watermarks' emitted a "
        "watermark that is no long: got 1.5; record 0 (expected int milliseconds in Java's "
        "long range (or None: no watermark))"
    )
    assert [r.value for r in info.value.partial_result.outputs["out"]] == [1]


class _HalfWhenNothingSeen(WatermarkGenerator):
    def __init__(self):
        self.seen = False

    def on_event(self, event, timestamp, output):
        self.seen = True

    def on_periodic_emit(self, output):
        output.emit_watermark(5 if self.seen else 0.5)


def test_a_reader_without_partitions_refuses_a_watermark_that_is_no_long():
    """Its main output (the generator that sees no record) refuses it as a partition's does
    (it went downstream: 'watermarks#1' had the watermark 0.5)."""
    env = wv.StreamExecutionEnvironment()
    strategy = wv.WatermarkStrategy.for_generator(_HalfWhenNothingSeen).with_timestamp_assigner(
        lambda e, _: e
    )
    stream = env.from_partitions([[1, 2]]).assign_timestamps_and_watermarks(strategy)
    stream.set_parallelism(2).sink_to("out")
    with pytest.raises(FunctionResultError) as info:
        env.execute()
    assert str(info.value) == (
        "the watermark generator of _HalfWhenNothingSeen in operator 'watermarks#1' emitted a "
        "watermark that is no long: got 0.5 (expected int milliseconds in Java's long range "
        "(or None: no watermark))"
    )
