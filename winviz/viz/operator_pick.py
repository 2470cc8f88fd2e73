"""Which operator a chart of one operator draws (``pick_operator``: the timeline, skew chart,
window lanes, scrubber and timers chart)."""

from __future__ import annotations

from winviz.viz.trace_view import TraceInputError, TraceView, window_operators


def require_records(view: TraceView) -> None:
    """Raises TraceInputError when the trace holds no record at all."""
    if len(view) == 0:
        raise TraceInputError("The trace is empty. The job recorded no records at all.")


def pick_operator(
    view: TraceView,
    operator: str | None,
    candidates: list[str] | None = None,
    *,
    none: str = (
        "No element reached a keyed operator. The timeline places elements by event time at "
        "a window (or keyed) operator; this trace has none"
    ),
    named: str = "No window operator named {!r}.",
) -> str:
    """The operator to draw: ``operator``, or the first of ``candidates`` (default: the
    window operators, else those elements reached). ``TraceInputError``: ``none`` when there
    is no candidate, ``named`` and the choices for a name not among them."""
    require_records(view)
    if candidates is None:
        candidates = window_operators(view) or view.operators("element")
    if not candidates:
        raise TraceInputError(f"{none} (kinds: {', '.join(sorted(view.counts()))}).")
    if operator is None:
        return candidates[0]
    if operator not in candidates:
        raise TraceInputError(
            f"{named.format(operator)} Choose one of: {', '.join(map(repr, candidates))}."
        )
    return operator
