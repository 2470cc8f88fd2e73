"""A packed entry of the trace's write buffer: a marker (``Packed``) whose ``width`` values
after it stand for ``count`` records — how the store keeps a run of similar records compactly
(``winviz.trace.element_entry`` is the one kind of entry the engine writes). Flink has no such
thing: it is the layout of winviz's own trace store (``winviz.trace.store``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from winviz.trace.schema import BASE_FIELDS


class Packed:
    """A marker for packed entries: the ``width`` values that follow it in the write buffer
    stand for ``count`` records. ``unpack`` defines them (eight values per record, exactly as
    separate ``emit`` calls would have written); ``fields`` builds the same records field
    by field for many entries at once, which is how a read converts them. Subclasses live
    next to the code that writes them."""

    width: int = 0
    count: int = 0

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        """Append the records of the entry whose values start at ``values[at]`` to ``out``."""
        raise NotImplementedError

    def fields(self, slots: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
        """The records of ``n`` entries, whose values are given slot by slot (``slots[f][e]``:
        value ``f`` of entry ``e``), field by field: for each of the eight fields
        (``BASE_FIELDS`` order) a tuple with one item per record of an entry — the value
        every entry's record has, or the ``n`` entries' values (a list, a column of
        ``winviz.trace.columns``, or a ``Deferred`` that makes one when its field is decoded).
        This default unpacks entry by entry; a subclass may say it directly."""
        rows: list[Any] = []
        for values in zip(*slots, strict=True):
            self.unpack(list(values), 0, rows)
        width, count = len(BASE_FIELDS), self.count
        return [
            tuple(rows[f + width * r :: width * count] for r in range(count)) for f in range(width)
        ]
