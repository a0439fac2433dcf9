"""Issue 37: events "as Airflow's own providers emit them", generated with the providers'
OpenLineage code where it runs without a live database.

Every SQL hook of Airflow names its datasets the same way: the OpenLineage provider's
``SQLParser`` parses the statement and names each table from the hook's ``DatabaseInfo``
(``get_openlineage_database_info``: scheme, authority, database, whether names are upper case).
``SQLParser.generate_openlineage_metadata_from_sql(..., use_connection=False)`` runs here, offline,
exactly as in a task; only the ``DatabaseInfo`` is written by hand, with the values each hook
gives (its provider package, which needs a live connection to build it, is not installed):

=========== ============================================ ==========================
hook        DatabaseInfo                                 SQLParser dialect
=========== ============================================ ==========================
Snowflake   ``snowflake``, account, database, upper case ``snowflake``
Oracle      ``oracle``, host:1521, service, upper case   ``oracle``
SQL Server  ``mssql``, host:1433, database               ``mssql``
Trino       ``trino``, host:8080, catalog                ``trino``
Databricks  ``databricks``, workspace host, catalog      ``databricks``
PostgreSQL  ``postgres``, host:5432, database            ``postgres``
MySQL       ``mysql``, host:3306, no database            ``mysql``
Teradata    ``teradata``, host:1025, no database         ``teradata``
=========== ============================================ ==========================

What the parser gives is worth seeing: Snowflake's and Oracle's datasets are upper-cased
(``ANALYTICS.SALES.ORDERS``) but the inputs named by their ``columnLineage`` facet are not
(``ANALYTICS.sales.orders``), nor are the columns (``id``): only ``identifierCase: UPPER`` lands
both on the crawled ``SALES.ORDERS`` and its ``ID``. The facet's transformations are empty (not
DIRECT), so the column flows of these jobs are Blindata's analysis of their ``sql`` facet (seed
001, rank 1): the second snapshot finds them analysed.
"""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import DATABASE_PROPERTY, NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from tests import builders
from tests.sync.helpers import (
    ORDERS,
    ORDERS_UP,
    TOTALS,
    TOTALS_UP,
    Tables,
    column_flows,
    crawl,
    objects,
    plan_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.airflow]

SQL = "INSERT INTO mart.order_totals (order_id, total) SELECT id, amount FROM sales.orders"
UPPER = {("SALES", "ORDERS"): ORDERS_UP, ("MART", "ORDER_TOTALS"): TOTALS_UP}
LOWER = {("sales", "orders"): ORDERS, ("mart", "order_totals"): TOTALS}

# (hook, dialect, DatabaseInfo keywords, the System as crawled, its stamps, tables, definition)
HOOKS: list[tuple[str, str, dict[str, Any], str, tuple[str, str | None], Tables, dict[str, Any]]]
HOOKS = [
    (
        "snowflake",
        "snowflake",
        {"authority": "org-acct", "database": "ANALYTICS", "is_uppercase_names": True},
        "Snowflake ANALYTICS",
        ("snowflake://org-acct", "ANALYTICS"),
        UPPER,
        {"nameProfile": "snowflake", "identifierCase": "UPPER"},
    ),
    (
        "oracle",
        "oracle",
        {"authority": "ora.internal:1521", "database": "ORCLPDB1", "is_uppercase_names": True},
        "Oracle ORCLPDB1",
        ("oracle://ora.internal:1521", "ORCLPDB1"),
        UPPER,
        {"nameProfile": "oracle", "identifierCase": "UPPER"},
    ),
    (
        "mssql",
        "mssql",
        {"authority": "sqlsrv.internal:1433", "database": "dwh"},
        "SQL Server dwh",
        ("mssql://sqlsrv.internal:1433", "dwh"),
        LOWER,
        {"nameProfile": "mssql"},
    ),
    (
        "trino",
        "trino",
        {"authority": "trino.internal:8080", "database": "hive"},
        "Trino hive",
        ("trino://trino.internal:8080", "hive"),
        LOWER,
        {"nameProfile": "trino"},
    ),
    (
        "databricks",
        "databricks",
        {"authority": "adb-1234567890.12.azuredatabricks.net", "database": "main"},
        "Databricks main",
        ("databricks://adb-1234567890.12.azuredatabricks.net", "main"),
        LOWER,
        {"nameProfile": "databricks", "identifierCase": "LOWER"},
    ),
    (
        "postgres",
        "postgres",
        {"authority": "pg.internal:5432", "database": "prod"},
        "pg prod",
        ("postgres://pg.internal:5432", "prod"),
        LOWER,
        {},
    ),
    (
        "mysql",
        "mysql",
        {"authority": "mysql.internal:3306"},
        "MySQL server",
        ("mysql://mysql.internal:3306", None),
        LOWER,
        {"nameProfile": "mysql"},
    ),
    (
        "teradata",
        "teradata",
        {"authority": "td.internal:1025"},
        "Teradata",
        ("teradata://td.internal:1025", None),
        LOWER,
        {"nameProfile": "teradata"},
    ),
]


def provider_event(scheme: str, dialect: str, info: dict[str, Any]) -> dict[str, Any]:
    """A COMPLETE event with the inputs, outputs and facets ``SQLParser`` gives for ``SQL``."""
    from airflow.providers.openlineage.sqlparser import DatabaseInfo, SQLParser
    from openlineage.client.serde import Serde

    lineage = SQLParser(dialect=dialect).generate_openlineage_metadata_from_sql(
        sql=SQL,
        hook=None,  # type: ignore[arg-type]  # not used without a connection
        database_info=DatabaseInfo(scheme=scheme, **info),
        use_connection=False,
    )
    return builders.run_event(
        "warehouse_dag.build_order_totals",
        namespace="airflow",
        producer="https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
        inputs=[Serde.to_dict(item) for item in lineage.inputs],
        outputs=[Serde.to_dict(item) for item in lineage.outputs],
        job_facets={
            key: Serde.to_dict(value) | {"dialect": dialect}
            for key, value in lineage.job_facets.items()
        },
    )


@pytest.mark.parametrize(
    ("hook", "dialect", "info", "system", "stamps", "tables", "reading"),
    HOOKS,
    ids=[f"{hook}: the hook's datasets land on the crawled entities" for hook, *_ in HOOKS],
)
def test_what_an_airflow_sql_hook_emits_lands_on_the_crawled_entities(
    client: BlindataClient,
    emulator: Any,
    hook: str,
    dialect: str,
    info: dict[str, Any],
    system: str,
    stamps: tuple[str, str | None],
    tables: Tables,
    reading: dict[str, Any],
) -> None:
    namespace, database = stamps
    properties = [(NAMESPACE_PROPERTY, namespace)]
    if database:
        properties.append((DATABASE_PROPERTY, database))
    crawl(client, system, tables, properties=tuple(properties))
    event = provider_event(hook, dialect, info)
    policies = [{"pattern": namespace, **reading}] if reading else []
    job = builders.definition(*policies)
    crawled = len(objects(emulator, Kind.ENTITY))

    report = snapshot(plan_for(client, [event], job), client, job)

    assert report.status == "success", report.render()
    for code in (
        GapCode.UNMAPPED_NAMESPACE,
        GapCode.TARGET_NOT_CATALOGUED,
        GapCode.DANGLING_FLOW,
        GapCode.DATABASES_MERGED,
    ):
        assert report.gap_count(code) == 0, report.render()
    entities = {e["uuid"]: e for e in objects(emulator, Kind.ENTITY)}
    datasets = [e for e in entities.values() if e.get("tableType") != "OPENLINEAGE_JOB"]
    assert len(datasets) == crawled  # nothing created: both ends are the crawled entities
    source, target = sorted(tables)[1], sorted(tables)[0]  # (sales, orders), (mart, totals)

    def where(end: dict[str, str]) -> tuple[str, str]:
        return entities[end["uuid"]]["schema"], entities[end["uuid"]]["name"]

    table_flows = {
        (where(f["fromPhysicalEntity"]), where(f["toPhysicalEntity"]))
        for f in objects(emulator, Kind.FLOW)
        if not f.get("fromPhysicalField") and f.get("fromPhysicalEntity")
    }
    assert table_flows == {(source, target)}, report.render()

    # the column flows: Blindata's analysis of the job's SQL, done by the next snapshot
    again = snapshot(plan_for(client, [event], job), client, job)

    assert again.gap_count(GapCode.QLP_PENDING) == 0, again.render()
    columns = (("id", "order_id"), ("amount", "total"))
    if tables is UPPER:
        columns = tuple((a.upper(), b.upper()) for a, b in columns)
    expected = {
        (f"{system}:{source[0]}.{source[1]}.{a}", f"{system}:{target[0]}.{target[1]}.{b}")
        for a, b in columns
    }
    assert column_flows(emulator) == expected, again.render()
