"""The lessons' exercise checks, tested outside the lessons so that no answer shows in them.

Each lesson's code cells run in-process, in order, in one namespace per lesson (shared by its
tests). The Spark twin runs on its pure-Python model instead of a JVM: ``run_twin`` /
``run_state_twin`` / ``TwinPlan.run`` are replaced by ``predict`` / ``predict_state`` /
``TwinPlan.predict``, which the lessons themselves assert give the same tables as real Spark
(nbval runs them on real Spark). Cells tagged ``jvm`` need a live ``SparkSession`` and are
skipped. A cell that fails fails the test.

For every exercise the tests know the answer and some wrong answers, and assert

* what the check says to each (the self-tests that used to sit in the lessons), and
* that no message to a wrong or missing answer contains the answer — a check's message never
  prints the expected value.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import winviz as wv
import winviz.spark as wspark
import winviz.spark.twins as wtwins
from winviz.spark.builder import TwinPlan
from winviz.spark.model import predict
from winviz.spark.state_twins import predict_state

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def lesson_path(prefix: str) -> Path:
    (path,) = NOTEBOOKS.glob(f"{prefix}_*.ipynb")
    return path


def run_lesson(prefix: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run a lesson's code cells (the Spark twin on its model) and return the namespace."""

    def model_twin(records, arrival_times, spec, **_):
        return predict(records, arrival_times, spec)

    def model_state_twin(records, arrival_times, spec, **_):
        return predict_state(records, arrival_times, spec)

    monkeypatch.setattr(wspark, "run_twin", model_twin)
    monkeypatch.setattr(wtwins, "run_twin", model_twin)
    monkeypatch.setattr(wspark, "run_state_twin", model_state_twin)
    monkeypatch.setattr(TwinPlan, "run", lambda self, **_: self.predict())
    monkeypatch.setenv("WINVIZ_RENDERER", "")
    path = lesson_path(prefix)
    cells = json.loads(path.read_text())["cells"]
    namespace: dict[str, Any] = {"__name__": f"lesson_{prefix}"}
    cwd = os.getcwd()
    os.chdir(NOTEBOOKS)
    try:
        for index, cell in enumerate(cells):
            if cell["cell_type"] != "code" or "jvm" in cell["metadata"].get("tags", []):
                continue
            source = "".join(cell["source"])
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    exec(compile(source, f"{path.name}[{index}]", "exec"), namespace)
                except Exception as exc:  # name the cell, keep the cause
                    raise AssertionError(f"{path.name} cell {index} failed: {exc!r}") from exc
    finally:
        os.chdir(cwd)
    return namespace


@pytest.fixture(scope="module")
def lessons() -> Any:
    """Lesson namespaces, each built once per test module."""
    cache: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as monkeypatch:

        def get(prefix: str) -> dict[str, Any]:
            if prefix not in cache:
                cache[prefix] = run_lesson(prefix, monkeypatch)
            return cache[prefix]

        yield get


def assert_hides(check: Any, answer: Any, wrong: list[Any]) -> None:
    """The check accepts ``answer``; no message to a wrong or missing answer names it (as a
    whole token: ``1`` is not found in ``answer_1``, ``1000`` or ``-1``)."""
    assert check(answer).startswith("Correct"), check(answer)
    shown = {repr(answer), str(answer)}
    if isinstance(answer, int):
        shown |= {f"{answer:,}", f"{answer:_}", f"{answer:,}".replace(",", " ")}
    for given in [None, *wrong]:
        message = check(given)
        assert not message.startswith("Correct"), (given, message)
        leaked = [s for s in shown if re.search(rf"(?<![\w.-]){re.escape(s)}(?![\w.])", message)]
        assert leaked == [], f"check({given!r}) reveals the answer {answer!r}: {message!r}"


def test_00_tour(lessons):
    ns = lessons("00")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(1).startswith("Correct")
    assert check_1(0).startswith("Too few") and check_1(5).startswith("Too many")
    assert check_1(None).startswith("Not answered")
    assert_hides(check_1, 1, [0, 2, 5])
    assert check_2(None).startswith("Not answered") and check_2(1500).startswith("The bound")
    assert check_2(4000).startswith("Correct")
    assert check_2(2000).endswith("try more.")
    assert check_2(5000).startswith("With 5000 ms") and check_2(0).startswith("With 0 ms")
    assert_hides(check_2, 4000, [0, 1000, 2000, 3000, 5000])


def test_01_event_time_and_watermarks(lessons):
    ns = lessons("01")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(8_499).startswith("Correct")
    assert check_1(8_500).startswith("Almost")
    assert check_1(6_499).startswith("The generator uses")
    assert_hides(check_1, 8_499, [8_500, 6_499, 6_500, 9_000, 0])
    assert check_2(1_000).startswith("Too small")
    assert check_2(2_001).startswith("Correct")
    assert check_2(2_000).startswith("Too small")
    assert check_2(5_000).endswith("try less.")
    assert_hides(check_2, 2_001, [0, 1_000, 2_000, 2_002, 5_000])


def test_02_windows(lessons):
    ns = lessons("02")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(-8).startswith("Correct")
    assert check_1(-3).startswith("That is the formula before FLINK-26334")
    assert check_1(-7).startswith("Window starts with offset 2")
    assert check_1(-13) == "The window starting at -13 does not contain -7."
    assert_hides(check_1, -8, [-3, -7, -13, -10, 2])
    assert check_2([(1, 13)]).startswith("Correct")
    assert check_2([(1, 10), (10, 13)]).startswith("Close")
    assert check_2([(1, 2)]).startswith("Every session")
    assert check_2(["x"]).startswith("Give a list")
    assert_hides(check_2, [(1, 13)], [[(1, 10), (10, 13)], [(1, 7), (7, 13)], [(1, 2)]])


def test_03_timers(lessons):
    ns = lessons("03")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(ns["tomorrow_zero_timestamp_ms"]).startswith("Correct")

    def one_day_too_early(now, tz):
        return now - (now + tz * 3600000 - 1) % 86400000 + 86400000 - 1

    def ignores_the_zone(now, tz):
        return now - now % 86400000 + 86400000

    assert check_1(one_day_too_early).endswith("*next* midnight.")  # now itself at midnight
    message = check_1(ignores_the_zone)
    assert message.startswith("tomorrow_zero(1566662398000, 8) = 1566691200000: that is not")
    assert "1566662400000" not in message  # the midnight it should have returned
    assert check_2((2, 4)).startswith("Correct")
    assert check_2((1, 4)).startswith("1 de-duplicated")
    assert check_2((2, 5)).startswith("5 firings")
    assert_hides(check_2, (2, 4), [(1, 4), (2, 5), (3, 3)])


def test_04_inside_the_window_operator(lessons):
    ns = lessons("04")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1((wv.CountTrigger.of(2), wv.CountEvictor.of(4))).startswith("Correct")
    every_one = check_1((wv.CountTrigger.of(1), wv.CountEvictor.of(4)))
    assert every_one.startswith("The window fired 6 times")
    assert "more than 4 readings" in check_1((wv.CountTrigger.of(2), wv.CountEvictor.of(5)))
    after_fn = check_1((wv.CountTrigger.of(2), wv.CountEvictor.of(4, do_evict_after=True)))
    assert "more than 4 readings" in after_fn
    three = check_1((wv.CountTrigger.of(2), wv.CountEvictor.of(3)))
    assert "newest 4 readings" in three
    # no message names the answer's trigger and evictor
    for message in (every_one, after_fn, three, check_1(None), check_1("x")):
        assert "CountTrigger.of(2)" not in message and "CountEvictor.of(4)" not in message
    assert check_2(5) == "Correct: 5 firings, at the timers [1000, 2000, 3000, 4000, 4999]."
    assert check_2(6).startswith("Too many") and check_2(4).startswith("Too few")
    assert_hides(check_2, 5, [3, 4, 6, 7])


def test_05_late_data(lessons):
    ns = lessons("05")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(1000).startswith("Too small")
    assert check_1(11904104).startswith("Correct")
    assert check_1(20000000).endswith("try less.")
    assert_hides(check_1, 11904104, [0, 1000, 11904103, 11904105, 20000000])
    for message in (check_1(1000), check_1(11904103)):  # not even the two numbers it needs
        assert "1566640319999" not in message and "1566652224102" not in message
    assert check_2(893).startswith("Correct")
    assert "cannot make it late" in check_2(891)
    assert check_2(7).startswith("There is no record")


def test_06_allowed_lateness(lessons):
    ns = lessons("06")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(7499) == "Correct: 4999 + 2500 = 7499."
    assert check_1(7498).startswith("At watermark 7498 the window is still kept")
    assert check_1(7500).endswith("not the smallest: try less.")
    assert_hides(check_1, 7499, [5000, 7498, 7500, 8000])
    assert check_2(1500).startswith("Correct")
    assert check_2(1000).startswith("Correct") and check_2(2000).startswith("Correct")
    assert check_2(2500).endswith(
        "merges with one session only: it must touch [0, 2000) and [3000, 5000)."
    )
    assert check_2(10_000).endswith("overlaps neither session: nothing merges.")


def test_07_watermark_propagation(lessons):
    ns = lessons("07")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(40).startswith("Correct")
    assert check_1(30).startswith("Too short")
    assert check_1(45).endswith("try less.")
    assert_hides(check_1, 40, [30, 39, 41, 45])
    assert check_2(361_473).startswith("Correct")
    assert check_2(360_273).endswith("look later.")
    assert check_2(400_000).startswith("At 400000 it is already there")
    assert_hides(check_2, 361_473, [360_273, 361_273, 361_673, 400_000])


def test_08_flink_vs_spark(lessons):
    ns = lessons("08")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    smallest = next(
        s
        for s in range(61)
        if sum(ns["predict"](ns["rows"], ns["arrivals"], ns["spark_spec"](delay=s * 1000)).dropped)
        == 0
    )
    assert smallest == 9
    assert check_1(9) == "Correct: 9 s is the smallest delay without drops here."
    assert check_1(8).startswith("With 8 s Spark still drops")
    assert check_1(20).endswith("not the smallest: try less.")
    assert_hides(check_1, 9, [0, 8, 10, 20])
    assert check_2({53824}).startswith("Correct")
    wrong = check_2({53824, 13182})
    assert wrong.startswith("Not quite: 0 counted click(s) missing, 1 wrongly included.")
    assert check_2({1}).startswith("Answer with a set")
    missing = check_2(set())
    assert missing.startswith("Not quite: 1 counted click(s) missing") and "53824" not in missing


def test_09_troubleshooting_clinic(lessons):
    ns = lessons("09")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(wv.hours(5)) == (
        "Correct: windows start at 2026-01-05 00:00 New York time (05:00 UTC)."
    )
    assert check_1(wv.hours(-19)).startswith("Correct")
    assert check_1(wv.hours(-5)).startswith(
        "With offset -18000000 the window of 23:30 starts at 14:00"
    )
    assert check_1(wv.hours(29)).startswith("Flink requires")
    assert_hides(check_1, wv.hours(5), [wv.hours(-5), 0, wv.hours(8), wv.hours(-8)])
    assert check_2(lambda rs: {(k, s): c for k, s, c in rs}).startswith("Correct")

    def adds_up(rs):
        out = {}
        for k, s, c in rs:
            out[(k, s)] = out.get((k, s), 0) + c
        return out

    def largest(rs):
        return {(k, s): max(c for k2, s2, c in rs if (k2, s2) == (k, s)) for k, s, _ in rs}

    assert check_2(adds_up).endswith("do not add them up.")
    message = check_2(largest)
    assert message.startswith("latest([('A', 0, 1), ('B', 0, 4), ('A', 0, 3), ('A', 0, 2)])")
    assert "('A', 0): 2" not in message  # the final count it should have kept
