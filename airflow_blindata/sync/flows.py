"""Data flows: table, column and orchestration flows, uploaded by scope with ends as uuids.

A flow's natural key is ``(scope, name)``: uploading the same flows again refreshes them and
creates nothing. A flow whose entity end is not in the catalog is not published
(``DANGLING_FLOW``), nor a column flow whose field is missing (``FIELD_NOT_CATALOGUED``; its
table flow still is). A producer's column flow marked ``superseded_by_analysis`` is left out
only when the analysis of the job's ANALYZED statement derived a column flow into the same
target field (report: ``superseded``), else kept (``columnFlowsKeptOverAnalysis``). The scopes
written are kept in the report for cleanup; a scope with an end lost to a failure is marked
failed, so cleanup leaves its flows alone.

The rules in full: docs/mapping-reference.md#how-the-sync-publishes-flows-syncflowspy
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from airflow_blindata.blindata import BlindataError
from airflow_blindata.blindata.models import DataFlow, Ref
from airflow_blindata.mapper.plan import CatalogPlan, FlowEnd, PlannedFlow
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.redaction import redact_text
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.entities import CatalogIndex
from airflow_blindata.sync.fields import read_back_fields

__all__ = ["sync_flows"]

log = logging.getLogger(__name__)

KIND = "flow"
SUPERSEDED_KIND = "column flow"
_CATALOG_FAILURE_KINDS = ("system", "entity", "field")

Ends = tuple[str, str, str | None]
"""(System uuid, entity uuid, field uuid) of one end."""
Derived = dict[str, dict[tuple[str, str], str]]
"""Job scope → (entity uuid, field uuid) of each field that a column flow of its analysed SQL
ends on → the name of one such flow."""


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
    derived = _derived_columns(ctx, plan, index)
    ends_written: set[tuple[str, Ends, Ends]] = set()
    for flow in sorted(plan.flows, key=lambda f: (f.scope, f.name)):
        if _analysed(ctx, flow) and _superseded(ctx, index, flow, derived.get(flow.scope, {})):
            continue
        source = _end(ctx, index, flow, flow.source)
        target = _end(ctx, index, flow, flow.target) if source else None
        if source is None or target is None:
            if catalog_failed:
                held.add(flow.scope)
            continue
        if (flow.scope, source, target) in ends_written:
            # two spellings of one stored entity or field (matched in case, ``lookup``): the
            # flow between them is written once, by its first name
            ctx.report.count("flowsMatchedByCase")
            continue
        ends_written.add((flow.scope, source, target))
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


def _analysed(ctx: SyncContext, flow: PlannedFlow) -> bool:
    """A producer's column flow of a job whose SQL Blindata has ANALYZED."""
    return flow.superseded_by_analysis and flow.scope in ctx.analysed_statements


def _target_field(index: CatalogIndex, flow: PlannedFlow) -> tuple[str, str] | None:
    """(entity uuid, field uuid) of the flow's target field, when Blindata holds it."""
    entity = index.entities.get(flow.target.entity)
    field = index.fields.get((entity, flow.target.field)) if entity and flow.target.field else None
    return (entity, field) if entity and field else None


def _superseded(
    ctx: SyncContext, index: CatalogIndex, flow: PlannedFlow, derived: dict[tuple[str, str], str]
) -> bool:
    """Whether the analysis of the job's SQL derived a column flow into the field ``flow`` ends
    on: the producer's flow is then left out, and reported superseded by that flow; otherwise it
    stays, and is reported kept (unless its target is not catalogued: ``_end`` reports that)."""
    target = _target_field(index, flow)
    if target is None:
        return False
    by = derived.get(target)
    if by is not None:
        ctx.report.count("columnFlowsSupersededByAnalysis")
        ctx.report.note_superseded(SUPERSEDED_KIND, flow.name, by)
        return True
    ctx.report.count("columnFlowsKeptOverAnalysis")
    where = f"{flow.target.entity}.{flow.target.field}"
    ctx.report.note_kept(  # the name quotes the job namespace as sent
        SUPERSEDED_KIND,
        redact_text(flow.name),
        f"the SQL analysis derived no column flow into {where}",
    )
    return False


def _derived_columns(ctx: SyncContext, plan: CatalogPlan, index: CatalogIndex) -> Derived:
    """The fields that the column flows of each job's ANALYZED statements end on, read from the
    flows into the entities the producer's column flows of those jobs end on: entity by entity,
    or the whole System's flows past ``lookup_limit`` entities (as ``ownership`` reads them).
    A listing that fails proves nothing: the producer's flows into those entities stay."""
    scope_of = {
        statement: scope
        for scope, statements in ctx.analysed_statements.items()
        for statement in statements
    }
    by_system: dict[str, set[str]] = defaultdict(set)
    for flow in plan.flows:
        entity = index.entities.get(flow.target.entity) if _analysed(ctx, flow) else None
        if entity:
            by_system[index.entity_system[entity]].add(entity)
    api = ctx.client.api.dataflows
    derived: Derived = {}
    for system_uuid, entities in sorted(by_system.items()):
        listings: list[Iterable[DataFlow]]
        if len(entities) > ctx.lookup_limit:
            listings = [api.list(page_size=LIST_PAGE_SIZE, toSystemUuid=system_uuid)]
        else:
            listings = [
                api.list(page_size=LIST_PAGE_SIZE, toPhysicalEntityUuid=uuid)
                for uuid in sorted(entities)
            ]
        try:
            for listing in listings:
                for stored in listing:
                    ctx.progress.advance(0)
                    _add_derived(derived, stored, scope_of, entities)
        except BlindataError as exc:
            ctx.report.count("analysisFlowsUnread")
            log.warning(
                "The flows of the SQL analysis into System %s could not be read (%s): the "
                "producer's column flows into it stay",
                system_uuid,
                exc,
            )
    return derived


def _add_derived(
    derived: Derived, stored: DataFlow, scope_of: dict[str, str], entities: set[str]
) -> None:
    statement = stored.query_statement.uuid if stored.query_statement else None
    scope = scope_of.get(statement) if statement else None
    entity = stored.to_physical_entity.uuid if stored.to_physical_entity else None
    field = stored.to_physical_field.uuid if stored.to_physical_field else None
    if scope is None or entity not in entities or not (entity and field):
        return
    name = stored.name or stored.uuid or f"a flow of query statement {statement}"
    found = derived.setdefault(scope, {})
    if (entity, field) not in found or name < found[(entity, field)]:
        found[(entity, field)] = name  # the same one whatever order the pages come in


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
            key = f"{end.entity}.{end.field}"
            ctx.report.gap(GapCode.FIELD_NOT_CATALOGUED, key + _refused(index, key))
            return None
    return (index.entity_system[entity], entity, field)


def _refused(index: CatalogIndex, key: str) -> str:
    """What a gap's example adds for an entity or a field this snapshot could not write."""
    if key in index.refused:
        return " (refused by Blindata this run, see the failures: sent again next run)"
    return ""


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
