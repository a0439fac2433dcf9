"""``build``: events + job definition + known Systems → ``CatalogPlan``.

Like sqlglot's optimizer, the mapping is a fold over an ordered tuple of passes, each a pure
function that reads the fold and adds to the plan. Lineage and quality add their passes here.

``build_groups`` is the snapshot's entry: it takes the events one job at a time (the store reads
them that way), folds each group and lets its events go before the next is read, so that memory
follows the catalog and not the history (see ``FoldBuilder``). ``build`` is the same over events
given all at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.bucket import report_ambiguous_tables
from airflow_blindata.mapper.catalog import map_datasets, map_jobs
from airflow_blindata.mapper.dag_runs import with_dag_runs_under_way
from airflow_blindata.mapper.fold import Fold, FoldBuilder
from airflow_blindata.mapper.fold.reading import read_job_events
from airflow_blindata.mapper.lineage import map_lineage
from airflow_blindata.mapper.orchestration import map_orchestration
from airflow_blindata.mapper.plan import CatalogPlan, PlannedSystem
from airflow_blindata.mapper.quality import map_quality, quality_retainer
from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.retirement import retire_removed_tasks
from airflow_blindata.mapper.sql import SqlHashes
from airflow_blindata.mapper.sql_outputs import with_outputs_from_sql
from airflow_blindata.mapper.systems import KnownSystem, SystemResolver

__all__ = ["PASSES", "Pass", "build", "build_groups", "plan_of_fold"]

Pass = Callable[[Fold, JobDefinition, SystemResolver, CatalogPlan], None]

PASSES: tuple[Pass, ...] = (map_datasets, map_jobs, map_lineage, map_orchestration, map_quality)
"""The passes, in order: entities first, so that flows find their ends."""


def build(
    events: Iterable[Any],
    definition: JobDefinition,
    known_systems: Iterable[KnownSystem] = (),
    *,
    sql_hashes: Mapping[str, str] | None = None,
) -> CatalogPlan:
    """The plan for ``events`` (raw JSON, dicts, or parsed events); never raises on bad input."""
    return build_groups([events], definition, known_systems, sql_hashes=sql_hashes)


def build_groups(
    groups: Iterable[Iterable[Any]],
    definition: JobDefinition,
    known_systems: Iterable[KnownSystem] = (),
    *,
    sql_hashes: Mapping[str, str] | None = None,
) -> CatalogPlan:
    """The plan for events given group by group, every event of a job in one group.

    ``sql_hashes`` is the SQL hash memo of an earlier plan (``plan.sql_hashes.used``): known SQL
    texts are not parsed again.
    """
    report = Report()
    builder = FoldBuilder(retain=quality_retainer(definition))
    for group in groups:
        builder.add(read_job_events(group, report, quality=definition.quality.enabled))
    return plan_of_fold(builder.result(), report, definition, known_systems, sql_hashes=sql_hashes)


def plan_of_fold(
    folded: Fold,
    report: Report,
    definition: JobDefinition,
    known_systems: Iterable[KnownSystem] = (),
    *,
    sql_hashes: Mapping[str, str] | None = None,
    used_for_jobs: Sequence[str] = (),
) -> CatalogPlan:
    """The passes over a fold; ``report`` holds what reading the events found already.
    ``used_for_jobs``: the Systems earlier syncs put the jobs in (``SystemResolver``)."""
    folded, retired = retire_removed_tasks(folded)
    for job, why in sorted(retired.items(), key=lambda item: str(item[0])):
        report.retire(str(job), why)
    folded = with_dag_runs_under_way(folded)
    folded = with_outputs_from_sql(folded, report)
    resolver = SystemResolver(definition, list(known_systems), report, used_for_jobs)
    plan = CatalogPlan(definition_uuid=definition.uuid, report=report)
    plan._sql_hashes = SqlHashes(sql_hashes)
    for step in PASSES:
        step(folded, definition, resolver, plan)
    resolver.report_merged_stores()
    report_ambiguous_tables(plan)
    plan.systems = _without_systems_of_gone_tables(resolver.systems, plan)
    report.count("systems", len(plan.systems))
    report.count("entities", len(plan.entities))
    report.count("fields", len(plan.fields))
    report.count("routines", len(plan.routines))
    report.count("sqlTextsParsed", plan.sql_hashes.parsed)
    plan.entities.sort(key=lambda e: (e.key.system, e.key.schema_ or "", e.key.name))
    return plan


def _without_systems_of_gone_tables(
    systems: list[PlannedSystem], plan: CatalogPlan
) -> list[PlannedSystem]:
    """``systems`` but those the plan would create only for tables dropped or renamed away
    (a Spark ``DROP TABLE`` sent alone under its catalog's name): nothing lands on such a
    System, and an empty one would be created in Blindata."""
    found = plan.dataset_entities.found
    gone = plan.dataset_entities.gone
    only_gone = {
        system for (key, system), entity in found.items() if entity is None and key in gone
    }
    if not only_gone:
        return systems
    used = {system for (_, system), entity in found.items() if entity is not None}
    used.update(entity.key.system for entity in plan.entities)
    used.update(end.entity.system for flow in plan.flows for end in (flow.source, flow.target))
    used.update(routine.system for routine in plan.routines)
    if plan.quality is not None:
        used.update(check.entity.system for check in plan.quality.checks)
        used.update(record.entity.system for record in plan.quality.records)
    return [s for s in systems if not (s.create and s.name in only_gone and s.name not in used)]
