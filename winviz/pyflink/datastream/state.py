"""PyFlink's keyed state (``pyflink.datastream.state``): descriptors and the state objects
``RuntimeContext.get_state(...)`` & co. return.

Every state object reads and writes one named *cell* of the current key: in a keyed
process, map or flat_map that is winviz's keyed state (``ctx.state(name)`` /
``ctx.update_state(name, value)``, Flink's heap keyed state backend); in a window
function's ``window_state()`` / ``global_state()`` it is an entry of winviz's per-window /
per-key state. A value is replaced, never changed in place (a list or map state writes a
new list or dict), so a checkpoint's snapshot never sees a later change. A value reads back
as it was written, whatever the descriptor's type: PyFlink's Python state cache hands back
the Python object (measured: ``Types.FLOAT()`` state keeps a float's 64 bits).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from winviz.pyflink.common.typeinfo import TypeInformation
from winviz.pyflink.errors import unsupported


class StateCells:
    """Where the current key's state lives: ``get(name)`` (None when empty), ``put(name,
    value)`` (None clears it)."""

    def get(self, name: str) -> Any:
        raise NotImplementedError

    def put(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def open(self) -> None:
        """Called as a state object is taken (``get_state`` & co.): a store that refuses
        state refuses it here, as Flink's ``KeyedStateStore.getState`` does."""


class ValueCells(StateCells):
    """winviz's keyed state of the call being made (``ctx`` is set before each call)."""

    def __init__(self) -> None:
        self.ctx: Any = None

    def get(self, name: str) -> Any:
        if self.ctx is None:
            raise unsupported(
                "keyed state outside a keyed function",
                "read and write state in process_element / on_timer / map of a keyed "
                "stream (after key_by), not in open() or __init__",
            )
        return self.ctx.state(name)

    def put(self, name: str, value: Any) -> None:
        self.ctx.update_state(name, value)


class StateHandle(StateCells):
    """The cells of a window's (or key's) state in a window function: one dict of them in
    winviz's ``window_state()`` / ``global_state()``."""

    def __init__(self, partitioned: Any) -> None:
        self.partitioned = partitioned

    def get(self, name: str) -> Any:
        return (self.partitioned.get() or {}).get(name)

    def put(self, name: str, value: Any) -> None:
        cells = dict(self.partitioned.get() or {})
        if value is None:
            cells.pop(name, None)
        else:
            cells[name] = value
        self.partitioned.update(cells or None)


class WindowStateHandle(StateHandle):
    """The cells of the per-window state of a window function's context, taken from winviz's
    ``context.window_state()`` as a state object is taken: on merging windows that refuses
    it (PyFlink's ``MergingWindowStateStore.get_state`` & co. raise "Per-window state is not
    allowed when using merging windows."), not ``context.window_state()`` itself."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.partitioned = None

    def open(self) -> None:
        if self.partitioned is None:
            self.partitioned = self.context.window_state()


class StateTtlConfig:
    """State time-to-live is not modelled: building a TTL config says so."""

    class UpdateType:
        Disabled = "Disabled"
        OnCreateAndWrite = "OnCreateAndWrite"
        OnReadAndWrite = "OnReadAndWrite"

    class StateVisibility:
        ReturnExpiredIfNotCleanedUp = "ReturnExpiredIfNotCleanedUp"
        NeverReturnExpired = "NeverReturnExpired"

    @staticmethod
    def new_builder(ttl: Any) -> Any:
        raise _ttl()


def _ttl() -> Exception:
    return unsupported(
        "State TTL (StateTtlConfig, StateDescriptor.enable_time_to_live)",
        "remove the TTL configuration; to forget state after a while, register a timer "
        "(ctx.timer_service().register_event_time_timer(...)) and clear the state in "
        "on_timer",
    )


class StateDescriptor:
    def __init__(self, name: str, type_info: TypeInformation | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a state needs a non-empty name, not {name!r}")
        self.name = name
        self.type_info = type_info

    def get_name(self) -> str:
        return self.name

    def enable_time_to_live(self, ttl_config: Any) -> None:
        raise _ttl()


class ValueStateDescriptor(StateDescriptor):
    def __init__(self, name: str, value_type_info: TypeInformation | None = None) -> None:
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    def __init__(self, name: str, elem_type_info: TypeInformation | None = None) -> None:
        super().__init__(name, elem_type_info)


class MapStateDescriptor(StateDescriptor):
    def __init__(
        self,
        name: str,
        key_type_info: TypeInformation | None = None,
        value_type_info: TypeInformation | None = None,
    ) -> None:
        super().__init__(name, value_type_info)
        self.key_type_info = key_type_info


class ReducingStateDescriptor(StateDescriptor):
    def __init__(
        self, name: str, reduce_function: Any, type_info: TypeInformation | None = None
    ) -> None:
        super().__init__(name, type_info)
        method = getattr(reduce_function, "reduce", None)
        self.reduce = method if callable(method) else reduce_function
        if not callable(self.reduce):
            raise TypeError("ReducingStateDescriptor takes a ReduceFunction or a function")


class AggregatingStateDescriptor(StateDescriptor):
    def __init__(
        self, name: str, agg_function: Any, state_type_info: TypeInformation | None = None
    ) -> None:
        super().__init__(name, state_type_info)
        self.agg_function = agg_function


class _State:
    def __init__(self, cells: StateCells, desc: StateDescriptor) -> None:
        self._cells = cells
        self._name = desc.name
        self._type = desc.type_info

    def _get(self) -> Any:
        return self._cells.get(self._name)

    def _put(self, value: Any) -> None:
        self._cells.put(self._name, value)

    def clear(self) -> None:
        self._put(None)


class ValueState(_State):
    def value(self) -> Any:
        return self._get()

    def update(self, value: Any) -> None:
        self._put(value)


class ListState(_State):
    def get(self) -> list[Any]:
        return list(self._get() or ())

    def add(self, value: Any) -> None:
        self._put([*(self._get() or ()), value])

    def add_all(self, values: Iterable[Any]) -> None:
        self._put([*(self._get() or ()), *values] or None)

    def update(self, values: Iterable[Any]) -> None:
        self._put(list(values) or None)

    def __iter__(self):
        return iter(self.get())


class MapState(_State):
    def _map(self) -> dict[Any, Any]:
        return self._get() or {}

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._put({**self._map(), key: value})

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        merged = {**self._map(), **dict_value}
        self._put(merged or None)

    def remove(self, key: Any) -> None:
        m = dict(self._map())
        m.pop(key, None)
        self._put(m or None)

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._map().items())

    def keys(self) -> Iterable[Any]:
        return list(self._map())

    def values(self) -> Iterable[Any]:
        return list(self._map().values())

    def is_empty(self) -> bool:
        return not self._map()

    def __getitem__(self, key: Any) -> Any:
        m = self._map()
        if key not in m:
            raise KeyError(key)
        return m[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        self.remove(key)

    def __contains__(self, key: Any) -> bool:
        return self.contains(key)

    def __iter__(self):
        return iter(self.keys())


class ReducingState(_State):
    def __init__(self, cells: StateCells, desc: ReducingStateDescriptor) -> None:
        super().__init__(cells, desc)
        self._reduce = desc.reduce

    def get(self) -> Any:
        return self._get()

    def add(self, value: Any) -> None:
        current = self._get()
        self._put(value if current is None else self._reduce(current, value))


class AggregatingState(_State):
    """Holds the accumulator; ``get()`` is ``get_result(accumulator)`` (None when empty)."""

    def __init__(self, cells: StateCells, desc: AggregatingStateDescriptor) -> None:
        super().__init__(cells, desc)
        self._fn = desc.agg_function

    def get(self) -> Any:
        acc = self._get()
        return None if acc is None else self._fn.get_result(acc)

    def add(self, value: Any) -> None:
        acc = self._get()
        if acc is None:
            acc = self._fn.create_accumulator()
        self._put(self._fn.add(value, acc))


class KeyedStateStore:
    """PyFlink's ``KeyedStateStore``: the state objects of a key (or of a window)."""

    def __init__(self, cells: StateCells) -> None:
        self._cells = cells

    def _check(self, desc: Any, cls: type) -> None:
        if not isinstance(desc, cls):
            raise TypeError(f"expected a {cls.__name__}, not {type(desc).__name__}")
        self._cells.open()

    def get_state(self, state_descriptor: ValueStateDescriptor) -> ValueState:
        self._check(state_descriptor, ValueStateDescriptor)
        return ValueState(self._cells, state_descriptor)

    def get_list_state(self, state_descriptor: ListStateDescriptor) -> ListState:
        self._check(state_descriptor, ListStateDescriptor)
        return ListState(self._cells, state_descriptor)

    def get_map_state(self, state_descriptor: MapStateDescriptor) -> MapState:
        self._check(state_descriptor, MapStateDescriptor)
        return MapState(self._cells, state_descriptor)

    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor) -> ReducingState:
        self._check(state_descriptor, ReducingStateDescriptor)
        return ReducingState(self._cells, state_descriptor)

    def get_aggregating_state(
        self, state_descriptor: AggregatingStateDescriptor
    ) -> AggregatingState:
        self._check(state_descriptor, AggregatingStateDescriptor)
        return AggregatingState(self._cells, state_descriptor)
