"""The project's own contracts: environment.yml equals pyproject's dependencies."""

from __future__ import annotations

import re
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
