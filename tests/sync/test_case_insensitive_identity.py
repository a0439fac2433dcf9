"""Seed 000, "Physical identity first … lineage connects to what you already catalog", on
platforms whose identifiers have no case: a dataset or a column named in another case than the
crawler stored it is the crawled object (its uuid and its spelling), never a new one beside it.

The crawler's tables and columns are created through the client as a crawler would; the events
name them as the producers do: Airflow's SQL Server and MySQL providers name datasets and columns
as the SQL writes them (``dwh.dbo.orders``, ``id``), while the crawler stores the table's own
spelling (``dbo.Orders``, ``Id``); Databricks' Unity Catalog folds tables to lower case and keeps
the case of columns; a Snowflake column created quoted (``"OrderDate"``) is named ``ORDERDATE``
under ``identifierCase: UPPER``.

The matching rules per platform: ``identity.PLATFORM_CASE_MATCHING``, and
docs/configure-the-job.md#warehouses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import DATABASE_PROPERTY, NAMESPACE_PROPERTY, OWNER_PROPERTY
from airflow_blindata.sync import cleanup, snapshot
from tests import builders
from tests.builders import column_lineage_facet, dataset, facet, input_field, run_event
from tests.sync.helpers import (
    History,
    Tables,
    column_flows,
    crawl,
    next_second,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration

MSSQL = "mssql://sqlsrv.internal:1433"
MYSQL = "mysql://mysql.internal:3306"
DATABRICKS = "databricks://adb-1.azuredatabricks.net"
SNOWFLAKE = "snowflake://org-acct"
BIGQUERY = "bigquery"
TRINO = "trino://trino.internal:8080"
POSTGRES = "postgres://warehouse:5432"


@dataclass(frozen=True)
class Case:
    """A crawled System, the job's one event between two of its tables, what lands."""

    sentence: str
    namespace: str
    database: str | None
    tables: Tables
    source: str
    target: str
    columns: dict[str, str]
    """target column → source column, as the column lineage facet names them."""
    flows: set[tuple[str, str]]
    policy: dict[str, Any] = field(default_factory=dict)
    source_schema: dict[str, str] | None = None
    target_schema: dict[str, str] | None = None


SYSTEM = "crawled"

CASES = [
    Case(
        "mssql: a table and its columns named as the SQL writes them are the crawled ones",
        MSSQL,
        "dwh",
        {("dbo", "Orders"): {"Id": "int", "Amount": "money"}, ("mart", "OrderTotals"): {}},
        "dwh.dbo.orders",
        "dwh.mart.ordertotals",
        {"orderid": "id", "total": "amount"},
        {
            (f"{SYSTEM}:dbo.Orders.Id", f"{SYSTEM}:mart.OrderTotals.OrderId"),
            (f"{SYSTEM}:dbo.Orders.Amount", f"{SYSTEM}:mart.OrderTotals.Total"),
        },
        {"nameProfile": "mssql"},
    ),
    Case(
        "mysql: a table of lower_case_table_names=1 named in the SQL's case, columns folded "
        "by identifierCase LOWER, are the crawled ones",
        MYSQL,
        None,
        {("shop", "orders"): {"OrderId": "int", "Amount": "decimal"}, ("shop", "totals"): {}},
        "Shop.Orders",
        "Shop.Totals",
        {"OrderId": "OrderId", "Total": "Amount"},
        {
            (f"{SYSTEM}:shop.orders.OrderId", f"{SYSTEM}:shop.totals.OrderId"),
            (f"{SYSTEM}:shop.orders.Amount", f"{SYSTEM}:shop.totals.Total"),
        },
        {"nameProfile": "mysql", "identifierCase": "LOWER"},
        {"OrderId": "int", "Amount": "decimal"},
        {"OrderId": "int", "Total": "decimal"},
    ),
    Case(
        "databricks: identifierCase LOWER folds the tables, the columns keep the crawler's case",
        DATABRICKS,
        "main",
        {("sales", "orders"): {"OrderId": "bigint", "Amount": "decimal"}, ("mart", "totals"): {}},
        "main.sales.orders",
        "main.mart.totals",
        {"OrderId": "OrderId", "Total": "Amount"},
        {
            (f"{SYSTEM}:sales.orders.OrderId", f"{SYSTEM}:mart.totals.OrderId"),
            (f"{SYSTEM}:sales.orders.Amount", f"{SYSTEM}:mart.totals.Total"),
        },
        {"nameProfile": "databricks", "identifierCase": "LOWER"},
        {"OrderId": "bigint", "Amount": "decimal"},
        {"OrderId": "bigint", "Total": "decimal"},
    ),
    Case(
        "snowflake: a column created quoted is the one identifierCase UPPER names",
        SNOWFLAKE,
        "ANALYTICS",
        {("SALES", "ORDERS"): {"ID": "NUMBER", "OrderDate": "DATE"}, ("MART", "DAILY"): {}},
        "analytics.sales.orders",
        "analytics.mart.daily",
        {"orderdate": "orderdate"},
        {(f"{SYSTEM}:SALES.ORDERS.OrderDate", f"{SYSTEM}:MART.DAILY.OrderDate")},
        {"nameProfile": "snowflake", "identifierCase": "UPPER"},
        {"id": "NUMBER", "orderdate": "DATE"},
        {"orderdate": "DATE"},
    ),
    Case(
        "bigquery: columns have no case, tables keep theirs",
        BIGQUERY,
        "proj",
        {("sales", "orders"): {"OrderId": "INT64"}, ("mart", "totals"): {}},
        "proj.sales.orders",
        "proj.mart.totals",
        {"orderid": "orderid"},
        {(f"{SYSTEM}:sales.orders.OrderId", f"{SYSTEM}:mart.totals.OrderId")},
        {"nameProfile": "bigquery"},
    ),
    Case(
        "trino: every identifier is stored lower case",
        TRINO,
        "hive",
        {("sales", "orders"): {"order_id": "bigint"}, ("mart", "totals"): {}},
        "hive.Sales.Orders",
        "hive.Mart.Totals",
        {"ORDER_ID": "ORDER_ID"},
        {(f"{SYSTEM}:sales.orders.order_id", f"{SYSTEM}:mart.totals.order_id")},
        {"nameProfile": "trino"},
    ),
    Case(
        "identifierCase INSENSITIVE: any platform's names are matched without case",
        POSTGRES,
        "db",
        {("public", "Orders"): {"Id": "int"}, ("public", "Totals"): {}},
        "db.public.orders",
        "db.public.totals",
        {"id": "id"},
        {(f"{SYSTEM}:public.Orders.Id", f"{SYSTEM}:public.Totals.Id")},
        {"nameProfile": "postgres", "identifierCase": "INSENSITIVE"},
    ),
]


def _with_target_columns(case: Case) -> Tables:
    """The crawled tables, the target's columns spelt as the source's (``OrderId``, ``Total``)."""
    tables = dict(case.tables)
    (source, columns), (target, _) = list(tables.items())
    spelt = {name.casefold(): name for name in columns}
    tables[target] = {
        spelt.get(column.casefold(), _crawled_spelling(column)): "int" for column in case.columns
    }
    tables[source] = columns
    return tables


def _crawled_spelling(column: str) -> str:
    """A target column the source lacks, as the crawler of a case-preserving store holds it."""
    return {"orderid": "OrderId", "total": "Total"}.get(column.casefold(), column)


def _event(case: Case, index: int = 0, *, job: str = "load") -> dict[str, Any]:
    lineage = column_lineage_facet(
        {
            target: [input_field(case.source, source, case.namespace)]
            for target, source in case.columns.items()
        }
    )
    target_facets = dict(lineage)
    if case.target_schema:
        target_facets["schema"] = _schema(case.target_schema)
    source_facets = {"schema": _schema(case.source_schema)} if case.source_schema else {}
    return run_event(
        f"{job}.{index}",
        run_id=f"019a1f3c-7b2e-7c41-9d0a-{index:012d}",
        inputs=[dataset(case.source, case.namespace, facets=source_facets)],
        outputs=[dataset(case.target, case.namespace, facets=target_facets)],
    )


def _schema(columns: dict[str, str]) -> dict[str, Any]:
    return facet(
        "SchemaDatasetFacet",
        fields=[{"name": name, "type": kind} for name, kind in columns.items()],
    )


def _crawl(client: BlindataClient, case: Case) -> None:
    stamps = [(NAMESPACE_PROPERTY, case.namespace)]
    if case.database:
        stamps.append((DATABASE_PROPERTY, case.database))
    crawl(client, SYSTEM, _with_target_columns(case), properties=tuple(stamps))


def _catalog(emulator: Any) -> set[tuple[str, ...]]:
    """The tables and columns of the tenant (no job entity), by their stored spelling."""
    entities = {
        e["uuid"]: (e.get("schema") or "", e["name"])
        for e in objects(emulator, Kind.ENTITY)
        if e.get("tableType") != "OPENLINEAGE_JOB"
    }
    fields = {
        (*entities[f["physicalEntity"]["uuid"]], f["name"])
        for f in objects(emulator, Kind.FIELD)
        if f["physicalEntity"]["uuid"] in entities
    }
    return set(entities.values()) | fields


NOT_LANDED = (
    GapCode.TARGET_NOT_CATALOGUED,
    GapCode.FIELD_NOT_CATALOGUED,
    GapCode.DANGLING_FLOW,
    GapCode.CASE_AMBIGUOUS,
)


@pytest.mark.parametrize("case", CASES, ids=[case.sentence for case in CASES])
def test_a_name_in_another_case_lands_on_the_crawled_object_and_creates_nothing(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    _crawl(client, case)
    crawled = _catalog(emulator)
    job = builders.definition({"pattern": case.namespace.split(":")[0] + "*", **case.policy})
    events = [_event(case)]

    first = snapshot(plan_for(client, events, job), client, job)
    second = snapshot(plan_for(client, events, job), client, job)

    for report in (first, second):
        assert report.status == "success", report.render()
        for code in NOT_LANDED:
            assert report.gap_count(code) == 0, report.render()
    assert _catalog(emulator) == crawled  # nothing beside the crawler's, nothing renamed
    assert column_flows(emulator) == case.flows, first.render()
    assert second.counters.get("entitiesCreated", 0) == 0
    assert second.counters.get("fieldsCreated", 0) == 0
    assert second.counters.get("flowsCreated", 0) == 0, second.render()
    for entity in objects(emulator, Kind.ENTITY):  # a crawled object never gets the owner stamp
        if entity.get("tableType") != "OPENLINEAGE_JOB":
            names = {p["name"] for p in entity.get("additionalProperties") or ()}
            assert OWNER_PROPERTY not in names


def test_names_are_matched_exactly_where_the_platform_has_case(
    client: BlindataClient, emulator: Any
) -> None:
    """PostgreSQL declares nothing: a quoted ``"Orders"`` is not ``orders``; no guess."""
    case = CASES[-1]
    _crawl(client, case)
    job = builders.definition({"pattern": "postgres://*", "nameProfile": "postgres"})

    report = snapshot(plan_for(client, [_event(case)], job), client, job)

    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 2, report.render()
    assert column_flows(emulator) == set()


def test_two_stored_case_variants_none_exact_are_ambiguous_and_nothing_is_created(
    client: BlindataClient, emulator: Any
) -> None:
    """Two crawled tables ``dbo.Orders`` and ``dbo.ORDERS`` (a case-sensitive collation), the
    SQL's ``dbo.orders``: neither is chosen, and no third is created though the policy allows
    creating entities; two columns ``Id`` and ``ID`` of the target, the SQL's ``id``: neither."""
    tables: Tables = {
        ("dbo", "Orders"): {"Id": "int"},
        ("dbo", "ORDERS"): {"ID": "int"},
        ("mart", "Totals"): {"Id": "int", "ID": "int"},
    }
    crawl(client, SYSTEM, tables, properties=((NAMESPACE_PROPERTY, MSSQL),))
    crawled = _catalog(emulator)
    job = builders.definition(
        {"pattern": "mssql://*", "nameProfile": "mssql", "entityCreation": True}
    )
    case = Case("", MSSQL, None, {}, "dwh.dbo.orders", "dwh.mart.totals", {"id": "Id"}, set())

    report = snapshot(plan_for(client, [_event(case)], job), client, job)

    assert report.status == "success", report.render()
    # the source table, and the target's column: neither chosen
    assert report.gap_count(GapCode.CASE_AMBIGUOUS) == 2, report.render()
    assert _catalog(emulator) == crawled
    assert column_flows(emulator) == set()

    into_columns = Case(
        "", MSSQL, None, {}, "dwh.dbo.Orders", "dwh.mart.totals", {"id": "Id"}, set()
    )
    report = snapshot(plan_for(client, [_event(into_columns)], job), client, job)

    assert report.gap_count(GapCode.CASE_AMBIGUOUS) == 1, report.render()
    assert report.gap_count(GapCode.FIELD_NOT_CATALOGUED) == 1, report.render()
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 0, report.render()
    assert _catalog(emulator) == crawled
    assert column_flows(emulator) == set()


def test_cleanup_never_removes_the_crawled_objects_lineage_adopted(
    client: BlindataClient, emulator: Any, no_margin: None
) -> None:
    """The adopted table and columns are the crawler's: when the job no longer describes them,
    its flows go and they stay, and nothing it could have created beside them is left."""
    case = CASES[0]
    _crawl(client, case)
    crawl(client, "other", {("dbo", "Other"): {"x": "int"}}, properties=())
    crawled = _catalog(emulator)
    job = builders.definition({"pattern": "mssql://*", "nameProfile": "mssql"})
    history = History()
    history.add(snapshot(plan_for(client, [_event(case)], job), client, job))
    assert column_flows(emulator) == case.flows
    history.add(cleanup(job, client, history))
    next_second(emulator)
    other = Case("", MSSQL, None, {}, "dwh.dbo.orders", "dwh.dbo.orders", {}, set())

    history.add(snapshot(plan_for(client, [_event(other, 1, job="other")], job), client, job))
    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert _catalog(emulator) == crawled
    assert column_flows(emulator) == set()


def test_an_entity_the_job_created_in_another_case_is_refreshed_not_doubled(
    client: BlindataClient, emulator: Any, no_margin: None
) -> None:
    """An older release created ``dbo.orders`` with ``id`` on a System the job owns; the events
    now name ``dbo.Orders`` with ``Id``: the job's own entity and field are refreshed in their
    stored spelling, still its own, and cleanup keeps them."""
    job = builders.definition(builders.policy("mssql://*", nameProfile="mssql"))
    history = History()
    older = Case(
        "",
        MSSQL,
        None,
        {},
        "dwh.dbo.orders",
        "dwh.dbo.totals",
        {"id": "id"},
        set(),
        source_schema={"id": "int"},
        target_schema={"id": "int"},
    )
    history.add(snapshot(plan_for(client, [_event(older)], job), client, job))
    created = _catalog(emulator)
    assert ("dbo", "orders", "id") in created
    next_second(emulator)
    newer = Case(
        "",
        MSSQL,
        None,
        {},
        "dwh.dbo.Orders",
        "dwh.dbo.Totals",
        {"Id": "Id"},
        set(),
        source_schema={"Id": "int"},
        target_schema={"Id": "int"},
    )

    report = history.add(snapshot(plan_for(client, [_event(newer)], job), client, job))
    removal = history.add(cleanup(job, client, history))

    assert report.status == removal.status == "success", report.render() + removal.render()
    assert _catalog(emulator) == created
    assert report.counters.get("entitiesCreated", 0) == 0
    assert report.counters.get("fieldsCreated", 0) == 0
    assert not removal.removed.get("entity") and not removal.removed.get("field"), removal.render()
    system = MSSQL  # the System the policy created is named after the namespace
    assert column_flows(emulator) == {(f"{system}:dbo.orders.id", f"{system}:dbo.totals.id")}
    owners = [
        {p["name"] for p in e.get("additionalProperties") or ()}
        for e in objects(emulator, Kind.ENTITY)
        if e.get("tableType") != "OPENLINEAGE_JOB"
    ]
    assert all(OWNER_PROPERTY in names for names in owners)


def test_a_profiling_record_names_the_field_as_it_is_stored(
    client: BlindataClient, emulator: Any
) -> None:
    """A metric of column ``amount`` of the crawled ``dbo.Orders``: recorded on ``Amount``."""
    crawl(
        client,
        SYSTEM,
        {("dbo", "Orders"): {"Id": "int", "Amount": "money"}},
        properties=((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "dwh")),
    )
    job = builders.definition({"pattern": "mssql://*", "nameProfile": "mssql"})
    metrics = {"rowCount": 3, "columnMetrics": {"amount": {"nullCount": 0}}}
    event = run_event(
        "profile.orders",
        inputs=[
            dataset("dwh.dbo.orders", MSSQL, input_facets={"dataQualityMetrics": dict(metrics)})
        ],
    )

    report = snapshot(plan_for(client, [event], job), client, job)

    assert report.status == "success", report.render()
    records = objects(emulator, Kind.RECORD)
    fields = {r.get("physicalFieldName") for r in records}
    assert "Amount" in fields and "amount" not in fields, (fields, report.render())
