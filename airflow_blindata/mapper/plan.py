"""The catalog plan: what the mapper says Blindata should hold, keyed by natural keys.

The plan is data for the sync. Objects name each other by natural key — a System by name, an
entity by (System name, schema, name), a field by its entity key and name — because most of them
have no uuid until the sync has written them. ``uuid`` is filled where Blindata already told us
(the known Systems given to the mapper).

``create`` / ``may_create`` separate what the sync may create from what it may only enrich: on a
crawled System an entity that does not exist must stay absent (``TARGET_NOT_CATALOGUED``).
Lineage (flows) and quality slot in as further lists of the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.sql import SqlHashes

if TYPE_CHECKING:
    from airflow_blindata.mapper.fold import DatasetKey

__all__ = [
    "CatalogPlan",
    "EntityKey",
    "FlowEnd",
    "FlowEvidence",
    "FlowKind",
    "PlannedCheck",
    "PlannedEntity",
    "PlannedField",
    "PlannedFlow",
    "PlannedRecord",
    "PlannedResult",
    "PlannedRoutine",
    "PlannedSystem",
    "Property",
    "QualityPlan",
    "SystemOrigin",
]

OPENLINEAGE_JOB = "OPENLINEAGE_JOB"
"""The table type of job entities."""

SystemOrigin = Literal["mapped", "stamped", "created", "reused", "openlineage", "job"]
"""How a System was chosen: a namespaceMappings entry, its openLineageNamespace stamp, created by
this definition, an existing System of the planned name reused and stamped, the OpenLineage System,
or a jobSystems rule."""

Property = tuple[str, str]
"""An additional property (name, value); names may repeat."""


# The plan's objects are frozen slotted dataclasses, not models: the passes make one per dataset,
# job, column and column pair of values they typed themselves, and read their fields by the
# thousand (a model's field read costs twice a slot's, its constructor validates). Pydantic still
# validates them inside a CatalogPlan built from data, and writes them as it wrote the models
# (same fields, same order, ``schema`` by its alias). The classes made per dataset, job or column
# set their slots in their own ``__init__`` (see ``_slot_setters``).


def _slot_setters(cls: type) -> tuple[Callable[[object, Any], None], ...]:
    """The setters of a slotted dataclass's slots, in field order.

    A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__`` (its
    own ``__setattr__`` refuses), a generic lookup that costs several times the slot's setter. A
    plan makes an entity per dataset and job, a field per column and a flow per column pair:
    their ``__init__`` sets the slots directly. They stay frozen dataclasses: compared, hashed and
    written as before."""
    return tuple(cls.__dict__[item.name].__set__ for item in fields(cls))


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class EntityKey:
    """Natural key of a physical entity: (System name, schema, name)."""

    system: str
    schema_: Annotated[str | None, Field(alias="schema")] = None
    name: str

    def __init__(
        self,
        *,
        system: str,
        name: str,
        schema: str | None = None,
        schema_: str | None = None,
    ) -> None:
        # ``schema`` as written in a plan, ``schema_`` as the field is named (and as
        # ``dataclasses.replace`` passes it): either, as the model took either
        set_system, set_schema, set_name = _KEY_SETTERS
        set_system(self, system)
        set_schema(self, schema if schema is not None else schema_)
        set_name(self, name)

    def __str__(self) -> str:
        return f"{self.system}:{self.schema_ + '.' if self.schema_ else ''}{self.name}"

    # A plan keys and compares entities by the thousand: by their three fields, the name first
    # (the one that differs most), not the generated tuple comparison (the same answer).
    def __eq__(self, other: object) -> bool:
        if type(other) is not EntityKey:
            return NotImplemented
        return (
            self.name == other.name
            and self.system == other.system
            and self.schema_ == other.schema_
        )

    def __hash__(self) -> int:
        return hash((self.system, self.schema_, self.name))


_KEY_SETTERS = _slot_setters(EntityKey)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedSystem:
    name: str
    uuid: str | None = None
    origin: SystemOrigin
    create: bool = False
    """True when the System does not exist and this definition creates it."""
    subtype: str | None = None
    technology: str | None = None
    stamp: tuple[Property, ...] = ()
    """Properties the sync sets on the System (openLineageNamespace, openLineageOwner)."""
    namespaces: tuple[str, ...] = ()
    entity_creation: bool = False
    replace_user_documentation: bool = False


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class PlannedEntity:
    key: EntityKey
    may_create: bool
    table_type: str | None = None
    description: str | None = None
    """Plain text of at most 250 characters; never empty (an empty one is not sent)."""
    documentation: str | None = None
    """Markdown documentation, for long or formatted text."""
    documentation_hash: str | None = None
    properties: tuple[Property, ...] = ()
    source: str
    """The OpenLineage object it comes from: ``dataset <ns>/<name>`` or ``job <ns>/<name>``."""

    def __init__(
        self,
        *,
        key: EntityKey,
        may_create: bool,
        table_type: str | None = None,
        description: str | None = None,
        documentation: str | None = None,
        documentation_hash: str | None = None,
        properties: tuple[Property, ...] = (),
        source: str,
    ) -> None:
        (
            set_key,
            set_may_create,
            set_table_type,
            set_description,
            set_documentation,
            set_hash,
            set_properties,
            set_source,
        ) = _ENTITY_SETTERS
        set_key(self, key)
        set_may_create(self, may_create)
        set_table_type(self, table_type)
        set_description(self, description)
        set_documentation(self, documentation)
        set_hash(self, documentation_hash)
        set_properties(self, properties)
        set_source(self, source)


_ENTITY_SETTERS = _slot_setters(PlannedEntity)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class PlannedField:
    """A field of an entity, dotted when nested: a plan holds one per column of every dataset."""

    entity: EntityKey
    name: str
    type: str | None = None
    ordinal_position: int
    description: str | None = None

    def __init__(
        self,
        *,
        entity: EntityKey,
        name: str,
        type: str | None = None,
        ordinal_position: int,
        description: str | None = None,
    ) -> None:
        _fill_field(self, entity, name, type, ordinal_position, description)


_FIELD_SETTERS = _slot_setters(PlannedField)


def _fill_field(
    planned: PlannedField,
    entity: EntityKey,
    name: str,
    type: str | None,
    ordinal_position: int,
    description: str | None,
) -> None:
    set_entity, set_name, set_type, set_position, set_description = _FIELD_SETTERS
    set_entity(planned, entity)
    set_name(planned, name)
    set_type(planned, type)
    set_position(planned, ordinal_position)
    set_description(planned, description)


def planned_field(
    entity: EntityKey, name: str, type: str | None, ordinal_position: int, description: str | None
) -> PlannedField:
    """``PlannedField(entity=..., name=..., ...)``, called positionally: calling a class with
    keywords passes them through a dict to ``__init__``, which cost more than the field itself.
    The catalog pass makes one per column of every dataset."""
    planned = object.__new__(PlannedField)
    _fill_field(planned, entity, name, type, ordinal_position, description)
    return planned


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class PlannedRoutine:
    system: str
    catalog: str
    schema_: Annotated[str, Field(alias="schema")]
    name: str
    type: Literal["SCRIPT"] = "SCRIPT"
    definition: str
    sql_hash: str
    dialect: str | None = None
    job: str
    """The job scope ``ol:<namespace>|<name>`` the routine belongs to."""

    def __init__(
        self,
        *,
        system: str,
        catalog: str,
        name: str,
        type: Literal["SCRIPT"] = "SCRIPT",
        definition: str,
        sql_hash: str,
        dialect: str | None = None,
        job: str,
        schema: str | None = None,
        schema_: str | None = None,
    ) -> None:
        # ``schema`` or ``schema_``, as for an entity key; one of them is required
        chosen = schema if schema is not None else schema_
        if chosen is None:
            raise TypeError("PlannedRoutine() needs schema")
        (
            set_system,
            set_catalog,
            set_schema,
            set_name,
            set_type,
            set_definition,
            set_hash,
            set_dialect,
            set_job,
        ) = _ROUTINE_SETTERS
        set_system(self, system)
        set_catalog(self, catalog)
        set_schema(self, chosen)
        set_name(self, name)
        set_type(self, type)
        set_definition(self, definition)
        set_hash(self, sql_hash)
        set_dialect(self, dialect)
        set_job(self, job)


_ROUTINE_SETTERS = _slot_setters(PlannedRoutine)


FlowKind = Literal["table", "column", "orchestration"]
FlowEvidence = Literal[
    "declared",
    "column_lineage",
    "io",
    "dataset_event",
    "dataset_event_column_lineage",
    "orchestration",
]
"""Where a flow comes from (seed 001 precedence): the lineage facet, the columnLineage facet,
inputs by outputs, a DatasetEvent's lineage facet, or the orchestration facets. Flows proven by
SQL analysis are not planned: Blindata creates them from the routine's statement."""


@dataclass(frozen=True, slots=True, init=False)
class FlowEnd:
    """One end of a flow: an entity, and for a column flow one of its (dotted) fields."""

    entity: EntityKey
    field: str | None = None

    def __init__(self, entity: EntityKey, field: str | None = None) -> None:
        set_entity, set_field = _END_SETTERS
        set_entity(self, entity)
        set_field(self, field)


_END_SETTERS = _slot_setters(FlowEnd)


@dataclass(frozen=True, slots=True, init=False)
class PlannedFlow:
    """A data flow owned by a job's scope; its natural key is ``(scope, name)``."""

    scope: str
    name: str
    kind: FlowKind
    evidence: FlowEvidence
    source: FlowEnd
    target: FlowEnd
    description: str
    superseded_by_analysis: bool = False
    """A column flow of a job whose SQL Blindata analyses: it stands while the analysis is pending
    or failed, and the sync leaves it out once the statement is ANALYZED and a column flow of the
    analysis ends on its target field (rank 1 wins where it proves a pair, seed 001; see
    ``sync/flows.py``)."""

    def __init__(
        self,
        scope: str,
        name: str,
        kind: FlowKind,
        evidence: FlowEvidence,
        source: FlowEnd,
        target: FlowEnd,
        description: str,
        superseded_by_analysis: bool = False,
    ) -> None:
        (
            set_scope,
            set_name,
            set_kind,
            set_evidence,
            set_source,
            set_target,
            set_text,
            set_superseded,
        ) = _FLOW_SETTERS
        set_scope(self, scope)
        set_name(self, name)
        set_kind(self, kind)
        set_evidence(self, evidence)
        set_source(self, source)
        set_target(self, target)
        set_text(self, description)
        set_superseded(self, superseded_by_analysis)


_FLOW_SETTERS = _slot_setters(PlannedFlow)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedCheck:
    """A quality check of the job definition's suite, by code (seed 003)."""

    code: str
    name: str
    kind: Literal["assertion", "test"]
    entity: EntityKey
    """The entity it is linked to: the dataset's, or the job's for a test."""
    description: str | None = None
    warn_only: bool = False
    """A failure is a warning (YELLOW), not a failure (RED): ``severity: warn``."""
    job: str
    """The scope of the job that ran it; its checks are disabled when the job is gone."""
    properties: tuple[Property, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedResult:
    """One result per check and run: 0 failures out of 1 (pass) or 1 out of 1 (fail)."""

    check: str
    run_id: str
    started_at: datetime
    finished_at: datetime | None = None
    failures: int
    total: int = 1
    warn_only: bool = False
    """Its run's severity made a failure a warning: Blindata colours a result by its check's
    thresholds when it is posted, so the check is set to this run's severity first."""
    notes: str
    job: str
    """The scope of the job whose run gave it: the ledger of published runs is per job (a check
    can be run by several jobs: the same assertion on the same dataset)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedRecord:
    """A profiling metric record on the ``OpenLineage`` monitor of an entity."""

    entity: EntityKey
    metric: str
    field: str | None = None
    value: float
    timestamp: datetime
    run_id: str
    job: str
    """The scope of the job whose run measured it: the ledger of published runs is per job."""


class QualityPlan(BaseModel):
    """The suite of the job definition with its checks, results and records."""

    suite_code: str
    jobs: list[str] = Field(default_factory=list)
    """The scopes of every job the plan describes: the checks of any other job are disabled."""
    checks: list[PlannedCheck] = Field(default_factory=list)
    results: list[PlannedResult] = Field(default_factory=list)
    records: list[PlannedRecord] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    """The codes of the checks of datasets dropped or renamed since (their
    ``lifecycleStateChange``): disabled, their history kept, though their job is described."""


class DatasetEntities:
    """The entity of each dataset on its System (``None``: its name gives none), as the catalog
    pass worked it out: the lineage pass looks the ends of its flows up here instead of parsing
    their names and building their keys again.

    A memo of one mapping, not part of what a plan says: any two compare equal."""

    def __init__(self) -> None:
        self.found: dict[tuple[DatasetKey, str], EntityKey | None] = {}
        self.field_names: dict[EntityKey, Set[str]] = {}
        """Entity → the names of the fields the catalog pass planned for it (none: absent), for
        the lineage pass to check the ends of column flows without indexing ``plan.fields``."""
        self.gone: set[DatasetKey] = set()
        """The datasets that have no entity because they were dropped or renamed (their
        ``lifecycleStateChange``): a flow that ends on one ends nowhere, and is no gap."""
        self.job_tables: dict[str, set[EntityKey]] = {}
        """Job scope → the entities of the datasets its described runs read and write: where
        its statement's unqualified names resolve when no flow names them (a run that names
        no output: ``sync.statements``' default schema)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatasetEntities)

    __hash__ = None  # type: ignore[assignment]


class CatalogPlan(BaseModel):
    """Everything one snapshot should upload, and the report of what could not be mapped."""

    definition_uuid: str
    systems: list[PlannedSystem] = Field(default_factory=list)
    entities: list[PlannedEntity] = Field(default_factory=list)
    fields: list[PlannedField] = Field(default_factory=list)
    routines: list[PlannedRoutine] = Field(default_factory=list)
    flows: list[PlannedFlow] = Field(default_factory=list)
    quality: QualityPlan | None = None
    """None when ``quality.enabled`` is false."""
    report: Report = Field(default_factory=Report)
    _sql_hashes: SqlHashes = PrivateAttr(default_factory=SqlHashes)
    _dataset_entities: DatasetEntities = PrivateAttr(default_factory=DatasetEntities)

    @property
    def sql_hashes(self) -> SqlHashes:
        """The SQL hash memo the mapping used; ``used`` is the one to keep for the next plan."""
        return self._sql_hashes

    @property
    def dataset_entities(self) -> DatasetEntities:
        """The entity of each dataset the catalog pass described, for the passes after it."""
        return self._dataset_entities
