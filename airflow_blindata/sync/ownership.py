"""What a job definition owns in Blindata, and which of it the last snapshot left stale.

Read-only: ``collect`` lists the owned objects (by the ``openLineageOwner`` stamp, and flows by
scope) and splits them into what the snapshot refreshed and what it did not. Kinds the snapshot
could not fully refresh are held back (a failure is not a removal), and so are the scopes whose
flows it could not all write.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from airflow_blindata.blindata.models import (
    DataFlow,
    Page,
    PhysicalEntity,
    System,
    SystemRoutine,
    format_timestamp,
)
from airflow_blindata.blindata.paths import ENDPOINTS
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB
from airflow_blindata.mapper.scopes import ORCHESTRATION_SUFFIX
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.properties import JOB_SCOPE_PROPERTY, OWNER_PROPERTY, values_of
from airflow_blindata.sync.report import Ledger, RunReport

__all__ = ["Removal", "collect"]

T = TypeVar("T")


@dataclass
class Removal:
    """The stale owned objects, and what the definition owns in all."""

    flows: list[DataFlow] = field(default_factory=list)
    routines: list[SystemRoutine] = field(default_factory=list)
    entities: list[PhysicalEntity] = field(default_factory=list)
    systems: list[System] = field(default_factory=list)
    owned_total: int = 0
    scopes: set[str] = field(default_factory=set)
    """Every scope known to be owned (the ledger, the snapshot's, the job entities')."""
    held_scopes: set[str] = field(default_factory=set)
    job_systems: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.flows) + len(self.routines) + len(self.entities) + len(self.systems)


def _alive(ctx: SyncContext, items: Iterable[T]) -> Iterator[T]:
    """``items``, keeping the progress line alive while a long listing is read."""
    for item in items:
        ctx.progress.advance(0)
        yield item


def _stale(modified: datetime | None, watermark: datetime) -> bool:
    # An object without a last update is not judged: removal needs proof.
    return modified is not None and modified < watermark


def collect(ctx: SyncContext, last: RunReport, ledger: Ledger) -> Removal:
    """List what the definition owns and pick what ``last`` did not refresh."""
    assert last.watermark is not None  # checked by cleanup's preconditions
    watermark = last.watermark
    api = ctx.client.api
    owner = ctx.owner
    removal = Removal(held_scopes=set(last.failed_scopes))
    hold_entities = bool(last.failed("system") or last.failed("entity"))
    hold_routines = bool(last.failed("system") or last.failed("routine"))

    ctx.progress.start("cleanup: read", 0)
    entities = list(
        _alive(
            ctx,
            api.physical_entities.list(
                page_size=LIST_PAGE_SIZE,
                additionalPropertyName=OWNER_PROPERTY,
                additionalPropertyValue=owner,
            ),
        )
    )
    entities = [e for e in entities if owner in values_of(e.additional_properties, OWNER_PROPERTY)]
    job_scopes = {
        scope
        for entity in entities
        if entity.table_type == OPENLINEAGE_JOB
        for base in values_of(entity.additional_properties, JOB_SCOPE_PROPERTY)
        for scope in (base, base + ORCHESTRATION_SUFFIX)
    }
    stale_entities = [e for e in entities if _stale(e.modification_date, watermark)]
    systems = [
        s
        for s in api.systems.list(page_size=LIST_PAGE_SIZE)
        if owner in values_of(s.additional_properties, OWNER_PROPERTY)
    ]
    used = {use.uuid for use in last.systems.values()}
    if hold_entities:
        ctx.report.count("entitiesHeldBack", len(stale_entities))
    else:
        removal.entities = stale_entities
        removal.systems = [s for s in systems if s.uuid not in used]

    job_systems = set(ledger.job_systems)
    job_systems.update(use.uuid for use in last.systems.values() if use.jobs)
    job_systems.update(s.uuid for s in systems if s.uuid)
    removal.job_systems = sorted(job_systems)
    routines = [
        routine
        for uuid in removal.job_systems
        for routine in _alive(ctx, api.routines.list(page_size=LIST_PAGE_SIZE, systemUuid=uuid))
        if owner in values_of(routine.additional_properties, OWNER_PROPERTY)
    ]
    stale_routines = [r for r in routines if _stale(r.modification_date, watermark)]
    if hold_routines:
        ctx.report.count("routinesHeldBack", len(stale_routines))
    else:
        removal.routines = stale_routines

    removal.scopes = set(ledger.scopes) | set(last.scopes) | job_scopes
    removal.flows = _stale_flows(ctx, removal.scopes - removal.held_scopes, watermark)
    flows_total = last.counters.get("flowsDescribed", 0) + len(removal.flows)
    removal.owned_total = len(entities) + len(systems) + len(routines) + flows_total
    return removal


def _stale_flows(ctx: SyncContext, scopes: set[str], watermark: datetime) -> list[DataFlow]:
    """Flows of ``scopes`` older than ``watermark``, read the cheaper of two ways.

    One query per scope costs a request per job; one query of every stale flow of the tenant
    costs a request per thousand of them. A first request of one item tells how many there are.
    """
    if not scopes:
        return []
    before = format_timestamp(watermark)
    api = ctx.client.api.dataflows
    first: Page[DataFlow] = ctx.client.call(
        ENDPOINTS["dataflows.list"],
        Page[DataFlow],
        params={"modifiedBefore": before, "page": 0, "size": 1},
    )
    if math.ceil(first.total_elements / LIST_PAGE_SIZE) <= len(scopes):
        candidates = list(_alive(ctx, api.list(page_size=LIST_PAGE_SIZE, modifiedBefore=before)))
    else:
        candidates = [
            flow
            for scope in sorted(scopes)
            for flow in _alive(
                ctx, api.list(page_size=LIST_PAGE_SIZE, scope=scope, modifiedBefore=before)
            )
        ]
    return [
        flow
        for flow in candidates
        if flow.scope in scopes
        and flow.query_statement is None
        and _stale(flow.modification_date, watermark)
    ]
