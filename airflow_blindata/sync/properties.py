"""The additional properties the sync writes, and reads back to know what it wrote.

``openLineageOwner`` (the definition uuid) marks what a definition created: cleanup removes only
objects that carry it. The hashes tell the job's own text from a person's edit (documentation,
and the description of an entity it created) and a changed SQL from an unchanged one (routines).
"""

from __future__ import annotations

from collections.abc import Iterable

from airflow_blindata.blindata.models import AdditionalProperty
from airflow_blindata.mapper.systems import OWNER_PROPERTY

__all__ = [
    "ANALYSIS_CONTEXT_PROPERTY",
    "DATASET_PROPERTY",
    "DESCRIBED_BY_PROPERTY",
    "DESCRIPTION_HASH_PROPERTY",
    "DOCUMENTATION_HASH_PROPERTY",
    "DOCUMENTED_BY_PROPERTY",
    "JOB_SCOPE_PROPERTY",
    "OWNER_PROPERTY",
    "SQL_DIALECT_PROPERTY",
    "SQL_HASH_PROPERTY",
    "STORE_PROPERTY",
    "TYPE_PROPERTY",
    "UNTYPED",
    "retyped",
    "values_of",
]

DATASET_PROPERTY = "openLineageDataset"
"""On an entity a definition wrote for a dataset: the dataset (namespace and name, as shown)."""
DOCUMENTATION_HASH_PROPERTY = "openLineageDocumentationHash"
DOCUMENTED_BY_PROPERTY = "openLineageDocumentedBy"
"""On an entity no job definition created (a crawler's, a person's): the uuid of the definition
that wrote its documentation. The hash cannot tell one definition's text from another's: without
it, two definitions that document one crawled table rewrote it in turn at every snapshot."""
DESCRIBED_BY_PROPERTY = "openLineageDescribedBy"
"""On an entity another job definition created: the uuids of the definitions whose snapshots
describe it too. Its owner's cleanup keeps it while another definition still describes it; each
definition's cleanup takes its own uuid off the entities its last snapshot did not refresh."""
DESCRIPTION_HASH_PROPERTY = "openLineageDescriptionHash"
"""The hash of the description the job wrote on an entity it created: a stored description that
no longer hashes to it was edited by a person, and is kept."""
TYPE_PROPERTY = "openLineageFieldType"
"""The type the job wrote on a field it owns: a stored type that is no longer it was changed by a
crawler of the store or a person (``VARCHAR(255)`` where the schema facet says ``string``), and
is kept, as a person's description is. A field the job created without a type is stamped
``UNTYPED``: a type a crawler gives it later is kept too."""
UNTYPED = "(none)"
"""The ``openLineageFieldType`` of a field the job created without a type (no type is named so)."""
SQL_HASH_PROPERTY = "openLineageSqlHash"
SQL_DIALECT_PROPERTY = "openLineageSqlDialect"
JOB_SCOPE_PROPERTY = "openLineageJobScope"
ANALYSIS_CONTEXT_PROPERTY = "openLineageAnalysisContext"
"""A digest of the catalogued tables (and their columns) that a routine's SQL names, as they were
when its statement was last submitted: a change is when a partial analysis is worth repeating."""
STORE_PROPERTY = "openLineageStore"
"""On a job entity or routine a definition owns: the id of the event store whose sync wrote it last
(``store_id``). Two deployments that share a definition uuid each own the other's objects by
the stamp alone; this one tells a cleanup that a job it no longer describes is another store's."""


def values_of(properties: Iterable[AdditionalProperty] | None, name: str) -> list[str]:
    """Every value of ``name`` (a name may repeat; a name held without a value has none)."""
    return [prop.value for prop in properties or () if prop.name == name and prop.value is not None]


def retyped(stored_type: str | None, properties: Iterable[AdditionalProperty] | None) -> bool:
    """Whether a field's stored type is no longer the one the job stamped (``TYPE_PROPERTY``),
    in any case (Blindata may give a type back in another): a crawler or a person retyped it. A
    field without the stamp (written before it existed) has no say."""
    stamps = values_of(properties, TYPE_PROPERTY)
    if not stamps or not (stored_type or "").strip():
        return False
    return _type_of(stored_type) not in {_type_of(stamp) for stamp in stamps}


def _type_of(text: str | None) -> str:
    return (text or "").strip().casefold()
