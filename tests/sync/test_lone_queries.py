"""A job whose SQL is one query that writes nothing (dbt's compiled model) is analysed as the
write of its one table. Seed 001: "Column flows come only from analyzed SQL or declared field
lineage"; dbt-ol sends a model's compiled ``SELECT`` as its ``sql`` facet and no
``columnLineage``, and a ``SELECT`` alone has no target: its analysis derived no column flow,
and every dbt model lost its column lineage (found by a probe of other producers' events)."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.build import build
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.statements import _text_to_analyse, _written_tables
from tests.builders import (
    dataset,
    definition,
    job_type_facet,
    policy,
    run_event,
    schema_facet,
)
from tests.sync.helpers import definition as sync_definition
from tests.sync.helpers import objects, plan_for

PG = "postgres://warehouse:5432"


def model(
    query: str,
    *,
    outputs: list[Any] | None = None,
    dialect: str = "postgres",
    integration: str = "DBT",
) -> Any:
    """A dbt model's run as dbt-ol sends it: the compiled ``SELECT``, no column lineage, its
    ``jobType`` facet's integration ``DBT``."""
    return run_event(
        "jaffle.model.jaffle.stg_orders",
        namespace="dbt",
        inputs=[dataset("dwh.raw.orders", PG, facets=schema_facet("id", "amount"))],
        outputs=outputs
        if outputs is not None
        else [dataset("dwh.mart.stg_orders", PG, facets=schema_facet("id", "total"))],
        job_facets={
            "sql": {"query": query, "dialect": dialect},
            **job_type_facet("MODEL", integration),
        },
    )


def analysed(event: Any) -> str:
    job = definition(
        policy("postgres://*", nameTemplate="{host}"),
        policy("s3://*"),
        policy("mssql://*", nameTemplate="{host}", nameProfile="mssql"),
    )
    plan = build([event], job)
    (routine,) = plan.routines
    return _text_to_analyse(routine, _written_tables(plan).get(routine.job))


@pytest.mark.parametrize(
    ("query", "outputs", "expected"),
    [
        # dbt's model: the table it makes of its SELECT
        (
            "select id, amount as total from raw.orders",
            None,
            "CREATE TABLE mart.stg_orders AS\nselect id, amount as total from raw.orders",
        ),
        (
            "with o as (select * from raw.orders) select id, amount as total from o;",
            None,
            "CREATE TABLE mart.stg_orders AS\n"
            "with o as (select * from raw.orders) select id, amount as total from o",
        ),
        # a statement that writes is analysed as written
        (
            "insert into mart.stg_orders select id, amount from raw.orders",
            None,
            "insert into mart.stg_orders select id, amount from raw.orders",
        ),
        # a SELECT whose result lands in another store (a transfer to a file): no SQL write
        (
            "select id, amount from raw.orders",
            [dataset("exports/orders.csv", "s3://bucket")],
            "select id, amount from raw.orders",
        ),
        # two tables written: which one the SELECT fills is not known
        (
            "select id, amount from raw.orders",
            [dataset("dwh.mart.a", PG), dataset("dwh.mart.b", PG)],
            "select id, amount from raw.orders",
        ),
        # two statements: a script, analysed as written
        (
            "select 1; select id from raw.orders",
            None,
            "select 1; select id from raw.orders",
        ),
    ],
)
def test_a_lone_query_is_analysed_as_the_write_of_the_jobs_one_table(
    query: str, outputs: list[Any] | None, expected: str
) -> None:
    assert analysed(model(query, outputs=outputs)) == expected


@pytest.mark.parametrize(
    "query",
    [
        "select id, amount as total from raw.orders;\n-- end of model",
        "select id, amount as total from raw.orders; /* done */",
    ],
)
def test_a_lone_query_ended_by_a_semicolon_and_a_comment_is_one_query(query: str) -> None:
    """sqlglot reads the ``;`` before a comment as a statement of its own (a review)."""
    assert analysed(model(query)).startswith("CREATE TABLE mart.stg_orders AS\n")


@pytest.mark.parametrize(
    "dbt",
    [
        # Cosmos runs dbt in an Airflow task: Airflow's provider sends integration AIRFLOW
        {"airflow": {"task": {"operator_class": "DbtRunLocalOperator"}}},
        # dbt's own run facet, carried through
        {"dbt_version": {"version": "1.8.2"}},
    ],
    ids=["cosmos-operator", "dbt-run-facet"],
)
def test_a_dbt_model_run_by_airflow_is_a_dbt_job(dbt: dict[str, Any]) -> None:
    """A review: Cosmos' models lost the write, their jobType's integration being AIRFLOW."""
    query = "select id, amount as total from raw.orders"
    event = model(query, integration="AIRFLOW")
    event["run"]["facets"] = {**event["run"].get("facets", {}), **dbt}
    assert analysed(event).startswith("CREATE TABLE mart.stg_orders AS\n")


def test_another_producers_lone_query_is_analysed_as_it_ran() -> None:
    """Seed 001: column flows "only from analyzed SQL": a Python task that runs a ``SELECT``
    and writes its result itself did not run ``CREATE TABLE … AS`` (a review: the analysis
    asked to catalogue fields the table never has)."""
    query = "select id, amount as total from raw.orders"
    assert analysed(model(query, integration="AIRFLOW")) == query


def test_a_lone_query_names_its_table_as_the_dialect_reads_it() -> None:
    """Quoted where the dialect would fold the name's case; T-SQL has no ``CREATE TABLE … AS``."""
    event = model(
        "select id from raw.orders",
        outputs=[dataset("dwh.Mart.stg orders", PG)],
    )
    assert analysed(event).startswith('CREATE TABLE "Mart"."stg orders" AS\n')
    tsql = model(
        "select id from raw.orders",
        outputs=[dataset("dwh.mart.stg_orders", "mssql://db:1433")],
        dialect="tsql",
    )
    tsql["inputs"] = [dataset("dwh.raw.orders", "mssql://db:1433")]
    assert analysed(tsql).startswith("CREATE VIEW mart.stg_orders AS\n")


def analysed_column_pairs(emulator: Any, statement: str) -> set[tuple[str, str]]:
    """The (source, target) field names of the column flows the analysis of ``statement`` made."""
    fields = {f["uuid"]: f["name"] for f in objects(emulator, Kind.FIELD)}
    return {
        (fields[flow["fromPhysicalField"]["uuid"]], fields[flow["toPhysicalField"]["uuid"]])
        for flow in objects(emulator, Kind.FLOW)
        if (flow.get("queryStatement") or {}).get("uuid") == statement
        and flow.get("fromPhysicalField")
    }


@pytest.mark.integration
def test_a_dbt_models_select_gives_its_column_flows(emulator: Any, client: BlindataClient) -> None:
    """Seed 001: column flows "from analyzed SQL" — the model's SELECT, analysed as the write of
    its table, gives a column flow per traced column."""
    event = model("select id, amount as total from raw.orders")
    job = sync_definition()
    snapshot(plan_for(client, [event], job), client, job)
    report = snapshot(plan_for(client, [event], job), client, job)  # analysed by now
    assert report.counters["statementsAnalyzed"] == 1, report.render()
    (statement,) = objects(emulator, Kind.STATEMENT)
    assert statement["queryText"].startswith("CREATE TABLE mart.stg_orders AS\n")
    pairs = analysed_column_pairs(emulator, statement["uuid"])
    assert pairs == {("id", "id"), ("amount", "total")}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # dbt-ol 1.5x sends each statement of a model as a job of its own (``model.x.sql.2``)
        (
            'create view "db"."public"."stg_orders__dbt_tmp" as (select id from raw.orders)',
            'create view "db"."public"."stg_orders" as (select id from raw.orders)',
        ),
        (
            "create temporary table stg_orders__dbt_tmp as select id from raw.orders",
            "create temporary table stg_orders as select id from raw.orders",
        ),
        # dbt-postgres adds the run's time to an incremental model's temporary table
        (
            'create temporary table "stg_orders__dbt_tmp101512345678" as (select id from raw.o)',
            'create temporary table "stg_orders" as (select id from raw.o)',
        ),
        # the statement that reads the temporary relation, and any other text, as written
        (
            "insert into stg_orders (id) select id from stg_orders__dbt_tmp",
            "insert into stg_orders (id) select id from stg_orders__dbt_tmp",
        ),
        (
            "create table stg_orders__dbt_tmpx as select 1 as id",
            "create table stg_orders__dbt_tmpx as select 1 as id",
        ),
    ],
)
def test_the_relation_dbt_makes_under_a_temporary_name_is_analysed_as_its_model(
    query: str, expected: str
) -> None:
    event = run_event(
        "jaffle.model.jaffle.stg_orders.sql.2",
        namespace="dbt",
        job_facets={"sql": {"query": query}},
    )
    assert analysed(event) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # dbt seeds a table through psycopg2: DB-API's parameters, which no SQL parser reads
        (
            "insert into raw.customers (id, name) values (%s,%s),(%s,%s)",
            "insert into raw.customers (id, name) values (?,?),(?,?)",
        ),
        ("update t set a = %(a)s where id = %(id)s", "update t set a = ? where id = ?"),
        # a % in a literal, or a modulo, is no parameter
        (
            "insert into t select a % b from s where c like '%s%'",
            "insert into t select a % b from s where c like '%s%'",
        ),
    ],
)
def test_a_drivers_parameters_are_analysed_as_a_prepared_statements(
    query: str, expected: str
) -> None:
    """Found on the shared dbt fixtures: every seed's analysis failed (``QLP_ANALYSIS_ERROR``,
    "Required keyword: 'this' missing for Mod")."""
    event = run_event("jaffle.seed.raw_customers.sql.3", job_facets={"sql": {"query": query}})
    assert analysed(event) == expected


@pytest.mark.parametrize("name", ["a\\", "a\\1", "a\\g<0>", "a\\n"])
def test_a_temporary_name_with_a_backslash_is_renamed_as_written(name: str) -> None:
    """The final name was a replacement template: ``\\`` in it raised out of the snapshot, every
    later statement unsent, or changed the text (a probe of the new code)."""
    from airflow_blindata.mapper.sql import with_final_names

    sql = f'create table "{name}__dbt_tmp" as select 1'
    assert with_final_names(sql, "postgres") == f'create table "{name}" as select 1'


def test_a_deeply_nested_query_is_not_parsed_again_for_its_shape() -> None:
    """Some dialects parse deep nesting in quadratic time (1,000 levels: 17 s, a probe)."""
    from airflow_blindata.mapper.sql import as_written_into

    query = "SELECT * FROM " + "(SELECT * FROM " * 100 + "t" + ") a" * 100
    assert as_written_into(query, "redshift", ("mart", "t")) is None


SF = "snowflake://acme"
ONE_SYSTEM_PER_DATABASE = definition(
    policy("snowflake://*", nameTemplate="SF {database}", nameProfile="snowflake"),
    policy("postgres://*", nameTemplate="{host} {database}"),
    policy("s3://*"),
)


def dbt_model(source: Any, target: Any) -> Any:
    """A dbt model reading ``source`` into ``target``, as dbt-ol sends it."""
    return run_event(
        "analytics.model.shop.orders_summary",
        namespace="dbt",
        inputs=[source],
        outputs=[target],
        job_facets={
            "sql": {"query": "select id as order_id from raw.shop.orders", "dialect": "snowflake"},
            **job_type_facet("MODEL", "DBT"),
        },
    )


@pytest.mark.parametrize(
    ("source", "target", "written"),
    [
        # two databases of one Snowflake account, a System each: one store
        (
            dataset("RAW.SHOP.ORDERS", SF),
            dataset("ANALYTICS.MART.ORDERS_SUMMARY", SF),
            True,
        ),
        # the account spelt two ways (its default region): one store
        (
            dataset("RAW.SHOP.ORDERS", SF),
            dataset("ANALYTICS.MART.ORDERS_SUMMARY", "snowflake://ACME.us-west-1.aws"),
            True,
        ),
        # two databases of one PostgreSQL server, a System each: one store
        (
            dataset("raw.shop.orders", PG),
            dataset("analytics.mart.orders_summary", PG),
            True,
        ),
        # another account, or a file: another store, a transfer
        (
            dataset("RAW.SHOP.ORDERS", SF),
            dataset("ANALYTICS.MART.ORDERS_SUMMARY", "snowflake://other"),
            False,
        ),
        (dataset("RAW.SHOP.ORDERS", SF), dataset("exports/orders.csv", "s3://bucket"), False),
    ],
    ids=["snowflake-databases", "snowflake-spellings", "postgres-databases", "account", "file"],
)
def test_a_dbt_model_writing_another_database_of_the_store_it_reads_writes_its_table(
    source: Any, target: Any, written: bool
) -> None:
    """A probe of SQL routines: with one System per database, a model reading ``RAW`` and
    writing ``ANALYTICS`` (dbt's usual layout) wrote "in a System it does not read", was sent
    as a lone ``SELECT`` and its analysis gave no column flow. A store is the server."""
    plan = build([dbt_model(source, target)], ONE_SYSTEM_PER_DATABASE)
    assert len({entity.key.system for entity in plan.entities}) == 3  # job, source, target
    (routine,) = plan.routines
    text = _text_to_analyse(routine, _written_tables(plan).get(routine.job))
    assert text.startswith("CREATE TABLE ") == written, text


@pytest.mark.integration
def test_a_dbt_model_writing_another_snowflake_database_gives_its_column_flows(
    emulator: Any, client: BlindataClient
) -> None:
    event = dbt_model(
        dataset("RAW.SHOP.ORDERS", SF, facets=schema_facet("ID")),
        dataset("ANALYTICS.MART.ORDERS_SUMMARY", SF, facets=schema_facet("ORDER_ID")),
    )
    event["job"]["facets"]["sql"]["query"] = "select id as order_id from RAW.SHOP.ORDERS"
    job = sync_definition(
        systemPolicies=[
            policy(
                "snowflake://*",
                nameTemplate="SF {database}",
                nameProfile="snowflake",
                identifierCase="UPPER",
            )
        ]
    )
    snapshot(plan_for(client, [event], job), client, job)
    report = snapshot(plan_for(client, [event], job), client, job)  # analysed by now
    assert report.counters["statementsAnalyzed"] == 1, report.render()
    (statement,) = objects(emulator, Kind.STATEMENT)
    assert statement["queryText"].startswith("CREATE TABLE MART.ORDERS_SUMMARY AS\n")
    pairs = analysed_column_pairs(emulator, statement["uuid"])
    assert pairs == {("ID", "ORDER_ID")}
