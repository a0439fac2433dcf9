"""One snapshot or cleanup with the event store around it: what the operators and the CLI run.

``run_snapshot``: prune the store by the definition's retention (a job with no event for
``jobDescribedForDays`` stops being described), read the Systems Blindata holds, map the stored
events one job at a time (memory follows the catalog, not the history), apply the plan, and
record the report in the sync history. ``run_cleanup``: read that
history, clean up, record. Blindata and store failures become a ``failed`` report, so that the
history says what happened; a report that cannot be recorded raises (``StoreError``), because the
next cleanup depends on it. So does a run stopped by anything else (a bug, a timeout, an
interrupt): its report is recorded ``failed`` with the error, redacted (``_stopped``), so that the
history and the Blindata page never show the run before as the latest state; an error is then
reported, an interrupt or a timeout goes on its way once recorded.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta

from airflow_blindata.blindata import BlindataClient, BlindataError
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.identity import shown_namespace
from airflow_blindata.mapper.light import plan_of_jobs
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.systems import (
    DATABASE_PROPERTY,
    JOB_SYSTEM_NAME_PROPERTY,
    JOB_SYSTEM_PROPERTY,
    NAMESPACE_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
)
from airflow_blindata.plans.store import Touched, plan_from_store
from airflow_blindata.redaction import redact_text, redact_url
from airflow_blindata.store import EventStore, StoreError, SyncLedger, SyncRecord
from airflow_blindata.sync.apply import snapshot
from airflow_blindata.sync.context import DEFAULT_BATCH_SIZE, check_batch_size
from airflow_blindata.sync.history import (
    HISTORY_LIMIT,
    job_systems_used,
    last_cursor,
    store_status,
)
from airflow_blindata.sync.progress import Progress, ProgressCallback
from airflow_blindata.sync.removal import cleanup
from airflow_blindata.sync.report import KnownSystemRecord, RunKind, RunOrigin, RunReport, utcnow
from airflow_blindata.sync.systems import fetch_known_systems

__all__ = [
    "FULL_LOCK_TTL",
    "LIGHT_LOCK_TTL",
    "LOCK_WAIT",
    "SyncLockedError",
    "cleanup_history",
    "has_new_events",
    "history",
    "light_cursor",
    "record",
    "recorded_systems",
    "run_cleanup",
    "run_light",
    "run_snapshot",
    "sync_lock",
    "used_systems",
]

FULL_LOCK_TTL = timedelta(hours=3)
"""How long a snapshot or cleanup holds the definition's sync lock at most: a holder killed
without giving it back (a worker lost) blocks light syncs until then, never longer."""

LIGHT_LOCK_TTL = timedelta(minutes=30)
"""The same for a light sync (which lasts seconds to a minute)."""

LOCK_WAIT = 600.0
"""Seconds a snapshot or cleanup waits for a light sync to give the lock back (a light sync
does not wait: it is skipped, and the next one publishes what it would have)."""

LOCK_POLL = 2.0

STOPPED_MESSAGE_LENGTH = 1000
"""Characters of an unexpected error's message kept in the report (the log has it whole)."""

log = logging.getLogger(__name__)

RECENT_RECORDS = 3
"""Records of each kind a light sync reads first for its cursor (more only when none of them
completed)."""


class SyncLockedError(Exception):
    """Another sync of the definition holds its lock."""


def record(store: SyncLedger, report: RunReport) -> None:
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


RESOLVING = frozenset(
    {
        NAMESPACE_PROPERTY,
        DATABASE_PROPERTY,
        OWNER_PROPERTY,
        JOB_SYSTEM_PROPERTY,
        JOB_SYSTEM_NAME_PROPERTY,
    }
)
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


def _stopped(report: RunReport, error: BaseException) -> RunReport:
    """``report``, ``failed`` by an error none of the run's steps expected: a bug (an error;
    its traceback is logged, redacted), or a timeout or an interrupt (anything else). What the
    report holds stays: the scopes a snapshot wrote before it stopped are owned."""
    detail = redact_text(str(error))
    if len(detail) > STOPPED_MESSAGE_LENGTH:
        detail = detail[:STOPPED_MESSAGE_LENGTH] + " …"
    named = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    if isinstance(error, Exception):
        log.error(
            "The Blindata %s stopped on an unexpected error:\n%s",
            "light sync" if report.kind == "light" else report.kind,
            redact_text("".join(traceback.format_exception(error)).rstrip()),
        )
        return report.finish("failed", f"stopped by an unexpected error: {named}")
    return report.finish("failed", f"stopped before its end: {named}")


def _record_stopped(store: SyncLedger, report: RunReport) -> None:
    """Record the report of a run a timeout or an interrupt stopped, which then goes on its
    way: a store that cannot take it is logged, not raised in its place."""
    try:
        record(store, report)
    except Exception as exc:
        log.warning("The stopped %s could not be recorded: %s", report.kind, redact_text(str(exc)))


def _closed(
    report: RunReport, started: datetime, client: BlindataClient, origin: RunOrigin | None
) -> RunReport:
    """``report`` with the run's start, who ran it and against which Blindata."""
    report.started_at = started
    _stamp(report, client, origin)
    return report


def _stamp(report: RunReport, client: BlindataClient, origin: RunOrigin | None) -> None:
    """Who ran the report's run, and against which Blindata (the URL without credentials: a
    ``?token=`` in it reached reports and XComs, a probe of secrets)."""
    report.origin = origin
    report.blindata_url = redact_url(client.base_url)


@contextmanager
def sync_lock(
    store: SyncLedger,
    definition: JobDefinition,
    kind: RunKind,
    *,
    wait: float = 0.0,
    ttl: timedelta = FULL_LOCK_TTL,
) -> Iterator[None]:
    """Hold the definition's sync lock (``SyncLedger.acquire_sync_lock``) for the block; wait up
    to ``wait`` seconds for it, then raise ``SyncLockedError`` naming who holds it."""
    holder = f"{kind} {os.getpid()}-{uuid.uuid4().hex[:8]}"
    deadline = time.monotonic() + wait
    while True:
        other = store.acquire_sync_lock(definition.uuid, holder, ttl=ttl)
        if other is None:
            break
        if time.monotonic() >= deadline:
            raise SyncLockedError(f"another sync of this definition holds its lock: {other}")
        time.sleep(min(LOCK_POLL, max(0.0, deadline - time.monotonic())))
    try:
        yield
    finally:
        with suppress(StoreError):  # then it expires by itself
            store.release_sync_lock(definition.uuid, holder)


def run_snapshot(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    *,
    progress: Progress | ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    apply_retention: bool = True,
    lock_wait: float = LOCK_WAIT,
    origin: RunOrigin | None = None,
) -> RunReport:
    """Retention, mapping and snapshot of every stored event; the report is recorded.

    It holds the definition's sync lock, waiting up to ``lock_wait`` seconds for a light sync to
    end; the report records the store's cursor it read up to (``RunReport.cursor``). A
    ``batch_size`` that is not a positive whole number is a ``ValueError``, before anything."""
    check_batch_size(batch_size)
    started = utcnow()
    running = RunReport(kind="snapshot", definition_uuid=definition.uuid)
    try:
        with sync_lock(store, definition, "snapshot", wait=lock_wait):
            report = _snapshot_locked(
                definition,
                client,
                store,
                running,
                progress=progress,
                batch_size=batch_size,
                apply_retention=apply_retention,
            )
    except SyncLockedError as exc:
        report = _failed("snapshot", definition, str(exc))
    except StoreError as exc:
        report = _failed("snapshot", definition, f"the event store cannot be used: {exc}")
    except Exception as exc:
        report = _stopped(running, exc)
    except BaseException as exc:
        _record_stopped(store, _closed(_stopped(running, exc), started, client, origin))
        raise
    record(store, _closed(report, started, client, origin))
    return report


def _snapshot_locked(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    running: RunReport,
    *,
    progress: Progress | ProgressCallback | None,
    batch_size: int,
    apply_retention: bool,
) -> RunReport:
    """The snapshot, ``running`` its report as it fills (``run_snapshot`` records it when an
    unexpected error stops the run)."""
    pruned = 0
    cursor: int | None = None
    try:
        if apply_retention:
            retention = definition.retention
            pruned = store.retain(
                raw_events_days=retention.raw_events_days,
                job_described_for_days=retention.job_described_for_days,
            ).events_removed
        known = fetch_known_systems(client)
        mapping_started = time.monotonic()
        cursor = store.last_id()
        plan = plan_from_store(
            store, definition, known, until=cursor, used_for_jobs=_used_for_jobs(store, definition)
        )
        mapping = round(time.monotonic() - mapping_started, 3)
        report = snapshot(
            plan,
            client,
            definition,
            progress=progress,
            batch_size=batch_size,
            store_id=store.store_id(),
            report=running,
        )
        report.timings = {"mapping": mapping, **report.timings}
        report.definition = definition.model_dump(mode="json", by_alias=True)
        report.known_systems = used_systems(known, plan)
    except BlindataError as exc:
        report = _failed("snapshot", definition, f"Blindata cannot be used: {exc}")
    except StoreError as exc:
        report = _failed("snapshot", definition, f"the event store cannot be read: {exc}")
    report.cursor = cursor
    report.count("eventsPruned", pruned)
    return report


def _used_for_jobs(store: SyncLedger, definition: JobDefinition) -> list[str]:
    """The Systems the definition's last syncs put its jobs in (``history.job_systems_used``)."""
    snapshots = [
        *store.sync_history(definition.uuid, kind="light", limit=1),
        *store.sync_history(definition.uuid, kind="snapshot", limit=RECENT_RECORDS),
    ]
    snapshots.sort(key=lambda item: item.started_at, reverse=True)
    return job_systems_used(
        snapshots, store.sync_history(definition.uuid, kind="cleanup", limit=RECENT_RECORDS)
    )


def light_cursor(store: SyncLedger, definition: JobDefinition) -> int | None:
    """The cursor a light sync publishes from: that of the newest snapshot or light sync of the
    definition that completed; ``None`` before the first full snapshot that recorded one."""
    cursors = []
    for kind in ("light", "snapshot"):
        # the newest few records first: a snapshot's report lists every scope it wrote
        for limit in (RECENT_RECORDS, HISTORY_LIMIT):
            cursor = last_cursor(store.sync_history(definition.uuid, kind=kind, limit=limit))
            if cursor is not None:
                cursors.append(cursor)
                break
    return max(cursors) if cursors else None


NO_FULL_SNAPSHOT_YET = "no full snapshot of this definition yet: the snapshot publishes all"
"""Why a light sync publishes nothing before the definition's first full snapshot."""


def has_new_events(store: EventStore, definition: JobDefinition) -> bool:
    """Whether a light sync would find anything to publish: an event past the cursor of the
    last sync (two small queries: the sync history's newest records and the store's last
    cursor). Before a first full snapshot, no."""
    cursor = light_cursor(store, definition)
    return cursor is not None and store.last_id() > cursor


def run_light(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    *,
    progress: Progress | ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    origin: RunOrigin | None = None,
) -> RunReport:
    """Publish the jobs that received events since the last sync of the definition, removing
    nothing; the report (kind ``light``) is recorded when it published something.

    ``skipped``, at once and unrecorded, when nothing is new (one look at the sync history and
    the store's cursor), before any full snapshot (it publishes from that snapshot's cursor),
    or while a snapshot or cleanup of the definition holds the sync lock (the next light sync
    publishes what this one would have). Each job is mapped as the full snapshot maps it: the
    store is mapped whole (kept folds loaded, new events added) and the plan kept to what those
    jobs describe (``mapper.light.plan_of_jobs``). A ``batch_size`` that is not a positive
    whole number is a ``ValueError``, before anything."""
    check_batch_size(batch_size)
    started = utcnow()
    running = RunReport(kind="light", definition_uuid=definition.uuid)
    try:
        if isinstance(new := _new_since_last_sync(store, definition), str):
            return _skipped(definition, new)
        with sync_lock(store, definition, "light", ttl=LIGHT_LOCK_TTL):
            # Read again under the lock: a snapshot that ran since the look above moved the
            # cursor on, and what was new before it would be written over what it published.
            if isinstance(new := _new_since_last_sync(store, definition), str):
                return _skipped(definition, new)
            until, jobs = new
            report = _light_locked(
                definition,
                client,
                store,
                jobs,
                until,
                running,
                progress=progress,
                batch_size=batch_size,
            )
    except SyncLockedError as exc:
        return _skipped(definition, str(exc))
    except StoreError as exc:
        report = _failed("light", definition, f"the event store cannot be used: {exc}")
    except Exception as exc:
        report = _stopped(running, exc)
    except BaseException as exc:
        _record_stopped(store, _closed(_stopped(running, exc), started, client, origin))
        raise
    record(store, _closed(report, started, client, origin))
    return report


def _new_since_last_sync(
    store: EventStore, definition: JobDefinition
) -> tuple[int, set[tuple[str, str]]] | str:
    """The store's cursor and the jobs that received events since the last sync, or why a light
    sync has nothing to publish."""
    cursor = light_cursor(store, definition)
    if cursor is None:
        return NO_FULL_SNAPSHOT_YET
    until = store.last_id()
    jobs = store.jobs_since(cursor, until=until) if until > cursor else set()
    if not jobs:
        return "nothing new since the last sync"
    return until, jobs


def _light_locked(
    definition: JobDefinition,
    client: BlindataClient,
    store: EventStore,
    jobs: set[tuple[str, str]],
    until: int,
    running: RunReport,
    *,
    progress: Progress | ProgressCallback | None,
    batch_size: int,
) -> RunReport:
    try:
        known = fetch_known_systems(client)
        mapping_started = time.monotonic()
        touched = Touched(jobs)
        plan = plan_from_store(
            store,
            definition,
            known,
            until=until,
            touched=touched,
            used_for_jobs=_used_for_jobs(store, definition),
        )
        part = plan_of_jobs(plan, touched.named, touched.datasets)
        del plan
        mapping = round(time.monotonic() - mapping_started, 3)
        report = snapshot(
            part,
            client,
            definition,
            progress=progress,
            batch_size=batch_size,
            light=True,
            store_id=store.store_id(),
            report=running,
        )
        report.timings = {"mapping": mapping, **report.timings}
        # named as the catalog names them: a report is logged and pushed to XCom, never with a
        # namespace's password or a ``?token=`` of a job's name
        report.jobs = sorted(
            f"{shown_namespace(namespace)}/{redact_text(name)}" for namespace, name in touched.named
        )
    except BlindataError as exc:
        report = _failed("light", definition, f"Blindata cannot be used: {exc}")
    except StoreError as exc:
        report = _failed("light", definition, f"the event store cannot be read: {exc}")
    report.cursor = until
    return report


def _skipped(definition: JobDefinition, message: str) -> RunReport:
    return RunReport(kind="light", definition_uuid=definition.uuid).finish("skipped", message)


def run_cleanup(
    definition: JobDefinition,
    client: BlindataClient,
    store: SyncLedger,
    *,
    dry_run: bool = False,
    force: bool = False,
    progress: Progress | ProgressCallback | None = None,
    lock_wait: float = LOCK_WAIT,
    origin: RunOrigin | None = None,
) -> RunReport:
    """Cleanup after the last recorded snapshot; the report is recorded.

    It holds the definition's sync lock (a light sync must not write an object between the
    cleanup's judging it stale and removing it), waiting up to ``lock_wait`` seconds. One an
    unexpected error stops is recorded ``failed`` without a ledger, as one the sync lock kept
    waiting is: the next cleanup carries the ledger of the one before."""
    started = utcnow()
    try:
        with sync_lock(store, definition, "cleanup", wait=lock_wait):
            try:
                records = cleanup_history(store, definition.uuid)
                store_id = store.store_id()
            except StoreError as exc:
                report = _failed("cleanup", definition, f"the sync history cannot be read: {exc}")
            else:
                report = cleanup(
                    definition,
                    client,
                    records,
                    dry_run=dry_run,
                    force=force,
                    progress=progress,
                    store_id=store_id,
                )
    except SyncLockedError as exc:
        report = _failed("cleanup", definition, str(exc))
    except Exception as exc:
        report = _stopped(_cleanup_report(definition, dry_run, started), exc)
    except BaseException as exc:
        stopped = _stopped(_cleanup_report(definition, dry_run, started), exc)
        _stamp(stopped, client, origin)
        _record_stopped(store, stopped)
        raise
    _stamp(report, client, origin)
    record(store, report)
    return report


def _cleanup_report(definition: JobDefinition, dry_run: bool, started: datetime) -> RunReport:
    return RunReport(
        kind="cleanup", definition_uuid=definition.uuid, dry_run=dry_run, started_at=started
    )


def cleanup_history(store: SyncLedger, definition_uuid: str) -> list[SyncRecord]:
    """The records a cleanup reads, newest first: the latest ``HISTORY_LIMIT`` snapshots and
    cleanups, with the light syncs since the oldest of them. Read by kind, so that light syncs
    every few minutes never push the last full snapshot or the last cleanup's ledger out of
    the window."""
    records = [
        *store.sync_history(definition_uuid, kind="snapshot", limit=HISTORY_LIMIT),
        *store.sync_history(definition_uuid, kind="cleanup", limit=HISTORY_LIMIT),
    ]
    oldest = min((item.started_at for item in records), default=None)
    records += [
        item
        for item in store.sync_history(definition_uuid, kind="light", limit=HISTORY_LIMIT)
        if oldest is None or item.started_at >= oldest
    ]
    records.sort(key=lambda item: item.started_at, reverse=True)
    return records


def history(
    store: SyncLedger, definition_uuid: str, *, kind: RunKind | None = None, limit: int = 5
) -> list[RunReport]:
    """The latest reports of a definition, newest first (records from elsewhere are skipped)."""
    reports = []
    for item in store.sync_history(definition_uuid, kind=kind, limit=limit):
        try:
            reports.append(RunReport.from_record(item.report))
        except ValueError:
            continue
    return reports
