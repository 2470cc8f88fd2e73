"""PyFlink's ``TimerService``: what ``ctx.timer_service()`` offers (winviz's timer service,
with the same names: ``current_processing_time``, ``current_watermark``,
``register_event_time_timer``, ``register_processing_time_timer``,
``delete_event_time_timer``, ``delete_processing_time_timer``)."""

from __future__ import annotations

from abc import ABC, abstractmethod


class TimerService(ABC):
    @abstractmethod
    def current_processing_time(self) -> int: ...

    @abstractmethod
    def current_watermark(self) -> int: ...

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_event_time_timer(self, timestamp: int) -> None: ...


__all__ = ["TimerService"]
