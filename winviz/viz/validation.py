"""Checking a chart's spec against the Vega-Lite JSON schema — Altair's check, compiled.

``chart.to_dict()`` validates the finished Vega-Lite spec against the JSON schema that
Vega-Lite publishes (Altair's ``SchemaBase.validate``, with the ``jsonschema`` package). For
a winviz chart of eight layers that check takes about 30 ms of CPU on every display, export
or explorer frame — longer than drawing the chart's data. The same check, against the same
schema, compiled once per process by ``jsonschema-rs``, takes well under a millisecond.

``validated(chart)`` gives a finished winviz chart a class of its own (``Chart``,
``LayerChart``, ``HConcatChart``, ``VConcatChart`` — subclasses of Altair's, so everything
Altair does with a chart works the same). Its ``to_dict`` gives Altair's dict, key for key,
written by ``spec.altair_dict`` (a few times faster than Altair's generic converter; tested
equal to Altair's own on every chart the chart tests draw), and its ``validate`` asks the
compiled validator first:

* a spec the compiled validator accepts is valid — both validators read the same Draft 7
  schema (``tests/test_viz_validation.py`` checks that they agree on every chart the chart
  tests draw and on specs broken on purpose);
* a spec it rejects is handed to Altair's own ``validate``, which raises Altair's
  ``SchemaValidationError`` with its usual message, naming the wrong property. (Should
  Altair accept it — the two libraries' URI grammars differ slightly — it is accepted.)

The schema's ``$ref`` pointers name definitions such as ``MarkPropDef<(Gradient|string|
null)>``, which are not valid URI references; as Altair does for ``jsonschema``, they are
rewritten once, here percent-encoded, before compiling. Formats are checked as Altair
checks them (``uri``, ``uri-reference``). A copy of the chart (``chart.properties(...)``)
keeps its class; a chart of Altair's own classes is validated by Altair as before.
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any, ClassVar

import altair as alt
import jsonschema
import jsonschema_rs
from altair.utils.schemapi import SchemaValidationError


def _encoded_refs(node: Any) -> Any:
    """The schema with every ``$ref`` percent-encoded (``#/definitions/A<B|C>`` →
    ``#/definitions/A%3CB%7CC%3E``); JSON-pointer slashes and the leading ``#`` kept."""
    if isinstance(node, dict):
        return {
            key: urllib.parse.quote(value, safe="#/")
            if key == "$ref" and isinstance(value, str)
            else _encoded_refs(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_encoded_refs(value) for value in node]
    return node


@functools.cache
def _definitions() -> dict[str, Any]:
    """The Vega-Lite schema's definitions, refs encoded (Altair's root schema, read once)."""
    root = alt.Chart._rootschema
    return _encoded_refs(root["definitions"])


@functools.cache
def compiled(ref: str) -> jsonschema_rs.Draft7Validator:
    """The compiled validator of one top-level definition (``#/definitions/TopLevelLayerSpec``
    …), with the whole schema's definitions for its references."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": urllib.parse.quote(ref, safe="#/"),
        "definitions": _definitions(),
    }
    return jsonschema_rs.Draft7Validator(schema, validate_formats=True)


class _CompiledCheck:
    """``validate`` of a winviz chart: the compiled check, then Altair's on a rejection; and
    ``to_dict`` writing Altair's dict directly (``spec.altair_dict``)."""

    _schema: ClassVar[dict[str, Any]]

    @classmethod
    def validate(cls, instance: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
        ref = (schema or cls._schema).get("$ref")
        if isinstance(ref, str) and compiled(ref).is_valid(instance):
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
        """Altair's ``to_dict``: the same dict, written by ``spec.altair_dict`` (the chart's
        own objects, no copies of the chart; a few times faster) and checked as Altair checks
        it; any other call (another format, ``ignore``, a ``context`` — the chart inside
        another) or a chart that writer does not cover goes to Altair's ``to_dict``."""
        if format == "vega-lite" and not ignore and context is None:
            from winviz.viz.spec import altair_dict  # spec.py imports this module

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


class Chart(_CompiledCheck, alt.Chart):
    """An ``alt.Chart`` validated by the compiled check (see the module docstring)."""


class LayerChart(_CompiledCheck, alt.LayerChart):
    """An ``alt.LayerChart`` validated by the compiled check (see the module docstring)."""


class HConcatChart(_CompiledCheck, alt.HConcatChart):
    """An ``alt.HConcatChart`` validated by the compiled check (see the module docstring)."""


class VConcatChart(_CompiledCheck, alt.VConcatChart):
    """An ``alt.VConcatChart`` validated by the compiled check (see the module docstring)."""


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
