"""Profiling: monitors of an entity, and the metric records uploaded to them.

A monitor is unique by `(physicalEntity, name)`. A record's identity is
`(monitor, metricCode, physicalFieldName, timestamp)` (timestamps compared as instants): uploading
the same record again updates its value, so a re-sent run never doubles a metric.
"""

from __future__ import annotations

from . import cascade
from .errors import RowError
from .fields import DATE, NUM, REF, STR
from .model import Doc, Kind, ref_uuid
from .resource import Filter, Resource, by_parent, by_value
from .store import TenantView

__all__ = ["MONITOR", "MONITOR_FILTERS", "RECORD", "RECORD_FILTERS"]


def _resolve_monitor(db: TenantView, doc: Doc) -> None:
    entity = ref_uuid(doc, "physicalEntity")
    if entity and db.get(Kind.ENTITY, entity) is None:
        raise RowError(f"physicalEntity: no physical entity with uuid {entity}")


MONITOR = Resource(
    kind=Kind.MONITOR,
    label="profiling monitor",
    fields={"name": STR, "physicalEntity": REF, "description": STR},
    required=("name", "physicalEntity"),
    key=lambda doc: (ref_uuid(doc, "physicalEntity"), doc["name"]),
    describe_key=lambda doc: f"named {doc['name']!r} on entity {ref_uuid(doc, 'physicalEntity')}",
    parent=lambda doc: ref_uuid(doc, "physicalEntity"),
    resolve=_resolve_monitor,
    cascade=cascade.cascade_monitor,
)

MONITOR_FILTERS: tuple[Filter, ...] = (by_parent("physicalEntityUuid"), by_value("name", "$.name"))


def _resolve_record(db: TenantView, doc: Doc) -> None:
    monitor = ref_uuid(doc, "monitor")
    if monitor and db.get(Kind.MONITOR, monitor) is None:
        raise RowError(f"monitor: no profiling monitor with uuid {monitor}")


RECORD = Resource(
    kind=Kind.RECORD,
    label="profiling record",
    fields={
        "monitor": REF,
        "metricCode": STR,
        "physicalFieldName": STR,
        "value": NUM,
        "timestamp": DATE,
    },
    required=("monitor", "metricCode", "value", "timestamp"),
    key=lambda doc: (
        ref_uuid(doc, "monitor"),
        doc["metricCode"],
        doc.get("physicalFieldName") or "",
        doc["timestamp"],
    ),
    describe_key=lambda doc: f"{doc['metricCode']} at {doc['timestamp']}",
    parent=lambda doc: ref_uuid(doc, "monitor"),
    resolve=_resolve_record,
)

RECORD_FILTERS: tuple[Filter, ...] = (
    by_parent("monitorUuid"),
    by_value("metricCode", "$.metricCode"),
    by_value("physicalFieldName", "$.physicalFieldName"),
)
