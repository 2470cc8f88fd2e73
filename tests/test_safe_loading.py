"""Files the kit reads are data, never code (issue 16): a crafted conformance transcript is
refused with an error naming the file, a crafted dataset line names its line, and no module
of the package parses anything with a code-executing loader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from winviz import datasets
from winviz.conformance import TranscriptError, load

PACKAGE = Path(__file__).resolve().parents[1] / "winviz"


@pytest.mark.parametrize(
    "tag",
    [
        '!!python/object/apply:os.system ["touch {sentinel}"]',
        "!!python/name:os.system",
        '!!python/object/new:subprocess.Popen [["touch", "{sentinel}"]]',
    ],
)
def test_a_crafted_transcript_is_refused_naming_the_file(tmp_path: Path, tag: str) -> None:
    sentinel = tmp_path / "ran"
    path = tmp_path / "crafted.yaml"
    path.write_text(
        "name: crafted\n"
        "operator: {kind: window}\n"
        f"steps:\n  - element: {tag.format(sentinel=sentinel)}\n"
    )
    with pytest.raises(TranscriptError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid YAML: could not determine a constructor")
    assert "tag:yaml.org,2002:python/" in message and "line 4" in message
    assert not sentinel.exists()


def test_a_crafted_dataset_line_is_data_not_code(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    line = f"__import__('os').system('touch {sentinel}')"
    (tmp_path / "seed_002_late_data.jsonl").write_text(
        '{"id": 1, "createTime": "2019-08-24 17:51:44.152", "amt": 1.5}\n' + line + "\n"
    )
    with pytest.raises(datasets.DatasetError) as info:
        datasets.late_data(tmp_path)
    assert str(info.value).endswith(
        f"seed_002_late_data.jsonl, line 2: field '<json>' = {line!r} is not a JSON object"
    )
    assert not sentinel.exists()


# Calls that run code or build arbitrary objects from a file's bytes.
UNSAFE_CALLS = {
    "eval",
    "exec",
    "yaml.load",
    "yaml.unsafe_load",
    "yaml.full_load",
    "yaml.load_all",
    "yaml.unsafe_load_all",
    "pickle.load",
    "pickle.loads",
    "marshal.load",
    "marshal.loads",
    "shelve.open",
    "pandas.read_pickle",
    "pd.read_pickle",
}
UNSAFE_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "jsonpickle"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def test_no_module_parses_with_a_code_executing_loader() -> None:
    found = []
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 30
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and _dotted(node.func) in UNSAFE_CALLS:
                found.append(f"{where}: {_dotted(node.func)}()")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                bad = [n for n in names if n.split(".")[0] in UNSAFE_MODULES]
                found += [f"{where}: import {n}" for n in bad]
    assert found == []


def test_the_scan_would_see_an_unsafe_loader() -> None:
    tree = ast.parse("import pickle\nyaml.load(f)\neval(x)\n")
    calls = [_dotted(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert set(calls) <= UNSAFE_CALLS and len(calls) == 2
