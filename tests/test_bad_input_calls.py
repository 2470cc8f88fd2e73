"""Bad arguments a new user's trial found raising Python's own errors, or taken without a word:
the duration helpers, the key-group functions, the valve, load_trace, why_dropped, the
environment's builders, chart sizes and the command lines. Each now raises a winviz.errors
type whose message names the field and the value and says what was expected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jobs import union_all_idle

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError, LongRangeError, PositionError
from winviz.pyflink.runner import main as pyflink_main
from winviz.viz.lessons import main as lessons_main


def _fails(call: Any) -> Exception:
    with pytest.raises(InputError) as err:
        call()
    return err.value


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (
            lambda: wv.seconds("5"),
            ArgumentTypeError,
            "field 'n', value '5': seconds() takes a number, not str (expected an int or a "
            "finite float)",
        ),
        (
            lambda: wv.hours(None),
            ArgumentTypeError,
            "field 'n', value None: hours() takes a number, not NoneType (expected an int or a "
            "finite float)",
        ),
        (
            lambda: wv.seconds(True),
            ArgumentTypeError,
            "field 'n', value True: seconds() takes a number, not bool (expected an int or a "
            "finite float)",
        ),
        (
            lambda: wv.seconds(float("nan")),
            InputError,
            "field 'n', value nan: seconds() takes a finite number (expected a finite float)",
        ),
        (
            lambda: wv.minutes(float("inf")),
            InputError,
            "field 'n', value inf: minutes() takes a finite number (expected a finite float)",
        ),
        (
            lambda: wv.seconds(2**70),
            LongRangeError,
            "field 'n', value 1180591620717411303424: seconds(1180591620717411303424) is "
            "1180591620717411303424000 ms, outside Java's long range, so Flink could not hold "
            "it (expected -2**63 <= ms <= 2**63-1)",
        ),
        (
            lambda: wv.murmur_hash("x"),
            ArgumentTypeError,
            "field 'code', value 'x': murmur_hash() takes a key's Java hashCode, not str "
            "(expected an int, e.g. java_hash_code('x'))",
        ),
        (
            lambda: wv.compute_default_max_parallelism("a"),
            ArgumentTypeError,
            "field 'parallelism', value 'a': a parallelism must be an int, not str (expected an "
            "int in 1..32768)",
        ),
        (
            lambda: wv.StatusWatermarkValve(0),
            InputError,
            "field 'num_channels', value 0: num_channels must be at least 1 (expected an int >= 1)",
        ),
        (
            lambda: wv.load_trace(5),
            ArgumentTypeError,
            "field 'path', value 5: load_trace() takes the path of a trace file, not int "
            "(expected a str or pathlib.Path of a trace file)",
        ),
    ],
)
def test_helpers_name_the_argument_and_what_was_expected(call, kind, message) -> None:
    error = _fails(call)
    assert type(error) is kind
    assert str(error) == message


def test_the_helpers_still_convert() -> None:
    assert (wv.seconds(1.5), wv.minutes(2), wv.hours(0.5)) == (1_500, 120_000, 1_800_000)
    assert wv.compute_default_max_parallelism(100) == 256
    assert wv.murmur_hash(wv.java_hash_code("x")) == wv.murmur_hash(120)


def _trace() -> wv.Trace:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([("a", 1_000), ("b", 2_000), ("a", 900)]).sink_to("out")
    return env.execute().trace


def test_why_dropped_names_the_valid_index_range() -> None:
    error = _fails(lambda: wv.why_dropped(_trace(), -1))
    assert str(error) == (
        "field 'index', value -1: no arrival record with this index in the trace (expected a "
        "source record index from 0 to 2)"
    )


@pytest.mark.parametrize(
    ("window", "kind", "message"),
    [
        (
            wv.TimeWindow(5, 1),
            InputError,
            "field 'window', value [5, 1): a window's end must be after its start (expected "
            "[start, end) with end > start, as every window assigner makes)",
        ),
        (
            wv.TimeWindow(0.5, 1),
            ArgumentTypeError,
            "field 'window', value [0.5, 1): not a window (expected a TimeWindow or a (start, "
            "end) pair of ints)",
        ),
    ],
)
def test_a_window_asked_about_is_checked(window, kind, message) -> None:
    error = _fails(lambda: wv.why_fired(_trace(), "a", window))
    assert type(error) is kind
    assert str(error) == message


_ENV = wv.StreamExecutionEnvironment


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (
            lambda: _ENV(trace="yes"),
            ArgumentTypeError,
            "field 'trace', value 'yes': trace turns the trace on or off (expected True (the "
            "default) or False)",
        ),
        (
            lambda: _ENV().from_partitions(5),
            ArgumentTypeError,
            "field 'partitions', value 5: from_partitions takes the records (expected a list of "
            "partitions, each a list of records)",
        ),
        (
            lambda: _ENV().from_partitions([[1], 5]),
            ArgumentTypeError,
            "field 'partitions[1]', value 5: from_partitions takes the records (expected an "
            "iterable of records (a list, a tuple, a generator))",
        ),
        (
            lambda: _ENV().from_pandas(5),
            ArgumentTypeError,
            "field 'frame', value 5: from_pandas takes a pandas DataFrame, not int (expected a "
            "pandas DataFrame (for a list of records: from_collection))",
        ),
        (
            lambda: _ENV().enable_checkpointing(-1),
            InputError,
            "field 'interval', value -1: checkpoint interval must be > 0 (expected ms > 0 (or "
            "None with at_records: checkpoints at record cuts only))",
        ),
        (
            lambda: _ENV().set_watermark_alignment_buffer_size("x"),
            ArgumentTypeError,
            "field 'buffer_size', value 'x': buffer_size must be an int, got str (expected an "
            "int >= 0 (Flink's default 3; 0: check the latest watermark))",
        ),
    ],
)
def test_the_environment_refuses_bad_arguments_at_the_call(call, kind, message) -> None:
    error = _fails(call)
    assert type(error) is kind
    assert str(error) == message


@pytest.mark.parametrize(
    ("chart", "size", "kind", "message"),
    [
        (
            wv.timeline,
            {"width": "x"},
            ArgumentTypeError,
            "field 'width', value 'x': width must be an int (px), not str (expected an int >= 1 "
            "(px))",
        ),
        (
            wv.timeline,
            {"width": -5},
            InputError,
            "field 'width', value -5: width must be at least 1 px (expected an int >= 1 (px))",
        ),
        (
            wv.window_lanes,
            {"width": 0},
            InputError,
            "field 'width', value 0: width must be at least 1 px (expected an int >= 1 (px))",
        ),
        (
            wv.skew_chart,
            {"height": 2.5},
            ArgumentTypeError,
            "field 'height', value 2.5: height must be an int (px), not float (expected an int "
            ">= 1 (px))",
        ),
        (
            wv.propagation_chart,
            {"height": True},
            ArgumentTypeError,
            "field 'height', value True: height must be an int (px), not bool (expected an int "
            ">= 1 (px))",
        ),
        (
            wv.scrubber,
            {"width": -1},
            InputError,
            "field 'width', value -1: width must be at least 1 px (expected an int >= 1 (px))",
        ),
        (
            wv.timers_chart,
            {"height": 10},
            InputError,
            "field 'height', value 10: height must be at least 60 px (expected an int >= 60 (px))",
        ),
    ],
)
def test_every_chart_checks_its_size_the_same_way(chart, size, kind, message) -> None:
    error = _fails(lambda: chart(_trace(), **size))
    assert type(error) is kind
    assert str(error) == message


def test_pyflink_names_a_missing_program_in_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        pyflink_main(["/nonexistent/job.py"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        "python -m winviz.pyflink: error: /nonexistent/job.py: no such file (expected the path "
        "of a .py program)"
    )
    assert not any("Traceback" in line for line in err)


def test_pyflink_says_when_an_asked_for_page_is_not_written(tmp_path: Path, capsys) -> None:
    job = tmp_path / "no_job.py"
    job.write_text("x = 1\n", encoding="utf-8")
    page = tmp_path / "page.html"
    assert pyflink_main(["--html", str(page), str(job)]) == 1
    assert capsys.readouterr().err == (
        f"winviz.pyflink: the program ran no job (no execute() call); no page written to {page}\n"
    )
    assert not page.exists()
    assert pyflink_main([str(job)]) == 0  # nothing was asked for: only the note


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--jobs", "0"], "argument --jobs: 0 is not >= 1 (expected an int >= 1)"),
        (["--jobs", "x"], "argument --jobs: 'x' is not an int (expected an int >= 1)"),
        (
            ["--timeout", "-1", "--only", "00_tour"],
            "argument --timeout: -1 is not >= 1 (expected an int >= 1)",
        ),
    ],
)
def test_lessons_check_their_arguments_before_building(argv, line, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        lessons_main(argv)
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err.splitlines()[-1] == f"python -m winviz.viz.lessons: error: {line}"
    )


def test_pyflink_command_line_exits_2_without_a_traceback() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "winviz.pyflink", "/nonexistent.py"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines()[-1].endswith(
        "/nonexistent.py: no such file (expected the path of a .py program)"
    )


def test_a_trace_position_past_its_records_names_the_positions_there_are() -> None:
    """``trace[i]`` out of range: still an ``IndexError`` (iteration and slicing idioms keep
    working), and it says which positions the trace has."""
    trace = union_all_idle().trace
    assert (len(trace), trace[-41].seq, trace[40].seq) == (41, 0, 40)
    for i in (41, -42):
        with pytest.raises(PositionError) as caught:
            trace[i]
        assert isinstance(caught.value, IndexError)
        assert str(caught.value) == (
            f"field 'i', value {i}: trace[i] has no record there "
            "(expected a position in 0..40 or -41..-1; the trace has 41 records)"
        )


def test_why_arguments_are_refused_naming_field_value_and_expected() -> None:
    """``why_*``: the source, the window operator and ``arrival`` as the other entry points."""
    from jobs import merge_chain_job

    trace = merge_chain_job().trace
    env = wv.StreamExecutionEnvironment(trace=False)
    env.from_collection([1]).map(lambda v: v)
    untraced = env.execute()
    cases = [
        (lambda: wv.why_dropped(trace, 0, arrival=5), InputError,
         "field 'arrival', value 5: source record 0 arrived 1 time(s) "
         "(expected an int from 0 to 0)"),
        (lambda: wv.why_dropped(trace, 0, arrival="0"), ArgumentTypeError,
         "field 'arrival', value '0': source record 0 arrived 1 time(s) "
         "(expected an int from 0 to 0)"),
        (lambda: wv.why_fired(None, "a", (0, 5000)), ArgumentTypeError,
         "field 'source', value 'NoneType': no trace to read "
         "(expected a winviz Trace or a job result with .trace)"),
        (lambda: wv.why_fired(untraced, "a", (0, 5000)), ArgumentTypeError,
         "field 'source', value 'JobExecutionResult': no trace to read: the job ran with "
         "trace=False (expected a winviz Trace or a job result with .trace)"),
        (lambda: wv.why_fired(union_all_idle().trace, "a", (0, 5000)), InputError,
         "field 'source': the trace has no window operator "
         "(expected a trace with assigned or fired records)"),
    ]  # fmt: skip
    for call, kind, message in cases:
        with pytest.raises(kind) as caught:
            call()
        assert str(caught.value) == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ((10, 0, 1), "control 'bound': expected min <= max and step > 0, got (10, 0, 1)"),
        ((0, 10, 0), "control 'bound': expected min <= max and step > 0, got (0, 10, 0)"),
        (
            (0, 10),
            "control 'bound': a slider is (min, max, step) or (min, max, step, value) of "
            "numbers, got (0, 10)",
        ),
        ([], "control 'bound': a dropdown needs at least one option"),
        (
            "fast",
            "control 'bound': expected (min, max, step) for a slider, a list or dict of "
            "options for a dropdown, or an ipywidgets widget; got str 'fast'",
        ),
    ],
)
def test_a_control_spec_that_makes_no_control_is_an_input_error(spec, message):
    from winviz.viz.controls import ControlSpecError
    from winviz.viz.explore import explore

    def job(records, bound=0):
        raise AssertionError("never run: the controls are checked first")

    with pytest.raises(ControlSpecError) as info:
        explore(job, [wv.Record(1, "a", 1000)], bound=spec)
    assert str(info.value) == message
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)
