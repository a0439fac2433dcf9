"""Issue 38: a task removed from its DAG is retired at the next snapshot, not 30 days later.

The DAG's own events list its current tasks (the ``airflowState`` run facet of the DAG run's
terminal event, the ``airflow`` job facet of its START), as the Airflow OpenLineage provider
serialises them (``mapper.retirement``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import JobKey
from airflow_blindata.plans.eventfiles import read_event_file
from tests.airflow_db import runner_env
from tests.builders import (
    at,
    definition,
    parent_facet,
    policy,
    run_event,
)
from tests.mapper.removed_tasks import ALL, BEFORE, DAG, NS, DagRun


@pytest.mark.parametrize(
    ("sentence", "runs", "retired"),
    [
        (
            "a task the DAG's latest run no longer has is retired",
            [BEFORE, DagRun("r2", 1, ["extract", "load"], listed=dict(list(ALL.items())[:2]))],
            {"sales.report"},
        ),
        (
            "a task the latest run marks removed is retired",
            [BEFORE, DagRun("r2", 1, ["extract", "load"], listed=ALL | {"report": "removed"})],
            {"sales.report"},
        ),
        (
            "the task graph of the DAG run's START lists the tasks too",
            [BEFORE, DagRun("r2", 1, ["extract", "load"], graph=["extract", "load"])],
            {"sales.report"},
        ),
        (
            "a task that ran in the DAG's latest run is never retired",
            [BEFORE, DagRun("r2", 1, ["extract", "load", "report"], listed={"load": "success"})],
            set(),
        ),
        (
            "a task added while a DAG run goes on is not retired before that run lists it",
            [BEFORE, DagRun("r2", 1, ["extract", "load", "report", "audit"])],
            set(),
        ),
        (
            "a DAG whose latest run lists no task retires nothing",
            [BEFORE, DagRun("r2", 1, ["extract"], listed={})],
            set(),
        ),
        (
            "the statements a retired task reported as child jobs are retired with it",
            [
                DagRun(
                    "r1",
                    0,
                    ["extract", "report"],
                    listed=ALL,
                    children={"sales.report.query.1": "report"},
                ),
                DagRun("r2", 1, ["extract"], listed={"extract": "success"}),
            ],
            {"sales.report", "sales.report.query.1"},
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_removed_tasks(sentence: str, runs: list[DagRun], retired: set[str]) -> None:
    events = [event for run in runs for event in run.events()]
    plan = build(events, definition())

    retired_keys = {JobKey(NS, name) for name in retired}
    job_entities = {e.key.name for e in plan.entities if e.key.schema_ == NS}
    assert not retired_keys & {JobKey(NS, name) for name in job_entities}, sentence
    assert plan.report.counters.get("jobsRetired", 0) == len(retired), sentence
    flows_of = {f.scope for f in plan.flows}
    routines = {r.name for r in plan.routines}
    for name in retired:
        assert f"ol:{NS}|{name}" not in flows_of, sentence
        assert not any(name in routine for routine in routines), sentence
        assert all(f.target.entity.name != name for f in plan.flows), sentence
    kept = {f"{DAG}.{task}" for run in runs for task in run.tasks} - retired
    assert kept <= job_entities, sentence


def test_a_job_named_outside_its_parents_tasks_is_not_judged() -> None:
    events = BEFORE.events() + DagRun("r2", 1, [], listed={"extract": "success"}).events()
    events.append(
        run_event(
            "nightly-export",
            namespace=NS,
            run_id="x",
            time=at(10),
            run_facets=parent_facet(DAG, "r1", NS),
        )
    )
    plan = build(events, definition())

    assert plan.report.counters["jobsRetired"] == 2
    assert [line.split(":")[0] for line in plan.report.retired] == [
        f"{NS}/sales.load",
        f"{NS}/sales.report",
    ]
    assert "nightly-export" in {e.key.name for e in plan.entities}


def test_a_dag_a_removed_task_triggered_is_not_retired_with_it() -> None:
    """A ``TriggerDagRunOperator`` task's runs are the parent of the DAG runs it triggers (Airflow's
    standard provider sends the facet). Removed from its DAG, it is retired; the DAG it triggered
    still runs, and is no child job of it (a probe: it was retired with all its tasks, and the
    cleanup removed them)."""
    events = BEFORE.events() + DagRun("r2", 1, ["extract"], listed={"extract": "success"}).events()
    for name, parent, parent_run in (
        ("down", f"{DAG}.report", "r1-report"),
        ("down.build", "down", "d1"),
    ):
        events.append(
            run_event(
                name,
                namespace=NS,
                run_id="d1" if name == "down" else "d1-build",
                time=at(20),
                run_facets=parent_facet(parent, parent_run, NS),
            )
        )

    plan = build(events, definition())

    assert [line.split(":")[0] for line in plan.report.retired] == [
        f"{NS}/sales.load",
        f"{NS}/sales.report",
    ]
    assert {"down", "down.build"} <= {e.key.name for e in plan.entities}


@pytest.mark.airflow
def test_a_task_removed_from_a_real_dag_is_retired_by_the_dags_next_run(tmp_path: Path) -> None:
    """The real provider's DAG-level events, under ``dag.test()``: run with ``report``, then
    without it. The second run's events no longer list it, and its job is retired."""
    events = tmp_path / "events.jsonl"
    runner = Path(__file__).resolve().parent / "run_lineage_dag.py"

    def run(tasks: str) -> list[Any]:
        done = subprocess.run(
            [sys.executable, str(runner), str(events), str(tmp_path), "retire_demo"],
            env={**runner_env(), "RETIRE_DEMO_TASKS": tasks},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        state = (tmp_path / "state.txt").read_text() if (tmp_path / "state.txt").exists() else ""
        assert state == "success", done.stdout[-3000:] + done.stderr[-3000:]
        return list(read_event_file(events))

    files = policy("file*", nameTemplate="Files")
    first = build(run("extract,load,report"), definition(files))
    assert "jobsRetired" not in first.report.counters
    assert "retire_demo.report" in {e.key.name for e in first.entities}

    second = build(run("extract,load"), definition(files))

    ns = "lineage-tests"
    why = f"task 'report' is not in the latest run of DAG {ns}/retire_demo"
    assert second.report.retired == [f"{ns}/retire_demo.report: {why}"]
    assert "retire_demo.report" not in {e.key.name for e in second.entities}
    assert not [f for f in second.flows if f.scope.startswith(f"ol:{ns}|retire_demo.report")]
    assert "retire_demo.load" in {e.key.name for e in second.entities}
