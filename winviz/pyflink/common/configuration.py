"""PyFlink's ``Configuration``: string keys and values. winviz reads none of them (a
setting that matters has its own call, e.g. ``env.set_runtime_mode``); it keeps them so a
program can set and read them back."""

from __future__ import annotations

from typing import Any


class Configuration:
    def __init__(self, other: Configuration | None = None) -> None:
        self._values: dict[str, str] = dict(other._values) if other is not None else {}

    def set_string(self, key: str, value: str) -> Configuration:
        self._values[key] = str(value)
        return self

    def get_string(self, key: str, default_value: str) -> str:
        return self._values.get(key, default_value)

    def set_integer(self, key: str, value: int) -> Configuration:
        self._values[key] = str(value)
        return self

    def get_integer(self, key: str, default_value: int) -> int:
        return int(self._values.get(key, default_value))

    def set_boolean(self, key: str, value: bool) -> Configuration:
        self._values[key] = "true" if value else "false"
        return self

    def get_boolean(self, key: str, default_value: bool) -> bool:
        v = self._values.get(key)
        return default_value if v is None else v.lower() == "true"

    def contains_key(self, key: str) -> bool:
        return key in self._values

    def key_set(self) -> set[str]:
        return set(self._values)

    def to_dict(self) -> dict[str, str]:
        return dict(self._values)

    def remove_config(self, key: Any) -> bool:
        return self._values.pop(key, None) is not None
