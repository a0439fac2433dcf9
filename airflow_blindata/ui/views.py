"""What each page shows, read from the store and Airflow, as plain data for the templates.

The store is opened per request and closed after it; one that cannot be opened or read becomes
a message on the page (``UnreadableStoreError``), never a traceback. Everything shown that could
hold a secret goes through ``redaction`` first: the store's URL, the quarantine's reasons. A job
namespace is shown, and put in the page's own links, as the catalog names it
(``identity.shown_namespace``: no credentials), never as a producer sent it: a link's URL reaches
the API server's access log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from airflow_blindata.definition import canonical_uuid
from airflow_blindata.mapper.identity import shown_namespace
from airflow_blindata.mapper.report import ordered_gaps
from airflow_blindata.options import blindata_home, lost_events_file, ui_job_definition
from airflow_blindata.redaction import (
    redact_event_text,
    redact_text,
    redact_url,
    scrub,
    url_secrets,
)
from airflow_blindata.store import (
    EventStore,
    StoreError,
    SyncLedger,
    configured_store_url,
    default_store_url,
    open_store,
    overview,
)
from airflow_blindata.store.sql import SqlEventStore
from airflow_blindata.sync.report import RunOrigin, RunReport

from .access import EVERYTHING, Access
from .links import blindata_url, search_link

__all__ = [
    "Glance",
    "Run",
    "UnreadableDefinitionError",
    "UnreadableStoreError",
    "capture_page",
    "dag_run_path",
    "job_readable",
    "lands_page",
    "lost_events",
    "readable_activity",
    "readable_jobs",
    "record_page",
    "run_page",
    "shown_store_url",
    "summary",
    "syncs_page",
    "task_log_path",
]

log = logging.getLogger(__name__)

LOST_EVENTS_FILE = "lost-events.jsonl"
PAGE_SIZE = 20
EXCERPT = 300
MAX_LANDED = 500
REACHED_LIGHTS = 200
"""Light syncs read back for when a job last reached Blindata (a day of them every 5 minutes is
288; a job not among them reached it by the last snapshot, an hour ago at most)."""
"""Objects of a kind listed for one job; more are counted, not listed."""


ID_MAX = 2**63 - 1
"""The largest id a store holds (a 64-bit integer); a larger one in a URL matches nothing, and a
driver refuses to bind it (SQLite's ``OverflowError``, which is no database error)."""


def _bounded(before: int | None) -> int | None:
    """``before`` as an id the store can compare: past the largest id it means every record."""
    if before is None or before > ID_MAX:
        return None
    return max(before, -ID_MAX)


class UnreadableStoreError(Exception):
    """The store could not be opened or read: the page says so instead of its content."""


class UnreadableDefinitionError(UnreadableStoreError):
    """``[blindata] ui_job_definition`` names a file that cannot be used: *Where it lands* says
    why, as for the store, instead of an Internal Server Error."""


def _store_url() -> str:
    return configured_store_url() or default_store_url()


def shown_store_url() -> str:
    """The store's URL as the page shows it: credentials replaced by ``***``."""
    return redact_url(_store_url())


CLEANED = 64 * 1024
"""Of a quarantined event, what is cleaned before its excerpt is cut from it: enough for a URL or
a secret field that starts in the excerpt to end in it (an event may be megabytes long)."""


def _clean(text: str) -> str:
    """``text`` without the store's password, any URL's credentials or a secret-named field."""
    return scrub(redact_event_text(text), url_secrets(_store_url()))


def excerpt(raw: str) -> str:
    """The start of a quarantined event, cleaned before it is cut: cut first, a secret that
    straddles the cut lost what marks it (``"password": "s3cr``, ``postgres://u:s3cr``)."""
    return _clean(raw[:CLEANED])[:EXCERPT]


@contextmanager
def _store() -> Iterator[SqlEventStore]:
    try:
        store: EventStore = open_store(_store_url(), create=False)
    except StoreError as error:
        raise UnreadableStoreError(_clean(str(error))) from error
    try:
        if not isinstance(store, SqlEventStore):
            raise UnreadableStoreError(
                f"the page reads SQL stores only, not {type(store).__name__}"
            )
        yield store
    except StoreError as error:
        raise UnreadableStoreError(_clean(str(error))) from error
    finally:
        store.close()


@dataclass(frozen=True, slots=True)
class LostEvents:
    path: str
    events: int
    command: str
    problem: str | None = None
    """Why the file cannot be read (a directory, no permission): capture cannot write there
    either, and an event the store refuses is then lost for good."""


def lost_events() -> LostEvents:
    """The lost-events file, how many events wait in it, and the command that ingests them."""
    path = Path(lost_events_file() or blindata_home() / LOST_EVENTS_FILE)
    count = 0
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                count += chunk.count(b"\n")
    except FileNotFoundError:
        count = 0
    except OSError as exc:
        problem = exc.strerror or type(exc).__name__
        return LostEvents(str(path), 0, f"airflow-blindata ingest {path}", problem)
    return LostEvents(str(path), count, f"airflow-blindata ingest {path}")


def _clean_counts(
    counts: Iterable[overview.CaptureCount | overview.JobActivity],
) -> list[overview.CaptureCount]:
    """``counts`` summed by job namespace without credentials and source: spellings that differ
    only in them (a password changed) are one row, as they are one job in the catalog; the
    activity of several jobs (what a user may read) is summed the same way."""
    merged: dict[tuple[str, str], list[int]] = {}
    for count in counts:
        row = merged.setdefault((shown_namespace(count.namespace), count.source), [0, 0])
        row[0] += count.last_day
        row[1] += count.last_week
    return [
        overview.CaptureCount(namespace, source, day, week)
        for (namespace, source), (day, week) in sorted(merged.items())
    ]


def _clean_jobs(jobs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Jobs (namespace, name) as the catalog names them (its namespace without credentials, a
    ``?token=`` in its name hidden: a job's name is free text), once each."""
    return sorted({(shown_namespace(namespace), redact_text(name)) for namespace, name in jobs})


def _stored_names(store: SqlEventStore, name: str) -> list[str]:
    """The names as sent of the job named ``name`` as the page shows it (a ``?token=`` hidden):
    those of the week's jobs that show as it, and ``name`` itself (typed as sent)."""
    shown = redact_text(name)
    recent = {sent for _, sent in overview.recent_jobs(store) if redact_text(sent) == shown}
    return sorted(recent | {name})


@dataclass(frozen=True, slots=True)
class Glance:
    """The page at a glance: the newest event received, and the newest sync."""

    now: datetime
    last_event: overview.LastEvent | None
    last_sync: Run | None


SCANNED_SYNCS = 100
"""Of the newest sync records, how many are looked through for the last one a user may see."""


def _last_sync(store: SqlEventStore, access: Access) -> Run | None:
    if access.admin:
        entry = overview.last_sync(store)
        return _run(entry) if entry is not None else None
    for entry in overview.latest_syncs(store, limit=SCANNED_SYNCS):
        run = _run(entry)
        if access.record(run.origin):
            return run
    return None


def _glance(
    store: SqlEventStore, access: Access, activity: list[overview.JobActivity] | None = None
) -> Glance:
    if access.admin:
        last_event = overview.last_event(store)
    else:
        newest = max(activity or [], key=lambda a: a.last_received, default=None)
        last_event = (
            overview.LastEvent(newest.last_received, newest.source, newest.namespace, newest.name)
            if newest is not None
            else None
        )
    if last_event is not None and last_event.job_namespace is not None:
        # a job as the catalog names it: never with the password a producer put in it
        last_event = replace(
            last_event,
            job_namespace=shown_namespace(last_event.job_namespace),
            job_name=redact_text(last_event.job_name) if last_event.job_name else None,
        )
    return Glance(now=datetime.now(UTC), last_event=last_event, last_sync=_last_sync(store, access))


def readable_activity(store: SqlEventStore, access: Access) -> list[overview.JobActivity]:
    """The week's events by job and source that ``access`` may see: its DAGs' own."""
    return [a for a in overview.job_activity(store) if access.job([a.source], a.name)]


def capture_page(access: Access = EVERYTHING) -> dict[str, Any]:
    with _store() as store:
        if access.admin:
            counts = _clean_counts(overview.capture_counts(store))
            quarantined, latest = overview.quarantine_page(store, limit=PAGE_SIZE)
            glance = _glance(store, access)
        else:
            activity = readable_activity(store, access)
            counts = _clean_counts(activity)
            quarantined, latest = 0, []
            glance = _glance(store, access, activity)
    quarantine = [
        {
            "received_at": event.received_at,
            "source": event.source,
            "reason": _clean(event.reason),
            "raw": excerpt(event.raw),
        }
        for event in latest
    ]
    return {
        "counts": counts,
        "totals": (sum(c.last_day for c in counts), sum(c.last_week for c in counts)),
        "quarantined": quarantined,
        "quarantine": quarantine,
        "lost": lost_events() if access.admin else None,
        "glance": glance,
        "admin": access.admin,
    }


def _report(record: dict[str, Any]) -> RunReport | None:
    try:
        return RunReport.from_record(record)
    except ValueError:
        return None


def summary(report: RunReport) -> dict[str, int]:
    """Objects created and refreshed (the ``…Created`` and ``…Refreshed`` counters), removed by a
    cleanup (``would remove`` in a dry run or a refused one, which removed nothing, as the report
    says it), failed (refused by Blindata, or not written or removed when it could not be
    reached: an outage is no refusal), and gaps, each summed."""
    counters = report.counters
    removed = "would remove" if report.dry_run or report.status == "refused" else "removed"
    return {
        "created": sum(v for k, v in counters.items() if k.endswith("Created")),
        "refreshed": sum(v for k, v in counters.items() if k.endswith("Refreshed")),
        removed: sum(group.count for group in report.removed.values()),
        "failed": sum(group.count for group in report.failures.values()),
        "gaps": sum(gap.count for gap in report.gaps.values()),
    }


def _segment(value: str) -> str:
    return quote(value, safe="")


def dag_run_path(origin: RunOrigin) -> str | None:
    """The Airflow UI's path (after its base path) of the DAG run that ran a sync."""
    if not (origin.dag_id and origin.run_id):
        return None
    return f"/dags/{_segment(origin.dag_id)}/runs/{_segment(origin.run_id)}"


def task_log_path(origin: RunOrigin) -> str | None:
    """The Airflow UI's path of the task instance that ran a sync: it opens on its log."""
    run = dag_run_path(origin)
    if run is None or not origin.task_id:
        return None
    path = f"{run}/tasks/{_segment(origin.task_id)}"
    return f"{path}/mapped/{origin.map_index}" if origin.map_index >= 0 else path


@dataclass(slots=True)
class Run:
    id: int
    kind: str
    status: str
    started_at: Any
    duration: float | None
    report: RunReport | None
    definition_uuid: str = ""
    counters: dict[str, int] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)
    origin: RunOrigin | None = None
    run_path: str | None = None
    log_path: str | None = None
    message: str | None = None
    blindata_url: str | None = None

    @property
    def by_command(self) -> bool:
        return self.origin is not None and self.origin.command is not None


def _run(entry: overview.HistoryEntry) -> Run:
    record = entry.record
    report = _report(record.report)
    origin = report.origin if report else None
    return Run(
        id=entry.id,
        kind=record.kind,
        status=report.status if report else record.status,
        started_at=record.started_at,
        duration=(record.finished_at - record.started_at).total_seconds(),
        report=report,
        definition_uuid=record.definition_uuid,
        counters=dict(sorted(report.counters.items())) if report else {},
        summary=summary(report) if report else {},
        origin=origin,
        run_path=dag_run_path(origin) if origin else None,
        log_path=task_log_path(origin) if origin else None,
        message=_clean(report.message) if report and report.message else None,
        blindata_url=report.blindata_url if report else None,
    )


def syncs_page(
    definition: str | None, before: int | None, access: Access = EVERYTHING
) -> dict[str, Any]:
    """A page of a definition's sync records: every one for an admin, otherwise those run by a
    task of a DAG the user may read (the sync DAG's), never the command's."""
    with _store() as store:
        known = overview.definitions(store)
        chosen = _as_kept(definition) or (known[0].definition_uuid if known else None)
        entries, next_before = (
            overview.history_page(store, chosen, before=_bounded(before), limit=PAGE_SIZE)
            if chosen
            else ([], None)
        )
        activity = None if access.admin else readable_activity(store, access)
        glance = _glance(store, access, activity)
    runs = [run for run in map(_run, entries) if access.record(run.origin)]
    # the gaps of the newest snapshot that mapped: one that failed before (at login, say) has
    # none, which would read as the producers' gaps fixed
    snapshots = [run for run in runs if run.report and run.kind == "snapshot"]
    # a snapshot that failed while it wrote mapped the events first (its gaps are the newest)
    mapped = next((run for run in snapshots if run.report and _mapped(run.report)), None)
    latest = mapped.report if mapped else None
    return {
        "definitions": known,
        "chosen": chosen,
        "runs": runs,
        "next_before": next_before,
        "gaps": ordered_gaps(latest.gaps.values()) if latest else [],
        # the snapshot the gaps are of, when newer ones failed before they read the events
        "gaps_of": mapped if mapped is not None and mapped is not snapshots[0] else None,
        "glance": glance,
        "admin": access.admin,
    }


def _as_kept(definition: str | None) -> str | None:
    """A definition uuid asked for in any spelling, as the history keeps it (lower case)."""
    if not definition:
        return None
    try:
        return canonical_uuid(definition.strip())
    except ValueError:
        return definition  # no definition's: its history is empty, as the page says


def job_readable(access: Access, namespace: str, name: str) -> bool:
    """May ``access`` see the job: the events of one of its DAGs, from Airflow alone?"""
    if access.admin:
        return True
    # the job as the page names it (its namespace without credentials) or as it was sent: the
    # sources of every stored spelling that shows so (a viewer was refused their DAG's job whose
    # namespace held a password, and let in when they typed the password: a probe of the page)
    shown = shown_namespace(namespace)
    with _store() as store:
        # each stored job that shows so, judged by its own name (a review: two names hidden
        # whole, ``eyJ….…``, showed as one, and the typed one's DAG let in the other's)
        jobs = [
            (overview.job_sources(store, spelling, sent), sent)
            for sent in _stored_names(store, name)
            for spelling in overview.job_namespaces(store, sent)
            if shown_namespace(spelling) == shown
        ]
    return bool(jobs) and all(access.job(sources, sent) for sources, sent in jobs)


def readable_jobs(access: Access, jobs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Of ``jobs`` (received this week), those ``access`` may see."""
    if access.admin:
        return jobs
    with _store() as store:
        # by the stored job, its own name judged; keyed as ``jobs`` name them (``_clean_jobs``)
        sources: dict[tuple[str, str], dict[str, set[str]]] = {}
        for a in overview.job_activity(store):
            if a.name is not None:
                job = (shown_namespace(a.namespace), redact_text(a.name))
                sources.setdefault(job, {}).setdefault(a.name, set()).add(a.source)
    return [
        job
        for job in jobs
        if job in sources and all(access.job(came, sent) for sent, came in sources[job].items())
    ]


def record_page(record_id: int) -> dict[str, Any] | None:
    if not -ID_MAX <= record_id <= ID_MAX:
        return None
    with _store() as store:
        entry = overview.history_entry(store, record_id)
    if entry is None:
        return None
    return {"entry": entry, "report": _report(entry.record.report), "run": _run(entry)}


def run_page(dag_id: str, run_id: str) -> list[tuple[str, RunReport]]:
    """The Blindata report of each task of the DAG run, by task: the one it returned (an XCom),
    else the newest the sync history holds of it. A task that failed, or whose cleanup was
    refused, returns none: the tab said no task synced, on the runs it is opened for."""
    found = dict(_returned_reports(dag_id, run_id))
    try:
        with _store() as store:
            recorded = overview.history_of_run(store, run_id)
    except UnreadableStoreError:
        recorded = []  # the returned reports still show; the page says why elsewhere
    for entry in recorded:
        report = _report(entry.record.report)
        origin = report.origin if report else None
        if report is None or origin is None or origin.task_id is None:
            continue
        if (origin.dag_id, origin.run_id) == (dag_id, run_id):
            found.setdefault(origin.task_id, report)  # the newest first
    return sorted(found.items())


def _returned_reports(dag_id: str, run_id: str) -> list[tuple[str, RunReport]]:
    """The Blindata reports among the XComs the DAG run's tasks returned, by task."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    found: list[tuple[str, RunReport]] = []
    with create_session() as session:
        rows = session.scalars(
            select(XComModel)
            .where(
                XComModel.dag_id == dag_id,
                XComModel.run_id == run_id,
                XComModel.key == "return_value",
            )
            .order_by(XComModel.task_id)
        ).all()
        for row in rows:
            value = XComModel.deserialize_value(row)
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    continue
            if isinstance(value, dict) and {"definition_uuid", "kind"} <= value.keys():
                report = _report(value)
                if report is not None:
                    found.append((row.task_id, report))
    return found


def _configured_definition(uuid: str | None) -> Any:
    """The definition of ``[blindata] ui_job_definition``, else the seeds' defaults."""
    from airflow_blindata.definition import JobDefinition, JobDefinitionError

    path = ui_job_definition()
    if path:
        try:
            return JobDefinition.load(path)
        except JobDefinitionError as error:
            raise UnreadableDefinitionError(
                f"[blindata] ui_job_definition: {_clean(str(error))}"
            ) from error
    return JobDefinition(uuid=uuid or "00000000-0000-4000-8000-000000000000")


def _end(end: Any) -> str:
    return f"{end.entity}.{end.field}" if end.field else str(end.entity)


def _last_snapshot(store: SyncLedger, definition_uuid: str | None) -> Any:
    """The newest snapshot of the definition that completed (what it described is known)."""
    if not definition_uuid:
        return None
    for record in store.sync_history(definition_uuid, kind="snapshot", limit=20):
        if record.status in ("success", "partial"):
            return record
    return None


CROSS_JOB_GAPS = frozenset({"UNRESOLVED_ORCHESTRATION_TARGET"})
"""Gaps one job's events cannot judge: whether the job at the other end of an orchestration
flow is catalogued depends on every job the snapshot read. The snapshot's report has them."""


def _parents(events: list[Any]) -> list[tuple[str, str]]:
    """The jobs the ``parent`` run facets of ``events`` name (a task's DAG), sorted."""
    found: set[tuple[str, str]] = set()
    for event in events:
        run = event.get("run") if isinstance(event, dict) else None
        facets = run.get("facets") if isinstance(run, dict) else None
        parent = facets.get("parent") if isinstance(facets, dict) else None
        job = parent.get("job") if isinstance(parent, dict) else None
        if not isinstance(job, dict):
            continue
        job_namespace, job_name = job.get("namespace"), job.get("name")
        if isinstance(job_namespace, str) and isinstance(job_name, str):
            found.add((job_namespace, job_name))
    return sorted(found)


@dataclass(frozen=True, slots=True)
class _Mapping:
    """How *Where it lands* maps: the definition and Blindata's Systems, and where they come
    from (``history``: as the last snapshot recorded them; ``file``: ``ui_job_definition``;
    ``defaults``: the seeds' rules)."""

    definition: Any
    systems: list[Any]
    source: str


def _mapping(last: Any, uuid: str | None) -> _Mapping:
    from airflow_blindata.definition import JobDefinition, JobDefinitionError
    from airflow_blindata.sync.runner import recorded_systems

    report = _report(last.report) if last is not None else None
    if report is not None and report.definition is not None:
        try:
            definition = JobDefinition.from_dict(report.definition)
        except JobDefinitionError:
            log.warning("The sync history holds a job definition that cannot be read again")
        else:
            return _Mapping(definition, recorded_systems(report), "history")
    source = "file" if ui_job_definition() else "defaults"
    return _Mapping(_configured_definition(uuid), [], source)


def _last_reached(
    store: SyncLedger, definition_uuid: str | None, job: tuple[str, str], first: int
) -> tuple[datetime, str] | None:
    """When the job last reached Blindata, and by which sync: the newest light sync that
    published it, or full snapshot that completed after reading any of its events (cursor
    ``first`` on)."""
    if not definition_uuid:
        return None
    found: list[tuple[datetime, str]] = []
    name = f"{job[0]}/{job[1]}"
    for record in store.sync_history(definition_uuid, kind="light", limit=REACHED_LIGHTS):
        if record.status == "success" and name in record.report.get("jobs", ()):
            found.append((record.finished_at, _reached_by("light sync", record.report)))
            break
    for record in store.sync_history(definition_uuid, kind="snapshot", limit=20):
        cursor = record.report.get("cursor")
        if record.status == "success" and (cursor is None or cursor >= first):
            found.append((record.finished_at, _reached_by("snapshot", record.report)))
            break
    return max(found) if found else None


def _mapped(report: RunReport) -> bool:
    """Whether a snapshot read the events (and so found their gaps): one that completed, or
    that failed while it wrote; not one that failed before, at login or reading the store."""
    return report.status in ("success", "partial") or "mapping" in report.timings


def _reached_by(kind: str, report: Mapping[str, Any]) -> str:
    """The sync that reached Blindata, and whether it wrote everything: the store records a
    partial sync (objects Blindata refused, or a phase an outage stopped) as a success."""
    if report.get("status") != "partial":
        return kind
    failures = report.get("failures") or {}
    missed = sum(group.get("count", 0) for group in failures.values() if isinstance(group, dict))
    return f"{kind} that did not write everything ({missed} objects not written: see Syncs)"


def lands_page(
    namespace: str | None, name: str | None, definition: str | None = None
) -> dict[str, Any]:
    """For a chosen job, the objects the last snapshot described from its stored events.

    The last snapshot read the events received before it started: mapped again with the
    definition and the Systems that snapshot recorded, they give what it described (the events
    received since are counted, and mapped only while no snapshot has read any of them: then the
    page shows what the next one sends). The job is mapped with its parent job (a task with its
    DAG), so that the snapshot's judgements that need the parent (the DAG→task link, a task its
    DAG no longer has) are made again; what needs every job (``CROSS_JOB_GAPS``) is left out.
    """
    from airflow_blindata.mapper.build import build
    from airflow_blindata.mapper.scopes import job_scope

    with _store() as store:
        jobs = _clean_jobs(overview.recent_jobs(store))
        known = overview.definitions(store)
        uuids = [summary.definition_uuid for summary in known]
        chosen = definition if definition in uuids else (uuids[0] if uuids else None)
        page: dict[str, Any] = {"jobs": jobs, "job": None, "definitions": uuids, "chosen": chosen}
        if not (namespace and name):
            return page
        namespace = shown_namespace(namespace)  # one typed as sent is shown as the catalog has it
        last = _last_snapshot(store, chosen)
        stored = sorted(
            (
                event
                for sent in _stored_names(store, name)
                for spelling in overview.job_namespaces(store, sent)
                if shown_namespace(spelling) == namespace
                for event in store.events(job=(spelling, sent))
            ),
            key=lambda event: event.id,
        )
        name = redact_text(name)  # shown as the catalog names it
        cutoff = last.started_at if last is not None else None
        parents = [
            event
            for parent in _parents([e.payload for e in stored])
            if (shown_namespace(parent[0]), parent[1]) != (namespace, name)
            for event in store.events(job=parent)
        ]
        reached = _last_reached(store, chosen, (namespace, name), stored[0].id) if stored else None

    def described(events: list[Any]) -> list[Any]:
        return [e.payload for e in events if cutoff is not None and e.received_at <= cutoff]

    read = described(stored)
    since = len(stored) - len(read)
    next_snapshot = not read
    events = [e.payload for e in stored] if next_snapshot else read
    around = [e.payload for e in parents] if next_snapshot else described(parents)
    mapping = _mapping(last, chosen)
    alone = build(events, mapping.definition, mapping.systems)
    together = build(events + around, mapping.definition, mapping.systems)
    label = redact_text(f"{namespace}/{name}")
    retired = next(
        (why.split(": ", 1)[1] for why in together.report.retired if why.startswith(f"{label}: ")),
        None,
    )
    scopes = {job_scope(namespace, name), job_scope(namespace, name, orchestration=True)}
    base = blindata_url()
    entities = [
        {"name": str(e.key), "source": e.source, "link": search_link(base, e.key.name)}
        for e in alone.entities
    ]
    flows = [
        {
            "name": flow.name,
            "from": _end(flow.source),
            "to": _end(flow.target),
            "kind": flow.kind,
            "link": search_link(base, flow.name),
        }
        for flow in together.flows
        if flow.scope in scopes
    ]
    routines = [
        {"name": f"{r.system}:{r.schema_}.{r.name}", "link": search_link(base, r.name)}
        for r in alone.routines
        if r.job in scopes
    ]
    checks = [
        {"name": c.name, "code": c.code, "entity": str(c.entity), "link": search_link(base, c.code)}
        for c in (alone.quality.checks if alone.quality else [])
        if c.job in scopes
    ]
    if retired is not None:
        entities, flows, routines, checks = [], [], [], []
    gaps = [gap for code, gap in alone.report.gaps.items() if code.value not in CROSS_JOB_GAPS]
    # What is left out: this job's orchestration flows whose other end is neither this job nor
    # its parent (mapped together), as the examples of the gaps name them (a few at most).
    crossing = [gap for code, gap in together.report.gaps.items() if code in CROSS_JOB_GAPS]
    left_out = sorted(
        example for gap in crossing for example in gap.examples if example.startswith(f"{label}: ")
    )
    more = any(gap.count > len(gap.examples) for gap in crossing)
    return {
        **page,
        "job": (namespace, name),
        "events": len(events),
        "since": since,
        "snapshot_at": cutoff,
        "next_snapshot": next_snapshot,
        "mapped_with": mapping.source,
        "definition_uuid": mapping.definition.uuid,
        "last_event": max((e.received_at for e in stored), default=None),
        "reached": reached,
        "definition_file": ui_job_definition(),
        "blindata_url": base,
        "retired": retired,
        # as the catalog names them: the namespace a parent facet sent may hold credentials,
        # and its name a ``?token=`` (a probe of the page: shown raw, the rest redacted)
        "parents": _clean_jobs(_parents(events)),
        "counts": {
            "entities": len(entities),
            "flows": len(flows),
            "routines": len(routines),
            "checks": len(checks),
        },
        "entities": entities[:MAX_LANDED],
        "flows": flows[:MAX_LANDED],
        "routines": routines[:MAX_LANDED],
        "checks": checks[:MAX_LANDED],
        "gaps": sorted(gaps, key=lambda g: g.code.value),
        "left_out": left_out if retired is None else [],
        "left_out_more": more and retired is None,
    }
