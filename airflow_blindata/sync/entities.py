"""Physical entities (datasets and job entities), with the protections of crawled metadata.

Every described entity is uploaded on every run, changed or not: that refreshes its last update,
by which cleanup tells what is still described (seed 000, "Re-sends and updates"). An entity that
does not exist is created only where the plan and the System allow it (``entityCreation``; else
``TARGET_NOT_CATALOGUED``) and stamped ``openLineageOwner``. On an owned entity the job writes
what it knows but a description a person edited (``openLineageDescriptionHash``). On one it did
not create it never replaces a stored description or table type, never sends the owner stamp,
and adds its uuid to ``openLineageDescribedBy`` of another definition's. Uploads answer with
counts, so the entities created are read back once afterwards.

The rules in full: docs/mapping-reference.md#what-an-upload-carries-syncentitiespy
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from airflow_blindata.blindata import BlindataError
from airflow_blindata.blindata.models import AdditionalProperty, PhysicalEntity, Ref
from airflow_blindata.definition import NAME_PROFILES
from airflow_blindata.mapper.documentation import as_stored, is_stamped
from airflow_blindata.mapper.documentation import documentation_hash as text_hash
from airflow_blindata.mapper.plan import (
    OPENLINEAGE_JOB,
    CatalogPlan,
    EntityKey,
    PlannedEntity,
    Property,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync.context import SyncContext
from airflow_blindata.sync.documentation import prepare_documentation, write_documentation
from airflow_blindata.sync.lookup import (
    Match,
    entity_ref,
    existing_entities,
    fold_index,
    match_entity,
)
from airflow_blindata.sync.properties import (
    DESCRIBED_BY_PROPERTY,
    DESCRIPTION_HASH_PROPERTY,
    DOCUMENTATION_HASH_PROPERTY,
    DOCUMENTED_BY_PROPERTY,
    OWNER_PROPERTY,
    STORE_PROPERTY,
    values_of,
)
from airflow_blindata.sync.systems import ResolvedSystem

__all__ = ["CatalogIndex", "sync_entities"]

KIND = "entity"


@dataclass
class CatalogIndex:
    """The uuids of what the plan describes, as Blindata holds it; filled phase by phase."""

    systems: dict[str, ResolvedSystem]
    entities: dict[EntityKey, str] = field(default_factory=dict)
    owned: set[EntityKey] = field(default_factory=set)
    entity_system: dict[str, str] = field(default_factory=dict)
    """Entity uuid → System uuid."""
    fields: dict[tuple[str, str], str] = field(default_factory=dict)
    """(entity uuid, field name) → field uuid."""
    unread_fields: set[tuple[str, str]] = field(default_factory=set)
    """Fields written without being read (new, or on an owned entity): their uuids are read
    only when a column flow needs them."""
    created: set[str] = field(default_factory=set)
    """Entities this snapshot created: they hold no field yet but those it writes."""
    uploaded: list[EntityKey] = field(default_factory=list)
    """The entities this snapshot uploaded and Blindata took, in upload order: each has a last
    update from this snapshot."""
    refused: set[str] = field(default_factory=set)
    """The entities (``str(key)``) and fields (``entity.name``) this snapshot sent or meant to
    send and could not write (a refused row, a System not available, a read that failed): a gap
    that names one says so, not to send what was sent (a probe of what the admin sees). Not one
    it may not create (a gap's own case)."""
    spellings: dict[tuple[str, str], str] = field(default_factory=dict)
    """(entity uuid, field name as planned) → the stored field's name, where a field is stored
    in another case only (``lookup.match_field``): its rows and records name it so."""
    read_entities: set[str] = field(default_factory=set)
    """Entities whose stored fields were all read: a field of theirs not in ``fields`` (nor
    written since) is not in the catalog. The fields of any other entity are looked up when a
    column flow names one (a crawled entity the events give no schema facet for)."""

    def __post_init__(self) -> None:
        self._column_rules = {s.uuid: s.matching.columns for s in self.systems.values()}

    def column_rule(self, entity_uuid: str) -> str | None:
        """How the fields of an entity are matched in case (``CaseMatching.columns``)."""
        return self._column_rules.get(self.entity_system.get(entity_uuid, ""))

    def field_name(self, entity_uuid: str, name: str) -> str:
        """A field's name as Blindata stores it: the planned one unless matched in case."""
        return self.spellings.get((entity_uuid, name), name)

    def adopt_field(self, entity_uuid: str, planned: str, stored: str, uuid: str) -> None:
        """A planned field found stored as ``stored`` (another case): known by either name."""
        self.fields[(entity_uuid, planned)] = uuid
        if stored != planned:
            self.spellings[(entity_uuid, planned)] = stored

    def add_entity(self, key: EntityKey, uuid: str, system_uuid: str, *, owned: bool) -> None:
        self.entities[key] = uuid
        self.entity_system[uuid] = system_uuid
        if owned:
            self.owned.add(key)


def sync_entities(
    ctx: SyncContext, plan: CatalogPlan, systems: dict[str, ResolvedSystem]
) -> CatalogIndex:
    """Upload every described entity; return where each one is."""
    index = CatalogIndex(systems)
    by_system: dict[str, list[PlannedEntity]] = defaultdict(list)
    for planned in plan.entities:
        by_system[planned.key.system].append(planned)
    created: dict[str, list[PlannedEntity]] = defaultdict(list)
    ctx.report.count("entitiesDescribed", 0)  # counted as the rows are made
    ctx.progress.start("entities", len(plan.entities))
    rows = _rows(ctx, index, by_system, created)
    tally = ctx.upload(ctx.client.api.physical_entities, rows, kind=KIND)
    ctx.progress.end()
    ctx.report.count("entitiesCreated", tally.created)
    ctx.report.count("entitiesRefreshed", tally.updated)
    _read_back(ctx, index, created, tally.failed)
    index.uploaded = [
        planned.key
        for planned in plan.entities
        if planned.key in index.entities and str(planned.key) not in tally.failed
    ]
    index.refused.update(tally.failed)
    return index


def _rows(
    ctx: SyncContext,
    index: CatalogIndex,
    by_system: dict[str, list[PlannedEntity]],
    created: dict[str, list[PlannedEntity]],
) -> Iterator[tuple[str, PhysicalEntity]]:
    """The upload rows, System by System, made as the upload consumes them."""
    for name, planned_list in sorted(by_system.items()):
        system = index.systems.get(name)
        if system is None:
            for planned in planned_list:
                ctx.report.fail(KIND, str(planned.key), f"its System {name!r} is not available")
                index.refused.add(str(planned.key))
            continue
        rule = system.matching.tables
        try:
            stored = existing_entities(
                ctx, system.uuid, [p.key for p in planned_list], owned=system.owned, matching=rule
            )
        except BlindataError as exc:
            for planned in planned_list:
                ctx.report.fail(KIND, str(planned.key), str(exc))
                index.refused.add(str(planned.key))
            continue
        folds = fold_index(stored)
        matches = {
            p.key: match_entity(stored, entity_ref(p.key), rule, folds) for p in planned_list
        }
        described: set[str] = set()
        # the entities spelt as stored first: another spelling of one of them (``dbo.orders``
        # of ``dbo.Orders``) adds no second row, its flows land on the same uuid
        for planned in sorted(planned_list, key=lambda p: _matched_in_case(matches[p.key])):
            match = matches[planned.key]
            if match.variants:
                # two stored spellings, neither the planned one: no guess, nor a third beside
                ctx.report.gap(
                    GapCode.CASE_AMBIGUOUS,
                    f"{planned.key} ({planned.source}): {system.name} holds "
                    + ", ".join(match.variants),
                )
                continue
            found = match.found
            if found is not None and _matched_in_case(match):
                ctx.report.count("entitiesMatchedByCase")
                if found.uuid in described:
                    owned = ctx.owner in values_of(found.additional_properties, OWNER_PROPERTY)
                    index.add_entity(planned.key, found.uuid or "", system.uuid, owned=owned)
                    continue
            if found is not None and found.uuid:
                described.add(found.uuid)
            row = _plan_row(ctx, index, system, planned, found)
            if row is None:
                continue
            if planned.key not in index.entities:
                created[name].append(planned)
            ctx.report.count("entitiesDescribed")
            yield str(planned.key), row


def _matched_in_case(match: Match[PhysicalEntity]) -> bool:
    """Whether the entity found is stored in another case than planned (``match_entity``)."""
    found = match.found
    return found is not None and (found.schema_ or "", found.name) != match.planned


def _plan_row(
    ctx: SyncContext,
    index: CatalogIndex,
    system: ResolvedSystem,
    planned: PlannedEntity,
    stored: PhysicalEntity | None,
) -> PhysicalEntity | None:
    """The upload row for one entity, or None when it may not be created."""
    if stored is None and not _may_create(planned, system):
        ctx.report.gap(GapCode.TARGET_NOT_CATALOGUED, _not_catalogued(planned))
        ctx.report.count("entitiesNotCatalogued")
        return None
    if stored is None:
        return entity_row(
            ctx.owner, planned, None, system.uuid, planned.documentation_hash, ctx.store_id
        )
    owned = ctx.owner in values_of(stored.additional_properties, OWNER_PROPERTY)
    index.add_entity(planned.key, stored.uuid or "", system.uuid, owned=owned)
    documentation_hash = prepare_documentation(
        ctx, planned, stored, replace_user_edits=system.replace_user_documentation
    )
    row = entity_row(ctx.owner, planned, stored, system.uuid, documentation_hash, ctx.store_id)
    if owned and _description_edited(planned, stored, system.replace_user_documentation):
        ctx.report.count("descriptionsKeptUserEdited")
        row.description = None
        row.additional_properties = [
            p for p in row.additional_properties or () if p.name != DESCRIPTION_HASH_PROPERTY
        ] or None
    return row


def _not_catalogued(planned: PlannedEntity) -> str:
    """The gap's example: the entity, and where it comes from. A name of a platform of the
    naming specification read whole, with no schema (``shop.customers`` of a MySQL name, or
    Snowflake's ``ANALYTICS.RAW.ORDERS``, read without ``nameProfile``) reads like a table a
    crawler may well hold: the gap says which ``nameProfile`` reads it (it said to crawl a store
    that was crawled, a probe of producers)."""
    key = planned.key
    source = planned.source.removeprefix("dataset ")
    scheme = (source.split("://", 1)[0] if "://" in source else source.split("/", 1)[0]).lower()
    levels = NAME_PROFILES.get(scheme, ())
    if key.schema_ or len(levels) < 2 or key.name.count(".") != len(levels) - 1:
        return f"{key} ({planned.source})"
    return (
        f"{key} ({planned.source}; looked up with no schema, the whole name {key.name!r} as the "
        f"table's: nameProfile: {scheme} on the namespace's systemPolicies entry reads it as "
        f"{', '.join(levels)})"
    )


def _may_create(planned: PlannedEntity, system: ResolvedSystem) -> bool:
    """Whether a missing entity may be created. ``entityCreation`` is about datasets: a job
    entity goes to the job System its rule chose (the mapper plans it ``may_create`` there), even
    when that System is also a crawled System of datasets, on which they may not be created."""
    if planned.table_type == OPENLINEAGE_JOB:
        return planned.may_create
    return planned.may_create and system.entity_creation


def _description_edited(planned: PlannedEntity, stored: PhysicalEntity, replace: bool) -> bool:
    """Whether the stored description of an owned entity is a person's edit, to keep."""
    wanted = as_stored(planned.description or "")
    current = as_stored(stored.description or "")
    if replace or not wanted or not current or current == wanted:
        return False
    stamps = values_of(stored.additional_properties, DESCRIPTION_HASH_PROPERTY)
    return not is_stamped(stored.description or "", stamps)


def entity_row(
    owner: str,
    planned: PlannedEntity,
    stored: PhysicalEntity | None,
    system_uuid: str,
    documentation_hash: str | None,
    store_id: str | None = None,
) -> PhysicalEntity:
    """What to upload: everything on an entity this job owns, only additions on another's; an
    owned entity says which event store's sync wrote it (``STORE_PROPERTY``): a table too, so
    that the cleanup of a deployment that shares the definition's uuid refuses to remove the
    tables of the other's jobs, whose job entities both syncs refresh (a probe of cleanups)."""
    owned = stored is None or owner in values_of(stored.additional_properties, OWNER_PROPERTY)
    description = (planned.description or "").strip() or None
    if not owned and stored is not None and (stored.description or "").strip():
        description = None  # another job's or a crawler's description stays
    table_type = planned.table_type
    if not owned and stored is not None and stored.table_type:
        table_type = None
    properties: list[Property] = list(planned.properties)
    if owned:
        properties.append((OWNER_PROPERTY, owner))
        if store_id:
            properties.append((STORE_PROPERTY, store_id))
        if description:
            properties.append((DESCRIPTION_HASH_PROPERTY, text_hash(description)))
    elif stored is not None and values_of(stored.additional_properties, OWNER_PROPERTY):
        # Another definition's entity: say that this one describes it too (all values are sent:
        # an upload replaces every value of a name it sends).
        marks = {owner, *values_of(stored.additional_properties, DESCRIBED_BY_PROPERTY)}
        properties.extend((DESCRIBED_BY_PROPERTY, mark) for mark in sorted(marks))
    if documentation_hash:
        properties.append((DOCUMENTATION_HASH_PROPERTY, documentation_hash))
        if stored is not None and not values_of(stored.additional_properties, OWNER_PROPERTY):
            # a crawled entity: say whose document it is (``documentation.py``)
            properties.append((DOCUMENTED_BY_PROPERTY, owner))
    # a stored entity keeps its spelling: one matched in another case (``lookup.match_entity``)
    # is refreshed, never renamed nor written beside under the planned spelling
    schema, name = planned.key.schema_, planned.key.name
    if stored is not None and ((stored.schema_ or "", stored.name) != (schema or "", name)):
        schema, name = stored.schema_, stored.name
    return PhysicalEntity(
        system=Ref(uuid=system_uuid),
        schema=schema,
        name=name,
        description=description,
        table_type=table_type,
        additional_properties=AdditionalProperty.many(properties) or None,
    )


def _read_back(
    ctx: SyncContext,
    index: CatalogIndex,
    created: dict[str, list[PlannedEntity]],
    failed: set[str],
) -> None:
    """Find the uuids of the entities just created, and write their documentation."""
    for name, planned_list in sorted(created.items()):
        system = index.systems[name]
        landed = [p for p in planned_list if str(p.key) not in failed]
        if not landed:
            continue
        try:
            stored = existing_entities(
                ctx, system.uuid, [p.key for p in landed], owned=system.owned
            )
        except BlindataError as exc:
            for planned in landed:
                ctx.report.fail(KIND, str(planned.key), f"created, but not read back: {exc}")
                index.refused.add(str(planned.key))
            continue
        for planned in landed:
            entity = stored.get(entity_ref(planned.key))
            if entity is None or not entity.uuid:
                ctx.report.fail(KIND, str(planned.key), "uploaded, but Blindata does not list it")
                index.refused.add(str(planned.key))
                continue
            index.add_entity(planned.key, entity.uuid, system.uuid, owned=True)
            index.created.add(entity.uuid)
            write_documentation(ctx, planned, entity.uuid)
