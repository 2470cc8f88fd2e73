"""winviz.viz.tables.readable: display copies of trace and Spark frames."""

import numpy as np
import pandas as pd
import pytest

import winviz as wv
from winviz.viz.tables import readable, show_full_rows

START = 1_767_603_600_000


def test_whole_floats_become_ints_and_gaps_empty_cells():
    frame = pd.DataFrame({"ts": [12_710.0, np.nan], "temp": [20.5, 21.0]})
    shown = readable(frame)
    assert shown["ts"].tolist() == [12_710, ""]
    assert [type(v) for v in shown["ts"]] == [int, str]
    assert shown["temp"].tolist() == [20.5, 21.0]  # not whole: left alone


def test_min_and_max_by_name_in_int_float_and_object_columns():
    frame = pd.DataFrame(
        {
            "watermark": [wv.MIN, 999, wv.MAX],
            "as_float": [float(wv.MIN), 5.0, float(wv.MAX)],
            "mixed": [wv.MAX, "x", None],
        }
    )
    shown = readable(frame)
    assert shown["watermark"].tolist() == ["MIN", 999, "MAX"]
    assert shown["as_float"].tolist() == ["MIN", 5, "MAX"]
    assert shown["mixed"].tolist() == ["MAX", "x", ""]


def test_nullable_ints_and_categories_show_gaps_as_empty_cells():
    frame = pd.DataFrame(
        {
            "ts": pd.array([12_710, None, wv.MAX], dtype="Int64"),
            "call": pd.Categorical(["on_element", None, "on_element"]),
        }
    )
    shown = readable(frame)
    assert shown["ts"].tolist() == [12_710, "", "MAX"]
    assert shown["call"].tolist() == ["on_element", "", "on_element"]


def test_gaps_in_string_columns_are_empty_cells():
    frame = pd.DataFrame({"key": pd.array(["a", None], dtype="str")})
    assert readable(frame)["key"].tolist() == ["a", ""]


def test_times_relative_to_start_and_labelled():
    frame = pd.DataFrame(
        {"proc_time": [5_000, 15_000], "watermark": [0, START + 12_711], "n": [1, 2]}
    )
    shown = readable(frame, start=START, times=["watermark"], relative=["proc_time"])
    assert list(shown.columns) == ["proc_time (+ms)", "watermark (+ms)", "n"]
    assert shown["watermark (+ms)"].tolist() == ["epoch", 12_711]
    assert shown["proc_time (+ms)"].tolist() == [5_000, 15_000]
    assert shown["n"].dtype == np.int64  # a plain int column is kept as it is
    assert frame["watermark"].tolist() == [0, START + 12_711]  # the input is not changed


def test_bad_arguments_name_the_problem():
    frame = pd.DataFrame({"ts": [1]})
    with pytest.raises(ValueError, match=r"times=\['ts'\] need a start"):
        readable(frame, times=["ts"])
    with pytest.raises(KeyError, match="no column"):
        readable(frame, start=0, times=["watermark"])


def test_show_full_rows_sets_pandas_options():
    with pd.option_context("display.max_colwidth", 50, "display.max_columns", 20):
        show_full_rows()
        assert pd.get_option("display.max_colwidth") is None
        assert pd.get_option("display.max_columns") is None


def test_nullable_bools_show_gaps_as_empty_cells_and_keep_their_values():
    # to_pandas gives deduplicated / existed as ``boolean``, missing on other kinds' rows
    frame = pd.DataFrame({"existed": pd.array([True, None, False], dtype="boolean")})
    shown = readable(frame)
    assert shown["existed"].tolist() == [True, "", False]
    assert [type(v) for v in shown["existed"]] == [bool, str, bool]
    full = pd.DataFrame({"existed": pd.array([True, False], dtype="boolean")})
    assert readable(full)["existed"].tolist() == [True, False]  # no gaps: left as it is
