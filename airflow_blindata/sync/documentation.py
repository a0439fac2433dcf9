"""Entity documentation, with the protection of people's edits (seed 000, "Documentation").

The job stamps the entity with ``openLineageDocumentationHash``, the hash of the document it
wrote. A stored document that no longer hashes to it was edited: it is kept
(``documentsKeptUserEdited``) unless the System's policy says ``replaceUserDocumentation``. A
document on an entity another definition created, or on a crawler's entity documented by another
definition (``openLineageDocumentedBy``, stamped next to the hash), is never replaced
(``documentsKeptOtherDefinition``). On an entity that exists, the document is written *before*
the new hash is uploaded with the entity.

Why: docs/mapping-reference.md#documentation-and-peoples-edits-syncdocumentationpy
"""

from __future__ import annotations

from airflow_blindata.blindata import BlindataError
from airflow_blindata.blindata.models import PhysicalEntity
from airflow_blindata.mapper.documentation import documentation_hash, is_stamped
from airflow_blindata.mapper.plan import PlannedEntity
from airflow_blindata.sync.context import SyncContext
from airflow_blindata.sync.properties import (
    DOCUMENTATION_HASH_PROPERTY,
    DOCUMENTED_BY_PROPERTY,
    OWNER_PROPERTY,
    values_of,
)

__all__ = ["KIND", "prepare_documentation", "write_documentation"]

KIND = "documentation"


def write_documentation(ctx: SyncContext, planned: PlannedEntity, uuid: str) -> bool:
    """Write the planned document of a new entity; False (failure recorded) when refused."""
    if not planned.documentation:
        return True
    return _write(ctx, planned, uuid) is not None


def prepare_documentation(
    ctx: SyncContext, planned: PlannedEntity, stored: PhysicalEntity, *, replace_user_edits: bool
) -> str | None:
    """Bring the document of an existing entity in line; the hash to stamp, or None to keep it.

    ``None`` leaves the stored ``openLineageDocumentationHash`` as it is.
    """
    if not planned.documentation or not planned.documentation_hash or not stored.uuid:
        return None
    key = str(planned.key)
    uuid = stored.uuid
    try:
        document = ctx.client.api.physical_entities.get_documentation(uuid)
    except BlindataError as exc:
        ctx.report.fail(KIND, key, str(exc))
        return None
    if document is None:
        return _write(ctx, planned, uuid)
    current = documentation_hash(document.content or "")
    # another definition's document: on its entity, or on a crawled one it documented first
    writers = values_of(stored.additional_properties, OWNER_PROPERTY) or values_of(
        stored.additional_properties, DOCUMENTED_BY_PROPERTY
    )
    theirs = bool(writers) and ctx.owner not in writers
    if current == planned.documentation_hash:
        ctx.report.count("documentsUnchanged")
        return None if theirs else planned.documentation_hash
    if theirs:
        ctx.report.count("documentsKeptOtherDefinition")
        return None
    ours = is_stamped(document.content or "", [stored.property(DOCUMENTATION_HASH_PROPERTY)])
    if ours or replace_user_edits:
        return _write(ctx, planned, uuid)
    ctx.report.count("documentsKeptUserEdited")
    return None


def _write(ctx: SyncContext, planned: PlannedEntity, uuid: str) -> str | None:
    content = planned.documentation or ""
    try:
        ctx.client.api.physical_entities.put_documentation(uuid, content)
    except BlindataError as exc:
        ctx.report.fail(KIND, str(planned.key), str(exc))
        return None
    ctx.report.count("documentsWritten")
    return planned.documentation_hash
