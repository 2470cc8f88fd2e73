"""Checking a chart's spec against the Vega-Lite JSON schema — Altair's check, compiled.

``compiled(ref)`` is the Draft 7 schema Altair validates with, compiled once per process by
``jsonschema-rs`` (well under a millisecond per chart; ``jsonschema`` takes ~30 ms). The winviz
chart classes (``spec.altair_chart``) ask it first and leave a rejection to Altair's own check,
which raises its usual error. The schema's ``$ref`` pointers are percent-encoded first (as
Altair does), since ``MarkPropDef<(Gradient|string|null)>`` is no valid URI.
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any

import jsonschema_rs
from altair.vegalite.v6.schema.core import load_schema

from winviz.errors import ArgumentTypeError, InputError


def _encoded_refs(node: Any) -> Any:
    """The schema with every ``$ref`` percent-encoded (``#/definitions/A%3CB%7CC%3E``)."""
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
    """The definitions of Altair's Vega-Lite schema, refs encoded (read once)."""
    root = load_schema()
    return _encoded_refs(root["definitions"])


@functools.cache
def compiled(ref: str) -> jsonschema_rs.Draft7Validator:
    """The compiled validator of one definition (``#/definitions/TopLevelLayerSpec``, …)."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": urllib.parse.quote(ref, safe="#/"),
        "definitions": _definitions(),
    }
    return jsonschema_rs.Draft7Validator(schema, validate_formats=True)


def check_size(width: Any, height: Any = None, *, min_width: int = 1, min_height: int = 1) -> None:
    """A chart's ``width`` and ``height`` (None: takes none) must be ints (px) of at least
    ``min_width`` / ``min_height``; else ``ArgumentTypeError`` / ``InputError``."""
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
