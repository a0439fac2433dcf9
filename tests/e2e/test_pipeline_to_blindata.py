"""End to end through Airflow: a ``dag.test()`` run of the demo pipeline is captured into the event
store, the sync DAG (itself under ``dag.test()``) catalogues it, and the emulator holds the result.

One subprocess runs both DAGs (about 15 s: ``airflow db migrate`` and the first ``dag.test()``);
the emulator is the test's, served on loopback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.store import open_store
from tests.airflow_db import runner_env
from tests.helpers import API_KEY, TENANT, USER

pytestmark = [pytest.mark.airflow, pytest.mark.integration]

RUNNER = Path(__file__).resolve().parent / "run_dags.py"
DEFINITION_UUID = "967a6d96-9e1b-44a9-ab79-9f790d17d525"  # example_dags/blindata_sync.yaml
PIPELINE = "e2e|blindata_demo_pipeline"


def run_dags(emulator: Any, work: Path) -> str:
    env = {key: value for key, value in runner_env().items() if not key.startswith("AIRFLOW")}
    env["AIRFLOW_CONN_BLINDATA_DEFAULT"] = json.dumps(
        {
            "conn_type": "blindata",
            "host": emulator.base_url,
            "login": USER,
            "password": API_KEY,
            "extra": {"tenant": TENANT},
        }
    )
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(work)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
    )
    output = done.stdout + done.stderr
    states = (
        '{"pipeline": "success", "sync": "success", "light, nothing new": "success", '
        '"pipeline again": "success", "light": "success"}'
    )
    assert f"STATES {states}" in done.stdout, output[-4000:]
    return output


def test_a_captured_dag_run_lands_in_blindata_through_the_sync_dag(
    emulator: Any, tmp_path: Path
) -> None:
    output = run_dags(emulator, tmp_path)

    assert API_KEY not in output  # the secret is in no log line
    state = emulator.emulator
    systems = {s["name"]: s for s in state.objects(Kind.SYSTEM)}
    assert set(systems) == {"demo-warehouse", "Local files", "OpenLineage"}
    entities = {(e.get("schema") or "", e["name"]): e for e in state.objects(Kind.ENTITY)}
    for table in ("raw_customers", "raw_orders", "order_totals"):
        assert entities[("", table)]["system"]["uuid"] == systems["demo-warehouse"]["uuid"]
    assert entities[("", "order_totals")]["description"].startswith("Total amount ordered")
    assert ("e2e", "blindata_demo_pipeline.build_order_totals") in entities
    totals = entities[("", "order_totals")]["uuid"]
    assert {
        f["name"] for f in state.objects(Kind.FIELD) if f["physicalEntity"]["uuid"] == totals
    } == {
        "customer_name",
        "total",
    }
    scoped = {
        (f["scope"], f["fromPhysicalEntity"]["uuid"], f["toPhysicalEntity"]["uuid"])
        for f in state.objects(Kind.FLOW)
        if f.get("scope")
    }
    build_scope = f"ol:{PIPELINE}.build_order_totals"
    assert (build_scope, entities[("", "raw_orders")]["uuid"], totals) in scoped
    assert any(scope.endswith("#orchestration") for scope, _, _ in scoped)
    routines = {r["name"] for r in state.objects(Kind.ROUTINE)}
    assert "blindata_demo_pipeline.build_order_totals.query.3" in routines
    (bucket,) = state.objects(Kind.BUCKET)
    assert systems["demo-warehouse"]["uuid"] in [s["uuid"] for s in bucket["systems"]]

    with open_store(f"sqlite:///{tmp_path / 'events.db'}") as store:
        history = store.sync_history(DEFINITION_UUID)
        captured = {event.job_name or "" for event in store.events()}
    # the sync DAG ran through the transport with no emission rule: none of its events was kept
    assert not {name for name in captured if name.startswith("blindata_sync")}, captured
    assert "blindata_demo_pipeline.build_order_totals" in captured
    # the light sync DAG skipped its first run (nothing new, nothing recorded), then published
    # the pipeline's second run: its jobs alone
    assert [(r.kind, r.status) for r in history] == [
        ("light", "success"),
        ("cleanup", "success"),
        ("snapshot", "success"),
    ]
    light = history[0].report
    assert "e2e/blindata_demo_pipeline.build_order_totals" in light["jobs"]
    assert light["cursor"] > history[2].report["cursor"]
