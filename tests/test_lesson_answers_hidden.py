"""No exercise answer is visible in a lesson or on its exported page.

* A check's code knows the answer: it sits in a cell tagged ``check`` that JupyterLab shows
  collapsed (``jupyter.source_hidden``) and ``make lessons`` leaves out; worked solutions are
  tagged ``solution`` and treated the same way. The answer cell the learner edits stays visible.
* The self-tests of the checks live in ``tests/test_lesson_exercises.py``, not in the lessons.
* What a page shows of an exercise section (its prose and its answer cells) names no answer.
* ``make lessons`` really leaves the tagged cells out of a built page, and its index counts the
  charts the page draws.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from lesson_notebook import write_lesson

from winviz.viz import lessons

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

# The answers of every exercise, as a page would print them.
ANSWERS = {
    # exercise 1's answer is the pair (2, 3); exercise 2's rule is 1652 < bound <= 4711
    "00": ["(2, 3)", "4711", "4 711", "4,711", "1652", "1 652", "1,652"],
    "01": ["8499", "8 499", "8,499", "2001", "2 001", "2,001"],
    "02": ["(1, 13)", "[1, 13)"],
    "03": ["(2, 4)"],
    # the question names countWindow(4, 2); its answer is the panes, the third one distinctive
    "04": ["CountTrigger.of(2)", "CountEvictor.of(4)", "[21.0, 23.5, 23.0, 27.0]"],
    # exercise 3 (which late readings a restore makes on time) is the set {p5, p6}
    "05": [
        "11904104",
        "11 904 104",
        "11,904,104",
        "1566640319998",
        "1 566 640 319 998",
        "{'p5', 'p6'}",
        "{'p6', 'p5'}",
        '{"p5", "p6"}',
        '{"p6", "p5"}',
        "['p5', 'p6']",
    ],
    # exercise 2's rule: a late ts merges the sessions of 0 and 3000 when 3000 - gap <= ts <= gap
    "06": ["7499", "7 499", "7,499", "4999 + lateness", "3000 - gap <= ts <= gap", "3000 - gap"],
    # exercise 1's rule: idle at 360473 + (timeout // 200 + 1) * 200; exercise 2's loads
    "07": ["40 s", "360473", "360 473", "360_473", "timeout // 200", "[0, 181, 245, 105]", "245"],
    "08": ["9 s", "90000", "90 000", "90,000", "90_000", "90 s"],
    # exercise 1's rule: offset = -utc_offset, modulo the size (New York's daily one: hours(5))
    "09": ["-utc_offset", "% size", "hours(5)", "18000000", "18 000 000", "hours(-19)"],
    "10": ["10500", "10 500", "10,500", "WorkedInactivityAlert", "delete_event_time_timer(last"],
    # ("ann", 3000) is an input record the reduce cell prints; ("ann", 4000) is late only
    "11": ["('ann', 0, 3)", "('ann', 4000)"],
    # the 2-second join prints a superset of exercise 2's pairs: its answer is the 1-second
    # list, which starts with ann's 1000-1600 pair and ends with her 4000-4900 one
    "12": ["if upper > 0", "[('ann', 1000, 1600)", "('ann', 4000, 4900)]", "('ann', 4000, 4900)}"],
    "13": ["(1200, 2000)", "1200, 2000", "({2000, 3000, 4000}"],
    "14": ["(1000, 4000, 'abc')", "s1 <= e2"],
    "15": ["(1000, 6000, 10.0)", "(10000, 15000, 30.0)", "5000 <= t <= 6000"],
}


def notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def exercise_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells from the "## Exercises" heading on."""
    starts = [i for i, c in enumerate(nb.cells) if re.search(r"^## Exercises", c.source, re.M)]
    assert len(starts) == 1, "one '## Exercises' section per lesson"
    return nb.cells[starts[0] :]


def tags(cell: nbformat.NotebookNode) -> set[str]:
    return set(cell.metadata.get("tags", []))


def test_every_lesson_has_its_answers_listed():
    assert sorted(p.name[:2] for p in LESSONS) == sorted(ANSWERS)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_checks_are_collapsed_cells_and_self_tests_are_gone(path: Path):
    nb = notebook(path)
    checks = [c for c in nb.cells if re.search(r"^def check_\d\(", c.source, re.M)]
    assert len(checks) >= 2  # two exercises at least (05 has a third, on a restore)
    for cell in checks:
        assert "check" in tags(cell), cell.source[:60]
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
        assert not re.search(r"^answer_\d = ", cell.source, re.M)  # the answer cell is apart
    for cell in nb.cells:
        if "solution" in tags(cell):
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
        if cell.cell_type == "code":
            assert not re.search(r"^\s*assert check_\d\(", cell.source, re.M), cell.source[:80]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_what_a_page_shows_of_the_exercises_names_no_answer(path: Path):
    shown = lessons.without_tags(notebook(path), lessons.ANSWER_TAGS)
    text = "\n".join(c.source for c in exercise_cells(shown))
    found = [
        a for a in ANSWERS[path.name[:2]] if re.search(rf"(?<![\w.-]){re.escape(a)}(?![\w])", text)
    ]
    assert found == [], f"{path.name}: the exercises show {found}"
    # and the collapsed cells did hold something worth hiding
    hidden = [c for c in notebook(path).cells if tags(c) & lessons.ANSWER_TAGS]
    assert len(hidden) >= 2


# Answers distinctive enough to look for on the whole page, not only in its exercises: a value
# the lesson prints, asserts or says elsewhere is an answer shown (lessons audit: 04's
# countWindow recipe and the 5 firings of its one-jump example, 05's record 893, 06's 1500 (the
# session example's own element), 07's 361 473, 08's 53824 and 09's upsert were). Left out:
# 00's 4000 (f's event time, the running example), 08's 90000 (a window start in every table:
# the answer is *which* start, the rule of lessons 01 and 08); answers of one digit.
ANYWHERE = {
    "01": ["8499", "8 499", "8,499", "2001", "2 001", "2,001"],
    "02": ["(1, 13)", "[1, 13)"],
    "03": ["(2, 4)"],
    "04": ["[21.0, 23.5, 23.0, 27.0]"],
    "05": [
        "11904104",
        "11 904 104",
        "1566640319998",
        "1 566 640 319 998",
        "{'p5', 'p6'}",
        '{"p5", "p6"}',
        "['p5', 'p6']",
    ],
    "06": ["7499", "7 499", "7,499", "3000 - gap"],
    "07": ["40 s", "245", "181", "360 473", "360473", "360_473"],
    "09": ["-utc_offset", "hours(5)", "18000000", "18 000 000", "hours(-19)"],
    "10": ["10500", "10 500", "10,500", "10_500"],
}


@pytest.mark.parametrize("prefix", sorted(ANYWHERE))
def test_distinctive_answers_are_nowhere_on_the_page(prefix: str):
    (path,) = [p for p in LESSONS if p.name.startswith(prefix)]
    text = "\n".join(
        c.source for c in lessons.without_tags(notebook(path), lessons.ANSWER_TAGS).cells
    )
    found = [a for a in ANYWHERE[prefix] if re.search(rf"(?<![\w.-]){re.escape(a)}(?![\w])", text)]
    assert found == [], f"{path.name} shows the answers {found} outside the hidden cells"


def test_an_answer_shown_before_the_exercises_is_found():
    """The whole-page search above would have caught 05's old exercise 2 (which record's
    watermark made 892 late? 893, named in the lesson's own sentences)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("It fired when 893's watermark arrived."),
        nbformat.v4.new_markdown_cell("## Exercises\n\n**2.** Which record's watermark?"),
    ]
    text = "\n".join(c.source for c in lessons.without_tags(nb, lessons.ANSWER_TAGS).cells)
    assert re.search(r"(?<![\w.-])893(?![\w])", text)
    assert not re.search(r"(?<![\w.-])893(?![\w])", exercise_cells(nb)[0].source)


def test_without_answers_drops_check_and_solution_cells_only():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# T"),
        nbformat.v4.new_code_cell("def check_1(a):\n    return 'x'", metadata={"tags": ["check"]}),
        nbformat.v4.new_code_cell("answer_1 = None\nprint(check_1(answer_1))"),
        nbformat.v4.new_code_cell("print(check_1(42))", metadata={"tags": ["solution", "x"]}),
    ]
    out = lessons.without_tags(nb, lessons.ANSWER_TAGS)
    assert [c.source for c in out.cells] == ["# T", "answer_1 = None\nprint(check_1(answer_1))"]
    assert len(nb.cells) == 4  # the input is not changed


def test_a_built_page_leaves_out_checks_solutions_and_facts_and_counts_its_charts(
    tmp_path: Path,
):
    src = tmp_path / "src"
    src.mkdir()
    job = (
        "import winviz as wv\nwv.setup_rendering()\n"
        "env = wv.StreamExecutionEnvironment()\n"
        "(env.from_collection([('a', 1000), ('a', 7000)], arrival_times=[0, 100])\n"
        " .assign_timestamps_and_watermarks(wv.WatermarkStrategy.for_bounded_out_of_orderness(0)\n"
        "     .with_timestamp_assigner(lambda e, _: e[1]))\n"
        " .key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(5000))\n"
        " .aggregate(wv.CountAggregate()).sink_to('n'))\n"
        "result = env.execute()"
    )
    cells = [
        nbformat.v4.new_markdown_cell("# 98 · Hidden answers"),
        nbformat.v4.new_code_cell(job),
        nbformat.v4.new_code_cell("wv.timeline(result.trace)"),
        nbformat.v4.new_code_cell(
            "assert len(result.outputs['n']) == 2  # SECRET-FACT",
            metadata={"tags": ["facts"], "jupyter": {"source_hidden": True}},
        ),
        nbformat.v4.new_markdown_cell("## Exercises\n\n**1.** How many windows fire?"),
        nbformat.v4.new_code_cell(
            "def check_1(n):\n    secret = 'SECRET-CHECK'\n"
            "    return 'Not answered yet.' if n is None else ('Correct' if n == 2 else 'No.')",
            metadata={"tags": ["check"], "jupyter": {"source_hidden": True}},
        ),
        nbformat.v4.new_code_cell("answer_1 = None   # your answer\nprint(check_1(answer_1))"),
        nbformat.v4.new_code_cell(
            "print('SECRET-SOLUTION', check_1(2))",
            metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}},
        ),
    ]
    write_lesson(src / "98_hidden.ipynb", cells)
    (page,) = lessons.build_lessons(src, tmp_path / "site")
    html = page.path.read_text(encoding="utf-8")
    assert "SECRET" not in html and "def check_1" not in html
    assert "Not answered yet." in html  # the answer cell and its output stay
    assert "answer_1" in html
    assert page.charts == 1 == lessons.count_charts(html)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "(1 chart)</small>" in index


def test_lesson_json_keeps_the_collapsed_flag_where_jupyterlab_reads_it():
    # JupyterLab collapses a cell's input when metadata.jupyter.source_hidden is true
    cells = json.loads(LESSONS[0].read_text())["cells"]
    hidden = [c for c in cells if "check" in c["metadata"].get("tags", [])]
    assert hidden and all(c["metadata"]["jupyter"] == {"source_hidden": True} for c in hidden)
