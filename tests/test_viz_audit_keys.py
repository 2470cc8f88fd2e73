"""Chart audit (keys): 1, True, 1.0, "1" and ("a", 1) are five keys in Flink and in the engine
(``keygroups.KeyRule``: Java's equals), though the first three are equal in Python. Every
chart keeps them apart — a lane, a colour, a timer count, a tooltip each — and labels a str
key that reads as JSON quoted, so that "1" is not drawn in the lane of the int 1."""

from __future__ import annotations

from typing import Any

from jobs import count_per_key

import winviz as wv
from winviz import viz
from winviz.viz.value_texts import key_text, key_texts

KEYS: list[Any] = [1, True, 1.0, "1", ("a", 1), '<b>"x"</b>']
LABELS = ["1", "true", "1.0", '"1"', '["a",1]', '<b>"x"</b>']


def keys_job() -> wv.JobExecutionResult:
    """One element per key, key i at 100 * i + 50 ms arriving at 10 * i ms, in one 1 s tumbling
    window; the end of input fires and cleans up each key's pane (one count each)."""
    return count_per_key([(k, 100 * i + 50) for i, k in enumerate(KEYS)], 1000, arrival_interval=10)


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == kind]


def test_key_text_quotes_only_str_keys_that_read_as_json() -> None:
    assert [key_text(k) for k in KEYS] == LABELS
    assert key_texts(KEYS + KEYS[::-1]) == LABELS + LABELS[::-1]
    assert key_texts(["k03", "user 7", "nope", ""]) == ["k03", "user 7", "nope", ""]
    assert key_texts([0.0, -0.0, "NaN", " 2"]) == ["0.0", "-0.0", '"NaN"', '" 2"']


def test_equal_in_python_distinct_keys_get_a_lane_each() -> None:
    result = keys_job()
    assert len(result.outputs["out"]) == len(KEYS)  # the engine: six keys, six panes
    spec = viz.window_lanes(result.trace).to_dict()
    assert spec["title"]["subtitle"][0] == "operator 'window': 6 keys, 6 windows"
    bars = sorted((b["key"], b["elements"], b["firings"]) for b in rows_of(spec, "window"))
    assert bars == sorted((label, 1, 1) for label in LABELS)
    fired = [
        r
        for rows in spec["datasets"].values()
        for r in rows
        if str(r.get("what", "")).startswith("fired")
    ]
    # one firing mark in each key's own lane (not "×3" in the lane of 1)
    assert sorted((r["key"], r["n"], r["label"]) for r in fired) == sorted(
        (label, 1, "") for label in LABELS
    )
    domain = next(
        lay["encoding"]["y"]["scale"]["domain"]
        for lay in spec["layer"]
        if "scale" in lay.get("encoding", {}).get("y", {})
    )
    assert sorted(domain) == sorted(LABELS)


def test_equal_in_python_distinct_keys_in_the_timers_and_timeline() -> None:
    result = keys_job()
    spec = viz.timers_chart(result.trace).to_dict()
    assert spec["title"]["subtitle"][0].startswith("operator 'window': 6 timers of 6 key(s)")
    timers = rows_of(spec, "timer")
    assert [t["key"] for t in timers] == LABELS
    (coloured,) = [lay for lay in spec["hconcat"][0]["layer"] if "color" in lay["encoding"]]
    colour = coloured["encoding"]["color"]["scale"]["domain"]
    assert colour == LABELS

    spec = viz.timeline(result.trace, view="timeline").to_dict()
    assert spec["title"]["subtitle"][0] == (
        "operator 'window': 6 elements, 6 (key, window) pairs, 6 firings"
    )
    (fired,) = rows_of(spec, "fired")
    assert fired["key"] == ", ".join(LABELS)
    (cleaned,) = rows_of(spec, "cleanup")
    assert cleaned["key"] == ", ".join(LABELS)
    assert [e["key"] for e in rows_of(spec, "element")] == LABELS

    spec = viz.scrubber(result.trace).to_dict()
    assert [e["key"] for e in rows_of(spec, "element")][: len(KEYS)] == LABELS


LONG = ["customer-session-0000000000000000-a", "customer-session-0000000000000000-b"]


def test_long_keys_with_one_beginning_keep_a_lane_each() -> None:
    """Cut to 30 characters, both keys read "customer-session-000000000000…": the lanes drew
    one lane of "1 keys" for the two, the timers "of 1 key(s)", the timeline "1 (key, window)
    pairs". A cut label ends with a hash of the whole key's text."""
    labels = [key_text(k) for k in LONG]
    assert labels[0] != labels[1]
    assert all(len(t) == 30 and t.startswith("customer-session-000…#") for t in labels)
    assert key_text("x" * 30) == "x" * 30  # a key that fits is not cut
    events = [(k, 50 + 100 * i) for i, k in enumerate(LONG)]
    trace = count_per_key(events, 1000, arrival_interval=10).trace
    spec = viz.window_lanes(trace).to_dict()
    assert spec["title"]["subtitle"][0] == "operator 'window': 2 keys, 2 windows"
    assert sorted(b["key"] for b in rows_of(spec, "window")) == sorted(labels)
    spec = viz.timers_chart(trace).to_dict()
    assert spec["title"]["subtitle"][0].startswith("operator 'window': 2 timers of 2 key(s)")
    spec = viz.timeline(trace, view="timeline").to_dict()
    assert spec["title"]["subtitle"][0] == (
        "operator 'window': 2 elements, 2 (key, window) pairs, 2 firings"
    )
    assert [e["key"] for e in rows_of(spec, "element")] == labels
