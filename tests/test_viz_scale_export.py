"""The 5,000-row rule on a 100k-event trace, and offline export (HTML, SVG, PNG)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from jobs import bounded, count_pipeline, explorer_job

import winviz as wv
from winviz import viz
from winviz.viz.fates import element_fates
from winviz.viz.pages import external_resources
from winviz.viz.trace_view import open_trace


def big_trace(n: int) -> wv.Trace:
    """n events, 20 keys, 10 ms apart, up to 3 s of disorder; bounded out-of-orderness 1 s,
    tumbling 5 s windows, allowed lateness 1 s, late data to a side output."""
    rnd = random.Random(7)
    events = [(f"k{i % 20}", i * 10 - rnd.randrange(0, 3000)) for i in range(n)]
    return explorer_job(events, 1000).trace


@pytest.fixture(scope="module")
def trace_100k() -> wv.Trace:
    return big_trace(100_000)


def test_100k_events_stay_under_the_row_limit(trace_100k) -> None:
    import altair as alt

    assert alt.data_transformers.options.get("max_rows", 5000) == 5000  # never disabled
    # (view="timeline": 3 s of disorder over a 1,000 s run would be drawn as the skew chart)
    spec = viz.timeline(trace_100k, view="timeline").to_dict()  # MaxRowsError above 5,000 rows
    sizes = {name: len(rows) for name, rows in spec["datasets"].items()}
    assert max(sizes.values()) <= 5000
    subtitle = spec["title"]["subtitle"]
    binned = [s for s in subtitle if "elements binned on a" in s]
    assert binned == [
        "100,000 elements binned on a 120 × 80 grid: a mark is a cell's elements of one fate, "
        "at their mean position, sized by count"
    ]
    element = next(
        lay for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "elements (binned)"
    )  # fmt: skip
    counts = spec["datasets"][element["data"]["name"]]
    assert sum(r["count"] for r in counts) == 100_000
    assert element["encoding"]["size"]["field"] == "count"
    assert subtitle == [
        "operator 'window': 100,000 elements, 4,020 (key, window) pairs, 12,143 firings",
        # "watermarks" and "window" step together: one line
        "watermark: 1,251 of 4,289 records drawn (each processing-time bucket's first, last, "
        "lowest and highest kept)",
        # late = timestamp <= the window operator's watermark (up to 3 s of disorder against
        # a 1 s bound: more than half the elements)
        "elements: 43,814 on time, 54,590 late, accepted, 1,596 side output",
        binned[0],
        "12,143 firings drawn as one mark per window and cause (at the first firing's "
        "processing time)",
        "4,020 cleanups drawn as one mark per window (its last)",
    ]

    lanes = viz.window_lanes(trace_100k).to_dict()
    assert max(len(rows) for rows in lanes["datasets"].values()) <= 5000


def test_binned_fates_add_up(trace_100k) -> None:
    spec = viz.timeline(trace_100k, view="timeline").to_dict()
    rows = [r for d in spec["datasets"].values() for r in d if r.get("kind") == "elements (binned)"]
    by_fate: dict[str, int] = {}
    for r in rows:
        by_fate[r["what"]] = by_fate.get(r["what"], 0) + r["count"]
    kinds = trace_100k.kinds()
    assert by_fate["side output"] == kinds["side_output"]
    assert sum(by_fate.values()) == kinds["element"]


def small_chart():
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("b", 2000), ("a", 6000)],
        5000,
        bounded(1000),
        arrival_times=[0, 300, 600],
    )
    return viz.timeline(env.execute().trace)


def test_save_html_is_self_contained(tmp_path) -> None:
    path = viz.save_html(small_chart(), tmp_path / "t.html")
    page = path.read_text(encoding="utf-8")
    assert external_resources(page) == []
    assert not re.search(r"<script[^>]*src=", page)
    assert '"$schema"' not in page
    assert "vegaEmbed" in page and "fired: end of input" in page


def test_external_resources_finds_cdn_scripts() -> None:
    page = '<script src="https://cdn.jsdelivr.net/npm/vega@6"></script><link href="//x/y.css">'
    assert len(external_resources(page)) == 2


def test_svg_and_png_render_marks(tmp_path) -> None:
    svg = viz.save_svg(small_chart(), tmp_path / "t.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg")
    assert 'class="mark-symbol role-mark' in svg  # elements, firings
    assert 'class="mark-rect role-mark' in svg  # window bands
    assert 'class="mark-line role-mark' in svg  # watermark
    assert "Timeline" in svg
    png = viz.save_png(small_chart(), tmp_path / "t.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_message_card_exports_too(tmp_path) -> None:
    svg = viz.save_svg(viz.timeline(wv.Trace()), tmp_path / "m.svg").read_text()
    assert "The trace is empty." in svg


# -- the cheap building blocks behind the charts (spec.py, scale.bin_fates, TraceView) --------


def test_a_layer_keeps_altairs_row_limit() -> None:
    import altair as alt

    from winviz.viz import spec

    rows = [{"x": i} for i in range(5001)]
    x = {"x": {"field": "x", "type": "quantitative"}}
    with pytest.raises(alt.MaxRowsError):
        spec.layer(rows, {"type": "point"}, x)
    out = spec.altair_chart(spec.layer(rows[:5000], {"type": "point"}, x)).to_dict()
    assert out["datasets"][out["data"]["name"]] == rows[:5000]
    # the user's own setting is honoured (here: a lower limit)
    with alt.data_transformers.enable("default", max_rows=10), pytest.raises(alt.MaxRowsError):
        spec.layer(rows[:11], {"type": "point"}, x)


def test_layer_rows_serialise_as_a_dataframe_would() -> None:
    import altair as alt
    import pandas as pd

    from winviz.viz import spec

    rows = [{"x": 1, "what": "a"}, {"x": 2, "what": "b"}]
    layer = spec.layer(rows, {"type": "point"}, {"x": {"field": "x", "type": "quantitative"}})
    other = spec.layer(rows[:1], {"type": "point"}, {"x": {"field": "x", "type": "quantitative"}})
    chart = spec.altair_chart({"layer": [layer, other]})
    via_frames = alt.layer(
        alt.Chart(pd.DataFrame(rows)).mark_point().encode(x="x:Q"),
        alt.Chart(pd.DataFrame(rows[:1])).mark_point().encode(x="x:Q"),
    ).to_dict()
    assert chart.to_dict() == via_frames
    assert spec.tooltips(rows, ["x"]) == [{"field": "what", "type": "nominal"}]


def test_bin_points_exact_cells() -> None:
    import pandas as pd

    from winviz.viz import palette, scale

    frame = pd.DataFrame(
        {
            "ts": [0.0, 1.0, 9.0, 9.0, 5.0],
            "proc_time": [0.0, 1.0, 9.0, 9.0, 5.0],
            "fate": ["on time", "on time", "on time", "dropped", None],
        }
    )
    codes = np.array([palette.FATES.index(f) for f in frame["fate"][:4]])
    xs, ys = frame["ts"][:4].to_numpy(), frame["proc_time"][:4].to_numpy()
    shuffled = ["dropped", "side output", "on time"]  # (labels in any order: cells sorted)
    for cells, nx, ny in (
        scale.bin_points(xs, ys, np.array([2, 2, 2, 0]), shuffled, "fate", (0, 10), (0, 10), 100),
        scale.bin_points(xs, ys, codes, palette.FATES, "fate", (0, 10), (0, 10), 100),
    ):
        assert (nx, ny) == (120, 80)
        # sorted by (x cell, y cell, fate)
        assert cells[["fate", "count", "x", "y"]].values.tolist() == [
            ["on time", 1, 0.0, 0.0],
            ["on time", 1, 1.0, 1.0],
            ["dropped", 1, 9.0, 9.0],
            ["on time", 1, 9.0, 9.0],
        ]
        assert cells["x_hi"].iloc[0] == pytest.approx(10 / 120)
        assert cells["y_lo"].iloc[2] == pytest.approx(9.0 // (10 / 80) * (10 / 80))


@pytest.mark.parametrize("present", [(0,), (0, 1, 2, 3), (1, 3), (2, 0)])
def test_bin_points_gives_the_same_cells_whatever_the_labels_order(
    present: tuple[int, ...],
) -> None:
    """``bin_points`` of fates as their positions in FATES gives exactly the cells of fates as
    positions in the FATES reversed (the cells ordered by the labels' texts, never by the
    codes): same rows, order, values and grid, whichever fates are present; 30,000 points
    coarsen the grid to fit the limit."""
    import pandas as pd

    from winviz.viz import palette, scale

    rnd = np.random.default_rng(len(present))
    n = 30_000
    xs, ys = rnd.normal(0, 50, n).round(), rnd.uniform(-10, 300, n).round()
    codes = rnd.choice(np.array(present), n)
    fates = np.array([palette.FATES[c] for c in codes], dtype=object)
    frame = pd.DataFrame({"ts": xs, "proc_time": ys, "fate": pd.Series(fates, dtype=object)})
    ranges = ((-200, 200), (-10, 300))
    reverse = palette.FATES[::-1]
    want = scale.bin_points(np.clip(xs, -200, 200), ys, 3 - codes, reverse, "fate", *ranges, 2_000)
    got = scale.bin_points(np.clip(xs, -200, 200), ys, codes, palette.FATES, "fate", *ranges, 2_000)
    assert got[1:] == want[1:] and want[1:] != (120, 80)
    pd.testing.assert_frame_equal(got[0], want[0])
    by_texts = frame.assign(x=np.clip(xs, -200, 200)).groupby("fate")["x"]
    assert got[0].groupby("fate")["count"].sum().to_dict() == by_texts.size().to_dict()


def test_trace_view_windows_global_and_none() -> None:
    import numpy as np

    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 1), ("a", 2)], arrival_times=[0, 1])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.GlobalWindows.create())
        .trigger(wv.CountTrigger.of(2))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    trace = env.execute().trace
    for source in (trace, trace.to_pandas()):
        view = open_trace(source)
        rows = view.select("assigned", "element")
        start, end, present = view.bounds(rows)
        assert present.tolist() == [False] * len(rows)  # global window / no window
        assert start.tolist() == end.tolist() == [0] * len(rows)
        ints, has = view.ints("ts", rows)
        assert has.all() and sorted(set(ints.tolist())) == [1, 2]
        assert view.operators("assigned") == ["window"]
        assert element_fates(view, "window")["fate"].tolist() == ["on time", "on time"]
        assert np.array_equal(view.kinds_of(rows), view.kinds[rows])


def test_bin_index_is_the_floor_division() -> None:
    # cell edges, values a hair below and above them, and a width whose multiples round
    from winviz.viz.scale import _bin_index

    lo, hi, n = -1_000_003, 2_000_000_017, 97
    width = (hi - lo) / n
    edges = lo + np.arange(n + 1) * width
    values = np.concatenate(
        [edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), [lo, hi, 0.0]]
    )
    values = np.clip(values, lo, hi)
    expected = np.clip((values - lo) // width, 0, n - 1).astype(np.int64)
    assert _bin_index(values - lo, width, n).tolist() == expected.tolist()
    assert _bin_index(np.array([0.0, 2.5, 2.9999999999, 3.0]), 1.0, 5).tolist() == [0, 2, 2, 3]


def test_thinning_keeps_every_extreme() -> None:
    """Issue 26: a thinned line keeps each bucket's first, last, lowest and highest row
    (M4): a spike inside a bucket of a queue-size line is still drawn, and a monotone step
    line keeps each bucket's first and last step."""
    import pandas as pd

    from winviz.viz import scale

    n = 10_000
    size = [i % 7 for i in range(n)]
    size[4321] = 99  # one spike, mid-bucket
    frame = pd.DataFrame({"proc_time": range(n), "domain": "event", "size": size})
    thinned = scale.thin_steps(frame, "proc_time", "domain", 1_000, "size")
    assert len(thinned) <= 1_000
    assert thinned["size"].max() == 99 and thinned["size"].min() == 0
    steps = pd.DataFrame({"proc_time": range(n), "operator": "w", "watermark": range(n)})
    kept = scale.thin_steps(steps, "proc_time", "operator", 1_000)
    assert len(kept) <= 1_000
    assert kept["watermark"].iloc[0] == 0 and kept["watermark"].iloc[-1] == n - 1
    keep, bins = scale.keep_extremes(np.arange(n), np.array(size), np.zeros(n), 1_000)
    assert len(keep) <= 1_000 and bins == 250
    assert max(size[i] for i in keep) == 99


def test_thinning_breaks_ties_as_its_caller_asks() -> None:
    """Issue 30: one M4 rule. Of equal values the first is the lowest; the highest is the
    last (``keep_extremes``' default, the skew chart) or the first (``thin_steps``, the queue
    sizes); a missing value is never an extreme; a monotone line keeps each bin's first and
    last row of each group, wherever its rows interleave."""
    import pandas as pd

    from winviz.viz import scale

    ys = [2, 5, 1, 5, 1, float("nan"), 5, 3]
    keep, bins = scale.keep_extremes(np.arange(8), np.array(ys), np.zeros(8), 4)
    assert (keep.tolist(), bins) == ([0, 2, 6, 7], 1)
    keep, _ = scale.keep_extremes(np.arange(8), np.array(ys), np.zeros(8), 4, False)
    assert keep.tolist() == [0, 1, 2, 7]
    frame = pd.DataFrame({"t": range(8), "g": "a", "size": ys}, index=range(10, 18))
    assert scale.thin_steps(frame, "t", "g", 4, "size").index.tolist() == [10, 11, 12, 17]
    steps = pd.DataFrame({"t": [0, 0, 1, 1, 2, 2, 3, 3], "g": list("abababab")})
    assert scale.thin_steps(steps, "t", "g", 4).index.tolist() == [0, 1, 6, 7]
    assert scale.thin_steps(steps, "t", "g", 8) is steps


def test_every_kth_samples_a_list_or_a_frame_alike() -> None:
    import pandas as pd

    from winviz.viz.scale import every_kth

    assert every_kth(list(range(10)), 4) == ([0, 3, 6, 9], 3)
    assert every_kth([1, 2], 4) == ([1, 2], 1)
    sample, k = every_kth(pd.DataFrame({"a": range(10)}), 4)
    assert (sample["a"].tolist(), k) == ([0, 3, 6, 9], 3)


def test_cells_count_and_reduce_the_rows_of_each_key_tuple() -> None:
    """``scale.cells``: a cell per distinct key tuple, in key order (or of first row), its
    rows counted and summed / min / max (NaN passed over) / mean; codes with ``sizes``; key
    tuples past 2**62 possible cells still counted exactly."""
    from winviz.viz import scale

    keys = [np.array(["b", "a", "b", "a", "b"], dtype=object), np.array([2, 1, 2, 3, 1])]
    columns = {
        "n": ("sum", np.array([1, 2, 3, 4, 5])),
        "fired": ("sum", np.array([True, False, True, True, False])),
        "lo": ("min", np.array([5.0, 1.0, 2.0, np.nan, 9.0])),
        "hi": ("max", np.array([5, 1, 2, 7, 9])),
        "m": ("mean", np.array([1.0, 2.0, 3.0, 4.0, 5.0])),
    }
    (names, bins), c = scale.cells(keys, **columns)
    assert (names.tolist(), bins.tolist()) == (["a", "a", "b", "b"], [1, 3, 1, 2])
    got = {k: v.tolist() for k, v in c.items()}
    assert {k: v for k, v in got.items() if k != "lo"} == {
        "count": [1, 1, 1, 2],
        "n": [2, 4, 5, 4],
        "fired": [0, 1, 0, 2],
        "hi": [1, 7, 9, 5],
        "m": [2.0, 4.0, 5.0, 2.0],
    }
    assert got["lo"][0] == 1.0 and np.isnan(got["lo"][1]) and got["lo"][2:] == [9.0, 2.0]
    assert c["n"].dtype == np.int64 and c["hi"].dtype == keys[1].dtype
    (names, bins), c = scale.cells(keys, appearance=True)  # by first row: 0, 1, 3, 4
    assert list(zip(names, bins.tolist(), c["count"].tolist(), strict=True)) == [
        ("b", 2, 2),
        ("a", 1, 1),
        ("a", 3, 1),
        ("b", 1, 1),
    ]
    (names,), c = scale.cells([np.array(["b", None, "a", "b"], dtype=object)])
    assert (names.tolist(), c["count"].tolist()) == (["a", "b", None], [1, 2, 1])  # (None last)
    (codes,), c = scale.cells([np.array([0, 2, 2])], sizes=[3])
    assert (codes.tolist(), c["count"].tolist()) == ([0, 2], [1, 2])
    wide = np.arange(70_000) % 60_000  # four keys of 60,000 values: 1.3e19 possible cells
    found, c = scale.cells([wide, wide, wide, -wide], w=("sum", wide))
    assert len(c["count"]) == 60_000 and c["count"][:10_000].tolist() == [2] * 10_000
    assert c["count"][10_000:].sum() == 50_000 and found[3][:3].tolist() == [0, -1, -2]
    assert found[0][-2:].tolist() == [59_998, 59_999] and c["w"][:3].tolist() == [0, 2, 4]


def test_a_sampling_note_names_k_as_an_ordinal() -> None:
    """``every_kth``'s k in words: "every 2nd", never "every 2th" (the notes said "2th", "3th")."""
    from winviz.viz import scale, window_marks

    words = [scale.nth(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)]
    assert words == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "23rd",
        "101st",
        "111th",
        "112th",
    ]
    notes: list[str] = []
    rows = window_marks._sampled(list(range(2 * scale.ROW_LIMIT + 1)), notes, "every {} row")
    assert (len(rows), notes) == (3334, ["every 3rd row"])  # (10,001 rows, k = 3)
