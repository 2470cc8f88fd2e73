"""Flink's InternalTimerService: two priority queues of timers per operator.

A timer is (key, namespace, timestamp). An operator has named timer services; each keeps an
event-time queue and a processing-time queue. Registering a timer that already exists does
nothing (de-duplication: "at most one timer per key, namespace and timestamp"), deleting one
removes it, and advancing time fires every timer at or before the new time, earliest first,
with the timer's key set as the current key. A timer registered at or below the current time
fires at the next advance, not at once.

``advance_watermark`` is Flink's ``InternalTimerServiceImpl.advanceWatermark``: it pops one
timer at a time and calls the target back, so a timer registered *during* a callback at or
below the watermark fires in the same advance.

**The timer-loop guard.** That rule lets a callback that re-registers its own timer at the
time it fires run for ever: the clock (or the watermark) cannot move on until the queue has
nothing due, and real Flink hangs the same way (FLINK-35069: ``ContinuousProcessingTimeTrigger``
on an event-time window, at the window's max timestamp). A service with ``loop_guard`` set
raises ``TimerLoopError`` instead. During one advance (one processing time ``now``, or one
watermark) the clocks stand still, and what happens to a key depends only on that key's
**configuration**: its state (``key_context.key_state(key)``) and its due timers (at or before
``now``) in firing order — other keys' callbacks cannot touch either. So the guard records the
key's configuration whenever a callback re-registered its own timer at the time it fired, and
raises when a key's configuration comes back within the advance: from there the key's
callbacks repeat the same steps for ever. The argument needs callbacks that decide from their
timer, the key's state and the clocks only (Flink's ``Trigger`` contract): the WindowOperator
turns the guard on for its built-in triggers (``decides_from_state_only``), never for user
code, which may keep Python attributes the guard cannot see. A job that finishes never meets
the criterion, since meeting it proves the advance never ends.

**The firing budget.** A chain of firings can also run on without repeating: a timer whose
callback registers the next one a little later, still at or before the watermark (Flink's
``ContinuousEventTimeTrigger`` on ``GlobalWindows`` at the end-of-input watermark MAX re-arms
every interval up to ``Long.MAX_VALUE``: about 9.2·10^15 firings at an interval of 1000), or
custom code doing the same. So every service counts, per key and namespace, the firings in one
advance of timers that were registered during that advance (by an earlier firing), and raises
``TimerLoopError`` once a key and namespace would go past ``firing_budget`` of them
(``DEFAULT_FIRING_BUDGET``; ``env.set_timer_firing_budget(n)`` sets it for a job). This is
the backstop for user triggers and KeyedProcessFunctions; operators that can prove a chain
longer than the budget raise at its first firing (the WindowOperator does, for the continuous
triggers). Timers registered before the advance never count: a watermark that fires a
million windows at once is no loop.

**Processing time to MAX.** The runtime moves the processing clock one due timer at a time, so
a chain whose firings each register the next timer a little later (``t + 1`` in ``on_timer``,
``ContinuousProcessingTimeTrigger`` on ``GlobalWindows``) is one firing per step and never
meets the budget of a single step. Towards a finite time (an arrival, a finite
``until_processing_time``) such a chain is finite, and runs to the end. With
``execute(until_processing_time=MAX)`` it only ends at MAX, so while the runtime runs the
clock to MAX (``JobContext.chain_watch``) the whole run to MAX is one advance for the budget:
the firings of one key and namespace's timers registered during it count, and past the budget
the run stops with ``TimerLoopError``. A real Flink job has no MAX to reach: it keeps firing
such a chain for as long as it runs; the stop is winviz's guard, not Flink behaviour.
"""

from __future__ import annotations

import heapq
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from winviz.errors import ArgumentTypeError, InputError, LongRangeError, TimerLoopError
from winviz.keygroups import user_key
from winviz.time import MAX, MIN, format_ms

EVENT = "event"
PROCESSING = "processing"

DEFAULT_FIRING_BUDGET = 100_000
"""Firings of one key and namespace's timers, registered during the same advance, that one
advance of the watermark or processing time may run before ``TimerLoopError`` (see the module
docstring)."""


@dataclass(frozen=True, slots=True)
class InternalTimer:
    """A fired timer, handed to ``on_event_time`` / ``on_processing_time``."""

    timestamp: int
    key: Any
    namespace: Any


_heappush = heapq.heappush  # (TimerQueue.add is on the window kernel's per-record path)


class TimerQueue:
    """A heap with set semantics on (key, namespace, timestamp) and deletion.

    Deleted entries stay in the heap and are skipped when popped (``live`` maps each timer to
    the registration number of its current heap entry); ties on timestamp fire in registration
    order, which keeps runs deterministic.
    """

    __slots__ = ("_counter", "heap", "live")

    def __init__(self) -> None:
        self.heap: list[tuple[int, int, Any, Any]] = []
        self.live: dict[tuple[Any, Any, int], int] = {}
        self._counter = 0

    def add(self, key: Any, namespace: Any, ts: int) -> bool:
        """Register; False when the same timer already exists (de-duplicated)."""
        n = self._counter + 1  # (its number if it is new: no timer has it yet)
        if self.live.setdefault((key, namespace, ts), n) != n:
            return False
        self._counter = n
        _heappush(self.heap, (ts, n, key, namespace))
        return True

    def remove(self, key: Any, namespace: Any, ts: int) -> bool:
        return self.live.pop((key, namespace, ts), None) is not None

    def peek_ts(self) -> int | None:
        heap, live = self.heap, self.live
        while heap:
            ts, n, key, ns = heap[0]
            if live.get((key, ns, ts)) == n:
                return ts
            heapq.heappop(heap)
        return None

    def pop_due(self, time: int) -> Iterator[tuple[int, Any, Any]]:
        """Pop the live timers at or before ``time`` one after another, in firing order, as
        (timestamp, key, namespace); deleted entries are dropped on the way. Lazy: a timer
        registered meanwhile is seen if it is due."""
        heap, live, pop = self.heap, self.live, heapq.heappop
        while heap:
            ts, n, key, ns = heap[0]
            ident = (key, ns, ts)
            if ts > time:
                if live.get(ident) != n:
                    pop(heap)  # deleted (or registered again later): skip it
                    continue
                return
            pop(heap)
            number = live.pop(ident, None)  # (one look-up for a due timer)
            if number == n:
                yield ts, key, ns
            elif number is not None:  # registered again later: that timer stays
                live[ident] = number

    def poll(self) -> InternalTimer:
        ts, _, key, ns = heapq.heappop(self.heap)
        del self.live[(key, ns, ts)]
        return InternalTimer(ts, key, ns)

    def __len__(self) -> int:
        return len(self.live)

    def timers(self) -> list[tuple[int, Any, Any]]:
        """All live timers as (ts, key, namespace), in firing order."""
        return sorted(
            ((ts, k, ns) for (k, ns, ts), n in self.live.items()),
            key=lambda t: (t[0], self.live[(t[1], t[2], t[0])]),
        )

    def snapshot(self) -> list[tuple[int, Any, Any]]:
        return self.timers()

    def restore(self, timers: list[tuple[int, Any, Any]]) -> None:
        self.heap, self.live, self._counter = [], {}, 0
        for ts, key, ns in timers:
            self.add(key, ns, ts)


class ProcessingClock:
    """A processing clock on its own (a job shares one: ``JobContext``); starts at MIN, as
    Flink's TestProcessingTimeService does."""

    def __init__(self) -> None:
        self.now = MIN


class Triggerable:
    """What a timer service calls back (Flink's ``Triggerable``)."""

    def on_event_time(self, timer: InternalTimer) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def on_processing_time(self, timer: InternalTimer) -> None:  # pragma: no cover - interface
        raise NotImplementedError


TraceHook = Callable[[str, str, Any, Any, int, bool], None]


class InternalTimerService:
    """Event- and processing-time timers of one operator, scoped to the current key.

    ``key_context`` is the operator: the service reads ``key_context.current_key`` when a timer
    is registered and sets it before calling the target back. ``on_change`` (optional) is told
    of every registration, deletion and firing, for the trace.
    """

    def __init__(
        self,
        name: str,
        key_context: Any,
        target: Triggerable,
        on_change: TraceHook | None = None,
        clock: Any = None,
    ) -> None:
        self.name = name
        self.key_context = key_context
        self.target = target
        self.on_change = on_change
        self.event_queue = TimerQueue()
        self.processing_queue = TimerQueue()
        self.current_watermark = MIN
        self.clock = clock if clock is not None else ProcessingClock()
        self.loop_guard = False
        """Raise ``TimerLoopError`` on a provable timer loop (see the module docstring);
        ``key_context`` then provides ``key_state(key)`` and
        ``timer_loop_error(timer, domain, now)``."""
        self.firing_budget = DEFAULT_FIRING_BUDGET
        """How many firings of timers registered during an advance one key and namespace
        may have in that advance (see the module docstring); ``key_context`` may provide
        ``timer_budget_error(timer, domain, now, budget)`` to name what loops."""
        self.chain_watch: tuple[Any, int, dict[tuple[Any, Any], int]] | None = None
        """While the job's clock runs to MAX (``clock.chain_watch`` set, see the module
        docstring): (that watch, the registration number where it began, the chained firings
        per key and namespace so far) — one advance for the firing budget."""
        self.fire_due_event_timers: Callable[[int], None] | None = None
        """A fused loop that fires the event-time timers due at a watermark exactly as
        ``advance_watermark``'s loop and ``target.on_event_time`` would, or None. The window
        kernel installs one (``winviz.operators.window_kernel``) for a trigger that never
        registers a timer while firing, so that no timer loop can form there."""

    @property
    def current_processing_time(self) -> int:
        """The processing clock this service reads (the job's, shared by all operators)."""
        return self.clock.now

    @current_processing_time.setter
    def current_processing_time(self, now: int) -> None:
        self.clock.now = now

    # -- registration (scoped to the current key) -----------------------------------------

    def _bad_timestamp(self, ts: Any, domain: str) -> InputError:
        """The error of a timer timestamp that is no int in Java's long range (a str, a
        float, a bool, 2**64): Flink's timers are ``long``s."""
        article = "an" if domain == EVENT else "a"
        where = (
            f"operator {getattr(self.key_context, 'name', self.name)!r}, key "
            f"{self.key_context.current_key!r}: {article} {domain}-time timer needs an int "
            "timestamp in Java's long range"
        )
        integral = isinstance(ts, numbers.Integral) and not isinstance(ts, bool)
        error = LongRangeError if integral else ArgumentTypeError
        job = getattr(self.key_context, "job", None)
        return error(
            where,
            index=getattr(job, "record_index", None),
            field="timestamp",
            value=ts,
            expected="int milliseconds in [-2**63, 2**63-1]",
        )

    def register_event_time_timer(self, namespace: Any, ts: int) -> None:
        if ts.__class__ is not int or not MIN <= ts <= MAX:
            if not isinstance(ts, numbers.Integral) or isinstance(ts, bool) or not MIN <= ts <= MAX:
                raise self._bad_timestamp(ts, EVENT)
            ts = int(ts)
        added = self.event_queue.add(self.key_context.current_key, namespace, ts)
        if self.on_change is not None:
            self.on_change(
                "timer_registered", "event", self.key_context.current_key, namespace, ts, not added
            )

    def delete_event_time_timer(self, namespace: Any, ts: int) -> None:
        existed = self.event_queue.remove(self.key_context.current_key, namespace, ts)
        if self.on_change is not None:
            self.on_change(
                "timer_deleted", "event", self.key_context.current_key, namespace, ts, existed
            )

    def register_processing_time_timer(self, namespace: Any, ts: int) -> None:
        if ts.__class__ is not int or not MIN <= ts <= MAX:
            if not isinstance(ts, numbers.Integral) or isinstance(ts, bool) or not MIN <= ts <= MAX:
                raise self._bad_timestamp(ts, PROCESSING)
            ts = int(ts)
        added = self.processing_queue.add(self.key_context.current_key, namespace, ts)
        if self.on_change is not None:
            self.on_change(
                "timer_registered",
                "processing",
                self.key_context.current_key,
                namespace,
                ts,
                not added,
            )

    def delete_processing_time_timer(self, namespace: Any, ts: int) -> None:
        existed = self.processing_queue.remove(self.key_context.current_key, namespace, ts)
        if self.on_change is not None:
            self.on_change(
                "timer_deleted", "processing", self.key_context.current_key, namespace, ts, existed
            )

    # -- time advances --------------------------------------------------------------------

    def advance_watermark(self, watermark: int) -> None:
        """Set the watermark and fire every event-time timer at or before it, in order."""
        self.current_watermark = watermark
        if self.fire_due_event_timers is not None:
            self.fire_due_event_timers(watermark)
            return
        queue = self.event_queue
        live = queue.live
        guard = self.loop_guard
        seen: dict[Any, list[Any]] = {}
        before = queue._counter  # timers numbered above were registered during this advance
        chained: dict[tuple[Any, Any], int] = {}
        while True:
            ts = queue.peek_ts()
            if ts is None or ts > watermark:
                return
            if queue.heap[0][1] > before:
                self._count_chained(queue, chained, EVENT, watermark)
            timer = queue.poll()
            self.key_context.current_key = timer.key
            if self.on_change is not None:
                self.on_change("timer_fired", "event", timer.key, timer.namespace, ts, False)
            self.target.on_event_time(timer)
            if guard and (timer.key, timer.namespace, ts) in live:
                self._check_loop(queue, timer, EVENT, watermark, seen)

    def next_processing_timer(self) -> int | None:
        return self.processing_queue.peek_ts()

    def advance_processing_time(self, now: int) -> None:
        """Fire every processing-time timer at or before ``now``, in order."""
        if now > self.clock.now:
            self.clock.now = now
        queue = self.processing_queue
        if not queue.heap:
            return  # no timer at all (the loop below would find none)
        live = queue.live
        guard = self.loop_guard
        seen: dict[Any, list[Any]] = {}
        before = queue._counter
        chained: dict[tuple[Any, Any], int] = {}
        advance_to = now
        watch = getattr(self.clock, "chain_watch", None)
        if watch is not None:  # the clock runs to MAX: one advance for the budget
            if self.chain_watch is None or self.chain_watch[0] is not watch:
                self.chain_watch = (watch, before, chained)
            _, before, chained = self.chain_watch
            advance_to = MAX
        while True:
            ts = queue.peek_ts()
            if ts is None or ts > now:
                return
            if queue.heap[0][1] > before:
                self._count_chained(queue, chained, PROCESSING, advance_to)
            timer = queue.poll()
            self.key_context.current_key = timer.key
            if self.on_change is not None:
                self.on_change("timer_fired", "processing", timer.key, timer.namespace, ts, False)
            self.target.on_processing_time(timer)
            if guard and (timer.key, timer.namespace, ts) in live:
                self._check_loop(queue, timer, PROCESSING, now, seen)

    def _count_chained(
        self,
        queue: TimerQueue,
        chained: dict[tuple[Any, Any], int],
        domain: str,
        now: int,
    ) -> None:
        """The next timer (the heap's top, live and due) was registered during this advance:
        count it for its key and namespace, and raise ``TimerLoopError`` rather than fire it
        when that would go past ``firing_budget``."""
        ts, _, key, namespace = queue.heap[0]
        n = chained.get((key, namespace), 0) + 1
        if n > self.firing_budget:
            timer = InternalTimer(ts, key, namespace)
            make = getattr(self.key_context, "timer_budget_error", None)
            if make is not None:
                raise make(timer, domain, now, self.firing_budget)
            raise budget_error(
                getattr(self.key_context, "name", self.name), timer, domain, now, self.firing_budget
            )
        chained[(key, namespace)] = n

    def _check_loop(
        self,
        queue: TimerQueue,
        timer: InternalTimer,
        domain: str,
        now: int,
        seen: dict[Any, list[Any]],
    ) -> None:
        """Called after ``timer``'s callback registered ``timer`` again: raise
        ``TimerLoopError`` if its key's configuration (state, due timers in firing order) is
        one already recorded in this advance (``seen``), else record it."""
        key = timer.key
        due = sorted((ts, n, ns) for (k, ns, ts), n in queue.live.items() if ts <= now and k == key)
        config = ([(ts, ns) for ts, _, ns in due], self.key_context.key_state(key))
        past = seen.setdefault(key, [])
        if config in past:
            raise self.key_context.timer_loop_error(timer, domain, now)
        past.append(config)

    # -- inspection -----------------------------------------------------------------------

    def num_event_time_timers(self, namespace: Any = ...) -> int:
        if namespace is ...:
            return len(self.event_queue)
        return sum(1 for (_, ns, _) in self.event_queue.live if ns == namespace)

    def num_processing_time_timers(self, namespace: Any = ...) -> int:
        if namespace is ...:
            return len(self.processing_queue)
        return sum(1 for (_, ns, _) in self.processing_queue.live if ns == namespace)

    def snapshot(self) -> dict[str, Any]:
        """Both timer queues (``InternalTimerServiceSerializationProxy`` writes them per key
        group); not the watermark: a restored service starts at MIN, as Flink's
        ``InternalTimerServiceImpl`` (``currentWatermark`` is not restored)."""
        return {
            "event": self.event_queue.snapshot(),
            "processing": self.processing_queue.snapshot(),
        }

    def restore(self, snap: dict[str, Any]) -> None:
        self.event_queue.restore(snap["event"])
        self.processing_queue.restore(snap["processing"])


def budget_error(
    operator: str,
    timer: InternalTimer,
    domain: str,
    now: int,
    budget: int,
    what: str = "",
    per: str = "namespace",
) -> TimerLoopError:
    """The ``TimerLoopError`` of a key and namespace whose firings went past the firing
    budget of one advance; ``what`` names the code that registers the timers, ``per`` what
    the namespace is ("window" for a window operator's)."""
    clock = "watermark" if domain == EVENT else "processing time"
    who = f"{what} " if what else ""
    whose = f"key {timer.key!r}"
    if per == "window":
        whose += f", window {timer.namespace}"
    elif timer.namespace is not None:
        whose += f", namespace {timer.namespace!r}"
    head = (
        f"timer loop in operator {operator!r}: {who}fired {budget} {domain}-time timers of "
        f"{whose} in one advance of the {clock} to {format_ms(now)}, each registered by an "
        f"earlier firing of the same advance, and the next one (at "
        f"{format_ms(timer.timestamp)}) is due too: "
    )
    if domain == PROCESSING and now == MAX:
        why = (
            "with execute(until_processing_time=MAX) the simulated clock runs on to MAX, so "
            "a chain that registers its next timer at every firing only ends there (about "
            "as many firings as milliseconds to MAX, divided by its step). A real Flink job "
            "keeps firing such a chain for as long as it runs; winviz stops it here (a winviz "
            "guard, not Flink behaviour). Give until_processing_time a finite time (a chain "
            "towards it runs to the end), stop the chain, or, if it is meant to be this long, "
            "raise the budget: env.set_timer_firing_budget(n)"
        )
    else:
        why = (
            f"the chain may never end, and the {clock} cannot move on until it does. Real "
            "Flink keeps firing the same way (its timer service fires every timer at or "
            "before the new time, including ones the firings register), so the job would "
            "hang there. If the chain is meant to be this long, raise the budget: "
            "env.set_timer_firing_budget(n)"
        )
    return TimerLoopError(
        f"{head}{why} (now {budget} firings per key and {per} in one advance).",
        operator=operator,
        domain=domain,
        key=user_key(timer.key),
        namespace=timer.namespace,
        timestamp=timer.timestamp,
    )


class TimerService:
    """The user-facing timer service of a KeyedProcessFunction (Flink's SimpleTimerService):
    the internal service with the namespace fixed to ``VOID_NAMESPACE``."""

    VOID_NAMESPACE = None

    def __init__(self, internal: InternalTimerService) -> None:
        self._internal = internal

    def current_watermark(self) -> int:
        return self._internal.current_watermark

    def current_processing_time(self) -> int:
        return self._internal.current_processing_time

    def register_event_time_timer(self, ts: int) -> None:
        self._internal.register_event_time_timer(self.VOID_NAMESPACE, ts)

    def delete_event_time_timer(self, ts: int) -> None:
        self._internal.delete_event_time_timer(self.VOID_NAMESPACE, ts)

    def register_processing_time_timer(self, ts: int) -> None:
        self._internal.register_processing_time_timer(self.VOID_NAMESPACE, ts)

    def delete_processing_time_timer(self, ts: int) -> None:
        self._internal.delete_processing_time_timer(self.VOID_NAMESPACE, ts)
