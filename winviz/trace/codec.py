"""Values in a trace file, as data only.

A trace carries the engine's own values: keys, element payloads, windows, timer namespaces.
A trace file must never run code when it is read (no pickle), so each value is written as
JSON text, with a tag for what JSON cannot say by itself:

| value | written as |
|---|---|
| None, bool, int, str, finite float, list | itself |
| a dict whose keys are all strings not starting with ``$`` | itself |
| tuple | ``{"$tuple": [...]}`` |
| ``TimeWindow(start, end)`` | ``{"$window": [start, end]}`` |
| the ``GlobalWindow`` | ``{"$global": true}`` |
| NaN, ±infinity | ``{"$float": "nan"}`` / ``"inf"`` / ``"-inf"`` |
| any other dict | ``{"$dict": [[key, value], ...]}`` |
| anything else (a dataclass, an enum, an object) | ``{"$text": …, "$type": …, "$json": …}`` |

Reading gives back the same values, except the last row (its ``repr``, type name and
``jsonable`` form): an ``OpaqueValue`` that shows the original's text and keeps its JSON
form, so ``to_json()`` of a loaded trace is byte for byte the original's. ``decode`` accepts
only these shapes and raises ``ValueError`` on anything else.
"""

from __future__ import annotations

import json
import math
from typing import Any

from winviz.trace.schema import OpaqueValue, jsonable
from winviz.windows.window import GLOBAL_WINDOW, GlobalWindow, TimeWindow

_PLAIN = (type(None), bool, int, str)
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def to_text(value: Any) -> str:
    """One value as compact JSON text (see the module docstring)."""
    return _JSON(encode(value))


def from_text(text: str) -> Any:
    """The value written by ``to_text`` (``ValueError`` when the text is not such a value)."""
    return json.loads(text, object_hook=_tagged)


def from_texts(texts: list[str]) -> list[Any]:
    """The values of many ``to_text`` texts, parsed in one pass."""
    return json.loads("[" + ",".join(texts) + "]", object_hook=_tagged) if texts else []


def encode(value: Any) -> Any:
    """A JSON-ready, tagged form of a value."""
    cls = value.__class__
    if cls in _PLAIN:
        return value
    if cls is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if value != value else ("inf" if value > 0 else "-inf")}
    if cls is TimeWindow:
        return {"$window": [value.start, value.end]}
    if isinstance(value, GlobalWindow):
        return {"$global": True}
    if cls is tuple:
        return {"$tuple": [encode(v) for v in value]}
    if cls is list:
        return [encode(v) for v in value]
    if cls is dict:
        if all(k.__class__ is str and not k.startswith("$") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"$dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, OpaqueValue):
        return {"$text": value.text, "$type": value.type_name, "$json": _json_text(value.json)}
    return {
        "$text": repr(value),
        "$type": f"{cls.__module__}.{cls.__qualname__}",
        "$json": _json_text(jsonable(value)),
    }


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def decode(data: Any) -> Any:
    """The value of a tagged form made by ``encode`` (as ``json.loads`` would give it)."""
    return json.loads(json.dumps(data), object_hook=_tagged)


def _tagged(data: dict[str, Any]) -> Any:
    """``json.loads``'s hook: one JSON object, its members already decoded, as a value."""
    if len(data) == 1:
        ((tag, inner),) = data.items()
        if tag == "$tuple" and isinstance(inner, list):
            return tuple(inner)
        if tag == "$window" and _pair_of_ints(inner):
            return TimeWindow(inner[0], inner[1])
        if tag == "$global" and inner is True:
            return GLOBAL_WINDOW
        if tag == "$float" and inner in ("nan", "inf", "-inf"):
            return float(inner)
        if tag == "$dict" and isinstance(inner, list) and all(_pair(kv) for kv in inner):
            return {_hashable(k): v for k, v in inner}
    if set(data) == {"$text", "$type", "$json"}:
        text, type_name, inner = data["$text"], data["$type"], data["$json"]
        if isinstance(text, str) and isinstance(type_name, str) and isinstance(inner, str):
            return OpaqueValue(text, type_name, json.loads(inner))
    if any(k.startswith("$") for k in data):
        raise ValueError(f"not a trace value (unknown tag): {_short(data)}")
    return data


def _pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2


def _pair_of_ints(v: Any) -> bool:
    return _pair(v) and all(x.__class__ is int for x in v)


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError as exc:
        raise ValueError(f"not a trace value: a dict key that is not hashable: {v!r}") from exc
    return v


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:79] + "…"
