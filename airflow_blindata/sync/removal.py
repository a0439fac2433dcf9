"""``cleanup``: remove what this job definition owns and its last snapshot no longer described.

It owns the flows of the scopes in its ledger (``history.py``) and the routines, entities and
Systems stamped ``openLineageOwner = <definition uuid>``; "no longer described" is a last update
older than the snapshot's ``watermark``. Fail-safes: nothing after a failed, missing or empty
snapshot; kinds not fully refreshed left alone; a removal over ``maxRemovalShare`` refused unless
forced; ``dry_run`` reports. Order: flows, routines, entities, stale fields, unused Systems; what
others refer to is kept (``ownership.py``). An outage stops it (``WriteWatch``): the run ends
``failed`` at once and the ledger keeps every scope for the next cleanup.

Why and the rules in full: docs/removal-of-deprecated-metadata.md#how-syncremovalpy-runs-a-cleanup
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from airflow_blindata.blindata import BlindataClient, BlindataError
from airflow_blindata.blindata.models import DataFlow, PhysicalEntity, System, SystemRoutine
from airflow_blindata.definition import JobDefinition
from airflow_blindata.sync.context import OutageError, SyncContext, WriteWatch
from airflow_blindata.sync.history import (
    SyncRecordLike,
    carried_ledger,
    last_snapshot,
    light_scopes_since_snapshot,
)
from airflow_blindata.sync.ownership import (
    Removal,
    collect,
    entity_key,
    person_wrote_on_system,
)
from airflow_blindata.sync.progress import Progress, ProgressCallback, as_progress
from airflow_blindata.sync.properties import (
    DESCRIBED_BY_PROPERTY,
    DOCUMENTED_BY_PROPERTY,
    values_of,
)
from airflow_blindata.sync.report import Ledger, RunReport

__all__ = ["REASONS", "cleanup"]

REASONS = {
    "disabled": "cleanup is disabled in the job definition (cleanup.enabled: false)",
    "no_snapshot": "no snapshot of this job definition is in the sync history yet",
    "snapshot_failed": "the last snapshot did not complete; cleanup runs only after one that did "
    "(see that snapshot's report; force does not lift this)",
    "no_server_time": "the last snapshot could not read Blindata's time (its answers had no "
    "Date header, or an object it had just refreshed was last updated before that time): removal "
    "compares Blindata's dates with Blindata's clock, never the worker's. Let the Date header "
    "through any proxy in front of Blindata, then snapshot again (force does not lift this)",
    "empty_snapshot": "the last snapshot described nothing (cleanup.refuseEmptySnapshot)",
    "share_exceeded": "the removal is larger than cleanup.maxRemovalShare; run with force to "
    "allow it",
    "another_store": "jobs or tables this snapshot did not describe were written by the "
    "sync of another event store under this definition's uuid: two Airflow deployments seem "
    "to share the definition uuid, and each cleanup would remove the other's lineage. Give "
    "each deployment its own uuid (docs/configure-the-job.md#uuid); if this event store "
    "replaced that one, run the cleanup once with force",
}
"""Why a cleanup did nothing, by code (``RunReport.reason``)."""
SKIPPING_REASONS = frozenset({"disabled", "no_snapshot", "empty_snapshot"})
"""Reasons that mean "nothing to do yet" rather than "look at this"."""
_DESCRIBED_COUNTERS = ("entitiesDescribed", "flowsDescribed", "routinesDescribed")


@dataclass
class _Outcome:
    failed_scopes: set[str] = field(default_factory=set)
    removed_systems: set[str] = field(default_factory=set)
    step: str = "flows"
    """The removal step under way: the one an outage stopped."""


def cleanup(
    definition: JobDefinition,
    client: BlindataClient,
    history: Sequence[SyncRecordLike],
    *,
    dry_run: bool = False,
    force: bool = False,
    progress: Progress | ProgressCallback | None = None,
    store_id: str | None = None,
) -> RunReport:
    """Remove (or, with ``dry_run``, list) what the last snapshot in ``history`` left behind.

    ``history`` is the definition's sync history, newest first (``store.sync_history``);
    ``store_id`` the id of the event store it was read from (``EventStore.store_id``).
    """
    report = RunReport(kind="cleanup", definition_uuid=definition.uuid, dry_run=dry_run)
    ledger = carried_ledger(history)
    report.ledger = ledger
    last = last_snapshot(history)
    reason = _precondition(definition, last)
    if reason is not None or last is None:
        return _refuse(report, reason or "no_snapshot")
    ctx = SyncContext(
        client,
        definition,
        report,
        as_progress(progress),
        store_id=store_id,
    )
    try:
        with report.timed("read"):
            removal = collect(ctx, last, ledger)
    except BlindataError as exc:
        return report.finish("failed", f"Blindata cannot be used: {exc}")
    report.count("ownedObjects", removal.owned_total)
    report.count("objectsToRemove", removal.count)
    if removal.moved:
        report.count("objectsMoved", removal.moved)
    _note_kept(report, removal)
    # what moved to a clean scope (issue 42) is replaced, not lost: it weighs nothing
    weighed = removal.count - removal.moved
    share = weighed / removal.owned_total if removal.owned_total else 0.0
    limit = definition.cleanup.max_removal_share
    unchanged = Ledger(
        scopes=sorted(set(ledger.scopes) | set(last.scopes)),
        job_systems=removal.job_systems,
        entity_systems=removal.entity_systems,
    )
    if removal.foreign and not force:
        _list(report, removal)
        report.ledger = unchanged
        shown = ", ".join(removal.foreign[:5]) + (" …" if len(removal.foreign) > 5 else "")
        return _refuse(
            report,
            "another_store",
            f"{len(removal.foreign)} of its jobs, tables or routines, such as {shown}",
        )
    if share > limit and not force:
        _list(report, removal)
        report.ledger = unchanged
        return _refuse(
            report,
            "share_exceeded",
            f"it would remove {weighed} of {removal.owned_total} owned objects "
            f"({share:.0%}, limit {limit:.0%})",
        )
    if dry_run:
        _list(report, removal)
        report.ledger = unchanged
        return report.finish()
    outcome = _Outcome()
    watch = WriteWatch()
    observer, client.observer = client.observer, watch
    try:
        with report.timed("remove"):
            _remove(ctx, removal, outcome, watch)
    except OutageError as exc:
        report.ledger = Ledger(
            scopes=unchanged.scopes,
            job_systems=[u for u in removal.job_systems if u not in outcome.removed_systems],
            entity_systems=_left(removal.entity_systems, outcome.removed_systems),
        )
        return report.finish(
            "failed",
            f"Blindata cannot {'take writes' if exc.write else 'be used'}: {exc.error}. The "
            f"cleanup stopped in its {outcome.step} step; the next cleanup removes what this one "
            "could not.",
        )
    finally:
        client.observer = observer
    # a scope the last snapshot did not write is stale, unless a light sync wrote it since
    fresh = set(last.scopes) | light_scopes_since_snapshot(history)
    kept = fresh | removal.held_scopes | outcome.failed_scopes
    report.count("scopesRetired", len(set(ledger.scopes) - kept))
    report.ledger = Ledger(
        scopes=sorted(kept),
        job_systems=[uuid for uuid in removal.job_systems if uuid not in outcome.removed_systems],
        entity_systems=_left(removal.entity_systems, outcome.removed_systems),
    )
    return report.finish()


def _left(systems: list[str], removed: set[str]) -> list[str]:
    return [uuid for uuid in systems if uuid not in removed]


def _precondition(definition: JobDefinition, last: RunReport | None) -> str | None:
    if not definition.cleanup.enabled:
        return "disabled"
    if last is None:
        return "no_snapshot"
    if last.status not in ("success", "partial"):
        return "snapshot_failed"
    if last.watermark is None:
        return "no_server_time"
    described = sum(last.counters.get(name, 0) for name in _DESCRIBED_COUNTERS)
    if described == 0 and definition.cleanup.refuse_empty_snapshot:
        return "empty_snapshot"
    return None


def _refuse(report: RunReport, reason: str, detail: str | None = None) -> RunReport:
    report.reason = reason
    message = REASONS[reason] + (f": {detail}" if detail else "")
    return report.finish("skipped" if reason in SKIPPING_REASONS else "refused", message)


_KEPT_COUNTERS = {
    "entity": "entitiesKeptReferenced",
    "field": "fieldsKeptReferenced",
    "system": "systemsKeptReferenced",
    "routine": "routinesKeptDescribed",
}


def _note_kept(report: RunReport, removal: Removal) -> None:
    """Stale owned objects that stay because something outside this cleanup refers to them."""
    for kept in removal.kept:
        report.note_kept(kept.kind, kept.key, kept.reason)
        report.count(_KEPT_COUNTERS[kept.kind])


def _list(report: RunReport, removal: Removal) -> None:
    for flow in removal.flows:
        report.note_removed("flow", f"{flow.scope} {flow.name}")
    for routine in removal.routines:
        _note_routine(report, removal, routine)
    for entity in removal.entities:
        _note_entity(report, removal, entity)
    for key, _ in removal.stale_fields:
        report.note_removed("field", key)
    for system in removal.systems:
        report.note_removed("system", system.name)


def _note_routine(report: RunReport, removal: Removal, routine: SystemRoutine) -> None:
    key = f"{routine.catalog}/{routine.name}"
    report.note_removed("routine", key)
    for statement in removal.statements.get(routine.uuid or "", ()):
        report.note_removed("statement", f"{key}: {statement}")


def _note_entity(report: RunReport, removal: Removal, entity: PhysicalEntity) -> None:
    key = entity_key(entity)
    report.note_removed("entity", key)
    for name in removal.fields.get(entity.uuid or "", ()):
        report.note_removed("field", f"{key}.{name}")


def _remove(ctx: SyncContext, removal: Removal, outcome: _Outcome, watch: WriteWatch) -> None:
    """Delete in order, one step at a time; ``watch`` stops at a step that could not write."""
    api = ctx.client.api
    ctx.progress.start(
        "cleanup: remove",
        len(removal.flows)
        + len(removal.routines)
        + len(removal.entities)
        + len(removal.stale_fields)
        + len(removal.systems),
    )
    # A flow that could not be deleted is judged at the end: Blindata deletes with an entity,
    # a field or a System every flow that ends on it, and one of those removed later took it
    # along (a probe of reports: 4 flows reported left, 2 of them gone with their table).
    unremoved: list[tuple[DataFlow, str]] = []
    gone: set[str] = set()
    try:
        for flow in removal.flows:
            failed: list[str] = []
            if ctx.delete(api.dataflows, "flow", _flow_key(flow), flow.uuid, failed):
                ctx.report.note_removed("flow", _flow_key(flow))
            else:
                unremoved.append((flow, failed[0] if failed else "it has no uuid"))
        watch.end_phase()
        outcome.step = "routines"
        for routine in removal.routines:
            key = f"{routine.catalog}/{routine.name}"
            if ctx.delete(api.routines, "routine", key, routine.uuid):
                _note_routine(ctx.report, removal, routine)
        watch.end_phase()
        outcome.step = "entities"
        for entity in removal.entities:
            if _changed_since_read(ctx, removal, entity):
                continue
            if ctx.delete(api.physical_entities, "entity", entity_key(entity), entity.uuid):
                _note_entity(ctx.report, removal, entity)
                gone.add(entity.uuid or "")
        for key, stale in removal.stale_fields:
            if ctx.delete(api.physical_fields, "field", key, stale.uuid):
                ctx.report.note_removed("field", key)
                gone.add(stale.uuid or "")
        for entity in removal.marks:
            _retire_mark(ctx, entity)
        watch.end_phase()
        outcome.step = "systems"
        for system in removal.systems:
            if not _holds_nothing(ctx, system.uuid or ""):
                ctx.report.count("systemsKeptNotEmpty")
                continue
            if _written_on_since_read(ctx, system):
                continue
            if ctx.delete(api.systems, "system", system.name, system.uuid):
                ctx.report.note_removed("system", system.name)
                outcome.removed_systems.add(system.uuid or "")
                gone.add(system.uuid or "")
        watch.end_phase()
    finally:
        for flow, reason in unremoved:
            if gone.intersection(_ends(flow)):
                ctx.report.note_removed("flow", _flow_key(flow))
                ctx.report.count("flowsRemovedWithTheirEnd")
                continue
            if flow.uuid:
                ctx.report.fail("flow", _flow_key(flow), reason)
            if flow.scope:
                outcome.failed_scopes.add(flow.scope)
    ctx.progress.end()


def _flow_key(flow: DataFlow) -> str:
    return f"{flow.scope} {flow.name}"


def _ends(flow: DataFlow) -> set[str]:
    """The uuids of the entities, fields and Systems a flow ends on."""
    refs = (
        flow.from_physical_entity,
        flow.to_physical_entity,
        flow.from_physical_field,
        flow.to_physical_field,
        flow.from_system,
        flow.to_system,
    )
    return {ref.uuid for ref in refs if ref is not None and ref.uuid}


def _changed_since_read(ctx: SyncContext, removal: Removal, entity: PhysicalEntity) -> bool:
    """Whether the entity changed since the cleanup read it: written since the last snapshot
    (another definition's snapshot, each holding its own lock, or a person) or described by
    another definition meanwhile, and its deletion would take what they wrote with it. Read
    again just before it is deleted; kept, with the reason, if so. An entity that cannot be read
    is deleted as planned (the delete says whether it is there)."""
    key = entity_key(entity)
    stored = ctx.as_stored(ctx.client.api.physical_entities, entity, "entity", key)
    if stored is None or stored is entity:
        return False
    moment, watermark = stored.modification_date, removal.watermark
    written = moment is not None and watermark is not None and moment >= watermark
    describers = set(values_of(stored.additional_properties, DESCRIBED_BY_PROPERTY)) - {ctx.owner}
    if not written and not describers:
        return False
    ctx.report.note_kept("entity", key, "it changed since the cleanup read it")
    ctx.report.count("entitiesChangedMeanwhile")
    return True


_MARKS = frozenset({DESCRIBED_BY_PROPERTY, DOCUMENTED_BY_PROPERTY})
"""The marks a definition leaves on another writer's entity: it describes it, it wrote its
document first."""


def _retire_mark(ctx: SyncContext, entity: PhysicalEntity) -> None:
    """Take this definition off ``openLineageDescribedBy`` of an entity it no longer describes.

    A PUT of the entity as Blindata holds it, less the mark: an upload cannot remove a property.
    """
    api, key = ctx.client.api.physical_entities, entity_key(entity)
    stored = ctx.as_stored(api, entity, "describedBy mark", key)
    if stored is None:
        return
    kept = [
        prop
        for prop in stored.additional_properties or ()
        if not (prop.name in _MARKS and prop.value == ctx.owner)
    ]
    retired = stored.model_copy(update={"additional_properties": kept})
    if ctx.attempt("describedBy mark", key, partial(api.update, retired)):
        ctx.report.count("describedByRetired")


def _written_on_since_read(ctx: SyncContext, system: System) -> bool:
    """Whether a person wrote on the System (a description, a property of theirs), read whole
    just before it is deleted: a listing may leave them out, and a steward may have written
    since the cleanup read it. Kept, with the reason, if so; a System that cannot be read stays
    too (the failure is reported: what it holds is not known)."""
    stored = ctx.as_stored(ctx.client.api.systems, system, "system", system.name)
    if stored is None:
        return True
    written = person_wrote_on_system(stored)
    if not written:
        return False
    ctx.report.note_kept("system", system.name, written)
    ctx.report.count("systemsKeptReferenced")
    return True


def _holds_nothing(ctx: SyncContext, uuid: str) -> bool:
    """A System is removed only once empty, and once no flow ends on it: whatever someone added
    to it or pointed at it since the cleanup read it stays (this cleanup's own flows are gone by
    now)."""

    def empty() -> bool:
        api = ctx.client.api
        return (
            api.physical_entities.first(systemUuid=uuid) is None
            and api.routines.first(systemUuid=uuid) is None
            and api.dataflows.first(fromSystemUuid=uuid) is None
            and api.dataflows.first(toSystemUuid=uuid) is None
        )

    return bool(ctx.attempt("system", uuid, empty))
