"""Every legend of every chart is true of the trace (``legend_truth.legends``): it names only
values drawn, and every value drawn on its scale is named — over the charts of
tests/chart_jobs.py and the 200,000-event trace of bench/viz_bench.py (binned views)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import chart_jobs
import pytest
from legend_truth import legends

from winviz import viz

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from viz_bench import make_trace

CHARTS = {**chart_jobs.CHARTS, "skew_chart": viz.skew_chart}

DEDUP = "registration of a timer that already existed (de-duplicated)"
EVENTS = ["registered", DEDUP, "fired"]  # (a timer's events drawn; none "queued at the end")

EXPECTED: dict[tuple[str, str], dict[str, list[Any]]] = {
    ("200k", "propagation_chart"): {"color": ["watermarks", "window"]},
    ("200k", "scrubber"): {
        "what (element)": ["on time", "late, accepted", "side output"],
        "what (firing)": ["fired: element", "fired: event-time timer", "fired: end of input"],
    },
    ("200k", "skew_chart"): {
        "color": ["on time", "late, accepted", "side output"],
        "shape": ["on time", "late, accepted", "side output"],
    },
    ("200k", "timeline"): {
        "color": [
            "on time",
            "late, accepted",
            "side output",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "cleanup",
        ],
        "line": [
            "allowed-lateness horizon (max timestamp + lateness)",
            "event time = processing time (ideal)",
        ],
        "operator (watermark of)": ["watermarks, window (same)", "source"],
        "shape": [
            "on time",
            "late, accepted",
            "side output",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "cleanup",
        ],
    },
    ("200k", "window_lanes"): {"strokeDash": ["horizons of a cell's windows: earliest to latest"]},
    ("kernel", "operator_flow"): {
        "fill": ["taken by this element", "not taken"],
        "stroke": ["taken by this element", "not taken"],
    },
    ("kernel", "propagation_chart"): {"color": ["watermarks", "window"]},
    ("kernel", "scrubber"): {
        "what (element)": ["on time"],
        "what (firing)": ["fired: event-time timer", "fired: end of input"],
    },
    ("kernel", "skew_chart"): {"color": ["on time"], "shape": ["on time"]},
    ("kernel", "stage_watermarks"): {},
    ("kernel", "timeline"): {
        "color": ["on time", "fired: event-time timer", "fired: end of input", "cleanup"],
        "line": ["event time = processing time (ideal)"],
        "operator (watermark of)": ["watermarks, window (same)", "source"],
        "shape": ["on time", "fired: event-time timer", "fired: end of input", "cleanup"],
    },
    ("kernel", "window_lanes"): {
        "color": ["fired: event-time timer", "fired: end of input", "cleanup"],
        "shape": ["fired: event-time timer", "fired: end of input", "cleanup"],
        "status (window status)": ["fired"],
    },
    ("kernel_binned", "operator_flow"): {
        "fill": ["taken by this element", "not taken"],
        "stroke": ["taken by this element", "not taken"],
    },
    ("kernel_binned", "propagation_chart"): {"color": ["watermarks", "window"]},
    ("kernel_binned", "scrubber"): {
        "what (element)": ["on time"],
        "what (firing)": ["fired: event-time timer", "fired: end of input"],
    },
    ("kernel_binned", "skew_chart"): {"color": ["on time"], "shape": ["on time"]},
    ("kernel_binned", "stage_watermarks"): {},
    ("kernel_binned", "timeline"): {
        "color": ["on time", "fired: event-time timer", "fired: end of input", "cleanup"],
        "line": ["event time = processing time (ideal)"],
        "operator (watermark of)": ["watermarks, window (same)", "source"],
        "shape": ["on time", "fired: event-time timer", "fired: end of input", "cleanup"],
    },
    ("kernel_binned", "window_lanes"): {
        "color": ["fired: event-time timer", "fired: end of input", "cleanup"],
        "shape": ["fired: event-time timer", "fired: end of input", "cleanup"],
        "status (window status)": ["fired"],
    },
    ("late_union", "operator_flow"): {
        "fill": ["taken by this element", "not taken"],
        "stroke": ["taken by this element", "not taken"],
    },
    ("late_union", "propagation_chart"): {
        "color": ["watermarks", "window", "watermarks_2", "window_2"]
    },
    ("late_union", "scrubber"): {
        "what (element)": ["on time", "late, accepted", "side output"],
        "what (firing)": ["fired: element", "fired: event-time timer", "fired: end of input"],
    },
    ("late_union", "skew_chart"): {
        "color": ["on time", "late, accepted", "side output"],
        "shape": ["on time", "late, accepted", "side output"],
    },
    ("late_union", "stage_watermarks"): {},
    ("late_union", "timeline"): {
        "color": [
            "on time",
            "late, accepted",
            "side output",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "cleanup",
        ],
        "line": ["allowed-lateness horizon (max timestamp + lateness)"],
        "operator (watermark of)": [
            "watermarks, window (same)",
            "watermarks_2, window_2 (same)",
            "source, source_2 (same)",
        ],
        "shape": [
            "on time",
            "late, accepted",
            "side output",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "cleanup",
        ],
    },
    ("late_union", "window_lanes"): {
        "color": ["fired: element", "fired: event-time timer", "fired: end of input", "cleanup"],
        "line (allowed lateness)": ["accepts late elements until max timestamp + lateness"],
        "shape": ["fired: element", "fired: event-time timer", "fired: end of input", "cleanup"],
        "status (window status)": ["fired"],
    },
    ("session", "operator_flow"): {
        "fill": ["taken by this element", "not taken"],
        "stroke": ["taken by this element", "not taken"],
    },
    ("session", "propagation_chart"): {"color": ["watermarks", "window"]},
    ("session", "scrubber"): {
        "what (element)": ["on time", "late, accepted", "dropped"],
        "what (firing)": ["fired: element", "fired: event-time timer", "fired: end of input"],
    },
    ("session", "skew_chart"): {
        "color": ["on time", "late, accepted", "dropped"],
        "shape": ["on time", "late, accepted", "dropped"],
    },
    ("session", "stage_watermarks"): {},
    ("session", "timeline"): {
        "color": [
            "on time",
            "late, accepted",
            "dropped",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "merged",
            "cleanup",
        ],
        "line": ["allowed-lateness horizon (max timestamp + lateness)"],
        "operator (watermark of)": ["watermarks, window (same)", "source"],
        "shape": [
            "on time",
            "late, accepted",
            "dropped",
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "merged",
            "cleanup",
        ],
    },
    ("session", "window_lanes"): {
        "color": [
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "merged",
            "cleanup",
        ],
        "line (allowed lateness)": [
            "accepts late elements until max timestamp + lateness",
            "merged away: its cleanup timer, deleted at the merge",
        ],
        "shape": [
            "fired: element",
            "fired: event-time timer",
            "fired: end of input",
            "merged",
            "cleanup",
        ],
        "status (window status)": ["fired", "merged away"],
    },
    ("sliding_count", "operator_flow"): {
        "fill": ["taken by this element", "not taken"],
        "stroke": ["taken by this element", "not taken"],
    },
    ("sliding_count", "propagation_chart"): {"color": ["watermarks", "window"]},
    ("sliding_count", "scrubber"): {
        "what (element)": ["on time", "late, accepted", "dropped"],
        "what (firing)": ["fired: element"],
    },
    ("sliding_count", "skew_chart"): {
        "color": ["on time", "late, accepted", "dropped"],
        "shape": ["on time", "late, accepted", "dropped"],
    },
    ("sliding_count", "stage_watermarks"): {},
    ("sliding_count", "timeline"): {
        "color": ["on time", "late, accepted", "dropped", "fired: element", "cleanup"],
        "line": ["allowed-lateness horizon (max timestamp + lateness)"],
        "operator (watermark of)": ["watermarks, window (same)", "source"],
        "shape": ["on time", "late, accepted", "dropped", "fired: element", "cleanup"],
    },
    ("sliding_count", "window_lanes"): {
        "color": ["fired: element", "cleanup"],
        "line (allowed lateness)": ["accepts late elements until max timestamp + lateness"],
        "shape": ["fired: element", "cleanup"],
        "status (window status)": ["fired", "not fired"],
    },
    ("kernel", "timers_chart"): {
        "0/domain (timer domain)": ["event"],
        "strokeDash": ["event"],
        "event (timer event)": EVENTS,
    },
    ("kernel_binned", "timers_chart"): {
        "0/domain (timer domain)": ["event"],
        "strokeDash": ["event"],
        "event (timer event)": EVENTS,
    },
    ("late_union", "timers_chart"): {
        "key (timer of key)": ["1", "true", '"1"'],
        "strokeDash": ["event"],
        "event (timer event)": EVENTS,
    },
    ("sliding_count", "timers_chart"): {
        "key (timer of key)": ["1", "true", "1.5"],
        "strokeDash": ["event"],
        "event (timer event)": EVENTS,
    },
    ("session", "timers_chart"): {
        "key (timer of key)": ["s0", "s1", "s2", "s3"],
        "strokeDash": ["event"],
        "event (timer event)": [*EVENTS, "deleted"],
    },
}
"""Each (job, chart)'s legends by name (``legends``), exactly; "200k": ``make_trace(200_000)``."""


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return {job: make() for job, make in chart_jobs.JOBS.items()}


@pytest.mark.parametrize("job", list(chart_jobs.JOBS))
def test_gallery_job_legends_name_what_is_drawn(results: dict[str, Any], job: str) -> None:
    got = {(job, name): legends(draw(results[job])) for name, draw in CHARTS.items()}
    assert got == {k: v for k, v in EXPECTED.items() if k[0] == job}


def test_200k_legends_name_what_is_drawn() -> None:
    """The reported defect: the binned skew chart named "dropped", no element of it dropped
    (its legend was the four fates whatever the trace held)."""
    trace = make_trace(200_000)
    big = {
        "skew_chart": viz.skew_chart,
        "timeline": lambda t: viz.timeline(t, view="timeline"),
        "window_lanes": viz.window_lanes,
        "scrubber": viz.scrubber,
        "propagation_chart": viz.propagation_chart,
    }
    got = {("200k", name): legends(draw(trace)) for name, draw in big.items()}
    assert got == {k: v for k, v in EXPECTED.items() if k[0] == "200k"}
    fates = viz.skew_chart(trace)["usermeta"]["winviz"]["notes"][0]
    assert fates == (
        "operator 'window': 200,000 elements: 87,728 on time, 109,105 late, accepted, "
        "3,167 side output"
    )


def test_a_false_legend_fails() -> None:
    """The check can fail: an entry naming nothing drawn, and a value drawn it does not name."""
    rows = [{"x": 1, "f": "a"}, {"x": 2, "f": "c"}]
    chart = {
        "data": {"values": rows},
        "mark": "point",
        "encoding": {"color": {"field": "f", "type": "nominal", "scale": {"domain": ["a", "b"]}}},
    }
    with pytest.raises(AssertionError, match=r"legend color: not drawn \['b'\], unnamed \['c'\]"):
        legends(chart)
    chart["encoding"]["color"]["scale"]["domain"] = ["a", "c"]
    assert legends(chart) == {"color": ["a", "c"]}
