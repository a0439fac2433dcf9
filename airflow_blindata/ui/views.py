"""What each page shows, read from the store and Airflow, as plain data for the templates.

The store is opened per request and closed after it; one that cannot be opened or read becomes
a message on the page (``UnreadableStoreError``), never a traceback. Everything shown that could
hold a secret goes through ``redaction`` first: the store's URL, the quarantine's reasons.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow_blindata.options import blindata_home, lost_events_file, ui_job_definition
from airflow_blindata.redaction import redact_text, redact_url, scrub, url_secrets
from airflow_blindata.store import (
    EventStore,
    StoreError,
    configured_store_url,
    default_store_url,
    open_store,
    overview,
)
from airflow_blindata.store.sql import SqlEventStore
from airflow_blindata.sync.report import RunReport

from .links import blindata_url, search_link

__all__ = [
    "UnreadableDefinitionError",
    "UnreadableStoreError",
    "capture_page",
    "lands_page",
    "lost_events",
    "run_page",
    "shown_store_url",
    "syncs_page",
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

# The value runs to its closing quote, past escaped ones (``"pa\"ss"``), or to the text's end
# (an event cut short, or an excerpt).
_SECRET_FIELD = re.compile(
    r'("[^"]*(?:password|secret|token|api_?key|authorization|credential)[^"]*"\s*:\s*)'
    r'"(?:[^"\\]|\\.)*\\?(?:"|$)',
    re.IGNORECASE | re.DOTALL,
)


def _clean(text: str) -> str:
    """``text`` without the store's password, any URL's credentials or a secret-named field."""
    text = redact_text(text)  # every URL's credentials, in time linear in the text
    text = _SECRET_FIELD.sub(lambda match: f'{match.group(1)}"***"', text)
    return scrub(text, url_secrets(_store_url()))


def excerpt(raw: str) -> str:
    """The start of a quarantined event, cleaned before it is cut: cut first, a secret that
    straddles the cut lost what marks it (``"password": "s3cr``, ``postgres://u:s3cr``)."""
    return _clean(raw[:CLEANED])[:EXCERPT]


@contextmanager
def _store() -> Iterator[SqlEventStore]:
    try:
        store: EventStore = open_store(_store_url())
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


def lost_events() -> LostEvents:
    """The lost-events file, how many events wait in it, and the command that ingests them."""
    path = Path(lost_events_file() or blindata_home() / LOST_EVENTS_FILE)
    count = 0
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                count += chunk.count(b"\n")
    except OSError:
        count = 0
    return LostEvents(str(path), count, f"airflow-blindata ingest {path}")


def capture_page() -> dict[str, Any]:
    with _store() as store:
        counts = overview.capture_counts(store)
        quarantined, latest = overview.quarantine_page(store, limit=PAGE_SIZE)
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
        "lost": lost_events(),
    }


def _report(record: dict[str, Any]) -> RunReport | None:
    try:
        return RunReport.from_record(record)
    except ValueError:
        return None


@dataclass(slots=True)
class Run:
    id: int
    kind: str
    status: str
    started_at: Any
    duration: float | None
    report: RunReport | None
    counters: dict[str, int] = field(default_factory=dict)


def syncs_page(definition: str | None, before: int | None) -> dict[str, Any]:
    with _store() as store:
        known = overview.definitions(store)
        chosen = definition or (known[0].definition_uuid if known else None)
        entries, next_before = (
            overview.history_page(store, chosen, before=_bounded(before), limit=PAGE_SIZE)
            if chosen
            else ([], None)
        )
    runs = []
    for entry in entries:
        report = _report(entry.record.report)
        record = entry.record
        runs.append(
            Run(
                id=entry.id,
                kind=record.kind,
                status=report.status if report else record.status,
                started_at=record.started_at,
                duration=(record.finished_at - record.started_at).total_seconds(),
                report=report,
                counters=dict(sorted(report.counters.items())) if report else {},
            )
        )
    latest = next((run.report for run in runs if run.report and run.kind == "snapshot"), None)
    return {
        "definitions": known,
        "chosen": chosen,
        "runs": runs,
        "next_before": next_before,
        "gaps": sorted(latest.gaps.values(), key=lambda g: g.code.value) if latest else [],
    }


def record_page(record_id: int) -> dict[str, Any] | None:
    if not -ID_MAX <= record_id <= ID_MAX:
        return None
    with _store() as store:
        entry = overview.history_entry(store, record_id)
    if entry is None:
        return None
    return {"entry": entry, "report": _report(entry.record.report)}


def run_page(dag_id: str, run_id: str) -> list[tuple[str, RunReport]]:
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


def _definition(uuid: str | None) -> Any:
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


def _last_snapshot(store: SqlEventStore, definition_uuid: str | None) -> Any:
    """The newest snapshot of the definition that completed (what it described is known)."""
    if not definition_uuid:
        return None
    for record in store.sync_history(definition_uuid, kind="snapshot", limit=20):
        if record.status in ("success", "partial"):
            return record
    return None


def _last_reached(
    store: SqlEventStore, definition_uuid: str | None, job: tuple[str, str], first: int
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
            found.append((record.finished_at, "light sync"))
            break
    for record in store.sync_history(definition_uuid, kind="snapshot", limit=20):
        cursor = record.report.get("cursor")
        if record.status == "success" and (cursor is None or cursor >= first):
            found.append((record.finished_at, "snapshot"))
            break
    return max(found) if found else None


def lands_page(namespace: str | None, name: str | None) -> dict[str, Any]:
    """For a chosen job, the objects the last snapshot described from its stored events.

    The last snapshot read the events received before it started: mapped again with the same
    definition, they give what it described (the events received since are counted, and mapped
    only while no snapshot has read any of them: then the page shows what the next one sends).
    """
    from airflow_blindata.mapper.build import build

    with _store() as store:
        jobs = overview.recent_jobs(store)
        known = overview.definitions(store)
        if not (namespace and name):
            return {"jobs": jobs, "job": None}
        last = _last_snapshot(store, known[0].definition_uuid if known else None)
        stored = list(store.events(job=(namespace, name)))
        reached = (
            _last_reached(
                store, known[0].definition_uuid if known else None, (namespace, name), stored[0].id
            )
            if stored
            else None
        )
    cutoff = last.started_at if last is not None else None
    read = [e.payload for e in stored if cutoff is not None and e.received_at <= cutoff]
    since = len(stored) - len(read)
    next_snapshot = not read
    events = [e.payload for e in stored] if next_snapshot else read
    definition = _definition(known[0].definition_uuid if known else None)
    plan = build(events, definition)
    base = blindata_url()
    entities = [
        {"name": str(e.key), "source": e.source, "link": search_link(base, e.key.name)}
        for e in plan.entities[:MAX_LANDED]
    ]
    flows = [
        {
            "name": flow.name,
            "from": _end(flow.source),
            "to": _end(flow.target),
            "kind": flow.kind,
            "link": search_link(base, flow.name),
        }
        for flow in plan.flows[:MAX_LANDED]
    ]
    routines = [
        {"name": f"{r.system}:{r.schema_}.{r.name}", "link": search_link(base, r.name)}
        for r in plan.routines[:MAX_LANDED]
    ]
    checks = [
        {"name": c.name, "code": c.code, "entity": str(c.entity), "link": search_link(base, c.code)}
        for c in (plan.quality.checks if plan.quality else [])[:MAX_LANDED]
    ]
    return {
        "jobs": jobs,
        "job": (namespace, name),
        "events": len(events),
        "since": since,
        "snapshot_at": cutoff,
        "next_snapshot": next_snapshot,
        "last_event": max((e.received_at for e in stored), default=None),
        "reached": reached,
        "definition_file": ui_job_definition(),
        "blindata_url": base,
        "counts": {
            "entities": len(plan.entities),
            "flows": len(plan.flows),
            "routines": len(plan.routines),
            "checks": len(checks),
        },
        "entities": entities,
        "flows": flows,
        "routines": routines,
        "checks": checks,
        "gaps": sorted(plan.report.gaps.values(), key=lambda g: g.code.value),
    }
