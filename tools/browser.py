"""Chromium and JupyterLab, as the browser tests (tests/browser) and the browser bench
(bench/browser_bench.py) drive them — one place for each rule:

* the browser is the executable Debian's ``chromium`` package installs (``/usr/bin/chromium``,
  or ``$WINVIZ_CHROMIUM``), never one downloaded by ``playwright install`` (``chromium_path``),
  launched headless in a fresh profile, sandboxed unless run as root (``chromium``);
* every page routes its requests through a ``Network``: anything not local is aborted and
  recorded (``new_page``); its console messages and page errors can be collected
  (``console_of``); an exported page is opened once its charts are drawn (``open_drawn``);
* a condition in a page is polled through the debugging protocol (``wait_until``): the
  exported pages' policy has no ``'unsafe-eval'``, which Playwright's ``wait_for_function``
  needs;
* ``jupyter lab`` runs on 127.0.0.1 from this Python, off the network (``jupyter_lab``), and a
  notebook is opened and run with JupyterLab's own "run all cells" (``run_notebook``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ROOT / "tools" / "lab_overrides.json"  # the lab's settings (`make lab` installs them)
CHROMIUM_ARGS = [
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 1000}
OFFLINE = ("file:", "data:", "blob:", "about:")  # what an exported page may ask for
LOCAL = (*OFFLINE, "http://127.0.0.1", "ws://127.0.0.1")  # and a local server (JupyterLab)
CHARTS_DRAWN = "window.winvizCharts && window.winvizCharts.done"  # an exported page is drawn


def chromium_path() -> str:
    """The Chromium executable; ``FileNotFoundError`` saying how to install it when missing."""
    path = os.environ.get("WINVIZ_CHROMIUM", "/usr/bin/chromium")
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(
            f"Chromium not found at {path!r}: winviz's browser tests and bench need Debian's "
            "chromium. Install it with `make browser` (as root: apt-get update && apt-get "
            "install -y chromium) or point WINVIZ_CHROMIUM at a Chromium executable. "
            "(`playwright install` downloads a browser and is not used.)"
        )
    return path


@contextmanager
def chromium(executable: str) -> Iterator[object]:
    """Chromium, headless, with a fresh profile (removed afterwards): yields its Playwright
    ``BrowserContext``."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="winviz-chromium-")
    try:
        with sync_playwright() as pw:
            # launch_persistent_context owns the user-data-dir: one per launch
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=executable,
                args=CHROMIUM_ARGS,
                # Chromium's sandbox cannot start as root (containers, CI): off there only; a
                # normal user's browser keeps it (Playwright would pass --no-sandbox otherwise)
                chromium_sandbox=os.geteuid() != 0,
                headless=True,
                viewport=VIEWPORT,
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Network:
    """Records every request a page makes that leaves ``local`` and aborts it."""

    def __init__(self, local: tuple[str, ...] = LOCAL) -> None:
        self.local = local
        self.blocked: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.local):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


def new_page(context, local: tuple[str, ...] = LOCAL) -> tuple[object, Network]:
    """A new page of ``context`` whose requests go through a ``Network``: (page, network)."""
    net = Network(local)
    pg = context.new_page()
    pg.route("**/*", net.route)
    return pg, net


def console_of(pg) -> list[str]:
    """The page's console messages and page errors as they come (a list the page keeps
    appending to)."""
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    return console


def open_drawn(pg, path: Path, timeout: float = 120.0) -> list[str]:
    """Open the exported page ``path`` in ``pg`` and wait until its charts are drawn; the
    page's console messages and page errors as they come (``console_of``)."""
    console = console_of(pg)
    pg.goto(path.as_uri(), wait_until="commit", timeout=timeout * 1000)
    wait_until(pg, CHARTS_DRAWN, timeout, "the charts")
    return console


def wait_until(pg, expression: str, timeout: float = 30.0, what: str = "") -> object:
    """Poll ``expression`` (an expression or a function's source) in the page until it is
    truthy and return its value; ``TimeoutError`` after ``timeout`` seconds naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = pg.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what or expression}")
        pg.wait_for_timeout(50)  # polling the page, as wait_for_function would


# -- JupyterLab ---------------------------------------------------------------------------

# The open notebook's kernel, as "connectionStatus/status" ("none" before it has one).
KERNEL = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.connectionStatus + '/' + k.status : 'none';
}"""
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
# Every code cell has run and the kernel is idle again, or a cell has written to stderr (an
# error stops "run all": the caller then says which).
ALL_RAN = (
    "() => {\n"
    f"  if (document.querySelector({json.dumps(STDERR)})) return true;\n"
    """  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const k = w.sessionContext.session.kernel;
  return cells.length > 0 && cells.every(c => c.model.executionCount !== null)
      && k.status === 'idle';
}"""
)


class Lab(NamedTuple):
    """A running JupyterLab server: its address, token, process id and log file."""

    url: str
    token: str
    pid: int
    log: Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyter_lab(root: Path, home: Path, timeout: float = 90.0) -> Iterator[Lab]:
    """``jupyter lab`` from this Python on 127.0.0.1 serving ``root``: a free port, a random
    token, config, data, runtime, settings and workspaces under ``home``; the settings of
    ``tools/lab_overrides.json`` (as ``make lab``: no news, widget state saved in the
    notebook), no update checks, a read-only extension manager, ``window.jupyterapp``
    exposed; this checkout first on the kernels' ``PYTHONPATH``. ``RuntimeError`` (with the
    log's tail) when it exits or does not answer within ``timeout`` seconds; stopped (its
    process group killed if need be) on leaving."""
    for plugin, values in json.loads(OVERRIDES.read_text()).items():
        # the settings `make lab` installs (overrides.json), as this server's user settings
        extension, name = plugin.split(":")
        (home / "settings" / extension).mkdir(parents=True, exist_ok=True)
        (home / "settings" / extension / f"{name}.jupyterlab-settings").write_text(
            json.dumps(values)
        )
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--MappingKernelManager.transport_encryption=auto",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--LabApp.expose_app_in_browser=True",
        *(["--allow-root"] if os.geteuid() == 0 else []),  # CI runs as root
    ]
    log = home / "lab.log"
    with log.open("w") as out:
        # its own process group, so that a server that will not stop is killed with its kernel
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{_tail(log)}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab did not answer in {timeout:.0f} s:\n{_tail(log)}"
                    ) from None
                time.sleep(0.25)  # polling a server that is starting, not waiting on a page
        yield Lab(url, token, proc.pid, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-30:])


def run_notebook(pg, lab: Lab, name: str, workspace: str = "", timeout: float = 90.0) -> list[str]:
    """Open notebook ``name`` (relative to the server's root; in ``workspace`` when given,
    else the default one) in ``pg``, wait for its kernel, run all its cells with JupyterLab's
    own command and wait until they have run: the texts of the cells' stderr outputs (empty
    when every cell ran cleanly)."""
    where = f"workspaces/{workspace}/" if workspace else ""
    pg.goto(f"{lab.url}/lab/{where}tree/{name}?token={lab.token}")
    wait_until(pg, "window.jupyterapp !== undefined", 60, "JupyterLab")
    pg.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    wait_until(pg, f"({KERNEL})() === 'connected/idle'", 90, "the kernel")
    # not awaited: we wait on the cells
    pg.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    wait_until(pg, ALL_RAN, timeout, f"{name}'s cells")
    return pg.locator(STDERR).all_inner_texts()
