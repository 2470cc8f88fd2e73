"""Keyed, namespaced state — the part of Flink's heap state backend the operators use: state is
addressed by (state name, key, namespace); the WindowOperator's namespace is the window, and
``merge_namespaces`` is what happens to state when session windows merge."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
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


def state_type(descriptor: StateDescriptor) -> str:
    """Flink's ``StateDescriptor.Type`` of a descriptor (VALUE, LIST, REDUCING, AGGREGATING):
    a restore refuses a state registered under a snapshot's name with another type."""
    return _STATE_TYPES[type(descriptor)]


_STATE_TYPES: dict[type, str] = {
    ValueStateDescriptor: "VALUE",
    ListStateDescriptor: "LIST",
    ReducingStateDescriptor: "REDUCING",
    AggregatingStateDescriptor: "AGGREGATING",
}


def add_to_contents(desc: Any, current: Any, record: Any) -> Any:
    """Reducing or aggregating contents after adding ``record`` to ``current`` (None: none yet)."""
    if current is None:
        return first_contents(desc, record)
    step, record_first = contents_step(desc)
    return step(record, current) if record_first else step(current, record)


def first_contents(desc: Any, record: Any) -> Any:
    """The contents when ``record`` is the first (a window's first element): the record
    itself in reducing state, ``add(record, create_accumulator())`` in aggregating state."""
    if desc.__class__ is ReducingStateDescriptor:
        return record
    agg = desc.function
    return agg.add(record, agg.create_accumulator())


def contents_step(desc: Any) -> tuple[Callable[[Any, Any], Any], bool]:
    """How a record is added to contents: the user's function, and whether it takes the record first
    (``AggregateFunction.add(record, acc)``) or not (``reduce(contents, record)``)."""
    if desc.__class__ is ReducingStateDescriptor:
        return desc.reduce, False
    return desc.function.add, True


class KeyedStateBackend:
    """Keyed, namespaced state (Flink's heap keyed state backend): stored per (state name,
    namespace) as a dict key → value (``slots``), so the window operator looks a window up once, not
    once per element; ``None`` means empty, and an empty slot is removed."""

    def __init__(self) -> None:
        self.slots: dict[tuple[str, Any], dict[Any, Any]] = {}

    def slot(self, name: str, namespace: Any) -> dict[Any, Any]:
        """The dict key → value of ``name`` in ``namespace``, created if missing."""
        slot = self.slots.get((name, namespace))
        if slot is None:
            slot = self.slots[(name, namespace)] = {}
        return slot

    def get(self, name: str, key: Any, namespace: Any) -> Any:
        slot = self.slots.get((name, namespace))
        return None if slot is None else slot.get(key)

    def put(self, name: str, key: Any, namespace: Any, value: Any) -> None:
        self.slot(name, namespace)[key] = value

    def clear(self, name: str, key: Any, namespace: Any) -> None:
        slot = self.slots.get((name, namespace))
        if slot is not None:
            slot.pop(key, None)
            if not slot:
                del self.slots[(name, namespace)]

    def pop(self, name: str, key: Any, namespace: Any) -> Any:
        """The value (None when empty), cleared."""
        value = self.get(name, key, namespace)
        self.clear(name, key, namespace)
        return value

    def add(self, desc: StateDescriptor, key: Any, namespace: Any, value: Any) -> None:
        """``AppendingState.add`` for reducing, list and aggregating state."""
        if not isinstance(
            desc, ReducingStateDescriptor | ListStateDescriptor | AggregatingStateDescriptor
        ):
            raise TypeError(f"state {desc.name!r} does not support add")
        slot = self.slot(desc.name, namespace)
        current = slot.get(key)
        if not isinstance(desc, ListStateDescriptor):
            slot[key] = add_to_contents(desc, current, value)
        elif current is None:
            slot[key] = [value]
        else:
            current.append(value)

    def merge_namespaces(
        self, desc: StateDescriptor, key: Any, target: Any, sources: Iterable[Any]
    ) -> None:
        """Fold the sources' state into the target's and remove them (``mergeNamespaces``)."""
        merged = None
        for source in sources:
            state = self.pop(desc.name, key, source)
            if state is None:
                continue
            merged = state if merged is None else _merge(desc, merged, state)
        if merged is None:
            return
        current = self.get(desc.name, key, target)
        self.put(
            desc.name, key, target, merged if current is None else _merge(desc, current, merged)
        )

    def items(self) -> Iterator[tuple[StateKey, Any]]:
        """Every entry as ((state name, key, namespace), value)."""
        for (name, namespace), slot in self.slots.items():
            for key, value in slot.items():
                yield (name, key, namespace), value

    def count(self, key: Any = ..., namespace: Any = ...) -> int:
        """Number of non-empty state entries, optionally for one key / namespace."""
        return sum(
            1
            for (_, k, ns), v in self.items()
            if v is not None and (key is ... or k == key) and (namespace is ... or ns == namespace)
        )

    def snapshot(self) -> dict[StateKey, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.items()}

    def restore(self, snap: dict[StateKey, Any]) -> None:
        self.slots = {}
        for (name, key, namespace), v in snap.items():
            self.put(name, key, namespace, list(v) if isinstance(v, list) else v)


def _merge(desc: StateDescriptor, a: Any, b: Any) -> Any:
    if isinstance(desc, ReducingStateDescriptor):
        return desc.reduce(a, b)
    if isinstance(desc, ListStateDescriptor):
        a.extend(b)
        return a
    if isinstance(desc, AggregatingStateDescriptor):
        return desc.function.merge(a, b)
    raise TypeError(f"state {desc.name!r} cannot be merged")
