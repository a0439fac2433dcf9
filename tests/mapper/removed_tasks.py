"""Issue 38's DAG runs, as the Airflow OpenLineage provider reports them: one scenario that the
mapper's, the sync's and the page's tests of retired tasks share.

``DagRun`` gives one DAG run's events: its tasks' runs (each writes a table and has SQL), then the
DAG's own START (the ``airflow`` job facet: its task graph, ``graph_facet``) and terminal event
(the ``airflowState`` run facet: its tasks, ``listed``). ``NS`` and ``DAG`` name the DAG; ``ALL``
lists its tasks, ``BEFORE`` is the run that still had them all. Importing it skips the importing
test module without the OpenLineage provider (``pytest.importorskip``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from openlineage.client.serde import Serde

from tests.builders import at, dataset, parent_facet, run_event, sql_facet

provider = pytest.importorskip("airflow.providers.openlineage.plugins.facets")
NS = "airflow-prod"
DAG = "sales"


def state_facet(tasks: dict[str, str]) -> dict[str, Any]:
    """The DAG run's terminal event's ``airflowState`` run facet, as the provider sends it."""
    return {
        "airflowState": Serde.to_dict(
            provider.AirflowStateRunFacet(
                dagRunState="success",
                tasksState=tasks,
                tasksDuration=dict.fromkeys(tasks, 1.0),
            )
        )
    }


def graph_facet(tasks: list[str]) -> dict[str, Any]:
    """The DAG run's START's ``airflow`` job facet: the DAG's task graph."""
    details = {
        task: {"operator": "x.SqlOperator", "task_group": None, "downstream_task_ids": []}
        for task in tasks
    }
    return {
        "airflow": Serde.to_dict(
            provider.AirflowJobFacet(taskTree={}, taskGroups={}, tasks=details)
        )
    }


@dataclass
class DagRun:
    """One DAG run: its tasks' runs (each writes a table and has SQL), then the DAG's events."""

    run_id: str
    minute: int
    tasks: list[str]
    listed: dict[str, str] | None = None
    """``tasksState`` of the DAG's COMPLETE; ``None``: the run has not completed."""
    graph: list[str] | None = None
    """The task graph of the DAG's START; ``None``: no START (``dag.test()``)."""
    children: dict[str, str] = field(default_factory=dict)
    """Child job name → the task whose run is its parent (a SQL hook's statements)."""

    def events(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if self.graph is not None:
            found.append(
                run_event(
                    DAG,
                    namespace=NS,
                    event_type="START",
                    run_id=self.run_id,
                    time=at(0, minute=self.minute),
                    job_facets=graph_facet(self.graph),
                )
            )
        for second, task in enumerate(self.tasks, start=1):
            task_run = f"{self.run_id}-{task}"
            found.append(
                run_event(
                    f"{DAG}.{task}",
                    namespace=NS,
                    run_id=task_run,
                    time=at(second, minute=self.minute),
                    run_facets=parent_facet(DAG, self.run_id, NS),
                    job_facets=sql_facet(f"insert into {task} select 1"),
                    inputs=[dataset("public.source")],
                    outputs=[dataset(f"public.{task}")],
                )
            )
        for child, task in self.children.items():
            found.append(
                run_event(
                    child,
                    namespace=NS,
                    run_id=f"{self.run_id}-{child}",
                    time=at(30, minute=self.minute),
                    run_facets=parent_facet(f"{DAG}.{task}", f"{self.run_id}-{task}", NS),
                )
            )
        if self.listed is not None:
            found.append(
                run_event(
                    DAG,
                    namespace=NS,
                    run_id=self.run_id,
                    time=at(50, minute=self.minute),
                    run_facets=state_facet(self.listed),
                )
            )
        return found


ALL = {"extract": "success", "load": "success", "report": "success"}
BEFORE = DagRun("r1", 0, ["extract", "load", "report"], listed=ALL)
