"""How values and keys are written in charts: ``short`` (a value as compact JSON, cut) and
``key_text`` (a key's label, telling apart the keys Flink tells apart), one by one and in bulk.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import jsonable
from winviz.trace.codec import OpaqueValue
from winviz.trace.coded import distinct_values, object_array


def short(value: Any, limit: int = 60) -> str:
    """A compact text of a value for tooltips and labels: strings as they are, anything else
    as compact JSON; cut to ``limit`` characters."""
    text = value if value.__class__ is str else plain_json(value)
    if text is None:
        text = dataclass_json(value)
    if text is None:
        text = (
            value
            if isinstance(value, str)
            else json.dumps(jsonable(value), ensure_ascii=False, separators=(",", ":"), default=str)
        )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shorts(values: list[Any], limit: int = 60) -> list[str]:
    """``short`` of each value (a str, int or (str, int) pair written directly)."""
    out = []
    append = out.append
    if len(_PAIR_TEXTS) > 1 << 16:
        _PAIR_TEXTS.clear()
    pair_text = _PAIR_TEXTS.get
    for v in values:
        c = v.__class__
        if c is tuple and len(v) == 2 and v[0].__class__ is str and v[1].__class__ is int:
            text = pair_text(v)
            if text is None:
                text = _PAIR_TEXTS[v] = f"[{encode_basestring(v[0])},{v[1]}]"
        elif c is str:
            text = v
        elif c is int:
            text = f"{v}"
        else:
            append(short(v, limit))
            continue
        append(text if len(text) <= limit else text[: limit - 1] + "…")
    return out


_PAIR_TEXTS: dict[tuple[str, int], str] = {}
"""The JSON text of each (str, int) pair ``shorts`` wrote (at most 2**16, then forgotten)."""


def plain_json(value: Any) -> str | None:
    """``short``'s JSON of an int, finite float, bool, None or a tuple / list of them and
    strings, written directly; None for anything else."""
    write = _PLAIN_JSON.get(value.__class__)
    try:
        if write is not None:
            return write(value)
        if value.__class__ is tuple or value.__class__ is list:
            return "[" + ",".join([_JSON_OF[v.__class__](v) for v in value]) + "]"
    except (KeyError, ValueError):  # another type inside, or a float JSON cannot say
        pass
    return None


def dataclass_json(value: Any) -> str | None:
    """``short``'s JSON of a dataclass whose fields are all plain values (its fields by name),
    written directly; None for anything else (a window-like one with ``start`` and ``end``)."""
    names = _FIELD_NAMES.get(value.__class__, _NOT_SEEN)
    if names is _NOT_SEEN:
        names = _field_names(value.__class__)
    if names is None or (hasattr(value, "start") and hasattr(value, "end")):
        return None
    parts = []
    try:
        for name, key in names:
            field = getattr(value, name)
            parts.append(f"{key}:{_JSON_OF[field.__class__](field)}")
    except (KeyError, ValueError, AttributeError):  # another type, a float JSON cannot say
        return None
    return "{" + ",".join(parts) + "}"


_NOT_SEEN: Any = object()
_FIELD_NAMES: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _field_names(cls: type) -> tuple[tuple[str, str], ...] | None:
    """A plain dataclass's field names, sorted, with their JSON texts (None: not a plain
    dataclass); remembered per class."""
    names = None
    if dataclasses.is_dataclass(cls) and not issubclass(
        cls, (OpaqueValue, int, float, str, list, tuple, dict)
    ):
        fields = sorted(f.name for f in dataclasses.fields(cls))
        names = tuple((name, encode_basestring(name)) for name in fields)
    _FIELD_NAMES[cls] = names
    return names


def _finite(value: float) -> str:
    """A finite float's JSON text (``ValueError`` for NaN and infinities)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(value)
    return float.__repr__(value)


_PLAIN_JSON: dict[type, Any] = {
    int: int.__repr__,
    bool: lambda b: "true" if b else "false",
    type(None): lambda _: "null",
    float: _finite,
}
_JSON_OF: dict[type, Any] = {**_PLAIN_JSON, str: encode_basestring}


def key_text(key: Any, limit: int = 30) -> str:
    """A key's label in every chart: ``short`` of the key, a str key that reads as JSON
    (``"1"``, ``"true"``) quoted so it is not taken for the int or bool key (different keys
    in Flink, ``keygroups.KeyRule``); longer than ``limit``: cut, ending "…#" and 8 hex
    digits of a hash of the whole text (two long keys keep two labels)."""
    if key.__class__ is str:
        text = json.dumps(key, ensure_ascii=False) if _reads_as_json(key) else key
    else:
        text = short(key, 1 << 62)
    if len(text) <= limit:
        return text
    digest = hashlib.blake2s(text.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{text[: max(1, limit - 10)]}…#{digest}"


def _reads_as_json(text: str) -> bool:
    """Whether ``json.loads`` takes this text (JSON numbers, literals, strings, arrays...)."""
    if not text or (text[0] not in _JSON_START and text.strip() == text):
        return False  # the usual key ("k03", "user-7"): no JSON value starts with its letter
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# the characters a JSON text can start with (but whitespace); "N" and "I": NaN, Infinity
_JSON_START = frozenset('-0123456789"[{tfnNI')


def _key_identity(key: Any) -> Any:
    """What tells keys apart as the engine does (``keygroups.KeyRule``): class and exact text
    (1, True and 1.0 are three keys, and so are 0.0 and -0.0)."""
    return (key.__class__, key if key.__class__ is str else short(key, 1 << 30))


def key_texts(keys: Any) -> list[str]:
    """``key_text`` of each key, once per distinct key (``_key_identity``)."""
    if isinstance(keys, pd.Series):
        keys = keys.to_numpy(dtype=object)
    elif not (isinstance(keys, np.ndarray) and keys.dtype == object and keys.ndim == 1):
        keys = np.asarray(list(keys), dtype=object)
    items = keys.tolist()
    if set(map(type, items)) in ({str}, {int}):
        # the usual cases, str keys or int keys: == is the engine's equality
        texts = {k: key_text(k) for k in dict.fromkeys(items)}
        return list(map(texts.__getitem__, items))
    if not items:
        return []
    # each distinct object once (the engine shares its key objects), then per identity
    numbers, objects = distinct_values(keys)
    cache: dict[Any, str] = {}
    texts = []
    for k in objects:
        ident = _key_identity(k)
        text = cache.get(ident)
        if text is None:
            text = cache[ident] = key_text(k)
        texts.append(text)
    return object_array(texts)[numbers].tolist()
