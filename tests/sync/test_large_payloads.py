"""Request bodies over the server's limit, against an emulator that answers them 413 over HTTP.

A Blindata instance sits behind a proxy that limits request bodies (nginx's
``client_max_body_size`` is 1 MB by default); the contract sets no batch size. An upload or a
quality import refused as too large is split until each request fits, and only a row too large
for any request is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from blindata_emulator import running_emulator

from airflow_blindata.blindata.models import PhysicalEntity, Ref, System
from airflow_blindata.sync import snapshot
from tests.helpers import emulator_settings
from tests.sync.helpers import client_of, counts, dbt_events, definition, plan_for

pytestmark = pytest.mark.integration

LIMIT = 3000
"""Bytes of a request body the emulator accepts: less than most batches of the dbt plan."""


@pytest.fixture
def limited() -> Iterator[Any]:
    with running_emulator(replace(emulator_settings(), max_body_bytes=LIMIT)) as handle:
        yield handle


def refused_as_too_large(handle: Any) -> set[str]:
    log = httpx.get(f"{handle.base_url}/_emulator/requests").json()
    sent = log["requests"] if isinstance(log, dict) else log
    return {r["path"].split("/api/v1/")[-1] for r in sent if r["status"] == 413}


def test_a_snapshot_whose_batches_are_too_large_lands_whole(limited: Any, emulator: Any) -> None:
    job = definition()
    with client_of(emulator) as client:
        unlimited = snapshot(plan_for(client, dbt_events(), job), client, job)
    with client_of(limited) as client:
        report = snapshot(plan_for(client, dbt_events(), job), client, job)
    assert report.status == "success", report.render()
    assert refused_as_too_large(limited) >= {
        "physical_entities/*/upload",
        "physical_fields/*/upload",
        "systems/routines/*/upload",
        "dataflows/*/upload",
        "data-quality/suites/*/import-objects",
    }
    assert counts(limited) == counts(emulator)
    assert report.counters == unlimited.counters


def test_only_a_row_too_large_for_any_request_is_refused(limited: Any) -> None:
    with client_of(limited) as client:
        system = Ref(uuid=client.api.systems.create(System(name="Large")).uuid or "")
        rows = [PhysicalEntity(system=system, schema="s", name=f"t{n}") for n in range(40)]
        rows[17] = rows[17].model_copy(update={"description": "x" * LIMIT})
        report = client.api.physical_entities.upload(rows)
    assert report.created == 39
    assert [error.index for error in report.errors] == [17]
    assert "3000 bytes" in report.errors[0].message
