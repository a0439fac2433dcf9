"""The provider's own tasks are left out of capture: the sync is not lineage to catalogue.

Left out, with no configuration: the task events of ``BlindataSnapshotOperator`` and
``BlindataCleanupOperator`` (and subclasses), and the DAG events of a DAG whose tasks are all such
operators. The listener asks before it extracts (``is_own_task_instance``, ``is_own_dag``); the
transport reads the events (``is_own_event``), and for SQL hook lineage's per-statement events
uses the job names noted by ``remember_own_task``. Only names are compared, so this module
imports nothing: it is read in every process that loads the plugin.

Why: docs/capture.md#leaving-out-the-providers-own-tasks-captureownpy
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = [
    "OWN_OPERATORS",
    "is_own_dag",
    "is_own_event",
    "is_own_operator",
    "is_own_task_instance",
    "remember_own_task",
]

log = logging.getLogger(__name__)

_MODULE = "airflow_blindata.operators.blindata"
OWN_OPERATORS = frozenset(
    f"{_MODULE}.{name}" for name in ("BlindataSnapshotOperator", "BlindataCleanupOperator")
)
"""The operators whose events capture leaves out (their subclasses too)."""
_OWN_BASE = f"{_MODULE}._BlindataSyncOperator"
_OWN_NAMES = frozenset(path.rpartition(".")[2] for path in OWN_OPERATORS)

_OWN_TASK_JOBS: set[str] = set()
"""The OpenLineage job names (``<dag_id>.<task_id>``) of the provider's own tasks seen by this
process; children forked afterwards inherit them."""


def remember_own_task(task_instance: Any) -> None:
    """Note that ``task_instance``'s task is one of the provider's own, so that the events
    emitted for it afterwards (its per-statement ones too) are left out: called before the
    OpenLineage provider extracts them and forks the child that emits them."""
    dag_id = getattr(task_instance, "dag_id", None)
    task_id = getattr(task_instance, "task_id", None)
    if isinstance(dag_id, str) and isinstance(task_id, str):
        _OWN_TASK_JOBS.add(f"{dag_id}.{task_id}")


def _path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def is_own_operator(task: Any) -> bool:
    """Whether ``task`` is one of the provider's operators: an operator object (a subclass
    counts), a serialized one as the scheduler and the API server hold it, or a mapped one."""
    if task is None:
        return False
    module, name = getattr(task, "_task_module", None), getattr(task, "task_type", None)
    if isinstance(module, str) and isinstance(name, str) and f"{module}.{name}" in OWN_OPERATORS:
        return True  # serialized operators: no class to look at
    operator_class = getattr(task, "operator_class", None)  # mapped operators
    classes = operator_class.__mro__ if isinstance(operator_class, type) else type(task).__mro__
    return any(_path(cls) in OWN_OPERATORS or _path(cls) == _OWN_BASE for cls in classes)


def is_own_task_instance(task_instance: Any) -> bool:
    """Whether a task instance (the task runner's, or a database row changed by hand in the UI,
    which has no task object but the operator's class name) runs one of the provider's
    operators."""
    task = getattr(task_instance, "task", None)
    if task is not None:
        return is_own_operator(task)
    return getattr(task_instance, "operator", None) in _OWN_NAMES


def is_own_dag(dag: Any) -> bool:
    """Whether every task of ``dag`` (an SDK or a serialized DAG) is one of the provider's
    operators."""
    tasks = list(getattr(dag, "tasks", None) or ())
    return bool(tasks) and all(is_own_operator(task) for task in tasks)


# Events are JSON objects here (dicts): ``dict`` checks, not ``Mapping``, whose first abstract
# check costs the child forked for each event about half a millisecond.
def _facets(data: dict[str, Any], part: str) -> dict[str, Any]:
    holder = data.get(part)
    facets = holder.get("facets") if isinstance(holder, dict) else None
    return facets if isinstance(facets, dict) else {}


def _own_class(path: Any, name: Any) -> bool:
    if isinstance(path, str) and path:
        return path in OWN_OPERATORS
    return isinstance(name, str) and name in _OWN_NAMES  # providers that send the name only


def is_own_event(data: Any, *, ask_airflow: bool = False) -> bool:
    """Whether an OpenLineage event (as a dict) is one of the provider's own tasks or DAGs.

    ``ask_airflow``: for the end of an Airflow DAG run, whose event names no operator, look the
    run's task instances up in Airflow's metadata database (only where the OpenLineage provider
    emits DAG events: the scheduler, the API server, ``dag.test()``). Anything unexpected
    answers False: the event is kept.
    """
    if not isinstance(data, dict):
        return False
    try:
        if _OWN_TASK_JOBS and _of_an_own_task(data):
            return True
        run_facet = _facets(data, "run").get("airflow")
        task = run_facet.get("task") if isinstance(run_facet, dict) else None
        if isinstance(task, dict):  # a task event
            return _own_class(task.get("operator_class_path"), task.get("operator_class"))
        job_type = _facets(data, "job").get("jobType")
        if not (
            isinstance(job_type, dict)
            and job_type.get("integration") == "AIRFLOW"
            and job_type.get("jobType") == "DAG"
        ):
            return False
        job_facet = _facets(data, "job").get("airflow")
        tasks = job_facet.get("tasks") if isinstance(job_facet, dict) else None
        if isinstance(tasks, dict) and tasks:  # a DAG START lists its tasks
            return all(
                isinstance(each, dict) and _own_class(each.get("operator"), None)
                for each in tasks.values()
            )
        if ask_airflow:
            return _own_dag_run(data)
    except Exception:
        log.debug("Could not tell whether an event is the provider's own", exc_info=True)
    return False


def _of_an_own_task(data: dict[str, Any]) -> bool:
    """Whether the event is of a remembered own task, or a per-statement event under one."""
    job = data.get("job")
    if isinstance(job, dict) and job.get("name") in _OWN_TASK_JOBS:
        return True
    parent = _facets(data, "run").get("parent")
    parent_job = parent.get("job") if isinstance(parent, dict) else None
    return isinstance(parent_job, dict) and parent_job.get("name") in _OWN_TASK_JOBS


def _own_dag_run(data: dict[str, Any]) -> bool:
    """Whether every task instance of the DAG run an Airflow DAG event describes ran one of the
    provider's operators (``airflowDagRun`` names the run)."""
    dag_run_facet = _facets(data, "run").get("airflowDagRun")
    dag_run = dag_run_facet.get("dagRun") if isinstance(dag_run_facet, dict) else None
    if not isinstance(dag_run, dict):
        return False
    dag_id, run_id = dag_run.get("dag_id"), dag_run.get("run_id")
    if not (isinstance(dag_id, str) and isinstance(run_id, str)):
        return False
    from airflow.models.dagrun import DagRun

    operators = {ti.operator for ti in DagRun.fetch_task_instances(dag_id=dag_id, run_id=run_id)}
    return bool(operators) and operators <= _OWN_NAMES
