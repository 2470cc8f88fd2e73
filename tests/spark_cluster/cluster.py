"""A real standalone Spark cluster on this machine, from the installed PySpark distribution.

``standalone_cluster()`` starts Spark's own ``org.apache.spark.deploy.master.Master`` and one
``org.apache.spark.deploy.worker.Worker`` (``pyspark/bin/spark-class``, the classes
``sbin/start-master.sh`` / ``start-worker.sh`` run, which the pip distribution does not ship),
each its own JVM in its own process group, on 127.0.0.1 with ports the operating system picks,
and yields the master URL (``spark://127.0.0.1:PORT``) once the worker has registered. On exit —
normal, an exception, Ctrl-C or SIGTERM — it stops both process groups (the worker's executors
with them): SIGTERM, then SIGKILL after a grace period. The JVMs' output is in ``log_dir``.

No Flink class is mirrored here: this is test infrastructure for the Spark twin
(``winviz.spark``), Spark's standalone deploy mode (``org.apache.spark.deploy``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

LOCAL_IP = "127.0.0.1"
START_TIMEOUT_S = 180.0
_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_REGISTERED = re.compile(r"Successfully registered with master (spark://\S+)")


interrupted: int | None = None
"""The signal that asked the cluster to stop (SIGTERM), once one has."""


class ClusterError(RuntimeError):
    """The standalone cluster did not start; the message says which JVM and shows its log."""


def spark_home() -> Path:
    """The installed PySpark distribution (its ``bin/spark-class`` and ``jars/``)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").exists() or not (home / "jars").is_dir():
        raise ClusterError(f"{home} has no bin/spark-class or jars/: not a full PySpark")
    return home


def cluster_env(java_home: str | None = None) -> dict[str, str]:
    """The environment of the master, the worker and the driver: Spark's home, the JVM, and
    everything on the loopback address (no hostname lookups, nothing listening outside)."""
    from winviz.spark.session import find_java_home

    java = java_home or find_java_home()
    if java is None:
        raise ClusterError("no Java runtime (JAVA_HOME or java on the PATH): Spark needs one")
    return {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "JAVA_HOME": java,
        "SPARK_LOCAL_IP": LOCAL_IP,
        "SPARK_MASTER_HOST": LOCAL_IP,
        "SPARK_LOCAL_HOSTNAME": "localhost",
    }


def _start(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def _wait_for(pattern: re.Pattern[str], log: Path, proc: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if m := pattern.search(text):
            return m.group(1)
        if proc.poll() is not None:
            raise ClusterError(
                f"the {what} exited with code {proc.returncode} before it was ready; its log "
                f"({log}):\n{text[-3000:]}"
            )
        time.sleep(0.5)
    raise ClusterError(f"the {what} was not ready after {START_TIMEOUT_S:.0f} s; see {log}")


def stop(proc: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """Stop the process group of ``proc`` (a JVM and what it started): SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace_s)
    # the group may outlive its leader (an executor the worker started)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into SystemExit while the cluster runs, so that it is stopped."""

    def handler(signum: int, _frame: object) -> None:
        global interrupted
        interrupted = signum  # a caller that catches the exit (nbclient may) can still stop
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def standalone_cluster(log_dir: Path, *, cores: int = 2, memory: str = "1g") -> Iterator[str]:
    """A master and a worker (``cores`` cores, ``memory`` for executors); yields the master
    URL. Both are stopped on exit, however the block ends."""
    log_dir.mkdir(parents=True, exist_ok=True)
    env = cluster_env()
    spark_class = str(spark_home() / "bin" / "spark-class")
    procs: list[subprocess.Popen[bytes]] = []
    with _sigterm_raises():
        try:
            master_log = log_dir / "master.log"
            master = [spark_class, "org.apache.spark.deploy.master.Master", "--host", LOCAL_IP]
            ports = ["--port", "0", "--webui-port", "0"]  # 0: the system picks a free port
            procs.append(_start([*master, *ports], master_log, env))
            url = _wait_for(_MASTER_URL, master_log, procs[0], "Spark master")
            worker_log = log_dir / "worker.log"
            work_dir = log_dir / "work"
            worker = [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", LOCAL_IP]
            size = ["--cores", str(cores), "--memory", memory, "--work-dir", str(work_dir)]
            procs.append(_start([*worker, *ports, *size, url], worker_log, env))
            _wait_for(_REGISTERED, worker_log, procs[1], "Spark worker")
            yield url
        finally:
            for proc in reversed(procs):
                stop(proc)
