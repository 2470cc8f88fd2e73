"""Arrow validity bitmaps and numpy flags: an Arrow array with nulls built from a numpy array
and its flags (``where_valid``, ``with_valid``), and the null or valid flags read
straight from an array's bitmap (``valid_flags``, ``null_flags``, ``nulls_at``, ``bits_at``),
for the trace file's writer and reader (``winviz.trace.files``, ``winviz.trace.read_file``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def where_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool), null where ``valid`` is False
    (``valid`` as it is: no negated copy of null flags, a million-event trace's are 6.7 MB)."""
    if valid.all():
        return pa.array(values, kind)
    return with_valid(values, kind, valid)


def with_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool), null where ``valid`` is
    False, built from its buffers: the values as they are, the flags packed to bits."""
    count = len(values) - int(np.count_nonzero(valid))
    data = np.packbits(values, bitorder="little") if kind == pa.bool_() else values
    buffers = [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, len(values), buffers, null_count=count)


def valid_flags(array: pa.Array) -> np.ndarray:
    """True where the array is not null, unpacked from its validity bitmap."""
    n = len(array)
    bitmap = array.buffers()[0]
    if not array.null_count or bitmap is None:
        return np.ones(n, dtype=bool)
    bits = np.frombuffer(bitmap, dtype=np.uint8)
    return np.unpackbits(bits, count=array.offset + n, bitorder="little")[array.offset :].view(bool)


def null_flags(array: pa.Array) -> np.ndarray:
    """True where the array is null."""
    return ~valid_flags(array)


def nulls_at(array: pa.Array, rows: np.ndarray) -> np.ndarray:
    """True where the array is null, at these rows only (read from its validity bitmap)."""
    if not array.null_count or array.buffers()[0] is None:
        return np.zeros(len(rows), dtype=bool)
    return ~bits_at(array.buffers()[0], array.offset, rows)


def bits_at(bitmap: pa.Buffer, offset: int, rows: np.ndarray) -> np.ndarray:
    """The bits of an Arrow bitmap (least significant bit first) at these rows, as bools."""
    at = rows + offset
    bits = np.frombuffer(bitmap, dtype=np.uint8)
    return ((bits[at >> 3] >> (at & 7).astype(np.uint8)) & 1).astype(bool)
