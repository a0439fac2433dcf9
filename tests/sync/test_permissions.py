"""The permissions ``docs/who-writes-to-blindata.md`` lists are enough, and a missing one costs
only its own kind of object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from blindata_emulator import EmulatorSettings, EmulatorUser, Kind, running_emulator

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import JOB_SYSTEM_NAME_PROPERTY
from airflow_blindata.sync import cleanup, fetch_known_systems, snapshot
from tests.sync.helpers import FAST_RETRY, History, client_of, dbt_events, definition

pytestmark = pytest.mark.integration

TENANT = "44444444-4444-4444-8444-444444444444"
KEY = "permissions-test-key"
DOCUMENTED = [
    "SYSTEMS_EDITOR",
    "PHYSICAL_MODEL_EDITOR",
    "QUERY_PARSER_EDITOR",
    "DATA_FLOWS_EDITOR",
    "QUALITY_EDITOR",
    "PROFILING_EDITOR",
]


def served(permissions: list[str]) -> Any:
    settings = EmulatorSettings(
        tenants=[TENANT], users=[EmulatorUser("sync", KEY, permissions=permissions)]
    )
    return running_emulator(settings)


@pytest.fixture
def documented() -> Iterator[tuple[Any, BlindataClient]]:
    with (
        served(DOCUMENTED) as handle,
        BlindataClient(
            handle.base_url,
            credentials=ApiKeyCredentials("sync", KEY),
            tenant=TENANT,
            retry=FAST_RETRY,
        ) as client,
    ):
        yield handle, client


def test_the_documented_permissions_are_enough_for_snapshot_and_cleanup(
    documented: tuple[Any, BlindataClient],
) -> None:
    _, client = documented
    job = definition()
    from airflow_blindata.mapper.build import build
    from airflow_blindata.sync import fetch_known_systems

    history = History()
    report = history.add(
        snapshot(build(dbt_events(), job, fetch_known_systems(client)), client, job)
    )
    assert report.status == "success", report.render()
    assert history.add(cleanup(job, client, history)).status == "success"


def test_without_the_data_flows_permission_only_flows_fail() -> None:
    permissions = [p for p in DOCUMENTED if p != "DATA_FLOWS_EDITOR"]
    with (
        served(permissions) as handle,
        BlindataClient(
            handle.base_url,
            credentials=ApiKeyCredentials("sync", KEY),
            tenant=TENANT,
            retry=FAST_RETRY,
        ) as client,
    ):
        from airflow_blindata.mapper.build import build

        job = definition()
        plan = build(dbt_events(), job, [])
        report = snapshot(plan, client, job, batch_size=10)
        uploads = [r for r in handle.emulator.requests.entries() if "dataflows" in r["path"]]
        entities = handle.emulator.objects(Kind.ENTITY)

    assert report.status == "partial"
    assert set(report.failures) == {"flow"}
    assert report.failures["flow"].count == len(plan.flows)
    assert "403" in report.failures["flow"].examples[0]
    assert len(uploads) == 1  # the phase stopped at the first refusal
    assert len(entities) == len(plan.entities)


class NoSystemUpdates(httpx.HTTPTransport):
    """A user who may create and read Systems but not update them: a PUT of one is a 403."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PUT" and "/systems/" in request.url.path:
            return httpx.Response(403, json={"status": 403, "message": "SYSTEMS_EDITOR required"})
        return super().handle_request(request)


def test_a_job_system_that_may_not_be_stamped_with_its_name_still_takes_the_jobs(
    client: BlindataClient, emulator: Any
) -> None:
    """Upgrade: the job System the release before created carries no ``openLineageJobSystemName``.
    The snapshot adds it with a PUT; refused, it reports gap ``JOB_SYSTEM_NOT_STAMPED`` and still
    writes the jobs there (a review: the whole System was dropped, its jobs and routines failed,
    and every snapshot was partial)."""
    job = definition()
    events = dbt_events()
    first = snapshot(build(events, job, fetch_known_systems(client)), client, job)
    assert first.status == "success", first.render()
    (jobs,) = [s for s in emulator.emulator.objects(Kind.SYSTEM) if s["name"] == "OpenLineage"]
    stored = client.api.systems.get(jobs["uuid"])
    legacy = [p for p in stored.additional_properties or () if p.name != JOB_SYSTEM_NAME_PROPERTY]
    client.api.systems.update(stored.model_copy(update={"additional_properties": legacy}))

    with client_of(emulator, NoSystemUpdates()) as refused:
        report = snapshot(build(events, job, fetch_known_systems(refused)), refused, job)

    assert report.status == "success", report.render()
    assert not report.failures, report.render()
    assert report.gap_count(GapCode.JOB_SYSTEM_NOT_STAMPED) == 1
    assert report.gaps[GapCode.JOB_SYSTEM_NOT_STAMPED].examples == ["OpenLineage"]
    assert report.counters["systemsNotStamped"] == 1
    assert report.counters["entitiesDescribed"] == first.counters["entitiesDescribed"]
    assert report.systems["OpenLineage"].jobs
