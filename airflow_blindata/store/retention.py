"""Retention: prune raw events by age without forgetting what a job still describes.

Three rules, with ages counted from when the store received an event:

1. A job with no event newer than ``job_described_for_days`` is no longer described: all its
   events go, however recent the raw-event rule would consider them.
2. A job still described loses its events older than ``raw_events_days``, except its latest
   description: every event of its latest run and of its latest completed run (each with the
   runs of the same parent run: the instances of a mapped task) and its latest JobEvent. The
   mapping describes a job by its latest completed run (its flows, orchestration and checks,
   ``JobFold.latest_completed_group``), so a run that started since, or failed, does not make
   retention prune the completed one. The next snapshot can therefore always rebuild every
   described job, even one that ran once, months ago.
3. Events without a job (DatasetEvents) and quarantined events go after ``raw_events_days``.

Raw events go a whole day at a time (``prune_before``): those received on a UTC day go once that
day is more than ``raw_events_days`` behind, so an event stays between ``raw_events_days`` and a
day more. Pruning a job's old runs makes the next snapshot read it whole (its kept fold held
them); pruned by the hour, a deployment that syncs hourly would read every job's whole history at
every snapshot, pruned by the day, at the first snapshot of each day only.

Deletions run in batches of ``DELETE_BATCH`` rows, each its own short transaction, so that a big
prune never holds the SQLite write lock long enough to make a capturing task wait.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Table, and_, delete, func, or_, select
from sqlalchemy.engine import Connection, Engine

from airflow_blindata.events.core import raw_parent_run_id

from . import digests
from .models import RetentionResult
from .schema import Tables

__all__ = ["DELETE_BATCH", "prune_before", "retain"]

DELETE_BATCH = 1000

Writing = Callable[[], AbstractContextManager[Connection]]


def _delete_batched(
    writing: Writing, table: Table, where: ColumnElement[bool], events: Tables | None = None
) -> int:
    """Delete the rows ``where`` selects, a batch per transaction; the number removed.

    ``events``: the rows are events, taken out of the job digests in the same transaction.
    """
    removed = 0
    while True:
        batch = select(table.c.id).where(where).limit(DELETE_BATCH).scalar_subquery()
        statement = delete(table).where(table.c.id.in_(batch))
        with writing() as conn:
            if events is None:
                count = conn.execute(statement).rowcount
            else:
                columns = (table.c.job_namespace, table.c.job_name, events.cursor)
                rows = conn.execute(statement.returning(*columns)).all()
                if rows:
                    digests.subtract(conn, events, rows)
                count = len(rows)
        removed += count
        if count < DELETE_BATCH:
            return removed


def prune_before(now: datetime, days: int) -> datetime:
    """The start of the UTC day ``days`` before ``now``'s: raw events received before it go."""
    day = (now.astimezone(UTC) - timedelta(days=days)).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _latest_description(conn: Connection, events: Table, namespace: str, name: str) -> Any:
    """The ids of the latest run and of the latest completed run (a run with a COMPLETE event),
    and the ids of the latest JobEvents of a job (the runs may be None).

    Latest as the mapper orders them (``mapper.fold``): by eventTime, not by arrival, so that a
    run that arrives late (a lost-events file ingested, a producer that sends late) does not
    make retention keep it and prune the newer run the mapper describes the job by. Runs go by
    their last event time, then their first, then their id; the JobEvents of the latest
    eventTime are all kept (the mapper merges the designs tied on it)."""
    of_job = and_(events.c.job_namespace == namespace, events.c.job_name == name)
    timed = and_(of_job, events.c.event_time.is_not(None))

    def latest(*where: ColumnElement[bool]) -> Any:
        return conn.execute(
            select(events.c.run_id)
            .where(timed, events.c.run_id.is_not(None), *where)
            .group_by(events.c.run_id)
            .order_by(
                func.max(events.c.event_time).desc(),
                func.min(events.c.event_time).desc(),
                events.c.run_id.desc(),
            )
            .limit(1)
        ).scalar()

    completed = select(events.c.run_id).where(of_job, events.c.event_type == "COMPLETE")
    newest_design = conn.execute(
        select(func.max(events.c.event_time)).where(timed, events.c.kind == "JobEvent")
    ).scalar()
    latest_job_events = (
        []
        if newest_design is None
        else list(
            conn.execute(
                select(events.c.id).where(
                    timed, events.c.kind == "JobEvent", events.c.event_time == newest_design
                )
            ).scalars()
        )
    )
    return of_job, [latest(), latest(events.c.run_id.in_(completed))], latest_job_events


def _latest_runs(
    conn: Connection, events: Table, of_job: ColumnElement[bool], latest: str, cutoff: datetime
) -> list[str]:
    """The latest run of a job, and the runs of the same parent run among its events received
    before ``cutoff``: the instances of a mapped task, which together describe the job (its
    latest completed group, ``mapper.fold``), so that pruning leaves all of them."""
    payload = conn.execute(
        select(events.c.payload)
        .where(of_job, events.c.run_id == latest)
        .order_by(events.c.id.desc())
        .limit(1)
    ).scalar()
    parent = _parent_of(payload)
    if parent is None:
        return [latest]
    found = {latest}
    candidates = conn.execute(
        select(events.c.run_id, events.c.payload).where(
            of_job,
            events.c.received_at < cutoff,
            events.c.run_id.is_not(None),
            events.c.run_id != latest,
            events.c.payload.contains(parent, autoescape=True),  # most runs are not of it
        )
    )
    for run_id, text in candidates:
        if run_id not in found and _parent_of(text) == parent:
            found.add(run_id)
    return sorted(found)


def _parent_of(payload: str | None) -> str | None:
    """The parent run id of a stored RunEvent (``events.raw_parent_run_id``)."""
    try:
        data = json.loads(payload) if payload else None
    except ValueError:
        return None
    run = data.get("run") if isinstance(data, dict) else None
    return raw_parent_run_id(run.get("facets")) if isinstance(run, dict) else None


def retain(
    engine: Engine,
    writing: Writing,
    tables: Tables,
    *,
    raw_events_days: int,
    job_described_for_days: int,
    now: datetime,
) -> RetentionResult:
    """Apply the three rules of the module docstring; see ``EventStore.retain``."""
    events = tables.events
    raw_cutoff = prune_before(now, raw_events_days)
    job_cutoff = now - timedelta(days=job_described_for_days)
    with engine.connect() as conn:
        newest = conn.execute(
            select(events.c.job_namespace, events.c.job_name, func.max(events.c.received_at))
            .where(events.c.job_name.is_not(None))
            .group_by(events.c.job_namespace, events.c.job_name)
        ).all()
    received = events.c.received_at.type.process_result_value  # type: ignore[attr-defined]
    stale = [
        (namespace, name)
        for namespace, name, last in newest
        if received(last, engine.dialect) < job_cutoff
    ]
    removed = 0
    for namespace, name in stale:
        removed += _delete_batched(
            writing,
            events,
            and_(events.c.job_namespace == namespace, events.c.job_name == name),
            tables,
        )
    with engine.connect() as conn:
        aged_jobs = conn.execute(
            select(events.c.job_namespace, events.c.job_name)
            .where(events.c.received_at < raw_cutoff, events.c.job_name.is_not(None))
            .distinct()
        ).all()
    for namespace, name in aged_jobs:
        with engine.connect() as conn:
            of_job, latest_runs, latest_job_events = _latest_description(
                conn, events, namespace, name
            )
        keep: list[ColumnElement[bool]] = []
        runs: set[str] = set()
        for latest in dict.fromkeys(run for run in latest_runs if run is not None):
            with engine.connect() as conn:
                runs.update(_latest_runs(conn, events, of_job, latest, raw_cutoff))
        if runs:
            keep.append(or_(events.c.run_id.is_(None), events.c.run_id.not_in(sorted(runs))))
        if latest_job_events:
            keep.append(events.c.id.not_in(latest_job_events))
        removed += _delete_batched(
            writing, events, and_(of_job, events.c.received_at < raw_cutoff, *keep), tables
        )
    removed += _delete_batched(
        writing, events, and_(events.c.job_name.is_(None), events.c.received_at < raw_cutoff)
    )
    quarantine_removed = _delete_batched(
        writing, tables.quarantine, tables.quarantine.c.received_at < raw_cutoff
    )
    with engine.connect() as conn:
        kept = conn.execute(
            select(func.count()).select_from(events).where(events.c.received_at < raw_cutoff)
        ).scalar()
    return RetentionResult(
        events_removed=removed,
        jobs_dropped=len(stale),
        events_kept_for_described_jobs=int(kept or 0),
        quarantine_removed=quarantine_removed,
    )
