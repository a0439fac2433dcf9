"""Seed 001, "A table flow is always published": a run whose producer named the tables it read
and not the one it wrote (Airflow's MySQL provider, when it looks the tables up in
information_schema: ``INSERT INTO crm.summary … FROM sales.orders`` gives the input only) gets
the table its SQL writes as its output (``mapper.sql_outputs``), and the producer's limit is
reported (``PRODUCER_PARTIAL_LINEAGE``)."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.sql import WrittenTable, tables_written
from tests import builders
from tests.builders import policy, run_event, sql_facet

MYSQL = "mysql://db:3306"
PG = "postgres://pg:5432"
SNOWFLAKE = "snowflake://org-account"
MSSQL = "mssql://sql:1433"
BIGQUERY = "bigquery"
TRINO = "trino://trino:8080"
DATABRICKS = "databricks://adb"


def plan_of(
    sql: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]] = (), **more: Any
) -> CatalogPlan:
    events = [
        run_event(
            "etl.load",
            job_facets=sql_facet(sql),
            inputs=[builders.dataset(name, namespace) for namespace, name in inputs],
            outputs=[builders.dataset(name, namespace) for namespace, name in outputs],
        ),
        *more.get("others", []),
    ]
    definition = builders.definition(
        policy("mysql://*", nameProfile="mysql"),
        policy("postgres://*"),
        policy("snowflake://*"),
        policy("mssql://*"),
        policy("bigquery"),
        policy("trino://*", nameProfile="trino"),
        policy("databricks://*", nameProfile="databricks"),
    )
    return build(events, definition)


def pairs(plan: CatalogPlan) -> set[tuple[str, str]]:
    def shown(key: Any) -> str:
        return f"{key.schema_}.{key.name}" if key.schema_ else key.name

    return {
        (shown(f.source.entity), shown(f.target.entity)) for f in plan.flows if f.kind == "table"
    }


@pytest.mark.parametrize(
    ("sentence", "sql", "inputs", "expected"),
    [
        (
            "a CREATE TABLE AS across two databases of one server writes the table it names",
            "CREATE TABLE crm.summary AS SELECT o.id, c.name FROM sales.orders o "
            "JOIN crm.customers c ON c.id = o.id",
            [(MYSQL, "sales.orders"), (MYSQL, "crm.customers")],
            {("sales.orders", "crm.summary"), ("crm.customers", "crm.summary")},
        ),
        (
            "a bare target is in the database of the inputs the statement names bare",
            "INSERT INTO summary SELECT * FROM orders JOIN crm.customers USING (id)",
            [(MYSQL, "sales.orders"), (MYSQL, "crm.customers")],
            {("sales.orders", "sales.summary"), ("crm.customers", "sales.summary")},
        ),
        (
            "a three-part name takes the database all the inputs share",
            "INSERT INTO mart.daily SELECT * FROM orders",
            [(PG, "shop.public.orders")],
            {("public.orders", "mart.daily")},
        ),
        (
            "an unquoted name is cased as the dialect folds it",
            "insert into mart.daily select * from orders",
            [(SNOWFLAKE, "DB.PUBLIC.ORDERS")],
            {("DB.PUBLIC.ORDERS", "DB.MART.DAILY")},
        ),
        (
            "a quoted name keeps its case",
            'CREATE VIEW mart."Daily" AS SELECT * FROM orders',
            [(PG, "shop.public.orders")],
            {("public.orders", "mart.Daily")},
        ),
        (
            "a quoted name is folded where the catalog folds every name (Trino)",
            'INSERT INTO mart."Daily" SELECT * FROM orders',
            [(TRINO, "hive.sales.orders")],
            {("sales.orders", "mart.daily")},
        ),
        (
            "a quoted name is folded where the catalog folds every name (Unity Catalog)",
            "INSERT INTO `Mart`.`Daily` SELECT * FROM orders",
            [(DATABRICKS, "main.sales.orders")],
            {("sales.orders", "mart.daily")},
        ),
        (
            "a name is kept as written where the platform keeps names so (SQL Server)",
            "INSERT INTO dbo.DailySales SELECT * FROM dbo.Orders",
            [(MSSQL, "sales.dbo.Orders")],
            {("sales.dbo.Orders", "sales.dbo.DailySales")},
        ),
        (
            "a name is kept as written where the platform keeps names so (BigQuery)",
            "INSERT INTO mart.DailySales SELECT * FROM `proj.sales.orders`",
            [(BIGQUERY, "proj.sales.orders")],
            {("proj.sales.orders", "proj.mart.DailySales")},
        ),
        (
            "a MERGE writes its target",
            "MERGE INTO crm.customers t USING sales.leads s ON t.id = s.id "
            "WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)",
            [(MYSQL, "sales.leads")],
            {("sales.leads", "crm.customers")},
        ),
        (
            "MySQL's REPLACE INTO writes its target as an INSERT does",
            "REPLACE INTO crm.summary (id, total) SELECT id, SUM(amount) FROM sales.orders "
            "GROUP BY id",
            [(MYSQL, "sales.orders")],
            {("sales.orders", "crm.summary")},
        ),
        (
            "MySQL's REPLACE without INTO writes its target too",
            "replace crm.summary select * from sales.orders",
            [(MYSQL, "sales.orders")],
            {("sales.orders", "crm.summary")},
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value else "_",
)
def test_a_run_that_names_no_output_gets_the_table_its_sql_writes(
    sentence: str, sql: str, inputs: list[tuple[str, str]], expected: set[tuple[str, str]]
) -> None:
    plan = plan_of(sql, inputs)
    assert pairs(plan) == expected
    assert plan.report.counters["outputsReadFromSql"] == 1
    (example,) = plan.report.gaps[GapCode.PRODUCER_PARTIAL_LINEAGE].examples
    assert example.startswith("airflow/etl.load: no output sent for the table its SQL writes: ")


@pytest.mark.parametrize(
    ("sentence", "sql", "inputs", "outputs"),
    [
        ("a query that writes nothing has no output", "SELECT * FROM orders", [(PG, "s.p.o")], []),
        (
            "a temporary table is no output",
            "CREATE TEMPORARY TABLE t AS SELECT * FROM orders",
            [(PG, "shop.public.orders")],
            [],
        ),
        (
            "a table made and dropped is no output",
            "CREATE TABLE stage AS SELECT * FROM orders; DROP TABLE stage",
            [(PG, "shop.public.orders")],
            [],
        ),
        (
            "rows from nothing read are no flow",
            "INSERT INTO log VALUES (1)",
            [(MYSQL, "sales.orders")],
            [],
        ),
        (
            "inputs of two stores say nothing of where it writes",
            "INSERT INTO crm.summary SELECT * FROM orders",
            [(MYSQL, "sales.orders"), (PG, "shop.public.orders")],
            [],
        ),
        (
            "inputs of an object store are no database",
            "INSERT INTO summary SELECT * FROM orders",
            [("s3://bucket", "raw/orders")],
            [],
        ),
        (
            "a bare target among inputs of two databases all named qualified is not placed",
            "INSERT INTO summary SELECT * FROM sales.orders JOIN crm.customers USING (id)",
            [(MYSQL, "sales.orders"), (MYSQL, "crm.customers")],
            [],
        ),
        (
            "a name longer than the store's names is not placed",
            "INSERT INTO a.b.c.d SELECT * FROM orders",
            [(MYSQL, "sales.orders")],
            [],
        ),
        (
            "a table variable is no table",
            "INSERT INTO @tv SELECT * FROM dbo.Orders",
            [(MSSQL, "sales.dbo.Orders")],
            [],
        ),
        (
            "SQL Server's temporary tables are no output",
            "INSERT INTO #stage SELECT * FROM dbo.Orders; SELECT * INTO ##g FROM dbo.Orders",
            [(MSSQL, "sales.dbo.Orders")],
            [],
        ),
        (
            "a temporary table the text made before is no output",
            "CREATE TEMP TABLE t AS SELECT 1 AS id; INSERT INTO t SELECT * FROM public.orders",
            [(PG, "shop.public.orders")],
            [],
        ),
        (
            "PostgreSQL's temporary schema is no output",
            "INSERT INTO pg_temp.t SELECT * FROM public.orders",
            [(PG, "shop.public.orders")],
            [],
        ),
        (
            "a text that moves where names resolve says nothing of its target",
            "SET search_path TO mart; INSERT INTO daily SELECT * FROM public.orders",
            [(PG, "shop.public.orders")],
            [],
        ),
        (
            "a text that renames tables says nothing of its target",
            "CREATE TABLE crm.t_new AS SELECT * FROM sales.orders; "
            "RENAME TABLE crm.t TO crm.t_old, crm.t_new TO crm.t",
            [(MYSQL, "sales.orders")],
            [],
        ),
        (
            "a table updated from itself alone has no new source",
            "UPDATE sales.orders SET total = (SELECT SUM(a) FROM sales.orders o2)",
            [(MYSQL, "sales.orders")],
            [],
        ),
        (
            "a text that writes two tables does not say which input feeds which",
            "INSERT INTO crm.a SELECT * FROM sales.x; INSERT INTO crm.b SELECT * FROM sales.y",
            [(MYSQL, "sales.x"), (MYSQL, "sales.y")],
            [],
        ),
        (
            "a run that names its output is read as sent",
            "INSERT INTO crm.summary SELECT * FROM sales.orders",
            [(MYSQL, "sales.orders")],
            [(MYSQL, "crm.named")],
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value else "_",
)
def test_no_output_is_read_from_sql_where_it_would_be_a_guess(
    sentence: str, sql: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]
) -> None:
    plan = plan_of(sql, inputs, outputs)
    assert "outputsReadFromSql" not in plan.report.counters
    assert GapCode.PRODUCER_PARTIAL_LINEAGE not in plan.report.gaps
    if outputs:
        assert ("sales.orders", "crm.named") in pairs(plan)


def test_a_table_another_job_names_is_that_dataset_whatever_its_case() -> None:
    reader = run_event(
        "etl.report",
        run_id="00000000-0000-4000-8000-000000000002",
        inputs=[builders.dataset("crm.Summary", MYSQL)],
    )
    plan = plan_of(
        "INSERT INTO crm.summary SELECT * FROM sales.orders",
        [(MYSQL, "sales.orders")],
        others=[reader],
    )
    assert pairs(plan) == {("sales.orders", "crm.Summary")}
    assert [e.key.name for e in plan.entities if e.key.name.lower() == "summary"] == ["Summary"]


@pytest.mark.parametrize("state", ["FAIL", "START"])
def test_a_run_that_did_not_complete_gets_no_output_from_its_sql(state: str) -> None:
    """A failed run may never have made its table, and a run under way may yet name its output
    (Spark's COMPLETE names the path it wrote): only a completed run's SQL is read."""
    events = [
        run_event(
            "etl.load",
            event_type=state,
            job_facets=sql_facet("INSERT INTO mart.weekly SELECT * FROM public.orders"),
            inputs=[builders.dataset("shop.public.orders", PG)],
        )
    ]
    plan = build(events, builders.definition(policy("postgres://*")))
    assert "outputsReadFromSql" not in plan.report.counters
    assert not [e for e in plan.entities if e.key.name == "weekly"]


@pytest.mark.parametrize(
    ("sql", "fields"),
    [
        (
            "CREATE TABLE crm.summary AS SELECT o.id, SUM(o.amount) AS total FROM sales.orders o "
            "GROUP BY o.id",
            ["id", "total"],
        ),
        (
            "INSERT INTO crm.summary (id, total) SELECT id, amount FROM sales.orders",
            ["id", "total"],
        ),
        ("INSERT INTO crm.summary SELECT id, amount FROM sales.orders", []),  # by position
        ("CREATE TABLE crm.summary AS SELECT * FROM sales.orders", []),
        ("CREATE TABLE crm.summary AS SELECT id, 1 FROM sales.orders", []),  # a column unnamed
    ],
)
def test_the_columns_a_statement_names_are_the_tables_fields(sql: str, fields: list[str]) -> None:
    """The table no event describes gets the columns the statement makes it with, when it
    names them all, so that the analysis's column flows have fields to land on (a MariaDB probe:
    "fields not in the catalog: crm.customers_summary.customer_id, …")."""
    plan = plan_of(sql, [(MYSQL, "sales.orders")])
    planned = [f.name for f in plan.fields if f.entity.name == "summary"]
    assert planned == fields


def test_mysql_s_replace_is_read_where_no_dialect_is_said() -> None:
    """sqlglot's default dialect refuses ``REPLACE INTO`` (a review): a text that starts a
    statement with it, with no dialect said, is read as MySQL's."""
    assert tables_written("REPLACE INTO crm.summary SELECT * FROM sales.orders", None) == (
        WrittenTable(parts=(("crm", False), ("summary", False)), columns=None),
    )
