"""PyFlink's ``Row`` and ``RowKind`` (``pyflink.common.types``)."""

from __future__ import annotations

from enum import Enum
from typing import Any


class RowKind(Enum):
    """The change a row stands for; printed as Flink prints it (``+I``, ``-U``, ``+U``,
    ``-D``)."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        return ("+I", "-U", "+U", "-D")[self.value]


class Row:
    """A row of fields, by position (``row[0]``) and, when named, by name (``row.name``,
    ``row['name']``): ``Row(1, 'a')``, ``Row(id=1, name='a')``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            object.__setattr__(self, "_fields", list(kwargs))
            object.__setattr__(self, "_values", list(kwargs.values()))
        else:
            object.__setattr__(self, "_fields", None)
            object.__setattr__(self, "_values", list(args))
        object.__setattr__(self, "_row_kind", RowKind.INSERT)

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        if self._fields is None:
            raise TypeError("Cannot convert a Row class into dict")

        def conv(obj: Any) -> Any:
            if isinstance(obj, Row) and recursive:
                return obj.as_dict(True)
            if isinstance(obj, list) and recursive:
                return [conv(o) for o in obj]
            return obj

        return {k: conv(v) for k, v in zip(self._fields, self._values, strict=True)}

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        object.__setattr__(self, "_row_kind", row_kind)

    def set_field_names(self, field_names: list[str]) -> None:
        object.__setattr__(self, "_fields", list(field_names))

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        return [self[n] for n in names]

    def __call__(self, *args: Any) -> Row:
        """``Person = Row('name', 'age'); Person('Alice', 11)``: a named row."""
        return Row(**dict(zip(self._values, args, strict=True)))

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, int | slice):
            return self._values[item]
        if self._fields is not None and item in self._fields:
            return self._values[self._fields.index(item)]
        raise KeyError(item)

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, int):
            self._values[key] = value
        elif self._fields is not None and key in self._fields:
            self._values[self._fields.index(key)] = value
        else:
            raise KeyError(key)

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        fields = object.__getattribute__(self, "_fields")
        if fields is not None and item in fields:
            return self._values[fields.index(item)]
        raise AttributeError(f"Row has no field {item!r}")

    def __setattr__(self, key: str, value: Any) -> None:
        if self._fields is not None and key in self._fields:
            self[key] = value
        else:
            raise RuntimeError("Row is read-only")

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, item: Any) -> bool:
        return item in (self._fields if self._fields is not None else self._values)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Row)
            and self._row_kind == other._row_kind
            and self._fields == other._fields
            and self._values == other._values
        )

    def __hash__(self) -> int:
        return hash((self._row_kind, tuple(self._values)))

    def __deepcopy__(self, memo: dict) -> Row:
        import copy

        row = Row(*copy.deepcopy(self._values, memo))
        object.__setattr__(row, "_fields", None if self._fields is None else list(self._fields))
        row.set_row_kind(self._row_kind)
        return row

    def __repr__(self) -> str:
        if self._fields is not None:
            inner = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values, strict=True))
            return f"Row({inner})"
        return "<Row(" + ", ".join(repr(v) for v in self._values) + ")>"
