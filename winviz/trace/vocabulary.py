"""The words winviz uses for elements and firings, stated once (DESIGN.md, "Words are claims
too"). Every chart tooltip, legend, explorer summary and ``why_*`` answer takes its words from
here, and each word is a rule over the trace.

Elements, in Flink's terms (``WindowOperator.isElementLate`` / ``isWindowLate``):

* **on time** — its timestamp > the window operator's watermark when it arrives;
* **late** — its timestamp ≤ that watermark. A late element is
  **late, accepted** while one of its windows is not past cleanup (max timestamp + allowed
  lateness > watermark), else **dropped** (counted in ``numLateRecordsDropped``) or sent to
  the **side output** (``sideOutputLateData``).

A firing (a ``fired`` record: ``WindowOperator.emitWindowContents``) has:

* a **cause** — an element (``Trigger.onElement``), an event-time timer (``onEventTime``), a
  processing-time timer (``onProcessingTime``), the end of input (an event-time timer fired
  by the MAX watermark), a session merge (``onMerge``), or "cause not traced"; in BATCH mode
  the **end of key** (its watermark jumps to MAX; charts file it under "end of input");
* a **first firing** or a **re-firing** (the window, of that key and operator, fired before);
* maybe a **late firing**: the watermark had reached the window's max timestamp before its
  cause (with ``EventTimeTrigger``: a late element within allowed lateness).

At an interval join (``IntervalJoinOperator``) an element is late when its timestamp < the
watermark (``isLate``): **dropped** or **side output**, else **buffered**. The ``fired``
record's ``timing`` field (Beam's pane timing, not Flink's) is kept for old traces; unread.
"""

from __future__ import annotations

ON_TIME = "on time"
LATE_ACCEPTED = "late, accepted"
DROPPED = "dropped"
SIDE_OUTPUT = "side output"
ELEMENT_FATES: tuple[str, ...] = (ON_TIME, LATE_ACCEPTED, DROPPED, SIDE_OUTPUT)
"""An element's fate at a window operator, in this order (charts colour them so)."""

ELEMENT = "element"
EVENT_TIME_TIMER = "event-time timer"
PROCESSING_TIME_TIMER = "processing-time timer"
END_OF_INPUT = "end of input"
SESSION_MERGE = "session merge"
CAUSE_NOT_TRACED = "cause not traced"
FIRED_BY: tuple[str, ...] = (
    ELEMENT,
    EVENT_TIME_TIMER,
    PROCESSING_TIME_TIMER,
    END_OF_INPUT,
    SESSION_MERGE,
    CAUSE_NOT_TRACED,
)
"""The categories of a firing's cause (legends and labels); ``winviz.trace.causes.fired_by``
is the rule that puts a firing in one."""

END_OF_KEY = "end of key"
"""A ``why_fired`` cause in BATCH mode: the end of a key's records (not a chart category)."""

BUFFERED = "buffered"
"""An element's fate at an interval join when it is not late (not a window operator fate)."""

FIRST_FIRING = "first firing"
RE_FIRING = "re-firing"
LATE_FIRING = "late firing"


def is_late(ts: int | None, watermark: int | None) -> bool:
    """Whether an element is late: its timestamp ≤ the operator's watermark at arrival."""
    return ts is not None and watermark is not None and ts <= watermark


def is_late_firing(watermark_before: int, max_timestamp: int) -> bool:
    """Whether a firing is a late firing: the watermark before its cause had already reached
    the window's max timestamp (``WindowOperator.isWindowLate`` without the lateness)."""
    return watermark_before >= max_timestamp


ROLLED_BACK = "rolled back by a restore"
READ_AGAIN = "read again after a restore"


def counted(n: int, noun: str = "") -> str:
    """How winviz writes a count: ``n`` (thousands separated) and ``noun``, plural unless n is
    1 ("1 element", "8 elements", "2 (key, window) pairs"); no noun: the number alone."""
    return f"{n:,}" + (f" {noun}{'' if n == 1 else 's'}" if noun else "")


def kept_count(kept: int, rolled_back: int, noun: str = "") -> str:
    """A count of what the run keeps (``winviz.trace.restores``; ``noun``: singular, as
    ``counted``), then how many more a restore rolled back, if any: "3 firings (1 more rolled
    back by a restore)"."""
    return counted(kept, noun) + more_rolled_back(rolled_back)


def more_rolled_back(n: int) -> str:
    """What follows a count of what the run keeps: how many more a restore rolled back, " (1
    more rolled back by a restore)"; "" when none."""
    return f" ({n:,} more {ROLLED_BACK})" if n else ""


def elements_count(kept: int, read_again: int) -> str:
    """A count of elements: those the run keeps, each once, then how many of them the replay
    read again (``read_again_after``): "8 elements (1 read again after a restore)"."""
    return counted(kept, "element") + read_again_after(read_again)


def read_again_after(n: int) -> str:
    """What follows a count of the elements the run keeps: how many of them the replay read
    again (their first readings a restore rolled back), " (1 read again after a restore)"; ""
    when none."""
    return f" ({n:,} {READ_AGAIN})" if n else ""


def firing_order(
    earlier_firings: int, *, rolled_back: bool = False, in_this_trace: bool = False
) -> str:
    """The words for a window's first ``fired`` record ("first firing") and later ones
    ("re-firing"), counting the earlier firings the run keeps (``winviz.trace.restores``); "first
    firing in this trace" when the run started from an earlier run's checkpoint (whose firings
    the trace does not hold), and " (rolled back by a restore)" when a restore undid it."""
    first = earlier_firings == 0
    said = (FIRST_FIRING + (" in this trace" if in_this_trace else "")) if first else RE_FIRING
    return said + (f" ({ROLLED_BACK})" if rolled_back else "")
