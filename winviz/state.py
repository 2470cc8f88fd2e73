"""Keyed, namespaced state — the part of Flink's heap state backend the operators use.

In Flink every piece of keyed state is addressed by (state name, current key, namespace). The
WindowOperator uses the *window* as namespace: the window contents of key "a" in window
[0, 5000) live under ("window-contents", "a", [0, 5000)). Triggers keep their own small states
(a count, a next fire time) the same way. ``merge_namespaces`` is what happens to state when
session windows merge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

StateKey = tuple[str, Any, Any]


@dataclass(frozen=True)
class ValueStateDescriptor:
    """A single value per (key, namespace)."""

    name: str


@dataclass(frozen=True)
class ReducingStateDescriptor:
    """A value folded with ``reduce`` on every ``add`` (Flink's ReducingStateDescriptor)."""

    name: str
    reduce: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class ListStateDescriptor:
    """A list appended to on every ``add``."""

    name: str


@dataclass(frozen=True)
class AggregatingStateDescriptor:
    """An accumulator of an AggregateFunction (create_accumulator/add/merge)."""

    name: str
    function: Any


StateDescriptor = (
    ValueStateDescriptor
    | ReducingStateDescriptor
    | ListStateDescriptor
    | AggregatingStateDescriptor
)


class KeyedStateBackend:
    """A dict of (state name, key, namespace) → value; ``None`` means empty."""

    def __init__(self) -> None:
        self.table: dict[StateKey, Any] = {}

    def get(self, name: str, key: Any, namespace: Any) -> Any:
        return self.table.get((name, key, namespace))

    def put(self, name: str, key: Any, namespace: Any, value: Any) -> None:
        self.table[(name, key, namespace)] = value

    def clear(self, name: str, key: Any, namespace: Any) -> None:
        self.table.pop((name, key, namespace), None)

    def add(self, desc: StateDescriptor, key: Any, namespace: Any, value: Any) -> None:
        """``AppendingState.add`` for reducing, list and aggregating state."""
        k = (desc.name, key, namespace)
        current = self.table.get(k)
        if isinstance(desc, ReducingStateDescriptor):
            self.table[k] = value if current is None else desc.reduce(current, value)
        elif isinstance(desc, ListStateDescriptor):
            if current is None:
                self.table[k] = [value]
            else:
                current.append(value)
        elif isinstance(desc, AggregatingStateDescriptor):
            acc = desc.function.create_accumulator() if current is None else current
            self.table[k] = desc.function.add(value, acc)
        else:
            raise TypeError(f"state {desc.name!r} does not support add")

    def merge_namespaces(
        self, desc: StateDescriptor, key: Any, target: Any, sources: Iterable[Any]
    ) -> None:
        """Fold the sources' state into the target's and remove the sources (Flink's
        ``InternalMergingState.mergeNamespaces``: sources first, then into the target)."""
        merged = None
        for source in sources:
            state = self.table.pop((desc.name, key, source), None)
            if state is None:
                continue
            merged = state if merged is None else _merge(desc, merged, state)
        if merged is None:
            return
        k = (desc.name, key, target)
        current = self.table.get(k)
        self.table[k] = merged if current is None else _merge(desc, current, merged)

    def count(self, key: Any = ..., namespace: Any = ...) -> int:
        """Number of non-empty state entries, optionally for one key / namespace."""
        return sum(
            1
            for (_, k, ns), v in self.table.items()
            if v is not None and (key is ... or k == key) and (namespace is ... or ns == namespace)
        )

    def snapshot(self) -> dict[StateKey, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.table.items()}

    def restore(self, snap: dict[StateKey, Any]) -> None:
        self.table = {k: (list(v) if isinstance(v, list) else v) for k, v in snap.items()}


def _merge(desc: StateDescriptor, a: Any, b: Any) -> Any:
    if isinstance(desc, ReducingStateDescriptor):
        return desc.reduce(a, b)
    if isinstance(desc, ListStateDescriptor):
        a.extend(b)
        return a
    if isinstance(desc, AggregatingStateDescriptor):
        return desc.function.merge(a, b)
    raise TypeError(f"state {desc.name!r} cannot be merged")
