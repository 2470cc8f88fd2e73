"""PyFlink's user-function interfaces (``pyflink.datastream.functions``) and the adapters
that run them on winviz.

PyFlink's functions *return or yield* their results (``process_element`` yields,
``ProcessWindowFunction.process`` returns a list, ``map`` returns a value); winviz's take a
collector ``out``. ``emit`` is the one rule between the two: a function's result — None,
one value for ``map``, or any iterable (a list, a generator) — goes to ``out.collect`` item
by item, in order, converted to the declared output type (``typeinfo.internal``). Each
adapter below names the winviz function it is and the PyFlink one it runs.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import winviz as wv
from winviz.pyflink.common.typeinfo import TypeInformation, internal
from winviz.pyflink.datastream.output_tag import OutputTag
from winviz.pyflink.datastream.state import (
    KeyedStateStore,
    StateCells,
    StateHandle,
    ValueCells,
    WindowStateHandle,
)

IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")
W2 = TypeVar("W2")


class TimeDomain:
    """Which clock a timer belongs to (PyFlink's ``TimeDomain``)."""

    EVENT_TIME = wv.TimeDomain.EVENT_TIME
    PROCESSING_TIME = wv.TimeDomain.PROCESSING_TIME


class RuntimeContext(KeyedStateStore):
    """PyFlink's ``RuntimeContext``, given to ``open``: the task's identity and keyed state
    (``get_state``, ``get_list_state``…). State handles read the key current when they are
    used, so handles made in ``open`` serve every key."""

    def __init__(self, cells: StateCells, task_name: str, parallelism: int) -> None:
        super().__init__(cells)
        self._task_name = task_name
        self._parallelism = parallelism

    def get_task_name(self) -> str:
        return self._task_name

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_index_of_this_subtask(self) -> int:
        return 0

    def get_attempt_number(self) -> int:
        return 0

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} (1/{self._parallelism})"

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return default_value

    def get_metrics_group(self) -> Any:
        from winviz.pyflink.errors import unsupported

        raise unsupported(
            "RuntimeContext.get_metrics_group (user metrics)",
            "winviz counts records per operator itself: read result.metrics",
        )


class Function(ABC):  # noqa: B024 - PyFlink's base class has no abstract method either
    """Every PyFlink function: ``open(runtime_context)`` before the first record,
    ``close()`` after the last."""

    def open(self, runtime_context: RuntimeContext) -> None:  # noqa: B027
        pass

    def close(self) -> None:  # noqa: B027
        pass


class MapFunction(Function):
    def map(self, value: Any) -> Any:
        raise NotImplementedError


class FlatMapFunction(Function):
    def flat_map(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError


class FilterFunction(Function):
    def filter(self, value: Any) -> bool:
        raise NotImplementedError


class ReduceFunction(Function):
    def reduce(self, value1: Any, value2: Any) -> Any:
        raise NotImplementedError


class AggregateFunction(Function):
    """``create_accumulator`` / ``add(value, accumulator)`` / ``get_result`` / ``merge``."""

    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def add(self, value: Any, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_result(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        raise NotImplementedError


class KeySelector(Function):
    def get_key(self, value: Any) -> Any:
        raise NotImplementedError


class CoMapFunction(Function):
    def map1(self, value: Any) -> Any:
        raise NotImplementedError

    def map2(self, value: Any) -> Any:
        raise NotImplementedError


class CoFlatMapFunction(Function):
    def flat_map1(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError

    def flat_map2(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError


class ProcessFunction(Function):
    """PyFlink's ``ProcessFunction`` (non-keyed): ``process_element(value, ctx)`` yields."""

    class Context(ABC):  # noqa: B024
        def timer_service(self) -> Any:
            raise NotImplementedError

        def timestamp(self) -> int:
            raise NotImplementedError

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterable[Any]:
        raise NotImplementedError


class KeyedProcessFunction(Function):
    """PyFlink's ``KeyedProcessFunction``: ``process_element(value, ctx)`` and
    ``on_timer(timestamp, ctx)`` yield their results."""

    class Context(ABC):  # noqa: B024
        def get_current_key(self) -> Any:
            raise NotImplementedError

        def timer_service(self) -> Any:
            raise NotImplementedError

        def timestamp(self) -> int:
            raise NotImplementedError

    class OnTimerContext(Context):
        def time_domain(self) -> str:
            raise NotImplementedError

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        pass


class CoProcessFunction(Function):
    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        raise NotImplementedError


class KeyedCoProcessFunction(Function):
    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        pass


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """PyFlink's ``WindowFunction``: ``apply(key, window, inputs)`` returns the results."""

    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT]:
        raise NotImplementedError


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT]:
        raise NotImplementedError


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """PyFlink's ``ProcessWindowFunction``: ``process(key, context, elements)`` returns or
    yields the results; ``context`` is a ``ProcessWindowFunction.Context``."""

    class Context(ABC, Generic[W2]):
        def window(self) -> W2:
            raise NotImplementedError

        def current_processing_time(self) -> int:
            raise NotImplementedError

        def current_watermark(self) -> int:
            raise NotImplementedError

        def window_state(self) -> KeyedStateStore:
            raise NotImplementedError

        def global_state(self) -> KeyedStateStore:
            raise NotImplementedError

    def process(self, key: KEY, context: Any, elements: Iterable[IN]) -> Iterable[OUT]:
        raise NotImplementedError

    def clear(self, context: Any) -> None:
        pass


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    class Context(ABC, Generic[W2]):
        def window(self) -> W2:
            raise NotImplementedError

        def window_state(self) -> KeyedStateStore:
            raise NotImplementedError

        def global_state(self) -> KeyedStateStore:
            raise NotImplementedError

    def process(self, context: Any, elements: Iterable[IN]) -> Iterable[OUT]:
        raise NotImplementedError

    def clear(self, context: Any) -> None:
        pass


# -- the rule between "return or yield" and winviz's collector ----------------------------


def emit(
    result: Any, out: wv.Collector, output_type: TypeInformation | None, side: Any = None
) -> None:
    """Collect what a PyFlink function returned: nothing for None, else every item of the
    iterable (a list, a tuple of results, a generator), in order. An item
    ``(output_tag, value)`` goes to that side output (``side(tag, value)``), as PyFlink's
    process functions emit side outputs."""
    if result is None:
        return
    for value in result:
        if side is not None and value.__class__ is tuple and len(value) == 2:
            tag = value[0]
            if isinstance(tag, OutputTag):
                side(tag.tag, internal(tag.type_info, value[1]))
                continue
        out.collect(internal(output_type, value))


def call_open(fn: Any, runtime_context: RuntimeContext) -> None:
    opener = getattr(fn, "open", None)
    if callable(opener):
        opener(runtime_context)


class _Timers:
    """A timer service that only tells the time: a non-keyed ``ProcessFunction``'s (Flink:
    "Setting timers is only supported on a keyed streams.")."""

    def __init__(self, service: Any) -> None:
        self._service = service

    def current_processing_time(self) -> int:
        return self._service.current_processing_time()

    def current_watermark(self) -> int:
        return self._service.current_watermark()

    def _refuse(self, *_: Any) -> None:
        raise wv.UnsupportedOperationError("Setting timers is only supported on a keyed streams.")

    register_event_time_timer = _refuse
    register_processing_time_timer = _refuse
    delete_event_time_timer = _refuse
    delete_processing_time_timer = _refuse


class _KeyedContext(KeyedProcessFunction.OnTimerContext):
    """PyFlink's ``KeyedProcessFunction.Context`` / ``OnTimerContext`` over winviz's ``ctx``."""

    __slots__ = ("_ctx", "_keyed")

    def __init__(self, keyed: bool) -> None:
        self._ctx: Any = None
        self._keyed = keyed

    def get_current_key(self) -> Any:
        return self._ctx.get_current_key()

    def timer_service(self) -> Any:
        service = self._ctx.timer_service()
        return service if self._keyed else _Timers(service)

    def timestamp(self) -> int:
        return self._ctx.timestamp()

    def time_domain(self) -> str:
        return self._ctx.time_domain()

    def output(self, output_tag: Any, value: Any) -> None:
        self._ctx.output(output_tag.tag, value)


class KeyedProcessAdapter(wv.KeyedProcessFunction):
    """Runs a PyFlink ``KeyedProcessFunction`` (or ``ProcessFunction``) as winviz's
    ``KeyedProcessFunction``: one PyFlink context wraps winviz's ``ctx`` of the call; the
    runtime context's state reads ``ctx.state`` of the current key."""

    def __init__(
        self,
        fn: Any,
        output_type: TypeInformation | None,
        name: str,
        parallelism: int,
        *,
        keyed: bool = True,
    ) -> None:
        self.fn = fn
        self.output_type = output_type
        self.context = _KeyedContext(keyed)
        self.cells = ValueCells()
        self.runtime_context = RuntimeContext(self.cells, name, parallelism)

    def open(self, ctx: Any) -> None:
        self.cells.ctx = ctx
        call_open(self.fn, self.runtime_context)

    def process_element(self, value: Any, ctx: Any, out: wv.Collector) -> None:
        self.cells.ctx = self.context._ctx = ctx
        emit(self.fn.process_element(value, self.context), out, self.output_type, ctx.output)

    def on_timer(self, timestamp: int, ctx: Any, out: wv.Collector) -> None:
        self.cells.ctx = self.context._ctx = ctx
        on_timer = getattr(self.fn, "on_timer", None)
        if on_timer is not None:
            emit(on_timer(timestamp, self.context), out, self.output_type, ctx.output)


class KeyedMapAdapter(KeyedProcessAdapter):
    """PyFlink's ``KeyedStream.map`` / ``flat_map`` / ``filter`` with a rich function (its
    ``open`` may take keyed state): PyFlink runs these as a ``KeyedProcessFunction`` too."""

    def __init__(self, fn: Any, method: str, output_type: Any, name: str, parallelism: int):
        super().__init__(fn, output_type, name, parallelism)
        self.method = method
        self.call = method_of(fn, method)

    def process_element(self, value: Any, ctx: Any, out: wv.Collector) -> None:
        self.cells.ctx = ctx
        result = self.call(value)
        if self.method == "map":
            out.collect(internal(self.output_type, result))
        elif self.method == "filter":
            if result:
                out.collect(value)
        else:
            emit(result, out, self.output_type)

    def on_timer(self, timestamp: int, ctx: Any, out: wv.Collector) -> None:
        pass


class _WindowContext(ProcessWindowFunction.Context, ProcessAllWindowFunction.Context):
    """PyFlink's ``ProcessWindowFunction.Context`` over winviz's window ``context``."""

    __slots__ = ("_ctx",)

    def __init__(self) -> None:
        self._ctx: Any = None

    def window(self) -> Any:
        return self._ctx.window()

    def current_processing_time(self) -> int:
        return self._ctx.current_processing_time()

    def current_watermark(self) -> int:
        return self._ctx.current_watermark()

    def window_state(self) -> KeyedStateStore:
        return KeyedStateStore(WindowStateHandle(self._ctx))

    def global_state(self) -> KeyedStateStore:
        return KeyedStateStore(StateHandle(self._ctx.global_state()))

    def output(self, output_tag: Any, value: Any) -> None:
        self._ctx.output(output_tag.tag, value)


class ProcessWindowAdapter(wv.ProcessWindowFunction):
    """Runs a PyFlink ``ProcessWindowFunction`` / ``WindowFunction`` (and their all-window
    forms) as winviz's ``ProcessWindowFunction``. ``kind`` says which: ``process``,
    ``apply``, ``process_all`` or ``apply_all``."""

    def __init__(self, fn: Any, kind: str, output_type: TypeInformation | None) -> None:
        self.fn = fn
        self.kind = kind
        self.output_type = output_type
        self.context = _WindowContext()
        self.opened = False

    def process(self, key: Any, context: Any, elements: list[Any], out: wv.Collector) -> None:
        if not self.opened:  # PyFlink opens the window function with the operator
            self.opened = True
            call_open(self.fn, RuntimeContext(ValueCells(), "window", 1))
        self.context._ctx = context
        if self.kind == "process":
            result = self.fn.process(key, self.context, elements)
        elif self.kind == "apply":
            result = self.fn.apply(key, context.window(), elements)
        elif self.kind == "process_all":
            result = self.fn.process(self.context, elements)
        else:
            result = self.fn.apply(context.window(), elements)
        emit(result, out, self.output_type, context.output)

    def clear(self, context: Any) -> None:
        clear = getattr(self.fn, "clear", None)
        if clear is not None and self.kind in ("process", "process_all"):
            self.context._ctx = context
            clear(self.context)


class AggregateAdapter(wv.AggregateFunction):
    """A PyFlink ``AggregateFunction`` (``merge(acc_a, acc_b)``) as winviz's."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def create_accumulator(self) -> Any:
        return self.fn.create_accumulator()

    def add(self, value: Any, accumulator: Any) -> Any:
        return self.fn.add(value, accumulator)

    def get_result(self, accumulator: Any) -> Any:
        return self.fn.get_result(accumulator)

    def merge(self, a: Any, b: Any) -> Any:
        return self.fn.merge(a, b)


def method_of(fn: Any, name: str) -> Any:
    """A PyFlink function object's method ``name`` (``ReduceFunction.reduce``,
    ``KeySelector.get_key``, ``MapFunction.map``…), or ``fn`` itself when it is a plain
    function: the one rule by which every API call here takes either."""
    method = getattr(fn, name, None)
    return method if callable(method) else fn
