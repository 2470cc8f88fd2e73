"""The command line of the conformance runner."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from winviz.conformance.runner import (
    TranscriptError,
    check_transcript,
    iter_steps,
    load,
    public,
)
from winviz.errors import WinvizError


def _files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml")))
        elif p.exists():
            files.append(p)
        else:
            raise TranscriptError(f"{p}: no such file or directory")
    return files


def main(argv: list[str] | None = None) -> int:
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
    try:
        files = _files(args.paths)
        if args.json:
            doc = {"transcripts": []}
            for f in files:
                t = load(f)
                steps: list = []
                entry = {"name": t["name"], "steps": steps}
                try:
                    for result in iter_steps(t):
                        steps.extend(public([result]))
                except TranscriptError:
                    raise
                except WinvizError as exc:  # the operator itself failed, as Flink would
                    entry["error"] = f"{type(exc).__name__}: {exc}"
                doc["transcripts"].append(entry)
            json.dump(doc, sys.stdout, sort_keys=True)
            sys.stdout.write("\n")
            return 0
        passed = failed = 0
        for f in files:
            t = load(f)
            problem = check_transcript(t)
            if problem is None:
                passed += 1
                print(f"PASS {t['name']}")
            else:
                failed += 1
                print(f"FAIL {t['name']}: {problem}")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    except TranscriptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
