"""``bench/browser_bench.py``'s summary over repeated runs (no browser: its own numbers)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import browser_bench as bench


def test_summary_takes_the_median_of_the_runs_medians_and_p90_of_every_step() -> None:
    step = bench.Step
    lab_1 = bench.Explorer(
        "lab",
        "01_x",
        0,
        "slider",
        steps=[
            step(1, 50, 10, cpu=20, kernel_cpu=30),
            step(2, 70, 10, cpu=22, kernel_cpu=40),
            step(3, 200, 10, cpu=30, kernel_cpu=50),
        ],
        run=1,
        load=3.5,
    )
    lab_2 = bench.Explorer(
        "lab",
        "01_x",
        0,
        "slider",
        steps=[step(1, 90, 10, cpu=24, kernel_cpu=35), step(2, 110, 10, cpu=26, kernel_cpu=45)],
        run=2,
        load=4.0,
    )
    pages = bench.Explorer("pages", "01_x", 0, "slider", steps=[step(1, 40, 10, cpu=20)], load=2.0)
    failed = bench.Explorer("pages", "02_y", 1, "dropdown", note="boom", load=2.0)
    lines = bench.summary([lab_1, lab_2, pages, failed]).splitlines()
    # run medians 70 and 100 → 85; p90 of 50, 70, 90, 110, 200 → 110 + 0.6 × 90 = 164;
    # page CPU medians 22 and 25 → 23.5 (shown 24), kernel 40 and 40 → 40
    assert lines[3] == (
        "  01_x #0 (slider)                         lab      2     5     85    164     24"
        "     40   100  met  70 100"
    )
    assert lines[4] == (
        "  01_x #0 (slider)                         pages    1     1     40     40     20"
        "    –      80  met  40"
    )
    assert lines[5] == (
        "  02_y #1 (dropdown)                       pages    0     0    –      –      –  "
        "    –      80  –      note: boom"
    )
    assert lines[6] == (
        "  load average (1 min) at the end of each run: lab 1: 3.5, lab 2: 4.0, pages 1: 2.0"
        " on " + str(__import__("os").cpu_count()) + " CPUs"
    )


def test_a_step_over_the_goal_is_marked_over() -> None:
    slow = bench.Explorer(
        "pages", "07_z", 0, "slider", steps=[bench.Step(1, 81, 5), bench.Step(2, 95, 5)]
    )
    assert bench.summary([slow]).splitlines()[3].split()[-3:] == ["80", "OVER", "88"]


def test_walk_goes_to_an_end_and_back_by_its_stride() -> None:
    assert list(bench.walk(2, 4, 9)) == [1, -1, -1, -1, 1, 1, 1, -1, -1]
    # 6 values by 5: 0 → 5 → 0 → …; 61 values by 5 from 10: up 9 times (to 55)
    assert list(bench.walk(0, 6, 4, 5)) == [1, -1, 1, -1]
    assert list(bench.walk(10, 61, 11, 5)) == [1] * 10 + [-1]
