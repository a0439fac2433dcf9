"""End to end: SQL check operators run with ``dag.test()`` (one passes, one fails) → OpenLineage
events of the real provider → checks and results in the emulator with the right semaphores; the
same run synced again publishes nothing new."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.plans.eventfiles import read_event_file
from airflow_blindata.sync import snapshot
from tests.airflow_db import runner_env
from tests.sync.helpers import definition, objects, plan_for

pytestmark = [pytest.mark.airflow, pytest.mark.postgres]

RUNNER = Path(__file__).resolve().parents[1] / "mapper" / "run_lineage_dag.py"
POSTGRES = os.environ.get("BLINDATA_TEST_POSTGRES_URL")


def _reachable(url: str) -> bool:
    try:
        import psycopg
    except ImportError:
        return False
    try:
        with psycopg.connect(url, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    if not POSTGRES:
        pytest.skip(
            "BLINDATA_TEST_POSTGRES_URL is not set: the SQL check operators need PostgreSQL"
        )
    if not _reachable(POSTGRES):
        pytest.skip(f"PostgreSQL at {POSTGRES.rsplit('@', 1)[-1]} is not reachable")
    work = tmp_path_factory.mktemp("quality_dag")
    schema = f"bd_quality_{uuid.uuid4().hex[:8]}"
    env = {**runner_env(), "QUALITY_SCHEMA": schema}
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(work / "events.jsonl"), str(work), "quality_demo"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    state = (work / "state.txt").read_text() if (work / "state.txt").exists() else "none"
    assert state == "failed", done.stdout[-3000:] + done.stderr[-3000:]  # one check fails
    try:
        import psycopg

        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    except Exception:
        pass
    return list(read_event_file(work / "events.jsonl"))


def test_sql_check_operators_become_checks_and_results(
    events: list[Any], emulator: Any, client: BlindataClient
) -> None:
    job = definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}])
    first = snapshot(plan_for(client, events, job), client, job)
    found = {
        c["name"]: c
        for c in objects(emulator, Kind.CHECK)
        if not c["code"].startswith("ol-ledger:")
    }
    semaphores = {name.split(" ")[0]: check["lastSemaphore"] for name, check in found.items()}
    assert semaphores == {"id.null_check": "GREEN", "row_count_check": "RED"}
    assert first.counters["qualityResultsPublished"] == 2
    results = objects(emulator, Kind.RESULT)
    assert any("COUNT(*) = 1000" in (r.get("notes") or "") for r in results)

    again = snapshot(plan_for(client, events, job), client, job)
    assert again.counters["qualityResultsAlreadyPublished"] == 2
    assert len(objects(emulator, Kind.RESULT)) == 2
