"""The BATCH family of the differential tier: random bounded jobs in real Flink 2.3.0 with
``env.setRuntimeMode(RuntimeExecutionMode.BATCH)`` (``src/flinkdiff/Batch.java``) and in
winviz with ``env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)``.

    python tests/flink/batch.py --cases 300 --seed 1

Each case is a bounded collection of (key, ts, value) records, read by one source subtask,
into a keyed operator with parallelism 1-3, with a bounded out-of-orderness
strategy (which emits nothing in BATCH) and one of:

- **window** — keyed (or ``window_all``) tumbling / sliding / session event-time windows with
  allowed lateness and a late side output, then a sum (ReduceFunction) or a
  ProcessWindowFunction printing the window, its sorted values and the watermark it sees;
- **process** — a KeyedProcessFunction with keyed state (a count), event- and processing-time
  timers at ``ts + delay`` (some deleted), whose ``on_timer`` registers more timers (ignored:
  the timer service is quiesced at the end of a key);
- **reduce** — ``key_by().reduce()`` (Flink's BatchGroupedReduceOperator: one result per key).

Every output record is a line ``text@timestamp``. A case matches when both give the same
multiset of lines and, at parallelism 1, the keys in the same order (Flink's sorter orders
keys by their serialized bytes). Process and reduce cases also compare the order of lines: the
whole sequence at parallelism 1, each key's at parallelism > 1 (where subtasks interleave). A
key's records come sorted by timestamp and its timers fire in timestamp order; the generator
gives a process case no two records of one key with equal timestamps, whose order Flink's
QuickSort leaves open and a timer deletion would reveal. Within a key, window cases compare
multisets only: timers of one key with equal timestamps (a firing and another window's
cleanup) have no order Flink promises. A mismatching case is written to
``out/batch-failures/``. Closes with ``batch: N cases, M mismatches`` (exit 1 on any).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import OUT, run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)

MAX = wv.MAX


# --------------------------------------------------------------------------- random cases


def random_case(rnd: random.Random, i: int) -> dict:
    # String keys whose order in Flink's sorter (signed bytes of the serialized key: the
    # length first, then each char as 7-bit groups) differs from their first arrivals
    keys = rnd.sample(["a", "b", "B", "ab", "zz", "é", "ü1", "abc"], rnd.randint(1, 4))
    n = rnd.randint(1, 25)
    span = rnd.choice([3000, 10000, 30000])
    records = [[rnd.choice(keys), rnd.randrange(span), rnd.randint(1, 9)] for _ in range(n)]
    kind = rnd.choices(["window", "process", "reduce"], [6, 3, 1])[0]
    op: dict[str, Any] = {"type": kind, "bound": rnd.choice([0, 0, 500, 3000])}
    if kind == "window":
        shape = rnd.choice(["tumbling", "sliding", "session"])
        size = rnd.choice([1000, 2000, 5000])
        if shape == "tumbling":
            op["assigner"] = {"type": shape, "size": size, "offset": rnd.randrange(size)}
        elif shape == "sliding":
            slide = rnd.choice([s for s in (500, 1000, 2000) if s <= size])
            op["assigner"] = {"type": shape, "size": size, "slide": slide}
        else:
            op["assigner"] = {"type": shape, "gap": rnd.choice([300, 1000, 3000])}
        op["lateness"] = rnd.choice([0, 0, 1000, 5000])
        op["window_all"] = rnd.random() < 0.15
        op["function"] = "process" if op["window_all"] else rnd.choice(["reduce", "process"])
    elif kind == "process":
        # Flink's sort keeps no order among records of one key with equal timestamps
        # (QuickSort), and a delete makes the order matter: no such ties here
        taken: set[tuple[str, int]] = set()
        for r in records:
            while (r[0], r[1]) in taken:
                r[1] += 1
            taken.add((r[0], r[1]))
        op["event_delay"] = rnd.choice([0, 100, 2000])
        op["processing_delay"] = rnd.choice([-500, 0, 700])
        op["delete_every"] = rnd.choice([0, 0, 2, 3])
    parallelism = 1 if op.get("window_all") else rnd.choice([1, 1, 2, 3])
    return {"name": f"batch_{i:05d}", "records": records, "op": op, "parallelism": parallelism}


# --------------------------------------------------------------------------- winviz


def _line(e: tuple) -> str:
    return f"{e[0]}|{e[1]}|{e[2]}"


def _sum(a: tuple, b: tuple) -> tuple:
    return (a[0], max(a[1], b[1]), a[2] + b[2])


def _describe(key: str, ctx: Any, elements: list, watermark: int | None) -> str:
    w = ctx.window()
    values = ", ".join(str(v) for v in sorted(e[2] for e in elements))
    text = f"{key}|{w.start}|{w.end}|[{values}]"
    return text if watermark is None else f"{text}|{watermark}"


class Timers(wv.KeyedProcessFunction):
    """The Java ``Batch.Timers``."""

    def __init__(self, event_delay: int, processing_delay: int, delete_every: int) -> None:
        self.event_delay = event_delay
        self.processing_delay = processing_delay
        self.delete_every = delete_every

    def process_element(self, e, ctx, out):
        n = (ctx.state("count") or 0) + 1
        ctx.update_state("count", n)
        timers = ctx.timer_service()
        timers.register_event_time_timer(e[1] + self.event_delay)
        timers.register_processing_time_timer(e[1] + self.processing_delay)
        if self.delete_every and e[2] % self.delete_every == 0:
            timers.delete_event_time_timer(e[1] + self.event_delay)
        out.collect(f"el|{ctx.get_current_key()}|{e[1]}|{n}|{timers.current_watermark()}")

    def on_timer(self, t, ctx, out):
        timers = ctx.timer_service()
        out.collect(
            f"timer|{ctx.get_current_key()}|{t}|{ctx.time_domain()}|"
            f"{timers.current_watermark()}|{ctx.state('count')}"
        )
        timers.register_event_time_timer(t + 1)
        timers.register_processing_time_timer(t + 1)


def _assigner(spec: dict) -> Any:
    if spec["type"] == "tumbling":
        return wv.TumblingEventTimeWindows.of(spec["size"], spec["offset"])
    if spec["type"] == "sliding":
        return wv.SlidingEventTimeWindows.of(spec["size"], spec["slide"])
    return wv.EventTimeSessionWindows.with_gap(spec["gap"])


def winviz_lines(case: dict) -> list[str]:
    """The case as a winviz BATCH job: every output line, in the order winviz emits them."""
    op = case["op"]
    env = wv.StreamExecutionEnvironment(trace=False)
    env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)
    stream = env.from_collection([tuple(r) for r in case["records"]])
    stream = stream.assign_timestamps_and_watermarks(
        wv.WatermarkStrategy.for_bounded_out_of_orderness(op["bound"]).with_timestamp_assigner(
            lambda e, _: e[1]
        )
    )
    keyed = stream.key_by(lambda e: e[0])
    late = wv.OutputTag("late")
    p = case["parallelism"]  # of the keyed operator
    if op["type"] == "process":
        args = op["event_delay"], op["processing_delay"], op["delete_every"]
        result = keyed.process(Timers(*args)).set_parallelism(p).map(str)
    elif op["type"] == "reduce":
        result = keyed.reduce(_sum).set_parallelism(p).map(_line)
    else:
        if op["window_all"]:
            windowed = stream.window_all(_assigner(op["assigner"]))
        else:
            windowed = keyed.window(_assigner(op["assigner"]))
        windowed = windowed.allowed_lateness(op["lateness"]).side_output_late_data(late)
        if op["window_all"]:
            fired = windowed.process(
                lambda k, ctx, els, out: out.collect(_describe("all", ctx, els, None))
            )
        elif op["function"] == "reduce":
            fired = windowed.reduce(_sum).set_parallelism(p)
        else:
            fired = windowed.process(
                lambda k, ctx, els, out: out.collect(
                    _describe(k, ctx, els, ctx.current_watermark())
                )
            ).set_parallelism(p)
        side = fired.get_side_output(late).map(lambda e: "late|" + _line(e))
        side.sink_to("late")
        result = fired if op["window_all"] or op["function"] == "process" else fired.map(_line)
    result.sink_to("out")
    res = env.execute()
    lines = [
        f"{r.value}@{'null' if r.timestamp is None else r.timestamp}" for r in res.outputs["out"]
    ]
    late_lines = res.outputs.get("late", [])
    return lines + [f"{r.value}@{r.timestamp}" for r in late_lines]


# --------------------------------------------------------------------------- comparison


def _key_of(line: str) -> str:
    fields = line.split("|")
    return fields[1] if fields[0] in ("el", "timer", "late") else fields[0]


def per_key(lines: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        groups[_key_of(line)].append(line)
    return dict(groups)


def compare(case: dict, flink: list[str], ours: list[str]) -> list[str]:
    problems = []
    if Counter(flink) != Counter(ours):
        missing = Counter(flink) - Counter(ours)
        extra = Counter(ours) - Counter(flink)
        problems.append(f"only in Flink: {sorted(missing.elements())}")
        problems.append(f"only in winviz: {sorted(extra.elements())}")
    elif case["parallelism"] > 1 or case["op"]["type"] == "window":
        if case["op"]["type"] != "window" and per_key(flink) != per_key(ours):
            problems.append(f"order per key: Flink {per_key(flink)}, winviz {per_key(ours)}")
        if case["parallelism"] == 1 and key_order(flink) != key_order(ours):
            problems.append(f"order of keys: Flink {key_order(flink)}, winviz {key_order(ours)}")
    elif flink != ours:  # one subtask, one thread: the whole sequence
        problems.append(f"order: Flink {flink}, winviz {ours}")
    return problems


def key_order(lines: list[str]) -> list[str]:
    """The keys in the order their first output line came."""
    return list(dict.fromkeys(_key_of(line) for line in lines))


def run_flink(cases: list[dict]) -> list[dict]:
    return run_java("Batch", "batch", {"cases": cases})["cases"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    cases = [random_case(rnd, i) for i in range(args.cases)]
    started = time.monotonic()
    flink = run_flink(cases)
    flink_s = time.monotonic() - started
    failures = OUT / "batch-failures"
    failures.mkdir(parents=True, exist_ok=True)
    bad = 0
    kinds: Counter = Counter()
    lines = 0
    started = time.monotonic()
    for case, res in zip(cases, flink, strict=True):
        kinds[case["op"]["type"]] += 1
        ours = winviz_lines(case)
        lines += len(res["out"])
        problems = compare(case, res["out"], ours)
        if problems:
            bad += 1
            print(f"MISMATCH {case['name']}: {case['op']}")
            for p in problems:
                print(f"    {p}")
            path = failures / f"{case['name']}.json"
            path.write_text(json.dumps({"case": case, "flink": res["out"], "winviz": ours}))
    ours_s = time.monotonic() - started
    print(
        f"Flink {flink_s:.1f} s, winviz {ours_s:.1f} s; cases by kind {dict(kinds)}, "
        f"{lines} output lines from Flink"
    )
    print(f"batch: {len(cases)} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
