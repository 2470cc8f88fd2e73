"""Sentences the lessons must not say again (issue 13's corrections). The facts themselves are
asserted in the lessons' code cells; these tests keep the wrong wording from coming back."""

import ast
import json
import re
from pathlib import Path

import pytest
from jobs import count_pipeline

import winviz as wv

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def lesson_text(prefix: str) -> str:
    (path,) = [p for p in LESSONS if p.name.startswith(prefix)]
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells)


def test_all_lessons_found():
    assert [p.name[:2] for p in LESSONS] == [f"{i:02d}" for i in range(16)]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_no_wrong_sentences(path):
    text = lesson_text(path.name[:2])
    wrong = [
        r"pre-1\.12",  # getWindowStartWithOffset changed with FLINK-26334 (1.14.5 / 1.15.0)
        r"Flink 1\.12",
        r"polls just the one pending timer",  # advanceWatermark peeks again after every timer
        r"cannot express the\s+multiple-watermark policy",  # TwinSpec.watermark_policy does
        r"can never be behind\s+the next stage",  # late firings can be
        r"whose window has already fired is \*\*late\*\*",  # late = ts <= watermark
        # the charts' "late, accepted" is Flink's late (ts <= watermark) that a window took,
        # not "added to a window that had already fired" (issue 12)
        r"late, accepted\*\s+colour marks something narrower",
        r"an element added to a window that had already fired",
        r"fired (early|on time|late)\b",  # firing marks say what caused them, not Beam's timing
        r"which is what \*late\* looks like",
        r"watermark passes the end \|",  # the rule is watermark >= end - 1
        r"when the watermark passes `maxTimestamp`",
        r"changes only how timestamps are \*shown\*",  # it also parses zone-less strings
        # lessons audit: Spark emits an append-mode window once window.end <= watermark: reaching
        # the end is enough (StateStoreSaveExec's watermark predicate is LessThanOrEqual)
        r"watermark\s+(has\s+)?passe[sd]\s+its\s+end",
        r"no `- 1`\)\s+passed its end",
        r"first periodic watermark past its end",
        r"never passes\s+120 000",
        # lessons audit: late is ts <= watermark; what an exercise asks about is being dropped
        r"with which `f` is \*\*not\*\*\s+late",
        r"892 is \*not\* late",
        r"so `1000` and `2000` are late",
        r"each window whose aggregate changed",  # update mode: each window that got rows
        r"every window whose count it changed",
        # issue 27: Flink checkpoints no watermarks (InternalTimersSnapshot holds timers only)
        r"snapshots the timer queues \(with the state, the watermarks",
        r"Seed 000's fourth promise",  # the seed lists the checkpoint third
        # pending processing-time timers at end of input: STREAMING mode only (BATCH fires them)
        r"Flink never fires pending processing-time timers",
        r"bounded Flink job does \*\*not\*\* fire processing-time timers that are still pending",
        r"so merging does not have to move\s+state",  # mergeNamespaces still merges it
        r"late by more\s+than the allowed lateness",  # ts + lateness <= W: by at least
        r"Flink ships four kinds of assigners",
        r"`WatermarkStrategy\.ingestion_time\(\)`\) stamps",  # presented as Flink's
        # issue 28: clearAllState leaves per-window state to the function's clear(), as winviz
        r"drops the per-window\s+state with the window",
    ]
    found = [pattern for pattern in wrong if re.search(pattern, text)]
    assert found == [], f"{path.name} says again what issue 13 corrected: {found}"


def test_window_start_history_names_flink_26334():
    for text in (lesson_text("02"), (ROOT / "docs" / "conformance.md").read_text()):
        assert "FLINK-26334" in text and "1.14.5" in text and "1.15.0" in text
        assert "pre-1.12" not in text


def test_corrections_are_stated():
    assert "890 and 893 are reconstructed" in lesson_text("05")
    assert "The seed is wrong here, twice." in lesson_text("06")
    assert "winviz's convention, not Flink's" in lesson_text("01")
    assert "winviz's convention: in Flink the 200 ms timer starts when the operator" in (
        lesson_text("00")
    )
    assert re.search(r"a\s+simplification", lesson_text("07").replace("**", ""))
    assert "KafkaSourceEnumerator.getSplitOwner" in lesson_text("07")
    assert "*parsed* in the session time zone" in lesson_text("09")


def test_seed_mechanisms_and_spine_sections_are_shown():
    """Issue 13's sections stay in the lessons (their facts are asserted in the lessons' code)."""
    assert "## Perfect and heuristic watermarks" in lesson_text("01")
    assert "too fast" in lesson_text("01") and "too slow" in lesson_text("01")
    assert "### A processing-time timer in the past fires right away" in lesson_text("03")
    assert "ProcessingTimeServiceUtil.getProcessingTimeDelay" in lesson_text("03")
    assert "## Where timers live: heap or RocksDB" in lesson_text("03")
    assert "state.backend.rocksdb.timer-service.factory" in lesson_text("03")
    assert "## Early, on time, late — accumulating or discarding" in lesson_text("06")
    assert "### What a merge does to the timers: `EventTimeTrigger.onMerge`" in lesson_text("06")
    assert "deleteCleanupTimer" in lesson_text("06")
    for prefix in ("01", "04", "06"):  # the scrubber's replay at the spine's points
        assert "wv.scrubber(" in lesson_text(prefix), prefix
    assert "transformWithStateInPandas" in lesson_text("10")


# Issue 13's spine: one running example carried through Akidau's four questions in 00-06.
SPINE_EVENTS = (
    'events = [("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 7_000),\n'
    '          ("e", 12_000), ("f", 4_000), ("g", 16_000), ("h", 25_000)]'
)
SPINE_ARRIVALS = "arrivals = [1_200, 3_100, 3_500, 7_300, 12_100, 12_500, 16_200, 25_100]"
SPINE_QUESTION = {"01": "When", "02": "Where", "03": "When", "04": "When", "05": "When"}
SPINE_QUESTION["06"] = "How"


def lesson_cells(prefix: str) -> list[tuple[str, str]]:
    (path,) = [p for p in LESSONS if p.name.startswith(prefix)]
    cells = json.loads(path.read_text())["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


def test_the_tour_maps_the_four_questions_to_the_lessons():
    cells = lesson_cells("00")
    (opening,) = [s for k, s in cells if s.startswith("## The running example and the four")]
    rows = {
        q: line
        for line in opening.splitlines()
        for q in ("What", "Where", "When", "How")
        if line.startswith(f"| **{q}**")
    }
    assert sorted(rows) == ["How", "What", "When", "Where"]
    assert "TumblingEventTimeWindows" in rows["Where"] and "02" in rows["Where"]
    assert "WatermarkStrategy" in rows["When"] and "01, 03, 04, 05, 06" in rows["When"]
    assert "PurgingTrigger" in rows["How"] and rows["How"].endswith("| 06 |")


@pytest.mark.parametrize("prefix", [f"{i:02d}" for i in range(7)])
def test_the_running_example_opens_lessons_00_to_06(prefix):
    cells = lesson_cells(prefix)
    (opening,) = [
        i
        for i, (k, s) in enumerate(cells)
        if k == "markdown" and s.startswith("## The running example")
    ]
    assert opening <= 2, "the spine cell opens the lesson (after the title and the imports)"
    if prefix != "00":
        assert f"answers *{SPINE_QUESTION[prefix]}*" in cells[opening][1]
        assert "## The running example so far" in cells[opening][1]
    # the key run on the running example follows the opening, and its numbers are asserted
    (defined,) = [i for i, (k, s) in enumerate(cells) if k == "code" and SPINE_EVENTS in s]
    assert opening < defined <= opening + 2
    if prefix != "02":  # 02's windows_job has no watermarks: arrival times do not matter there
        assert SPINE_ARRIVALS in cells[defined][1]
    checks = [s for k, s in cells[defined + 1 :] if k == "code" and "assert" in s]
    assert any('"abcd' in s for s in checks), "the key run's windows are asserted"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_cell_ids_are_unique_and_outputs_stripped(path):
    cells = json.loads(path.read_text())["cells"]
    ids = [c["id"] for c in cells]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate cell ids"
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def java_blocks(prefix: str) -> list[str]:
    return re.findall(r"```java\n(.*?)```", lesson_text(prefix), re.S)


def test_flink_code_is_flink_2():
    """Flink 2.x window assigners take java.time.Duration: the Time overloads, deprecated in
    1.19 (FLINK-32570), are gone (lessons audit). A lesson may name Time only as 1.x history."""
    blocks = [b for prefix in (f"{i:02d}" for i in range(11)) for b in java_blocks(prefix)]
    assert blocks, "the lessons show Flink's Java"
    assert all(not re.search(r"\bTime\.(seconds|minutes|hours|days)\(", b) for b in blocks)
    assert "TumblingEventTimeWindows.of(Duration.ofSeconds(10))" in java_blocks("00")[0]
    assert "TumblingEventTimeWindows.of(Duration.ofDays(1), Duration.ofHours(-8))" in (
        lesson_text("02")
    )
    for prefix in ("02", "05"):  # where Time is named, it is named as Flink 1.x
        text = lesson_text(prefix)
        for match in re.finditer(r"\bTime\.(minutes|hours|days)\(", text):
            assert "1.x" in text[match.start() - 200 : match.end() + 200], prefix


def test_spark_append_emits_when_the_watermark_reaches_the_window_end():
    """Lessons 00, 02, 04, 08, 09: append mode emits [start, end) once end <= watermark —
    a watermark equal to the end is enough; the model is checked against real Spark by
    tests/test_spark_twin.py (and the lessons' own Spark cells under nbval)."""
    from winviz.spark import TwinSpec, predict

    spec = TwinSpec(
        size=5_000,
        watermark_delay=0,
        output_mode="append",
        trigger_interval=1_000,
        drive="per_batch",
    )
    run = predict([{"key": "k", "ts": 0}, {"key": "k", "ts": 5_000}], [0, 1_000], spec)
    emitted = [(b.watermark, r.window_start, r.window_end) for b in run.batches for r in b.rows]
    assert emitted == [(5_000, 0, 5_000)]  # watermark 5000 == end: emitted
    one_less = predict([{"key": "k", "ts": 0}, {"key": "k", "ts": 4_999}], [0, 1_000], spec)
    assert [r for b in one_less.batches for r in b.rows] == []  # watermark 4999 < end: not yet


def test_flink_fires_at_end_minus_one_and_spark_at_end():
    """Lesson 08's table: Flink's window fires at watermark end - 1, Spark's at end."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("k", 0), ("k", 4_999)],
        5_000,
        wv.WatermarkStrategy.for_punctuated(lambda e, ts: ts).with_timestamp_assigner(
            lambda e, _: e[1]
        ),
        sink="n",
        arrival_times=[0, 1_000],
    )
    fired = env.execute().trace.records("fired")
    assert [(r.window.end, r.watermark) for r in fired] == [(5_000, 4_999)]


def test_spark_session_windows_have_no_update_mode():
    """Lesson 08's table says `session_window` has no update mode (append and complete run):
    its jvm cell asserts it on real Spark under nbval (UnsupportedOperationChecker refuses
    update mode for a streaming session-window aggregation); "append only" is not said."""
    cells = lesson_cells("08")
    (check,) = [s for k, s in cells if k == "code" and "refused = {}" in s]
    assert 'assert "not supported for session window" in refused["update"]' in check
    assert 'refused["append"] is None and refused["complete"] is None' in check
    text = lesson_text("08")
    assert "`session_window`, no update mode" in text and "append only" not in text


def _is_only_asserts(tree: ast.Module) -> bool:
    return all(isinstance(st, ast.Assert) for st in tree.body)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_the_lessons_own_checks_sit_in_collapsed_fact_cells(path):
    """Issue 27: a quarter to a third of the code cells were asserts over the trace. A lesson's
    checks of its own sentences sit in cells tagged ``facts`` (collapsed in JupyterLab, left out
    of the page, run by nbval and tests like every cell), so the visible cells teach."""
    cells = json.loads(path.read_text())["cells"]
    visible, asserting = 0, 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        tags = set(cell["metadata"].get("tags", []))
        tree = ast.parse("".join(cell["source"]))
        if "facts" in tags:
            assert cell["metadata"].get("jupyter") == {"source_hidden": True}, cell["id"]
            assert any(isinstance(st, ast.Assert) for st in tree.body), cell["id"]
            assert not isinstance(tree.body[-1], ast.Expr), f"{cell['id']} shows something"
        elif not tags & {"check", "jvm"}:
            visible += 1
            assert not _is_only_asserts(tree), f"{path.name} {cell['id']}: only asserts, visible"
            asserting += any(isinstance(st, ast.Assert) for st in tree.body)
    assert asserting <= visible // 4, f"{path.name}: {asserting} of {visible} visible cells assert"


def test_winviz_only_apis_say_so_and_name_flink_2():
    """Issue 27: `ingestion_time()` and `for_punctuated` are winviz's; Flink 2.x's
    WatermarkStrategy has forMonotonousTimestamps, forBoundedOutOfOrderness, forGenerator and
    noWatermarks (flink-dist 2.3.0). Where lesson 01 introduces them it says so."""
    text = lesson_text("01")
    for api, flink in (
        ("WatermarkStrategy.ingestion_time()", "IngestionTimeAssigner"),
        ("WatermarkStrategy.for_punctuated(fn)", "forGenerator"),
    ):
        at = text.index(api)
        near = text[max(0, at - 300) : at + 700]
        assert "winviz-only" in near and flink in near, api


def test_restore_and_runtime_mode_corrections_are_stated():
    text = lesson_text("03")
    assert "**Watermarks are not in the checkpoint.**" in text
    assert "starts\nagain at `MIN`" in text or "starts again at `MIN`" in text.replace("\n", " ")
    assert "BatchExecutionInternalTimeService" in text
    assert "Spark 4.3.0" in text and "Spark 4.3.0" in lesson_text("10")
    assert "mergeNamespaces" in lesson_text("02")
    assert "createWithEndOfStreamTrigger()" in lesson_text("02")
    for old_api in ("AssignerWithPunctuatedWatermarks", 'keyBy("key")', "FlinkKafkaConsumer"):
        assert old_api in lesson_text("05"), old_api
