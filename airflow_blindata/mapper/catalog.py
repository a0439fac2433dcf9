"""Catalog objects of seed 000: dataset entities and their fields, job entities, SQL routines.

Each function is one pass over the fold that adds to the plan. Several datasets can land on one
entity (the partitions of an S3 folder, two spellings of one table): they are merged in the order
of their last event, later descriptions winning, fields united by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from operator import attrgetter
from urllib.parse import quote

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import (
    AirflowDagRunFacet,
    AirflowRunFacet,
    BaseFacet,
    DatasetTypeDatasetFacet,
    DatasourceDatasetFacet,
    DocumentationDatasetFacet,
    DocumentationJobFacet,
    EventType,
    HierarchyDatasetFacet,
    JobTypeJobFacet,
    LifecycleStateChangeDatasetFacet,
    ProcessingEngineRunFacet,
    SchemaDatasetFacet,
    SchemaField,
    SourceCodeLocationJobFacet,
    SQLJobFacet,
    SymlinksDatasetFacet,
    facet_of,
)
from airflow_blindata.mapper.documentation import DESCRIPTION_LIMIT, place_text
from airflow_blindata.mapper.fold import DatasetFold, DatasetKey, Fold, JobFold, RunFold
from airflow_blindata.mapper.identity import (
    EntityName,
    cased_identifier,
    dataset_uri,
    entity_name,
    filled_database,
    is_object_store,
    namespace_identity,
    normalize_namespace,
    shown_namespace,
    strip_user_info,
)
from airflow_blindata.mapper.plan import (
    OPENLINEAGE_JOB,
    CatalogPlan,
    EntityKey,
    PlannedEntity,
    PlannedField,
    PlannedRoutine,
    PlannedSystem,
    Property,
    planned_field,
)
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.sql import sqlglot_dialect, tables_dropped
from airflow_blindata.mapper.systems import SystemResolver, databases_ignore_case
from airflow_blindata.redaction import (
    REDACTED,
    names_a_secret,
    names_hold_properties,
    redact_dataset_name,
    redact_name,
    redact_query,
    redact_sql,
    redact_text,
)

__all__ = [
    "dataset_name",
    "entity_key",
    "flatten_fields",
    "job_sql",
    "map_datasets",
    "map_jobs",
]


@dataclass
class _Draft:
    """An entity being assembled from one or more OpenLineage objects."""

    key: EntityKey
    may_create: bool
    sources: list[str] = field(default_factory=list)
    table_type: str | None = None
    description: str | None = None
    documentation: str | None = None
    documentation_hash: str | None = None
    properties: dict[str, list[str]] = field(default_factory=dict)
    fields: dict[str, PlannedField] = field(default_factory=dict)

    def set_text(self, text: str | None, content_type: str | None) -> None:
        placement = place_text(text, content_type)
        if placement.description:
            self.description = placement.description
        if placement.documentation:
            self.documentation = placement.documentation
            self.documentation_hash = placement.documentation_hash

    def add(self, name: str, value: str | None, *, redacted: bool = False) -> None:
        """Add a property value, without the credentials a URL or a ``password=`` setting in
        it carries (a producer's own facet may name its connection): every property reaches
        the catalog through here. ``redacted``: a value made of redacted parts already (a
        dataset's URI, whose name read as free text would lose an ``@`` and what precedes it)."""
        if value is not None and str(value).strip():
            text = str(value) if redacted else redact_text(str(value))
            values = self.properties.setdefault(name, [])
            if text not in values:
                values.append(text)

    def set(self, name: str, values: Iterable[str | None]) -> None:
        """Replace the values of ``name``: a later facet describes the object anew."""
        self.properties.pop(name, None)
        for value in values:
            self.add(name, value)

    def entity(self) -> PlannedEntity:
        properties: tuple[Property, ...] = tuple(
            (name, value) for name in sorted(self.properties) for value in self.properties[name]
        )
        # Every value is typed already (texts, a key, tuples of texts): nothing validates them
        # again (tests compare the entity with the one validation gives).
        return PlannedEntity(
            key=self.key,
            may_create=self.may_create,
            table_type=self.table_type,
            description=self.description,
            documentation=self.documentation,
            documentation_hash=self.documentation_hash,
            properties=properties,
            source=" + ".join(self.sources),
        )


def flatten_fields(
    entity: EntityKey, fields: Iterable[SchemaField], *, prefix: str = ""
) -> Iterator[tuple[PlannedField, str | None]]:
    """Nested fields dotted (``window``, ``window.day``), in depth-first order.

    Yields each field with the description that did not fit (over 250 characters), so the caller
    can count it: Blindata has no field documentation to receive it. A field with a blank name is
    left out, with what is nested in it.
    """
    return iter(_flat_fields(entity, fields, prefix))


MAX_POSITION = 2**31 - 1
"""The largest ordinal position Blindata holds (a 32-bit integer)."""


def _flat_fields(
    entity: EntityKey,
    fields: Iterable[SchemaField],
    prefix: str,
    unnamed: list[str] | None = None,
    misplaced: list[str] | None = None,
    case: str | None = None,
) -> list[tuple[PlannedField, str | None]]:
    """``flatten_fields`` as a list: the catalog pass takes every field of every dataset, and
    appending to one list costs less than resuming a generator per field and nesting level.

    A field whose name is blank is no field (Blindata refuses a field without a name) and gives
    its nested fields no name to be dotted under: it is left out with them, and the path it was
    found at (``""`` at the top) is added to ``unnamed``, when given. A field whose
    ``ordinal_position`` is no position (below 1, the spec's first, or beyond what Blindata
    holds) has its depth-first position, as one without; its name is added to ``misplaced``.
    ``case``: the ``identifierCase`` declared for the dataset's namespace, applied to each
    unquoted field name (a column is an identifier as a table is)."""
    flat: list[tuple[PlannedField, str | None]] = []
    fields = list(fields)
    # Nested fields have no ordinal position of their own (a producer numbers the top level):
    # positions then follow the depth-first walk, each level in the order of its positions, so
    # that they stay unique and a struct's fields come right after it (``w`` 2, ``w.day`` 3)
    nested = any(item.fields for item in fields)

    def walk(items: Iterable[SchemaField], path: str) -> None:
        for item in _by_position(items) if nested else items:
            if not item.name.strip():
                if unnamed is not None:
                    unnamed.append(path)
                continue
            own = cased_identifier(item.name, case) if case else item.name
            name = f"{path}.{own}" if path else own
            description = redact_text((item.description or "").strip()) or None
            too_long = description if description and len(description) > DESCRIPTION_LIMIT else None
            position = item.ordinal_position
            if position is not None and not 1 <= position <= MAX_POSITION:
                if misplaced is not None:
                    misplaced.append(name)
                position = None
            if nested:
                position = None  # the walk's, in the order of the positions
            flat.append(
                (
                    planned_field(
                        entity,
                        name,
                        item.type,
                        position or len(flat) + 1,
                        None if too_long else description,
                    ),
                    too_long,
                )
            )
            if item.fields:
                walk(item.fields, name)

    walk(fields, prefix)
    return flat


def _by_position(items: Iterable[SchemaField]) -> list[SchemaField]:
    """One level of a schema in the order of its ordinal positions, those without one (or
    without a valid one) after them in the order they came."""

    def order(item: SchemaField) -> tuple[bool, int]:
        position = item.ordinal_position
        valid = position is not None and 1 <= position <= MAX_POSITION
        return (not valid, position if valid and position is not None else 0)

    return sorted(items, key=order)


def locate_dataset(
    fold: Fold, key: DatasetKey, resolver: SystemResolver, example: str | None
) -> tuple[PlannedSystem | None, EntityName | None, str]:
    """``place_dataset`` of any dataset of ``fold`` (or named only in a facet), with its name
    when it was read: only where the name can move the System (the definition selects Systems
    by database, or the dataset has a symlinks facet); else ``None``, read by the caller once it
    knows the dataset has a System."""
    known = fold.dataset(key)
    facets = known.facets if known is not None else {}
    found = None
    if resolver.by_database or facet_of(facets, SymlinksDatasetFacet) is not None:
        found = _dataset_name(key, facets, resolver)
    system, namespace = place_dataset(key, found, resolver, example)
    return system, found, namespace


def place_dataset(
    key: DatasetKey, found: EntityName | None, resolver: SystemResolver, example: str | None
) -> tuple[PlannedSystem | None, str]:
    """The System of a dataset named ``found``, and the namespace that chose it.

    A dataset named by a TABLE symlink (Spark names a catalog table by its storage location,
    with the catalog's name as a symlink: ``abfss://…/__unitystorage/…`` and
    ``databricks://host`` ``main.sales.orders``) is the catalog's table: it lands on the System
    of the symlink's namespace when the definition gives that one a System, where the other
    producers of the table (SQL operators, dbt) name it; else on its own namespace's, as
    before. A location that a mapping or a person's stamp (not one on a System a definition
    created) gives its System keeps it: a person chose
    it. ``example`` records the gap of a namespace that resolves to none (``None``: not);
    ``found`` may be ``None`` where the name cannot change the System (``locate_dataset``)."""
    database = found.database if found is not None else None
    if (
        found is not None
        and found.namespace is not None
        and not resolver.chosen_by_person(key.namespace, database)
    ):
        system = resolver.dataset_system(found.namespace, None, found.database)
        if system is not None:
            return system, found.namespace
    return resolver.dataset_system(key.namespace, example, database), key.namespace


def dataset_name(fold: Fold, key: DatasetKey, resolver: SystemResolver) -> EntityName:
    """Database, schema and entity of any dataset, also one named only inside a facet (it has no
    fold: no facets), read as the definition reads the names of its namespace."""
    known = fold.dataset(key)
    return _dataset_name(key, known.facets if known is not None else {}, resolver)


def _dataset_name(
    key: DatasetKey, facets: dict[str, BaseFacet], resolver: SystemResolver
) -> EntityName:
    hierarchy = facet_of(facets, HierarchyDatasetFacet) if facets else None
    symlinks = facet_of(facets, SymlinksDatasetFacet) if facets else None
    dataset_type = facet_of(facets, DatasetTypeDatasetFacet) if facets else None
    reading = resolver.reading(key.namespace)
    read = partial(
        entity_name,
        key.namespace,
        # redacted before it is split: a URL read as an object key loses its ``//`` (the
        # end of an empty folder), and with it what shows its password (``https:/etl:pw@…``)
        redact_dataset_name(key.namespace, key.name),
        hierarchy=[(level.type, level.name) for level in hierarchy.hierarchy] if hierarchy else (),
        symlinks=[(s.namespace, s.name, s.type) for s in (symlinks.identifiers or ())]
        if symlinks
        else (),
        # seed 000: "files … are dropped from the end": a dataset its facets call a file is one
        file=dataset_type is not None and dataset_type.dataset_type.strip().upper() == "FILE",
        reading=reading,
        reading_of=resolver.reading,
    )
    found = read()
    if symlinks and found.rule == "profile" and _unplaced_location(key, found, resolver):
        # Spark on S3 (EMR, Databricks on AWS) names a catalog table by its location, with the
        # catalog's name as a TABLE symlink; seed 000 reads the S3 key first, and where the
        # bucket has no System the table was lost (UNMAPPED_NAMESPACE) while the catalog that
        # registers it was crawled (a probe of naming): the symlink names it then
        linked = read(profile=False)
        if (
            linked.rule == "symlink"
            and linked.namespace is not None
            and resolver.dataset_system(linked.namespace, None, linked.database) is not None
        ):
            return linked
    if found.database is not None or found.rule != "profile":
        return found
    source = facet_of(facets, DatasourceDatasetFacet) if facets else None
    return filled_database(
        found,
        key.namespace,
        key.name,
        reading,
        source_uri=source.uri if source is not None else None,
        databases=resolver.databases_of(key.namespace),
    )


def _unplaced_location(key: DatasetKey, found: EntityName, resolver: SystemResolver) -> bool:
    """Whether ``key`` is an object store's location whose namespace has no System (and is not
    one the definition ignores): the dataset would be lost."""
    if not is_object_store(key.namespace) or resolver.ignores(key.namespace):
        return False
    return resolver.dataset_system(key.namespace, None, found.database) is None


def entity_key(system: str, found: EntityName, namespace: str) -> EntityKey | None:
    """The entity of a dataset on ``system``; None when its name gives none (``""``, or
    ``db.schema.``). A name's JDBC properties are hidden only in a database's ``namespace``
    (``redaction.names_hold_properties``: an object's key ``raw,token=eth/x`` is none).

    Blindata refuses an entity without a name, so it is never planned: the dataset is reported
    as ``EMPTY_DATASET_NAME`` instead of an upload that fails on every run.
    """
    if not found.name.strip():
        return None
    # a dataset's name is free text: a URL's ``?token=`` in it is not catalogued
    properties = names_hold_properties(namespace)
    schema = None if found.schema is None else redact_name(found.schema, properties=properties)
    return EntityKey(
        system=system, schema_=schema, name=redact_name(found.name, properties=properties)
    )


def shown_dataset(key: DatasetKey) -> str:
    """A dataset as an entity's ``openLineageDataset`` and its source show it: the namespace
    normalised (no user info, no query) and the name as its entity's is redacted (a partition
    ``token=eth`` is kept: two folders stay two), an HTTP API's keys hidden as in a URL shown.
    Not the whole URI read as free text: an ``@`` in a key ended a "user info" there
    (``s3://bucket`` + ``exports@2026/x`` was ``s3://***@2026/x``, one text for two buckets)."""
    return redact_query(
        dataset_uri(key.namespace, redact_dataset_name(key.namespace, key.name)), api_keys=True
    )


def shown_source(key: DatasetKey) -> str:
    """A dataset as an entity's source names it: the namespace as the producer spelt it
    (without credentials), then the name as ``shown_dataset`` shows it."""
    name = redact_dataset_name(key.namespace, key.name)
    return redact_query(f"{shown_namespace(key.namespace)}/{name}", api_keys=True)


def _dataset_properties(
    draft: _Draft,
    dataset: DatasetKey,
    facets: dict[str, BaseFacet],
    dataset_type: DatasetTypeDatasetFacet | None,
    renamed: LifecycleStateChangeDatasetFacet | None = None,
) -> None:
    """The properties of a dataset; ``dataset_type`` is its facet, which the caller read;
    ``renamed`` its latest ``RENAME`` (``DatasetFold.renamed``)."""
    draft.add("openLineageDataset", shown_dataset(dataset), redacted=True)
    previous = renamed.previous_identifier if renamed else None
    if previous is not None:
        draft.set("openLineageRenamedFrom", [dataset_uri(previous.namespace, previous.name)])
    if dataset_type:
        draft.set("openLineageDatasetType", [dataset_type.dataset_type])
        draft.set("openLineageDatasetSubtype", [dataset_type.sub_type])
    for key in sorted(facets.keys() & _PROPERTY_FACETS):
        for name, values in _facet_properties(key, facets[key]).items():
            draft.set(name, values)


_PROPERTY_FACETS = frozenset({"catalog", "dataSource", "storage", "ownership", "tags"})


def _facet_properties(key: str, facet: BaseFacet) -> dict[str, list[str | None]]:
    """Additional properties of the catalog, dataSource, storage, ownership and tags facets."""
    if key not in _PROPERTY_FACETS:  # the others give none: not worth a dump (schema, lineage)
        return {}
    data = facet.model_dump(by_alias=False, exclude={"producer", "schema_url", "deleted"})
    if key == "catalog":
        names = ("framework", "type", "name", "metadata_uri", "warehouse_uri", "source")
        return {
            _property_name("openLineageCatalog", name): [_safe(data.get(name))] for name in names
        }
    if key == "dataSource":
        return {
            "openLineageDataSourceName": [_safe(data.get("name"))],
            # a namespace's URI: its connection properties' secrets hidden as a namespace's
            # (``/PASSWORD=Pa@ss``: read as free text, ``ss`` was shown as the host)
            "openLineageDataSourceUri": [_shown_uri(data.get("uri"))],
        }
    if key == "storage":
        return {
            "openLineageStorageLayer": [data.get("storage_layer")],
            "openLineageFileFormat": [data.get("file_format")],
        }
    if key == "ownership":
        owners = data.get("owners") or ()
        return {
            "openLineageOwnership": [
                f"{o['type']}:{o['name']}" if o.get("type") else o["name"] for o in owners
            ]
        }
    if key == "tags":
        tags = data.get("tags") or ()
        return {
            "openLineageTag": [
                _tag(tag.get("key"), tag.get("value")) for tag in tags if not tag.get("field")
            ],
            # a column's tag (a PII classification) on the entity, naming its column: fields
            # carry no properties in a plan
            "openLineageFieldTag": [
                f"{tag['field']}: {_tag(tag.get('key'), tag.get('value'))}"
                for tag in tags
                if tag.get("field")
            ],
        }
    return {}


def _tag(key: object, value: object) -> str:
    """``key=value``, or the key alone when the value repeats it or is empty: Airflow sends a
    DAG tag ``sql`` as ``{"key": "sql", "value": "sql"}``, which a steward reads as ``sql``.
    The value of a key that names a secret (``password``) is hidden whole, spaces and all."""
    if value in (None, "", key):
        return str(key)
    if names_a_secret(str(key)):
        return f"{key}={REDACTED}"
    return f"{key}={value}"


_SECRET_NAMES = re.compile(
    r"pass|pwd|secret|token|key|cred|auth|sig|cookie|jwt|bearer", re.IGNORECASE
)
"""A producer's field whose name holds one of these is left out of the properties: more
than ``redaction``'s secret words (``pwd``, ``signature``), as a property is only a hint."""
_MAX_PRODUCER_PROPERTIES = 20


def _producer_properties(
    facets: dict[str, BaseFacet], seen: _SeenFacets | None = None
) -> Iterator[tuple[str, str]]:
    """What producers say about themselves: the engine, the Airflow task, their own facets.

    Facets the mapper does not model (dbt's ``dbt_version``, ...) give ``<facet>.<field>`` for
    their top-level scalar fields, leaving out any field whose name suggests a secret.
    """
    engine = facet_of(facets, ProcessingEngineRunFacet)
    if engine:
        yield "openLineageProcessingEngine", f"{engine.name or ''} {engine.version}".strip()
    airflow = facet_of(facets, AirflowRunFacet)
    if airflow:
        for name, value in (
            ("openLineageAirflowDagId", airflow.dag.get("dag_id")),
            ("openLineageAirflowOperator", airflow.task.get("operator_class")),
        ):
            if isinstance(value, str) and value:
                yield name, value
    # only facets nobody models (plain ``BaseFacet``s), sorted by key: sorting them all first
    # (schema, SQL, parent) cost more than the rest
    own = [(key, facet) for key, facet in facets.items() if type(facet) is BaseFacet]
    for key, facet in sorted(own) if len(own) > 1 else own:
        if key.startswith("_"):
            continue
        if seen is None:
            yield from _own_properties(key, facet)
            continue
        found = seen.get((key, id(facet)))
        if found is None:
            found = seen[key, id(facet)] = (facet, list(_own_properties(key, facet)))
        yield from found[1]


_SeenFacets = dict[tuple[str, int], tuple[BaseFacet, list[tuple[str, str]]]]
"""The properties of each facet nobody models, by key and ``id``: facets read from the same
text are one object (``registry.facet_from_json``), a producer's version facet on every job of
a run (their sorting and filtering per job was a fifth of mapping dbt's jobs). The facet is
held with them, so that its ``id`` is not reused meanwhile."""


def _own_properties(key: str, facet: BaseFacet) -> Iterator[tuple[str, str]]:
    """``<facet>.<field>`` of a facet nobody models: its top-level scalars, no secret's name."""
    extra = sorted((facet.__pydantic_extra__ or {}).items())
    scalars = [
        (field_name, value)
        for field_name, value in extra
        if isinstance(value, str | int | float | bool) and not _SECRET_NAMES.search(field_name)
    ]
    for field_name, value in scalars[:_MAX_PRODUCER_PROPERTIES]:
        text = str(value)
        if text and len(text) <= DESCRIPTION_LIMIT:
            yield f"{key}.{field_name}", text


def _property_name(prefix: str, name: str) -> str:
    return prefix + "".join(part.capitalize() for part in name.split("_"))


def _safe(value: object) -> str | None:
    """A text property that may be a URI: without user info, and with a password given as a
    parameter (``jdbc:postgresql://db/x?user=etl&password=...``) as ``***``, so no credential
    is catalogued."""
    return None if value is None else redact_query(strip_user_info(str(value)))


def _shown_uri(value: object) -> str | None:
    """A data source's URI as a namespace is shown (``shown_namespace``): ``_safe``, and the
    secret values of its JDBC connection properties as ``***``, each whole."""
    return None if value is None else shown_namespace(str(value))


Identity = Callable[[DatasetKey, dict[str, BaseFacet]], tuple[Hashable, str | None]]
"""What one table is, whatever names it, and the database its name gives (``None``: none):
the entity a dataset lands on (``map_datasets``), or, where nothing resolves it, its
namespace's store and database (``namespace_identity``) and its name."""


def _spelt_identity(key: DatasetKey, facets: dict[str, BaseFacet]) -> tuple[Hashable, None]:
    return (namespace_identity(key.namespace), key.name), None


def gone(fold: Fold, identity: Identity = _spelt_identity) -> dict[DatasetKey, tuple[str, int]]:
    """The datasets no longer described, by why (``datasetsDropped``, ``datasetsRenamed``) and
    the table they name (a number, the same for all its names): the
    latest mention of a table, under any name of it (a spelling of its namespace, a letter case
    its System's ``identifierCase`` reads as one, a namespace mapped to its System, its name
    without the database: ``identity``), is a ``lifecycleStateChange`` ``DROP``; or a later
    ``RENAME`` names it as the previous identifier of another, and no event mentioned it after.
    Two databases' tables on one entity (``DATABASES_MERGED``) are two tables. A dataset's
    ``TABLE`` symlinks are names of it too: Spark drops a table on S3 under its location or
    under the catalog's name alone."""
    identities = {d.key: identity(d.key, d.facets) for d in fold.datasets}
    linked = _linked_tables(fold, identities, identity)

    def table_of(table: Hashable) -> Hashable:
        return _linked_end(linked, table)

    by_table: dict[Hashable, dict[str | None, list[DatasetFold]]] = {}
    for dataset in fold.datasets:
        table, database = identities[dataset.key]
        by_table.setdefault(table_of(table), {}).setdefault(database, []).append(dataset)

    def names(table: Hashable, database: str | None) -> list[list[DatasetFold]]:
        """The names of each table ``table`` and ``database`` may be: one named without its
        database is a name of each of its entity's databases."""
        by_database = by_table.get(table_of(table), {})
        databases = [name for name in by_database if name is not None]
        if len(databases) <= 1:
            return [[d for group in by_database.values() for d in group]] if by_database else []
        if database is not None:
            databases = [database] if database in by_database else []
        return [by_database[name] + by_database.get(None, []) for name in databases]

    dropped_by_sql = _dropped_by_sql(fold)
    ended = _ended_runs(fold)
    found: dict[DatasetKey, tuple[str, int]] = {}
    tables: dict[tuple[str, ...], int] = {}  # a table: the names of it, as one key

    def number(spellings: list[DatasetFold]) -> int:
        return tables.setdefault(tuple(sorted(str(d.key) for d in spellings)), len(tables))

    for table in by_table:
        for spellings in names(table, None):
            last = max(d.last_event_time for d in spellings)
            dropped_at = max(
                (
                    *(
                        d.lifecycle_at
                        for d in spellings
                        if _states(d) == "DROP" and d.lifecycle_at and _completed(d, ended)
                    ),
                    *(dropped_by_sql[d.key] for d in spellings if d.key in dropped_by_sql),
                ),
                default=None,
            )
            if dropped_at is not None and dropped_at >= last:
                dropped = ("datasetsDropped", number(spellings))
                found.update((d.key, dropped) for d in spellings)
    for dataset in fold.datasets:
        previous = dataset.renamed.previous_identifier if dataset.renamed else None
        if previous is None or dataset.renamed_at is None:
            continue
        was = identity(DatasetKey(previous.namespace, previous.name), {})
        own = identities[dataset.key]
        if was == own or table_of(was[0]) == table_of(own[0]):
            continue  # renamed to itself (or its symlink): a way of saying nothing moved
        for spellings in names(*was):
            if max(d.last_event_time for d in spellings) <= dataset.renamed_at:
                renamed = ("datasetsRenamed", number(spellings))
                for old in spellings:
                    found.setdefault(old.key, renamed)
    return found


def _linked_tables(
    fold: Fold,
    identities: dict[DatasetKey, tuple[Hashable, str | None]],
    identity: Identity,
) -> dict[Hashable, Hashable]:
    """Each table a ``TABLE`` symlink names, to the table of the dataset it links (one of
    them, when several are one): followed to its end, one key per table."""
    linked: dict[Hashable, Hashable] = {}
    databases: dict[Hashable, set[str]] = {}
    for table, database in identities.values():
        if database is not None:
            databases.setdefault(table, set()).add(database)

    for dataset in fold.datasets:
        symlinks = facet_of(dataset.facets, SymlinksDatasetFacet)
        if symlinks is None:
            continue
        own = _linked_end(linked, identities[dataset.key][0])
        for link in symlinks.identifiers or ():
            if str(link.type).upper() != "TABLE" or not str(link.name).strip():
                continue
            key = DatasetKey(link.namespace, link.name)
            table = (identities.get(key) or identity(key, {}))[0]
            if len(databases.get(table, ())) > 1:
                continue  # an entity of several databases' tables: which one it is, unknown
            other = _linked_end(linked, table)
            if other != own:
                linked[other] = own
    return linked


def _linked_end(linked: dict[Hashable, Hashable], table: Hashable) -> Hashable:
    """The table ``table`` is linked to, followed to its end (links never loop: each goes to
    a table that links nowhere)."""
    while table in linked:
        table = linked[table]
    return table


def _ended_runs(fold: Fold) -> set[str]:
    """The runs of the fold that completed (by run id: unique, as the spec says)."""
    return {run.run_id for job in fold.jobs for run in job.runs if run.state is EventType.COMPLETE}


def _completed(dataset: DatasetFold, ended: set[str]) -> bool:
    """Whether the run that sent the dataset's latest state completed: a ``DROP TABLE`` that
    failed, or has only started (Spark sends the state on the START too), drops nothing, as a
    run that failed describes no job. Told by the event that sent it (a COMPLETE, a
    DatasetEvent), else by the run, while the fold keeps it."""
    return dataset.lifecycle_completed or dataset.lifecycle_run in ended


def _may_be_gone(fold: Fold) -> bool:
    """Whether any dataset was sent a lifecycle state, or a job's SQL drops a table (most folds:
    neither, and nothing to weigh)."""
    return any(d.lifecycle_at is not None or d.renamed is not None for d in fold.datasets) or any(
        _drops(run) for job in fold.jobs for run in job.latest_completed_group
    )


_DROP_STATEMENT = re.compile(r"(?i)\bdrop\s+(?:temp\s+|temporary\s+)?(?:table|view)\b")


def _drops(run: RunFold) -> SQLJobFacet | None:
    """The run's SQL, when it may drop a table."""
    sql = facet_of(run.job_facets, SQLJobFacet)
    return sql if sql is not None and _DROP_STATEMENT.search(sql.query) else None


def _dropped_by_sql(fold: Fold) -> dict[DatasetKey, datetime]:
    """The outputs a job's SQL drops, and when: Airflow's SQL operators name the table a ``DROP
    TABLE`` drops as an output of the run and send no ``lifecycleStateChange``, so the dropped
    table stayed described as long as the job was. An output of a run of the job's latest
    description that its own statements leave dropped (``mapper.sql.tables_dropped``: not one
    named again after) is dropped when that run ended; a dropped name that may be several of
    its outputs is none of them."""
    found: dict[DatasetKey, datetime] = {}
    for job in fold.jobs:
        for run in job.latest_completed_group:  # each instance of a mapped task with its SQL
            sql = _drops(run)
            if sql is None:
                continue
            dropped = tables_dropped(sql.query, sql.dialect or _platform_dialect(job))
            names = {
                output.key: tuple(
                    part.strip().strip('"`[]').casefold() for part in output.key.name.split(".")
                )
                for output in run.outputs
            }
            for table in dropped:
                ending = [key for key, parts in names.items() if parts[-len(table) :] == table]
                if len(ending) != 1:
                    continue  # none, or several outputs it may name: none is told dropped
                at = found.get(ending[0])
                found[ending[0]] = max(at, run.last_event_time) if at else run.last_event_time
    return found


def _states(dataset: DatasetFold) -> str | None:
    facet = dataset.facets.get("lifecycleStateChange")
    if isinstance(facet, LifecycleStateChangeDatasetFacet):
        return facet.lifecycle_state_change
    return None


def map_datasets(
    fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
) -> None:
    """Entities and fields of every dataset whose namespace resolves to a System."""
    drafts: dict[EntityKey, _Draft] = {}
    report = plan.report
    entities = plan.dataset_entities.found
    databases = _Databases()
    if fold.datasets:
        report.count("datasets", len(fold.datasets))
    # (time, namespace, name): the order of (time, key), without comparing keys in Python
    placed = {
        dataset.key: (
            dataset,
            found,
            *place_dataset(dataset.key, found, resolver, str(dataset.key)),
        )
        for dataset in sorted(
            fold.datasets, key=lambda d: (d.last_event_time, d.key.namespace, d.key.name)
        )
        for found in (_dataset_name(dataset.key, dataset.facets, resolver),)
    }

    # the Systems the datasets landed on, for a renamed table's previous name: resolving one
    # anew would plan a System no dataset of the plan lands on
    landed = {
        (normalize_namespace(namespace), found.database): system
        for _, found, system, namespace in placed.values()
    }

    def identity(key: DatasetKey, facets: dict[str, BaseFacet]) -> tuple[Hashable, str | None]:
        """The entity a dataset lands on (a renamed table's previous name too)."""
        known = placed.get(key)
        if known is None:
            found = _dataset_name(key, facets, resolver)
            system = landed.get((normalize_namespace(key.namespace), found.database))
        else:
            _, found, system, _ = known
        entity = entity_key(system.name, found, key.namespace) if system is not None else None
        if entity is None:
            return _spelt_identity(key, facets)
        return entity, found.database

    no_longer_described = gone(fold, identity) if _may_be_gone(fold) else {}
    counted_gone: set[tuple[str, int]] = set()
    for dataset_key, (dataset, found, system, namespace) in placed.items():
        # read once: a model's attribute is looked up through its class's MRO first, a local is not
        facets = dataset.facets
        where = str(dataset_key)  # the namespace as spelt, without credentials (it is shown)
        if system is None:
            continue
        ended = no_longer_described.get(dataset_key)
        if ended is not None:
            # Dropped, or renamed, and not mentioned since: no longer described, so no entity
            # (one the job made goes at the next cleanup; a crawled one is left as it is)
            entities[dataset_key, system.name] = None
            plan.dataset_entities.gone.add(dataset_key)
            if ended not in counted_gone:  # a table, whatever names it
                counted_gone.add(ended)
                report.count(ended[0])
            continue
        key = entities[dataset_key, system.name] = entity_key(
            system.name, found, dataset_key.namespace
        )
        if key is None:
            report.gap(GapCode.EMPTY_DATASET_NAME, where)
            continue
        databases.add(key, normalize_namespace(namespace), found.database)
        draft = drafts.get(key)
        if draft is None:
            draft = drafts[key] = _Draft(key=key, may_create=system.entity_creation)
        draft.sources.append(f"dataset {shown_source(dataset_key)}")
        dataset_type = facet_of(facets, DatasetTypeDatasetFacet)
        if dataset_type and system.entity_creation:
            # The table type of an entity the job creates; a crawled entity keeps its own.
            draft.table_type = dataset_type.dataset_type.upper()
        documentation = facet_of(facets, DocumentationDatasetFacet)
        if documentation:
            draft.set_text(documentation.description, documentation.content_type)
        _dataset_properties(draft, dataset_key, facets, dataset_type, dataset.renamed)
        schema = facet_of(facets, SchemaDatasetFacet)
        fields = draft.fields
        unnamed: list[str] = []
        misplaced: list[str] = []
        case = resolver.reading(namespace).column_case
        for planned, too_long in _flat_fields(
            key, schema.fields or () if schema else (), "", unnamed, misplaced, case
        ):
            fields[planned.name] = planned
            if too_long:
                report.gap(GapCode.FIELD_DESCRIPTION_TOO_LONG, f"{where}: {planned.name}")
        for path in unnamed:
            report.gap(GapCode.EMPTY_FIELD_NAME, f"{where}: {path}" if path else where)
        for name in misplaced:
            report.gap(
                GapCode.MALFORMED_FACET,
                f"{where}: schema: {name}: ordinal_position is not a position from 1 to "
                f"{MAX_POSITION}: placed by the order of the fields",
            )
        written = dataset.written_schema
        if written is not None:
            # A reader's later schema replaced the writer's: the columns only the writer lists
            # are still described (a reader may list some columns only), after the reader's;
            # a column both list has the writer's type and description (the reader fills what
            # the writer leaves out) at the reader's position: a Spark job reading a dbt model
            # sends its own types and no descriptions, and each sync that saw it last retyped
            # the columns
            for planned, _ in _flat_fields(key, written.fields or (), "", case=case):
                read = fields.get(planned.name)
                fields[planned.name] = planned if read is None else _as_written(planned, read)
    databases.report(report)
    field_names = plan.dataset_entities.field_names
    for draft in sorted(drafts.values(), key=lambda d: _sort_key(d.key)):
        plan.entities.append(draft.entity())
        plan.fields.extend(sorted(draft.fields.values(), key=_FIELD_ORDER))
        if draft.fields:
            field_names[draft.key] = draft.fields.keys()
    report.count("datasetEntities", len(drafts))


class _Databases:
    """The databases of each namespace that land on each entity: two databases of one namespace
    on one entity are two tables merged, reported as ``DATABASES_MERGED`` (issue 37: "never
    merge silently"), naming both. A name without a database is no second database: it is the
    one its connection is on (seed 002: blank segments are "filled from the connection")."""

    def __init__(self) -> None:
        self._seen: dict[tuple[EntityKey, str], set[str]] = {}

    def add(self, key: EntityKey, namespace: str, database: str | None) -> None:
        if database is not None:
            if databases_ignore_case(namespace):  # ``DWH`` and ``dwh``: one SQL Server database
                database = database.casefold()
            self._seen.setdefault((key, namespace), set()).add(database)

    def report(self, report: Report) -> None:
        for (key, namespace), databases in sorted(
            self._seen.items(), key=lambda item: (_sort_key(item[0][0]), item[0][1])
        ):
            if len(databases) > 1:
                schema = f"{key.schema_}." if key.schema_ else ""
                report.gap(
                    GapCode.DATABASES_MERGED,
                    f"{redact_text(namespace)}: databases {', '.join(sorted(databases))} "
                    f"→ {key.system}:{schema}{key.name}",
                )


def _as_written(written: PlannedField, read: PlannedField) -> PlannedField:
    """A column as its writer describes it, with what a reader adds where the writer is
    silent, where the reader's schema places it (the reader's positions are the latest)."""
    return PlannedField(
        entity=written.entity,
        name=written.name,
        type=written.type or read.type,
        ordinal_position=read.ordinal_position,
        description=written.description or read.description,
    )


_FIELD_ORDER = attrgetter("ordinal_position", "name")
"""The order of an entity's fields: (position, name)."""


def _sort_key(key: EntityKey) -> tuple[str, str, str]:
    return (key.system, key.schema_ or "", key.name)


def job_sql(job: JobFold) -> SQLJobFacet | None:
    """The SQL of the job's latest description, as its flows come from it (``lineage``): its
    latest completed run's, with the other instances of a mapped task in that DAG run (their
    distinct statements, in a stable order); else the latest any event sent. A later run that
    failed (a deploy whose new SQL never ran) does not replace what the job does, nor does the
    instance of a mapped task that happened to finish last. A latest completed run that sent job
    facets but no SQL says the job runs none now (a task moved from SQL to Python: its old
    routine, and the flows of its analysis, stayed): no SQL, unless a JobEvent describes the
    job's design (its SQL may be there alone)."""
    found: list[SQLJobFacet] = []
    for run in job.latest_completed_group:
        facet = facet_of(run.job_facets, SQLJobFacet)
        if facet is not None and facet.query.strip() and facet not in found:
            found.append(facet)
    if not found:
        described = any(run.job_facets for run in job.latest_completed_group)
        if described and not job.design_producer:
            return None
        return facet_of(job.facets, SQLJobFacet)
    if len(found) == 1:
        return found[0]
    queries = sorted({facet.query.strip().rstrip(";").rstrip() for facet in found})
    dialects = {facet.dialect for facet in found}
    return found[0].model_copy(
        update={
            "query": ";\n".join(queries),
            "dialect": dialects.pop() if len(dialects) == 1 else None,
        }
    )


def map_jobs(
    fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
) -> None:
    """A job entity per job (when ``processLayer``), and a SCRIPT routine per job with SQL."""
    report = plan.report
    sql_hashes = plan.sql_hashes  # a private attribute: read once, not per job
    seen: _SeenFacets = {}
    if fold.jobs:
        report.count("jobs", len(fold.jobs))
    for job in fold.jobs:
        key = job.key  # read once (see map_datasets)
        scope = job_scope(key.namespace, key.name)
        sql = job_sql(job)
        dialect = (sql.dialect or _platform_dialect(job)) if sql else None
        # a password or key written in the statement is not catalogued (nor hashed): its
        # literals and comments read as the dialect its producer named reads them, else as
        # every reading does (a dialect inferred from the datasets may not be the engine's:
        # Spark reading PostgreSQL through JDBC writes Spark SQL, whose "…" is a literal)
        query = redact_sql(sql.query, sqlglot_dialect(sql.dialect)) if sql else ""
        if not (definition.process_layer or (sql and query.strip())):
            continue  # nothing goes on its job System: none is planned (nor its gaps reported)
        system = resolver.job_system(key.namespace)
        if sql and query.strip():
            plan.routines.append(
                PlannedRoutine(  # typed values, as for an entity (see _Draft.entity)
                    system=system.name,
                    catalog=key.namespace,
                    schema_=key.namespace,
                    name=redact_text(key.name),  # a job's name is free text (``?token=``)
                    type="SCRIPT",
                    definition=query,
                    sql_hash=sql_hashes.hash(query, dialect),
                    dialect=dialect,
                    job=scope,
                )
            )
        if definition.process_layer:
            plan.entities.append(
                _job_entity(job, system.name, scope, definition.airflow_base_url, seen)
            )
    plan.routines.sort(key=lambda r: (r.system, r.catalog, r.name))


PLATFORM_DIALECTS: dict[str, str] = {
    "postgres": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "mysql": "mysql",
    "mssql": "mssql",
    "oracle": "oracle",
    "databricks": "databricks",
    "trino": "trino",
    "awsathena": "athena",
    "hive": "hive",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "teradata": "teradata",
    "clickhouse": "clickhouse",
}
"""The scheme of a dataset namespace (as normalised) → the ``sql`` facet's dialect of the
platform it names: the dialect of a statement whose facet names none (Airflow's SQL operators
send none)."""


def _platform_dialect(job: JobFold) -> str | None:
    """The dialect of the one SQL platform all the job's datasets are on; None when one is
    elsewhere (an object store, a file: the job moves data between platforms, as Spark or a
    transfer operator does, and its SQL is its engine's) or they name several."""
    run = job.latest
    keys = [item.key for item in job.inputs] + [item.key for item in job.outputs]
    if run is not None:
        keys += [item.key for item in run.inputs] + [item.key for item in run.outputs]
    found = set()
    for key in keys:
        namespace = normalize_namespace(key.namespace)
        found.add(PLATFORM_DIALECTS.get(namespace.split("://", 1)[0]))
    return found.pop() if len(found) == 1 else None


def _airflow_urls(base: str, facets: dict[str, BaseFacet]) -> Iterator[tuple[str, str]]:
    """The Airflow UI's pages of the DAG and the task a job is (``airflow`` run facet of a task,
    ``airflowDagRun`` of a DAG run), as Airflow 3's UI routes them: ``/dags/<dag_id>`` and
    ``/dags/<dag_id>/tasks/<task_id>``."""
    task = facet_of(facets, AirflowRunFacet)
    dag_run = facet_of(facets, AirflowDagRunFacet)
    dag_id = (task.dag if task else dag_run.dag if dag_run else {}).get("dag_id")
    if not isinstance(dag_id, str) or not dag_id:
        return
    dag_url = f"{base}/dags/{quote(dag_id, safe='')}"
    yield "openLineageAirflowDagUrl", dag_url
    task_id = task.task.get("task_id") if task else None
    if isinstance(task_id, str) and task_id:
        yield "openLineageAirflowTaskUrl", f"{dag_url}/tasks/{quote(task_id, safe='')}"


def _job_entity(
    job: JobFold,
    system: str,
    scope: str,
    airflow_base_url: str | None = None,
    seen: _SeenFacets | None = None,
) -> PlannedEntity:
    job_key, facets = job.key, job.facets
    # a job's name is free text: the same key as its flows' and its quality results' ends
    key = EntityKey(system=system, schema_=job_key.namespace, name=redact_text(job_key.name))
    draft = _Draft(key=key, may_create=True, table_type=OPENLINEAGE_JOB)
    draft.sources.append(f"job {redact_text(job_key.namespace)}/{key.name}")
    draft.add("openLineageJobScope", scope)
    job_type = facet_of(facets, JobTypeJobFacet)
    if job_type:
        draft.add("openLineageJobType", job_type.job_type)
        draft.add("openLineageProcessingType", job_type.processing_type)
        draft.add("openLineageIntegration", job_type.integration)
    location = facet_of(facets, SourceCodeLocationJobFacet)
    if location:
        draft.add("openLineageSourceCodeUrl", _safe(location.url))
        draft.add("openLineageSourceCodeRepoUrl", _safe(location.repo_url))
        draft.add("openLineageSourceCodePath", location.path)
        draft.add("openLineageSourceCodeVersion", location.version)
        draft.add("openLineageSourceCodeBranch", location.branch)
        draft.add("openLineageSourceCodeTag", location.tag)
    for facet_key in sorted(facets.keys() & _PROPERTY_FACETS):
        for name, values in _facet_properties(facet_key, facets[facet_key]).items():
            draft.set(name, values)
    latest = job.latest
    if latest is not None:
        draft.add("openLineageProducer", latest.producer)
        for name, value in _producer_properties({**facets, **latest.run_facets}, seen):
            draft.set(name, [value])
        if airflow_base_url:
            for name, value in _airflow_urls(airflow_base_url, latest.run_facets):
                draft.set(name, [value])
    documentation = facet_of(facets, DocumentationJobFacet)
    if documentation:
        draft.set_text(documentation.description, documentation.content_type)
    return draft.entity()
