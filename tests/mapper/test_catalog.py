"""Where each OpenLineage object lands in the catalog (seed 000), through ``build``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan, PlannedEntity
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.sql import sql_hash
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY, KnownSystem
from tests import builders
from tests.builders import PG, facet, policy, run_event
from tests.mapper.helpers import dbt_event_dicts as dbt_events

CREATE_ALL = (policy("postgres://*", nameTemplate="{host}"), policy("s3://*"))


def definition(**options: Any) -> JobDefinition:
    return builders.definition(*CREATE_ALL, **options)


def dataset(name: str, namespace: str = PG, **facets: Any) -> dict[str, Any]:
    return builders.dataset(name, namespace, facets=facets)


def schema(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"fields": list(fields)}


def entity(plan: CatalogPlan, name: str) -> PlannedEntity:
    (found,) = [e for e in plan.entities if e.key.name == name]
    return found


# -- datasets → entities -------------------------------------------------------------------------


def test_a_dataset_lands_on_a_physical_entity_with_a_schema_and_a_name() -> None:
    plan = build([run_event(outputs=[dataset("analytics.sales.orders")])], definition())
    orders = entity(plan, "orders")
    assert (orders.key.system, orders.key.schema_, orders.may_create) == ("db", "sales", True)
    assert ("openLineageDataset", f"{PG}/analytics.sales.orders") in orders.properties


def test_a_dataset_whose_namespace_maps_to_no_system_is_reported_and_not_catalogued() -> None:
    plan = build(
        [run_event(outputs=[dataset("a.b.c", namespace="mysql://other:3306")])], definition()
    )
    assert [e.key.name for e in plan.entities if e.key.system != "OpenLineage"] == []
    assert plan.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples == ["mysql://other:3306/a.b.c"]


def test_datasets_that_match_ignored_namespaces_are_accepted_and_counted() -> None:
    plan = build(
        [run_event(inputs=[dataset("idx", namespace="opensearch://os:9200")])], definition()
    )
    assert plan.report.gap_count(GapCode.IGNORED_NAMESPACE) == 1
    assert plan.report.counters["eventsRead"] == 1


def test_on_a_crawled_system_entities_are_only_enriched_not_created() -> None:
    crawled = KnownSystem("Crawled PG", "u-pg", ((NAMESPACE_PROPERTY, PG),))
    plan = build([run_event(outputs=[dataset("a.s.t")])], definition(), [crawled])
    t = entity(plan, "t")
    assert (t.key.system, t.may_create) == ("Crawled PG", False)
    assert all(not s.create for s in plan.systems if s.name == "Crawled PG")


def test_the_dataset_type_facet_sets_the_table_type_and_its_subtype_as_a_property() -> None:
    facets = {"datasetType": {"datasetType": "view", "subType": "MATERIALIZED"}}
    plan = build([run_event(outputs=[dataset("a.s.v", **facets)])], definition())
    view = entity(plan, "v")
    assert view.table_type == "VIEW"
    assert ("openLineageDatasetSubtype", "MATERIALIZED") in view.properties


def test_catalog_datasource_storage_ownership_and_tags_are_additional_properties() -> None:
    facets = {
        "catalog": {"framework": "iceberg", "type": "rest", "name": "prod"},
        "dataSource": {"name": "pg", "uri": "postgresql://etl:s3cret@db:5432/analytics"},
        "storage": {"storageLayer": "iceberg", "fileFormat": "parquet"},
        "ownership": {"owners": [{"name": "finance", "type": "TEAM"}, {"name": "ana"}]},
        "tags": {
            "tags": [{"key": "pii", "value": "true"}, {"key": "x", "value": "y", "field": "c"}]
        },
    }
    plan = build([run_event(outputs=[dataset("a.s.t", **facets)])], definition())
    properties = entity(plan, "t").properties
    expected = {
        ("openLineageCatalogFramework", "iceberg"),
        ("openLineageCatalogName", "prod"),
        ("openLineageDataSourceUri", "postgresql://db:5432/analytics"),
        ("openLineageStorageLayer", "iceberg"),
        ("openLineageFileFormat", "parquet"),
        ("openLineageOwnership", "TEAM:finance"),
        ("openLineageOwnership", "ana"),
        ("openLineageTag", "pii=true"),
    }
    assert expected <= set(properties)
    assert "s3cret" not in json.dumps(plan.model_dump(mode="json"))


def test_a_columns_tag_is_a_property_of_its_entity_naming_the_column() -> None:
    """Seed 000: "catalog, dataSource and storage (and ownership and tags) are stored as
    additional properties of the entity". A tag of one column (a PII classification, the
    ``field`` of a tag) was dropped, and with it what a steward looks for first."""
    tags = {
        "tags": [
            {"key": "pii", "value": "true"},
            {"key": "classification", "value": "confidential", "field": "email"},
            {"key": "masked", "value": "masked", "field": "ssn"},
        ]
    }
    plan = build([run_event(outputs=[dataset("a.s.t", tags=tags)])], definition())
    properties = entity(plan, "t").properties
    assert [v for k, v in properties if k == "openLineageTag"] == ["pii=true"]
    assert [v for k, v in properties if k == "openLineageFieldTag"] == [
        "email: classification=confidential",
        "ssn: masked",
    ]


@pytest.mark.parametrize(
    ("tag", "shown"),
    [
        pytest.param({"key": "sql", "value": "sql", "source": "AIRFLOW"}, "sql", id="airflow"),
        pytest.param({"key": "nightly", "value": ""}, "nightly", id="empty value"),
        pytest.param({"key": "env", "value": "prod"}, "env=prod", id="key and value"),
    ],
)
def test_a_tag_whose_value_repeats_its_key_is_shown_as_the_key(
    tag: dict[str, str], shown: str
) -> None:
    """Airflow sends a DAG tag ``sql`` as key ``sql`` and value ``sql``: a steward reads
    ``sql``, not ``sql=sql``."""
    tags = facet("TagsJobFacet", tags=[tag])
    events = [run_event(job_facets={"tags": tags}, outputs=[dataset("a.s.t")])]
    plan = build(events, definition())
    (job,) = [e for e in plan.entities if str(e.key).endswith("etl.load")]
    assert [v for k, v in job.properties if k == "openLineageTag"] == [shown]


@pytest.mark.parametrize(
    ("uri", "catalogued"),
    [
        (
            "postgresql://db:5432/analytics?user=etl&password=s3cret",
            "postgresql://db:5432/analytics?user=etl&password=***",
        ),
        (
            "jdbc:postgresql://db:5432/analytics?sslmode=require&PASSWORD=s3cret",
            "jdbc:postgresql://db:5432/analytics?sslmode=require&PASSWORD=***",
        ),
        (
            "https://api.example/v1?api_key=s3cret&page=2",
            "https://api.example/v1?api_key=***&page=2",
        ),
        (  # SQL Server's JDBC URL: properties after semicolons, no query string
            "jdbc:sqlserver://db:1433;databaseName=dwh;user=etl;password=s3cret;encrypt=true",
            "jdbc:sqlserver://db:1433;databaseName=dwh;user=etl;password=***;encrypt=true",
        ),
        (
            "jdbc:sqlserver://db\\dwh;integratedSecurity=false;Password=s3cret",
            "jdbc:sqlserver://db\\dwh;integratedSecurity=false;Password=***",
        ),
        (  # pre-signed URLs: Azure's SAS, AWS's and Google's signatures
            "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&sp=r&sig=s3cret",
            "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&sp=r&sig=***",
        ),
        (
            "https://b.s3.amazonaws.com/f.csv?X-Amz-Signature=s3cret&X-Amz-Security-Token=s3cret",
            "https://b.s3.amazonaws.com/f.csv?X-Amz-Signature=***&X-Amz-Security-Token=***",
        ),
        (
            "https://storage.googleapis.com/b/f.csv?X-Goog-Signature=s3cret",
            "https://storage.googleapis.com/b/f.csv?X-Goog-Signature=***",
        ),
    ],
)
def test_a_password_given_as_a_parameter_of_the_datasource_uri_is_not_catalogued(
    uri: str, catalogued: str
) -> None:
    facets = {"dataSource": {"name": "pg", "uri": uri}}
    plan = build([run_event(outputs=[dataset("a.s.t", **facets)])], definition())
    assert ("openLineageDataSourceUri", catalogued) in entity(plan, "t").properties
    assert "s3cret" not in json.dumps(plan.model_dump(mode="json"))


# -- fields ----------------------------------------------------------------------------------------


def test_nested_fields_are_dotted_in_depth_first_order() -> None:
    window = {
        "name": "window",
        "type": "struct",
        "fields": [{"name": "day", "type": "date"}, {"name": "z_score", "type": "double"}],
    }
    facets = {"schema": schema({"name": "id", "type": "int"}, window)}
    plan = build([run_event(outputs=[dataset("a.s.t", **facets)])], definition())
    assert [(f.name, f.type, f.ordinal_position) for f in plan.fields] == [
        ("id", "int", 1),
        ("window", "struct", 2),
        ("window.day", "date", 3),
        ("window.z_score", "double", 4),
    ]


def test_ordinal_position_is_used_when_present() -> None:
    facets = {
        "schema": schema({"name": "b", "ordinal_position": 2}, {"name": "a", "ordinal_position": 1})
    }
    plan = build([run_event(outputs=[dataset("a.s.t", **facets)])], definition())
    assert [(f.name, f.ordinal_position) for f in plan.fields] == [("a", 1), ("b", 2)]


@pytest.mark.parametrize("sent", [0, -3, 2**31, 2**70], ids=["zero", "negative", "2^31", "2^70"])
def test_an_ordinal_position_that_is_no_position_is_reported_and_the_walk_places_the_field(
    sent: int,
) -> None:
    """Seed 000 "ordinal_position when present, otherwise the position in a depth-first walk";
    the spec's positions are 1-indexed, and Blindata holds a 32-bit one: a field sent at 0, below
    it or beyond has the walk's position, and the gap MALFORMED_FACET names it. A negative one
    put the field first, one beyond 2^31 - 1 had the field refused by Blindata at every
    snapshot."""
    fields = schema({"name": "a"}, {"name": "b", "ordinal_position": sent}, {"name": "c"})
    plan = build([run_event(outputs=[dataset("s.t", schema=fields)])], definition())
    assert [(f.name, f.ordinal_position) for f in plan.fields] == [("a", 1), ("b", 2), ("c", 3)]
    assert plan.report.gaps[GapCode.MALFORMED_FACET].examples == [
        f"{PG}/s.t: schema: b: ordinal_position is not a position from 1 to 2147483647: "
        "placed by the order of the fields"
    ]


def test_the_largest_position_blindata_holds_is_kept() -> None:
    fields = schema({"name": "a", "ordinal_position": 2**31 - 1}, {"name": "b"})
    plan = build([run_event(outputs=[dataset("s.t", schema=fields)])], definition())
    assert [(f.name, f.ordinal_position) for f in plan.fields] == [("b", 2), ("a", 2**31 - 1)]
    assert GapCode.MALFORMED_FACET not in plan.report.gaps


def test_a_field_description_longer_than_250_characters_is_not_sent_and_counted() -> None:
    facets = {
        "schema": schema(
            {"name": "c", "description": "d" * 251}, {"name": "ok", "description": "fine"}
        )
    }
    plan = build([run_event(outputs=[dataset("a.s.t", **facets)])], definition())
    assert [(f.name, f.description) for f in plan.fields] == [("c", None), ("ok", "fine")]
    assert plan.report.gap_count(GapCode.FIELD_DESCRIPTION_TOO_LONG) == 1


def test_partitions_of_one_s3_folder_land_on_one_entity_with_the_union_of_fields() -> None:
    events = [
        run_event(
            outputs=[dataset("sales/orders/day=1", "s3://lake", schema=schema({"name": "a"}))],
            time="2026-11-29T10:00:00.000Z",
        ),
        run_event(
            outputs=[dataset("sales/orders/day=2", "s3://lake", schema=schema({"name": "b"}))],
            run_id="0190b1c2-0000-7000-8000-000000000002",
            time="2026-11-29T11:00:00.000Z",
        ),
    ]
    plan = build(events, definition())
    orders = entity(plan, "orders")
    assert (orders.key.system, orders.key.schema_) == ("lake", "sales")
    assert sorted(f.name for f in plan.fields if f.entity == orders.key) == ["a", "b"]


def _schema_run(
    job: str, minute: int, side: str, *fields: dict[str, Any], as_design: bool = False
) -> dict[str, Any]:
    """A run of ``job`` at ``minute`` with ``analytics.sales.orders`` on ``side`` (``inputs``
    or ``outputs``) and that schema; ``as_design``: a DatasetEvent instead."""
    time = builders.at(minute=minute)
    if as_design:
        return builders.dataset_event(facets={"schema": schema(*fields)}, time=time)
    run_id = f"0190b1c2-0000-7000-8000-{minute:012d}"
    orders = dataset("analytics.sales.orders", schema=schema(*fields))
    return run_event(job, run_id=run_id, time=time, **{side: [orders]})


FULL = ({"name": "id", "type": "int"}, {"name": "amount", "type": "numeric"}, {"name": "note"})
DOCUMENTED = ({"name": "id", "type": "integer", "description": "The order"},)


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        # a reader's later schema lists fewer columns: the writer's other columns stay
        # described; a column both list has the writer's type, the reader's description where
        # the writer gives none (the type changed with every sync that saw the other last)
        (
            [("load", 1, "outputs", FULL), ("dbt", 2, "inputs", DOCUMENTED)],
            [("id", "int", "The order"), ("amount", "numeric", None), ("note", None, None)],
        ),
        # the dataset's own design (a DatasetEvent) counts as its writer
        (
            [("design", 1, "dataset", FULL), ("dbt", 2, "inputs", DOCUMENTED)],
            [("id", "int", "The order"), ("amount", "numeric", None), ("note", None, None)],
        ),
        # a column both list keeps the reader's position beside the reader's own columns
        (
            [
                ("load", 1, "outputs", FULL[:2]),
                ("spark", 2, "inputs", ({"name": "loaded_at"}, *FULL[:2])),
            ],
            [("loaded_at", None, None), ("id", "int", None), ("amount", "numeric", None)],
        ),
        # the writer's description stays when a reader sends none (Spark reading a dbt model)
        (
            [
                ("dbt", 1, "outputs", DOCUMENTED),
                ("spark", 2, "inputs", ({"name": "id", "type": "string"},)),
            ],
            [("id", "integer", "The order")],
        ),
        # the writer's later schema replaces the earlier one: a column it dropped goes
        (
            [("load", 1, "outputs", FULL), ("load", 2, "outputs", FULL[:2])],
            [("id", "int", None), ("amount", "numeric", None)],
        ),
        (
            [("dbt", 1, "inputs", FULL), ("load", 2, "outputs", FULL[:2])],
            [("id", "int", None), ("amount", "numeric", None)],
        ),
        # only readers: the latest schema, as before
        (
            [("dbt", 1, "inputs", FULL), ("other", 2, "inputs", DOCUMENTED)],
            [("id", "integer", "The order")],
        ),
    ],
)
def test_the_schema_facet_gives_the_fields_and_a_readers_partial_schema_removes_none(
    history: list[tuple[str, int, str, tuple[dict[str, Any], ...]]],
    expected: list[tuple[str, str | None, str | None]],
) -> None:
    """Seed 000, "The schema facet gives the fields of an entity"; seed 004, a later facet of
    the same name replaces the earlier. A reader may list only some columns (dbt without its
    catalog lists the documented ones): its schema replaced the writer's, so the columns only
    the writer listed were no longer described, and the cleanup removed columns the job had
    created and that still exist. The fields are now the latest schema's, a column the
    latest writer's schema lists too with the writer's type and description (a reader's types
    retyped the columns at each sync that saw it last), and the columns only the writer's
    lists, after them."""
    events = [
        _schema_run(job, minute, side, *fields, as_design=side == "dataset")
        for job, minute, side, fields in history
    ]
    for ordered in (events, events[::-1]):
        plan = build(ordered, definition(quality={"enabled": False}))
        orders = entity(plan, "orders")
        fields = [f for f in plan.fields if f.entity == orders.key]
        assert [(f.name, f.type, f.description) for f in fields] == expected


# -- documentation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("facet", "description", "documented"),
    [
        ({"description": "Orders"}, "Orders", False),
        ({"description": "x" * 300}, None, True),
        ({"description": "# Orders", "contentType": "text/markdown"}, None, True),
        ({"description": ""}, None, False),
    ],
)
def test_documentation_goes_to_the_description_or_the_documentation_by_length(
    facet: dict[str, Any], description: str | None, documented: bool
) -> None:
    plan = build([run_event(outputs=[dataset("a.s.t", documentation=facet)])], definition())
    t = entity(plan, "t")
    assert t.description == description
    assert (t.documentation is not None, t.documentation_hash is not None) == (documented,) * 2


# -- jobs and routines -----------------------------------------------------------------------------


def test_each_job_becomes_an_openlineage_job_entity_on_its_job_system() -> None:
    facets = {
        "jobType": {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK"},
        "sourceCodeLocation": {
            "type": "git",
            "url": "https://token@git.example.com/r",
            "path": "d.py",
        },
        "documentation": {"description": "Loads orders"},
        "ownership": {"owners": [{"name": "data-eng"}]},
    }
    plan = build([run_event(job="etl.load", job_facets=facets)], definition())
    job = entity(plan, "etl.load")
    assert (job.key.system, job.key.schema_, job.table_type) == (
        "OpenLineage",
        "airflow",
        "OPENLINEAGE_JOB",
    )
    assert job.description == "Loads orders"
    assert {
        ("openLineageJobScope", "ol:airflow|etl.load"),
        ("openLineageJobType", "TASK"),
        ("openLineageProcessingType", "BATCH"),
        ("openLineageIntegration", "AIRFLOW"),
        ("openLineageSourceCodeUrl", "https://git.example.com/r"),
        ("openLineageSourceCodePath", "d.py"),
        ("openLineageOwnership", "data-eng"),
    } <= set(job.properties)


def test_process_layer_false_catalogues_only_the_datasets() -> None:
    plan = build([run_event(outputs=[dataset("a.s.t")])], definition(processLayer=False))
    assert [e.table_type for e in plan.entities] == [None]


AF_RULE = {"pattern": "airflow", "system": {"name": "AF"}}
NO_JOB_SYSTEM = [
    ({}, "OpenLineage"),
    ({"jobSystems": [AF_RULE | {"creation": "IF_MISSING"}]}, "AF"),
    ({"jobSystems": [AF_RULE]}, "OpenLineage"),
]


@pytest.mark.parametrize(("options", "job_system"), NO_JOB_SYSTEM)
def test_process_layer_false_plans_no_job_system_for_jobs_without_sql(
    options: dict[str, Any], job_system: str
) -> None:
    """Seed 000: "Set processLayer to false to catalog only the datasets." A job without SQL
    then puts nothing on a job System: none is created, and no jobSystems rule is reported
    (JOB_SYSTEM_NOT_FOUND). A job with SQL still gets its routine, on its job System."""
    events = [run_event(outputs=[dataset("a.s.t")])]
    plan = build(events, definition(processLayer=False, **options))
    assert [s.name for s in plan.systems] == ["db"]
    assert plan.report.gap_count(GapCode.JOB_SYSTEM_NOT_FOUND) == 0

    sql = {"query": "INSERT INTO s.t SELECT * FROM s.u", "dialect": "postgres"}
    events = [run_event(outputs=[dataset("a.s.t")], job_facets={"sql": sql})]
    plan = build(events, definition(processLayer=False, **options))
    assert [r.system for r in plan.routines] == [job_system]
    assert job_system in [s.name for s in plan.systems]


def test_a_job_with_a_sql_facet_gets_one_script_routine_on_its_job_system() -> None:
    sql = {"query": "INSERT INTO s.t SELECT * FROM s.u", "dialect": "postgres"}
    plan = build([run_event(job_facets={"sql": sql})], definition())
    (routine,) = plan.routines
    assert (routine.system, routine.catalog, routine.schema_, routine.name, routine.type) == (
        "OpenLineage",
        "airflow",
        "airflow",
        "etl.load",
        "SCRIPT",
    )
    assert routine.dialect == "postgres" and routine.sql_hash.startswith("sha256:")


@pytest.mark.parametrize(
    ("namespaces", "sent", "dialect"),
    [
        (["bigquery", "bigquery"], None, "bigquery"),
        (["snowflake://org-acct", "snowflake://org-acct"], None, "snowflake"),
        # a job moving data between platforms: its SQL is its engine's (Spark over JDBC)
        (["postgres://db:5432", "s3://landing"], None, None),
        (["postgres://db:5432", "snowflake://org-acct"], None, None),  # two platforms: unknown
        (["s3://a", "gs://b"], None, None),
        (["bigquery", "bigquery"], "ansi", "ansi"),  # the producer's own dialect stays
    ],
)
def test_a_statement_without_a_dialect_takes_its_datasets_platforms(
    namespaces: list[str], sent: str | None, dialect: str | None
) -> None:
    """Airflow's SQL operators (Snowflake, BigQuery, Databricks, Athena, any common.sql
    operator) send the ``sql`` facet without its dialect, and Blindata's analysis then reads
    BigQuery's backticks or Snowflake's ``::`` as errors: the platform of the job's datasets
    gives it, when they are on one (found by a probe of the providers' OpenLineage code)."""
    sql = {"query": "INSERT INTO a.b.t SELECT * FROM a.b.u"} | ({"dialect": sent} if sent else {})
    read, written = (dataset("a.b.u", namespaces[0]), dataset("a.b.t", namespaces[1]))
    plan = build(
        [run_event(inputs=[read], outputs=[written], job_facets={"sql": sql})], definition()
    )
    assert [r.dialect for r in plan.routines] == [dialect]


@pytest.mark.parametrize(
    ("query", "catalogued"),
    [
        ("CREATE USER etl WITH PASSWORD 's3cret'", "CREATE USER etl WITH PASSWORD '***'"),
        ("ALTER ROLE etl PASSWORD 'it''s s3cret'", "ALTER ROLE etl PASSWORD '***'"),
        (
            "CREATE USER etl IDENTIFIED WITH caching_sha2_password BY 's3cret'",
            "CREATE USER etl IDENTIFIED WITH caching_sha2_password BY '***'",
        ),
        (  # Oracle: the password is no literal, bare or double-quoted, or its hash
            "ALTER USER etl IDENTIFIED BY s3cret",
            "ALTER USER etl IDENTIFIED BY ***",
        ),
        (
            'CREATE USER etl IDENTIFIED BY "it\'s s3cret" DEFAULT TABLESPACE users',
            'CREATE USER etl IDENTIFIED BY "***" DEFAULT TABLESPACE users',
        ),
        (
            "ALTER USER etl IDENTIFIED BY VALUES 'S:s3cret;T:0A1B'",
            "ALTER USER etl IDENTIFIED BY VALUES '***'",
        ),
        (  # Redshift, as Airflow's S3-to-Redshift transfers write it
            "COPY s.sales FROM 's3://bucket/sales/' "
            "CREDENTIALS 'aws_access_key_id=AKIA;aws_secret_access_key=s3cret' CSV",
            "COPY s.sales FROM 's3://bucket/sales/' CREDENTIALS '***' CSV",
        ),
        (
            "COPY s.sales FROM 's3://b/x' ACCESS_KEY_ID 'AKIA' SECRET_ACCESS_KEY 's3cret'",
            "COPY s.sales FROM 's3://b/x' ACCESS_KEY_ID '***' SECRET_ACCESS_KEY '***'",
        ),
        (  # Snowflake
            "COPY INTO s.t FROM 's3://b/p' CREDENTIALS = (AWS_KEY_ID = 'AKIA' "
            "AWS_SECRET_KEY = 's3cret')",
            "COPY INTO s.t FROM 's3://b/p' CREDENTIALS = (AWS_KEY_ID = '***' "
            "AWS_SECRET_KEY = '***')",
        ),
        (
            "INSERT INTO s.t SELECT * FROM dblink('host=db user=etl password=s3cret', "
            "'SELECT a FROM u') AS r(a int)",
            "INSERT INTO s.t SELECT * FROM dblink('host=db user=etl password=***', "
            "'SELECT a FROM u') AS r(a int)",
        ),
        (
            "INSERT INTO s.t SELECT * FROM ext WHERE src = 'postgresql://etl:s3cret@db/x'",
            "INSERT INTO s.t SELECT * FROM ext WHERE src = 'postgresql://etl:***@db/x'",
        ),
        (  # a comment is free text: it may quote a connection
            "INSERT INTO s.t -- from postgresql://etl:s3cret@db/x\nSELECT a FROM s.u",
            "INSERT INTO s.t -- from postgresql://etl:***@db/x\nSELECT a FROM s.u",
        ),
        (
            "/* dsn: host=db password=s3cret */ INSERT INTO s.t SELECT 'x' FROM s.u",
            "/* dsn: host=db password=*** */ INSERT INTO s.t SELECT 'x' FROM s.u",
        ),
        (  # an apostrophe in a comment (dbt's compiled SQL keeps its comments) starts no literal
            "-- the customer's orders\nCREATE USER MAPPING FOR etl SERVER crm "
            "OPTIONS (user 'etl', password 's3cret')",
            "-- the customer's orders\nCREATE USER MAPPING FOR etl SERVER crm "
            "OPTIONS (user 'etl', password '***')",
        ),
        (
            "/* don't touch */ INSERT INTO s.t SELECT * FROM dblink("
            "'postgresql://etl:s3cret@db/x', 'SELECT a FROM u') AS r(a int)",
            "/* don't touch */ INSERT INTO s.t SELECT * FROM dblink("
            "'postgresql://etl:***@db/x', 'SELECT a FROM u') AS r(a int)",
        ),
        (  # and a comment's dashes in a literal start no comment
            "INSERT INTO s.t SELECT '--', 'it''s' FROM s.u WHERE k = 'postgresql://etl:s3cret@db'",
            "INSERT INTO s.t SELECT '--', 'it''s' FROM s.u WHERE k = 'postgresql://etl:***@db'",
        ),
        (  # names and other literals that merely look like it stay as written
            "INSERT INTO s.t SELECT password_hash, token_count, 'password' AS kind, \"s3cret\" "
            "FROM s.users WHERE kind = 'token'",
            "INSERT INTO s.t SELECT password_hash, token_count, 'password' AS kind, \"s3cret\" "
            "FROM s.users WHERE kind = 'token'",
        ),
    ],
)
def test_a_password_written_in_the_sql_of_a_job_is_not_catalogued(
    query: str, catalogued: str
) -> None:
    """Secrets never reach the lineage graph: a statement's password, key or token literal is
    catalogued, and hashed, as ``***``; the rest of the statement as written."""
    plan = build([run_event(job_facets={"sql": {"query": query}})], definition())
    (routine,) = plan.routines
    assert routine.definition == catalogued
    assert routine.sql_hash == sql_hash(catalogued)
    if catalogued != query:
        assert "s3cret" not in json.dumps(plan.model_dump(mode="json"))


SECRET_TEXT = "loaded from postgresql://etl:s3cret@db/dwh (password=s3cret)"
SHOWN_TEXT = "loaded from postgresql://etl:***@db/dwh (password=***)"
LONG_TEXT = "# Orders\n\n" + "x" * 300 + "\n" + SECRET_TEXT


def _in_free_text(where: str) -> dict[str, Any]:
    """A run whose producer wrote ``SECRET_TEXT`` in one of its free texts (``where``)."""
    test = {"name": "t", "status": "fail"}
    assertion = {"assertion": "not_null", "success": False, "column": "a"}
    transformation = {"type": "DIRECT", "subtype": "TRANSFORMATION"}
    job_facets: dict[str, Any] = {}
    dataset_facets: dict[str, Any] = {}
    if where in ("dataset description", "dataset documentation"):
        text = SECRET_TEXT if where == "dataset description" else LONG_TEXT
        dataset_facets["documentation"] = {"description": text}
    elif where == "field description":
        dataset_facets["schema"] = schema({"name": "a", "description": SECRET_TEXT})
    elif where == "job documentation":
        job_facets["documentation"] = {"description": LONG_TEXT, "contentType": "text/markdown"}
    elif where == "transformation":
        transformation["description"] = SECRET_TEXT
    elif where == "assertion description":
        assertion["description"] = SECRET_TEXT
    else:  # a test's description, expected and actual values, content
        test[where.removeprefix("test ")] = SECRET_TEXT
    lineage = {"fields": {"a": {"inputFields": [
        {"namespace": PG, "name": "s.src", "field": "a", "transformations": [transformation]}
    ]}}}  # fmt: skip
    source = builders.dataset(
        "s.src",
        facets={"schema": schema({"name": "a"})},
        input_facets={"dataQualityAssertions": {"assertions": [assertion]}},
    )
    target = dataset("s.dst", schema=schema({"name": "a"}), columnLineage=lineage)
    target["facets"] = {**target["facets"], **dataset_facets}
    return run_event(
        inputs=[source],
        outputs=[target],
        job_facets=job_facets,
        run_facets={"test": {"tests": [test]}},
    )


@pytest.mark.parametrize(
    "where",
    [
        "dataset description",
        "dataset documentation",
        "field description",
        "job documentation",
        "transformation",
        "assertion description",
        "test description",
        "test expected",
        "test actual",
        "test content",
    ],
)
def test_a_secret_in_a_producers_free_text_does_not_reach_the_plan(where: str) -> None:
    """Secrets never reach the lineage graph: a description, a documentation, a column
    transformation's or a test's text may quote a connection; it reaches the plan as a property
    does, a URL's password and a ``password=`` setting as ``***``."""
    plan = build([_in_free_text(where)], definition())
    text = json.dumps(plan.model_dump(mode="json"))
    assert "s3cret" not in text
    assert json.dumps(SHOWN_TEXT)[1:-1] in text


def test_a_producer_with_credentials_describes_its_flows_without_them() -> None:
    """Secrets never reach the lineage graph: a flow's description names its producer, as a
    property does, without a URL's password or token."""
    producer = "https://ci:s3cret@git.example.com/lineage?token=s3cret"
    shown = "https://ci:***@git.example.com/lineage?token=***"
    dag_run = "00000000-0000-4000-8000-000000000002"
    lineage = builders.column_lineage_facet({"a": [builders.input_field("s.src", "a")]})
    task = run_event(
        producer=producer,
        inputs=[dataset("s.src", schema=schema({"name": "a"}))],
        outputs=[dataset("s.dst", schema=schema({"name": "a"}), **lineage)],
        run_facets=builders.parent_facet("dag", dag_run),
    )
    dag = run_event("dag", run_id=dag_run, producer=producer)
    plan = build([dag, task], definition())
    assert {flow.kind for flow in plan.flows} == {"table", "column", "orchestration"}
    assert all(f"by {shown}." in flow.description for flow in plan.flows)
    assert "s3cret" not in json.dumps(plan.model_dump(mode="json"))


def test_the_entities_and_routines_built_unvalidated_are_the_ones_validation_gives() -> None:
    """The catalog pass builds entities and routines from values it typed itself (their own
    ``__init__``, which validates nothing): validating each again gives an equal object, of the
    same types (a list where a tuple is due would compare unequal)."""
    facets = {
        "documentation": {"description": "x" * 300},
        "datasetType": {"datasetType": "table", "subType": "iceberg"},
        "ownership": {"owners": [{"name": "finance", "type": "TEAM"}, {"name": "ana"}]},
    }
    sql = {"query": "INSERT INTO s.t SELECT * FROM s.u", "dialect": "postgres"}
    extra = run_event(job_facets={"sql": sql}, outputs=[dataset("a.s.t", **facets)])
    plan = build([*dbt_events(), extra], definition())
    assert plan.routines and len(plan.entities) > 20
    for item in (*plan.entities, *plan.routines):
        adapter: TypeAdapter[Any] = TypeAdapter(type(item))
        values = {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
        again = adapter.validate_python(values, by_name=True)
        assert again == item and adapter.dump_python(again) == adapter.dump_python(item)


# -- the dbt fixtures end to end -------------------------------------------------------------------


def test_the_dbt_jaffle_shop_run_lands_on_one_postgres_system() -> None:
    plan = build(dbt_events(), definition())
    assert [(s.name, s.create) for s in plan.systems] == [("OpenLineage", True), ("postgres", True)]
    tables = {(e.key.schema_, e.key.name) for e in plan.entities if e.key.system == "postgres"}
    models = ["customers", "orders", "stg_customers", "stg_orders", "stg_payments"]
    seeds = ["raw_customers", "raw_orders", "raw_payments"]
    assert {("public", name) for name in models + seeds} <= tables
    assert ("snapshots", "orders_snapshot") in tables
    assert ("public_dbt_test__audit", "unique_customers_customer_id") in tables
    assert len(tables) == 13
    customers = entity(plan, "customers")
    assert customers.description and customers.description.startswith("This table has basic")
    jobs = [e for e in plan.entities if e.table_type == "OPENLINEAGE_JOB"]
    assert len(jobs) == plan.report.counters["jobs"] == 59
    assert {f.name for f in plan.fields if f.entity == customers.key} >= {
        "customer_id",
        "first_name",
    }
    assert plan.report.counters["eventsRead"] == len(dbt_events())


# -- properties ------------------------------------------------------------------------------------


@given(st.permutations(dbt_events()[:40]), st.integers(min_value=0, max_value=39))
def test_any_order_or_duplication_of_the_events_gives_the_same_plan(
    events: list[dict[str, Any]], duplicate: int
) -> None:
    """The plan is the same; only the report's count of events read sees the duplicate."""
    reference = build(dbt_events()[:40], definition())
    shuffled = build([*events, events[duplicate]], definition())
    assert shuffled.model_dump(exclude={"report"}) == reference.model_dump(exclude={"report"})
    assert shuffled.report.gaps == reference.report.gaps
    assert shuffled.report.counters["eventsRead"] == reference.report.counters["eventsRead"] + 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.lists(json_values, max_size=5))
def test_arbitrary_json_never_raises_out_of_the_mapper(items: list[Any]) -> None:
    plan = build(items, definition())
    assert (
        plan.report.counters.get("eventsRead", 0) + plan.report.gap_count(GapCode.UNREADABLE_EVENT)
        >= 0
    )


SECRET_NAMESPACES = [
    "postgres://etl:s3cret@db:5432",
    "mysql://etl:s3cret@db",
    "jdbc:postgresql://db:5432/dwh?user=etl&password=s3cret",
    "jdbc:sqlserver://db:1433;databaseName=dwh;user=etl;password=s3cret",
    "s3://AKIAEXAMPLE:s3cret@bucket",
    "https://acct.blob.core.windows.net/c?sv=2022&sig=s3cret",
    "https://files.example.com/d?token=s3cret&page=1",
    "https://b.s3.amazonaws.com/d?X-Amz-Signature=s3cret&X-Amz-Date=20260101",
]


@pytest.mark.parametrize("namespace", SECRET_NAMESPACES)
@pytest.mark.parametrize("created", [True, False], ids=["created", "unmapped"])
def test_no_credential_in_a_namespace_reaches_the_plan_or_the_report(
    namespace: str, created: bool
) -> None:
    """Secrets never reach the lineage graph or a report: a namespace's user info, a JDBC URL's
    ``;password=`` and a URL's secret parameters are neither in a System, an entity, a flow, a
    plan's source nor a gap's example, whether the namespace gets a System or is unmapped."""
    policies = [policy("hive://*"), *([policy("*")] if created else [])]
    inputs = [dataset("s.src", namespace, schema=schema({"name": "a"}))]
    lineage = {
        "fields": {"a": {"inputFields": [{"namespace": namespace, "name": "s.src", "field": "a"}]}}
    }
    outputs = [dataset("s.dst", "hive://out", schema=schema({"name": "a"}), columnLineage=lineage)]
    plan = build([run_event(inputs=inputs, outputs=outputs)], builders.definition(*policies))
    assert plan.entities and (plan.flows if created else plan.report.gaps)
    assert "s3cret" not in json.dumps(plan.model_dump(mode="json")).lower()
    assert "s3cret" not in plan.report.model_dump_json().lower()


def test_an_azure_container_before_the_at_sign_is_no_credential_and_stays_catalogued() -> None:
    """Seed 002: ``abfss://container@account`` names a container, not a user: the entity's
    properties and the plan's sources keep it as sent."""
    namespace = "abfss://raw@lake.dfs.core.windows.net"
    plan = build(
        [run_event(outputs=[dataset("sales/orders", namespace)])],
        builders.definition(policy("abfss://*")),
    )
    (found,) = [e for e in plan.entities if e.key.system != "OpenLineage"]
    assert ("openLineageDataset", f"{namespace}/sales/orders") in found.properties
    assert found.source == f"dataset {namespace}/sales/orders"


@pytest.mark.parametrize(
    ("namespace", "name", "shown"),
    [
        ("s3://bucket", "exports@2026/x", "s3://bucket/exports@2026/x"),
        ("hdfs://nn:8020", "/data/a@b/t", "hdfs://nn:8020/data/a@b/t"),
        (
            "https://api.example.com",
            "v1/rates?code=EUR",
            "https://api.example.com/v1/rates?code=***",
        ),
        # a secret of the name is hidden as the entity's name hides it, and as free text
        # does; an HTTP API's key as in a URL shown (a review)
        ("s3://bucket", "exports/x?sig=s3cret", "s3://bucket/exports/x?sig=***"),
        # a partition is kept, as in the entity's name: two folders are two (a review)
        ("s3://bucket", "raw/token=eth/transfers", "s3://bucket/raw/token=eth/transfers"),
        (
            "https://api.example.com",
            "v1/orders?key=s3cret",
            "https://api.example.com/v1/orders?key=***",
        ),
    ],
)
def test_the_dataset_an_entity_stands_for_is_named_as_sent_but_its_secrets(
    namespace: str, name: str, shown: str
) -> None:
    """docs/mapping-reference.md: ``openLineageDataset`` is the normalised namespace and the
    name. Read as free text whole, an ``@`` in a key ended a "user info" (``s3://***@2026/x``,
    which two buckets shared; a probe of the docs); an HTTP API's ``?code=`` is hidden as in any
    URL shown (the entity's name keeps it)."""
    plan = build(
        [run_event(outputs=[dataset(name, namespace)])],
        builders.definition(policy("*")),
    )
    (found,) = [e for e in plan.entities if e.key.system != "OpenLineage"]
    assert ("openLineageDataset", shown) in found.properties
    assert "s3cret" not in (found.source or "")
    assert "***@" not in (found.source or "")


def test_the_properties_of_the_producers_facets_go_on_the_job_entity_without_secrets() -> None:
    event = run_event(job_facets={"jobType": {"processingType": "BATCH", "integration": "DBT"}})
    event["run"]["facets"] = {
        "processing_engine": {"name": "dbt", "version": "1.8.2"},
        "dbt_version": {"version": "1.8.2"},
        "vendor_run": {
            "cluster": "c-1",
            "api_token": "t0ps3cret",
            # names of secrets redaction knows too (found by a probe)
            "pwd": "t0ps3cret",
            "signature": "t0ps3cret",
            "session_cookie": "t0ps3cret",
            "nested": {"x": 1},
            # a value that is a connection string, under a name that does not say so
            "warehouse": "postgresql://etl:t0ps3cret@db:5432/dwh",
            "endpoint": "https://api.example/v1?token=t0ps3cret",
            "dsn": "host=db user=etl password=t0ps3cret",
            "storage": "DefaultEndpointsProtocol=https;AccountName=lake;AccountKey=t0ps3cret==",
            "oracle": "jdbc:oracle:thin:etl/t0ps3cret@db:1521/orcl",
            "flags": "token=t0ps3cret retries=3",
        },
    }
    plan = build([event], definition())
    properties = set(entity(plan, "etl.load").properties)
    assert {
        ("openLineageProcessingEngine", "dbt 1.8.2"),
        ("dbt_version.version", "1.8.2"),
        ("vendor_run.cluster", "c-1"),
        ("vendor_run.warehouse", "postgresql://etl:***@db:5432/dwh"),
        ("vendor_run.endpoint", "https://api.example/v1?token=***"),
        ("vendor_run.dsn", "host=db user=etl password=***"),
        ("vendor_run.storage", "DefaultEndpointsProtocol=https;AccountName=lake;AccountKey=***"),
        ("vendor_run.oracle", "jdbc:oracle:thin:etl/***@db:1521/orcl"),
        ("vendor_run.flags", "token=*** retries=3"),
    } <= properties
    assert "t0ps3cret" not in json.dumps(plan.model_dump(mode="json"))


# -- links to Airflow ------------------------------------------------------------------------------


def _airflow_task_run(dag_id: str, task_id: str) -> dict[str, Any]:
    airflow = {"dag": {"dag_id": dag_id}, "task": {"task_id": task_id}}
    return run_event(f"{dag_id}.{task_id}", run_facets={"airflow": airflow})


def _airflow_dag_run(dag_id: str) -> dict[str, Any]:
    dag_run = {"dag": {"dag_id": dag_id}, "dagRun": {"run_id": "manual"}}
    return run_event(dag_id, run_facets={"airflowDagRun": dag_run})


def test_a_job_entity_carries_the_airflow_url_of_its_dag_and_task() -> None:
    """As DataHub's externalUrl and OpenMetadata's sourceUrl: from the catalog to Airflow's page
    of the task (and of its DAG), built on the definition's Airflow URL (``[api] base_url``)."""
    base = "https://airflow.example.com/prod"
    events = [_airflow_task_run("sales etl", "load/orders"), _airflow_dag_run("sales etl")]

    plan = build(events, definition(airflowBaseUrl=base + "/"))

    task = set(entity(plan, "sales etl.load/orders").properties)
    dag = set(entity(plan, "sales etl").properties)
    assert ("openLineageAirflowDagUrl", f"{base}/dags/sales%20etl") in task
    assert ("openLineageAirflowTaskUrl", f"{base}/dags/sales%20etl/tasks/load%2Forders") in task
    assert ("openLineageAirflowDagUrl", f"{base}/dags/sales%20etl") in dag
    assert not any(name == "openLineageAirflowTaskUrl" for name, _ in dag)


def test_without_an_airflow_url_a_job_entity_carries_no_link() -> None:
    plan = build([_airflow_task_run("sales", "load")], definition())

    names = {name for name, _ in entity(plan, "sales.load").properties}
    assert not names & {"openLineageAirflowDagUrl", "openLineageAirflowTaskUrl"}


@pytest.mark.parametrize("url", ["javascript://x", "airflow.example.com", "ftp://h"])
def test_the_airflow_url_must_be_http(url: str) -> None:
    from airflow_blindata.definition import JobDefinitionError

    with pytest.raises(JobDefinitionError, match="airflowBaseUrl"):
        definition(airflowBaseUrl=url)


def test_the_fields_of_a_nested_schema_have_unique_positions_their_struct_first() -> None:
    """Seed 000: "Order: ordinal_position when present, otherwise the position in a depth-first
    walk". Producers number each level from 1 (the spec's example): read as positions of the
    flattened entity they gave ``id 1, w 2, w.day 2, t 3, w.z 3``, duplicates and a struct's
    field away from it."""
    schema = builders.schema_facet(
        builders.field("t", "string", ordinal_position=3),
        builders.field(
            "w",
            "struct",
            ordinal_position=2,
            fields=[
                builders.field("day", "date", ordinal_position=1),
                builders.field("z", "double", ordinal_position=2),
            ],
        ),
        builders.field("id", "int", ordinal_position=1),
    )
    plan = build([run_event(outputs=[builders.dataset("a.s.t", facets=schema)])], definition())
    fields = sorted((f.ordinal_position, f.name) for f in plan.fields if f.entity.name == "t")
    assert fields == [(1, "id"), (2, "w"), (3, "w.day"), (4, "w.z"), (5, "t")]
