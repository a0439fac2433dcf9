"""Whether the DAG run a mapped task's lineage comes from goes on, read from the DAG's events.

A mapped task's instances (``.expand()``) each run as a run of one job; its lineage is that of
the DAG run of its latest completed instance (``JobFold.latest_completed_group``). While that
DAG run goes on, instances still waiting in the queue have sent nothing: those that ran in the
DAG's run before it are described by their runs there, as a failed instance is, until they run.
Once it has ended (COMPLETE, FAIL or ABORT), an instance it did not run is no longer mapped (the
list shrank) and describes nothing. Only the DAG's own events tell the two apart (the provider
sends a DAG run's START and its end as the DAG's job): ``with_dag_runs_under_way`` gives such a
job the DAG's run before the one going on (``JobFold.dag_run_before``). Without the DAG's events
(``emit_dag_events: false``, ``dag.test()``), or for a DAG run another DAG triggered (its
instances are grouped by the triggering run), nothing is set. Pure.
"""

from __future__ import annotations

from dataclasses import replace

from airflow_blindata.events import AirflowDagRunFacet, EventType, facet_of
from airflow_blindata.mapper.fold import Fold, JobFold, RunFold, dag_run_key

__all__ = ["with_dag_runs_under_way"]

_ENDED = frozenset({EventType.COMPLETE, EventType.FAIL, EventType.ABORT})


def with_dag_runs_under_way(fold: Fold) -> Fold:
    """``fold`` with ``JobFold.dag_run_before`` set where it applies; the same fold else."""
    jobs: list[JobFold] = []
    for job in fold.jobs:
        before = _run_before(job, fold)
        jobs.append(job if before is None else replace(job, dag_run_before=before))
    if all(new is old for new, old in zip(jobs, fold.jobs, strict=True)):
        return fold
    return Fold(jobs=jobs, datasets=fold.datasets)


def _run_before(job: JobFold, fold: Fold) -> str | None:
    """For a mapped task whose latest completed group's DAG run (none completed: its latest
    run's) has not ended, the run of its DAG that started last before that one (DAG runs may
    overlap); ``None`` otherwise. Of a task none of whose instances completed yet, those of the
    DAG run before that have not run in the one going on keep their lineage as it goes on
    (``JobFold.never_completed_instances``; a review: every instance failed in a DAG run, and
    the next one's first instance made the others' flows go, and come back)."""
    group = job.latest_completed_group or ([job.latest] if job.latest is not None else [])
    if not group or not any(run.map_index is not None and run.map_index >= 0 for run in group):
        return None
    latest = group[-1]
    parent = latest.parent
    if parent is None or parent.run.run_id != latest.parent_run_id:
        return None  # no DAG run, or one another DAG triggered: grouped by the triggering run
    dag = fold.job(latest.parent_job) if latest.parent_job is not None else None
    if dag is None:
        return None
    going = next((run for run in dag.runs if run.run_id == parent.run.run_id), None)
    if going is None or going.state in _ENDED:
        return None
    # Which Airflow DAG run an OpenLineage one is: the task's own runs under it say (the fold
    # keeps no facet of a DAG's older runs), else its ``airflowDagRun`` facet (a review)
    named = {run.parent_run_id: run.dag_run for run in job.runs if run.dag_run is not None}

    def airflow_run(dag_run: RunFold) -> str | None:
        return named.get(dag_run.run_id) or _airflow_run(dag_run)

    this = latest.dag_run or airflow_run(going)
    started = [  # not a clear of the same Airflow DAG run: a new OpenLineage run each time
        run
        for run in dag.runs
        if run.first_event_time < going.first_event_time
        and (this is None or airflow_run(run) != this)
    ]
    if not started:
        return None
    before = max(started, key=lambda run: (run.first_event_time, run.run_id))
    key = airflow_run(before) if latest.dag_run is not None else None
    return before.run_id if key is None else dag_run_key(key)  # as the fold keys the runs


def _airflow_run(dag_run: RunFold) -> str | None:
    """The Airflow run id of a run of a DAG (its ``airflowDagRun`` facet's ``dagRun.run_id``)."""
    facet = facet_of(dag_run.run_facets, AirflowDagRunFacet)
    run_id = facet.dag_run.get("run_id") if facet is not None else None
    return run_id if isinstance(run_id, str) and run_id else None
