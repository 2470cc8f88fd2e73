"""Stateless one-input operators (Flink's ``StreamMap``, ``StreamFilter``,
``StreamFlatMap``) and the sink that collects a job's results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from winviz.copies import copy_record
from winviz.errors import FunctionResultError
from winviz.operators.base import StreamOperator


class Record(NamedTuple):
    """A record that reached a sink or side output: its value, its timestamp (None when it
    has none) and the processing time at which it arrived."""

    value: Any
    timestamp: int | None
    processing_time: int


# ``Record(value, ts, now)`` without NamedTuple's Python-level ``__new__`` (a sink's hot path)
_new_record = tuple.__new__


class _OneFunction(StreamOperator):
    """An operator that runs one user function ``fn`` per record."""

    def __init__(self, name: str, fn: Callable[[Any], Any]) -> None:
        super().__init__(name)
        self.fn = fn


class MapOperator(_OneFunction):
    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        self.emit(self.call_user("map", self.fn, copy_record(value), record=value), ts)


class FilterOperator(_OneFunction):
    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        keep = self.call_user("filter", self.fn, copy_record(value), record=value)
        if keep is True or (keep is not False and self._boolean(keep, value)):
            self.emit(value, ts)

    def _boolean(self, keep: Any, value: Any) -> bool:
        """Flink's ``FilterFunction.filter`` returns a ``boolean``: a ``numpy.bool_`` is one
        too (a Python bool never comes here); anything else (a str, None from ``print``, 1)
        raises ``FunctionResultError`` naming the record and the result."""
        kind = type(keep)
        if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):
            return bool(keep)
        raise FunctionResultError(
            "returned no boolean",
            function="filter",
            operator=self.name,
            value=keep,
            expected="True to keep the record or False to drop it (Flink's FilterFunction "
            "returns a boolean), e.g. lambda e: e['n'] > 0",
            index=self.job.record_index,
            record=value,
        )


class FlatMapOperator(_OneFunction):
    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        outs = self.call_user("flat_map", self.fn, copy_record(value), record=value)
        if outs is None or not hasattr(outs, "__iter__"):  # None would drop the record
            raise FunctionResultError(
                "returned no iterable",
                function="flat_map",
                operator=self.name,
                value=outs,
                expected="an iterable of output records, e.g. a list ([] to drop the record)",
                index=self.job.record_index,
                record=value,
            )
        for out in outs:
            self.emit(out, ts)


class SideOutputPassthrough(StreamOperator):
    """The operator of ``get_side_output(tag)``: forwards what its producer sends to ``tag``."""

    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        self.output.collect(value, ts)


class SinkOperator(StreamOperator):
    """Collects every record it receives into ``records`` (a job result's output), shared by
    the subtasks of a parallel sink; the ``owner`` subtask checkpoints it."""

    traces_watermarks = False  # its watermark only stamps its ``sink`` records

    def __init__(self, name: str, records: list[Record] | None = None, owner: bool = True) -> None:
        super().__init__(name)
        self.records: list[Record] = [] if records is None else records
        self.owner = owner

    def process_element(self, value, ts):
        self.metrics["num_records_in"] += 1
        now = self.job.now  # (current_processing_time)
        if self.trace is not None:
            name = self.name
            self.trace.sink(now, self._watermark, name, ts, name, value)
        self.records.append(_new_record(Record, (value, ts, now)))

    def keep(self, records: list[tuple[Any, int | None]]) -> None:
        """``process_element`` for (value, timestamp) pairs at the same processing time,
        without their ``sink`` trace records (a window kernel's firings: ``straight_sink``)."""
        now = self.job.now
        self.metrics["num_records_in"] += len(records)
        self.records += [_new_record(Record, (value, ts, now)) for value, ts in records]

    def process_watermark(self, watermark):
        if watermark > self._watermark:
            self._watermark = watermark

    def snapshot(self) -> dict[str, Any]:
        """What the sink holds so far: a restore rolls its output back (an exactly-once
        sink)."""
        snap = super().snapshot()
        if self.owner:
            snap["records"] = list(self.records)
        return snap

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        if self.owner:
            self.records[:] = snap["records"]  # the result's outputs point at this list
