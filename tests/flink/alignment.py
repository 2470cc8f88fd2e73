"""The differential tier's watermark-alignment part: winviz's alignment decisions against REAL
Flink 2.3.0 classes, call by call.

    python tests/flink/alignment.py [--cases N] [--seed S]

Flink's alignment runs on wall-clock timers (a reader reports every update interval, the
coordinator announces every update interval, each on its own thread), so a whole Flink job
does not pause at reproducible moments. What is deterministic is the logic those timers call,
and that is what this compares: winviz runs N seeded random jobs with aligned sources
(several sources, partitioned ones with per-split alignment, parallel readers, idleness,
different drifts, update intervals and buffer sizes, a second group); every call its runtime
makes to a reader's alignment (``winviz.alignment.SourceReaderAlignment``: a watermark or
idleness change of the reader or a split, the periodic sample-and-report, the end of the
input, an announcement received) and to a source's coordinator (``AlignmentCoordinator``: a
report, an announcement) is recorded with winviz's answer. ``flinkdiff.Align`` replays the
same calls into Flink's own ``SourceOperator`` and ``SourceCoordinator`` (see its javadoc) and
writes Flink's answers: after each call whether the reader waits for alignment, which splits
are paused, the watermark reported, and the max watermark announced to which subtasks. They
must be equal, call by call.

Exits with 1 when anything differs; closes with ``alignment: N cases, M mismatches``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)
import winviz.operators.aligned_input as aligned_input  # noqa: E402
from winviz.alignment import AlignmentCoordinator, SourceReaderAlignment  # noqa: E402

SHOW_DETAILED = 5


# --------------------------------------------------------------------------- recording


class Recording:
    """The calls of one run, each with winviz's answer (``expect``)."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []
        self.expect: list[dict[str, Any]] = []
        self.readers = 0

    def add(self, op: dict[str, Any], expect: dict[str, Any]) -> None:
        self.ops.append(op)
        self.expect.append(expect)


RECORDING = Recording()


def _splits(splits: Any) -> list[str]:
    return sorted(str(s) for s in splits)


class RecordedReader(SourceReaderAlignment):
    """``SourceReaderAlignment`` that records each call and its answer."""

    def __init__(self, params, buffer_size, splits):
        super().__init__(params, buffer_size, splits)
        self.id = RECORDING.readers
        RECORDING.readers += 1
        self.quiet = False
        RECORDING.add(
            {
                "op": "reader",
                "id": self.id,
                "group": params.group,
                "drift": params.max_drift,
                "interval": params.update_interval,
                "buffer": buffer_size,
                "splits": None if splits is None else [str(s) for s in splits],
            },
            self._state(None),
        )

    def _state(self, report: int | None) -> dict[str, Any]:
        state = {"waiting": self.waiting, "paused": _splits(self.paused_splits)}
        if report is not None:
            state["report"] = report
        return state

    def _record(self, op: dict[str, Any], report: int | None = None) -> None:
        if not self.quiet:
            RECORDING.add({**op, "id": self.id}, self._state(report))

    def update_effective_watermark(self, watermark):
        out = super().update_effective_watermark(watermark)
        self._record({"op": "eff", "w": watermark})
        return out

    def update_idle(self, idle):
        super().update_idle(idle)
        self._record({"op": "idle", "idle": idle})

    def update_split_watermark(self, split, watermark):
        out = super().update_split_watermark(split, watermark)
        self._record({"op": "swm", "split": str(split), "w": watermark})
        return out

    def update_split_idle(self, split, idle):
        out = super().update_split_idle(split, idle)
        self._record({"op": "sidle", "split": str(split), "idle": idle})
        return out

    def on_alignment_event(self, max_allowed):
        out = super().on_alignment_event(max_allowed)
        self._record({"op": "event", "max": max_allowed})
        return out

    def sample_and_report(self):
        decisions, report = super().sample_and_report()
        self._record({"op": "sample"}, report)
        return decisions, report

    def finish(self):
        self.quiet = True
        try:
            decisions, report = super().finish()
        finally:
            self.quiet = False
        self._record({"op": "finish"}, report)
        return decisions, report


class RecordedCoordinator(AlignmentCoordinator):
    """``AlignmentCoordinator`` that records each call and its answer."""

    def __init__(self, source, params, store):
        super().__init__(source, params, store)
        RECORDING.add(
            {
                "op": "coord",
                "coord": source,
                "group": params.group,
                "drift": params.max_drift,
                "interval": params.update_interval,
            },
            {},
        )

    def report(self, subtask, watermark):
        super().report(subtask, watermark)
        op = {"op": "report", "coord": self.source, "subtask": subtask, "w": watermark}
        RECORDING.add(op, {})

    def announce(self):
        max_allowed, receivers = super().announce()
        expect: dict[str, Any] = {"to": list(receivers)}
        if receivers:
            expect["max"] = max_allowed
        RECORDING.add({"op": "announce", "coord": self.source}, expect)
        return max_allowed, receivers


aligned_input.SourceReaderAlignment = RecordedReader  # type: ignore[misc]
aligned_input.AlignmentCoordinator = RecordedCoordinator  # type: ignore[misc]


# --------------------------------------------------------------------------- random jobs


def _arrivals(rng: random.Random, n: int) -> list[int]:
    t, out = 0, []
    for _ in range(n):
        t += rng.choice([0, 50, 100, 100, 100, 200, 300, 1000, 2500])
        out.append(t)
    return out


def _timestamps(rng: random.Random, arrivals: list[int], speed: int, jitter: int) -> list[int]:
    return [a * speed + rng.randint(-jitter, jitter) for a in arrivals]


def _strategy(rng: random.Random) -> Any:
    if rng.random() < 0.5:
        s = wv.WatermarkStrategy.for_monotonous_timestamps()
    else:
        s = wv.WatermarkStrategy.for_bounded_out_of_orderness(rng.choice([0, 50, 300, 1000]))
    s = s.with_timestamp_assigner(lambda e, _: e)
    if rng.random() < 0.3:
        s = s.with_idleness(rng.choice([300, 700, 1500]))
    if rng.random() < 0.85:
        s = s.with_watermark_alignment(
            "g" if rng.random() < 0.8 else "h",
            rng.choice([0, 10, 100, 500, 1000, 3000]),
            rng.choice([100, 250, 500, 1000]),
        )
    return s


def random_job(rng: random.Random) -> tuple[wv.StreamExecutionEnvironment, str]:
    """A random job with 1-3 sources, some partitioned (one watermark generator per
    partition), some with two readers; returns it and a description."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=rng.choice([50, 100, 200]))
    env.set_watermark_alignment_buffer_size(rng.choice([0, 1, 2, 3, 3, 4]))
    streams, desc = [], []
    for k in range(rng.randint(1, 3)):
        name = f"s{k}"
        speed = rng.choice([1, 1, 2, 5, 10, 20])
        jitter = rng.choice([0, 0, 50, 400])
        if rng.random() < 0.4:
            parts = rng.randint(1, 3)
            arrivals = [_arrivals(rng, rng.randint(0, 30)) for _ in range(parts)]
            stamps = [_timestamps(rng, a, speed * rng.choice([1, 1, 3]), jitter) for a in arrivals]
            stream = env.from_partitions(stamps, arrival_times=arrivals, name=name)
            if parts > 1 and rng.random() < 0.3:
                stream = stream.set_parallelism(2)
            desc.append(f"{name}: {parts} partitions")
        else:
            arrivals = _arrivals(rng, rng.randint(1, 40))
            stamps = _timestamps(rng, arrivals, speed, jitter)
            stream = env.from_collection(stamps, arrival_times=arrivals, name=name)
            desc.append(f"{name}: {len(stamps)} records")
        streams.append(stream.assign_timestamps_and_watermarks(_strategy(rng)))
    out = streams[0].union(*streams[1:]) if len(streams) > 1 else streams[0]
    out.sink_to("out")
    return env, "; ".join(desc)


def run_case(rng: random.Random, i: int) -> dict[str, Any] | None:
    """One random job through winviz, recorded; None when it has no aligned source."""
    global RECORDING
    RECORDING = Recording()
    env, desc = random_job(rng)
    outcome = "done"
    try:
        env.execute()
    except wv.AlignmentStallError:
        outcome = "stalled"  # (the calls up to the stall are compared all the same)
    if not RECORDING.ops:
        return None
    pauses = sum(
        1 for op, e in zip(RECORDING.ops, RECORDING.expect, strict=True)
        if e.get("waiting") or e.get("paused")
    )  # fmt: skip
    return {
        "name": f"align-{i}",
        "desc": f"{desc} ({outcome})",
        "ops": RECORDING.ops,
        "expect": RECORDING.expect,
        "pausing": pauses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases: list[dict[str, Any]] = []
    started = time.monotonic()
    i = 0
    while len(cases) < args.cases:
        case = run_case(rng, i)
        i += 1
        if case is not None:
            cases.append(case)
    winviz_s = time.monotonic() - started
    started = time.monotonic()
    done = run_java("Align", "alignment", {"cases": cases})
    flink_s = time.monotonic() - started
    flink = {c["name"]: c for c in done["cases"]}
    mismatches = 0
    calls = sum(len(c["ops"]) for c in cases)
    for case in cases:
        got = flink[case["name"]]
        if "error" in got:
            mismatches += 1
            print(f"{case['name']} ({case['desc']}): Flink failed: {got['error']}")
            continue
        for n, (op, want, have) in enumerate(
            zip(case["ops"], case["expect"], got["results"], strict=True)
        ):
            if want != have:
                mismatches += 1
                if mismatches <= SHOW_DETAILED:
                    print(
                        f"{case['name']} ({case['desc']}), call {n} {op}: "
                        f"winviz {want}, Flink {have}"
                    )
                break
    pausing = sum(1 for c in cases if c["pausing"])
    splits = sum(1 for c in cases if any(e.get("paused") for e in c["expect"]))
    stalled = sum(1 for c in cases if c["desc"].endswith("(stalled)"))
    print(
        f"alignment: {len(cases)} cases ({calls} calls; {pausing} cases pause something, "
        f"{splits} a partition; {stalled} stall; winviz {winviz_s:.1f} s, Flink "
        f"{flink_s:.1f} s), {mismatches} mismatches"
    )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
