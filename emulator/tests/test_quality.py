"""Data quality suites, checks, bulk import, results and profiling (blindata-api.md §2)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers import create_entity, create_system, ok, upload

DQ = "/api/v1/data-quality"


@pytest.fixture
def suite(api: httpx.Client) -> dict[str, Any]:
    return ok(
        api.post(
            f"{DQ}/suites",
            json={"code": "ol-job-1", "name": "OpenLineage job-1", "published": True},
        ),
        201,
    )


def _check(
    api: httpx.Client, suite: dict[str, Any], code: str = "c1", **fields: Any
) -> dict[str, Any]:
    body = {"code": code, "name": code, "qualitySuite": {"uuid": suite["uuid"]}, **fields}
    return ok(api.post(f"{DQ}/checks", json=body), 201)


def test_suites_are_searchable_and_their_codes_unique(
    api: httpx.Client, suite: dict[str, Any]
) -> None:
    assert ok(api.get(f"{DQ}/suites", params={"search": "JOB-1"}))["totalElements"] == 1
    assert api.post(f"{DQ}/suites", json={"code": "ol-job-1", "name": "again"}).status_code == 409
    assert ok(api.get(f"{DQ}/suites/{suite['uuid']}"))["published"] is True


def test_check_codes_are_unique_and_put_takes_the_full_check(
    api: httpx.Client, suite: dict[str, Any]
) -> None:
    system = create_system(api)
    entity = create_entity(api, system, "s", "t")
    check = _check(
        api,
        suite,
        physicalEntities=[{"uuid": entity["uuid"]}],
        successThreshold=90,
        description="d",
    )
    assert check["enabled"] is True and check["scoreStrategy"] == "PERCENTAGE"
    assert check["lastRun"] is None
    assert (
        api.post(
            f"{DQ}/checks",
            json={"code": "c1", "name": "x", "qualitySuite": {"uuid": suite["uuid"]}},
        ).status_code
        == 409
    )
    full = {
        "code": "c1",
        "name": "renamed",
        "qualitySuite": {"uuid": suite["uuid"]},
        "enabled": False,
    }
    put = ok(api.put(f"{DQ}/checks/{check['uuid']}", json=full))
    assert (put["name"], put["enabled"], put["description"], put["physicalEntities"]) == (
        "renamed",
        False,
        None,
        [],
    )
    listed = ok(api.get(f"{DQ}/checks", params={"code": "c1", "suiteUuid": suite["uuid"]}))
    assert listed["totalElements"] == 1
    assert (
        api.post(
            f"{DQ}/checks",
            json={
                "code": "c2",
                "name": "x",
                "qualitySuite": {"uuid": suite["uuid"]},
                "warningThreshold": 101,
            },
        ).status_code
        == 400
    )


def test_checks_are_listed_by_physical_entity(api: httpx.Client, suite: dict[str, Any]) -> None:
    system = create_system(api)
    first = create_entity(api, system, "s", "a")
    second = create_entity(api, system, "s", "b")
    _check(api, suite, "on-a", physicalEntities=[{"uuid": first["uuid"]}])
    _check(api, suite, "on-b", physicalEntities=[{"uuid": second["uuid"]}])
    listed = ok(api.get(f"{DQ}/checks", params={"physicalEntityUuid": first["uuid"]}))
    assert [c["code"] for c in listed["content"]] == ["on-a"]


@pytest.mark.parametrize(
    ("metric", "total", "score", "light"),
    [
        (0, 200, 100.0, "GREEN"),
        (10, 200, 95.0, "GREEN"),
        (30, 200, 85.0, "YELLOW"),
        (100, 200, 50.0, "RED"),
        (0, 0, 100.0, "GREEN"),
    ],
)
def test_a_result_scores_percentage_and_updates_the_checks_last_run(
    api: httpx.Client, suite: dict[str, Any], metric: int, total: int, score: float, light: str
) -> None:
    check = _check(api, suite, successThreshold=90, warningThreshold=80)
    body = {
        "qualityCheck": {"uuid": check["uuid"]},
        "metric": metric,
        "totalElements": total,
        "startedAt": "2026-11-29T10:00:00Z",
        "finishedAt": "2026-11-29T10:01:00Z",
    }
    result = ok(api.post(f"{DQ}/results", json=body), 201)
    assert (result["score"], result["semaphore"]) == (score, light)
    after = ok(api.get(f"{DQ}/checks/{check['uuid']}"))
    assert (after["lastRun"], after["lastScore"], after["lastSemaphore"]) == (
        "2026-11-29T10:00:00.000Z",
        score,
        light,
    )


def test_a_result_with_the_same_check_and_started_at_updates_the_first(
    api: httpx.Client, suite: dict[str, Any]
) -> None:
    check = _check(api, suite, successThreshold=100, warningThreshold=50)
    ref = {"uuid": check["uuid"]}
    first = ok(
        api.post(
            f"{DQ}/results",
            json={
                "qualityCheck": ref,
                "metric": 5,
                "totalElements": 10,
                "startedAt": "2026-11-29T10:00:00Z",
                "notes": "first",
            },
        ),
        201,
    )
    same = ok(
        api.post(
            f"{DQ}/results",
            json={
                "qualityCheck": ref,
                "metric": 0,
                "totalElements": 10,
                "startedAt": "2026-11-29T10:00:00.000+00:00",
            },
        ),
        201,
    )
    assert same["uuid"] == first["uuid"] and same["notes"] == "first"
    older = {
        "qualityCheck": ref,
        "metric": 10,
        "totalElements": 10,
        "startedAt": "2026-11-28T10:00:00Z",
    }
    ok(api.post(f"{DQ}/results", json=older), 201)
    results = ok(api.get(f"{DQ}/results", params={"checkUuid": check["uuid"]}))
    assert results["totalElements"] == 2
    after = ok(api.get(f"{DQ}/checks/{check['uuid']}"))
    assert (after["lastScore"], after["lastSemaphore"]) == (100.0, "GREEN")  # the latest run wins


@pytest.mark.parametrize(
    "body",
    [
        {"metric": 1, "startedAt": "2026-11-29T10:00:00Z"},
        {"metric": 11, "totalElements": 10, "startedAt": "2026-11-29T10:00:00Z"},
        {"metric": 1, "totalElements": 10, "startedAt": "not a date"},
        {"metric": "1", "totalElements": 10, "startedAt": "2026-11-29T10:00:00Z"},
    ],
    ids=["no-total", "metric-above-total", "bad-date", "metric-not-number"],
)
def test_an_invalid_result_gives_400(
    api: httpx.Client, suite: dict[str, Any], body: dict[str, Any]
) -> None:
    check = _check(api, suite)
    response = api.post(f"{DQ}/results", json={"qualityCheck": {"uuid": check["uuid"]}, **body})
    assert response.status_code == 400, response.text


def test_import_objects_upserts_by_code_and_cleanup_disables_absent_checks(
    api: httpx.Client,
) -> None:
    path = f"{DQ}/suites/*/import-objects"
    suite = {"code": "ol-job-2", "name": "job 2"}
    checks = [
        {"code": f"job2-{n}", "name": f"check {n}", "successThreshold": 100} for n in range(3)
    ]
    first = ok(api.post(path, json={"qualitySuite": suite, "qualityChecks": checks}))
    assert (first["rowCreated"], first["rowUpdated"]) == (3, 0) and len(
        first["qualityChecksUuids"]
    ) == 3
    other = ok(
        api.post(
            path,
            json={
                "qualitySuite": {"code": "other", "name": "o"},
                "qualityChecks": [{"code": "taken", "name": "t"}],
            },
        )
    )
    second = ok(
        api.post(
            path,
            params={"cleanup": "true"},
            json={
                "qualitySuite": suite,
                "qualityChecks": [
                    checks[0],
                    {"code": "taken", "name": "steal"},
                    {"code": "job2-new", "name": "new"},
                ],
            },
        )
    )
    assert second["qualitySuiteUuid"] == first["qualitySuiteUuid"]
    assert (second["rowCreated"], second["rowUpdated"], second["rowDiscarded"]) == (1, 1, 1)
    assert "errors" not in second  # the contract's answer names no rows
    assert len(second["qualityChecksUuids"]) == 2
    listed = ok(api.get(f"{DQ}/checks", params={"suiteUuid": first["qualitySuiteUuid"]}))["content"]
    enabled = {c["code"]: c["enabled"] for c in listed}
    assert enabled == {"job2-0": True, "job2-1": False, "job2-2": False, "job2-new": True}
    (taken,) = ok(api.get(f"{DQ}/checks", params={"code": "taken"}))["content"]
    assert taken["name"] == "t" and taken["qualitySuite"]["uuid"] == other["qualitySuiteUuid"]


def test_profiling_records_upsert_by_monitor_metric_field_and_timestamp(api: httpx.Client) -> None:
    system = create_system(api)
    entity = create_entity(api, system, "s", "t")
    monitor = ok(
        api.post(
            "/api/v1/profiling/monitors",
            json={"name": "openlineage", "physicalEntity": {"uuid": entity["uuid"]}},
        ),
        201,
    )
    assert (
        api.post(
            "/api/v1/profiling/monitors",
            json={"name": "openlineage", "physicalEntity": {"uuid": entity["uuid"]}},
        ).status_code
        == 409
    )
    ref = {"uuid": monitor["uuid"]}
    rows = [
        {
            "monitor": ref,
            "metricCode": "ROW_COUNT",
            "value": 10,
            "timestamp": "2026-11-29T10:00:00Z",
        },
        {
            "monitor": ref,
            "metricCode": "NULL_COUNT",
            "physicalFieldName": "a",
            "value": 1,
            "timestamp": "2026-11-29T10:00:00Z",
        },
        {
            "monitor": ref,
            "metricCode": "NULL_COUNT",
            "physicalFieldName": "b",
            "value": 2,
            "timestamp": "2026-11-29T10:00:00Z",
        },
        {
            "monitor": {"uuid": "nope"},
            "metricCode": "ROW_COUNT",
            "value": 1,
            "timestamp": "2026-11-29T10:00:00Z",
        },
        {
            "monitor": ref,
            "metricCode": "ROW_COUNT",
            "value": "10",
            "timestamp": "2026-11-29T10:00:00Z",
        },
    ]
    first = upload(api, "/api/v1/profiling/records", rows)
    assert (first["rowCreated"], first["rowDiscarded"]) == (3, 2)
    resent = upload(
        api,
        "/api/v1/profiling/records",
        [{**rows[0], "value": 12, "timestamp": "2026-11-29T10:00:00.000+00:00"}],
    )
    assert (resent["rowCreated"], resent["rowUpdated"]) == (0, 1)
    counts = ok(
        api.get(
            "/api/v1/profiling/records",
            params={"monitorUuid": monitor["uuid"], "metricCode": "ROW_COUNT"},
        )
    )
    assert [r["value"] for r in counts["content"]] == [12]
    listed = ok(
        api.get("/api/v1/profiling/monitors", params={"physicalEntityUuid": entity["uuid"]})
    )
    assert listed["totalElements"] == 1
