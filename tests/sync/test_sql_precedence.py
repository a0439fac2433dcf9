"""Seed 001 precedence across runs: a SQL job's column flows stand until Blindata has analysed
its SQL, then Blindata's own flows win; the table flow stays either way."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from blindata_emulator import Kind, running_emulator

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient
from airflow_blindata.blindata.models import QueryBucket
from airflow_blindata.sync import RunReport, cleanup, snapshot
from tests.helpers import API_KEY, TENANT, USER, emulator_settings
from tests.sync.helpers import FAST_RETRY, History, client_of, definition, objects, plan_for

pytestmark = pytest.mark.integration

PG = "postgres://warehouse:5432"


def sql_job_event() -> dict[str, Any]:
    column_lineage = {
        "fields": {
            "total": {
                "inputFields": [
                    {
                        "namespace": PG,
                        "name": "dwh.sales.orders",
                        "field": "amount",
                        "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}],
                    }
                ]
            }
        }
    }
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": "https://example.com/producer",
        "run": {"runId": "0190b1c2-0000-7000-8000-000000000001", "facets": {}},
        "job": {
            "namespace": "airflow",
            "name": "etl.totals",
            "facets": {
                "sql": {
                    "query": "INSERT INTO sales.totals (total) SELECT SUM(amount) FROM sales.orders",  # noqa: E501
                    "dialect": "postgres",
                }
            },
        },
        "inputs": [
            {
                "namespace": PG,
                "name": "dwh.sales.orders",
                "facets": {"schema": {"fields": [{"name": "amount", "type": "numeric"}]}},
            }
        ],
        "outputs": [
            {
                "namespace": PG,
                "name": "dwh.sales.totals",
                "facets": {
                    "schema": {"fields": [{"name": "total", "type": "numeric"}]},
                    "columnLineage": column_lineage,
                },
            }
        ],
    }


def ours(emulator: Any) -> list[dict[str, Any]]:
    return [f for f in objects(emulator, Kind.FLOW) if (f.get("scope") or "").startswith("ol:")]


def test_column_flows_stand_until_the_analysis_then_blindatas_flows_win(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    first = snapshot(plan_for(client, [sql_job_event()], job), client, job)
    assert first.gaps["QLP_PENDING"].count == 1
    before = {bool(f.get("fromPhysicalField")): f["modificationDate"] for f in ours(emulator)}
    assert set(before) == {False, True}  # the table flow and the columnLineage column flow

    second = snapshot(plan_for(client, [sql_job_event()], job), client, job)  # analysed by now
    assert "QLP_PENDING" not in second.gaps
    assert second.counters["columnFlowsSupersededByAnalysis"] == 1
    analysed = [f for f in objects(emulator, Kind.FLOW) if f.get("queryStatement")]
    assert any(f.get("fromPhysicalField") for f in analysed)  # Blindata's own column flow
    after = {bool(f.get("fromPhysicalField")): f["modificationDate"] for f in ours(emulator)}
    assert after[False] > before[False]  # the table flow is refreshed: it always stays
    assert after[True] == before[True]  # the column flow is no longer described


def test_a_bucket_that_cannot_grow_is_reported_not_a_failure() -> None:
    """The contract's query buckets are listed and created, never updated: on a Blindata that
    serves no ``PUT buckets/{uuid}``, a dataset System missing from the bucket is counted
    (``bucketSystemsNotAdded``) and named in a gap, whose hint says to add it by hand (the SQL
    is analysed without its tables: a strict server of the contract showed the report
    "success" with the counter alone), and the snapshot still succeeds."""
    moved = {"/api/v1/queryparser/buckets/{uuid}": "/api/v1/not-in-the-contract/{uuid}"}
    job = definition()
    with (
        running_emulator(replace(emulator_settings(), moved_paths=moved)) as served,
        BlindataClient(
            served.base_url,
            credentials=ApiKeyCredentials(USER, API_KEY),
            tenant=TENANT,
            retry=FAST_RETRY,
        ) as client,
    ):
        client.api.query_buckets.create(QueryBucket(name=job.query_bucket_name, systems=[]))
        report = snapshot(plan_for(client, [sql_job_event()], job), client, job)
    assert report.status == "success", report.render()
    assert report.counters["bucketSystemsNotAdded"] == 1
    (example,) = report.gaps["QLP_BUCKET_INCOMPLETE"].examples
    assert example.startswith(f"{job.query_bucket_name}: ")
    assert report.gaps["QLP_PENDING"].count == 1  # the statement is analysed all the same


def test_a_bucket_this_user_may_not_grow_is_reported_not_a_failure(
    client: BlindataClient, emulator: Any
) -> None:
    """A tenant that refuses the bucket's update to this user (403): as a Blindata without the
    update, the Systems are named in ``QLP_BUCKET_INCOMPLETE``; it was a failure at every run."""
    job = definition()
    client.api.query_buckets.create(QueryBucket(name=job.query_bucket_name, systems=[]))
    emulator.emulator.faults.fail_next(10**6, status=403, path=r"/buckets/[^/*]+$", method="PUT")
    report = snapshot(plan_for(client, [sql_job_event()], job), client, job)
    emulator.emulator.faults.clear()
    assert report.status == "success", report.render()
    assert report.counters["bucketSystemsNotAdded"] == 1
    (example,) = report.gaps["QLP_BUCKET_INCOMPLETE"].examples
    assert "this user may not update it" in example


# -- seed 001 per output and per field: an analysis that proves no column pair supersedes none --

ORDERS = "dwh.sales.orders"
COLUMNS = ("id", "amount", "region")
IDENTITY = {"type": "DIRECT", "subtype": "IDENTITY"}
SNAPSHOT_GAP = 5.0
"""Seconds the emulator's clock is advanced between two runs: each run's watermark is then past
everything the runs before it wrote, with no wait for the wall clock."""


def _schema(*names: str) -> dict[str, Any]:
    return {"schema": {"fields": [{"name": name, "type": "text"} for name in names]}}


def _orders() -> dict[str, Any]:
    return {"namespace": PG, "name": ORDERS, "facets": _schema(*COLUMNS)}


def _column_lineage(pairs: dict[str, str], subtype: str = "IDENTITY") -> dict[str, Any]:
    """``columnLineage`` of an output: target field ← the orders field, DIRECT."""
    return {
        "fields": {
            target: {
                "inputFields": [
                    {
                        "namespace": PG,
                        "name": ORDERS,
                        "field": source,
                        "transformations": [{"type": "DIRECT", "subtype": subtype}],
                    }
                ]
            }
            for target, source in pairs.items()
        }
    }


def _sql_job(
    name: str,
    query: str,
    output: str,
    *,
    column_lineage: dict[str, Any] | None = None,
    declared: dict[str, str] | None = None,
    fields: tuple[str, ...] = COLUMNS,
) -> dict[str, Any]:
    """A completed run of a SQL job reading the orders into ``output``, with the producer's
    column lineage in the output's ``columnLineage`` facet or the job's ``lineage`` facet."""
    job_facets: dict[str, Any] = {"sql": {"query": query, "dialect": "postgres"}}
    if declared is not None:
        entry = {
            "namespace": PG,
            "name": output,
            "type": "DATASET",
            "inputs": [{"namespace": PG, "name": ORDERS, "type": "DATASET"}],
            "fields": {
                target: {
                    "inputs": [
                        {
                            "namespace": PG,
                            "name": ORDERS,
                            "type": "DATASET",
                            "field": source,
                            "transformations": [IDENTITY],
                        }
                    ]
                }
                for target, source in declared.items()
            },
        }
        job_facets["lineage"] = {"entries": [entry]}
    output_facets = _schema(*fields)
    if column_lineage is not None:
        output_facets["columnLineage"] = column_lineage
    event = sql_job_event()
    event["job"] = {"namespace": "airflow", "name": name, "facets": job_facets}
    event["inputs"] = [_orders()]
    event["outputs"] = [{"namespace": PG, "name": output, "facets": output_facets}]
    return event


SELECT_STAR = _sql_job(
    "etl.copy_orders",
    "INSERT INTO sales.orders_copy SELECT * FROM sales.orders",
    "dwh.sales.orders_copy",
    column_lineage=_column_lineage({c: c for c in COLUMNS}),
)
"""Kept at table level by the parser: ANALYZED, with no column flow."""
CALL = _sql_job(
    "etl.refresh_summary",
    "CALL sales.refresh_summary()",
    "dwh.sales.summary",
    declared={c: c for c in COLUMNS},
)
"""Not a statement the parser reads: ANALYZED, with no flow at all."""
INSERT_SELECT = _sql_job(
    "etl.load_archive",
    "INSERT INTO sales.archive (id, amount, region) SELECT id, amount, region FROM sales.orders",
    "dwh.sales.archive",
    column_lineage=_column_lineage({c: c for c in COLUMNS}),
)
"""Column flows for every field from an analysis that derives them."""


def _column_flows(emulator: Any) -> dict[tuple[str, str], str]:
    """The producer's column flows in Blindata: (scope, name) → last update."""
    return {
        (f["scope"], f["name"]): f["modificationDate"]
        for f in ours(emulator)
        if f.get("toPhysicalField")
    }


def _three_snapshots_and_a_cleanup(
    served: Any, client: BlindataClient, events: list[dict[str, Any]], columns: int
) -> tuple[list[RunReport], RunReport]:
    """Three snapshots of ``events``, each one ``SNAPSHOT_GAP`` later on Blindata's clock, then
    a cleanup; after each snapshot, the ``columns`` column flows it wrote are every one of the
    producer's column flows in Blindata, each refreshed by it."""
    job = definition()
    history = History()
    reports: list[RunReport] = []
    before: dict[tuple[str, str], str] = {}
    for _ in range(3):
        report = history.add(snapshot(plan_for(client, events, job), client, job))
        assert report.status == "success", report.render()
        reports.append(report)
        after = _column_flows(served)
        assert len(after) == columns, report.render()
        assert report.counters.get("flowsColumn") == columns, report.render()
        assert all(after[key] > before[key] for key in before), report.render()  # refreshed
        before = after
        served.emulator.clock.advance(SNAPSHOT_GAP)
    removal = history.add(cleanup(job, client, history))
    assert removal.status == "success", removal.render()
    assert "flow" not in removal.removed, removal.render()
    assert set(_column_flows(served)) == set(before)
    return reports, removal


def _analysed(served: Any) -> list[dict[str, Any]]:
    return [f for f in objects(served, Kind.FLOW) if f.get("queryStatement")]


def test_a_blindata_whose_analysis_derives_nothing_keeps_every_producer_column_flow() -> None:
    """Issue 42: against a Blindata whose SQL analysis derives no flow, every job's statement
    is ANALYZED and every column flow of the ``columnLineage`` and ``lineage`` facets stays,
    through three snapshots and a cleanup; the report says why."""
    settings = replace(emulator_settings(), analysis_derives_flows=False)
    with running_emulator(settings) as served, client_of(served) as client:
        reports, _ = _three_snapshots_and_a_cleanup(
            served, client, [SELECT_STAR, CALL, INSERT_SELECT], columns=9
        )
        assert _analysed(served) == []
    first, second, third = reports
    assert first.gaps["QLP_PENDING"].count == 3
    for report in (second, third):
        assert report.counters["statementsAnalyzed"] == 3, report.render()
        assert "columnFlowsSupersededByAnalysis" not in report.counters
        assert not report.superseded
        assert report.counters["columnFlowsKeptOverAnalysis"] == 9
        assert report.kept["column flow"].count == 9
        assert all("derived no column flow into" in e for e in report.kept["column flow"].examples)


def test_select_star_and_call_keep_their_producer_column_flows(
    emulator: Any, client: BlindataClient
) -> None:
    """Issue 42 against a Blindata whose analysis derives column flows where the SQL gives
    them: ``INSERT ... SELECT *`` (table level) and ``CALL proc()`` (nothing) prove no column
    pair, so the producer's six column flows stay; Blindata's own table flow stands beside."""
    reports, _ = _three_snapshots_and_a_cleanup(emulator, client, [SELECT_STAR, CALL], columns=6)
    assert not any(f.get("toPhysicalField") for f in _analysed(emulator))
    for report in reports[1:]:
        assert report.counters["statementsAnalyzed"] == 2, report.render()
        assert "columnFlowsSupersededByAnalysis" not in report.counters
        assert report.counters["columnFlowsKeptOverAnalysis"] == 6


TOTALS = _sql_job(
    "etl.totals",
    "INSERT INTO sales.totals (total, n) SELECT SUM(amount), COUNT(*) FROM sales.orders",
    "dwh.sales.totals",
    column_lineage=_column_lineage({"total": "amount", "n": "id"}, "AGGREGATION"),
    fields=("total", "n"),
)
"""The analysis derives ``amount -> total``, and nothing for ``n`` (``COUNT(*)`` names no
column); the producer gives both."""


def test_an_analysis_that_covers_some_fields_supersedes_only_those(
    emulator: Any, client: BlindataClient
) -> None:
    """Per target field: the producer's flow into ``total`` is superseded by the analysis's and
    removed by the cleanup; its flow into ``n`` stays through three snapshots."""
    totals = TOTALS
    job = definition()
    history = History()
    first = history.add(snapshot(plan_for(client, [totals], job), client, job))
    assert first.counters["flowsColumn"] == 2 and first.gaps["QLP_PENDING"].count == 1
    by_field = {f["name"].rsplit(".", 1)[-1]: f for f in ours(emulator) if f["toPhysicalField"]}
    assert sorted(by_field) == sorted(name for name in by_field if name.startswith(("total", "n")))
    emulator.emulator.clock.advance(SNAPSHOT_GAP)
    kept_before = _column_flows(emulator)
    reports = []
    for _ in range(2):
        report = history.add(snapshot(plan_for(client, [totals], job), client, job))
        reports.append(report)
        assert report.counters["statementsAnalyzed"] == 1, report.render()
        assert report.counters["columnFlowsSupersededByAnalysis"] == 1, report.render()
        assert report.counters["columnFlowsKeptOverAnalysis"] == 1, report.render()
        assert report.counters["flowsColumn"] == 1, report.render()
        (example,) = report.superseded["column flow"].examples
        derived = [f for f in _analysed(emulator) if f.get("toPhysicalField")]
        assert [f["name"] for f in derived] == [example.split(": by ", 1)[1]]
        assert "total" in example.split(": by ", 1)[0]
        (why,) = report.kept["column flow"].examples
        assert "derived no column flow into" in why and why.endswith(".n")
        emulator.emulator.clock.advance(SNAPSHOT_GAP)
    removal = history.add(cleanup(job, client, history))
    assert removal.status == "success", removal.render()
    assert removal.removed["flow"].count == 1  # the producer's flow into total, superseded
    left = _column_flows(emulator)
    assert len(left) == 1
    ((key, modified),) = left.items()
    assert key in kept_before and modified > kept_before[key]  # into n, refreshed
    assert "superseded" in reports[0].render()


def test_the_analysis_flows_unread_prove_nothing(emulator: Any, client: BlindataClient) -> None:
    """When the flows the analysis derived cannot be read, nothing tells which fields it covers:
    every producer column flow stays, and the report counts the listing it could not read."""
    job = definition()
    snapshot(plan_for(client, [TOTALS], job), client, job)
    emulator.emulator.faults.fail_next(1, status=403, path="^/api/v1/dataflows$", method="GET")
    report = snapshot(plan_for(client, [TOTALS], job), client, job)
    assert report.counters["statementsAnalyzed"] == 1, report.render()
    assert report.counters["analysisFlowsUnread"] == 1, report.render()
    assert report.counters["flowsColumn"] == 2, report.render()
    assert "columnFlowsSupersededByAnalysis" not in report.counters
    assert not emulator.emulator.faults.pending()


def test_superseded_and_kept_flows_are_reported_without_the_job_namespaces_secret(
    emulator: Any, client: BlindataClient
) -> None:
    """A flow's name quotes its job namespace as sent; the report shows it redacted."""
    totals = {**TOTALS, "job": {**TOTALS["job"], "namespace": "postgres://etl:s3cret@db:5432"}}
    job = definition()
    snapshot(plan_for(client, [totals], job), client, job)
    report = snapshot(plan_for(client, [totals], job), client, job)
    examples = [*report.superseded["column flow"].examples, *report.kept["column flow"].examples]
    assert len(examples) == 2, report.render()
    # the job namespace is cleaned where the job's key is made (user info dropped, issue 42)
    assert not any("s3cret" in example for example in examples), examples
    assert all("postgres://db:5432" in example for example in examples), examples
    assert "s3cret" not in report.render()


def _unqualified_read(query: str) -> dict[str, Any]:
    """A job whose statement reads ``orders`` without a schema, which the producer resolved to
    ``public`` (Airflow's SQL operators ask the connection for its current schema), and writes
    ``mart.daily``: the event names both in full."""
    event = sql_job_event()
    event["job"]["facets"]["sql"]["query"] = query
    event["inputs"][0]["name"] = "dwh.public.orders"
    event["outputs"][0]["name"] = "dwh.mart.daily"
    lineage = event["outputs"][0]["facets"]["columnLineage"]["fields"]["total"]
    lineage["inputFields"][0]["name"] = "dwh.public.orders"
    return event


@pytest.mark.parametrize(
    ("query", "default_schema"),
    [
        ("INSERT INTO mart.daily (total) SELECT SUM(amount) FROM orders", "public"),
        # every table named with its schema: where the statement writes, as before
        ("INSERT INTO mart.daily (total) SELECT SUM(amount) FROM public.orders", "mart"),
    ],
)
def test_a_statement_resolves_its_unqualified_names_where_its_producer_did(
    emulator: Any, client: BlindataClient, query: str, default_schema: str
) -> None:
    """Seed 001 ranks the analysis of the routine's statement first: its default schema is
    where the producer resolved the statement's unqualified names, ``public.orders`` here. It
    was the schema of the table the job writes: Blindata resolved ``orders`` to ``mart.orders``
    (a table of that name there, as a probe found with real Airflow), or to no table at all."""
    job = definition()
    mart_orders = dict(sql_job_event()["inputs"][0], name="dwh.mart.orders")
    other = sql_job_event() | {"job": {"namespace": "airflow", "name": "etl.other", "facets": {}}}
    other["inputs"], other["outputs"] = [], [mart_orders]
    snapshot(plan_for(client, [_unqualified_read(query), other], job), client, job)

    (statement,) = objects(emulator, Kind.STATEMENT)
    assert statement["defaultSchema"] == default_schema
    snapshot(plan_for(client, [_unqualified_read(query), other], job), client, job)  # analysed
    entities = {e["uuid"]: (e["schema"], e["name"]) for e in objects(emulator, Kind.ENTITY)}
    analysed = {
        entities[f["fromPhysicalEntity"]["uuid"]]
        for f in objects(emulator, Kind.FLOW)
        if f.get("queryStatement")
    }
    assert analysed == {("public", "orders")}
