"""One snapshot or cleanup with the event store around it: what the operators and the CLI run.

``run_snapshot``: prune the store by the definition's retention (a job with no event for
``jobDescribedForDays`` stops being described), read the Systems Blindata holds, map the stored
events one job at a time (memory follows the catalog, not the history), apply the plan, and
record the report in the sync history. ``run_cleanup``: read that
history, clean up, record. Blindata and store failures become a ``failed`` report, so that the
history says what happened; a report that cannot be recorded raises (``StoreError``), because the
next cleanup depends on it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from airflow_blindata.blindata import BlindataClient, BlindataError
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.systems import (
    JOB_SYSTEM_PROPERTY,
    NAMESPACE_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
)
from airflow_blindata.store import EventStore, StoreError, SyncRecord
from airflow_blindata.sync.apply import snapshot
from airflow_blindata.sync.context import DEFAULT_BATCH_SIZE
from airflow_blindata.sync.history import HISTORY_LIMIT, store_status
from airflow_blindata.sync.mapping import plan_from_store
from airflow_blindata.sync.progress import Progress, ProgressCallback
from airflow_blindata.sync.removal import cleanup
from airflow_blindata.sync.report import KnownSystemRecord, RunKind, RunOrigin, RunReport, utcnow
from airflow_blindata.sync.systems import fetch_known_systems

__all__ = [
    "history",
    "record",
    "recorded_systems",
    "run_cleanup",
    "run_snapshot",
    "used_systems",
]


def record(store: EventStore, report: RunReport) -> None:
    """Add ``report`` to the store's sync history."""
    store.record_sync(
        SyncRecord(
            definition_uuid=report.definition_uuid,
            kind=report.kind,
            started_at=report.started_at,
            finished_at=report.finished_at or utcnow(),
            status=store_status(report),
            report=report.to_record(),
        )
    )


RESOLVING = frozenset({NAMESPACE_PROPERTY, OWNER_PROPERTY, JOB_SYSTEM_PROPERTY})
"""The properties of a System that the mapper reads to resolve a namespace to it."""


def used_systems(known: Iterable[KnownSystem], plan: CatalogPlan) -> list[KnownSystemRecord]:
    """The known Systems ``plan`` uses, with the properties that resolve namespaces to them:
    what mapping a job again needs of Blindata to resolve it as the snapshot did (a System the
    plan does not use resolved nothing, and is left out, so that the record stays small)."""
    used = {system.uuid for system in plan.systems if system.uuid} | {
        system.name for system in plan.systems
    }
    return [
        KnownSystemRecord(
            name=system.name,
            uuid=system.uuid,
            properties=[(key, value) for key, value in system.properties if key in RESOLVING],
        )
        for system in known
        if system.uuid in used or system.name in used
    ]


def recorded_systems(report: RunReport) -> list[KnownSystem]:
    """The Systems ``report`` recorded (``used_systems``), as the mapper takes them."""
    return [
        KnownSystem(system.name, system.uuid, tuple(system.properties))
        for system in report.known_systems
    ]


def _failed(kind: RunKind, definition: JobDefinition, message: str) -> RunReport:
    return RunReport(kind=kind, definition_uuid=definition.uuid).finish("failed", message)


def _stamp(report: RunReport, client: BlindataClient, origin: RunOrigin | None) -> None:
    """Who ran the report's run, and against which Blindata (the URL without credentials)."""
    report.origin = origin
    report.blindata_url = client.base_url


def run_snapshot(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    *,
    progress: Progress | ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    apply_retention: bool = True,
    origin: RunOrigin | None = None,
) -> RunReport:
    """Retention, mapping and snapshot of every stored event; the report is recorded."""
    started = utcnow()
    pruned = 0
    try:
        if apply_retention:
            retention = definition.retention
            pruned = store.retain(
                raw_events_days=retention.raw_events_days,
                job_described_for_days=retention.job_described_for_days,
            ).events_removed
        known = fetch_known_systems(client)
        mapping_started = time.monotonic()
        plan = plan_from_store(store, definition, known)
        mapping = round(time.monotonic() - mapping_started, 3)
        report = snapshot(plan, client, definition, progress=progress, batch_size=batch_size)
        report.timings = {"mapping": mapping, **report.timings}
        report.definition = definition.model_dump(mode="json", by_alias=True)
        report.known_systems = used_systems(known, plan)
    except BlindataError as exc:
        report = _failed("snapshot", definition, f"Blindata cannot be used: {exc}")
    except StoreError as exc:
        report = _failed("snapshot", definition, f"the event store cannot be read: {exc}")
    report.started_at = started
    report.count("eventsPruned", pruned)
    _stamp(report, client, origin)
    record(store, report)
    return report


def run_cleanup(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    *,
    dry_run: bool = False,
    force: bool = False,
    progress: Progress | ProgressCallback | None = None,
    origin: RunOrigin | None = None,
) -> RunReport:
    """Cleanup after the last recorded snapshot; the report is recorded."""
    try:
        records = store.sync_history(definition.uuid, limit=HISTORY_LIMIT)
    except StoreError as exc:
        report = _failed("cleanup", definition, f"the sync history cannot be read: {exc}")
    else:
        report = cleanup(
            definition, client, records, dry_run=dry_run, force=force, progress=progress
        )
    _stamp(report, client, origin)
    record(store, report)
    return report


def history(
    store: EventStore, definition_uuid: str, *, kind: RunKind | None = None, limit: int = 5
) -> list[RunReport]:
    """The latest reports of a definition, newest first (records from elsewhere are skipped)."""
    reports = []
    for item in store.sync_history(definition_uuid, kind=kind, limit=limit):
        try:
            reports.append(RunReport.from_record(item.report))
        except ValueError:
            continue
    return reports
