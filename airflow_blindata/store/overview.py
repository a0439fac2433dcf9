"""What the Blindata page in the Airflow UI reads: counts over recent events and pages of history.

Every query here is bounded by an index, so that the page stays fast however large the store
grows: recent counts range over ``received_at`` (``events_received_idx``), the quarantine and
the history are read newest first by primary key, a page at a time (keyset on ``id``), and the
definitions are grouped on ``sync_history_def_idx``. Nothing scans the whole events table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select

from .appends import quarantined_event
from .core import SqlCore
from .history import sync_record
from .models import QuarantinedEvent, SyncRecord

__all__ = [
    "CaptureCount",
    "DefinitionSummary",
    "HistoryEntry",
    "JobActivity",
    "LastEvent",
    "capture_counts",
    "definitions",
    "history_entry",
    "history_page",
    "job_activity",
    "job_namespaces",
    "job_sources",
    "last_event",
    "last_sync",
    "latest_syncs",
    "quarantine_page",
    "recent_jobs",
]

DAY = timedelta(days=1)
WEEK = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class CaptureCount:
    """Events received from one source for one job namespace, over the last day and week."""

    namespace: str
    source: str
    last_day: int
    last_week: int


@dataclass(frozen=True, slots=True)
class DefinitionSummary:
    """A job definition the sync history knows, with its number of records."""

    definition_uuid: str
    records: int
    latest_id: int


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One record of the sync history with its id (the key pages are read by)."""

    id: int
    record: SyncRecord


def _now(now: datetime | None) -> datetime:
    return now or datetime.now(UTC)


def capture_counts(store: SqlCore, *, now: datetime | None = None) -> list[CaptureCount]:
    """Events by job namespace and source received in the last week, and in the last day."""
    store._ensure_schema()
    ev = store._tables.events
    moment = _now(now)
    namespace = func.coalesce(ev.c.job_namespace, "(dataset events)")
    query = (
        select(
            namespace,
            ev.c.source,
            func.sum(case((ev.c.received_at > moment - DAY, 1), else_=0)),
            func.count(),
        )
        .where(ev.c.received_at > moment - WEEK)
        .group_by(namespace, ev.c.source)
        .order_by(namespace, ev.c.source)
    )
    with store._guard("counting recent events"), store._reading() as conn:
        rows = conn.execute(query).all()
    return [CaptureCount(str(r[0]), str(r[1]), int(r[2] or 0), int(r[3])) for r in rows]


def recent_jobs(
    store: SqlCore, *, now: datetime | None = None, limit: int = 200
) -> list[tuple[str, str]]:
    """Jobs with events received in the last week (at most ``limit``), sorted."""
    store._ensure_schema()
    ev = store._tables.events
    query = (
        select(ev.c.job_namespace, ev.c.job_name)
        .where(ev.c.received_at > _now(now) - WEEK, ev.c.job_name.is_not(None))
        .distinct()
        .order_by(ev.c.job_namespace, ev.c.job_name)
        .limit(limit)
    )
    with store._guard("listing recent jobs"), store._reading() as conn:
        return [(str(r[0]), str(r[1])) for r in conn.execute(query)]


def job_namespaces(store: SqlCore, name: str) -> list[str]:
    """The namespaces stored for jobs named ``name``, as they were sent, sorted: the page finds
    a job by its namespace without credentials, and reads the events of every spelling of it."""
    store._ensure_schema()
    ev = store._tables.events
    query = (
        select(ev.c.job_namespace)
        .where(ev.c.job_name == name, ev.c.job_namespace.is_not(None))
        .distinct()
        .order_by(ev.c.job_namespace)
    )
    with store._guard("listing a job's namespaces"), store._reading() as conn:
        return [str(r[0]) for r in conn.execute(query)]


def quarantine_page(store: SqlCore, *, limit: int = 20) -> tuple[int, list[QuarantinedEvent]]:
    """How many events are quarantined, and the newest ``limit`` of them."""
    store._ensure_schema()
    table = store._tables.quarantine
    with store._guard("reading the quarantine"), store._reading() as conn:
        total = conn.execute(select(func.count()).select_from(table)).scalar()
        rows = conn.execute(select(table).order_by(table.c.id.desc()).limit(limit)).all()
    return int(total or 0), [quarantined_event(row) for row in rows]


def definitions(store: SqlCore) -> list[DefinitionSummary]:
    """Every job definition in the sync history, the most recently synced first."""
    store._ensure_schema()
    history = store._tables.sync_history
    query = (
        select(history.c.definition_uuid, func.count(), func.max(history.c.id))
        .group_by(history.c.definition_uuid)
        .order_by(func.max(history.c.id).desc())
    )
    with store._guard("listing job definitions"), store._reading() as conn:
        rows = conn.execute(query).all()
    return [DefinitionSummary(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _entry(row: Any) -> HistoryEntry:
    try:
        report = json.loads(row.report)
    except ValueError:
        report = {}
    return HistoryEntry(
        id=int(row.id),
        record=sync_record(row, report if isinstance(report, dict) else {}),
    )


def history_page(
    store: SqlCore,
    definition_uuid: str,
    *,
    before: int | None = None,
    limit: int = 20,
) -> tuple[list[HistoryEntry], int | None]:
    """A page of ``definition_uuid``'s records, newest first, with ids below ``before``; and the
    ``before`` of the next page (None on the last)."""
    store._ensure_schema()
    history = store._tables.sync_history
    query = select(history).where(history.c.definition_uuid == definition_uuid)
    if before is not None:
        query = query.where(history.c.id < before)
    query = query.order_by(history.c.id.desc()).limit(limit + 1)
    with store._guard("reading the sync history"), store._reading() as conn:
        rows = conn.execute(query).all()
    entries = [_entry(row) for row in rows[:limit]]
    return entries, (entries[-1].id if len(rows) > limit else None)


def history_entry(store: SqlCore, record_id: int) -> HistoryEntry | None:
    """One record of the sync history by id."""
    store._ensure_schema()
    history = store._tables.sync_history
    with store._guard("reading the sync history"), store._reading() as conn:
        row = conn.execute(select(history).where(history.c.id == record_id)).first()
    return _entry(row) if row is not None else None


def history_of_run(store: SqlCore, run_id: str, *, limit: int = 50) -> list[HistoryEntry]:
    """The newest records whose report names ``run_id`` (an Airflow DAG run's id, in its
    origin), newest first: what a DAG run's tasks synced, failed runs included (they return no
    XCom). The history has no column for it: the report's text is searched, and the caller
    checks the origin it parses."""
    store._ensure_schema()
    history = store._tables.sync_history
    query = (
        select(history)
        .where(history.c.report.contains(json.dumps(run_id, ensure_ascii=False), autoescape=True))
        .order_by(history.c.id.desc())
        .limit(limit)
    )
    with store._guard("reading the sync history"), store._reading() as conn:
        rows = conn.execute(query).all()
    return [_entry(row) for row in rows]


@dataclass(frozen=True, slots=True)
class LastEvent:
    """The newest event the store received: when, from which source, of which job."""

    received_at: datetime
    source: str
    job_namespace: str | None
    job_name: str | None


def last_event(store: SqlCore) -> LastEvent | None:
    """The newest event received (one row off ``events_received_idx``), or None."""
    store._ensure_schema()
    ev = store._tables.events
    query = (
        select(ev.c.received_at, ev.c.source, ev.c.job_namespace, ev.c.job_name)
        .order_by(ev.c.received_at.desc())
        .limit(1)
    )
    with store._guard("reading the last event"), store._reading() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    received = row[0] if row[0].tzinfo else row[0].replace(tzinfo=UTC)
    return LastEvent(received, str(row[1]), row[2], row[3])


def latest_syncs(store: SqlCore, *, limit: int = 20) -> list[HistoryEntry]:
    """The newest ``limit`` records of the sync history, whatever their definition."""
    store._ensure_schema()
    history = store._tables.sync_history
    with store._guard("reading the sync history"), store._reading() as conn:
        rows = conn.execute(select(history).order_by(history.c.id.desc()).limit(limit)).all()
    return [_entry(row) for row in rows]


def last_sync(store: SqlCore) -> HistoryEntry | None:
    """The newest record of the sync history, whatever its definition (by primary key)."""
    newest = latest_syncs(store, limit=1)
    return newest[0] if newest else None


@dataclass(frozen=True, slots=True)
class JobActivity:
    """Events received for one job from one source over the last week, and in the last day."""

    namespace: str
    name: str | None
    source: str
    last_day: int
    last_week: int
    last_received: datetime


def job_activity(store: SqlCore, *, now: datetime | None = None) -> list[JobActivity]:
    """Events by job and source received in the last week (the range of ``received_at``): what
    the page shows a user who may read some DAGs only, summed over the jobs of those DAGs."""
    store._ensure_schema()
    ev = store._tables.events
    moment = _now(now)
    namespace = func.coalesce(ev.c.job_namespace, "(dataset events)")
    query = (
        select(
            namespace,
            ev.c.job_name,
            ev.c.source,
            func.sum(case((ev.c.received_at > moment - DAY, 1), else_=0)),
            func.count(),
            func.max(ev.c.received_at),
        )
        .where(ev.c.received_at > moment - WEEK)
        .group_by(namespace, ev.c.job_name, ev.c.source)
        .order_by(namespace, ev.c.job_name, ev.c.source)
    )
    with store._guard("counting recent events by job"), store._reading() as conn:
        rows = conn.execute(query).all()
    return [
        JobActivity(
            str(r[0]),
            r[1],
            str(r[2]),
            int(r[3] or 0),
            int(r[4]),
            r[5] if r[5].tzinfo else r[5].replace(tzinfo=UTC),
        )
        for r in rows
    ]


def job_sources(store: SqlCore, namespace: str, name: str) -> set[str]:
    """The sources the events of one job came from (on the events' job index)."""
    store._ensure_schema()
    ev = store._tables.events
    query = (
        select(ev.c.source).where(ev.c.job_namespace == namespace, ev.c.job_name == name).distinct()
    )
    with store._guard("reading a job's sources"), store._reading() as conn:
        return {str(row[0]) for row in conn.execute(query)}
