"""Chart audit (binned elements): a binned mark's tooltip gave its grid cell's bounds as the
elements' times ("proc_time -5 ms .. 22 ms" for 12,000 elements that all arrived at 0 ms — a
negative processing time no record has), and the scrubber showed a cell from the start of its
processing-time bin, before any of its elements had arrived (kernel_binned: a cell of two
elements that arrived at 5 and 10 ms showed at -42 ms). The tooltips now give the extent of the
cell's own elements, and a scrubber cell shows when its first element arrives."""

from __future__ import annotations

from typing import Any

import chart_jobs
from jobs import count_per_key

import winviz as wv
from winviz import viz


def same_instant_job(n: int = 12_000) -> wv.JobExecutionResult:
    """``n`` elements k@5, all arriving at 0 ms (more than the charts draw one by one)."""
    return count_per_key([("k", 5)] * n, 10, arrival_times=[0] * n)


def binned(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        r
        for rows in spec["datasets"].values()
        for r in rows
        if r.get("kind") == "elements (binned)"
    ]


def test_a_cell_of_elements_at_one_instant_says_that_instant() -> None:
    trace = same_instant_job().trace
    (cell,) = binned(viz.timeline(trace, view="timeline").to_dict())
    assert (cell["count"], cell["ts"], cell["proc_time"]) == (
        12_000,
        "5 ms .. 5 ms",
        "0 ms .. 0 ms",
    )
    cells = binned(viz.scrubber(trace).to_dict())
    assert {(c["count"], c["arrived"], c["proc_time"]) for c in cells} == {
        (12_000, 0, "0 ms .. 0 ms")
    }
    (cell,) = binned(viz.skew_chart(trace).to_dict())
    assert (cell["count"], cell["processing time"], cell["skew"]) == (
        12_000,
        "0 ms .. 0 ms",
        "-5 .. -5 ms",
    )


def test_scrubber_cells_show_when_their_first_element_arrives() -> None:
    trace = chart_jobs.kernel_job(12_000).trace
    arrivals = {r.proc_time for r in trace.records() if r.kind == "element"}
    cells = binned(viz.scrubber(trace).to_dict())
    assert sum(c["count"] for c in cells) == 12_000  # (one dataset for both of its layers)
    for c in cells:
        first, last = (
            int(t.removesuffix(" ms").replace(",", "")) for t in c["proc_time"].split(" .. ")
        )
        assert c["arrived"] == first and first in arrivals and last in arrivals
