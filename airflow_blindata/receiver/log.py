"""Warnings of the receiver, at most one per kind and interval: a misconfigured Spark cluster
sending thousands of events with a wrong key must not bury the API server log.

The first warning of a kind is logged at once; later ones within ``WARNING_INTERVAL_SECONDS`` are
counted, and the next warning logged says how many were held back. Nothing is dropped silently:
every refusal is also answered to its producer and counted in Airflow's metrics.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["WARNING_INTERVAL_SECONDS", "ThrottledWarnings"]

WARNING_INTERVAL_SECONDS = 60.0


class ThrottledWarnings:
    """``warn(kind, message, *args)``: one log line per ``kind`` and interval (thread-safe)."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        interval: float = WARNING_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, kind: str, message: str, *args: object) -> None:
        now = self._clock()
        with self._lock:
            if now < self._next.get(kind, float("-inf")):
                self._held[kind] = self._held.get(kind, 0) + 1
                return
            held = self._held.pop(kind, 0)
            self._next[kind] = now + self._interval
        if held:
            message += " (and %d more like it in the last %d s)"
            args = (*args, held, int(self._interval))
        self._logger.warning(message, *args)
