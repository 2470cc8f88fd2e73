"""The command line of the conformance runner."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from winviz.conformance.runner import (
    TranscriptError,
    check_transcript,
    load,
    public,
    run_transcript,
)


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
                doc["transcripts"].append({"name": t["name"], "steps": public(run_transcript(t))})
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
