"""One dataset is one name on one store and database (``identity.namespace_identity``).

Spark names a SQL Server table by its JDBC URL, the database among its properties
(``sqlserver://sql01:1433;databaseName=dwh``) and ``dbo.Orders`` as the name. Normalising a
namespace drops a JDBC URL's properties, so ``dwh``'s and ``stage``'s ``dbo.Orders`` were taken
for one dataset: a copy between them was "a table read and written", whose flows were dropped
with no gap (seed 001: "A table flow is always published"), the two datasets' own lineage shared
one scope, a statement's unnamed output could land in the other database, and their checks
shared one code. Each test is named after the rule it checks; each table has a row per platform
whose namespace may carry the database.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import at, policy, run_event, sql_facet

DWH = "sqlserver://sql01:1433;databaseName=dwh"
STAGE = "sqlserver://sql01:1433;databaseName=stage"


def definition() -> JobDefinition:
    """A System per server and database, as a crawler of each database has one."""
    return builders.definition(
        policy("mssql://*", nameProfile="mssql", nameTemplate="{host} {database}"),
        policy("oracle:thin:*", nameProfile="oracle", nameTemplate="{namespace}"),
        policy("postgres://*", nameTemplate="{namespace}"),
        policy("snowflake://*", nameProfile="snowflake", nameTemplate="{host} {database}"),
        policy("databricks://*", nameProfile="databricks", nameTemplate="{host} {database}"),
    )


def ds(namespace: str, name: str, *columns: str, **facets: Any) -> dict[str, Any]:
    if columns:
        facets.update(builders.schema_facet(*columns))
    return builders.dataset(name, namespace, facets=facets)


def copied(source: tuple[str, str], column: str = "id") -> dict[str, Any]:
    """A ``columnLineage`` facet: ``column`` copied from the same column of ``source``."""
    namespace, name = source
    field = builders.input_field(name, column, namespace)
    return builders.column_lineage_facet({column: [field]})


def flows(plan: CatalogPlan, kind: str) -> set[tuple[str, str, str, str]]:
    """(source System, source, target System, target) of the flows of ``kind``; a column flow's
    ends with their fields."""

    def end(entity: Any, field: str | None) -> str:
        shown = f"{entity.schema_}.{entity.name}" if entity.schema_ else entity.name
        return f"{shown}.{field}" if field else shown

    return {
        (
            f.source.entity.system,
            end(f.source.entity, f.source.field),
            f.target.entity.system,
            end(f.target.entity, f.target.field),
        )
        for f in plan.flows
        if f.kind == kind
    }


COPIES = [
    pytest.param(
        (DWH, "dbo.Orders"),
        (STAGE, "dbo.Orders"),
        ("sql01 dwh", "dbo.Orders", "sql01 stage", "dbo.Orders"),
        id="sql-server-jdbc-databaseName",
    ),
    pytest.param(
        ("sqlserver://sql01;database=DWH", "dbo.Orders"),
        ("sqlserver://sql01;encrypt=true;database=stage", "dbo.Orders"),
        ("sql01 dwh", "dbo.Orders", "sql01 stage", "dbo.Orders"),
        id="sql-server-jdbc-database",
    ),
    pytest.param(
        ("sqlserver://sql01;instanceName=sales;databaseName=dwh", "dbo.Orders"),
        ("sqlserver://sql01;instanceName=sales;databaseName=stage", "dbo.Orders"),
        ("sql01 dwh", "dbo.Orders", "sql01 stage", "dbo.Orders"),
        id="sql-server-named-instance",
    ),
    pytest.param(
        ("oracle:thin:@//ora:1521/PDB1", "HR.EMP"),
        ("oracle:thin:@//ora:1521/PDB2", "HR.EMP"),
        ("oracle:thin:@//ora:1521/PDB1", "HR.EMP", "oracle:thin:@//ora:1521/PDB2", "HR.EMP"),
        id="oracle-url-service",
    ),
    pytest.param(
        ("postgres://pg:5432/prod", "public.orders"),
        ("postgres://pg:5432/dev", "public.orders"),
        ("postgres://pg:5432/prod", "public.orders", "postgres://pg:5432/dev", "public.orders"),
        id="postgres-database-in-the-path",
    ),
    pytest.param(
        ("snowflake://org-acct", "PROD.PUBLIC.ORDERS"),
        ("snowflake://org-acct", "DEV.PUBLIC.ORDERS"),
        ("org-acct PROD", "PUBLIC.ORDERS", "org-acct DEV", "PUBLIC.ORDERS"),
        id="snowflake-database-in-the-name",
    ),
    pytest.param(
        ("databricks://adb-1.azuredatabricks.net", "main.sales.orders"),
        ("databricks://adb-1.azuredatabricks.net", "dev.sales.orders"),
        (
            "adb-1.azuredatabricks.net main",
            "sales.orders",
            "adb-1.azuredatabricks.net dev",
            "sales.orders",
        ),
        id="databricks-catalog-in-the-name",
    ),
]


@pytest.mark.parametrize(("source", "target", "flow"), COPIES)
@pytest.mark.parametrize("evidence", ["io", "column_lineage"])
def test_a_table_copied_to_another_database_of_its_server_is_a_flow(
    source: tuple[str, str],
    target: tuple[str, str],
    flow: tuple[str, str, str, str],
    evidence: str,
) -> None:
    """Seed 001: "A table flow is always published", and the column flows of the columnLineage
    facet with it: ``dbo.Orders`` of ``dwh`` copied to ``dbo.Orders`` of ``stage`` is two
    tables, whatever part of the dataset (namespace or name) names the database."""
    facets = copied(source) if evidence == "column_lineage" else {}
    event = run_event(
        "app.copy",
        namespace="spark",
        inputs=[ds(*source, "id")],
        outputs=[ds(*target, "id", **facets)],
    )
    plan = build([event], definition())
    assert flows(plan, "table") == {flow}
    source_system, source_name, target_system, target_name = flow
    columns = {(source_system, f"{source_name}.id", target_system, f"{target_name}.id")}
    assert flows(plan, "column") == (columns if evidence == "column_lineage" else set())
    assert not plan.report.gaps


@pytest.mark.parametrize(
    ("read", "written"),
    [
        pytest.param(DWH, DWH, id="one-spelling"),
        pytest.param(
            "sqlserver://SQL01:1433;DatabaseName=DWH",
            "sqlserver://sql01;databaseName=dwh;encrypt=true",
            id="a-server-and-database-spelt-otherwise",
        ),
        pytest.param("postgres://pg/prod", "postgresql://pg:5432/prod/", id="postgres-path"),
    ],
)
def test_a_table_read_and_written_is_still_one_dataset(read: str, written: str) -> None:
    """``INSERT OVERWRITE orders SELECT … FROM orders``, or an UPDATE: the table read and the
    table written are one (seed 002: one table, whatever spelling its producer gives), so there
    is no table flow from it to itself and only its column written from another column of it is
    a column flow."""
    lineage = builders.column_lineage_facet(
        {
            "id": [builders.input_field("dbo.Orders", "id", read)],
            "total": [builders.input_field("dbo.Orders", "amount", read)],
        }
    )
    event = run_event(
        "app.rewrite",
        namespace="spark",
        inputs=[ds(read, "dbo.Orders", "id", "amount", "total")],
        outputs=[ds(written, "dbo.Orders", "id", "amount", "total", **lineage)],
    )
    plan = build([event], definition())
    assert flows(plan, "table") == set()
    assert {(source, target) for _, source, _, target in flows(plan, "column")} == {
        ("dbo.Orders.amount", "dbo.Orders.total")
    }
    assert not plan.report.gaps


def dataset_event(namespace: str, name: str, *sources: tuple[str, str]) -> dict[str, Any]:
    return builders.dataset_event(
        name,
        namespace,
        facets={**builders.schema_facet("id"), **builders.lineage_facet(*sources)},
        time=at(59),
        producer="https://example.com/catalog",
    )


def test_each_database_s_table_owns_the_flows_of_its_own_lineage() -> None:
    """Seed 001, "Scopes ... the key of its owner": a DatasetEvent's flows are in the dataset's
    scope, ``ol:dataset:<namespace>|<name>``; ``dwh``'s and ``stage``'s ``dbo.Orders`` are two
    owners, each scope naming its database (``namespace_identity``), and a declaration that
    ``stage``'s table comes from ``dwh``'s is a flow, not a table fed by itself."""
    events = [
        dataset_event(DWH, "dbo.Orders", (DWH, "dbo.Raw")),
        dataset_event(STAGE, "dbo.Orders", (DWH, "dbo.Orders")),
        dataset_event(DWH, "dbo.Raw"),
    ]
    plan = build(events, definition())
    scopes = {
        (f.source.entity.system, f.source.entity.name, f.target.entity.system, f.scope)
        for f in plan.flows
        if f.kind == "table"
    }
    assert scopes == {
        (
            "sql01 dwh",
            "Raw",
            "sql01 dwh",
            "ol:dataset:mssql://sql01:1433;databaseName=dwh|dbo.Orders",
        ),
        (
            "sql01 dwh",
            "Orders",
            "sql01 stage",
            "ol:dataset:mssql://sql01:1433;databaseName=stage|dbo.Orders",
        ),
    }


def test_a_dataset_s_lineage_is_beside_a_job_only_where_the_job_writes_that_dataset() -> None:
    """``datasetLineageBesideJobs`` counts a dataset whose own lineage is published while a job
    writes it: a job writing ``dwh``'s ``dbo.Orders`` does not write ``stage``'s."""
    events = [
        run_event(
            "app.load",
            namespace="spark",
            inputs=[ds(DWH, "dbo.Raw", "id")],
            outputs=[ds(DWH, "dbo.Orders", "id")],
        ),
        dataset_event(STAGE, "dbo.Orders", (STAGE, "dbo.Raw")),
    ]
    plan = build(events, definition())
    assert plan.report.counters.get("datasetLineageBesideJobs", 0) == 0


def test_the_output_a_statement_writes_is_on_the_database_its_run_read() -> None:
    """``mapper.sql_outputs``: a run that names the tables it read and not the one its SQL
    writes gets that table on its inputs' store, and database: ``stage``'s ``dbo.Orders``,
    not ``dwh``'s table of that name that another job describes."""
    events = [
        run_event(
            "app.load",
            namespace="spark",
            run_id=builders.new_run_id(),
            inputs=[ds(DWH, "dbo.Raw", "id")],
            outputs=[ds(DWH, "dbo.Orders", "id")],
        ),
        run_event(
            "etl.copy",
            run_id=builders.new_run_id(),
            time=at(30),
            job_facets=sql_facet("INSERT INTO dbo.Orders SELECT id FROM dbo.Src", "tsql"),
            inputs=[ds(STAGE, "dbo.Src", "id")],
        ),
    ]
    plan = build(events, definition())
    assert ("sql01 stage", "dbo.Src", "sql01 stage", "dbo.Orders") in flows(plan, "table")
    assert ("sql01 stage", "dbo.Src", "sql01 dwh", "dbo.Orders") not in flows(plan, "table")


def test_the_checks_of_two_databases_tables_of_one_name_are_two() -> None:
    """Seed 003: one check per dataset, assertion and column, code
    ``ol:<dataset namespace>/<dataset name>:<assertion>[:<column>]``: the namespace names the
    database, so ``dwh``'s and ``stage``'s ``dbo.Orders`` have a check each."""
    assertions = builders.assertions_facet(builders.assertion("not_null", column="id"))
    events = [
        run_event(
            f"check.{database}",
            run_id=builders.new_run_id(),
            inputs=[
                builders.dataset(
                    "dbo.Orders",
                    namespace,
                    facets=builders.schema_facet("id"),
                    input_facets=assertions,
                )
            ],
        )
        for database, namespace in (("dwh", DWH), ("stage", STAGE))
    ]
    plan = build(events, builders.definition(definition_data_quality()))
    checks = {(check.code, check.entity.system) for check in plan.quality.checks}
    assert checks == {
        ("ol:mssql://sql01:1433;databaseName=dwh/dbo.Orders:not_null:id", "sql01 dwh"),
        ("ol:mssql://sql01:1433;databaseName=stage/dbo.Orders:not_null:id", "sql01 stage"),
    }
    assert plan.report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 0


def definition_data_quality() -> dict[str, Any]:
    return policy("mssql://*", nameProfile="mssql", nameTemplate="{host} {database}")


@pytest.mark.parametrize(
    ("read", "column"),
    [
        pytest.param(
            STAGE,
            ("sql01 stage", "dbo.Orders.id", "sql01 stage", "dbo.Report.id"),
            id="its-own-database",
        ),
        pytest.param(DWH, None, id="another-database"),
    ],
)
def test_a_source_named_without_its_schema_is_completed_by_an_input_of_its_database(
    read: str, column: tuple[str, str, str, str] | None
) -> None:
    """Seed 002: blank segments "are filled from the connection's own catalog": a column
    lineage source ``Orders`` of ``stage`` is the input ``dbo.Orders`` the run read from
    ``stage``, never ``dwh``'s (no invented pair, seed 001); the table flow from what the run
    read stands either way."""
    lineage = builders.column_lineage_facet({"id": [builders.input_field("Orders", "id", STAGE)]})
    event = run_event(
        "app.report",
        namespace="spark",
        inputs=[ds(read, "dbo.Orders", "id")],
        outputs=[ds(STAGE, "dbo.Report", "id", **lineage)],
    )
    plan = build([event], definition())
    system = "sql01 stage" if read == STAGE else "sql01 dwh"
    assert (system, "dbo.Orders", "sql01 stage", "dbo.Report") in flows(plan, "table")
    assert flows(plan, "column") == ({column} if column else set())


def test_a_statement_that_read_two_databases_is_given_no_output_it_may_not_write() -> None:
    """``mapper.sql_outputs``: a run that read from several stores is given no output, as where its
    statement writes is unknown; two databases of one server, each named in its namespace,
    are two of them (the statement's bare ``dbo.Orders`` is in either)."""
    event = run_event(
        "etl.merge",
        job_facets=sql_facet(
            "INSERT INTO dbo.Orders SELECT a.id FROM dbo.A a JOIN dbo.B b", "tsql"
        ),
        inputs=[ds(DWH, "dbo.A", "id"), ds(STAGE, "dbo.B", "id")],
    )
    plan = build([event], definition())
    assert flows(plan, "table") == set()
    assert plan.report.counters.get("outputsReadFromSql", 0) == 0
