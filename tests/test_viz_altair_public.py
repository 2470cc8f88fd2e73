"""winviz uses Altair only through its public API (issue 30, one chart model): no module of
the package imports a private name from Altair or reaches into an Altair object's private
state (``_kwds``, ``_args``), and the shallow-copying ``Fresh*`` chart classes built on them
are gone. A source scan (the syntax tree of every module, so comments and strings do not
count)."""

from __future__ import annotations

import ast
from pathlib import Path

import winviz

PRIVATE_STATE = {"_args", "_kwds"}
"""The attributes where an Altair schema object keeps its properties (``SchemaBase``)."""
PRIVATE_FUNCTIONS = {"_todict", "_dataset_name", "_get_optional_modules", "_rootschema"}
"""Altair's private conversion helpers (``altair.utils.schemapi``, ``altair.vegalite.v6.api``)
and the schema its classes hold (``core.load_schema()`` gives it)."""


def _findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("altair"):
            found += [f"{where} imports {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_STATE | PRIVATE_FUNCTIONS:
            found.append(f"{where} reads .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in PRIVATE_FUNCTIONS:
            found.append(f"{where} calls {node.id}")
        elif (  # SchemaBase._get("property"): a property is read by name, chart["width"]
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "_get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(f"{where} calls ._get({node.args[0].value!r})")
        name = getattr(node, "name", None) or getattr(node, "id", None) or ""
        if isinstance(name, str) and name.lstrip("_").lower().startswith("fresh"):
            found.append(f"{where} defines or uses {name}")
    return found


def test_no_module_uses_altair_private_names() -> None:
    root = Path(winviz.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 50  # the whole package is scanned
    found = [f for path in modules for f in _findings(path)]
    assert found == []


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from altair.utils.schemapi import _todict\n"
        "class _Fresh: pass\n"
        "def f(c): return _todict(c._kwds, None), c._args, fresh_layers\n"
        "schema = Chart._rootschema; config = chart._get('config'); state = self._get()\n"
    )
    assert sorted(_findings(bad)) == [
        "bad.py:1 imports _todict",
        "bad.py:2 defines or uses _Fresh",
        "bad.py:3 calls _todict",
        "bad.py:3 defines or uses fresh_layers",
        "bad.py:3 reads ._args",
        "bad.py:3 reads ._kwds",
        "bad.py:4 calls ._get('config')",
        "bad.py:4 reads ._rootschema",
    ]
