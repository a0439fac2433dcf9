"""Seed 001 precedence across runs: a SQL job's column flows stand until Blindata has analysed
its SQL, then Blindata's own flows win; the table flow stays either way."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from blindata_emulator import Kind, running_emulator

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient
from airflow_blindata.blindata.models import QueryBucket
from airflow_blindata.sync import snapshot
from tests.conftest import API_KEY, TENANT, USER, emulator_settings
from tests.sync.conftest import FAST_RETRY, definition, objects, plan_for

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


def test_a_bucket_that_cannot_grow_is_counted_not_a_failure() -> None:
    """The contract's query buckets are listed and created, never updated: on a Blindata that
    serves no ``PUT buckets/{uuid}``, a dataset System missing from the bucket is counted
    (``bucketSystemsNotAdded``), and the snapshot still succeeds."""
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
    assert report.gaps["QLP_PENDING"].count == 1  # the statement is analysed all the same
