"""``winviz.load_trace``: a saved trace file back as a ``Trace`` (``winviz.trace.read_file``)."""

from __future__ import annotations

from pathlib import Path

from winviz.errors import ArgumentTypeError
from winviz.trace.store import Trace


def load_trace(path: str | Path) -> Trace:
    """The trace saved at ``path`` by ``Trace.save`` (read-only). A file that is not such a
    trace, or was written for another schema version, raises ``TraceFileError`` naming the
    file and what was expected; nothing in the file is ever run. Each column but ``seq`` and
    ``kind`` is decoded when first read, the records' details too (a damaged one raises
    ``TraceFileError`` then)."""
    from winviz.trace.read_file import load  # pyarrow, imported when a file is read

    if not isinstance(path, (str, Path)):
        raise ArgumentTypeError(
            f"load_trace() takes the path of a trace file, not {type(path).__name__}",
            field="path",
            value=path,
            expected="a str or pathlib.Path of a trace file",
        )
    return Trace.from_columns(load(path), view=True)
