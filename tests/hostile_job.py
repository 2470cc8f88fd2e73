"""A job whose every name and value is hostile: the security tests (issue 16) feed it to every
chart and every page writer.

Keys, element payloads, the source, operator and sink names and an OutputTag id are markup,
script, quote and expression-breaking strings. A page that lets any of them become markup or
code sets ``window.__pwned``; the tests assert it stays unset and that the text is shown as
text. Also used by the lesson notebook of tests/browser/test_hostile_pages.py, which copies
this file next to the notebook and imports it.
"""

from __future__ import annotations

from typing import Any

import winviz as wv

SCRIPT = "</script><script>window.__pwned=1</script>"
IMG = "<img src=x onerror=window.__pwned=1>"
QUOTES = 'q"\'`\\\\" \u2028 \u2029 <!-- --> & &amp; ${x}'
EXPR = "' + (window.__pwned=1) + '\" || datum['x'] || \""
LONG = "<b>long</b>" * 1_000  # 11,000 characters
PAYLOADS = (SCRIPT, IMG, QUOTES, EXPR, LONG)
KEYS = (SCRIPT, IMG, QUOTES, EXPR)
"""Keys (LONG is an element payload, not a key: 11k-character lane labels are no test)."""
SOURCE = "src " + SCRIPT
WINDOW_OP = "win " + IMG
PROCESS_OP = "timers " + SCRIPT + " " + LONG  # the timers chart's subtitle holds all of it
SINK = "sink " + QUOTES
LATE_TAG = wv.OutputTag("late " + IMG)


class _Timers(wv.KeyedProcessFunction):
    """Registers an event-time timer 100 ms after each element and emits the key."""

    def process_element(self, value: Any, ctx: Any, out: Any) -> None:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)

    def on_timer(self, timestamp: int, ctx: Any, out: Any) -> None:
        out.collect(f"{ctx.get_current_key()} fired at {timestamp}")


def run() -> wv.JobExecutionResult:
    """Two source partitions (so the watermark operator has two channels), a keyed window
    with a late-data side output, and a keyed process function with timers."""
    p0 = [(KEYS[i % 4], 100 + 900 * i, PAYLOADS[i % 5]) for i in range(6)]
    p1 = [(KEYS[(i + 1) % 4], 300 + 800 * i, PAYLOADS[(i + 2) % 5]) for i in range(4)]
    p1.append((KEYS[0], 50, "late " + SCRIPT))  # behind the watermark: late
    env = wv.StreamExecutionEnvironment()
    events = env.from_partitions(
        [p0, p1],
        arrival_times=[[100 * i for i in range(6)], [50 + 100 * i for i in range(5)]],
        name=SOURCE,
    ).assign_timestamps_and_watermarks(
        wv.WatermarkStrategy.for_bounded_out_of_orderness(200).with_timestamp_assigner(
            lambda e, _: e[1]
        )
    )
    windowed = (
        events.key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .side_output_late_data(LATE_TAG)
        .aggregate(wv.CountAggregate())
        .name(WINDOW_OP)
    )
    windowed.sink_to(SINK)
    windowed.get_side_output(LATE_TAG).sink_to("late " + SCRIPT)
    events.key_by(lambda e: e[0]).process(_Timers()).name(PROCESS_OP).sink_to(SINK + " 2")
    return env.execute()


def charts(result: Any) -> dict[str, Any]:
    """Every chart of the kit for the hostile run, by name."""
    trace = result.trace
    return {
        "timeline": wv.timeline(trace, operator=WINDOW_OP),
        "window_lanes": wv.window_lanes(trace, operator=WINDOW_OP),
        "timers_chart": wv.timers_chart(trace, operator=PROCESS_OP),
        "scrubber": wv.scrubber(trace, operator=WINDOW_OP),
        "propagation_chart": wv.propagation_chart(trace),
    }
