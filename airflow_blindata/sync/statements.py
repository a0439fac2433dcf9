"""Query statements of the routines: submit the changed SQL, and read how the analysis went."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import partial

from airflow_blindata.blindata import BlindataError
from airflow_blindata.blindata.models import AnalysisStatus, QueryStatement, Ref, SystemRoutine
from airflow_blindata.mapper.documentation import as_stored
from airflow_blindata.mapper.identity import normalize_namespace, server_of
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB, CatalogPlan, EntityKey, PlannedRoutine
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.sql import (
    as_written_into,
    names_in_sql,
    sql_hash,
    with_final_names,
    with_placeholders,
)
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.properties import SQL_HASH_PROPERTY, values_of

__all__ = ["RoutineState", "sync_statements"]

KIND = "statement"
MESSAGE_EXCERPT = 160
"""Characters of an analysis error message kept in a gap example."""


@dataclass(frozen=True, slots=True)
class RoutineState:
    """One routine: as planned, as it was before this run's upload, and as it is now."""

    planned: PlannedRoutine
    before: SystemRoutine | None
    now: SystemRoutine
    context_changed: bool = False
    """The catalog around its SQL changed since its last analysis (see ``routines``)."""

    @property
    def label(self) -> str:
        return f"{self.planned.system}:{self.planned.catalog}/{self.planned.name}"

    @property
    def sql_changed(self) -> bool:
        if self.before is None:
            return True
        stored = values_of(self.before.additional_properties, SQL_HASH_PROPERTY)
        return self.planned.sql_hash not in stored


def _default_schemas(plan: CatalogPlan) -> dict[str, str]:
    """Job scope → the schema where its statement's unqualified table names resolve.

    As its producer resolved them: the schema of a table the job reads or writes that the
    statement names without a schema (Airflow's SQL operators ask the connection for its current
    schema, so ``FROM orders`` is ``public.orders`` in the event, whatever the job writes). When
    the statement names none of its tables so, the schema of the tables it writes; when its
    tables say two schemas, none (Blindata's own default then applies). The tables of a job are
    those of its flows and those its runs read and write (a run may name no output: Airflow's
    MySQL provider sends ``INSERT INTO dwh.orders … FROM orders`` with both as inputs).
    """
    ends: dict[str, set[EntityKey]] = defaultdict(set)
    for scope, tables in plan.dataset_entities.job_tables.items():
        ends[scope].update(tables)  # a run that names no output has no flow
    written: dict[str, str] = {}
    for flow in plan.flows:
        if flow.kind == "orchestration":
            continue
        ends[flow.scope].update((flow.source.entity, flow.target.entity))
        if flow.target.entity.schema_:
            written.setdefault(flow.scope, flow.target.entity.schema_)
    schemas: dict[str, str] = {}
    for routine in plan.routines:
        names = names_in_sql(routine.definition, routine.dialect)
        resolved = {
            key.schema_
            for key in ends.get(routine.job, ())
            if key.schema_
            and key.name.casefold() in names.bare
            and (key.schema_.casefold(), key.name.casefold()) not in names.qualified
        }
        if len(resolved) == 1:
            schemas[routine.job] = resolved.pop()
        elif not resolved and routine.job in written:
            schemas[routine.job] = written[routine.job]
    return schemas


def _written_tables(plan: CatalogPlan) -> dict[str, EntityKey]:
    """Job scope → the one table a dbt job's flows write, on a store it also reads from: the
    table dbt makes of the model's ``SELECT`` its ``sql`` facet holds (``as_written_into``).
    dbt only: another producer's lone ``SELECT`` is a statement it ran as it is (seed 001's
    column flows come "only from analyzed SQL"), and one whose result lands in another store (a
    transfer to a file) is no write in SQL. A store is a server, not a System: a model that
    reads one Snowflake database and writes another (``RAW`` into ``ANALYTICS``, with a System
    per database) writes its table in SQL (``_stores``)."""
    dbt = _dbt_jobs(plan)
    stores = _stores(plan)
    written: dict[str, set[EntityKey]] = defaultdict(set)
    read: dict[str, set[str]] = defaultdict(set)
    for flow in plan.flows:
        if flow.kind == "orchestration" or flow.scope not in dbt:
            continue
        written[flow.scope].add(flow.target.entity)
        read[flow.scope].update(_store_of(flow.source.entity, stores))
    return {
        scope: next(iter(targets))
        for scope, targets in written.items()
        if len(targets) == 1 and _store_of(next(iter(targets)), stores) & read[scope]
    }


def _stores(plan: CatalogPlan) -> dict[EntityKey, set[str]]:
    """Entity → the stores its datasets are on: the server their namespace names, normalised
    (``snowflake://acme.us-west-1.aws`` holds every database of the account; an Oracle URL's
    server without its service, as its crawler's System is stamped)."""
    found: dict[EntityKey, set[str]] = defaultdict(set)
    for (dataset, _), key in plan.dataset_entities.found.items():
        if key is not None:
            server = server_of(dataset.namespace)
            found[key].add(server[0] if server else normalize_namespace(dataset.namespace))
    return found


def _store_of(key: EntityKey, stores: dict[EntityKey, set[str]]) -> set[str]:
    """The stores of an entity, and its System (an end the catalog pass did not place: a table
    named only in a lineage facet is on the System it resolved to)."""
    return {*stores.get(key, ()), f"system:{key.system}"}


def _dbt_jobs(plan: CatalogPlan) -> set[str]:
    """The scopes of the jobs dbt ran, by their job entities: the ``jobType`` facet's
    integration ``DBT``, a producer of OpenLineage's dbt integration (dbt-ol), dbt's own run
    facets (``dbt_version``, ``dbt_run``), or an Airflow operator of dbt's (Cosmos'
    ``DbtRunLocalOperator``, dbt Cloud's: Airflow's provider sends them as integration
    ``AIRFLOW``)."""
    found: set[str] = set()
    for entity in plan.entities:
        if entity.table_type != OPENLINEAGE_JOB:
            continue
        values = dict(entity.properties)
        scope = values.get("openLineageJobScope")
        if scope and _ran_by_dbt(values):
            found.add(scope)
    return found


def _ran_by_dbt(values: dict[str, str]) -> bool:
    return (
        values.get("openLineageIntegration", "").strip().upper() == "DBT"
        or "/integration/dbt" in values.get("openLineageProducer", "")
        or values.get("openLineageAirflowOperator", "").startswith("Dbt")
        or any(name.startswith(("dbt_version.", "dbt_run.")) for name in values)
    )


def _text_to_analyse(routine: PlannedRoutine, target: EntityKey | None) -> str:
    """The statement Blindata analyses: the routine's SQL, a lone query as the write of the
    job's table, the relation dbt makes under a temporary name named as its model
    (``with_final_names``), a driver's parameters as ``?`` (``with_placeholders``). The routine
    keeps the SQL as its producer sent it."""
    text = routine.definition
    if target is not None:
        parts = (target.schema_, target.name) if target.schema_ else (target.name,)
        text = as_written_into(text, routine.dialect, parts) or text
    return with_placeholders(with_final_names(text, routine.dialect), routine.dialect)


def sync_statements(
    ctx: SyncContext, plan: CatalogPlan, bucket_uuid: str, routines: list[RoutineState]
) -> None:
    api = ctx.client.api.statements
    try:
        listed = list(api.list(page_size=LIST_PAGE_SIZE, bucketUuid=bucket_uuid))
    except BlindataError as exc:
        for state in routines:
            ctx.report.fail(KIND, state.label, str(exc))
        return
    by_routine = {s.routine.uuid: s for s in listed if s.routine and s.routine.uuid}
    unattributed: dict[str, list[QueryStatement]] = defaultdict(list)
    for listed_statement in listed:
        if listed_statement.uuid and not _routine_of(listed_statement):
            unattributed[listed_statement.name or ""].append(listed_statement)
    schemas = _default_schemas(plan)
    targets = _written_tables(plan)
    ctx.progress.start("statements", len(routines))
    for state in routines:
        statement = by_routine.get(state.now.uuid or "")
        wanted = QueryStatement(
            query_bucket=Ref(uuid=bucket_uuid),
            routine=Ref(uuid=state.now.uuid or ""),
            name=state.planned.name,
            query_text=_text_to_analyse(state.planned, targets.get(state.planned.job)),
            default_schema=schemas.get(state.planned.job),
            dialect=state.planned.dialect,
        )
        if statement is None and unattributed.get(wanted.name or ""):
            statement = _unattributed(ctx, state.label, wanted, unattributed[wanted.name or ""])
        submit = _bring_in_line(ctx, state, statement, wanted)
        if submit is not None:
            _submit(ctx, state, submit)
        elif statement is not None:
            _read_status(ctx, state, statement)
        ctx.progress.advance()
    ctx.progress.end()


def _bring_in_line(
    ctx: SyncContext,
    state: RoutineState,
    statement: QueryStatement | None,
    wanted: QueryStatement,
) -> str | None:
    """Create or update the statement when needed; the uuid to submit for analysis, or None."""
    api = ctx.client.api.statements
    if statement is None:
        # it may have landed before its answer was lost: looked for before giving up
        created = ctx.create_or_find(
            KIND, state.label, partial(api.create, wanted), lambda: _find(ctx, wanted)
        )
        if created is None or not created.uuid:
            return None
        ctx.report.count("statementsCreated")
        return created.uuid
    stale = (
        not _same_statement(statement.query_text, wanted.query_text, wanted.dialect)
        or (statement.dialect or None) != (wanted.dialect or None)
        or (wanted.default_schema is not None and statement.default_schema != wanted.default_schema)
    )
    if stale or state.sql_changed:
        # the routine and the bucket sent whatever the list gave: the contract states no more
        # of a PUT than that it stores the statement, and one that replaces it whole would cut
        # off what a list left out (a review of the client against the contract)
        update = statement.model_copy(
            update={
                "query_text": wanted.query_text,
                "dialect": wanted.dialect,
                "default_schema": wanted.default_schema or statement.default_schema,
                "name": wanted.name,
                "routine": statement.routine or wanted.routine,
                "query_bucket": statement.query_bucket or wanted.query_bucket,
            }
        )
        if ctx.attempt(KIND, state.label, lambda: api.update(update)) is None:
            return None
        ctx.report.count("statementsUpdated")
        return statement.uuid
    if statement.analysis_status is None:
        return statement.uuid  # never analysed: an earlier submission was lost
    if statement.analysis_status == AnalysisStatus.PARTIALLY_ANALYZED and state.context_changed:
        ctx.report.count("statementsReanalysed")
        return statement.uuid  # what it missed may be catalogued now
    return None


def _find(ctx: SyncContext, wanted: QueryStatement) -> QueryStatement | None:
    """The statement of ``wanted``'s routine in its bucket, as Blindata holds it: one that names
    the routine, else the only one of its name the listing asked for that routine gives
    without naming any (``_unattributed``)."""
    bucket = wanted.query_bucket.uuid if wanted.query_bucket else None
    routine = wanted.routine.uuid if wanted.routine else None
    listed = list(ctx.client.api.statements.list(bucketUuid=bucket, routineUuid=routine))
    found = next((s for s in listed if s.uuid and _routine_of(s) == routine), None)
    if found is not None:
        return found
    named = [s for s in listed if s.uuid and not _routine_of(s) and s.name == wanted.name]
    return named[0] if len(named) == 1 else None


def _routine_of(statement: QueryStatement) -> str | None:
    return statement.routine.uuid if statement.routine and statement.routine.uuid else None


def _unattributed(
    ctx: SyncContext, label: str, wanted: QueryStatement, named: list[QueryStatement]
) -> QueryStatement | None:
    """The statement of ``wanted``'s routine among those of its name that the bucket's listing
    gave without their routine: the contract names ``routine`` in what is sent, not in what a
    listing answers, and a statement not found is created again at every snapshot (with the
    flows of its analysis). The only one of its name in the bucket is it; of several (routines
    of one name in two Systems), the one the listing by routine gives."""
    if len(named) == 1:
        return named[0]
    return ctx.attempt(KIND, label, lambda: _find(ctx, wanted))


def _submit(ctx: SyncContext, state: RoutineState, uuid: str) -> None:
    try:
        ctx.client.api.statements.analyze(uuid)
    except BlindataError as exc:
        ctx.report.fail(KIND, state.label, f"analysis not requested: {exc}")
        return
    ctx.report.count("statementsSubmitted")
    ctx.report.gap(GapCode.QLP_PENDING, state.label)


def _read_status(ctx: SyncContext, state: RoutineState, statement: QueryStatement) -> None:
    status = statement.analysis_status
    if status == AnalysisStatus.PENDING:
        ctx.report.gap(GapCode.QLP_PENDING, state.label)
    elif status == AnalysisStatus.ERROR:
        message = " ".join((statement.analysis_message or "").split())[:MESSAGE_EXCERPT]
        ctx.report.gap(GapCode.QLP_ANALYSIS_ERROR, f"{state.label}: {message}")
    elif status == AnalysisStatus.PARTIALLY_ANALYZED:
        ctx.report.count("statementsPartiallyAnalyzed")
        message = " ".join((statement.analysis_message or "").split())[:MESSAGE_EXCERPT]
        example = f"{state.label}: {message}" if message else state.label
        ctx.report.gap(GapCode.QLP_PARTIALLY_ANALYZED, example)
    elif status == AnalysisStatus.ANALYZED:
        ctx.report.count("statementsAnalyzed")
        if statement.uuid:
            ctx.analysed_statements.setdefault(state.planned.job, set()).add(statement.uuid)


def _same_statement(stored: str | None, wanted: str | None, dialect: str | None) -> bool:
    """Whether the statement Blindata holds is the one to analyse: the same text as stored, or
    one that differs in comments and blanks only (the same ``sql_hash``). A text Airflow renders
    with a comment of its run (``-- rendered for 2026-12-07``) was sent, and analysed, again at
    every snapshot, and the producer's column flows came back while the analysis waited."""
    if _same_text(stored, wanted):
        return True
    return sql_hash(stored or "", dialect) == sql_hash(wanted or "", dialect)


def _same_text(stored: str | None, wanted: str | None) -> bool:
    """Whether a text Blindata stored is the one sent, as a server may store it: its line ends
    as ``\n`` and without blanks at either end (the contract does not say that a text comes
    back byte for byte; one that did not would be sent again, and analysed again, every run)."""
    return as_stored(stored or "") == as_stored(wanted or "")
