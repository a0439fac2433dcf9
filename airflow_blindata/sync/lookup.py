"""Reading what Blindata already holds of the objects a plan describes.

The sync must know, before it writes, whether an entity or a field exists and what it holds: that
decides what may be created (``entityCreation``) and what must not be touched (a crawled field's
type, another job's description). Two ways to read, chosen per System by how many objects the
plan describes there (``SyncContext.lookup_limit``): one request per object, or the whole System
page by page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from airflow_blindata.blindata.models import PhysicalEntity, PhysicalField
from airflow_blindata.mapper.documentation import documentation_hash as text_hash
from airflow_blindata.mapper.documentation import is_stamped
from airflow_blindata.mapper.identity import same_but_case
from airflow_blindata.mapper.plan import EntityKey
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.properties import (
    DESCRIPTION_HASH_PROPERTY,
    OWNER_PROPERTY,
    retyped,
    values_of,
)

__all__ = [
    "EntityRef",
    "Match",
    "StoredField",
    "entity_ref",
    "existing_entities",
    "existing_fields",
    "fold_index",
    "match_entity",
    "match_field",
]

T = TypeVar("T")

EntityRef = tuple[str, str]
"""An entity within its System: (schema or "", name), the natural key Blindata uses."""


@dataclass(frozen=True, slots=True)
class StoredField:
    """What the sync needs of an existing field: its uuid and which attributes it has.

    A few bytes instead of a whole wire model: a System can hold hundreds of thousands of fields.
    """

    uuid: str
    has_type: bool
    has_position: bool
    has_description: bool
    owners: tuple[str, ...] = ()
    """Its ``openLineageOwner`` values: the definitions that wrote it on an entity they created."""
    description_edited: bool = False
    """Its description no longer hashes to the ``openLineageDescriptionHash`` the job stamped:
    a person edited it in Blindata."""
    unstamped_description: str | None = None
    """The hash of its description when no hash was stamped (a field written before the stamp
    existed): whether a person edited it is told by comparing it with the planned one."""
    type_edited: bool = False
    """Its type is no longer the one the job stamped (``openLineageFieldType``): a crawler or a
    person retyped it, and it is kept. A field stamped before the type was has no say."""

    @classmethod
    def of(cls, stored: PhysicalField) -> StoredField:
        properties = stored.additional_properties
        owners = tuple(values_of(properties, OWNER_PROPERTY))
        description = (stored.description or "").strip()
        edited, unstamped = False, None
        if owners and description:  # the hash protects a job's own fields only: hashed only there
            stamps = values_of(properties, DESCRIPTION_HASH_PROPERTY)
            if stamps:
                edited = not is_stamped(description, stamps)
            else:
                unstamped = text_hash(description)
        return cls(
            uuid=stored.uuid or "",
            has_type=bool(stored.type),
            has_position=stored.ordinal_position is not None,
            has_description=bool(description),
            owners=owners,
            description_edited=edited,
            unstamped_description=unstamped,
            type_edited=bool(owners) and retyped(stored.type, properties),
        )


def entity_ref(key: EntityKey) -> EntityRef:
    return (key.schema_ or "", key.name)


def _ref_of(entity: PhysicalEntity) -> EntityRef:
    return (entity.schema_ or "", entity.name)


@dataclass(frozen=True, slots=True)
class Match(Generic[T]):
    """What the System stores of a planned name: ``found`` (spelt as planned, else the only one
    spelt so but for case, where its platform names it without case), or ``None`` with the
    ``variants`` that made the choice ambiguous (two or more case variants, none exact)."""

    found: T | None
    variants: tuple[str, ...] = ()
    planned: EntityRef = ("", "")
    """The planned entity's (schema, name), as it was looked up."""


def _entity_alike(planned: EntityRef, stored: EntityRef, rule: str | None) -> bool:
    return same_but_case(planned[0], stored[0], rule) and same_but_case(planned[1], stored[1], rule)


def _folded(ref: EntityRef) -> EntityRef:
    return (ref[0].casefold(), ref[1].casefold())


FoldIndex = dict[EntityRef, list[EntityRef]]
"""Stored entities by their (schema, name) without case: what each rule may match is among
those of the planned name's fold, found at once (a scan of every stored entity for each
planned one took minutes on a System of 10,000 tables: a review)."""


def fold_index(refs: Iterable[EntityRef]) -> FoldIndex:
    """The ``FoldIndex`` of stored entities, for ``match_entity``."""
    index: FoldIndex = defaultdict(list)
    for ref in refs:
        index[_folded(ref)].append(ref)
    return index


def match_entity(
    stored: Mapping[EntityRef, T],
    planned: EntityRef,
    rule: str | None,
    folds: FoldIndex | None = None,
) -> Match[T]:
    """The stored entity a planned one names (``Match``): an exact one wins; otherwise, where
    the platform's tables are named without case (``rule``, ``identity.CaseMatching``), the
    only one that differs in case alone; two or more of them: none (seed 000, "lineage
    connects to what you already catalog": never a guess, nor a third spelling beside them).
    ``folds``: ``fold_index(stored)``, built once for many planned entities."""
    exact = stored.get(planned)
    if exact is not None or rule is None:
        return Match(exact, planned=planned)
    candidates = (folds if folds is not None else fold_index(stored)).get(_folded(planned), [])
    alike = sorted(
        ref for ref in candidates if ref != planned and _entity_alike(planned, ref, rule)
    )
    if len(alike) == 1:
        return Match(stored[alike[0]], planned=planned)
    variants = tuple(".".join(part for part in ref if part) for ref in alike)
    return Match(None, variants, planned=planned)


def match_field(
    stored: Mapping[str, T], planned: str, rule: str | None
) -> tuple[str, T] | Match[T]:
    """``match_entity`` for a field among the stored fields of its entity, by name: the stored
    name and what is stored, or a ``Match`` with nothing found (and the ambiguous variants)."""
    exact = stored.get(planned)
    if exact is not None:
        return planned, exact
    if rule is None:
        return Match(None)
    alike = sorted(name for name in stored if same_but_case(planned, name, rule))
    if len(alike) == 1:
        return alike[0], stored[alike[0]]
    return Match(None, tuple(alike))


def existing_entities(
    ctx: SyncContext,
    system_uuid: str,
    keys: Sequence[EntityKey],
    *,
    owned: bool = False,
    matching: str | None = None,
) -> dict[EntityRef, PhysicalEntity]:
    """The entities among ``keys`` that exist on the System, by (schema, name); with a
    ``matching`` rule (``identity.CaseMatching.tables``) also those that differ from one of them
    in case only, for ``match_entity`` to choose from.

    A System this definition owns is listed whole: what it holds is what the job described;
    but not by a light sync, which describes a few of its objects (``SyncContext.light``).
    Looked up one by one, a key not found as spelt is searched again (``search``, which
    Blindata matches without case) where its platform names tables without case.
    """
    api = ctx.client.api.physical_entities
    wanted = {entity_ref(key) for key in keys}
    wanted_folds = fold_index(wanted)
    found: dict[EntityRef, PhysicalEntity] = {}

    def alike(ref: EntityRef) -> bool:
        return any(_entity_alike(key, ref, matching) for key in wanted_folds.get(_folded(ref), ()))

    if (owned and not ctx.light) or len(wanted) > ctx.lookup_limit:
        candidates: Iterable[PhysicalEntity] = api.list(
            page_size=LIST_PAGE_SIZE, systemUuid=system_uuid
        )
        for entity in candidates:
            ctx.progress.advance(0)  # a large System takes a while to read: stay visible
            ref = _ref_of(entity)
            if ref in wanted or (matching and alike(ref)):
                found[ref] = entity
        return found
    for schema, name in sorted(wanted):
        filters: dict[str, Any] = {"systemUuid": system_uuid, "name": name}
        if schema:
            filters["schema"] = schema
        for entity in api.list(**filters):
            if _ref_of(entity) == (schema, name):
                found[(schema, name)] = entity
                break
        else:
            if matching:
                search = f"{schema}.{name}" if schema else name
                for entity in api.list(
                    page_size=LIST_PAGE_SIZE, systemUuid=system_uuid, search=search
                ):
                    ref = _ref_of(entity)
                    if _entity_alike((schema, name), ref, matching):
                        found[ref] = entity
    return found


LIGHT_SCHEMA_LISTINGS = 5
"""A light sync reading the fields of more entities of a System than ``lookup_limit`` lists the
fields of their schemas, when they are in at most this many, rather than the whole System's."""


def existing_fields(
    ctx: SyncContext,
    system_uuid: str,
    entity_uuids: Sequence[str],
    *,
    owned: bool = False,
    schemas: Set[str | None] = frozenset(),
) -> dict[tuple[str, str], StoredField]:
    """The fields of the given entities of one System, by (entity uuid, field name).

    A System this definition owns is listed whole, as its entities are: what it holds is mostly
    what the job described. A light sync, which describes a few entities of a System, reads them
    entity by entity, or past ``lookup_limit`` entities the fields of their ``schemas`` (a part
    of the System's: the same answer for those entities) when they are few, else the System's.
    """
    api = ctx.client.api.physical_fields
    wanted = set(entity_uuids)
    found: dict[tuple[str, str], StoredField] = {}

    def keep(fields: Iterable[PhysicalField]) -> None:
        for stored in fields:
            ctx.progress.advance(0)
            owner = stored.physical_entity.uuid if stored.physical_entity else None
            if owner in wanted and stored.uuid:
                found[(owner, stored.name)] = StoredField.of(stored)

    by_schema = (
        ctx.light
        and len(wanted) > ctx.lookup_limit
        and 0 < len(schemas) <= LIGHT_SCHEMA_LISTINGS
        and all(schemas)
    )
    if by_schema:
        for schema in sorted(name for name in schemas if name):
            keep(
                api.list(
                    page_size=LIST_PAGE_SIZE, systemUuid=system_uuid, physicalEntitySchema=schema
                )
            )
    elif (owned and not ctx.light) or len(wanted) > ctx.lookup_limit:
        keep(api.list(page_size=LIST_PAGE_SIZE, systemUuid=system_uuid))
    else:
        # the verified systemUuid beside the inferred physicalEntityUuid: a server that does not
        # read the latter lists the fields of one System per entity, not of the whole tenant
        for uuid in sorted(wanted):
            keep(
                api.list(page_size=LIST_PAGE_SIZE, systemUuid=system_uuid, physicalEntityUuid=uuid)
            )
    return found
