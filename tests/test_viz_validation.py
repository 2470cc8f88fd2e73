"""The compiled Vega-Lite schema check (winviz/viz/validation.py) agrees with Altair's own:
it accepts every chart winviz draws, rejects the same broken specs, and a rejected chart
raises Altair's error naming the wrong property."""

from __future__ import annotations

import copy
import json
import urllib.parse
from typing import Any

import altair as alt
import chart_jobs
import jsonschema
import pytest
from altair.utils.schemapi import SchemaValidationError, validate_jsonschema

from winviz import viz
from winviz.viz import spec as charts
from winviz.viz import validation

CHARTS = {**chart_jobs.CHARTS, "skew_chart": viz.skew_chart}


def altair_accepts(chart_cls: type, spec: dict[str, Any]) -> bool:
    """Altair's own check (the ``jsonschema`` package) of ``spec`` as ``chart_cls``'s."""
    try:
        validate_jsonschema(spec, chart_cls._schema, rootschema=chart_cls._rootschema)
    except jsonschema.ValidationError:
        return False
    return True


def compiled_accepts(chart_cls: type, spec: dict[str, Any]) -> bool:
    return validation.compiled(chart_cls._schema["$ref"]).is_valid(spec)


def spec_of(chart: Any) -> dict[str, Any]:
    """What ``to_dict`` hands to ``validate``: captured from the call itself."""
    seen: list[dict[str, Any]] = []
    cls = type(chart)
    original = cls.validate

    def capture(instance: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
        seen.append(copy.deepcopy(instance))
        original(instance, schema)

    cls.validate = staticmethod(capture)  # type: ignore[method-assign]
    try:
        chart.to_dict()
    finally:
        del cls.validate
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("job", sorted(chart_jobs.JOBS))
@pytest.mark.parametrize("name", sorted(CHARTS))
def test_both_checks_accept_every_chart_winviz_draws(job: str, name: str) -> None:
    chart = CHARTS[name](chart_jobs.JOBS[job]().trace)
    assert isinstance(chart, charts.CHECKED_CHARTS)
    spec = spec_of(chart)
    assert compiled_accepts(type(chart), spec)
    assert altair_accepts(type(chart), spec)


def test_a_message_card_is_checked_too() -> None:
    card = viz.timeline(None)
    assert type(card) is charts.Chart
    assert card.to_dict()["usermeta"]["winviz"]["status"] == "message"


BROKEN = {
    "unknown mark type": lambda s: s["layer"][0]["mark"].update(type="pointy"),
    "unknown property": lambda s: s.update(colour="red"),
    "field type misspelt": lambda s: s["layer"][0]["encoding"]["x"].update(type="quantitive"),
    "width as a word": lambda s: s.update(width="wide"),
    "layer not a list": lambda s: s.update(layer={"mark": "point"}),
    "scale domain of objects": lambda s: s["layer"][0]["encoding"]["x"]["scale"].update(
        domain=[{"a": 1}]
    ),
    "tooltip of numbers": lambda s: s["layer"][0]["encoding"].update(tooltip=[1, 2]),
    "data url not a string": lambda s: s["layer"][0].update(data={"url": 5}),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_both_checks_reject_the_same_broken_specs(broken: str) -> None:
    chart = viz.timeline(chart_jobs.JOBS["late_union"]().trace, view="timeline")
    spec = spec_of(chart)
    BROKEN[broken](spec)
    assert not compiled_accepts(type(chart), spec)
    assert not altair_accepts(type(chart), spec)


def test_a_broken_chart_raises_altairs_error_naming_the_property() -> None:
    chart = viz.timeline(chart_jobs.JOBS["late_union"]().trace, view="timeline")
    chart.layer[0].mark = {"type": "pointy"}
    with pytest.raises(SchemaValidationError, match="pointy"):
        chart.to_dict()
    assert chart.to_dict(validate=False)["layer"][0]["mark"] == {"type": "pointy"}


def test_a_changed_copy_is_checked_the_same_way() -> None:
    trace = chart_jobs.JOBS["session"]().trace
    changed = viz.window_lanes(trace).properties(width=500)
    assert type(changed) is charts.LayerChart  # a copy keeps the class
    assert changed.to_dict()["width"] == 500


def test_every_reference_names_a_definition() -> None:
    """The encoded ``$ref`` pointers decode to definitions of the schema (none is lost to the
    rewriting; jsonschema-rs resolves references lazily, so a dangling one would only fail on
    the spec that reaches it)."""
    definitions = validation._definitions()
    refs: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                refs.add(ref)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(definitions)
    assert len(refs) > 400  # (457 distinct references in Vega-Lite 6.4)
    prefix = "#/definitions/"
    assert all(ref.startswith(prefix) for ref in refs)
    assert any("%3C" in ref for ref in refs)  # e.g. MarkPropDef<...>, encoded
    missing = {r for r in refs if urllib.parse.unquote(r[len(prefix) :]) not in definitions}
    assert missing == set()


def altairs_own(chart: Any) -> dict[str, Any]:
    """What Altair's own ``to_dict`` gives for a winviz chart."""
    return super(charts._CompiledCheck, chart).to_dict()


@pytest.mark.parametrize("job", sorted(chart_jobs.JOBS))
@pytest.mark.parametrize("name", sorted(CHARTS))
def test_to_dict_is_altairs_dict_key_for_key(job: str, name: str) -> None:
    trace = chart_jobs.JOBS[job]().trace
    chart = CHARTS[name](trace)
    assert json.dumps(chart.to_dict()) == json.dumps(altairs_own(chart))  # order too
    assert json.dumps(chart.to_dict(validate=False)) == json.dumps(altairs_own(chart))
    if job == "late_union":  # drawn from the trace's frame (DataFrame layers, if any)
        framed = CHARTS[name](trace.to_pandas())
        assert json.dumps(framed.to_dict()) == json.dumps(altairs_own(framed))


def test_to_dict_follows_the_active_theme_and_data_transformer() -> None:
    trace = chart_jobs.JOBS["session"]().trace

    @alt.theme.register("winviz-test-grey", enable=False)
    def grey() -> alt.theme.ThemeConfig:
        return {"config": {"background": "#EEEEEE", "view": {"stroke": "#000000"}}}

    with alt.theme.enable("winviz-test-grey"):
        chart = viz.timeline(trace, view="timeline")
        config = chart.to_dict()["config"]
        assert config["background"] == "#EEEEEE"
        assert config["view"]["stroke"] == "#D9D9D9"  # the chart's own view config wins
        assert json.dumps(chart.to_dict()) == json.dumps(altairs_own(chart))
    before = alt.data_transformers.consolidate_datasets
    alt.data_transformers.consolidate_datasets = False
    try:
        chart = viz.window_lanes(trace)
        spec = chart.to_dict()
        assert "datasets" not in spec  # Altair's own to_dict wrote it: rows inline
        assert json.dumps(spec) == json.dumps(altairs_own(chart))
    finally:
        alt.data_transformers.consolidate_datasets = before


def test_to_dict_in_another_format_is_altairs() -> None:
    chart = viz.timeline(chart_jobs.JOBS["session"]().trace, view="timeline")
    vega = chart.to_dict(format="vega")
    assert "$schema" in vega and "vega/v" in vega["$schema"] and "marks" in vega
