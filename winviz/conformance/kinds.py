"""One driver per transcript kind: it builds the operator from ``operator:`` and executes
steps the way Flink's test harness for that operator does.

Kinds: ``window`` (WindowOperator), ``timers`` (KeyedProcessOperator), ``timer_service``
(InternalTimerService), ``trigger`` (TriggerTestHarness), ``assigner``,
``merging_window_set``, ``valve`` (StatusWatermarkValve), ``bounded_out_of_orderness``,
``watermark_generator``, ``partitioner`` (KeyGroupStreamPartitioner / RebalancePartitioner) and
``two_input`` (KeyedCoProcessOperator with an IndexedCombinedWatermarkStatus).
"""

from __future__ import annotations

from typing import Any

from winviz.conformance.errors import TranscriptError
from winviz.functions import CountAggregate, KeyedCoProcessFunction, OutputTag
from winviz.operators.base import CollectingOutput, JobContext
from winviz.operators.batch import Batch
from winviz.operators.chaining import install_kernel
from winviz.operators.co_process import CoInput, CoInputGate, KeyedCoProcessOperator
from winviz.operators.keyed_process import KeyedProcessOperator
from winviz.operators.window_functions import (
    AggregateWindowFunction,
    ListWindowFunction,
    ReduceWindowFunction,
)
from winviz.operators.window_operator import TriggerContext, WindowOperator
from winviz.partitioners import KeyGroupStreamPartitioner, RebalancePartitioner
from winviz.state import KeyedStateBackend
from winviz.time import MAX, MIN
from winviz.timers import InternalTimerService
from winviz.valve import StatusWatermarkValve
from winviz.watermarks import (
    AscendingTimestampsWatermarks,
    BoundedOutOfOrdernessWatermarks,
    WatermarksWithIdleness,
)
from winviz.windows import assigners as A
from winviz.windows import evictors as E
from winviz.windows import triggers as T
from winviz.windows.merging import MergingWindowSet
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow, has_positive_size

DEFAULT_NAMESPACE = "default"


def parse_int_like(value: Any, where: str) -> int:
    """An exact integer; the strings "MIN"/"MAX" are Java's Long.MIN_VALUE/MAX_VALUE."""
    if value == "MIN":
        return MIN
    if value == "MAX":
        return MAX
    if isinstance(value, bool) or not isinstance(value, int):
        raise TranscriptError(f'{where}: expected an integer (or "MIN"/"MAX"), got {value!r}')
    if not MIN <= value <= MAX:
        raise TranscriptError(f"{where}: {value} is outside Java's long range")
    return value


def normalise_expected(value: Any) -> Any:
    """Expected values: "MIN"/"MAX" → ints, tuples → lists, recursively."""
    if isinstance(value, str) and value in ("MIN", "MAX"):
        return parse_int_like(value, "")
    if isinstance(value, (list, tuple)):
        return [normalise_expected(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise_expected(v) for k, v in value.items()}
    return value


def window_json(window: Any) -> list[int | None]:
    if window is GLOBAL_WINDOW:
        return [None, None]
    return [window.start, window.end]


def parse_window(value: Any, where: str) -> Any:
    if value is None or value == [None, None]:
        return GLOBAL_WINDOW
    if not isinstance(value, list) or len(value) != 2:
        raise TranscriptError(f"{where}: a window is [start, end], got {value!r}")
    start, end = parse_int_like(value[0], where), parse_int_like(value[1], where)
    if not has_positive_size(start, end):
        raise TranscriptError(
            f"{where}: window {value!r}: end {end} is not after start {start} (expected "
            "[start, end] with start < end: a window of positive size, end - start in Java's "
            "long arithmetic)"
        )
    return TimeWindow(start, end)


class Driver:
    """Base driver: validates fields; subclasses execute steps."""

    OPERATOR_KEYS: frozenset[str] = frozenset({"kind"})
    STEP_KEYS: frozenset[str] = frozenset()
    EXCLUSIVE: frozenset[str] = frozenset()
    """Step fields of which a step may have one only (the driver would run one of them)."""
    OUTPUTS: tuple[tuple[str, str, str], ...] = ()
    CHECKS: dict[str, Any] = {}

    def __init__(self, spec: dict[str, Any], where: str) -> None:
        self.where = where
        unknown = set(spec) - self.OPERATOR_KEYS
        if unknown:
            raise TranscriptError(f"{where}: operator: unknown field(s) {sorted(unknown)}")

    def validate(self, step: dict[str, Any], index: int) -> None:
        unknown = set(step) - self.STEP_KEYS - {"expect_error"}
        if unknown:
            raise TranscriptError(f"{self.where}: step {index}: unknown field(s) {sorted(unknown)}")
        if "element" in step and not isinstance(step["element"], dict):
            raise TranscriptError(
                f"{self.where}: step {index}: element {step['element']!r}: expected a mapping "
                "such as {key: a, value: 1, ts: 5}"
            )
        for _, expect_key, mode in self.OUTPUTS:
            wanted = step.get(expect_key, [])
            if mode.startswith("multiset") and not isinstance(wanted, list):
                raise TranscriptError(
                    f"{self.where}: step {index}: {expect_key} {wanted!r}: expected a list "
                    "(compared as a multiset)"
                )
        actions = sorted(self.EXCLUSIVE.intersection(step))
        if len(actions) > 1:
            raise TranscriptError(
                f"{self.where}: step {index}: one of {sorted(self.EXCLUSIVE)} per step, got "
                f"{actions} (split them into steps)"
            )

    def at(self, index: int, field: str) -> str:
        return f"{self.where}: step {index}: {field}"

    def step(self, step: dict[str, Any], index: int) -> dict[str, Any]:
        raise NotImplementedError


# -- building blocks from specs -----------------------------------------------------------


def build_assigner(spec: dict[str, Any], where: str) -> A.WindowAssigner:
    spec = dict(spec)
    kind = spec.pop("type", None)
    time = spec.pop("time", "event")
    if time not in ("event", "processing"):
        raise TranscriptError(f"{where}: assigner.time must be event or processing, got {time!r}")
    proc = time == "processing"
    allowed = {
        "tumbling": {"size", "offset"},
        "sliding": {"size", "slide", "offset"},
        "session": {"gap"},
        "dynamic_session": {"gap_by_key", "gap_from_value"},
        "global": set(),
    }
    if kind not in allowed:
        raise TranscriptError(f"{where}: assigner.type {kind!r} is not one of {sorted(allowed)}")
    unknown = set(spec) - allowed[kind]
    if unknown:
        raise TranscriptError(f"{where}: assigner: unknown field(s) {sorted(unknown)}")
    num = {
        k: parse_int_like(v, f"{where}: assigner.{k}")
        for k, v in spec.items()
        if k in ("size", "slide", "offset", "gap")
    }
    try:
        if kind == "tumbling":
            cls = A.TumblingProcessingTimeWindows if proc else A.TumblingEventTimeWindows
            return cls(num["size"], num.get("offset", 0))
        if kind == "sliding":
            cls = A.SlidingProcessingTimeWindows if proc else A.SlidingEventTimeWindows
            return cls(num["size"], num["slide"], num.get("offset", 0))
        cls = A.ProcessingTimeSessionWindows if proc else A.EventTimeSessionWindows
        if kind == "session":
            return cls(num["gap"])
        if kind == "dynamic_session":
            if "gap_by_key" in spec:
                gaps = spec["gap_by_key"]
                return cls(gap_extractor=lambda element: gaps[element[0]])
            if spec.get("gap_from_value"):
                return cls(gap_extractor=lambda element: element[1])
            raise TranscriptError(f"{where}: dynamic_session needs gap_by_key or gap_from_value")
        if proc:
            raise TranscriptError(f"{where}: global windows have no processing-time variant")
        return A.GlobalWindows()
    except KeyError as exc:
        raise TranscriptError(f"{where}: assigner {kind} needs field {exc.args[0]!r}") from None


def _delta(a: Any, b: Any) -> float:
    return abs(b[1] - a[1])


def build_trigger(spec: dict[str, Any], where: str) -> T.Trigger:
    kind = spec.get("type")
    fields = {
        "event_time": set(),
        "processing_time": set(),
        "count": {"n"},
        "continuous_event_time": {"interval"},
        "continuous_processing_time": {"interval"},
        "delta": {"threshold"},
        "never": set(),
        "purging": {"of"},
        "end_of_stream": set(),
    }
    if kind not in fields:
        raise TranscriptError(f"{where}: trigger.type {kind!r} is not one of {sorted(fields)}")
    unknown = set(spec) - fields[kind] - {"type"}
    if unknown:
        raise TranscriptError(f"{where}: trigger: unknown field(s) {sorted(unknown)}")
    try:
        if kind == "event_time":
            return T.EventTimeTrigger()
        if kind == "processing_time":
            return T.ProcessingTimeTrigger()
        if kind == "count":
            return T.CountTrigger(parse_int_like(spec["n"], f"{where}: trigger.n"))
        if kind == "continuous_event_time":
            return T.ContinuousEventTimeTrigger(parse_int_like(spec["interval"], where))
        if kind == "continuous_processing_time":
            return T.ContinuousProcessingTimeTrigger(parse_int_like(spec["interval"], where))
        if kind == "delta":
            return T.DeltaTrigger(spec["threshold"], _delta)
        if kind == "never":
            return T.NeverTrigger()
        if kind == "end_of_stream":
            return T.EndOfStreamTrigger()
        return T.PurgingTrigger(build_trigger(spec["of"], where))
    except KeyError as exc:
        raise TranscriptError(f"{where}: trigger {kind} needs field {exc.args[0]!r}") from None


def build_evictor(spec: dict[str, Any], where: str) -> E.Evictor:
    kind = spec.get("type")
    fields = {"count": {"max"}, "time": {"size"}, "delta": {"threshold"}}
    if kind not in fields:
        raise TranscriptError(f"{where}: evictor.type {kind!r} is not one of {sorted(fields)}")
    unknown = set(spec) - fields[kind] - {"type", "after"}
    if unknown:
        raise TranscriptError(f"{where}: evictor: unknown field(s) {sorted(unknown)}")
    after = bool(spec.get("after", False))
    try:
        if kind == "count":
            return E.CountEvictor(parse_int_like(spec["max"], where), after)
        if kind == "time":
            return E.TimeEvictor(parse_int_like(spec["size"], where), after)
        return E.DeltaEvictor(spec["threshold"], _delta, after)
    except KeyError as exc:
        raise TranscriptError(f"{where}: evictor {kind} needs field {exc.args[0]!r}") from None


def _emit_keyed(key: Any, ctx: Any, elements: list[Any], out: Any) -> None:
    out.collect((key, ctx.window(), elements[0]))


def _emit_values(key: Any, ctx: Any, elements: list[Any], out: Any) -> None:
    out.collect((key, ctx.window(), sorted(v for _, v in elements)))


def build_function(name: Any, where: str):
    if name == "sum":
        return ReduceWindowFunction(
            lambda a, b: (a[0], a[1] + b[1]),
            lambda key, ctx, els, out: out.collect(
                (key, ctx.window(), None if els[0] is None else els[0][1])
            ),
        )
    if name == "count":
        return AggregateWindowFunction(CountAggregate(), _emit_keyed)
    if name == "values":
        return ListWindowFunction(_emit_values)
    raise TranscriptError(f"{where}: function {name!r} is not one of sum, count, values")


# -- drivers --------------------------------------------------------------------------------

_TIME_STEPS = {"watermark", "processing_time", "end"}


class WindowDriver(Driver):
    """Kind ``window``: a WindowOperator driven like WindowOperatorTest's harness."""

    OPERATOR_KEYS = frozenset(
        {
            "kind",
            "assigner",
            "trigger",
            "evictor",
            "allowed_lateness",
            "late_side_output",
            "function",
        }
    )
    STEP_KEYS = frozenset({"element", *_TIME_STEPS, "expect", "expect_late"})
    EXCLUSIVE = frozenset({"element", *_TIME_STEPS})
    OUTPUTS = (("emitted", "expect", "multiset-strict"), ("late", "expect_late", "multiset-strict"))

    def __init__(self, spec, where):
        super().__init__(spec, where)
        for required in ("assigner", "function"):
            if required not in spec:
                raise TranscriptError(f"{where}: operator: missing field {required!r}")
        assigner = build_assigner(spec["assigner"], f"{where}: operator.assigner")
        trigger = (
            build_trigger(spec["trigger"], f"{where}: operator.trigger")
            if "trigger" in spec
            else None
        )
        evictor = (
            build_evictor(spec["evictor"], f"{where}: operator.evictor")
            if "evictor" in spec
            else None
        )
        lateness = parse_int_like(
            spec.get("allowed_lateness", 0), f"{where}: operator.allowed_lateness"
        )
        self.late_tag = OutputTag("late") if spec.get("late_side_output", False) else None
        try:
            self.op = WindowOperator(
                "window",
                lambda e: e[0],
                assigner,
                build_function(spec["function"], where),
                trigger,
                lateness,
                self.late_tag,
                evictor,
            )
        except ValueError as exc:
            raise TranscriptError(f"{where}: operator: {exc}") from None
        self.out = CollectingOutput()
        self.op.output = self.out
        # as a job would run it: with the window kernel where it applies (an element goes in
        # as a batch of one, the way the runtime hands records over)
        install_kernel(self.op, traced=False)
        self.op.open(JobContext())

    def step(self, step, index):
        op, out = self.op, self.out
        n_out, n_late = len(out.records), len(out.side.get("late", []))
        if "element" in step:
            el = step["element"]
            unknown = set(el) - {"key", "value", "ts"}
            if unknown or "key" not in el:
                raise TranscriptError(
                    self.at(index, f"element: needs key; unknown {sorted(unknown)}")
                )
            ts = parse_int_like(el["ts"], self.at(index, "element.ts")) if "ts" in el else None
            value = el.get("value", 1)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TranscriptError(
                    self.at(index, f"element.value: expected an integer, got {el['value']!r}")
                )
            value = (str(el["key"]), el.get("value", 1))
            op.process_batch(Batch.of([(op.job.now, None, value, ts)]))
        elif "watermark" in step:
            op.process_watermark(parse_int_like(step["watermark"], self.at(index, "watermark")))
        elif "processing_time" in step:
            op.advance_processing_time(
                parse_int_like(step["processing_time"], self.at(index, "processing_time"))
            )
        elif step.get("end"):
            op.process_watermark(MAX)
        emitted = [
            {"key": k, "value": v, "ts": ts, "window": window_json(w)}
            for (k, w, v), ts in out.records[n_out:]
        ]
        late = [
            {"key": k, "value": v, "ts": ts} for (k, v), ts in out.side.get("late", [])[n_late:]
        ]
        return {"emitted": emitted, "late": late}


class _FunctionFromSteps:
    """The KeyedProcessFunction of kind ``timers``: registers what the current step says."""

    def __init__(self) -> None:
        self.step: dict[str, Any] = {}
        self.fired: list[dict[str, Any]] = []

    def process_element(self, value, ctx, out):
        apply_timer_ops(self.step, ctx.timer_service()._internal, "")

    def on_timer(self, ts, ctx, out):
        domain = "event" if ctx.time_domain() == "EVENT_TIME" else "processing"
        self.fired.append({"key": ctx.get_current_key(), "ts": ts, "domain": domain})


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
    """register_* / delete_* of a step, on the service, for its current key."""
    ops = (
        ("register_event_time", service.register_event_time_timer),
        ("delete_event_time", service.delete_event_time_timer),
        ("register_processing_time", service.register_processing_time_timer),
        ("delete_processing_time", service.delete_processing_time_timer),
    )
    for field, call in ops:
        for ts, ns in _timer_entries(step.get(field, []), f"{where}{field}"):
            call(None if void_namespace and ns == DEFAULT_NAMESPACE else ns, ts)


_TIMER_OPS = {
    "register_event_time",
    "delete_event_time",
    "register_processing_time",
    "delete_processing_time",
}


class TimersDriver(Driver):
    """Kind ``timers``: a KeyedProcessFunction whose timers the steps register."""

    STEP_KEYS = frozenset({"element", "key", *_TIME_STEPS, *_TIMER_OPS, "expect_timers"})
    EXCLUSIVE = frozenset({"element", "key", *_TIME_STEPS})
    OUTPUTS = (("timers", "expect_timers", "multiset-strict"),)

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.function = _FunctionFromSteps()
        self.op = KeyedProcessOperator("timers", lambda e: e[0], self.function)
        self.op.open(JobContext())

    def step(self, step, index):
        fn, op = self.function, self.op
        fn.fired = []
        fn.step = step
        if "element" in step:
            el = step["element"]
            ts = parse_int_like(el["ts"], self.at(index, "element.ts")) if "ts" in el else None
            op.process_element((str(el["key"]), el.get("value", 1)), ts)
        elif "key" in step:
            op.current_key = str(step["key"])
            apply_timer_ops(step, op.timers, self.at(index, ""))
        elif "watermark" in step:
            op.process_watermark(parse_int_like(step["watermark"], self.at(index, "watermark")))
        elif "processing_time" in step:
            op.advance_processing_time(
                parse_int_like(step["processing_time"], self.at(index, "processing_time"))
            )
        elif step.get("end"):
            op.process_watermark(MAX)
        return {"timers": fn.fired}


class _KeyContext:
    def __init__(self) -> None:
        self.current_key: Any = None


class _RecordingTarget:
    def __init__(self) -> None:
        self.fired: list[dict[str, Any]] = []

    def _record(self, timer, domain):
        rec = {"key": timer.key, "ts": timer.timestamp, "domain": domain}
        if timer.namespace != DEFAULT_NAMESPACE:
            rec["namespace"] = timer.namespace
        self.fired.append(rec)

    def on_event_time(self, timer):
        self._record(timer, "event")

    def on_processing_time(self, timer):
        self._record(timer, "processing")


def _check_counts(expected: dict[str, Any], result: dict[str, Any]) -> str | None:
    counts = result.get("_counts_by", {})
    scope = expected.get("namespace", expected.get("window", ...))
    scope_key = "all" if scope is ... else repr(scope)
    actual = counts.get(scope_key)
    if actual is None:
        return f"no counts for {scope}"
    for name, value in expected.items():
        if name in ("namespace", "window"):
            continue
        if actual.get(name) != value:
            return f"{name}: expected {value}, got {actual.get(name)}"
    return None


class TimerServiceDriver(Driver):
    """Kind ``timer_service``: an InternalTimerService with namespaces."""

    STEP_KEYS = frozenset(
        {"key", "watermark", "processing_time", *_TIMER_OPS, "expect_timers", "expect_counts"}
    )
    OUTPUTS = (("timers", "expect_timers", "multiset-strict"),)
    CHECKS = {"expect_counts": _check_counts}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.keys = _KeyContext()
        self.target = _RecordingTarget()
        self.service = InternalTimerService("test", self.keys, self.target)

    def step(self, step, index):
        self.target.fired = []
        if "key" in step:
            self.keys.current_key = str(step["key"])
            apply_timer_ops(step, self.service, self.at(index, ""), void_namespace=False)
        if "watermark" in step:
            self.service.advance_watermark(
                parse_int_like(step["watermark"], self.at(index, "watermark"))
            )
        if "processing_time" in step:
            self.service.advance_processing_time(
                parse_int_like(step["processing_time"], self.at(index, "processing_time"))
            )
        s = self.service
        counts = {
            "all": {
                "event": s.num_event_time_timers(),
                "processing": s.num_processing_time_timers(),
            }
        }
        ns = (step.get("expect_counts") or {}).get("namespace")
        if ns is not None:
            counts[repr(ns)] = {
                "event": s.num_event_time_timers(ns),
                "processing": s.num_processing_time_timers(ns),
            }
        return {"timers": self.target.fired, "counts": counts["all"], "_counts_by": counts}


class _HarnessOp:
    """Just enough of an operator for a TriggerContext: timers and state, one key."""

    def __init__(self) -> None:
        self.current_key = "key"
        self.state = KeyedStateBackend()
        self.timers = InternalTimerService("trigger", self, self)


class TriggerDriver(Driver):
    """Kind ``trigger``: Flink's TriggerTestHarness around one trigger."""

    OPERATOR_KEYS = frozenset({"kind", "trigger"})
    STEP_KEYS = frozenset(
        {
            "element",
            "window",
            "watermark",
            "processing_time",
            "merge",
            "clear",
            "expect_result",
            "expect_fired",
            "expect_counts",
        }
    )
    OUTPUTS = (("result", "expect_result", "equal"), ("fired", "expect_fired", "multiset-strict"))
    CHECKS = {"expect_counts": _check_counts}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.trigger = build_trigger(spec["trigger"], f"{where}: operator.trigger")
        self.op = _HarnessOp()
        self.ctx = TriggerContext(self.op)  # type: ignore[arg-type]
        self.ctx.key = "key"

    def _fire_due(self, queue, now: int, event: bool) -> list[dict[str, Any]]:
        due = []
        while (ts := queue.peek_ts()) is not None and ts <= now:
            due.append(queue.poll())
        fired = []
        for timer in due:  # the harness collects the due timers first, then calls the trigger
            self.ctx.window = timer.namespace
            call = self.trigger.on_event_time if event else self.trigger.on_processing_time
            result = call(timer.timestamp, timer.namespace, self.ctx)
            fired.append({"window": window_json(timer.namespace), "result": result.name})
        return fired

    def step(self, step, index):
        op, ctx = self.op, self.ctx
        result: dict[str, Any] = {}
        if "element" in step:
            if "window" not in step:
                raise TranscriptError(self.at(index, "element needs window"))
            el = step["element"]
            ts = parse_int_like(el["ts"], self.at(index, "element.ts")) if "ts" in el else MIN
            ctx.window = parse_window(step["window"], self.at(index, "window"))
            ctx.merged_windows = None
            r = self.trigger.on_element(el.get("value", 1), ts, ctx.window, ctx)
            result["result"] = r.name
        if "watermark" in step:
            wm = parse_int_like(step["watermark"], self.at(index, "watermark"))
            op.timers.current_watermark = wm
            result["fired"] = self._fire_due(op.timers.event_queue, wm, True)
        if "processing_time" in step:
            now = parse_int_like(step["processing_time"], self.at(index, "processing_time"))
            op.timers.current_processing_time = now
            result["fired"] = self._fire_due(op.timers.processing_queue, now, False)
        if "merge" in step:
            target = parse_window(step["merge"]["target"], self.at(index, "merge.target"))
            merged = [
                parse_window(w, self.at(index, "merge.windows")) for w in step["merge"]["windows"]
            ]
            ctx.window, ctx.merged_windows = target, merged
            self.trigger.on_merge(target, ctx)
            ctx.merged_windows = None
            for w in merged:
                ctx.window = w
                self.trigger.clear(w, ctx)
        if "clear" in step:
            ctx.window = parse_window(step["clear"], self.at(index, "clear"))
            self.trigger.clear(ctx.window, ctx)
        counts = {"all": self._counts(...)}
        w = (step.get("expect_counts") or {}).get("window")
        if w is not None:
            counts[repr(w)] = self._counts(parse_window(w, self.at(index, "expect_counts")))
        result["counts"] = counts["all"]
        result["_counts_by"] = counts
        return result

    def _counts(self, window: Any) -> dict[str, int]:
        t = self.op.timers
        state = self.op.state.count() if window is ... else self.op.state.count(namespace=window)
        return {
            "state_entries": state,
            "event": t.num_event_time_timers(window),
            "processing": t.num_processing_time_timers(window),
        }


class AssignerDriver(Driver):
    """Kind ``assigner``: element timestamp (or processing time) → windows."""

    OPERATOR_KEYS = frozenset({"kind", "assigner"})
    STEP_KEYS = frozenset({"ts", "processing_time", "value", "expect_windows"})
    OUTPUTS = (("windows", "expect_windows", "multiset"),)

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.assigner = build_assigner(spec["assigner"], f"{where}: operator.assigner")

    def step(self, step, index):
        ts = parse_int_like(step["ts"], self.at(index, "ts")) if "ts" in step else None
        now = (
            parse_int_like(step["processing_time"], self.at(index, "processing_time"))
            if "processing_time" in step
            else MIN
        )
        windows = self.assigner.assign_windows(("key", step.get("value", 1)), ts, now)
        return {"windows": [window_json(w) for w in windows]}


def _merges_equal(expected: list[dict[str, Any]], result: dict[str, Any]) -> str | None:
    actual = result["merges"]

    def canon(m):
        return (
            m["result"],
            sorted(m["merged"]),
            m["state_window"],
            sorted(m["merged_state_windows"]),
        )

    exp = [canon(normalise_expected(m)) for m in expected]
    act = [canon(m) for m in actual]
    return None if exp == act else f"expected {exp}, got {act}"


class MergingWindowSetDriver(Driver):
    """Kind ``merging_window_set``: MergingWindowSet with a recording merge function."""

    OPERATOR_KEYS = frozenset({"kind", "assigner"})
    STEP_KEYS = frozenset(
        {
            "add",
            "retire",
            "state_window_of",
            "persist",
            "restore",
            "expect_window",
            "expect_merges",
            "expect_state_window",
            "expect_mapping",
        }
    )
    OUTPUTS = (
        ("window", "expect_window", "equal"),
        ("state_window", "expect_state_window", "equal"),
        ("mapping", "expect_mapping", "multiset"),
    )
    CHECKS = {"expect_merges": _merges_equal}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.assigner = build_assigner(spec["assigner"], f"{where}: operator.assigner")
        self.set = MergingWindowSet(self.assigner)
        self.persisted: list[tuple[TimeWindow, TimeWindow]] = []

    def step(self, step, index):
        result: dict[str, Any] = {"merges": []}

        def merge_function(merge_result, merged, state_result, merged_state):
            result["merges"].append(
                {
                    "result": window_json(merge_result),
                    "merged": [window_json(w) for w in merged],
                    "state_window": window_json(state_result),
                    "merged_state_windows": [window_json(w) for w in merged_state],
                }
            )

        if "add" in step:
            w = parse_window(step["add"], self.at(index, "add"))
            result["window"] = window_json(self.set.add_window(w, merge_function))
        if "retire" in step:
            self.set.retire_window(parse_window(step["retire"], self.at(index, "retire")))
        if "state_window_of" in step:
            sw = self.set.get_state_window(
                parse_window(step["state_window_of"], self.at(index, "state_window_of"))
            )
            result["state_window"] = None if sw is None else window_json(sw)
        if step.get("persist"):
            changed = self.set.persist()
            if changed is not None:
                self.persisted = changed
        if step.get("restore"):
            self.set = MergingWindowSet(self.assigner, self.persisted)
        result["mapping"] = [[window_json(w), window_json(s)] for w, s in self.set.mapping.items()]
        return result


class ValveDriver(Driver):
    """Kind ``valve``: a StatusWatermarkValve with ``channels`` inputs."""

    OPERATOR_KEYS = frozenset({"kind", "channels"})
    STEP_KEYS = frozenset(
        {"channel", "watermark", "idle", "active", "expect_watermarks", "expect_status"}
    )
    OUTPUTS = (
        ("watermarks", "expect_watermarks", "ordered-strict"),
        ("status", "expect_status", "ordered-strict"),
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.valve = StatusWatermarkValve(
            parse_int_like(spec.get("channels"), f"{where}: operator.channels")
        )

    def step(self, step, index):
        channel = parse_int_like(step.get("channel"), self.at(index, "channel"))
        if not 0 <= channel < len(self.valve.channels):
            raise TranscriptError(self.at(index, f"channel {channel} does not exist"))
        if "watermark" in step:
            self.valve.input_watermark(
                parse_int_like(step["watermark"], self.at(index, "watermark")), channel
            )
        if step.get("idle"):
            self.valve.input_idle(channel)
        if step.get("active"):
            self.valve.input_active(channel)
        out = self.valve.drain()
        return {
            "watermarks": [v for k, v in out if k == "watermark"],
            "status": [v for k, v in out if k == "status"],
        }


class _GeneratorOutput:
    """A WatermarkOutput that records raw watermarks and idle/active changes."""

    def __init__(self) -> None:
        self.watermarks: list[int] = []
        self.status: list[str] = []
        self.idle = False

    def emit_watermark(self, watermark: int) -> None:
        if self.idle:
            self.mark_active()
        self.watermarks.append(watermark)

    def mark_idle(self) -> None:
        if not self.idle:
            self.idle = True
            self.status.append("idle")

    def mark_active(self) -> None:
        if self.idle:
            self.idle = False
            self.status.append("active")


class BoundedOutOfOrdernessDriver(Driver):
    """Kind ``bounded_out_of_orderness``: the generator alone."""

    OPERATOR_KEYS = frozenset({"kind", "max_out_of_orderness"})
    STEP_KEYS = frozenset({"event_ts", "periodic_emit", "expect_watermarks"})
    OUTPUTS = (("watermarks", "expect_watermarks", "ordered-strict"),)

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.generator = self._make(spec, where)
        self.clock = MIN

    def _make(self, spec, where):
        return BoundedOutOfOrdernessWatermarks(
            parse_int_like(
                spec.get("max_out_of_orderness"), f"{where}: operator.max_out_of_orderness"
            )
        )

    def step(self, step, index):
        out = _GeneratorOutput()
        if "processing_time" in step:
            self.clock = parse_int_like(step["processing_time"], self.at(index, "processing_time"))
        if "event_ts" in step:
            self.generator.on_event(
                None, parse_int_like(step["event_ts"], self.at(index, "event_ts")), out
            )
        if step.get("periodic_emit"):
            self.generator.on_periodic_emit(out)
        return {"watermarks": out.watermarks, "status": out.status}


class WatermarkGeneratorDriver(BoundedOutOfOrdernessDriver):
    """Kind ``watermark_generator``: a strategy's generator, optionally with idleness."""

    OPERATOR_KEYS = frozenset({"kind", "strategy", "idleness"})
    STEP_KEYS = frozenset(
        {"event_ts", "periodic_emit", "processing_time", "expect_watermarks", "expect_status"}
    )
    OUTPUTS = (
        ("watermarks", "expect_watermarks", "ordered-strict"),
        ("status", "expect_status", "ordered-strict"),
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.output = _GeneratorOutput()

    def _make(self, spec, where):
        strategy = spec.get("strategy") or {}
        kind = strategy.get("type")
        if kind == "bounded_out_of_orderness":
            gen = BoundedOutOfOrdernessWatermarks(
                parse_int_like(
                    strategy.get("max_out_of_orderness"), f"{where}: strategy.max_out_of_orderness"
                )
            )
        elif kind == "monotonous":
            gen = AscendingTimestampsWatermarks()
        else:
            raise TranscriptError(
                f"{where}: strategy.type {kind!r} is not bounded_out_of_orderness or monotonous"
            )
        if "idleness" in spec:
            gen = WatermarksWithIdleness(
                gen, parse_int_like(spec["idleness"], where), lambda: self.clock
            )
        return gen

    def step(self, step, index):
        out = self.output  # idleness is a property of the output across steps
        out.watermarks, out.status = [], []
        if "processing_time" in step:
            self.clock = parse_int_like(step["processing_time"], self.at(index, "processing_time"))
        if "event_ts" in step:
            self.generator.on_event(
                None, parse_int_like(step["event_ts"], self.at(index, "event_ts")), out
            )
        if step.get("periodic_emit"):
            self.generator.on_periodic_emit(out)
        return {"watermarks": list(out.watermarks), "status": list(out.status)}


class PartitionerDriver(Driver):
    """Kind ``partitioner``: which channel (downstream subtask) a record goes to.

    ``partitioner: hash`` is Flink's ``KeyGroupStreamPartitioner`` (``key_by``): a step's ``key``
    goes to key group ``murmur(hashCode) % max_parallelism`` and channel
    ``key_group * parallelism // max_parallelism``. ``partitioner: rebalance`` is
    ``RebalancePartitioner``: every step sends one record, round-robin from channel ``first``
    (Flink draws that first channel at random; winviz's upstream subtask i starts at i)."""

    OPERATOR_KEYS = frozenset({"kind", "partitioner", "parallelism", "max_parallelism", "first"})
    STEP_KEYS = frozenset({"key", "record", "expect_channel", "expect_key_group"})
    OUTPUTS = (
        ("channel", "expect_channel", "exact"),
        ("key_group", "expect_key_group", "exact"),
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.kind = spec.get("partitioner")
        parallelism = parse_int_like(spec.get("parallelism"), f"{where}: operator.parallelism")
        if parallelism < 1:
            raise TranscriptError(f"{where}: operator.parallelism must be >= 1, got {parallelism}")
        if self.kind == "hash":
            max_parallelism = parse_int_like(
                spec.get("max_parallelism"), f"{where}: operator.max_parallelism"
            )
            if max_parallelism < parallelism:
                raise TranscriptError(
                    f"{where}: operator.max_parallelism {max_parallelism} is below the "
                    f"parallelism {parallelism}"
                )
            self.hash = KeyGroupStreamPartitioner(lambda k: k, parallelism, max_parallelism)
        elif self.kind == "rebalance":
            first = parse_int_like(spec.get("first", 0), f"{where}: operator.first")
            self.rebalance = RebalancePartitioner(parallelism, first)
        else:
            raise TranscriptError(
                f"{where}: operator.partitioner {self.kind!r} is not hash or rebalance"
            )

    def step(self, step, index):
        if self.kind == "hash":
            if "key" not in step:
                raise TranscriptError(self.at(index, "key: a hash partitioner step needs a key"))
            key = step["key"]
            if isinstance(key, list):
                key = tuple(key)  # a Flink TupleN key
            group, channel = self.hash.route(key)
            return {"channel": channel, "key_group": group}
        return {"channel": self.rebalance.select_channel(step.get("record"))}


class _CoFunctionFromSteps(KeyedCoProcessFunction):
    """The KeyedCoProcessFunction of kind ``two_input``: records the watermark it sees in
    ``process_element1/2``, registers / deletes what the step says, records timers firing."""

    def __init__(self) -> None:
        self.step: dict[str, Any] = {}
        self.seen: int | None = None
        self.fired: list[dict[str, Any]] = []

    def _element(self, ctx: Any) -> None:
        service = ctx.timer_service()
        self.seen = service.current_watermark()
        apply_timer_ops(self.step, service._internal, "")

    def process_element1(self, value, ctx, out):
        self._element(ctx)

    def process_element2(self, value, ctx, out):
        self._element(ctx)

    def on_timer(self, timestamp, ctx, out):
        self.fired.append(
            {
                "key": ctx.get_current_key(),
                "ts": timestamp,
                "watermark": ctx.timer_service().current_watermark(),
            }
        )


class TwoInputDriver(Driver):
    """Kind ``two_input``: a ``KeyedCoProcessOperator`` whose two inputs each have an input
    gate with ``channels[i]`` channels (a ``StatusWatermarkValve`` each, as Flink's
    ``StreamTwoInputProcessor``); the operator combines the two with an
    ``IndexedCombinedWatermarkStatus`` (``AbstractStreamOperator.processWatermark1/2``,
    ``processWatermarkStatus1/2``)."""

    OPERATOR_KEYS = frozenset({"kind", "channels"})
    STEP_KEYS = frozenset(
        {
            "input",
            "channel",
            "element",
            "watermark",
            "idle",
            "active",
            *_TIMER_OPS,
            "expect_watermark",
            "expect_timers",
            "expect_watermarks",
            "expect_status",
        }
    )
    OUTPUTS = (
        ("watermark", "expect_watermark", "exact"),
        ("timers", "expect_timers", "multiset-strict"),
        ("watermarks", "expect_watermarks", "ordered-strict"),
        ("status", "expect_status", "ordered-strict"),
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        channels = spec.get("channels", [1, 1])
        if not isinstance(channels, list) or len(channels) != 2:
            raise TranscriptError(f"{where}: operator.channels is [n1, n2], got {channels!r}")
        counts = [parse_int_like(c, f"{where}: operator.channels") for c in channels]
        if min(counts) < 1:
            raise TranscriptError(f"{where}: operator.channels must be >= 1, got {channels!r}")
        self.function = _CoFunctionFromSteps()
        self.op = KeyedCoProcessOperator("co", lambda e: e[0], lambda e: e[0], self.function)
        self.output = CollectingOutput()
        self.op.output = self.output
        self.op.open(JobContext())
        self.gates = [
            CoInputGate(CoInput(self.op, i), [f"input{i + 1}[{c}]" for c in range(n)])
            for i, n in enumerate(counts)
        ]

    def step(self, step, index):
        fn, out = self.function, self.output
        fn.step, fn.seen, fn.fired = step, None, []
        out.watermarks, out.statuses = [], []
        which = parse_int_like(step.get("input"), self.at(index, "input"))
        if which not in (1, 2):
            raise TranscriptError(self.at(index, f"input is 1 or 2, got {which}"))
        gate = self.gates[which - 1]
        channel = parse_int_like(step.get("channel", 0), self.at(index, "channel"))
        if not 0 <= channel < len(gate.channels):
            raise TranscriptError(
                self.at(index, f"channel {channel} of input {which} does not exist")
            )
        actions = [a for a in ("element", "watermark", "idle", "active") if a in step]
        if len(actions) != 1:
            raise TranscriptError(
                self.at(index, f"one of element / watermark / idle / active, got {actions}")
            )
        if any(step.get(op) for op in _TIMER_OPS) and "element" not in step:
            raise TranscriptError(self.at(index, "timers are registered by an element step"))
        if "element" in step:
            el = step["element"]
            ts = parse_int_like(el["ts"], self.at(index, "element.ts")) if "ts" in el else None
            method = self.op.process_element1 if which == 1 else self.op.process_element2
            method((str(el["key"]), el.get("value", 1)), ts)
        elif "watermark" in step:
            watermark = parse_int_like(step["watermark"], self.at(index, "watermark"))
            gate.channel_watermark(channel, watermark)
        else:
            gate.channel_status(channel, bool(step.get("idle")))
        result: dict[str, Any] = {
            "timers": fn.fired,
            "watermarks": list(out.watermarks),
            "status": list(out.statuses),
        }
        if "element" in step:
            result["watermark"] = fn.seen
        return result


DRIVERS: dict[str, type[Driver]] = {
    "window": WindowDriver,
    "timers": TimersDriver,
    "timer_service": TimerServiceDriver,
    "trigger": TriggerDriver,
    "assigner": AssignerDriver,
    "merging_window_set": MergingWindowSetDriver,
    "valve": ValveDriver,
    "bounded_out_of_orderness": BoundedOutOfOrdernessDriver,
    "watermark_generator": WatermarkGeneratorDriver,
    "partitioner": PartitionerDriver,
    "two_input": TwoInputDriver,
}
