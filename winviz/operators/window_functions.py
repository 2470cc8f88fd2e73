"""How the WindowOperator keeps a window's contents and turns them into results: ``reduce``
keeps one reduced value (ReducingState), ``aggregate`` one accumulator (AggregatingState),
``process`` / ``apply`` every element (ListState, as with an evictor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.functions import AggregateFunction, ProcessWindowFunction
from winviz.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
)

CONTENTS = "window-contents"


class InternalWindowFunction:
    """Base: a state descriptor for the contents and ``process`` to emit results."""

    name = "window function"
    process_function: Any = None

    def state_descriptor(self) -> StateDescriptor:
        raise NotImplementedError

    def from_elements(self, values: list[Any]) -> Any:
        """The contents as this function's state would hold them (for evicting windows)."""
        raise NotImplementedError

    def results(self, contents: Any) -> list[Any]:
        """The element list the (process) function sees for these contents."""
        raise NotImplementedError

    def process(self, key: Any, window: Any, ctx: Any, contents: Any, out: Any) -> Any:
        """Emit the results; returns what the user's function returned (None, or an error)."""
        elements = self.results(contents)
        if self.process_function is None:
            for value in elements:
                out.collect(value)
            return None
        if callable(getattr(self.process_function, "process", None)):
            return self.process_function.process(key, ctx, elements, out)
        # a plain function (key, context, elements, out)
        return self.process_function(key, ctx, elements, out)

    def user_function_name(self) -> str:
        """How an error names the user's function: ``Class.process`` or the function's name."""
        fn = self.process_function
        if callable(getattr(fn, "process", None)):
            return f"{type(fn).__name__}.process"
        return f"{self.name} function {getattr(fn, '__name__', type(fn).__name__)}"

    def clear(self, ctx: Any) -> None:
        clear = getattr(self.process_function, "clear", None)
        if clear is not None:
            clear(ctx)


class ReduceWindowFunction(InternalWindowFunction):
    """``reduce(fn)`` or ``reduce(fn, process_function)``: one reduced value per window."""

    name = "reduce"

    def __init__(
        self,
        reduce: Callable[[Any, Any], Any],
        process_function: ProcessWindowFunction | None = None,
    ) -> None:
        self.reduce = reduce
        self.process_function = process_function

    def state_descriptor(self) -> StateDescriptor:
        return ReducingStateDescriptor(CONTENTS, self.reduce)

    def from_elements(self, values):
        current = None  # Flink's ReduceApplyWindowFunction: null when everything was evicted
        for v in values:
            current = v if current is None else self.reduce(current, v)
        return current

    def results(self, contents):
        return [contents]


class AggregateWindowFunction(InternalWindowFunction):
    """``aggregate(fn)`` or ``aggregate(fn, process_function)``: one accumulator per window."""

    name = "aggregate"

    def __init__(
        self, function: AggregateFunction, process_function: ProcessWindowFunction | None = None
    ) -> None:
        self.function = function
        self.process_function = process_function

    def state_descriptor(self) -> StateDescriptor:
        return AggregatingStateDescriptor(CONTENTS, self.function)

    def from_elements(self, values):
        acc = self.function.create_accumulator()
        for v in values:
            acc = self.function.add(v, acc)
        return acc

    def results(self, contents):
        return [self.function.get_result(contents)]


class ListWindowFunction(InternalWindowFunction):
    """``process(process_function)``: every element of the window, in arrival order."""

    name = "process"

    def __init__(self, process_function: Any) -> None:
        self.process_function = process_function

    def state_descriptor(self) -> StateDescriptor:
        return ListStateDescriptor(CONTENTS)

    def from_elements(self, values):
        return list(values)

    def results(self, contents):
        return list(contents)


class ApplyWindowFunction(ListWindowFunction):
    """``apply(fn)``: Flink's legacy ``WindowFunction.apply(key, window, elements, out)``."""

    name = "apply"

    def process(self, key, window, ctx, contents, out):
        return self.process_function(key, window, list(contents), out)
