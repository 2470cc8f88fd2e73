"""``spec.chart_dict``: a chart's Vega-Lite dict (a chart dict, or an Altair chart) written
without Altair's ``to_dict`` — the same content as Altair's ``to_dict()`` of its Altair chart
(every key, mark, encoding, parameter and data row), its datasets named ``rows-1``,
``rows-2``, … by position; charts it does not cover go through ``to_dict``. ``altair_chart``:
the Altair chart of a chart dict, whose ``to_dict`` is Altair's, byte for byte. (The
explorer's charts for several slider values: tests/test_viz_explore.py.)"""

from __future__ import annotations

import json

import altair as alt
import pandas as pd
import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz.viz import spec
from winviz.viz.spec import ROWS_PREFIX, chart_dict, inline_datasets


def _content(s: dict) -> str:
    return json.dumps(inline_datasets(s), sort_keys=True)


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": [1, 2, 3],
            "b": ["x", "y", None],
            "c": [0.5, float("nan"), 2.0],
            "when": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"]),
        }
    )


def _layer_rows() -> dict:
    rows = [{"x": 1, "y": 2, "note": "a"}, {"x": 3, "y": 4, "note": ""}]
    points = spec.layer(rows, {"type": "point"}, {"x": {"field": "x", "type": "quantitative"}})
    same_rows = spec.layer(rows, {"type": "line"}, {"x": {"field": "x", "type": "quantitative"}})
    other = spec.layer(
        [{"x": 5, "y": 6}], {"type": "rule"}, {"y": {"field": "y", "type": "quantitative"}}
    )
    return {"layer": [points, same_rows, other], "width": 300, "title": "rows"}


def _inline() -> alt.InlineData:
    return alt.InlineData(values=[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])


CHARTS = {
    "inline rows, one list shared by two layers": _layer_rows,
    "a datum rule without data, a parameter and a concat": lambda: alt.hconcat(
        alt.Chart().mark_rule().encode(x=alt.datum(3)),
        alt.Chart(_inline())
        .mark_bar()
        .encode(x="a:Q", y="count()")
        .add_params(alt.param(name="k", value=2, bind=alt.binding_range(min=0, max=5))),
    ),
    "vconcat of a winviz chart and a chart with a transform": lambda: alt.vconcat(
        spec.altair_chart(_layer_rows()),
        alt.Chart(_inline()).transform_filter("datum.a > 1").mark_tick().encode(x="a:Q"),
    ),
}


def _altairs(chart: dict | alt.TopLevelMixin) -> dict:
    """Altair's own ``to_dict()`` of the chart (of a chart dict: of its Altair chart)."""
    if isinstance(chart, dict):
        chart = spec.altair_chart(chart)
    if isinstance(chart, spec.CHECKED_CHARTS):
        chart = super(spec._CompiledCheck, chart)  # type: ignore[assignment]
    return chart.to_dict()


@pytest.mark.parametrize("name", list(CHARTS))
def test_chart_dict_has_to_dicts_content_with_rows_n_names(name: str) -> None:
    chart = CHARTS[name]()
    fast, full = chart_dict(chart), _altairs(chart)
    assert _content(fast) == _content(full)
    assert fast["$schema"] == full["$schema"] and fast["config"] == full["config"]
    names = [n for n in fast["datasets"] if n != "empty"]
    assert names == [f"{ROWS_PREFIX}{i}" for i in range(1, len(names) + 1)]
    assert chart_dict(chart) == fast  # deterministic


def test_one_rows_list_is_one_dataset_and_a_chart_without_data_gets_empty() -> None:
    fast = chart_dict(_layer_rows())
    assert fast["datasets"] == {
        "rows-1": [{"x": 1, "y": 2, "note": "a"}, {"x": 3, "y": 4, "note": ""}],
        "rows-2": [{"x": 5, "y": 6}],
    }
    assert [lay["data"] for lay in fast["layer"]] == [
        {"name": "rows-1"},
        {"name": "rows-1"},
        {"name": "rows-2"},
    ]
    bare = chart_dict(alt.Chart().mark_rule().encode(x=alt.datum(3)))
    assert bare["data"] == {"name": "empty"} and bare["datasets"] == {"empty": [{}]}


def test_charts_it_does_not_write_go_through_to_dict() -> None:
    """``alt.Data`` values stay inline, a DataFrame goes through the data transformer and a
    facet chart is Altair's own: all as ``to_dict(validate=False)`` gives them, hash names and
    all."""
    inline = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    assert chart_dict(inline) == inline.to_dict(validate=False)
    frame = alt.Chart(_frame()).mark_point().encode(x="a", y="c", color="b", tooltip=["when"])
    assert chart_dict(frame) == frame.to_dict(validate=False)
    facet = alt.Chart(_frame()).mark_point().encode(x="a:Q").facet(column="b:N")
    assert chart_dict(facet) == facet.to_dict(validate=False)
    assert next(iter(chart_dict(facet)["datasets"])).startswith("data-")


def test_the_kits_charts_of_a_run() -> None:
    """Every named chart of a small run: the content of its validated ``to_dict()``."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("b", 2500), ("a", 6000), ("a", 900)],
        2000,
        bounded(500),
        arrival_interval=100,
    )
    result = env.execute()
    for fn in (wv.timeline, wv.scrubber, wv.window_lanes, wv.timers_chart, wv.propagation_chart):
        chart = fn(result)
        fast = chart_dict(fn.vega_lite(result))
        assert _content(fast) == _content(chart.to_dict()), fn.__name__
        assert all(n.startswith(ROWS_PREFIX) for n in fast["datasets"]), fn.__name__
        # the public chart's to_dict is Altair's, byte for byte (key order too)
        assert json.dumps(chart.to_dict()) == json.dumps(_altairs(chart)), fn.__name__
