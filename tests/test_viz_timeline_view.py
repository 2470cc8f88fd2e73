"""``timeline(view=...)`` (issue 12, readable at scale): with ``view="auto"`` a long run whose
disorder the timeline cannot show (one thick diagonal) is drawn as the skew chart, and the
subtitle says so and how to get the timeline; lesson-sized runs keep the timeline; ``view=``
overrides either way; the rule's two thresholds are exact."""

from __future__ import annotations

import pytest
from jobs import bounded, count_pipeline
from test_viz_skew import eight_events  # lesson 01's eight events

import winviz as wv
from winviz import datasets, viz
from winviz.viz import palette
from winviz.viz.skew import skew_chart
from winviz.viz.timeline import SKEW_MIN_ELEMENTS


def chart_of(spec: dict) -> str:
    return spec["usermeta"]["winviz"]["chart"]


def long_clickstream(copies: int) -> tuple[wv.JobExecutionResult, list[tuple[int, int]]]:
    """Lesson 01's clickstream played ``copies`` times one after another (each copy shifted
    by the clickstream's length + 1 s in both times): the same disorder over a longer run.
    Returns the run and the clicks' (arrival time, event time)."""
    clicks = datasets.clickstream()
    length = max(c.arrival_time for c in clicks) - min(c.arrival_time for c in clicks) + 1000
    events = [
        (c.page, c.event_time + k * length, c.arrival_time + k * length)
        for k in range(copies)
        for c in clicks
    ]
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    count_pipeline(
        env,
        events,
        10_000,
        bounded(1000),
        late=wv.OutputTag("late"),
        sink="counts",
        arrival_times=[e[2] for e in events],
    )
    return env.execute(), [(e[2], e[1]) for e in events]


def in_order(n: int, late_by: int) -> wv.JobExecutionResult:
    """n elements arriving every 10 ms at their own timestamp, but the last arriving
    ``late_by`` ms after its timestamp: skews spread over ``late_by`` ms of a 10·(n−1) ms run."""
    events = [("k", 10 * i) for i in range(n)]
    events[-1] = ("k", 10 * (n - 1) - late_by)
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, events, 1000, sink="o", arrival_times=[10 * i for i in range(n)])
    return env.execute()


def test_lesson_sized_runs_keep_the_timeline() -> None:
    assert chart_of(viz.timeline(eight_events(1_000)).to_dict()) == "timeline"
    # the clickstream itself: 531 clicks, too few for the skew view
    one, _ = long_clickstream(1)
    assert chart_of(viz.timeline(one).to_dict()) == "timeline"


def test_a_long_clickstream_gets_the_skew_view() -> None:
    result, clicks = long_clickstream(8)
    skews = [a - e for a, e in clicks]
    spread = max(skews) - min(skews)
    span = max(a for a, _ in clicks) - min(a for a, _ in clicks)
    assert spread < 0.02 * span  # the copies add length, not disorder
    spec = viz.timeline(result).to_dict()
    assert chart_of(spec) == "skew_chart"
    notes = spec["usermeta"]["winviz"]["notes"]
    assert notes[0] == (
        f'drawn by timeline(view="auto"): the elements\' skews spread over {spread:,} ms of a '
        f"{span:,} ms run (< 2%), so the timeline would be one thick diagonal; "
        'timeline(..., view="timeline") draws it anyway'
    )
    first = palette.fitted_lines([notes[0]])  # (drawn wrapped to fit: issue 26)
    assert spec["title"]["subtitle"][: len(first)] == first and len(first) == 2
    assert notes[1].startswith(f"operator 'window': {8 * 531:,} elements: ")
    # otherwise the skew chart itself, layer for layer
    direct = skew_chart(result).to_dict()
    assert spec["datasets"] == direct["datasets"]
    assert notes[1:] == direct["usermeta"]["winviz"]["notes"]
    # view= overrides
    assert chart_of(viz.timeline(result, view="timeline").to_dict()) == "timeline"


def test_view_skew_on_a_small_run_is_the_skew_chart() -> None:
    result = eight_events(1_000)
    assert viz.timeline(result, view="skew").to_dict() == skew_chart(result).to_dict()


@pytest.mark.parametrize(
    ("n", "late_by", "expected"),
    [
        (SKEW_MIN_ELEMENTS, 0, "timeline"),  # not more than 1,000 elements
        (SKEW_MIN_ELEMENTS + 1, 0, "skew_chart"),
        (SKEW_MIN_ELEMENTS + 1, 199, "skew_chart"),  # 199 ms of a 10,000 ms run: < 2%
        (SKEW_MIN_ELEMENTS + 1, 200, "timeline"),  # exactly 2%: the timeline
    ],
)
def test_the_rule_thresholds(n: int, late_by: int, expected: str) -> None:
    assert chart_of(viz.timeline(in_order(n, late_by)).to_dict()) == expected


def test_bad_view_names_the_choices() -> None:
    choices = "view must be one of 'auto', 'timeline', 'skew'; got 'sk'"
    with pytest.raises(ValueError, match=choices):
        viz.timeline(eight_events(1_000), view="sk")  # type: ignore[arg-type]
