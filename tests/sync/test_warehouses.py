"""Issue 37: "Lineage lands on the tables the tenant already has, for every warehouse Airflow users
run" — each platform's events, in the shapes its producers send, land on the entities a crawler
catalogued, with their column flows.

The shapes. Airflow's providers name their datasets with ``SQLParser`` and the hook's
``get_openlineage_database_info`` (scheme, authority, database); those hooks need a live
connection (and their provider packages are not installed here), so the namespaces and names
below follow the OpenLineage naming specification (``spec/Naming.md``,
openlineage.io/docs/spec/naming), as those providers implement it:

=========== =================================== =====================================
platform    namespace                           name
=========== =================================== =====================================
Snowflake   ``snowflake://{org}-{account}``      ``{database}.{schema}.{table}``
BigQuery    ``bigquery``                         ``{project}.{dataset}.{table}``
Databricks  ``databricks://{workspace host}``    ``{catalog}.{schema}.{table}``
MySQL       ``mysql://{host}:{port}``            ``{database}.{table}``
SQL Server  ``mssql://{host}:{port}``            ``{database}.{schema}.{table}``
Oracle      ``oracle://{host}:{port}``           ``{service}.{schema}.{table}``
Trino       ``trino://{host}:{port}``            ``{catalog}.{schema}.{table}``
Hive        ``hive://{host}:{port}``             ``{database}.{table}``
DB2         ``db2://{host}:{port}``              ``{database}.{schema}.{table}`` (seed 002)
Teradata    ``teradata://{host}:{port}``         ``{database}.{table}``
ClickHouse  ``clickhouse://{host}:{port}``       ``{database}.{table}``
PostgreSQL  ``postgres://{host}:{port}``         ``{database}.{schema}.{table}``
=========== =================================== =====================================

Snowflake's and Oracle's providers upper-case unquoted names (``is_uppercase_names``); dbt-ol
sends the adapter's namespace and the relation as the project writes it (``database.schema.
table``, lower case as dbt models usually are); Spark sends the same names, with a ``hierarchy``
facet or without one.

The catalog is laid out as a crawler lays it out: a System per database (account database,
project, catalog, service) where the platform has databases above its schemas, stamped with the
namespace and the database (``openLineageNamespace``, ``openLineageDatabase``) or mapped by a
``namespaceMappings`` entry with ``database``; a System per server where the database is the
schema (MySQL, Hive, Teradata, ClickHouse); schemas, tables and columns in the case the database
stores them. Nothing is created: every end must be a crawled entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import DATABASE_PROPERTY, NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from tests import builders
from tests.builders import column_lineage_facet, dataset, facet, input_field, run_event
from tests.sync.helpers import (
    ORDERS,
    ORDERS_UP,
    TOTALS,
    TOTALS_UP,
    Tables,
    column_flows,
    crawl,
    definition,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration

AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.2"
DBT = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"
HOP = "https://github.com/apache/hop"


@dataclass(frozen=True)
class Crawled:
    """A System as its crawler left it: its stamps and its tables with their columns."""

    name: str
    tables: Tables
    namespace: str | None = None
    """``openLineageNamespace``, when the tenant stamped it."""
    database: str | None = None
    """``openLineageDatabase``, beside the namespace: the System holds that database only."""


@dataclass(frozen=True)
class Run:
    """One job run of a producer: ``source`` read, ``target`` written, columns
    ``{target column: source column}`` as the producer names them."""

    producer: str
    namespace: str
    source: str
    target: str
    columns: dict[str, str]
    hierarchy: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] | None = None
    """The ``hierarchy`` facets of source and target, when the producer sends them."""
    job: str = "load"


@dataclass(frozen=True)
class Case:
    sentence: str
    runs: tuple[Run, ...]
    crawled: tuple[Crawled, ...]
    definition: dict[str, Any]
    flows: frozenset[tuple[str, str]]
    """Column flows ``System:schema.table.column``, source to target."""
    gaps: dict[GapCode, int] = field(default_factory=dict)


def _facets(levels: tuple[tuple[str, str], ...] | None) -> dict[str, Any] | None:
    if levels is None:
        return None
    items = [{"type": kind, "name": name} for kind, name in levels]
    return {"hierarchy": facet("HierarchyDatasetFacet", hierarchy=items)}


def _event(run: Run, index: int) -> dict[str, Any]:
    lineage = column_lineage_facet(
        {
            target: [input_field(run.source, source, run.namespace)]
            for target, source in run.columns.items()
        },
        producer=run.producer,
    )
    source_facets, target_facets = run.hierarchy or (None, None)
    return run_event(
        f"{run.job}.{index}",
        namespace="producer-jobs",
        run_id=f"019a1f3c-7b2e-7c41-9d0a-{index:012d}",
        producer=run.producer,
        inputs=[dataset(run.source, run.namespace, facets=_facets(source_facets))],
        outputs=[
            dataset(
                run.target,
                run.namespace,
                facets={**lineage, **(_facets(target_facets) or {})},
            )
        ],
    )


def _flows(*pairs: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset(pairs)


# -- the crawled catalogs ---------------------------------------------------------------------

COLUMNS = {"order_id": "id", "total": "amount"}
COLUMNS_UP = {"ORDER_ID": "ID", "TOTAL": "AMOUNT"}


def _lower(system: str, source: str, target: str) -> frozenset[tuple[str, str]]:
    return _flows(
        (f"{system}:{source}.id", f"{system}:{target}.order_id"),
        (f"{system}:{source}.amount", f"{system}:{target}.total"),
    )


def _upper(system: str, source: str, target: str) -> frozenset[tuple[str, str]]:
    return _flows(
        (f"{system}:{source}.ID", f"{system}:{target}.ORDER_ID"),
        (f"{system}:{source}.AMOUNT", f"{system}:{target}.TOTAL"),
    )


SNOWFLAKE = "snowflake://org-acct"
SNOWFLAKE_CATALOG = (
    Crawled(
        "Snowflake ANALYTICS",
        {("SALES", "ORDERS"): ORDERS_UP, ("MART", "ORDER_TOTALS"): TOTALS_UP},
        SNOWFLAKE,
        "ANALYTICS",
    ),
    Crawled("Snowflake RAW", {("SHOP", "ORDERS"): ORDERS_UP}, SNOWFLAKE, "RAW"),
)
SNOWFLAKE_DEFINITION = {
    "systemPolicies": [
        {"pattern": SNOWFLAKE, "nameProfile": "snowflake", "identifierCase": "UPPER"}
    ]
}
BIGQUERY_CATALOG = (
    Crawled(
        "BigQuery acme-prod",
        {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS},
        "bigquery",
        "acme-prod",
    ),
)
DATABRICKS = "databricks://adb-1234567890.12.azuredatabricks.net"
DATABRICKS_CATALOG = (
    Crawled(
        "Databricks main",
        {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS},
        DATABRICKS,
        "main",
    ),
)
DATABRICKS_DEFINITION = {
    "systemPolicies": [
        {"pattern": "databricks://*", "nameProfile": "databricks", "identifierCase": "LOWER"}
    ]
}
MYSQL = "mysql://mysql.internal:3306"
MYSQL_CATALOG = (
    Crawled(
        "MySQL shop server",
        {("shop", "orders"): ORDERS, ("reporting", "order_totals"): TOTALS},
        MYSQL,
    ),
)
MSSQL = "mssql://sqlsrv.internal:1433"
MSSQL_CATALOG = (
    Crawled(
        "SQL Server dwh",
        {
            ("dbo", "Orders"): {"Id": "int", "Amount": "money"},
            ("mart", "OrderTotals"): {"OrderId": "int", "Total": "money"},
        },
        MSSQL,
        "dwh",
    ),
)
MSSQL_FLOWS = _flows(
    ("SQL Server dwh:dbo.Orders.Id", "SQL Server dwh:mart.OrderTotals.OrderId"),
    ("SQL Server dwh:dbo.Orders.Amount", "SQL Server dwh:mart.OrderTotals.Total"),
)
ORACLE = "oracle://ora.internal:1521"
ORACLE_CATALOG = (
    Crawled(
        "Oracle ORCLPDB1",
        {("HR", "ORDERS"): ORDERS_UP, ("MART", "ORDER_TOTALS"): TOTALS_UP},
        ORACLE,
        "ORCLPDB1",
    ),
)
ORACLE_DEFINITION = {
    "systemPolicies": [
        {"pattern": "oracle://*", "nameProfile": "oracle", "identifierCase": "UPPER"}
    ]
}
TRINO = "trino://trino.internal:8080"
TRINO_CATALOG = (
    Crawled("Trino hive", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}),
)
TRINO_DEFINITION = {
    "namespaceMappings": [
        {"pattern": "trino://*", "database": "hive", "system": {"name": "Trino hive"}}
    ],
    "systemPolicies": [{"pattern": "trino://*", "nameProfile": "trino", "identifierCase": "LOWER"}],
}
HIVE = "hive://hive.internal:10000"
HIVE_CATALOG = (
    Crawled("Hive", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}, HIVE),
)
DB2 = "db2://db2.internal:50000"
DB2_CATALOG = (
    Crawled(
        "Db2 SAMPLE",
        {("SALES", "ORDERS"): ORDERS_UP, ("MART", "ORDER_TOTALS"): TOTALS_UP},
        DB2,
        "SAMPLE",
    ),
)
TERADATA = "teradata://td.internal:1025"
TERADATA_CATALOG = (
    Crawled("Teradata", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}, TERADATA),
)
CLICKHOUSE = "clickhouse://ch.internal:8123"
CLICKHOUSE_CATALOG = (
    Crawled(
        "ClickHouse", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}, CLICKHOUSE
    ),
)
POSTGRES = "postgres://pg.internal:5432"
POSTGRES_CATALOG = (
    Crawled("pg prod", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}),
    Crawled("pg dev", {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}),
)


def _policy(pattern: str, profile: str, **more: str) -> dict[str, Any]:
    return {"systemPolicies": [{"pattern": pattern, "nameProfile": profile, **more}]}


CASES = [
    # -- Snowflake --------------------------------------------------------------------------
    Case(
        "snowflake: the provider's DATABASE.SCHEMA.TABLE lands on the System of its database",
        (
            Run(
                AIRFLOW,
                SNOWFLAKE,
                "ANALYTICS.SALES.ORDERS",
                "ANALYTICS.MART.ORDER_TOTALS",
                COLUMNS_UP,
            ),
        ),
        SNOWFLAKE_CATALOG,
        SNOWFLAKE_DEFINITION,
        _upper("Snowflake ANALYTICS", "SALES.ORDERS", "MART.ORDER_TOTALS"),
    ),
    Case(
        "snowflake: dbt-ol's lower-case names land on the upper-case entities (identifierCase)",
        (Run(DBT, SNOWFLAKE, "analytics.sales.orders", "analytics.mart.order_totals", COLUMNS),),
        SNOWFLAKE_CATALOG,
        SNOWFLAKE_DEFINITION,
        _upper("Snowflake ANALYTICS", "SALES.ORDERS", "MART.ORDER_TOTALS"),
    ),
    Case(
        "snowflake: two databases of one account land on their own Systems",
        (Run(AIRFLOW, SNOWFLAKE, "RAW.SHOP.ORDERS", "ANALYTICS.SALES.ORDERS", {"ID": "ID"}),),
        SNOWFLAKE_CATALOG,
        SNOWFLAKE_DEFINITION,
        _flows(("Snowflake RAW:SHOP.ORDERS.ID", "Snowflake ANALYTICS:SALES.ORDERS.ID")),
    ),
    Case(
        "snowflake: a quoted name keeps its case and loses its quotes, a trailing ';' is dropped",
        (
            Run(
                AIRFLOW,
                SNOWFLAKE,
                '"ANALYTICS"."SALES"."ORDERS"',
                "analytics.mart.order_totals;",
                COLUMNS_UP,
            ),
        ),
        SNOWFLAKE_CATALOG,
        SNOWFLAKE_DEFINITION,
        _upper("Snowflake ANALYTICS", "SALES.ORDERS", "MART.ORDER_TOTALS"),
    ),
    # -- BigQuery ---------------------------------------------------------------------------
    Case(
        "bigquery: the provider's project.dataset.table lands on the System of its project",
        (
            Run(
                AIRFLOW,
                "bigquery",
                "acme-prod.sales.orders",
                "acme-prod.mart.order_totals",
                COLUMNS,
            ),
        ),
        BIGQUERY_CATALOG,
        _policy("bigquery", "bigquery"),
        _lower("BigQuery acme-prod", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "bigquery: dbt-ol's project.dataset.table lands on the same entities",
        (Run(DBT, "bigquery", "acme-prod.sales.orders", "acme-prod.mart.order_totals", COLUMNS),),
        BIGQUERY_CATALOG,
        _policy("bigquery", "bigquery"),
        _lower("BigQuery acme-prod", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "bigquery: Spark's connector with a hierarchy facet lands on the same entities",
        (
            Run(
                SPARK,
                "bigquery",
                "acme-prod.sales.orders",
                "acme-prod.mart.order_totals",
                COLUMNS,
                (
                    (("PROJECT", "acme-prod"), ("DATASET", "sales"), ("TABLE", "orders")),
                    (("PROJECT", "acme-prod"), ("DATASET", "mart"), ("TABLE", "order_totals")),
                ),
            ),
        ),
        BIGQUERY_CATALOG,
        _policy("bigquery", "bigquery"),
        _lower("BigQuery acme-prod", "sales.orders", "mart.order_totals"),
    ),
    # -- Databricks -------------------------------------------------------------------------
    Case(
        "databricks: the provider's catalog.schema.table lands on the System of its catalog",
        (Run(AIRFLOW, DATABRICKS, "main.sales.orders", "main.mart.order_totals", COLUMNS),),
        DATABRICKS_CATALOG,
        DATABRICKS_DEFINITION,
        _lower("Databricks main", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "databricks: dbt-ol's catalog.schema.table lands on the same entities",
        (Run(DBT, DATABRICKS, "main.sales.orders", "main.mart.order_totals", COLUMNS),),
        DATABRICKS_CATALOG,
        DATABRICKS_DEFINITION,
        _lower("Databricks main", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "databricks: a quoted mixed-case name lands on the entity Unity Catalog stores lower case",
        (Run(AIRFLOW, DATABRICKS, "main.sales.`Orders`", "`Main`.`Mart`.`Order_Totals`", COLUMNS),),
        DATABRICKS_CATALOG,
        DATABRICKS_DEFINITION,
        _lower("Databricks main", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "databricks: Spark with a hierarchy facet (the hierarchy wins, seed order)",
        (
            Run(
                SPARK,
                DATABRICKS,
                "dbfs:/user/hive/warehouse/sales.db/orders",
                "dbfs:/user/hive/warehouse/mart.db/order_totals",
                COLUMNS,
                (
                    (("CATALOG", "main"), ("SCHEMA", "sales"), ("TABLE", "orders")),
                    (("CATALOG", "main"), ("SCHEMA", "mart"), ("TABLE", "order_totals")),
                ),
            ),
        ),
        DATABRICKS_CATALOG,
        DATABRICKS_DEFINITION,
        _lower("Databricks main", "sales.orders", "mart.order_totals"),
    ),
    # -- MySQL ------------------------------------------------------------------------------
    Case(
        "mysql: the provider's database.table lands on the schema of that database",
        (Run(AIRFLOW, MYSQL, "shop.orders", "reporting.order_totals", COLUMNS),),
        MYSQL_CATALOG,
        _policy("mysql://*", "mysql"),
        _lower("MySQL shop server", "shop.orders", "reporting.order_totals"),
    ),
    Case(
        "mysql: Spark's JDBC database.table without a hierarchy facet lands on the same entities",
        (Run(SPARK, "mysql://mysql.internal", "shop.orders", "reporting.order_totals", COLUMNS),),
        MYSQL_CATALOG,
        _policy("mysql://*", "mysql"),
        _lower("MySQL shop server", "shop.orders", "reporting.order_totals"),
    ),
    # -- SQL Server -------------------------------------------------------------------------
    Case(
        "mssql: the provider's database.schema.table lands on the System of its database",
        (
            Run(
                AIRFLOW,
                MSSQL,
                "dwh.dbo.Orders",
                "dwh.mart.OrderTotals",
                {"OrderId": "Id", "Total": "Amount"},
            ),
        ),
        MSSQL_CATALOG,
        _policy("mssql://*", "mssql"),
        MSSQL_FLOWS,
    ),
    Case(
        "mssql: dbt-ol's sqlserver:// namespace and bracket-quoted names land on the same entities",
        (
            Run(
                DBT,
                "sqlserver://sqlsrv.internal:1433",
                "[dwh].[dbo].[Orders]",
                "dwh.mart.OrderTotals",
                {"OrderId": "Id", "Total": "Amount"},
            ),
        ),
        MSSQL_CATALOG,
        _policy("mssql://*", "sqlserver"),
        MSSQL_FLOWS,
    ),
    # -- Oracle -----------------------------------------------------------------------------
    Case(
        "oracle: the provider's SERVICE.SCHEMA.TABLE lands on the System of its service",
        (Run(AIRFLOW, ORACLE, "ORCLPDB1.HR.ORDERS", "ORCLPDB1.MART.ORDER_TOTALS", COLUMNS_UP),),
        ORACLE_CATALOG,
        ORACLE_DEFINITION,
        _upper("Oracle ORCLPDB1", "HR.ORDERS", "MART.ORDER_TOTALS"),
    ),
    Case(
        "oracle: dbt-ol's lower-case names land on the upper-case entities (identifierCase)",
        (Run(DBT, ORACLE, "orclpdb1.hr.orders", "orclpdb1.mart.order_totals", COLUMNS),),
        ORACLE_CATALOG,
        ORACLE_DEFINITION,
        _upper("Oracle ORCLPDB1", "HR.ORDERS", "MART.ORDER_TOTALS"),
    ),
    # -- Trino ------------------------------------------------------------------------------
    Case(
        "trino: the provider's catalog.schema.table lands on the System its catalog is mapped to",
        (Run(AIRFLOW, TRINO, "hive.sales.orders", "hive.mart.order_totals", COLUMNS),),
        TRINO_CATALOG,
        TRINO_DEFINITION,
        _lower("Trino hive", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "trino: dbt-ol's catalog.schema.table lands on the same entities",
        (Run(DBT, TRINO, "hive.sales.orders", "hive.mart.order_totals", COLUMNS),),
        TRINO_CATALOG,
        TRINO_DEFINITION,
        _lower("Trino hive", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "trino: a mixed-case or quoted name lands on the entities Trino stores in lower case",
        (Run(DBT, TRINO, "Hive.Sales.Orders", '"hive"."mart"."Order_Totals"', COLUMNS),),
        TRINO_CATALOG,
        TRINO_DEFINITION,
        _lower("Trino hive", "sales.orders", "mart.order_totals"),
    ),
    # -- Hive -------------------------------------------------------------------------------
    Case(
        "hive: the provider's database.table lands on the schema of that database",
        (Run(AIRFLOW, HIVE, "sales.orders", "mart.order_totals", COLUMNS),),
        HIVE_CATALOG,
        _policy("hive://*", "hive"),
        _lower("Hive", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "hive: Spark with a DATABASE, TABLE hierarchy facet lands on the same entities",
        (
            Run(
                SPARK,
                HIVE,
                "sales.orders",
                "mart.order_totals",
                COLUMNS,
                (
                    (("DATABASE", "sales"), ("TABLE", "orders")),
                    (("DATABASE", "mart"), ("TABLE", "order_totals")),
                ),
            ),
        ),
        HIVE_CATALOG,
        _policy("hive://*", "hive"),
        _lower("Hive", "sales.orders", "mart.order_totals"),
    ),
    # -- DB2 --------------------------------------------------------------------------------
    Case(
        "db2: Hop's database.schema.table as configured lands on the upper-case entities",
        (Run(HOP, DB2, "sample.sales.orders", "sample.mart.order_totals", COLUMNS),),
        DB2_CATALOG,
        _policy("db2://*", "db2", identifierCase="UPPER"),
        _upper("Db2 SAMPLE", "SALES.ORDERS", "MART.ORDER_TOTALS"),
    ),
    # -- Teradata ---------------------------------------------------------------------------
    Case(
        "teradata: the provider's database.table lands on the schema of that database",
        (Run(AIRFLOW, TERADATA, "sales.orders", "mart.order_totals", COLUMNS),),
        TERADATA_CATALOG,
        _policy("teradata://*", "teradata"),
        _lower("Teradata", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "teradata: dbt-ol's database.table lands on the same entities",
        (Run(DBT, TERADATA, "sales.orders", "mart.order_totals", COLUMNS),),
        TERADATA_CATALOG,
        _policy("teradata://*", "teradata"),
        _lower("Teradata", "sales.orders", "mart.order_totals"),
    ),
    # -- ClickHouse -------------------------------------------------------------------------
    Case(
        "clickhouse: database.table lands on the schema of that database",
        (Run(DBT, CLICKHOUSE, "sales.orders", "mart.order_totals", COLUMNS),),
        CLICKHOUSE_CATALOG,
        _policy("clickhouse://*", "clickhouse"),
        _lower("ClickHouse", "sales.orders", "mart.order_totals"),
    ),
    # -- PostgreSQL: two databases of one server ----------------------------------------------
    Case(
        "postgres: two databases of one server stay apart once declared (database selector)",
        (
            Run(AIRFLOW, POSTGRES, "prod.sales.orders", "prod.mart.order_totals", COLUMNS, job="a"),
            Run(AIRFLOW, POSTGRES, "dev.sales.orders", "dev.mart.order_totals", COLUMNS, job="b"),
        ),
        POSTGRES_CATALOG,
        {
            "namespaceMappings": [
                {"pattern": POSTGRES, "database": database, "system": {"name": f"pg {database}"}}
                for database in ("prod", "dev")
            ]
        },
        _lower("pg prod", "sales.orders", "mart.order_totals")
        | _lower("pg dev", "sales.orders", "mart.order_totals"),
    ),
    Case(
        "postgres: two databases of one server on one System are reported, naming both",
        (
            Run(AIRFLOW, POSTGRES, "prod.sales.orders", "prod.mart.order_totals", COLUMNS, job="a"),
            Run(AIRFLOW, POSTGRES, "dev.sales.orders", "dev.mart.order_totals", COLUMNS, job="b"),
        ),
        (Crawled("pg", POSTGRES_CATALOG[0].tables, POSTGRES),),
        {},
        _lower("pg", "sales.orders", "mart.order_totals"),
        {GapCode.DATABASES_MERGED: 2},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.sentence for case in CASES])
def test_each_platform_lands_on_its_crawled_entities_with_its_column_flows(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    for crawled in case.crawled:
        stamps = [(NAMESPACE_PROPERTY, crawled.namespace)] if crawled.namespace else []
        if crawled.database:
            stamps.append((DATABASE_PROPERTY, crawled.database))
        crawl(client, crawled.name, crawled.tables, properties=tuple(stamps))
    job = builders.definition(**case.definition)
    events = [_event(run, index) for index, run in enumerate(case.runs)]
    entities_before = len(objects(emulator, Kind.ENTITY))

    report = snapshot(plan_for(client, events, job), client, job)

    assert report.status == "success", report.render()
    assert column_flows(emulator) == case.flows, report.render()
    for code in (
        GapCode.UNMAPPED_NAMESPACE,
        GapCode.TARGET_NOT_CATALOGUED,
        GapCode.FIELD_NOT_CATALOGUED,
        GapCode.DANGLING_FLOW,
    ):
        assert report.gap_count(code) == 0, report.render()
    for code, count in case.gaps.items():
        assert report.gap_count(code) == count, report.render()
    # only the job entities are new: every dataset landed on a crawled entity
    datasets = [
        e for e in objects(emulator, Kind.ENTITY) if e.get("tableType") != "OPENLINEAGE_JOB"
    ]
    assert len(datasets) == entities_before


UNDECLARED = [case for case in CASES if case.sentence.startswith(("snowflake: the", "mysql: the"))]


@pytest.mark.parametrize("case", UNDECLARED, ids=[case.sentence for case in UNDECLARED])
def test_without_a_declared_profile_nothing_changes_and_lineage_is_not_catalogued(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    """Issue 37: "The default stays the seed's: nothing changes for a definition that declares
    nothing" — the name as it is, with no schema, which the crawler never catalogued: the
    issue's "TARGET_NOT_CATALOGUED: no lineage lands at all" (the System stamped with the
    namespace only, as before databases were part of identity)."""
    crawled = case.crawled[0]
    crawl(
        client,
        crawled.name,
        crawled.tables,
        properties=((NAMESPACE_PROPERTY, case.runs[0].namespace),),
    )
    job = builders.definition()
    events = [_event(run, index) for index, run in enumerate(case.runs)]

    report = snapshot(plan_for(client, events, job), client, job)

    assert column_flows(emulator) == set()
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) > 0, report.render()


def test_a_system_per_database_is_created_stamped_and_found_again_by_its_stamps(
    client: BlindataClient, emulator: Any
) -> None:
    """Issue 37: "two databases of one server ... land on their own Systems" when the job
    creates them (``{database}`` in ``nameTemplate``); the next snapshot finds each by its
    ``openLineageNamespace`` and ``openLineageDatabase`` stamps and creates nothing more."""
    runs = CASES[-1].runs
    job = builders.definition(
        builders.policy(POSTGRES, nameTemplate="pg {database}", technology="PostgreSQL")
    )
    events = [_event(run, index) for index, run in enumerate(runs)]

    first = snapshot(plan_for(client, events, job), client, job)

    assert first.status == "success", first.render()
    assert first.gap_count(GapCode.DATABASES_MERGED) == 0
    systems = {s["name"]: s for s in objects(emulator, Kind.SYSTEM)}
    for database in ("prod", "dev"):
        stamps = {
            (p["name"], p["value"]) for p in systems[f"pg {database}"]["additionalProperties"]
        }
        assert {(NAMESPACE_PROPERTY, POSTGRES), (DATABASE_PROPERTY, database)} <= stamps
    before = {kind: len(objects(emulator, kind)) for kind in (Kind.SYSTEM, Kind.ENTITY)}

    second = snapshot(plan_for(client, events, job), client, job)

    assert second.status == "success", second.render()
    assert {kind: len(objects(emulator, kind)) for kind in (Kind.SYSTEM, Kind.ENTITY)} == before
    entities = {
        (e["system"]["uuid"], e.get("schema"), e["name"]) for e in objects(emulator, Kind.ENTITY)
    }
    for database in ("prod", "dev"):
        uuid = systems[f"pg {database}"]["uuid"]
        assert {(uuid, "sales", "orders"), (uuid, "mart", "order_totals")} <= entities


def test_a_system_found_at_sync_time_follows_the_policy_of_its_database(
    client: BlindataClient, emulator: Any
) -> None:
    """A System planned for creation that someone made meanwhile (Blindata answers 409) is
    reused; whether entities may be created on it is the policy of its database, not of the
    namespace's first entry."""
    job = builders.definition(
        builders.policy(POSTGRES, database="prod", nameTemplate="pg prod", entityCreation=True),
        {"pattern": POSTGRES},
    )
    events = [_event(CASES[-1].runs[0], 0)]  # prod.sales.orders → prod.mart.order_totals
    plan = plan_for(client, events, job)  # no System yet: "pg prod" is to be created
    crawl(client, "pg prod", {("sales", "orders"): ORDERS})  # made meanwhile, by a crawler

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 0, report.render()
    names = {(e.get("schema"), e["name"]) for e in objects(emulator, Kind.ENTITY)}
    assert ("mart", "order_totals") in names


TRINO = "trino://trino.internal:8080"


def _trino_events() -> list[dict[str, Any]]:
    """dbt spells Trino's catalog as Trino holds it (``hive``), a Spark job as typed (``Hive``)."""
    return [
        run_event(
            "dbt.load",
            namespace="dbt",
            inputs=[dataset("hive.sales.orders", TRINO)],
            outputs=[dataset("hive.mart.totals", TRINO)],
            time=builders.at(1),
            run_id="00000000-0000-4000-8000-000000000001",
        ),
        run_event(
            "spark.load",
            namespace="spark",
            inputs=[dataset("Hive.sales.orders", TRINO)],
            outputs=[dataset("Hive.mart.totals", TRINO)],
            time=builders.at(2),
            run_id="00000000-0000-4000-8000-000000000002",
        ),
    ]


def test_after_an_upgrade_a_catalogs_lineage_stays_on_the_crawled_system_of_its_database(
    emulator: Any, client: BlindataClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 000: "lineage connects to what you already catalog". A release before Trino's
    catalogs were read without case made a System for ``Hive`` beside the crawled one stamped
    ``hive``; after the upgrade both spellings land on the crawled System, never on the older
    release's (a review: its stamp, first by name, took the crawled tables' lineage)."""
    from airflow_blindata.mapper import catalog as catalog_module
    from airflow_blindata.mapper import systems as systems_module

    columns = {"id": "int"}
    crawl(
        client,
        "warehouse",
        {("sales", "orders"): columns, ("mart", "totals"): columns},
        properties=((NAMESPACE_PROPERTY, TRINO), (DATABASE_PROPERTY, "hive")),
    )
    job = definition(
        systemPolicies=[
            {
                "pattern": "trino://*",
                "nameTemplate": "trino-{database}",
                "nameProfile": "trino",
                "creation": "IF_MISSING",
            }
        ]
    )
    with monkeypatch.context() as older_release:

        def sql_server_only(namespace: str) -> bool:
            return namespace.startswith("mssql://")

        older_release.setattr(systems_module, "databases_ignore_case", sql_server_only)
        older_release.setattr(catalog_module, "databases_ignore_case", sql_server_only)
        before = snapshot(plan_for(client, _trino_events(), job), client, job)
    assert before.status == "success", before.render()
    assert "trino-Hive" in {s["name"] for s in objects(emulator, Kind.SYSTEM)}
    report = snapshot(plan_for(client, _trino_events(), job), client, job)
    assert report.status == "success", report.render()
    system_of = {s["uuid"]: s["name"] for s in objects(emulator, Kind.SYSTEM)}
    entity_system = {
        e["uuid"]: system_of[e["system"]["uuid"]] for e in objects(emulator, Kind.ENTITY)
    }
    flows = {
        (f["scope"], entity_system[f["fromPhysicalEntity"]["uuid"]])
        for f in objects(emulator, Kind.FLOW)
        if f.get("fromPhysicalEntity")
    }
    assert ("ol:dbt|dbt.load", "warehouse") in flows, flows
    assert ("ol:spark|spark.load", "warehouse") in flows, flows
    assert ("ol:dbt|dbt.load", "trino-Hive") not in flows, flows
