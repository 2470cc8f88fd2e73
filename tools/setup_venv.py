"""Build winviz's ``.venv``: ``python3 tools/setup_venv.py VENV {lab,test}``.

``make lab`` / ``make setup`` run it with ``lab`` (what the lessons need: the ``lab`` extra),
``make test`` with ``test`` (the ``test`` extra: the lab install plus pytest, Playwright, ruff,
hypothesis, nbval). It is

* safe to run twice at once: the build holds an exclusive lock (``fcntl.flock``) on
  ``VENV.lock`` next to the venv; a second caller (``make test`` and ``make lab`` started
  together) says that it waits, waits, and then finds the venv built (or adds what it needs);
* visible: it prints each step, what pip collects and downloads (a line per download of 1 MB
  or more, a count every 20 packages), with the minutes and seconds since the start, and how
  long each step took; pip's whole output goes to ``VENV/setup-EXTRA.log``, and a failure
  prints its last lines;
* idempotent: ``VENV/.installed-EXTRA`` records a finished install; it is rebuilt when
  ``pyproject.toml`` is newer.

Standard library only: it runs on the system Python before the venv exists. No Flink class is
mirrored here; this is the kit's installer.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = {"lab": ("lab",), "test": ("lab", "test")}
"""What each install provides: the test install is the lab install plus the test tools."""
MIN_PIP = (21, 2)
"""pip older than this cannot read an extra that names another extra (``winviz[lab]``)."""
BIG_DOWNLOAD_MB = 1.0
COUNT_EVERY = 20

_DOWNLOAD = re.compile(r"^\s*Downloading (\S+) \(([\d.]+) (kB|MB|GB)\)")
_COLLECTING = re.compile(r"^Collecting (\S+)")
_BUILDING = re.compile(r"^\s*Building wheel for (\S+) .*: (started|finished)")
_SETUP_PY = re.compile(r"^\s*Running setup.py install for (\S+): started")
_INSTALLING = re.compile(r"^Installing collected packages: (.*)")
_INSTALLED = re.compile(r"^Successfully installed (.*)")
# A pip configuration (pip.conf's find-links / extra-index-url, or PIP_* variables) naming a
# local folder that lacks a package makes pip warn once per package: a hundred lines. The
# user can act on it (it is their configuration), so the first is shown and the rest counted.
_IGNORED_LOCATION = re.compile(r"^WARNING: Location '.*' is ignored: ")
# pip's chatter a user cannot act on (the log keeps it): everything else is shown.
_QUIET = re.compile(
    r"^(\s*(Requirement already satisfied|Looking in (indexes|links)|Obtaining|Using cached"
    r"|Installing build dependencies|Checking if build backend|Getting requirements"
    r"|Preparing (editable )?metadata|Created wheel|Stored in directory|Successfully built"
    r"|Building wheels for collected packages|Building editable for|Attempting uninstall"
    r"|Found existing installation|Uninstalling|Successfully uninstalled|Downloading|Processing"
    r"|Installing backend dependencies|Collecting|Building wheel for|Running setup.py install"
    # pip 23.0 (Debian 12's python3-venv) installs pyspark, an sdist without pyproject.toml, by
    # its legacy setup.py and says it is deprecated: a note to pyspark's packagers, nothing a
    # user of the kit can act on (newer pip builds a wheel instead, which is slower here).
    r"|DEPRECATION: pyspark is being installed using the legacy 'setup.py install' method)"
    r"|\s*$)"
)


def stamp(venv: Path, extra: str) -> Path:
    return venv / f".installed-{extra}"


def is_fresh(venv: Path, extra: str, pyproject: Path) -> bool:
    """Whether ``extra`` was installed into ``venv`` after ``pyproject`` last changed."""
    done = stamp(venv, extra)
    return done.exists() and done.stat().st_mtime >= pyproject.stat().st_mtime


class Clock:
    """Prints lines prefixed with the minutes:seconds since setup started."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.start = time.monotonic()
        self.out = out

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def say(self, text: str) -> None:
        minutes, seconds = divmod(int(self.elapsed()), 60)
        self.out(f"setup [{minutes}:{seconds:02d}] {text}")


def hold_lock(path: Path, clock: Clock) -> int:
    """Take the exclusive lock on ``path``, waiting (and saying so) while another holds it.
    The lock goes when the process ends, however it ends."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
        clock.say(
            f"another setup ({holder}) is building {path.with_suffix('')} now: "
            "waiting for it to finish"
        )
        waited = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        clock.say(f"the other setup finished after {time.monotonic() - waited:.0f} s")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    return fd


def pip_version(python: Path) -> tuple[int, ...]:
    text = subprocess.run(
        [str(python), "-m", "pip", "--version"], capture_output=True, text=True, check=True
    ).stdout
    return tuple(int(p) for p in re.findall(r"\d+", text.split()[1])[:2])


class PipProgress:
    """Turns pip's output into a few progress lines (see the module docstring)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.collected = 0
        self.downloaded_mb = 0.0
        self.ignored_locations = 0

    def line(self, text: str) -> None:
        text = text.rstrip()
        if m := _COLLECTING.match(text):
            self.collected += 1
            if self.collected % COUNT_EVERY == 0:
                self.clock.say(f"  resolved {self.collected} packages (now {m.group(1)})")
        elif m := _DOWNLOAD.match(text):
            size = float(m.group(2)) * {"kB": 1e-3, "MB": 1.0, "GB": 1e3}[m.group(3)]
            self.downloaded_mb += size
            if size >= BIG_DOWNLOAD_MB:
                self.clock.say(f"  downloading {m.group(1)} ({m.group(2)} {m.group(3)})")
        elif m := _SETUP_PY.match(text):
            self.clock.say(f"  installing {m.group(1)} (setup.py)")
        elif m := _BUILDING.match(text):
            self.clock.say(f"  building a wheel for {m.group(1)}: {m.group(2)}")
        elif m := _INSTALLING.match(text):
            count = len(m.group(1).split(", "))
            self.clock.say(
                f"  {self.collected} packages resolved, {self.downloaded_mb:.0f} MB downloaded;"
                f" installing {count} packages"
            )
        elif m := _INSTALLED.match(text):
            self.clock.say(f"  installed {len(m.group(1).split())} packages")
            if self.ignored_locations > 1:
                self.clock.say(
                    f"  pip warned {self.ignored_locations} times that a location of your pip "
                    "configuration is ignored (the first is shown above; `pip config list`)"
                )
        elif _IGNORED_LOCATION.match(text):
            self.ignored_locations += 1
            if self.ignored_locations == 1:
                self.clock.say(f"  pip: {text.strip()} (from your pip configuration)")
        elif not _QUIET.match(text):
            self.clock.say(f"  pip: {text.strip()}")


def run_logged(
    argv: list[str], log: Path, on_line: Callable[[str], None], env: dict[str, str]
) -> int:
    """Run ``argv``, writing its output to ``log`` and handing each line to ``on_line``."""
    with log.open("a", encoding="utf-8", buffering=1) as sink:  # line by line
        sink.write(f"$ {' '.join(argv)}\n")
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert proc.stdout is not None
        for text in proc.stdout:
            sink.write(text)
            on_line(text)
        return proc.wait()


def tail(path: Path, lines: int = 40) -> Iterable[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]


def setup(venv: Path, extra: str, python: str = sys.executable) -> int:
    clock = Clock()
    pyproject = ROOT / "pyproject.toml"
    venv = venv if venv.is_absolute() else ROOT / venv
    fd = hold_lock(venv.with_name(venv.name + ".lock"), clock)
    try:
        if is_fresh(venv, extra, pyproject):
            clock.say(f"{venv.name} already has the {extra} install (built by the other run)")
            return 0
        steps = 2 if (venv / "bin" / "python").exists() else 3
        step = 0
        if steps == 3:
            step += 1
            clock.say(f"step {step}/{steps}: create {venv.name} with {python}")
            done = subprocess.run([python, "-m", "venv", str(venv)], check=False)
            if done.returncode:
                clock.say(
                    f"could not create {venv}: this Python has no working venv module "
                    "(on Debian/Ubuntu: apt-get install python3-venv), or set PYTHON=..."
                )
                return done.returncode
        py = venv / "bin" / "python"
        env = {
            **os.environ,
            # the venv's pip is private to the kit; its "new release" notice asks nothing of you
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_PROGRESS_BAR": "off",
        }
        log = venv / f"setup-{extra}.log"
        log.write_text("", encoding="utf-8")
        step += 1
        if pip_version(py) < MIN_PIP:
            clock.say(f"step {step}/{steps}: upgrade pip (it is older than 21.2)")
            rc = run_logged(
                [str(py), "-m", "pip", "install", "--upgrade", "pip"], log, lambda _: None, env
            )
            if rc:
                return failed(clock, log, "upgrading pip", rc)
        else:
            clock.say(f"step {step}/{steps}: pip {'.'.join(map(str, pip_version(py)))} is fine")
        step += 1
        first = "" if stamp(venv, "lab").exists() else " (the first time: pyspark is ~450 MB)"
        clock.say(f"step {step}/{steps}: pip install -e '.[{extra}]'{first}")
        begun = clock.elapsed()
        progress = PipProgress(clock)
        # --no-compile: pip would byte-compile every installed module (pyspark alone has
        # thousands), a third of the install's time; Python compiles what is imported, once.
        argv = [str(py), "-m", "pip", "install", "--no-compile", "-e", f".[{extra}]"]
        rc = run_logged(argv, log, progress.line, env)
        if rc:
            return failed(clock, log, f"pip install -e '.[{extra}]'", rc)
        clock.say(f"  pip install took {clock.elapsed() - begun:.0f} s")
        for provided in EXTRAS[extra]:
            stamp(venv, provided).touch()
        clock.say(f"{venv.name} ready ({extra} install) in {clock.elapsed():.0f} s")
        return 0
    finally:
        os.close(fd)


def failed(clock: Clock, log: Path, what: str, rc: int) -> int:
    clock.say(f"{what} failed (exit {rc}); its last lines (whole log: {log}):")
    for text in tail(log):
        print(f"    {text}")
    return rc or 1


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in EXTRAS:
        print("usage: python3 tools/setup_venv.py VENV {lab,test}", file=sys.stderr)
        return 2
    os.chdir(ROOT)
    return setup(Path(argv[0]), argv[1])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
