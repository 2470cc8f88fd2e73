"""Vega-Lite layers written as plain dicts over inline rows — the cheap way into Altair.

A chart built from pandas DataFrames and Altair channel objects pays, on every build, for
sanitising each frame, validating each channel object as it is created and deep-copying the
whole object tree each time a chart is combined or configured. For the same Vega-Lite spec,
the charts here hand Altair what it would produce anyway:

* ``rows_data`` — a layer's data as a list of plain JSON-ready dicts, wrapped in ``Rows`` (an
  ``alt.InlineData`` that Altair's copies share instead of duplicating: the rows are never
  changed after they are built). Altair still moves them to the top-level ``datasets`` under
  a content hash when the chart is converted, as it does for a DataFrame, and the row limit
  still applies: ``rows_data`` runs Altair's own ``limit_rows`` check with the active data
  transformer's ``max_rows`` (``MaxRowsError`` above 5,000 rows unless the user changed it);
* ``layer`` — an ``alt.Chart`` of one mark from dicts (``mark``, ``encoding``, optionally
  ``transform``), exactly the dicts ``Chart.mark_*(...).encode(...).transform_*(...)`` would
  serialise to;
* ``layer_chart`` — the layered chart of such layers (``alt.LayerChart``'s own constructor:
  its copies of a layer share the layer's rows, see ``Rows``);
* ``tooltips`` — tooltip channel dicts for the columns of some rows.

* ``chart_dict`` / ``altair_dict`` — a finished chart's whole Vega-Lite dict written
  directly from its objects: ``chart_dict`` names the datasets ``rows-N`` (an explorer's
  slider moves), ``altair_dict`` as Altair does (``to_dict`` of a winviz chart,
  ``winviz.viz.validation``).

The whole spec is still validated against the Vega-Lite schema by ``to_dict()``, once.

Altair is used only through its public API: its chart and schema classes and their
constructors; a chart's properties read by name (``chart["width"]``) in the order of its
Vega-Lite class's constructor, the order Altair's ``to_dict`` writes them; ``to_dict`` for
any other schema object; ``debug_mode``. No private name of Altair's
(``tests/test_viz_altair_public.py`` scans the package for them).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from functools import cache
from itertools import repeat
from typing import Any

import altair as alt
import jsonschema
import narwhals.stable.v1 as nw
import pandas as pd
from altair.utils.schemapi import SchemaBase, SchemaValidationError, debug_mode

from winviz.viz import scale, validation


class Rows(alt.InlineData):
    """Inline data rows (Vega-Lite ``InlineData``) shared, not copied, by chart copies.

    Altair deep-copies a chart (every layer, every row) whenever it is layered, configured or
    given properties; the rows of a winviz layer are built once and never changed, so a copy
    may share them (Python's ``__deepcopy__``, which Altair's copies honour). The values are
    JSON-ready (int, float, str, bool, None) and checked by ``limit_rows``, not by the schema
    as they are made (``rows_data``)."""

    def __deepcopy__(self, memo: Any = None) -> Rows:
        return self


def rows_data(rows: list[dict[str, Any]]) -> Rows:
    """The rows as a layer's data; raises Altair's ``MaxRowsError`` when they exceed the active
    data transformer's ``max_rows`` (5,000 by default; winviz reduces layers before this)."""
    max_rows = alt.data_transformers.options.get("max_rows", scale.ROW_LIMIT)
    alt.limit_rows({"values": rows}, max_rows=max_rows)
    with debug_mode(False):  # (validated with the whole spec by ``to_dict()``)
        return Rows(values=rows)


def layer(
    rows: list[dict[str, Any]],
    mark: dict[str, Any],
    encoding: dict[str, Any],
    transform: list[dict[str, Any]] | None = None,
) -> alt.Chart:
    """One layer: ``mark`` (a Vega-Lite mark definition with ``type``) drawn from ``rows``,
    after the Vega-Lite ``transform`` steps, if any. The channels are Vega-Lite dicts,
    validated with the whole spec by ``to_dict()``, not one by one as they are made."""
    data = rows_data(rows)
    with debug_mode(False):
        chart = alt.Chart(data=data, mark=mark, encoding=alt.FacetedEncoding(**encoding))
    if transform:
        chart.transform = transform
    return chart


def layer_chart(
    layers: list[alt.Chart], cls: type[alt.LayerChart] = alt.LayerChart, **kwargs: Any
) -> alt.LayerChart:
    """``cls(layer=layers, **kwargs)``: the layered chart (an ``alt.LayerChart``, or the
    subclass ``cls``) of the layers, with the chart's properties ``kwargs``."""
    return cls(layer=list(layers), **kwargs)


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
    if "note" in cols and not any(r.get("note") for r in rows):
        cols.remove("note")
    known = types or {}
    return [{"field": c, "type": known.get(c) or field_type(rows, c)} for c in cols]


# -- winviz's chart classes: Altair's, with to_dict written here and checked compiled --------


class _CompiledCheck:
    """``validate`` of a winviz chart: the compiled check, then Altair's on a rejection; and
    ``to_dict`` writing Altair's dict directly (``altair_dict``)."""

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
        """Altair's ``to_dict``: the same dict, written by ``altair_dict`` (the chart's
        own objects, no copies of the chart; a few times faster) and checked as Altair checks
        it; any other call (another format, ``ignore``, a ``context`` — the chart inside
        another) or a chart that writer does not cover goes to Altair's ``to_dict``."""
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

    def finished(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The chart's dict as its ``to_dict`` gives it, from the dict ``chart_dict`` wrote:
        the same here; a subclass that adds to Altair's dict adds the same (the scrubber's
        replay handlers, ``scrubber.ScrubberChart``)."""
        return spec


class Chart(_CompiledCheck, alt.Chart):
    """An ``alt.Chart`` validated by the compiled check (see ``winviz.viz.validation``)."""


class LayerChart(_CompiledCheck, alt.LayerChart):
    """An ``alt.LayerChart`` validated by the compiled check (see ``winviz.viz.validation``)."""


class HConcatChart(_CompiledCheck, alt.HConcatChart):
    """An ``alt.HConcatChart`` validated by the compiled check (see ``winviz.viz.validation``)."""


class VConcatChart(_CompiledCheck, alt.VConcatChart):
    """An ``alt.VConcatChart`` validated by the compiled check (see ``winviz.viz.validation``)."""


_CHECKED: dict[type, type] = {
    alt.Chart: Chart,
    alt.LayerChart: LayerChart,
    alt.HConcatChart: HConcatChart,
    alt.VConcatChart: VConcatChart,
}


CHECKED_CHARTS = tuple(_CHECKED.values())
"""The winviz chart classes (``Chart``, ``LayerChart``, ``HConcatChart``, ``VConcatChart``)."""


def validated(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` (a finished top-level chart of one of Altair's four classes) as the winviz
    class of that kind, so ``to_dict()`` checks it with the compiled validator; other classes
    are left as they are. Changed in place; returned."""
    cls = _CHECKED.get(type(chart))
    if cls is not None:
        object.__setattr__(chart, "__class__", cls)  # (SchemaBase.__setattr__ sets a property)
    return chart


# -- the Vega-Lite dict of a chart, without Altair's to_dict ---------------------------------------

ROWS_PREFIX = "rows-"
"""Prefix of the dataset names ``chart_dict`` gives: ``rows-1``, ``rows-2``, … in the order
the layers' rows are first met (depth first, a chart's own data before its children's)."""

_CHARTS = (
    alt.Chart,
    alt.LayerChart,
    alt.VConcatChart,
    alt.HConcatChart,
    alt.ConcatChart,
    *CHECKED_CHARTS,  # the same charts, checked by the compiled schema
)
_UNIT_CHARTS = (alt.Chart, Chart)


class _Fallback(Exception):
    """Something ``chart_dict`` does not write itself: Altair's ``to_dict`` does it."""


def chart_dict(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite dict of ``chart`` — the same content as ``chart.to_dict(validate=False)``,
    written directly from the chart's objects. What an explorer sends to its widget on every
    slider move (``winviz.viz.explore``).

    Altair's ``to_dict`` names every layer's inline rows by a SHA-256 hash of their JSON text
    (``data-<hash>``: about half its time at 2,000 events) and walks every schema object
    through its generic converter. Here each distinct rows list (``Rows``, shared by identity
    between Altair's chart copies) is named by its position instead (``ROWS_PREFIX``: ``rows-1``,
    ``rows-2``, …; deterministic for the same chart), so **the dataset names differ** from
    ``to_dict``'s — every other key, mark, encoding, parameter and data row is the same (a
    chart without data of its own or its parents' gets Altair's ``empty`` dataset ``[{}]``,
    as ``to_dict`` does). Two different rows lists of equal content are two datasets here
    (``to_dict`` shares one): resolving every ``{"name": …}`` to its rows gives the same spec.

    Charts this does not cover — data other than inline rows (a DataFrame, ``alt.Data``, a
    URL), a facet or repeat chart, the data transformer's dataset consolidation turned off or
    VegaFusion on — are converted by ``to_dict(validate=False)`` itself (its hash names)."""
    spec = _written(chart, None, None)
    if spec is None:
        return chart.to_dict(validate=False)
    return chart.finished(spec) if isinstance(chart, _CompiledCheck) else spec


def altair_dict(
    chart: alt.TopLevelMixin, check: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any] | None:
    """Altair's ``chart.to_dict()`` — the same dict, key for key and in the same order, each
    dataset named as Altair names it (``data-`` and a SHA-256 of its rows' JSON: Altair's own
    ``dataset_name``) — written directly from the chart's objects, as ``chart_dict`` writes
    it (no generic converter, no copies of the chart). ``check``, when given, is called with
    the spec before ``$schema``, the theme and the datasets are added, the dict Altair
    validates. None for a chart ``chart_dict`` does not cover (then only Altair's
    ``to_dict`` writes it)."""
    return _written(chart, dataset_name, check)


def dataset_name(values: list[Any]) -> str:
    """The name Altair's ``to_dict`` gives inline rows in the top-level ``datasets``: ``empty``
    for ``[{}]``, else ``data-`` and the first 32 hex digits of the SHA-256 of the rows' JSON
    (keys sorted, other values as ``str``)."""
    if values == [{}]:
        return "empty"
    text = json.dumps(values, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


@cache
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


@cache
def _walkable(cls: type) -> bool:
    """Whether ``_Writer`` writes an object of this class from its properties (read as
    attributes, ``_properties``), as Altair's ``to_dict`` would: a Vega-Lite object (not a
    chart) whose class converts it with ``SchemaBase.to_dict`` and is made from named
    properties only (an object schema: its constructor takes no positional value)."""
    if not issubclass(cls, SchemaBase) or issubclass(cls, alt.TopLevelMixin):
        return False
    schema_class = _vega_lite_class(cls)
    if schema_class is None or cls.to_dict is not SchemaBase.to_dict:  # channels (shorthand)…
        return False
    params = inspect.signature(schema_class.__init__).parameters.values()
    return not any(p.kind is p.VAR_POSITIONAL for p in params)


@cache
def _properties(cls: type) -> tuple[str, ...]:
    """The Vega-Lite properties of an Altair chart class in the order its ``to_dict`` writes
    them: its schema class's constructor parameters (``alt.Chart``: ``data``, ``mark``, then
    the others in alphabetical order)."""
    schema_class = _vega_lite_class(cls)
    if schema_class is None:
        raise _Fallback
    params = inspect.signature(schema_class.__init__).parameters.values()
    return tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self")


def _written(
    chart: alt.TopLevelMixin,
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
    """One ``chart_dict`` conversion: the datasets met so far, by the identity of their rows,
    named by ``name_of`` (None: by their position, ``rows-N``)."""

    def __init__(self, name_of: Callable[[list[Any]], str] | None = None) -> None:
        self.datasets: dict[str, list[Any]] = {}
        self._names: dict[int, str] = {}
        self._name_of = name_of

    def chart(self, chart: Any, data: Any) -> dict[str, Any]:
        """A (sub)chart; ``data``: the data it inherits (None: none)."""
        if type(chart) not in _CHARTS and not isinstance(chart, _CompiledCheck):
            raise _Fallback
        kwds = _set_properties(chart)
        own = kwds.get("data", alt.Undefined)
        if own is alt.Undefined and data is None and type(chart) in _UNIT_CHARTS:
            own = kwds["data"] = alt.InlineData(values=[{}])  # what Chart.to_dict injects
        if own is not alt.Undefined:
            kwds["data"], data = self.data(own)
        mark = kwds.get("mark")
        if isinstance(mark, str):
            kwds["mark"] = {"type": mark}
        out: dict[str, Any] = {}
        for key, value in kwds.items():
            if key == "data":
                out[key] = value
            elif key in ("layer", "vconcat", "hconcat", "concat"):
                out[key] = [self.chart(c, data) for c in value]
            else:
                out[key] = self.value(value, data)
        return out

    def data(self, data: Any) -> tuple[dict[str, Any], Any]:
        """A chart's data as ``{"name": …}`` (its rows go to the top-level datasets) and the
        data its children and channels see (Altair's ``context["data"]``): inline rows as
        they are; a pandas DataFrame through the active data transformer, as ``to_dict``
        converts it."""
        key = id(data)
        if isinstance(data, pd.DataFrame):
            converted = alt.data_transformers.get()(data)
            if not isinstance(converted, dict) or set(converted) != {"values"}:
                raise _Fallback
            values, fmt = converted["values"], alt.Undefined
            seen = nw.from_native(data, eager_or_interchange_only=True)
        elif type(data) in (Rows, alt.InlineData) and isinstance(data.values, list):
            if data.name is not alt.Undefined:
                raise _Fallback
            values, fmt, seen = data.values, data.format, data
            key = id(values)
        else:
            raise _Fallback
        if values == [{}]:
            name = "empty"
        else:
            name = self._names.get(key)
            if name is None:
                name = self._names[key] = (
                    f"{ROWS_PREFIX}{len(self._names) + 1}"
                    if self._name_of is None
                    else self._name_of(values)
                )
        self.datasets[name] = values
        out: dict[str, Any] = {"name": name}
        if fmt is not alt.Undefined:
            out["format"] = self.value(fmt, None)
        return out, seen

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
        if _walkable(type(obj)):  # an object of the schema, e.g. a layer's encoding
            kwds = _set_properties(obj)
            mark = kwds.get("mark")
            if isinstance(mark, str):
                kwds["mark"] = {"type": mark}
            return self.value(kwds, data)
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
    """The properties set on a chart or schema object (not ``Undefined``), read by name
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
