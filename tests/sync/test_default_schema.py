"""The default schema a statement is analysed with (``sync.statements._default_schemas``): where
its producer resolved its unqualified names. Pure: plans of events, no Blindata."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.sync.statements import _default_schemas
from tests.builders import dataset, definition, policy, run_event


def _job(query: str, dialect: str, namespace: str, reads: list[str], writes: str) -> Any:
    event = run_event(
        "etl.load",
        inputs=[dataset(name, namespace) for name in reads],
        outputs=[dataset(writes, namespace)],
        job_facets={"sql": {"query": query, "dialect": dialect}},
    )
    job = definition(
        policy("postgres://*", nameTemplate="{host}"),
        policy("bigquery", nameProfile="bigquery"),
    )
    return build([event], job)


@pytest.mark.parametrize(
    ("query", "dialect", "namespace", "reads", "writes", "schema"),
    [
        # Airflow's SQL operators resolve a bare name with the connection's current schema
        (
            "INSERT INTO mart.daily SELECT * FROM orders",
            "postgres",
            "postgres://db:5432",
            ["dwh.public.orders"],
            "dwh.mart.daily",
            "public",
        ),
        # everything qualified: where the statement writes, as before
        (
            "INSERT INTO mart.daily SELECT * FROM public.orders",
            "postgres",
            "postgres://db:5432",
            ["dwh.public.orders"],
            "dwh.mart.daily",
            "mart",
        ),
        # a literal spelt as a table is no use of the table
        (
            "INSERT INTO mart.daily SELECT * FROM public.orders WHERE kind = 'orders'",
            "postgres",
            "postgres://db:5432",
            ["dwh.public.orders"],
            "dwh.mart.daily",
            "mart",
        ),
        # BigQuery quotes a whole path; an alias spelt as its table is no bare use of it
        (
            "INSERT INTO daily SELECT * FROM `proj.sales.orders` AS orders",
            "bigquery",
            "bigquery",
            ["proj.sales.orders"],
            "proj.mart.daily",
            "mart",
        ),
    ],
)
def test_a_statement_is_analysed_where_its_producer_resolved_its_names(
    query: str, dialect: str, namespace: str, reads: list[str], writes: str, schema: str
) -> None:
    plan = _job(query, dialect, namespace, reads, writes)
    assert _default_schemas(plan) == {"ol:airflow|etl.load": schema}


def test_a_statement_whose_run_names_no_output_is_analysed_where_it_read_its_bare_names() -> None:
    """Found with real Airflow (MySQL provider against MariaDB, a probe): ``INSERT INTO
    dwh.orders … SELECT … FROM orders`` on a connection to ``shop`` is sent with both tables as
    inputs and no output; the statement went to Blindata's analysis with no default schema,
    which could not resolve ``orders``: no lineage at all. The run's own tables say where
    ``orders`` is, and the table its SQL writes is its output (``mapper.sql_outputs``)."""
    event = run_event(
        "etl.copy",
        inputs=[dataset(name, "mysql://db:3306") for name in ("dwh.orders", "shop.orders")],
        outputs=[],
        job_facets={
            "sql": {
                "query": "INSERT INTO dwh.orders (id) SELECT o.id FROM orders AS o",
                "dialect": "mysql",
            }
        },
    )
    plan = build([event], definition(policy("mysql://*", nameProfile="mysql")))
    assert [flow.name for flow in plan.flows if flow.kind != "orchestration"] == [
        "shop.orders -> dwh.orders @airflow/etl.copy"
    ]
    assert _default_schemas(plan) == {"ol:airflow|etl.copy": "shop"}
