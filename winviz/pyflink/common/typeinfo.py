"""PyFlink's type information (``Types.STRING()``, ``Types.TUPLE([...])``…).

winviz does not serialize records, so a type is mostly a label it may ignore. Two things a
PyFlink type does change, and this module keeps them:

* what a Python function receives after the value crossed Java: a ``Types.FLOAT()`` field
  is a Java ``float`` (32 bits), so 110.1 comes back as 110.0999984741211; a
  ``Types.ROW_NAMED`` record is a ``Row`` (``internal``);
* how ``print()`` writes a value of a Java type: a ``Types.TUPLE`` as Java's
  ``Tuple.toString`` ``(hi,0,5,5)``, a boolean as ``true``, a ``Row`` as ``+I[1,abc]``,
  a value of no declared type (PyFlink's pickled bytes) as Python's ``str`` (``text``).
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any

from winviz.pyflink.common.types import Row


class TypeInformation:
    """A PyFlink type. ``internal(value)``: the value as a Python function receives it;
    ``text(value)``: as ``print()`` and ``Encoder.simple_string_encoder()`` write it."""

    name = "PICKLED_BYTE_ARRAY"

    def internal(self, value: Any) -> Any:
        return value

    def text(self, value: Any) -> str:
        return value if isinstance(value, str) else str(value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class BasicTypeInfo(TypeInformation):
    def __init__(self, name: str) -> None:
        self.name = name

    def internal(self, value: Any) -> Any:
        if self.name == "FLOAT" and isinstance(value, float):
            return struct.unpack("f", struct.pack("f", value))[0]
        return value

    def text(self, value: Any) -> str:
        if isinstance(value, float) and self.name in ("FLOAT", "DOUBLE"):
            return java_float_text(value, single=self.name == "FLOAT")
        return java_text(value)


class PickledBytesTypeInfo(TypeInformation):
    """No declared type: PyFlink pickles the Python object; ``print`` writes ``str(value)``."""


class RowTypeInfo(TypeInformation):
    name = "ROW"

    def __init__(self, field_types: list[TypeInformation], field_names: list[str] | None = None):
        self.field_types = list(field_types)
        self.field_names = None if field_names is None else list(field_names)

    def internal(self, value: Any) -> Any:
        values = [t.internal(v) for t, v in zip(self.field_types, value, strict=False)]
        if self.field_names is not None:
            row = Row(**dict(zip(self.field_names, values, strict=False)))
        else:
            row = Row(*values)
        if isinstance(value, Row):
            row.set_row_kind(value.get_row_kind())
        return row

    def text(self, value: Any) -> str:
        kind = value.get_row_kind() if isinstance(value, Row) else "+I"
        return f"{kind}[{','.join(str(v) for v in value)}]"


class TupleTypeInfo(TypeInformation):
    name = "TUPLE"

    def __init__(self, field_types: list[TypeInformation]) -> None:
        self.field_types = list(field_types)

    def internal(self, value: Any) -> Any:
        return tuple(t.internal(v) for t, v in zip(self.field_types, value, strict=False))

    def text(self, value: Any) -> str:
        return (
            "(" + ",".join(t.text(v) for t, v in zip(self.field_types, value, strict=False)) + ")"
        )


class ListTypeInfo(TypeInformation):
    def __init__(self, name: str, element_type: TypeInformation) -> None:
        self.name = name
        self.element_type = element_type

    def internal(self, value: Any) -> Any:
        return [self.element_type.internal(v) for v in value]


class MapTypeInfo(TypeInformation):
    name = "MAP"

    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        self.key_type = key_type
        self.value_type = value_type

    def internal(self, value: Any) -> Any:
        return {self.key_type.internal(k): self.value_type.internal(v) for k, v in value.items()}


def java_text(value: Any) -> str:
    """A value of a basic Java type as Java's ``toString`` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return value if isinstance(value, str) else str(value)


def java_float_text(value: float, *, single: bool = False) -> str:
    """Java's ``Double.toString`` (``Float.toString`` when ``single``): the shortest digits
    that read back to the same value, as ``123.45`` when 10^-3 <= |value| < 10^7, else as
    ``1.0E-5``; ``NaN``, ``Infinity``, ``-0.0``."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    digits = repr(value)
    if single:  # the shortest decimal that reads back to the same 32-bit float
        target = struct.pack("f", value)
        for precision in range(1, 10):
            candidate = f"{value:.{precision}g}"
            if struct.pack("f", float(candidate)) == target:
                digits = candidate
                break
    sign, numerals, exponent = Decimal(digits).as_tuple()
    numerals = tuple(numerals)
    while len(numerals) > 1 and numerals[-1] == 0:
        numerals, exponent = numerals[:-1], int(exponent) + 1
    point = len(numerals) + int(exponent)  # digits before the decimal point
    text = "".join(map(str, numerals))
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            body = "0." + "0" * -point + text
        elif point >= len(text):
            body = text + "0" * (point - len(text)) + ".0"
        else:
            body = text[:point] + "." + text[point:]
    else:
        body = f"{text[0]}.{text[1:] or '0'}E{point - 1}"
    return ("-" if sign else "") + body


class Types:
    """PyFlink's ``Types``: the type information of records, fields and state."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("STRING")

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("BYTE")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("BOOLEAN")

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("SHORT")

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("INT")

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("LONG")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo("FLOAT")

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("DOUBLE")

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("CHAR")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BIG_INT")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BIG_DEC")

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo("INSTANT")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return BasicTypeInfo("SQL_DATE")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return BasicTypeInfo("SQL_TIME")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return BasicTypeInfo("SQL_TIMESTAMP")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> TypeInformation:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> TypeInformation:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TypeInformation:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo("PRIMITIVE_ARRAY", element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo("BASIC_ARRAY", element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo("OBJECT_ARRAY", element_type)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo("LIST", element_type_info)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)


PICKLED = PickledBytesTypeInfo()
"""The type of a stream whose values have no declared type."""


def internal(type_info: TypeInformation | None, value: Any) -> Any:
    """``value`` as a Python function downstream receives it (unchanged without a type)."""
    return value if type_info is None else type_info.internal(value)


def text(type_info: TypeInformation | None, value: Any) -> str:
    return (type_info or PICKLED).text(value)
