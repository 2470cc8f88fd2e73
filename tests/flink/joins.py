"""The differential tier's join part: winviz's joins against REAL Flink 2.3.0.

    python tests/flink/joins.py [--interval N] [--window N] [--seed S]

Two families of seeded random cases, each run through Flink's own DataStream API
(``flinkdiff.Joins``: ``KeyedStream.intervalJoin``, ``DataStream.join`` / ``coGroup``, see
README.md) and through winviz's (``interval_join`` / ``join`` / ``co_group``), compared as
multisets:

* **interval** — two inputs, random elements (key, value, ts) and per-input watermarks, in a
  random order; random bounds (negative, positive, equal), either bound exclusive, late data of
  either side to a side output or dropped. Compared: the pairs (key, left and right values,
  ``ctx`` left / right timestamps and ``ctx.timestamp``) and the late records (side, key,
  value, timestamp).
* **window** — the same kind of inputs into a window join (a ``JoinFunction``) or a coGroup (a
  ``CoGroupFunction`` over sorted values) with tumbling, sliding or session windows, allowed
  lateness, sometimes a ``CountTrigger``. Compared: every output with its timestamp.

Flink processes the steps in exactly their order (Joins.java gates each step on the previous
one reaching the join's task); winviz reads each input from a source whose arrival times are the
steps' indices. Exits with 1 when anything differs and closes with ``joins: N cases, M
mismatches``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import diff_multisets, run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)

SHOW_DETAILED = 5

# --------------------------------------------------------------------------- random cases


def random_steps(rnd: random.Random) -> list[dict]:
    """Elements and watermarks of inputs 1 and 2 in a random order; each input's watermarks
    rise (sometimes repeat); timestamps straggle behind them, so some elements are late."""
    keys = ["a", "b", "c"][: rnd.randint(1, 3)]
    marks = {1: -1, 2: -1}
    steps: list[dict] = []
    n = rnd.randint(6, 36)
    for i in range(n):
        side = rnd.choice((1, 2))
        if rnd.random() < 0.25:
            marks[side] = min(80, marks[side] + rnd.choice((0, 1, 2, 3, 5, 8)))
            steps.append({"input": side, "watermark": max(marks[side], 0)})
        else:
            base = min(marks.values())  # the join's watermark, once both inputs have one
            ts = max(0, base + rnd.randint(-4, 10))
            steps.append(
                {"input": side, "element": {"key": rnd.choice(keys), "value": i, "ts": ts}}
            )
    for side in (1, 2):  # each input reads at least one record
        if not any(s["input"] == side for s in steps):
            steps.append({"input": side, "element": {"key": keys[0], "value": n, "ts": 5}})
            n += 1
    return steps


def interval_case(rnd: random.Random, i: int) -> dict:
    lower = rnd.randint(-8, 5)
    upper = lower + rnd.choice((0, 0, 1, 2, 3, 5, 10))
    return {
        "name": f"interval-{i}",
        "lower": lower,
        "upper": upper,
        "lower_exclusive": rnd.random() < 0.3,
        "upper_exclusive": rnd.random() < 0.3,
        "late_left": rnd.random() < 0.5,
        "late_right": rnd.random() < 0.5,
        "steps": random_steps(rnd),
    }


def edge_cases() -> list[dict]:
    """Fixed interval cases near Long.MAX / MIN, where Flink's long arithmetic wraps: a left
    element's ``ts + upper`` wraps (it then joins nothing it probes for, and its cleanup timer
    lands near MIN, firing at the next watermark); ``lower + 1`` of an exclusive MIN bound."""
    big = 2**63 - 1

    def case(name: str, lower: int, upper: int, steps: list[tuple], **kw: bool) -> dict:
        out = [
            {"input": side, "watermark": ts}
            if value is None
            else {"input": side, "element": {"key": "a", "value": value, "ts": ts}}
            for side, ts, value in steps
        ]
        flags = {"lower_exclusive": False, "upper_exclusive": False}
        flags |= {"late_left": False, "late_right": False} | kw
        return {"name": f"edge-{name}", "lower": lower, "upper": upper, **flags, "steps": out}

    return [
        case("left-probes-wrapped", 0, 10, [(2, big - 3, 2), (1, big - 5, 1)]),
        case("right-probes", 0, 10, [(1, big - 5, 1), (2, big - 3, 2)]),
        case("wrapped-cleanup", 0, 10, [(1, big - 5, 1), (1, 0, None), (2, 0, None),
                                        (2, big - 5, 2)]),
        case("min-lower-exclusive", -(2**63), 0, [(1, 5, 1), (2, -100, 2)], lower_exclusive=True),
        case("max-upper-exclusive", 0, big, [(2, big, 2), (1, 0, 1)], upper_exclusive=True),
    ]  # fmt: skip


def window_case(rnd: random.Random, i: int) -> dict:
    kind = rnd.choice(("tumbling", "sliding", "session"))
    if kind == "tumbling":
        assigner = {"type": "tumbling", "size": rnd.randint(3, 20)}
    elif kind == "sliding":
        size = rnd.randint(4, 20)
        assigner = {"type": "sliding", "size": size, "slide": rnd.randint(2, size)}
    else:
        assigner = {"type": "session", "gap": rnd.randint(1, 10)}
    return {
        "name": f"window-{i}",
        "function": rnd.choice(("join", "cogroup")),
        "assigner": assigner,
        "allowed_lateness": rnd.choice((0, 0, 3, 10)),
        "count_trigger": rnd.choice((0, 0, 0, 1, 2)),
        "steps": random_steps(rnd),
    }


# --------------------------------------------------------------------------- winviz


def _records(case: dict, side: int) -> tuple[list[tuple], list[int]]:
    records, arrivals = [], []
    for i, step in enumerate(case["steps"]):
        if step["input"] != side:
            continue
        if "element" in step:
            el = step["element"]
            records.append(("e", el["key"], el["value"], el["ts"]))
        else:
            records.append(("w", None, 0, step["watermark"]))
        arrivals.append(i)
    return records, arrivals


def _inputs(case: dict) -> tuple[wv.StreamExecutionEnvironment, Any, Any]:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=0)
    strategy = wv.WatermarkStrategy.for_punctuated(
        lambda e, _: e[3] if e[0] == "w" else None
    ).with_timestamp_assigner(lambda e, _: e[3])
    streams = []
    for side in (1, 2):
        records, arrivals = _records(case, side)
        streams.append(
            env.from_collection(records, arrival_times=arrivals, name=f"in{side}")
            .assign_timestamps_and_watermarks(strategy)
            .filter(lambda e: e[0] == "e")
        )
    return env, streams[0], streams[1]


class _Pairs(wv.ProcessJoinFunction):
    def process_element(self, left, right, ctx, out):
        out.collect(
            {
                "key": left[1],
                "left": left[2],
                "right": right[2],
                "left_ts": ctx.left_timestamp(),
                "right_ts": ctx.right_timestamp(),
                "ts": ctx.timestamp(),
            }
        )


def winviz_interval(case: dict) -> dict:
    env, a, b = _inputs(case)
    joined = a.key_by(lambda e: e[1]).interval_join(b.key_by(lambda e: e[1]))
    joined = joined.between(case["lower"], case["upper"])
    if case["lower_exclusive"]:
        joined = joined.lower_bound_exclusive()
    if case["upper_exclusive"]:
        joined = joined.upper_bound_exclusive()
    tags = {"left": wv.OutputTag("late-left"), "right": wv.OutputTag("late-right")}
    if case["late_left"]:
        joined = joined.side_output_left_late_data(tags["left"])
    if case["late_right"]:
        joined = joined.side_output_right_late_data(tags["right"])
    out = joined.process(_Pairs())
    out.sink_to("pairs")
    for side, tag in tags.items():
        if case[f"late_{side}"]:
            out.get_side_output(tag).sink_to(f"late_{side}")
    result = env.execute()
    late = [
        {"side": side, "key": r.value[1], "value": r.value[2], "ts": r.timestamp}
        for side in tags
        for r in result.outputs.get(f"late_{side}", [])
    ]
    return {"pairs": [r.value for r in result.outputs["pairs"]], "late": late}


def _java_list(values: list[int]) -> str:
    return "[" + ", ".join(str(v) for v in sorted(values)) + "]"


def _co_group(first: list, second: list, out: Any) -> None:
    key = (second or first)[-1][1]
    out.collect(f"{key}|{_java_list([e[2] for e in first])}|{_java_list([e[2] for e in second])}")


def winviz_window(case: dict) -> dict:
    env, a, b = _inputs(case)
    spec = case["assigner"]
    if spec["type"] == "tumbling":
        assigner = wv.TumblingEventTimeWindows.of(spec["size"])
    elif spec["type"] == "sliding":
        assigner = wv.SlidingEventTimeWindows.of(spec["size"], spec["slide"])
    else:
        assigner = wv.EventTimeSessionWindows.with_gap(spec["gap"])
    two = a.join(b) if case["function"] == "join" else a.co_group(b)
    two = two.where(lambda e: e[1]).equal_to(lambda e: e[1]).window(assigner)
    two = two.allowed_lateness(case["allowed_lateness"])
    if case["count_trigger"]:
        two = two.trigger(wv.CountTrigger.of(case["count_trigger"]))
    if case["function"] == "join":
        out = two.apply(lambda x, y: f"{x[1]}|{x[2]}|{y[2]}")
    else:
        out = two.apply(_co_group)
    out.sink_to("out")
    result = env.execute()
    return {"out": [{"value": r.value, "ts": r.timestamp} for r in result.outputs["out"]]}


# --------------------------------------------------------------------------- comparing


def run_flink(doc: dict) -> dict:
    return run_java("Joins", "joins", doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=int, default=200)
    parser.add_argument("--window", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.monotonic()
    rnd_i, rnd_w = random.Random(args.seed), random.Random(args.seed + 1_000_003)
    cases = {
        "interval": edge_cases() + [interval_case(rnd_i, i) for i in range(args.interval)],
        "window": [window_case(rnd_w, i) for i in range(args.window)],
    }
    flink = run_flink(cases)
    print(f"Flink ran the join cases in {time.monotonic() - started:.1f} s")
    bad: list[tuple[str, list[str]]] = []
    counts: Counter = Counter()
    for family, ours_of in (("interval", winviz_interval), ("window", winviz_window)):
        for case, res in zip(cases[family], flink[family], strict=True):
            counts[f"{family} cases"] += 1
            if "error" in res:
                bad.append((case["name"], [f"Flink: {res['error']}", json.dumps(case)]))
                continue
            ours = ours_of(case)
            problems = []
            for what in ("pairs", "late") if family == "interval" else ("out",):
                counts[f"{family} {what}"] += len(res[what])
                problems += diff_multisets(what, res[what], ours[what])
            if problems:
                bad.append((case["name"], [json.dumps(case), *problems]))
    for name, problems in bad[:SHOW_DETAILED]:
        print(f"MISMATCH {name}")
        for p in problems:
            print(f"    {p}")
    print(
        "compared: "
        + ", ".join(f"{n} {what}" for what, n in counts.items())
        + f" ({time.monotonic() - started:.1f} s)"
    )
    total = counts["interval cases"] + counts["window cases"]
    print(f"joins: {total} cases, {len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
