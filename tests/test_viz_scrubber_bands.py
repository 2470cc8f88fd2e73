"""The scrubber's windows are at least ``bands.MIN_BAND_PX`` high, as the timeline's bands
(issue 26): a window opened and fired at one processing time — the running example's
[20000, 30000), its element h and the end-of-input firing both at 25,100 ms — had no height
at any t and drew nothing. Checked on the spec (its transform, exact) and on what Vega drew
(vl_convert's SVG of the chart at several t: each window's rectangle, its y, y2 and height)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import vl_convert as vlc

from tests.browser.gallery import running_example
from winviz import viz
from winviz.viz.bands import MIN_BAND_PX, _Window
from winviz.viz.palette import TimeAxis
from winviz.viz.scrubber import STATES_TITLE
from winviz.viz.scrubber import window_layer as scrubber_window_layer


@pytest.fixture(scope="module")
def scrubber_spec() -> dict[str, Any]:
    return viz.scrubber(running_example()).to_dict()


def window_layer(spec: dict[str, Any]) -> dict[str, Any]:
    return next(
        lay
        for lay in spec["layer"]
        if lay["encoding"].get("color", {}).get("title") == STATES_TITLE
    )


def drawn(spec: dict[str, Any], t: int) -> dict[str, tuple[str, str, float]]:
    """The windows' rectangles Vega draws at ``t``: per window, its y and y2 as the
    rectangle's aria label gives them, and its height in pixels (rounded to 1e-6 px)."""
    spec = json.loads(json.dumps(spec))
    (param,) = [p for p in spec["params"] if p["name"] == "t"]
    param["value"] = t
    svg = vlc.vegalite_to_svg(spec)
    rects = re.findall(
        r'aria-label="x: [^;]*; y: ([^;]*); x2: [^;]*; y2: ([^;]*);[^"]*window: (\[[^)]*\));'
        r'[^"]*" role="graphics-symbol" aria-roledescription="rect mark" d="M[^h]*h[^v]*v([^h]*)h',
        svg,
    )
    return {w: (y0, y1, round(abs(float(h)), 6)) for y0, y1, w, h in rects}


def test_the_window_layer_pads_a_short_window_in_vega(scrubber_spec) -> None:
    """The transform: a window up to its close or t (``y2``), then ``_visible_span``'s rule:
    on this 400 px plot over 27,241 ms, 8 px is 544.82 ms, 272.41 either side of the middle,
    kept within [483, 27724]."""
    lay = window_layer(scrubber_spec)
    assert (scrubber_spec["height"], MIN_BAND_PX) == (400, 8)
    assert lay["encoding"]["y"]["field"] == "y"
    assert lay["encoding"]["y"]["scale"]["domain"] == [483, 27724]
    assert lay["encoding"]["y2"] == {"field": "y2"}
    assert lay["transform"][1:] == [
        {"filter": "datum.state != 'not yet'"},
        {
            "calculate": "datum.closed_at != null && datum.closed_at < t ? datum.closed_at : t",
            "as": "y2",
        },
        {
            "calculate": "datum.y2 - datum.opened_at < 544.82 ? clamp((datum.opened_at + "
            "datum.y2) / 2 - 272.41, 483, 27179.18) : datum.opened_at",
            "as": "y",
        },
        {
            "calculate": "datum.y2 - datum.opened_at < 544.82 ? datum.y + 544.82 : datum.y2",
            "as": "y2",
        },
    ]
    # the data: the true times (the tooltip gives them as texts)
    assert [
        (w["window"], w["opened_at"], w["fired_at"], w["closed_at"])
        for w in scrubber_spec["datasets"][lay["data"]["name"]]
    ] == [
        ("[0 ms, 10,000 ms)", 1200, 12200, 12200),
        ("[10,000 ms, 20,000 ms)", 12100, 25100, 25100),
        ("[20,000 ms, 30,000 ms)", 25100, 25100, 25100),
    ]
    assert [tip["field"] for tip in lay["encoding"]["tooltip"]] == [
        "kind", "window", "state", "keys", "elements", "firings", "opened", "closed"
    ]  # fmt: skip


def test_a_window_opened_and_fired_at_one_time_is_drawn_8_px_at_the_end(scrubber_spec) -> None:
    """At the slider's end (25,100 ms) [20000, 30000) is drawn 8 px high centred on 25,100 ms:
    24,827.59 to 25,372.41 ms, as the timeline's band of it; the others their true extent."""
    assert scrubber_spec["params"][0]["value"] == 25100
    px = 400 / 27241  # px per ms
    assert drawn(scrubber_spec, 25100) == {
        "[0 ms, 10,000 ms)": ("1,200", "12200", round(11000 * px, 6)),
        "[10,000 ms, 20,000 ms)": ("12,100", "25100", round(13000 * px, 6)),
        "[20,000 ms, 30,000 ms)": ("24,828", "25372.41", 8.0),
    }
    timeline = viz.timeline(running_example(), view="timeline").to_dict()
    band = next(lay for lay in timeline["layer"] if lay["mark"]["type"] == "rect")
    rows = timeline["datasets"][band["data"]["name"]]
    assert (rows[2]["y"], rows[2]["y2"]) == (24827.59, 25372.41)


def test_a_window_is_padded_only_once_t_reaches_its_opening(scrubber_spec) -> None:
    """[10000, 20000) opens at 12,100 ms: not drawn at 12,090; at 12,100 (no height yet) and
    12,400 (300 ms: 4.4 px) drawn 8 px centred on its middle; at 12,700 (600 ms) its true
    8.81 px from 12,100 to t. [0, 10000), closed at 12,200, stays its true extent."""
    px = 400 / 27241
    early = drawn(scrubber_spec, 12090)
    assert list(early) == ["[0 ms, 10,000 ms)"]
    assert drawn(scrubber_spec, 12100)["[10,000 ms, 20,000 ms)"] == ("11,828", "12372.41", 8.0)
    assert drawn(scrubber_spec, 12400)["[10,000 ms, 20,000 ms)"] == ("11,978", "12522.41", 8.0)
    at = drawn(scrubber_spec, 12700)
    assert at["[10,000 ms, 20,000 ms)"] == ("12,100", "12700", round(600 * px, 6))
    assert at["[0 ms, 10,000 ms)"] == ("1,200", "12200", round(11000 * px, 6))
    assert round(600 * px, 2) == 8.81


def test_a_short_window_at_an_axis_end_is_moved_inside() -> None:
    """On an axis 0..1,000 ms 100 px high (8 px: 80 ms), as ``_visible_span``: windows opened
    and closed at 1,000 and at 0 are drawn 920..1,000 and 0..80 (inside the axis); one from
    500 to 500 is 460..540; one from 100 to 300 its true extent. Drawn by Vega at t = 1,000."""
    times = [(1000, 1000), (0, 0), (500, 500), (100, 300)]  # (opened, fired and closed)
    windows = [_Window(10 * i, 10 * i + 10, 1, 1, 1, o, c, "") for i, (o, c) in enumerate(times)]
    fired = {(10 * i, 10 * i + 10): float(c) for i, (_, c) in enumerate(times)}
    axis = TimeAxis("t", "ms", 0, 1000)
    lay = scrubber_window_layer(windows, fired, TimeAxis("e", "ms", 0, 40), axis, [], height=100)
    assert lay is not None
    assert lay["transform"][-2:] == [
        {
            "calculate": "datum.y2 - datum.opened_at < 80.0 ? clamp((datum.opened_at + "
            "datum.y2) / 2 - 40.0, 0, 920.0) : datum.opened_at",
            "as": "y",
        },
        {"calculate": "datum.y2 - datum.opened_at < 80.0 ? datum.y + 80.0 : datum.y2", "as": "y2"},
    ]
    spec = {"params": [{"name": "t", "value": 1000}], "width": 100, "height": 100, **lay}
    assert drawn(spec, 1000) == {
        "[0 ms, 10 ms)": ("920", "1000", 8.0),
        "[10 ms, 20 ms)": ("0", "80", 8.0),
        "[20 ms, 30 ms)": ("460", "540", 8.0),
        "[30 ms, 40 ms)": ("100", "300", 20.0),
    }


def test_the_bands_count_each_window_over_its_keys() -> None:
    """Issue 30: a band's row is its window's (key, window) rows counted as ``scale.cells``
    counts: keys present, elements and firings summed, first opened, last closed (None while
    a key's pane is open), windows by (start, end); the same with the trace's exact ints
    (None missing) as with floats (NaN), and a window merged away under every key says into
    what."""
    import numpy as np
    import pandas as pd

    from winviz.viz.bands import _per_window

    lives = pd.DataFrame(
        {
            "window_start": [10, 0, 0, 10, 0],
            "window_end": [20, 10, 10, 20, 20],
            "key": ["a", "a", None, "b", "a"],
            "elements": [1, 2, 3, 4, 5],
            "firings": [0, 1, 1, 2, 0],
            "opened": [7, 5, 3, 6, 9],
            "closed": [30.0, 12.0, np.nan, 25.0, 2.0**60],
            "merged_into": [None, None, None, None, "[0, 30)"],
        }
    )
    rows = [tuple(w) for w in _per_window(lives)]
    assert rows == [
        (0, 10, 1, 5, 2, 3, None, "", 0, 0, None),
        (0, 20, 1, 5, 0, 9, 2**60, "[0, 30)", 0, 0, None),
        (10, 20, 2, 5, 2, 6, 30, "", 0, 0, None),
    ]
    exact = lives.assign(closed=pd.array([30, 12, None, 25, 2**60 + 1], dtype=object))
    assert [tuple(w) for w in _per_window(exact)] == [
        rows[0],
        (*rows[1][:6], 2**60 + 1, "[0, 30)", 0, 0, None),
        rows[2],
    ]
    assert _per_window(lives.iloc[:0]) is None
