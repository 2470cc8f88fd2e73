"""Conformance transcripts: YAML files that drive one operator step by step, as Flink's own
operator test harnesses do, and state what must come out after each step.

``python -m winviz.conformance run FILE_OR_DIR... [--json]`` — see
``tests/conformance/README.md`` and the shared ``FORMAT.md`` for the format.
"""

from winviz.conformance.runner import TranscriptError, check_transcript, load, run_transcript

__all__ = ["TranscriptError", "check_transcript", "load", "run_transcript"]
