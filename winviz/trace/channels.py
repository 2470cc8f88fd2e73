"""The input channels of an operator, read off the trace (the one place this rule lives).

An operator with several inputs — a partitioned source's watermark operator (Flink's
``WatermarkOutputMultiplexer`` over the per-split watermarks) or an operator behind an input
gate (Flink's ``StatusWatermarkValve``) — writes ``channel_watermark`` records when a channel's
watermark *increases*, and ``channel_idle`` / ``channel_active`` when its status changes. Every
channel starts at ``Long.MIN_VALUE`` (``winviz.time.MIN``), active. So:

* a channel's watermark is MIN until its first ``channel_watermark`` record;
* a channel that never delivered a watermark above MIN and never went idle — a partition that
  got no elements, without ``with_idleness`` — writes **no record at all** before the end of
  input. The trace still shows it: the operator's own watermark (its ``watermark`` records,
  MIN before the first; a sink's: the ``watermark`` field of its next channel record) is the
  minimum over its active channels, so when, after the records of a processing time, every
  channel the trace names is active and above the operator's watermark, some other channel
  holds it there — at MIN, as it never wrote.

``unrecorded_channel`` applies this to one operator's records; ``winviz.why`` (which input holds a
stuck watermark) and ``winviz.viz.propagation`` (its line, held at MIN) read it.

Naming the channel that wrote nothing: a single (non-parallel) partitioned source names its
partitions ``source[0]`` … ``source[n-1]`` with channel = partition; when the channels named
are exactly 0 … k-1 in that form, the first silent one is ``source[k]``. Otherwise its index
and name are not in the trace and it is called ``UNRECORDED``. Either way the trace cannot
tell how many channels are silent: at least one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from winviz.time import MAX, MIN
from winviz.trace.schema import split_subtask

CHANNEL_KINDS = ("channel_watermark", "channel_idle", "channel_active")
"""The kinds of an input channel's records (its watermark, idle, active)."""
UNRECORDED = "an input without records"
_PARTITION = re.compile(r"^(.*)\[(\d+)\]$")


@dataclass(frozen=True)
class UnrecordedChannel:
    """A channel no record names, known from the operator's watermark staying below every
    named channel: its watermark is MIN throughout. ``channel`` and ``input`` are its index
    and name when the naming tells them (``source[k]``), else None and ``UNRECORDED``.
    ``since``: the first processing time at which the trace shows it holding the operator
    back."""

    channel: int | None
    input: str
    since: int


def unrecorded_channel(
    operator: str,
    records: Iterable[tuple[int, str, int | None, int | None, int | None, int | None, Any]],
    *,
    sink: bool = False,
) -> UnrecordedChannel | None:
    """The channel of ``operator`` that wrote no record, if the trace shows one (see the
    module docstring). ``records``: the operator's channel records and ``watermark`` records
    in seq order, each ``(seq, kind, proc_time, value, watermark, channel, input)`` — value is
    the ``channel_watermark``'s ``ts`` / the ``watermark`` record's watermark (None
    otherwise), watermark the record's ``watermark`` field (the operator's watermark when it
    was written), channel and input the channel records' detail (None for ``watermark``
    records).

    The operator's watermark after a processing time's records is its last ``watermark``
    record (MIN before the first). A ``sink`` (an operator that wrote ``sink`` records)
    writes no ``watermark`` records: its watermark is read at its next channel record's
    ``watermark`` field (it changes only on its channels' input), so a sink's last
    processing time is not judged."""
    records = list(records)
    names: dict[int, str] = {}  # every channel a record names, at any time
    for _seq, kind, _proc, _value, _wm, channel, name in records:
        if kind != "watermark" and channel is not None:
            names.setdefault(channel, str(name))
    marks: dict[int, int] = {}  # channel -> its watermark (MIN before its first record)
    idle: dict[int, bool] = {}
    own = MIN  # the operator's watermark (its watermark records)

    def holds(own: int) -> bool:
        """An active channel among those the trace names (a channel named only later is at
        MIN until then), all of them above the operator's watermark ``own`` (below MAX: the
        end of input overrides everything)."""
        active = [marks.get(ch, MIN) for ch in names if not idle.get(ch, False)]
        return bool(active) and own < min(active) and own != MAX

    n = len(records)
    later_wm: list[int | None] = [None] * n  # the next channel record's watermark field
    following: int | None = None
    for i in range(n - 1, -1, -1):
        later_wm[i] = following
        if records[i][1] != "watermark":
            following = records[i][4]
    for i, (_seq, kind, proc, value, _wm, channel, _name) in enumerate(records):
        if kind == "watermark":
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
    """(k, "source[k]") when ``operator`` is not a subtask and its channels are exactly
    0 … k-1 named ``source[0]`` … ``source[k-1]``; else (None, ``UNRECORDED``)."""
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
