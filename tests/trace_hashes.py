"""Fingerprints of many jobs' outputs, to check that a refactoring keeps every byte:
``PYTHONPATH=.:tests python tests/trace_hashes.py > before.txt`` on two checkouts, then
``diff``. Each line: a job's name and the SHA-256 of its ``to_json()`` (traced runs),
outputs, side outputs and metrics. Jobs: tests/chart_jobs.py's ``JOBS``, seeded random jobs
of tests/jobs.py (``build``: every assigner, trigger, function, lateness, layout) traced and
not, with the window kernel and batches on and off, in STREAMING and BATCH mode."""

from __future__ import annotations

import random
import sys

from chart_jobs import JOBS
from jobs import ASSIGNERS, KERNEL_FUNCTIONS, TRIGGERS, build, engine_paths, explorer_job
from trace_corpus import _digest

import winviz as wv


def random_job(rng: random.Random) -> dict:
    """A job as ``jobs.jobs()`` draws one, from ``rng``."""
    n = rng.randint(0, 60)
    arrivals, t = [], 0
    for _ in range(n):
        t += rng.randint(0, 60)
        arrivals.append(t)
    return {
        "events": [(rng.choice("abc"), rng.randint(-50, 400), i) for i in range(n)],
        "arrivals": arrivals,
        "assigner": rng.choice(sorted(ASSIGNERS)),
        "trigger": rng.choice(sorted(TRIGGERS)),
        "lateness": rng.choice([0, 0, 25, 100]),
        "side": rng.random() < 0.5,
        "function": rng.choice([*KERNEL_FUNCTIONS, "process"]),
        "bound": rng.choice([0, 10, 40]),
        "interval": rng.choice([0, 7, 50, 200]),
        "layout": rng.choice(["single", "partitions", "union"]),
        "parts": [rng.randint(0, 1) for _ in range(n)],
        "idle": rng.choice([None, 30, 100]),
    }


def main(count: int) -> None:
    for name, job in JOBS.items():
        print(name, _digest(job()))
    rng = random.Random(30)
    explorer = [(rng.choice("ab"), rng.randint(0, 60_000)) for _ in range(3000)]
    print("explorer", _digest(explorer_job(explorer, 2000)))
    for i in range(count):
        job = random_job(rng)
        for trace in (True, False):
            for kernel in (True, False):
                for batches in (True, False):
                    with engine_paths(kernel=kernel, batches=batches):
                        env = build(job, trace)
                        if i % 4 == 3:
                            env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)
                        try:
                            out = _digest(env.execute())
                        except Exception as exc:  # the error is part of the behaviour
                            out = f"{type(exc).__name__}: {exc}"
                    print(f"random{i} trace={trace} kernel={kernel} batches={batches}", out)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
