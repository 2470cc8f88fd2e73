"""The trace: one record per thing that happens inside a run, stored as columns.

Every chart, lesson, question and comparison reads the trace, never the engine's internals.
``schema`` names the kinds and fields and the order rules readers rely on; ``codec`` turns
their values into JSON (the plain form ``to_json`` writes, the tagged form files hold);
``writer`` the ``TraceWriter`` the engine writes records through (one method per kind);
``store`` is the ``Trace`` (its encoding and its readers); ``columns`` the columnar layout;
``frame`` the pandas view; ``files`` the Parquet file a trace is saved to and loaded from.
"""

from winviz.trace.codec import jsonable
from winviz.trace.element_entry import Packed
from winviz.trace.schema import (
    BASE_FIELDS,
    DETAIL_FIELDS,
    FRAME_COLUMNS,
    SCHEMA_VERSION,
    TraceRecord,
    detail_names,
    split_subtask,
    window_bounds,
)
from winviz.trace.store import Trace
from winviz.trace.writer import TraceWriter

__all__ = [
    "BASE_FIELDS",
    "DETAIL_FIELDS",
    "FRAME_COLUMNS",
    "SCHEMA_VERSION",
    "Packed",
    "Trace",
    "TraceRecord",
    "TraceWriter",
    "detail_names",
    "jsonable",
    "split_subtask",
    "window_bounds",
]
