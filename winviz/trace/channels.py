"""The input channels of an operator, read off the trace (the one place this rule lives).

An operator with several inputs (Flink's ``WatermarkOutputMultiplexer`` over a source's
splits, or ``StatusWatermarkValve`` behind an input gate) writes ``channel_watermark`` when a
channel's watermark increases and ``channel_idle`` / ``channel_active`` when its status
changes; every channel starts active at ``Long.MIN_VALUE``. A channel that never rose above
MIN nor went idle writes no record at all, yet the trace shows it: the operator's watermark
is the minimum over its active channels, so when every channel the trace names is active and
above it, some other channel holds it at MIN (``unrecorded_channel``). When the channels
named are exactly ``source[0]`` … ``source[k-1]``, the silent one is ``source[k]``; else it
is ``UNRECORDED`` (the trace cannot tell how many are silent: at least one).

A ``restore`` puts every channel back active at MIN: watermarks and the valve's channel statuses
are not checkpointed (a restored ``StatusWatermarkValve`` starts each channel anew).

Alignment (``StatusWatermarkValve``, ``winviz.valve``): a channel of an input gate that becomes
active again below the valve's last output is not *aligned*: the minimum leaves it out until a
watermark of it reaches that output. A ``WatermarkOutputMultiplexer`` over a source's partitions
(inputs ``source[p]``) and a two-input operator's ``CombinedWatermarkStatus`` (inputs ``input1`` /
``input2``) know no alignment: every active input is in their minimum.

A two-input operator ``op`` whose input k comes over several channels has a valve per input gate
before that minimum (Flink's ``StreamTwoInputProcessorFactory`` builds one ``StatusWatermarkValve``
per ``CheckpointedInputGate``; its output is ``processWatermark1`` / ``2``). The gate's channels
write under the gate's name, ``"op/input1"`` / ``"op/input2"`` (the runtime's: channel j of the
gate, input the upstream subtask), with the gate's watermark (what its valve last emitted, which
``op``'s ``inputk`` record shows), so a gate channel is judged aligned against its gate's output,
never against ``op``'s combined watermark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from winviz.time import MAX, MIN
from winviz.trace.schema import TraceRecord, split_subtask

CHANNEL_KINDS = ("channel_watermark", "channel_idle", "channel_active")
"""The kinds of an input channel's records (its watermark, idle, active)."""
COMBINED_INPUTS = ("input1", "input2")
"""The inputs of a two-input operator's ``CombinedWatermarkStatus`` (channel 0 and 1)."""
UNRECORDED = "an input without records"
_PARTITION = re.compile(r"^(.*)\[(\d+)\]$")


@dataclass(frozen=True)
class Channel:
    """One input channel or partition of an operator as it stood: its watermark (MIN before
    its first or since a restore), whether it is idle, when its watermark last advanced (None:
    not since the start or ``restored_at``, the processing time of the restore that reset it)."""

    operator: str
    channel: int | None
    input: str
    watermark: int
    idle: bool
    last_advanced: int | None
    idle_seen: bool = False  # the trace shows it idle at some time so far
    restored_at: int | None = None
    aligned: bool = True  # in the minimum when active (module docstring: alignment)


def channel_states(records: Iterable[TraceRecord]) -> dict[tuple[str, int], Channel]:
    """Each channel's state after ``records`` (of ``CHANNEL_KINDS`` and ``restore``, in seq
    order), by (operator, channel): a two-input operator's gate channel by (its gate,
    channel), as its records name it. The valve's last output, which an active channel must
    reach to be aligned, is the record's ``watermark`` field (its writer's: the operator's, or
    for a gate channel the gate's)."""
    state: dict[tuple[str, int], Channel] = {}
    for r in records:
        if r.kind == "restore":
            state = {
                at: replace(
                    ch,
                    watermark=MIN,
                    idle=False,
                    last_advanced=None,
                    restored_at=r.proc_time,
                    aligned=True,
                )
                for at, ch in state.items()
            }
            continue
        channel, name = r.detail
        at = (r.operator, int(channel))
        ch = state.get(at) or Channel(r.operator, int(channel), str(name), MIN, False, None)
        output = MIN if r.watermark is None else r.watermark
        if r.kind == "channel_watermark":
            aligned = ch.aligned or r.ts >= output or not _valve_input(ch)
            state[at] = replace(ch, watermark=r.ts, last_advanced=r.proc_time, aligned=aligned)
        else:
            idle = r.kind == "channel_idle"
            aligned = ch.aligned if idle else ch.watermark >= output or not _valve_input(ch)
            state[at] = replace(ch, idle=idle, idle_seen=ch.idle_seen or idle, aligned=aligned)
    return state


def gate_owner(operator: str) -> str | None:
    """The two-input operator whose input gate writes as ``operator`` (``"co"`` for
    ``"co/input1"``, module docstring), else None."""
    owner, _, side = operator.rpartition("/")
    return owner if owner and side in COMBINED_INPUTS else None


def _valve_input(ch: Channel) -> bool:
    """Whether ``ch`` is a channel of an input gate (a ``StatusWatermarkValve``, which aligns),
    not a partition of a ``WatermarkOutputMultiplexer`` nor an input of a two-input operator."""
    m = _PARTITION.match(ch.input)
    partition = m is not None and int(m.group(2)) == ch.channel
    return not partition and ch.input not in COMBINED_INPUTS


@dataclass(frozen=True)
class UnrecordedChannel:
    """A channel no record names, at MIN throughout: its index and name when the naming tells
    them (else None and ``UNRECORDED``), and the first processing time it holds back."""

    channel: int | None
    input: str
    since: int


def unrecorded_channel(
    operator: str,
    records: Iterable[tuple[int, str, int | None, int | None, int | None, int | None, Any]],
    *,
    sink: bool = False,
) -> UnrecordedChannel | None:
    """The channel of ``operator`` that wrote no record, if the trace shows one. ``records``:
    its channel, ``watermark`` and ``restore`` records in seq order as ``(seq, kind,
    proc_time, value, watermark, channel, input)`` (value: the ``channel_watermark``'s ``ts`` /
    the watermark record's watermark). A ``sink`` writes no ``watermark`` records: its watermark
    is read at its next channel record's ``watermark`` field (its last processing time is not
    judged)."""
    records = list(records)
    names: dict[int, str] = {}  # every channel a record names, at any time
    for _seq, kind, _proc, _value, _wm, channel, name in records:
        if kind != "watermark" and channel is not None:
            names.setdefault(channel, str(name))
    marks: dict[int, int] = {}  # channel -> its watermark (MIN before its first record)
    idle: dict[int, bool] = {}
    own = MIN  # the operator's watermark (its watermark records)

    def holds(own: int) -> bool:
        """Every active named channel is above ``own`` (below MAX: the end of input)."""
        active = [marks.get(ch, MIN) for ch in names if not idle.get(ch, False)]
        return bool(active) and own < min(active) and own != MAX

    n = len(records)
    later_wm: list[int | None] = [None] * n  # the next channel record's watermark field
    following: int | None = None
    for i in range(n - 1, -1, -1):
        later_wm[i] = following
        if records[i][1] not in ("watermark", "restore"):
            following = records[i][4]
    for i, (_seq, kind, proc, value, _wm, channel, _name) in enumerate(records):
        if kind == "restore":
            marks, idle, own = {}, {}, MIN
        elif kind == "watermark":
            if value is not None:
                own = value
        elif channel is not None:
            if kind == "channel_watermark" and value is not None:
                marks[channel] = value
            elif kind == "channel_idle":
                idle[channel] = True
            elif kind == "channel_active":
                idle[channel] = False
        if i + 1 < n and records[i + 1][2] == proc:
            continue  # (judged after the last record of this processing time)
        later = later_wm[i]
        if not sink:
            now = own if later is None else max(own, later)
        elif later is not None:
            now = later
        else:
            continue
        if proc is not None and holds(now):
            return UnrecordedChannel(*_next_partition(operator, names), since=proc)
    return None


def _next_partition(operator: str, names: dict[int, str]) -> tuple[int | None, str]:
    """(k, "source[k]") when the channels are ``source[0]`` … ``source[k-1]`` of a
    non-subtask; else (None, ``UNRECORDED``)."""
    if split_subtask(operator)[1] is not None or sorted(names) != list(range(len(names))):
        return None, UNRECORDED
    prefixes = set()
    for channel, name in names.items():
        m = _PARTITION.match(name)
        if m is None or int(m.group(2)) != channel:
            return None, UNRECORDED
        prefixes.add(m.group(1))
    if len(prefixes) != 1:
        return None, UNRECORDED
    k = len(names)
    return k, f"{prefixes.pop()}[{k}]"
