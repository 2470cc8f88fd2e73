"""How values and keys are written in charts: ``short`` (a value as compact JSON, cut) and
``key_text`` (a key's label, telling apart the keys Flink tells apart), one by one and in bulk.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring
from typing import Any

from winviz.trace import jsonable
from winviz.trace.coded import per_distinct


def short(value: Any, limit: int = 60) -> str:
    """A compact text of a value for tooltips and labels: strings as they are, anything else
    as compact JSON of its plain form (``jsonable``; plain values written directly,
    ``plain_json``); cut to ``limit`` characters."""
    text = value if value.__class__ is str else plain_json(value)
    if text is None:
        text = value if isinstance(value, str) else _JSON(jsonable(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def shorts(values: Any, limit: int = 60) -> list[str]:
    """``short`` of each value."""
    return [short(value, limit) for value in values]


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


def key_texts(keys: Any) -> list[str]:
    """``key_text`` of each key, once per distinct key (``coded.per_distinct``: keys told
    apart as the engine does, ``keygroups.KeyRule``)."""
    return per_distinct(keys, key_text)
