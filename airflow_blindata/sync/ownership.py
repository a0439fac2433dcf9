"""What a job definition owns in Blindata, and which of it the last snapshot left stale.

Read-only: ``collect`` lists the owned objects (by the ``openLineageOwner`` stamp, flows by
scope) and splits them into what the snapshot refreshed and what it did not, holding back the
kinds it could not fully refresh and the scopes whose flows it could not all write. Before an
entity or a System goes, it reads what refers to it and keeps it when anything outside this
cleanup does (another scope's or a person's flow, a field this definition did not write, another
definition that still describes it, an entity or routine that stays, a person's text or property
on it, an entity a person moved to a System none of its snapshots used): counted and listed with
the reason (``Kept``). A removal counts what it takes with it (fields, statements), and so does
the share ``maxRemovalShare`` limits.

Why and the rules in full:
docs/removal-of-deprecated-metadata.md#how-syncownershippy-decides-what-stays
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from airflow_blindata.blindata import (
    BlindataError,
    BlindataNotFoundError,
    BlindataPermissionError,
)
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    DataFlow,
    Page,
    PhysicalEntity,
    PhysicalField,
    QualityCheck,
    QueryStatement,
    System,
    SystemRoutine,
    WireModel,
    format_timestamp,
)
from airflow_blindata.blindata.paths import ENDPOINTS
from airflow_blindata.mapper.documentation import is_stamped
from airflow_blindata.mapper.identity import shown_namespace
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB
from airflow_blindata.mapper.scopes import ORCHESTRATION_SUFFIX, clean_scope, job_scope
from airflow_blindata.mapper.systems import JOB_SYSTEM_NAME_PROPERTY
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.properties import (
    DATASET_PROPERTY,
    DESCRIBED_BY_PROPERTY,
    DESCRIPTION_HASH_PROPERTY,
    DOCUMENTATION_HASH_PROPERTY,
    DOCUMENTED_BY_PROPERTY,
    JOB_SCOPE_PROPERTY,
    OWNER_PROPERTY,
    STORE_PROPERTY,
    retyped,
    values_of,
)
from airflow_blindata.sync.quality import MONITOR_NAME
from airflow_blindata.sync.report import Ledger, RunReport

__all__ = ["Kept", "Removal", "collect", "entity_key", "person_wrote_on_system"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Kept:
    """A stale owned object that stays, and why."""

    kind: str
    key: str
    reason: str


@dataclass
class Removal:
    """The stale owned objects, and what the definition owns in all."""

    flows: list[DataFlow] = field(default_factory=list)
    routines: list[SystemRoutine] = field(default_factory=list)
    entities: list[PhysicalEntity] = field(default_factory=list)
    systems: list[System] = field(default_factory=list)
    fields: dict[str, list[str]] = field(default_factory=dict)
    """Entity uuid → the names of the fields that go with it."""
    statements: dict[str, list[str]] = field(default_factory=dict)
    """Routine uuid → the names of the statements (and their analysis) that go with it."""
    stale_fields: list[tuple[str, PhysicalField]] = field(default_factory=list)
    """(``schema.entity.field``, field): fields this definition wrote on an entity it still
    describes, that the last snapshot no longer described (a column dropped from the schema
    facet). They go alone."""
    kept: list[Kept] = field(default_factory=list)
    marks: list[PhysicalEntity] = field(default_factory=list)
    """Other definitions' entities that carry this definition's ``openLineageDescribedBy`` and
    that the last snapshot did not describe: the mark comes off (no object is removed)."""
    owned_total: int = 0
    watermark: datetime | None = None
    """The last snapshot's: an entity written since is no longer stale (``removal``)."""
    scopes: set[str] = field(default_factory=set)
    """Every scope known to be owned (the ledger, the snapshot's, the job entities')."""
    held_scopes: set[str] = field(default_factory=set)
    job_systems: list[str] = field(default_factory=list)
    entity_systems: list[str] = field(default_factory=list)
    """The Systems the definition's snapshots placed its entities in (``Ledger``): the ledger's,
    the last snapshot's and the Systems it owns."""
    foreign: list[str] = field(default_factory=list)
    """The stale job entities the sync of another event store wrote last (``STORE_PROPERTY``),
    as ``namespace/name``: the definition's uuid is shared by two deployments (``removal``)."""
    moved: int = 0
    """Of ``count``, the objects a job moved when its namespace lost its credentials (issue 42):
    each has its clean counterpart refreshed by the last snapshot (``_moved``)."""

    @property
    def count(self) -> int:
        """Every object the removal deletes, with what Blindata deletes along with them."""
        return (
            len(self.flows)
            + len(self.routines)
            + sum(len(self.statements.get(r.uuid or "", ())) for r in self.routines)
            + len(self.entities)
            + sum(len(self.fields.get(e.uuid or "", ())) for e in self.entities)
            + len(self.stale_fields)
            + len(self.systems)
        )


def entity_key(entity: PhysicalEntity) -> str:
    return f"{entity.schema_ or ''}.{entity.name}".lstrip(".")


def _alive(ctx: SyncContext, items: Iterable[T]) -> Iterator[T]:
    """``items``, counted on the progress line (which stays alive while a long listing is
    read)."""
    for item in items:
        ctx.progress.advance()
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
    removal = Removal(held_scopes=set(last.failed_scopes), watermark=watermark)
    hold_entities = bool(last.failed("system") or last.failed("entity"))
    hold_routines = bool(last.failed("system") or last.failed("routine"))

    ctx.progress.start("cleanup: read", None)
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
        for scope in _scopes_of(entity)
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

    job_systems = set(ledger.job_systems)
    job_systems.update(use.uuid for use in last.systems.values() if use.jobs)
    job_systems.update(s.uuid for s in systems if s.uuid)
    removal.job_systems = sorted(job_systems)
    placed = set(ledger.entity_systems or ()) | job_systems
    placed.update(use.uuid for use in last.systems.values())
    if ledger.entity_systems is None:
        # Not recorded yet (the first cleanup, or a ledger of a release before it): every System
        # that holds an entity this definition created counts as one it placed them in, so no
        # entity is judged moved and this cleanup removes as before; a dry run or a refused one
        # records the same complete list, and the next real run judges from it (a review: the
        # tables a namespaceMappings change left in the old System were kept as moved).
        placed.update(e.system.uuid for e in entities if e.system is not None and e.system.uuid)
    removal.entity_systems = sorted(placed)
    moves = _Moves(ctx, placed, entities, watermark)
    routines = [
        routine
        for uuid in removal.job_systems
        for routine in _alive(ctx, api.routines.list(page_size=LIST_PAGE_SIZE, systemUuid=uuid))
        if owner in values_of(routine.additional_properties, OWNER_PROPERTY)
    ]
    marked = _marked(ctx, owner)
    shared = _shared_jobs(owner, entities, marked)
    for entity, _ in shared:
        removal.held_scopes.update(_scopes_of(entity))
    shared_names = dict(((entity.schema_ or "", entity.name), others) for entity, others in shared)
    stale_routines = []
    for routine in routines:
        if not _stale(routine.modification_date, watermark):
            continue
        sharing = shared_names.get((routine.catalog or "", routine.name or ""))
        if sharing:
            removal.kept.append(
                Kept("routine", f"{routine.catalog}/{routine.name}", _shared_reason(sharing))
            )
        else:
            stale_routines.append(routine)
    if hold_routines:
        ctx.report.count("routinesHeldBack", len(stale_routines))
    else:
        removal.routines = stale_routines
    statements = _statements(ctx, routines)
    removal.statements = {
        r.uuid or "": [s.name or s.uuid or "" for s in statements.get(r.uuid or "", [])]
        for r in removal.routines
    }

    removal.scopes = set(ledger.scopes) | set(last.scopes) | job_scopes
    removal.flows = _stale_flows(ctx, removal.scopes - removal.held_scopes, watermark)
    outside = _Outside(
        removing={flow.uuid for flow in removal.flows if flow.uuid},
        analysed={
            statement.uuid
            for routine in removal.routines
            for statement in statements.get(routine.uuid or "", [])
            if statement.uuid
        },
    )
    stale_fields = 0
    fresh_fields: int | None = None
    if not hold_entities:
        references = _entity_references(ctx, stale_entities)
        watchers = _Watchers(ctx)
        for entity in stale_entities:
            found = references.get(entity.uuid or "", _References())
            stale_fields += len(found.fields)
            reason = (
                moves.reason(entity)
                or _entity_reason(entity, found, outside, owner)
                or _person_edits(ctx, entity)
                or watchers.reason(entity, found.fields)
            )
            if reason:
                removal.kept.append(Kept("entity", entity_key(entity), reason))
            else:
                removal.entities.append(entity)
                removal.fields[entity.uuid or ""] = sorted(f.name for f in found.fields)
        candidates = [s for s in systems if s.uuid not in used]
        for system in candidates:
            reason = _system_reason(ctx, system, removal, outside)
            if reason:
                removal.kept.append(Kept("system", system.name, reason))
            else:
                removal.systems.append(system)
        # the entities it marks that its last snapshot did not refresh (it uploads every entity
        # it describes): it no longer describes them
        removal.marks = [
            entity
            for entity in (*marked, *_documented(ctx, owner, marked))
            if _stale(entity.modification_date, watermark)
        ]
        if not last.failed("field"):
            fresh = [e for e in entities if not _stale(e.modification_date, watermark)]
            fresh_fields = _collect_stale_fields(ctx, removal, fresh, outside, watermark)

    # Of what it would remove, what another store's sync wrote: the entities and routines it
    # removes, and the stale jobs (kept or held back too) whose flows it removes; a job's routine
    # says so too (``processLayer: false`` makes no job entity). A kept table blocks nothing: a
    # review found a table a person described, stamped by a store this one replaced, refusing
    # every cleanup after the forced one; a kept job whose flows went with that one neither.
    removing_scopes = {flow.scope for flow in removal.flows if flow.scope}
    removal.foreign = _foreign(
        [
            *(
                (f"{entity.schema_ or ''}/{entity.name}", entity.additional_properties)
                for entity in removal.entities
            ),
            *(
                (f"{entity.schema_ or ''}/{entity.name}", entity.additional_properties)
                for entity in stale_entities
                if entity.table_type == OPENLINEAGE_JOB
                and removing_scopes.intersection(_scopes_of(entity))
            ),
            *((f"{r.catalog or ''}/{r.name}", r.additional_properties) for r in removal.routines),
        ],
        ctx.store_id,
    )
    removal.moved = _moved(removal, entities, routines, last, watermark)
    flows_total = last.counters.get("flowsDescribed", 0) + len(removal.flows)
    if fresh_fields is None:  # not read: what the last snapshot wrote
        fresh_fields = last.counters.get("fieldsOwned", 0) + len(removal.stale_fields)
    fields_total = stale_fields + fresh_fields
    statements_total = sum(len(statements.get(r.uuid or "", [])) for r in routines)
    removal.owned_total = (
        len(entities) + fields_total + len(systems) + len(routines) + statements_total + flows_total
    )
    # The read line ends on what the definition owns (``ownedObjects``), not on ``0/0``.
    ctx.progress.end(removal.owned_total)
    return removal


def _moved(
    removal: Removal,
    entities: list[PhysicalEntity],
    routines: list[SystemRoutine],
    last: RunReport,
    watermark: datetime,
) -> int:
    """The objects of ``removal`` that moved rather than went: written before job namespaces
    were cleaned (issue 42), with their clean counterpart refreshed by the last snapshot — a
    flow whose scope, cleaned, it wrote; a job entity or routine whose namespace, cleaned, names
    one it refreshed (with the fields and statements that go along). A job whose scope held a
    password moves all its objects at once: replaced, not lost, they are not weighed against
    ``maxRemovalShare``."""
    written = set(last.scopes)
    moved = sum(
        1
        for flow in removal.flows
        if flow.scope
        and clean_scope(flow.scope) != flow.scope
        and clean_scope(flow.scope) in written
    )
    fresh = {
        (_uuid(e.system), e.schema_, e.name)
        for e in entities
        if not _stale(e.modification_date, watermark)
    }
    for entity in removal.entities:
        schema = entity.schema_ or ""
        clean = shown_namespace(schema)
        if clean != schema and (_uuid(entity.system), clean, entity.name) in fresh:
            moved += 1 + len(removal.fields.get(entity.uuid or "", ()))
    refreshed = {
        (_uuid(r.system), r.catalog, r.schema_, r.name)
        for r in routines
        if not _stale(r.modification_date, watermark)
    }
    for routine in removal.routines:
        catalog, schema = routine.catalog or "", routine.schema_ or ""
        cleaned = (shown_namespace(catalog), shown_namespace(schema))
        key = (_uuid(routine.system), *cleaned, routine.name)
        if cleaned != (catalog, schema) and key in refreshed:
            moved += 1 + len(removal.statements.get(routine.uuid or "", ()))
    return moved


class _Moves:
    """The stale entities this definition created that a person moved to another System: one
    none of its snapshots placed an entity in (``Ledger.entity_systems``; a System a namespace
    was mapped to before its mapping changed was one). The move is a person's work on it, as a
    description is: the entity stays, with where it went and, when the last snapshot described
    its dataset again where the job places it, where that is."""

    def __init__(
        self,
        ctx: SyncContext,
        placed: set[str],
        entities: list[PhysicalEntity],
        watermark: datetime,
    ) -> None:
        self._ctx = ctx
        self._placed = {uuid.lower() for uuid in placed}
        self._names: dict[str, str] = {}
        self._described: dict[str, str] = {}
        """``openLineageDataset`` → the System of the entity the last snapshot wrote for it."""
        for entity in entities:
            if _stale(entity.modification_date, watermark):
                continue
            for dataset in values_of(entity.additional_properties, DATASET_PROPERTY):
                self._described.setdefault(dataset, _uuid(entity.system) or "")

    def reason(self, entity: PhysicalEntity) -> str | None:
        system = _uuid(entity.system)
        if system is None or system in self._placed:
            return None
        reason = f"a person moved it to the System {self._name(system)}"
        again = {
            where
            for dataset in values_of(entity.additional_properties, DATASET_PROPERTY)
            if (where := self._described.get(dataset)) and where != system
        }
        if again:
            shown = ", ".join(self._name(uuid) for uuid in sorted(again))
            reason += f" (the job describes its dataset in {shown})"
        return reason

    def _name(self, uuid: str) -> str:
        if uuid not in self._names:
            try:
                self._names[uuid] = self._ctx.client.api.systems.get(uuid).name
            except BlindataError:
                self._names[uuid] = uuid
        return self._names[uuid]


def _uuid(ref: Any) -> str | None:
    uuid = getattr(ref, "uuid", None)
    return uuid.lower() if isinstance(uuid, str) else None


def _foreign(
    jobs: Iterable[tuple[str, list[AdditionalProperty] | None]], store_id: str | None
) -> list[str]:
    """Of stale owned entities (tables and jobs) and routines, each as its name and its
    properties, those whose last writer was the sync of another event store than ``store_id``
    (one written before the stamp existed counts as this store's)."""
    if store_id is None:
        return []
    return sorted(
        {
            name
            for name, properties in jobs
            if (stamps := values_of(properties, STORE_PROPERTY)) and store_id not in stamps
        }
    )


def _scopes_of(entity: PhysicalEntity) -> Iterator[str]:
    """Every scope of a job entity: those of each ``openLineageJobScope`` it carries."""
    for base in values_of(entity.additional_properties, JOB_SCOPE_PROPERTY):
        yield from _job_scopes(entity, base)


def _job_scopes(entity: PhysicalEntity, base: str) -> tuple[str, ...]:
    """The data and orchestration scopes of the job entity whose ``openLineageJobScope`` is
    ``base``. A scope past the length limit is shortened with a hash of the whole scope, suffix
    included, so the orchestration scope of a long job name is not ``base`` plus the suffix: it
    is computed again from the entity's schema and name (the job's namespace and name)."""
    scopes: tuple[str, ...] = (base, base + ORCHESTRATION_SUFFIX)
    namespace, name = entity.schema_ or "", entity.name
    if job_scope(namespace, name) == base:
        scopes += (job_scope(namespace, name, orchestration=True),)
    return scopes


# -- what refers to an entity or a System -------------------------------------------------------


@dataclass
class _References:
    """What refers to one entity: its fields, and the flows that end on it, by uuid."""

    fields: list[PhysicalField] = field(default_factory=list)
    flows: dict[str, DataFlow] = field(default_factory=dict)


@dataclass(frozen=True)
class _Outside:
    """Tells a flow this cleanup removes (with a scope, or with a routine) from any other."""

    removing: set[str]
    """uuids of the flows of the definition's scopes this cleanup removes."""
    analysed: set[str]
    """uuids of the statements of the routines this cleanup removes: their flows go with them."""

    def __call__(self, flow: DataFlow) -> bool:
        if flow.uuid in self.removing:
            return False
        statement = flow.query_statement.uuid if flow.query_statement else None
        return statement is None or statement not in self.analysed


def _statements(ctx: SyncContext, routines: list[SystemRoutine]) -> dict[str, list[QueryStatement]]:
    """Routine uuid → its statements in the definition's query bucket.

    A user without the query parser's permission reads none (``statementsUnread``): the flows of
    their analysis then count as references from outside, which keeps the entities they end on.
    """
    if not routines:
        return {}
    api = ctx.client.api
    name = ctx.definition.query_bucket_name
    found: dict[str, list[QueryStatement]] = defaultdict(list)
    try:
        bucket = next((b for b in api.query_buckets.list(name=name) if b.name == name), None)
        if bucket is None or not bucket.uuid:
            return {}
        for statement in _alive(
            ctx, api.statements.list(page_size=LIST_PAGE_SIZE, bucketUuid=bucket.uuid)
        ):
            if statement.routine and statement.routine.uuid:
                found[statement.routine.uuid].append(statement)
    except BlindataPermissionError:
        ctx.report.count("statementsUnread")
        return {}
    return found


def _entity_references(
    ctx: SyncContext, entities: list[PhysicalEntity], *, flows: bool = True
) -> dict[str, _References]:
    """The fields and (with ``flows``) the flows of each entity, read the cheaper way for each
    System: entity by entity (three requests each), or the whole System's fields and flows past
    ``lookup_limit`` entities."""
    api = ctx.client.api
    by_system: dict[str, set[str]] = defaultdict(set)
    for entity in entities:
        if entity.uuid:
            by_system[entity.system.uuid if entity.system else ""].add(entity.uuid)
    found: dict[str, _References] = defaultdict(_References)
    for system_uuid, uuids in sorted(by_system.items()):
        field_listings: list[Iterable[PhysicalField]]
        flow_listings: list[Iterable[DataFlow]]
        if system_uuid and len(uuids) > ctx.lookup_limit:
            field_listings = [
                api.physical_fields.list(page_size=LIST_PAGE_SIZE, systemUuid=system_uuid)
            ]
            flow_listings = [
                api.dataflows.list(page_size=LIST_PAGE_SIZE, **{side: system_uuid})
                for side in ("fromSystemUuid", "toSystemUuid")
            ]
        else:
            in_system = {"systemUuid": system_uuid} if system_uuid else {}  # the verified filter
            field_listings = [
                api.physical_fields.list(
                    page_size=LIST_PAGE_SIZE, physicalEntityUuid=uuid, **in_system
                )
                for uuid in sorted(uuids)
            ]
            flow_listings = [
                api.dataflows.list(page_size=LIST_PAGE_SIZE, **{side: uuid})
                for uuid in sorted(uuids)
                for side in ("fromPhysicalEntityUuid", "toPhysicalEntityUuid")
            ]
        for stored in _alive(ctx, (f for listing in field_listings for f in listing)):
            entity_uuid = stored.physical_entity.uuid if stored.physical_entity else None
            if entity_uuid in uuids:
                found[entity_uuid].fields.append(stored)
        if not flows:
            continue
        for flow in _alive(ctx, (f for listing in flow_listings for f in listing)):
            for end in (flow.from_physical_entity, flow.to_physical_entity):
                if end is not None and end.uuid in uuids and flow.uuid:
                    found[end.uuid].flows[flow.uuid] = flow
    return found


def _collect_stale_fields(
    ctx: SyncContext,
    removal: Removal,
    entities: list[PhysicalEntity],
    outside: _Outside,
    watermark: datetime,
) -> int:
    """The fields this definition wrote on the owned entities it still describes, that its last
    snapshot no longer described: a column dropped from the schema facet. Returns how many
    fields of those entities it owns, what a removal is weighed against (the last snapshot's
    ``fieldsOwned`` leaves out those of a table described without a schema: a probe of what the
    admin sees found a cleanup refused at 20 % that was 7 %).

    Only where the snapshot still described some field of the entity: an entity described with
    no schema at all proves nothing about its columns. A field that a flow of other owners ends
    on stays (Blindata deletes a field's column flows with it), listed with the reason.
    """
    owner = ctx.owner
    found = _entity_references(ctx, entities, flows=False)
    stale: dict[str, list[PhysicalField]] = {}
    owned = 0
    for entity_uuid, references in found.items():
        ours = [
            f
            for f in references.fields
            if owner in values_of(f.additional_properties, OWNER_PROPERTY)
        ]
        owned += len(ours)
        gone = [f for f in ours if _stale(f.modification_date, watermark)]
        if gone and len(gone) < len(ours):
            stale[entity_uuid] = gone
    if not stale:
        return owned
    by_uuid = {entity.uuid: entity for entity in entities if entity.uuid in stale}
    flows = _entity_references(ctx, list(by_uuid.values()))
    for entity_uuid, gone in sorted(stale.items()):
        entity = by_uuid[entity_uuid]
        key = entity_key(entity)
        describers = sorted(
            set(values_of(entity.additional_properties, DESCRIBED_BY_PROPERTY)) - {owner}
        )
        ending = [
            flow for flow in flows.get(entity_uuid, _References()).flows.values() if outside(flow)
        ]
        for stored in sorted(gone, key=lambda f: f.name):
            on_it = [flow for flow in ending if stored.uuid and stored.uuid in _field_ends(flow)]
            if on_it:
                reason: str | None = _flows_reason(on_it)
            elif describers:  # it may list the column: only it knows, the stamp is this one's
                reason = f"its table is still described by job definition {_few(describers)}"
            else:
                reason = _person_described(
                    stored.description, stored.additional_properties, field_type=stored.type
                )
            if reason:
                removal.kept.append(Kept("field", f"{key}.{stored.name}", reason))
            else:
                removal.stale_fields.append((f"{key}.{stored.name}", stored))
    return owned


def _person_described(
    description: str | None,
    properties: Iterable[AdditionalProperty] | None,
    *,
    job: bool = False,
    field_type: str | None = None,
) -> str | None:
    """Whether a person (or a crawler) wrote on an entity or a field: a description that is not
    the text the job stamped, a field's type that is not the one it stamped (``field_type``, the
    stored one: a crawler crawled the table), or an additional property no definition writes
    (``_added_properties``). Removing it would delete that work with it (a probe of cleanups: a
    steward's ``retention=7y`` on a table the job created, and a crawler's ``rowCount`` on one it
    crawled since, went with the table)."""
    text = (description or "").strip()
    if text and not is_stamped(text, values_of(properties, DESCRIPTION_HASH_PROPERTY)):
        return "a person wrote its description"
    if retyped(field_type, properties):
        return "a crawler or a person retyped it"
    added = _added_properties(properties, job=job)
    if added:
        return f"a person or a crawler added {_many(len(added), 'property')} ({_few(added)})"
    return None


def _added_properties(
    properties: Iterable[AdditionalProperty] | None, *, job: bool = False
) -> list[str]:
    """The names of the additional properties no definition writes: a definition writes its own
    as ``openLineage…``, and on a job entity (``job``) a producer's facet fields as
    ``<facet>.<field>``; a steward's ``gdpr.retention`` on a table is theirs (a review)."""
    return sorted(
        {
            name
            for item in properties or ()
            if (name := (item.name or "").strip())
            and not name.startswith("openLineage")
            and not (job and "." in name)
        }
    )


def _entity_reason(
    entity: PhysicalEntity, found: _References, outside: _Outside, owner: str
) -> str | None:
    """Why the entity must stay, or ``None`` when nothing outside this cleanup refers to it."""
    reasons: list[str] = []
    flows = [flow for flow in found.flows.values() if outside(flow)]
    if flows:
        reasons.append(_flows_reason(flows))
    others = sorted(
        f.name
        for f in found.fields
        if owner not in values_of(f.additional_properties, OWNER_PROPERTY)
    )
    if others:
        reasons.append(f"{_many(len(others), 'field')} it did not create ({_few(others)})")
    edited = sorted(
        f.name
        for f in found.fields
        if owner in values_of(f.additional_properties, OWNER_PROPERTY)
        and _person_described(f.description, f.additional_properties, field_type=f.type)
    )
    if edited:  # deleting the table would delete a person's description of a column with it
        reasons.append(
            f"a person or a crawler wrote on {_many(len(edited), 'field')} ({_few(edited)})"
        )
    describers = sorted(
        set(values_of(entity.additional_properties, DESCRIBED_BY_PROPERTY)) - {owner}
    )
    if describers:
        reasons.append(f"still described by job definition {_few(describers)}")
    return "; ".join(reasons) or None


def _person_edits(ctx: SyncContext, entity: PhysicalEntity) -> str | None:
    """Whether a person wrote on the entity: a description or a document that is not the text
    the job stamped. Removing the entity would delete that work with it, so it stays (reported),
    for a person to remove; asked last, as reading the document costs a request."""
    described = _person_described(
        entity.description, entity.additional_properties, job=entity.table_type == OPENLINEAGE_JOB
    )
    if described:
        return described
    try:
        document = ctx.client.api.physical_entities.get_documentation(entity.uuid or "")
    except BlindataError as exc:
        return f"its documentation could not be read ({exc})"
    if document is None:
        return None
    if not is_stamped(document.content or "", [entity.property(DOCUMENTATION_HASH_PROPERTY)]):
        return "a person wrote its documentation"
    return None


class _Watchers:
    """The quality checks that are not this definition's and the profiling monitors other than
    the OpenLineage one that refer to a stale entity or its fields: Blindata unlinks a check
    from a deleted entity or field, and deletes a monitor with its history, a person's or
    another tool's work. Every check and every monitor is listed once per cleanup, when a stale
    entity is first about to go; where a listing leaves out what an item refers to, the items
    of each entity are listed by its uuid instead (taken at the filter's word). A list this user
    may not read (403), or a Blindata without it (404), is no work of theirs it can see:
    nothing; a list that cannot be read otherwise keeps the entity."""

    def __init__(self, ctx: SyncContext) -> None:
        self._ctx = ctx
        self._checks: dict[str, list[str]] | None = None
        self._monitors: dict[str, list[str]] = defaultdict(list)
        self._checks_whole = self._monitors_whole = True
        self._problem: str | None = None

    def reason(self, entity: PhysicalEntity, fields: Iterable[PhysicalField]) -> str | None:
        if self._checks is None:
            self._checks = defaultdict(list)
            self._read()
        if self._problem:
            return self._problem
        uuid = _uuid(entity) or ""
        uuids = {uuid} | {_uuid(f) or "" for f in fields}
        codes = {code for each in uuids for code in self._checks.get(each, ())}
        monitors = set(self._monitors.get(uuid, ()))
        api = self._ctx.client.api
        try:
            if not self._checks_whole:
                listed = api.quality_checks.list(page_size=LIST_PAGE_SIZE, physicalEntityUuid=uuid)
                codes.update(
                    check.code
                    for check in _unless_forbidden(listed)
                    if not self._ours(check)
                    and (
                        check.physical_entities is None
                        or uuid in map(_uuid, check.physical_entities)
                    )
                )
            if not self._monitors_whole:
                listed_monitors = api.profiling_monitors.list(
                    page_size=LIST_PAGE_SIZE, physicalEntityUuid=uuid
                )
                monitors.update(
                    monitor.name
                    for monitor in _unless_forbidden(listed_monitors)
                    if monitor.name != MONITOR_NAME
                    and (monitor.physical_entity is None or _uuid(monitor.physical_entity) == uuid)
                )
        except BlindataError as exc:
            return f"what refers to it could not be read ({exc})"
        if codes:
            return f"the quality check {_few(sorted(codes))} refers to it"
        if monitors:
            named = _few(sorted(monitors))
            return f"the profiling monitor {named} watches it (its history would go with it)"
        return None

    def _ours(self, check: QualityCheck) -> bool:
        """This definition's check (``ol:`` ones written before the owner stamp too)."""
        owners = values_of(check.additional_properties, OWNER_PROPERTY)
        return self._ctx.definition.uuid in owners or (not owners and check.code.startswith("ol:"))

    def _read(self) -> None:
        api = self._ctx.client.api
        assert self._checks is not None
        try:
            for check in _unless_forbidden(api.quality_checks.list(page_size=LIST_PAGE_SIZE)):
                if self._ours(check):
                    continue
                if check.physical_entities is None:
                    self._checks_whole = False  # a summary: each entity's listed by its uuid
                for ref in (*(check.physical_entities or ()), *(check.physical_fields or ())):
                    if (uuid := _uuid(ref)) is not None:
                        self._checks[uuid].append(check.code)
            for monitor in _unless_forbidden(api.profiling_monitors.list(page_size=LIST_PAGE_SIZE)):
                if monitor.name == MONITOR_NAME:
                    continue
                if monitor.physical_entity is None:
                    self._monitors_whole = False
                elif (entity := _uuid(monitor.physical_entity)) is not None:
                    self._monitors[entity].append(monitor.name)
        except BlindataError as exc:
            self._problem = f"what refers to the stale entities could not be read ({exc})"


def _unless_forbidden(listing: Iterator[T]) -> Iterator[T]:
    """``listing``, or nothing where the user may not read it (403) or Blindata has no such
    list (404)."""
    try:
        yield from listing
    except (BlindataPermissionError, BlindataNotFoundError):
        return


def _field_ends(flow: DataFlow) -> tuple[str | None, str | None]:
    return (
        flow.from_physical_field.uuid if flow.from_physical_field else None,
        flow.to_physical_field.uuid if flow.to_physical_field else None,
    )


def _system_reason(
    ctx: SyncContext, system: System, removal: Removal, outside: _Outside
) -> str | None:
    """Why an owned System no longer used must stay: what it holds or what refers to it, beyond
    what this cleanup removes."""
    uuid = system.uuid or ""
    api = ctx.client.api
    reasons: list[str] = []
    # read whole, as the removal reads it again before the delete: a listing may leave out the
    # description, and a dry run must say what the cleanup does (a review)
    whole = ctx.as_stored(api.systems, system, "system", system.name)
    written = "it could not be read" if whole is None else person_wrote_on_system(whole)
    if written:
        reasons.append(written)
    removed_here = sum(1 for e in removal.entities if e.system and e.system.uuid == uuid)
    entities = _total(ctx, "physical_entities.list", systemUuid=uuid)
    if entities > removed_here:
        reasons.append(f"holds {_many(entities - removed_here, 'entity')} it does not remove")
    routines_here = sum(1 for r in removal.routines if r.system and r.system.uuid == uuid)
    routines = _total(ctx, "routines.list", systemUuid=uuid)
    if routines > routines_here:
        reasons.append(f"holds {_many(routines - routines_here, 'routine')} it does not remove")
    flows: dict[str, DataFlow] = {}
    for side in ("fromSystemUuid", "toSystemUuid"):
        for flow in _alive(ctx, api.dataflows.list(page_size=LIST_PAGE_SIZE, **{side: uuid})):
            if flow.uuid and outside(flow):
                flows[flow.uuid] = flow
    if flows:
        reasons.append(_flows_reason(list(flows.values())))
    return "; ".join(reasons) or None


def person_wrote_on_system(system: System) -> str | None:
    """Whether a person wrote on a System a definition created, as on an entity
    (``_person_described``): a job writes no description on its Systems, and only its own
    ``openLineage…`` stamps as properties; nor renames a job System it created (its name is
    ``openLineageJobSystemName``: another name is a steward's, or a copy's a person made).
    Deleting it would delete a steward's description of it, or their ``dataOwner``, with it:
    it stays, with the reason."""
    created_as = values_of(system.additional_properties, JOB_SYSTEM_NAME_PROPERTY)
    if created_as and system.name not in created_as:
        return f"a person renamed it (the job named it {created_as[0]})"
    return _person_described(system.description, system.additional_properties)


def _marked(
    ctx: SyncContext, owner: str, mark: str = DESCRIBED_BY_PROPERTY
) -> list[PhysicalEntity]:
    """Entities another writer created that this definition ``mark``s: as described by it
    (``openLineageDescribedBy``), or, crawled ones, as documented by it first
    (``openLineageDocumentedBy``)."""
    listed = ctx.client.api.physical_entities.list(
        page_size=LIST_PAGE_SIZE, additionalPropertyName=mark, additionalPropertyValue=owner
    )
    return [
        entity
        for entity in _alive(ctx, listed)
        if owner in values_of(entity.additional_properties, mark)
        and owner not in values_of(entity.additional_properties, OWNER_PROPERTY)
    ]


def _documented(ctx: SyncContext, owner: str, marked: list[PhysicalEntity]) -> list[PhysicalEntity]:
    """The crawled entities this definition documented first, but for those ``marked``
    already: its claim on the document goes once it no longer describes them, and the
    definition that still does may write its own."""
    seen = {entity.uuid for entity in marked}
    return [
        entity
        for entity in _marked(ctx, owner, DOCUMENTED_BY_PROPERTY)
        if entity.uuid not in seen and not values_of(entity.additional_properties, OWNER_PROPERTY)
    ]


def _shared_jobs(
    owner: str, owned: list[PhysicalEntity], marked: list[PhysicalEntity]
) -> list[tuple[PhysicalEntity, list[str]]]:
    """The job entities another definition describes too, with those definitions: one this
    definition owns that another marks, or one another owns that this one marks. Two
    definitions that read one job's events write its flows and routine under one scope, and
    one's cleanup would remove what the other still describes; those scopes stay (the docs
    say a job's events go to one definition)."""
    shared = []
    for entity in (*owned, *marked):
        if entity.table_type != OPENLINEAGE_JOB:
            continue
        properties = entity.additional_properties
        others = sorted(
            (
                set(values_of(properties, DESCRIBED_BY_PROPERTY))
                | set(values_of(properties, OWNER_PROPERTY))
            )
            - {owner}
        )
        if others:
            shared.append((entity, others))
    return shared


def _shared_reason(others: list[str]) -> str:
    return f"its job is described by job definition {_few(others)} too"


def _total(ctx: SyncContext, operation: str, **filters: str) -> int:
    """How many objects a listing holds, from a page of one: its ``totalElements``, or, from a
    server that does not send it, the count of the whole listing (never 0 for unknown)."""
    endpoint = ENDPOINTS[operation]
    page: Page[dict[str, Any]] = ctx.client.call(
        endpoint, Page[dict[str, Any]], params={**filters, "page": 0, "size": 1}
    )
    if page.total_elements is not None:
        return page.total_elements
    if page.is_last(0):
        return len(page.content)
    listing = ctx.client.iter_pages(endpoint, WireModel, params=filters, page_size=LIST_PAGE_SIZE)
    return sum(1 for _ in _alive(ctx, listing))


def _flows_reason(flows: list[DataFlow]) -> str:
    owners = sorted({_flow_owner(flow) for flow in flows})
    verb = "ends" if len(flows) == 1 else "end"
    return f"{_many(len(flows), 'flow')} of other owners {verb} on it ({_few(owners)})"


def _flow_owner(flow: DataFlow) -> str:
    if flow.query_statement is not None:
        return "SQL analysis"
    return f"scope {flow.scope}" if flow.scope else "no scope"


def _many(count: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {noun if count == 1 else plural}"


def _few(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", … {len(items) - limit} more" if len(items) > limit else "")


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
    total = first.total_elements
    if total is not None and math.ceil(total / LIST_PAGE_SIZE) <= len(scopes):
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
