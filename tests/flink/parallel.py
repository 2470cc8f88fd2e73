"""The differential tier's parallel part: winviz against REAL Flink 2.3.0 with parallelism > 1.

    python tests/flink/parallel.py [--partitions N] [--windows N] [--co N] [--seed S]

Three families of seeded random cases, each run through Flink (``flinkdiff.Parallel``, see
README.md) and through winviz, compared exactly:

* **partitions** — Flink's own ``KeyGroupStreamPartitioner`` / ``RebalancePartitioner``
  ``selectChannel`` against ``winviz.partitioners``: the channel of random keys (strings with
  non-ASCII and surrogate-pair characters, ints, longs) for random parallelisms and max
  parallelisms; the round-robin sequence of ``rebalance`` (Flink starts it at a random channel,
  so winviz starts where Flink's first record went).
* **windows** — a keyed window job: a parallelism-1 source with punctuated watermarks,
  ``key_by`` into a window operator with parallelism 2..4 and a random max parallelism. Compared:
  the multiset of (subtask, key, window, sorted values, watermark at firing) and of late records
  (subtask, key, value, ts). Flink's subtask is ``getIndexOfThisSubtask()`` in the
  ProcessWindowFunction; winviz's is the ``window#i`` that fired.
* **co** — a ``KeyedCoProcessFunction`` on two connected inputs whose watermarks and idleness
  steps are random: per step, the watermark ``process_element1/2`` sees, the timers that fire
  (with the watermark ``on_timer`` sees) and the watermarks / statuses the operator emits.
  winviz runs the same steps as a conformance transcript of kind ``two_input``; a mismatching
  case is written to ``out/failures/`` with Flink's answer as its expectations.

Exits with 1 when anything differs and closes with ``parallel: N cases, M mismatches``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tier import OUT, diff_multisets, run_java  # noqa: E402

import winviz as wv  # noqa: E402  (the repository root must be on the path first)
from winviz.conformance.runner import run_transcript  # noqa: E402
from winviz.partitioners import KeyGroupStreamPartitioner, RebalancePartitioner  # noqa: E402

MIN, MAX = -(2**63), 2**63 - 1
SHOW_DETAILED = 5

# --------------------------------------------------------------------------- random cases


class RandomParallelCases:
    """Seeded generators of the three families (see the module docstring). Each family has its
    own random stream, so its cases do not depend on how many cases the others have."""

    def __init__(self, seed: int):
        self.seed = seed
        self.streams = {f: random.Random(f"{seed}-{f}") for f in ("partitions", "windows", "co")}
        self.rng = self.streams["partitions"]

    # -- partitioners

    def key(self) -> str | int:
        r = self.rng
        kind = r.choices(["word", "unicode", "int", "long"], [50, 15, 25, 10])[0]
        if kind == "word":
            return "".join(
                r.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(r.randint(0, 12))
            )
        if kind == "unicode":  # BMP letters and astral characters (UTF-16 surrogate pairs)
            alphabet = "aé中ß日本ö€" + "\U0001f600\U0001d11e"
            return "".join(r.choice(alphabet) for _ in range(r.randint(1, 6)))
        if kind == "int":
            return r.randint(-(2**31), 2**31 - 1)
        return r.choice([r.randint(2**31, MAX), r.randint(MIN, -(2**31) - 1)])

    def partition_case(self, i: int) -> dict:
        r = self.rng = self.streams["partitions"]
        name = f"partition_{self.seed}_{i:05d}"
        if r.random() < 0.25:
            return {
                "name": name,
                "partitioner": "rebalance",
                "parallelism": r.randint(1, 9),
                "records": r.randint(1, 25),
            }
        parallelism = r.choice([r.randint(1, 8), r.randint(1, 300)])
        max_parallelism = r.choice(
            [
                128,
                wv_default_max_parallelism(parallelism),
                r.randint(parallelism, max(parallelism, 512)),
                r.randint(parallelism, 32768),
            ]
        )
        keys = [self.key() for _ in range(r.randint(1, 40))]
        return {
            "name": name,
            "partitioner": "hash",
            "parallelism": parallelism,
            "max_parallelism": max_parallelism,
            "keys": keys,
        }

    # -- parallel windows

    def window_case(self, i: int) -> dict:
        r = self.rng = self.streams["windows"]
        parallelism = r.randint(2, 4)
        case: dict[str, Any] = {"name": f"pwindow_{self.seed}_{i:05d}", "parallelism": parallelism}
        if r.random() < 0.7:
            case["max_parallelism"] = r.choice(
                [parallelism, r.randint(parallelism, 8), r.randint(parallelism, 300), 128]
            )
        kind = r.choices(["tumbling", "sliding", "session"], [45, 35, 20])[0]
        if kind == "tumbling":
            size = r.randint(2, 12)
            assigner = {
                "type": kind,
                "size": size,
                "offset": r.choice([0, 0, r.randint(0, size - 1)]),
            }
        elif kind == "sliding":
            size = r.randint(2, 12)
            slide = r.randint(1, size)
            assigner = {"type": kind, "size": size, "slide": slide, "offset": 0}
        else:
            assigner = {"type": kind, "gap": r.randint(1, 6)}
        operator: dict[str, Any] = {"kind": "window", "assigner": assigner, "function": "values"}
        if r.random() < 0.2:
            operator["trigger"] = {"type": "count", "n": r.randint(1, 3)}
            if kind == "session":  # CountTrigger merges, but keep the default for sessions
                operator.pop("trigger")
        operator["allowed_lateness"] = r.choice([0, 0, r.randint(1, 5), r.randint(5, 15)])
        operator["late_side_output"] = r.random() < 0.7
        case["operator"] = operator
        keys = [
            f"{r.choice(['user', 'k', 'sensor'])}{r.randint(0, 999)}"
            for _ in range(r.randint(1, 8))
        ]
        # sessions stay on one reader: with several, a session can fire and be cleaned up before a
        # touching one arrives from another reader, or merge with it first (Flink's interleaving)
        readers = 1 if r.random() < 0.6 or kind == "session" else r.randint(2, 3)
        if readers > 1:
            case["readers"] = readers
            operator.pop("trigger", None)  # a count trigger would see the readers' interleaving
        start = r.choice([0, -10, 20])
        wm = [start] * readers
        high = [start] * readers  # at least the watermark each reader has emitted
        steps = []
        for _ in range(r.randint(3, 40)):
            reader = r.randrange(readers)
            if r.random() < 0.7:
                # one reader: on time, out of order, late and too late all happen; several:
                # after its own reader's watermark (the highest it emitted: a lower one is
                # dropped), so that no interleaving can make it late
                ts = wm[0] + r.randint(-12, 14) if readers == 1 else high[reader] + r.randint(1, 14)
                step = {"element": {"key": r.choice(keys), "value": r.randint(1, 9), "ts": ts}}
            else:
                wm[reader] += r.choice([-2, 0, 1, 2, 3, 5, 8, 13])
                high[reader] = max(high[reader], wm[reader])
                step = {"watermark": wm[reader]}
            if readers > 1:
                step["reader"] = reader
            steps.append(step)
        case["steps"] = steps
        return case

    # -- connect / keyed co-process

    def co_case(self, i: int) -> dict:
        r = self.rng = self.streams["co"]
        keys = ["a", "b", "c"][: r.randint(1, 3)]
        watermark = [r.choice([MIN, 0, -5]), r.choice([MIN, 0, 3])]  # last watermark per input
        idle = [False, False]
        steps: list[dict] = []
        for _ in range(r.randint(2, 30)):
            which = r.randint(0, 1)
            roll = r.random()
            if roll < 0.4:
                base = max(watermark) if max(watermark) > MIN else 0
                ts = base + r.randint(-5, 12)
                step: dict[str, Any] = {
                    "input": which + 1,
                    "element": {"key": r.choice(keys), "value": 1, "ts": ts},
                }
                register = [base + r.randint(-3, 15) for _ in range(r.choice([0, 1, 1, 2]))]
                if register:
                    step["register_event_time"] = register
                if r.random() < 0.15:
                    step["delete_event_time"] = [base + r.randint(-3, 15)]
                steps.append(step)
            elif roll < 0.8:
                if idle[which]:  # Flink's emitter marks the output active before a watermark
                    steps.append({"input": which + 1, "active": True})
                    idle[which] = False
                start = watermark[which] if watermark[which] > MIN else r.randint(-5, 5)
                watermark[which] = start + r.choice([1, 1, 2, 3, 5, 8])
                steps.append({"input": which + 1, "watermark": watermark[which]})
            elif roll < 0.93:
                if not idle[which]:
                    steps.append({"input": which + 1, "idle": True})
                    idle[which] = True
            elif idle[which]:
                steps.append({"input": which + 1, "active": True})
                idle[which] = False
        if r.random() < 0.5:  # the end of both inputs: MAX on each (and active first if idle)
            for which in r.sample([0, 1], 2):
                if idle[which]:
                    steps.append({"input": which + 1, "active": True})
                    idle[which] = False
                steps.append({"input": which + 1, "watermark": "MAX"})
        return {
            "name": f"co_{self.seed}_{i:05d}",
            "source": f"tests/flink/parallel.py --seed {self.seed} (co case {i})",
            "operator": {"kind": "two_input"},
            "steps": steps or [{"input": 1, "idle": True}],
        }


def wv_default_max_parallelism(parallelism: int) -> int:
    from winviz.keygroups import compute_default_max_parallelism

    return compute_default_max_parallelism(parallelism)


# --------------------------------------------------------------------------- running winviz


def winviz_partition(case: dict, flink: dict) -> dict:
    """winviz's channels (and key groups) for a partition case, as Flink's answer has them."""
    n = case["parallelism"]
    if case["partitioner"] == "hash":
        p = KeyGroupStreamPartitioner(lambda k: k, n, case["max_parallelism"])
        routes = [p.route(k) for k in case["keys"]]
        return {"channels": [c for _, c in routes], "key_groups": [g for g, _ in routes]}
    first = flink["channels"][0] if flink["channels"] else 0
    rebalance = RebalancePartitioner(n, first)
    return {"channels": [rebalance.select_channel(i) for i in range(case["records"])]}


def _assigner(spec: dict) -> Any:
    if spec["type"] == "tumbling":
        return wv.TumblingEventTimeWindows.of(spec["size"], spec.get("offset", 0))
    if spec["type"] == "sliding":
        return wv.SlidingEventTimeWindows.of(spec["size"], spec["slide"], spec.get("offset", 0))
    return wv.EventTimeSessionWindows.with_gap(spec["gap"])


def _values(key: Any, ctx: Any, elements: list, out: Any) -> None:
    w = ctx.window()
    out.collect((key, w.start, w.end, sorted(e[2] for e in elements), ctx.current_watermark()))


def _marker_watermark(event: tuple, ts: int) -> int | None:
    return event[3] if event[0] == "w" else None


def winviz_window(case: dict) -> dict:
    """The case as an engine job; the multisets of firings and late records by subtask."""
    op = case["operator"]
    records = []
    for step in case["steps"]:
        if "element" in step:
            el = step["element"]
            records.append(("e", el["key"], el["value"], el["ts"]))
        else:
            records.append(("w", None, 0, step["watermark"]))
    readers = case.get("readers", 1)
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    strategy = wv.WatermarkStrategy.for_punctuated(_marker_watermark).with_timestamp_assigner(
        lambda e, _: e[3]
    )
    if readers == 1:
        source = env.from_collection(records)
    else:  # one partition per reader, in the steps' order; the generator after a map, as in
        # Flink's job (partitionCustom, then assignTimestampsAndWatermarks with q subtasks)
        env.set_parallelism(readers)
        parts: list[list] = [[] for _ in range(readers)]
        arrivals: list[list[int]] = [[] for _ in range(readers)]
        for i, (step, rec) in enumerate(zip(case["steps"], records, strict=True)):
            parts[step["reader"]].append(rec)
            arrivals[step["reader"]].append(i)
        source = env.from_partitions(parts, arrival_times=arrivals).map(lambda e: e)
    windowed = (
        source.assign_timestamps_and_watermarks(strategy)
        .filter(lambda e: e[0] == "e")
        .key_by(lambda e: e[1])
        .window(_assigner(op["assigner"]))
    )
    if "trigger" in op:
        windowed = windowed.trigger(wv.CountTrigger.of(op["trigger"]["n"]))
    windowed = windowed.allowed_lateness(op["allowed_lateness"])
    if op["late_side_output"]:
        windowed = windowed.side_output_late_data(late)
    fired = windowed.process(_values).set_parallelism(case["parallelism"])
    if "max_parallelism" in case:
        fired = fired.set_max_parallelism(case["max_parallelism"])
    fired.sink_to("out")
    if op["late_side_output"]:
        fired.get_side_output(late).sink_to("late")
    trace = env.execute().trace
    out_fired = []
    for rec in trace.records("fired"):
        key, start, end, values, watermark = rec.detail[0]
        out_fired.append(
            {
                "subtask": subtask(rec.operator),
                "key": key,
                "window": [start, end],
                "values": values,
                "watermark": watermark,
            }
        )
    out_late = [
        {
            "subtask": subtask(rec.operator),
            "key": rec.detail[1][1],
            "value": rec.detail[1][2],
            "ts": rec.ts,
        }
        for rec in trace.records("side_output")
    ]
    return {"fired": out_fired, "late": out_late}


def subtask(operator: str) -> int:
    """The subtask index of ``window#i`` (a parallelism-1 operator has no ``#``)."""
    _, sep, index = operator.rpartition("#")
    return int(index) if sep else 0


# --------------------------------------------------------------------------- comparing


def canonical_co(result: dict) -> dict:
    """A co step result with MIN / MAX as integers and timers as a sorted multiset."""

    def exact(v: Any) -> Any:
        return {"MIN": MIN, "MAX": MAX}.get(v, v) if isinstance(v, str) else v

    out = {
        "timers": sorted(
            json.dumps({k: exact(v) for k, v in t.items()}, sort_keys=True)
            for t in result.get("timers", [])
        ),
        "watermarks": [exact(w) for w in result.get("watermarks", [])],
        "status": list(result.get("status", [])),
    }
    if result.get("watermark") is not None:
        out["watermark"] = exact(result["watermark"])
    return out


def with_expectations(case: dict, flink_steps: list[dict]) -> dict:
    steps = []
    for step, result in zip(case["steps"], flink_steps, strict=True):
        step = dict(step)
        if "watermark" in result:
            step["expect_watermark"] = result["watermark"]
        for field, key in (("timers", "expect_timers"), ("watermarks", "expect_watermarks")):
            if result.get(field):
                step[key] = result[field]
        if result.get("status"):
            step["expect_status"] = result["status"]
        steps.append(step)
    return {**case, "steps": steps}


# --------------------------------------------------------------------------- transcripts


def flink_drivable(doc: dict) -> bool:
    """Conformance transcripts this part can replay through Flink: ``partitioner`` with
    ``hash`` (rebalance starts at random in Flink), and ``two_input`` with one channel per
    input (the job has one upstream subtask per input)."""
    op = doc.get("operator") or {}
    if op.get("kind") == "partitioner":
        return op.get("partitioner") == "hash"
    return op.get("kind") == "two_input" and op.get("channels", [1, 1]) == [1, 1]


def load_transcripts() -> list[dict]:
    found = []
    for directory in (ROOT / "tests" / "conformance",):
        for path in sorted(directory.glob("*.yaml")):
            doc = yaml.safe_load(path.read_text())
            if isinstance(doc, dict) and flink_drivable(doc):
                found.append({**doc, "file": str(path.relative_to(ROOT))})
    return found


def transcript_case(doc: dict) -> tuple[str, dict]:
    """A transcript as a Flink case: ("partitions" | "co", case)."""
    if doc["operator"]["kind"] == "partitioner":
        op = doc["operator"]
        return "partitions", {
            "name": doc["name"],
            "partitioner": "hash",
            "parallelism": op["parallelism"],
            "max_parallelism": op["max_parallelism"],
            "keys": [step["key"] for step in doc["steps"]],
        }
    return "co", {"name": doc["name"], "steps": doc["steps"]}


def transcript_problems(doc: dict, result: dict) -> list[str]:
    """Where Flink's answer contradicts the transcript's expectations."""
    if doc["operator"]["kind"] == "partitioner":
        expected = {
            "channels": [s.get("expect_channel") for s in doc["steps"]],
            "key_groups": [s.get("expect_key_group") for s in doc["steps"]],
        }
        got = {"channels": result["channels"], "key_groups": result["key_groups"]}
        return [] if expected == got else [f"expected {expected}, Flink {got}"]
    if "steps" not in result:
        return [f"Flink: {result.get('error')}"]
    problems = []
    for i, (step, res) in enumerate(zip(doc["steps"], result["steps"], strict=True)):
        expected = {
            "timers": step.get("expect_timers", []),
            "watermarks": step.get("expect_watermarks", []),
            "status": step.get("expect_status", []),
        }
        if "expect_watermark" in step:
            expected["watermark"] = step["expect_watermark"]
        got = canonical_co(res)
        if "watermark" not in expected:
            got.pop("watermark", None)
        if canonical_co(expected) != got:
            problems.append(f"step {i}: expected {canonical_co(expected)}, Flink {got}")
    return problems


# --------------------------------------------------------------------------- main


def run_flink(doc: dict) -> dict:
    return run_java("Parallel", "parallel", doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--co", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.monotonic()
    gen = RandomParallelCases(args.seed)
    transcripts = load_transcripts()
    replay: dict[str, list] = {"partitions": [], "co": []}
    for doc in transcripts:
        family, case = transcript_case(doc)
        replay[family].append(case)
    cases = {
        "partitions": [gen.partition_case(i) for i in range(args.partitions)],
        "windows": [gen.window_case(i) for i in range(args.windows)],
        "co": [gen.co_case(i) for i in range(args.co)],
    }
    flink = run_flink(
        {
            "partitions": replay["partitions"] + cases["partitions"],
            "windows": cases["windows"],
            "co": replay["co"] + cases["co"],
        }
    )
    flink_s = time.monotonic() - started
    print(f"Flink ran the parallel cases in {flink_s:.1f} s")
    answers = {
        r["name"]: r
        for r in flink["partitions"][: len(replay["partitions"])] + flink["co"][: len(replay["co"])]
    }
    flink["partitions"] = flink["partitions"][len(replay["partitions"]) :]
    flink["co"] = flink["co"][len(replay["co"]) :]
    contradicted = 0
    for doc in transcripts:
        problems = transcript_problems(doc, answers[doc["name"]])
        if problems:
            contradicted += 1
            print(f"CONTRADICTED {doc['file']}")
            for p in problems:
                print(f"    {p}")
    print(
        f"transcripts: {len(transcripts) - contradicted} of {len(transcripts)} partitioner / "
        f"two_input transcripts confirmed by Flink"
    )
    failures = OUT / "parallel-failures"
    failures.mkdir(parents=True, exist_ok=True)
    bad: list[tuple[str, list[str]]] = []
    counts = Counter()

    for case, res in zip(cases["partitions"], flink["partitions"], strict=True):
        ours = winviz_partition(case, res)
        counts["partitions"] += 1
        counts["keys routed"] += len(case.get("keys", []))
        theirs = {k: v for k, v in res.items() if k != "name"}
        if ours != theirs:
            bad.append((case["name"], [f"{case}: Flink {theirs}, winviz {ours}"]))

    for case, res in zip(cases["windows"], flink["windows"], strict=True):
        counts["windows"] += 1
        ours = winviz_window(case)
        if case.get("readers", 1) > 1:  # the watermark at a firing depends on the interleaving
            for f in res["fired"] + ours["fired"]:
                f.pop("watermark")
        problems = diff_multisets("fired", res["fired"], ours["fired"])
        problems += diff_multisets("late", res["late"], ours["late"])
        if problems:
            bad.append((case["name"], [json.dumps(case), *problems]))
        counts["window firings"] += len(res["fired"])
        counts["late records"] += len(res["late"])

    for case, res in zip(cases["co"], flink["co"], strict=True):
        counts["co"] += 1
        if "steps" not in res:
            bad.append((case["name"], [f"Flink: {res.get('error')}", json.dumps(case)]))
            continue
        ours = run_transcript(case)
        problems = []
        for i, (a, b) in enumerate(zip(res["steps"], ours, strict=True)):
            ca, cb = canonical_co(a), canonical_co(b)
            counts["co steps"] += 1
            counts["co timers fired"] += len(ca["timers"])
            if ca != cb:
                problems.append(f"step {i} {json.dumps(case['steps'][i])}: Flink {ca}, winviz {cb}")
        if problems:
            bad.append((case["name"], problems))
            path = failures / f"{case['name']}.yaml"
            path.write_text(
                yaml.safe_dump(with_expectations(case, res["steps"]), sort_keys=False, width=100)
            )

    for name, problems in bad[:SHOW_DETAILED]:
        print(f"MISMATCH {name}")
        for p in problems:
            print(f"    {p}")
    print(
        "compared: "
        + ", ".join(f"{n} {what}" for what, n in counts.items())
        + f" ({time.monotonic() - started:.1f} s)"
    )
    total = counts["partitions"] + counts["windows"] + counts["co"]
    print(f"parallel: {total} cases, {len(bad)} mismatches")
    return 1 if bad or contradicted else 0


if __name__ == "__main__":
    shutil.rmtree(OUT / "parallel-failures", ignore_errors=True)
    sys.exit(main())
