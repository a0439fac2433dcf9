"""Seed 003 rules of the quality ledger and of removed jobs, against the emulator over HTTP:

* "When a snapshot removes a job, the agent disables the checks of that job" — also when it was
  the last job with checks;
* "One result is written per check and run" — also when another assertion of the same run
  targets a dataset that is not catalogued.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.emulator import Kind
from airflow_blindata.sync import snapshot
from tests.sync.conftest import definition, objects, plan_for

pytestmark = pytest.mark.integration

PG = "postgres://warehouse:5432"


def run(
    job: str, run_id: str, assertions: dict[tuple[str, str], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """A completed run of job ``dq/<job>`` reading datasets ``(namespace, name)`` with
    assertions (an empty list: the dataset is read, nothing is asserted)."""

    def event(kind: str, second: int) -> dict[str, Any]:
        return {
            "eventType": kind,
            "eventTime": f"2026-11-29T10:00:{second:02d}.000Z",
            "producer": "https://example.com/dq",
            "run": {"runId": run_id, "facets": {}},
            "job": {"namespace": "dq", "name": job, "facets": {}},
            "inputs": [
                {
                    "namespace": namespace,
                    "name": name,
                    "facets": {"schema": {"fields": [{"name": "id"}]}},
                    "inputFacets": {"dataQualityAssertions": {"assertions": items}},
                }
                for (namespace, name), items in assertions.items()
            ],
            "outputs": [],
        }

    return [event("START", 0), event("COMPLETE", 30)]


def asserting(job: str, assertion: str) -> list[dict[str, Any]]:
    return run(
        job, f"run-{job}", {(PG, "dwh.sales.orders"): [{"assertion": assertion, "success": True}]}
    )


def reading(job: str) -> list[dict[str, Any]]:
    """A job that is described (it runs and reads) but asserts nothing."""
    return run(job, f"run-{job}", {(PG, "dwh.sales.orders"): []})


def enabled_by_assertion(emulator: Any) -> dict[str, bool]:
    return {
        c["code"].rsplit(":", 1)[-1]: c["enabled"]
        for c in objects(emulator, Kind.CHECK)
        if not c["code"].startswith("ol-ledger:")
    }


# -- "When a snapshot removes a job, the agent disables the checks of that job" ------------------


@pytest.mark.parametrize(
    ("first", "second", "disabled", "enabled"),
    [
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            reading("c"),
            1,
            {"a_ok": False},
            id="the-last-job-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "a_ok") + asserting("b", "b_ok"),
            asserting("b", "b_ok"),
            1,
            {"a_ok": False, "b_ok": True},
            id="one-of-two-jobs-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "shared") + asserting("b", "shared"),
            asserting("b", "shared"),
            0,
            {"shared": True},
            id="a-removed-job-whose-check-another-job-still-runs",
        ),
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            [],
            0,
            {"a_ok": True},
            id="an-empty-snapshot-proves-nothing",
        ),
    ],
)
def test_when_a_snapshot_removes_a_job_the_agent_disables_the_checks_of_that_job(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    disabled: int,
    enabled: dict[str, bool],
) -> None:
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    report = snapshot(plan_for(client, second, job), client, job)
    assert report.counters.get("qualityChecksDisabled", 0) == disabled
    assert enabled_by_assertion(emulator) == enabled
    assert len(objects(emulator, Kind.CHECK)) >= len(enabled)  # disabled, never deleted
