"""Joins of two streams on event time, as Flink's DataStream API builds them.

**Interval join** (Flink's ``KeyedStream.IntervalJoin`` / ``IntervalJoined``, operator
``IntervalJoinOperator``: ``winviz.operators.interval_join``)::

    (orders.key_by(lambda o: o["user"])
        .interval_join(clicks.key_by(lambda c: c["user"]))
        .between(-500, 1000)               # click.ts ∈ [order.ts - 500, order.ts + 1000]
        .upper_bound_exclusive()           # optional; lower_bound_exclusive() too
        .side_output_left_late_data(late_orders)     # optional (else late ones are dropped)
        .process(MyProcessJoinFunction()))

Event time only: ``in_processing_time()`` then ``between`` raises, as Flink
(``UnsupportedTimeCharacteristicException``).

**Window join / coGroup** (Flink's ``JoinedStreams`` / ``CoGroupedStreams``)::

    (a.join(b).where(lambda x: x["k"]).equal_to(lambda y: y["k"])
        .window(TumblingEventTimeWindows.of(1000))
        .apply(lambda x, y: (x, y)))              # a JoinFunction; co_group(...)...apply(f)
                                                   # takes a CoGroupFunction (first, second, out)

Flink builds these over the window operator, and so does winviz, with the same graph: each input
goes through a map that tags its records (``Input1Tagger`` / ``Input2Tagger`` → a
``TaggedUnion``), the two tagged streams are united, keyed by ``UnionKeySelector`` (the
``where`` key of a first-input record, the ``equal_to`` key of a second) and windowed by the
user's assigner, trigger, evictor and allowed lateness; the window function
(``CoGroupWindowFunction``) splits a window's elements by tag and calls the coGroup function —
for a join ``JoinCoGroupFunction``, which calls the join function for every pair, first input
outer, second inner. So the window operator's trace, charts and ``why_*`` answers apply as they
are; its watermark is the minimum over the united channels, its output at the window's max
timestamp. There is no late-data side output on a window join (Flink offers none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from winviz.arguments import (
    checked_assigner,
    checked_evictor,
    checked_function,
    checked_lateness,
    checked_output_tag,
    checked_trigger,
)
from winviz.errors import ArgumentTypeError, InputError, UnsupportedOperationError
from winviz.functions import (
    CoGroupFunction,
    Collector,
    FlatJoinFunction,
    OutputTag,
    ProcessJoinFunction,
)
from winviz.graph import IntervalJoinSpec, MapSpec
from winviz.time import duration_ms
from winviz.windows.assigners import WindowAssigner
from winviz.windows.evictors import Evictor
from winviz.windows.triggers import Trigger

if TYPE_CHECKING:
    from winviz.datastream import DataStream, KeyedStream

KeySelector = Callable[[Any], Any]

# -- interval join ---------------------------------------------------------------------------


class IntervalJoin:
    """``left.interval_join(right)`` (Flink's ``KeyedStream.IntervalJoin``): choose the time
    (event time, the default and the only one Flink runs) and the bounds with ``between``."""

    def __init__(self, left: KeyedStream, right: KeyedStream) -> None:
        self.left = left
        self.right = right
        self.event_time = True

    def in_event_time(self) -> IntervalJoin:
        self.event_time = True
        return self

    def in_processing_time(self) -> IntervalJoin:
        """Flink accepts this call; ``between`` then refuses it (see there)."""
        self.event_time = False
        return self

    def between(self, lower: Any, upper: Any) -> IntervalJoined:
        """Join a right element ``r`` to a left element ``l`` of the same key when
        ``l.ts + lower <= r.ts <= l.ts + upper`` (int ms or timedeltas; may be negative)."""
        if not self.event_time:
            raise UnsupportedOperationError(
                "Time-bounded stream joins are only supported in event time"
            )
        if lower is None or upper is None:
            raise InputError(
                f"A{' lower' if lower is None else 'n upper'} bound needs to be provided for a "
                "time-bounded join",
                field="lower bound" if lower is None else "upper bound",
                value=None,
                expected="int milliseconds or a timedelta",
            )
        return IntervalJoined(
            self.left,
            self.right,
            duration_ms(lower, what="lower bound"),
            duration_ms(upper, what="upper bound"),
        )


class IntervalJoined:
    """``...between(lower, upper)`` (Flink's ``KeyedStream.IntervalJoined``): bounds
    inclusive unless made exclusive; late data of either side optionally to a side output;
    ``process(ProcessJoinFunction)`` completes it."""

    def __init__(self, left: KeyedStream, right: KeyedStream, lower: int, upper: int) -> None:
        self.left = left
        self.right = right
        self.lower = lower
        self.upper = upper
        self.lower_inclusive = True
        self.upper_inclusive = True
        self.left_late_tag: OutputTag | None = None
        self.right_late_tag: OutputTag | None = None

    def lower_bound_exclusive(self) -> IntervalJoined:
        self.lower_inclusive = False
        return self

    def upper_bound_exclusive(self) -> IntervalJoined:
        self.upper_inclusive = False
        return self

    def side_output_left_late_data(self, tag: OutputTag) -> IntervalJoined:
        """Late left elements (``ts < watermark``) to side output ``tag`` (else dropped)."""
        self.left_late_tag = checked_output_tag(tag, "side_output_left_late_data")
        return self

    def side_output_right_late_data(self, tag: OutputTag) -> IntervalJoined:
        """Late right elements (``ts < watermark``) to side output ``tag`` (else dropped)."""
        self.right_late_tag = checked_output_tag(tag, "side_output_right_late_data")
        return self

    def process(self, function: ProcessJoinFunction) -> DataStream:
        if not callable(getattr(function, "process_element", None)):
            raise ArgumentTypeError(
                "process() takes a ProcessJoinFunction with process_element(left, right, ctx, out)",
                field="function",
                value=function,
                expected="a ProcessJoinFunction",
            )
        _callable(function.process_element, "process", 4, _PROCESS_JOIN)
        if self.lower > self.upper:  # Flink's IntervalJoinOperator constructor (bounds as given)
            raise InputError(
                "lowerBound <= upperBound must be fulfilled",
                field="between",
                value=(self.lower, self.upper),
                expected="lower <= upper",
            )
        first, second = self.left.stream, self.right.stream
        if first.env is not second.env:
            raise InputError(
                "interval_join needs a KeyedStream of the same environment",
                field="other",
                value=second,
            )
        spec = IntervalJoinSpec(
            (self.left.key_selector, self.right.key_selector),
            self.lower,
            self.upper,
            self.lower_inclusive,
            self.upper_inclusive,
            function,
            self.left_late_tag,
            self.right_late_tag,
        )
        return first._then(spec, "interval_join", second)


# -- window join and coGroup -------------------------------------------------------------------


@dataclass(frozen=True)
class TaggedUnion:
    """Flink's ``TaggedUnion``: a record of the first (``one``) or second (``two``) input of a
    window join / coGroup, as the window operator holds it."""

    one: Any = None
    two: Any = None
    is_one: bool = True


def tag_one(value: Any) -> TaggedUnion:
    """Flink's ``Input1Tagger``."""
    return TaggedUnion(one=value, is_one=True)


def tag_two(value: Any) -> TaggedUnion:
    """Flink's ``Input2Tagger``."""
    return TaggedUnion(two=value, is_one=False)


@dataclass(frozen=True)
class UnionKeySelector:
    """Flink's ``UnionKeySelector``: the first input's key of a ``one``, the second's of a
    ``two``."""

    key1: KeySelector
    key2: KeySelector

    def __call__(self, union: TaggedUnion) -> Any:
        return self.key1(union.one) if union.is_one else self.key2(union.two)


@dataclass(frozen=True)
class CoGroupWindowFunction:
    """Flink's ``CoGroupWindowFunction``: a window's elements split by input, in order, to the
    coGroup function (``co_group(first, second, out)``)."""

    co_group: Callable[[list[Any], list[Any], Collector], None]

    @property
    def __name__(self) -> str:  # how an error names the user's function
        return _function_name(self.co_group)

    def __call__(self, key: Any, window: Any, elements: list[TaggedUnion], out: Collector):
        first = [e.one for e in elements if e.is_one]
        second = [e.two for e in elements if not e.is_one]
        return self.co_group(first, second, out)  # not None: the window operator refuses it


@dataclass(frozen=True)
class JoinCoGroupFunction:
    """Flink's ``JoinCoGroupFunction`` / ``FlatJoinCoGroupFunction``: every pair of a window,
    first input outer, second inner; a ``JoinFunction``'s result is collected, a
    ``FlatJoinFunction`` collects its own."""

    join: Callable[..., Any]
    flat: bool = False

    @property
    def __name__(self) -> str:  # how an error names the user's function
        return _function_name(self.join)

    def __call__(self, first: list[Any], second: list[Any], out: Collector) -> Any:
        for a in first:
            for b in second:
                if not self.flat:
                    out.collect(self.join(a, b))
                elif (returned := self.join(a, b, out)) is not None:
                    return returned  # a FlatJoinFunction collects: the window operator refuses it
        return None


class _TwoStreams:
    """What ``JoinedStreams`` and ``CoGroupedStreams`` share: ``where`` / ``equal_to`` /
    ``window`` / ``trigger`` / ``evictor`` / ``allowed_lateness``, then ``apply``."""

    what = "join"

    def __init__(self, first: DataStream, second: DataStream) -> None:
        """``second`` is a stream of ``first``'s environment (``DataStream.join`` /
        ``co_group`` check it)."""
        self.first = first
        self.second = second
        self.key1: KeySelector | None = None
        self.key2: KeySelector | None = None
        self.assigner: WindowAssigner | None = None
        self.trigger_: Trigger | None = None
        self.evictor_: Evictor | None = None
        self.lateness: Any = None

    def where(self, key_selector: KeySelector) -> _TwoStreams:
        self.key1 = _callable(key_selector, "where", 1, "a key selector (first) -> key")
        return self

    def equal_to(self, key_selector: KeySelector) -> _TwoStreams:
        if self.key1 is None:
            raise InputError(f"{self.what}: call where(key) before equal_to(key)", field="where")
        self.key2 = _callable(key_selector, "equal_to", 1, "a key selector (second) -> key")
        return self

    def window(self, assigner: WindowAssigner) -> _TwoStreams:
        if self.key2 is None:
            raise InputError(
                f"{self.what}: call where(key).equal_to(key) before window()", field="equal_to"
            )
        self.assigner = checked_assigner(assigner)
        return self

    def trigger(self, trigger: Trigger) -> _TwoStreams:
        self._windowed("trigger")
        self.trigger_ = checked_trigger(trigger)
        return self

    def evictor(self, evictor: Evictor) -> _TwoStreams:
        self._windowed("evictor")
        self.evictor_ = checked_evictor(evictor)
        return self

    def allowed_lateness(self, lateness: Any) -> _TwoStreams:
        self._windowed("allowed_lateness")
        self.lateness = checked_lateness(lateness)
        return self

    def _windowed(self, method: str) -> None:
        """Flink offers ``trigger``, ``evictor``, ``allowedLateness`` and ``apply`` only on
        the ``WithWindow`` that ``window(assigner)`` returns."""
        if self.assigner is None:
            raise InputError(
                f"{self.what}: call where(...).equal_to(...).window(assigner) before {method}()",
                field="window",
            )

    def _apply(self, co_group: Callable[[list[Any], list[Any], Collector], None]) -> DataStream:
        """Flink's ``CoGroupedStreams.WithWindow.apply``: tag, union, key, window, apply."""
        one = _tagged(self.first, tag_one)
        two = _tagged(self.second, tag_two)
        windowed = one.union(two).key_by(UnionKeySelector(self.key1, self.key2))  # type: ignore[arg-type]
        windowed = windowed.window(self.assigner)
        if self.trigger_ is not None:
            windowed.trigger(self.trigger_)
        if self.evictor_ is not None:
            windowed.evictor(self.evictor_)
        if self.lateness is not None:
            windowed.allowed_lateness(self.lateness)
        return windowed.apply(CoGroupWindowFunction(co_group))


class JoinedStreams(_TwoStreams):
    """``a.join(b)`` (Flink's ``JoinedStreams``): an inner join of the pairs of each window."""

    what = "join"

    def apply(self, function: Any) -> DataStream:
        """A ``JoinFunction`` (``join(first, second)`` returns one record, or a plain function
        ``(first, second)``) or a ``FlatJoinFunction`` (``join(first, second, out)``)."""
        self._windowed("apply")
        if isinstance(function, FlatJoinFunction):
            flat = _callable(function.join, "apply", 3, _FLAT_JOIN)
            return self._apply(JoinCoGroupFunction(flat, flat=True))
        join = getattr(function, "join", None)
        fn = join if callable(join) else function
        return self._apply(JoinCoGroupFunction(_callable(fn, "apply", 2, _JOIN)))


class CoGroupedStreams(_TwoStreams):
    """``a.co_group(b)`` (Flink's ``CoGroupedStreams``): both inputs' elements of each window."""

    what = "co_group"

    def apply(self, function: Any) -> DataStream:
        """A ``CoGroupFunction`` (``co_group(first, second, out)``) or a plain function of
        ``(first, second, out)``."""
        self._windowed("apply")
        method = getattr(function, "co_group", None)
        fn = method if callable(method) else function
        return self._apply(_callable(fn, "apply", 3, _CO_GROUP))


_JOIN = (
    "a JoinFunction or function (first, second) -> record; for join(first, second, out) "
    "subclass FlatJoinFunction"
)
_PROCESS_JOIN = "a ProcessJoinFunction with process_element(left, right, ctx, out)"
_FLAT_JOIN = "a FlatJoinFunction with join(first, second, out)"
_CO_GROUP = "a CoGroupFunction or function (first, second, out)"


def _tagged(stream: DataStream, tagger: Callable[[Any], TaggedUnion]) -> DataStream:
    """``stream.map(tagger)`` with the stream's parallelism (Flink sets the tagger's to its
    input's)."""
    out = stream._then(MapSpec(tagger), "map")
    if not stream.node.is_virtual and stream.node.side_of is None:
        out.node.parallelism = stream.node.parallelism
    return out


def _function_name(fn: Any) -> str:
    """A user function's name: a function's ``__name__``, a bound method's
    ``Class.method``, else its class name."""
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        return f"{type(owner).__name__}.{fn.__name__}"
    return getattr(fn, "__name__", type(fn).__name__)


def _callable(fn: Any, what: str, arity: int, expected: str = "a function") -> Any:
    """``fn`` when it is a function of ``arity`` positional arguments, refused at the call."""
    return checked_function(fn, what, what, expected, arity)


__all__ = [
    "CoGroupFunction",
    "CoGroupedStreams",
    "IntervalJoin",
    "IntervalJoined",
    "JoinedStreams",
    "TaggedUnion",
]
