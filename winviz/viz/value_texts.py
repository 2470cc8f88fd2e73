"""How values and keys are written in charts: ``short`` (a value as compact JSON, cut) and
``key_text`` (a key's label, telling apart the keys Flink tells apart), one by one and in bulk.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from winviz.trace import jsonable
from winviz.trace.coded import per_distinct


def short(value: Any, limit: int = 60) -> str:
    """A compact text of a value for tooltips and labels: strings as they are, anything else
    as compact JSON of its plain form (``jsonable``); cut to ``limit`` characters."""
    text = value if isinstance(value, str) else _JSON(jsonable(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def shorts(values: Any, limit: int = 60) -> list[str]:
    """``short`` of each value, once per distinct value (``coded.per_distinct``)."""
    return per_distinct(values, lambda value: short(value, limit))


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
