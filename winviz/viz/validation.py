"""Checking a chart's spec against the Vega-Lite JSON schema — Altair's check, compiled.

``chart.to_dict()`` validates the finished Vega-Lite spec against the JSON schema that
Vega-Lite publishes (Altair's ``SchemaBase.validate``, with the ``jsonschema`` package). For
a winviz chart of eight layers that check takes about 30 ms of CPU on every display, export
or explorer frame — longer than drawing the chart's data. The same check, against the same
schema, compiled once per process by ``jsonschema-rs``, takes well under a millisecond:
``compiled(ref)``. The winviz chart classes (``spec.Chart``, ``spec.LayerChart``,
``spec.HConcatChart``, ``spec.VConcatChart``, made by ``spec.altair_chart``) ask it first:

* a spec the compiled validator accepts is valid — both validators read the same Draft 7
  schema (``tests/test_viz_validation.py`` checks that they agree on every chart the chart
  tests draw and on specs broken on purpose);
* a spec it rejects is handed to Altair's own ``validate``, which raises Altair's
  ``SchemaValidationError`` with its usual message, naming the wrong property. (Should
  Altair accept it — the two libraries' URI grammars differ slightly — it is accepted.)

The schema's ``$ref`` pointers name definitions such as ``MarkPropDef<(Gradient|string|
null)>``, which are not valid URI references; as Altair does for ``jsonschema``, they are
rewritten once, here percent-encoded, before compiling. Formats are checked as Altair
checks them (``uri``, ``uri-reference``).
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any

import jsonschema_rs
from altair.vegalite.v6.schema.core import load_schema


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
    """The Vega-Lite schema's definitions, refs encoded (the schema Altair validates with,
    ``load_schema``, read once)."""
    root = load_schema()
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
