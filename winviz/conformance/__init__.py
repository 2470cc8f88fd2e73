"""Conformance transcripts: YAML files that drive one operator step by step, as Flink's operator
test harnesses do (``python -m winviz.conformance run FILE_OR_DIR... [--json]``; format:
``tests/conformance/README.md``)."""

from winviz.conformance.runner import TranscriptError, check_transcript, load, run_transcript

__all__ = ["TranscriptError", "check_transcript", "load", "run_transcript"]
