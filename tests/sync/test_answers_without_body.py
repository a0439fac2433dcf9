"""Writes that Blindata answers without a body, against the emulator over HTTP.

The contract gives the status of a quality result's POST (201) and of a PUT, never their body;
a Blindata may answer ``204 No Content`` to a PUT, or ``201`` with no body to a result, where the
emulator sends the object back. Such an answer is complete: nothing was cut short, so nothing is
sent again, and the write counts as done.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata.models import System
from airflow_blindata.sync import snapshot
from tests.sync.helpers import checks, client_of, dbt_events, definition, dq_run, objects, plan_for

pytestmark = pytest.mark.integration

RESULTS = "/api/v1/data-quality/results"


class WritesWithoutBody(httpx.HTTPTransport):
    """A Blindata that applies every write as the emulator does, and answers a PUT with 204 and
    a quality result with 201, both without a body."""

    def __init__(self) -> None:
        super().__init__()
        self.empty: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not response.is_success:
            return response
        if request.method == "PUT":
            status = 204
        elif request.method == "POST" and request.url.path == RESULTS:
            status = 201
        else:
            return response
        response.read()
        response.close()
        self.empty.append(f"{request.method} {request.url.path}")
        return httpx.Response(status, headers={"Date": response.headers.get("Date", "")})


def requests_to(emulator: Any, method: str, path: str) -> int:
    log = httpx.get(f"{emulator.base_url}/_emulator/requests").json()
    sent = log["requests"] if isinstance(log, dict) else log
    return sum(1 for r in sent if r["method"] == method and r["path"].startswith(path))


def test_a_system_stamped_by_a_put_answered_204_is_stamped_once(emulator: Any) -> None:
    transport = WritesWithoutBody()
    with client_of(emulator, transport) as client:
        client.api.systems.create(System(name="postgres", subtype="DATABASE"))
        job = definition()
        report = snapshot(plan_for(client, dbt_events(), job), client, job)
    assert report.status == "success", report.render()
    assert report.counters["systemsStamped"] == 1
    (postgres,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "postgres"]
    assert [p["name"] for p in postgres["additionalProperties"]] == ["openLineageNamespace"]
    assert requests_to(emulator, "PUT", "/api/v1/systems/") == 1
    assert any(sent.startswith("PUT /api/v1/systems/") for sent in transport.empty)


def test_results_answered_201_without_body_are_published_once(emulator: Any) -> None:
    job = definition()
    events = dq_run("c", "run-1", [{"assertion": "not_null", "column": "id", "success": True}])
    transport = WritesWithoutBody()
    with client_of(emulator, transport) as client:
        first = snapshot(plan_for(client, events, job), client, job)
        second = snapshot(plan_for(client, events, job), client, job)
    assert first.status == "success", first.render()
    assert first.counters["qualityResultsPublished"] == 1
    assert second.status == "success", second.render()
    assert second.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 1
    assert requests_to(emulator, "POST", RESULTS) == 1
    assert f"POST {RESULTS}" in transport.empty


def test_a_check_disabled_by_a_put_answered_204_is_disabled(emulator: Any) -> None:
    job = definition()
    both = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}]) + dq_run(
        "b", "run-b", [{"assertion": "b_ok", "success": True}]
    )
    only_a = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}])
    with client_of(emulator, WritesWithoutBody()) as client:
        snapshot(plan_for(client, both, job), client, job)
        report = snapshot(plan_for(client, only_a, job), client, job)
    assert report.status == "success", report.render()
    assert report.counters["qualityChecksDisabled"] == 1
    disabled = [c for code, c in checks(emulator).items() if "b_ok" in code]
    assert disabled and all(c["enabled"] is False for c in disabled)
