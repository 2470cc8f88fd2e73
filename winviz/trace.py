"""The trace: one typed record per thing that happens inside a run.

Every chart, lesson and comparison reads the trace, never the engine's internals. A record
carries a sequence number, the simulated processing time, the current watermark of the operator
that wrote it, the operator, the key, the window, a timestamp and a per-kind ``detail``.

Storage is one flat list (eight slots per record, values shared with the engine rather than
copied), which keeps a record at well under 200 bytes and appending cheap; ``TraceRecord``
objects are made only when someone reads. The engine's hottest paths may write a *packed*
entry instead: a ``Packed`` marker followed by its ``width`` values, standing for several
records at once (an element's arrival, assignment, timers and trigger call are one entry).
The first read unpacks every entry into plain records, in place and in order, so readers only
ever see records; ``len()`` counts records without unpacking. The same run always gives the
same trace, byte for byte: ``to_json()`` is canonical.

Kinds and their ``detail`` fields (``DETAIL_FIELDS``) form the documented schema, version
``SCHEMA_VERSION``.

Parallel subtasks: an operator ``op`` with parallelism ``n > 1`` runs as subtasks ``op#0`` …
``op#n-1`` and each writes under its own name (``split_subtask`` splits it again); with
parallelism 1 the name stays ``op``. Kinds added for parallel jobs (schema v1, additive):
``exchange`` (a record crossing a rebalance / key_by exchange). Two-input operators
(``connect``) write ``channel_watermark`` / ``channel_idle`` / ``channel_active`` with channel
0 / 1 and input ``"input1"`` / ``"input2"``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1

# kind -> names of the fields in its detail tuple (a single name: detail is that value itself)
DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "element": ("value",),  # a record arrived at the operator
    "arrival": ("value", "index"),  # a source record entered the job (input index)
    "watermark": ("input",),  # the operator's watermark advanced (input name)
    "watermark_generated": ("generator",),  # a watermark generator emitted a watermark
    "watermark_dropped": ("reason",),  # a non-increasing watermark was ignored
    "idle": ("input",),  # a source/channel was marked idle
    "active": ("input",),  # ... and active again
    "channel_watermark": ("channel", "input"),  # a watermark of one input channel / partition
    "channel_idle": ("channel", "input"),  # one input channel / partition became idle
    "channel_active": ("channel", "input"),  # ... and active again
    "assigned": ("value",),  # element put into a window
    "skipped_late_window": ("value",),  # element not added: the window is late
    "timer_registered": ("domain", "namespace", "deduplicated"),
    "timer_deleted": ("domain", "namespace", "existed"),
    "timer_fired": ("domain", "namespace"),
    "trigger": ("call", "result"),  # a trigger call and its TriggerResult
    "fired": ("result", "pane", "timing", "count"),  # window contents emitted
    "purged": ("reason",),
    "merged": ("merged_windows", "state_window"),
    "cleanup": ("cleanup_time",),
    "late_dropped": ("value",),  # counted in num_late_records_dropped
    "side_output": ("tag", "value"),
    "evicted": ("when", "values"),
    "emitted": ("value",),  # a record left the operator (main output)
    # a record crossed a rebalance / key_by exchange (written by the sending subtask; only
    # when one side has parallelism > 1): partitioner "rebalance" / "hash", the receiving
    # subtask, its channel index, the key group (hash only) and the record
    "exchange": ("partitioner", "target", "channel", "key_group", "value"),
    "sink": ("sink", "value"),  # a record reached a named sink
    "clock": ("reason",),  # the simulated processing clock moved
    "batch": ("batch_id", "input_rows", "late_watermark", "max_event_time", "dropped"),
    "checkpoint": ("checkpoint_id", "source_records", "positions"),  # a completed checkpoint
    "restore": ("checkpoint_id", "source_records", "positions", "failed_at"),  # after a failure
    "error": ("message",),
}


# the columns every row of to_pandas() starts with (detail fields follow)
FRAME_COLUMNS = (
    "seq",
    "kind",
    "proc_time",
    "watermark",
    "operator",
    "key",
    "window_start",
    "window_end",
    "ts",
)


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One thing that happened. ``window`` is a TimeWindow, GlobalWindow or None."""

    seq: int
    kind: str
    proc_time: int | None
    watermark: int | None
    operator: str
    key: Any
    window: Any
    ts: int | None
    detail: Any

    def details(self) -> dict[str, Any]:
        """The detail as a dict named by ``DETAIL_FIELDS``."""
        names = DETAIL_FIELDS.get(self.kind, ("detail",))
        if len(names) == 1:
            return {names[0]: self.detail}
        return dict(zip(names, self.detail, strict=True))


class Packed:
    """A marker for a packed entry: the ``width`` values that follow it in the storage stand
    for ``count`` records, which ``unpack`` writes out (eight values per record, exactly as
    separate ``emit`` calls would have). Subclasses live next to the code that writes them."""

    width: int = 0
    count: int = 0

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        """Append the records of the entry whose values start at ``values[at]`` to ``out``."""
        raise NotImplementedError

    def unpack_run(self, values: list[Any], start: int, n: int, out: list[Any]) -> None:
        """Append the records of ``n`` consecutive entries of this marker, the first one's
        marker at ``values[start]`` (a subclass may do it column by column)."""
        step = 1 + self.width
        for at in range(start + 1, start + n * step, step):
            self.unpack(values, at, out)


class Trace:
    """An append-only list of TraceRecords, stored flat: record ``i`` is the eight values at
    ``_data[8 * i : 8 * i + 8]`` (kind, proc_time, watermark, operator, key, window, ts,
    detail). One ``extend`` per record is the cheapest append CPython has, and eight list
    slots (64 bytes) plus shared values keep a record well under 200 bytes.

    A writer that appends a packed entry (a ``Packed`` marker and its values) calls
    ``packed(marker, n)`` for the ``n`` entries it wrote; every reader goes through
    ``_unpack`` first, which replaces them by their records (the list object stays the same:
    writers hold it)."""

    __slots__ = ("_data", "_packed_records", "_packed_slots", "_plain")

    schema_version = SCHEMA_VERSION
    WIDTH = 8
    FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")

    def __init__(self) -> None:
        self._data: list[Any] = []
        self._plain = 0  # the storage holds only plain records up to this slot
        self._packed_slots = 0  # slots of the packed entries not yet unpacked ...
        self._packed_records = 0  # ... and how many records they stand for

    def emit(
        self,
        kind: str,
        proc: int | None,
        wm: int | None,
        op: str,
        key: Any,
        window: Any,
        ts: int | None,
        detail: Any = None,
    ) -> None:
        """Append one record (the engine's hot path)."""
        self._data.extend((kind, proc, wm, op, key, window, ts, detail))

    def packed(self, marker: Packed, entries: int) -> None:
        """Note that ``entries`` packed entries of ``marker`` were appended."""
        self._packed_slots += entries * (1 + marker.width)
        self._packed_records += entries * marker.count

    def _unpack(self) -> list[Any]:
        """The storage with every packed entry replaced by its records."""
        data = self._data
        if not self._packed_slots:
            return data
        out: list[Any] = []
        i, end = self._plain, len(data)
        while i < end:
            kind = data[i]
            if kind.__class__ is str:
                out.extend(data[i : i + 8])
                i += 8
            else:  # a run of entries of this marker
                step, j = 1 + kind.width, i + 1 + kind.width
                while j < end and data[j] is kind:
                    j += step
                kind.unpack_run(data, i, (j - i) // step, out)
                i = j
        data[self._plain :] = out
        self._plain = len(data)
        self._packed_slots = self._packed_records = 0
        return data

    def __len__(self) -> int:
        return (len(self._data) - self._packed_slots) // 8 + self._packed_records

    def flat(self) -> list[Any]:
        """The storage itself, for fast columnar readers (read it, never change it): field
        ``f`` of record ``i`` is at ``8 * i + Trace.FIELDS.index(f)``."""
        return self._unpack()

    def column(self, field: str) -> list[Any]:
        """One field of every record, in seq order (a C-speed slice of the storage)."""
        return self._unpack()[self.FIELDS.index(field) :: 8]

    def __getitem__(self, seq: int) -> TraceRecord:
        self._unpack()
        if seq < 0:
            seq += len(self)
        if not 0 <= seq < len(self):
            raise IndexError(seq)
        return TraceRecord(seq, *self._data[8 * seq : 8 * seq + 8])

    def __iter__(self) -> Iterator[TraceRecord]:
        data = self._unpack()
        for seq in range(len(data) // 8):
            yield TraceRecord(seq, *data[8 * seq : 8 * seq + 8])

    def records(self, *kinds: str, operator: str | None = None) -> list[TraceRecord]:
        """The records of the given kinds (all when none given), optionally of one operator."""
        want = set(kinds)
        return [
            r
            for r in self
            if (not want or r.kind in want) and (operator is None or r.operator == operator)
        ]

    def kinds(self) -> dict[str, int]:
        """How many records of each kind."""
        counts: dict[str, int] = {}
        for k in self._unpack()[::8]:
            counts[k] = counts.get(k, 0) + 1
        return counts

    # -- export ---------------------------------------------------------------------------

    def to_rows(self) -> list[dict[str, Any]]:
        """Plain dict rows with JSON-ready values (windows as start/end)."""
        rows = []
        for r in self:
            start, end = window_bounds(r.window)
            row = {
                "seq": r.seq,
                "kind": r.kind,
                "proc_time": r.proc_time,
                "watermark": r.watermark,
                "operator": r.operator,
                "key": jsonable(r.key),
                "window_start": start,
                "window_end": end,
                "ts": r.ts,
            }
            row.update({k: jsonable(v) for k, v in r.details().items()})
            rows.append(row)
        return rows

    def to_json(self, *, indent: int | None = None) -> str:
        """Canonical JSON (sorted keys, no NaN): the same run gives the same bytes."""
        doc = {"schema_version": SCHEMA_VERSION, "records": self.to_rows()}
        return json.dumps(
            doc,
            sort_keys=True,
            indent=indent,
            allow_nan=False,
            separators=(",", ":") if indent is None else None,
        )

    def to_pandas(self):  # -> pandas.DataFrame (pandas imported lazily: the core needs no I/O)
        """One row per record; detail fields become columns (absent ones are None)."""
        import pandas as pd

        columns = list(FRAME_COLUMNS)
        extra: list[str] = []
        for names in DETAIL_FIELDS.values():
            for n in names:
                if n not in extra:
                    extra.append(n)
        frame = pd.DataFrame(self.to_rows(), columns=columns + extra)
        frame.attrs["schema_version"] = SCHEMA_VERSION
        return frame


def split_subtask(operator: str) -> tuple[str, int | None]:
    """``"window#2"`` -> ``("window", 2)``; an operator with parallelism 1 -> ``(name, None)``."""
    name, sep, index = operator.rpartition("#")
    if sep and index.isdigit():
        return name, int(index)
    return operator, None


def window_bounds(window: Any) -> tuple[int | None, int | None]:
    """(start, end) of a TimeWindow; (None, None) for the global window or no window."""
    start = getattr(window, "start", None)
    end = getattr(window, "end", None)
    return start, end


def jsonable(value: Any) -> Any:
    """A deterministic JSON-ready form of any value the engine carries."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
        )
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if hasattr(value, "start") and hasattr(value, "end"):
        return [value.start, value.end]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return repr(value)
