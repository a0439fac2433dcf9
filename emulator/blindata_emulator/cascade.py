"""What goes with an object when it is deleted.

Blindata keeps its catalog consistent: deleting a System removes its entities and routines,
deleting an entity removes its fields, documentation, monitors and the flows that touch it,
deleting a routine removes the statements analysed for it and the flows they created. Checks are
never deleted with the objects they check (their history matters): they only lose the reference.

Each `cascade_*` removes the dependents of `doc`, not `doc` itself; they work on store rows only,
so that resource modules can use them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable

from .model import Doc, Kind
from .store import Cond, TenantView, child_of, eq, refs_contain

__all__ = [
    "cascade_bucket",
    "cascade_check",
    "cascade_entity",
    "cascade_field",
    "cascade_monitor",
    "cascade_routine",
    "cascade_statement",
    "cascade_suite",
    "cascade_system",
    "delete_flows",
]


def delete_flows(db: TenantView, cond: Cond) -> int:
    """Delete the flows matching `cond`; how many went."""
    uuids = db.uuids(Kind.FLOW, [cond])
    for uuid in uuids:
        db.delete(Kind.FLOW, uuid)
    return len(uuids)


def _drop_children(
    db: TenantView, kind: str, parent: str, cascade: Callable[[TenantView, Doc], None] | None = None
) -> None:
    for uuid in db.uuids(kind, [child_of(parent)]):
        if cascade is not None:
            child = db.get(kind, uuid)
            if child is not None:
                cascade(db, child)
        db.delete(kind, uuid)


def _unlink(db: TenantView, kind: str, list_name: str, uuid: str) -> None:
    """Remove `uuid` from the reference list `list_name` of every object of `kind`."""
    for doc in db.select(kind, [refs_contain(f"$.{list_name}", uuid)]):
        doc[list_name] = [item for item in doc.get(list_name) or [] if item.get("uuid") != uuid]
        db.save_data(kind, doc)


def cascade_system(db: TenantView, doc: Doc) -> None:
    """Entities, routines, flows touching the System; its place in query buckets."""
    uuid = doc["uuid"]
    _drop_children(db, Kind.ENTITY, uuid, cascade_entity)
    _drop_children(db, Kind.ROUTINE, uuid, cascade_routine)
    delete_flows(db, eq("$.fromSystem.uuid", uuid))
    delete_flows(db, eq("$.toSystem.uuid", uuid))
    _unlink(db, Kind.BUCKET, "systems", uuid)


def cascade_entity(db: TenantView, doc: Doc) -> None:
    """Fields, documentation, monitors, flows touching the entity; references from checks."""
    uuid = doc["uuid"]
    _drop_children(db, Kind.FIELD, uuid, cascade_field)
    _drop_children(db, Kind.DOCUMENTATION, uuid)
    _drop_children(db, Kind.MONITOR, uuid, cascade_monitor)
    delete_flows(db, eq("$.fromPhysicalEntity.uuid", uuid))
    delete_flows(db, eq("$.toPhysicalEntity.uuid", uuid))
    _unlink(db, Kind.CHECK, "physicalEntities", uuid)


def cascade_field(db: TenantView, doc: Doc) -> None:
    """Column flows touching the field; references from checks."""
    uuid = doc["uuid"]
    delete_flows(db, eq("$.fromPhysicalField.uuid", uuid))
    delete_flows(db, eq("$.toPhysicalField.uuid", uuid))
    _unlink(db, Kind.CHECK, "physicalFields", uuid)


def cascade_statement(db: TenantView, doc: Doc) -> None:
    """The flows the statement's analysis created, and a waiting analysis."""
    delete_flows(db, eq("$.queryStatement.uuid", doc["uuid"]))
    db.dequeue_analysis(doc["uuid"])


def cascade_routine(db: TenantView, doc: Doc) -> None:
    """The statements analysed for the routine, and their flows."""
    for statement in db.select(Kind.STATEMENT, [eq("$.routine.uuid", doc["uuid"])]):
        cascade_statement(db, statement)
        db.delete(Kind.STATEMENT, statement["uuid"])


def cascade_bucket(db: TenantView, doc: Doc) -> None:
    """The bucket's statements and their flows."""
    _drop_children(db, Kind.STATEMENT, doc["uuid"], cascade_statement)


def cascade_check(db: TenantView, doc: Doc) -> None:
    """The check's results."""
    _drop_children(db, Kind.RESULT, doc["uuid"])


def cascade_suite(db: TenantView, doc: Doc) -> None:
    """The suite's checks and their results."""
    _drop_children(db, Kind.CHECK, doc["uuid"], cascade_check)


def cascade_monitor(db: TenantView, doc: Doc) -> None:
    """The monitor's metric records."""
    _drop_children(db, Kind.RECORD, doc["uuid"])
