"""The operators use the paths ``api_paths`` moves: a sync against an instance that serves two
contract paths elsewhere (the emulator's ``moved_paths``), executed as a task would run it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from blindata_emulator import EmulatorHandle, running_emulator

from airflow_blindata.operators import BlindataCleanupOperator, BlindataSnapshotOperator
from airflow_blindata.store import open_store
from airflow_blindata.sync import snapshot
from tests.helpers import API_KEY, TENANT, USER, emulator_settings
from tests.operators.helpers import DEFINITION
from tests.sync.helpers import client_of, dbt_events, definition, plan_for

pytestmark = pytest.mark.integration

MOVED = {
    "/api/v1/dataflows/*/upload": "/api/v1/lineage/dataflows/*/upload",
    "/api/v1/systems": "/api/v1/catalog/systems",
}


@pytest.fixture
def moved(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorHandle]:
    with running_emulator(replace(emulator_settings(), moved_paths=MOVED)) as handle:
        conn = {
            "conn_type": "blindata",
            "host": handle.base_url,
            "login": USER,
            "password": API_KEY,
            "extra": {"tenant": TENANT, "deadline": 20, "api_paths": MOVED},
        }
        monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
        yield handle


def test_the_snapshot_and_cleanup_operators_call_the_paths_api_paths_moves(
    moved: EmulatorHandle, tmp_path: Path
) -> None:
    store_url = f"sqlite:///{tmp_path / 'events.db'}"
    with open_store(store_url) as store:
        store.append_many(dbt_events())

    snapshot = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url
    ).execute(context={})
    cleanup = BlindataCleanupOperator(
        task_id="cleanup", definition=DEFINITION, store_url=store_url
    ).execute(context={})

    assert snapshot["status"] == "success", snapshot
    assert cleanup["status"] in ("success", "skipped"), cleanup
    assert moved.emulator.objects("dataflow", TENANT), "the flows were uploaded"
    log = httpx.get(f"{moved.base_url}/_emulator/requests").json()["requests"]
    paths = {(entry["method"], entry["path"], entry["status"]) for entry in log}
    assert ("POST", MOVED["/api/v1/dataflows/*/upload"], 200) in paths
    assert ("GET", MOVED["/api/v1/systems"], 200) in paths
    assert not [entry for entry in log if entry["status"] == 404]


def test_a_snapshot_needs_no_users_me_path() -> None:
    """``/users/me`` is inferred: the snapshot reads Blindata's time from a verified path (a page
    of one System), so an instance that serves no ``/users/me`` still takes a snapshot."""
    moved = {"/api/v1/users/me": "/api/v1/elsewhere/me"}
    job = definition()
    settings = replace(emulator_settings(), moved_paths=moved)
    with running_emulator(settings) as handle, client_of(handle) as client:
        before = datetime.now(UTC)
        report = snapshot(plan_for(client, dbt_events(), job), client, job)
    assert report.status == "success", report.render()
    assert report.watermark is not None
    assert abs(report.watermark - before) < timedelta(seconds=30)
