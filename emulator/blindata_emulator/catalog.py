"""The physical catalog: Systems, physical entities, physical fields and entity documentation.

Natural keys: a System by `name`; an entity by `(system.uuid, schema, name)`; a field by
`(physicalEntity.uuid, name)`. A field may name its entity by uuid or by `{schema, name,
system {uuid}}`, as crawlers do; it is stored with the uuid and shown with the entity's schema,
name and System. Field uploads only add and update: a field the upload does not name stays.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

from . import cascade
from .errors import ApiError, RowError
from .fields import ANY, BOOL, INT, LOOSE_REF, PROPS, REF, STR, clean, enum, require
from .model import Doc, Kind, ref_uuid
from .paging import Params
from .resource import (
    Call,
    Filter,
    Reply,
    Resource,
    by_parent,
    by_property,
    by_search,
    by_value,
    fetch,
)
from .store import Cond, TenantView, eq, parent_in

__all__ = [
    "ENTITY",
    "ENTITY_FILTERS",
    "FIELD",
    "FIELD_FILTERS",
    "SYSTEM",
    "SYSTEM_FILTERS",
    "get_documentation",
    "put_documentation",
]

SYSTEM_SUBTYPES = ("APPLICATION", "ARCHIVE", "SERVICE", "DATABASE", "QUEUE", "JOB")
MARKDOWN = "MARKDOWN"


def _system_exists(db: TenantView, uuid: str | None, what: str) -> None:
    if uuid and db.get(Kind.SYSTEM, uuid) is None:
        raise RowError(f"{what}: no system with uuid {uuid}")


SYSTEM = Resource(
    kind=Kind.SYSTEM,
    label="system",
    fields={
        "name": STR,
        "description": STR,
        "subtype": enum(*SYSTEM_SUBTYPES),
        "technology": STR,
        "additionalProperties": PROPS,
    },
    required=("name",),
    key=lambda doc: (doc["name"],),
    describe_key=lambda doc: f"named {doc['name']!r}",
    cascade=cascade.cascade_system,
)

SYSTEM_FILTERS: tuple[Filter, ...] = (
    by_search("search", "json_extract(data, '$.name')"),
    by_value("name", "$.name"),
)


def _resolve_entity(db: TenantView, doc: Doc) -> None:
    _system_exists(db, ref_uuid(doc, "system"), "system")


ENTITY = Resource(
    kind=Kind.ENTITY,
    label="physical entity",
    fields={
        "system": REF,
        "schema": STR,
        "name": STR,
        "description": STR,
        "tableType": STR,
        "dataSet": ANY,
        "isHidden": BOOL,
        "additionalProperties": PROPS,
    },
    required=("system", "name"),
    key=lambda doc: (ref_uuid(doc, "system"), doc.get("schema") or "", doc["name"]),
    describe_key=lambda doc: (
        f"{doc.get('schema') or ''}.{doc['name']} in system {ref_uuid(doc, 'system')}"
    ),
    parent=lambda doc: ref_uuid(doc, "system"),
    resolve=_resolve_entity,
    cascade=cascade.cascade_entity,
)

_SCHEMA_DOT_NAME = (
    "coalesce(json_extract(data, '$.schema') || '.', '') || json_extract(data, '$.name')"
)

ENTITY_FILTERS: tuple[Filter, ...] = (
    by_parent("systemUuid"),
    by_search("search", _SCHEMA_DOT_NAME),
    by_value("schema", "$.schema"),
    by_value("name", "$.name"),
    by_value("tableType", "$.tableType"),
    by_property(),
)


def _find_entity(db: TenantView, spec: dict[str, Any]) -> str:
    """The uuid of the entity a field names, by uuid or by `{schema, name, system {uuid}}`."""
    uuid = spec.get("uuid")
    if isinstance(uuid, str) and uuid:
        if db.get(Kind.ENTITY, uuid) is None:
            raise RowError(f"physicalEntity: no physical entity with uuid {uuid}")
        return uuid
    system = ref_uuid(spec, "system")
    name = spec.get("name")
    if not system or not isinstance(name, str) or not name:
        raise RowError("physicalEntity must have a uuid, or a name and a system {uuid}")
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise RowError(f"physicalEntity.schema must be a string, got {schema!r}")
    entity = db.find(Kind.ENTITY, (system, schema or "", name))
    if entity is None:
        raise RowError(
            f"physicalEntity: no physical entity {schema or ''}.{name} in system {system}"
        )
    return str(entity["uuid"])


def _resolve_field(db: TenantView, doc: Doc) -> None:
    doc["physicalEntity"] = {"uuid": _find_entity(db, doc["physicalEntity"])}


def _present_field(db: TenantView, doc: Doc) -> Doc:
    entity = db.get(Kind.ENTITY, ref_uuid(doc, "physicalEntity")) or {}
    system = db.get(Kind.SYSTEM, ref_uuid(entity, "system")) or {}
    shown = dict(doc)
    shown["physicalEntity"] = {
        "uuid": entity.get("uuid"),
        "schema": entity.get("schema"),
        "name": entity.get("name"),
        "system": {"uuid": system.get("uuid"), "name": system.get("name")},
    }
    return shown


FIELD = Resource(
    kind=Kind.FIELD,
    label="physical field",
    fields={
        "physicalEntity": LOOSE_REF,
        "name": STR,
        "type": STR,
        "ordinalPosition": INT,
        "description": STR,
        "additionalProperties": PROPS,
    },
    required=("physicalEntity", "name"),
    key=lambda doc: (ref_uuid(doc, "physicalEntity"), doc["name"]),
    describe_key=lambda doc: f"named {doc['name']!r} in entity {ref_uuid(doc, 'physicalEntity')}",
    parent=lambda doc: ref_uuid(doc, "physicalEntity"),
    resolve=_resolve_field,
    present=_present_field,
    cascade=cascade.cascade_field,
)


def _field_entity_filter(params: Params, tenant: str) -> Cond | None:
    """systemUuid, physicalEntitySchema and physicalEntityName select the fields' entities."""
    conds = []
    if system := params.get("systemUuid"):
        conds.append(Cond("parent = ?", (system,)))
    if schema := params.get("physicalEntitySchema"):
        conds.append(eq("$.schema", schema))
    if name := params.get("physicalEntityName"):
        conds.append(eq("$.name", name))
    return parent_in(tenant, Kind.ENTITY, conds) if conds else None


FIELD_FILTERS: tuple[Filter, ...] = (
    by_parent("physicalEntityUuid"),
    _field_entity_filter,
    by_value("physicalFieldName", "$.name"),
    by_search("search", "json_extract(data, '$.name')"),
)


# --- documentation --------------------------------------------------------------------------

DOCUMENTATION_FIELDS = {"content": STR, "contentType": STR}


def _documentation_view(doc: Doc) -> Doc:
    return {
        "physicalEntity": doc["physicalEntity"],
        "content": doc["content"],
        "contentType": doc["contentType"],
        "creationDate": doc["creationDate"],
        "modificationDate": doc["modificationDate"],
    }


def get_documentation(call: Call) -> Reply:
    """GET physical_entities/{uuid}/documentation; 404 when the entity has none."""
    entity = fetch(call.db, ENTITY, call.uuid)
    doc = call.db.find(Kind.DOCUMENTATION, (entity["uuid"],))
    if doc is None:
        raise ApiError(404, f"physical entity {entity['uuid']} has no documentation")
    return Reply(200, _documentation_view(doc))


def put_documentation(call: Call) -> Reply:
    """PUT physical_entities/{uuid}/documentation: create or replace it."""
    entity = fetch(call.db, ENTITY, call.uuid)
    try:
        values = clean(call.json_object(), DOCUMENTATION_FIELDS)
        require(values, ("content",))
    except RowError as err:
        raise ApiError(400, str(err)) from None
    key = (entity["uuid"],)
    stored = call.db.find(Kind.DOCUMENTATION, key)
    doc: Doc = stored or {
        "uuid": str(uuidlib.uuid4()),
        "physicalEntity": {"uuid": entity["uuid"]},
        "creationDate": call.now,
    }
    doc.update(content=values["content"], contentType=values.get("contentType") or MARKDOWN)
    doc["modificationDate"] = call.now
    if stored is None:
        call.db.insert(Kind.DOCUMENTATION, doc, key, entity["uuid"])
    else:
        call.db.update(Kind.DOCUMENTATION, doc, key, entity["uuid"])
    return Reply(200, _documentation_view(doc))
