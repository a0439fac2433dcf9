"""Dataset facets that describe a dataset: its fields, documentation, identity and storage.

Seed 000 uses them to name and describe the physical entity: ``schema`` gives the fields (nested
ones dotted), ``documentation`` the description, ``hierarchy`` and ``symlinks`` the schema and
entity name, ``datasetType`` the table type, and ``catalog``, ``dataSource``, ``storage``,
``ownership`` and ``tags`` the entity's additional properties.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import BaseFacet, WireModel

__all__ = [
    "CatalogDatasetFacet",
    "DatasetTypeDatasetFacet",
    "DatasetVersionDatasetFacet",
    "DatasourceDatasetFacet",
    "DocumentationDatasetFacet",
    "HierarchyDatasetFacet",
    "HierarchyLevel",
    "InputSubsetInputDatasetFacet",
    "LifecycleStateChangeDatasetFacet",
    "OutputSubsetOutputDatasetFacet",
    "Owner",
    "OwnershipDatasetFacet",
    "PreviousIdentifier",
    "SchemaDatasetFacet",
    "SchemaField",
    "StorageDatasetFacet",
    "SymlinkIdentifier",
    "SymlinksDatasetFacet",
    "Tag",
    "TagsDatasetFacet",
]


class SchemaField(WireModel):
    name: str
    type: str | None = None
    description: str | None = None
    ordinal_position: int | None = Field(default=None, alias="ordinal_position")
    fields: list[SchemaField] | None = None


class SchemaDatasetFacet(BaseFacet):
    KEY = "schema"
    SCHEMAS = ("SchemaDatasetFacet",)

    fields: list[SchemaField] | None = None


class DocumentationDatasetFacet(BaseFacet):
    KEY = "documentation"
    SCHEMAS = ("DocumentationDatasetFacet",)

    description: str
    content_type: str | None = None


class DatasetTypeDatasetFacet(BaseFacet):
    KEY = "datasetType"
    SCHEMAS = ("DatasetTypeDatasetFacet",)

    dataset_type: str
    sub_type: str | None = None


class DatasetVersionDatasetFacet(BaseFacet):
    KEY = "version"
    SCHEMAS = ("DatasetVersionDatasetFacet",)

    dataset_version: str


class HierarchyLevel(WireModel):
    type: str
    name: str


class HierarchyDatasetFacet(BaseFacet):
    KEY = "hierarchy"
    # OpenLineage's clients also name it DatabaseHierarchyDatasetFacet (key ``databaseHierarchy``)
    SCHEMAS = ("HierarchyDatasetFacet", "DatabaseHierarchyDatasetFacet")

    hierarchy: list[HierarchyLevel]


class SymlinkIdentifier(WireModel):
    namespace: str
    name: str
    type: str


class SymlinksDatasetFacet(BaseFacet):
    KEY = "symlinks"
    SCHEMAS = ("SymlinksDatasetFacet",)

    identifiers: list[SymlinkIdentifier] | None = None


class CatalogDatasetFacet(BaseFacet):
    KEY = "catalog"
    SCHEMAS = ("CatalogDatasetFacet",)

    framework: str
    type: str
    name: str
    metadata_uri: str | None = None
    warehouse_uri: str | None = None
    source: str | None = None
    catalog_properties: dict[str, str] | None = None


class DatasourceDatasetFacet(BaseFacet):
    KEY = "dataSource"
    SCHEMAS = ("DatasourceDatasetFacet",)

    name: str | None = None
    uri: str | None = None


class StorageDatasetFacet(BaseFacet):
    KEY = "storage"
    SCHEMAS = ("StorageDatasetFacet",)

    storage_layer: str
    file_format: str | None = None


class Owner(WireModel):
    name: str
    type: str | None = None


class OwnershipDatasetFacet(BaseFacet):
    KEY = "ownership"
    SCHEMAS = ("OwnershipDatasetFacet",)

    owners: list[Owner] | None = None


class Tag(WireModel):
    """A tag; ``field`` is set only on dataset tags that apply to one field."""

    key: str
    value: str
    source: str | None = None
    field: str | None = None


class TagsDatasetFacet(BaseFacet):
    KEY = "tags"
    SCHEMAS = ("TagsDatasetFacet",)

    tags: list[Tag] | None = None


class PreviousIdentifier(WireModel):
    namespace: str
    name: str


class LifecycleStateChangeDatasetFacet(BaseFacet):
    KEY = "lifecycleStateChange"
    SCHEMAS = ("LifecycleStateChangeDatasetFacet",)

    lifecycle_state_change: Literal["ALTER", "CREATE", "DROP", "OVERWRITE", "RENAME", "TRUNCATE"]
    previous_identifier: PreviousIdentifier | None = None


class InputSubsetInputDatasetFacet(BaseFacet):
    """The part of an input that was read; the condition tree is kept as sent."""

    KEY = "subset"
    SCHEMAS = ("InputSubsetInputDatasetFacet", "InputSubsetDatasetFacet")

    input_condition: dict[str, Any]


class OutputSubsetOutputDatasetFacet(BaseFacet):
    """The part of an output that was written; the condition tree is kept as sent."""

    KEY = "subset"
    SCHEMAS = ("OutputSubsetOutputDatasetFacet", "OutputSubsetDatasetFacet")

    output_condition: dict[str, Any]
