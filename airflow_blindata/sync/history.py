"""The sync history, as cleanup reads it: the last snapshot, and the ledger of owned scopes.

The store keeps one record per snapshot and cleanup (``store.SyncRecord``, newest first from
``sync_history``) with the full ``RunReport`` as its ``report``. Cleanup needs two things from it:

* the last snapshot: its status (cleanup refuses after a failed or empty one), its ``watermark``
  (what is older was not refreshed, so no longer described) and its failures (what it could not
  refresh must not be mistaken for what it no longer describes);
* every ``ol:`` scope this definition has written and not yet emptied. Each cleanup records that
  set as its ``ledger``; the scopes written by the snapshots since then are added to it, those of
  a snapshot that failed too (it may have written them before it stopped). A scope
  leaves the ledger only once a cleanup has removed its last flow. So a job that stops being
  described is found even if several cleanups were refused in between.

This module reads records through a ``Protocol``, so it works with any object that has the fields
of ``store.SyncRecord``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from airflow_blindata.sync.report import Ledger, RunReport, RunStatus

__all__ = [
    "HISTORY_LIMIT",
    "STORE_STATUS",
    "SyncRecordLike",
    "carried_ledger",
    "job_systems_used",
    "last_cursor",
    "last_snapshot",
    "light_scopes_since_snapshot",
    "store_status",
]

HISTORY_LIMIT = 200
"""Records read back to rebuild the ledger: far more than the snapshots between two cleanups."""

STORE_STATUS: Mapping[RunStatus, str] = {
    "running": "failed",
    "success": "success",
    "partial": "success",
    "failed": "failed",
    "refused": "refused",
    "skipped": "refused",
}
"""The store knows fewer statuses than a report; the report keeps the precise one."""


class SyncRecordLike(Protocol):
    @property
    def definition_uuid(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def status(self) -> str: ...
    @property
    def report(self) -> dict[str, Any]: ...


def store_status(report: RunReport) -> str:
    """The status to record in the store for ``report``."""
    if report.kind == "cleanup" and report.dry_run and report.status in ("success", "partial"):
        return "dry_run"
    return STORE_STATUS[report.status]


def _read(record: SyncRecordLike) -> RunReport | None:
    try:
        return RunReport.from_record(record.report)
    except ValueError:  # a record written by another version, or by hand
        return None


def last_snapshot(history: Iterable[SyncRecordLike]) -> RunReport | None:
    """The newest snapshot report (``history`` is newest first). Only a full snapshot: a light
    sync (kind ``light``) refreshes some jobs, and its watermark, Systems and failures say
    nothing of what the definition still describes."""
    for record in history:
        if record.kind == "snapshot":
            return _read(record)
    return None


def light_scopes_since_snapshot(history: Iterable[SyncRecordLike]) -> set[str]:
    """The scopes light syncs wrote after the newest full snapshot (``history`` is newest
    first): fresh, whatever that snapshot wrote, so a cleanup keeps them in its ledger (a job
    first seen between a snapshot and its cleanup is found when it goes)."""
    scopes: set[str] = set()
    for record in history:
        if record.kind == "snapshot":
            break
        if record.kind == "light":
            report = _read(record)
            if report is not None:
                scopes.update(report.scopes)
    return scopes


def carried_ledger(history: Sequence[SyncRecordLike]) -> Ledger:
    """The newest cleanup's ledger plus what every snapshot since then wrote."""
    scopes: set[str] = set()
    job_systems: set[str] = set()
    entity_systems: set[str] = set()
    known = False  # whether a cleanup recorded the Systems of entities before these snapshots
    for record in history:
        report = _read(record)
        if report is None:
            continue
        if report.kind == "cleanup" and report.ledger is not None:
            scopes.update(report.ledger.scopes)
            job_systems.update(report.ledger.job_systems)
            if report.ledger.entity_systems is not None:
                entity_systems.update(report.ledger.entity_systems)
                known = True
            break
        if report.kind in ("snapshot", "light"):
            # A failed snapshot still wrote (or tried to write) its scopes: they are owned, and
            # only the watermark of a snapshot that completed decides what in them is stale.
            # A light sync's are owned too (a job first seen between two full snapshots).
            scopes.update(report.scopes)
            job_systems.update(use.uuid for use in report.systems.values() if use.jobs)
            entity_systems.update(use.uuid for use in report.systems.values())
    return Ledger(
        scopes=sorted(scopes),
        job_systems=sorted(job_systems),
        entity_systems=sorted(entity_systems) if known else None,
    )


def job_systems_used(
    snapshots: Iterable[SyncRecordLike], cleanups: Iterable[SyncRecordLike]
) -> list[str]:
    """The uuids of the Systems the definition's jobs were put in, the most trusted first: those
    of the newest snapshot (or light sync) that wrote jobs, then the newest cleanup's ledger's
    (every record newest first). The mapper keeps the jobs there when several Systems carry the
    stamps of the job System the definition created (``SystemResolver.used_for_jobs``)."""
    used: list[str] = []
    for record in snapshots:
        report = _read(record)
        jobs = [u.uuid for u in report.systems.values() if u.jobs] if report is not None else []
        if jobs:
            used.extend(sorted(jobs))
            break
    for record in cleanups:
        report = _read(record)
        if report is not None and report.ledger is not None:
            used.extend(report.ledger.job_systems)
            break
    return list(dict.fromkeys(used))


def last_cursor(history: Iterable[SyncRecordLike]) -> int | None:
    """The store's cursor of the newest snapshot or light sync that completed (``success`` or
    ``partial``: what a partial one could not write, the next full snapshot writes again), or
    ``None`` when none recorded one. A light sync publishes the jobs with events past it."""
    for record in history:
        if record.kind not in ("snapshot", "light"):
            continue
        report = _read(record)
        if report is None or report.status not in ("success", "partial"):
            continue
        if report.cursor is not None:
            return report.cursor
    return None
