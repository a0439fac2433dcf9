"""What every flow pass shares: resolving ends to catalog keys, naming, and collecting flows.

A flow is anchored (seed 001): an end in an ignored namespace drops it silently; an end whose
dataset maps to no System, or has no name, drops it with ``DANGLING_FLOW``, reported only when a
flow is dropped (``end``, ``job_end`` resolve quietly; ``dropped`` reports). A column flow to a
field that a System this definition created will not have is dropped with
``FIELD_NOT_CATALOGUED``; on any other System the flow is kept for the sync to check. Names are
the ends then ``@<job namespace>/<job name>`` (``@orchestration``), hashed past
``MAX_FLOW_NAME``, with the Systems when two flows of one scope would share a name; the same
events always give byte-identical names and scopes.

Why: docs/mapping-reference.md#how-flows-are-anchored-and-named-mapperflowspy
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.catalog import (
    dataset_name,
    entity_key,
    locate_dataset,
    shown_dataset,
    shown_source,
)
from airflow_blindata.mapper.fold import DatasetKey, Fold, JobKey
from airflow_blindata.mapper.plan import (
    CatalogPlan,
    EntityKey,
    FlowEnd,
    FlowEvidence,
    FlowKind,
    PlannedEntity,
    PlannedFlow,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import shorten, with_digest
from airflow_blindata.mapper.systems import SystemResolver
from airflow_blindata.redaction import redact_text

__all__ = ["MAX_FLOW_NAME", "FlowCollector", "end_label", "entity_label"]


MAX_FLOW_NAME = 255
"""Longest flow name; longer names end with a hash."""


@lru_cache(maxsize=256)
def by_producer(producer: str) -> str:
    """``by <producer>`` of a flow's description: the producer as ``redact_text`` shows it (a
    URL with user info or a token, ``by an unnamed producer`` when it sent none); memoised, a
    plan's few producers describe every flow."""
    return f"by {redact_text(producer) if producer else 'an unnamed producer'}"


def end_label(end: FlowEnd, *, with_system: bool) -> str:
    label = entity_label(end.entity, with_system=with_system)
    return f"{label}.{end.field}" if end.field else label


def entity_label(entity: EntityKey, *, with_system: bool) -> str:
    """How a flow name spells an entity: ``[system:][schema.]name``; a field is appended dotted."""
    text = f"{entity.schema_}.{entity.name}" if entity.schema_ else entity.name
    return f"{entity.system}:{text}" if with_system else text


def _flow_name(source: str, target: str, owner: str) -> str:
    """The name of a flow between two end labels, ``owner`` the owner label as it is shown
    (``FlowCollector._shown_owner``)."""
    ends = f"{source} -> {target}"  # entity labels: their names are shown redacted already
    if owner == "orchestration":
        # seed 001: an orchestration flow's "name ends with @orchestration", cut or not (a
        # Spark action's long name lost it, a probe of schedulers)
        return shorten(ends, MAX_FLOW_NAME - len(" @orchestration")) + " @orchestration"
    return shorten(f"{ends} @{owner}" if owner else ends, MAX_FLOW_NAME)


@dataclass
class FlowCollector:
    """Resolves ends and gathers the flows of a plan, one per (scope, name)."""

    fold: Fold
    definition: JobDefinition
    resolver: SystemResolver
    plan: CatalogPlan
    _flows: dict[tuple[str, str], PlannedFlow] = field(default_factory=dict)
    _created_systems: dict[str, bool] = field(default_factory=dict)
    """System name → whether this definition created it (asked as flows name it)."""
    _ends: dict[tuple[str, str], EntityKey | None] = field(default_factory=dict)
    """Dataset (namespace, name) → its entity: a dataset is an end of the flows of every job
    that reads it. Keyed by a tuple, whose hash and comparison cost less than a key's."""
    _field_ends: dict[EntityKey, dict[str, FlowEnd]] = field(default_factory=dict)
    """Entity → field → its column flow end, made once: a field is an end of the column flows
    of every job that reads or writes it, and the flows can share the (frozen) end."""
    _clashes: dict[tuple[str, str], dict[tuple[FlowEnd, FlowEnd], PlannedFlow]] = field(
        default_factory=dict
    )
    """(scope, name) → the flows of other ends that were given the name a planned flow holds
    (tables of the same names on other Systems), by their ends: ``flows`` names them all anew."""
    _clash_owners: dict[tuple[str, str], str] = field(default_factory=dict)
    """(scope, name) of a clash → the owner label its names end with."""
    _job_entities: dict[JobKey, EntityKey] = field(default_factory=dict)
    _shown_jobs: set[tuple[str, str]] | None = None
    """(namespace, name as the catalog shows it) of the fold's jobs whose names hide a secret."""
    _field_cases: dict[EntityKey, str] = field(default_factory=dict)
    """Entity → the ``identifierCase`` its columns are stored in, where one is declared."""
    """Job → its entity, for the jobs of the fold: a job is an end of the orchestration flows
    of its parent, its DAG and its neighbours in the task graph."""
    _shown_owners: dict[str, str] = field(default_factory=dict)
    """Owner label → as flow names end with it (``redact_text``: the job's name is free text,
    ``?token=``): every flow of a job's outputs names its job, redacted once per plan."""

    # The plan's entities, indexed when first asked: the orchestration pass, whose ends are jobs,
    # never asks, and the lineage pass only for an end that is no dataset of the fold.

    @cached_property
    def _entities(self) -> dict[EntityKey, PlannedEntity]:
        return {entity.key: entity for entity in self.plan.entities}

    @cached_property
    def _dataset_entities(self) -> dict[tuple[DatasetKey, str], EntityKey | None]:
        return self.plan.dataset_entities.found

    @cached_property
    def _fields(self) -> dict[EntityKey, Set[str]]:
        """Entity → the names of its planned fields, as the catalog pass planned them (indexing
        ``plan.fields`` again compared an entity key per field)."""
        return self.plan.dataset_entities.field_names

    # -- ends ----------------------------------------------------------------------------------

    def end(self, key: DatasetKey) -> EntityKey | None:
        """The entity of a dataset, or ``None`` when it has none; nothing is reported."""
        ends = self._ends
        name = (key.namespace, key.name)
        if name in ends:
            return ends[name]
        entity = ends[name] = self._resolve_end(key)
        return entity

    def field_case(self, entity: EntityKey) -> str | None:
        """The ``identifierCase`` the columns of ``entity`` are stored in: the one declared for
        the namespace of a dataset that resolved to it (``None``: names stay as they are, see
        ``cased_identifier``). Asked once per pair of ends, not once per column: a column flow
        names its fields by it."""
        return self._field_cases.get(entity)

    def _resolve_end(self, key: DatasetKey) -> EntityKey | None:
        entity = self._entity_of_end(key)
        if entity is not None:
            case = self.resolver.reading(key.namespace).column_case
            if case is not None and case != "PRESERVE":
                self._field_cases[entity] = case
        return entity

    def _entity_of_end(self, key: DatasetKey) -> EntityKey | None:
        # A dataset named only inside a lineage facet never met the catalog pass, which reports
        # the gap of every other dataset: its gap is reported here, once (seed 000: "the
        # dataset is reported as UNMAPPED_NAMESPACE"), so that DANGLING_FLOW's "fix the dataset
        # gaps above" finds one.
        named_only = self.fold.dataset(key) is None
        resolver = self.resolver
        system, found, _ = locate_dataset(
            self.fold, key, resolver, str(key) if named_only else None
        )
        if system is None:
            return None
        known = self._dataset_entities
        if (key, system.name) in known:
            # A dataset of the fold: the catalog pass found its entity and planned it (or found
            # none: EMPTY_DATASET_NAME).
            return known[key, system.name]
        entity = entity_key(
            system.name, found or dataset_name(self.fold, key, resolver), key.namespace
        )
        if entity is None:  # a dataset with no name: never an entity
            if named_only:
                self.plan.report.gap(GapCode.EMPTY_DATASET_NAME, str(key))
            return None
        if entity not in self._entities:
            # A dataset named only inside a lineage facet: described bare, created if allowed,
            # with the dataset it is, as every dataset's entity (the catalog's property)
            self._entities[entity] = PlannedEntity(  # as the catalog pass shows a dataset
                key=entity,
                may_create=system.entity_creation,
                source=f"dataset {shown_source(key)}",
                properties=(("openLineageDataset", shown_dataset(key)),),
            )
            self.plan.entities.append(self._entities[entity])
        return entity

    def job_end(self, key: JobKey) -> EntityKey | None:
        """The job entity of ``key``, or ``None`` when it is not catalogued; nothing reported."""
        if not self.definition.process_layer:
            return None
        return self._job_entity(key)

    def dropped(self, owner: str, *missing: DatasetKey | JobKey) -> None:
        """A flow was dropped because its ``missing`` ends resolve to nothing.

        Without the process layer a job end is not a gap (``flowsWithoutProcessLayer``), nor is
        an end in an ignored namespace (``flowEndsIgnored``); otherwise ``DANGLING_FLOW``.
        """
        if not self.definition.process_layer and any(isinstance(k, JobKey) for k in missing):
            self.plan.report.count("flowsWithoutProcessLayer")
        elif any(isinstance(k, DatasetKey) and self.resolver.ignores(k.namespace) for k in missing):
            self.plan.report.count("flowEndsIgnored")
        elif any(k in self.plan.dataset_entities.gone for k in missing):
            self.plan.report.count("flowEndsDropped")  # dropped or renamed: no entity, no gap
        else:
            ends = ", ".join(f"job {k}" if isinstance(k, JobKey) else str(k) for k in missing)
            self.plan.report.gap(GapCode.DANGLING_FLOW, f"{owner}: {ends}")

    def job(self, key: JobKey, *, owner: str, code: GapCode) -> EntityKey | None:
        """The job entity of ``key``; ``None`` with ``code`` when it is not catalogued."""
        if not self.definition.process_layer:
            self.plan.report.count("flowsWithoutProcessLayer")
            return None
        entity = self._job_entity(key)
        if entity is None:
            self.plan.report.gap(code, f"{owner}: job {key}")
        return entity

    def _job_entity(self, key: JobKey) -> EntityKey | None:
        """The entity of a job of the fold, made once; ``None`` for a job the fold lacks."""
        entity = self._job_entities.get(key)
        if entity is None and (self.fold.job(key) is not None or self._shown_job(key)):
            system = self.resolver.job_system(key.namespace)
            entity = EntityKey(
                system=system.name, schema_=key.namespace, name=redact_text(key.name)
            )
            self._job_entities[key] = entity
        return entity

    def _shown_job(self, key: JobKey) -> bool:
        """Whether the fold has a job that the catalog names as ``key``: one whose name differs
        only in a hidden value (a webhook's token, rotated; mapping reference: "the same name in
        Blindata"), which a parent facet names as it was (a probe of schedulers)."""
        shown = redact_text(key.name)
        if shown == key.name:
            return False
        if self._shown_jobs is None:
            self._shown_jobs = set()
            for job in self.fold.jobs:
                name = redact_text(job.key.name)
                if name != job.key.name:
                    self._shown_jobs.add((job.key.namespace, name))
        return (key.namespace, shown) in self._shown_jobs

    def known_fields(self, entity: EntityKey) -> Set[str] | None:
        """Every field ``entity`` will have, when this definition created its System (the schema
        facets name them all); ``None`` on any other System, where the sync looks fields up."""
        if not self._created_here(entity.system):
            return None
        return self._fields.get(entity, _NO_FIELDS)

    def field_not_catalogued(self, entity: EntityKey, name: str, *, owner: str) -> None:
        """A column flow is dropped: ``name`` is not among the ``known_fields`` of ``entity``."""
        self.plan.report.gap(GapCode.FIELD_NOT_CATALOGUED, f"{owner}: {entity}.{name}")

    def _created_here(self, system_name: str) -> bool:
        if system_name not in self._created_systems:
            planned = next((s for s in self.resolver.systems if s.name == system_name), None)
            self._created_systems[system_name] = planned is not None and (
                self.resolver.created_here(planned)
            )
        return self._created_systems[system_name]

    # -- flows ---------------------------------------------------------------------------------

    def _shown_owner(self, owner_label: str) -> str:
        shown = self._shown_owners.get(owner_label)
        if shown is None:
            shown = self._shown_owners[owner_label] = redact_text(owner_label)
        return shown

    def add(
        self,
        *,
        scope: str,
        owner_label: str,
        kind: FlowKind,
        evidence: FlowEvidence,
        source: FlowEnd,
        target: FlowEnd,
        description: str,
        superseded_by_analysis: bool = False,
    ) -> None:
        if source.field == target.field and source.entity == target.entity:  # no flow to itself
            return
        with_system = source.entity.system != target.entity.system
        name = _flow_name(
            end_label(source, with_system=with_system),
            end_label(target, with_system=with_system),
            self._shown_owner(owner_label),
        )
        self._put(
            scope,
            name,
            kind,
            evidence,
            source,
            target,
            description,
            superseded_by_analysis,
            owner_label,
        )

    def add_columns(
        self,
        *,
        scope: str,
        owner_label: str,
        evidence: FlowEvidence,
        source: EntityKey,
        target: EntityKey,
        columns: Iterable[tuple[str, str, str]],
        superseded_by_analysis: bool = False,
    ) -> None:
        """Column flows from ``source`` to ``target``, each (source field, target field,
        description), the fields named: what ``add`` would plan for each, with what the pair
        of entities shares (labels, ends, rank) worked out once."""
        with_system = source.system != target.system
        source_label = entity_label(source, with_system=with_system) + "."
        target_label = " -> " + entity_label(target, with_system=with_system) + "."
        owner_suffix = f" @{self._shown_owner(owner_label)}" if owner_label else ""  # _flow_name's
        same_entity = source == target
        source_ends = self._field_ends.setdefault(source, {})
        target_ends = self._field_ends.setdefault(target, {})
        rank = _EVIDENCE_RANK[evidence]
        flows = self._flows
        for source_field, target_field, description in columns:
            if same_entity and source_field == target_field:  # no flow to itself
                continue
            # the name _flow_name gives, spelled out: this loop runs once per column flow
            name = f"{source_label}{source_field}{target_label}{target_field}{owner_suffix}"
            if len(name) > MAX_FLOW_NAME:
                name = shorten(name, MAX_FLOW_NAME)
            key = (scope, name)
            existing = flows.get(key)
            clash = existing is not None and (
                existing.source.entity != source
                or existing.target.entity != target
                or existing.source.field != source_field
                or existing.target.field != target_field
            )
            if existing is not None and not clash and (rank, description) >= _rank(existing):
                continue
            source_end = source_ends.get(source_field)
            if source_end is None:
                source_end = source_ends[source_field] = FlowEnd(source, source_field)
            target_end = target_ends.get(target_field)
            if target_end is None:
                target_end = target_ends[target_field] = FlowEnd(target, target_field)
            flow = PlannedFlow(
                scope,
                name,
                "column",
                evidence,
                source_end,
                target_end,
                description,
                superseded_by_analysis,
            )
            if clash:
                self._clash(key, owner_label, flow)
            else:
                flows[key] = flow

    def _put(
        self,
        scope: str,
        name: str,
        kind: FlowKind,
        evidence: FlowEvidence,
        source: FlowEnd,
        target: FlowEnd,
        description: str,
        superseded_by_analysis: bool,
        owner_label: str,
    ) -> None:
        """Plan the flow unless its natural key holds a better ranked one; a loser is never
        built. A flow of other ends given the same name is a clash (``flows``)."""
        existing = self._flows.get((scope, name))
        clash = existing is not None and (existing.source, existing.target) != (source, target)
        if clash or existing is None or (_EVIDENCE_RANK[evidence], description) < _rank(existing):
            flow = PlannedFlow(
                scope, name, kind, evidence, source, target, description, superseded_by_analysis
            )
            if clash:
                self._clash((scope, name), owner_label, flow)
            else:
                self._flows[(scope, name)] = flow

    def _clash(self, key: tuple[str, str], owner_label: str, flow: PlannedFlow) -> None:
        """Keep ``flow``, whose name a flow of other ends holds, the best ranked of its ends."""
        others = self._clashes.setdefault(key, {})
        self._clash_owners[key] = owner_label
        ends = (flow.source, flow.target)
        existing = others.get(ends)
        if existing is None or _rank(flow) < _rank(existing):
            others[ends] = flow

    def flows(self) -> list[PlannedFlow]:
        """The flows by natural key (keys are unique: the sort never compares two flows).

        The flows of a name that other ends were given too (tables of the same schema and name
        on two Systems: a mapped task run once per shard) are all named with their Systems, as
        flows across Systems are, so that none is lost and the names do not depend on which
        came first."""
        flows = self._flows
        if self._clashes:
            flows = dict(flows)
            for key, others in sorted(self._clashes.items(), key=lambda item: item[0]):
                owner = self._shown_owner(self._clash_owners[key])
                group = [flows.pop(key), *others.values()]
                names = [
                    _flow_name(
                        end_label(flow.source, with_system=True),
                        end_label(flow.target, with_system=True),
                        owner,
                    )
                    for flow in group
                ]
                alike = {name for name in names if names.count(name) > 1}
                for flow, name in zip(group, names, strict=True):
                    if name in alike:  # spelt alike on their Systems too: a dot in a quoted name
                        name = _told_apart(name, _ends_text(flow))
                    renamed = replace(flow, name=name)
                    held = flows.get((flow.scope, name))
                    if held is None or _rank(renamed) < _rank(held):
                        flows[(flow.scope, name)] = renamed
        return [flows[key] for key in sorted(flows)]


def _told_apart(name: str, ends: str) -> str:
    """``name`` with a hash of the flow's ends: before an orchestration flow's ``@orchestration``,
    which ends its name whatever is cut (seed 001)."""
    mark = " @orchestration"
    if name.endswith(mark):
        return with_digest(name[: -len(mark)], ends, MAX_FLOW_NAME - len(mark)) + mark
    return with_digest(name, ends, MAX_FLOW_NAME)


def _ends_text(flow: PlannedFlow) -> str:
    """A flow's ends as one text, each part apart (``s.t`` + ``x`` is not ``s`` + ``t.x``)."""
    return "\x00".join(
        str(part)
        for end in (flow.source, flow.target)
        for part in (end.entity.system, end.entity.schema_, end.entity.name, end.field)
    )


_NO_FIELDS: frozenset[str] = frozenset()

_EVIDENCE_RANK: dict[str, int] = {
    "declared": 0,
    "column_lineage": 1,
    "dataset_event": 2,
    "dataset_event_column_lineage": 2,
    "io": 3,
    "orchestration": 4,
}


def _rank(flow: PlannedFlow) -> tuple[int, str]:
    return (_EVIDENCE_RANK[flow.evidence], flow.description)
