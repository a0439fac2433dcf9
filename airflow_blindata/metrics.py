"""Counting in Airflow's metrics (``Stats``: StatsD or OpenTelemetry), never at the caller's cost.

Capture and the receiver count what they do; a process without Airflow or without a metrics
backend counts nothing, and a failing backend is logged at debug level, never raised.

A process that has not loaded Airflow counts nothing either: loading it costs seconds (its
configuration, its settings), which a count must never add to what it counts — the transport's
first lost event, whose ``emit`` is bound by the store's timeout, would take that much longer.
Airflow's components (workers, the scheduler, the API server) have it loaded long before.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["count"]

log = logging.getLogger(__name__)


def count(name: str, amount: int = 1) -> None:
    """Add ``amount`` to the counter ``name`` (``blindata.receiver.events.accepted``, ...)."""
    if amount <= 0 or "airflow" not in sys.modules:
        return
    try:
        from airflow.providers.common.compat.sdk import Stats

        Stats.incr(name, amount)
    except Exception:
        log.debug("Could not count %s", name, exc_info=True)
