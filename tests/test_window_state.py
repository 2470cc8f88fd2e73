"""A window function's per-window and global state, as Flink's ``WindowOperator`` keeps it.

``clearAllState`` clears the window's contents, calls the trigger's ``clear`` and the
function's ``clear`` (``WindowContext.clear``) — nothing else: per-window state the function
keeps (``context.window_state()``, Flink's ``windowState()``) stays after the window's cleanup
unless the function's ``clear`` clears it (``WindowOperatorContractTest``,
``testPerWindowStateSetAndClearedOn*Purge``). Global state (``globalState()``) is never
cleared by the operator. The refusal of per-window state on merging windows is in
``tests/test_bad_inputs.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from jobs import bounded, engine_paths, keyed_window

import winviz as wv
from winviz.runtime import JobRuntime

# key "A", tumbling 1000 ms windows, 500 ms of allowed lateness, watermark = max ts - 1:
# (A, 100) opens [0, 1000); (A, 1200) takes the watermark to 1199: [0, 1000) fires;
# (A, 300) is late but accepted (1199 < cleanup 1499): [0, 1000) fires again;
# (A, 2600) takes the watermark to 2599: [0, 1000) is cleaned up (1499), [1000, 2000) fires
# (1999) and is cleaned up (2499); the end of input (MAX) fires [2000, 3000) and cleans it up.
RECORDS = [("A", 100), ("A", 1200), ("A", 300), ("A", 2600)]
ARRIVALS = [0, 1000, 2000, 3000]
FIRINGS = [(0, 1, 1, 1), (0, 2, 2, 2), (1000, 1, 1, 3), (2000, 1, 1, 4)]
"""(window start, elements, this window's firings, the key's firings) of each output."""


class Firings(wv.ProcessWindowFunction):
    """Counts the firings of each window (per-window state) and of the key (global state);
    leaves the per-window state behind, as a function without ``clear`` does."""

    def process(self, key, context, elements, out):
        this_window, all_windows = context.window_state(), context.global_state()
        this_window.add(1)
        all_windows.add(1)
        out.collect(
            (
                context.window().start,
                len(list(elements)),
                len(this_window.get()),
                len(all_windows.get()),
            )
        )


class ClearingFirings(Firings):
    """The same, clearing its per-window state in ``clear`` (Flink's docs: "it is important
    to also clean up that state when a window is cleared")."""

    def clear(self, context):
        context.window_state().clear()


class ReducedFirings(wv.ProcessWindowFunction):
    """After a reduce (the window kernel's path): the firing count of each window."""

    def process(self, key, context, elements, out):
        context.window_state().add(1)
        out.collect((context.window().start, elements[0][1], len(context.window_state().get())))


def _run(function: Any, reduce: bool = False) -> tuple[list[Any], dict[Any, Any]]:
    """The outputs and what the window operator's state holds after the run, by (state
    name, key, namespace)."""
    env = wv.StreamExecutionEnvironment()
    windowed = keyed_window(env, RECORDS, 1000, lateness=500, arrival_times=ARRIVALS)
    if reduce:
        windowed.reduce(lambda a, b: (a[0], a[1] + b[1]), ReducedFirings()).sink_to("out")
    else:
        windowed.process(function).sink_to("out")
    runtime = JobRuntime(env, "job")
    result = runtime.run()
    window = next(op for op in runtime.order if op.name == "window")
    return [r.value for r in result.outputs["out"]], dict(window.state.items())


def _ns(start: int) -> wv.TimeWindow:
    return wv.TimeWindow(start, start + 1000)


def test_per_window_state_outlives_its_window_without_clear():
    outputs, state = _run(Firings())
    assert outputs == FIRINGS
    # every window was cleaned up (contents gone), its per-window state was not
    assert state == {
        ("user-window-state", "A", _ns(0)): [1, 1],
        ("user-window-state", "A", _ns(1000)): [1],
        ("user-window-state", "A", _ns(2000)): [1],
        ("user-global-state", "A", None): [1, 1, 1, 1],
    }


def test_a_clear_that_clears_the_per_window_state_removes_it():
    outputs, state = _run(ClearingFirings())
    assert outputs == FIRINGS
    assert state == {("user-global-state", "A", None): [1, 1, 1, 1]}  # global state stays


@pytest.mark.parametrize("kernel", [True, False])
def test_the_window_kernel_leaves_per_window_state_as_flinks_path_does(kernel: bool):
    with engine_paths(kernel=kernel):
        outputs, state = _run(None, reduce=True)
    assert outputs == [(0, 100, 1), (0, 400, 2), (1000, 1200, 1), (2000, 2600, 1)]
    assert state == {
        ("user-window-state", "A", _ns(0)): [1, 1],
        ("user-window-state", "A", _ns(1000)): [1],
        ("user-window-state", "A", _ns(2000)): [1],
    }


def test_a_checkpoint_shows_the_leaked_state_of_a_cleaned_up_window():
    """What a learner sees: one more record, (B, 2700) at 4000 ms, after the periodic
    watermark 2599 of 3200 ms cleaned up [0, 1000) and [1000, 2000) of A; a checkpoint after
    it holds their per-window state — and the contents of the open [2000, 3000) only."""
    env = wv.StreamExecutionEnvironment()
    env.enable_checkpointing(at_records=[5])
    (
        env.from_collection([*RECORDS, ("B", 2700)], arrival_times=[*ARRIVALS, 4000])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .allowed_lateness(500)
        .process(Firings())
        .sink_to("out")
    )
    result = env.execute()
    (checkpoint,) = result.checkpoints
    assert (checkpoint.source_records, checkpoint.processing_time) == (5, 4000)
    assert dict(checkpoint.operator_states["window"]["state"]) == {
        ("user-window-state", "A", _ns(0)): [1, 1],
        ("user-window-state", "A", _ns(1000)): [1],
        ("user-global-state", "A", None): [1, 1, 1],
        ("window-contents", "A", _ns(2000)): [("A", 2600)],
        ("window-contents", "B", _ns(2000)): [("B", 2700)],
    }


class SessionTotals(wv.ProcessWindowFunction):
    """Global state on session windows (allowed, as Flink's ``globalState()`` is): the key's
    running element count across its sessions."""

    def process(self, key, context, elements, out):
        total = context.global_state()
        total.update((total.get() or 0) + len(elements))
        out.collect((key, context.window().start, context.window().end, total.get()))


def test_global_state_works_on_session_windows_and_outlives_the_sessions():
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("A", 1000), ("A", 1500), ("B", 1200), ("A", 9000)], arrival_interval=1
        )
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1000))
        .process(SessionTotals())
        .sink_to("out")
    )
    runtime = JobRuntime(env, "job")
    result = runtime.run()
    # end of input: timers 2199 (B [1200, 2200)), 2499 (A [1000, 2500)), 9999 (A [9000, 10000))
    assert [r.value for r in result.outputs["out"]] == [
        ("B", 1200, 2200, 1),
        ("A", 1000, 2500, 2),
        ("A", 9000, 10000, 3),
    ]
    window = next(op for op in runtime.order if op.name == "window")
    assert dict(window.state.items()) == {
        ("user-global-state", "A", None): 3,
        ("user-global-state", "B", None): 1,
    }
