"""``snapshot``: bring Blindata in line with a catalog plan, and report what happened.

Phases, in the order their objects need each other: Systems, entities (with documentation),
fields, routines (with the query bucket and statements), flows, quality. Each phase uploads in
batches and records refused objects without stopping (``partial``). A run stops, and reports
``failed``, when Blindata cannot be used: credentials refused, or an outage (``WriteWatch``): a
request given up at the retry deadline stops it at once, and a phase none of whose writes got
through (5xx, lost connections) stops it at the end of that phase. The later phases would need
what it could not write, and each of their batches would wait out the deadline again.

Every described object is uploaded on every run, so a second snapshot of the same plan creates
nothing and refreshes everything. The report keeps ``watermark``, Blindata's own time when the
snapshot started, read from the ``Date`` header of its first answer: an object the snapshot
refreshed has a later last update, so cleanup compares Blindata's dates with Blindata's clock,
never with the Airflow worker's. One entity read back after its upload proves that the two agree
(``_checked_watermark``); when they do not, the snapshot keeps no watermark.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from airflow_blindata.blindata import BlindataClient, BlindataError
from airflow_blindata.blindata.client import http_date
from airflow_blindata.blindata.models import format_timestamp
from airflow_blindata.blindata.paths import ENDPOINTS
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB, CatalogPlan
from airflow_blindata.sync.context import (
    DEFAULT_BATCH_SIZE,
    PER_OBJECT_LOOKUP_LIMIT,
    OutageError,
    SyncContext,
    WriteWatch,
)
from airflow_blindata.sync.entities import CatalogIndex, sync_entities
from airflow_blindata.sync.fields import sync_fields
from airflow_blindata.sync.flows import sync_flows
from airflow_blindata.sync.lookup import entity_ref, existing_entities, match_entity
from airflow_blindata.sync.progress import Progress, ProgressCallback, as_progress
from airflow_blindata.sync.quality import sync_quality
from airflow_blindata.sync.report import RunReport, SystemUse
from airflow_blindata.sync.routines import sync_routines
from airflow_blindata.sync.systems import sync_systems

__all__ = ["WATERMARK_MARGIN", "server_time", "snapshot"]

log = logging.getLogger(__name__)

WATERMARK_MARGIN = timedelta(seconds=1)
"""Taken off Blindata's time: its ``Date`` header counts whole seconds, and nodes behind one load
balancer may differ by a little. A larger margin only delays a removal by one run."""


def server_time(client: BlindataClient) -> datetime | None:
    """Blindata's current time minus a margin, from the ``Date`` of a cheap request: a page of
    one System (a verified path the snapshot reads anyway, where ``/users/me`` is inferred).

    ``None`` when Blindata sends no readable ``Date``: the worker's clock is never a stand-in,
    as a worker ahead of Blindata by more than any margin would make everything the snapshot
    refreshed look stale to the cleanup (which then refuses, ``no_server_time``)."""
    response = client.send(ENDPOINTS["systems.list"], params={"page": 0, "size": 1})
    header = response.headers.get("Date")
    moment = http_date(header) if header else None
    if moment is not None:
        return moment - WATERMARK_MARGIN
    log.warning("Blindata answered without a readable Date header (%r): no watermark", header)
    return None


def _checked_watermark(
    ctx: SyncContext, index: CatalogIndex, watermark: datetime | None
) -> datetime | None:
    """``watermark``, unless an entity this snapshot has just uploaded is older than it.

    The contract does not say that the ``Date`` header and the last updates come from one
    clock: a proxy's clock ahead of Blindata's, or last updates in a local time written without
    a zone, make every object the snapshot refreshed look stale. The last update of one of them,
    read back, tells; when it is older than the watermark nothing tells refreshed from stale, and
    the snapshot keeps none (cleanup then refuses, ``no_server_time``). A read that fails
    decides nothing.

    The entity read back is one that existed before this snapshot, when there is one: that the
    upload refreshes the last update of an object it did not change is inferred, and a Blindata
    that dates changes only shows it on such an entity (one just created is dated now anyway).
    """
    if watermark is None or not index.uploaded:
        return watermark
    key = next(
        (k for k in index.uploaded if index.entities[k] not in index.created), index.uploaded[0]
    )
    system = index.systems.get(key.system)
    if system is None:
        return watermark
    try:
        rule = system.matching.tables  # an entity matched in case: as it is stored
        found = match_entity(
            existing_entities(ctx, system.uuid, [key], matching=rule), entity_ref(key), rule
        ).found
    except BlindataError as exc:
        log.warning("Blindata's clock not checked: %s could not be read back: %s", key, exc)
        return watermark
    modified = found.modification_date if found is not None else None
    if modified is None:
        return watermark
    if modified >= watermark:
        _check_dates_ahead(ctx, key, modified)
        return watermark
    log.warning(
        "Blindata's clock and its dates disagree: %s, uploaded after %s (Blindata's Date), was "
        "last updated at %s: no watermark, cleanup will remove nothing",
        key,
        format_timestamp(watermark),
        format_timestamp(modified),
    )
    ctx.report.count("watermarkDropped")
    return None


DATES_AHEAD_TOLERANCE = timedelta(minutes=2)
"""How far an object's last update may be ahead of Blindata's ``Date`` before it says that the
two do not come from one clock."""


def _check_dates_ahead(ctx: SyncContext, key: object, modified: datetime) -> None:
    """Warn when the entity just read back was last updated later than Blindata's time now: its
    dates are local times of a zone east of UTC written without a zone (or a clock ahead of the
    ``Date``). Nothing is removed too early then, but every removal waits that much longer, and
    nothing else would say why (``serverDatesAhead``)."""
    try:
        now = server_time(ctx.client)
    except BlindataError as exc:  # a check that only warns: a failed read decides nothing
        log.warning("Blindata's dates not checked against its clock: %s", exc)
        return
    if now is None or modified - now <= DATES_AHEAD_TOLERANCE:
        return
    log.warning(
        "Blindata's dates are ahead of its clock: %s was last updated at %s, and Blindata's Date "
        "is %s (local times without a zone?): removals of stale objects wait %s longer",
        key,
        format_timestamp(modified),
        format_timestamp(now),
        modified - now,
    )
    ctx.report.count("serverDatesAhead")


def snapshot(
    plan: CatalogPlan,
    client: BlindataClient,
    definition: JobDefinition,
    *,
    progress: Progress | ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    lookup_limit: int = PER_OBJECT_LOOKUP_LIMIT,
    light: bool = False,
    store_id: str | None = None,
    report: RunReport | None = None,
) -> RunReport:
    """Apply ``plan``; never raises for Blindata's answers (they are in the report).

    ``light``: a light sync's plan (``mapper.light.plan_of_jobs``), some jobs only; the report
    is of kind ``light`` and nothing is judged by what the plan leaves out. ``report``: the
    report to fill, when the caller keeps it (``sync.runner`` records what a run stopped by an
    unexpected error had written, its scopes among it); a new one by default."""
    if report is None:
        report = RunReport(kind="light" if light else "snapshot", definition_uuid=definition.uuid)
    report.merge(plan.report)
    ctx = SyncContext(
        client,
        definition,
        report,
        as_progress(progress),
        batch_size=batch_size,
        lookup_limit=lookup_limit,
        light=light,
        store_id=store_id,
    )
    watch = WriteWatch()
    observer, client.observer = client.observer, watch
    phase = "start"
    try:
        report.watermark = server_time(client)
        if report.watermark is None and not light:
            report.count("serverTimeMissing")  # said now: every cleanup will refuse
        phase = "systems"
        with report.timed(phase):
            systems = sync_systems(ctx, plan)
        watch.end_phase()
        phase = "entities"
        with report.timed(phase):
            index = sync_entities(ctx, plan, systems)
        watch.end_phase()
        report.watermark = _checked_watermark(ctx, index, report.watermark)
        for phase, sync_phase in (
            ("fields", sync_fields),
            ("routines", sync_routines),
            ("flows", sync_flows),
        ):
            with report.timed(phase):
                sync_phase(ctx, plan, index)
            watch.end_phase()
        phase = "quality"
        with report.timed(phase):
            sync_quality(ctx, plan.quality, index)
        watch.end_phase()
    except OutageError as exc:
        message = f"Blindata cannot {'take writes' if exc.write else 'be used'}: {exc.error}"
        if phase != "start":
            message += (
                f". The snapshot stopped in its {phase} phase; the next snapshot writes what this "
                "one could not."
            )
        return report.finish("failed", message)
    except BlindataError as exc:
        return report.finish("failed", f"Blindata cannot be used: {exc}")
    finally:
        client.observer = observer
    report.systems = _systems_used(plan, index)
    return report.finish()


def _systems_used(plan: CatalogPlan, index: CatalogIndex) -> dict[str, SystemUse]:
    used: dict[str, SystemUse] = {
        name: SystemUse(uuid=system.uuid, owned=system.owned)
        for name, system in index.systems.items()
    }
    for entity in plan.entities:
        use = used.get(entity.key.system)
        if use is None:
            continue
        if entity.table_type == OPENLINEAGE_JOB:
            use.jobs = True
        else:
            use.datasets = True
    for routine in plan.routines:
        if routine.system in used:
            used[routine.system].jobs = True
    return used
