"""The permissions ``docs/who-writes-to-blindata.md`` lists are enough, and a missing one costs
only its own kind of object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from blindata_emulator import EmulatorSettings, EmulatorUser, Kind, running_emulator

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient
from airflow_blindata.sync import cleanup, snapshot
from tests.sync.helpers import FAST_RETRY, History, dbt_events, definition

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
