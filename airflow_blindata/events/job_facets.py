"""Job facets: what the job is, where its code lives, and its SQL.

Seed 000 turns a job into an ``OPENLINEAGE_JOB`` entity: ``jobType`` gives its type, processing
type and integration, ``documentation`` its description, ``sourceCodeLocation``, ``ownership``
and ``tags`` its properties, and ``sql`` a routine analysed for column lineage (seed 001).
"""

from __future__ import annotations

from .base import BaseFacet, WireModel
from .dataset_facets import Owner

__all__ = [
    "DocumentationJobFacet",
    "EmissionPattern",
    "JobTag",
    "JobTypeJobFacet",
    "OwnershipJobFacet",
    "SQLJobFacet",
    "SourceCodeJobFacet",
    "SourceCodeLocationJobFacet",
    "TagsJobFacet",
]


class SQLJobFacet(BaseFacet):
    KEY = "sql"
    SCHEMAS = ("SQLJobFacet",)

    query: str
    dialect: str | None = None


class EmissionPattern(WireModel):
    """How a job emits: streaming jobs send periodic snapshots instead of terminal events."""

    event_trigger: str
    event_content_mode: str
    window_duration: int | None = None


class JobTypeJobFacet(BaseFacet):
    KEY = "jobType"
    SCHEMAS = ("JobTypeJobFacet",)

    processing_type: str
    integration: str
    job_type: str | None = None
    emission_pattern: EmissionPattern | None = None


class SourceCodeLocationJobFacet(BaseFacet):
    KEY = "sourceCodeLocation"
    SCHEMAS = ("SourceCodeLocationJobFacet",)

    type: str
    url: str
    repo_url: str | None = None
    path: str | None = None
    version: str | None = None
    tag: str | None = None
    branch: str | None = None
    pull_request_number: str | None = None


class SourceCodeJobFacet(BaseFacet):
    KEY = "sourceCode"
    SCHEMAS = ("SourceCodeJobFacet",)

    language: str
    source_code: str


class DocumentationJobFacet(BaseFacet):
    KEY = "documentation"
    SCHEMAS = ("DocumentationJobFacet",)

    description: str
    content_type: str | None = None


class OwnershipJobFacet(BaseFacet):
    KEY = "ownership"
    SCHEMAS = ("OwnershipJobFacet",)

    owners: list[Owner] | None = None


class JobTag(WireModel):
    key: str
    value: str
    source: str | None = None


class TagsJobFacet(BaseFacet):
    KEY = "tags"
    SCHEMAS = ("TagsJobFacet",)

    tags: list[JobTag] | None = None
