"""Data flows: table, column and orchestration flows, uploaded by scope with ends as uuids.

A flow's natural key is ``(scope, name)``, so uploading the same flows again refreshes them and
creates nothing. Lineage is anchored (seed 001): a flow whose entity end is not in the catalog is
not published (``DANGLING_FLOW``); a column flow whose field is missing is not either
(``FIELD_NOT_CATALOGUED``), and the table flow the mapper planned next to it still is. A column
flow of a job whose SQL Blindata has analysed is left out: the analysis's flows are the finer
evidence, and cleanup removes the ones an earlier run published.

The scopes written are kept in the report: they are what this definition owns, and cleanup acts
on them. When an end is missing because an entity or System could not be written (a failure, not
a gap), the flow's scope is marked failed so that cleanup leaves its existing flows alone.
"""

from __future__ import annotations

from airflow_blindata.blindata.models import DataFlow, Ref
from airflow_blindata.mapper.plan import CatalogPlan, FlowEnd, PlannedFlow
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync.context import SyncContext
from airflow_blindata.sync.entities import CatalogIndex
from airflow_blindata.sync.fields import read_back_fields

__all__ = ["sync_flows"]

KIND = "flow"
_CATALOG_FAILURE_KINDS = ("system", "entity", "field")

Ends = tuple[str, str, str | None]
"""(System uuid, entity uuid, field uuid) of one end."""


def sync_flows(ctx: SyncContext, plan: CatalogPlan, index: CatalogIndex) -> None:
    """Upload every flow whose ends resolve; record the scopes written."""
    if not plan.flows:
        return
    read_back_fields(ctx, index, _fields_wanted(plan, index))
    catalog_failed = any(ctx.report.failed(kind) for kind in _CATALOG_FAILURE_KINDS)
    rows: list[tuple[str, DataFlow]] = []
    scope_of: dict[str, str] = {}
    scopes: set[str] = set()
    held: set[str] = set()
    for flow in sorted(plan.flows, key=lambda f: (f.scope, f.name)):
        if flow.superseded_by_analysis and flow.scope in ctx.analysed_jobs:
            ctx.report.count("columnFlowsSupersededByAnalysis")
            continue
        source = _end(ctx, index, flow, flow.source)
        target = _end(ctx, index, flow, flow.target) if source else None
        if source is None or target is None:
            if catalog_failed:
                held.add(flow.scope)
            continue
        key = f"{flow.scope} {flow.name}"
        scope_of[key] = flow.scope
        scopes.add(flow.scope)
        ctx.report.count(f"flows{flow.kind.capitalize()}")
        rows.append((key, _row(flow, source, target)))
    ctx.report.count("flowsDescribed", len(rows))
    ctx.report.scopes = sorted(scopes)  # before the upload: an outage may stop it half-way
    ctx.progress.start("flows", len(rows))
    tally = ctx.upload(ctx.client.api.dataflows, rows, kind=KIND)
    ctx.progress.end()
    ctx.report.count("flowsCreated", tally.created)
    ctx.report.count("flowsRefreshed", tally.updated)
    held.update(scope_of[key] for key in tally.failed)
    ctx.report.scopes = sorted(scopes)
    ctx.report.failed_scopes = sorted(held)


def _fields_wanted(plan: CatalogPlan, index: CatalogIndex) -> set[tuple[str, str]]:
    wanted: set[tuple[str, str]] = set()
    for flow in plan.flows:
        for end in (flow.source, flow.target):
            uuid = index.entities.get(end.entity)
            if end.field and uuid:
                wanted.add((uuid, end.field))
    return wanted


def _end(ctx: SyncContext, index: CatalogIndex, flow: PlannedFlow, end: FlowEnd) -> Ends | None:
    entity = index.entities.get(end.entity)
    if entity is None:
        ctx.report.gap(GapCode.DANGLING_FLOW, f"{flow.name} (no entity {end.entity})")
        return None
    field = None
    if end.field:
        field = index.fields.get((entity, end.field))
        if field is None:
            ctx.report.gap(GapCode.FIELD_NOT_CATALOGUED, f"{end.entity}.{end.field}")
            return None
    return (index.entity_system[entity], entity, field)


def _ref(uuid: str | None) -> Ref | None:
    return Ref(uuid=uuid) if uuid else None


def _row(flow: PlannedFlow, source: Ends, target: Ends) -> DataFlow:
    return DataFlow(
        name=flow.name,
        description=flow.description or None,
        scope=flow.scope,
        from_system=Ref(uuid=source[0]),
        from_physical_entity=Ref(uuid=source[1]),
        from_physical_field=_ref(source[2]),
        to_system=Ref(uuid=target[0]),
        to_physical_entity=Ref(uuid=target[1]),
        to_physical_field=_ref(target[2]),
    )
