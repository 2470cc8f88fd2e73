"""The Spark-cluster tier (``make test-spark-cluster``): every lesson's Spark twin on a real
standalone cluster, compared with ``local[*]``.

    python tests/spark_cluster/run.py [--only 00_tour [--only 02_windows ...]] [--master spark://host:port]

It starts a standalone master and worker from the installed PySpark (``cluster.py``; or uses
``--master``, an existing cluster), then runs each lesson notebook (``notebooks/NN_*.ipynb``)
on a clean kernel whose twins use that master (``WINVIZ_SPARK_MASTER``): a cell put before the
lesson records every call of ``run_twin`` / ``run_state_twin`` / ``run_join_twin``
(``TwinPlan.run`` calls ``run_twin``) with its input, spec and result; a cell put after it
stops the cluster session, runs each recorded call again on ``local[*]`` and compares the two
results: the same micro-batches (``BatchOutcome``: id, input, both watermarks, dropped rows,
output rows, processing time; a join's also late, evicted and state watermarks)
and the same trace, byte for byte (``Trace.to_json``; a join twin has none). The lesson's own
checks run against the cluster too. It prints a line per lesson and exits 1 when a lesson fails
or a twin differs. The cluster is stopped afterwards, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from winviz.viz.lessons import IPCKernelManager, find_lessons

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cluster

ROOT = Path(__file__).resolve().parents[2]
MARK = "WINVIZ-CLUSTER-TIER "
LOCAL = "local[*]"

RECORD = """
import winviz.spark as _wcs_pkg
import winviz.spark.state_twins as _wcs_state
import winviz.spark.twins as _wcs_twins
from winviz.spark.session import get_spark as _wcs_get_spark

_WCS_RUNS = []
_WCS_MODULES = {"run_twin": _wcs_twins, "run_state_twin": _wcs_state, "run_join_twin": _wcs_twins}
_WCS_REAL = {name: getattr(module, name) for name, module in _WCS_MODULES.items()}


def _wcs_recording(name):
    real = _WCS_REAL[name]

    def run(*args, **kw):
        import time as _time
        began = _time.perf_counter()
        result = real(*args, **kw)
        master = _wcs_get_spark().sparkContext.master
        inputs = tuple(list(a) if isinstance(a, (list, tuple)) else a for a in args)
        options = {k: v for k, v in kw.items() if k != "spark"}  # the replay uses its own
        _WCS_RUNS.append((name, inputs, options, result, master, _time.perf_counter() - began))
        return result

    return run


for _wcs_name, _wcs_module in _WCS_MODULES.items():
    _wcs_run = _wcs_recording(_wcs_name)
    setattr(_wcs_module, _wcs_name, _wcs_run)
    setattr(_wcs_pkg, _wcs_name, _wcs_run)
"""

COMPARE = f'''
import json as _wcs_json
import time as _wcs_time
from winviz.spark.session import stop_spark as _wcs_stop

_wcs_executors = _wcs_get_spark().sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
_wcs_stop()  # the cluster session; the same calls again on {LOCAL}
_wcs_get_spark("{LOCAL}")
_wcs_report = []
for _n, _inputs, _options, _cluster, _master, _secs in _WCS_RUNS:
    _began = _wcs_time.perf_counter()
    _local = _WCS_REAL[_n](*_inputs, **_options)
    _wcs_report.append({{
        "call": _n, "master": _master, "executors": _wcs_executors,
        "batches": len(_cluster.batches), "local_batches": len(_local.batches),
        "same_batches": _cluster.batches == _local.batches,
        # a join twin's result has batches only (no trace)
        "same_trace": getattr(_cluster, "trace", None) is None
        or _cluster.trace.to_json() == _local.trace.to_json(),
        "cluster_s": round(_secs, 1), "local_s": round(_wcs_time.perf_counter() - _began, 1),
    }})
_wcs_stop()
print("{MARK}" + _wcs_json.dumps(_wcs_report))
'''


def run_lesson(path: Path, master: str, timeout: int) -> list[dict]:
    """Run one lesson with its twins on ``master``, then again on local[*]; the comparison."""
    nb = nbformat.read(path, as_version=4)
    nb.cells = [nbformat.v4.new_code_cell(RECORD), *nb.cells, nbformat.v4.new_code_cell(COMPARE)]
    env = {**os.environ, "WINVIZ_SPARK_MASTER": master, "SPARK_LOCAL_IP": cluster.LOCAL_IP}
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=IPCKernelManager,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    client.execute(env=env)
    text = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []))
    (line,) = [t for t in text.splitlines() if t.startswith(MARK)]
    return json.loads(line[len(MARK) :])


def verdict(name: str, runs: list[dict], master: str) -> tuple[bool, str]:
    """Whether every twin of a lesson gave the same batches on the cluster as on local[*],
    and the line that says so."""
    if not runs:
        return True, f"{name}: no Spark twin"
    bad = [
        r
        for r in runs
        if not (r["same_batches"] and r["same_trace"] and r["master"] == master)
        or r["batches"] != r["local_batches"]
    ]
    figures = ", ".join(f"{r['call']} {r['batches']} batches" for r in runs)
    times = (
        f"cluster {sum(r['cluster_s'] for r in runs):.1f} s, "
        f"local {sum(r['local_s'] for r in runs):.1f} s"
    )
    if bad:
        return False, f"{name}: {len(bad)} of {len(runs)} twins DIFFER ({bad}); {figures}"
    return True, (
        f"{name}: {len(runs)} twin{'s' if len(runs) > 1 else ''}, identical batches and traces "
        f"on {master} ({runs[0]['executors']} executor) and {LOCAL}: {figures}; {times}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/spark_cluster/run.py", description=__doc__)
    parser.add_argument("--only", action="append", default=[], help="lesson stem (repeat)")
    parser.add_argument("--master", help="an existing spark:// master instead of starting one")
    parser.add_argument("--lessons", default=str(ROOT / "notebooks"), help="lesson folder")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = parser.parse_args(argv)
    lessons = [p for p in find_lessons(args.lessons) if not args.only or p.stem in args.only]
    if not lessons:
        print(f"no lesson matches {args.only} in {args.lessons}", file=sys.stderr)
        return 2
    logs = Path(tempfile.mkdtemp(prefix="winviz-spark-cluster-"))
    began = time.monotonic()
    ok = True
    try:
        with _master(args.master, logs) as master:
            print(f"cluster: {master} up after {time.monotonic() - began:.0f} s (logs: {logs})")
            for path in lessons:
                start = time.monotonic()
                try:
                    runs = run_lesson(path, master, args.timeout)
                    passed, line = verdict(path.stem, runs, master)
                except Exception as exc:  # a lesson cell failed on the cluster: say which
                    if cluster.interrupted:  # nbclient turned our SIGTERM into an error
                        raise SystemExit(128 + cluster.interrupted) from exc
                    passed, line = False, f"{path.stem}: FAILED on {master}: {exc!r}"
                ok &= passed
                print(f"{line}  [{time.monotonic() - start:.0f} s]", flush=True)
    except cluster.ClusterError as exc:
        print(f"the standalone cluster did not start: {exc}", file=sys.stderr)
        return 1
    except (SystemExit, KeyboardInterrupt):
        print(f"stopped; the cluster is stopped too (logs: {logs})", file=sys.stderr)
        raise
    print(f"{'all twins identical' if ok else 'FAILED'} in {time.monotonic() - began:.0f} s")
    return 0 if ok else 1


def _master(master: str | None, logs: Path):
    if master:
        from contextlib import nullcontext

        return nullcontext(master)
    return cluster.standalone_cluster(logs)


if __name__ == "__main__":
    raise SystemExit(main())
