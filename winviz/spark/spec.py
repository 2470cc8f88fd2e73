"""What a Spark twin computes: a windowed aggregation with a watermark, and how it is driven.

The Spark pipeline a ``TwinSpec`` stands for::

    (spark.readStream.schema(...).option("maxFilesPerTrigger", 1).json(input_dir)
        .withColumn("event_time", timestamp_millis(ts_field))
        .withWatermark("event_time", f"{watermark_delay} milliseconds")
        .groupBy(window("event_time", f"{size} milliseconds", f"{slide} milliseconds"), key)
        .agg(count("*"), sum(value_field))
        .writeStream.outputMode(output_mode).foreachBatch(...))

``window()`` is Spark's ``TimeWindow`` expression (tumbling when ``slide == size``), and
``withWatermark`` is ``EventTimeWatermark``. Output modes (``OutputMode.Append`` /
``OutputMode.Update``): *append* emits a window once, when the watermark has passed its end;
*update* emits every window whose aggregate changed in the batch.

Drives (how the micro-batches are executed, see ``winviz.spark.twins``):

- ``"per_batch"`` — each trigger interval's file is added, then ``processAllAvailable()``: Spark
  runs the data batch and, when that batch raised the watermark, an extra *no-data batch* that
  applies the new watermark (emits/evicts windows) before the next data arrives. Late rows of
  the next batch are then filtered with the new watermark.
- ``"available_now"`` — every file is written first, then one run with
  ``trigger(availableNow=True)``: batches follow each other with no no-data batch in between
  (only one at the very end), so a batch's late-row filter uses the watermark of the batch
  before, which lags one batch behind the data: rows that ``per_batch`` drops can still count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from winviz.errors import InputError

DRIVES = ("per_batch", "available_now")
OUTPUT_MODES = ("append", "update")
AGGREGATES = ("count", "sum")

Drive = Literal["per_batch", "available_now"]
OutputMode = Literal["append", "update"]


@dataclass(frozen=True)
class TwinSpec:
    """A windowed count/sum per key with a watermark; all times in milliseconds.

    ``key_field`` / ``ts_field`` / ``value_field`` name the record fields (dict keys, or indexes
    into tuples); ``value_field`` is needed for ``aggregate="sum"``. ``ts_field`` holds event
    time (int ms, or anything ``winviz.time.TimestampNormalizer`` accepts). ``slide`` defaults
    to ``size`` (tumbling). ``trigger_interval`` cuts the input into micro-batches by arrival
    time (``winviz.spark.batches``). ``aggregate`` picks the ``result`` of each output row.
    """

    size: int
    watermark_delay: int
    slide: int | None = None
    key_field: str | int = "key"
    ts_field: str | int = "ts"
    value_field: str | int | None = None
    aggregate: Literal["count", "sum"] = "count"
    output_mode: OutputMode = "append"
    trigger_interval: int = 1000
    drive: Drive = "per_batch"

    def __post_init__(self) -> None:
        _positive(self.size, "size")
        _positive(self.window_slide, "slide")
        _positive(self.trigger_interval, "trigger_interval")
        if self.window_slide > self.size:
            raise InputError(
                "a slide larger than the window leaves gaps", field="slide", value=self.slide
            )
        if not isinstance(self.watermark_delay, int) or self.watermark_delay < 0:
            raise InputError(
                "must be an int >= 0", field="watermark_delay", value=self.watermark_delay
            )
        _one_of(self.output_mode, OUTPUT_MODES, "output_mode")
        _one_of(self.drive, DRIVES, "drive")
        _one_of(self.aggregate, AGGREGATES, "aggregate")
        if self.aggregate == "sum" and self.value_field is None:
            raise InputError("aggregate='sum' needs a value_field", field="value_field", value=None)

    @property
    def window_slide(self) -> int:
        """The slide in ms (``size`` for tumbling windows)."""
        return self.size if self.slide is None else self.slide

    @property
    def is_tumbling(self) -> bool:
        return self.window_slide == self.size


def _positive(value: object, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InputError("must be a positive int (milliseconds)", field=name, value=value)


def _one_of(value: object, allowed: tuple[str, ...], name: str) -> None:
    if value not in allowed:
        raise InputError("unknown option", field=name, value=value, expected=f"one of {allowed}")
