"""Which operator a chart of one window operator draws: ``pick_operator``, shared by the
timeline, the skew chart, the window lanes and the scrubber (each names the window operator
it shows; the default is the first one in the trace)."""

from __future__ import annotations

from winviz.viz.trace_view import TraceInputError, TraceView, window_operators


def pick_operator(view: TraceView, operator: str | None) -> str:
    """The window operator to draw; raises TraceInputError naming the choices."""
    if len(view) == 0:
        raise TraceInputError("The trace is empty. The job recorded no records at all.")
    candidates = window_operators(view) or view.operators("element")
    if not candidates:
        raise TraceInputError(
            "No element reached a keyed operator. The timeline places elements by event time "
            "at a window (or keyed) operator; this trace has none "
            f"(kinds: {', '.join(sorted(view.counts()))})."
        )
    if operator is None:
        return candidates[0]
    if operator not in candidates:
        raise TraceInputError(
            f"No window operator named {operator!r}. Choose one of: "
            f"{', '.join(map(repr, candidates))}."
        )
    return operator
