"""The words shared by every resource module: object kinds, the document type, references.

Each Blindata object is stored as one JSON document of a kind. A reference to another object is
the object `{"uuid": ...}`, as on the wire; `ref_uuid` reads one without caring whether it is set.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["Doc", "Kind", "ref", "ref_uuid"]

Doc = dict[str, Any]
"""One stored object, as JSON."""


class Kind:
    """The kinds of stored objects (the `kind` column of the store)."""

    SYSTEM: Final = "system"
    ENTITY: Final = "physical_entity"
    FIELD: Final = "physical_field"
    DOCUMENTATION: Final = "documentation"
    FLOW: Final = "dataflow"
    ROUTINE: Final = "routine"
    BUCKET: Final = "query_bucket"
    STATEMENT: Final = "query_statement"
    SUITE: Final = "quality_suite"
    CHECK: Final = "quality_check"
    RESULT: Final = "quality_result"
    MONITOR: Final = "profiling_monitor"
    RECORD: Final = "profiling_record"

    ALL: Final = (
        SYSTEM,
        ENTITY,
        FIELD,
        DOCUMENTATION,
        FLOW,
        ROUTINE,
        BUCKET,
        STATEMENT,
        SUITE,
        CHECK,
        RESULT,
        MONITOR,
        RECORD,
    )


def ref(uuid: str | None) -> dict[str, str] | None:
    """The wire reference to the object `uuid` (None stays None)."""
    return {"uuid": uuid} if uuid else None


def ref_uuid(doc: Doc, name: str) -> str | None:
    """The uuid in the reference `doc[name]`, or None when it is absent."""
    value = doc.get(name)
    if isinstance(value, dict):
        uuid = value.get("uuid")
        return uuid if isinstance(uuid, str) and uuid else None
    return None
