"""The import graph of ``winviz`` has no cycles, counting the imports inside functions too.

A function-level import hides a cycle from Python's import order but not from a reader: two
modules that import each other are one concept split in two. The graph is read from the source
with ``ast`` (nothing is imported): an edge ``a → b`` for every ``import``/``from … import`` in
``a`` of a ``winviz`` module ``b``, at any depth, except under ``if TYPE_CHECKING:`` (those are
annotations only and never run). ``from pkg import name`` is an edge to ``pkg.name`` when that
is a module, else to ``pkg`` (its ``__init__``). Importing ``a.b.c`` is not counted as an edge to
the packages ``a`` and ``a.b`` (every module would then reach ``winviz/__init__``).

``KNOWN_CYCLES`` lists the cycles not removed yet, by name: it may only shrink. A cycle that is not
in it (nor part of one in it) fails the first test; an entry that no longer is a cycle fails the
second, so that it is taken out.

Run ``python tests/test_import_graph.py`` to print the cycles with their edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "winviz"

# Strongly connected components still in the code (each a sorted tuple of module names), being
# taken apart by the work on issue 30. Only remove entries; never add one.
KNOWN_CYCLES: list[tuple[str, ...]] = []


def modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name → (file, is a package ``__init__``)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for statement in node.body:
                skipped.update(id(inner) for inner in ast.walk(statement))
    return skipped


def _from_base(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module a ``from X import …`` in module ``name`` reads from."""
    if not node.level:
        return node.module or ""
    parts = name.split(".")
    if not is_package:
        parts.pop()
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the ``winviz`` modules it imports anywhere in its body (module level, class
    bodies, functions), TYPE_CHECKING blocks left out."""
    mods = modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skipped = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in mods)
            elif isinstance(node, ast.ImportFrom):
                base = _from_base(node, name, is_package)
                for alias in node.names:
                    if f"{base}.{alias.name}" in mods:
                        targets.add(f"{base}.{alias.name}")
                    elif base in mods:
                        targets.add(base)
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted, in sorted order: every cycle lies inside one of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
    return sorted(found)


def describe(component: tuple[str, ...], graph: dict[str, set[str]]) -> str:
    """A cycle's modules and the edges between them, one module a line."""
    members = set(component)
    return "\n".join(f"  {m} -> {sorted(graph[m] & members)}" for m in component)


def test_cycles_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from winviz.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (package / "c.py").write_text("from . import a\nx = 1\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from winviz import a\n"
    )
    (package / "e.py").write_text("import winviz.d\n")
    graph = import_graph(tmp_path)
    assert graph == {
        "winviz": set(),
        "winviz.a": {"winviz.sub.b"},
        "winviz.c": {"winviz.a"},
        "winviz.d": set(),
        "winviz.e": {"winviz.d"},
        "winviz.sub": set(),
        "winviz.sub.b": {"winviz.c"},
    }
    assert cycles(graph) == [("winviz.a", "winviz.c", "winviz.sub.b")]


def test_no_new_import_cycle() -> None:
    graph = import_graph()
    allowed = [set(known) for known in KNOWN_CYCLES]
    new = [c for c in cycles(graph) if not any(set(c) <= known for known in allowed)]
    assert not new, "import cycles:\n" + "\n\n".join(describe(c, graph) for c in new)


def test_known_cycles_only_shrink() -> None:
    found = cycles(import_graph())
    stale = [known for known in KNOWN_CYCLES if known not in found]
    assert not stale, (
        f"these KNOWN_CYCLES entries are no longer cycles as listed: {stale}; the cycles now: "
        f"{found} — replace each entry by what is left of it (or remove it)"
    )


if __name__ == "__main__":
    graph = import_graph()
    for component in cycles(graph):
        print(f"{len(component)} modules:\n{describe(component, graph)}")
