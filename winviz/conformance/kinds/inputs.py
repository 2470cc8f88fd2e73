"""The input kinds: ``partitioner`` (which channel a record goes to) and ``two_input``."""

from __future__ import annotations

from typing import Any

from winviz.conformance.kinds.driver import Driver, TranscriptError, drain, parse_int_like
from winviz.conformance.kinds.timers import _TIMER_OPS, FunctionFromSteps
from winviz.operators.base import CollectingOutput, JobContext
from winviz.operators.co_process import CoInput, CoInputGate, KeyedCoProcessOperator
from winviz.partitioners import KeyGroupStreamPartitioner, RebalancePartitioner


class PartitionerDriver(Driver):
    """Kind ``partitioner``: ``hash`` is Flink's ``KeyGroupStreamPartitioner`` (a step's ``key`` →
    key group and channel), ``rebalance`` the ``RebalancePartitioner`` from channel ``first``."""

    OPERATOR_KEYS = frozenset({"kind", "partitioner", "parallelism", "max_parallelism", "first"})
    STEP_KEYS = frozenset({"key", "record"})
    OUTPUTS = (
        ("channel", "expect_channel", "equal"),
        ("key_group", "expect_key_group", "equal"),
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.kind = spec.get("partitioner")
        parallelism = self.option(spec, "parallelism")
        if parallelism < 1:
            raise TranscriptError(f"{where}: operator.parallelism must be >= 1, got {parallelism}")
        if self.kind == "hash":
            max_parallelism = self.option(spec, "max_parallelism")
            if max_parallelism < parallelism:
                raise TranscriptError(
                    f"{where}: operator.max_parallelism {max_parallelism} is below the "
                    f"parallelism {parallelism}"
                )
            self.hash = KeyGroupStreamPartitioner(lambda k: k, parallelism, max_parallelism)
        elif self.kind == "rebalance":
            first = self.option(spec, "first", 0)
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


class TwoInputDriver(Driver):
    """Kind ``two_input``: a ``KeyedCoProcessOperator`` whose inputs each have a gate of
    ``channels[i]`` channels, combined with an ``IndexedCombinedWatermarkStatus``."""

    OPERATOR_KEYS = frozenset({"kind", "channels"})
    STEP_KEYS = frozenset(
        {"input", "channel", "element", "watermark", "idle", "active", *_TIMER_OPS}
    )
    OUTPUTS = (
        ("watermark", "expect_watermark", "equal"),
        ("timers", "expect_timers", "multiset-strict"),
        *Driver.WATERMARK_OUTPUTS,
    )

    def __init__(self, spec, where):
        super().__init__(spec, where)
        channels = spec.get("channels", [1, 1])
        if not isinstance(channels, list) or len(channels) != 2:
            raise TranscriptError(f"{where}: operator.channels is [n1, n2], got {channels!r}")
        counts = [parse_int_like(c, f"{where}: operator.channels") for c in channels]
        if min(counts) < 1:
            raise TranscriptError(f"{where}: operator.channels must be >= 1, got {channels!r}")
        self.function = FunctionFromSteps(domain=False)
        self.op = KeyedCoProcessOperator("co", lambda e: e[0], lambda e: e[0], self.function)
        self.output = CollectingOutput()
        self.op.output = self.output
        self.op.open(JobContext())
        self.gates = [
            CoInputGate(CoInput(self.op, i), [f"input{i + 1}[{c}]" for c in range(n)])
            for i, n in enumerate(counts)
        ]

    def step(self, step, index):
        fn = self.function
        fn.step, fn.seen, fn.fired = step, None, []
        which = parse_int_like(step.get("input"), self.at(index, "input"))
        if which not in (1, 2):
            raise TranscriptError(self.at(index, f"input is 1 or 2, got {which}"))
        gate = self.gates[which - 1]
        channel = self.channel(index, step, len(gate.channels), 0, f" of input {which}")
        actions = [a for a in ("element", "watermark", "idle", "active") if a in step]
        if len(actions) != 1:
            raise TranscriptError(
                self.at(index, f"one of element / watermark / idle / active, got {actions}")
            )
        if any(step.get(op) for op in _TIMER_OPS) and "element" not in step:
            raise TranscriptError(self.at(index, "timers are registered by an element step"))
        if "element" in step:
            method = self.op.process_element1 if which == 1 else self.op.process_element2
            method(*self.keyed_element(step, index))
        elif "watermark" in step:
            gate.channel_watermark(channel, self.int_in(index, step, "watermark"))
        else:
            gate.channel_status(channel, bool(step.get("idle")))
        result: dict[str, Any] = {"timers": fn.fired, **drain(self.output)}
        if "element" in step:
            result["watermark"] = fn.seen
        return result
