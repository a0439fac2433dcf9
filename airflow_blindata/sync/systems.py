"""Systems: read the ones Blindata holds, create the planned ones, stamp the reused ones.

The plan says which Systems to create and which stamps to set (``mapper/systems.py``). This module
makes it so, with the protections of seed 000:

* A create that meets a System of the same name (409: created meanwhile, or by a create whose
  answer was lost) reuses it. If it carries this definition's ``openLineageOwner`` it is ours (a
  lost answer); otherwise it is someone else's, gets only the namespace stamp, never the owner
  stamp (cleanup removes by that stamp), and entities are created on it only if the policy says
  ``entityCreation: true``.
* Stamps are added with GET + merge + PUT, because PUT replaces the whole System: a property set
  by a person or a crawler is kept, and a System that already carries the stamp is not written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace

from airflow_blindata.blindata import BlindataClient, BlindataConflictError, BlindataError
from airflow_blindata.blindata.models import AdditionalProperty, System
from airflow_blindata.mapper.identity import NO_MATCHING, CaseMatching
from airflow_blindata.mapper.plan import CatalogPlan, PlannedSystem, Property
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import (
    DATABASE_PROPERTY,
    JOB_SYSTEM_NAME_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
    case_matching_for,
    system_policy_for,
)
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext

__all__ = ["ResolvedSystem", "fetch_known_systems", "sync_systems"]

KIND = "system"
log = logging.getLogger(__name__)

SINGLE_VALUED = frozenset({JOB_SYSTEM_NAME_PROPERTY})
"""Stamps a System carries one value of: a new one replaces the old (the name a definition
gives its job System follows ``openLineageSystem.name`` once it names the System as a steward
renamed it)."""
OPTIONAL = frozenset({JOB_SYSTEM_NAME_PROPERTY})
"""Stamps added to an existing System that it is usable without: one Blindata refuses (a user
who may read Systems but not update them) is reported, and the System still used."""


@dataclass(frozen=True, slots=True)
class ResolvedSystem:
    """A planned System as it exists in Blindata after the systems phase."""

    name: str
    uuid: str
    owned: bool
    entity_creation: bool
    replace_user_documentation: bool
    matching: CaseMatching = NO_MATCHING
    """How its stored entities and fields are matched to planned ones that differ in case
    (``case_matching``)."""


def case_matching(ctx: SyncContext, planned: PlannedSystem) -> CaseMatching:
    """How the names of the System's namespaces are matched to what it stores, at each level:
    the rule they all share (``case_matching_for``), else exact names only (a System that
    holds a SQL Server's and a PostgreSQL's tables is no place to guess)."""
    rules = {case_matching_for(ctx.definition, namespace) for namespace in planned.namespaces}
    if not rules:
        return NO_MATCHING
    tables = {rule.tables for rule in rules}
    columns = {rule.columns for rule in rules}
    return CaseMatching(
        tables.pop() if len(tables) == 1 else None, columns.pop() if len(columns) == 1 else None
    )


def fetch_known_systems(client: BlindataClient) -> list[KnownSystem]:
    """Every System of the tenant with its properties: the mapper's input."""
    return [
        _known(system)
        for system in client.api.systems.list(page_size=LIST_PAGE_SIZE)
        if system.uuid
    ]


def _known(system: System) -> KnownSystem:
    properties = tuple(
        (p.name, p.value) for p in system.additional_properties or () if p.value is not None
    )
    return KnownSystem(system.name, system.uuid or "", properties)


def _has(system: System, prop: Property) -> bool:
    return any((p.name, p.value) == prop for p in system.additional_properties or ())


def sync_systems(ctx: SyncContext, plan: CatalogPlan) -> dict[str, ResolvedSystem]:
    """The planned Systems by name, created or stamped; a System that failed is left out."""
    resolved: dict[str, ResolvedSystem] = {}
    ctx.progress.start("systems", len(plan.systems))
    for planned in plan.systems:
        system = _create(ctx, planned) if planned.create else _existing(ctx, planned)
        if system is not None:
            resolved[planned.name] = replace(system, matching=case_matching(ctx, planned))
        ctx.progress.advance()
    ctx.progress.end()
    return resolved


def _existing(ctx: SyncContext, planned: PlannedSystem) -> ResolvedSystem | None:
    """A System Blindata holds: read it (ownership is its stamp), and add the planned stamp.
    A refused ``openLineageJobSystemName`` (``OPTIONAL``) leaves the System usable: gap
    ``JOB_SYSTEM_NOT_STAMPED``, the jobs still go to it."""
    uuid = planned.uuid or ""
    stored = ctx.attempt(KIND, planned.name, lambda: ctx.client.api.systems.get(uuid))
    if stored is None:
        return None
    required = tuple(prop for prop in planned.stamp if prop[0] not in OPTIONAL)
    optional = tuple(prop for prop in planned.stamp if prop[0] in OPTIONAL)
    if not _stamp(ctx, stored, required):
        return None
    if optional and any(not _has(stored, prop) for prop in required):
        # the PUT above changed it: read it again before another
        stored = ctx.attempt(KIND, planned.name, lambda: ctx.client.api.systems.get(uuid))
        if stored is None:
            return None
    if not _stamp(ctx, stored, optional, optional=True):
        ctx.report.gap(GapCode.JOB_SYSTEM_NOT_STAMPED, stored.name)
    return ResolvedSystem(
        planned.name,
        uuid,
        owned=_has(stored, (OWNER_PROPERTY, ctx.owner)),
        entity_creation=planned.entity_creation,
        replace_user_documentation=planned.replace_user_documentation,
    )


def _stamp(
    ctx: SyncContext,
    stored: System,
    stamp: tuple[Property, ...],
    *,
    listed: bool = False,
    optional: bool = False,
) -> bool:
    """Add the missing stamp properties with one PUT of the whole System; False on failure.
    A ``listed`` System is read whole first (``SyncContext.as_stored``). A ``SINGLE_VALUED``
    stamp replaces the value the System carries. An ``optional`` stamp Blindata refuses is
    counted (``systemsNotStamped``), not a failure of the System: the caller reports it."""
    missing = [prop for prop in stamp if not _has(stored, prop)]
    if not missing:
        return True
    if listed:
        whole = ctx.as_stored(ctx.client.api.systems, stored, KIND, stored.name)
        if whole is None:
            return False
        return _stamp(ctx, whole, stamp, optional=optional)
    replaced = {name for name, _ in missing if name in SINGLE_VALUED}
    properties = [
        *(p for p in stored.additional_properties or () if p.name not in replaced),
        *AdditionalProperty.many(missing),
    ]
    updated = stored.model_copy(update={"additional_properties": properties})
    if optional:
        try:
            ctx.client.api.systems.update(updated)
        except BlindataError as exc:  # an outage is raised by the client's watch
            log.warning("Blindata refused the stamp of the System %s: %s", stored.name, exc)
            ctx.report.count("systemsNotStamped")
            return False
    elif ctx.attempt(KIND, stored.name, lambda: ctx.client.api.systems.update(updated)) is None:
        return False
    ctx.report.count("systemsStamped")
    return True


def _create(ctx: SyncContext, planned: PlannedSystem) -> ResolvedSystem | None:
    body = System(
        name=planned.name,
        subtype=planned.subtype,
        technology=planned.technology,
        additional_properties=AdditionalProperty.many(planned.stamp),
    )
    try:
        created = ctx.client.api.systems.create(body)
    except BlindataConflictError:
        return _reuse(ctx, planned, None)
    except BlindataError as exc:
        # The create may have landed before the answer was lost: look before giving up.
        return _reuse(ctx, planned, exc)
    if not created.uuid:  # created, answered without a body: found by its name
        return _reuse(ctx, planned, None)
    ctx.report.count("systemsCreated")
    return ResolvedSystem(
        planned.name,
        created.uuid or "",
        owned=True,
        entity_creation=planned.entity_creation,
        replace_user_documentation=planned.replace_user_documentation,
    )


def _reuse(
    ctx: SyncContext, planned: PlannedSystem, error: BlindataError | None
) -> ResolvedSystem | None:
    try:  # how the name filter matches is not in the contract: the name is checked here
        listed = ctx.client.api.systems.list(name=planned.name)
        # another case only on a 409: after a failure the create may not have landed, and a
        # System of that name in another case may be a person's, not the one refused
        found = _named(listed, planned.name, other_case=error is None)
    except BlindataError as exc:
        ctx.report.fail(KIND, planned.name, str(error or exc))
        return None
    if found is None or not found.uuid:
        reason = str(error) if error else "Blindata says it exists (409) but does not list it"
        ctx.report.fail(KIND, planned.name, reason)
        return None
    if _has(found, (OWNER_PROPERTY, ctx.owner)):
        if error is not None:  # the create landed, and its answer was lost
            ctx.landed()
        ctx.report.count("systemsCreated")
        return ResolvedSystem(
            planned.name,
            found.uuid,
            owned=True,
            entity_creation=planned.entity_creation,
            replace_user_documentation=planned.replace_user_documentation,
        )
    # nor the name stamp: it names a System for its owner, and another definition's is theirs
    foreign_stamp = tuple(
        prop for prop in planned.stamp if prop[0] not in (OWNER_PROPERTY, JOB_SYSTEM_NAME_PROPERTY)
    )
    if not _stamp(ctx, found, foreign_stamp, listed=True):
        return None
    ctx.report.count("systemsReused")
    return ResolvedSystem(
        planned.name,
        found.uuid,
        owned=False,
        entity_creation=_entity_creation_on_foreign(ctx, planned, found),
        replace_user_documentation=planned.replace_user_documentation,
    )


def _named(systems: Iterable[System], name: str, *, other_case: bool) -> System | None:
    """The System called ``name``: spelt so, else (``other_case``) the one System spelt so in
    another case (a Blindata whose names are unique whatever their case refuses to create
    ``postgres`` beside ``Postgres``, 409, and the contract does not say how it compares
    names)."""
    spelt_otherwise = []
    for system in systems:
        if system.name == name:
            return system
        if other_case and system.name.casefold() == name.casefold():
            spelt_otherwise.append(system)
    return spelt_otherwise[0] if len(spelt_otherwise) == 1 else None


def _entity_creation_on_foreign(ctx: SyncContext, planned: PlannedSystem, found: System) -> bool:
    """``entityCreation`` on a System this definition did not create (seed 000 table): by
    default true when another definition created it, false when a crawler or a person did."""
    if planned.origin in ("openlineage", "job"):
        return True  # job Systems hold job entities: that is what they are for
    created_by_openlineage = any(
        prop.name == OWNER_PROPERTY for prop in found.additional_properties or ()
    )
    # a System planned per database carries its databases in its stamp: their policy applies
    databases: list[str | None] = [v for n, v in planned.stamp if n == DATABASE_PROPERTY] or [None]
    for namespace in planned.namespaces:
        for database in databases:
            policy = system_policy_for(ctx.definition, namespace, database)
            if policy is not None:
                return policy.entity_creation_for(created_by_openlineage=created_by_openlineage)
    return created_by_openlineage
