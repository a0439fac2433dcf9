"""Data flows and system routines.

A flow has two ends, each a System, optionally an entity of it, optionally a field of that entity:
a table flow has entity ends, a column flow has field ends too. A client may give only the most
precise reference of an end (a field): the entity and System are derived from it, and an end
whose references disagree is a bad row. Uploaded flows have the natural key `(scope, name)`;
flows created by SQL analysis carry `queryStatement {uuid}`, no scope, and belong to their
statement (see `queryparser.py`).

Routines have the natural key `(system.uuid, catalog, schema, name)`; deleting one deletes the
statements analysed for it and the flows they created.
"""

from __future__ import annotations

from typing import Any

from . import cascade
from .errors import RowError
from .fields import PROPS, REF, STR, clean, enum
from .model import Doc, Kind, ref, ref_uuid
from .resource import (
    Filter,
    Resource,
    by_date_before,
    by_parent,
    by_value,
    upsert,
)
from .store import TenantView

__all__ = ["FLOW", "FLOW_FILTERS", "ROUTINE", "ROUTINE_FILTERS", "upsert_flow"]

SIDES = ("from", "to")
ROUTINE_TYPES = ("PROCEDURE", "FUNCTION", "SCRIPT")


def _end_refs(
    db: TenantView, doc: Doc, side: str
) -> tuple[str | None, str | None, str | None, list[str]]:
    """(system, entity, field) uuids of one end, derived upward, and the disagreements found."""
    system = ref_uuid(doc, f"{side}System")
    entity = ref_uuid(doc, f"{side}PhysicalEntity")
    field = ref_uuid(doc, f"{side}PhysicalField")
    problems: list[str] = []
    if field:
        stored_field = db.get(Kind.FIELD, field)
        if stored_field is None:
            raise RowError(f"{side}PhysicalField: no physical field with uuid {field}")
        owner = ref_uuid(stored_field, "physicalEntity")
        if entity and entity != owner:
            problems.append(f"{side}PhysicalField {field} is not a field of entity {entity}")
        entity = owner
    if entity:
        stored_entity = db.get(Kind.ENTITY, entity)
        if stored_entity is None:
            raise RowError(f"{side}PhysicalEntity: no physical entity with uuid {entity}")
        owner = ref_uuid(stored_entity, "system")
        if system and system != owner:
            problems.append(f"{side}PhysicalEntity {entity} is not in system {system}")
        system = owner
    if system and db.get(Kind.SYSTEM, system) is None:
        raise RowError(f"{side}System: no system with uuid {system}")
    return system, entity, field, problems


def _resolve_flow(db: TenantView, doc: Doc) -> None:
    """Complete both ends from their most precise reference; each end needs one."""
    for side in SIDES:
        system, entity, field, _ = _end_refs(db, doc, side)
        if not system:
            raise RowError(
                f"the {side} end is missing: give {side}System, {side}PhysicalEntity "
                f"or {side}PhysicalField"
            )
        doc[f"{side}System"] = ref(system)
        doc[f"{side}PhysicalEntity"] = ref(entity)
        doc[f"{side}PhysicalField"] = ref(field)


FLOW_FIELDS = {
    "name": STR,
    "description": STR,
    "scope": STR,
    **{
        f"{side}{end}": REF
        for side in SIDES
        for end in ("System", "PhysicalEntity", "PhysicalField")
    },
}

FLOW = Resource(
    kind=Kind.FLOW,
    label="data flow",
    fields=FLOW_FIELDS,
    required=("name",),
    key=lambda doc: None if ref_uuid(doc, "queryStatement") else (doc.get("scope"), doc["name"]),
    describe_key=lambda doc: f"named {doc['name']!r} in scope {doc.get('scope')!r}",
    resolve=_resolve_flow,
    read_only={"queryStatement": None},
)


def upsert_flow(db: TenantView, res: Resource, row: Any, now: str) -> tuple[Doc, bool]:
    """An upload row of flows: its own ends must agree before it is merged."""
    values = clean(row, res.fields)
    for side in SIDES:
        _, _, _, problems = _end_refs(db, values, side)
        if problems:
            raise RowError("; ".join(problems))
    return upsert(db, res, row, now)


FLOW_FILTERS: tuple[Filter, ...] = (
    by_value("scope", "$.scope"),
    by_value("fromSystemUuid", "$.fromSystem.uuid"),
    by_value("toSystemUuid", "$.toSystem.uuid"),
    by_value("fromPhysicalEntityUuid", "$.fromPhysicalEntity.uuid"),
    by_value("toPhysicalEntityUuid", "$.toPhysicalEntity.uuid"),
    by_value("queryStatementUuid", "$.queryStatement.uuid"),
    by_date_before("modifiedBefore", "$.modificationDate"),
)


def _resolve_routine(db: TenantView, doc: Doc) -> None:
    system = ref_uuid(doc, "system")
    if system and db.get(Kind.SYSTEM, system) is None:
        raise RowError(f"system: no system with uuid {system}")


ROUTINE = Resource(
    kind=Kind.ROUTINE,
    label="routine",
    fields={
        "system": REF,
        "catalog": STR,
        "schema": STR,
        "name": STR,
        "type": enum(*ROUTINE_TYPES),
        "definition": STR,
        "description": STR,
        "status": STR,
        "additionalProperties": PROPS,
    },
    required=("system", "name"),
    key=lambda doc: (
        ref_uuid(doc, "system"),
        doc.get("catalog") or "",
        doc.get("schema") or "",
        doc["name"],
    ),
    describe_key=lambda doc: (
        f"{doc.get('catalog') or ''}.{doc.get('schema') or ''}.{doc['name']} "
        f"in system {ref_uuid(doc, 'system')}"
    ),
    parent=lambda doc: ref_uuid(doc, "system"),
    resolve=_resolve_routine,
    cascade=cascade.cascade_routine,
)

ROUTINE_FILTERS: tuple[Filter, ...] = (
    by_parent("systemUuid"),
    by_value("catalog", "$.catalog"),
    by_value("schema", "$.schema"),
    by_value("name", "$.name"),
)
