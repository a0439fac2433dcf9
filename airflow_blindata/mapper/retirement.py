"""Tasks removed from their DAG: retired at the next snapshot, not 30 days later.

``retire_removed_tasks`` leaves out of the plan (the cleanup then removes what the definition
created for them) the jobs of tasks their DAG no longer has: the latest run names a parent job of
the fold and is named ``<parent>.<task id>``, the parent's latest run lists its tasks (the
``airflow`` job facet's ``tasks`` or the ``airflowState`` run facet's ``tasksState``) without that
task, and the job's latest run is not of that parent run and ended before it began. Their child
jobs (``dag.task.query.1``) go with them. A DAG whose latest run lists no task retires nothing.

Why and the rules in full:
docs/removal-of-deprecated-metadata.md#how-a-removed-task-is-recognised-mapperretirementpy
"""

from __future__ import annotations

from collections.abc import Iterable

from airflow_blindata.events import AirflowJobFacet, AirflowStateRunFacet, facet_of
from airflow_blindata.mapper.fold import Fold, JobFold, JobKey

__all__ = ["REMOVED_STATE", "current_tasks", "retire_removed_tasks", "retired_jobs"]

REMOVED_STATE = "removed"
"""The state Airflow gives a task instance whose task left the DAG."""


def current_tasks(dag: JobFold) -> frozenset[str] | None:
    """The task ids of ``dag``'s latest run, or ``None`` when that run does not list them."""
    latest = dag.latest
    if latest is None:
        return None
    found: set[str] | None = None
    graph = facet_of(latest.job_facets, AirflowJobFacet)
    if graph is not None and graph.tasks:
        found = set(graph.tasks)
    state = facet_of(latest.run_facets, AirflowStateRunFacet)
    if state is not None and state.tasks_state:
        listed = {task for task, value in state.tasks_state.items() if value != REMOVED_STATE}
        found = listed if found is None else found | listed
    return frozenset(found) if found is not None else None


def retired_jobs(fold: Fold) -> dict[JobKey, str]:
    """The jobs of ``fold`` to retire, each with why (the module docstring's rules)."""
    retired: dict[JobKey, str] = {}
    tasks_of: dict[JobKey, frozenset[str] | None] = {}
    for job in fold.jobs:
        latest = job.latest
        parent = latest.parent_job if latest is not None else None
        if latest is None or parent is None or parent == job.key:
            continue
        dag = fold.job(parent)
        prefix = f"{parent.name}."
        if dag is None or dag.latest is None or not job.key.name.startswith(prefix):
            continue
        if parent not in tasks_of:
            tasks_of[parent] = current_tasks(dag)
        tasks = tasks_of[parent]
        task_id = job.key.name[len(prefix) :]
        dag_run = dag.latest
        if (
            tasks is None
            or task_id in tasks
            or latest.parent_run_id == dag_run.run_id
            or latest.last_event_time >= dag_run.first_event_time
        ):
            continue
        retired[job.key] = f"task {task_id!r} is not in the latest run of DAG {parent}"
    return _with_children(fold.jobs, retired)


def _with_children(jobs: Iterable[JobFold], retired: dict[JobKey, str]) -> dict[JobKey, str]:
    """``retired`` with the jobs whose latest run's parent is a retired job and that are named
    under it (``dag.task.query.1`` of ``dag.task``), transitively. A job of another name whose
    run a retired task started is not its part: a DAG triggered by a removed
    ``TriggerDagRunOperator`` task (its runs name that task their parent, as Airflow's standard
    provider sends them) still runs, and all its tasks were retired with it."""
    pending = [job for job in jobs if job.key not in retired]
    changed = bool(retired)
    while changed:
        changed = False
        for job in list(pending):
            latest = job.latest
            parent = latest.parent_job if latest is not None else None
            if (
                parent is not None
                and parent in retired
                and job.key.name.startswith(f"{parent.name}.")
            ):
                retired[job.key] = f"its parent job {parent} is retired"
                pending.remove(job)
                changed = True
    return retired


def retire_removed_tasks(fold: Fold) -> tuple[Fold, dict[JobKey, str]]:
    """``fold`` without the jobs ``retired_jobs`` names, and those jobs with why."""
    retired = retired_jobs(fold)
    if not retired:
        return fold, retired
    jobs = [job for job in fold.jobs if job.key not in retired]
    return Fold(jobs=jobs, datasets=fold.datasets), retired
