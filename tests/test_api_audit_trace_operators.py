"""A trace filter that names nothing says so: an operator name no record of the run has (a
typo, or ``"window"`` for its subtasks ``"window#0"`` …) raises, naming it and the trace's
operators, instead of selecting nothing — while an operator of the run that has no records in
a view (``until``, ``where``) is an empty selection, as a chart or lesson reading a view
expects."""

from __future__ import annotations

import pytest
from jobs import count_pipeline, two_keys_run

import winviz as wv
from winviz.errors import InputError
from winviz.trace import Trace


@pytest.fixture(scope="module")
def trace() -> Trace:
    return two_keys_run(60)


def test_where_names_an_operator_the_trace_does_not_have(trace: Trace) -> None:
    assert trace.operators() == ["source", "window", "watermarks", "out"]
    with pytest.raises(
        InputError,
        match=r"^field 'operator', value 'typo': no operator 'typo' in this trace \(expected "
        r"the name of one of the trace's operators: 'source', 'window', 'watermarks', 'out'\)$",
    ):
        trace.where(operator="typo")
    with pytest.raises(ValueError, match=r"no operator 'windw' .*did you mean 'window'\?"):
        trace.where(operator="windw")
    # one unknown name among several is named
    with pytest.raises(InputError, match=r"value \['window', 'nope'\]: no operator 'nope' "):
        trace.where(operator=["window", "nope"])
    # records() and rows_where() filter the same way
    with pytest.raises(InputError, match="no operator 'typo'"):
        trace.records("fired", operator="typo")
    with pytest.raises(InputError, match="no operator 'typo'"):
        trace.rows_where(operator="typo")


def test_an_operator_of_the_run_with_no_records_in_a_view_is_an_empty_selection(
    trace: Trace,
) -> None:
    fired = trace.where(kind="fired")
    assert fired.operators() == ["window"]
    assert len(fired.where(operator="source")) == 0
    assert len(trace.until(-1).where(operator="window")) == 0
    assert len(trace.where(operator="window")) == len([r for r in trace if r.operator == "window"])


def test_where_says_an_operator_runs_as_subtasks() -> None:
    env = wv.StreamExecutionEnvironment().set_parallelism(2)
    count_pipeline(
        env,
        [("a", 1), ("b", 2)],
        10,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
    )
    run = env.execute().trace
    with pytest.raises(
        InputError,
        match=r"no operator 'window' in this trace \('window' runs as the subtasks "
        r"'window#\d', 'window#\d'\)",
    ):
        run.where(operator="window")
    assert {r.operator for r in run.where(operator=["window#0", "window#1"])} == {
        "window#0",
        "window#1",
    }


def test_an_empty_trace_has_no_operator_to_select() -> None:
    with pytest.raises(InputError, match=r"expected an operator name, but the trace has no"):
        Trace().where(operator="window")


def test_why_fired_names_an_operator_the_trace_does_not_have(trace: Trace) -> None:
    with pytest.raises(InputError, match="no operator 'windw' in this trace"):
        wv.why_fired(trace, "a", (0, 5_000), operator="windw")
