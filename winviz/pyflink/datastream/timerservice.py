"""PyFlink's ``TimerService``: winviz's (``current_processing_time``,
``current_watermark``, ``register_event_time_timer``… with the same names)."""

from winviz.timers import TimerService

__all__ = ["TimerService"]
