"""The cluster tier's machinery without a JVM (``make test-spark-cluster`` runs the real one):
the master and worker are stopped — with what they started — however the block ends, and a
worker that cannot start is an error naming its log; a lesson's verdict needs identical
batches on the cluster's master."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "spark_cluster"
sys.path.insert(0, str(HERE))
import cluster  # noqa: E402  (tests/spark_cluster is not a package)

# tests/spark_cluster/run.py under a name no other module has
_spec = importlib.util.spec_from_file_location("winviz_spark_cluster_run", HERE / "run.py")
tier = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tier)

# Prints what the real Master / Worker log when ready, then waits with a child in its process
# group (as the worker's executors are); records both pids.
FAKE_SPARK_CLASS = """#!/bin/sh
name=$(basename "$1")
case "$1" in
  *Master) echo "26/01/01 INFO Master: Starting Spark master at spark://127.0.0.1:7999" ;;
  *Worker) [ -n "$FAIL_WORKER" ] && { echo "worker: cannot bind"; exit 3; }
           echo "INFO Worker: Successfully registered with master spark://127.0.0.1:7999" ;;
esac
sleep 300 &
echo "$$ $!" > "$PIDS/$name"
wait
"""


@pytest.fixture
def fake_spark(tmp_path, monkeypatch):
    home = tmp_path / "pyspark"
    (home / "bin").mkdir(parents=True)
    (home / "jars").mkdir()
    script = home / "bin" / "spark-class"
    script.write_text(FAKE_SPARK_CLASS)
    script.chmod(0o755)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setattr(cluster, "spark_home", lambda: home)
    monkeypatch.setattr(cluster, "cluster_env", lambda: {**os.environ, "PIDS": str(pids)})
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def _pids(folder: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while len(list(folder.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    return [int(p) for f in sorted(folder.iterdir()) for p in f.read_text().split()]


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(_alive(p) for p in pids)


def test_the_cluster_is_stopped_with_its_children_when_the_block_fails(fake_spark, tmp_path):
    with pytest.raises(RuntimeError, match="a lesson failed"):  # noqa: SIM117
        with cluster.standalone_cluster(tmp_path / "logs") as url:
            assert url == "spark://127.0.0.1:7999"
            pids = _pids(fake_spark)
            assert len(pids) == 4 and all(_alive(p) for p in pids)
            raise RuntimeError("a lesson failed")
    assert _gone(pids)


def test_a_worker_that_cannot_start_is_an_error_and_the_master_is_stopped(
    fake_spark, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        cluster, "cluster_env", lambda: {**os.environ, "PIDS": str(fake_spark), "FAIL_WORKER": "1"}
    )
    with pytest.raises(cluster.ClusterError) as error:  # noqa: SIM117
        with cluster.standalone_cluster(tmp_path / "logs"):
            pytest.fail("the block must not run")
    assert "the Spark worker exited with code 3" in str(error.value)
    assert "worker: cannot bind" in str(error.value)
    assert _gone(_pids_of_master(fake_spark))


def _pids_of_master(folder: Path) -> list[int]:
    return [int(p) for p in (folder / "org.apache.spark.deploy.master.Master").read_text().split()]


def _run(**changes):
    same = {
        "call": "run_twin",
        "master": "spark://127.0.0.1:7999",
        "executors": 1,
        "batches": 12,
        "local_batches": 12,
        "same_batches": True,
        "same_trace": True,
        "cluster_s": 3.0,
        "local_s": 2.0,
    }
    return {**same, **changes}


def test_a_lesson_passes_only_with_identical_batches_on_the_clusters_master():
    master = "spark://127.0.0.1:7999"
    ok, line = tier.verdict("00_tour", [_run()], master)
    assert ok and line.startswith("00_tour: 1 twin, identical batches and traces on " + master)
    for bad in (
        {"same_batches": False},
        {"same_trace": False},
        {"master": "local[2]"},
        {"local_batches": 11},
    ):
        ok, line = tier.verdict("00_tour", [_run(), _run(**bad)], master)
        assert not ok and "1 of 2 twins DIFFER" in line, bad
    assert tier.verdict("09_x", [], master) == (True, "09_x: no Spark twin")
