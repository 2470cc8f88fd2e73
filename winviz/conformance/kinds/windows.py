"""The window kinds: ``window`` (``WindowOperator``), ``trigger`` (``TriggerTestHarness``),
``assigner`` and ``merging_window_set``, with the builders of assigner, trigger, evictor and
function."""

from __future__ import annotations

from typing import Any

from winviz.conformance.kinds.driver import (
    TIME_STEPS,
    Driver,
    TranscriptError,
    check_counts,
    counted,
    known,
    normalise_expected,
    parse_int_like,
    parse_window,
    timer_counts,
    window_json,
)
from winviz.functions import CountAggregate, OutputTag
from winviz.operators.base import CollectingOutput, JobContext
from winviz.operators.batch import Batch
from winviz.operators.chaining import install_kernel
from winviz.operators.window_functions import (
    AggregateWindowFunction,
    ListWindowFunction,
    ReduceWindowFunction,
)
from winviz.operators.window_operator import TriggerContext, WindowOperator
from winviz.state import KeyedStateBackend
from winviz.time import MIN
from winviz.timers import InternalTimerService
from winviz.windows import assigners as A
from winviz.windows import evictors as E
from winviz.windows import triggers as T
from winviz.windows.merging import MergingWindowSet
from winviz.windows.window import TimeWindow


def build(spec: dict[str, Any], what: str, where: str) -> Any:
    """The assigner, trigger or evictor (``what``) ``spec`` describes: ``KINDS[what]`` maps its
    ``type`` to its fields and a maker of the spec with its integer fields parsed. An unknown
    type or field, or a missing one, is a ``TranscriptError`` naming ``where`` (the spec's
    path, e.g. ``file: operator.trigger``)."""
    kinds = KINDS[what]
    kind = spec.get("type")
    if kind not in kinds:
        raise TranscriptError(f"{where}.type {kind!r} is not one of {sorted(kinds)}")
    fields, make = kinds[kind]
    known(spec, ("type", *fields.split()), where)
    ints = {k: parse_int_like(v, f"{where}.{k}") for k, v in spec.items() if k in _INTS}
    try:
        return make({**spec, **ints}, where)
    except KeyError as exc:
        raise TranscriptError(f"{where}: {what} {kind} needs field {exc.args[0]!r}") from None


_INTS = {"size", "slide", "offset", "gap", "n", "interval", "max"}


def _assigner(p: dict[str, Any], where: str) -> A.WindowAssigner:
    """An assigner of ``ASSIGNERS`` (``time: processing``: its processing-time variant)."""
    time = p.get("time", "event")
    if time not in ("event", "processing"):
        raise TranscriptError(f"{where}: assigner.time must be event or processing, got {time!r}")
    proc = time == "processing"
    if p["type"] == "tumbling":
        cls = A.TumblingProcessingTimeWindows if proc else A.TumblingEventTimeWindows
        return cls(p["size"], p.get("offset", 0))
    if p["type"] == "sliding":
        cls = A.SlidingProcessingTimeWindows if proc else A.SlidingEventTimeWindows
        return cls(p["size"], p["slide"], p.get("offset", 0))
    cls = A.ProcessingTimeSessionWindows if proc else A.EventTimeSessionWindows
    if p["type"] == "session":
        return cls(p["gap"])
    if p["type"] == "dynamic_session":
        if "gap_by_key" in p:
            gaps = p["gap_by_key"]
            return cls(gap_extractor=lambda element: gaps[element[0]])
        if p.get("gap_from_value"):
            return cls(gap_extractor=lambda element: element[1])
        raise TranscriptError(f"{where}: dynamic_session needs gap_by_key or gap_from_value")
    if proc:
        raise TranscriptError(f"{where}: global windows have no processing-time variant")
    return A.GlobalWindows()


def _delta(a: Any, b: Any) -> float:
    return abs(b[1] - a[1])


ASSIGNERS = {
    "tumbling": ("size offset time", _assigner),
    "sliding": ("size slide offset time", _assigner),
    "session": ("gap time", _assigner),
    "dynamic_session": ("gap_by_key gap_from_value time", _assigner),
    "global": ("time", _assigner),
}
TRIGGERS = {
    "event_time": ("", lambda p, w: T.EventTimeTrigger()),
    "processing_time": ("", lambda p, w: T.ProcessingTimeTrigger()),
    "count": ("n", lambda p, w: T.CountTrigger(p["n"])),
    "continuous_event_time": ("interval", lambda p, w: T.ContinuousEventTimeTrigger(p["interval"])),
    "continuous_processing_time": (
        "interval",
        lambda p, w: T.ContinuousProcessingTimeTrigger(p["interval"]),
    ),
    "delta": ("threshold", lambda p, w: T.DeltaTrigger(p["threshold"], _delta)),
    "never": ("", lambda p, w: T.NeverTrigger()),
    "purging": ("of", lambda p, w: T.PurgingTrigger(build(p["of"], "trigger", f"{w}.of"))),
    "end_of_stream": ("", lambda p, w: T.EndOfStreamTrigger()),
}
EVICTORS = {
    "count": ("max after", lambda p, w: E.CountEvictor(p["max"], bool(p.get("after")))),
    "time": ("size after", lambda p, w: E.TimeEvictor(p["size"], bool(p.get("after")))),
    "delta": (
        "threshold after",
        lambda p, w: E.DeltaEvictor(p["threshold"], _delta, bool(p.get("after"))),
    ),
}


def _emit_keyed(key: Any, ctx: Any, elements: list[Any], out: Any) -> None:
    out.collect((key, ctx.window(), elements[0]))


def _emit_values(key: Any, ctx: Any, elements: list[Any], out: Any) -> None:
    out.collect((key, ctx.window(), sorted(v for _, v in elements)))


KINDS = {"assigner": ASSIGNERS, "trigger": TRIGGERS, "evictor": EVICTORS}


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


class WindowDriver(Driver):
    """Kind ``window``: a WindowOperator driven like WindowOperatorTest's harness."""

    OPERATOR_KEYS = frozenset({"kind", "function", "allowed_lateness", "late_side_output", *KINDS})
    STEP_KEYS = EXCLUSIVE = frozenset({"element", *TIME_STEPS})
    OUTPUTS = (("emitted", "expect", "multiset-strict"), ("late", "expect_late", "multiset-strict"))

    def __init__(self, spec, where):
        super().__init__(spec, where)
        for required in ("assigner", "function"):
            if required not in spec:
                raise TranscriptError(f"{where}: operator: missing field {required!r}")
        assigner, trigger, evictor = (
            build(spec[what], what, f"{where}: operator.{what}") if what in spec else None
            for what in ("assigner", "trigger", "evictor")
        )
        lateness = self.option(spec, "allowed_lateness", 0)
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
            value, ts = self.keyed_element(step, index)
            op.process_batch(Batch.of([(op.job.now, None, value, ts)]))
        else:
            self.time_step(op, step, index)
        emitted = [
            {"key": k, "value": v, "ts": ts, "window": window_json(w)}
            for (k, w, v), ts in out.records[n_out:]
        ]
        late = [
            {"key": k, "value": v, "ts": ts} for (k, v), ts in out.side.get("late", [])[n_late:]
        ]
        return {"emitted": emitted, "late": late}


class TriggerDriver(Driver):
    """Kind ``trigger``: Flink's TriggerTestHarness around one trigger."""

    OPERATOR_KEYS = frozenset({"kind", "trigger"})
    STEP_KEYS = frozenset({"element", "window", "watermark", "processing_time", "merge", "clear"})
    OUTPUTS = (("result", "expect_result", "equal"), ("fired", "expect_fired", "multiset-strict"))
    CHECKS = {"expect_counts": check_counts}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.trigger = build(spec["trigger"], "trigger", f"{where}: operator.trigger")
        # just enough of an operator for a TriggerContext: one key, state and timers
        self.current_key = "key"
        self.state = KeyedStateBackend()
        self.timers = InternalTimerService("trigger", self, self)
        self.ctx = TriggerContext(self)  # type: ignore[arg-type]
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
        ctx = self.ctx
        result: dict[str, Any] = {}
        if "element" in step:
            if "window" not in step:
                raise TranscriptError(self.at(index, "element needs window"))
            el = step["element"]
            ts = self.int_in(index, el, "ts", MIN, "element.ts")
            ctx.window = parse_window(step["window"], self.at(index, "window"))
            ctx.merged_windows = None
            r = self.trigger.on_element(el.get("value", 1), ts, ctx.window, ctx)
            result["result"] = r.name
        if "watermark" in step:
            wm = self.int_in(index, step, "watermark")
            self.timers.current_watermark = wm
            result["fired"] = self._fire_due(self.timers.event_queue, wm, True)
        if "processing_time" in step:
            now = self.int_in(index, step, "processing_time")
            self.timers.current_processing_time = now
            result["fired"] = self._fire_due(self.timers.processing_queue, now, False)
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
        where = self.at(index, "expect_counts")
        return {**result, **counted(self._counts, step, "window", lambda w: parse_window(w, where))}

    def _counts(self, window: Any) -> dict[str, int]:
        state = self.state.count() if window is ... else self.state.count(namespace=window)
        return {"state_entries": state, **timer_counts(self.timers, window)}


class AssignerDriver(Driver):
    """Kind ``assigner``: element timestamp (or processing time) → windows."""

    OPERATOR_KEYS = frozenset({"kind", "assigner"})
    STEP_KEYS = frozenset({"ts", "processing_time", "value"})
    OUTPUTS = (("windows", "expect_windows", "multiset"),)

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.assigner = build(spec["assigner"], "assigner", f"{where}: operator.assigner")

    def step(self, step, index):
        ts = self.int_in(index, step, "ts")
        now = self.int_in(index, step, "processing_time", MIN)
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
    STEP_KEYS = frozenset({"add", "retire", "state_window_of", "persist", "restore"})
    OUTPUTS = (
        ("window", "expect_window", "equal"),
        ("state_window", "expect_state_window", "equal"),
        ("mapping", "expect_mapping", "multiset"),
    )
    CHECKS = {"expect_merges": _merges_equal}

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.assigner = build(spec["assigner"], "assigner", f"{where}: operator.assigner")
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
