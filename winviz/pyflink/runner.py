"""``python -m winviz.pyflink [--trace PATH] [--html PATH] JOB.py [ARGS]``: run a PyFlink
program unchanged on winviz (``run``), then keep its runs' traces and a page of their
charts.

``--trace`` writes each run's trace: Parquet (``winviz.load_trace`` reads it back), or
JSON when the path ends in ``.json``; a program that runs several jobs (``execute()``
twice) writes ``run.parquet``, ``run-2.parquet``… ``--html`` writes one offline page
(no CDN, strict CSP: ``winviz.viz.pages``) with each run's timeline, window lanes and
timers. A PyFlink feature winviz does not model ends the run with its message and the
line of the program that asked for it (exit status 2), not a traceback. A run that fails
(bad input, a user function that raised: a ``winviz.errors`` error) is reported as one short
block — the program, the error naming the record, field and value, and the user function's
own lines if it raised — and the trace and page of every run up to the failure are still
written (exit status 1); an error of the program itself (a NameError, a SyntaxError…) shows
Python's traceback with the program's frames only (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

from winviz.errors import UserFunctionError, WinvizError
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


def save_page(results: list[Any], path: str, title: str, note: str | None = None) -> Path:
    import winviz as wv
    from winviz.viz import export, pages

    specs = []
    for result in results:
        for chart in (wv.timeline, wv.window_lanes, wv.timers_chart):
            specs.append(export.chart_spec(chart(result.trace)))
    page = pages.chart_page(specs, title=title, note=note)
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


# winviz's own files (the package folder) and runpy's: not shown in a user's traceback
_OURS = (str(Path(__file__).resolve().parent.parent) + os.sep, runpy.__file__, "<frozen runpy>")


def _user_frames(error: BaseException) -> list[str]:
    """The traceback of ``error`` without winviz's and runpy's frames: the lines of the
    user's program (and of what it called) that led to it."""
    frames = [
        f
        for f in traceback.extract_tb(error.__traceback__)
        if not str(Path(f.filename).resolve()).startswith(_OURS) and f.filename not in _OURS
    ]
    return traceback.format_list(frames)


def _user_traceback(error: BaseException) -> str:
    """``error`` as Python shows it, with only the user's frames (a NameError, a
    SyntaxError, an exception of the program's own code)."""
    frames = _user_frames(error)
    head = ["Traceback (most recent call last):\n", *frames] if frames else []
    return "".join(head + traceback.format_exception_only(error)).rstrip("\n")


def _winviz_failure(error: WinvizError, job: str) -> str:
    """A winviz error of the run (bad input, a user function that raised…) as one short
    block: the program, the message (it names the record, field and value) and where the
    program was; for a user function that raised, that function's own lines."""
    lines = [f"winviz.pyflink: {job} failed: {type(error).__name__}: {error}"]
    cause = error.__cause__
    if isinstance(error, UserFunctionError) and cause is not None and _user_frames(cause):
        lines.append("  in the user function (most recent call last):")
        lines.extend("  " + "\n  ".join(f.rstrip("\n").split("\n")) for f in _user_frames(cause))
    else:
        lines.append(f"  at {_where(error, job)}")
    return "\n".join(lines)


def _save(
    results: list[Any], options: argparse.Namespace, what: str, failure: str | None = None
) -> list[str]:
    """Write the runs' traces and page as asked; the lines that say where. A page of a failed
    program says so above its charts (``failure``: what the program failed with)."""
    said = []
    if options.trace and results:
        for p in save_traces(results, options.trace):
            said.append(f"winviz.pyflink: trace{what} written to {p}")
    if options.html and results:
        note = None
        if failure is not None:
            note = (
                f"{Path(options.job).name} failed: {failure}. The charts show each run's "
                "trace up to the failure."
            )
        p = save_page(results, options.html, title=Path(options.job).name, note=note)
        said.append(f"winviz.pyflink: charts{what} written to {p}")
    return said


def _failed(block: str, options: argparse.Namespace, error: BaseException) -> int:
    """Report a failed program (``block``) and keep the trace of every run up to the
    failure: a failed job's run is recorded with the trace written until it stopped."""
    results = _runs.results()
    said = _save(results, options, " up to the failure", f"{type(error).__name__}: {error}")
    if not results and (options.trace or options.html):
        said.append("winviz.pyflink: no job ran before the failure; nothing written")
    print("\n".join([block, *said]), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    try:
        results = run(options.job, options.args)
    except PyFlinkFeatureNotSupported as error:
        print(f"winviz.pyflink: {error}\n  at {_where(error, options.job)}", file=sys.stderr)
        return 2
    except WinvizError as error:
        return _failed(_winviz_failure(error, options.job), options, error)
    except Exception as error:  # the program's own error (NameError, SyntaxError, ...)
        return _failed(_user_traceback(error), options, error)
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
    for line in _save(results, options, ""):
        print(line, file=sys.stderr)
    return 0
