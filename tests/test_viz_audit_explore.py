"""Chart audit (explorers): the line under an explorer's scrubber ("at t = …: … window(s) fired
…", ``state_at``) counted ``fired`` records: a pane that fired on time and then twice late (an
element within the allowed lateness fires it again) was "3 window(s) fired" where the scrubber
shows one window fired. Each key's pane now counts once."""

from __future__ import annotations

from jobs import count_pipeline

import winviz as wv
from winviz.viz.explore import AtTime, state_at


def late_firings_job() -> wv.JobExecutionResult:
    """a@10, a@250, a@20, a@30, a@400, a@40 one a second; 100 ms tumbling windows, lateness
    200, late data to a side output. The watermark 249 (at 1,200 ms) fires [0, 100); a@20 and
    a@30 fire it again, late (2,000 and 3,000 ms); at 4,200 ms [200, 300) fires; a@40 is too
    late (side output); the end of input fires [400, 500) at 5,000 ms."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 10), ("a", 250), ("a", 20), ("a", 30), ("a", 400), ("a", 40)],
        100,
        lateness=200,
        late=wv.OutputTag("late"),
        arrival_interval=1000,
    )
    return env.execute()


def test_a_pane_fired_again_late_is_one_window_fired() -> None:
    result = late_firings_job()
    fired = [(r.proc_time, r.window.start, r.details()["timing"]) for r in result.trace.records()
             if r.kind == "fired"]  # fmt: skip
    assert fired == [
        (1200, 0, "on_time"),
        (2000, 0, "late"),
        (3000, 0, "late"),
        (4200, 200, "on_time"),
        (5000, 400, "on_time"),
    ]
    assert state_at(result, 3000) == AtTime(
        t=3000, operator="window", watermark=249, fired=1, elements=4
    )
    assert state_at(result, 3000).text() == (
        "at t = 3,000 ms: watermark 249 ms · 1 window(s) fired · 4 element(s) arrived"
    )
    assert [state_at(result, t).fired for t in (1199, 1200, 4200, 5000)] == [0, 1, 2, 3]
