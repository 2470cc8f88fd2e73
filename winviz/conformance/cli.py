"""The command line of the conformance runner."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from winviz.conformance.runner import TranscriptError, check_transcript, iter_steps, load
from winviz.errors import WinvizError


def _files(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The transcript files under ``paths`` and a problem for each path that gives none."""
    files: list[Path] = []
    problems: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml"))
            if not found:
                problems.append(f"{p}: no transcripts (*.yaml, *.yml) in this directory")
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            problems.append(f"{p}: no such file or directory")
    return files, problems


def _caused(t: dict) -> dict:
    """A transcript's entry of the ``--json`` document: what every step caused, and the error
    of an operator that failed there, as Flink's would."""
    steps: list = []
    entry = {"name": t["name"], "steps": steps}
    try:
        for result in iter_steps(t):
            steps.append({k: v for k, v in result.items() if not k.startswith("_")})
    except WinvizError as exc:
        if isinstance(exc, TranscriptError):
            raise
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def main(argv: list[str] | None = None) -> int:
    """Exit 0 when every transcript passed, 1 when one failed, 2 when a path or transcript could not
    be read or run (each reported; the others still run) or none was found."""
    parser = argparse.ArgumentParser(prog="python -m winviz.conformance")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run transcripts and check (or print) what they cause")
    run.add_argument("paths", nargs="+", help="transcript files or directories")
    run.add_argument(
        "--json",
        action="store_true",
        help="print what every step caused as one JSON document; check nothing",
    )
    args = parser.parse_args(argv)
    files, problems = _files(args.paths)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not files:  # every path said why above
        return 2
    errors, passed, failed = len(problems), 0, 0
    doc: dict[str, list] = {"transcripts": []}
    for f in files:
        try:
            t = load(f)
            if args.json:
                doc["transcripts"].append(_caused(t))
                continue
            problem = check_transcript(t)
        except Exception as exc:  # reported with its path; the others still run
            errors += 1
            reason = (  # the runner's own message, else the exception
                str(exc).removeprefix(f"{f}: ")
                if isinstance(exc, TranscriptError)
                else f"{type(exc).__name__}: {exc} (the runner could not execute this transcript)"
            )
            out = sys.stderr if args.json else sys.stdout
            print(f"error: {f}: {reason}" if args.json else f"ERROR {f}: {reason}", file=out)
            continue
        if problem is None:
            passed += 1
            print(f"PASS {t['name']}")
        else:
            failed += 1
            print(f"FAIL {t['name']} ({f}): {problem}")
    if args.json:
        json.dump(doc, sys.stdout, sort_keys=True)
        sys.stdout.write("\n")
        return 2 if errors else 0
    summary = f"{passed} passed, {failed} failed"
    if errors:
        summary += f", {errors} could not be run"
    print(summary)
    return 2 if errors else 1 if failed else 0
