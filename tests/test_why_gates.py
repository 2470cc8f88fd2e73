"""why_not_fired behind a two-input operator whose inputs come over several channels. Flink
gives each input gate its own ``StatusWatermarkValve`` (``StreamTwoInputProcessorFactory``:
``new StatusWatermarkValve(checkpointedInputGates[0])`` and ``[1]``), whose outputs go to
``processWatermark1`` / ``2`` and are combined there (``IndexedCombinedWatermarkStatus``); the
engine does the same (``CoInputGate`` per input, ``runtime._wire``). A gate channel back from
idle is aligned against its own gate's output, never against the operator's combined watermark
(``winviz.trace.channels``). Each claim is checked against the engine: re-run without the named
cause, and the fold replayed through the engine's own ``StatusWatermarkValve``."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from jobs import bounded
from test_viz_propagation import channel_steps, data, steps

import winviz as wv
from winviz.time import MIN
from winviz.trace.channels import CHANNEL_KINDS, channel_states
from winviz.valve import StatusWatermarkValve
from winviz.viz.propagation import propagation_chart
from winviz.viz.stages import stage_watermark_table
from winviz.why import Answer

# (timestamp, arrival) of each record of key "a", per partition
LEFT = [
    [(1000, 0), (3000, 1500)],
    [(1500, 0)] + [(5000 + 100 * i, 1000 + 200 * i) for i in range(6)],
]
RIGHT = [[(500, 0), (2000, 1000), (2100, 2500)]]


class _Forward(wv.KeyedCoProcessFunction):
    """Passes every record of either input on."""

    def process_element1(self, value: Any, ctx: Any, out: Any) -> None:
        out.collect(value)

    def process_element2(self, value: Any, ctx: Any, out: Any) -> None:
        out.collect(value)


def _connected(left: list, right: list, right_idleness: int | None = None) -> wv.Trace:
    """Two partitioned sources, "left" (idleness 300 ms) and "right", one subtask per partition
    (bound 0), into the keyed co-process "co" (parallelism 1: a side with several subtasks
    comes over an input gate of as many channels), then a count per 2 s window ("window")."""
    env = wv.StreamExecutionEnvironment()

    def side(parts: list, name: str, idleness: int | None) -> wv.DataStream:
        strategy = bounded(0) if idleness is None else bounded(0).with_idleness(idleness)
        return (
            env.from_partitions(
                [[("a", ts) for ts, _ in p] for p in parts],
                arrival_times=[[at for _, at in p] for p in parts],
                name=name,
            )
            .assign_timestamps_and_watermarks(strategy)
            .set_parallelism(len(parts))
        )

    (
        side(left, "left", 300)
        .connect(side(right, "right", right_idleness))
        .key_by(lambda e: e[0], lambda e: e[0])
        .process(_Forward())
        .name("co")
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(2000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


def _rows(answer: Answer) -> list[tuple]:
    """The channel table's rows: operator, channel, input, watermark, aligned."""
    table = answer.table
    return [
        tuple(row) for row in table[["operator", "channel", "input", "watermark", "aligned"]].values
    ]


def test_a_gate_channel_back_below_its_gate_above_the_other_side_holds_nothing_back() -> None:
    """At 1900 'co' is at 1999: input2 (right) is at 1999, input1's gate at 5299. watermarks#0
    (channel 0 of input1's gate) came back from idle at 1600 at 2999: above the other side's
    1999 but below its own gate's output 5199, so Flink's valve leaves it out of that gate's
    minimum. The answer names input2; the re-run that raises only the right side (4500 at
    1700) fires the window at 1800 with watermarks#0 still active, unaligned, at 2999."""
    answer = wv.why_not_fired(_connected(LEFT, RIGHT).until(1900), "a", (2000, 4000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at 1999, below the window's max timestamp 3999: it "
        "fires once the watermark ≥ 3999. The minimum is held by input2 (channel 1 of 'co') at "
        "1999, last advanced at processing time 1200; it is not idle, so it holds everyone "
        "back: once it is marked idle the other inputs advance the watermark to 5299. "
        "with_idleness(t) marks an input idle after t ms without records (the trace records no "
        "idleness timeout for it and shows no idle input on its side; its later records may "
        "then be late)."
    )
    assert _rows(answer) == [
        ("watermarks#0", 0, "left[0]", "2999", True),
        ("co/input1", 0, "watermarks#0", "2999", False),
        ("watermarks#1", 1, "left[1]", "5299", True),
        ("co/input1", 1, "watermarks#1", "5299", True),
        ("co", 0, "input1", "5299", True),
        ("watermarks_2", 0, "right[0]", "1999", True),
        ("co", 1, "input2", "1999", True),
    ]
    raised = [[(500, 0), (2000, 1000), (4500, 1700)]]  # the named cause removed
    trace = _connected(LEFT, raised)
    (fired,) = trace.records("fired", operator="window", key="a", window=(2000, 4000))
    assert (fired.proc_time, fired.watermark) == (1800, 4499)
    before = [r for r in trace.records(*CHANNEL_KINDS, "restore") if r.seq < fired.seq]
    states = channel_states(before)
    ch = states[("co/input1", 0)]
    assert (ch.input, ch.watermark, ch.idle, ch.aligned) == ("watermarks#0", 2999, False, False)
    assert states[("co", 1)].watermark == 4499


def test_idleness_is_judged_on_the_holders_side() -> None:
    """Both sides with idleness 300 ms; right delivers ts 2000 every 200 ms (never idle by
    1900): its idleness timeout (watermarks_2, the side of input2) would mark it idle, the
    left side's idle channels say nothing of it. Re-run with right silent after 1000: input2
    goes idle at 1800 and 'co' rises to 5299 at once, firing [2000, 4000)."""
    steady = [[(500, 0)] + [(2000, 200 * i) for i in range(1, 13)] + [(2100, 2700)]]
    answer = wv.why_not_fired(_connected(LEFT, steady, 300).until(1900), "a", (2000, 4000))
    assert answer.sentence.endswith(
        "The minimum is held by input2 (channel 1 of 'co') at 1999, last advanced at "
        "processing time 400; it is not idle, so it holds everyone back; once the job's "
        "idleness timeout marks it idle, the other inputs raise the watermark to 5299."
    )
    silent = [[(500, 0)] + [(2000, 200 * i) for i in range(1, 6)] + [(2100, 2700)]]
    trace = _connected(LEFT, silent, 300)
    (fired,) = trace.records("fired", operator="window", key="a", window=(2000, 4000))
    assert (fired.proc_time, fired.watermark) == (1800, 5299)
    idle = trace.where(operator=["co", "co/input1"]).records("channel_idle")
    assert [(r.proc_time, r.operator, r.detail) for r in idle if r.seq < fired.seq] == [
        (800, "co/input1", (0, "watermarks#0")),
        (800, "co/input1", (1, "watermarks#1")),
        (800, "co", (0, "input1")),
        (1800, "co", (1, "input2")),
    ]


def test_a_gate_channel_at_its_gates_output_below_the_other_side_is_aligned() -> None:
    """input1's gate went idle at 800 (flushing 1499); right raised 'co' to 5999. At 1600
    watermarks#0 came back at 999 (below 1499: not aligned) and advanced to 2999, at or above
    its gate's output 1499: aligned again, though below 'co''s 5999. Its gate emits 2999 and
    input1 holds 'co' with input2: neither alone."""
    left = [[(1000, 0), (3000, 1500)], [(1500, 0)]]
    right = [[(500, 0), (6000, 1000), (6100, 2500)]]
    cut = _connected(left, right).until(1900)
    answer = wv.why_not_fired(cut, "a", (6000, 8000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at 5999, below the window's max timestamp 7999: it "
        "fires once the watermark ≥ 7999. No single input holds it: input1 (channel 0 of 'co') "
        "at 2999, input2 (channel 1 of 'co') at 5999 are all active and below 7999; it fires "
        "once each of them reaches it or goes idle."
    )
    assert _rows(answer)[1] == ("co/input1", 0, "watermarks#0", "2999", True)
    input1 = [
        r for r in cut.records("channel_watermark", operator="co") if r.detail == (0, "input1")
    ]
    assert [r.ts for r in input1] == [999, 1499, 2999]  # what input1's gate emitted


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (LEFT, RIGHT),
        ([[(1000, 0), (3000, 1500)], [(1500, 0)]], [[(500, 0), (6000, 1000), (6100, 2500)]]),
        (
            [[(1000, 0), (3000, 1500)], [(1500, 0)]],
            [[(500, 0), (6000, 1000), (6100, 2500)], [(600, 0), (6050, 1000)]],
        ),
    ],
)
def test_the_fold_is_the_engines_valve_of_each_gate_at_every_record(left, right) -> None:
    """Each gate's channel records fed to the engine's ``StatusWatermarkValve`` (the gate's
    inputs, in order): after every record the fold's watermark, idle and (when active) aligned
    of each gate channel are the valve's, and the gate's output is the ``inputk`` record that
    follows."""
    idle = 300 if len(right) > 1 else None
    records = _connected(left, right, idle).records(*CHANNEL_KINDS, "restore")
    gate_of = {(r.operator, r.detail) for r in records if r.operator.startswith("co/")}
    assert {gate for gate, _ in gate_of} == {"co/input1"} | (
        {"co/input2"} if len(right) > 1 else set()
    )
    valves: dict[str, StatusWatermarkValve] = {}
    written: dict[str, set[int]] = {}  # the channels of each gate that wrote a record so far
    compared = 0
    sizes = {g: sum(1 for v, _ in gate_of if v == g) for g, _ in gate_of}
    for i, r in enumerate(records):
        gate = r.operator
        if gate not in sizes:
            continue
        valve = valves.setdefault(gate, StatusWatermarkValve(sizes[gate]))
        channel = r.detail[0]
        if r.kind == "channel_watermark":
            valve.input_watermark(r.ts, channel)
        elif r.kind == "channel_idle":
            valve.input_idle(channel)
        else:
            valve.input_active(channel)
        for what, value in valve.drain():  # what the gate emits: its inputk record, next
            if what == "watermark":
                after = records[i + 1]
                assert (after.kind, after.detail[1], after.ts) == (
                    "channel_watermark",
                    gate.split("/")[1],
                    value,
                )
        written.setdefault(gate, set()).add(channel)
        folded = channel_states(records[: i + 1])
        for j in sorted(written[gate]):  # (aligned: in the minimum when active; idle: never)
            ch, status = folded[(gate, j)], valve.channels[j]
            assert (ch.watermark, not ch.idle, ch.aligned or ch.idle) == (
                status.watermark,
                status.active,
                status.aligned or not status.active,
            ), (r.seq, gate, j)
            compared += 1
    assert compared >= 10, compared


def test_the_stage_table_reads_the_two_inputs_of_co_from_the_same_fold() -> None:
    """viz/stages reads ``channel_states`` too: 'co''s channels are its two inputs (input1 at
    its gate's output 5299, input2 holding the minimum at 1999), not its gate channels folded
    over them (before: channel 1 'watermarks#1' at 5299, nothing at 1999)."""
    table = stage_watermark_table(_connected(LEFT, RIGHT), 1900)
    co = table.channels[table.channels["operator"] == "co"]
    assert [tuple(row) for row in co.values] == [
        ("co", 0, "input1", 5299, False, False),
        ("co", 1, "input2", 1999, False, True),
    ]


def test_before_cos_first_input_record_a_gate_channel_is_its_gates() -> None:
    """left's partition 1 and right deliver from 500: at 300 only watermarks#0 (channel 0 of
    input1's gate) has a watermark, 999; neither the gate nor 'co' has emitted (no input1 /
    input2 record yet). The trace names the gate from its first record: the channel is
    'co/input1''s, beside that gate's channel without records (watermarks#1, at MIN), never
    'co''s own (before: ('co', 0, 'watermarks#0') and a silent input of 'co'; the stage table
    gave 'co' a channel 0 at 999)."""
    late = _connected([[(1000, 0), (3000, 1500)], [(1500, 500)]], [[(500, 500), (2500, 1000)]])
    cut = late.until(300)
    assert not cut.records(*CHANNEL_KINDS, operator="co")
    answer = wv.why_not_fired(cut, "a", (0, 2000))
    assert _rows(answer) == [
        ("watermarks#0", 0, "left[0]", "999", True),
        ("co/input1", 0, "watermarks#0", "999", True),
        ("co/input1", pd.NA, "an input without records", "MIN", True),
    ]
    table = stage_watermark_table(late, 300)
    assert [tuple(row) for row in table.channels.values] == [
        ("watermarks#0", 0, "left[0]", 999, False, True)
    ]
    co = table.operators[table.operators["operator"] == "co"]
    assert [tuple(row) for row in co[["input_watermark", "upstream"]].values] == [
        (MIN, ("watermarks#0", "watermarks#1"))
    ]


def test_the_propagation_panels_of_co_and_of_its_gate() -> None:
    """'co''s panel draws its two inputs and its minimum, nothing else (before: its gate's
    channels watermarks#0 / #1 as its own and an invented input without records at MIN, 5
    channels); the gate's panel ('co/input1', a panel of the default chart) draws its two
    channels and, thick, its output: 'co''s input1 record, idle with it."""
    cut = _connected(LEFT, RIGHT).until(1900)
    spec = propagation_chart(cut, operator="co").to_dict()
    assert spec["usermeta"]["winviz"]["notes"][1] == (
        "operator 'co': 2 input channel(s), 1 channel idle period(s)"
    )
    assert channel_steps(spec) == {
        "input1": [
            (200, 999), (800, 999), (800, 1499), (1200, 1499), (1200, 1999), (1200, 4999),
            (1400, 4999), (1400, 5099), (1600, 5099), (1600, 5199), (1800, 5199), (1800, 5299),
        ],
        "input2": [(200, 499), (1200, 499), (1200, 1499), (1200, 1999), (1800, 1999)],
    }  # fmt: skip
    default = propagation_chart(cut).to_dict()
    assert [p["title"]["text"] for p in default["vconcat"]][2:4] == [
        "input gate 'co/input1': 2 input channel(s), 2 channel idle period(s), "
        "idle itself 1 time(s)",
        "operator 'co': 2 input channel(s), 1 channel idle period(s)",
    ]
    gate = default["vconcat"][2]
    assert channel_steps({**default, "layer": gate["layer"]}) == {
        "watermarks#0": [(200, 999), (1600, 999), (1600, 2999), (1800, 2999)],
        "watermarks#1": [
            (200, 1499), (1200, 1499), (1200, 4999), (1400, 4999), (1400, 5099), (1600, 5099),
            (1600, 5199), (1800, 5199), (1800, 5299),
        ],
    }  # fmt: skip
    thick = [lay for lay in gate["layer"] if lay["mark"].get("strokeWidth") == 3.5]
    assert [steps(default, lay) for lay in thick] == [
        {
            "watermark of 'co/input1'": [
                (200, 999), (800, 999), (800, 1499), (1200, 1499), (1200, 4999), (1400, 4999),
                (1400, 5099), (1600, 5099), (1600, 5199), (1800, 5199), (1800, 5299),
                (1800, 5299),
            ]
        }
    ]  # fmt: skip


def test_before_cos_first_input_record_the_window_is_held_by_both_inputs_of_co() -> None:
    """At 300 (the job of the test above) 'window' has no watermark and 'co' no input record:
    both of 'co''s inputs are at MIN (before: "The operator has one input: no later event raised
    the generator's watermark", false: the window's input is 'co'). input1 is its gate's output,
    held by the gate's channel without records (watermarks#1). Re-runs: left's partition 1 from
    0 raises input1 only, right from 0 input2 only, 'window' stays at MIN; both raise it."""

    def at_300(left1: int, right: int) -> wv.Trace:
        left = [[(1000, 0), (3000, 1500)], [(1500, left1)]]
        return _connected(left, [[(500, right), (2500, 1000)]]).until(300)

    answer = wv.why_not_fired(at_300(500, 500), "a", (0, 2000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at MIN, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. No single input holds it: input1 (channel 0 of 'co') "
        "at MIN, input2 (channel 1 of 'co') at MIN are all active and below 1999; it fires once "
        "each of them reaches it or goes idle. input1 is the output of input gate 'co/input1', "
        "which has emitted nothing yet: its minimum is held by an input without records (a "
        "channel of 'co/input1' that wrote no record) at MIN."
    )
    raised = {}
    for left1, right in [(0, 500), (500, 0), (0, 0)]:  # the named causes removed
        cut = at_300(left1, right)
        co = [(r.ts, r.detail) for r in cut.records("channel_watermark", operator="co")]
        window = [r.ts for r in cut.records("watermark", operator="window")]
        raised[(left1, right)] = (co, window)
    assert raised == {
        (0, 500): ([(999, (0, "input1"))], []),
        (500, 0): ([(499, (1, "input2"))], []),
        (0, 0): ([(999, (0, "input1")), (499, (1, "input2"))], [499]),
    }


def test_the_strip_of_an_idle_input_gate_says_input_gate_idle() -> None:
    """The grey strip along the top of 'co/input1''s panel is the gate's idle (both its
    channels idle from 800), not an operator's (before: "operator idle"); a source subtask's
    panel keeps "operator idle"."""
    default = propagation_chart(_connected(LEFT, RIGHT).until(1900)).to_dict()
    labels = [
        [lay["encoding"]["text"]["value"] for lay in p["layer"] if lay["mark"]["type"] == "text"]
        for p in default["vconcat"][:3]
    ]
    assert labels == [["operator idle"], ["operator idle"], ["input gate idle"]]
    (strip,) = [
        lay for lay in default["vconcat"][2]["layer"] if lay["encoding"].get("y2") == {"value": 8}
    ]
    assert [(d["line"], d["x"], d["idle from"]) for d in data(default, strip)] == [
        ("watermark of 'co/input1'", 800, "800 ms")
    ]
