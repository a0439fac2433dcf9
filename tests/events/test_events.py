"""Reading OpenLineage events: every fixture, every facet, and every way an event can be bad.

Each test is named after the sentence of a seed (000-004) or of spec 2-0-2 that it checks.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events import (
    FACETS,
    AirflowJobFacet,
    AirflowRunFacet,
    AirflowStateRunFacet,
    BaseFacet,
    ColumnLineageDatasetFacet,
    DataQualityAssertionsDatasetFacet,
    DataQualityMetricsDatasetFacet,
    DataQualityMetricsInputDatasetFacet,
    DatasetEvent,
    DatasetTypeDatasetFacet,
    DatasetVersionDatasetFacet,
    DatasourceDatasetFacet,
    DocumentationDatasetFacet,
    DocumentationJobFacet,
    EnvironmentVariablesRunFacet,
    ErrorMessageRunFacet,
    EventType,
    ExternalQueryRunFacet,
    ExtractionErrorRunFacet,
    FacetIssues,
    FacetLocation,
    HierarchyDatasetFacet,
    InputSubsetInputDatasetFacet,
    JobEvent,
    JobTypeJobFacet,
    LifecycleStateChangeDatasetFacet,
    LineageDatasetEntry,
    LineageDatasetFacet,
    LineageJobEntry,
    LineageJobFacet,
    NominalTimeRunFacet,
    OutputStatisticsOutputDatasetFacet,
    OwnershipDatasetFacet,
    OwnershipJobFacet,
    ParentRunFacet,
    ProcessingEngineRunFacet,
    RunEvent,
    SchemaDatasetFacet,
    SourceCodeJobFacet,
    SourceCodeLocationJobFacet,
    SQLJobFacet,
    StorageDatasetFacet,
    SymlinksDatasetFacet,
    TagsDatasetFacet,
    TagsJobFacet,
    TagsRunFacet,
    UnknownOperatorAttributeRunFacet,
    WireModel,
    event_key,
    facet_of,
    parse_event,
    read_facets,
)
from airflow_blindata.mapper.fold import fold
from airflow_blindata.mapper.fold.reading import read_events
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.store.prepare import column_text, prepare
from tests.mapper.helpers import as_dict

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openlineage"
DBT_FILES = sorted((FIXTURES / "dbt").glob("*.jsonl"))
DBT_FACETS = {"dbt_run", "dbt_version", "dbt_node"}
TIME = "2026-10-26T06:14:52.318Z"


def dbt_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def run_event(**overrides: Any) -> dict[str, Any]:
    """A small valid RunEvent; ``overrides`` replace top-level keys."""
    event: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": TIME,
        "producer": "https://example.com/producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a11", "facets": {}},
        "job": {"namespace": "halden", "name": "pv.aggregate", "facets": {}},
        "inputs": [{"namespace": "postgres://db:5432", "name": "safety.pv.case_reports"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "safety.pv.weekly"}],
    }
    event.update(overrides)
    return event


def extras(model: Any, path: str = "") -> list[str]:
    """Paths of wire fields no model declared: an alias typo shows up here."""
    found: list[str] = []
    if isinstance(model, WireModel):
        found += [f"{path}.{key}" for key in model.model_extra or {}]
        for name in type(model).model_fields:
            found += extras(getattr(model, name), f"{path}.{name}")
    elif isinstance(model, list):
        for index, item in enumerate(model):
            found += extras(item, f"{path}[{index}]")
    elif isinstance(model, dict):
        for key, item in model.items():
            found += extras(item, f"{path}.{key}")
    return found


# --- the dbt integration's real events -------------------------------------------------------


@pytest.mark.parametrize("path", DBT_FILES, ids=lambda path: path.stem)
def test_every_dbt_event_is_read_with_only_dbt_facets_unknown(path: Path) -> None:
    report = Report()
    events = read_events(dbt_lines(path), report)
    assert len(events) == len(dbt_lines(path)) == report.counters["eventsRead"]
    assert all(isinstance(event, RunEvent) for event in events)
    assert report.gaps == {}
    assert set(report.unknown_facets) <= DBT_FACETS


@pytest.mark.parametrize("path", DBT_FILES, ids=lambda path: path.stem)
def test_text_bytes_and_mapping_read_alike(path: Path) -> None:
    for line in dbt_lines(path)[:4]:
        from_text = parse_event(line).event
        assert from_text is not None
        assert parse_event(line.encode()).event == from_text
        assert parse_event(json.loads(line)).event == from_text


@pytest.mark.parametrize("path", DBT_FILES, ids=lambda path: path.stem)
def test_a_read_event_serialises_back_to_the_wire_format(path: Path) -> None:
    for line in dbt_lines(path)[:6]:
        event = parse_event(line).event
        assert event is not None
        assert parse_event(event.model_dump_json()).event == event
        wire = event.model_dump(mode="json", exclude_unset=True)
        assert set(wire) <= {"eventTime", "eventType", "producer", "schemaURL", "run", "job"} | {
            "inputs",
            "outputs",
        }


def test_dbt_test_failure_carries_assertions_as_dataset_facet_and_error_message() -> None:
    """Seed 003: dataQualityAssertions becomes checks; dbt sends it among the dataset facets."""
    lines = dbt_lines(FIXTURES / "dbt" / "postgres_test_test_ol_events.jsonl")
    event = parse_event(lines[6]).event
    assert isinstance(event, RunEvent)
    assert event.event_type is EventType.FAIL
    assertions = facet_of(event.inputs[0].facets, DataQualityAssertionsDatasetFacet)
    assert assertions is not None
    assert [(a.assertion, a.column, a.success) for a in assertions.assertions] == [
        ("accepted_values", "first_name", False)
    ]
    error = facet_of(event.run.facets, ErrorMessageRunFacet)
    assert error is not None and error.stack_trace is None  # dbt sends null


def test_unknown_facets_keep_the_producers_properties() -> None:
    """Seed 000: the job entity gets the properties of the producer's facets."""
    lines = dbt_lines(FIXTURES / "dbt" / "postgres_run_successful_run_ol_events.jsonl")
    event = next(e for e in map(parse_event, lines) if e.event and "dbt_node" in e.unknown_facets)
    assert isinstance(event.event, RunEvent)
    node = event.event.job.facets["dbt_node"]
    assert type(node) is BaseFacet
    assert node.model_extra is not None and node.model_extra["unique_id"].startswith("model.")


# --- the spec's facet examples ---------------------------------------------------------------

FACET_FIXTURES: list[tuple[str, FacetLocation, type[BaseFacet]]] = [
    ("BaseSubsetDatasetFacet__1", FacetLocation.INPUT, InputSubsetInputDatasetFacet),
    ("BaseSubsetDatasetFacet__2", FacetLocation.INPUT, InputSubsetInputDatasetFacet),
    ("BaseSubsetDatasetFacet__3", FacetLocation.INPUT, InputSubsetInputDatasetFacet),
    ("BaseSubsetDatasetFacet__4", FacetLocation.INPUT, InputSubsetInputDatasetFacet),
    ("ColumnLineageDatasetFacet__1", FacetLocation.DATASET, ColumnLineageDatasetFacet),
    ("ColumnLineageDatasetFacet__2", FacetLocation.DATASET, ColumnLineageDatasetFacet),
    (
        "DataQualityAssertionsDatasetFacet__1",
        FacetLocation.INPUT,
        DataQualityAssertionsDatasetFacet,
    ),
    (
        "DataQualityAssertionsDatasetFacet__1",
        FacetLocation.DATASET,
        DataQualityAssertionsDatasetFacet,
    ),
    ("DataQualityMetricsDatasetFacet__1", FacetLocation.DATASET, DataQualityMetricsDatasetFacet),
    (
        "DataQualityMetricsInputDatasetFacet__1",
        FacetLocation.INPUT,
        DataQualityMetricsInputDatasetFacet,
    ),
    ("DatasetTypeDatasetFacet__1", FacetLocation.DATASET, DatasetTypeDatasetFacet),
    ("DatasetVersionDatasetFacet__1", FacetLocation.DATASET, DatasetVersionDatasetFacet),
    ("DatasourceDatasetFacet__1", FacetLocation.DATASET, DatasourceDatasetFacet),
    ("DocumentationDatasetFacet__1", FacetLocation.DATASET, DocumentationDatasetFacet),
    ("DocumentationJobFacet__1", FacetLocation.JOB, DocumentationJobFacet),
    ("EnvironmentVariablesRunFacet__1", FacetLocation.RUN, EnvironmentVariablesRunFacet),
    ("ErrorMessageRunFacet__1", FacetLocation.RUN, ErrorMessageRunFacet),
    ("ExternalQueryRunFacet__1", FacetLocation.RUN, ExternalQueryRunFacet),
    ("ExtractionErrorRunFacet__1", FacetLocation.RUN, ExtractionErrorRunFacet),
    ("HierarchyDatasetFacet__1", FacetLocation.DATASET, HierarchyDatasetFacet),
    ("JobTypeJobFacet__1", FacetLocation.JOB, JobTypeJobFacet),
    ("JobTypeJobFacet__2", FacetLocation.JOB, JobTypeJobFacet),
    ("JobTypeJobFacet__3", FacetLocation.JOB, JobTypeJobFacet),
    (
        "LifecycleStateChangeDatasetFacet__1",
        FacetLocation.DATASET,
        LifecycleStateChangeDatasetFacet,
    ),
    ("LineageFacet__dataset-to-dataset", FacetLocation.DATASET, LineageDatasetFacet),
    ("LineageFacet__dataset-to-job", FacetLocation.JOB, LineageJobFacet),
    ("LineageFacet__generator", FacetLocation.JOB, LineageJobFacet),
    ("LineageFacet__implicit-job", FacetLocation.JOB, LineageJobFacet),
    ("LineageFacet__job-to-dataset", FacetLocation.JOB, LineageJobFacet),
    ("LineageFacet__job-to-job", FacetLocation.JOB, LineageJobFacet),
    ("LineageFacet__mixed-sources", FacetLocation.JOB, LineageJobFacet),
    ("NominalTimeRunFacet__1", FacetLocation.RUN, NominalTimeRunFacet),
    (
        "OutputStatisticsOutputDatasetFacet__1",
        FacetLocation.OUTPUT,
        OutputStatisticsOutputDatasetFacet,
    ),
    ("OwnershipDatasetFacet__1", FacetLocation.DATASET, OwnershipDatasetFacet),
    ("OwnershipJobFacet__1", FacetLocation.JOB, OwnershipJobFacet),
    ("ParentRunFacet__1", FacetLocation.RUN, ParentRunFacet),
    ("ParentRunFacet__2", FacetLocation.RUN, ParentRunFacet),
    ("ProcessingEngineRunFacet__1", FacetLocation.RUN, ProcessingEngineRunFacet),
    ("SQLJobFacet__1", FacetLocation.JOB, SQLJobFacet),
    ("SchemaDatasetFacet__1", FacetLocation.DATASET, SchemaDatasetFacet),
    ("SourceCodeJobFacet__1", FacetLocation.JOB, SourceCodeJobFacet),
    ("SourceCodeLocationJobFacet__1", FacetLocation.JOB, SourceCodeLocationJobFacet),
    ("StorageDatasetFacet__1", FacetLocation.DATASET, StorageDatasetFacet),
    ("SymlinksDatasetFacet__1", FacetLocation.DATASET, SymlinksDatasetFacet),
    ("TagsDatasetFacet__1", FacetLocation.DATASET, TagsDatasetFacet),
    ("TagsJobFacet__1", FacetLocation.JOB, TagsJobFacet),
    ("TagsRunFacet__1", FacetLocation.RUN, TagsRunFacet),
]


def test_every_facet_fixture_is_in_the_table() -> None:
    stems = {path.stem for path in (FIXTURES / "facets").glob("*__*.json")}
    assert stems == {stem for stem, _, _ in FACET_FIXTURES}


@pytest.mark.parametrize(
    ("stem", "location", "model"),
    FACET_FIXTURES,
    ids=[f"{stem}-{location}" for stem, location, _ in FACET_FIXTURES],
)
def test_every_spec_facet_example_is_read_by_its_model(
    stem: str, location: FacetLocation, model: type[BaseFacet]
) -> None:
    raw = json.loads((FIXTURES / "facets" / f"{stem}.json").read_text())
    issues = FacetIssues()
    facets = read_facets(raw, location, issues)
    (key,) = raw
    assert issues.malformed == [] and issues.unknown == []
    assert type(facets[key]) is model
    assert extras(facets[key]) == []  # every wire field landed in a declared field
    again = model.model_validate(facets[key].model_dump(mode="json", exclude_unset=True))
    assert again == facets[key]


def test_the_key_decides_before_a_carelessly_copied_schema_url() -> None:
    """The spec's own example files datasetType under DatasetVersionDatasetFacet.json."""
    raw = json.loads((FIXTURES / "facets" / "DatasetTypeDatasetFacet__1.json").read_text())
    facet = read_facets(raw, FacetLocation.DATASET)["datasetType"]
    assert isinstance(facet, DatasetTypeDatasetFacet)
    assert (facet.dataset_type, facet.sub_type) == ("VIEW", "MATERIALIZED")


STATS_URL = (
    "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json"
    "#/$defs/OutputStatisticsOutputDatasetFacet"
)


@pytest.mark.parametrize(
    "url",
    [
        STATS_URL,
        "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json",
        "https://openlineage.io/spec/1-0-1/OpenLineage.json#/definitions/OutputStatisticsOutputDatasetFacet",
    ],
)
def test_a_producer_that_publishes_output_statistics_under_stats_is_read_too(url: str) -> None:
    """Seed 003: the facets are recognized by their schema URL (the Redshift Data provider)."""
    output = {"namespace": "redshift://c:5439", "name": "dev.public.t"}
    output["outputFacets"] = {"stats": {"_producer": "p", "_schemaURL": url, "rowCount": 7}}
    parsed = parse_event(run_event(outputs=[output]))
    assert isinstance(parsed.event, RunEvent)
    assert parsed.unknown_facets == ()
    stats = facet_of(parsed.event.outputs[0].output_facets, OutputStatisticsOutputDatasetFacet)
    assert stats is not None and stats.row_count == 7


def test_stats_stays_under_its_key_when_output_statistics_is_also_sent() -> None:
    facets = {
        "outputStatistics": {"rowCount": 1},
        "stats": {"_schemaURL": STATS_URL, "rowCount": 2},
    }
    read = read_facets(facets, FacetLocation.OUTPUT)
    assert isinstance(read["outputStatistics"], OutputStatisticsOutputDatasetFacet)
    assert isinstance(read["stats"], OutputStatisticsOutputDatasetFacet)
    assert (read["outputStatistics"].row_count, read["stats"].row_count) == (1, 2)


def test_a_key_means_different_facets_in_each_container() -> None:
    """``lineage`` is a job facet with entries, and a dataset facet with inputs and fields."""
    for location in FacetLocation:
        for key, model in FACETS[location].items():
            assert key == model.KEY
    assert FACETS[FacetLocation.JOB]["lineage"] is LineageJobFacet
    assert FACETS[FacetLocation.DATASET]["lineage"] is LineageDatasetFacet
    assert FACETS[FacetLocation.RUN]["airflow"] is AirflowRunFacet
    assert FACETS[FacetLocation.JOB]["airflow"] is AirflowJobFacet


def test_lineage_job_facet_entries_per_output_with_entity_inputs_and_fields() -> None:
    """Seed 001 rank 2: entries per output dataset, entity inputs and fields.<target>.inputs[]."""
    raw = json.loads((FIXTURES / "facets" / "LineageFacet__mixed-sources.json").read_text())
    facet = read_facets(raw, FacetLocation.JOB)["lineage"]
    assert isinstance(facet, LineageJobFacet)
    (entry,) = facet.entries
    assert isinstance(entry, LineageDatasetEntry)
    assert [(i.type, i.name) for i in entry.inputs or []] == [
        ("DATASET", "public.orders"),
        ("JOB", "daily.enrichment"),
    ]
    field_inputs = (entry.fields or {})["customer_segment"].inputs
    assert [getattr(i, "field", None) for i in field_inputs] == ["customer_id", None]


def test_a_job_entry_without_namespace_and_name_is_the_events_own_job() -> None:
    raw = json.loads((FIXTURES / "facets" / "LineageFacet__implicit-job.json").read_text())
    facet = read_facets(raw, FacetLocation.JOB)["lineage"]
    assert isinstance(facet, LineageJobFacet)
    (entry,) = facet.entries
    assert isinstance(entry, LineageJobEntry)
    assert (entry.namespace, entry.name) == (None, None)
    half = {"lineage": {"entries": [{"type": "JOB", "namespace": "airflow://prod"}]}}
    issues = FacetIssues()
    assert read_facets(half, FacetLocation.JOB, issues) == {}
    assert "namespace and name must be given together" in issues.malformed[0].reason


def test_column_lineage_per_field_and_for_the_whole_dataset() -> None:
    """Seed 004: inputFields[].transformations[] per output field, and the dataset[] array."""
    raw = json.loads((FIXTURES / "facets" / "ColumnLineageDatasetFacet__2.json").read_text())
    facet = read_facets(raw, FacetLocation.DATASET)["columnLineage"]
    assert isinstance(facet, ColumnLineageDatasetFacet)
    (age,) = facet.fields["ageNextYear"].input_fields
    assert (age.field, [(t.type, t.subtype) for t in age.transformations or []]) == (
        "age",
        [("DIRECT", "TRANSFORMATION")],
    )
    assert [(f.field, (f.transformations or [])[0].subtype) for f in facet.dataset or []] == [
        ("last_name", "SORT"),
        ("first_name", "SORT"),
        ("age", "FILTER"),
    ]


@pytest.mark.parametrize(
    ("stem", "has_root"), [("ParentRunFacet__1", False), ("ParentRunFacet__2", True)]
)
def test_parent_facet_with_and_without_root(stem: str, has_root: bool) -> None:
    """Seed 004: version 1-2-0 of the parent facet can also carry a root run and job."""
    raw = json.loads((FIXTURES / "facets" / f"{stem}.json").read_text())
    parent = read_facets(raw, FacetLocation.RUN)["parent"]
    assert isinstance(parent, ParentRunFacet)
    assert parent.run.run_id.startswith("f99310b4")
    assert (parent.root is not None) is has_root
    if parent.root:
        assert (parent.root.job.name, parent.root.run.run_id[:8]) == ("my_dag", "a0000000")


def test_nested_schema_fields_keep_their_tree() -> None:
    """Seed 000: a struct gives nested fields (dotted later by the catalog pass)."""
    raw = json.loads((FIXTURES / "facets" / "SchemaDatasetFacet__1.json").read_text())
    schema = read_facets(raw, FacetLocation.DATASET)["schema"]
    assert isinstance(schema, SchemaDatasetFacet)
    addresses = next(f for f in schema.fields or [] if f.name == "addresses")
    assert addresses.ordinal_position == 6
    assert [f.name for f in addresses.fields or []] == ["type", "country", "zip", "state", "street"]


def test_airflow_provider_facets_as_the_provider_serialises_them() -> None:
    """Seed 001: the airflow job facet's downstream_task_ids give task to task flows."""
    provider = pytest.importorskip("airflow.providers.openlineage.plugins.facets")
    from openlineage.client.serde import Serde

    task = {"operator": "x.PythonOperator", "task_group": None, "downstream_task_ids": ["b"]}
    facets = {
        "airflow": Serde.to_dict(
            provider.AirflowRunFacet(dag={}, dagRun={}, task={}, taskInstance={}, taskUuid="u")
        ),
        "airflowState": Serde.to_dict(
            provider.AirflowStateRunFacet(
                dagRunState="success", tasksState={"a": "success"}, tasksDuration={"a": 1.5}
            )
        ),
        "unknownSourceAttribute": Serde.to_dict(
            provider.UnknownOperatorAttributeRunFacet(
                unknownItems=[
                    provider.UnknownOperatorInstance(name="BashOperator", properties={"a": 1})
                ]
            )
        ),
    }
    job_facets = {
        "airflow": Serde.to_dict(
            provider.AirflowJobFacet(taskTree={}, taskGroups={}, tasks={"a": task})
        )
    }
    parsed = parse_event(
        run_event(
            run={"runId": "r", "facets": facets},
            job={"namespace": "n", "name": "dag", "facets": job_facets},
        )
    )
    assert isinstance(parsed.event, RunEvent)
    assert parsed.malformed_facets == () and parsed.unknown_facets == ()
    run_facets, job = parsed.event.run.facets, parsed.event.job.facets
    assert isinstance(run_facets["airflow"], AirflowRunFacet)
    state = facet_of(run_facets, AirflowStateRunFacet)
    assert state is not None and state.tasks_state == {"a": "success"}
    unknown = facet_of(run_facets, UnknownOperatorAttributeRunFacet)
    assert unknown is not None and unknown.unknown_items[0].name == "BashOperator"
    graph = facet_of(job, AirflowJobFacet)
    assert graph is not None and graph.tasks["a"].downstream_task_ids == ["b"]


# --- tolerance: malformed and unknown facets ------------------------------------------------


def test_a_malformed_facet_is_ignored_and_the_event_is_still_read() -> None:
    """Seed 001 MALFORMED_FACET: a facet not valid for its schema is ignored; the event is read."""
    output = {
        "namespace": "postgres://db:5432",
        "name": "safety.pv.weekly",
        "facets": {"schema": {"fields": "id, name"}, "dataSource": {"name": "db"}},
    }
    parsed = parse_event(run_event(outputs=[output]))
    assert isinstance(parsed.event, RunEvent)
    assert list(parsed.event.outputs[0].facets) == ["dataSource"]
    (issue,) = parsed.malformed_facets
    assert (issue.where, issue.location, issue.key) == (
        "postgres://db:5432/safety.pv.weekly",
        FacetLocation.DATASET,
        "schema",
    )
    assert issue.reason.startswith("fields: ")
    report = Report()
    read_events([run_event(outputs=[output])], report)
    assert report.counters["eventsRead"] == 1 and report.counters["facetsMalformed"] == 1
    gap = report.gaps[GapCode.MALFORMED_FACET]
    assert gap.count == 1
    assert gap.examples == ["postgres://db:5432/safety.pv.weekly: schema: " + issue.reason]


@pytest.mark.parametrize(
    ("event", "where", "key", "reason"),
    [
        (
            run_event(run={"runId": "r", "facets": {"nominalTime": {"nominalStartTime": "soon"}}}),
            "halden/pv.aggregate",
            "nominalTime",
            "nominalStartTime: Input should be a valid datetime",
        ),
        (
            run_event(
                job={"namespace": "halden", "name": "j", "facets": {"sql": {"dialect": "pg"}}}
            ),
            "halden/j",
            "sql",
            "query: Field required",
        ),
        (
            run_event(job={"namespace": "halden", "name": "j", "facets": {"sql": "SELECT 1"}}),
            "halden/j",
            "sql",
            "not an object (str)",
        ),
        (
            run_event(job={"namespace": "halden", "name": "j", "facets": ["sql"]}),
            "halden/j",
            "facets",
            "not an object (list)",
        ),
        (
            run_event(
                inputs=[
                    {
                        "namespace": "n",
                        "name": "i",
                        "inputFacets": {"dataQualityAssertions": {"assertions": "many"}},
                    }
                ]
            ),
            "n/i",
            "dataQualityAssertions",
            "assertions: Input should be a valid list",
        ),
    ],
    ids=["run-facet", "job-facet", "not-an-object", "container-not-an-object", "input-facet"],
)
def test_malformed_facets_name_their_job_or_dataset(
    event: dict[str, Any], where: str, key: str, reason: str
) -> None:
    parsed = parse_event(event)
    assert parsed.event is not None
    (issue,) = parsed.malformed_facets
    assert (issue.where, issue.key) == (where, key)
    assert issue.reason.startswith(reason)


def test_facets_the_job_does_not_know_are_counted_by_key() -> None:
    """Seed 000: facets the job does not know are counted by key in unknownFacets."""
    facets = {"acme_cost": {"_producer": "p", "_schemaURL": "https://acme/Cost.json", "eur": 3}}
    events = [run_event(run={"runId": "r", "facets": facets}) for _ in range(3)]
    report = Report()
    read = read_events(events, report)
    assert report.unknown_facets == {"acme_cost": 3}
    assert isinstance(read[0], RunEvent) and read[0].run.facets["acme_cost"].model_extra == {
        "eur": 3
    }


def test_missing_producer_and_schema_url_are_accepted() -> None:
    """dbt omits _producer and _schemaURL on its facets; the spec requires them."""
    bare = run_event(job={"namespace": "n", "name": "j", "facets": {"sql": {"query": "SELECT 1"}}})
    del bare["producer"]
    bare["schemaURL"] = None
    parsed = parse_event(bare)
    assert isinstance(parsed.event, RunEvent) and parsed.malformed_facets == ()
    sql = facet_of(parsed.event.job.facets, SQLJobFacet)
    assert sql is not None and (sql.query, sql.producer, sql.schema_url) == ("SELECT 1", None, None)


def test_deleted_facets_are_read_with_their_flag() -> None:
    """Seed 004: job and dataset facets may set _deleted: true to delete a facet."""
    issues = FacetIssues()
    facets = read_facets({"documentation": {"_deleted": True}}, FacetLocation.JOB, issues)
    assert type(facets["documentation"]) is BaseFacet  # no description needed to delete
    assert facets["documentation"].deleted is True
    assert issues.malformed == [] and issues.unknown == []


@pytest.mark.parametrize(
    ("key", "location"),
    [
        ("parent", FacetLocation.RUN),
        ("dataQualityAssertions", FacetLocation.INPUT),
        ("outputStatistics", FacetLocation.OUTPUT),
        ("acme", FacetLocation.RUN),  # nobody's facet: the same
    ],
)
def test_a_run_input_or_output_facet_sent_deleted_is_malformed(
    key: str, location: FacetLocation
) -> None:
    """The spec defines ``_deleted`` on job and dataset facets only (OpenLineage.json: JobFacet,
    DatasetFacet), and docs/facet-support.md limits removal to them: elsewhere the marker is a
    malformed facet, dropped and reported, so that it removes nothing."""
    issues = FacetIssues()
    assert read_facets({key: {"_deleted": True}}, location, issues, "n/j") == {}
    assert [(m.key, m.reason) for m in issues.malformed] == [
        (key, "_deleted is defined for job and dataset facets only")
    ]


NUMBERS_AS_TIMES: list[tuple[str, FacetLocation, dict[str, Any], str]] = [
    ("nominalTime", FacetLocation.RUN, {"nominalStartTime": 1761459292}, "nominalStartTime"),
    (
        "nominalTime",
        FacetLocation.RUN,
        {"nominalStartTime": TIME, "nominalEndTime": 1761459292},
        "nominalEndTime",
    ),
]
"""A metrics facet's ``lastUpdated`` sent as a number is not read as a Unix time either, but it
leaves out that metric alone (``INVALID_METRIC``, tests/mapper/test_quality.py)."""


@pytest.mark.parametrize(
    ("key", "location", "facet", "field"), NUMBERS_AS_TIMES, ids=[n[3] for n in NUMBERS_AS_TIMES]
)
def test_a_facet_time_given_as_a_number_is_malformed_not_read_as_a_unix_time(
    key: str, location: FacetLocation, facet: dict[str, Any], field: str
) -> None:
    """Seed 001 MALFORMED_FACET: the spec's times are date-time strings, as ``eventTime`` is; a
    number would have been read as seconds since 1970 and mapped as such, unreported."""
    issues = FacetIssues()
    read = read_facets({key: facet}, location, issues, "airflow/etl.load")
    assert read == {}
    (issue,) = issues.malformed
    assert issue.key == key
    assert issue.reason == f"{field}: must be an ISO-8601 date-time string, not int"


PARTLY_MALFORMED: list[tuple[str, FacetLocation, dict[str, Any], str, tuple[str, ...]]] = [
    (
        "dataQualityMetrics",
        FacetLocation.INPUT,
        {"rowCount": 3, "columnMetrics": {"x": None, "y": {"nullCount": 1}}},
        "invalid",
        ("columnMetrics.x",),
    ),
    (
        "dataQualityMetrics",
        FacetLocation.DATASET,
        {"rowCount": 3, "columnMetrics": {"x": [1], "y": {"quantiles": 0.5}}},
        "invalid",
        ("columnMetrics.x", "columnMetrics.y.quantiles"),
    ),
    ("dataQualityMetrics", FacetLocation.INPUT, {"rowCount": 3}, "invalid", ()),
    (
        "dataQualityAssertions",
        FacetLocation.INPUT,
        {"assertions": [None, {"assertion": "a", "success": True}, {"assertion": "b"}]},
        "unread",
        ("assertions[0]", "assertions[2]"),
    ),
]
"""A metrics or assertions facet with a part that cannot be read: the part is dropped and named
(the mapper reports it, tests/mapper/test_quality.py), the facet kept."""


@pytest.mark.parametrize(("key", "location", "facet", "noted", "dropped"), PARTLY_MALFORMED)
def test_a_quality_facet_with_one_malformed_part_is_read_without_it_not_malformed(
    key: str, location: FacetLocation, facet: dict[str, Any], noted: str, dropped: tuple[str, ...]
) -> None:
    """Seed 001 MALFORMED_FACET is for a facet not valid for its schema; one column's entry or
    one assertion that cannot be read made the whole facet malformed, and every other metric or
    assertion of it was lost."""
    issues = FacetIssues()
    read = read_facets({key: facet}, location, issues, "airflow/etl.load")
    assert issues.malformed == []
    assert getattr(read[key], noted) == dropped


# --- unreadable events ----------------------------------------------------------------------

UNREADABLE: list[tuple[str, Any, str]] = [
    ("not-json", "{not json", "not JSON: Expecting property name"),
    ("bad-utf8", b"\xff\xfe\xfa", "not JSON: "),
    ("json-array", "[1, 2]", "not a JSON object: got an array"),
    ("json-string", '"RunEvent"', "not a JSON object: got a string"),
    ("python-list", [run_event()], "not JSON text or an object: got an array"),
    ("number", 42, "not JSON text or an object: got a number"),
    ("none", None, "not JSON text or an object: got null"),
    ("no-run-job-dataset", {"eventTime": TIME}, "no run, job or dataset"),
    (
        "no-event-time",
        {k: v for k, v in run_event().items() if k != "eventTime"},
        "eventTime: Field required",
    ),
    (
        "event-time-number",
        run_event(eventTime=1761459292),
        "eventTime: must be an ISO-8601 date-time string, not int",
    ),
    (
        "event-time-text",
        run_event(eventTime="yesterday"),
        "eventTime: Input should be a valid datetime",
    ),
    # a number written as a string is a number all the same: pydantic read it as a Unix time
    # (``"1700000000"`` in 2023, ``"2026"`` in 1970), unreported (a probe of the docs)
    (
        "event-time-digits",
        run_event(eventTime="1700000000"),
        "eventTime: must be an ISO-8601 date-time string, not a number",
    ),
    (
        "event-time-year",
        run_event(eventTime="2026"),
        "eventTime: must be an ISO-8601 date-time string, not a number",
    ),
    (
        "run-without-job",
        {k: v for k, v in run_event().items() if k != "job"},
        "job: Field required",
    ),
    ("job-without-name", run_event(job={"namespace": "n"}), "job.name: Field required"),
    ("run-without-id", run_event(run={"facets": {}}), "run.runId: Field required"),
    ("bad-event-type", run_event(eventType="DONE"), "eventType: Input should be 'START'"),
    ("input-without-name", run_event(inputs=[{"namespace": "n"}]), "inputs.0.name: Field required"),
    (
        "dataset-event-bad-dataset",
        {"eventTime": TIME, "dataset": "t"},
        "dataset: Input should be a valid dictionary",
    ),
]


@pytest.mark.parametrize(
    ("raw", "problem"), [(r, p) for _, r, p in UNREADABLE], ids=[i for i, _, _ in UNREADABLE]
)
def test_unreadable_events_are_reported_not_raised(raw: Any, problem: str) -> None:
    """Seed 001 UNREADABLE_EVENT: the event is not OpenLineage JSON; the reason says why."""
    parsed = parse_event(raw)
    assert parsed.event is None
    assert parsed.problem is not None and parsed.problem.startswith(problem), parsed.problem
    report = Report()
    assert read_events([raw, run_event()], report) != []
    assert report.counters == {"eventsUnreadable": 1, "eventsRead": 1, "runEvents": 1}
    assert report.gaps[GapCode.UNREADABLE_EVENT].examples == [parsed.problem]


def test_event_kinds_follow_the_spec() -> None:
    """Spec 2-0-2: a RunEvent requires run and job; Job and DatasetEvents must not have a run."""
    job_event = {k: v for k, v in run_event().items() if k not in {"run", "eventType"}}
    dataset_event = {
        "eventTime": TIME,
        "producer": "p",
        "schemaURL": "s",
        "dataset": {"namespace": "n", "name": "d"},
    }
    full = json.loads((FIXTURES / "facets" / "example_full_event.json").read_text())
    assert isinstance(parse_event(run_event()).event, RunEvent)
    assert isinstance(parse_event(job_event).event, JobEvent)
    assert isinstance(parse_event(dataset_event).event, DatasetEvent)
    assert isinstance(parse_event(full).event, RunEvent)  # run and job, whatever else it has


def test_a_run_event_without_event_type_is_read() -> None:
    """Spec 2-0-2 does not require eventType."""
    event = parse_event({k: v for k, v in run_event().items() if k != "eventType"}).event
    assert isinstance(event, RunEvent) and event.event_type is None


@pytest.mark.parametrize(
    ("sent", "instant"),
    [
        ("2024-01-01T10:00:00.123+01:00[Europe/Paris]", "2024-01-01T09:00:00.123000+00:00"),
        ("2024-01-01T10:00Z[UTC]", "2024-01-01T10:00:00+00:00"),
        ("2024-07-01T10:00:00-04:00[America/New_York]", "2024-07-01T14:00:00+00:00"),
        ("2024-01-01T10:00:00+0100[Europe/Paris][u-ca=iso8601]", "2024-01-01T09:00:00+00:00"),
        ("2024-01-01T00:00:00.000+0000", "2024-01-01T00:00:00+00:00"),
        ("2024-01-01 00:00:00", "2024-01-01T00:00:00+00:00"),
        ("2024-01-01T10:00:00.123456789Z", "2024-01-01T10:00:00.123456+00:00"),
    ],
)
def test_event_times_as_producers_write_them_are_read_by_their_instant(
    sent: str, instant: str
) -> None:
    """Bad input gets a clear error, never a lost event for a spelling: Java's
    ``ZonedDateTime`` (a JVM producer: Spark, Flink, Hop) writes its zone after the offset,
    as RFC 9557 does (``+01:00[Europe/Paris]``); the offset says the instant."""
    for raw in (run_event(eventTime=sent), json.dumps(run_event(eventTime=sent))):
        event = parse_event(raw).event
        assert event is not None, parse_event(raw).problem
        assert event.event_time.astimezone(UTC).isoformat() == instant
    report = Report()
    assert len(read_events([json.dumps(run_event(eventTime=sent))], report)) == 1


def test_a_zone_name_without_an_offset_is_an_unreadable_time() -> None:
    """A zone name alone needs a zone database to give the instant: the reason says so."""
    parsed = parse_event(run_event(eventTime="2024-01-01T10:00:00[Europe/Paris]"))
    assert parsed.event is None
    assert parsed.problem is not None and parsed.problem.startswith("eventTime: ")


def test_naive_event_times_are_read_as_utc() -> None:
    event = parse_event(run_event(eventTime="2026-10-26T06:14:52")).event
    assert event is not None and event.event_time.utcoffset() is not None


def test_read_events_passes_already_read_events_through() -> None:
    event = parse_event(run_event()).event
    report = Report()
    assert read_events([event, parse_event(run_event())], report) == [event, event]
    assert report.counters == {"eventsRead": 2, "runEvents": 2}


# --- the content key ------------------------------------------------------------------------


def test_the_content_key_ignores_key_order_and_whitespace() -> None:
    """Design 3.2: duplicates are dropped by a content key, so a re-sent event changes nothing."""
    event = run_event()
    reordered = dict(reversed(list(event.items())))
    keys = {
        event_key(event),
        event_key(reordered),
        event_key(json.dumps(event, indent=2)),
        event_key(json.dumps(reordered).encode()),
    }
    assert len(keys) == 1
    assert event_key(run_event(eventType="START")) not in keys
    assert len(next(iter(keys))) == 64


def test_the_content_key_of_text_that_is_not_json_is_its_bytes() -> None:
    assert event_key("{not json") == event_key(b"{not json") != event_key("{not json ")


# --- never raises ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
EVENT_KEYS = [
    "eventTime",
    "eventType",
    "run",
    "job",
    "inputs",
    "outputs",
    "dataset",
    "facets",
    "runId",
    "name",
]


def mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Drop keys, change types, or recurse, at random places of a valid event."""
    if isinstance(value, dict) and value and depth < 6:
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["drop", "replace", "recurse"]))
        copy = dict(value)
        if action == "drop":
            del copy[key]
        elif action == "replace":
            copy[key] = data.draw(json_values)
        else:
            copy[key] = mutate(copy[key], data, depth + 1)
        return copy
    if isinstance(value, list) and value and depth < 6:
        index = data.draw(st.integers(0, len(value) - 1))
        copy_list = list(value)
        copy_list[index] = mutate(copy_list[index], data, depth + 1)
        return copy_list
    return data.draw(json_values)


def dbt_samples() -> list[dict[str, Any]]:
    path = FIXTURES / "dbt" / "postgres_test_test_ol_events.jsonl"
    return [json.loads(line) for line in dbt_lines(path)[:8]]


@given(value=json_values | st.dictionaries(st.sampled_from(EVENT_KEYS), json_values, max_size=6))
def test_arbitrary_json_never_raises(value: Any) -> None:
    for raw in (value, json.dumps(value)):
        parsed = parse_event(raw)
        assert (parsed.event is None) != (parsed.problem is None)
        event_key(raw)
    report = Report()
    fold(read_events([value], report))


@given(data=st.data())
def test_mutations_of_a_valid_event_never_raise(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(dbt_samples()))
    mutated = [mutate(base, data) for _ in range(data.draw(st.integers(1, 3)))]
    report = Report()
    events = read_events([*mutated, json.dumps(mutated[0]), base], report)
    assert report.counters["eventsRead"] == len(events) >= 1
    as_dict(fold(events))


# --- the envelope alone gives the same verdict ----------------------------------------------


def _verdicts_agree(raw: Any) -> None:
    full, envelope = parse_event(raw), parse_event(raw, facets=False)
    if full.event is None and envelope.event is not None:
        # A string no store can hold (a lone surrogate, NUL): the envelope read leaves it to
        # the store's prepare, which finds it in the text it writes, for the same reason.
        stored = prepare(raw, source="test", received_at=datetime.now(UTC))
        assert stored.quarantined
        assert stored.values["reason"] == column_text(full.problem)
        return
    assert (envelope.event is None) == (full.event is None)
    assert envelope.problem == full.problem
    if envelope.event is not None and full.event is not None:
        assert type(envelope.event) is type(full.event)
        assert envelope.event.event_time == full.event.event_time
        assert envelope.malformed_facets == ()


@given(value=json_values | st.dictionaries(st.sampled_from(EVENT_KEYS), json_values, max_size=6))
def test_an_event_is_unreadable_without_its_facets_exactly_when_it_is_with_them(value: Any) -> None:
    """Capture judges events by their envelope (``facets=False``); the mapper reads them whole.

    Both must quarantine the same events for the same reason, or an event the mapper cannot
    read would be stored as readable (or the reverse).
    """
    _verdicts_agree(value)
    _verdicts_agree(json.dumps(value))


@given(data=st.data())
def test_mutated_events_get_the_same_verdict_from_the_envelope_alone(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(dbt_samples()))
    for _ in range(data.draw(st.integers(1, 3))):
        base = mutate(base, data)
    _verdicts_agree(base)


def test_the_envelope_read_leaves_every_facet_map_empty() -> None:
    raw = json.loads(dbt_lines(FIXTURES / "dbt" / "postgres_test_test_ol_events.jsonl")[0])
    event = parse_event(raw, facets=False).event
    assert isinstance(event, RunEvent)
    assert event.run.facets == {} and event.job.facets == {}
    assert all(dataset.facets == {} for dataset in [*event.inputs, *event.outputs])
    assert event.job.name == raw["job"]["name"] and event.run.run_id == raw["run"]["runId"]
