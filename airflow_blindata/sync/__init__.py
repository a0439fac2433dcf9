"""Applying a catalog plan to Blindata (``snapshot``) and removing what is no longer described
(``cleanup``), with the protections of crawled metadata and people's edits.

    from airflow_blindata.sync import cleanup, fetch_known_systems, snapshot

    known = fetch_known_systems(client)
    report = snapshot(build(events, definition, known), client, definition)
    ...record report.to_record() in the store's sync history...
    report = cleanup(definition, client, store.sync_history(definition.uuid))

Both return a ``RunReport`` and never raise for Blindata's answers: refused objects, gaps and
failures are in the report. ``runner.py`` adds the event store around them (the operators and the
command line use it).

The names below are loaded on first use (PEP 562, as sqlglot loads its dialects), so that the
``airflow-blindata`` command can declare its sync subcommands without importing the sync.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_blindata.sync.apply import server_time, snapshot
    from airflow_blindata.sync.context import DEFAULT_BATCH_SIZE, PER_OBJECT_LOOKUP_LIMIT
    from airflow_blindata.sync.history import carried_ledger, last_snapshot, store_status
    from airflow_blindata.sync.progress import (
        DEFAULT_PROGRESS_INTERVAL,
        Progress,
        ProgressCallback,
    )
    from airflow_blindata.sync.removal import REASONS, cleanup
    from airflow_blindata.sync.report import (
        Ledger,
        ObjectGroup,
        RunOrigin,
        RunReport,
        SystemUse,
    )
    from airflow_blindata.sync.systems import fetch_known_systems

_EXPORTS = {
    "DEFAULT_BATCH_SIZE": "context",
    "DEFAULT_PROGRESS_INTERVAL": "progress",
    "PER_OBJECT_LOOKUP_LIMIT": "context",
    "REASONS": "removal",
    "Ledger": "report",
    "ObjectGroup": "report",
    "Progress": "progress",
    "ProgressCallback": "progress",
    "RunOrigin": "report",
    "RunReport": "report",
    "SystemUse": "report",
    "carried_ledger": "history",
    "cleanup": "removal",
    "fetch_known_systems": "systems",
    "last_snapshot": "history",
    "server_time": "apply",
    "snapshot": "apply",
    "store_status": "history",
}

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_PROGRESS_INTERVAL",
    "PER_OBJECT_LOOKUP_LIMIT",
    "REASONS",
    "Ledger",
    "ObjectGroup",
    "Progress",
    "ProgressCallback",
    "RunOrigin",
    "RunReport",
    "SystemUse",
    "carried_ledger",
    "cleanup",
    "fetch_known_systems",
    "last_snapshot",
    "server_time",
    "snapshot",
    "store_status",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
