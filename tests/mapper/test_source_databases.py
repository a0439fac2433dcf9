"""The database a dataset's own ``dataSource`` facet names is part of its identity.

Great Expectations names a table of the prod and of the dev database of one PostgreSQL server
alike (``postgresql+psycopg2://db`` + ``public.orders``); only each event's ``dataSource`` URI
(``…/prod``, ``…/dev``) tells them apart. Merged by (namespace, name), the latest event's URI named
the database of both: both runs' checks and metrics landed on one entity, under one check code,
whichever database came last (a probe: quality and metrics silently on the wrong database).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold.core import FoldBuilder, fold
from airflow_blindata.mapper.fold.reading import read_events, read_job_events
from airflow_blindata.mapper.identity import (
    NO_READING,
    NameReading,
    entity_name,
    filled_database,
)
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.systems import DATABASE_PROPERTY, NAMESPACE_PROPERTY, KnownSystem
from tests import builders
from tests.builders import assertions_facet, data_source_facet, dataset, metrics_facet, run_event
from tests.mapper.helpers import as_dict

GE = "postgresql+psycopg2://db"
SERVER = "postgres://db:5432"
PER_DATABASE = [
    KnownSystem("pg prod", "u1", ((NAMESPACE_PROPERTY, SERVER), (DATABASE_PROPERTY, "prod"))),
    KnownSystem("pg dev", "u2", ((NAMESPACE_PROPERTY, SERVER), (DATABASE_PROPERTY, "dev"))),
]
NOT_NULL = "expect_column_values_to_not_be_null"


def _validated(database: str, nulls: int, rows: int, second: int, **more: Any) -> dict[str, Any]:
    """A Great Expectations checkpoint validating ``public.orders`` of ``database``."""
    facets = {
        **data_source_facet(f"{GE}/{database}", f"{GE}/{database}"),
        **assertions_facet({"assertion": NOT_NULL, "success": nulls == 0, "column": "id"}),
    }
    table = dataset(
        more.pop("name", "public.orders"),
        GE,
        facets=facets,
        input_facets=metrics_facet(rows, columns={"id": {"nullCount": nulls}}),
    )
    return run_event(
        f"{database}_checkpoint.orders_suite",
        namespace="ge",
        run_id=f"0190b1c2-0000-7000-8000-00000000000{second}",
        time=f"2026-11-29T10:00:0{second}.000Z",
        inputs=[table],
        **more,
    )


def _checks(plan: CatalogPlan) -> dict[str, str]:
    return {check.code: check.entity.system for check in plan.quality.checks}


def _records(plan: CatalogPlan) -> set[tuple[str, str, str | None, float, str]]:
    return {
        (r.entity.system, r.metric, r.field, r.value, r.job.rpartition("|")[2])
        for r in plan.quality.records
    }


@pytest.mark.parametrize("latest", ["dev", "prod"])
def test_tables_of_two_databases_named_alike_are_two_datasets_whatever_came_last(
    latest: str,
) -> None:
    earlier = "prod" if latest == "dev" else "dev"
    seconds = {earlier: 1, latest: 2}
    events = [
        _validated("prod", 0, 1000, seconds["prod"]),
        _validated("dev", 5, 10, seconds["dev"]),
    ]
    plan = build(events, builders.definition(), PER_DATABASE)
    assert _checks(plan) == {
        f"ol:{SERVER}/prod.public.orders:{NOT_NULL}:id": "pg prod",
        f"ol:{SERVER}/dev.public.orders:{NOT_NULL}:id": "pg dev",
    }
    assert _records(plan) == {
        ("pg prod", "nullCount", "id", 0.0, "prod_checkpoint.orders_suite"),
        ("pg prod", "rowCount", None, 1000.0, "prod_checkpoint.orders_suite"),
        ("pg dev", "nullCount", "id", 5.0, "dev_checkpoint.orders_suite"),
        ("pg dev", "rowCount", None, 10.0, "dev_checkpoint.orders_suite"),
    }
    results = {r.check: r.failures for r in plan.quality.results}
    assert results == {
        f"ol:{SERVER}/prod.public.orders:{NOT_NULL}:id": 0,
        f"ol:{SERVER}/dev.public.orders:{NOT_NULL}:id": 1,
    }
    assert GapCode.DATABASES_MERGED not in plan.report.gaps


def test_tables_of_two_databases_named_alike_get_a_system_each_by_the_policy() -> None:
    """With no crawled Systems, a ``{host} {database}`` template makes one per database."""
    job = builders.definition(builders.policy("postgres://*", nameTemplate="{host} {database}"))
    plan = build([_validated("prod", 0, 1000, 1), _validated("dev", 5, 10, 2)], job)
    assert {s.name for s in plan.systems} >= {"db prod", "db dev"}
    assert set(_checks(plan).values()) == {"db prod", "db dev"}
    assert {system for system, *_ in _records(plan)} == {"db prod", "db dev"}


def test_one_run_reading_the_tables_of_two_databases_reads_two_datasets() -> None:
    """Per dataset of one event: a run that validates both tables reads two inputs."""
    prod, dev = _validated("prod", 0, 1000, 1), _validated("dev", 5, 10, 1)
    prod["inputs"] += dev["inputs"]
    folded = fold(read_events([prod], Report()))
    ((run,),) = [job.runs for job in folded.jobs]
    assert [item.key.name for item in run.inputs] == ["dev.public.orders", "prod.public.orders"]


@pytest.mark.parametrize(
    ("name", "facets", "code"),
    [
        # the database in the URI alone: the entity and its metrics where they were
        ("public.orders", data_source_facet("ge", f"{GE}/prod"), "prod.public.orders"),
        # a name that gives its database, a URI of another server, none, or no URI: as sent
        ("prod.public.orders", data_source_facet("ge", f"{GE}/dev"), "prod.public.orders"),
        ("public.orders", data_source_facet("ge", "postgresql+psycopg2://other/dev"), None),
        ("public.orders", data_source_facet("ge", GE), None),
        ("public.orders", {}, None),
    ],
)
def test_a_dataset_of_one_database_lands_where_it_did(
    name: str, facets: dict[str, Any], code: str | None
) -> None:
    table = dataset(
        name,
        GE,
        facets={**facets, **assertions_facet({"assertion": NOT_NULL, "success": True})},
        input_facets=metrics_facet(7),
    )
    job = builders.definition(builders.policy("postgres://*", nameTemplate="{host} {database}"))
    plan = build([run_event("ge.orders", inputs=[table])], job, PER_DATABASE)
    system = "pg prod" if code else "db"
    assert _checks(plan) == {f"ol:{SERVER}/{code or name}:{NOT_NULL}": system}
    assert {record[0] for record in _records(plan)} == {system}


@pytest.mark.parametrize(
    ("name", "uri", "reading"),
    [
        ("public.orders", f"{GE}/prod", NO_READING),
        ("orders", f"{GE}/prod", NO_READING),  # the blank schema is the default one
        ("orders", f"{GE}/prod", NameReading(("database", "schema", "table"), "sales")),
        (" Public . Orders ;", f"{GE}/Prod", NameReading(None, None, "UPPER")),
        ('"Public"."Orders"', f"{GE}/Prod", NameReading(None, None, "LOWER")),
        ("None.orders", f"{GE}/prod", NO_READING),  # Airflow's blank schema
        ("public.orders", f"{GE}/my.db", NameReading(None, None, "UPPER")),
        ("public.orders", f"{GE}/a%22b%5Bc", NO_READING),
        ("public.orders", "redshift+psycopg2://db:5439/dev", NO_READING),
    ],
)
def test_a_name_given_its_source_database_reads_as_the_name_filled_from_it(
    name: str, uri: str, reading: NameReading
) -> None:
    """The fold's name (``name_with_source_database``) is the entity ``filled_database`` makes of
    the name and the URI: nothing but the key changes for a dataset of one database."""
    from airflow_blindata.mapper.identity import name_with_source_database

    namespace = uri.partition("://")[0] + "://" + uri.partition("://")[2].partition("/")[0]
    completed = name_with_source_database(namespace, name, uri)
    assert completed is not None
    filled = filled_database(
        entity_name(namespace, name, reading=reading), namespace, name, reading, source_uri=uri
    )
    assert filled.database is not None
    assert entity_name(namespace, completed, reading=reading) == filled


def _history(latest_names_no_database: bool) -> list[dict[str, Any]]:
    """A run whose START names prod's table by its URI, whose COMPLETE sends the same keys on a
    ``public.orders`` whose URI names no database: another dataset."""
    schema = builders.schema_facet("id")
    start = run_event(
        "ge.orders",
        event_type="START",
        time="2026-11-29T10:00:01.000Z",
        inputs=[dataset("public.orders", GE, facets={**data_source_facet(f"{GE}/prod"), **schema})],
    )
    uri = GE if latest_names_no_database else f"{GE}/dev"
    complete = run_event(
        "ge.orders",
        time="2026-11-29T10:00:02.000Z",
        inputs=[dataset("public.orders", GE, facets={**data_source_facet(uri), **schema})],
    )
    return [start, complete]


@pytest.mark.parametrize("latest_names_no_database", [True, False])
def test_an_event_whose_source_may_name_its_database_is_never_skimmed(
    latest_names_no_database: bool,
) -> None:
    """Skimmed, an event's dataset loses its ``dataSource`` and with it the name the fold keys
    it by: a newer event with the same facet keys on ``public.orders`` decides nothing of it."""
    events = [json.dumps(event) for event in _history(latest_names_no_database)]
    report = Report()
    skimmed, whole = FoldBuilder(), FoldBuilder()
    skimmed.add(read_job_events(events, report))
    whole.add(read_events(events, Report()))
    assert report.counters.get("eventsSkimmed", 0) == 0
    assert as_dict(skimmed.result()) == as_dict(whole.result())
    assert {d.key.name for d in whole.result().datasets} == {
        "prod.public.orders",
        "public.orders" if latest_names_no_database else "dev.public.orders",
    }


def test_a_full_name_sending_a_source_is_still_skimmed() -> None:
    """dbt sends a ``dataSource`` with every dataset, named in full: nothing to complete."""
    events = _history(latest_names_no_database=False)
    for event in events:
        for item in event["inputs"]:
            item["name"] = "prod.public.orders"
    report = Report()
    read_job_events([json.dumps(event) for event in events], report)
    assert report.counters["eventsSkimmed"] == 1


def test_tables_of_two_databases_on_one_system_are_merged_but_never_silently() -> None:
    """A System of the whole server (no ``{database}`` in its template) holds both tables: one
    entity, as the definition asks, reported as ``DATABASES_MERGED`` naming both databases."""
    job = builders.definition(builders.policy("postgres://*", nameTemplate="{host}"))
    plan = build([_validated("prod", 0, 1000, 1), _validated("dev", 5, 10, 2)], job)
    gap = plan.report.gaps[GapCode.DATABASES_MERGED]
    assert gap.examples == [f"{SERVER}: databases dev, prod → db:public.orders"]
    assert set(_checks(plan).values()) == {"db"}
    assert len(_checks(plan)) == 2  # each database's check keeps its own results
