"""Real Airflow events: ``lineage_demo`` run with ``dag.test()`` and the real OpenLineage provider,
captured with the OpenLineage FileTransport, then mapped (seed 001 flows and orchestration)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.eventfiles import read_event_file
from tests.airflow_db import runner_env

pytestmark = pytest.mark.airflow

RUNNER = Path(__file__).resolve().parent / "run_lineage_dag.py"
NS = "lineage-tests"


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> CatalogPlan:
    work = tmp_path_factory.mktemp("lineage_dag")
    events = work / "events.jsonl"
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(events), str(work)],
        env=runner_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    state = (work / "state.txt").read_text() if (work / "state.txt").exists() else "none"
    assert state == "success", done.stdout[-3000:] + done.stderr[-3000:]
    definition = JobDefinition.from_dict(
        {
            "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "systemPolicies": [
                {"pattern": "file*", "creation": "IF_MISSING", "nameTemplate": "Files"}
            ],
        }
    )
    return build(read_event_file(events), definition)


def names(plan: CatalogPlan, kind: str) -> set[tuple[str, str]]:
    return {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == kind}


def test_a_task_with_inlets_and_several_outlets_gives_every_pair_and_uncorrelated_io(
    plan: CatalogPlan,
) -> None:
    assert names(plan, "table") == {
        (source, target)
        for source in ("/data/in/orders.csv", "/data/in/customers.csv")
        for target in ("/data/out/big_orders.csv", "/data/out/small.csv")
    }
    assert plan.report.gaps[GapCode.UNCORRELATED_IO].examples == [f"{NS}/lineage_demo.split"]


def test_the_dag_run_is_the_parent_of_each_task_run(plan: CatalogPlan) -> None:
    orchestration = names(plan, "orchestration")
    for task in ("create", "aggregate", "split"):
        assert ("lineage_demo", f"lineage_demo.{task}") in orchestration


def test_the_airflow_task_graph_gives_task_to_task_flows_in_the_dags_scope(
    plan: CatalogPlan,
) -> None:
    graph = {
        (f.source.entity.name, f.target.entity.name)
        for f in plan.flows
        if f.scope == f"ol:{NS}|lineage_demo#orchestration"
    }
    assert graph == {
        ("lineage_demo.create", "lineage_demo.aggregate"),
        ("lineage_demo.aggregate", "lineage_demo.split"),
    }


def test_the_sql_of_each_query_becomes_a_routine_on_the_job_system(plan: CatalogPlan) -> None:
    inserts = [r for r in plan.routines if "INSERT INTO totals" in r.definition]
    assert inserts and all(r.system == "OpenLineage" and r.catalog == NS for r in inserts)


def test_every_orchestration_flow_is_marked_as_such(plan: CatalogPlan) -> None:
    for flow in plan.flows:
        marked = (
            flow.scope.endswith("#orchestration"),
            flow.name.endswith("@orchestration"),
            flow.description.startswith("Orchestration"),
        )
        assert marked == ((flow.kind == "orchestration"),) * 3, repr(flow)
