"""SQL jobs: one SCRIPT routine each, its statement in the query bucket, analysed when it changed.

Seed 001, "SQL in the events": the routine holds the SQL with ``openLineageSqlHash``; the
statement that Blindata's SQL lineage analyses lives in the bucket ``queryBucketName``, whose
Systems are the ones the job's datasets are on (the analysis resolves table names there). The
analysis is asynchronous, so a new or changed SQL reports ``QLP_PENDING`` first, and its outcome
(``QLP_ANALYSIS_ERROR``) shows in a later run. Statements and the flows their analysis creates
belong to the routine and go with it; they carry no ``ol:`` scope.

A statement is submitted when the SQL hash changed, when it is missing (a previous run failed
half-way), or when its text is not the routine's. A statement that was only partially analysed
(its SQL names tables or columns Blindata did not hold then) is submitted again when the catalog
around it changed: the routine keeps ``openLineageAnalysisContext``, a digest of the catalogued
tables its SQL names and of their columns, and a different digest means that what was missing may
be there now (a writer job catalogued its table, or a failed upload went through). At most
``REANALYSIS_LIMIT`` routines take a new digest per snapshot; the others keep their old one and
come next time.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Sequence

from airflow_blindata.blindata import BlindataConflictError, BlindataError, BlindataStatusError
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    QueryBucket,
    Ref,
    RoutineType,
    SystemRoutine,
)
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB, CatalogPlan, PlannedRoutine, Property
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.sql import names_in_sql, sqlglot_dialect
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.entities import CatalogIndex
from airflow_blindata.sync.properties import (
    ANALYSIS_CONTEXT_PROPERTY,
    JOB_SCOPE_PROPERTY,
    OWNER_PROPERTY,
    SQL_DIALECT_PROPERTY,
    SQL_HASH_PROPERTY,
    STORE_PROPERTY,
    values_of,
)
from airflow_blindata.sync.statements import RoutineState, sync_statements

__all__ = ["REANALYSIS_LIMIT", "analysis_contexts", "routine_key", "sync_routines"]

log = logging.getLogger(__name__)

KIND = "routine"
REANALYSIS_LIMIT = 200
"""Routines whose analysis context may change in one snapshot (each may cost an analysis)."""
BUCKET_DESCRIPTION = "SQL of OpenLineage jobs, analysed for lineage (airflow-blindata)"

RoutineKey = tuple[str, str, str]


def routine_key(catalog: str | None, schema: str | None, name: str) -> RoutineKey:
    return (catalog or "", schema or "", name)


def _label(routine: PlannedRoutine) -> str:
    return f"{routine.system}:{routine.catalog}/{routine.name}"


def sync_routines(ctx: SyncContext, plan: CatalogPlan, index: CatalogIndex) -> None:
    """Upload the routines, then bring their statements in line and read their analysis."""
    if not plan.routines:
        return
    by_system: dict[str, list[PlannedRoutine]] = defaultdict(list)
    for routine in plan.routines:
        by_system[routine.system].append(routine)
    rows: list[tuple[str, SystemRoutine]] = []
    before: dict[str, SystemRoutine | None] = {}
    contexts = analysis_contexts(plan, index)
    changed: set[str] = set()
    ctx.progress.start("routines", len(plan.routines))
    for name, routines in sorted(by_system.items()):
        system = index.systems.get(name)
        if system is None:
            for routine in routines:
                ctx.report.fail(KIND, _label(routine), f"its System {name!r} is not available")
            continue
        stored = _existing(ctx, system.uuid, routines, whole=system.owned and not ctx.light)
        if stored is None:
            continue
        for routine in routines:
            found = stored.get(routine_key(routine.catalog, routine.schema_, routine.name))
            before[_label(routine)] = found
            context = _context(routine, found, contexts[_label(routine)], changed, ctx.light)
            row = _row(ctx.owner, routine, system.uuid, found, context, ctx.store_id)
            rows.append((_label(routine), row))
    tally = ctx.upload(ctx.client.api.routines, rows, kind=KIND)
    ctx.progress.end()
    ctx.report.count("routinesDescribed", len(rows))
    ctx.report.count("routinesCreated", tally.created)
    ctx.report.count("routinesRefreshed", tally.updated)
    landed = [r for r in plan.routines if _label(r) in before and _label(r) not in tally.failed]
    after = {label: stored for label, stored in before.items() if stored is not None}
    after.update(_read_back(ctx, index, [r for r in landed if before[_label(r)] is None]))
    states: list[RoutineState] = []
    for routine in landed:
        if _label(routine) in after:
            label = _label(routine)
            states.append(RoutineState(routine, before[label], after[label], label in changed))
        else:
            ctx.report.fail(KIND, _label(routine), "uploaded, but Blindata does not list it")
    bucket = _bucket(ctx, _dataset_systems(plan, index))
    if bucket is None or not bucket.uuid:
        return
    sync_statements(ctx, plan, bucket.uuid, states)


def _existing(
    ctx: SyncContext, system_uuid: str, routines: Sequence[PlannedRoutine], *, whole: bool
) -> dict[RoutineKey, SystemRoutine] | None:
    api = ctx.client.api.routines
    found: dict[RoutineKey, SystemRoutine] = {}
    try:
        if whole or len(routines) > ctx.lookup_limit:
            listed = list(api.list(page_size=LIST_PAGE_SIZE, systemUuid=system_uuid))
        else:
            names = sorted({routine.name for routine in routines})
            listed = [r for name in names for r in api.list(systemUuid=system_uuid, name=name)]
    except BlindataError as exc:
        for routine in routines:
            ctx.report.fail(KIND, _label(routine), str(exc))
        return None
    for stored in listed:
        found[routine_key(stored.catalog, stored.schema_, stored.name)] = stored
    return found


def analysis_contexts(plan: CatalogPlan, index: CatalogIndex) -> dict[str, str]:
    """Routine label → a digest of the catalogued tables its SQL names, with their columns.

    A table counts when Blindata holds it (it is in ``index``) and its SQL names it, as its
    dialect reads names (``names_in_sql``: quoted in any of its quotes, with blanks, hyphens,
    dots or letters of any alphabet, case folded); its columns are those the plan describes.
    """
    columns: dict[str, set[str]] = defaultdict(set)
    for planned in plan.fields:
        columns[str(planned.entity)].add(planned.name)
    tables: dict[str, set[str]] = defaultdict(set)
    for entity in plan.entities:
        if entity.table_type != OPENLINEAGE_JOB and entity.key in index.entities:
            for name in _spellings(entity.key.name):
                tables[name].add(str(entity.key))
    contexts: dict[str, str] = {}
    for routine in plan.routines:
        names = _table_names(routine.definition, routine.dialect)
        named = sorted({key for name in names for key in tables.get(name, ())})
        text = "\n".join(f"{key}:{','.join(sorted(columns[key]))}" for key in named)
        contexts[_label(routine)] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return contexts


_QUOTING_DIALECTS = (None, "mysql", "tsql")
"""The readings of a SQL whose dialect is not known: "..." (sqlglot's own), `...` (MySQL's) and
[...] (SQL Server's) quote a name in one of them."""


def _spellings(name: str) -> set[str]:
    """A table's name (case folded) and its last dotted part: ``shop.orders`` (a MySQL table,
    named with its database), ``proj.ds.t`` (a BigQuery one), ``"my.t"`` read as two parts."""
    folded = name.casefold()
    return {folded, folded.rsplit(".", 1)[-1]}


def _table_names(sql: str, dialect: str | None) -> set[str]:
    """The last part of every name ``sql`` writes (where a table's own name is), as
    ``_spellings`` spells it; in every quoting a SQL of no known dialect may use."""
    readings = (dialect,) if sqlglot_dialect(dialect) else _QUOTING_DIALECTS
    found: set[str] = set()
    for reading in readings:
        names = names_in_sql(sql, reading)
        for name in (*names.bare, *(name for _, name in names.qualified)):
            found |= _spellings(name)
    return found


def _context(
    routine: PlannedRoutine,
    stored: SystemRoutine | None,
    context: str,
    changed: set[str],
    light: bool,
) -> str:
    """The context to write on the routine: the new one, unless the snapshot's bound is spent,
    or the sync is light. A light sync's plan holds part of the catalog (``mapper.light``): the
    tables the SQL names that other jobs describe are not in it, and its digest would move the
    full snapshot's one way and back each time, submitting an unchanged statement again."""
    if stored is None:
        return context  # a new routine: its statement is analysed now anyway
    kept = values_of(stored.additional_properties, ANALYSIS_CONTEXT_PROPERTY)
    if context in kept:
        return context
    if light and kept:
        return kept[0]
    if len(changed) >= REANALYSIS_LIMIT:
        return kept[0] if kept else context
    changed.add(_label(routine))
    return context


def _row(
    owner: str,
    routine: PlannedRoutine,
    system_uuid: str,
    stored: SystemRoutine | None,
    context: str,
    store_id: str | None = None,
) -> SystemRoutine:
    properties: list[Property] = [
        (SQL_HASH_PROPERTY, routine.sql_hash),
        (JOB_SCOPE_PROPERTY, routine.job),
        (ANALYSIS_CONTEXT_PROPERTY, context),
    ]
    if routine.dialect:
        properties.append((SQL_DIALECT_PROPERTY, routine.dialect))
    if stored is None or owner in values_of(stored.additional_properties, OWNER_PROPERTY):
        properties.append((OWNER_PROPERTY, owner))
        if store_id:  # which event store's sync wrote it last (``STORE_PROPERTY``)
            properties.append((STORE_PROPERTY, store_id))
    return SystemRoutine(
        system=Ref(uuid=system_uuid),
        catalog=routine.catalog,
        schema=routine.schema_,
        name=routine.name,
        type=RoutineType.SCRIPT,
        definition=routine.definition,
        additional_properties=AdditionalProperty.many(properties),
    )


def _read_back(
    ctx: SyncContext, index: CatalogIndex, routines: Sequence[PlannedRoutine]
) -> dict[str, SystemRoutine]:
    """Every landed routine as Blindata holds it now (the new ones have a uuid only now)."""
    by_system: dict[str, list[PlannedRoutine]] = defaultdict(list)
    for routine in routines:
        by_system[routine.system].append(routine)
    found: dict[str, SystemRoutine] = {}
    for name, planned in sorted(by_system.items()):
        system = index.systems[name]
        stored = _existing(ctx, system.uuid, planned, whole=system.owned and not ctx.light)
        for routine in planned:
            routine_now = (stored or {}).get(
                routine_key(routine.catalog, routine.schema_, routine.name)
            )
            if routine_now is not None and routine_now.uuid:
                found[_label(routine)] = routine_now
    return found


def _dataset_systems(plan: CatalogPlan, index: CatalogIndex) -> dict[str, str]:
    """The Systems the job's tables are on, uuid → name: where the analysis must find them."""
    names = {
        entity.key.system
        for entity in plan.entities
        if entity.table_type != OPENLINEAGE_JOB and entity.key in index.entities
    }
    return dict(sorted((index.systems[name].uuid, name) for name in names if name in index.systems))


def _bucket(ctx: SyncContext, systems: dict[str, str]) -> QueryBucket | None:
    """The definition's query bucket, created when missing, with every dataset System in it."""
    api = ctx.client.api.query_buckets
    name = ctx.definition.query_bucket_name
    refs = [Ref(uuid=uuid) for uuid in systems]

    def find() -> QueryBucket | None:
        return next((b for b in api.list(name=name) if b.name == name), None)

    bucket = ctx.attempt("query bucket", name, find)
    if bucket is None:
        body = QueryBucket(
            name=name, description=BUCKET_DESCRIPTION, systems=refs, auto_generate_data_flows=True
        )
        try:
            bucket = ctx.created("query bucket", name, api.create(body), find)
            ctx.report.count("queryBucketsCreated")
        except BlindataError as exc:
            bucket = ctx.attempt("query bucket", name, find)  # created meanwhile, or answer lost
            if bucket is None:
                ctx.report.fail("query bucket", name, str(exc))
            elif not isinstance(exc, BlindataConflictError):
                ctx.landed()
        return bucket
    if bucket.systems is None:
        # a listing may leave out what the contract does not require of it: read it whole
        bucket = ctx.as_stored(api, bucket, "query bucket", name) or bucket
        if bucket.systems is None:
            # A PUT of the bucket with only the job's Systems would drop the ones a person added.
            log.warning("Blindata lists query bucket %r without its Systems: none added", name)
            ctx.report.count("bucketSystemsNotAdded", len(refs))
            for system in systems.values():  # which of them it holds is not known
                ctx.report.gap(GapCode.QLP_BUCKET_INCOMPLETE, f"{name}: {system} (not shown)")
            return bucket
    held = {ref.uuid for ref in bucket.systems}
    missing = [ref for ref in refs if ref.uuid not in held]
    if missing:
        _grow(ctx, bucket, missing, systems)
    return bucket


def _grow(ctx: SyncContext, bucket: QueryBucket, missing: list[Ref], names: dict[str, str]) -> None:
    """Add ``missing`` Systems to the bucket with a PUT of the whole bucket.

    The contract lists and creates buckets, and names no update: a Blindata that does not serve
    one (404, 405), or does not let this user (403), keeps the bucket's Systems, counted
    (``bucketSystemsNotAdded``) and reported (``QLP_BUCKET_INCOMPLETE``, naming them), not a
    failure: the statements are analysed all the same, against the Systems the bucket has, and
    a person can add the others by hand (a 403 was a failure at every run, and the gap the docs
    promise was not given: a probe of what the admin sees).
    """
    grown = bucket.model_copy(update={"systems": [*(bucket.systems or ()), *missing]})
    try:
        ctx.client.api.query_buckets.update(grown)
    except BlindataStatusError as exc:
        if exc.status not in (403, 404, 405):
            ctx.report.fail("query bucket", bucket.name, str(exc))
            return
        why = (
            " (this user may not update it: grant the permission, or add the System by hand)"
            if exc.status == 403
            else ""
        )
        if exc.status == 403:
            log.warning("Blindata refused this user the query bucket's update (403): %s", exc)
        else:
            log.warning("Blindata does not update query buckets (%s): %s", exc.status, exc)
        ctx.report.count("bucketSystemsNotAdded", len(missing))
        for ref in missing:
            ctx.report.gap(
                GapCode.QLP_BUCKET_INCOMPLETE,
                f"{bucket.name}: {names.get(ref.uuid, ref.uuid)}{why}",
            )
    except BlindataError as exc:
        ctx.report.fail("query bucket", bucket.name, str(exc))
    else:
        ctx.report.count("bucketSystemsAdded", len(missing))
