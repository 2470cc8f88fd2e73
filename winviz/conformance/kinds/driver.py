"""The base of every transcript driver, and the value reading all kinds share: integers (or
``MIN``/``MAX``), windows (``[start, end]``, ``null`` for the ``GlobalWindow``), expected values and
the timer/state count check."""

from __future__ import annotations

from typing import Any

from winviz.errors import WinvizError
from winviz.operators.base import CollectingOutput
from winviz.time import MAX, MIN
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow, has_positive_size

DEFAULT_NAMESPACE = "default"


class TranscriptError(WinvizError, ValueError):
    """A transcript the runner cannot execute: an unknown field or a bad value (names file, step
    and field)."""


def known(fields: Any, allowed: Any, where: str, expected: str = "") -> None:
    """Refuse the ``fields`` (of the mapping at ``where``) that are not ``allowed``."""
    unknown = set(fields) - set(allowed)
    if unknown:
        raise TranscriptError(f"{where}: unknown field(s) {sorted(unknown)}{expected}")


def parse_int_like(value: Any, where: str) -> int:
    """An exact integer; the strings "MIN"/"MAX" are Java's Long.MIN_VALUE/MAX_VALUE."""
    if value == "MIN":
        return MIN
    if value == "MAX":
        return MAX
    if isinstance(value, bool) or not isinstance(value, int):
        raise TranscriptError(f'{where}: expected an integer (or "MIN"/"MAX"), got {value!r}')
    if not MIN <= value <= MAX:
        raise TranscriptError(f"{where}: {value} is outside Java's long range")
    return value


def normalise_expected(value: Any, where: str = "expect") -> Any:
    """Expected values: "MIN"/"MAX" → ints, tuples → lists, recursively; a record's ``ts`` and a
    window's bounds must be times (else ``TranscriptError``)."""
    if isinstance(value, str) and value in ("MIN", "MAX"):
        return parse_int_like(value, "")
    if isinstance(value, (list, tuple)):
        return [normalise_expected(v, where) for v in value]
    if isinstance(value, dict):
        return {k: _expected_field(k, v, f"{where}.{k}") for k, v in value.items()}
    return value


def _expected_field(name: str, value: Any, where: str) -> Any:
    if name == "ts":
        return parse_int_like(value, where)
    if name == "window" and isinstance(value, list):
        return [None if v is None else parse_int_like(v, where) for v in value]
    return normalise_expected(value, where)


def window_json(window: Any) -> list[int | None]:
    if window is GLOBAL_WINDOW:
        return [None, None]
    return [window.start, window.end]


def parse_window(value: Any, where: str) -> Any:
    if value is None or value == [None, None]:
        return GLOBAL_WINDOW
    if not isinstance(value, list) or len(value) != 2:
        raise TranscriptError(f"{where}: a window is [start, end], got {value!r}")
    start, end = parse_int_like(value[0], where), parse_int_like(value[1], where)
    if not has_positive_size(start, end):
        raise TranscriptError(
            f"{where}: window {value!r}: end {end} is not after start {start} (expected "
            "[start, end] with start < end: a window of positive size, end - start in Java's "
            "long arithmetic)"
        )
    return TimeWindow(start, end)


TIME_STEPS = {"watermark", "processing_time", "end"}


def drain(out: CollectingOutput) -> dict[str, list[Any]]:
    """The ``watermarks`` and ``status`` changes ``out`` got since the last ``drain``."""
    emitted = {"watermarks": out.watermarks, "status": out.statuses}
    out.watermarks, out.statuses = [], []
    return emitted


class Driver:
    """Base driver: validates fields; subclasses execute steps."""

    OPERATOR_KEYS: frozenset[str] = frozenset({"kind"})
    STEP_KEYS: frozenset[str] = frozenset()
    """A step's fields besides the expectations (``OUTPUTS``, ``CHECKS``, ``expect_error``)."""
    EXCLUSIVE: frozenset[str] = frozenset()
    """Step fields of which a step may have one only (the driver would run one of them)."""
    OUTPUTS: tuple[tuple[str, str, str], ...] = ()
    """(output, expect field, mode: equal, multiset[-strict], ordered-strict)."""
    CHECKS: dict[str, Any] = {}
    WATERMARK_OUTPUTS = (
        ("watermarks", "expect_watermarks", "ordered-strict"),
        ("status", "expect_status", "ordered-strict"),
    )
    """The ``OUTPUTS`` of a kind that emits watermarks and idle/active changes (``drain``)."""

    def __init__(self, spec: dict[str, Any], where: str) -> None:
        self.where = where
        known(spec, self.OPERATOR_KEYS, f"{where}: operator")

    def validate(self, step: dict[str, Any], index: int) -> None:
        expects = {"expect_error", *self.CHECKS, *(e for _, e, _ in self.OUTPUTS)}
        known(step, {*self.STEP_KEYS, *expects}, f"{self.where}: step {index}")
        if "element" in step and not isinstance(step["element"], dict):
            raise TranscriptError(
                f"{self.where}: step {index}: element {step['element']!r}: expected a mapping "
                "such as {key: a, value: 1, ts: 5}"
            )
        for _, expect_key, mode in self.OUTPUTS:
            wanted = step.get(expect_key, [])
            if mode.startswith("multiset") and not isinstance(wanted, list):
                raise TranscriptError(
                    f"{self.where}: step {index}: {expect_key} {wanted!r}: expected a list "
                    "(compared as a multiset)"
                )
        actions = sorted(self.EXCLUSIVE.intersection(step))
        if len(actions) > 1:
            raise TranscriptError(
                f"{self.where}: step {index}: one of {sorted(self.EXCLUSIVE)} per step, got "
                f"{actions} (split them into steps)"
            )

    def option(self, spec: dict[str, Any], name: str, default: Any = None) -> int:
        """The operator's field ``name`` (``default`` when it is not there) read by
        ``parse_int_like``."""
        return parse_int_like(spec.get(name, default), f"{self.where}: operator.{name}")

    def at(self, index: int, field: str) -> str:
        return f"{self.where}: step {index}: {field}"

    def int_in(
        self, index: int, values: dict[str, Any], name: str, default: Any = None, field: str = ""
    ) -> Any:
        """``values[name]`` read by ``parse_int_like`` (errors name step ``index`` and ``field``,
        else ``name``), or ``default`` when it is not there."""
        if name not in values:
            return default
        return parse_int_like(values[name], self.at(index, field or name))

    def channel(
        self, index: int, step: dict[str, Any], channels: int, default: Any, of: str
    ) -> int:
        """A step's ``channel`` (``default`` when it is not there): one of ``channels``."""
        channel = parse_int_like(step.get("channel", default), self.at(index, "channel"))
        if not 0 <= channel < channels:
            raise TranscriptError(self.at(index, f"channel {channel}{of} does not exist"))
        return channel

    def keyed_element(self, step: dict[str, Any], index: int) -> tuple[tuple[str, int], Any]:
        """A step's ``element`` as the ``(key, value)`` record (value 1 by default) and its
        ``ts`` (None: none)."""
        el = step["element"]
        known(el, ("key", "value", "ts"), self.at(index, "element"), " (expected key, value, ts)")
        if "key" not in el:
            raise TranscriptError(self.at(index, "element: missing field 'key'"))
        value = el.get("value", 1)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TranscriptError(
                self.at(index, f"element.value: expected an integer, got {value!r}")
            )
        return (str(el["key"]), value), self.int_in(index, el, "ts", field="element.ts")

    def time_step(self, op: Any, step: dict[str, Any], index: int) -> None:
        """A ``watermark``, ``processing_time`` or ``end`` step, as the harness runs it."""
        if "watermark" in step:
            op.process_watermark(self.int_in(index, step, "watermark"))
        elif "processing_time" in step:
            op.advance_processing_time(self.int_in(index, step, "processing_time"))
        elif step.get("end"):
            op.process_watermark(MAX)

    def step(self, step: dict[str, Any], index: int) -> dict[str, Any]:
        raise NotImplementedError


def counted(
    count: Any, step: dict[str, Any], scope: str, parse: Any = None
) -> dict[str, dict[str, Any]]:
    """A step result's ``counts`` (``count(...)``: of everything) and ``_counts_by`` (also of the
    ``scope`` its ``expect_counts`` names, read by ``parse``) for ``check_counts``."""
    by = {"all": count(...)}
    named = (step.get("expect_counts") or {}).get(scope)
    if named is not None:
        by[repr(named)] = count(named if parse is None else parse(named))
    return {"counts": by["all"], "_counts_by": by}


def timer_counts(service: Any, namespace: Any) -> dict[str, int]:
    """How many event-time and processing-time timers ``service`` has (in ``namespace``)."""
    return {
        "event": service.num_event_time_timers(namespace),
        "processing": service.num_processing_time_timers(namespace),
    }


def check_counts(expected: dict[str, Any], result: dict[str, Any]) -> str | None:
    counts = result.get("_counts_by", {})
    scope = expected.get("namespace", expected.get("window", ...))
    scope_key = "all" if scope is ... else repr(scope)
    actual = counts.get(scope_key)
    if actual is None:
        return f"no counts for {scope}"
    for name, value in expected.items():
        if name in ("namespace", "window"):
            continue
        if actual.get(name) != value:
            return f"{name}: expected {value}, got {actual.get(name)}"
    return None
