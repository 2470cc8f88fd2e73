"""Restore as Flink restores: real Flink 2.3.0 (``src/flinkdiff/Restore.java``) and winviz run
the same job, which fails once after a checkpoint and restarts from it; both must agree.

    python tests/flink/restore.py          (make -C tests/flink restore)

The job: a@100, a@1200, b@1300, a@500 (key, timestamp), watermark ``ts - 1`` after every record
(punctuated, so the run is deterministic), a tumbling 1 s window per key with a late side output,
a checkpoint before a@500 (Flink: a ``DataGeneratorSource`` that emits one record per completed
checkpoint; winviz: ``enable_checkpointing(at_records=[3])``) and a failure once a@500 reached
the late side output (Flink: a map on the side output that throws in attempt 0; winviz:
``execute(fail_at=4)``). Compared, by attempt (before / after the restore): the firings (key,
window, sorted timestamps) and the late records (key, timestamp). Flink does not checkpoint
watermarks, so after the restore a@500 is on time: a's window [0, 1000) fires a second time,
with a@500, and nothing is late in attempt 1. Prints ``restore: 1 case, M mismatches`` (exit 1
on a mismatch).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)

RECORDS = [("a", 100), ("a", 1_200), ("b", 1_300), ("a", 500)]


def run_flink() -> dict[str, Any]:
    return run_java("Restore", "restore")


def run_winviz() -> dict[str, Any]:
    """The same job in winviz, as the same lists Restore.java writes (attempt: 0 before the
    trace's ``restore`` record, 1 after it)."""
    late = wv.OutputTag("late")
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[3])
    (
        env.from_collection(RECORDS)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_punctuated(lambda e, ts: ts - 1).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1_000))
        .side_output_late_data(late)
        .process(
            lambda key, ctx, els, out: out.collect(
                (key, ctx.window().start, ctx.window().end, sorted(e[1] for e in els))
            )
        )
        .sink_to("fired")
    )
    result = env.execute(fail_at=4)
    trace = result.trace
    (restore,) = trace.records("restore")

    def attempt(seq: int) -> int:
        return int(seq > restore.seq)

    fired = [
        {"attempt": attempt(r.seq), "key": k, "window": [s, e], "values": values}
        for r in trace.records("emitted", operator="window")
        for k, s, e, values in [r.detail]
    ]
    late_records = [
        {"attempt": attempt(r.seq), "key": r.details()["value"][0], "ts": r.ts}
        for r in trace.records("side_output", operator="window")
    ]
    return {"fired": fired, "late": late_records}


def canonical(doc: dict[str, Any]) -> dict[str, Counter]:
    """The firings and late records as multisets (Flink does not order timers of one
    timestamp; neither is compared by order)."""
    return {
        "fired": Counter(
            (f["attempt"], f["key"], tuple(f["window"]), tuple(f["values"])) for f in doc["fired"]
        ),
        "late": Counter((x["attempt"], x["key"], x["ts"]) for x in doc["late"]),
    }


def main() -> int:
    flink, ours = canonical(run_flink()), canonical(run_winviz())
    mismatches = 0
    for part in ("fired", "late"):
        if flink[part] != ours[part]:
            mismatches += 1
            print(f"restore: {part}: Flink {sorted(flink[part].items())}")
            print(f"restore: {part}: winviz {sorted(ours[part].items())}")
    second = [f for f in flink["fired"] if f[0] == 1 and f[1:3] == ("a", (0, 1_000))]
    print(
        "restore: Flink fired a's window [0, 1000) again after the restore: "
        f"{[f[3] for f in second]}; late after the restore: "
        f"{[x for x in flink['late'] if x[0] == 1]}"
    )
    print(f"restore: 1 case, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
