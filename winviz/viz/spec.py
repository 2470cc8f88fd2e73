"""A winviz chart is a Vega-Lite dict, built one way from plain dicts; Altair only at the edge.

A chart function derives rows from the trace and returns a dict: layers (``layer``,
``text_layer``: a mark over inline rows ``{"values": rows}`` with Vega-Lite channel dicts)
inside ``{"layer": […]}`` / ``{"hconcat": […]}`` dicts as Vega-Lite has them.
``palette.public_chart`` makes that function public: it returns the dict as an Altair chart
(``altair_chart``: Altair's classes, whose ``to_dict`` writes the dict directly and checks it
with the compiled schema, ``winviz.viz.validation``); the explorer takes the dicts themselves
(``chart_dict``).

Altair is used only through its public API: chart and schema classes, their properties read and
set by name, ``to_dict``, ``debug_mode``, ``limit_rows`` (``tests/test_viz_altair_public.py``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Callable
from itertools import repeat
from typing import Any

import altair as alt
import jsonschema
from altair.utils.schemapi import SchemaBase, SchemaValidationError, debug_mode

from winviz.viz import scale, validation
from winviz.viz.explorer_chart import ExplorerChart

ChartDict = dict[str, Any]
"""A Vega-Lite chart as a dict (layers and sub-charts dicts too, rows inline)."""


def layer(
    rows: list[dict[str, Any]],
    mark: dict[str, Any],
    encoding: dict[str, Any],
    transform: list[dict[str, Any]] | None = None,
) -> ChartDict:
    """One layer: ``mark`` (with ``type``) drawn from ``rows`` after the ``transform`` steps.
    Raises Altair's ``MaxRowsError`` above the data transformer's ``max_rows`` (5,000 by
    default; winviz reduces layers before this, ``winviz.viz.scale``)."""
    max_rows = alt.data_transformers.options.get("max_rows", scale.ROW_LIMIT)
    alt.limit_rows({"values": rows}, max_rows=max_rows)
    out = {"data": {"values": rows}, "mark": mark, "encoding": encoding}
    if transform:
        out["transform"] = transform
    return out


def text_layer(
    rows: list[dict[str, Any]],
    encoding: dict[str, Any],
    *,
    text: str = "text",
    size: int = 11,
    color: str | None = None,
    transform: list[dict[str, Any]] | None = None,
    **place: Any,
) -> ChartDict:
    """A layer of labels in winviz's text style: each row's ``text`` column at its position
    channels, ``size`` px sans-serif, in ``color`` (None: Vega-Lite's default), placed by the
    other text-mark properties (``place``: align, baseline, dx, dy, angle, …)."""
    mark = {"type": "text", **place, "fontSize": size, "font": "sans-serif"}
    if color is not None:
        mark["color"] = color
    channels = {**encoding, "text": {"field": text, "type": "nominal"}}
    return layer(rows, mark, channels, transform)


def rows(chart: ChartDict) -> list[dict[str, Any]]:
    """The rows a layer draws (its inline data)."""
    return chart["data"]["values"]


def tooltips(
    rows: list[dict[str, Any]], skip: list[str], types: dict[str, str] | None = None
) -> list[dict[str, str]]:
    """Tooltip channels for every column but ``skip`` (a ``note`` column empty in every row
    left out). A column's type is ``types``' if given, else "quantitative" when every present
    value is a number (not a bool), else "nominal" — as Altair infers it from a DataFrame."""
    if not rows:
        return []
    cols = [c for c in rows[0] if c not in skip]
    if "note" in cols and not any(map(dict.get, rows, repeat("note"))):
        cols.remove("note")
    known = types or {}
    out = []
    for c in cols:
        kind = known.get(c)
        if not kind:
            found = set(map(type, map(dict.get, rows, repeat(c))))
            found.discard(type(None))
            numbers = all(issubclass(t, (int, float)) and t is not bool for t in found)
            kind = "quantitative" if found and numbers else "nominal"
        out.append({"field": c, "type": kind})
    return out


# -- the public edge: a chart dict as an Altair chart ------------------------------------------


class _CompiledCheck:
    """A winviz chart: ``to_dict`` writes the dict directly (``_written``, a few times faster
    than Altair's) and ``validate`` asks the compiled check first, then Altair's on a
    rejection (raising Altair's error)."""

    @classmethod
    def validate(cls, instance: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
        ref = (schema or {}).get("$ref") or f"#/definitions/{_vega_lite_class(cls).__name__}"
        if isinstance(ref, str) and validation.compiled(ref).is_valid(instance):
            return
        super().validate(instance, schema)  # type: ignore[misc]  # raises Altair's error

    def to_dict(
        self,
        validate: bool = True,
        *,
        format: str = "vega-lite",
        ignore: list[str] | None = None,
        context: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Altair's ``to_dict``, the same dict; any other call (another format, ``ignore``, a
        ``context``) or a chart ``_written`` does not cover goes to Altair's own."""
        if format == "vega-lite" and not ignore and context is None:
            check = self._check if validate else None
            spec = _written(self, dataset_name, check)  # type: ignore[arg-type]
            if spec is not None:
                return spec
        return super().to_dict(  # type: ignore[misc]
            validate=validate, format=format, ignore=ignore, context=context
        )

    def _check(self, instance: dict[str, Any]) -> None:
        """``validate``, raising Altair's ``SchemaValidationError`` as its ``to_dict`` does."""
        try:
            self.validate(instance)
        except jsonschema.ValidationError as err:
            raise SchemaValidationError(self, err) from None  # type: ignore[arg-type]

    def _repr_mimebundle_(self, *args: Any, **kwargs: Any) -> Any:
        # with Altair's "jupyter" renderer, display this chart in winviz's widget (an
        # alt.JupyterChart that runs a scrubber's replay: winviz.viz.explorer_chart)
        if alt.renderers.active == "jupyter":
            ExplorerChart.bundle()
            embed_options = alt.renderers.options.get("embed_options")
            return ExplorerChart(self, embed_options=embed_options)._repr_mimebundle_()
        return super()._repr_mimebundle_(*args, **kwargs)  # type: ignore[misc]


class Chart(_CompiledCheck, alt.Chart):
    """A winviz ``alt.Chart`` (``_CompiledCheck``)."""


class LayerChart(_CompiledCheck, alt.LayerChart):
    """A winviz ``alt.LayerChart`` (``_CompiledCheck``)."""


class HConcatChart(_CompiledCheck, alt.HConcatChart):
    """A winviz ``alt.HConcatChart`` (``_CompiledCheck``)."""


class VConcatChart(_CompiledCheck, alt.VConcatChart):
    """A winviz ``alt.VConcatChart`` (``_CompiledCheck``)."""


CHECKED_CHARTS = (Chart, LayerChart, HConcatChart, VConcatChart)
"""The winviz chart classes."""

_KINDS: dict[str, tuple[type, type]] = {
    "layer": (alt.LayerChart, LayerChart),
    "hconcat": (alt.HConcatChart, HConcatChart),
    "vconcat": (alt.VConcatChart, VConcatChart),
    "concat": (alt.ConcatChart, alt.ConcatChart),
}
"""A compound chart's key → (the Altair class of such a sub-chart, of such a top chart)."""


def altair_chart(spec: ChartDict, *, top: bool = True) -> alt.TopLevelMixin:
    """The Altair chart of a chart dict (a winviz class at the top): each property set by
    name, parameters and encodings as Altair's objects (what ``alt.JupyterChart``, Altair's
    layering and copies read). Its ``to_dict()`` gives ``spec`` back."""
    kind = next((k for k in _KINDS if k in spec), None)
    cls = (Chart if top else alt.Chart) if kind is None else _KINDS[kind][top]
    with debug_mode(False):  # (validated with the whole spec by ``to_dict()``)
        chart = cls()
        for key, value in spec.items():
            if key == kind:
                value = [altair_chart(c, top=False) for c in value]
            elif key == "params":
                value = [_parameter(p) for p in value]
            elif key == "encoding":
                value = alt.FacetedEncoding(**value)
            chart[key] = value
    return chart


def _parameter(param: dict[str, Any]) -> SchemaBase:
    """A parameter dict as Altair's object: a selection (with ``views``: the top level's) or
    a variable."""
    if "select" not in param:
        return alt.VariableParameter(**param)
    if "views" in param:
        return alt.TopLevelSelectionParameter(**param)
    return alt.SelectionParameter(**param)


# -- the Vega-Lite dict of a chart, without Altair's to_dict ---------------------------------------

ROWS_PREFIX = "rows-"
"""Prefix of the dataset names ``chart_dict`` gives: ``rows-1``, ``rows-2``, … in the order
the layers' rows are first met (depth first, a chart's own data before its children's)."""


class _Fallback(Exception):
    """Something ``_written`` does not write itself: Altair's ``to_dict`` does it."""


def chart_dict(chart: ChartDict | alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite dict of ``chart`` (a chart dict or an Altair chart): the content of its
    ``to_dict(validate=False)``, but each distinct rows list (by identity) named by position
    (``ROWS_PREFIX``) instead of by a hash of its JSON — what an explorer sends on every
    slider move. Charts it does not cover (other data than inline rows, facets, another
    data transformer) go through ``to_dict(validate=False)`` itself."""
    spec = _written(chart, None, None)
    if spec is None:
        if isinstance(chart, dict):
            chart = altair_chart(chart)
        return chart.to_dict(validate=False)
    return spec


def dataset_name(values: list[Any]) -> str:
    """The name Altair's ``to_dict`` gives inline rows: ``empty`` for ``[{}]``, else ``data-``
    and 32 hex digits of the SHA-256 of their JSON (keys sorted, other values as ``str``)."""
    if values == [{}]:
        return "empty"
    text = json.dumps(values, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


@functools.cache
def _vega_lite_class(cls: type) -> type | None:
    """The Vega-Lite schema class an Altair class is built on (``alt.LayerChart`` →
    ``TopLevelLayerSpec``), None if none."""
    return next((c for c in cls.__mro__ if c.__module__ == "altair.vegalite.v6.schema.core"), None)


@functools.cache
def _properties(cls: type) -> tuple[str, ...]:
    """An Altair class's Vega-Lite properties in the order its ``to_dict`` writes them (its
    schema class's constructor parameters)."""
    schema_class = _vega_lite_class(cls)
    if schema_class is None:
        raise _Fallback
    params = inspect.signature(schema_class.__init__).parameters.values()
    return tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self")


def _in_order(props: dict[str, Any], cls: type) -> dict[str, Any]:
    """``props`` in the order Altair's ``to_dict`` writes the properties of ``cls``."""
    order = _properties(cls)
    out = {k: props[k] for k in order if k in props}
    if len(out) < len(props):
        out.update((k, v) for k, v in props.items() if k not in out)
    return out


_COMPOUND = {alt.LayerChart: "layer", alt.HConcatChart: "hconcat", alt.VConcatChart: "vconcat"}


def _written(
    chart: ChartDict | alt.TopLevelMixin,
    name_of: Callable[[list[Any]], str] | None,
    check: Callable[[dict[str, Any]], None] | None,
) -> dict[str, Any] | None:
    """The chart's dict as Altair's ``to_dict`` writes it (key order, ``$schema``, the active
    theme, the top-level datasets), datasets named by ``name_of`` (None: ``rows-N``);
    ``check`` is called first with what Altair validates. None when the chart or the active
    data transformer is one this writer does not cover."""
    try:
        if not alt.data_transformers.consolidate_datasets or (
            alt.data_transformers.active == "vegafusion"
        ):
            raise _Fallback
        writer = _Writer(name_of)
        spec = writer.chart(chart, None)
        theme = alt.theme.get()
        if theme is None:  # to_dict raises its own error for this
            raise _Fallback
    except _Fallback:
        return None
    if check is not None:
        check(spec)
    if "$schema" not in spec:
        spec["$schema"] = alt.SCHEMA_URL
    spec = alt.utils.update_nested(theme(), spec, copy=True)
    if writer.datasets:
        spec.setdefault("datasets", {}).update(writer.datasets)
    return spec


class _Writer:
    """One conversion: the datasets met so far, by the identity of their rows, named by
    ``name_of`` (None: by their position, ``rows-N``)."""

    def __init__(self, name_of: Callable[[list[Any]], str] | None = None) -> None:
        self.datasets: dict[str, list[Any]] = {}
        self._names: dict[int, str] = {}
        self._name_of = name_of

    def chart(self, chart: ChartDict | alt.TopLevelMixin, data: Any) -> dict[str, Any]:
        """A (sub)chart, a dict or an Altair chart; ``data``: the data it inherits (None:
        none)."""
        if isinstance(chart, dict):
            kind = next((k for k in _KINDS if k in chart), None)
            cls = alt.Chart if kind is None else _KINDS[kind][0]
            props = _in_order(chart, cls)
        else:
            cls = next((c for c in (alt.Chart, *_COMPOUND) if isinstance(chart, c)), None)
            if cls is None:
                raise _Fallback
            kind, props = _COMPOUND.get(cls), _set_properties(chart)
        if kind is None and data is None and "data" not in props:
            props = {"data": {"values": [{}]}, **props}  # what Chart.to_dict injects
        out: dict[str, Any] = {}
        for key, value in props.items():
            if key == "data":
                out[key], data = self.data(value)
            elif key == kind:
                out[key] = [self.chart(c, data) for c in value]
            elif key == "mark" and isinstance(value, str):
                out[key] = {"type": value}
            elif key == "encoding" and type(value) in (dict, alt.FacetedEncoding):
                channels = value if type(value) is dict else _set_properties(value)
                out[key] = self.value(_in_order(channels, alt.FacetedEncoding), data)
            else:
                out[key] = self.value(value, data)
        return out

    def data(self, data: Any) -> tuple[dict[str, Any], Any]:
        """A chart's inline rows as ``{"name": …}`` (the rows go to the datasets) and the data
        its children and channels see (Altair's ``context["data"]``)."""
        if isinstance(data, dict) and "name" not in data:
            values, fmt = data.get("values"), data.get("format", alt.Undefined)
        elif type(data) is alt.InlineData and data.name is alt.Undefined:
            values, fmt = data.values, data.format
        else:
            raise _Fallback
        if not isinstance(values, list):
            raise _Fallback
        if values == [{}]:
            name = "empty"
        else:
            name = self._names.get(id(values))
            if name is None:
                name = self._names[id(values)] = (
                    f"{ROWS_PREFIX}{len(self._names) + 1}"
                    if self._name_of is None
                    else self._name_of(values)
                )
        self.datasets[name] = values
        out: dict[str, Any] = {"name": name}
        if fmt is not alt.Undefined:
            out["format"] = self.value(fmt, None)
        return out, data

    def value(self, obj: Any, data: Any) -> Any:
        """Any other value as Altair's ``to_dict`` converts it: JSON values as they are, dicts
        and lists item by item, schema objects by their own ``to_dict``; anything else (numpy
        numbers, dates…) is left to Altair's ``to_dict`` of the whole chart."""
        if obj is None or type(obj) in (str, int, float, bool):
            return obj
        if isinstance(obj, dict):
            return {k: self.value(v, data) for k, v in obj.items() if v is not alt.Undefined}
        if isinstance(obj, (list, tuple)):
            return [self.value(v, data) for v in obj]
        if isinstance(obj, SchemaBase) and not isinstance(obj, alt.TopLevelMixin):
            context: dict[str, Any] = {"datasets": {}, "top_level": False, "pre_transform": False}
            if data is not None:
                context["data"] = data
            result = obj.to_dict(validate=False, context=context)
            if context["datasets"]:
                raise _Fallback
            return result
        raise _Fallback


def _set_properties(obj: SchemaBase) -> dict[str, Any]:
    """The properties set on a chart or an encoding (not ``Undefined``), read by name, in the
    order Altair's ``to_dict`` writes them."""
    undefined = alt.Undefined
    out: dict[str, Any] = {}
    for key in _properties(type(obj)):
        try:
            value = obj[key]
        except KeyError:  # never set (an object not made by its class's constructor)
            continue
        if value is not undefined:
            out[key] = value
    return out


def inline_datasets(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with every named dataset written in place and no top-level ``datasets``: the
    same for two specs of equal content whatever their datasets are named."""
    datasets = spec.get("datasets", {})

    def walk(obj: Any) -> Any:
        if isinstance(obj, dict):
            out = {}
            for key, value in obj.items():
                if (
                    key == "data"
                    and isinstance(value, dict)
                    and value.get("name") in datasets
                    and "values" not in value
                ):
                    rest = {k: walk(v) for k, v in value.items() if k != "name"}
                    out[key] = {**rest, "values": datasets[value["name"]]}
                else:
                    out[key] = walk(value)
            return out
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        return obj

    return walk({k: v for k, v in spec.items() if k != "datasets"})
