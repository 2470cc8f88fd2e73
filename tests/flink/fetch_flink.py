"""Puts Apache Flink's jars into tests/flink/lib/ (called by the Makefile when they are missing).

    python fetch_flink.py VERSION LIB_DIR

Flink's jars come from PyPI: `apache-flink-libraries` is the wheel in which PyFlink ships them.
Only flink-dist (Flink itself, with its shaded dependencies) and the log4j jars are kept.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def fetch(version: str, lib: Path) -> None:
    lib.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp,
             f"apache-flink-libraries=={version}"],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(tmp).glob("apache_flink_libraries-*.whl")
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.startswith("pyflink/lib/log4j-")]
            names.append(f"pyflink/lib/flink-dist-{version}.jar")  # last: it is make's target
            for name in names:
                jar = lib / Path(name).name
                partial = jar.with_suffix(".part")  # never leave a half-written jar behind
                partial.write_bytes(zf.read(name))
                partial.replace(jar)
                print(f"fetched {jar}")


if __name__ == "__main__":
    fetch(sys.argv[1], Path(sys.argv[2]))
