"""The lessons' exercise checks, tested outside the lessons so that no answer shows in them.

Each lesson's code cells run in-process, in order, in one namespace per lesson (shared by its
tests). The Spark twin runs on its pure-Python model instead of a JVM: ``run_twin`` /
``run_state_twin`` / ``TwinPlan.run`` are replaced by ``predict`` /
``predict_state`` / ``TwinPlan.predict``, which the lessons
themselves assert give the same tables as real Spark (nbval runs them on real Spark). Cells
tagged ``jvm`` need a live ``SparkSession`` and are skipped. A cell that fails fails the test.

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
from test_lesson_answers_hidden import ANSWERS

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


PRINTED = "__printed__"  # what the lesson's cells printed, as "Run All" shows it


def lesson_cells(prefix: str) -> list[dict[str, Any]]:
    return json.loads(lesson_path(prefix).read_text())["cells"]


def run_solution(prefix: str, ns: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Run the code of a lesson's worked solution — a collapsed markdown cell tagged
    ``solution``, which "Run All" never runs — in a copy of the lesson's namespace; return that
    namespace and what the code printed."""
    (solution,) = [c for c in lesson_cells(prefix) if "solution" in c["metadata"].get("tags", [])]
    assert solution["cell_type"] == "markdown"
    (code,) = re.findall(r"```python\n(.*?)```", "".join(solution["source"]), re.S)
    namespace = dict(ns)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(code, namespace)
    return namespace, printed.getvalue()


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
    printed: list[str] = []
    cwd = os.getcwd()
    os.chdir(NOTEBOOKS)
    try:
        for index, cell in enumerate(cells):
            if cell["cell_type"] != "code" or "jvm" in cell["metadata"].get("tags", []):
                continue
            source = "".join(cell["source"])
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    exec(compile(source, f"{path.name}[{index}]", "exec"), namespace)
                except Exception as exc:  # name the cell, keep the cause
                    raise AssertionError(f"{path.name} cell {index} failed: {exc!r}") from exc
            printed.append(out.getvalue())
    finally:
        os.chdir(cwd)
    namespace[PRINTED] = "".join(printed)
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
    # product clicks in [20000, 25000): 2 by event time, 3 by arrival, 5 in [20000, 30000)
    assert check_1((2, 3)).startswith("Correct: 2 by event time, 3 by arrival")
    assert check_1((3, 2)).startswith("The two counts are swapped")
    assert check_1((5, 3)).startswith("Your first count is that of the 10-second window")
    assert check_1((1, 3)).startswith("Look again at the event-time count")
    assert check_1((2, 2)).startswith("The event-time count is right")
    assert check_1(2).startswith("Answer with a pair of ints")
    assert check_1(None).startswith("Not answered")
    assert_hides(check_1, (2, 3), [(3, 2), (5, 3), (1, 3), (2, 2), (3, 3)])
    # the answer is no count the lesson prints: counts has 10-second windows only
    assert 2 not in set(ns["counts"].query("page == 'product'").clicks)
    # exercise 2 asks for the rule: fires at +15,073 for 11652 - 10000 < bound <= 14711 - 10000
    assert check_2(lambda bound: 1_652 < bound <= 4_711).startswith(
        "Correct: the emission before u6's click must stay below 9999 (11652 - bound - 1"
    )
    assert check_2(lambda bound: 2_000 <= bound <= 4_000) == (
        "With bound 1653 the window does fire at +15,073 ms, but your rule says no. Which click's "
        "timestamp set the watermark at that emission, and did it reach 9999 — and the emission "
        "before it?"
    )
    assert check_2(lambda bound: 1_652 <= bound <= 4_711).startswith(
        "With bound 1652 your rule says yes, but the window fires earlier, at +13,073 ms."
    )
    assert check_2(lambda bound: bound <= 4_711).startswith(
        "With bound 0 your rule says yes, but the window fires earlier, at +11,273 ms."
    )
    assert check_2(lambda bound: bound > 1_652).startswith(
        "With bound 4712 your rule says yes, but the window fires later, at +16,873 ms."
    )
    assert check_2(4_000).startswith("Answer with a function")
    for wrong in (lambda b: 2_000 <= b <= 4_000, lambda b: b > 1_652, lambda b: False):
        assert "14711 - bound - 1" not in check_2(wrong)  # the rule is never shown


def test_01_event_time_and_watermarks(lessons):
    ns = lessons("01")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    assert check_1(8_499).startswith("Correct")
    assert check_1(8_500).startswith("Almost")
    assert check_1(6_499).startswith("The generator uses")
    assert_hides(check_1, 8_499, [8_500, 6_499, 6_500, 9_000, 0])
    # exercise 2 asks for the rule (a function of the bound), not a number to bisect
    assert check_2(lambda bound: 12_000 - bound - 1 < 9_999).startswith("Correct")
    assert check_2(lambda bound: bound > 2_000).startswith("Correct")  # the same rule
    assert check_2(lambda bound: bound >= 2_000) == (
        "With bound 2000 your rule says f is kept, but the run drops it. Look at the watermark "
        "when f arrives: which event set it, at which tick, and has it reached [0, 10000)'s max "
        "timestamp?"
    )
    # Spark's watermark (no - 1): wrong by one, and the message says where
    assert check_2(lambda bound: 12_000 - bound < 9_999).startswith(
        "With bound 2001 your rule says f is dropped, but the run keeps it."
    )
    assert check_2(lambda bound: True).startswith("With bound 0 your rule says f is kept")
    assert check_2(2_001).startswith("Answer with a function")
    for wrong in (lambda b: b >= 2_000, lambda b: 12_000 - b < 9_999, lambda b: False):
        assert "12000 - bound - 1" not in check_2(wrong)  # the rule is never shown


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

    def today_zero(now, tz):
        return now - (now + tz * 3600000) % 86400000

    def day_before_at_midnight(now, tz):  # a now at midnight gives the midnight before it
        return now - (now + tz * 3600000 - 1) % 86400000 - 1

    def ignores_the_zone(now, tz):
        return now - now % 86400000

    assert check_1(today_zero).startswith("Correct")
    # the seed's function, shown in the lesson, is not the answer
    seed = check_1(ns["tomorrow_zero_timestamp_ms"])
    assert seed.endswith("That is the seed's next midnight; the question asks for the one before.")
    message = check_1(day_before_at_midnight)
    assert message.startswith("today_zero(1566662400000, 8) = 1566576000000: that is not")
    assert message.endswith("first millisecond of its own day.")
    message = check_1(ignores_the_zone)
    assert message.startswith("today_zero(1566662398000, 8) = 1566604800000: that is not")
    assert "1566576000000" not in message  # the midnight it should have returned
    assert check_2((2, 4)).startswith("Correct")
    assert check_2((1, 4)).startswith("1 de-duplicated")
    assert check_2((2, 5)).startswith("5 firings")
    assert_hides(check_2, (2, 4), [(1, 4), (2, 5), (3, 3)])


def test_04_inside_the_window_operator(lessons):
    ns = lessons("04")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    truth = [[20.0, 20.5], [20.0, 20.5, 21.0, 23.5], [21.0, 23.5, 23.0, 27.0]]
    assert check_1(truth).startswith("Correct: CountTrigger.of(2) fires at every second")
    every_one = [
        [20.0],
        [20.0, 20.5],
        [20.0, 20.5, 21.0],
        [20.0, 20.5, 21.0, 23.5],
        [20.5, 21.0, 23.5, 23.0],
        [21.0, 23.5, 23.0, 27.0],
    ]  # countWindow(4, 1)
    assert check_1(every_one).startswith("6 pane(s): how many times")
    evict_after = [[20.0, 20.5], [20.0, 20.5, 21.0, 23.5], [20.0, 20.5, 21.0, 23.5, 23.0, 27.0]]
    assert check_1(evict_after) == (
        "A pane holds more than 4 readings: the evictor runs before the function."
    )
    three = [[20.0, 20.5], [20.5, 21.0, 23.5], [23.5, 23.0, 27.0]]  # countWindow(3, 2)
    assert check_1(three).startswith("Not quite")
    oldest = [[20.0, 20.5], [20.0, 20.5, 21.0, 23.5], [20.0, 20.5, 21.0, 23.5]]
    assert check_1(oldest) == "Each pane ends with the reading that made the window fire."
    assert check_1((1, 2)).startswith("Answer with a list of panes")
    assert_hides(check_1, truth, [every_one, evict_after, three, oldest, []])
    # what the lesson shows of countWindow is the (3, 1) recipe, not these panes
    assert [r.value for r in ns["count_window"].outputs["panes"]][-1] != truth[-1]
    # of(700): fire-time timers 700, 1400, ..., 4900 (epoch-aligned), then min(5600, 4999) = 4999;
    # each fires at the first watermark that reaches it, those registered during an advance in it
    truth_2 = [(700, 1199), (1400, 2599), (2100, 2599), (2800, 3099), (3500, 4399), (4200, 4399),
               (4900, 5999), (4999, 5999)]  # fmt: skip
    assert check_2(truth_2).startswith("Correct: each fire-time timer registers the next")
    not_aligned = [(500, 499), *truth_2[1:]]
    assert check_2(not_aligned).startswith("A timer that is not a multiple of 700")
    no_cap = [*truth_2[:-1], (5600, 5999)]  # past maxTimestamp
    assert check_2(no_cap).startswith("The timers are not the ones that fire")
    assert check_2(truth_2[:-1]).startswith("The timers are not the ones that fire")
    one_per_watermark = [(700, 1199), (1400, 2599), (2100, 3099), (2800, 4399), (3500, 5999),
                         (4200, 5999), (4900, 5999), (4999, 5999)]  # fmt: skip
    assert check_2(one_per_watermark).startswith("The timers are right; look at the watermarks")
    assert check_2([(700, 499), *truth_2[1:]]).startswith("A timer fires at a watermark below it")
    assert check_2(8).startswith("Answer with a list of (timer, watermark) pairs")
    assert_hides(check_2, truth_2, [not_aligned, no_cap, one_per_watermark, []])
    # the worked solution (a markdown cell, never run by Run All) gives the answer
    _, printed = run_solution("04", ns)
    assert printed == f"{truth} {check_1(truth)}\n"


def test_05_late_data(lessons):
    ns = lessons("05")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    # exercise 1 asks for two related numbers: 892's window's max timestamp and the lateness
    max_ts = 1566640319999
    assert check_1((max_ts, 11904104)).startswith("Correct: the window survives while")
    assert check_1((max_ts + 1, 11904104)).startswith("Look again at 892's window")
    for lateness in (11904103, 11904105, 0, 20000000):  # no direction: nothing to bisect
        assert check_1((max_ts, lateness)).startswith("The max timestamp is right; the lateness")
    assert check_1(11904104).startswith("Answer with a pair of ints")
    assert check_1((max_ts, -1)).startswith("Allowed lateness is a non-negative")
    assert_hides(check_1, (max_ts, 11904104), [(max_ts, 11904103), (max_ts + 1, 11904104)])
    for message in (check_1((max_ts, 1000)), check_1((max_ts + 1, 1000))):
        assert "11904104" not in message and "1566652224102" not in message
    # exercise 2: the pair (892's window's cleanup time, the largest watermark that takes 892)
    answer = (max_ts, 1566640319998)
    assert check_2(answer).startswith("Correct: the largest watermark is one below")
    assert check_2((max_ts + 1, 1566640319998)).startswith("Look again at the cleanup time")
    # no direction: 892's own timestamp, the cleanup time, 893's watermark all get one message
    for wrong in (1566640319999, 1566640320000, 1566640314152, 1566652224102, 0):
        assert check_2((max_ts, wrong)).startswith("The cleanup time is right; the watermark")
    assert check_2(1566640319998).startswith("Answer with a pair of ints")
    assert_hides(check_2, answer, [(max_ts, 1566640319999), (max_ts + 1, 1566640319998)])
    assert "1566640319998" not in check_2((max_ts, 1566640314152))
    # exercise 3: which late readings are on time after the restore (the rule, not a number)
    check_3 = ns["check_3"]
    assert ns["side_output_names"](ns["readings_job"]()) == ["p3", "p5", "p6", "p8"]
    answer_3 = {"p5", "p6"}
    assert check_3(answer_3).startswith("Correct: p3 arrived before the checkpoint")
    assert check_3(frozenset(answer_3)).startswith("Correct")
    assert check_3({"p3", "p5", "p6"}).startswith("p3 arrived before the checkpoint")
    assert check_3({"p5", "p6", "p8"}).startswith("['p8'] is late in the replay too")
    assert check_3({"p5"}).startswith("Not all of them: after the restore")
    assert check_3(set()).startswith("Not all of them")
    assert check_3({"p5", "p7"}).startswith("['p7']: not late without a failure")
    assert check_3(["p5", "p6"]).startswith("Answer with a set of names")
    assert check_3({5, 6}).startswith("Answer with a set of names")
    assert_hides(check_3, answer_3, [{"p5"}, {"p6"}, {"p5", "p6", "p8"}, {"p3", "p5", "p6"}])
    for wrong in ({"p5"}, {"p6", "p8"}, {"p3", "p5", "p6", "p8"}):
        assert "p5 and p6" not in check_3(wrong) and "'p5', 'p6'" not in check_3(wrong)
    # the worked solution (a markdown cell, never run by Run All) gives the answer
    _, printed = run_solution("05", ns)
    assert printed.startswith("Correct: p3 arrived before the checkpoint")


def test_06_allowed_lateness(lessons):
    ns = lessons("06")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    # exercise 1 asks for the rule: lateness -> the smallest watermark that removes [0, 5000)
    assert check_1(lambda lateness: 4_999 + lateness).startswith(
        "Correct: the cleanup timer sits at cleanupTime = maxTimestamp + allowedLateness"
    )
    assert check_1(lambda lateness: 5_000 + lateness) == (
        "With lateness 2500 your rule gives 7500, but a watermark one below removes the window "
        "too: a timer fires when the watermark reaches it."
    )
    assert check_1(lambda lateness: 4_998 + lateness).startswith(
        "With lateness 2500 your rule gives 7498: there the window is still kept."
    )
    assert check_1(lambda lateness: 7_499).startswith("With lateness 7 your rule gives 7499, but")
    assert check_1(7_499).startswith("Answer with a function of the allowed lateness")
    for wrong in (lambda x: 5_000 + x, lambda x: 4_998 + x, lambda x: 7_499):
        assert "4999 + lateness" not in check_1(wrong)  # the rule is never shown
    # exercise 2 asks for the rule: [ts, ts + gap) must reach [0, gap) and [3000, 3000 + gap)
    assert [t for t in range(0, 3001, 250) if ns["late_session"](t, 2_000) == (0, 5_000)] == [
        1000,
        1250,
        1500,
        1750,
        2000,
    ]
    assert ns["late_session"](0, 2_000) == (0, 2_000)  # the same window as 0's: no merge
    assert ns["late_session"](1_500, 1_500) == (0, 4_500)  # the one ts that bridges gap 1500
    assert ns["late_session"](1_200, 1_000) == (1_200, 2_200)  # a session of its own

    def rule(ts, gap):
        return 3_000 - gap <= ts <= gap

    assert check_2(rule).startswith("Correct: [ts, ts + gap) reaches [0, gap) while ts <= gap")
    assert check_2(lambda ts, gap: 1_000 <= ts <= 2_000) == (  # gap 2000's timestamps only
        "With gap 2500 the late element 500 ends up in [0, 5500), but your rule says it does not "
        "merge both sessions. Which of [0, 2500) and [3000, 5500) does its own session "
        "[500, 3000) reach — and do windows that only touch merge?"
    )
    assert check_2(lambda ts, gap: 3_000 - gap < ts < gap).startswith(  # touching merges too
        "With gap 2000 the late element 1000 ends up in [0, 5000), but your rule says it does not"
    )
    assert check_2(lambda ts, gap: ts <= gap).startswith(
        "With gap 2000 the late element 0 ends up in [0, 2000), but your rule says it merges both"
    )
    assert check_2(1_500).startswith("Answer with a function of the timestamp and the gap")
    assert check_2(lambda ts: True).startswith("Answer with a function of the timestamp and")
    assert check_2(None).startswith("Not answered")
    for wrong in (lambda t, g: 1_000 <= t <= 2_000, lambda t, g: t <= g, lambda t, g: False):
        assert "3000 - gap" not in check_2(wrong)  # the rule is never shown


def test_07_watermark_propagation(lessons):
    ns = lessons("07")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    # exercise 1 asks for the rule: the idleness count starts at the first periodic emit that
    # finds no new record (360 473) and ends at the first emit more than the timeout after it
    assert [ns["idle_at"](t) for t in (10_000, 30_000, 39_999)] == [370_673, 390_673, 400_473]
    assert check_1(lambda timeout: 360_473 + (timeout // 200 + 1) * 200).startswith(
        "Correct: partition 1's last record shows at the emit of 360 273"
    )
    assert check_1(lambda timeout: 360_473 + timeout + 200).startswith(  # right on a 200 grid
        "With timeout 12345 your rule marks partition 1 idle at 373018, but it is already idle"
    )
    assert check_1(lambda timeout: 360_473 + (timeout // 200) * 200) == (  # >= instead of >
        "With timeout 30000 your rule marks partition 1 idle at 390473, but it is still active "
        "there. Which periodic emit is the first to find no new record from partition 1, and is "
        "the time since then compared with > or >=?"
    )
    assert check_1(lambda timeout: 360_273 + timeout).startswith(  # counted from the last record
        "With timeout 30000 your rule marks partition 1 idle at 390273, but it is still active"
    )
    assert check_1(lambda timeout: 390_673.0).startswith("With timeout 30000 your rule gives")
    assert check_1(40).startswith("Answer with a function of the timeout")
    assert check_1(None).startswith("Not answered")
    for wrong in (lambda t: 360_473 + t, lambda t: 0):
        assert "timeout // 200" not in check_1(wrong)  # the rule is never shown
    # exercise 2: four subtasks: key groups 0-31, 32-63, 64-95, 96-127
    users = sorted({c.user for c in ns["clicks"]})
    owners = {u: wv.assign_key_to_subtask(u, 4) for u in users}
    assert owners == {"u1": 3, "u2": 1, "u3": 2, "u4": 2, "u5": 1, "u6": 2}
    loads = [sum(1 for c in ns["clicks"] if owners[c.user] == i) for i in range(4)]
    assert loads == [0, 181, 245, 105]
    assert check_2(loads).startswith("Correct: the four ranges of 32 key groups")
    assert check_2([0, 181, 105, 245]) == (
        "Not right for window#2, window#3: which users' key groups fall in that subtask's "
        "range of 32, and how many clicks do they have?"
    )
    assert check_2([111, 139, 281, 0]).startswith("Not right for window#0, window#1, window#2,")
    assert check_2([0, 181, 245, 104]).startswith("Your counts add up to 530: every click")
    assert check_2(245).startswith("Answer with a list of four ints")
    assert check_2([0, 181, 245]).startswith("Answer with a list of four ints")
    assert_hides(check_2, loads, [[0, 181, 105, 245], [111, 139, 281, 0], [0, 0, 0, 0]])


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
    # exercise 1: the pair (window of the last rows dropped as the delay grows, smallest delay)
    assert check_1((60_000, 9)).startswith("Correct: that window's rows are dropped until")
    assert check_1((0, 9)).startswith("Look again at the window")
    for seconds in (0, 8, 10, 20):  # no direction: nothing to bisect
        assert check_1((60_000, seconds)).startswith("The window is right; the delay is not")
    assert check_1(9).startswith("Answer with a pair of ints")
    assert_hides(check_1, (60_000, 9), [(60_000, 8), (60_000, 10), (0, 9)])
    # a click arriving at 101 000 ms (late-events watermark 96 611) passes Spark's late filter
    # from the start of the first window whose end is above that watermark: [90 s, 120 s)
    late_watermark = next(b.late_watermark for b in ns["spark"].batches if b.interval == 5)
    assert late_watermark == 96_611
    answer = (late_watermark, 90_000)
    assert check_2(answer).startswith("Correct: Spark judges the click's window")
    assert check_2((96_612, 90_000)).startswith("Look again at the late-events watermark")
    for ts in (89_999, 90_001, 96_612, 0, 119_999):  # no direction: nothing to bisect
        assert check_2((late_watermark, ts)).startswith("The watermark is right; the event time")
    assert check_2(90_000).startswith("Answer with a pair of ints")
    assert check_2((late_watermark, 1.5)).startswith("Answer with a pair of ints")
    assert_hides(check_2, answer, [(late_watermark, 89_999), (late_watermark, 96_612), (0, 0)])
    assert "90000" not in check_2((late_watermark, 96_612))


def test_09_troubleshooting_clinic(lessons):
    ns = lessons("09")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    # exercise 1 asks for the rule (size, utc_offset) -> offset: -utc_offset, modulo the size
    assert check_1(lambda size, utc_offset: -utc_offset % size).startswith(
        "Correct: a local midnight is a UTC time utc_offset before UTC's midnight"
    )
    assert check_1(lambda size, utc_offset: -(utc_offset % size)).startswith("Correct")
    assert check_1(lambda size, utc_offset: -utc_offset) == (  # China's hours(-8) for 6 h
        "For 6 h windows in Asia/Shanghai (UTC+0800) your rule gives offset -28800000, and Flink "
        "refuses it: an offset must satisfy abs(offset) < size. Which offsets give the same "
        "window starts?"
    )
    assert check_1(lambda size, utc_offset: utc_offset % size) == (
        "For 24 h windows in Asia/Shanghai (UTC+0800) your rule gives offset 28800000: the window "
        "of 23:30 local time starts at 16:00 local time, not at local midnight or a multiple of "
        "24 h after it. The offset moves the window starts, which are aligned to the epoch: UTC "
        "midnight."
    )
    assert check_1(lambda size, utc_offset: -utc_offset % wv.hours(24)).startswith(
        "For 6 h windows in Asia/Shanghai (UTC+0800) your rule gives offset 57600000, and Flink"
    )
    # New York's offset, wv.hours(5), is right for daily windows only
    assert check_1(lambda size, utc_offset: wv.hours(5)).startswith(
        "For 24 h windows in Asia/Shanghai (UTC+0800) your rule gives offset 18000000: the window"
    )
    assert check_1(lambda size, utc_offset: 1.0).startswith("For Asia/Shanghai (UTC+0800) your")
    assert check_1(wv.hours(5)).startswith("Answer with a function of the size")
    assert check_1(lambda utc_offset: 0).startswith("Answer with a function of the size")
    assert check_1(None).startswith("Not answered")
    for wrong in (lambda s, u: -u, lambda s, u: u % s, lambda s, u: 0):
        assert "-utc_offset" not in check_1(wrong)  # the rule is never shown

    def by_pane(rs):
        return {(k, s): c for k, s, _, c in sorted(rs, key=lambda r: r[2])}

    def by_arrival(rs):  # case 4's upsert, which the lesson shows: trusts the arrival order
        return {(k, s): c for k, s, _, c in rs}

    def adds_up(rs):
        out = {}
        for k, s, _, c in rs:
            out[(k, s)] = out.get((k, s), 0) + c
        return out

    def largest(rs):
        return {(k, s): max(c for k2, s2, _, c in rs if (k2, s2) == (k, s)) for k, s, _, _ in rs}

    assert check_2(by_pane).startswith("Correct")
    arrival = check_2(by_arrival)
    assert arrival.startswith("latest([('A', 5000, 0, 2), ('A', 0, 1, 2), ('A', 0, 0, 1)])")
    assert arrival.endswith("is not always the last firing: read the pane.")
    assert check_2(adds_up).endswith("do not add them up.")
    message = check_2(largest)
    assert message.startswith(
        "latest([('A', 0, 2, 2), ('B', 0, 0, 4), ('A', 0, 0, 1), ('A', 0, 1, 3)])"
    )
    assert "('A', 0): 2" not in message  # the final count it should have kept
    # the worked solution (a markdown cell, never run by Run All) is right
    _, printed = run_solution("09", ns)
    assert printed.startswith("Correct")


def _alert_variants(gap: int) -> dict[str, type]:
    """Wrong (and one right) inactivity alerts, each with one mistake lesson 10's harness must
    name."""

    def arm(ctx: Any, last: Any, ts: int) -> None:
        if last is not None:
            ctx.timer_service().delete_event_time_timer(last + gap)
        ctx.timer_service().register_event_time_timer(ts + gap)
        ctx.update_state("last", ts)

    def ignored(ctx: Any, last: Any) -> bool:
        ts = ctx.timestamp()
        return ts <= ctx.timer_service().current_watermark() or (last is not None and ts <= last)

    class Right(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            last = ctx.state("last")
            if not ignored(ctx, last):
                arm(ctx, last, ctx.timestamp())

        def on_timer(self, timestamp, ctx, out):
            out.collect((ctx.get_current_key(), ctx.state("last")))
            ctx.update_state("last", None)

    class NoLateRule(Right):  # lesson 03's InactivityCount: a late event re-arms
        def process_element(self, value, ctx, out):
            last = ctx.state("last")
            if last is None or ctx.timestamp() > last:
                arm(ctx, last, ctx.timestamp())

    class LatestArrival(Right):  # an older event moves the deadline back
        def process_element(self, value, ctx, out):
            if ctx.timestamp() > ctx.timer_service().current_watermark():
                arm(ctx, ctx.state("last"), ctx.timestamp())

    class StaleTimers(Right):  # right alerts, but replaced timers stay and fire
        def process_element(self, value, ctx, out):
            last = ctx.state("last")
            if not ignored(ctx, last):
                ctx.timer_service().register_event_time_timer(ctx.timestamp() + gap)
                ctx.update_state("last", ctx.timestamp())

        def on_timer(self, timestamp, ctx, out):
            last = ctx.state("last")
            if last is not None and timestamp == last + gap:
                super().on_timer(timestamp, ctx, out)

    class KeepsState(Right):  # right alerts, state kept after the alert
        def on_timer(self, timestamp, ctx, out):
            out.collect((ctx.get_current_key(), ctx.state("last")))

    class OneAlertPerDevice(Right):  # remembers it alerted: never re-arms
        def process_element(self, value, ctx, out):
            if not ctx.state("done"):
                super().process_element(value, ctx, out)

        def on_timer(self, timestamp, ctx, out):
            super().on_timer(timestamp, ctx, out)
            ctx.update_state("done", True)

    class NoTimer(wv.KeyedProcessFunction):  # alerts only when the device sends again
        def process_element(self, value, ctx, out):
            last = ctx.state("last")
            if last is not None and ctx.timestamp() - last >= gap:
                out.collect((ctx.get_current_key(), last))
            ctx.update_state("last", ctx.timestamp())

    class ProcessingTime(Right):
        def process_element(self, value, ctx, out):
            ctx.update_state("last", ctx.timestamp())
            now = ctx.timer_service().current_processing_time()
            ctx.timer_service().register_processing_time_timer(now + gap)

    class Raises(wv.KeyedProcessFunction):
        def process_element(self, value, ctx, out):
            raise ValueError("boom")

    return {
        c.__name__: c
        for c in (
            Right,
            NoLateRule,
            LatestArrival,
            StaleTimers,
            KeepsState,
            OneAlertPerDevice,
            NoTimer,
            ProcessingTime,
            Raises,
        )
    }


def test_10_build_an_inactivity_alert(lessons, monkeypatch):
    ns = lessons("10")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    v = _alert_variants(ns["GAP"])
    assert check_1(v["Right"]).startswith("Correct")
    worked, printed = run_solution("10", ns)  # a markdown cell, never run by Run All
    assert printed.startswith("Correct")
    assert check_1(worked["WorkedInactivityAlert"]).startswith("Correct")
    assert check_1(None).startswith("Not answered")
    assert check_1(ns["InactivityAlert"]).startswith("Not answered")  # the empty skeleton
    assert check_1(v["Right"]()).startswith("Pass the class itself")

    class DeviceOnly(v["Right"]):
        def on_timer(self, timestamp, ctx, out):
            out.collect(ctx.get_current_key())
            ctx.update_state("last", None)

    assert check_1(DeviceOnly) == (
        "In 'a never comes back', your function emitted 'a': an alert is a pair "
        "(device, last_timestamp)."
    )
    assert check_1(ns["FirstAttempt"]) == (
        "In 'a never comes back', your function alerted ('a', 1000) at event time 2000: that "
        "alert is wrong. A deadline that a newer event replaced must not alert (rules 1 and 4)."
    )
    verdicts = {name: check_1(cls) for name, cls in v.items() if name != "Right"}
    assert verdicts["NoLateRule"].startswith(
        "In 'late events', your function alerted ('a', 1500) at event time 2500"
    )
    assert verdicts["NoLateRule"].endswith("(rule 3).")
    assert verdicts["LatestArrival"].startswith(
        "In 'out of order', your function alerted ('a', 2500) at event time 3500"
    )
    assert verdicts["StaleTimers"] == (
        "In 'a never comes back', after event 3 ('a', 1500), device 'a' has 2 timers pending: "
        "one deadline per device (rule 4)."
    )
    for name in ("KeepsState", "OneAlertPerDevice"):
        assert verdicts[name] == (
            "In 'a never comes back', after event 9 ('b', 4700), device 'a' still holds state "
            "although it has no deadline (rule 4)."
        )
    assert verdicts["NoTimer"].startswith(
        "In 'a never comes back', device 'a' went silent and the watermark reached its deadline"
    )
    assert "carries no timestamp" in verdicts["ProcessingTime"]
    assert verdicts["Raises"].startswith("In 'a never comes back' your function failed:")
    assert "ValueError: boom" in verdicts["Raises"]
    # no message shows code: what to look at, never how to write it
    for message in verdicts.values():
        assert not re.search(r"ctx\.|timer_service|update_state|def ", message), message

    # the lesson's claim: on the Spark twin's input (arrivals 1 s apart) a correct alert gives
    # Spark's three alerts, and b's at the end of the bounded input
    monkeypatch.setitem(ns, "ARRIVAL", 1000)
    flink = [r.value for r in ns["run_alerts"](v["Right"], ns["twin_events"]).outputs["alerts"]]
    assert flink == [("a", 1000), ("c", 3000), ("a", 6500), ("b", 9000)]
    assert [(k, last) for k, last, _, _ in ns["spark_alerts"]] == flink[:3]

    # exercise 2: two related numbers, b's deadline (the watermark that fires it) and t
    answer = (10_000, 10_500)
    assert check_2(answer).startswith("Correct: t moves Spark's watermark")
    assert check_2((10_500, 10_500)).startswith("Look again at the watermark")
    for t in (10_499, 10_501, 10_502, 0, 20_000):  # no direction: nothing to bisect
        assert check_2((10_000, t)).startswith("The watermark is right; t is not the smallest")
    assert check_2(10_500).startswith("Answer with a pair of ints")
    assert_hides(check_2, answer, [(10_000, 10_499), (10_000, 10_501), (9_999, 10_500)])
    assert "10500" not in check_2((10_000, 10_501))


@pytest.mark.parametrize("prefix", sorted(ANSWERS))
def test_run_all_prints_no_answer(lessons, prefix):
    """What "Run All" prints in a learner's copy names no exercise answer: no worked solution
    runs by default (a solution is a collapsed markdown cell; the learner copies it to run it),
    and an unanswered check says only that it is unanswered."""
    assert not [
        c["id"]
        for c in lesson_cells(prefix)
        if c["cell_type"] == "code" and "solution" in c["metadata"].get("tags", [])
    ], "a solution in a code cell runs on Run All"
    printed = lessons(prefix)[PRINTED]
    shown = [
        a for a in ANSWERS[prefix] if re.search(rf"(?<![\w.-]){re.escape(a)}(?![\w])", printed)
    ]
    assert shown == [], f"lesson {prefix} prints its answers {shown} on Run All"
    checks = [
        c for c in lesson_cells(prefix) if re.search(r"^def check_\d\(", "".join(c["source"]), re.M)
    ]
    assert printed.count("Not answered yet") == len(checks)  # every exercise, unanswered


def test_11_batch_and_streaming(lessons):
    ns = lessons("11")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    batch = [("ann", 0, 3), ("ann", 5000, 1), ("bob", 0, 1), ("bob", 5000, 1), ("bob", 10000, 1)]
    streaming = [("ann", 0, 1), ("bob", 5000, 1), ("ann", 5000, 1), ("bob", 10000, 1)]
    assert check_1(batch).startswith("Correct")
    assert check_1(batch[2:] + batch[:2]).startswith("The right windows and counts, in the wrong")
    assert check_1(streaming).startswith("That is what STREAMING counts")
    assert check_1([("ann", 0, 2)]).startswith("Your counts add up to 2 clicks")
    assert check_1("x").startswith("Give a list")
    assert_hides(check_1, batch, [batch[2:] + batch[:2], streaming, [("ann", 0, 2)]])
    late = {("bob", 2000), ("ann", 4000), ("ann", 3000)}
    assert check_2(late).startswith("Correct")
    assert check_2({("bob", 2000)}).startswith("All of these are late, and there are more")
    assert check_2(late | {("ann", 7000)}).startswith("('ann', 7000) is not late")
    assert check_2({("x", 1)}).startswith("Each item must be one of")
    assert_hides(check_2, late, [{("bob", 2000)}, late | {("ann", 7000)}, set()])


def test_12_joins_in_event_time(lessons):
    ns = lessons("12")
    check_1, check_2 = ns["check_1"], ns["check_2"]

    def rule(side, ts, lower, upper):
        if side == "left":
            return ts + upper if upper > 0 else ts
        return ts - lower if lower < 0 else ts

    def no_clamp(side, ts, lower, upper):
        return ts + upper if side == "left" else ts - lower

    assert check_1(rule).startswith("Correct")
    message = check_1(no_clamp)
    assert message.startswith("cleanup_time('right', 4000, 200, 900) = 3800: that is not")
    assert check_1(lambda *a: 1 / 0).endswith("raised ZeroDivisionError('division by zero').")
    assert check_1(None).startswith("Not answered") and check_1(3).startswith("Pass the function")
    pairs = {("bob", 2000, 2400), ("ann", 1000, 1600), ("ann", 4000, 4900)}
    assert check_2(pairs).startswith("Correct")
    assert check_2(pairs - {("ann", 1000, 1600)}).startswith("1 pair(s) missing")
    assert check_2(pairs | {("ann", 1000, 700)}).startswith("('ann', 1000, 700) is not emitted")
    assert_hides(check_2, pairs, [pairs - {("ann", 1000, 1600)}, pairs | {("cy", 1900, 2100)}])


def test_13_watermark_alignment_and_sources(lessons):
    ns = lessons("13")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    truth = ({2000, 3000, 4000}, set())
    assert check_1(truth).startswith("Correct")
    assert check_1(({2000, 3000, 4000}, {2000, 3000, 4000})).startswith("Right about which")
    assert check_1(({2000, 3000}, set())).startswith("Not the late set")
    assert check_1((set(), {2000})).startswith("Only a late element")
    assert_hides(check_1, truth, [({2000, 3000, 4000}, {4000}), ({2000}, set())])
    assert check_2((1200, 2000)).startswith("Correct")
    assert check_2((2000, 6000)).startswith("Not the first pause")
    assert check_2((1200, 6000)).startswith("The pause is right")
    assert check_2((1, True)).startswith("Give a pair of two ints")
    assert_hides(check_2, (1200, 2000), [(1000, 2000), (2000, 6000), (1200, 3000)])


def test_14_window_state_and_dynamic_sessions(lessons):
    ns = lessons("14")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    sessions = [
        (1000, 4000, "abc"),
        (7000, 8000, "d"),
        (12000, 15000, "e"),
        (16000, 17000, "g"),
        (25000, 26000, "h"),
    ]
    assert check_1(sessions).startswith("Correct")
    assert check_1(sessions[::-1]).startswith("The right sessions in the wrong order")
    assert check_1([(4000, 5000, "f")]).startswith("f arrives with the watermark at 10999")
    assert check_1([(1000, 9000, "abcd")]).startswith("Not these sessions")
    assert check_1("x").startswith("Give a list")
    assert_hides(check_1, sessions, [sessions[::-1], sessions[:2], [(1000, 9000, "abcd")]])

    def intersects(s1, e1, s2, e2):
        return s1 <= e2 and e1 >= s2

    def overlaps_only(s1, e1, s2, e2):
        return s1 < e2 and e1 > s2

    assert check_2(intersects).startswith("Correct")
    assert check_2(overlaps_only).startswith("merges(1000, 3000, 3000, 5000) = False")
    assert check_2(lambda *a: 1 / 0).endswith("raised ZeroDivisionError('division by zero').")
    assert check_2(None).startswith("Not answered") and check_2(1).startswith("Pass the function")


def test_15_bring_your_pyflink_job(lessons):
    ns = lessons("15")
    check_1, check_2 = ns["check_1"], ns["check_2"]
    sessions = {(1000, 6000, 10.0), (10000, 15000, 30.0)}
    assert check_1(sessions).startswith("Correct")
    assert check_1({(1000, 15000, 20.0)}).startswith("Not that many sessions")
    assert check_1({(1000, 6000, 10.0), (10000, 15000, 32.5)}).startswith("The right number")
    assert check_1("x").startswith("Give a set")
    assert_hides(check_1, sessions, [{(1000, 15000, 20.0)}, {(1000, 6000, 10.0)}, set()])

    def bridges(t):
        return 5000 <= t <= 6000

    assert check_2(bridges).startswith("Correct")
    assert check_2(lambda t: 5000 < t <= 6000).startswith("bridges(5000) = False")
    assert check_2(lambda t: 5000 <= t < 6000).startswith("bridges(6000) = False")
    assert check_2(lambda t: 1 / 0).endswith("raised ZeroDivisionError('division by zero').")
    assert check_2(None).startswith("Not answered") and check_2(1).startswith("Pass the function")
