"""The project's own contracts: environment.yml equals pyproject's learner install, the
learner's install has no test tools, setup is locked, the README's first screen and links."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower()


TEST_TOOLS = {"pytest", "pytest-xdist", "nbval", "hypothesis", "ruff", "playwright"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[;]", requirement, maxsplit=1)[0].strip().lower()


def test_environment_yml_matches_pyproject() -> None:
    """environment.yml is the learner's install: the dependencies and the lab extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normalise(r) for r in project["dependencies"]}
    wanted |= {_normalise(r) for r in project["optional-dependencies"]["lab"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {_normalise(r) for r in pip_section if not r.startswith("-e")}
    assert listed == wanted


def test_the_learner_install_has_no_test_tools_and_the_test_install_adds_them() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    learner = {_name(r) for r in project["dependencies"] + extras["lab"]}
    assert "jupyterlab" in learner
    assert learner & TEST_TOOLS == set()
    assert {_name(r) for r in extras["test"]} == TEST_TOOLS | {"winviz"}
    assert "winviz[lab]" in extras["test"]  # the test install is the lab install and more


def _dry_run(*goals: str) -> str:
    return subprocess.run(
        ["make", "-n", "-B", *goals], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def test_make_lab_builds_the_lab_install_and_make_test_the_test_install() -> None:
    setup_lines = [
        line for line in _dry_run("lab").splitlines() if "setup_venv.py" in line or "pip" in line
    ]
    assert [line.split(" ", 1)[1] for line in setup_lines] == ["tools/setup_venv.py .venv lab"]
    assert any(t.endswith(" tools/setup_venv.py .venv test") for t in _dry_run("test").splitlines())


def _hold(lock: Path):
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"pid 4242 (the test)\n")
    return fd


def test_a_second_setup_waits_for_the_first_and_says_so(tmp_path) -> None:
    """Two setups at once (make lab and make test started together): the second waits on the
    lock, says whose, and then finds the venv built by the first instead of building again."""
    venv = tmp_path / "venv"
    venv.mkdir()
    fd = _hold(tmp_path / "venv.lock")
    second = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "setup_venv.py"), str(venv), "lab"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(1.5)
        assert second.poll() is None  # waiting
        (venv / ".installed-lab").touch()  # what the first setup does when it has finished
    finally:
        os.close(fd)
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0, out
    lines = [line.split("] ", 1)[1] for line in out.splitlines()]
    assert lines[0] == (
        f"another setup (pid 4242 (the test)) is building {venv} now: waiting for it to finish"
    )
    assert lines[1].startswith("the other setup finished after ")
    assert lines[2] == "venv already has the lab install (built by the other run)"
    assert len(lines) == 3


def test_the_setup_lock_is_git_ignored() -> None:
    done = subprocess.run(["git", "check-ignore", "-q", ".venv.lock"], cwd=ROOT, check=False)
    assert done.returncode == 0


def test_a_stale_install_is_not_taken_for_a_fresh_one(tmp_path) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import setup_venv
    finally:
        sys.path.remove(str(ROOT / "tools"))
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("")
    assert not setup_venv.is_fresh(tmp_path, "lab", pyproject)
    (tmp_path / ".installed-lab").touch()
    os.utime(pyproject, (time.time() + 5, time.time() + 5))  # pyproject changed afterwards
    assert not setup_venv.is_fresh(tmp_path, "lab", pyproject)
    os.utime(pyproject, (time.time() - 5, time.time() - 5))
    assert setup_venv.is_fresh(tmp_path, "lab", pyproject)
    assert not setup_venv.is_fresh(tmp_path, "test", pyproject)


def test_setup_progress_shows_downloads_counts_and_what_is_installed() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import setup_venv
    finally:
        sys.path.remove(str(ROOT / "tools"))
    said: list[str] = []
    progress = setup_venv.PipProgress(setup_venv.Clock(said.append))
    pip_output = [
        "Looking in indexes: https://pypi.org/simple",
        "Obtaining file:///x",
        *[f"Collecting pkg{i}" for i in range(20)],
        "  Downloading pyspark-4.3.0.tar.gz (455.9 MB)",
        "  Downloading six-1.17.0-py2.py3-none-any.whl (11 kB)",
        "Requirement already satisfied: pip in ./.venv",
        "WARNING: Location 'file:///opt/x/simple/six/' is ignored: it is neither a file nor a dir",
        "Processing /opt/x/files/six-1.17.0-py3-none-any.whl (from winviz==0.1.0)",
        "WARNING: Location 'file:///opt/x/simple/pyspark/' is ignored: it is neither a file no",
        "  DEPRECATION: pyspark is being installed using the legacy 'setup.py install' method, x",
        "  Running setup.py install for pyspark: started",
        "WARNING: something the user should read",
        "Installing collected packages: six, pyspark, winviz",
        "Successfully installed six-1.17.0 pyspark-4.3.0 winviz-0.1.0",
    ]
    for text in pip_output:
        progress.line(text)
    assert [s.split("] ", 1)[1] for s in said] == [
        "  resolved 20 packages (now pkg19)",
        "  downloading pyspark-4.3.0.tar.gz (455.9 MB)",
        "  pip: WARNING: Location 'file:///opt/x/simple/six/' is ignored: it is neither a file"
        " nor a dir (from your pip configuration)",
        "  installing pyspark (setup.py)",
        "  pip: WARNING: something the user should read",
        "  20 packages resolved, 456 MB downloaded; installing 3 packages",
        "  installed 3 packages",
        "  pip warned 2 times that a location of your pip configuration is ignored (the first"
        " is shown above; `pip config list`)",
    ]


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
    assert launch.startswith("cd lab && ") and launch.endswith("--no-browser")
    assert ("--allow-root" in launch) == (os.geteuid() == 0)
    # the URL it prints (and opens) is the tour's, not the Launcher's
    assert "--LabApp.default_url=/lab/tree/00_tour.ipynb" in launch.split()
    # offline, as the browser tests' server (tools.browser.jupyter_lab): no news prompt, no
    # check of PyPI for a newer JupyterLab, no lookup of PyPI in the Extension Manager
    offline = (ROOT / "tools" / "browser.py").read_text()
    for flag in (
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=",
        "--LabApp.extension_manager=",
    ):
        setting = re.search(re.escape(flag) + r"[\w.]*", offline).group()
        assert setting in launch.split(), setting
    assert "--LabApp.extension_manager=readonly" in launch.split()
    # and the news prompt is off by default (the venv's JupyterLab overrides.json)
    installs = subprocess.run(
        ["make", "-n", "-W", "tools/lab_overrides.json", "lab", "LAB_ARGS=--no-browser"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "cp tools/lab_overrides.json .venv/share/jupyter/lab/settings/overrides.json" in installs
    # and the widgets' state saved in the notebook on each save, so that a lesson reopened
    # draws its charts (every chart is a widget); the browser tests' server gets these too
    overrides = json.loads((ROOT / "tools" / "lab_overrides.json").read_text())
    assert overrides == {
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True},
    }
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "lab/00_tour.ipynb"], cwd=ROOT, check=False
    )
    assert ignored.returncode == 0


def _without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _anchors(markdown: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation out, spaces to -."""
    headings = re.findall(r"^#+ (.+)$", _without_code(markdown.read_text()), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


DOC_PAGES = sorted((ROOT / "docs").glob("*.md"))


def test_readme_first_screen_says_what_how_long_where_to_start_and_what_is_needed() -> None:
    screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:60])
    (picture,) = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", screen)
    assert (ROOT / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for command in ("make lab", "make test"):
        (line,) = [t for t in screen.splitlines() if t.strip().startswith(f"{command} ")]
        assert re.search(r"\d+ min", line), line
    assert "**Where to start:**" in screen and "**What you need:**" in screen
    assert "00_tour" in screen
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)", screen))
    assert linked == {f"docs/{p.name}" for p in DOC_PAGES}  # every reference page, up front


def test_readme_and_docs_links_resolve() -> None:
    assert len(DOC_PAGES) >= 9
    broken = []
    for page in [ROOT / "README.md", *DOC_PAGES]:
        for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(page.read_text())):
            if re.match(r"[a-z]+:", target):
                broken.append((page.name, target, "an external link (pages work offline)"))
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path) if path else page
            if not file.exists():
                broken.append((page.name, target, "no such file"))
            elif anchor and anchor not in _anchors(file):
                broken.append((page.name, target, "no such heading"))
    assert broken == []


def test_every_docs_page_links_back_to_the_readme() -> None:
    for page in DOC_PAGES:
        assert "[README](../README.md)" in page.read_text().splitlines()[2], page.name
