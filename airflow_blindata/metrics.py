"""Counting in Airflow's metrics (``Stats``: StatsD or OpenTelemetry), never at the caller's cost.

Capture and the receiver count what they do; a process without Airflow or without a metrics
backend counts nothing, and a failing backend is logged at debug level, never raised.
"""

from __future__ import annotations

import logging

__all__ = ["count"]

log = logging.getLogger(__name__)


def count(name: str, amount: int = 1) -> None:
    """Add ``amount`` to the counter ``name`` (``blindata.receiver.events.accepted``, ...)."""
    if amount <= 0:
        return
    try:
        from airflow.providers.common.compat.sdk import Stats

        Stats.incr(name, amount)
    except Exception:
        log.debug("Could not count %s", name, exc_info=True)
