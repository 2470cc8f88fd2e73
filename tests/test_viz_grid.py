"""winviz.viz.grid: the values of each control, the thinning rule, the byte budget, and the
runs an explorer precomputes for a lesson page (exact, against the explorer's own runs)."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from jobs import RECORDS, counts

from winviz.viz import grid, lessons, pages
from winviz.viz.explore import explore, make_control
from winviz.viz.grid import Control, control_of, plan, thin
from winviz.viz.spec import chart_dict


def slider(name: str, n: int, initial: int) -> Control:
    values = tuple(range(0, n * 10, 10))
    return Control(name, name, "slider", tuple(map(str, values)), values, initial)


def dropdown(name: str, n: int) -> Control:
    return Control(name, name, "dropdown", tuple("abcdefgh"[:n]), tuple(range(n)), 0)


def test_control_values() -> None:
    c = control_of("bound", make_control("bound", (0, 3000, 1000), 1000), "b")
    assert (c.kind, c.values, c.labels, c.initial) == (
        "slider",
        (0, 1000, 2000, 3000),
        ("0", "1000", "2000", "3000"),
        1,
    )
    # the lesson's value off the step grid is one more position
    off = control_of("x", make_control("x", (0, 10, 5, 3)), "x")
    assert (off.values, off.initial) == ((0, 3, 5, 10), 1)
    floats = control_of("x", make_control("x", (0.0, 0.3, 0.1)), "x")
    assert floats.values == (0.0, 0.1, 0.2, 0.3) and floats.labels == ("0", "0.1", "0.2", "0.3")
    dd = control_of("size", make_control("size", {"5 s": 5000, "10 s": 10000}, 10000), "s")
    assert (dd.kind, dd.values, dd.labels, dd.initial) == (
        "dropdown",
        (5000, 10000),
        ("5 s", "10 s"),
        1,
    )
    text = control_of("name", widgets.Text(value="x"), "name")
    assert (text.kind, text.values, text.initial) == ("fixed", ("x",), 0)


@pytest.mark.parametrize(
    ("n", "initial", "k", "kept"),
    [
        (61, 1, 61, list(range(61))),  # fits: every value
        (61, 1, 12, [0, 1, 11, 16, 22, 27, 33, 38, 44, 49, 55, 60]),  # 5 → the lesson's 1
        (61, 30, 3, [0, 30, 60]),  # already a position
        (10, 4, 3, [0, 4, 9]),  # the middle (5 after rounding 4.5) gives way to 4
        (10, 4, 2, [4, 9]),  # two values: the lesson's and the farther end
        (10, 4, 1, [4]),  # fixed at the lesson's value
    ],
)
def test_thin_keeps_ends_evenly_spaced_and_the_lessons_value(n, initial, k, kept) -> None:
    assert thin(n, initial, k) == kept


def test_plan_thins_sliders_and_keeps_dropdowns() -> None:
    # lesson 01: bound 0…60 s by 1 s (61) × 3 intervals = 183 → bound keeps 21 (63 runs)
    bound, interval = slider("bound", 61, 1), dropdown("interval", 3)
    kept = plan([bound, interval], 64)
    assert [len(p) for p in kept] == [21, 3]
    assert kept[0][:3] == [0, 1, 6] and kept[1] == [0, 1, 2]
    thinned = bound.keep(kept[0])
    assert thinned.values[:3] == (0, 10, 60) and thinned.initial == 1
    # lesson 02: 3 assigners × size 6 × slide 10 × gap 10 = 1800 → 3 × 3 × 3 × 2 = 54
    shape = [dropdown("a", 3), slider("size", 6, 1), slider("slide", 10, 4), slider("gap", 10, 2)]
    assert [len(p) for p in plan(shape, 64)] == [3, 3, 3, 2]
    # a grid that fits is unchanged; dropdowns alone over the limit: no plan
    assert plan([slider("x", 13, 4)], 64) == [list(range(13))]
    assert plan([dropdown("a", 8), dropdown("b", 8), dropdown("c", 2)], 64) is None


def test_export_grid_runs_every_point_with_the_explorers_own_charts() -> None:
    calls: list[tuple[int, int]] = []

    def job(records, bound=1000, size=5000):
        calls.append((bound, size))
        return counts(records, bound=bound, size=size)

    ex = explore(job, RECORDS, bound=(0, 2000, 1000), size=[5000, 10000], charts=("timeline",))
    out = grid.export_grid(ex)
    # every point run once, the lesson's first
    assert calls[1:] == [
        (1000, 5000),
        (0, 5000),
        (0, 10000),
        (1000, 10000),
        (2000, 5000),
        (2000, 10000),
    ]
    assert (out["combinations"], len(out["runs"]), out["fallback"]) == (6, 6, "")
    assert [c["labels"] for c in out["controls"]] == [["0", "1000", "2000"], ["5000", "10000"]]
    # first control slowest: runs[2 * bound index + size index]
    for b, bound in enumerate((0, 1000, 2000)):
        for s, size in enumerate((5000, 10000)):
            run = grid.decode(out["blobs"][out["runs"][2 * b + s]])
            expected = ex.compute({"bound": bound, "size": size})
            written = [chart_dict(c) for c in expected.charts]  # (its datasets named rows-N)
            assert run["specs"] == [{k: v for k, v in w.items() if k != "$schema"} for w in written]
            assert run["status"] == expected.summary.text() and run["error"] is False
    # the explorer itself is untouched: same values, one run (its first)
    assert ex.values == {"bound": 1000, "size": 5000} and ex.runs == 1
    assert out["controls"][0] == {
        "name": "bound",
        "label": "out-of-orderness bound (ms)",
        "kind": "slider",
        "labels": ["0", "1000", "2000"],
        "initial": 1,
    }
    assert grid.encode(out) == grid.encode(grid.export_grid(ex))  # byte for byte


def test_identical_runs_are_stored_once_and_failures_are_runs_too() -> None:
    def job(records, bound=1000, unused=0, size=5000):
        return counts(records, bound=bound, size=size)

    ex = explore(job, RECORDS, unused=(0, 2, 1), size=[5000, 0], charts=("timeline",))
    out = grid.export_grid(ex)
    # "unused" changes nothing: one blob for the three good runs; the failures name their call
    assert out["runs"] == [0, 1, 0, 2, 0, 3]
    failed = grid.decode(out["blobs"][1])
    assert failed["error"] is True
    assert failed["status"].startswith("job(data, unused=0, size=0) raised ")
    assert failed["specs"][0]["usermeta"]["winviz"]["status"] == "message"


def test_the_byte_budget_thins_further_then_falls_back() -> None:
    ex = explore(counts, RECORDS, bound=(0, 5000, 500), size=[5000, 10000], charts=("timeline",))
    full = grid.export_grid(ex)
    assert (len(full["runs"]), full["fallback"]) == (22, "")
    one = len(full["blobs"][0])  # the lesson's run (the first computed) sets the first limit
    # room for about 7 runs: 3 bounds × 2 sizes
    small = grid.export_grid(ex, max_bytes=7 * one + one // 2)
    assert [len(c["labels"]) for c in small["controls"]] == [3, 2]
    assert sum(map(len, small["blobs"])) <= 7.5 * one
    assert small["controls"][0]["labels"] == ["0", "1000", "5000"]
    tiny = grid.export_grid(ex, max_bytes=one)
    assert (tiny["runs"], len(tiny["blobs"])) == ([0], 1)
    assert tiny["fallback"].startswith("its grid has 22 combinations and one run takes ")
    assert tiny["fallback"].endswith(
        f"so not even 2 runs fit in the {one / 1e6:g} MB a page may hold"
    )


def test_a_page_holds_the_runs_or_says_why_not() -> None:
    ex = explore(counts, RECORDS, bound=(0, 2000, 1000), size=[5000, 10000], charts=("timeline",))
    payload = grid.export_grid(ex)
    markup, used = lessons.explorer_html({"text/plain": "x"}, payload, grid.MAX_BYTES)
    assert used == sum(map(len, payload["blobs"])) and markup.count("winviz-chart") == 1
    assert "for every one of its 6 combinations" in markup
    assert 'class="winviz-explorer-data"' in markup
    # too little room left on the page: the lesson's run as plain charts and the sizes
    markup, used = lessons.explorer_html({"text/plain": "x"}, payload, 1000)
    assert used == 0 and 'class="winviz-explorer-data"' not in markup
    mb = sum(map(len, payload["blobs"])) / 1e6
    assert (
        f"its runs are not precomputed on this page because its 6 runs take {mb:.2f} MB and "
        "the explorers above already use 3.00 MB of the 3 MB a page may hold." in markup
    )
    assert markup.count('<div class="winviz-chart">') == 1
    lesson = grid.decode(payload["blobs"][payload["runs"][2]])["specs"][0]
    assert pages.chart_element(lesson) in markup


def test_external_resources_looks_inside_the_precomputed_runs() -> None:
    blob = grid.encode({"specs": [{"data": {"url": "https://example.org/d.json"}}]})
    block = {"blobs": [blob], "runs": [0], "controls": []}
    from winviz.viz import pages

    page = f"<html><body>{pages.explorer_element(block, 1)}</body></html>"
    assert pages.external_resources(page) == [
        "Vega-Lite data url 'https://example.org/d.json' (explorer)"
    ]
