"""Whether the DAG run a mapped task's lineage comes from goes on, read from the DAG's events.

A mapped task's instances (``.expand()``) each run as a run of one job; its lineage is that of
the DAG run of its latest completed instance (``JobFold.latest_completed_group``). While that
DAG run goes on, instances still waiting in the queue have sent nothing: they are described by
their runs of an earlier DAG run, as a failed instance is, until they run. Once it has completed,
an instance it did not run is no longer mapped (the list shrank) and describes nothing. Only the
DAG's own events tell the two apart (the provider sends a DAG run's START and its end as the
DAG's job): ``with_dag_runs_under_way`` marks the jobs whose group's DAG run is its DAG's latest
run and has not completed. Without the DAG's events (``emit_dag_events: false``, ``dag.test()``)
nothing is marked. Pure.
"""

from __future__ import annotations

from dataclasses import replace

from airflow_blindata.events import EventType
from airflow_blindata.mapper.fold import Fold, JobFold

__all__ = ["with_dag_runs_under_way"]


def with_dag_runs_under_way(fold: Fold) -> Fold:
    """``fold`` with ``JobFold.parent_under_way`` set where it applies; the same fold else."""
    jobs: list[JobFold] = []
    for job in fold.jobs:
        jobs.append(replace(job, parent_under_way=True) if _under_way(job, fold) else job)
    if all(new is old for new, old in zip(jobs, fold.jobs, strict=True)):
        return fold
    return Fold(jobs=jobs, datasets=fold.datasets)


def _under_way(job: JobFold, fold: Fold) -> bool:
    """Whether the job is a mapped task whose latest completed group's DAG run is the latest
    run of its DAG, and that run has not completed."""
    group = job.latest_completed_group
    if not group or not any(run.map_index is not None and run.map_index >= 0 for run in group):
        return False
    latest = group[-1]
    dag = fold.job(latest.parent_job) if latest.parent_job is not None else None
    if dag is None or dag.latest is None:
        return False
    return dag.latest.run_id == latest.parent_run_id and dag.latest.state is not EventType.COMPLETE
