"""Vega-Lite layers written as plain dicts over inline rows — the cheap way into Altair.

A chart built from pandas DataFrames and Altair channel objects pays, on every build, for
sanitising each frame, validating each channel object as it is created and deep-copying the
whole object tree each time a chart is combined or configured. For the same Vega-Lite spec,
the charts here hand Altair what it would produce anyway:

* ``rows_data`` — a layer's data as a list of plain JSON-ready dicts, wrapped in ``Rows`` (an
  ``alt.InlineData`` that Altair's copies share instead of duplicating: the rows are never
  changed after they are built). Altair still moves them to the top-level ``datasets`` under
  a content hash when the chart is converted, as it does for a DataFrame, and the row limit
  still applies: ``rows_data`` runs Altair's own ``limit_rows`` check with the active data
  transformer's ``max_rows`` (``MaxRowsError`` above 5,000 rows unless the user changed it);
* ``layer`` — an ``alt.Chart`` of one mark from dicts (``mark``, ``encoding``), exactly the
  dicts ``Chart.mark_*(...).encode(...)`` would serialise to;
* ``tooltips`` — tooltip channel dicts for the columns of some rows.

The whole spec is still validated against the Vega-Lite schema by ``to_dict()``, once.
"""

from __future__ import annotations

from typing import Any, ClassVar

import altair as alt

from winviz.viz import scale


class Rows(alt.InlineData):
    """Inline data rows (Vega-Lite ``InlineData``) shared, not copied, by chart copies.

    Altair deep-copies a chart (every layer, every row) whenever it is layered, configured or
    given properties; the rows of a winviz layer are built once and never changed, so a copy
    may share them. The values are JSON-ready (int, float, str, bool, None)."""

    _class_is_valid_at_instantiation: ClassVar[bool] = False  # rows are checked by limit_rows

    def __deepcopy__(self, memo: Any = None) -> Rows:
        return self


class Encoding(alt.FacetedEncoding):
    """A layer's encoding given as Vega-Lite channel dicts (validated with the whole spec by
    ``to_dict()``, not channel by channel as they are made)."""

    _class_is_valid_at_instantiation: ClassVar[bool] = False


def rows_data(rows: list[dict[str, Any]]) -> Rows:
    """The rows as a layer's data; raises Altair's ``MaxRowsError`` when they exceed the active
    data transformer's ``max_rows`` (5,000 by default; winviz reduces layers before this)."""
    max_rows = alt.data_transformers.options.get("max_rows", scale.ROW_LIMIT)
    alt.limit_rows({"values": rows}, max_rows=max_rows)
    return Rows(values=rows)


def layer(rows: list[dict[str, Any]], mark: dict[str, Any], encoding: dict[str, Any]) -> alt.Chart:
    """One layer: ``mark`` (a Vega-Lite mark definition with ``type``) drawn from ``rows``."""
    return alt.Chart(data=rows_data(rows), mark=mark, encoding=Encoding(**encoding))


def field_type(rows: list[dict[str, Any]], column: str) -> str:
    """ "quantitative" when every present value of the column is a number (not a bool), else
    "nominal" — as Altair infers it from a DataFrame column."""
    types = {type(r.get(column)) for r in rows} - {type(None)}
    numeric = bool(types) and all(issubclass(t, (int, float)) and t is not bool for t in types)
    return "quantitative" if numeric else "nominal"


def tooltips(rows: list[dict[str, Any]], skip: list[str]) -> list[dict[str, str]]:
    """Tooltip channels for every column but ``skip``; a ``note`` column that is empty in every
    row is left out."""
    if not rows:
        return []
    cols = [c for c in rows[0] if c not in skip]
    if "note" in cols and not any(r.get("note") for r in rows):
        cols.remove("note")
    return [{"field": c, "type": field_type(rows, c)} for c in cols]
