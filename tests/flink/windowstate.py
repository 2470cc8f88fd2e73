"""Per-window state as Flink keeps it: real Flink 2.3.0 (``src/flinkdiff/WindowState.java``) and
winviz run the same jobs; both must agree.

    python tests/flink/windowstate.py          (make -C tests/flink windowstate)

**leak / clear** — records 0, 1, 2 of one key, apart in processing time (Flink: a
``DataGeneratorSource`` emitting one record per completed checkpoint; winviz: arrivals 0, 100,
200 ms); a processing-time assigner puts each into the window [0, 10), a trigger FIREs on every
element, and the window's cleanup timer (processing time 9, long past) fires before the next
record: ``clearAllState`` runs after every firing. The ProcessWindowFunction counts the window's
firings in per-window state and the key's in global state; its ``clear`` clears the per-window
counter in case "clear" only. Flink's ``clearAllState`` leaves per-window state to the
function's ``clear``: in case "leak" the window's counter reads 1, 2, 3 although each firing
sees a window emptied by the cleanup before; in case "clear" it reads 1, 1, 1.

**merging** — a session-window job whose function asks for per-window state fails with
``UnsupportedOperationException("Per-window state is not allowed when using merging
windows.")`` (``WindowOperator.MergingWindowStateStore``); winviz's error starts with the same
sentence.

Compared: each case's calls in order up to its last firing — the firings (records, window
firings, key firings) and the ``clear`` calls between them (the last cleanup falls due as the
input ends; see ``until_last_firing``) — and the refusal. Prints ``windowstate: 3 cases, M
mismatches`` (exit 1 on a mismatch).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)


def run_flink() -> dict[str, Any]:
    return run_java("WindowState", "windowstate")


class AlwaysZeroToTen(wv.WindowAssigner):
    """A processing-time assigner that puts every element into [0, 10)."""

    is_event_time = False

    def assign_windows(self, element, timestamp, current_processing_time):
        return [wv.TimeWindow(0, 10)]

    def default_trigger(self):
        return FireOnElement()


class FireOnElement(wv.Trigger):
    """FIRE on every element; no timers, no state."""

    def on_element(self, element, timestamp, window, ctx):
        return wv.TriggerResult.FIRE


def run_winviz() -> dict[str, Any]:
    """The same jobs in winviz, as the lists WindowState.java writes."""
    log: list[dict[str, Any]] = []

    class Firings(wv.ProcessWindowFunction):
        def __init__(self, name: str) -> None:
            self.name = name

        def process(self, key, context, elements, out):
            window, everything = context.window_state(), context.global_state()
            window.update((window.get() or 0) + 1)
            everything.update((everything.get() or 0) + 1)
            log.append(
                {
                    "case": self.name,
                    "call": "process",
                    "records": list(elements),
                    "window_firings": window.get(),
                    "key_firings": everything.get(),
                }
            )
            out.collect(key)

        def clear(self, context):
            w = context.window()
            log.append({"case": self.name, "call": "clear", "window": [w.start, w.end]})
            if self.name == "clear":
                context.window_state().clear()

    for name in ("leak", "clear"):
        env = wv.StreamExecutionEnvironment()
        (
            env.from_collection([0, 1, 2], arrival_times=[0, 100, 200])
            .key_by(lambda e: "k")
            .window(AlwaysZeroToTen())
            .trigger(FireOnElement())
            .process(Firings(name))
            .sink_to("out")
        )
        env.execute()

    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([1, 2])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e)
        )
        .key_by(lambda e: "k")
        .window(wv.EventTimeSessionWindows.with_gap(10))
        .process(Firings("merging"))
        .sink_to("out")
    )
    merging: dict[str, Any] = {"exception": "none"}
    try:
        env.execute()
    except wv.UnsupportedOperationError as error:
        merging = {"exception": "java.lang.UnsupportedOperationException", "message": str(error)}
    return {"log": log, "merging": merging}


def until_last_firing(log: list[dict[str, Any]], case: str) -> list[dict[str, Any]]:
    """A case's calls up to its last firing. The last record's cleanup timer (processing time 9)
    falls due as the input ends: Flink 2.3.0 ran it here (its rate-limited source reports the
    end after the timer's mail ran), winviz ends the STREAMING run without firing it; that is
    end-of-input timing, not per-window state, so it is shown, not compared."""
    calls = [c for c in log if c["case"] == case]
    last = max(i for i, c in enumerate(calls) if c["call"] == "process")
    return calls[: last + 1]


def main() -> int:
    flink, ours = run_flink(), run_winviz()
    mismatches = 0
    for case in ("leak", "clear"):
        theirs, mine = until_last_firing(flink["log"], case), until_last_firing(ours["log"], case)
        if theirs != mine:
            mismatches += 1
            print(f"windowstate: {case}: Flink  {theirs}")
            print(f"windowstate: {case}: winviz {mine}")
        tail = [c["call"] for c in flink["log"] if c["case"] == case][len(theirs) :]
        tail_ours = [c["call"] for c in ours["log"] if c["case"] == case][len(mine) :]
        print(f"windowstate: {case}: after the last firing Flink {tail}, winviz {tail_ours}")
    theirs, mine = flink["merging"], ours["merging"]
    if theirs["exception"] != mine["exception"] or not mine.get("message", "").startswith(
        theirs.get("message", "-")
    ):
        mismatches += 1
        print(f"windowstate: merging: Flink {theirs}\nwindowstate: merging: winviz {mine}")
    fired = [c for c in flink["log"] if c["call"] == "process"]
    leak = [f["window_firings"] for f in fired if f["case"] == "leak"]
    print(
        f"windowstate: Flink's per-window counter without clear(): {leak} (it outlives each "
        f"cleanup); with clear(): "
        f"{[f['window_firings'] for f in fired if f['case'] == 'clear']}; "
        f"merging windows: {theirs['exception']}: {theirs.get('message')}"
    )
    print(f"windowstate: 3 cases, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
