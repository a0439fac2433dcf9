"""Data flows of seed 001: evidence precedence, table flows always, column flows only when direct.

``map_lineage`` plans, for each job and output, flows from the finest evidence the events prove:
SQL that Blindata analyses (the producer's column flows marked ``superseded_by_analysis``), then
the ``lineage`` facet, then ``columnLineage``, then the job's inputs by its outputs
(``UNCORRELATED_IO``). A table flow for every proven input → output pair; column flows only for
DIRECT transformations (IDENTITY, TRANSFORMATION, AGGREGATION, the deprecated MASKED); INDIRECT
ones, dataset-wide inputs and field inputs naming no transformation are described on the table
flow. A flow's description names its transformations.

The rules in full: docs/mapping-reference.md#evidence-precedence-mapperlineagepy
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from functools import lru_cache

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import (
    AirflowRunFacet,
    BaseFacet,
    ColumnLineageDatasetFacet,
    ExtractionErrorRunFacet,
    JobTypeJobFacet,
    LineageDatasetEntry,
    LineageDatasetFacet,
    LineageDatasetInput,
    LineageFieldEntry,
    LineageInput,
    LineageJobEntry,
    LineageJobFacet,
    LineageJobInput,
    LineageTransformation,
    SchemaDatasetFacet,
    SparkUnknownRunFacet,
    Transformation,
    UnknownOperatorAttributeRunFacet,
    facet_of,
)
from airflow_blindata.mapper.catalog import job_sql
from airflow_blindata.mapper.flows import FlowCollector, by_producer
from airflow_blindata.mapper.fold import (
    DatasetFold,
    DatasetKey,
    Fold,
    InputFold,
    JobFold,
    JobKey,
    OutputFold,
    RunFold,
    layered_facet,
)
from airflow_blindata.mapper.identity import (
    cased_identifier,
    completes,
    namespace_identity,
    normalize_namespace,
    strip_user_info,
)
from airflow_blindata.mapper.plan import CatalogPlan, EntityKey, FlowEnd, FlowEvidence
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.sql import names_in_sql, tables_dropped
from airflow_blindata.mapper.systems import SystemResolver
from airflow_blindata.redaction import redact_prose, redact_text

__all__ = ["DIRECT_SUBTYPES", "INDIRECT_SUBTYPES", "Source", "map_lineage"]

DIRECT_SUBTYPES = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION"})
INDIRECT_SUBTYPES = frozenset({"JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"})
"""The spec's subtypes of INDIRECT transformations. The spec's ``subtype`` is free text: a DIRECT
transformation of another subtype (``DIRECT/CAST``) is DIRECT, one of these is not (a producer
that sends ``DIRECT/FILTER`` contradicts itself: no column flow rather than a wrong one)."""
_LEGACY_DIRECT = DIRECT_SUBTYPES | {"MASKED"}
"""The values of the deprecated ``columnLineage`` ``transformationType`` that name a direct
transformation (the spec allows IDENTITY and MASKED)."""

_EVIDENCE_TEXT: dict[FlowEvidence, str] = {
    "declared": "Declared lineage (lineage facet)",
    "column_lineage": "Observed column lineage (columnLineage facet)",
    "io": "Observed from the job's inputs and outputs",
    "dataset_event": "Declared lineage of the dataset (lineage facet of a DatasetEvent)",
    "dataset_event_column_lineage": (
        "Declared column lineage of the dataset (columnLineage facet of a DatasetEvent)"
    ),
    "orchestration": "Orchestration",
}


@dataclass(slots=True)
class Source:
    """One input of an output: a dataset, at entity level or from one field into one field.

    Not frozen: one is made per field input of every job, and a frozen dataclass's constructor
    costs four times as much. Nothing changes a source once made."""

    dataset: DatasetKey
    field: str | None = None
    target_field: str | None = None
    direct: bool = True
    transformations: tuple[str, ...] = ()


def _transformations(
    items: Sequence[Transformation | LineageTransformation] | None,
) -> tuple[bool, tuple[str, ...]]:
    """Whether a DIRECT transformation is among them (none named: not direct), and their labels.

    A field input with a DIRECT transformation is derived from its input, whatever INDIRECT ones
    come with it (``sum(a) ... GROUP BY a``: DIRECT/AGGREGATION and INDIRECT/GROUP_BY)."""
    if items and len(items) == 1:  # the usual case: one transformation, no list to build
        item = items[0]
        direct, label = _transformation(item.type, item.subtype, item.description, item.masking)
        return direct, (label,)
    labels: list[str] = []
    direct = False
    for item in items or ():
        item_direct, label = _transformation(
            item.type, item.subtype, item.description, item.masking
        )
        labels.append(label)
        direct |= item_direct
    return direct, tuple(labels)


@lru_cache(maxsize=1024)
def _transformation(
    kind: str | None, subtype: str | None, text: str | None, masking: bool | None = None
) -> tuple[bool, str]:
    """Whether one transformation is DIRECT, and its label; memoised, as the field inputs of a
    facet repeat the same few transformations. A masking one says so (seed 004: "whether the
    input value was obfuscated"): a steward reading where a column comes from must know."""
    kind = str(kind or "").upper()
    subtype = str(subtype or "").upper()
    label = (
        (f"{kind}/{subtype}" if subtype else kind)
        + (" (masking)" if masking is True else "")
        + (f": {redact_prose(text)}" if text else "")
    )
    return kind == "DIRECT" and subtype not in INDIRECT_SUBTYPES, label


_redacted_prose = lru_cache(maxsize=1024)(redact_prose)
"""``redact_prose`` memoised: a facet's fields repeat the same few descriptions."""


@lru_cache(maxsize=1024)
def _is_indirect(label: str) -> bool:
    """Whether a transformation's label (``_transformation``) is of an INDIRECT one (a DIRECT
    one of an indirect subtype too); a legacy description or a bare type is no such."""
    kind, _, subtype = label.partition(":")[0].partition(" (masking)")[0].partition("/")
    return kind == "INDIRECT" or (kind == "DIRECT" and subtype in INDIRECT_SUBTYPES)


def _same(a: DatasetKey, b: DatasetKey) -> bool:
    """Whether two keys name one dataset: one name on one store and database
    (``namespace_identity``: ``dwh``'s and ``stage``'s ``dbo.Orders`` of one SQL Server, their
    database in a JDBC namespace, are two tables, and a copy between them a flow)."""
    return a.name == b.name and namespace_identity(a.namespace) == namespace_identity(b.namespace)


def _identity(key: DatasetKey) -> tuple[str, str]:
    """A dataset as ``_same`` compares it: its store and database, and its name."""
    return namespace_identity(key.namespace), key.name


def _declared_sources(
    inputs: Sequence[LineageInput] | None, fields: Mapping[str, LineageFieldEntry] | None
) -> list[Source]:
    """Sources of a lineage facet entry: entity inputs and ``fields.<target>.inputs[]``."""
    sources: list[Source] = []
    for item in inputs or ():
        if isinstance(item, LineageDatasetInput):
            direct, labels = _transformations(item.transformations)
            key = DatasetKey(item.namespace, item.name)
            # an entity-level input with a field is a dataset-wide dependency: not a column flow
            sources.append(Source(key, item.field, None, direct and not item.field, labels))
    for target_field, entry in sorted((fields or {}).items()):
        for item in entry.inputs:
            if isinstance(item, LineageDatasetInput):
                direct, labels = _transformations(item.transformations)
                key = DatasetKey(item.namespace, item.name)
                sources.append(Source(key, item.field, target_field, direct, labels))
    return sources


def _by_dataset(sources: Iterable[Source]) -> dict[DatasetKey, list[Source]]:
    """Sources by input dataset, datasets and sources in the order they come."""
    grouped: dict[DatasetKey, list[Source]] = {}
    for source in sources:
        grouped.setdefault(source.dataset, []).append(source)
    return grouped


def _column_lineage_sources(facet: ColumnLineageDatasetFacet) -> dict[DatasetKey, list[Source]]:
    """The sources of a ``columnLineage`` facet by input dataset (as ``_by_dataset`` groups
    them). Grouped as they are made, by (namespace, name): a facet has a source per field input
    and few datasets, so each dataset's key is made and hashed once, not once per field."""
    groups: dict[tuple[str, str], list[Source]] = {}
    datasets: dict[tuple[str, str], DatasetKey] = {}
    for target_field, entry in sorted(facet.fields.items()):
        # free text of the producer, as a transformation's own description is (a secret hidden)
        legacy_text = (entry.transformation_description or "").strip()
        if legacy_text:
            legacy_text = _redacted_prose(legacy_text)
        for item in entry.input_fields:
            name = (item.namespace, item.name)
            group = groups.get(name)
            if group is None:
                group = groups[name] = []
                datasets[name] = DatasetKey(*name)
            transformations = item.transformations
            direct, labels = _transformations(transformations)
            if not transformations and entry.transformation_type:
                # the deprecated field-level form: IDENTITY or MASKED, both a direct copy
                kind = entry.transformation_type.upper()
                direct = kind in _LEGACY_DIRECT
                label = f"DIRECT/{kind}" if direct else kind
                labels = (label + (f": {legacy_text}" if legacy_text else ""),)
            elif direct and legacy_text and not any(legacy_text in label for label in labels):
                labels = (*labels, legacy_text)  # the field's description, sent alongside
            group.append(Source(datasets[name], item.field, target_field, direct, labels))
    for item in facet.dataset or ():
        name = (item.namespace, item.name)
        if name not in groups:
            groups[name] = []
            datasets[name] = DatasetKey(*name)
        _, labels = _transformations(item.transformations)
        groups[name].append(Source(datasets[name], item.field, None, False, labels))
    return {datasets[name]: group for name, group in groups.items()}


def _output_evidence(
    declared: LineageJobFacet | None,
    output: DatasetKey,
    output_facets: dict[str, BaseFacet],
    inputs: Sequence[DatasetKey],
) -> tuple[FlowEvidence, dict[DatasetKey, list[Source]], LineageDatasetFacet | None]:
    """The evidence for ``output``, its sources by input dataset, and the output's own lineage
    facet when that is the evidence (its JOB inputs feed the output too: ``_job_input_flows``);
    ``declared`` is the job's lineage facet, read once for all its outputs."""
    for entry in declared.entries if declared else ():
        if (
            isinstance(entry, LineageDatasetEntry)
            and _declares(entry.inputs, entry.fields)
            and _same(DatasetKey(entry.namespace, entry.name), output)
        ):
            return "declared", _by_dataset(_declared_sources(entry.inputs, entry.fields)), None
    on_dataset = facet_of(output_facets, LineageDatasetFacet)
    if on_dataset and _declares(on_dataset.inputs, on_dataset.fields):
        sources = _declared_sources(on_dataset.inputs, on_dataset.fields)
        return "declared", _by_dataset(sources), on_dataset
    column_lineage = facet_of(output_facets, ColumnLineageDatasetFacet)
    if column_lineage and _names_inputs(column_lineage):
        return "column_lineage", _column_lineage_sources(column_lineage), None
    return "io", _by_dataset(Source(key) for key in inputs), None


def _declares(
    inputs: Sequence[LineageInput] | None, fields: Mapping[str, LineageFieldEntry] | None
) -> bool:
    """Whether a lineage declaration (a ``DATASET`` entry, a dataset's own facet) says anything
    of its target's inputs: ``inputs`` sent (``[]`` too: "an empty array explicitly means that
    the target has no tracked upstream source", the spec says), or a field. One with neither
    declares nothing, and the next evidence is read (seed 001: "a table flow is always
    published")."""
    return inputs is not None or bool(fields)


def _names_inputs(facet: ColumnLineageDatasetFacet) -> bool:
    """Whether a ``columnLineage`` facet names any input. One that names none (``fields: {}``,
    fields with empty ``inputFields``, no ``dataset[]``) proves nothing of which input feeds the
    output: it is no lineage facet, and the inputs and outputs are the evidence (seed 001: "a
    table flow is always published"; with several outputs every pair, and UNCORRELATED_IO)."""
    return bool(facet.dataset) or any(entry.input_fields for entry in facet.fields.values())


def _as_read(
    by_dataset: dict[DatasetKey, list[Source]],
    inputs: Sequence[DatasetKey],
    sql: str = "",
) -> dict[DatasetKey, list[Source]]:
    """Sources of a lineage facet named as the statement spells their table, each given the
    input the run read it as: Airflow's SQL parser names a column's table ``orders`` where the
    run's input is ``shop.orders`` (MySQL: no default schema, the database read from
    information_schema). Seed 002: blank segments are "filled from the connection's own
    catalog and preferred schema". Only where one input of the namespace completes the name,
    the facet does not name that input as well (``orders`` is then another table), and the
    job's SQL (``sql``) makes no temporary table or CTE of that name (a temporary table
    ``orders``; a table it makes and keeps, ``CREATE TABLE stage``, is the input ``shop.stage``
    the run names)."""
    if not inputs or all(any(_same(key, read) for read in inputs) for key in by_dataset):
        return by_dataset
    rekeyed: dict[DatasetKey, list[Source]] = {}
    for key, sources in by_dataset.items():
        read = _read_as(key, inputs)
        if (
            read is not None
            and not any(_same(read, named) for named in by_dataset)
            and _spelt(key.name) not in _temporary_tables(sql)
        ):
            key = read
            sources = [
                Source(read, item.field, item.target_field, item.direct, item.transformations)
                for item in sources
            ]
        rekeyed.setdefault(key, []).extend(sources)
    return rekeyed


def _read_as(key: DatasetKey, inputs: Sequence[DatasetKey]) -> DatasetKey | None:
    """The one input ``key`` names with segments left out, if ``key`` is no input itself."""
    if any(_same(key, read) for read in inputs):
        return None
    namespace = namespace_identity(key.namespace)
    found = {
        read
        for read in inputs
        if namespace_identity(read.namespace) == namespace and completes(key.name, read.name)
    }
    return found.pop() if len(found) == 1 else None


def _spelt(name: str) -> str:
    """A table's name as a statement may spell it: without quotes, blanks and case."""
    return ".".join(part.strip().strip('"`[]').casefold() for part in name.split("."))


_MADE_BY_SQL = re.compile(
    r"""(?ix)
    \bcreate\s+(?:or\s+replace\s+)?(?:(?:global|local)\s+)?
        (?:(?:temp|temporary|volatile|transient)\s+)?table\s+(?:if\s+not\s+exists\s+)?
        ([^\s(;]+)
    | \binto\s+(\#[^\s(;]+)                        # SQL Server's SELECT ... INTO #temp
    | (?:\bwith\s+(?:recursive\s+)?|,\s*)([A-Za-z_][\w$]*)\s*(?:\([^()]*\)\s*)?as\s*\(
    """
)
"""A table or a common table expression a statement makes (``_made_and_dropped`` keeps those it
drops again)."""


def _without_own_tables(
    by_dataset: dict[DatasetKey, list[Source]],
    inputs: Sequence[DatasetKey],
    sql: str,
    dialect: str | None,
    report: Report,
) -> dict[DatasetKey, list[Source]]:
    """Sources of a lineage facet without the tables the job's SQL makes for itself: a temporary
    table (``CREATE TEMP TABLE``, SQL Server's ``#t``), a CTE, a table it makes and drops again.
    Airflow's SQL parser names them as sources of the output's columns (``tmp_big``, or
    ``db.public.tmp_big`` in the connection's default schema) where they exist only while the
    task runs: no entity of the catalog, no flow (``lineageSourcesMadeByTheStatement``). A
    source the run read is kept whatever the SQL calls it, and so is one the SQL names with its
    schema where a CTE or a temporary table has its name: ``WITH orders AS (SELECT … FROM
    staging.orders)``, whose ``staging.orders`` the parser leaves out of the inputs."""
    unread = [key for key in by_dataset if not any(_same(key, read) for read in inputs)]
    if not (unread and sql):
        return by_dataset
    temporary, dropped = _temporary_tables(sql), _made_and_dropped(sql, dialect)
    if not (temporary or dropped):
        return by_dataset
    qualified = _qualified_names(sql, dialect) if temporary else frozenset()
    kept = dict(by_dataset)
    for key in unread:
        spelt = _spelt(key.name)
        segments = spelt.split(".")
        named = len(segments) > 1 and (segments[-2], segments[-1]) in qualified
        if _ends_with_one(spelt, dropped) or (not named and _ends_with_one(spelt, temporary)):
            report.count("lineageSourcesMadeByTheStatement")
            del kept[key]
    return kept


_TEMPORARY_BY_SQL = re.compile(
    r"""(?ix)
    \bcreate\s+(?:or\s+replace\s+)?(?:(?:global|local)\s+)?(?:temp|temporary|volatile)\s+table\s+
        (?:if\s+not\s+exists\s+)?([^\s(;]+)
    | \bdeclare\s+global\s+temporary\s+table\s+([^\s(;]+)  # Db2's
    | \binto\s+(\#[^\s(;]+)                                 # SQL Server's SELECT ... INTO #temp
    | \bcreate\s+table\s+(\#[^\s(;]+)
    | (?:\bwith\s+(?:recursive\s+)?|,\s*)([A-Za-z_][\w$]*)\s*(?:\([^()]*\)\s*)?as\s*\(
    """
)
"""A temporary table or a common table expression a statement makes."""


@lru_cache(maxsize=64)
def _qualified_names(sql: str, dialect: str | None) -> frozenset[tuple[str, str]]:
    """The (schema, name) pairs ``sql`` writes: read once per statement, not per output."""
    return names_in_sql(sql, dialect).qualified


def _ends_with_one(spelt: str, names: frozenset[str]) -> bool:
    """Whether a name ends with one of ``names``, segment by segment."""
    return any(spelt == name or spelt.endswith(f".{name}") for name in names)


@lru_cache(maxsize=256)
def _temporary_tables(sql: str) -> frozenset[str]:
    """The temporary tables and CTEs ``sql`` makes, as it spells them (``_spelt``)."""
    return frozenset(
        _spelt(next(group for group in match.groups() if group))
        for match in _TEMPORARY_BY_SQL.finditer(sql)
    )


@lru_cache(maxsize=256)
def _made_and_dropped(sql: str, dialect: str | None) -> frozenset[str]:
    """The tables ``sql`` makes and leaves dropped (``mapper.sql.tables_dropped``: a DROP no
    later statement names again, so ``DROP TABLE IF EXISTS stage; CREATE TABLE stage …``
    keeps ``stage``), as it spells them."""
    dropped = {".".join(parts) for parts in tables_dropped(sql, dialect)}
    if not dropped:
        return frozenset()
    made = {_spelt(next(g for g in match.groups() if g)) for match in _MADE_BY_SQL.finditer(sql)}
    return frozenset(made & dropped)


def _unnamed_inputs(
    inputs: Sequence[DatasetKey], named: Mapping[DatasetKey, list[Source]]
) -> list[DatasetKey]:
    """The inputs a run read that a lineage facet of its output does not name."""
    return [key for key in inputs if not any(_same(key, other) for other in named)]


def _describe(evidence: FlowEvidence, producer: str, extra: Iterable[str] = ()) -> str:
    parts = [f"{_EVIDENCE_TEXT[evidence]}, {by_producer(producer)}."]
    parts.extend(extra)
    return " ".join(parts)


_Written = tuple[DatasetKey, dict[str, BaseFacet], list[DatasetKey], bool]
"""An output, its dataset and output facets, the inputs it is read from, and whether a run that
wrote it had inputs and several outputs (which ``io`` evidence cannot correlate: seed 001,
"UNCORRELATED_IO — Several outputs and no lineage facet: all input and output pairs were
published")."""


def _uncorrelated(inputs: Sequence[object], outputs: Sequence[object]) -> bool:
    """Whether ``io`` evidence of these inputs and outputs is every pair, unproven: seed 001's
    table, "UNCORRELATED_IO — Several outputs and no lineage facet: all input and output pairs
    were published" — one input included (that it feeds each output is not proven: a job may
    write a log or a control table from nothing it read). With one output every input feeds it,
    and with no input there is no pair to publish."""
    return bool(inputs) and len(outputs) > 1


def _written(runs: Sequence[RunFold], *, snapshots: bool = False) -> list[_Written]:
    """The outputs of runs (oldest first), each with the inputs of the runs that wrote it. An
    output several runs wrote has their facets merged, the later run's winning per key. With
    ``snapshots`` (the job's events are complete snapshots), a run's datasets are those of its
    latest event that names any."""
    outputs: dict[DatasetKey, _Written] = {}
    for run in runs:
        run_inputs, run_outputs = _io(run, snapshots)
        inputs = [item.key for item in run_inputs]
        several = _uncorrelated(inputs, run_outputs)
        for item in run_outputs:
            facets = {**item.facets, **item.output_facets}
            found = outputs.get(item.key)
            if found is None:
                outputs[item.key] = (item.key, facets, inputs, several)
            else:
                merged = sorted({*found[2], *inputs})
                outputs[item.key] = (item.key, {**found[1], **facets}, merged, found[3] or several)
    return [outputs[key] for key in sorted(outputs)]


def _io(run: RunFold, snapshots: bool) -> tuple[list[InputFold], list[OutputFold]]:
    """The run's inputs and outputs; of a job whose events are complete snapshots, those its
    latest event naming any names (the others were read or written in earlier windows)."""
    if not snapshots:
        return run.inputs, run.outputs
    read = None if run.snapshot_inputs is None else set(run.snapshot_inputs)
    wrote = None if run.snapshot_outputs is None else set(run.snapshot_outputs)
    return (
        run.inputs if read is None else [item for item in run.inputs if item.key in read],
        run.outputs if wrote is None else [item for item in run.outputs if item.key in wrote],
    )


def _snapshots(job: JobFold) -> bool:
    """Whether the job's ``jobType`` facet says its events are complete snapshots
    (``emissionPattern.eventContentMode: COMPLETE_SNAPSHOT``): seed 004, events "are
    accumulative unless stated otherwise"; a COMPLETE_SNAPSHOT event holds the complete state
    for its time window, so a run's latest one is its lineage, not the union of all its events."""
    job_type = facet_of(job.facets, JobTypeJobFacet)
    pattern = job_type.emission_pattern if job_type else None
    return pattern is not None and pattern.event_content_mode.strip().upper() == (
        "COMPLETE_SNAPSHOT"
    )


_CONTINUOUS = frozenset({"STREAMING", "SERVICE"})
"""The processing types of jobs "continuous with no natural completion point" (the
``JobTypeJobFacet`` schema): seed 004, "services emit START followed by RUNNING events"."""


def _streaming(job: JobFold) -> bool:
    """Whether the job's ``jobType`` facet declares it continuous: STREAMING or SERVICE."""
    job_type = facet_of(job.facets, JobTypeJobFacet)
    return job_type is not None and job_type.processing_type.strip().upper() in _CONTINUOUS


def _described_by(job: JobFold) -> Sequence[RunFold]:
    """The runs that describe the job's lineage: its latest completed run with the other
    completed runs of its parent run (``JobFold.latest_completed_group``: the instances of a
    mapped task, each giving its own lineage), else its latest run; and the latest run of each
    instance of that DAG run that never completed (``JobFold.never_completed_instances``).

    A STREAMING (or SERVICE) job is described by its latest run that names datasets, whatever its
    state, when it is later than the latest completed one:
    seed 004, "for streaming jobs, terminal events occur only on restarts and should not be
    relied upon; events are periodic snapshots" — a job redeployed after a COMPLETE streams its
    new lineage in RUNNING events that never end in COMPLETE."""
    group = job.latest_completed_group
    latest = job.latest
    if latest is None:
        return group
    if _streaming(job):
        # the latest run that names datasets and is later than the latest completed one: a
        # restarted job's first events may name none yet (``fold.latest_naming_datasets``)
        for run in reversed(job.runs):
            if group and run is group[-1]:
                break
            if run.inputs or run.outputs:
                return [run]
    never = job.never_completed_instances
    if not never:
        return group or [latest]
    # a mapped task's instance that never completed, beside its siblings' group
    chosen = {id(run) for run in (*group, *never)} | (set() if group else {id(latest)})
    return [run for run in job.runs if id(run) in chosen]


def _design_producer(job: JobFold) -> str:
    """The producer of flows from the job's design: its latest JobEvent's, else its latest
    run's (a run that named no dataset)."""
    return job.design_producer or (job.latest.producer if job.latest else "")


def _job_flows(job: JobFold, collector: FlowCollector, definition: JobDefinition) -> None:
    """The flows of the job's latest description (``_described_by``), else its design."""
    runs = _described_by(job)
    run = runs[-1] if runs else None
    outputs: list[_Written]
    if any(item.inputs or item.outputs for item in runs):
        snapshots = _snapshots(job)
        outputs = _with_design_side(job, runs, _written(runs, snapshots=snapshots), snapshots)
        producer = run.producer if run else ""
    else:
        inputs = [item.key for item in job.inputs]
        several = _uncorrelated(inputs, job.outputs)
        outputs = [(item.key, dict(item.facets), inputs, several) for item in job.outputs]
        producer = _design_producer(job)
    key, job_facets = job.key, job.facets  # read once (see catalog.map_datasets)
    declared = facet_of(job_facets, LineageJobFacet)
    only_output = len(outputs) == 1  # of the outputs the events list
    outputs.extend(_declared_targets(declared, outputs))
    scope = job_scope(key.namespace, key.name)
    sql = job_sql(job)
    if sql is not None:  # where its statement's bare names are (``DatasetEntities.job_tables``)
        named = [item.key for run in runs for item in run.inputs]
        named += [item.key for run in runs for item in run.outputs]
        tables = {end for end in map(collector.end, named) if end is not None}
        if tables:
            collector.plan.dataset_entities.job_tables[scope] = tables
    if not outputs:
        return
    owner = f"{key.namespace}/{key.name}"
    analysed = bool(sql and sql.query.strip())
    report = collector.plan.report
    include_indirect = definition.include_indirect
    uncorrelated = False
    fed: list[DatasetKey] = []  # the datasets some output's flows come from
    if analysed and _one_column_lineage_for_all(outputs):
        # Airflow's SQL operators send the column lineage of all the statements of a task as
        # one facet, the same on every output: which input feeds which output it cannot say
        # (an input feeding only a temporary table was missing, a column of one output was
        # given to the other). The inputs and outputs are the evidence, UNCORRELATED_IO says
        # so; Blindata's analysis of the statement gives the column flows.
        outputs = [
            (output, _without(facets, "columnLineage"), inputs, several or len(inputs) > 0)
            for output, facets, inputs, several in outputs
        ]
    for output, facets, inputs, several in outputs:
        evidence, by_dataset, on_dataset = _output_evidence(declared, output, facets, inputs)
        if evidence != "io" and sql is not None:
            by_dataset = _without_own_tables(by_dataset, inputs, sql.query, sql.dialect, report)
            if not by_dataset:  # fed only by tables of its own: the run's inputs feed it
                evidence, by_dataset = "io", _by_dataset(Source(key) for key in inputs)
        if evidence != "io":
            by_dataset = _as_read(by_dataset, inputs, sql.query if sql else "")
        uncorrelated |= evidence == "io" and several
        unnamed = _unnamed_inputs(inputs, by_dataset) if evidence == "column_lineage" else []
        if only_output:
            # An input the columnLineage facet leaves out still feeds the job's only output:
            # Spark names only the inputs of the output's columns (a table joined or filtered
            # on is missing unless its dataset lineage is switched on). With several outputs
            # which one it feeds is not known: no flow, as before.
            for dataset in unnamed:
                by_dataset[dataset] = [Source(dataset)]
        fed.extend(by_dataset)
        for dataset in [key for key in by_dataset if _same(key, output)]:
            _keep_own_columns(by_dataset, dataset)  # read and written: its column flows only
        who = _Owner(scope, owner, owner, producer)
        if on_dataset is not None:
            _job_input_flows(collector, who, output, on_dataset, key, include_indirect)
        if not by_dataset:
            continue  # nothing feeds this output: no flow, so none can dangle
        _output_flows(
            collector,
            who,
            evidence,
            output,
            by_dataset,
            include_indirect=include_indirect,
            analysed=analysed,
            unnamed=unnamed,
        )
    if not only_output and not uncorrelated:
        # an input no output's lineage names (a lookup table): which output it feeds is not
        # proven, no flow is planned, and the gap says so
        read = {key for _, _, inputs, _ in outputs for key in inputs}
        uncorrelated = any(not any(_same(key, other) for other in fed) for key in read)
    if uncorrelated:
        report.gap(GapCode.UNCORRELATED_IO, owner)


def _with_design_side(
    job: JobFold, runs: Sequence[RunFold], outputs: list[_Written], snapshots: bool
) -> list[_Written]:
    """``outputs`` of runs that name only one side, completed by the job's design (its latest
    JobEvent's datasets): runs that read and name nothing written feed the design's outputs;
    outputs written from nothing the runs name are fed by the design's inputs. A run that
    names one side only is a producer that saw half of what the design declares (the
    documented rule, "without inputs or outputs in those runs, the job's design", per side)."""
    if job.outputs and not outputs:
        inputs = sorted({item.key for run in runs for item in _io(run, snapshots)[0]})
        several = _uncorrelated(inputs, job.outputs)
        return [(item.key, dict(item.facets), inputs, several) for item in job.outputs]
    if job.inputs and outputs and not any(_io(run, snapshots)[0] for run in runs):
        inputs = [item.key for item in job.inputs]
        several = _uncorrelated(inputs, outputs)
        return [(key, facets, inputs, several) for key, facets, _, _ in outputs]
    return outputs


def _one_column_lineage_for_all(outputs: Sequence[_Written]) -> bool:
    """Whether several outputs each carry a ``columnLineage`` facet, all the same, that cannot be
    each output's own: it names a source the runs did not read (a temporary table, a CTE), a
    field some output's schema lacks (or an output has no schema that would show it), or a
    field fed by several inputs. One statement's lineage
    copied to two outputs (``INSERT INTO a SELECT id FROM src; INSERT INTO b SELECT id FROM
    src``) is each output's, and still correlates them."""
    if len(outputs) < 2:
        return False
    facets = [facet_of(facets, ColumnLineageDatasetFacet) for _, facets, _, _ in outputs]
    first = facets[0]
    if first is None or any(facet != first for facet in facets[1:]):
        return False
    read = {_identity(k) for _, _, inputs, _ in outputs for k in inputs}
    for target, entry in first.fields.items():
        # a name the runs did not read, even one an input ends with, is a temporary table or
        # a CTE as likely as the input (``_as_read`` then decides for each output)
        sources = {(namespace_identity(i.namespace), i.name) for i in entry.input_fields}
        if len(sources) > 1 or not sources <= read:
            return True
        for _, written, _, _ in outputs:
            schema = facet_of(written, SchemaDatasetFacet)
            names = _top_names(schema) if schema is not None else set()
            if not names:
                return True  # nothing proves the facet is this output's own
            if target not in names and target.split(".", 1)[0] not in names:
                return True
    return False


def _top_names(schema: SchemaDatasetFacet) -> set[str]:
    return {field.name for field in schema.fields or ()}


def _without(facets: dict[str, BaseFacet], key: str) -> dict[str, BaseFacet]:
    return {name: facet for name, facet in facets.items() if name != key}


@dataclass(frozen=True, slots=True)
class _Owner:
    """Who owns the flows of an output: the scope, the label gaps name it by, the label its flow
    names end with (``@<job namespace>/<job name>``; none for a dataset's own lineage) and the
    producer its descriptions name."""

    scope: str
    label: str
    name_suffix: str
    producer: str


def _output_flows(
    collector: FlowCollector,
    who: _Owner,
    evidence: FlowEvidence,
    output: DatasetKey,
    by_dataset: dict[DatasetKey, list[Source]],
    *,
    include_indirect: bool,
    analysed: bool = False,
    unnamed: Sequence[DatasetKey] = (),
) -> None:
    """The table flow from each dataset of ``by_dataset`` into ``output``, and the column flows
    of its DIRECT field inputs (seed 001): the same rules for a job's outputs and for a dataset's
    own lineage facet (a DatasetEvent's), whose description names its producer and the
    transformations alike, and the indirect inputs with ``includeIndirect``."""
    target = collector.end(output)
    column_text = _describe(evidence, who.producer)
    descriptions: dict[tuple[str, ...], str] = {}  # transformations → column flow text
    known_target = collector.known_fields(target) if target is not None else None
    for dataset, items in sorted(by_dataset.items()):
        origin = collector.end(dataset)
        if origin is None or target is None:
            collector.dropped(who.label, *_missing((dataset, origin), (output, target)))
            continue
        # One pass sorts the sources into column flows, undeclared field inputs and (with
        # includeIndirect) indirect ones: the three are disjoint, as a direct source names a
        # DIRECT transformation. Only column flows report (FIELD_NOT_CATALOGUED), in order.
        known_origin = collector.known_fields(origin)
        # the fields as their databases store them (``FlowCollector.field_case``): asked here,
        # once the origin is resolved, as resolving it may declare the target's case too
        origin_case, target_case = collector.field_case(origin), collector.field_case(target)
        columns: list[tuple[str, str, str]] = []
        undeclared: list[Source] = []
        indirect: list[Source] = []
        for item in items:
            if not (item.direct and item.field and item.target_field):
                if _undeclared(item):
                    undeclared.append(item)
                elif (
                    include_indirect
                    and (item.field or item.transformations)  # else a plain entity input
                    and (not item.direct or (item.field and not item.target_field))
                ):
                    indirect.append(item)
                continue
            source_field = item.field
            if origin_case:
                source_field = cased_identifier(source_field, origin_case)
            target_field = item.target_field
            if target_case:
                target_field = cased_identifier(target_field, target_case)
            if known_origin is not None and source_field not in known_origin:
                collector.field_not_catalogued(origin, source_field, owner=who.label)
                continue
            if known_target is not None and target_field not in known_target:
                collector.field_not_catalogued(target, target_field, owner=who.label)
                continue
            description = descriptions.get(item.transformations)
            if description is None:  # the fields of an output share a few transformations
                labels = "; ".join(t for t in item.transformations if not _is_indirect(t))
                description = column_text + (f" Transformations: {labels}." if labels else "")
                descriptions[item.transformations] = description
            columns.append((source_field, target_field, description))
            if include_indirect and len(item.transformations) > 1:
                # ``sum(a) … GROUP BY a``: its GROUP_BY is described beside the indirect inputs
                rest = tuple(label for label in item.transformations if _is_indirect(label))
                if rest:
                    indirect.append(replace(item, direct=False, transformations=rest))
        flow_evidence: FlowEvidence = "io" if dataset in unnamed else evidence
        notes = []
        if analysed:
            notes.append("The SQL of the job is analysed by Blindata for column flows.")
        if undeclared:
            notes.append(_undeclared_note(undeclared))
        notes.extend(_indirect_notes(indirect))
        collector.add(
            scope=who.scope,
            owner_label=who.name_suffix,
            kind="table",
            evidence=flow_evidence,
            source=FlowEnd(origin),
            target=FlowEnd(target),
            description=_describe(flow_evidence, who.producer, notes),
        )
        collector.add_columns(
            scope=who.scope,
            owner_label=who.name_suffix,
            evidence=flow_evidence,
            source=origin,
            target=target,
            columns=columns,
            superseded_by_analysis=analysed,
        )


def _declared_targets(
    declared: LineageJobFacet | None, outputs: Sequence[_Written]
) -> list[_Written]:
    """The targets of the facet's ``DATASET`` entries that no listed output is: the facet names
    the job's outputs itself (seed 001 asks a step that is not SQL for "one DATASET entry per
    output", not for its inputs and outputs), so a JobEvent may send it alone."""
    targets: list[_Written] = []
    for entry in declared.entries if declared else ():
        if not isinstance(entry, LineageDatasetEntry):
            continue
        target = DatasetKey(entry.namespace, entry.name)
        listed = (output[0] for output in (*outputs, *targets))
        if not any(_same(target, other) for other in listed):
            targets.append((target, {}, [], False))
    return targets


def _own_column(source: Source) -> bool:
    """A DIRECT field input from another field of the dataset it writes (UPDATE, MERGE)."""
    return bool(
        source.direct
        and source.field
        and source.target_field
        and source.field != source.target_field
    )


def _keep_own_columns(by_dataset: dict[DatasetKey, list[Source]], dataset: DatasetKey) -> None:
    """The sources of a dataset read and written that make column flows (``SET a = f(b)``: a
    DIRECT field input, seed 001); the table flow from a dataset to itself is none, and its other
    sources make nothing, so that a dataset only read and written reports no flow."""
    own = [source for source in by_dataset[dataset] if _own_column(source)]
    if own:
        by_dataset[dataset] = own
    else:
        del by_dataset[dataset]


def _missing(*ends: tuple[DatasetKey | JobKey, EntityKey | None]) -> list[DatasetKey | JobKey]:
    """The keys of the ends that resolved to no entity."""
    return [key for key, entity in ends if entity is None]


def _undeclared(source: Source) -> bool:
    """A field mapped into a field with no transformation named: described, never a flow."""
    return bool(source.field and source.target_field and not source.transformations)


def _undeclared_note(sources: Sequence[Source]) -> str:
    pairs = "; ".join(f"{s.dataset.name}.{s.field} into {s.target_field}" for s in sources)
    # the names are free text (``db.t?sig=…``), as every name a description quotes
    return redact_text(f"Field inputs with no transformation declared (not column flows): {pairs}.")


def _indirect_notes(sources: Sequence[Source]) -> list[str]:
    """One note per indirect input and kind of transformation, naming the fields it goes into:
    Spark's per-field lineage repeats a join's key for every column of the output (300 columns,
    four keys: 1,200 notes, 70,000 characters of one description)."""
    into: dict[tuple[str, tuple[str, ...]], list[str | None]] = {}
    for source in sources:
        where = f"{source.dataset.name}.{source.field}" if source.field else source.dataset.name
        into.setdefault((where, source.transformations), []).append(source.target_field)
    notes = []
    for (where, transformations), targets in into.items():
        named = list(dict.fromkeys(target for target in targets if target))
        fields = " (whole dataset)" if None in targets else ""
        if named:
            more = len(named) - _NAMED_TARGETS
            shown = ", ".join(named[:_NAMED_TARGETS]) + (f" and {more} more" if more > 0 else "")
            fields += f"{',' if fields else ''} into {shown}"
        kinds = ", ".join(transformations) or "INDIRECT"
        notes.append(f"Indirect: {where}{fields} ({kinds}).")
    return notes


_NAMED_TARGETS = 10
"""The fields an indirect input's note names; the others are counted."""


def _job_to_job_flows(job: JobFold, collector: FlowCollector, include_indirect: bool) -> None:
    """A lineage facet with JOB entries or JOB inputs: data flows between jobs and datasets."""
    declared = facet_of(job.facets, LineageJobFacet)
    if not declared:
        return
    owner = f"{job.key.namespace}/{job.key.name}"
    scope = job_scope(job.key.namespace, job.key.name)
    producer = job.latest.producer if job.latest else _design_producer(job)
    who = _Owner(scope, owner, owner, producer)
    for entry in declared.entries:
        target_key: DatasetKey | JobKey
        inputs: list[_Declared]
        if isinstance(entry, LineageJobEntry):
            target_key = JobKey(entry.namespace or job.key.namespace, entry.name or job.key.name)
            inputs = [(item, None) for item in entry.inputs or ()]
        else:
            # dataset → dataset is the data flow pass's; a job feeds the dataset as a whole
            target_key = DatasetKey(entry.namespace, entry.name)
            inputs = _job_inputs(entry.inputs, entry.fields)
        origins: list[_Origin] = []
        for item, target_field in inputs:
            if isinstance(item, LineageJobInput):
                origin = JobKey(item.namespace or job.key.namespace, item.name or job.key.name)
                origins.append((origin, item, target_field))
            else:
                origins.append((DatasetKey(item.namespace, item.name), item, target_field))
        _declared_end_flows(collector, who, target_key, origins, "declared", include_indirect)


_Declared = tuple[LineageInput, str | None]
"""A declared input and the field of the target it feeds (``None``: the target as a whole)."""

_Origin = tuple[DatasetKey | JobKey, LineageInput, str | None]
"""The end a declared input names, the input, and the field of the target it feeds."""


def _job_inputs(
    inputs: Sequence[LineageInput] | None, fields: Mapping[str, LineageFieldEntry] | None
) -> list[_Declared]:
    """The JOB inputs of a dataset's declaration: entity-level, and those of its fields (a job
    that generates a field, like ``sum()`` with no dataset read, feeds the dataset as a whole)."""
    found: list[_Declared] = [(i, None) for i in inputs or () if isinstance(i, LineageJobInput)]
    for name, entry in sorted((fields or {}).items()):
        found.extend((i, name) for i in entry.inputs if isinstance(i, LineageJobInput))
    return found


def _declared_end_flows(
    collector: FlowCollector,
    who: _Owner,
    target_key: DatasetKey | JobKey,
    origins: Sequence[_Origin],
    evidence: FlowEvidence,
    include_indirect: bool,
) -> None:
    """A table flow into ``target_key`` from each origin, a job at one end at least, described
    (seed 001) with the transformations of its inputs (the indirect ones with
    ``includeIndirect``)."""
    by_origin: dict[DatasetKey | JobKey, list[tuple[LineageInput, str | None]]] = {}
    for origin_key, item, target_field in origins:
        by_origin.setdefault(origin_key, []).append((item, target_field))
    target: EntityKey | None = None
    resolved = False
    for origin_key, items in by_origin.items():
        if not resolved:  # only once a flow exists, so that an entry with none reports none
            target, resolved = _end_of(collector, target_key), True
        origin = _end_of(collector, origin_key)
        if origin is None or target is None:
            collector.dropped(who.label, *_missing((origin_key, origin), (target_key, target)))
            continue
        notes = [
            note
            for item, target_field in items
            if (note := _declared_note(origin_key.name, item, target_field, include_indirect))
        ]
        collector.add(
            scope=who.scope,
            owner_label=who.name_suffix,
            kind="table",
            evidence=evidence,
            source=FlowEnd(origin),
            target=FlowEnd(target),
            description=_describe(evidence, who.producer, notes),
        )


def _declared_note(
    origin: str, item: LineageInput, target_field: str | None, include_indirect: bool
) -> str | None:
    """How a flow with a job at one end describes one of its declared inputs: its DIRECT
    transformations, and its INDIRECT ones with ``includeIndirect``; nothing without any."""
    direct, labels = _transformations(item.transformations)
    if not labels:
        return None
    into = f" into {target_field}" if target_field else ""
    if direct:
        return f"Transformations{into}: {'; '.join(labels)}."
    if not include_indirect:
        return None
    field = item.field if isinstance(item, LineageDatasetInput) else None
    where = f"{origin}.{field}" if field else origin
    return f"Indirect: {where}{into or ' (whole dataset)'} ({', '.join(labels)})."


def _job_input_flows(
    collector: FlowCollector,
    who: _Owner,
    target_key: DatasetKey,
    facet: LineageDatasetFacet,
    own_job: JobKey | None,
    include_indirect: bool,
    evidence: FlowEvidence = "declared",
) -> None:
    """The JOB inputs of a dataset's own lineage facet (entity inputs, and those of its fields):
    job → dataset data flows, as the job facet's entries give (seed 001: "An explicit lineage
    facet with JOB entries or inputs gives job to job flows as data flows"). A JOB input with no
    namespace and name is the event's own job (``own_job``; a DatasetEvent has none)."""
    origins: list[_Origin] = []
    for item, target_field in _job_inputs(facet.inputs, facet.fields):
        if isinstance(item, LineageJobInput) and item.namespace is not None and item.name:
            origins.append((JobKey(item.namespace, item.name), item, target_field))
        elif own_job is not None:
            origins.append((own_job, item, target_field))
        # else "the event's own job" of an event that has none: no flow
    _declared_end_flows(collector, who, target_key, origins, evidence, include_indirect)


def _end_of(collector: FlowCollector, key: DatasetKey | JobKey) -> EntityKey | None:
    return collector.job_end(key) if isinstance(key, JobKey) else collector.end(key)


def _own_lineage(job: JobFold) -> Iterator[tuple[tuple[str, str], LineageDatasetFacet]]:
    """The dataset-level lineage facets the job itself sent on its outputs (they are its
    declared lineage, whatever other events say of the dataset)."""
    for run in job.runs:
        for output in run.outputs:
            facet = layered_facet(LineageDatasetFacet, output.facets, output.output_facets)
            if facet is not None:
                yield _identity(output.key), facet
    for output in job.outputs:
        facet = facet_of(output.facets, LineageDatasetFacet)
        if facet is not None:
            yield _identity(output.key), facet


def _dataset_lineage(
    dataset: DatasetFold, own: Mapping[tuple[str, str], list[LineageDatasetFacet]]
) -> LineageDatasetFacet | None:
    """The dataset's own lineage facet: its DatasetEvents' (``design_lineage``), else the latest
    ``lineage`` facet of the dataset unless a job sent it on its output (that one is the job's
    declared lineage, published with the job's flows)."""
    if dataset.design_lineage is not None:
        return dataset.design_lineage
    facet = facet_of(dataset.facets, LineageDatasetFacet)
    if facet is None:
        return None
    return None if facet in own.get(_identity(dataset.key), ()) else facet


def _dataset_event_flows(
    fold: Fold,
    collector: FlowCollector,
    written: set[tuple[str, str]],
    own: Mapping[tuple[str, str], list[LineageDatasetFacet]],
    *,
    include_indirect: bool,
) -> None:
    """A dataset's own lineage facet (a DatasetEvent's): flows with no job, in the dataset's scope.

    Published whether or not a job writes the dataset: the job's flows (in its scope, named
    ``@<job>``) are the evidence of what that job moved, the dataset's are what its own
    declaration says (a catalog, a repository of designs), and the two are different evidence
    (issue 37). Neither replaces the other, so neither is set aside; a dataset that a job writes
    too is counted (``datasetLineageBesideJobs``), so a steward knows where both meet.
    """
    report = collector.plan.report
    for dataset in fold.datasets:
        facet = _dataset_lineage(dataset, own)
        columns = dataset.design_column_lineage
        if facet is None and columns is not None and _names_inputs(columns):
            # A DatasetEvent's columnLineage facet (static lineage of a view, say): its flows as
            # an output's are, in the dataset's scope; a lineage facet beside it wins, as on a
            # job's output (seed 001's ranking)
            _dataset_column_flows(
                dataset, columns, collector, written, include_indirect=include_indirect
            )
            continue
        if facet is None:
            continue
        identity = _identity(dataset.key)
        if identity in written:
            report.count("datasetLineageBesideJobs")
        scope = _dataset_scope(dataset.key)
        by_dataset = _by_dataset(_declared_sources(facet.inputs, facet.fields))
        for key in [key for key in by_dataset if _same(key, dataset.key)]:
            _keep_own_columns(by_dataset, key)
        # The producer that declared the lineage: the facet's own ``_producer``.
        who = _Owner(scope, f"dataset {dataset.key}", "", facet.producer or "")
        _job_input_flows(
            collector, who, dataset.key, facet, None, include_indirect, "dataset_event"
        )
        if not by_dataset:
            continue  # nothing feeds the dataset: no flow, so none can dangle
        _output_flows(
            collector,
            who,
            "dataset_event",
            dataset.key,
            by_dataset,
            include_indirect=include_indirect,
        )


def _dataset_scope(key: DatasetKey) -> str:
    """The scope of a dataset's own flows, ``ol:dataset:<namespace>|<name>``: its namespace as
    ``namespace_identity`` spells it, so that two databases' tables of one name, their database
    in a JDBC namespace, are two owners (``…;databaseName=dwh|dbo.Orders``)."""
    return job_scope(f"dataset:{namespace_identity(key.namespace)}", key.name)


def _dataset_column_flows(
    dataset: DatasetFold,
    facet: ColumnLineageDatasetFacet,
    collector: FlowCollector,
    written: set[tuple[str, str]],
    *,
    include_indirect: bool,
) -> None:
    """The flows of a DatasetEvent's ``columnLineage`` facet: table and column flows with no
    job, in the dataset's scope, as ``_dataset_event_flows`` makes a lineage facet's."""
    if _identity(dataset.key) in written:
        collector.plan.report.count("datasetLineageBesideJobs")
    scope = _dataset_scope(dataset.key)
    by_dataset = _column_lineage_sources(facet)
    for key in [key for key in by_dataset if _same(key, dataset.key)]:
        _keep_own_columns(by_dataset, key)
    if not by_dataset:
        return
    who = _Owner(scope, f"dataset {dataset.key}", "", facet.producer or "")
    _output_flows(
        collector,
        who,
        "dataset_event_column_lineage",
        dataset.key,
        by_dataset,
        include_indirect=include_indirect,
    )


def _producer_gaps(job: JobFold, collector: FlowCollector, parents: Set[JobKey]) -> None:
    run = job.latest
    if run is None:
        return
    owner = f"{job.key.namespace}/{job.key.name}"
    # Airflow names every operator it has no extractor for, also one whose hand-written inlets
    # and outlets gave the run its datasets, or whose hook's queries carry them (child jobs,
    # ``<task>.query.N``): then no lineage is missing.
    has_datasets = bool(run.inputs or run.outputs) or job.key in parents
    lost = _unconverted_assets(facet_of(run.run_facets, AirflowRunFacet), run)
    if not has_datasets and facet_of(run.run_facets, UnknownOperatorAttributeRunFacet):
        # the Assets it declared, where it did: the fix is the provider that knows their scheme
        example = f"{owner}: {', '.join(lost)} not sent" if lost else owner
        collector.plan.report.gap(GapCode.PRODUCER_NO_LINEAGE, example)
    elif has_datasets and lost:
        collector.plan.report.gap(
            GapCode.PRODUCER_PARTIAL_LINEAGE, f"{owner}: {', '.join(lost)} not sent"
        )
    # an extraction error facet that counts no failed task and lists no error says the
    # producer handled everything (openlineage-python sends one so)
    extraction = facet_of(run.run_facets, ExtractionErrorRunFacet)
    failed = extraction is not None and (extraction.failed_tasks > 0 or bool(extraction.errors))
    if failed or facet_of(run.run_facets, SparkUnknownRunFacet):
        collector.plan.report.gap(GapCode.PRODUCER_PARTIAL_LINEAGE, owner)


def _unconverted_assets(airflow: AirflowRunFacet | None, run: RunFold) -> list[str]:
    """The Assets a task declares as inlets (outlets) that its run does not name: declared, but
    not sent (the provider sends an Asset only where a provider that knows its scheme is
    installed, ``s3://`` without the Amazon provider is dropped; and not at all when the
    operator's own extraction named datasets), which the task's other datasets kept
    ``PRODUCER_NO_LINEAGE`` silent on. The ``airflow`` facet lists them as Python text.

    An Asset is sent when a dataset of its side may be it (``_may_be``:
    ``postgres://db/analytics/public/orders`` is ``analytics.public.orders``,
    ``s3://bucket/raw/orders`` is ``raw/orders``): each provider converts its URIs its own way,
    and a loss is reported only where no dataset can be the Asset."""
    if airflow is None:
        return []
    lost: list[str] = []
    for side, datasets in (("inlets", run.inputs), ("outlets", run.outputs)):
        # a name-only Asset (``Asset("daily_orders_ready")``) drives scheduling: no dataset
        uris = [uri for uri in _asset_uris(airflow.task.get(side)) if "://" in uri]
        for uri in uris:
            if any(_may_be(uri, item.key) for item in datasets):
                continue
            # shown as a dataset's namespace is: user info, query and fragment are no part of
            # it (seed 002; ``?code=…`` and ``?key=…`` are an HTTP endpoint's keys)
            lost.append(f"{side[:-1]} {redact_text(_without_query(strip_user_info(uri)))}")
    return lost


def _may_be(uri: str, dataset: DatasetKey) -> bool:
    """Whether ``dataset`` may be the Asset ``uri`` as its provider converted it: its name ends
    with the last segment of the Asset's path, at a ``.`` or ``/`` and without case (SQL
    extraction re-cases names: Snowflake's ``DB.PUBLIC.ORDERS``); a bucket's Asset
    (``s3://curated``) is the dataset named ``/`` (or nothing) on its namespace."""
    rest = _without_query(uri).split("://", 1)[-1].rstrip("/")
    name = dataset.name.strip().rstrip("/").casefold()
    if "/" not in rest:  # no path: the bucket itself, or a local path (``file://exports``)
        bucket = not name and _same_store(uri, dataset.namespace)
        return bucket or name.strip("/") == rest.casefold()
    last = rest.rsplit("/", 1)[-1].casefold()
    return name == last or name.endswith(("." + last, "/" + last))


def _same_store(uri: str, namespace: str) -> bool:
    return normalize_namespace(_without_query(uri).rstrip("/")) == normalize_namespace(namespace)


def _without_query(uri: str) -> str:
    """``uri`` without its query and its fragment."""
    return re.split(r"[?#]", uri, maxsplit=1)[0]


_ASSET_URI = re.compile(r"""['"]uri['"]\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")
"""An Asset's ``uri`` in the provider's text of a task's inlets or outlets (``[{'uri': …}]``)."""


def _asset_uris(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(item["uri"]) for item in value if isinstance(item, dict) and item.get("uri")]
    if isinstance(value, str):
        return [single or double for single, double in _ASSET_URI.findall(value[:100_000])]
    return []


def map_lineage(
    fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
) -> None:
    """Table and column data flows of every job, and of datasets that describe their lineage."""
    collector = FlowCollector(fold, definition, resolver, plan)
    # the jobs whose runs started a run with datasets (``_producer_gaps``)
    parents = {
        run.parent_job
        for run in (job.latest for job in fold.jobs)
        if run is not None and run.parent_job is not None and (run.inputs or run.outputs)
    }
    written: set[tuple[str, str]] = set()
    own: dict[tuple[str, str], list[LineageDatasetFacet]] = {}
    for job in fold.jobs:
        _job_flows(job, collector, definition)
        _job_to_job_flows(job, collector, definition.include_indirect)
        _producer_gaps(job, collector, parents)
        written.update(_identity(key) for key in job.written)
        written.update(_identity(o.key) for o in job.outputs)
        for key, facet in _own_lineage(job):
            own.setdefault(key, []).append(facet)
    _dataset_event_flows(
        fold, collector, written, own, include_indirect=definition.include_indirect
    )
    flows = collector.flows()
    plan.flows.extend(flows)
    plan.report.count("flows", len(flows))
