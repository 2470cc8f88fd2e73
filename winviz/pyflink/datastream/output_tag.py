"""PyFlink's ``OutputTag(tag_id, type_info)``: names a side output (winviz's
``OutputTag`` is ``.tag``). A PyFlink process function emits to it with
``yield output_tag, value``."""

from __future__ import annotations

from typing import Any

import winviz as wv


class OutputTag:
    def __init__(self, tag_id: str, type_info: Any = None) -> None:
        self.tag = wv.OutputTag(tag_id)
        self.tag_id = tag_id
        self.type_info = type_info

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag == self.tag

    def __hash__(self) -> int:
        return hash(self.tag)

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"
