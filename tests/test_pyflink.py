"""winviz.pyflink runs PyFlink DataStream programs unchanged (tests/pyflink_programs/),
with the results Java Flink 2.3 gives; each expected line is derived by hand from Flink's
rules in the comment above it."""

from __future__ import annotations

import importlib
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import winviz as wv
from winviz.pyflink import finder, runner

PROGRAMS = Path(__file__).parent / "pyflink_programs"
ROOT = Path(__file__).parent.parent


@pytest.fixture
def run(capsys):
    """Run a program as ``python -m winviz.pyflink`` does; its printed lines and results."""

    def go(name: str, *args: str) -> tuple[list[str], list[wv.JobExecutionResult]]:
        try:
            results = runner.run(str(PROGRAMS / name), list(args))
        finally:
            finder.uninstall()
        return capsys.readouterr().out.splitlines(), results

    return go


def f32(x: float) -> float:
    """A Java float (PyFlink's Types.FLOAT()) read back as a Python float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def test_windows_process_reduce_aggregate(run):
    out, results = run("windows.py")
    # all records arrive before the first periodic watermark: the windows fire at the end
    # of input (watermark MAX), event-time timers in timestamp order (window max timestamp)
    assert out == [
        # tumbling 5 s: a [0,5000) has 1 and 3, b [0,5000) 2 and 5, a [5000,10000) 4, a
        # [10000,15000) 6 — the ProcessWindowFunction yields; its output has no type: str()
        "process> ('a', 0, 5000, [1, 3], 4999)",
        "process> ('b', 0, 5000, [2, 5], 4999)",
        "process> ('a', 5000, 10000, [4], 9999)",
        "process> ('a', 10000, 15000, [6], 14999)",
        # reduce (sums of field 1) + ProcessWindowFunction, typed Types.TUPLE: Java's toString
        "reduce> (a,5000,4)",
        "reduce> (b,5000,7)",
        "reduce> (a,10000,4)",
        "reduce> (a,15000,6)",
        # sliding 10 s / 5 s averages: a [-5000,5000) (1+3)/2, b [-5000,5000) (2+5)/2,
        # a [0,10000) (1+3+4)/3, b [0,10000) 3.5, a [5000,15000) (4+6)/2, a [10000,20000) 6
        "aggregate> 2.0",
        "aggregate> 3.5",
        f"aggregate> {8 / 3}",
        "aggregate> 3.5",
        "aggregate> 5.0",
        "aggregate> 6.0",
    ]
    assert len(results) == 1 and results[0].trace is not None


def test_event_time_timers_with_value_state(run):
    out, _ = run("timers.py")
    # Types.FLOAT() fields are Java floats (32 bits); the Types.FLOAT() state keeps the
    # Python float it was given (PyFlink's state cache); every timer (ts + 2000) fires at
    # the end of input, in timestamp order, and reads the key's final sum
    alice = bob = 0.0
    for v in (110.1, 20.0, 13.1, 20.1):
        alice += f32(v)
    for v in (30.2, 53.1, 3.1, 16.1):
        bob += f32(v)
    assert out == [
        f"('Alice', 3000, {alice})",
        f"('Bob', 4000, {bob})",
        f"('Alice', 5000, {alice})",
        f"('Bob', 5000, {bob})",
        f"('Bob', 6000, {bob})",
        f"('Alice', 7000, {alice})",
        f"('Bob', 9000, {bob})",
        f"('Alice', 12000, {alice})",
    ]


def test_value_list_map_reducing_aggregating_state(run):
    out, _ = run("state_kinds.py")
    # per key: count, the values seen, counts per value, the largest, the mean; at count 3
    # the list is cleared and the value's map entry removed
    assert out == [
        "('a', 1, [3], [(3, 1)], 3, 3.0)",
        "('b', 1, [1], [(1, 1)], 1, 1.0)",
        "('a', 2, [3, 5], [(3, 1), (5, 1)], 5, 4.0)",
        f"('a', 3, [3, 5, 3], [(3, 2), (5, 1)], 5, {11 / 3})",
        "('b', 2, [1, 4], [(1, 1), (4, 1)], 4, 2.5)",
        "('a', 4, [2], [(2, 1), (5, 1)], 5, 3.25)",
    ]


def test_keyed_rich_map_flat_map_filter(run):
    out, _ = run("keyed_rich_map.py")
    # three sinks of one job: printed in the order their records arrived, sink by sink
    assert out == [
        *(f"count> ({w},{n})" for w, n in zip("abacba", (1, 1, 2, 1, 2, 3), strict=True)),
        # x sees 1, then 3 (pairs 1-3), then 4 (pairs 1-4, 3-4)
        "pairs> 1-3",
        "pairs> 1-4",
        "pairs> 3-4",
        *(f"filter> {w}" for w in "aaca"),
    ]


def test_word_count_rolling_reduce_and_sum(run):
    out, _ = run("word_count.py")
    words = ["to", "be", "or", "not", "to", "be"]
    running = [words[: i + 1].count(w) for i, w in enumerate(words)]
    assert out == [f"reduce> ({w},{n})" for w, n in zip(words, running, strict=True)] + [
        f"sum> ({w!r}, {n})" for w, n in zip(words, running, strict=True)
    ]


def test_json_rows(run):
    out, _ = run("json_rows.py")
    assert out == [
        "china> (2, {'name': 'hello', 'tel': 136, 'addr': {'country': 'China', 'city': "
        "'Shanghai'}})",
        "china> (4, {'name': 'PyFlink', 'tel': 33, 'addr': {'country': 'China', 'city': "
        "'Hangzhou'}})",
        # a Row-typed output prints as PyFlink prints a Row: its kind and fields
        "row> +I[1,Berlin,True]",
        "row> +I[2,Shanghai,True]",
        "row> +I[3,NewYork,True]",
        "row> +I[4,Hangzhou,False]",
    ]


def test_count_windows_are_java_flinks(run):
    out, _ = run("count_windows.py")
    assert out == [
        # count_window(2): GlobalWindows + PurgingTrigger(CountTrigger(2)); hi's 5 waits
        "tumbling> (hi,4)",
        "tumbling> (hello,6)",
        "tumbling> (hello,12)",
        # count_window(3, 1): CountEvictor(3) + CountTrigger(1): every element fires with
        # the last three (Java Flink; PyFlink's CountSlidingWindowAssigner waits for three)
        "sliding> (hi,1)",
        "sliding> (hello,2)",
        "sliding> (hi,4)",
        "sliding> (hello,6)",
        "sliding> (hi,9)",
        "sliding> (hello,12)",
        "sliding> (hello,16)",
    ]


def test_session_bridged_by_an_element_keeps_every_accumulator(run):
    out, _ = run("sessions.py")
    # a: [1000,6000) and [10000,15000), then 5500 -> [5500,10500) merges all three:
    # (10 + 30 + 35) / 3 = 25.0 (Java's WindowOperator merges the accumulators); b: 7.0.
    # PyFlink 2.3's Python window operator prints 32.5 here (make test-pyflink)
    assert out == ["('b', 2000, 3000, 7.0)", "('a', 1000, 15000, 25.0)"]


def test_per_window_state_on_session_windows_is_refused_as_a_state_is_taken(run):
    out, _ = run("session_window_state.py")
    # context.window_state() is taken; get_state on it raises (PyFlink's and Java's
    # MergingWindowStateStore); the key's global state counts the elements of its sessions:
    # b [2000, 7000) fires at 6999, a [1000, 8000) at 7999, a [20000, 25000) at 24999
    assert out == [
        "('b', 2000, 7000, True, 1)",
        "('a', 1000, 8000, True, 2)",
        "('a', 20000, 25000, True, 3)",
    ]


def test_batch_mode(run):
    out, results = run("batch_mode.py")
    assert out == [
        # one final count per key, keys in the sorter's order (length first: a, c, bb)
        "count> (a,2)",
        "count> (c,1)",
        "count> (bb,3)",
        # key j, then k (its records by timestamp); watermark MIN while a key's records go
        # in, its timers at the key's end
        f"process> ('element', 'j', 200, {wv.MIN})",
        "process> ('timer', 'j', 300)",
        f"process> ('element', 'k', 100, {wv.MIN})",
        f"process> ('element', 'k', 300, {wv.MIN})",
        "process> ('timer', 'k', 200)",
        "process> ('timer', 'k', 400)",
    ]
    assert len(results) == 2


def test_number_sequence_source(run):
    out, _ = run("number_sequence.py")
    # evens 2..10 keyed by n % 3: running sums per key
    assert out == ["(2, 2)", "(1, 4)", "(0, 6)", "(2, 10)", "(1, 14)"]


def test_file_sink_writes_a_part_file(run, tmp_path):
    out, _ = run("file_sink.py", str(tmp_path))
    assert out == []
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    # bucket of processing time 0 (UTC), prefix/suffix from the OutputFileConfig
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [
        "1970-01-01--00/prefix-winviz-0-0.ext"
    ]
    # BATCH: final counts, keys in the sorter's order (length first)
    assert files[0].read_text() == "(be,2)\n(or,1)\n(to,2)\n(not,1)\n"


def test_execute_runs_only_what_was_added_since(run):
    out, results = run("execute_twice.py")
    assert out == [
        "first> 10",
        "first> 20",
        "first> 30",
        "second> 2",
        "second> 3",
        "collected [101, 102, 103]",
        "limit [-1, -2]",
    ]
    assert [r.job_name for r in results] == ["first", "second", "collect", "collect"]
    # the second job has only the second sink: the first map is not run again
    assert [list(r.outputs) for r in results[:2]] == [["print#1"], ["print#1"]]
    assert [op for op in results[1].trace.operators() if op.startswith("map")] == []


def test_execute_with_nothing_to_run_is_refused_as_flink_refuses_it():
    from winviz.pyflink.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1])
    with pytest.raises(wv.IllegalStateError, match="No operators defined"):
        env.execute()
    # an operator without a sink is run (Flink's transformations include it)
    env.from_collection([1, 2]).map(lambda x: x * 2, output_type=None).name("double")
    result = env.execute()
    assert result.metrics["double"]["num_records_in"] == 2


def test_side_output_by_yielding_a_tag(run):
    out, _ = run("side_outputs.py")
    assert out == ["even> 200", "even> 400", "odd> 1", "odd> 3", "odd> 5"]


def test_trace_and_page_of_a_run(tmp_path, capsys):
    trace, page = tmp_path / "run.parquet", tmp_path / "run.html"
    try:
        status = runner.main(
            ["--trace", str(trace), "--html", str(page), str(PROGRAMS / "windows.py")]
        )
    finally:
        finder.uninstall()
    assert status == 0
    loaded = wv.load_trace(trace)
    answer = wv.why_fired(loaded, "a", (0, 5000))
    assert "end of input" in answer.sentence or "watermark" in answer.sentence
    from winviz.viz import pages

    html = page.read_text()
    assert pages.check_page(html) == []
    assert html.count('class="winviz-chart"') == 3
    assert 'role="note"' not in html  # a run that finished: no failure note


def test_last_result_and_why_fired_in_a_notebook_session():
    import winviz.pyflink as wp

    wp.install()
    try:
        import pyflink.datastream
        from pyflink.common import Time
        from pyflink.datastream import StreamExecutionEnvironment
        from pyflink.datastream.window import TumblingEventTimeWindows

        assert pyflink.datastream is sys.modules["winviz.pyflink.datastream"]
        env = StreamExecutionEnvironment.get_execution_environment()
        ds = env.from_collection([("k", 1), ("k", 7)])
        ds = ds.assign_timestamps_and_watermarks(_strategy())
        ds.key_by(lambda e: e[0]).window(TumblingEventTimeWindows.of(Time.milliseconds(5))).reduce(
            lambda a, b: (a[0], a[1] + b[1])
        ).execute_and_collect()
        result = wp.last_result()
        assert [r.value for r in result.outputs["collect#1"]] == [("k", 1), ("k", 7)]
        assert wv.why_fired(result.trace, "k", (0, 5)).table.shape[0] == 1
    finally:
        wp.uninstall()


def _strategy():
    from pyflink.common import WatermarkStrategy
    from pyflink.common.watermark_strategy import TimestampAssigner

    class Second(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    return WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Second())


# -- out of scope: a clear error naming the feature, never an AttributeError ---------------


def _pf(path: str):
    """``module`` or ``module:name`` of the (aliased) pyflink package."""
    module, _, name = path.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, name) if name else loaded


def _env():
    return _pf("pyflink.datastream:StreamExecutionEnvironment").get_execution_environment()


@pytest.mark.parametrize(
    ("call", "feature"),
    [
        (lambda: _pf("pyflink.table"), "Table API"),
        (lambda: _pf("pyflink.table:StreamTableEnvironment"), "Table API"),
        (lambda: _pf("pyflink.datastream.connectors.kafka:KafkaSource"), "connectors.kafka"),
        (lambda: _pf("pyflink.datastream.connectors:KafkaSource"), "KafkaSource"),
        (lambda: _pf("pyflink.datastream:BroadcastStream"), "BroadcastStream"),
        (lambda: _pf("pyflink.datastream:AsyncDataStream"), "AsyncDataStream"),
        (
            lambda: _pf("pyflink.datastream.state:StateTtlConfig").new_builder(
                _pf("pyflink.common:Time").seconds(1)
            ),
            "State TTL",
        ),
        (
            lambda: _pf("pyflink.datastream.state:ValueStateDescriptor")("s").enable_time_to_live(
                None
            ),
            "State TTL",
        ),
        (lambda: _env().add_source(None), "add_source"),
        (lambda: _env().from_collection([1]).add_sink(None), "add_sink"),
        (lambda: _env().create_input(None), "StreamExecutionEnvironment.create_input"),
        (lambda: _env().from_collection([1]).key_by(len).broadcast(), "broadcast"),
    ],
)
def test_out_of_scope_names_the_feature(call, feature):
    import winviz.pyflink as wp

    wp.install()
    try:
        with pytest.raises(wp.PyFlinkFeatureNotSupported) as caught:
            call()
    finally:
        wp.uninstall()
    assert feature in str(caught.value)
    assert "not supported by winviz.pyflink" in str(caught.value)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m winviz.pyflink ARGS`` in a fresh interpreter, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "winviz.pyflink", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_runner_reports_an_unsupported_feature_without_a_traceback(tmp_path):
    job = tmp_path / "table_job.py"
    job.write_text(
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "from pyflink.table import StreamTableEnvironment\n"
    )
    done = _cli(str(job))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "Table API" in done.stderr and "line 2" in done.stderr


def test_importing_winviz_installs_no_finder():
    code = (
        "import sys, winviz, winviz.pyflink\n"
        "from winviz.pyflink.finder import PyFlinkFinder\n"
        "assert not any(isinstance(f, PyFlinkFinder) for f in sys.meta_path)\n"
        "import importlib.util; assert importlib.util.find_spec('pyflink') is None\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_print_writes_java_types_as_java_does():
    from winviz.pyflink.common import Row, Types
    from winviz.pyflink.common.typeinfo import java_float_text

    # Double.toString: decimal in [10^-3, 10^7), else computerized scientific notation
    assert [java_float_text(v) for v in (25.0, 1e-5, 1e7, 9999999.0, 0.001, -0.5)] == [
        "25.0",
        "1.0E-5",
        "1.0E7",
        "9999999.0",
        "0.001",
        "-0.5",
    ]
    # Float.toString: the shortest digits of the 32-bit float
    assert java_float_text(f32(110.1), single=True) == "110.1"
    typed = Types.TUPLE([Types.STRING(), Types.FLOAT(), Types.DOUBLE(), Types.BOOLEAN()])
    assert typed.text(("a", f32(110.1), 25.0, True)) == "(a,110.1,25.0,true)"
    assert Types.ROW([Types.INT(), Types.STRING()]).text(Row(1, "x")) == "+I[1,x]"
    assert Types.PICKLED_BYTE_ARRAY().text(("a", True)) == "('a', True)"
    # what a function receives after the value crossed Java
    assert Types.TUPLE([Types.FLOAT()]).internal((110.1,)) == (f32(110.1),)
    row = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]).internal((1, "x"))
    assert (row.id, row["name"], row[0]) == (1, "x", 1)


def test_a_program_imports_modules_beside_it(tmp_path, capsys):
    (tmp_path / "helper_pf.py").write_text("VALUES = [4, 2]\n")
    job = tmp_path / "job.py"
    job.write_text(
        "from helper_pf import VALUES\n"
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection(VALUES).map(lambda v: v + 1).print()\n"
        "env.execute()\n"
    )
    try:
        runner.run(str(job), [])
    finally:
        finder.uninstall()
        sys.modules.pop("helper_pf", None)
    assert capsys.readouterr().out.splitlines() == ["5", "3"]
    assert str(tmp_path) not in sys.path


BAD_TIMESTAMP_JOB = """\
from pyflink.common import Duration, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return "oops" if value[1] == 3 else value[2]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 1, 1000), ("a", 2, 2000), ("a", 3, 3000), ("a", 4, 4000)]
strategy = WatermarkStrategy.for_bounded_out_of_orderness(
    Duration.of_millis(0)
).with_timestamp_assigner(EventTime())
env.from_collection(data).assign_timestamps_and_watermarks(strategy).map(lambda v: v[1]).print()
env.execute("bad ts")
"""

OOPS = (
    "record 2, field 'timestamp', value 'oops': unparseable timestamp string; expected ISO "
    "8601 such as '2019-08-24 17:51:44.152' or '2019-08-24T09:51:44.152Z'"
)


def _main_fails(tmp_path, capsys, program: str, *, html: bool = True) -> tuple[Path, str, str]:
    job = tmp_path / "prog.py"
    job.write_text(program)
    args = ["--trace", str(tmp_path / "X.parquet")]
    args += ["--html", str(tmp_path / "X.html")] if html else []
    try:
        status = runner.main([*args, str(job)])
    finally:
        finder.uninstall()
    assert status == 1
    captured = capsys.readouterr()
    return job, captured.out, captured.err


def test_runner_keeps_the_trace_of_a_run_that_failed_on_bad_input(tmp_path):
    """A timestamp assigner that returns "oops" for the 3rd record: the CLI says which program
    and which record/field/value, without a traceback, and still writes the trace and the
    page of everything up to the failure (exit status 1)."""
    job = tmp_path / "prog.py"
    job.write_text(BAD_TIMESTAMP_JOB)
    trace, page = tmp_path / "X.parquet", tmp_path / "X.html"
    done = _cli("--trace", str(trace), "--html", str(page), str(job))
    assert done.returncode == 1
    assert done.stdout == "1\n2\n"  # Flink's print sink printed the records before the failure
    assert done.stderr.splitlines() == [
        f"winviz.pyflink: {job} failed: InputError: {OOPS}",
        f'  at {job}, line 18: env.execute("bad ts")',
        f"winviz.pyflink: trace up to the failure written to {trace}",
        f"winviz.pyflink: charts up to the failure written to {page}",
    ]
    loaded = wv.load_trace(trace)
    assert [(r.kind, r.ts, r.detail) for r in loaded] == [
        ("arrival", None, (("a", 1, 1000), 0)),
        ("emitted", 1000, 1),
        ("sink", 1000, ("print#1", 1)),
        ("arrival", None, (("a", 2, 2000), 1)),
        ("emitted", 2000, 2),
        ("sink", 2000, ("print#1", 2)),
        ("arrival", None, (("a", 3, 3000), 2)),
        ("error", None, OOPS),
    ]
    from winviz.viz import pages

    html = page.read_text()
    assert pages.check_page(html) == []
    assert html.count('class="winviz-chart"') == 3
    # the page says, above its charts, that the run failed and why (as text, escaped)
    note = (
        f"prog.py failed: InputError: {OOPS}. The charts show each run's trace up to the failure."
    )
    assert html.count('role="note"') == 1
    assert f'<p role="note"><strong>{pages.text(note)}</strong></p>' in html


def test_runner_shows_the_user_function_lines_of_an_error_it_raised(tmp_path, capsys):
    program = (
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "\n"
        "\n"
        "def half(v):\n"
        "    return 10 // (v - 2)\n"
        "\n"
        "\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1, 2, 3]).map(half).print()\n"
        "env.execute()\n"
    )
    job, out, err = _main_fails(tmp_path, capsys, program, html=False)
    assert out == "-10\n"  # 10 // (1 - 2), printed before record 1 failed
    assert err.splitlines() == [
        f"winviz.pyflink: {job} failed: UserFunctionError: map in operator 'map' raised "
        "ZeroDivisionError: integer division or modulo by zero; record 1; value 2",
        "  in the user function (most recent call last):",
        f'    File "{job}", line 5, in half',
        "      return 10 // (v - 2)",
        "             ~~~^^~~~~~~~~",
        f"winviz.pyflink: trace up to the failure written to {tmp_path / 'X.parquet'}",
    ]
    assert [r.kind for r in wv.load_trace(tmp_path / "X.parquet")][-1] == "error"


def test_runner_shows_only_the_programs_frames_of_a_name_error(tmp_path, capsys):
    program = "import os\n\nprint(undefined_name)\n"
    job, out, err = _main_fails(tmp_path, capsys, program)
    assert out == ""
    assert err.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{job}", line 3, in <module>',
        "    print(undefined_name)",
        "          ^^^^^^^^^^^^^^",
        "NameError: name 'undefined_name' is not defined",
        "winviz.pyflink: no job ran before the failure; nothing written",
    ]
    assert not (tmp_path / "X.parquet").exists() and not (tmp_path / "X.html").exists()


def test_runner_shows_a_syntax_error_as_python_does(tmp_path, capsys):
    job, out, err = _main_fails(tmp_path, capsys, "x = (\n")
    assert out == ""
    assert err.splitlines() == [
        f'  File "{job}", line 1',
        "    x = (",
        "        ^",
        "SyntaxError: '(' was never closed",
        "winviz.pyflink: no job ran before the failure; nothing written",
    ]


def test_runner_keeps_the_runs_before_a_program_error(tmp_path, capsys):
    """A first job ran, then the program failed on its own: the first run's trace is kept."""
    program = (
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1, 2]).print()\n"
        "env.execute()\n"
        "raise KeyError('late')\n"
    )
    job, out, err = _main_fails(tmp_path, capsys, program, html=False)
    assert out == "1\n2\n"
    assert err.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{job}", line 5, in <module>',
        "    raise KeyError('late')",
        "KeyError: 'late'",
        f"winviz.pyflink: trace up to the failure written to {tmp_path / 'X.parquet'}",
    ]
    assert [r.kind for r in wv.load_trace(tmp_path / "X.parquet")].count("sink") == 2
