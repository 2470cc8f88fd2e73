"""The project's own contracts: environment.yml equals pyproject's dependencies."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower()


def test_environment_yml_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normalise(r) for r in project["dependencies"]}
    wanted |= {_normalise(r) for r in project["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {_normalise(r) for r in pip_section if not r.startswith("-e")}
    assert listed == wanted


def test_environment_yml_names_python_311_or_newer() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python>=3.11" in env["dependencies"]


def test_engine_core_imports_neither_altair_nor_spark() -> None:
    core = [
        p
        for p in (ROOT / "winviz").rglob("*.py")
        if not {"viz", "spark"} & set(p.relative_to(ROOT / "winviz").parts)
    ]
    assert len(core) > 10
    for path in core:
        text = path.read_text()
        assert not re.search(r"^\s*(import|from)\s+(altair|pyspark)\b", text, re.M), path


def _make_targets() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    (phony,) = re.findall(r"^\.PHONY:(.*)$", text, flags=re.M)
    return phony.split()


def test_readme_documents_every_make_target() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [t for t in _make_targets() if f"| `make {t}` |" not in readme]
    assert missing == []


def test_make_lab_works_on_ignored_copies_and_allows_root_only_as_root() -> None:
    dry = subprocess.run(
        ["make", "-n", "lab", "LAB_ARGS=--no-browser"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (launch,) = [line for line in dry.splitlines() if "jupyter lab" in line]
    assert launch.startswith("cd lab && ") and launch.endswith("--no-browser 00_tour.ipynb")
    assert ("--allow-root" in launch) == (os.geteuid() == 0)
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "lab/00_tour.ipynb"], cwd=ROOT, check=False
    )
    assert ignored.returncode == 0
