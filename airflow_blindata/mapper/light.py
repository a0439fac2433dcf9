"""The part of a catalog plan that a light sync publishes: what some jobs describe.

A light sync (``sync.runner.run_light``) publishes only the jobs that received events since the
last sync of the definition. It maps every job as the full snapshot does (the same plan: kept
folds are loaded, the changed jobs' new events added), then keeps of the plan what those jobs
describe, so that every object it sends is the very object the full snapshot would send — the
same description, fields, positions and flows, whichever other job also describes a dataset:

* their job entities (``openLineageJobScope``), routines, data and orchestration flows (by
  scope), quality checks, results and profiling records (by job scope);
* the entities of the datasets their events mention, and of every end of those flows and checks
  (a parent job's entity, which an orchestration flow ends on), with their fields;
* the Systems of all of these.

The plan's report (counters and gaps) stays the whole plan's, but for the counters of what the
plan holds, which count the part kept. Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Iterable, Set

from airflow_blindata.mapper.fold import DatasetKey
from airflow_blindata.mapper.plan import CatalogPlan, EntityKey, QualityPlan
from airflow_blindata.mapper.scopes import job_scope

__all__ = ["JOB_SCOPE", "plan_of_jobs"]

JOB_SCOPE = "openLineageJobScope"


def plan_of_jobs(
    plan: CatalogPlan,
    jobs: Iterable[tuple[str, str]],
    datasets: Set[DatasetKey] = frozenset(),
) -> CatalogPlan:
    """What ``jobs`` (namespace, name, as their events name them) describe in ``plan``, with
    the entities of ``datasets`` (the datasets those jobs' events mention)."""
    jobs = sorted(set(jobs))
    scopes = {job_scope(namespace, name) for namespace, name in jobs}
    orchestration = {job_scope(namespace, name, orchestration=True) for namespace, name in jobs}
    flows = [flow for flow in plan.flows if flow.scope in scopes or flow.scope in orchestration]
    routines = [routine for routine in plan.routines if routine.job in scopes]
    quality = _quality_of(plan.quality, scopes)
    keys: set[EntityKey] = {
        key
        for (dataset, _), key in plan.dataset_entities.found.items()
        if key is not None and dataset in datasets
    }
    of_datasets = len(keys)
    for flow in flows:
        keys.add(flow.source.entity)
        keys.add(flow.target.entity)
    if quality is not None:
        keys.update(check.entity for check in quality.checks)
        keys.update(record.entity for record in quality.records)
    entities = [
        entity
        for entity in plan.entities
        if entity.key in keys
        or any(name == JOB_SCOPE and value in scopes for name, value in entity.properties)
    ]
    kept = {entity.key for entity in entities}
    fields = [field for field in plan.fields if field.entity in kept]
    used = {key.system for key in kept} | {routine.system for routine in routines}
    systems = [system for system in plan.systems if system.name in used]
    report = plan.report.model_copy(deep=True)
    for counter, count in (
        ("systems", len(systems)),
        ("entities", len(entities)),
        ("fields", len(fields)),
        ("routines", len(routines)),
        ("flows", sum(1 for flow in flows if flow.kind != "orchestration")),
        ("orchestrationFlows", sum(1 for flow in flows if flow.kind == "orchestration")),
        ("jobs", len(jobs)),
        ("datasets", len(datasets)),
        ("datasetEntities", of_datasets),
    ):
        _recount(report.counters, counter, count)
    if quality is not None:
        for counter, count in (
            ("qualityChecks", len(quality.checks)),
            ("qualityResults", len(quality.results)),
            ("profilingRecords", len(quality.records)),
        ):
            _recount(report.counters, counter, count)
    part = CatalogPlan(
        definition_uuid=plan.definition_uuid,
        systems=systems,
        entities=entities,
        fields=fields,
        routines=routines,
        flows=flows,
        quality=quality,
        report=report,
    )
    part._sql_hashes = plan.sql_hashes
    part._dataset_entities = plan.dataset_entities
    return part


def _recount(counters: dict[str, int], counter: str, count: int) -> None:
    """A counter set to ``count`` (absent when zero, as the mapper leaves it)."""
    if count:
        counters[counter] = count
    else:
        counters.pop(counter, None)


def _quality_of(quality: QualityPlan | None, scopes: Set[str]) -> QualityPlan | None:
    if quality is None:
        return None
    results = [result for result in quality.results if result.job in scopes]
    # a check two jobs assert is described by its newest run, maybe of a job with nothing
    # new: it is kept for the results of the others, which are coloured by it (``_Colours``)
    resulted = {result.check for result in results}
    return QualityPlan(
        suite_code=quality.suite_code,
        jobs=[job for job in quality.jobs if job in scopes],
        checks=[c for c in quality.checks if c.job in scopes or c.code in resulted],
        results=results,
        records=[record for record in quality.records if record.job in scopes],
    )
