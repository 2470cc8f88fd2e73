"""What ``make lessons`` prints (issue 29): the explorers and widgets each page holds, and no
kernel warning a user cannot act on (the kernels run over IPC, not TCP)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from winviz.viz import export, grid, lessons
from winviz.viz.export import EXPLORER_KEY

ROOT = Path(__file__).resolve().parent.parent


def _explorer_page(fallback: str = "") -> str:
    specs = [{"mark": "point"}]
    payload = {
        "format": 1,
        "call": "counts(data, bound=1000)",
        "controls": [
            {"name": "bound", "label": "b", "kind": "slider", "labels": ["0", "1000"], "initial": 1}
        ],
        "runs": [0, 0],
        "blobs": [grid.encode({"specs": specs, "status": "fired 3", "error": False})],
        "combinations": 2,
        "fallback": fallback,
    }
    data = {export.EXPORT_MIMETYPE: {EXPLORER_KEY: payload}, "text/plain": "<Explorer>"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("ex", outputs=[nbformat.v4.new_output("display_data", data=data)])
    ]
    static, _, _ = lessons.staticize(nb)
    return lessons.render_page(static, "t", "")


def test_count_explorers_tells_interactive_from_frozen() -> None:
    assert lessons.count_explorers(_explorer_page()) == (1, 0)
    assert lessons.count_explorers(_explorer_page(fallback="too many")) == (0, 1)
    assert lessons.count_explorers("<html></html>") == (0, 0)


def test_report_line_names_explorers_and_widgets_shown_as_notes(tmp_path) -> None:
    page = lessons.LessonPage(
        lesson="02_windows",
        path=tmp_path / "02_windows.html",
        size=1_500_000,
        seconds=12.34,
        charts=9,
        widgets=0,
        title="Windows",
        explorers=1,
    )
    assert lessons.report_line(page) == f"{tmp_path}/02_windows.html  1.50 MB  9 charts  " + (
        "1 explorer  12.3 s"
    )
    both = lessons.report_line(
        lessons.LessonPage(**{**page.__dict__, "explorers": 1, "frozen": 1, "widgets": 2})
    )
    assert "2 explorers (1 at the lesson's values only)  2 widgets as a note (needs a kernel)" in (
        both
    )
    plain = lessons.report_line(lessons.LessonPage(**{**page.__dict__, "explorers": 0}))
    assert plain.endswith("9 charts  12.3 s")


_LESSON = """import winviz as wv
from ipykernel.kernelapp import IPKernelApp

wv.setup_rendering()
print(f"transport={IPKernelApp.instance().transport}")


def counts(data, bound=500):
    env = wv.StreamExecutionEnvironment()
    (env.from_collection(data, arrival_times=[0, 100, 200, 900])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound)
            .with_timestamp_assigner(lambda e, _: e[1]))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(5)))
        .aggregate(wv.CountAggregate())
        .sink_to("counts"))
    return env.execute()


wv.explore(counts, [("alice", 1_000), ("bob", 2_500), ("alice", 4_999), ("alice", 900)],
           bound=(0, 1_000, 500))
"""


def test_make_lessons_reports_the_explorer_and_prints_no_tcp_warning(tmp_path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Probe"), nbformat.v4.new_code_cell(_LESSON)]
    nbformat.write(nb, src / "00_probe.ipynb")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "winviz.viz.lessons", str(src), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "without encryption" not in done.stderr + done.stdout
    (line,) = [t for t in done.stdout.splitlines() if "00_probe.html" in t]
    assert "  1 explorer  " in line and "widget" not in line
    page = (tmp_path / "out" / "00_probe.html").read_text()
    assert "transport=ipc" in page
    assert not list(src.glob("kernel-ipc*"))  # no socket files left in the lesson's folder
