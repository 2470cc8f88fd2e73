"""BATCH execution of a DataStream job on bounded input (Flink's ``RuntimeExecutionMode.BATCH``).

``env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)`` runs the same job the way Flink 2.3
runs a DataStream program in batch mode (FLIP-134/140):

- **No watermarks flow.** Timestamp assigners still stamp records, but every watermark
  generator is Flink's ``NoWatermarksGenerator`` (``TimestampsAndWatermarksTransformation
  Translator.translateForBatchInternal`` builds the operator with ``emitProgressiveWatermarks
  = false``): no periodic or punctuated watermark, no idleness. Only the end of input sends
  the watermark MAX.
- **Keyed inputs are sorted** (``SortingDataInput``): a keyed operator (a keyed window,
  ``window_all`` — Flink keys it by a ``NullByteKeySelector`` —, a ``KeyedProcessFunction``,
  ``key_by().reduce()``) first takes its whole input, then gets the records grouped by key and,
  within a key, by timestamp (a record without one sorts as MIN). Stages therefore run one
  after the other, as Flink's blocking exchanges make them (the pipelined regions of a batch
  job). Watermarks reaching a sorting input are not passed on; after the last record it
  emits the largest one it saw (MAX).
- **One key at a time** (``BatchExecutionKeyedStateBackend`` and
  ``BatchExecutionInternalTimeService``): while a key's records go in, the operator's
  watermark is MIN, so nothing is late (no element is dropped or sent to the late side
  output, whatever the allowed lateness). When the key changes — and at the end of input —
  the previous key's watermark jumps to MAX: all its event-time timers fire, in timestamp
  order, then all its processing-time timers, whatever the processing clock says; a timer
  registered during those callbacks is ignored (Flink: "Timer service is quiesced"). Then the
  key's state is dropped and the watermark is MIN again for the next key.
- **Processing time.** ``current_processing_time()`` still reads the processing clock (Flink
  reads the wall clock). A processing-time timer is never scheduled on that clock: it fires
  only at the end of its key. In winviz the sorted records go through when the input has been
  read, so the clock stands at the last arrival (or ``until_processing_time``) meanwhile.
- ``key_by().reduce(fn)`` becomes Flink's ``BatchGroupedReduceOperator``: one result per key,
  the final reduction, emitted at the end of the key with timestamp MAX (no rolling results).
- Non-keyed operators (map, filter, a sink) run as in streaming.

Order of keys: as Flink's sorter orders them (``VariableLengthByteKeyComparator`` /
``FixedLengthByteKeyComparator`` and ``BytesKeyNormalizationUtil``): by the key's serialized
bytes compared as *signed* bytes, a shorter key first when one is a prefix of the other
(``serialized_key``); Flink promises no order across keys, but this is the one it produces.
Within a key, records with equal timestamps keep their arrival order in winviz; Flink's
in-memory sort (QuickSort) does not promise one.

Not modelled (refused with a clear error): checkpointing and failures (Flink's batch mode has
no checkpoints: "Checkpoints are not supported with sorted inputs in the BATCH runtime"), and
keyed two-input operators (``connect().key_by()``, Flink's ``MultiInputSortingDataInput``).

The trace shows it: each key's ``element`` records come together with watermark MIN; at the
end of a key a ``watermark`` record (``input`` "end of key", the key set, watermark MAX) comes
before the key's ``timer_fired`` records, which carry the watermark MAX.
"""

from __future__ import annotations

import struct
from enum import Enum
from typing import Any

from winviz.copies import copy_record
from winviz.errors import (
    ArgumentTypeError,
    UnsupportedOperationError,
)
from winviz.functions import KeyedProcessFunction
from winviz.keygroups import user_key
from winviz.operators.base import StreamOperator
from winviz.operators.co_process import KeyedCoProcessOperator
from winviz.operators.inputs import OperatorInput
from winviz.operators.keyed import KeyedStreamOperator
from winviz.operators.keyed_process import KeyedProcessOperator, RollingReduceFunction
from winviz.operators.sources import TimestampsAndWatermarksOperator
from winviz.time import MAX, MIN
from winviz.timers import PROCESSING, InternalTimerService, TimerQueue
from winviz.watermarks import NoWatermarksGenerator

_NO_KEY = object()  # before the first key (a key may be None: window_all's)

END_OF_KEY = "end of key"
"""The ``input`` of the trace's ``watermark`` record at the end of a key."""


class RuntimeExecutionMode(Enum):
    """Flink's ``org.apache.flink.api.common.RuntimeExecutionMode``. AUTOMATIC is BATCH when
    every source is bounded (``StreamGraphGenerator``'s rule); every winviz source is a
    bounded collection (Flink's ``fromData`` / ``fromCollection``), so AUTOMATIC is BATCH."""

    STREAMING = "STREAMING"
    BATCH = "BATCH"
    AUTOMATIC = "AUTOMATIC"


def runtime_mode(value: Any) -> RuntimeExecutionMode:
    """The mode asked for: a ``RuntimeExecutionMode`` or its name (any case), as Flink's
    ``execution.runtime-mode`` option takes it; anything else is a clear error."""
    if isinstance(value, RuntimeExecutionMode):
        return value
    if isinstance(value, str) and value.upper() in RuntimeExecutionMode.__members__:
        return RuntimeExecutionMode[value.upper()]
    raise ArgumentTypeError(
        "set_runtime_mode takes a RuntimeExecutionMode",
        field="mode",
        value=value,
        expected="wv.RuntimeExecutionMode.STREAMING, BATCH or AUTOMATIC",
    )


def is_batch(mode: RuntimeExecutionMode) -> bool:
    """Whether a job runs in batch mode (AUTOMATIC: all winviz sources are bounded)."""
    return mode is not RuntimeExecutionMode.STREAMING


# -- the timer service ------------------------------------------------------------------------


class BatchExecutionInternalTimeService(InternalTimerService):
    """Flink's ``BatchExecutionInternalTimeService``: timers of the current key only, fired
    when the key changes. The service of a keyed operator is switched to this class by
    ``prepare`` (its queues and hooks stay the same objects)."""

    batch_key: Any = None  # the key whose timers are queued (Flink's currentKey)
    batch_key_set = False

    def _register(self, queue: TimerQueue, domain: str, namespace: Any, ts: int) -> None:
        if self.current_watermark == MAX:  # quiesced at the end of a key
            return
        super()._register(queue, domain, namespace, ts)

    def next_processing_timer(self) -> int | None:
        return None  # never scheduled on the processing clock: they fire at the key's end

    def advance_processing_time(self, now: int) -> None:
        if now > self.clock.now:
            self.clock.now = now

    def advance_watermark(self, watermark: int) -> None:  # pragma: no cover - never called
        raise AssertionError("a batch-execution timer service fires timers at key changes")

    def set_current_key(self, key: Any, end: bool = False) -> None:
        """Flink's ``setCurrentKey``: on a new key (or at the end of input: ``end``) the
        previous key's event-time timers fire at watermark MAX, then its processing-time
        timers; then the watermark is MIN again."""
        if not end and self.batch_key_set and key == self.batch_key:
            return
        self.current_watermark = MAX
        InternalTimerService.advance_watermark(self, MAX)
        queue = self.processing_queue  # all of them (none is registered meanwhile: quiesced)
        self.fire_due(queue, PROCESSING, MAX, queue._counter, {}, MAX)
        self.current_watermark = MIN
        self.batch_key, self.batch_key_set = key, not end


# -- the sorted input -------------------------------------------------------------------------


class SortingDataInput(OperatorInput):
    """Flink's ``SortingDataInput`` in front of one keyed subtask: buffers every record with
    its key, and at the end of input hands them over grouped by key and sorted by timestamp,
    switching the operator's key (``BatchExecutionKeyedStateBackend.setCurrentKey``) between
    groups; then the largest watermark seen (MAX). The job wires the operator's upstream (or
    its input gate) to it instead of to the operator (``prepare``), as Flink puts the sorting
    input in front of the operator when it builds the task."""

    def __init__(self, op: KeyedStreamOperator) -> None:
        self.op = op
        self.keys: dict[Any, tuple[bytes, int]] = {}  # internal key -> (sort bytes, place)
        self.buffer: list[tuple[tuple[bytes, int], int, int, Any, Any, int | None, Any]] = []
        self.watermark_seen = MIN

    def process_element(self, value: Any, ts: int | None) -> None:
        """A record goes into the sorter with its key (``ForwardingDataOutput.emitRecord``)."""
        op = self.op
        index = op.job.record_index
        # (winviz.copies: the selector sees a copy, as the operators' do)
        key = op.call_user("key selector", op.key_selector, copy_record(value), record=value)
        internal = key if key.__class__ is str else op.key_rule.internal_key(key, index)
        place = self.keys.get(internal)
        if place is None:  # (place: keys with equal bytes, of different types, stay apart)
            place = self.keys[internal] = (_signed_order(serialized_key(key)), len(self.keys))
        order = MIN if ts is None else ts
        self.buffer.append((place, order, len(self.buffer), internal, value, ts, index))

    def process_watermark_status(self, idle: bool) -> None:
        """Watermark statuses stop here (``emitWatermarkStatus`` does nothing)."""

    def process_watermark(self, watermark: int) -> None:
        """Remember the largest watermark; the end of input (MAX) starts the sorted output."""
        if watermark > self.watermark_seen:
            self.watermark_seen = watermark
        if watermark == MAX:
            self.emit_sorted()

    def emit_sorted(self) -> None:
        op = self.op
        job = op.job
        records, self.buffer = sorted(self.buffer), []
        current: Any = _NO_KEY
        for _, _, _, key, value, ts, index in records:
            if current is _NO_KEY or key != current:
                select_key(op, key)
                current = key
            job.record_index = index
            op.process_element(value, ts)
        job.record_index = None
        select_key(op, None, end=True)  # advanceWatermark(MAX) -> keySelected(null)
        if self.watermark_seen > MIN:
            op._watermark = self.watermark_seen
            if op.trace is not None:
                op.trace_watermark(self.watermark_seen)
            op.output.emit_watermark(self.watermark_seen)


def serialized_key(key: Any) -> bytes:
    """The bytes Flink's key serializer writes for ``key``, as winviz types keys
    (``winviz.keygroups``): str -> ``StringSerializer`` (``StringValue.writeString``: length + 1,
    then each UTF-16 unit, as 7-bit groups, lowest first, the high bit saying "more"); bool ->
    ``BooleanSerializer`` (1 byte); int -> ``IntSerializer`` (4 bytes, big-endian) when it fits
    32 bits, else ``LongSerializer`` (8 bytes); float -> ``DoubleSerializer`` (the raw bits, 8
    bytes); tuple -> ``TupleSerializer`` (the fields one after another); None (``window_all``'s
    key) -> Flink's ``NullByteKeySelector`` byte 0."""
    if key is None:
        return b"\x00"
    if isinstance(key, bool):
        return b"\x01" if key else b"\x00"
    if isinstance(key, int):
        if -(2**31) <= key < 2**31:
            return struct.pack(">i", key)
        return struct.pack(">q", key)
    if isinstance(key, float):
        return struct.pack(">d", key)
    if isinstance(key, str):
        units = key.encode("utf-16-be")
        out = bytearray(_varint(len(units) // 2 + 1))
        for i in range(0, len(units), 2):
            out += _varint((units[i] << 8) | units[i + 1])
        return bytes(out)
    if isinstance(key, tuple):
        return b"".join(serialized_key(field) for field in key)
    raise ArgumentTypeError(  # (KeyRule refuses such keys before)
        "a key of a type winviz has no Flink serializer for",
        field="key",
        value=key,
        expected="str, int, bool, float or a tuple of them",
    )


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _signed_order(data: bytes) -> bytes:
    """Bytes that compare (as Python compares bytes: unsigned, shorter prefix first) as Flink
    compares ``data`` (``Byte.compare``: signed)."""
    return bytes(b ^ 0x80 for b in data)


def select_key(op: KeyedStreamOperator, key: Any, end: bool = False) -> None:
    """``BatchExecutionKeyedStateBackend.setCurrentKey``: when the key changes, the timer
    services fire the previous key's timers (``keySelected``), then its state is dropped."""
    services = op.timer_services.values()
    previous = [s.batch_key for s in services if s.batch_key_set]  # type: ignore[attr-defined]
    if previous and op.trace is not None:
        op.trace.watermark(op.job.now, MAX, op.name, user_key(previous[0]), MAX, END_OF_KEY)
    if previous:
        op._watermark = MAX  # what the key's firings and emissions see
    for service in services:
        service.set_current_key(key, end)  # type: ignore[attr-defined]
    op._watermark = MIN
    for old in previous:
        _drop_key_state(op, old)


def _drop_key_state(op: KeyedStreamOperator, key: Any) -> None:
    for name, namespace in list(op.state.slots):
        op.state.clear(name, key, namespace)


# -- the reduce of a keyed stream -------------------------------------------------------------


class BatchGroupedReduceFunction(KeyedProcessFunction):
    """Flink's ``BatchGroupedReduceOperator``: the first record of a key registers an
    event-time timer at MAX, later ones are reduced into the state; the timer (at the end of
    the key) emits the reduction with timestamp MAX."""

    def __init__(self, rolling: RollingReduceFunction) -> None:
        self.fn = rolling.fn

    def process_element(self, value, ctx, out):
        current = ctx.state("batch-reduce")
        if current is None:
            ctx.timer_service().register_event_time_timer(MAX)
        else:
            value = self.fn(current, value)
        ctx.update_state("batch-reduce", value)

    def on_timer(self, timestamp, ctx, out):
        current = ctx.state("batch-reduce")
        if current is not None:
            out.collect(current)


# -- setting a job up for batch execution -----------------------------------------------------


def prepare(op: StreamOperator) -> SortingDataInput | None:
    """Set one freshly made subtask up for batch execution (before anything is wired to it);
    a keyed one's ``SortingDataInput``, which its upstream is wired to, else None."""
    if isinstance(op, TimestampsAndWatermarksOperator):
        op.generator = NoWatermarksGenerator()
        if hasattr(op, "generators"):  # per-split watermarks (winviz.operators.split_watermarks)
            op.generators = [NoWatermarksGenerator() for _ in op.generators]  # type: ignore[attr-defined]
            op.main_generator = op.generator  # type: ignore[attr-defined]
        op.interval = 0
        op.emits_watermarks_per_record = False
        return None
    if not isinstance(op, KeyedStreamOperator):
        return None
    if isinstance(op, KeyedCoProcessOperator):
        raise UnsupportedOperationError(
            f"operator {op.name!r}: a keyed two-input operator (connect().key_by()) in BATCH "
            "mode is not modelled (Flink sorts both inputs together: MultiInputSortingDataInput)"
        )
    if isinstance(op, KeyedProcessOperator) and isinstance(op.function, RollingReduceFunction):
        op.function = BatchGroupedReduceFunction(op.function)
    for service in op.timer_services.values():
        service.__class__ = BatchExecutionInternalTimeService
    return SortingDataInput(op)
