"""What the differential tier's scripts share: how they run a program of ``src/flinkdiff`` in
real Flink (``run_java``: Java with the compiled classes and the fetched jars on the class
path, the quick C1 compiler only — many short jobs: about 40 % faster in all —, JSON in and
out through files in ``out/``) and how they compare outputs whose order does not matter
(``diff_multisets``)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CLASSPATH = f"{HERE / 'classes'}:{HERE / 'lib'}/*"


def run_java(main: str, label: str, given: Any = None, *args: str) -> Any:
    """Run ``flinkdiff.<main>``: ``given`` (unless None) written to
    ``out/<label>.flink-in.json``, whose path is its first argument; then the path of
    ``out/<label>.flink-out.json`` and ``args``. Returns what the program wrote there."""
    OUT.mkdir(exist_ok=True)
    paths = []
    if given is not None:
        path = OUT / f"{label}.flink-in.json"
        path.write_text(json.dumps(given))
        paths.append(str(path))
    answer = OUT / f"{label}.flink-out.json"
    java = ["java", "-XX:TieredStopAtLevel=1", "-cp", CLASSPATH, f"flinkdiff.{main}"]
    subprocess.run([*java, *paths, str(answer), *args], check=True)
    return json.loads(answer.read_text())


def multiset(recs: list[dict]) -> Counter:
    return Counter(json.dumps(r, sort_keys=True) for r in recs)


def diff_multisets(what: str, flink: list[dict], ours: list[dict]) -> list[str]:
    """No problem when Flink's and winviz's records are the same multiset, else one naming
    what only each side has."""
    a, b = multiset(flink), multiset(ours)
    if a == b:
        return []
    only_flink, only_ours = sorted((a - b).elements()), sorted((b - a).elements())
    return [f"{what}: only Flink: {only_flink}; only winviz: {only_ours}"]
