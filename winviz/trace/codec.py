"""The trace's JSON codec: the one place a trace value becomes JSON, in two forms.

* **plain** (``jsonable``): what ``Trace.to_json`` writes and tooltips show (a tuple as a
  list, a window as ``[start, end]``); not meant to be read back.
* **tagged** (``encode`` / ``to_text``, read by ``from_text``): what a trace file holds, data
  only (no pickle), with a tag for what JSON cannot say by itself:

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

Reading gives back the same values, but the last row's: an ``OpaqueValue`` keeping its text
and plain form (``to_json()`` of a loaded trace is the original's); any other shape raises
``ValueError``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from itertools import chain
from typing import Any

from winviz.windows.window import GLOBAL_WINDOW, GlobalWindow, TimeWindow


@dataclass(frozen=True, slots=True)
class OpaqueValue:
    """A value read from a trace file that was not plain data when saved: its ``repr`` text,
    type name and ``jsonable`` form (never turned back into the object)."""

    text: str
    type_name: str
    json: Any

    def __repr__(self) -> str:
        return self.text


def jsonable(value: Any) -> Any:
    """The plain JSON form of a value: scalars as they are (NaN and infinities as ``repr``),
    lists and tuples as lists, a window as ``[start, end]``, a dataclass as its fields' dict,
    anything else as ``repr``. A dict is an object keyed by the keys' ``str()`` in order,
    unless two keys share a ``str()`` (``1`` and ``"1"``): then its ``[key, value]`` pairs,
    in a deterministic order (``_pairs``)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, OpaqueValue):
        return value.json
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
        )
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        named = {str(k): jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
        return named if len(named) == len(value) else _pairs(value)
    if hasattr(value, "start") and hasattr(value, "end"):
        return [value.start, value.end]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return repr(value)


def _pairs(value: dict[Any, Any]) -> list[list[Any]]:
    """A dict's ``[key, value]`` pairs, ordered by the keys' ``str()``, types, then texts."""
    entries = []
    for k, v in value.items():
        cls = k.__class__
        key, val = jsonable(k), jsonable(v)
        order = (str(k), f"{cls.__module__}.{cls.__qualname__}", _text(key), _text(val))
        entries.append((order, [key, val]))
    entries.sort(key=lambda entry: entry[0])
    return [pair for _, pair in entries]


def _text(value: Any) -> str:
    """The canonical JSON text of a plain form (compact, keys sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


_PLAIN = (type(None), bool, int, str)
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def to_text(value: Any) -> str:
    """One value as compact JSON text (see the module docstring)."""
    return _JSON(encode(value))


def from_text(text: str) -> Any:
    """The value written by ``to_text`` (``ValueError`` when the text is not such a value)."""
    return json.loads(text, object_pairs_hook=_tagged)


def from_array_text(text: str) -> list[Any]:
    """The values of a JSON array of texts written by ``to_text`` (``from_text`` of each)."""
    values = json.loads(text, object_pairs_hook=_tagged)
    if not isinstance(values, list):
        raise ValueError("not a JSON array of trace values")
    return values


def to_texts(values: list[Any]) -> list[str]:
    """``to_text`` of each value (plain scalars, or flat tuples of them, all at once)."""
    classes = set(map(type, values))
    texts = None
    if classes <= _SCALARS:
        texts = _scalar_texts(values)
    elif classes == {tuple}:
        texts = _tuple_texts(values)
    return [to_text(v) for v in values] if texts is None else texts


# JSON escapes every control character inside a string: a raw NUL or SOH is a separator
_JSON_NUL = json.JSONEncoder(
    separators=("\x00", ":"), ensure_ascii=False, allow_nan=False, check_circular=False
).encode
_SCALARS = frozenset(_PLAIN) | {float}


def _scalar_texts(values: list[Any]) -> list[str] | None:
    if not values:
        return []
    try:
        return _JSON_NUL(values)[1:-1].split("\x00")
    except ValueError:  # a non-finite float: the general way
        return None


def _tuple_texts(values: list[tuple[Any, ...]]) -> list[str] | None:
    if not values:
        return []
    if not set(map(type, chain.from_iterable(values))) <= _SCALARS:
        return None
    try:
        text = _JSON_NUL(values)[1:-1]
    except ValueError:  # a non-finite float: the general way
        return None
    # "[a\0b]\0[c]": "]\0[" is always between two tuples
    text = text.replace("]\x00[", ']}\x01{"$tuple":[').replace("\x00", ",")
    return ('{"$tuple":' + text + "}").split("\x01")


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
        return {"$text": value.text, "$type": value.type_name, "$json": _text(value.json)}
    return {
        "$text": repr(value),
        "$type": f"{cls.__module__}.{cls.__qualname__}",
        "$json": _text(jsonable(value)),
    }


def _tagged(pairs: list[tuple[str, Any]]) -> Any:
    """``json.loads``'s hook: one JSON object's members, already decoded, as a value."""
    if len(pairs) == 1 and pairs[0][0] == "$tuple" and pairs[0][1].__class__ is list:
        return tuple(pairs[0][1])  # (the most common tag, told first)
    data = dict(pairs)
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
