"""Engine throughput and trace memory (``make bench``).

Two jobs, each N events over 100 keys summed in tumbling event-time windows, one event per ms
of processing time (so a periodic watermark every 200 events):

* ``10s``: 10 s windows, bounded out-of-orderness 500 ms, timestamps 10 ms apart with up to
  400 ms of disorder (some events late: dropped);
* ``1s`` (the trace issue's job, as in ``bench/trace_bench.py``): 1 s windows, bound 200 ms,
  timestamps 1 ms apart with up to 150 ms of disorder (records alternate between two windows
  around each window's end), one firing per key and second.

Compared, in the same process: a minimal hand-written dict-and-heap loop doing
the same job, the engine with the trace off, and the engine with the trace on. Both engines'
outputs are checked against the minimal loop's. The engine's hot paths write packed trace
entries that the first read of the trace turns into columns (``winviz.trace``; each column is
decoded when a reader first asks for it): "first read" is the time of that read with every
column decoded (``read_all``) after the last traced run, not part of the run's figure. Trace
memory is measured with tracemalloc on a smaller run: bytes held by the trace divided by its
records, as the run leaves it and after the first read (every column decoded).

Each figure is the best of ``--repeat`` runs (default: 3 up to 100k events, 1 above), timed
with the wall clock, or with this process's CPU time (``--clock cpu``: steadier on a shared
machine, since waiting for a core is not counted). "growth" is the cost per event relative
to the smallest size (1.00: linear).

    python bench/run.py [--sizes 10000,100000,1000000] [--memory-size 100000]
                        [--repeat N] [--clock wall|cpu] [--jobs 10s,1s]
"""

from __future__ import annotations

import argparse
import gc
import heapq
import random
import time
import tracemalloc

from sum_job import sum_job

import winviz as wv

KEYS = [f"user{i:03d}" for i in range(100)]


def make_events(n: int, seed: int = 7) -> list[tuple[str, int, int]]:
    """(key, timestamp, value); timestamps advance 10 ms per event with up to 400 ms of
    disorder (some events beyond the bound arrive late)."""
    rnd = random.Random(seed)
    return [
        (
            KEYS[rnd.randrange(100)],
            i * 10 - rnd.randrange(0, 400) if i % 50 else i * 10 - 700,
            rnd.randrange(1, 10),
        )
        for i in range(n)
    ]


def issue_events(n: int) -> list[tuple[str, int, int]]:
    """(key, timestamp, value) of the ``1s`` job: key ``i % 100``, timestamp ``i`` less up
    to 149 ms, value 1."""
    return [(KEYS[i % 100], i - (i * 7919) % 150, 1) for i in range(n)]


# job name -> (events, window size, out-of-orderness bound)
JOBS = {"10s": (make_events, 10_000, 500), "1s": (issue_events, 1_000, 200)}


def minimal_loop(
    events: list[tuple[str, int, int]], size: int, bound: int
) -> list[tuple[str, int, int]]:
    """The same job with a dict and a heap, nothing else."""
    state: dict[tuple[str, int], int] = {}
    heap: list[tuple[int, str, int]] = []
    out = []
    max_ts = wv.MIN + bound + 1
    wm = wv.MIN
    next_emit = 200
    for arrival, (key, ts, value) in enumerate(events):
        while next_emit <= arrival:
            new = max_ts - bound - 1
            if new > wm:
                wm = new
                while heap and heap[0][0] <= wm:
                    end_ts, k, start = heapq.heappop(heap)
                    out.append((k, state.pop((k, start)), end_ts))
            next_emit += 200
        start = ts - ts % size
        if start + size - 1 <= wm:
            continue  # late: dropped
        sk = (key, start)
        if sk in state:
            state[sk] += value
        else:
            state[sk] = value
            heapq.heappush(heap, (start + size - 1, key, start))
        if ts > max_ts:
            max_ts = ts
    while heap:
        end_ts, k, start = heapq.heappop(heap)
        out.append((k, state.pop((k, start)), end_ts))
    return out


def engine(events: list[tuple[str, int, int]], trace: bool, size: int, bound: int):
    env = wv.StreamExecutionEnvironment(trace=trace)
    return sum_job(env, events, size, bound, arrival_interval=1).execute()


def read_all(trace: wv.Trace) -> None:
    """The first read of ``trace`` with every column decoded (``Trace.columns()`` decodes each
    column when a reader first asks for it)."""
    columns = trace.columns()
    for name in wv.Trace.FIELDS:
        getattr(columns, name)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(clock, repeat: int, fn, *args):
    """Best time of ``repeat`` runs, and the last run's result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        result = None  # let the previous run's result go before the next one
        gc.collect()
        t0 = clock()
        result = fn(*args)
        best = min(best, clock() - t0)
    return best, result


def throughput(job: str, n: int, repeat: int, clock=time.perf_counter) -> dict[str, float]:
    make, size, bound = JOBS[job]
    events = make(n)
    t_min, expected = timed(clock, repeat, minimal_loop, events, size, bound)
    t_off, off = timed(clock, repeat, engine, events, False, size, bound)
    t_on, on = timed(clock, repeat, engine, events, True, size, bound)
    t0 = clock()
    read_all(on.trace)  # the first read turns the write buffer into columns
    t_read = clock() - t0
    want = sorted(expected)
    for result in (off, on):
        got = sorted((r.value[0], r.value[2], r.timestamp) for r in result.outputs["sums"])
        assert got == want, "engine and minimal loop disagree"
    return {
        "n": n,
        "minimal": n / t_min,
        "off": n / t_off,
        "on": n / t_on,
        "records": len(on.trace),
        "read": t_read,
        "windows": len(want),
    }


def trace_memory(n: int) -> tuple[float, float, float, int]:
    """Bytes held by the trace per record as the run leaves it (hot paths write packed
    entries) and after the first read has turned it into columns; and the CPU time
    of that first read (``read_all``), in seconds."""
    make, size, bound = JOBS["10s"]
    events = make(n)
    gc.collect()
    tracemalloc.start()
    result = engine(events, True, size, bound)
    packed = tracemalloc.get_traced_memory()[0]
    records = len(result.trace)
    t0 = time.process_time()
    read_all(result.trace)
    unpack_time = time.process_time() - t0
    unpacked = tracemalloc.get_traced_memory()[0]
    result.trace = None
    gc.collect()
    without = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (packed - without) / records, (unpacked - without) / records, unpack_time, records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--memory-size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--jobs", default=",".join(JOBS), help="of: " + ", ".join(JOBS))
    args = parser.parse_args()
    jobs = args.jobs.split(",")
    for job in jobs:
        if job not in JOBS:
            parser.error(f"--jobs: unknown job {job!r} (expected some of {', '.join(JOBS)})")
    print(f"clock: {args.clock}; best of {args.repeat or '3 (1 above 100k)'} runs")
    print(
        "job    events    minimal ev/s   engine(off) ev/s  ratio growth   engine(on) ev/s"
        "  ratio growth   trace records  first read"
    )
    for job in jobs:
        first: dict[str, float] = {}
        for n in (int(s) for s in args.sizes.split(",")):
            repeat = args.repeat or (3 if n <= 100_000 else 1)
            r = throughput(job, n, repeat, CLOCKS[args.clock])
            first = first or r
            print(
                f"{job:<4}{r['n']:>9,} {r['minimal']:>14,.0f} {r['off']:>18,.0f} "
                f"{r['off'] / r['minimal']:>6.3f} {first['off'] / r['off']:>6.2f} "
                f"{r['on']:>16,.0f} {r['on'] / r['minimal']:>6.3f} {first['on'] / r['on']:>6.2f}"
                f" {r['records']:>14,} {r['read'] * 1000:>8.0f} ms"
            )
    packed, unpacked, unpack_time, records = trace_memory(args.memory_size)
    print(
        f"trace memory: {packed:.1f} bytes per record as written, {unpacked:.1f} after the "
        f"first read ({records:,} records, {args.memory_size:,} events of the 10s job); "
        f"first read {unpack_time * 1000:.0f} ms (CPU, under tracemalloc)"
    )


if __name__ == "__main__":
    main()
