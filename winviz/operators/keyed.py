"""The keyed part every keyed operator shares: a key selector, keyed state, and one
InternalTimerService whose callbacks come back to the operator (Flink's
``AbstractStreamOperator`` with a keyed state backend and ``InternalTimeServiceManager``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from winviz.keygroups import KeyRule, user_key
from winviz.operators.base import JobContext, StreamOperator
from winviz.state import KeyedStateBackend
from winviz.timers import InternalTimer, InternalTimerService


class KeyedStreamOperator(StreamOperator):
    """A keyed operator: sets the current key per record; owns timers and keyed state."""

    is_keyed = True
    timer_service_name = "user-timers"

    def __init__(self, name: str, key_selector: Callable[[Any], Any]) -> None:
        super().__init__(name)
        self.key_selector = key_selector
        self.key_rule = KeyRule()  # the internal key of a key that is no str
        self.state = KeyedStateBackend()
        self.timers = InternalTimerService(self.timer_service_name, self, self, clock=self.job)
        self.timer_services = {self.timer_service_name: self.timers}

    def open(self, job: JobContext) -> None:
        super().open(job)
        for service in self.timer_services.values():
            self._join(service)

    def _join(self, service: InternalTimerService) -> None:
        """Give a timer service this operator's job: its clock, firing budget and trace."""
        service.clock = self.job
        service.firing_budget = self.job.timer_firing_budget
        service.on_change = self._trace_timer if self.trace is not None else None

    def _trace_timer(
        self, kind: str, domain: str, key: Any, namespace: Any, ts: int, flag: bool
    ) -> None:
        """A timer service's ``on_change``: the trace's timer record of ``kind``."""
        flags = () if kind == "timer_fired" else (flag,)
        getattr(self.trace, kind)(*self._trace_at(key), namespace, ts, domain, namespace, *flags)

    def _trace_at(self, key: Any) -> tuple[int, int, str, Any]:
        """The first fields of this operator's trace records now, with the user's key of
        internal ``key``."""
        timers = self.timers
        return timers.current_processing_time, timers.current_watermark, self.name, user_key(key)

    def trace_element(self, key: Any, ts: int | None, value: Any) -> None:
        """The trace's ``element`` record of a record with (the user's) ``key``."""
        timers = self.timers
        self.trace.element(  # type: ignore[union-attr]
            timers.current_processing_time, timers.current_watermark, self.name, key, ts, value
        )

    def get_internal_timer_service(self, name: str, target: Any = None) -> InternalTimerService:
        """Flink's ``getInternalTimerService(name, ...)``: a named timer service, created on
        first use, calling back ``target`` (the operator by default)."""
        service = self.timer_services.get(name)
        if service is None:
            service = InternalTimerService(name, self, target or self)
            service.current_watermark = self.timers.current_watermark
            self._join(service)
            self.timer_services[name] = service
        return service

    # -- time: the timer service holds this operator's clocks ------------------------------

    def current_watermark(self) -> int:
        return self.timers.current_watermark

    def current_processing_time(self) -> int:
        return self.timers.current_processing_time

    def process_watermark(self, watermark: int) -> None:
        if watermark <= self.timers.current_watermark:
            return
        self._watermark = watermark
        if self.trace is not None:
            self.trace_watermark(watermark)
        for service in self.timer_services.values():
            service.advance_watermark(watermark)
        self.output.emit_watermark(watermark)

    def advance_processing_time(self, now: int) -> None:
        for service in self.timer_services.values():
            service.advance_processing_time(now)

    def next_processing_timer(self) -> int | None:
        times = [
            t for s in self.timer_services.values() if (t := s.next_processing_timer()) is not None
        ]
        return min(times) if times else None

    # -- timer callbacks (Flink's Triggerable) ---------------------------------------------

    def on_event_time(self, timer: InternalTimer) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def on_processing_time(self, timer: InternalTimer) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    # -- the timer-loop guard (winviz.timers) ------------------------------------------------

    def key_state(self, key: Any) -> dict[tuple[str, Any], Any]:
        """A deep copy of ``key``'s keyed state by (state name, namespace), for the timer-loop
        guard."""
        return {
            (name, ns): copy.deepcopy(value)
            for (name, k, ns), value in self.state.items()
            if k == key
        }

    @property
    def timer_code(self) -> str:
        """What registers this operator's timers (``F.on_timer``), as
        ``InternalTimerService.loop_error`` names it."""
        function = getattr(self, "function", None)
        return f"{type(function).__name__}.on_timer" if function is not None else ""

    # -- checkpoints ----------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Keyed state and every named timer service's timers (as Flink's keyed snapshot)."""
        snap = super().snapshot()
        snap["state"] = self.state.snapshot()
        snap["timers"] = {name: s.snapshot() for name, s in self.timer_services.items()}
        return snap

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        self.state.restore(snap["state"])
        for name, timers in snap["timers"].items():
            self.get_internal_timer_service(name).restore(timers)
