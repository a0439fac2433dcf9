"""Physical fields: created when missing, never retyped or reordered when someone else owns them.

A field is written only on an entity that exists after the entities phase (seed 000: "Fields are
created only when the job may create entities of the System, or the entity exists"). On an entity
this job owns, the fields it wrote follow the schema facet. Any other existing field (on another
entity, or one a crawler or a person added to an entity the job created) keeps its type, position
and description (a crawler's knowledge of the store wins); the job adds only what is missing.
Upload never removes a field, so crawled fields the facet omits stay. The fields the job writes on
an entity it owns carry ``openLineageOwner``: cleanup keeps an entity that holds a field someone
else added, and removes only stamped fields.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from airflow_blindata.blindata import BlindataError
from airflow_blindata.blindata.models import AdditionalProperty, PhysicalEntityRef, PhysicalField
from airflow_blindata.mapper.documentation import documentation_hash as text_hash
from airflow_blindata.mapper.plan import CatalogPlan, PlannedField
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync.context import SyncContext
from airflow_blindata.sync.entities import CatalogIndex
from airflow_blindata.sync.lookup import Match, StoredField, existing_fields, match_field
from airflow_blindata.sync.properties import (
    DESCRIPTION_HASH_PROPERTY,
    OWNER_PROPERTY,
    TYPE_PROPERTY,
    UNTYPED,
)

__all__ = ["field_row", "read_back_fields", "sync_fields"]

KIND = "field"

Described = list[tuple[str, PlannedField]]
"""(entity uuid, planned field) pairs."""


def sync_fields(ctx: SyncContext, plan: CatalogPlan, index: CatalogIndex) -> None:
    """Upload every described field of an entity that exists."""
    by_system: dict[str, Described] = defaultdict(list)
    skipped = 0
    for planned in plan.fields:
        uuid = index.entities.get(planned.entity)
        if uuid is None:
            skipped += 1  # its entity is not catalogued (a gap) or failed (a failure)
        else:
            by_system[index.entity_system[uuid]].append((uuid, planned))
    described = len(plan.fields) - skipped
    ctx.report.count("fieldsSkipped", skipped)
    ctx.report.count("fieldsDescribed", described)
    ctx.progress.start("fields", described)
    owned: set[str] = set()
    rows = _rows(ctx, index, by_system, owned)
    tally = ctx.upload(ctx.client.api.physical_fields, rows, kind=KIND)
    ctx.progress.end()
    ctx.report.count("fieldsCreated", tally.created)
    ctx.report.count("fieldsRefreshed", tally.updated)
    # what cleanup weighs a removal against: the rows Blindata took, not those it refused
    ctx.report.count("fieldsOwned", len(owned - tally.failed))
    index.refused.update(tally.failed)


def _rows(
    ctx: SyncContext, index: CatalogIndex, by_system: dict[str, Described], owned: set[str]
) -> Iterator[tuple[str, PhysicalField]]:
    """The upload rows, System by System, made as the upload consumes them.

    The stored fields are read first, on every entity but those this snapshot just created: also
    on one this job created before, since a crawler of the store or a person may have added a
    field to it since. A field is written whole
    only when it is new on an entity this job owns, or carries this definition's
    ``openLineageOwner``; any other stored field is someone else's, and only what it lacks is
    added (seed 000: "Fields that a crawler created are never removed or retyped by the job").
    """
    owned_systems = {system.uuid for system in index.systems.values() if system.owned}
    replacing = {s.uuid for s in index.systems.values() if s.replace_user_documentation}
    for system_uuid, described in sorted(by_system.items()):
        replace = system_uuid in replacing
        try:
            uuids = sorted({uuid for uuid, _ in described})
            unread = [uuid for uuid in uuids if uuid not in index.created]
            whole = system_uuid in owned_systems
            schemas = {planned.entity.schema_ for uuid, planned in described if uuid in unread}
            stored = (
                existing_fields(ctx, system_uuid, unread, owned=whole, schemas=schemas)
                if unread
                else {}
            )
        except BlindataError as exc:
            for _, planned in described:
                ctx.report.fail(KIND, f"{planned.entity}.{planned.name}", str(exc))
                index.refused.add(f"{planned.entity}.{planned.name}")
            continue
        index.read_entities.update(uuids)
        # every stored field is known now, not only those the events name: a column flow may
        # end on a crawled field a partial schema facet leaves out (it was taken for absent,
        # FIELD_NOT_CATALOGUED, a probe of warehouses)
        for pair, found_field in stored.items():
            # not a field this definition wrote that its events no longer describe: it goes
            # with the cleanup, and no flow of the job is published onto it (a review)
            if ctx.owner not in found_field.owners:
                index.fields.setdefault(pair, found_field.uuid)
        by_entity = _by_entity(stored)
        for entity_uuid, planned in described:
            matched = match_field(
                by_entity.get(entity_uuid, {}), planned.name, index.column_rule(entity_uuid)
            )
            name, found = (planned.name, None) if isinstance(matched, Match) else matched
            if isinstance(matched, Match) and matched.variants:
                _ambiguous(ctx, planned, matched.variants)
                continue
            if found is not None:
                index.adopt_field(entity_uuid, planned.name, name, found.uuid)
                if name != planned.name:
                    ctx.report.count("fieldsMatchedByCase")
            else:
                index.unread_fields.add((entity_uuid, planned.name))
            ours = planned.entity in index.owned and (found is None or ctx.owner in found.owners)
            if ours:
                owned.add(f"{planned.entity}.{planned.name}")
            edited = ours and found is not None and _description_edited(planned, found, replace)
            if edited:
                ctx.report.count("fieldDescriptionsKeptUserEdited")
            retyped = ours and found is not None and found.type_edited
            if retyped:
                ctx.report.count("fieldTypesKeptRetyped")
            row = field_row(
                planned,
                entity_uuid,
                found,
                owned=ours,
                owner=ctx.owner,
                keep_description=edited,
                keep_type=retyped,
                name=name,
            )
            yield f"{planned.entity}.{planned.name}", row


def _by_entity(stored: dict[tuple[str, str], StoredField]) -> dict[str, dict[str, StoredField]]:
    """The stored fields, entity by entity: a planned field is matched among its entity's."""
    by_entity: dict[str, dict[str, StoredField]] = defaultdict(dict)
    for (entity_uuid, name), found in stored.items():
        by_entity[entity_uuid][name] = found
    return by_entity


def _ambiguous(ctx: SyncContext, planned: PlannedField, variants: tuple[str, ...]) -> None:
    """Two or more stored fields spelt as ``planned`` but for case, none exactly: none is
    chosen, none created beside them (``CASE_AMBIGUOUS``)."""
    ctx.report.gap(
        GapCode.CASE_AMBIGUOUS, f"{planned.entity}.{planned.name}: held as {', '.join(variants)}"
    )


def _description_edited(planned: PlannedField, stored: StoredField, replace: bool) -> bool:
    """Whether the stored description of a field the job wrote is a person's edit, to keep: it
    no longer hashes to the stamp, or (written before the stamp) differs from the planned one.
    The entities' rule (``entities._description_edited``), for fields."""
    wanted = (planned.description or "").strip()
    if replace or not wanted or not stored.has_description:
        return False
    if stored.unstamped_description is not None:
        return stored.unstamped_description != text_hash(wanted)
    return stored.description_edited


def field_row(
    planned: PlannedField,
    entity_uuid: str,
    stored: StoredField | None,
    *,
    owned: bool,
    owner: str | None = None,
    keep_description: bool = False,
    keep_type: bool = False,
    name: str | None = None,
) -> PhysicalField:
    """The upload row: all of it on a field this job owns (``owned``: new on an entity it
    created, or stamped by it), additions only otherwise. ``keep_description``: a person edited
    the stored one; neither it nor the stamp of the job's own is sent, so both stay.
    ``keep_type``: a crawler or a person retyped it since the job wrote it
    (``openLineageFieldType``); the same. ``name``: the stored field's, where it is stored in
    another case than planned (it is refreshed, never renamed nor written beside).

    A field this definition owns carries ``openLineageOwner``: cleanup tells the fields it wrote
    from those a crawler or a person added to the entity since, which keep the entity
    (``ownership.py``) and are never stamped, retyped or removed.
    """
    kept = stored if stored is not None and not owned else None
    description = None if keep_description else (planned.description or "").strip() or None
    type_ = None if keep_type or (kept and kept.has_type) else planned.type
    return PhysicalField(
        physical_entity=PhysicalEntityRef(uuid=entity_uuid),
        name=name or planned.name,
        type=type_,
        ordinal_position=None if kept and kept.has_position else planned.ordinal_position,
        description=None if kept and kept.has_description else description,
        additional_properties=(
            AdditionalProperty.many(
                [(OWNER_PROPERTY, owner)]
                + ([(DESCRIPTION_HASH_PROPERTY, text_hash(description))] if description else [])
                + _type_stamp(type_, new=stored is None)
            )
            if owned and owner
            else None
        ),
    )


def _type_stamp(type_: str | None, *, new: bool) -> list[tuple[str, str]]:
    """The ``openLineageFieldType`` of a row of the job's own field: the type it writes, or
    ``UNTYPED`` for a field it creates without one; none when it sends no type to a field it
    wrote before (the stamp there stays)."""
    if type_:
        return [(TYPE_PROPERTY, type_)]
    return [(TYPE_PROPERTY, UNTYPED)] if new else []


def read_back_fields(ctx: SyncContext, index: CatalogIndex, wanted: set[tuple[str, str]]) -> None:
    """Find the uuids of the fields flows need that are not known yet, in bulk.

    Those this run wrote without reading, and those of entities whose fields it did not read:
    a column flow between crawled fields that the events name without a schema facet (seed 001:
    ``FIELD_NOT_CATALOGUED`` is decided without Blindata only on Systems OpenLineage created).
    Fields are listed entity by entity, or the whole System past ``lookup_limit`` entities:
    never one request per field.
    """
    missing = {
        pair
        for pair in wanted
        if pair not in index.fields
        and (pair in index.unread_fields or pair[0] not in index.read_entities)
    }
    by_system: dict[str, set[str]] = defaultdict(set)
    for entity_uuid, _ in missing:
        by_system[index.entity_system[entity_uuid]].add(entity_uuid)
    for system_uuid, entity_uuids in sorted(by_system.items()):
        try:
            stored = existing_fields(ctx, system_uuid, sorted(entity_uuids))
        except BlindataError as exc:
            ctx.report.fail(KIND, f"fields of System {system_uuid}", f"not read back: {exc}")
            continue
        index.read_entities.update(entity_uuids)
        for (entity_uuid, name), found in stored.items():
            index.fields[(entity_uuid, name)] = found.uuid
        if crawled := sum(
            1
            for pair in missing
            if pair[0] in entity_uuids and pair in index.fields and pair not in index.unread_fields
        ):
            ctx.report.count("flowFieldsFoundInCatalog", crawled)
    _match_missing(ctx, index, wanted)


def _match_missing(ctx: SyncContext, index: CatalogIndex, wanted: set[tuple[str, str]]) -> None:
    """The fields flows name that are not stored as spelt, matched in case where their platform
    names columns without case (``lookup.match_field``): a column lineage facet names columns
    as the SQL writes them (``id``), the crawler as the table holds them (``Id``)."""
    unmatched = sorted(p for p in wanted if p not in index.fields and p[0] in index.read_entities)
    if not unmatched:
        return
    stored: dict[str, dict[str, str]] = defaultdict(dict)
    for (entity_uuid, name), uuid in index.fields.items():
        if (entity_uuid, name) not in index.spellings:
            stored[entity_uuid][name] = uuid
    keys = {uuid: key for key, uuid in index.entities.items()}
    for entity_uuid, name in unmatched:
        matched = match_field(stored.get(entity_uuid, {}), name, index.column_rule(entity_uuid))
        if isinstance(matched, Match):
            if matched.variants:
                ctx.report.gap(
                    GapCode.CASE_AMBIGUOUS,
                    f"{keys.get(entity_uuid, entity_uuid)}.{name}: held as "
                    + ", ".join(matched.variants),
                )
            continue
        index.adopt_field(entity_uuid, name, matched[0], matched[1])
        ctx.report.count("fieldsMatchedByCase")
