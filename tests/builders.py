"""Shared builders of OpenLineage events, datasets, facets and job definitions, for the tests.

One place that knows the wire shape of the spec (``RunEvent``, ``JobEvent``, ``DatasetEvent``,
the facets), so that a test names only what it checks and a change of shape is made once.
Everything is a plain ``dict`` as a producer would send it: the tests then exercise the project's
own reading of the wire format. Defaults are fixed values (no clock, no random ids), so that a
test built from them is reproducible; pass ``run_id=new_run_id()`` or ``time=now()`` where a test
needs fresh ones.

Facets carry the ``_producer`` and ``_schemaURL`` the spec asks for; ``producer=None`` builds a
bare facet, as the dbt integration sends them. A test that checks an odd or broken shape builds
the usual one and changes it (``event | {"eventTime": 1}``): the builders only build valid events.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from airflow_blindata.definition import JobDefinition

__all__ = [
    "DATASET_EVENT_SCHEMA",
    "DEFINITION_UUID",
    "FACET_PRODUCER",
    "JOB_EVENT_SCHEMA",
    "PG",
    "PRODUCER",
    "RUN_EVENT_SCHEMA",
    "RUN_ID",
    "TIME",
    "assertion",
    "assertions_facet",
    "at",
    "column_lineage_facet",
    "data_source_facet",
    "dataset",
    "dataset_event",
    "dataset_type_facet",
    "definition",
    "definition_data",
    "documentation_facet",
    "facet",
    "field",
    "input_field",
    "job_event",
    "job_type_facet",
    "lifecycle_facet",
    "lineage_facet",
    "metrics_facet",
    "new_run_id",
    "now",
    "ownership_facet",
    "parent_facet",
    "policy",
    "run_cycle",
    "run_event",
    "schema_facet",
    "sql_facet",
]

SPEC = "https://openlineage.io/spec"
RUN_EVENT_SCHEMA = f"{SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent"
JOB_EVENT_SCHEMA = f"{SPEC}/2-0-2/OpenLineage.json#/$defs/JobEvent"
DATASET_EVENT_SCHEMA = f"{SPEC}/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
PRODUCER = "https://example.com/producer"
"""The top-level ``producer`` of built events."""
FACET_PRODUCER = PRODUCER
"""The ``_producer`` of built facets."""

DEFINITION_UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
"""The job definition's uuid of the tests (``job-definition.example.yaml``'s)."""
RUN_ID = "0190b1c2-0000-7000-8000-000000000001"
TIME = "2026-11-29T10:00:00.000Z"
PG = "postgres://db:5432"
"""A PostgreSQL namespace: its System is named ``db`` under ``nameTemplate: "{host}"``."""

Facets = Mapping[str, Any]


def at(second: int = 0, *, minute: int = 0, day: str = "2026-11-29", hour: int = 10) -> str:
    """An ``eventTime`` ``second`` seconds into the test's minute: ordering made readable."""
    return f"{day}T{hour:02d}:{minute:02d}:{second:02d}.000Z"


def now() -> str:
    """The current time as an ``eventTime`` (tests of retention, of the store's clock)."""
    return datetime.now(UTC).isoformat()


def new_run_id() -> str:
    """A fresh run id: events that must not be duplicates of each other."""
    return str(uuid.uuid4())


# -- events ---------------------------------------------------------------------------------------


def dataset(
    name: str,
    namespace: str = PG,
    *,
    facets: Facets | None = None,
    input_facets: Facets | None = None,
    output_facets: Facets | None = None,
) -> dict[str, Any]:
    """A dataset of ``inputs``/``outputs``; ``inputFacets``/``outputFacets`` only when given."""
    built: dict[str, Any] = {"namespace": namespace, "name": name, "facets": dict(facets or {})}
    if input_facets is not None:
        built["inputFacets"] = dict(input_facets)
    if output_facets is not None:
        built["outputFacets"] = dict(output_facets)
    return built


def run_event(
    job: str = "etl.load",
    *,
    event_type: str | None = "COMPLETE",
    namespace: str = "airflow",
    run_id: str = RUN_ID,
    time: str = TIME,
    inputs: Iterable[Mapping[str, Any]] = (),
    outputs: Iterable[Mapping[str, Any]] = (),
    run_facets: Facets | None = None,
    job_facets: Facets | None = None,
    producer: str = PRODUCER,
    schema_url: str | None = RUN_EVENT_SCHEMA,
    **extra: Any,
) -> dict[str, Any]:
    """A ``RunEvent``; ``event_type=None`` leaves ``eventType`` out (it is optional in the spec),
    ``schema_url=None`` leaves ``schemaURL`` out, ``extra`` adds or replaces top-level keys."""
    event: dict[str, Any] = {}
    if event_type is not None:
        event["eventType"] = event_type
    event["eventTime"] = time
    event["producer"] = producer
    if schema_url is not None:
        event["schemaURL"] = schema_url
    event["run"] = {"runId": run_id, "facets": dict(run_facets or {})}
    return _with_job(event, namespace, job, job_facets, inputs, outputs, extra)


def run_cycle(
    job: str = "etl.load",
    *,
    end: str = "COMPLETE",
    start_time: str = at(0),
    end_time: str = at(1),
    **options: Any,
) -> list[dict[str, Any]]:
    """A run as producers send it: ``START`` then its terminal event (``end``), same run id."""
    return [
        run_event(job, event_type="START", time=start_time, **options),
        run_event(job, event_type=end, time=end_time, **options),
    ]


def job_event(
    job: str = "etl.load",
    *,
    namespace: str = "airflow",
    time: str = TIME,
    inputs: Iterable[Mapping[str, Any]] = (),
    outputs: Iterable[Mapping[str, Any]] = (),
    job_facets: Facets | None = None,
    producer: str = PRODUCER,
    schema_url: str | None = JOB_EVENT_SCHEMA,
    **extra: Any,
) -> dict[str, Any]:
    """A ``JobEvent``: a job's design (its datasets, its facets) without a run."""
    event: dict[str, Any] = {"eventTime": time, "producer": producer}
    if schema_url is not None:
        event["schemaURL"] = schema_url
    return _with_job(event, namespace, job, job_facets, inputs, outputs, extra)


def _with_job(
    event: dict[str, Any],
    namespace: str,
    job: str,
    job_facets: Facets | None,
    inputs: Iterable[Mapping[str, Any]],
    outputs: Iterable[Mapping[str, Any]],
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """``event`` with its job, datasets and any extra keys, in the order producers write them."""
    event["job"] = {"namespace": namespace, "name": job, "facets": dict(job_facets or {})}
    event["inputs"] = [dict(item) for item in inputs]
    event["outputs"] = [dict(item) for item in outputs]
    event.update(extra)
    return event


def dataset_event(
    name: str = "analytics.sales.orders",
    namespace: str = PG,
    *,
    facets: Facets | None = None,
    time: str = TIME,
    producer: str = PRODUCER,
    schema_url: str | None = DATASET_EVENT_SCHEMA,
    **extra: Any,
) -> dict[str, Any]:
    """A ``DatasetEvent``: a dataset's metadata, from no job."""
    event: dict[str, Any] = {"eventTime": time, "producer": producer}
    if schema_url is not None:
        event["schemaURL"] = schema_url
    event["dataset"] = {"namespace": namespace, "name": name, "facets": dict(facets or {})}
    event.update(extra)
    return event


# -- facets ---------------------------------------------------------------------------------------


def facet(
    schema: str,
    *,
    version: str = "1-0-0",
    defs: str | None = None,
    producer: str | None = FACET_PRODUCER,
    **fields: Any,
) -> dict[str, Any]:
    """A facet of the spec's ``schema`` file (``SchemaDatasetFacet``…) with ``_producer`` and
    ``_schemaURL`` (``defs``: its ``$defs`` name when not the file's, as ``LineageFacet``'s);
    ``producer=None``: the bare fields, as the dbt integration sends them."""
    if producer is None:
        return dict(fields)
    url = f"{SPEC}/facets/{version}/{schema}.json#/$defs/{defs or schema}"
    return {"_producer": producer, "_schemaURL": url, **fields}


def field(name: str, type_: str | None = None, **more: Any) -> dict[str, Any]:
    """A field of a schema facet (``fields`` nest as ``fields=[field(...)]``)."""
    built: dict[str, Any] = {"name": name}
    if type_ is not None:
        built["type"] = type_
    return {**built, **more}


def schema_facet(
    *fields: Mapping[str, Any] | str, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"schema": ...}``; a field may be given by its name alone."""
    listed = [field(item) if isinstance(item, str) else dict(item) for item in fields]
    return {
        "schema": facet("SchemaDatasetFacet", version="1-1-1", producer=producer, fields=listed)
    }


def data_source_facet(
    name: str, uri: str | None = None, *, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"dataSource": ...}``; ``uri`` defaults to ``name``."""
    built = facet("DatasourceDatasetFacet", producer=producer, name=name, uri=uri or name)
    return {"dataSource": built}


def sql_facet(
    query: str, dialect: str | None = None, *, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"sql": ...}``, a job facet."""
    more = {"dialect": dialect} if dialect is not None else {}
    return {"sql": facet("SQLJobFacet", producer=producer, query=query, **more)}


def documentation_facet(
    description: str, *, job: bool = False, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"documentation": ...}`` of a dataset, or of a job with ``job=True``."""
    schema = "DocumentationJobFacet" if job else "DocumentationDatasetFacet"
    return {"documentation": facet(schema, producer=producer, description=description)}


def ownership_facet(
    *owners: str | tuple[str, str], job: bool = False, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"ownership": ...}``; an owner is a name or a ``(name, type)``."""
    listed = [
        {"name": owner} if isinstance(owner, str) else {"name": owner[0], "type": owner[1]}
        for owner in owners
    ]
    schema = "OwnershipJobFacet" if job else "OwnershipDatasetFacet"
    return {"ownership": facet(schema, producer=producer, owners=listed)}


def lifecycle_facet(
    state: str, previous: tuple[str, str] | None = None, *, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"lifecycleStateChange": ...}``; ``previous``: the ``(namespace, name)`` renamed from."""
    more: dict[str, Any] = {}
    if previous is not None:
        more["previousIdentifier"] = {"namespace": previous[0], "name": previous[1]}
    built = facet(
        "LifecycleStateChangeDatasetFacet", producer=producer, lifecycleStateChange=state, **more
    )
    return {"lifecycleStateChange": built}


def dataset_type_facet(
    dataset_type: str, sub_type: str | None = None, *, producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"datasetType": ...}`` (``TABLE``, ``VIEW``…)."""
    more = {"subType": sub_type} if sub_type is not None else {}
    built = facet("DatasetTypeDatasetFacet", producer=producer, datasetType=dataset_type, **more)
    return {"datasetType": built}


def job_type_facet(
    job_type: str,
    integration: str = "AIRFLOW",
    processing_type: str = "BATCH",
    *,
    producer: str | None = FACET_PRODUCER,
) -> dict[str, Any]:
    """``{"jobType": ...}`` (``TASK``, ``DAG``, ``QUERY``…)."""
    built = facet(
        "JobTypeJobFacet",
        version="2-0-3",
        producer=producer,
        processingType=processing_type,
        integration=integration,
        jobType=job_type,
    )
    return {"jobType": built}


def parent_facet(
    job: str,
    run_id: str,
    namespace: str = "airflow",
    *,
    root: tuple[str, str, str] | None = None,
    producer: str | None = FACET_PRODUCER,
) -> dict[str, Any]:
    """``{"parent": ...}``, a run facet; ``root``: the ``(namespace, job, run id)`` of the root."""
    more: dict[str, Any] = {}
    if root is not None:
        more["root"] = {
            "job": {"namespace": root[0], "name": root[1]},
            "run": {"runId": root[2]},
        }
    built = facet(
        "ParentRunFacet",
        version="1-1-0",
        producer=producer,
        job={"namespace": namespace, "name": job},
        run={"runId": run_id},
        **more,
    )
    return {"parent": built}


def input_field(
    name: str,
    field_name: str,
    namespace: str = PG,
    *,
    transformations: Iterable[Mapping[str, Any]] | None = (
        {"type": "DIRECT", "subtype": "IDENTITY"},
    ),
) -> dict[str, Any]:
    """One ``inputFields`` item of a column lineage: ``field_name`` of dataset ``name``."""
    built: dict[str, Any] = {"namespace": namespace, "name": name, "field": field_name}
    if transformations is not None:
        built["transformations"] = [dict(item) for item in transformations]
    return built


def column_lineage_facet(
    fields: Mapping[str, Iterable[Mapping[str, Any]]],
    *,
    dataset: Iterable[Mapping[str, Any]] | None = None,
    producer: str | None = FACET_PRODUCER,
) -> dict[str, Any]:
    """``{"columnLineage": ...}`` from ``{output field: [input_field(...), ...]}``;
    ``dataset``: the dataset-wide (INDIRECT) inputs."""
    more: dict[str, Any] = {"dataset": [dict(i) for i in dataset]} if dataset is not None else {}
    built = facet(
        "ColumnLineageDatasetFacet",
        version="1-2-0",
        producer=producer,
        fields={
            name: {"inputFields": [dict(item) for item in inputs]}
            for name, inputs in fields.items()
        },
        **more,
    )
    return {"columnLineage": built}


def lineage_facet(
    *sources: str | tuple[str, str],
    namespace: str = PG,
    producer: str | None = FACET_PRODUCER,
) -> dict[str, Any]:
    """``{"lineage": ...}`` of a dataset: each source (a name, or ``(namespace, name)``) feeds
    it."""
    inputs = [
        {
            "namespace": source[0] if isinstance(source, tuple) else namespace,
            "name": source[1] if isinstance(source, tuple) else source,
            "type": "DATASET",
        }
        for source in sources
    ]
    built = facet("LineageFacet", defs="LineageDatasetFacet", producer=producer, inputs=inputs)
    return {"lineage": built}


def assertion(
    name: str, success: bool = True, column: str | None = None, **more: Any
) -> dict[str, Any]:
    """One item of ``dataQualityAssertions``: test ``name`` on the dataset, or on ``column``."""
    built: dict[str, Any] = {"assertion": name, "success": success}
    if column is not None:
        built["column"] = column
    return {**built, **more}


def assertions_facet(
    *items: Mapping[str, Any], producer: str | None = FACET_PRODUCER
) -> dict[str, Any]:
    """``{"dataQualityAssertions": ...}``, an input facet."""
    listed = [dict(item) for item in items]
    built = facet("DataQualityAssertionsDatasetFacet", producer=producer, assertions=listed)
    return {"dataQualityAssertions": built}


def metrics_facet(
    row_count: int | None = None,
    byte_count: int | None = None,
    *,
    columns: Mapping[str, Mapping[str, Any]] | None = None,
    producer: str | None = FACET_PRODUCER,
) -> dict[str, Any]:
    """``{"dataQualityMetrics": ...}``, an input facet; ``columns``: ``columnMetrics``."""
    more: dict[str, Any] = {}
    if row_count is not None:
        more["rowCount"] = row_count
    if byte_count is not None:
        more["bytes"] = byte_count
    more["columnMetrics"] = {name: dict(values) for name, values in (columns or {}).items()}
    built = facet("DataQualityMetricsInputDatasetFacet", producer=producer, **more)
    return {"dataQualityMetrics": built}


# -- job definitions ------------------------------------------------------------------------------


def policy(pattern: str = "postgres://*", **settings: Any) -> dict[str, Any]:
    """A ``systemPolicies`` entry that creates missing Systems (``creation: IF_MISSING``);
    ``settings`` in the file's own spelling (``nameTemplate``, ``technology``…)."""
    return {"pattern": pattern, "creation": "IF_MISSING", **settings}


def definition_data(*policies: Mapping[str, Any], **options: Any) -> dict[str, Any]:
    """A job definition as its YAML file reads (keys as in ``job-definition.example.yaml``)."""
    data: dict[str, Any] = {"uuid": DEFINITION_UUID}
    if policies:
        data["systemPolicies"] = [dict(item) for item in policies]
    data.update(options)
    return data


def definition(*policies: Mapping[str, Any], **options: Any) -> JobDefinition:
    """A ``JobDefinition`` through ``from_dict``, as the YAML file is read: the tests go through
    the same validation a deployment does."""
    return JobDefinition.from_dict(definition_data(*policies, **options))
