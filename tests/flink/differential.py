"""The differential tier: conformance transcripts against REAL Apache Flink.

    python tests/flink/differential.py [--cases N] [--seed S] [--batch B]

(a) Replays every `window` / `timers` transcript of tests/conformance through Flink's own
    operators (the Java program in src/, see README.md) and checks Flink's per-step output
    against the transcript's `expect*` fields. This validates the transcripts themselves.
(b) Generates N seeded random transcripts, runs them through Flink AND through winviz
    (`python -m winviz.conformance run DIR --json`) and compares the two per step, as
    multisets (FORMAT.md). Failing transcripts are written to out/failures/ with Flink's
    answer as their expectations, ready to become conformance files.

Needs the jars and classes that `make -C tests/flink compile` prepares.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import yaml
from tier import OUT, run_java

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CONFORMANCE_DIR = ROOT / "tests" / "conformance"

MIN, MAX = -(2**63), 2**63 - 1
KINDS = {"window": ("emitted", "late"), "timers": ("timers",)}  # outputs compared per kind
EXPECT_FIELD = {"emitted": "expect", "late": "expect_late", "timers": "expect_timers"}
SHOW_DETAILED = 5  # how many mismatches are printed in full


# --------------------------------------------------------------------------- running Flink


def run_flink(transcripts: list[dict], label: str, batch: int) -> dict[str, dict]:
    """Replays transcripts through real Flink; returns {name: result} (see src/flinkdiff/Main)."""
    done = run_java("Main", label, {"transcripts": transcripts}, "--batch", str(batch))
    return {r["name"]: r for r in done["transcripts"]}


# --------------------------------------------------------------------------- comparing


def exact(v):
    """FORMAT.md integers: the strings MIN / MAX stand for Long.MIN_VALUE / Long.MAX_VALUE."""
    return {"MIN": MIN, "MAX": MAX}.get(v, v) if isinstance(v, str) else v


def canonical(rec: dict) -> str:
    """One REC / TIMER as a canonical string, so a step's outputs compare as a multiset."""
    out = {"key": str(rec.get("key"))}
    if "value" in rec:
        v = rec["value"]
        out["value"] = [exact(x) for x in v] if isinstance(v, list) else exact(v)
    out["ts"] = exact(rec.get("ts"))
    if rec.get("window") is not None:
        out["window"] = [exact(x) for x in rec["window"]]
    if "domain" in rec:
        out["domain"] = rec["domain"]
    if rec.get("namespace", "default") != "default":
        out["namespace"] = rec["namespace"]
    return json.dumps(out, sort_keys=True)


def step_diff(outputs: tuple[str, ...], a: dict, b: dict, a_name: str, b_name: str) -> list[str]:
    """Differences between two STEP_RESULTs, one line per output that differs."""
    lines = []
    for output in outputs:
        ca = Counter(canonical(r) for r in a.get(output) or [])
        cb = Counter(canonical(r) for r in b.get(output) or [])
        if ca != cb:
            only_a = sorted((ca - cb).elements())
            only_b = sorted((cb - ca).elements())
            lines.append(
                f"{output}: only {a_name}: [{', '.join(only_a)}]; "
                f"only {b_name}: [{', '.join(only_b)}]"
            )
    return lines


def expected_results(transcript: dict) -> list[dict]:
    """A transcript's own expectations as STEP_RESULTs (a missing expect* means: nothing)."""
    return [
        {output: step.get(field, []) for output, field in EXPECT_FIELD.items()}
        for step in transcript["steps"]
    ]


def describe_step(step: dict) -> str:
    """The action of a step, short: `element {key: a, value: 1, ts: 5}`, `watermark 15`, ..."""
    for action in ("element", "key", "watermark", "end", "processing_time"):
        if action in step:
            extra = {k: v for k, v in step.items() if k.startswith(("register", "delete")) and v}
            text = f"{action} {json.dumps(step[action])}"
            return text + (f" {json.dumps(extra)}" if extra else "")
    return json.dumps(step)


def compare(transcript: dict, a: list[dict], b: list[dict], names: tuple[str, str]) -> list[str]:
    """Per-step differences between two runs of one transcript: ['step 3 (watermark 15): ...']."""
    outputs = KINDS[transcript["operator"]["kind"]]
    if len(a) != len(b):
        return [f"{names[0]} reports {len(a)} steps, {names[1]} {len(b)}"]
    problems = []
    for i, (sa, sb) in enumerate(zip(a, b, strict=True)):
        for line in step_diff(outputs, sa, sb, *names):
            problems.append(f"step {i} ({describe_step(transcript['steps'][i])}): {line}")
    return problems


# --------------------------------------------------------------------------- (a) the transcripts

# A transcript whose answer is known by heart, always run first: if the step attribution of the
# Java side were broken (an output blamed on the wrong step), this would fail.
SELF_CHECK = {
    "name": "selfcheck_step_attribution",
    "file": "(built-in self-check)",
    "operator": {
        "kind": "window",
        "assigner": {"type": "tumbling", "size": 2000, "offset": 0},
        "late_side_output": True,
        "function": "sum",
    },
    "steps": [
        {"element": {"key": "k", "value": 1, "ts": 500}},
        {"element": {"key": "k", "value": 1, "ts": 1997}},
        {"watermark": 1999, "expect": [{"key": "k", "value": 2, "ts": 1999, "window": [0, 2000]}]},
        {
            "element": {"key": "k", "value": 5, "ts": 1998},
            "expect_late": [{"key": "k", "value": 5, "ts": 1998}],
        },
        {"watermark": 1500},
        {"element": {"key": "k", "value": 7, "ts": 2500}},
        {"end": True, "expect": [{"key": "k", "value": 7, "ts": 3999, "window": [2000, 4000]}]},
    ],
}


def load_conformance(directory: Path) -> list[dict]:
    """Every transcript in the directory whose kind real Flink can drive."""
    found = []
    for path in sorted(directory.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and doc.get("operator", {}).get("kind") in KINDS:
            found.append({**doc, "file": path.name})
    return found


def _expected_failure(transcript: dict, result: dict) -> bool:
    """A transcript step with `expect_error: text` says the operator fails there; Flink's
    failure must be at that step with that text in its message."""
    for index, step in enumerate(transcript["steps"]):
        if "expect_error" in step:
            return result.get("step") == index and str(step["expect_error"]) in result["error"]
    return False


def validate_conformance(directory: Path, batch: int) -> int:
    """Part (a). Returns how many transcripts Flink contradicts (or fails on)."""
    transcripts = [SELF_CHECK, *load_conformance(directory)]
    print(f"== (a) {len(transcripts) - 1} window/timers transcripts of {directory} -> Flink")
    flink = run_flink(transcripts, "conformance", batch)
    agreed, unsupported, contradicted = [], [], 0
    for t in transcripts:
        result = flink[t["name"]]
        if "unsupported" in result:
            unsupported.append(f"{t['file']}: {result['unsupported']}")
        elif "error" in result and _expected_failure(t, result):
            agreed.append(t["file"])  # Flink fails exactly where and how the transcript says
        elif "error" in result:
            contradicted += 1
            where = f" at step {result['step']}" if "step" in result else ""
            print(f"FLINK FAILED {t['file']}{where}: {result['error']}")
        else:
            problems = compare(t, expected_results(t), result["steps"], ("transcript", "flink"))
            if problems:
                contradicted += 1
                print(f"CONTRADICTED {t['file']}")
                for p in problems:
                    print(f"    {p}")
            else:
                agreed.append(t["file"])
    for line in unsupported:
        print(f"not driven by Flink: {line}")
    agreed = [f for f in agreed if f != SELF_CHECK["file"]]
    print(
        f"(a) {len(agreed)} transcripts confirmed by Flink, {contradicted} contradicted, "
        f"{len(unsupported)} not drivable (processing time, namespaces)"
    )
    return contradicted


# --------------------------------------------------------------------------- (b) random cases


class RandomTranscripts:
    """Seeded random `window` and `timers` transcripts on a small time scale (a few dozen ms),
    so windows, lateness, late data and out-of-order elements all interact often. A few cases
    live near Long.MIN_VALUE / Long.MAX_VALUE, where Flink's 64-bit arithmetic wraps around."""

    KEYS = ("a", "b", "c")

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)

    def make(self, i: int) -> dict:
        kind = "timers" if self.rng.random() < 0.2 else "window"
        if kind == "window":
            operator = self.window_operator()
            origin = self.origin(min_edge=operator["assigner"]["type"] != "sliding")
            steps = self.window_steps(origin)
            if never_terminates(operator, origin):
                if origin > MAX // 2:
                    operator.pop("trigger")  # Flink's default trigger instead
                else:
                    steps = [s for s in steps if "end" not in s and s.get("watermark") != "MAX"]
        else:
            operator, steps = {"kind": "timers"}, self.timer_steps(self.origin())
        return {
            "name": f"random_{self.seed}_{i:05d}",
            "source": f"tests/flink/differential.py --seed {self.seed} (case {i})",
            "operator": operator,
            "steps": steps,
        }

    def origin(self, min_edge: bool = True) -> int:
        """Where the case's timeline starts: mostly 0, sometimes negative or at the 64-bit edges.

        Sliding windows stay away from Long.MIN_VALUE: Flink's SlidingEventTimeWindows steps
        `start -= slide` while `start > ts - size`, and below MIN that start wraps around to a
        huge value, so the assignment loop runs (practically) forever."""
        near_min = MIN + self.rng.randint(20, 40) if min_edge else -50
        return self.rng.choices([0, -50, MAX - self.rng.randint(10, 60), near_min], [88, 4, 5, 3])[
            0
        ]

    # -- window operators

    def window_operator(self) -> dict:
        r = self.rng
        assigner = self.assigner()
        op = {"kind": "window", "assigner": assigner}
        merging = "session" in assigner["type"]
        trigger = self.trigger(is_global=assigner["type"] == "global", merging=merging)
        if trigger:
            op["trigger"] = trigger
        if r.random() < 0.15:
            op["evictor"] = r.choice(
                [
                    {"type": "count", "max": r.randint(1, 3), "after": r.random() < 0.5},
                    {"type": "time", "size": r.randint(1, 6), "after": r.random() < 0.5},
                    {"type": "delta", "threshold": r.randint(1, 5), "after": r.random() < 0.5},
                ]
            )
        op["allowed_lateness"] = r.choice([0, 0, 0, r.randint(1, 4), r.randint(5, 15)])
        if r.random() < 0.02:  # cleanup time saturates at MAX: no cleanup timer
            op["allowed_lateness"] = r.choice(["MAX", MAX - r.randint(1, 60)])
        op["late_side_output"] = r.random() < 0.6
        op["function"] = r.choice(["sum", "sum", "count", "values"])
        return op

    def assigner(self) -> dict:
        r = self.rng
        kind = r.choices(
            ["tumbling", "sliding", "session", "dynamic_session", "global"], [30, 30, 25, 6, 9]
        )[0]
        if kind == "tumbling":
            size = r.randint(2, 12)
            return {
                "type": kind,
                "size": size,
                "offset": r.choice([0, 0, r.randint(1 - size, size - 1)]),
            }
        if kind == "sliding":
            size = r.randint(2, 12)
            slide = r.randint(1, size)
            offset = r.choice([0, r.randint(1 - slide, slide - 1)])
            return {"type": kind, "size": size, "slide": slide, "offset": offset}
        if kind == "session":
            return {"type": kind, "gap": r.randint(1, 6)}
        if kind == "dynamic_session":
            if r.random() < 0.5:
                return {"type": kind, "gap_from_value": True}  # values are 1..9
            return {"type": kind, "gap_by_key": {k: r.randint(1, 6) for k in self.KEYS}}
        return {"type": "global"}

    def trigger(self, is_global: bool, merging: bool) -> dict | None:
        """None keeps Flink's default (event time; never for the global window)."""
        r = self.rng
        choices = [
            None,
            {"type": "count", "n": r.randint(1, 3)},
            {"type": "continuous_event_time", "interval": r.randint(1, 6)},
        ]
        # EventTimeTrigger is a Trigger<Object, TimeWindow>: Flink fails on a global window
        choices.append({"type": "never"} if is_global else {"type": "event_time"})
        if not merging:  # DeltaTrigger cannot merge: Flink refuses it for session windows
            choices.append({"type": "delta", "threshold": r.randint(1, 5)})
        base = r.choice(choices)
        if base is not None and base["type"] != "never" and r.random() < 0.35:
            return {"type": "purging", "of": base}
        return base

    def window_steps(self, origin: int) -> list[dict]:
        r = self.rng
        steps, wm = [], r.choice([0, 0, -10, 20])
        for _ in range(r.randint(2, 18)):
            if r.random() < 0.65:
                # around the watermark: on time, out of order, late and too late all happen
                ts = clamp(origin + wm + r.randint(-12, 14))
                value = r.randint(1, 9)
                steps.append({"element": {"key": r.choice(self.KEYS), "value": value, "ts": ts}})
            else:
                wm += r.choice([-3, -1, 0, 1, 2, 3, 5, 8, 13])  # sometimes not increasing
                mark = "MAX" if r.random() < 0.01 else clamp(origin + wm)
                steps.append({"watermark": mark})
        if r.random() < 0.85:
            steps.append({"end": True})
        return steps

    # -- timers

    def timer_steps(self, origin: int) -> list[dict]:
        r = self.rng
        steps, wm = [], r.choice([0, 5])
        registered: dict[str, list[int]] = {k: [] for k in self.KEYS}
        for _ in range(r.randint(2, 16)):
            if r.random() < 0.35:
                wm += r.choice([-2, 0, 1, 3, 5, 8])
                steps.append({"watermark": clamp(origin + wm)})
                continue
            key = r.choice(self.KEYS)
            # some at or below the watermark: they fire at the next watermark that advances
            register = [clamp(origin + wm + r.randint(-3, 12)) for _ in range(r.randint(0, 3))]
            earlier = registered[key]
            delete = r.sample(earlier, min(len(earlier), r.choice([0, 0, 1, 2])))
            if r.random() < 0.1:  # a timer that may not exist, or one registered just now
                delete.append(clamp(origin + wm + r.randint(0, 12)))
            registered[key] += register
            if r.random() < 0.7:
                step = {
                    "element": {"key": key, "value": 1, "ts": clamp(origin + wm + r.randint(-3, 5))}
                }
            else:
                step = {"key": key}
            step["register_event_time"] = register
            step["delete_event_time"] = delete
            steps.append(step)
        if r.random() < 0.85:
            steps.append({"end": True})
        return steps


def clamp(ts: int) -> int:
    """Keeps generated times inside (MIN, MAX): MIN is Flink's "no timestamp", MAX is the end."""
    return max(MIN + 1, min(MAX - 1, ts))


def continuous(operator: dict) -> bool:
    """Whether the window operator's trigger is (a purging) ContinuousEventTimeTrigger."""
    trigger = operator.get("trigger") or {}
    if trigger.get("type") == "purging":
        trigger = trigger["of"]
    return trigger.get("type") == "continuous_event_time"


def never_terminates(operator: dict, origin: int) -> bool:
    """A ContinuousEventTimeTrigger re-registers `time + interval`, capped at the window's max
    timestamp. On a GLOBAL window (max timestamp MAX) at watermark MAX, or on any window near
    Long.MAX_VALUE, that sum wraps around to a negative time that is due at once: real Flink
    fires forever (the Java side stops it as a "runaway pipeline"). The generator avoids both."""
    near_max = origin > MAX // 2
    return continuous(operator) and (near_max or operator["assigner"]["type"] == "global")


def winviz_runner_available(py: str) -> bool:
    probe = subprocess.run([py, "-c", "import winviz.conformance"], cwd=ROOT, capture_output=True)
    return probe.returncode == 0


def run_winviz(py: str, files: list[Path]) -> dict[str, dict]:
    """winviz's `--json` results by transcript name. A transcript whose operator raises comes
    back as {"name", "error", "steps": the steps before}; should the runner itself fail, the
    run is split in halves until the culprit is alone, whose result is then
    {"name", "error": the runner's last stderr line}."""
    results: dict[str, dict] = {}
    for start in range(0, len(files), 1000):  # keep the command line short
        results.update(_run_winviz(py, files[start : start + 1000]))
    return results


def _run_winviz(py: str, files: list[Path]) -> dict[str, dict]:
    cmd = [py, "-m", "winviz.conformance", "run", *map(str, files), "--json"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    try:
        return {r["name"]: r for r in json.loads(proc.stdout)["transcripts"]}
    except (json.JSONDecodeError, KeyError):
        if len(files) > 1:
            half = len(files) // 2
            return {**_run_winviz(py, files[:half]), **_run_winviz(py, files[half:])}
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return {files[0].stem: {"name": files[0].stem, "error": last}}


def write_yaml(path: Path, doc: dict) -> None:
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100))


def with_expectations(transcript: dict, results: list[dict]) -> dict:
    """The transcript with Flink's answer written in as its expect / expect_late / expect_timers."""
    steps = []
    for step, result in zip(transcript["steps"], results, strict=True):
        step = dict(step)
        for output, field in EXPECT_FIELD.items():
            if result.get(output):
                step[field] = result[output]
        steps.append(step)
    return {**transcript, "steps": steps}


def judge(t: dict, flink: dict, ours: dict | None) -> tuple[str, list[str]]:
    """One random case: ("agree" | "both failed" | "mismatch", the problems)."""
    flink_failed = "steps" not in flink
    ours_failed = ours is None or "error" in ours or "steps" not in ours
    if flink_failed and ours_failed:
        # winviz reports the steps it ran before failing: both must fail at the same step
        ours_step = len((ours or {}).get("steps", [])) if ours and "steps" in ours else None
        if "step" in flink and ours_step is not None and flink["step"] != ours_step:
            return "mismatch", [f"Flink failed at step {flink['step']}, winviz at {ours_step}"]
        return "both failed", [f"{flink['error']}", f"winviz: {(ours or {}).get('error')}"]
    if flink_failed:
        step = flink.get("step")
        return "mismatch", [f"Flink failed at step {step}: {flink['error']}; winviz ran"]
    if ours_failed:
        return "mismatch", [f"winviz failed ({(ours or {}).get('error')}); Flink ran"]
    problems = compare(t, flink["steps"], ours["steps"], ("flink", "winviz"))
    return ("mismatch" if problems else "agree"), problems


def generate(cases: int, seed: int) -> list[dict]:
    gen = RandomTranscripts(seed)
    return [gen.make(i) for i in range(cases)]


def differential(cases: int, seed: int, batch: int, py: str) -> int:
    """Part (b). Returns the number of mismatching cases."""
    print(f"== (b) {cases} random transcripts (seed {seed}) -> Flink and winviz")
    started = time.monotonic()
    transcripts = generate(cases, seed)
    random_dir, failures_dir = OUT / "random", OUT / "failures"
    for d in (random_dir, failures_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    for t in transcripts:
        write_yaml(random_dir / f"{t['name']}.yaml", t)

    flink = run_flink(transcripts, "random", batch)
    flink_s = time.monotonic() - started
    flink_failed = sum("steps" not in r for r in flink.values())
    print(f"Flink ran {cases} random transcripts in {flink_s:.1f} s ({flink_failed} made it fail)")
    if not winviz_runner_available(py):
        print(
            "COMPARISON SKIPPED: the winviz runner (python -m winviz.conformance) is missing; "
            f"Flink's results are saved in {OUT / 'random.flink-out.json'}"
        )
        print(f"differential: {cases} cases, comparison skipped")
        return 0

    ours = run_winviz(py, [random_dir / f"{t['name']}.yaml" for t in transcripts])
    verdicts: dict[str, list] = {"agree": [], "both failed": [], "mismatch": []}
    for t in transcripts:
        verdict, problems = judge(t, flink[t["name"]], ours.get(t["name"]))
        verdicts[verdict].append((t, problems))
        if verdict == "mismatch" and "steps" in flink[t["name"]]:
            fixed = with_expectations(t, flink[t["name"]]["steps"])
            write_yaml(failures_dir / f"{t['name']}.yaml", fixed)
    for t, problems in verdicts["both failed"]:
        print(f"both failed (agreed) {t['name']}: {problems[0][:150]}")
    report_mismatches(verdicts["mismatch"], failures_dir)
    mismatches = len(verdicts["mismatch"])
    print(f"(b) took {time.monotonic() - started:.1f} s (Flink {flink_s:.1f} s)")
    print(f"differential: {cases} cases, {mismatches} mismatches")
    return mismatches


def report_mismatches(mismatches: list, failures_dir: Path) -> None:
    for t, problems in mismatches[:SHOW_DETAILED]:
        print(f"MISMATCH {t['name']}  operator: {json.dumps(t['operator'])}")
        for i, step in enumerate(t["steps"]):
            print(f"    {i:2d}: {describe_step(step)}")
        for p in problems:
            print(f"    -> {p}")
    if mismatches:
        print(f"{len(mismatches)} mismatching transcripts, with Flink's answer as expect*, are in")
        print(f"    {failures_dir}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000, help="random transcripts (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=50, help="transcripts per Flink job")
    parser.add_argument("--py", default=sys.executable, help="the python that runs winviz")
    parser.add_argument("--conformance", type=Path, default=CONFORMANCE_DIR, help="(a)'s directory")
    args = parser.parse_args(argv)
    bad = validate_conformance(args.conformance, args.batch)
    if args.cases > 0:
        bad += differential(args.cases, args.seed, args.batch, args.py)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
