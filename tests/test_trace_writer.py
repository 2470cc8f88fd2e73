"""The trace writer (``winviz.trace.writer.TraceWriter``) against the schema: one method per
kind of ``DETAIL_FIELDS``, whose parameters are base fields and then exactly the kind's detail
fields, each writing its values where the schema says; the window kernel's bulk write gives
the records the per-kind methods give; and nothing in the engine writes around the writer."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import winviz as wv
from winviz.trace import BASE_FIELDS, DETAIL_FIELDS, Trace, TraceWriter
from winviz.trace.element_entry import BOTH_TIMERS_EXISTED, CLEANUP_TIMER_EXISTED, ElementRun
from winviz.trace.schema import KIND_BASE_FIELDS

FIRST = ("proc_time", "watermark", "operator")  # every kind's first parameters
OPTIONAL = ("key", "window", "ts")  # the base fields a kind may have (in this order)
NOT_KINDS = {  # the others
    "emit", "forget", "event_timer_fired", "event_window_cleared", "open_window_elements",
    "event_timer_emitted", "fired_and_cleared",
}  # fmt: skip
BOOLS = {"deduplicated", "existed"}  # (they pick a shared detail: bools)


def _parameters(kind: str) -> list[str]:
    return list(inspect.signature(getattr(TraceWriter, kind)).parameters)[1:]


def test_the_writer_has_one_method_per_kind_named_by_the_schema() -> None:
    public = {n for n, v in vars(TraceWriter).items() if callable(v) and not n.startswith("_")}
    assert public - NOT_KINDS == set(DETAIL_FIELDS)


@pytest.mark.parametrize("kind", sorted(DETAIL_FIELDS))
def test_a_kind_method_takes_base_fields_then_exactly_its_detail_fields(kind: str) -> None:
    params = _parameters(kind)
    assert tuple(params[:3]) == FIRST
    details = DETAIL_FIELDS[kind]
    base = params[3 : len(params) - len(details)]
    assert base == [f for f in OPTIONAL if f in base], f"{kind}: base fields {base}"
    assert tuple(params[len(params) - len(details) :]) == details


@pytest.mark.parametrize("kind", sorted(DETAIL_FIELDS))
def test_a_kind_method_writes_each_value_in_its_field(kind: str) -> None:
    params = _parameters(kind)
    values = {p: True if p in BOOLS else f"<{p}>" for p in params}
    if "domain" in values:
        values["domain"] = "event"
    trace = Trace()
    getattr(trace.writer, kind)(*values.values())
    (record,) = trace.records()
    expected = {f: values.get(f) for f in BASE_FIELDS if f not in ("kind", "detail")}
    assert {f: getattr(record, f) for f in expected} == expected
    assert record.kind == kind
    assert record.details() == {f: values[f] for f in DETAIL_FIELDS[kind]}


def test_a_kind_method_given_too_few_or_too_many_values_writes_nothing() -> None:
    trace = Trace()
    message = f"TraceWriter.fired() takes {len(DETAIL_FIELDS['fired'])} detail values"
    few = ("<key>", "<window>", 9) + ("x",) * (len(DETAIL_FIELDS["fired"]) - 1)
    for values in (few, (*few, "x", "y")):
        with pytest.raises(TypeError) as caught:
            trace.writer.fired(1, 2, "win", *values)
        assert str(caught.value) == message
    assert trace.records() == []


def test_open_window_elements_writes_what_the_kind_methods_write() -> None:
    """A run of three elements (a cleanup timer of its own; then none) as the kernel hands it
    over, against the same records written one by one."""
    w1, w2 = wv.TimeWindow(0, 10), wv.TimeWindow(10, 20)

    run = {
        "proc_times": [1, 2, 3],
        "source_stamps": [4, None, 6],
        "values": ["a", "b", "c"],
        "stamps": [4, 5, 16],
        "keys": ["k", "j", "k"],
        "windows": [w1, w1, w2],
        "deduplicated": [0, BOTH_TIMERS_EXISTED, CLEANUP_TIMER_EXISTED],
    }
    for lateness in (5, None):
        bulk, single = Trace(), Trace()
        columns = ElementRun(
            8, 7, run["proc_times"], run["source_stamps"], 40, run["values"], run["stamps"]
        )
        bulk.writer.open_window_elements(
            "src", "win", lateness, columns, 0, run["keys"], run["windows"], run["deduplicated"]
        )
        w = single.writer
        for i in range(3):
            now, key, window = run["proc_times"][i], run["keys"][i], run["windows"][i]
            bits, ts, value = run["deduplicated"][i], run["stamps"][i], run["values"][i]
            w.arrival(now, 7, "src", None, run["source_stamps"][i], value, 40 + i)
            w.element(now, 8, "win", key, ts, value)
            w.assigned(now, 8, "win", key, window, ts, value)
            max_ts = window.max_timestamp()
            w.timer_registered(now, 8, "win", key, window, max_ts, "event", window, bits & 1 > 0)
            w.trigger(now, 8, "win", key, window, "on_element", "CONTINUE")
            if lateness is not None:
                dedup = bits & 2 > 0
                w.timer_registered(now, 8, "win", key, window, max_ts + 5, "event", window, dedup)
        assert bulk._packed_records == len(single) == (18 if lateness else 15)
        assert bulk.to_json() == single.to_json()


def test_nothing_in_the_engine_writes_around_the_writer() -> None:
    """Only the writer (and the store itself) touch the store's encoding: no ``emit`` on a
    trace, no ``extend`` / ``packed`` of its buffer, no 8-tuple outside ``winviz/trace``."""
    root = Path(wv.__file__).parent
    around = re.compile(r"trace\.(extend|packed|_extend)\b|\.packed\(|Trace\.emit")
    found = [
        f"{path.relative_to(root)}:{n}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path.parent != root / "trace"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if around.search(line)
    ]
    assert found == []


@pytest.mark.parametrize("fire", [True, False])
def test_event_timer_fired_writes_what_the_kind_methods_write(fire: bool) -> None:
    window = wv.TimeWindow(0, 10)
    bulk, single = Trace(), Trace()
    bulk.writer.event_timer_fired(1, 2, "win", "k", window, 9, fire)
    single.writer.timer_fired(1, 2, "win", "k", window, 9, "event", window)
    result = "FIRE" if fire else "CONTINUE"
    single.writer.trigger(1, 2, "win", "k", window, "on_event_time", result)
    assert bulk.to_json() == single.to_json()
    assert [r.kind for r in bulk.records()] == ["timer_fired", "trigger"]


@pytest.mark.parametrize("existed", [True, False])
def test_event_window_cleared_writes_what_the_kind_methods_write(existed: bool) -> None:
    window = wv.TimeWindow(0, 10)
    bulk, single = Trace(), Trace()
    bulk.writer.event_window_cleared(1, 2, "win", "k", window, 9, existed, 14)
    single.writer.timer_deleted(1, 2, "win", "k", window, 9, "event", window, existed)
    single.writer.cleanup(1, 2, "win", "k", window, 9, 14)
    assert bulk.to_json() == single.to_json()
    assert [r.kind for r in bulk.records()] == ["timer_deleted", "cleanup"]


def test_event_timer_emitted_writes_what_the_kind_methods_write() -> None:
    """The window's timer at max_timestamp fires and its result is emitted: timer_fired,
    trigger (on_event_time FIRE) and emitted (at the operator's own time and watermark)."""
    window = wv.TimeWindow(0, 10)
    bulk, single = Trace(), Trace()
    bulk.writer.event_timer_emitted(1, 2, "win", "k", window, 9, 3, 4, ("k", 7))
    single.writer.timer_fired(1, 2, "win", "k", window, 9, "event", window)
    single.writer.trigger(1, 2, "win", "k", window, "on_event_time", "FIRE")
    single.writer.emitted(3, 4, "win", "k", None, 9, ("k", 7))
    assert bulk.to_json() == single.to_json()
    assert [r.kind for r in bulk.records()] == ["timer_fired", "trigger", "emitted"]
    emitted = bulk.records()[2]
    assert (emitted.proc_time, emitted.watermark, emitted.window, emitted.ts) == (3, 4, None, 9)


def test_event_timer_emitted_into_a_sink_writes_the_sinks_record_too() -> None:
    """Into a sink straight after: its ``sink`` record follows (at the emitted record's
    processing time and the sink's own watermark)."""
    window = wv.TimeWindow(0, 10)
    bulk, single = Trace(), Trace()
    bulk.writer.event_timer_emitted(1, 2, "win", "k", window, 9, 3, 4, ("k", 7), "out", 5)
    single.writer.timer_fired(1, 2, "win", "k", window, 9, "event", window)
    single.writer.trigger(1, 2, "win", "k", window, "on_event_time", "FIRE")
    single.writer.emitted(3, 4, "win", "k", None, 9, ("k", 7))
    single.writer.sink(3, 5, "out", 9, "out", ("k", 7))
    assert bulk.to_json() == single.to_json()
    assert [r.kind for r in bulk.records()] == ["timer_fired", "trigger", "emitted", "sink"]


@pytest.mark.parametrize("existed", [True, False])
def test_fired_and_cleared_writes_what_the_kind_methods_write(existed: bool) -> None:
    window = wv.TimeWindow(0, 10)
    bulk, single = Trace(), Trace()
    bulk.writer.fired_and_cleared(1, 2, "win", "k", window, 9, 7, 1, "late", None, existed, 14)
    single.writer.fired(1, 2, "win", "k", window, 9, 7, 1, "late", None)
    single.writer.timer_deleted(1, 2, "win", "k", window, 9, "event", window, existed)
    single.writer.cleanup(1, 2, "win", "k", window, 9, 14)
    assert bulk.to_json() == single.to_json()
    assert [r.kind for r in bulk.records()] == ["fired", "timer_deleted", "cleanup"]
    assert bulk.records()[1].details() == {
        "domain": "event", "namespace": window, "existed": existed,
    }  # fmt: skip


def test_the_generated_kind_methods_take_the_schemas_fields() -> None:
    """The methods made from ``KIND_BASE_FIELDS`` and ``DETAIL_FIELDS``, spelled out."""
    assert {k: _parameters(k) for k in ("element", "channel_watermark", "evicted", "clock")} == {
        "element": ["proc_time", "watermark", "operator", "key", "ts", "value"],
        "channel_watermark": ["proc_time", "watermark", "operator", "ts", "channel", "input"],
        "evicted": ["proc_time", "watermark", "operator", "key", "window", "when", "values"],
        "clock": ["proc_time", "watermark", "operator", "reason"],
    }
    assert set(KIND_BASE_FIELDS) == set(DETAIL_FIELDS)
    trace = Trace()
    trace.writer.evicted(1, 2, "w", "k", wv.TimeWindow(0, 5), "before", [3, 4])
    assert trace.to_rows() == [
        {
            "seq": 0, "kind": "evicted", "proc_time": 1, "watermark": 2, "operator": "w",
            "key": "k", "window_start": 0, "window_end": 5, "ts": None, "when": "before",
            "values": [3, 4],
        }
    ]  # fmt: skip
