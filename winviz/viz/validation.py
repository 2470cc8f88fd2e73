"""Checking a chart's spec against the Vega-Lite JSON schema — Altair's check, compiled.

``chart.to_dict()`` validates a spec against Vega-Lite's JSON schema with ``jsonschema``
(Altair's ``SchemaBase.validate``): ~30 ms of CPU for an eight-layer chart, on every display,
export or explorer frame. ``compiled(ref)`` is the same Draft 7 schema compiled once per
process by ``jsonschema-rs`` (well under a millisecond). The winviz chart classes
(``spec.altair_chart``) ask it first: a spec it accepts is valid
(``tests/test_viz_validation.py`` checks both validators agree); one it rejects goes to
Altair's own ``validate``, which raises its usual ``SchemaValidationError`` (should Altair
accept it — the URI grammars differ slightly — it is accepted).

The schema's ``$ref`` pointers (``MarkPropDef<(Gradient|string|null)>``) are not valid URI
references; as Altair does for ``jsonschema``, they are percent-encoded once before compiling.
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any

import jsonschema_rs
from altair.vegalite.v6.schema.core import load_schema

from winviz.errors import ArgumentTypeError, InputError


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


def check_size(width: Any, height: Any = None, *, min_width: int = 1, min_height: int = 1) -> None:
    """A chart's ``width`` and ``height``: ints (px) of at least ``min_width`` /
    ``min_height`` (1 unless the chart's layout needs more; ``height`` None for a chart that
    takes none); else ``ArgumentTypeError`` / ``InputError`` naming the argument and its
    value. Every chart entry point calls it first."""
    sizes = (("width", width, min_width), ("height", height, min_height))
    for name, value, minimum in sizes if height is not None else sizes[:1]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentTypeError(
                f"{name} must be an int (px), not {type(value).__name__}",
                field=name,
                value=value,
                expected=f"an int >= {minimum} (px)",
            )
        if value < minimum:
            raise InputError(
                f"{name} must be at least {minimum} px",
                field=name,
                value=value,
                expected=f"an int >= {minimum} (px)",
            )
