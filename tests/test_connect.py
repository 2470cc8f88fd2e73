"""Two-input operators: ``a.connect(b).process(CoProcessFunction)`` and
``a.connect(b).key_by(k1, k2).process(KeyedCoProcessFunction)`` (Flink's
``CoProcessOperator`` / ``KeyedCoProcessOperator``). Their watermark is the minimum of the two
inputs' (``AbstractStreamOperator.processWatermark1/2``), idle inputs drop out and both idle
make the operator idle without flushing a watermark (``IndexedCombinedWatermarkStatus``)."""

from __future__ import annotations

import pytest
from jobs import bounded

import winviz as wv
from winviz.errors import InputError, UnsupportedOperationError
from winviz.operators.co_process import IndexedCombinedWatermarkStatus

MIN, MAX = wv.MIN, wv.MAX


def strategy(idle: int | None = None) -> wv.WatermarkStrategy:
    s = bounded(0)
    return s.with_idleness(idle) if idle else s


class Tag(wv.CoProcessFunction):
    """Tags each record with its input, its timestamp and the watermark it saw."""

    def process_element1(self, value, ctx, out):
        out.collect(("1", value[0], ctx.timestamp(), ctx.timer_service().current_watermark()))

    def process_element2(self, value, ctx, out):
        out.collect(("2", value[0], ctx.timestamp(), ctx.timer_service().current_watermark()))


def tagged(a_records, a_arrivals, b_records, b_arrivals, a_idle=None, b_idle=None):
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection(a_records, arrival_times=a_arrivals, name="A")
    b = env.from_collection(b_records, arrival_times=b_arrivals, name="B")
    (
        a.assign_timestamps_and_watermarks(strategy(a_idle))
        .connect(b.assign_timestamps_and_watermarks(strategy(b_idle)))
        .process(Tag())
        .sink_to("out")
    )
    return env.execute()


def co_records(result, *kinds):
    return [
        (r.proc_time, r.kind, r.ts, r.detail)
        for r in result.trace.records(*kinds, operator="co_process")
    ]


def test_the_watermark_of_a_connected_stream_is_the_minimum_of_both_inputs() -> None:
    result = tagged(
        [("a", 100), ("a", 500), ("a", 900)], [0, 200, 400], [("b", 50), ("b", 300)], [0, 300]
    )
    assert [r.value for r in result.outputs["out"]] == [
        ("1", "a", 100, MIN),
        ("2", "b", 50, MIN),
        ("1", "a", 500, 49),  # input 1 is at 99, input 2 at 49
        ("2", "b", 300, 49),
        ("1", "a", 900, 299),  # input 1 at 499, input 2 at 299
    ]
    assert co_records(result, "channel_watermark", "watermark") == [
        (200, "channel_watermark", 99, (0, "input1")),  # min(99, MIN): nothing yet
        (200, "channel_watermark", 49, (1, "input2")),
        (200, "watermark", 49, "input"),
        (400, "channel_watermark", 499, (0, "input1")),
        (400, "channel_watermark", 299, (1, "input2")),
        (400, "watermark", 299, "input"),
        (400, "channel_watermark", 899, (0, "input1")),  # the end of input ...
        (400, "channel_watermark", MAX, (0, "input1")),
        (400, "channel_watermark", MAX, (1, "input2")),  # ... MAX only once both are there
        (400, "watermark", MAX, "input"),
    ]


def test_idle_inputs_drop_out_and_both_idle_make_the_operator_idle() -> None:
    result = tagged(
        [("a", 100), ("a", 500), ("a", 900), ("a", 1000)],
        [0, 200, 400, 1500],
        [("b", 50)],
        [0],
        a_idle=500,
        b_idle=300,
    )
    assert co_records(result, "watermark", "idle", "active", "channel_idle", "channel_active") == [
        (200, "watermark", 49, "input"),
        (800, "channel_idle", None, (1, "input2")),  # B: no record since 0, idle after 300 ms
        (800, "watermark", 899, "input"),  # now A alone counts
        (1400, "channel_idle", None, (0, "input1")),
        (1400, "idle", None, "co_process"),  # both idle: max(899, 49) = 899 is already out
        (1500, "channel_active", None, (0, "input1")),  # A's record at 1500
        (1500, "active", None, "co_process"),
        (1500, "watermark", 999, "input"),
        (1500, "watermark", MAX, "input"),  # end of input: A's MAX while B is still idle
        (1500, "channel_active", None, (1, "input2")),
    ]
    assert result.outputs["out"][-1].value == ("1", "a", 1000, 899)


def test_the_combined_status_is_flinks_indexed_combined_watermark_status() -> None:
    """The same calls on Flink 2.3.0's IndexedCombinedWatermarkStatus.forInputsCount(2) give
    false, true/5, true/10, false/10 idle, false/10 active."""
    status = IndexedCombinedWatermarkStatus()
    assert status.update_watermark(0, 10) is False  # input 2 still at MIN
    assert status.update_watermark(1, 5) is True and status.combined == 5
    assert status.update_status(1, True) is True and status.combined == 10
    assert status.update_status(0, True) is False and status.all_idle
    assert status.combined == 10  # all idle: the maximum, 10, was already the combined one
    assert status.update_watermark(1, 7) is False  # active again, but below 10
    assert not status.all_idle and status.combined == 10


def test_a_non_keyed_co_process_function_cannot_set_timers() -> None:
    class Timer(wv.CoProcessFunction):
        def process_element1(self, value, ctx, out):
            ctx.timer_service().register_event_time_timer(5)

        def process_element2(self, value, ctx, out):
            pass

    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([1])
    a.connect(env.from_collection([2])).process(Timer()).sink_to("out")
    with pytest.raises(
        UnsupportedOperationError, match="Setting timers is only supported on a keyed streams"
    ):
        env.execute()


def test_connect_checks_its_arguments() -> None:
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([1])
    with pytest.raises(InputError, match="connect needs a DataStream"):
        a.connect([2])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="process_element1"):
        a.connect(a).process(object())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="key_selector2"):
        a.connect(a).key_by(lambda x: x, "not callable")  # type: ignore[arg-type]


class PaymentCheck(wv.KeyedCoProcessFunction):
    """Orders (input 1) wait 100 ms of event time for their payment (input 2)."""

    def process_element1(self, order, ctx, out):
        ctx.update_state("order", order)
        ctx.timer_service().register_event_time_timer(order[1] + 100)

    def process_element2(self, payment, ctx, out):
        order = ctx.state("order")
        if order is not None:
            out.collect(("paid", ctx.get_current_key(), order[1], payment[1]))
            ctx.update_state("order", None)
            ctx.timer_service().delete_event_time_timer(order[1] + 100)

    def on_timer(self, timestamp, ctx, out):
        if ctx.state("order") is not None:
            out.collect(("unpaid", ctx.get_current_key(), timestamp))
            ctx.update_state("order", None)


def payments(parallelism: int) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment().set_parallelism(parallelism)
    orders = env.from_collection(
        [("alice", 100), ("bob", 150), ("carol", 200), ("dave", 400)],
        arrival_times=[0, 50, 100, 300],
        name="orders",
    ).assign_timestamps_and_watermarks(strategy())
    paid = env.from_collection(
        [("bob", 180), ("alice", 260), ("carol", 330)],
        arrival_times=[60, 120, 250],
        name="payments",
    ).assign_timestamps_and_watermarks(strategy())
    (
        orders.connect(paid)
        .key_by(lambda o: o[0], lambda p: p[0])
        .process(PaymentCheck())
        .sink_to("out")
    )
    return env


def test_keyed_connect_shares_state_and_timers_of_a_key_across_both_inputs() -> None:
    result = payments(2).execute()
    assert [(r.value, r.timestamp, r.processing_time) for r in result.outputs["out"]] == [
        (("paid", "bob", 150, 180), 180, 60),
        (("paid", "alice", 100, 260), 260, 120),
        (("paid", "carol", 200, 330), 330, 250),
        (("unpaid", "dave", 500), 500, 300),  # dave's timer fires at the final MAX
    ]
    # both inputs of a key meet in the subtask that owns its key group (alice, bob and dave
    # on subtask 1, carol on 0 — wv.assign_key_to_subtask(key, 2))
    seen = {(r.key, r.operator) for r in result.trace.records("element")}
    assert seen == {
        ("alice", "co_process#1"),
        ("bob", "co_process#1"),
        ("carol", "co_process#0"),
        ("dave", "co_process#1"),
    }
    for key, op in seen:
        assert op == f"co_process#{wv.assign_key_to_subtask(key, 2)}"
    # input 1 is min(orders' two watermark subtasks), input 2 min(payments' two)
    assert [
        (r.proc_time, r.ts) for r in result.trace.records("watermark", operator="co_process#0")
    ] == [(200, 149), (300, 179), (300, 259), (300, MAX)]


def test_keyed_connect_survives_a_failure_after_a_checkpoint() -> None:
    expected = payments(2).execute()
    for cut in range(8):
        for fail in range(cut, 8):
            env = payments(2).enable_checkpointing(at_records=[cut])
            result = env.execute(fail_at=fail)
            assert result.outputs == expected.outputs
            assert result.metrics == expected.metrics


def test_one_subtask_gives_the_same_results() -> None:
    one = payments(1).execute()
    two = payments(2).execute()
    assert sorted(map(repr, one.outputs["out"])) == sorted(map(repr, two.outputs["out"]))
    assert one.trace.kinds().get("exchange") is None


def test_both_inputs_idle_flush_the_larger_watermark_first() -> None:
    """Flink 2.3's CombinedWatermarkStatus: with every input idle the combined watermark is the
    maximum over all inputs (tests/flink found it: input 1 at 2, input 2 at 5 and idle, then
    input 1 idle -> watermark 5, then IDLE)."""
    status = IndexedCombinedWatermarkStatus()
    assert status.update_watermark(0, 2) is False
    assert status.update_watermark(1, 5) is True and status.combined == 2
    assert status.update_status(1, True) is False and status.combined == 2
    assert status.update_status(0, True) is True and status.combined == 5 and status.all_idle


class _Opened:
    """Records every ``open(ctx)`` call, and emits how many it saw and whether its ctx is the
    one of the element."""

    def open(self, ctx):
        self.opened = [*getattr(self, "opened", []), ctx]

    def _emit(self, ctx, out):
        out.collect((len(self.opened), self.opened[0] is ctx))


class _OpenedProcess(_Opened, wv.KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        self._emit(ctx, out)


class _OpenedCo(_Opened, wv.KeyedCoProcessFunction):
    def process_element1(self, value, ctx, out):
        self._emit(ctx, out)

    process_element2 = process_element1


class _OpenedJoin(_Opened, wv.ProcessJoinFunction):
    def process_element(self, left, right, ctx, out):
        self._emit(ctx, out)


@pytest.mark.parametrize("kind", ["process", "co_process", "keyed_co_process", "interval_join"])
def test_a_process_function_is_opened_once_with_its_context(kind: str) -> None:
    """Flink's ``AbstractUdfStreamOperator.open``: the function's ``open`` runs once per
    subtask, before the first record, with the context its methods get."""
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([("k", 1)], arrival_times=[0]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    b = env.from_collection([("k", 2)], arrival_times=[1]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    key = lambda e: e[0]  # noqa: E731
    if kind == "process":
        out = a.key_by(key).process(_OpenedProcess())
    elif kind == "interval_join":
        out = a.key_by(key).interval_join(b.key_by(key)).between(0, 5).process(_OpenedJoin())
    else:
        connected = a.connect(b)
        if kind == "keyed_co_process":
            connected = connected.key_by(key, key)
        out = connected.process(_OpenedCo())
    out.sink_to("out")
    expected = {"process": [(1, True)], "interval_join": [(1, True)]}
    assert [r.value for r in env.execute().outputs["out"]] == expected.get(kind, [(1, True)] * 2)
