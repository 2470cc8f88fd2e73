"""The timer kinds: ``timers`` (a ``KeyedProcessOperator`` registering the steps' timers) and
``timer_service`` (``InternalTimerServiceImpl`` alone)."""

from __future__ import annotations

from typing import Any

from winviz.conformance.kinds.driver import (
    DEFAULT_NAMESPACE,
    TIME_STEPS,
    Driver,
    TranscriptError,
    check_counts,
    counted,
    parse_int_like,
    timer_counts,
)
from winviz.functions import KeyedCoProcessFunction
from winviz.operators.base import JobContext
from winviz.operators.keyed_process import KeyedProcessOperator
from winviz.timers import InternalTimerService


class FunctionFromSteps(KeyedCoProcessFunction):
    """The keyed (co-)process function of kinds ``timers`` and ``two_input``: registers and
    deletes what the current ``step`` says, records the watermark an element ``seen`` and each
    timer ``fired`` (with its ``domain``, else the watermark then)."""

    def __init__(self, *, domain: bool) -> None:
        self.domain = domain
        self.step: dict[str, Any] = {}
        self.seen: int | None = None
        self.fired: list[dict[str, Any]] = []

    def process_element(self, value, ctx, out):
        service = ctx.timer_service()
        self.seen = service.current_watermark()
        apply_timer_ops(self.step, service._internal, "")

    process_element1 = process_element2 = process_element

    def on_timer(self, ts, ctx, out):
        fired: dict[str, Any] = {"key": ctx.get_current_key(), "ts": ts}
        if self.domain:
            fired["domain"] = "event" if ctx.time_domain() == "EVENT_TIME" else "processing"
        else:
            fired["watermark"] = ctx.timer_service().current_watermark()
        self.fired.append(fired)


def _timer_entries(entries: Any, where: str) -> list[tuple[int, Any]]:
    if not isinstance(entries, list):
        raise TranscriptError(f"{where}: expected a list of timestamps")
    out = []
    for e in entries:
        if isinstance(e, dict):
            out.append((parse_int_like(e["ts"], where), e.get("namespace", DEFAULT_NAMESPACE)))
        else:
            out.append((parse_int_like(e, where), DEFAULT_NAMESPACE))
    return out


def apply_timer_ops(
    step: dict[str, Any], service: InternalTimerService, where: str, void_namespace: bool = True
) -> None:
    """A step's register_* / delete_* (``_TIMER_OPS`` order) for the service's current key."""
    for field in _TIMER_OPS:
        call = getattr(service, f"{field}_timer")
        for ts, ns in _timer_entries(step.get(field, []), f"{where}{field}"):
            call(None if void_namespace and ns == DEFAULT_NAMESPACE else ns, ts)


_TIMER_OPS = (
    "register_event_time",
    "delete_event_time",
    "register_processing_time",
    "delete_processing_time",
)


class TimersDriver(Driver):
    """Kind ``timers``: a KeyedProcessFunction whose timers the steps register."""

    STEP_KEYS = frozenset({"element", "key", *TIME_STEPS, *_TIMER_OPS})
    EXCLUSIVE = frozenset({"element", "key", *TIME_STEPS})
    OUTPUTS = (("timers", "expect_timers", "multiset-strict"),)

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.function = FunctionFromSteps(domain=True)
        self.op = KeyedProcessOperator("timers", lambda e: e[0], self.function)
        self.op.open(JobContext())

    def step(self, step, index):
        fn, op = self.function, self.op
        fn.fired = []
        fn.step = step
        if "element" in step:
            op.process_element(*self.keyed_element(step, index))
        elif "key" in step:
            op.current_key = str(step["key"])
            apply_timer_ops(step, op.timers, self.at(index, ""))
        else:
            self.time_step(op, step, index)
        return {"timers": fn.fired}


class TimerServiceDriver(Driver):
    """Kind ``timer_service``: an InternalTimerService with namespaces."""

    STEP_KEYS = frozenset({"key", "watermark", "processing_time", *_TIMER_OPS})
    OUTPUTS = (("timers", "expect_timers", "multiset-strict"),)
    CHECKS = {"expect_counts": check_counts}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.current_key: Any = None  # the service's key context and its timers' target: self
        self.fired: list[dict[str, Any]] = []
        self.service = InternalTimerService("test", self, self)

    def on_event_time(self, timer):
        self._record(timer, "event")

    def on_processing_time(self, timer):
        self._record(timer, "processing")

    def _record(self, timer, domain):
        rec = {"key": timer.key, "ts": timer.timestamp, "domain": domain}
        if timer.namespace != DEFAULT_NAMESPACE:
            rec["namespace"] = timer.namespace
        self.fired.append(rec)

    def step(self, step, index):
        self.fired = []
        if "key" in step:
            self.current_key = str(step["key"])
            apply_timer_ops(step, self.service, self.at(index, ""), void_namespace=False)
        if "watermark" in step:
            self.service.advance_watermark(self.int_in(index, step, "watermark"))
        if "processing_time" in step:
            self.service.advance_processing_time(self.int_in(index, step, "processing_time"))
        counts = counted(lambda ns: timer_counts(self.service, ns), step, "namespace")
        return {"timers": self.fired, **counts}
