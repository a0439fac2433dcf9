"""Orchestration flows of seed 001: how jobs depend on each other, next to how data moves.

They join job entities, so they exist only with ``processLayer``, and come only from completed
runs — except the Airflow task graph, which is the DAG's description rather than an observation:

* ``parent`` run facet: parent job → child job;
* ``jobDependencies`` run facet: upstream job → downstream job (one flow when both jobs report
  the dependency: the downstream job's);
* ``airflow`` job facet of a DAG: task → each of its ``downstream_task_ids``; the same graph is
  read from the ``airflow`` run facet of each task's latest completed run, or latest run when it
  never completed (a task that only failed still has its edges, as in the DAG facet), because
  the DAG facet comes only with the DAG's START event, which ``dag.test()`` and an emission
  policy with ``emit_dag_events: false`` never send. Both give the same flows, owned by the
  DAG's orchestration scope.

They are marked as orchestration three times over: the scope ends with ``#orchestration``, the
name with ``@orchestration``, and the description starts with "Orchestration". A job at either
end that has no entity is reported as ``UNRESOLVED_ORCHESTRATION_TARGET`` and the flow dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Set

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import (
    AirflowJobFacet,
    AirflowRunFacet,
    AirflowTask,
    JobDependenciesRunFacet,
    facet_of,
)
from airflow_blindata.mapper.flows import FlowCollector, by_producer
from airflow_blindata.mapper.fold import Fold, JobFold, JobKey, RunFold
from airflow_blindata.mapper.plan import CatalogPlan, FlowEnd
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.systems import SystemResolver

__all__ = ["map_orchestration"]

ORCHESTRATION_LABEL = "orchestration"


def _add(
    collector: FlowCollector, owner: JobFold, source: JobKey, target: JobKey, how: str
) -> None:
    label = f"{owner.key.namespace}/{owner.key.name}"
    origin = collector.job(source, owner=label, code=GapCode.UNRESOLVED_ORCHESTRATION_TARGET)
    end = collector.job(target, owner=label, code=GapCode.UNRESOLVED_ORCHESTRATION_TARGET)
    if origin is None or end is None:
        return
    producer = owner.latest.producer if owner.latest else ""
    collector.add(
        scope=job_scope(owner.key.namespace, owner.key.name, orchestration=True),
        owner_label=ORCHESTRATION_LABEL,
        kind="orchestration",
        evidence="orchestration",
        source=FlowEnd(origin),
        target=FlowEnd(end),
        description=f"Orchestration: {how}, {by_producer(producer)}.",
    )


def _observed(
    job: JobFold,
    run: RunFold | None,
    collector: FlowCollector,
    upstream_of: set[tuple[JobKey, JobKey]],
) -> None:
    if run is None:
        return
    parent = run.parent_job
    if parent is not None and parent != job.key:
        _add(collector, job, parent, job.key, "the run was started by its parent (parent facet)")
    dependencies = facet_of(run.run_facets, JobDependenciesRunFacet)
    if dependencies:
        for upstream in dependencies.upstream or ():
            key = JobKey(upstream.job.namespace, upstream.job.name)
            _add(collector, job, key, job.key, "upstream dependency (jobDependencies facet)")
        for downstream in dependencies.downstream or ():
            key = JobKey(downstream.job.namespace, downstream.job.name)
            if (job.key, key) in upstream_of:
                continue  # the downstream job names this one as its upstream: its flow
            _add(collector, job, job.key, key, "downstream dependency (jobDependencies facet)")


def _upstream_pairs(fold: Fold) -> set[tuple[JobKey, JobKey]]:
    """(upstream, job) for each upstream the latest completed run of a job of the fold names in
    its ``jobDependencies`` facet. A dependency both ends report (the upstream job's
    ``downstream``, the downstream job's ``upstream``) is one flow, the downstream job's: two
    flows of the same ends, one in each job's scope, were published."""
    pairs: set[tuple[JobKey, JobKey]] = set()
    for job in fold.jobs:
        run = job.latest_completed
        dependencies = facet_of(run.run_facets, JobDependenciesRunFacet) if run else None
        for upstream in (dependencies.upstream if dependencies else None) or ():
            pairs.add((JobKey(upstream.job.namespace, upstream.job.name), job.key))
    return pairs


_THROUGH = "Airflow task graph (downstream task, through tasks that emit no events)"


def _task_graph(job: JobFold, collector: FlowCollector, fold: Fold) -> None:
    graph = facet_of(job.facets, AirflowJobFacet)
    if graph is None:
        return
    passed = _passed_over(job, graph.tasks, fold)
    barriers = _barriers(graph.tasks, passed)
    for task_id, task in sorted(graph.tasks.items()):
        if task_id in passed:
            continue  # its upstream tasks are linked to its downstream ones instead
        source = JobKey(job.key.namespace, f"{job.key.name}.{task_id}")
        linked, cut = _emitting(graph.tasks, task.downstream_task_ids, passed, barriers)
        if cut:
            collector.plan.report.count("orchestrationThroughSkipped")
        for downstream, through in linked:
            target = JobKey(job.key.namespace, f"{job.key.name}.{downstream}")
            why = _THROUGH if through else "Airflow task graph (downstream task)"
            _add(collector, job, source, target, why)


def _passed_over(dag: JobFold, tasks: Mapping[str, AirflowTask], fold: Fold) -> set[str]:
    """The tasks the DAG's facet says emit no events (``emits_ol_events: false``: an
    ``EmptyOperator``, an operator OpenLineage is disabled for) and that have no job in the
    fold: no job entity is made of them, so a link to one stayed unresolved at every sync and
    ``a >> gate >> b`` joined nothing (a probe of schedulers). A task that ran and emitted all
    the same (the DAG changed) keeps its links (a review)."""
    return {
        task_id
        for task_id, task in tasks.items()
        if task.emits_ol_events is False
        and fold.job(JobKey(dag.key.namespace, f"{dag.key.name}.{task_id}")) is None
    }


_MAX_PASSED = 200
"""Tasks that emit no events in one DAG, at most, for links through them: past this none is
passed over (their links are counted in ``orchestrationThroughSkipped``)."""

_MAX_THROUGH = 50
"""Tasks a task is linked to through tasks that emit no events, at most: a barrier between
wide stages (``[x0 … x199] >> barrier >> [y0 … y199]``) would give every pair (40,000 flows,
a review); past this the links through it are not made (``orchestrationThroughSkipped``)."""


def _barriers(tasks: Mapping[str, AirflowTask], passed: Set[str]) -> set[str]:
    """The passed tasks whose links through would be more than ``_MAX_THROUGH``: their
    upstream tasks times the tasks they lead to (``[x0 … x199] >> barrier >> [y0 … y49]``
    would give 10,000 flows, a review)."""
    if len(passed) > _MAX_PASSED:
        return set(passed)  # walking from each would cost their square (a probe: 5,000, 15 s)
    upstream: dict[str, int] = {}
    for task in tasks.values():
        for task_id in set(task.downstream_task_ids):
            upstream[task_id] = upstream.get(task_id, 0) + 1
    found: set[str] = set()
    for task_id in passed:
        ups = upstream.get(task_id, 0)
        if ups and _reaches_more(tasks, task_id, passed, _MAX_THROUGH // ups):
            found.add(task_id)
    return found


def _reaches_more(
    tasks: Mapping[str, AirflowTask], start: str, passed: Set[str], limit: int
) -> bool:
    """Whether ``start`` leads to more than ``limit`` tasks that are not passed over; stops as
    soon as it does (a chain of thousands of silent tasks was walked from each, a probe)."""
    downstream = tasks[start].downstream_task_ids if start in tasks else ()
    return any(count > limit for count, _ in enumerate(_through(tasks, downstream, passed), 1))


def _through(
    tasks: Mapping[str, AirflowTask],
    downstream: Iterable[str],
    passed: Set[str],
    barriers: Set[str] = frozenset(),
) -> Iterator[str | None]:
    """The tasks ``downstream`` leads to, each once, a ``passed`` task followed to its own
    downstream tasks (but a barrier, for which ``None`` is yielded)."""
    seen: set[str] = set()
    stack = list(downstream)
    while stack:
        task_id = stack.pop()
        if task_id in seen:
            continue
        seen.add(task_id)
        if task_id in barriers:
            yield None
        elif task_id in passed:
            stack.extend(tasks[task_id].downstream_task_ids if task_id in tasks else ())
        else:
            yield task_id


def _emitting(
    tasks: Mapping[str, AirflowTask],
    downstream: Iterable[str],
    passed: Set[str],
    barriers: Set[str],
) -> tuple[list[tuple[str, bool]], bool]:
    """The tasks of ``downstream`` a task is linked to, and whether through a passed task (each
    one ``passed`` over is followed to its own downstream tasks, but a barrier's); and whether
    links through them were left out, too many (``_MAX_THROUGH``, ``_barriers``)."""
    direct = sorted({task_id for task_id in downstream if task_id not in passed})
    found: set[str] = set()
    cut = False
    silent = [task_id for task_id in downstream if task_id in passed]
    for task_id in _through(tasks, silent, passed, barriers):
        if task_id is None:
            cut = True
        elif task_id not in direct:
            found.add(task_id)
    if len(found) > _MAX_THROUGH:
        return [(task_id, False) for task_id in direct], True
    linked = [(task_id, False) for task_id in direct] + [(t, True) for t in sorted(found)]
    return linked, cut


def _task_graph_of_run(
    job: JobFold,
    run: RunFold | None,
    fold: Fold,
    collector: FlowCollector,
    silent: dict[JobKey, tuple[set[str], set[str]]],
) -> None:
    airflow = facet_of(run.run_facets, AirflowRunFacet) if run else None
    if airflow is None:
        return
    dag_id = airflow.dag.get("dag_id")
    downstream = _task_ids(airflow.task.get("downstream_task_ids"))
    if not isinstance(dag_id, str) or not downstream:
        return
    owner = fold.job(JobKey(job.key.namespace, dag_id)) or job
    graph = facet_of(owner.facets, AirflowJobFacet) if owner is not job else None
    linked = [(task_id, False) for task_id in downstream]
    if graph is not None:
        known = silent.get(owner.key)
        if known is None:  # once per DAG, not once per task run (a probe)
            passed = _passed_over(owner, graph.tasks, fold)
            known = silent[owner.key] = (passed, _barriers(graph.tasks, passed))
        linked, cut = _emitting(graph.tasks, downstream, *known)
        if cut:
            collector.plan.report.count("orchestrationThroughSkipped")
    for task_id, through in linked:
        target = JobKey(job.key.namespace, f"{dag_id}.{task_id}")
        why = _THROUGH if through else "Airflow task graph (downstream task)"
        _add(collector, owner, job.key, target, why)


def _task_ids(value: object) -> list[str]:
    """``downstream_task_ids`` as the provider sends it: a list, or the text of a Python list.

    Any other text is none: also one that nests too deeply to parse (``[------…1]`` raises
    ``RecursionError``, deeper ``MemoryError``) or makes a set of lists (``TypeError``), which
    stopped the mapping of every snapshot."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return []
    if not isinstance(value, list | tuple | set):
        return []
    return sorted(str(item) for item in value)


def map_orchestration(
    fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
) -> None:
    if not definition.process_layer:
        return
    collector = FlowCollector(fold, definition, resolver, plan)
    silent: dict[JobKey, tuple[set[str], set[str]]] = {}  # a DAG's passed tasks and barriers
    upstream_of = _upstream_pairs(fold)
    for job in fold.jobs:
        run = job.latest_completed  # both kinds of observed flows come from it
        _observed(job, run, collector, upstream_of)
        _task_graph(job, collector, fold)
        _task_graph_of_run(job, run or job.latest, fold, collector, silent)  # the DAG's description
    flows = collector.flows()
    plan.flows.extend(flows)
    plan.report.count("orchestrationFlows", len(flows))
