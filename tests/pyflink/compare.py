"""The optional tier: run every program of tests/pyflink_programs on real PyFlink 2.3
(``apache-flink==2.3.0`` in tests/pyflink/.venv) and on winviz.pyflink, and compare.

    python compare.py --pyflink .venv/bin/python [--winviz PY] [PROGRAM ...]

Each program's printed lines are grouped by sink (the ``name> `` prefix): within a sink,
a run at parallelism 1 prints in a fixed order, across sinks PyFlink interleaves as its
threads run, so each sink's sequence is compared, not their interleaving. A FileSink's
output is compared as the lines of the files it wrote. ``KNOWN`` lists the differences
that are PyFlink's Python operators departing from Java Flink (winviz follows Java
Flink): they are reported, and fail the run only when they stop happening. Anything else
that differs fails the run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = ROOT / "tests" / "pyflink_programs"

KNOWN = {
    ("count_windows.py", "sliding"): "PyFlink's count_window(size, slide) is its own "
    "CountSlidingWindowAssigner: numbered windows that each fire once they hold `size` "
    "elements. Java Flink's countWindow(size, slide) is GlobalWindows + "
    "CountEvictor.of(size) + CountTrigger.of(slide): it fires every `slide` elements with "
    "the last `size`, from the first ones on.",
    ("sessions.py", ""): "Session windows with an AggregateFunction, an element bridging two "
    "sessions: Java Flink's WindowOperator merges the accumulators of every merged window "
    "(MergingWindowSet, InternalMergingState.mergeNamespaces): (10 + 30 + 35) / 3 = 25.0. "
    "PyFlink 2.3's Python window operator keeps only one merged session's accumulator and "
    "the bridging element's: (30 + 35) / 2 = 32.5.",
    ("batch_mode.py", "process"): "BATCH, a key's timers: Java Flink's "
    "BatchExecutionInternalTimeService fires the previous key's timers when the key changes, "
    "before the new key's first element is processed (element j, timer j, element k…). "
    "PyFlink's Python keyed process operator hands the new key's first element to the "
    "Python worker before the previous key's timers reach it (element j, element k, timer "
    "j…). The same lines, in another order.",
}


def sinks(lines: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for line in lines:
        name, sep, _ = line.partition("> ")
        key = name if sep and " " not in name and "(" not in name else ""
        groups.setdefault(key, []).append(line)
    return groups


def files(directory: Path) -> list[str]:
    out: list[str] = []
    for f in sorted(p for p in directory.rglob("*") if p.is_file()):
        out.extend(f.read_text().splitlines())
    return out


def run(python: list[str], program: Path, env: dict[str, str]) -> tuple[list[str], list[str]]:
    with tempfile.TemporaryDirectory() as work:
        out_dir = Path(work) / "out"
        done = subprocess.run(
            [*python, str(program), str(out_dir)],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            tail = "\n".join(done.stderr.splitlines()[-15:])
            raise RuntimeError(f"{program.name} failed ({done.returncode}):\n{tail}")
        written = files(out_dir) if out_dir.exists() else []
    lines = [
        line
        for line in done.stdout.splitlines()
        if line and not line.startswith(("WARNING", "SLF4J", "log4j"))
    ]
    return lines, written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyflink", default=str(HERE / ".venv" / "bin" / "python"))
    parser.add_argument("--winviz", default=sys.executable)
    parser.add_argument("programs", nargs="*")
    args = parser.parse_args()
    args.pyflink = os.path.abspath(args.pyflink)  # not resolve(): the venv's python is a link
    names = args.programs or sorted(p.name for p in PROGRAMS.glob("*.py"))
    java = os.environ.get("JAVA_HOME") or "/usr/lib/jvm/java-17-openjdk-amd64"
    real_env = {
        "PATH": f"{os.path.dirname(args.pyflink)}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "JAVA_HOME": java,
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    ours_env = {**real_env, "PYTHONPATH": str(ROOT)}
    failures = 0
    for name in names:
        program = PROGRAMS / name
        real, real_files = run([args.pyflink], program, real_env)
        ours, our_files = run([args.winviz, "-m", "winviz.pyflink"], program, ours_env)
        report = []
        a, b = sinks(real), sinks(ours)
        for sink in sorted(set(a) | set(b)):
            if a.get(sink) == b.get(sink):
                continue
            known = KNOWN.get((name, sink))
            same_set = sorted(a.get(sink, [])) == sorted(b.get(sink, []))
            what = "order only" if same_set else "values"
            report.append((known, f"sink {sink or '(print)'}: {what}", a.get(sink), b.get(sink)))
        if sorted(real_files) != sorted(our_files):
            report.append((None, "files", real_files, our_files))
        elif real_files != our_files:
            report.append((KNOWN.get((name, "files")), "files: order only", real_files, our_files))
        for known, (_, sink_name) in [(KNOWN[k], k) for k in KNOWN if k[0] == name]:
            if not any(r[0] == known for r in report):
                report.append((None, f"known difference gone: {sink_name}", None, None))
        status = "same" if not report else ("known" if all(r[0] for r in report) else "DIFF")
        print(f"{status:5} {name}")
        for known, what, theirs, mine in report:
            print(f"      {what}")
            if known:
                print(f"      known: {known}")
            print(f"        pyflink: {theirs}\n        winviz:  {mine}")
            failures += known is None
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
