"""Flink's ``InternalTimerServiceImpl``: an operator's event- and processing-time timers.

A timer is (key, namespace, timestamp), at most one of each. An advance of the watermark or
the processing time pops the due timers one at a time, earliest first, sets the timer's key as
the current key and calls the target back; a timer registered by a callback at or below the
new time fires in the same advance.

**The timer-loop guard.** A callback re-registering its own timer would run for ever (Flink
hangs: FLINK-35069). Within one advance a key's fate depends only on its configuration (its
state, ``key_context.key_state(key)``, and its due timers): with ``loop_guard`` (built-in
triggers only, which decide from state alone) a configuration seen twice raises
``TimerLoopError``. **The firing budget**: firings in one advance of timers registered during
it count per key and namespace, and past ``firing_budget`` raise ``TimerLoopError``; while the
runtime runs the clock to MAX (``JobContext.chain_watch``) that whole run is one advance.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from winviz.errors import InputError, TimerLoopError
from winviz.keygroups import user_key
from winviz.time import MAX, MIN, count_arg, format_ms

EVENT = "event"
PROCESSING = "processing"

DEFAULT_FIRING_BUDGET = 100_000  # (``InternalTimerService.firing_budget``)
_CLOCKS = {EVENT: "watermark", PROCESSING: "processing time"}  # what a domain's advance moves


@dataclass(frozen=True, slots=True)
class InternalTimer:
    """A fired timer, handed to ``on_event_time`` / ``on_processing_time``."""

    timestamp: int
    key: Any
    namespace: Any


_heappush = heapq.heappush  # (TimerQueue.add is on the window kernel's per-record path)


class TimerQueue:
    """A heap with set semantics on (key, namespace, timestamp): ``live`` maps each timer to
    the registration number of its heap entry (deleted entries are skipped when popped); ties
    fire in registration order."""

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
        """Pop the live timers at or before ``time`` in firing order, as (timestamp, key,
        namespace); a timer registered meanwhile is seen if due."""
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

    def count(self, namespace: Any = ...) -> int:
        """How many live timers (of ``namespace``, when given)."""
        if namespace is ...:
            return len(self.live)
        return sum(1 for (_, ns, _) in self.live if ns == namespace)

    def timers(self) -> list[tuple[int, Any, Any]]:
        """All live timers as (ts, key, namespace), in firing order."""
        return sorted(
            ((ts, k, ns) for (k, ns, ts), n in self.live.items()),
            key=lambda t: (t[0], self.live[(t[1], t[2], t[0])]),
        )

    def restore(self, timers: list[tuple[int, Any, Any]]) -> None:
        self.heap, self.live, self._counter = [], {}, 0
        for ts, key, ns in timers:
            self.add(key, ns, ts)


class ProcessingClock:
    """A processing clock on its own (a job shares one: ``JobContext``); starts at MIN, as
    Flink's TestProcessingTimeService does."""

    def __init__(self) -> None:
        self.now = MIN


TraceHook = Callable[[str, str, Any, Any, int, bool], None]


class InternalTimerService:
    """Event- and processing-time timers of one operator, scoped to ``key_context``'s current
    key, calling ``target`` back (Flink's ``Triggerable``); ``on_change`` is told of every
    registration, deletion and firing (the trace)."""

    def __init__(
        self,
        name: str,
        key_context: Any,
        target: Any,
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
        self.loop_guard = False  # (``key_context.key_state``, ``_check_loop``)
        self.firing_budget = DEFAULT_FIRING_BUDGET  # (``_count_chained``)
        # while the clock runs to MAX: (``clock.chain_watch``, the registration number where
        # it began, the chained firings so far)
        self.chain_watch: tuple[Any, int, dict[tuple[Any, Any], int]] | None = None
        self.fire_due_event_timers: Callable[[int], None] | None = None
        """A window kernel's loop firing the due event-time timers as ``advance_watermark``
        does, set when the job is built (``WindowOperator.fuse``)."""

    @property
    def current_processing_time(self) -> int:
        """The processing clock this service reads (the job's, shared by all operators)."""
        return self.clock.now

    @current_processing_time.setter
    def current_processing_time(self, now: int) -> None:
        self.clock.now = now

    # -- registration (scoped to the current key) -----------------------------------------

    def _timestamp(self, ts: Any, domain: str) -> int:
        """``ts`` as int ms (``count_arg``), else its error (``ArgumentTypeError`` /
        ``LongRangeError``) naming the operator, the key, the record and the timer's domain."""
        try:
            return count_arg(ts, what="timestamp", minimum=MIN)
        except InputError as exc:
            article = "an" if domain == EVENT else "a"
            job = getattr(self.key_context, "job", None)
            raise type(exc)(
                f"operator {getattr(self.key_context, 'name', self.name)!r}, key "
                f"{self.key_context.current_key!r}: {article} {domain}-time timer needs an int "
                "timestamp in Java's long range",
                index=getattr(job, "record_index", None),
                field="timestamp",
                value=ts,
                expected="int milliseconds in [-2**63, 2**63-1]",
            ) from None

    def _register(self, queue: TimerQueue, domain: str, namespace: Any, ts: int) -> None:
        if ts.__class__ is not int or not MIN <= ts <= MAX:
            ts = self._timestamp(ts, domain)
        key = self.key_context.current_key
        added = queue.add(key, namespace, ts)
        if self.on_change is not None:
            self.on_change("timer_registered", domain, key, namespace, ts, not added)

    def _delete(self, queue: TimerQueue, domain: str, namespace: Any, ts: int) -> None:
        key = self.key_context.current_key
        existed = queue.remove(key, namespace, ts)
        if self.on_change is not None:
            self.on_change("timer_deleted", domain, key, namespace, ts, existed)

    def register_event_time_timer(self, namespace: Any, ts: int) -> None:
        self._register(self.event_queue, EVENT, namespace, ts)

    def delete_event_time_timer(self, namespace: Any, ts: int) -> None:
        self._delete(self.event_queue, EVENT, namespace, ts)

    def register_processing_time_timer(self, namespace: Any, ts: int) -> None:
        self._register(self.processing_queue, PROCESSING, namespace, ts)

    def delete_processing_time_timer(self, namespace: Any, ts: int) -> None:
        self._delete(self.processing_queue, PROCESSING, namespace, ts)

    # -- time advances --------------------------------------------------------------------

    def advance_watermark(self, watermark: int) -> None:
        """Set the watermark and fire every event-time timer at or before it, in order."""
        self.current_watermark = watermark
        if self.fire_due_event_timers is not None:
            self.fire_due_event_timers(watermark)
            return
        queue = self.event_queue
        self.fire_due(queue, EVENT, watermark, queue._counter, {}, watermark)

    def next_processing_timer(self) -> int | None:
        return self.processing_queue.peek_ts()

    def advance_processing_time(self, now: int) -> None:
        """Fire every processing-time timer at or before ``now``, in order."""
        if now > self.clock.now:
            self.clock.now = now
        queue = self.processing_queue
        if not queue.heap:
            return  # no timer at all
        before, chained, budget_now = queue._counter, {}, now
        watch = getattr(self.clock, "chain_watch", None)
        if watch is not None:  # the clock runs to MAX: one advance for the budget
            if self.chain_watch is None or self.chain_watch[0] is not watch:
                self.chain_watch = (watch, before, chained)
            _, before, chained = self.chain_watch
            budget_now = MAX
        self.fire_due(queue, PROCESSING, now, before, chained, budget_now)

    def fire_due(
        self,
        queue: TimerQueue,
        domain: str,
        now: int,
        before: int,
        chained: dict[tuple[Any, Any], int],
        budget_now: int,
    ) -> None:
        """Fire ``queue``'s timers at or before ``now``; those numbered above ``before``
        (registered during the advance) count in ``chained`` for the budget."""
        live, guard = queue.live, self.loop_guard
        seen: dict[Any, list[Any]] = {}
        call = self.target.on_event_time if domain == EVENT else self.target.on_processing_time
        while True:
            ts = queue.peek_ts()
            if ts is None or ts > now:
                return
            if queue.heap[0][1] > before:
                self._count_chained(queue, chained, domain, budget_now)
            timer = queue.poll()
            self.key_context.current_key = timer.key
            if self.on_change is not None:
                self.on_change("timer_fired", domain, timer.key, timer.namespace, ts, False)
            call(timer)
            if guard and (timer.key, timer.namespace, ts) in live:
                self._check_loop(queue, timer, domain, now, seen)

    def _count_chained(
        self,
        queue: TimerQueue,
        chained: dict[tuple[Any, Any], int],
        domain: str,
        now: int,
    ) -> None:
        """Count the next timer (registered during this advance) for its key and namespace;
        past ``firing_budget``: ``loop_error``."""
        ts, _, key, namespace = queue.heap[0]
        n = chained.get((key, namespace), 0) + 1
        if n <= self.firing_budget:
            chained[(key, namespace)] = n
            return
        if domain == PROCESSING and now == MAX:
            why = (
                "With execute(until_processing_time=MAX) the simulated clock runs on to MAX, so "
                "a chain that registers its next timer at every firing only ends there (about "
                "as many firings as milliseconds to MAX, divided by its step). A real Flink job "
                "keeps firing such a chain for as long as it runs; winviz stops it here (a "
                "winviz guard, not Flink behaviour). Give until_processing_time a finite time "
                "(a chain towards it runs to the end), stop the chain, or, if it is meant to "
                "be this long, raise the budget."
            )
        else:
            why = (
                f"The chain may never end, and the {_CLOCKS[domain]} cannot move on until it "
                "does. Real Flink keeps firing the same way (its timer service fires every "
                "timer at or before the new time, including ones the firings register), so the "
                "job would hang there. If the chain is meant to be this long, raise the budget."
            )
        raise self.loop_error(
            InternalTimer(ts, key, namespace),
            domain,
            now,
            f"fired {self.firing_budget}",
            "each was registered by an earlier firing of the same advance, and the next one "
            f"(at {format_ms(ts)}) is due too",
            why,
        )

    def _check_loop(
        self,
        queue: TimerQueue,
        timer: InternalTimer,
        domain: str,
        now: int,
        seen: dict[Any, list[Any]],
    ) -> None:
        """After ``timer``'s callback registered it again: ``loop_error`` if its key's
        configuration was seen in this advance, else record it."""
        key = timer.key
        due = sorted((ts, n, ns) for (k, ns, ts), n in queue.live.items() if ts <= now and k == key)
        config = ([(ts, ns) for ts, _, ns in due], self.key_context.key_state(key))
        past = seen.setdefault(key, [])
        if config in past:
            raise self.loop_error(
                timer,
                domain,
                now,
                "keeps firing the",
                f"the one at {format_ms(timer.timestamp)} registers itself again each time it "
                "fires, and nothing else changes, so it would fire for ever and the "
                f"{_CLOCKS[domain]} could never move on",
                self.key_context.loop_note(timer, domain),
            )
        past.append(config)

    def loop_error(
        self,
        timer: InternalTimer,
        domain: str,
        now: int,
        firings: str,
        evidence: str,
        why: str,
    ) -> TimerLoopError:
        """The one ``TimerLoopError`` of a chain of firings in one advance that would not end
        within the firing budget, counted (``_count_chained``), proved endless
        (``_check_loop``) or foreseen by an operator: the operator, the code that registers
        the timers (``key_context.timer_code``), ``timer``'s key and namespace (a window when
        ``key_context.timer_namespace`` says so), the advance, how many ``firings`` and the
        ``evidence``; ``why``: what Flink does (it keeps firing: FLINK-35069) and what to do."""
        context = self.key_context
        operator = getattr(context, "name", self.name)
        code = getattr(context, "timer_code", "")
        who = f"{code} " if code else ""
        per = getattr(context, "timer_namespace", "namespace")
        clock = _CLOCKS[domain]
        whose = f"key {timer.key!r}"
        if per == "window":
            whose += f", window {timer.namespace}"
        elif timer.namespace is not None:
            whose += f", namespace {timer.namespace!r}"
        return TimerLoopError(
            f"timer loop in operator {operator!r}: {who}{firings} {domain}-time timers of "
            f"{whose} in one advance of the {clock} to {format_ms(now)}: {evidence}. {why} "
            f"The firing budget: {self.firing_budget} firings per key and {per} in one advance "
            "(env.set_timer_firing_budget(n)).",
            operator=operator,
            domain=domain,
            key=user_key(timer.key),
            namespace=timer.namespace,
            timestamp=timer.timestamp,
        )

    # -- inspection -----------------------------------------------------------------------

    def num_event_time_timers(self, namespace: Any = ...) -> int:
        return self.event_queue.count(namespace)

    def num_processing_time_timers(self, namespace: Any = ...) -> int:
        return self.processing_queue.count(namespace)

    def snapshot(self) -> dict[str, Any]:
        """Both timer queues (``InternalTimerServiceSerializationProxy``); not the watermark:
        a restored service starts at MIN, as Flink's."""
        return {"event": self.event_queue.timers(), "processing": self.processing_queue.timers()}

    def restore(self, snap: dict[str, Any]) -> None:
        self.event_queue.restore(snap["event"])
        self.processing_queue.restore(snap["processing"])


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
