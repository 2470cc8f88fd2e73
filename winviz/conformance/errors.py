"""The runner's own error: a transcript it cannot execute."""

from winviz.errors import WinvizError


class TranscriptError(WinvizError, ValueError):
    """An unknown field or a bad value in a transcript (names file, step and field)."""
