"""Seed 001: every statement of a definition is analysed in its one query bucket, holding every
dataset System it uses; a table name several of them hold is reported (``mapper.bucket``)."""

from __future__ import annotations

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import policy, run_event, sql_facet

PG = "postgres://pg:5432"


def test_a_table_name_two_systems_of_the_bucket_hold_is_reported() -> None:
    """Every statement is analysed in the one query bucket holding every dataset System: a
    ``public.orders`` on two PostgreSQL servers may resolve on the other one (a probe of
    upgrades saw the analysis take dbt's server's table for a task's)."""
    other = "postgres://dbt-pg:5432"
    events = [
        run_event(
            "etl.load",
            job_facets=sql_facet("INSERT INTO public.daily SELECT * FROM public.orders"),
            inputs=[builders.dataset("shop.public.orders", PG)],
            outputs=[builders.dataset("shop.public.daily", PG)],
        ),
        run_event(
            "dbt.model",
            run_id="00000000-0000-4000-8000-000000000003",
            inputs=[builders.dataset("dev.public.orders", other)],
            outputs=[builders.dataset("dev.public.stg_orders", other)],
        ),
    ]
    definition = builders.definition(policy("postgres://*", nameTemplate="{host}"))
    gaps = build(events, definition).report.gaps
    assert gaps[GapCode.QLP_AMBIGUOUS_TABLE].examples == [
        "airflow/etl.load: public.orders on dbt-pg, pg"
    ]
    assert GapCode.QLP_AMBIGUOUS_TABLE not in build(events[:1], definition).report.gaps
