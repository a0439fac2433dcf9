"""Retention: prune raw events by age without forgetting what a job still describes.

``retain`` removes events older than ``raw_events_days`` (a whole UTC day at a time:
``prune_before``), except each described job's latest description (its latest run and latest
completed run, with their sibling runs, and the JobEvents the mapping still reads) and the runs
that dropped or renamed a dataset (for ``job_described_for_days``), drops the
jobs with nothing newer than ``job_described_for_days``, keeps each dataset's DatasetEvents the
mapping still reads, and prunes the quarantine. Deletions go in batches of ``DELETE_BATCH``, each
a short transaction. ``SqlRetention`` is the store's part that runs it and ``forget_job``.
Why: docs/capture.md#retentions-rules-storeretentionpy
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, case, delete, func, or_, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement

from airflow_blindata.events.core import raw_parent_run_id

from . import core, digests
from .core import SqlCore
from .models import ForgottenJob, RetentionResult
from .schema import Tables, is_dataset_event

__all__ = ["DELETE_BATCH", "SqlRetention", "delete_batched", "prune_before", "retain"]

DELETE_BATCH = 1000

Writing = Callable[[], AbstractContextManager[Connection]]


def delete_batched(
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
                rows: Sequence[Any]
                if conn.dialect.name == "sqlite":
                    # No DELETE ... RETURNING for SQLite on SQLAlchemy 1.4: read the rows, then
                    # delete them by id, in one transaction that holds SQLite's only write lock.
                    found = conn.execute(
                        select(table.c.id, *columns).where(where).limit(DELETE_BATCH)
                    ).all()
                    rows = [row[1:] for row in found]
                    if found:
                        conn.execute(delete(table).where(table.c.id.in_([row[0] for row in found])))
                else:
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
    """The ids of the latest run and of the latest completed run (a run with a COMPLETE event,
    and one whose last event is a COMPLETE), and the ids of the JobEvents of a job the mapping
    still reads (the runs may be None).

    Latest as the mapper orders them (``mapper.fold``): by eventTime, not by arrival, so that a
    run that arrives late (a lost-events file ingested, a producer that sends late) does not
    make retention keep it and prune the newer run the mapper describes the job by. Runs go by
    their last event time, then their first, then their id. A run is completed for the mapper
    when its last event is a COMPLETE, so the latest such run is kept too. The JobEvents are
    those ``_still_read`` keeps."""
    of_job = and_(events.c.job_namespace == namespace, events.c.job_name == name)
    timed = and_(of_job, events.c.event_time.is_not(None))

    def latest(*where: ColumnElement[bool], having: ColumnElement[bool] | None = None) -> Any:
        runs = _runs_latest_first(events, timed, *where)
        if having is not None:
            runs = runs.having(having)
        return conn.execute(runs.limit(1)).scalar()

    completed = select(events.c.run_id).where(of_job, events.c.event_type == "COMPLETE")
    designs = conn.execute(
        select(events.c.id, events.c.event_time, events.c.payload).where(
            timed, events.c.kind == "JobEvent"
        )
    )
    latest_job_events = sorted(_still_read(_job_design(*row) for row in designs))
    # The fold's state of a run is its last event's: a run marked failed after it completed
    # (Airflow's "mark failed" sends FAIL for the same run) is not the job's latest completed
    # run there, the one completed before it is. Both are kept (ties on time count as both).
    ends_completed = func.max(
        case((events.c.event_type == "COMPLETE", events.c.event_time))
    ) == func.max(events.c.event_time)
    latest_runs = [
        latest(),
        latest(events.c.run_id.in_(completed)),
        latest(having=ends_completed),
        _latest_naming_datasets(conn, events, of_job, timed),
    ]
    return of_job, latest_runs, latest_job_events


def _runs_latest_first(
    events: Table, timed: ColumnElement[bool], *where: ColumnElement[bool]
) -> Any:
    """A job's runs (``timed``: its events that have a time), latest first as the mapper ranks
    them: by their last event's time, then their first's, then their id."""
    return (
        select(events.c.run_id)
        .where(timed, events.c.run_id.is_not(None), *where)
        .group_by(events.c.run_id)
        .order_by(
            func.max(events.c.event_time).desc(),
            func.min(events.c.event_time).desc(),
            events.c.run_id.desc(),
        )
    )


NAMING_RUNS_LOOKED_AT = 20
"""How many of a job's latest runs are read for the latest that names a dataset."""


def _latest_naming_datasets(
    conn: Connection, events: Table, of_job: ColumnElement[bool], timed: ColumnElement[bool]
) -> Any:
    """The latest run that names a dataset (``mapper.fold.latest_naming_datasets``), among the
    job's ``NAMING_RUNS_LOOKED_AT`` latest: what a restarted streaming job is described by
    while its new run names none yet. Pruned, the job lost its flows (a review). Most jobs'
    latest run names datasets: its events are the only ones read."""
    recent = conn.execute(_runs_latest_first(events, timed).limit(NAMING_RUNS_LOOKED_AT))
    for run_id in list(recent.scalars()):
        payloads = conn.execute(
            select(events.c.payload).where(of_job, events.c.run_id == run_id)
        ).scalars()
        if any(_datasets(payload) for payload in payloads):
            return run_id
    return None


@dataclass(frozen=True)
class _Design:
    """A design event (a job's JobEvent, a dataset's DatasetEvent): what the fold takes from it."""

    id: int
    time: datetime
    gives: frozenset[Hashable]
    """The facets it sets, each keyed by where it goes (the fold keeps the latest per key)."""
    lists_datasets: bool = False


def _still_read(designs: Iterable[_Design]) -> set[int]:
    """The ids of the designs (of one job, or of one dataset) the mapping still reads
    something from (``mapper.fold``): those of the latest eventTime, those of the latest
    eventTime among the JobEvents that list datasets (the job's declared inputs and outputs),
    and for each facet the designs of the latest eventTime that carry it (the fold keeps the
    latest per facet, a ``_deleted`` one included). A design only later ones supersede in every
    respect can go; ties are all kept (the fold merges them)."""
    designs = list(designs)
    if not designs:
        return set()
    newest = max(design.time for design in designs)
    newest_listing = max((d.time for d in designs if d.lists_datasets), default=None)
    newest_giving: dict[Hashable, datetime] = {}
    for design in designs:
        for key in design.gives:
            if key not in newest_giving or newest_giving[key] < design.time:
                newest_giving[key] = design.time
    return {
        design.id
        for design in designs
        if design.time == newest
        or (design.lists_datasets and design.time == newest_listing)
        or any(newest_giving[key] == design.time for key in design.gives)
    }


def _facet_names(facets: Any) -> list[str]:
    return [str(name) for name in facets] if isinstance(facets, dict) else []


def _job_design(id_: int, time: datetime, payload: str) -> _Design:
    """A stored JobEvent as ``_still_read`` weighs it: its job facets, the facets of the
    datasets it lists, and whether it lists any."""
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return _Design(id_, time, frozenset())
    job = data.get("job")
    gives: set[Hashable] = (
        {("job", name) for name in _facet_names(job.get("facets"))}
        if (isinstance(job, dict))
        else set()
    )
    listed = False
    for side in ("inputs", "outputs"):
        datasets = data.get(side)
        for dataset in datasets if isinstance(datasets, list) else ():
            if isinstance(dataset, dict):
                listed = True
                where = (str(dataset.get("namespace")), str(dataset.get("name")))
                gives.update((where, name) for name in _facet_names(dataset.get("facets")))
    return _Design(id_, time, frozenset(gives), listed)


def _dataset_design(id_: int, time: datetime, payload: str) -> tuple[Hashable, _Design]:
    """A stored DatasetEvent: its dataset (as the fold keys it) and its facets."""
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    dataset = data.get("dataset") if isinstance(data, dict) else None
    if not isinstance(dataset, dict):
        return None, _Design(id_, time, frozenset())
    key = (str(dataset.get("namespace")), str(dataset.get("name")))
    return key, _Design(id_, time, frozenset(_facet_names(dataset.get("facets"))))


def _dataset_events_to_prune(
    conn: Connection, events: Table, raw_cutoff: datetime, dataset_cutoff: datetime
) -> list[int]:
    """The DatasetEvents received before ``raw_cutoff`` that go (rule 3): those of a dataset
    with no DatasetEvent since ``dataset_cutoff``, and those the mapping no longer reads."""
    any_aged = conn.execute(
        select(events.c.id)
        .where(is_dataset_event(events), events.c.received_at < raw_cutoff)
        .limit(1)
    ).first()
    if any_aged is None:  # the usual case: nothing to weigh, no payload read
        return []
    by_dataset: dict[Hashable, list[tuple[_Design, datetime]]] = {}
    rows = conn.execute(
        select(events.c.id, events.c.event_time, events.c.received_at, events.c.payload).where(
            is_dataset_event(events)
        )
    )
    untimed: list[int] = []
    for id_, time, received_at, payload in rows:
        if time is None:  # not read by the mapping in order: goes by age, as before
            if received_at < raw_cutoff:
                untimed.append(id_)
            continue
        key, design = _dataset_design(id_, time, payload)
        by_dataset.setdefault(key, []).append((design, received_at))
    prune = untimed
    for designs in by_dataset.values():
        aged = [design.id for design, received_at in designs if received_at < raw_cutoff]
        if not aged:
            continue
        if max(received_at for _, received_at in designs) < dataset_cutoff:
            prune.extend(aged)
            continue
        kept = _still_read(design for design, _ in designs)
        prune.extend(id_ for id_ in aged if id_ not in kept)
    return sorted(prune)


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


def _ending_runs(
    conn: Connection,
    events: Table,
    of_job: ColumnElement[bool],
    cutoff: datetime,
    since: datetime,
    kept: set[str],
) -> set[str]:
    """The runs received before ``cutoff`` and since ``since`` that end a dataset's name: the
    latest ``lifecycleStateChange`` ``DROP`` of a dataset, or ``RENAME`` away from a name, among
    them, unless a run kept anyway (``kept``, the job's latest description) names it again.
    Such a run is seldom its job's latest, yet the table it dropped stays gone only while it is
    kept: pruned, the older run of another job that wrote the table (kept as that job's latest
    description) would describe it again. Kept for ``job_described_for_days`` after its
    arrival, which outlasts every description received before it (a job with nothing newer is
    dropped by then). A job that drops and creates its staging table at every run keeps none."""
    rows = conn.execute(
        select(events.c.run_id, events.c.event_time, events.c.payload).where(
            of_job,
            events.c.received_at < cutoff,
            events.c.received_at >= since,
            events.c.run_id.is_not(None),
            events.c.payload.contains("lifecycleStateChange", autoescape=True),  # seldom there
        )
    )
    latest: dict[tuple[str, str], tuple[datetime, str]] = {}
    for run_id, time, payload in rows:
        when = time or _NO_TIME  # a time it could not read: the oldest
        for ended in _ended(payload):
            if run_id not in kept and (ended not in latest or latest[ended][0] < when):
                latest[ended] = (when, run_id)
    if not latest:
        return set()
    # named again after it by a run kept anyway: the latest mention is no longer the DROP
    again: dict[tuple[str, str], datetime] = {}
    named = conn.execute(
        select(events.c.event_time, events.c.payload).where(
            of_job, events.c.run_id.in_(sorted(kept))
        )
    )
    for time, payload in named:
        for name in _named(payload):
            again[name] = max(again.get(name, _NO_TIME), time or _NO_TIME)
    return {
        run_id for ended, (time, run_id) in latest.items() if again.get(ended, _NO_TIME) <= time
    }


_NO_TIME = datetime.min.replace(tzinfo=UTC)


def _datasets(payload: str | None) -> list[dict[str, Any]]:
    """The datasets a stored RunEvent lists, inputs and outputs."""
    try:
        data = json.loads(payload) if payload else None
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    found: list[dict[str, Any]] = []
    for side in ("inputs", "outputs"):
        datasets = data.get(side)
        found += [
            d for d in (datasets if isinstance(datasets, list) else ()) if isinstance(d, dict)
        ]
    return found


def _named(payload: str | None) -> list[tuple[str, str]]:
    return [(str(d.get("namespace")), str(d.get("name"))) for d in _datasets(payload)]


def _ended(payload: str | None) -> list[tuple[str, str]]:
    """The names a stored RunEvent ends: a dataset it drops, the previous name of one it
    renames."""
    ended: list[tuple[str, str]] = []
    for dataset in _datasets(payload):
        facets = dataset.get("facets")
        facet = facets.get("lifecycleStateChange") if isinstance(facets, dict) else None
        state = facet.get("lifecycleStateChange") if isinstance(facet, dict) else None
        state = state.strip().upper() if isinstance(state, str) else None
        if state == "DROP":
            ended.append((str(dataset.get("namespace")), str(dataset.get("name"))))
        elif state == "RENAME" and isinstance(facet, dict):
            previous = facet.get("previousIdentifier")
            if isinstance(previous, dict):
                ended.append((str(previous.get("namespace")), str(previous.get("name"))))
    return ended


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
    """Apply the four rules of the module docstring; see ``EventStore.retain``."""
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
        removed += delete_batched(
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
        with engine.connect() as conn:
            runs.update(_ending_runs(conn, events, of_job, raw_cutoff, job_cutoff, runs))
        if runs:
            keep.append(or_(events.c.run_id.is_(None), events.c.run_id.not_in(sorted(runs))))
        if latest_job_events:
            keep.append(events.c.id.not_in(latest_job_events))
        removed += delete_batched(
            writing, events, and_(of_job, events.c.received_at < raw_cutoff, *keep), tables
        )
    with engine.connect() as conn:
        designs = _dataset_events_to_prune(conn, events, raw_cutoff, job_cutoff)
    for start in range(0, len(designs), DELETE_BATCH):
        removed += delete_batched(
            writing, events, events.c.id.in_(designs[start : start + DELETE_BATCH])
        )
    removed += delete_batched(
        writing,
        events,
        and_(
            events.c.job_name.is_(None),
            ~is_dataset_event(events),
            events.c.received_at < raw_cutoff,
        ),
    )
    quarantine_removed = delete_batched(
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


class SqlRetention(SqlCore):
    """Pruning the store by age (``retain``) and forgetting one job (``forget_job``)."""

    def retain(
        self, *, raw_events_days: int, job_described_for_days: int, now: datetime | None = None
    ) -> RetentionResult:
        if raw_events_days < 0 or job_described_for_days < 0:
            raise ValueError("retention days must not be negative")
        self._ensure_schema()
        with self._guard("pruning events"):
            return retain(
                self._engine,
                self._writing,
                self._tables,
                raw_events_days=raw_events_days,
                job_described_for_days=job_described_for_days,
                now=now or core.now(),
            )

    def forget_job(self, namespace: str, name: str, *, dry_run: bool = True) -> ForgottenJob:
        self._ensure_schema()
        ev = self._tables.events
        of_job = and_(*self._of_job((namespace, name)))
        with self._guard("reading a job"), self._reading() as conn:
            events, runs, first, last = conn.execute(
                select(
                    func.count(),
                    func.count(ev.c.run_id.distinct()),
                    func.min(ev.c.received_at),
                    func.max(ev.c.received_at),
                ).where(of_job)
            ).one()
        received = ev.c.received_at.type.process_result_value  # type: ignore[attr-defined]
        found = ForgottenJob(
            namespace=namespace,
            name=name,
            events=int(events or 0),
            runs=int(runs or 0),
            first_received=received(first, self._engine.dialect) if first is not None else None,
            last_received=received(last, self._engine.dialect) if last is not None else None,
        )
        if dry_run or not found.events:
            return found
        with self._guard("forgetting a job"):
            removed = delete_batched(self._writing, ev, of_job, self._tables)
        return ForgottenJob(
            namespace=namespace,
            name=name,
            events=removed,
            runs=found.runs,
            first_received=found.first_received,
            last_received=found.last_received,
            removed=True,
        )
