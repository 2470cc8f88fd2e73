"""A winviz chart is a Vega-Lite dict — built one way, from plain dicts, Altair at the edge.

Every chart function builds its chart from the rows it derives from the trace:

* ``layer`` — one layer (a Vega-Lite unit spec): a mark (``{"type": …}``) drawn from a list
  of JSON-ready row dicts (inline data, ``{"values": rows}``) with Vega-Lite channel dicts,
  optionally after ``transform`` steps. The row limit of Altair's data transformer applies
  (``limit_rows``: ``MaxRowsError`` above 5,000 rows unless the user raised it);
* a layered or concatenated chart is a dict too — ``{"layer": [layer, …], "width": …}``,
  ``{"hconcat": [chart, …], …}`` — written by the chart function as Vega-Lite has it (a
  selection parameter already on the top-level chart, with the ``views`` it applies to);
* ``text_layer`` — a layer of labels, in the one text style of every chart;
* ``tooltips`` — tooltip channel dicts for the columns of some rows.

Two writers finish a chart dict as Altair's ``to_dict`` would (``$schema``, the active
theme, each layer's rows moved to the top-level ``datasets``):

* ``chart_dict`` — datasets named ``rows-N`` by position: what an explorer sends to its
  widget on every slider move (``winviz.viz.explore``);
* ``altair_dict`` — datasets named as Altair names them (``data-`` and a hash of the rows):
  the ``to_dict()`` of a winviz chart.

At the public edge, ``chart_function`` makes a chart function's dict an Altair chart
(``altair_chart``: ``Chart``, ``LayerChart``, ``HConcatChart``, ``VConcatChart`` — Altair's
classes, whose ``to_dict`` is ``altair_dict``, checked once against the Vega-Lite schema,
compiled: ``winviz.viz.validation``), which users display, save, configure or combine as any
Altair chart; the explorer takes the dicts themselves (``chart_function``'s ``vega_lite``).

Altair is used only through its public API: its chart and schema classes, their
constructors and properties read and set by name (``chart["width"]``), in the order of the
Vega-Lite class's constructor (the order Altair's ``to_dict`` writes them); ``to_dict`` for
any other schema object; ``debug_mode``; ``limit_rows``. No private name of Altair's
(``tests/test_viz_altair_public.py`` scans the package for them).
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
    """One layer: ``mark`` (a Vega-Lite mark definition with ``type``) drawn from ``rows``,
    after the Vega-Lite ``transform`` steps, if any. Raises Altair's ``MaxRowsError`` when
    the rows exceed the active data transformer's ``max_rows`` (5,000 by default; winviz
    reduces layers before this). The dicts are validated with the whole spec by
    ``to_dict()``, not one by one as they are made."""
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
    """A layer of labels in winviz's text style: the ``text`` column of each row written at
    its position channels (``encoding``: x, y, …) in ``size`` px sans-serif, in ``color``
    (a ``palette`` ink; None: Vega-Lite's default), placed by the other text-mark properties
    given (``place``: align, baseline, dx, dy, angle, …)."""
    mark = {"type": "text", **place, "fontSize": size, "font": "sans-serif"}
    if color is not None:
        mark["color"] = color
    channels = {**encoding, "text": {"field": text, "type": "nominal"}}
    return layer(rows, mark, channels, transform)


def rows(chart: ChartDict) -> list[dict[str, Any]]:
    """The rows a layer draws (its inline data)."""
    return chart["data"]["values"]


def field_type(rows: list[dict[str, Any]], column: str) -> str:
    """ "quantitative" when every present value of the column is a number (not a bool), else
    "nominal" — as Altair infers it from a DataFrame column."""
    types = set(map(type, map(dict.get, rows, repeat(column))))
    types.discard(type(None))
    numeric = bool(types) and all(issubclass(t, (int, float)) and t is not bool for t in types)
    return "quantitative" if numeric else "nominal"


def tooltips(
    rows: list[dict[str, Any]], skip: list[str], types: dict[str, str] | None = None
) -> list[dict[str, str]]:
    """Tooltip channels for every column but ``skip``; a ``note`` column that is empty in every
    row is left out. ``types``: the type of columns the caller knows (what ``field_type``
    would find), the others are read off the rows."""
    if not rows:
        return []
    cols = [c for c in rows[0] if c not in skip]
    if "note" in cols and not any(map(dict.get, rows, repeat("note"))):
        cols.remove("note")
    known = types or {}
    return [{"field": c, "type": known.get(c) or field_type(rows, c)} for c in cols]


# -- the public edge: a chart dict as an Altair chart ------------------------------------------


class _CompiledCheck:
    """A winviz chart: ``to_dict`` writes Altair's dict directly (``altair_dict``) and
    ``validate`` asks the compiled check first, then Altair's on a rejection."""

    @classmethod
    def validate(cls, instance: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
        ref = (schema or {}).get("$ref") or _definition(cls)
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
        """Altair's ``to_dict``: the same dict, written by ``altair_dict`` (no copies of the
        chart; a few times faster) and checked as Altair checks it; any other call (another
        format, ``ignore``, a ``context`` — the chart inside another, or Altair's renderers)
        or a chart that writer does not cover goes to Altair's ``to_dict``."""
        if format == "vega-lite" and not ignore and context is None:
            spec = altair_dict(self, self._check if validate else None)  # type: ignore[arg-type]
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
        # Altair's "jupyter" renderer rebuilds the chart from its dict (``from_dict``, which
        # validates it again): give the widget this chart itself, with the embed options
        # setup_rendering() enabled the renderer with. The widget is an ExplorerChart (always
        # offline): its page script runs a scrubber's replay (winviz.viz.view_script), and
        # JupyterChart's own can re-tick a "play" just unticked (winviz.viz.explorer_chart).
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
    """The Altair chart of a chart dict: each (sub)chart an object of its Altair class (the
    winviz class at the top, ``top``) with the dict's properties set by name; parameters and
    encodings as Altair's objects (what ``alt.JupyterChart``, Altair's layering and copies
    read). Its ``to_dict()`` is ``altair_dict`` of ``spec``."""
    kind = next((k for k in _KINDS if k in spec), None)
    cls = (Chart if top else alt.Chart) if kind is None else _KINDS[kind][top]
    with debug_mode(False):  # (validated with the whole spec by ``to_dict()``)
        chart = cls()
        for key, value in spec.items():
            if key == kind:
                value = [altair_chart(c, top=False) for c in value]
            elif key == "params":
                value = [_parameter(p) for p in value]
            elif key == "encoding":  # (what Altair's layering and copies read)
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


def chart_function(fn: Callable[..., ChartDict]) -> Callable[..., alt.TopLevelMixin]:
    """The public chart function of ``fn`` (a function → chart dict): the same arguments, the
    Altair chart (``altair_chart``); ``fn`` itself stays its ``vega_lite`` attribute."""

    @functools.wraps(fn)
    def public(*args: Any, **kwargs: Any) -> alt.TopLevelMixin:
        return altair_chart(fn(*args, **kwargs))

    public.vega_lite = fn  # type: ignore[attr-defined]
    signature = inspect.signature(fn).replace(return_annotation="alt.TopLevelMixin")
    public.__signature__ = signature  # type: ignore[attr-defined]
    return public


# -- the Vega-Lite dict of a chart, without Altair's to_dict ---------------------------------------

ROWS_PREFIX = "rows-"
"""Prefix of the dataset names ``chart_dict`` gives: ``rows-1``, ``rows-2``, … in the order
the layers' rows are first met (depth first, a chart's own data before its children's)."""


class _Fallback(Exception):
    """Something ``chart_dict`` does not write itself: Altair's ``to_dict`` does it."""


def chart_dict(chart: ChartDict | alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite dict of ``chart`` (a chart dict or an Altair chart) — the same content as
    ``to_dict(validate=False)`` of its Altair chart. What an explorer sends to its widget on
    every slider move (``winviz.viz.explore``).

    Altair's ``to_dict`` names every layer's inline rows by a SHA-256 hash of their JSON text
    (``data-<hash>``: about half its time at 2,000 events). Here each distinct rows list (by
    identity) is named by its position instead (``ROWS_PREFIX``: ``rows-1``, ``rows-2``, …;
    deterministic for the same chart), so **the dataset names differ** from ``to_dict``'s —
    every other key, mark, encoding, parameter and data row is the same (a chart without data
    of its own or its parents' gets Altair's ``empty`` dataset ``[{}]``, as ``to_dict`` does).
    Two different rows lists of equal content are two datasets here (``to_dict`` shares one):
    resolving every ``{"name": …}`` to its rows gives the same spec.

    Altair charts this does not cover — data other than inline rows (a DataFrame,
    ``alt.Data``, a URL), a facet or repeat chart, the data transformer's dataset
    consolidation turned off or VegaFusion on — are converted by ``to_dict(validate=False)``
    itself (its hash names)."""
    spec = _written(chart, None, None)
    if spec is None:
        if isinstance(chart, dict):
            chart = altair_chart(chart)
        return chart.to_dict(validate=False)
    return spec


def altair_dict(
    chart: ChartDict | alt.TopLevelMixin, check: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any] | None:
    """Altair's ``to_dict()`` of the chart — the same dict, key for key and in the same order,
    each dataset named as Altair names it (``data-`` and a SHA-256 of its rows' JSON:
    ``dataset_name``) — written directly, as ``chart_dict`` writes it (no generic converter,
    no copies of the chart). ``check``, when given, is called with the spec before
    ``$schema``, the theme and the datasets are added, the dict Altair validates. None for a
    chart ``chart_dict`` does not cover (then only Altair's ``to_dict`` writes it)."""
    return _written(chart, dataset_name, check)


def dataset_name(values: list[Any]) -> str:
    """The name Altair's ``to_dict`` gives inline rows in the top-level ``datasets``: ``empty``
    for ``[{}]``, else ``data-`` and the first 32 hex digits of the SHA-256 of the rows' JSON
    (keys sorted, other values as ``str``)."""
    if values == [{}]:
        return "empty"
    text = json.dumps(values, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


@functools.cache
def _vega_lite_class(cls: type) -> type | None:
    """The Vega-Lite schema class an Altair class is built on (``alt.LayerChart`` →
    ``TopLevelLayerSpec``): the first class of its MRO generated from the schema (None:
    none)."""
    return next((c for c in cls.__mro__ if c.__module__ == "altair.vegalite.v6.schema.core"), None)


def _definition(cls: type) -> str:
    """The reference to the schema's definition of a winviz chart class (``LayerChart`` →
    ``#/definitions/TopLevelLayerSpec``), as Altair's class holds it."""
    schema_class = _vega_lite_class(cls)
    return "" if schema_class is None else f"#/definitions/{schema_class.__name__}"


@functools.cache
def _properties(cls: type) -> tuple[str, ...]:
    """The Vega-Lite properties of an Altair class in the order its ``to_dict`` writes them:
    its schema class's constructor parameters (``alt.Chart``: ``data``, ``mark``, then the
    others in alphabetical order)."""
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
    """The chart's dict as ``to_dict`` finishes it at the top level (``$schema``, the active
    theme, the datasets), datasets named by ``name_of`` (None: ``rows-N``); None when the
    chart or the active data transformer is one this writer does not cover."""
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
        """A chart's data as ``{"name": …}`` (its rows go to the top-level datasets) and the
        data its children and channels see (Altair's ``context["data"]``): inline rows (a
        ``{"values": rows}`` dict or ``alt.InlineData``) as they are."""
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
        """Any other value, as Altair's ``to_dict`` converts it: JSON values as they are, dicts
        and lists item by item, other schema objects by their own ``to_dict`` (given the data
        they see, as ``to_dict`` gives it); anything else (numpy numbers, dates…) is left to
        Altair's ``to_dict`` of the whole chart."""
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
    """The properties set on a chart or an encoding (not ``Undefined``), read by name
    (``obj[name]``) in the order Altair's ``to_dict`` writes them (``_properties``)."""
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
    """``spec`` with every named dataset written in place (``"data": {"values": rows, …}``)
    and no top-level ``datasets``: the same for two specs of equal content whatever their
    datasets are named (``chart_dict``'s ``rows-N`` or ``to_dict``'s ``data-<hash>``)."""
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
