"""The user functions a pipeline is built from, named as Flink names them: ``ReduceFunction``,
``AggregateFunction``, ``ProcessWindowFunction``, ``KeyedProcessFunction``, ``CoProcessFunction`` /
``KeyedCoProcessFunction``, ``ProcessJoinFunction`` and the window joins' ``JoinFunction`` /
``FlatJoinFunction`` / ``CoGroupFunction`` (``winviz.joins``). Plain callables are accepted where
Flink accepts a lambda."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from winviz.errors import ArgumentTypeError, InputError

IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


@dataclass(frozen=True)
class OutputTag:
    """Names a side output (Flink's ``OutputTag``); tags with the same id are the same. None or a
    non-str id raises ``ArgumentTypeError``, ``""`` ``InputError``, as Flink's constructor."""

    id: str

    def __post_init__(self) -> None:
        expected = "a non-empty str naming the side output, e.g. OutputTag('late')"
        if not isinstance(self.id, str):
            raise ArgumentTypeError(
                "OutputTag id cannot be null."
                if self.id is None
                else f"OutputTag id must be a str, not {type(self.id).__name__}",
                field="id",
                value=self.id,
                expected=expected,
            )
        if not self.id:
            error = "OutputTag id must not be empty."
            raise InputError(error, field="id", value=self.id, expected=expected)

    def __repr__(self) -> str:
        return f"OutputTag({self.id!r})"


class Collector:
    """Where a function emits its results (``out.collect(value)``)."""

    __slots__ = ("_emit", "timestamp")

    def __init__(self, emit: Any) -> None:
        self._emit = emit
        self.timestamp: int | None = None

    def collect(self, value: Any) -> None:
        self._emit(value, self.timestamp)


class ReduceFunction(Generic[IN]):
    """Combines two values into one of the same type."""

    def reduce(self, a: IN, b: IN) -> IN:
        raise NotImplementedError

    def __call__(self, a: IN, b: IN) -> IN:
        return self.reduce(a, b)


class AggregateFunction(Generic[IN, ACC, OUT]):
    """Flink's ``AggregateFunction``: an accumulator per window, merged for sessions."""

    def create_accumulator(self) -> ACC:
        raise NotImplementedError

    def add(self, value: IN, accumulator: ACC) -> ACC:
        raise NotImplementedError

    def get_result(self, accumulator: ACC) -> OUT:
        raise NotImplementedError

    def merge(self, a: ACC, b: ACC) -> ACC:
        raise NotImplementedError


class ProcessWindowFunction(Generic[IN, OUT]):
    """Flink's ``ProcessWindowFunction``. ``context``: ``window()``, ``current_watermark()``,
    ``current_processing_time()``, ``output(tag, value)``, ``window_state()`` (refused on merging
    windows, as Flink) and ``global_state()``."""

    def process(self, key: Any, context: Any, elements: list[IN], out: Collector) -> None:
        raise NotImplementedError

    def clear(self, context: Any) -> None:
        """Called when the window is cleaned up (Flink's ``clearAllState``): clear
        ``context.window_state()`` here, the operator does not."""


class KeyedProcessFunction(Generic[IN, OUT]):
    """Flink's ``KeyedProcessFunction``: per-element logic plus timers."""

    def open(self, ctx: Any) -> None:
        """Called once before the first element."""

    def process_element(self, value: IN, ctx: Any, out: Collector) -> None:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: Any, out: Collector) -> None:
        """Called when a timer registered through ``ctx.timer_service()`` fires."""


class CoProcessFunction(Generic[IN, OUT]):
    """Flink's ``CoProcessFunction`` for ``a.connect(b).process(...)``; its ``ctx`` sets no timers
    (that needs keyed streams, as in Flink)."""

    def open(self, ctx: Any) -> None:
        """Called once before the first element."""

    def process_element1(self, value: Any, ctx: Any, out: Collector) -> None:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any, out: Collector) -> None:
        raise NotImplementedError


class KeyedCoProcessFunction(CoProcessFunction[IN, OUT]):
    """Flink's ``KeyedCoProcessFunction``: the two inputs of ``a.connect(b).key_by(k1, k2)``
    share keyed state and timers by key; ``ctx`` is that of a ``KeyedProcessFunction``."""

    def on_timer(self, timestamp: int, ctx: Any, out: Collector) -> None:
        """Called when a timer registered through ``ctx.timer_service()`` fires."""


class ProcessJoinFunction(Generic[IN, OUT]):
    """Flink's ``ProcessJoinFunction``: an interval join calls ``process_element(left, right, ctx,
    out)`` per joined pair; ``ctx.left_timestamp`` / ``right_timestamp`` / ``timestamp`` (the
    larger) and ``ctx.output(tag, value)``."""

    def open(self, ctx: Any) -> None:
        """Called once before the first pair."""

    def process_element(self, left: Any, right: Any, ctx: Any, out: Collector) -> None:
        raise NotImplementedError


class PairJoinFunction(ProcessJoinFunction[Any, tuple[Any, Any]]):
    """A ``ProcessJoinFunction`` collecting ``(left, right)`` per pair (winviz-only): its output is
    a Spark stream-stream join's, so ``winviz.spark.build_twin`` can twin it."""

    def process_element(self, left: Any, right: Any, ctx: Any, out: Collector) -> None:
        out.collect((left, right))


class JoinFunction(Generic[IN, OUT]):
    """Flink's ``JoinFunction`` of a window join: ``join(first, second)`` returns the one
    record made of a pair of the window (a plain function ``(first, second)`` works too)."""

    def join(self, first: Any, second: Any) -> Any:
        raise NotImplementedError


class FlatJoinFunction(Generic[IN, OUT]):
    """Flink's ``FlatJoinFunction``: ``join(first, second, out)`` collects any number of
    records per pair of a window join."""

    def join(self, first: Any, second: Any, out: Collector) -> None:
        raise NotImplementedError


class CoGroupFunction(Generic[IN, OUT]):
    """Flink's ``CoGroupFunction``: ``co_group(first, second, out)`` per window and key (either list
    may be empty); a plain function works too."""

    def co_group(self, first: list[Any], second: list[Any], out: Collector) -> None:
        raise NotImplementedError


class TimeDomain:
    """Which clock fired a timer (Flink's ``TimeDomain``)."""

    EVENT_TIME = "EVENT_TIME"
    PROCESSING_TIME = "PROCESSING_TIME"


# -- ready-made aggregate functions used by lessons and the conformance runner ------------


class SumAggregate(AggregateFunction[Any, Any, Any]):
    """Sums ``field(value)`` (the value itself by default). ``field`` is a function of one
    record or None: anything else is refused here, not by the first record at run time."""

    def __init__(self, field: Any = None) -> None:
        if field is not None and not callable(field):
            raise ArgumentTypeError(
                f"SumAggregate(field) takes a function; {type(field).__name__} is not callable",
                field="field",
                value=field,
                expected="a function of one record giving the number to sum (e.g. "
                "lambda e: e['amount']), or None to sum the records themselves",
            )
        self.field = field

    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator + (value if self.field is None else self.field(value))

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


class CountAggregate(SumAggregate):
    """Counts elements."""

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator + 1
