"""The job definition: what one OpenLineage job may do in Blindata, as validated data.

A ``JobDefinition`` is loaded from YAML, JSON or a dict and handed to the operators; the mapper
only reads it. Every problem of a file is reported at once in one ``JobDefinitionError`` naming
the bad key as the user wrote it. The parts, each with one job:

* ``model.py``: the pydantic models, their defaults and checks, and the loaders;
* ``errors.py``: pydantic's validation errors translated into the user's messages;
* ``files.py``: YAML and JSON read strictly (a key written twice is an error).

Everything is imported from here: ``from airflow_blindata.definition import JobDefinition``.
"""

from airflow_blindata.definition.errors import JobDefinitionError, Problem
from airflow_blindata.definition.model import (
    DEFAULT_IGNORED_NAMESPACES,
    DEFAULT_NAME_TEMPLATE,
    DEFAULT_QUERY_BUCKET_NAME,
    MAX_RETENTION_DAYS,
    NAME_PROFILES,
    NAME_TEMPLATE_PLACEHOLDERS,
    OBJECT_KEY_LEVELS,
    QUERY_BUCKET_PLACEHOLDERS,
    RESERVED_SCOPE_PREFIX,
    SCHEME_NAME_TEMPLATES,
    SCHEME_TECHNOLOGIES,
    SUITE_CODE_PREFIX,
    Cleanup,
    Creation,
    IdentifierCase,
    JobDefinition,
    JobSystemRule,
    NamespaceMapping,
    OpenLineageSystem,
    Quality,
    Retention,
    SystemPolicy,
    SystemRef,
    SystemSubtype,
    canonical_uuid,
    matches_pattern,
)

__all__ = [
    "DEFAULT_IGNORED_NAMESPACES",
    "DEFAULT_NAME_TEMPLATE",
    "DEFAULT_QUERY_BUCKET_NAME",
    "MAX_RETENTION_DAYS",
    "NAME_PROFILES",
    "NAME_TEMPLATE_PLACEHOLDERS",
    "OBJECT_KEY_LEVELS",
    "QUERY_BUCKET_PLACEHOLDERS",
    "RESERVED_SCOPE_PREFIX",
    "SCHEME_NAME_TEMPLATES",
    "SCHEME_TECHNOLOGIES",
    "SUITE_CODE_PREFIX",
    "Cleanup",
    "Creation",
    "IdentifierCase",
    "JobDefinition",
    "JobDefinitionError",
    "JobSystemRule",
    "NamespaceMapping",
    "OpenLineageSystem",
    "Problem",
    "Quality",
    "Retention",
    "SystemPolicy",
    "SystemRef",
    "SystemSubtype",
    "canonical_uuid",
    "matches_pattern",
]
