"""PyFlink's ``RuntimeExecutionMode``: winviz's (STREAMING, BATCH, AUTOMATIC)."""

from winviz import RuntimeExecutionMode

__all__ = ["RuntimeExecutionMode"]
