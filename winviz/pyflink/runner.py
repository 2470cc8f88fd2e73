"""``python -m winviz.pyflink [--trace PATH] [--html PATH] JOB.py [ARGS]``: run a PyFlink
program unchanged on winviz (``run``), then keep its runs' traces and a page of their
charts.

``--trace`` writes each run's trace: Parquet (``winviz.load_trace`` reads it back), or
JSON when the path ends in ``.json``; a program that runs several jobs (``execute()``
twice) writes ``run.parquet``, ``run-2.parquet``… ``--html`` writes one offline page
(no CDN, strict CSP: ``winviz.viz.pages``) with each run's timeline, window lanes and
timers. A PyFlink feature winviz does not model ends the run with its message and the
line of the program that asked for it (exit status 2), not a traceback.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

from winviz.pyflink import _runs
from winviz.pyflink.errors import PyFlinkFeatureNotSupported
from winviz.pyflink.finder import install


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m winviz.pyflink",
        description="Run a PyFlink DataStream program unchanged on winviz, with a trace.",
    )
    parser.add_argument("--trace", help="write each run's trace (.parquet, or .json)")
    parser.add_argument("--html", help="write a page of each run's charts")
    parser.add_argument("job", help="the PyFlink program (a .py file)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    options = parser.parse_args(argv)
    if not Path(options.job).is_file():
        parser.error(f"{options.job}: no such file (expected the path of a .py program)")
    return options


def run(job: str, args: list[str]) -> list[Any]:
    """Run ``job`` as ``__main__`` with ``sys.argv = [job, *args]`` and its folder first on
    ``sys.path`` (as ``python job.py``), its ``pyflink`` imports resolving to
    ``winviz.pyflink``; returns its runs' results."""
    install()
    _runs.clear()
    saved = sys.argv, list(sys.path)
    sys.argv = [job, *args]
    sys.path.insert(0, str(Path(job).resolve().parent))  # as `python job.py` does
    try:
        runpy.run_path(job, run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved
    return _runs.results()


def trace_paths(path: str, n: int) -> list[Path]:
    """``path`` for the first run, ``stem-2.suffix``… for the next ones."""
    p = Path(path)
    return [p if i == 0 else p.with_name(f"{p.stem}-{i + 1}{p.suffix}") for i in range(n)]


def save_traces(results: list[Any], path: str) -> list[Path]:
    written = []
    for result, target in zip(results, trace_paths(path, len(results)), strict=True):
        if target.suffix == ".json":
            target.write_text(result.trace.to_json(), encoding="utf-8")
        else:
            result.trace.save(target)
        written.append(target)
    return written


def save_page(results: list[Any], path: str, title: str) -> Path:
    import winviz as wv
    from winviz.viz import export, pages

    specs = []
    for result in results:
        for chart in (wv.timeline, wv.window_lanes, wv.timers_chart):
            specs.append(export.chart_spec(chart(result.trace)))
    page = pages.chart_page(specs, title=title)
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target


def _where(error: BaseException, job: str) -> str:
    """The program's line that asked for the unsupported feature."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == job]
    if not frames:
        return job
    f = frames[-1]
    return f"{f.filename}, line {f.lineno}: {(f.line or '').strip()}"


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    try:
        results = run(options.job, options.args)
    except PyFlinkFeatureNotSupported as error:
        print(f"winviz.pyflink: {error}\n  at {_where(error, options.job)}", file=sys.stderr)
        return 2
    if not results:
        asked = [
            f"no {what} written to {path}"
            for what, path in (("trace", options.trace), ("page", options.html))
            if path
        ]
        print(
            "winviz.pyflink: the program ran no job (no execute() call)"
            + "".join(f"; {a}" for a in asked),
            file=sys.stderr,
        )
        if asked:
            return 1
    if options.trace and results:
        for p in save_traces(results, options.trace):
            print(f"winviz.pyflink: trace written to {p}", file=sys.stderr)
    if options.html and results:
        p = save_page(results, options.html, title=Path(options.job).name)
        print(f"winviz.pyflink: charts written to {p}", file=sys.stderr)
    return 0
