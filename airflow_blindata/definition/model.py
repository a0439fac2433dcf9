"""The job definition's model: ``JobDefinition`` and its parts, validated, with the seeds' defaults.

Files use the seeds' camelCase keys, Python the snake_case attributes, and a file accepts one
spelling per key (``extra="forbid"``): an unknown or misspelt key is an error, never a silent
default. The models are frozen, so a run cannot alter its rules. The options, their defaults and
examples are in ``docs/configure-the-job.md``.

Patterns (``ignoredNamespaces`` and every ``pattern``) are shell-style globs matched against the
whole namespace, case-sensitively (``fnmatch.fnmatchcase``), and ``*`` also crosses ``/``. The
mapper matches dataset namespaces and the patterns of the three namespace lists in their
normalised spelling (``mapper.identity.normalize_pattern``: ``s3://*`` matches ``s3a://bucket``,
which is ``s3://bucket``); ``jobSystems`` patterns meet the job namespace as it is sent.
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Self
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from airflow_blindata.definition.errors import JobDefinitionError, Problem, describe, problems
from airflow_blindata.definition.files import json_data, yaml_data

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
    "JobSystemRule",
    "NamespaceMapping",
    "OpenLineageSystem",
    "Quality",
    "Retention",
    "SystemPolicy",
    "SystemRef",
    "SystemSubtype",
    "canonical_uuid",
    "matches_pattern",
]

DEFAULT_IGNORED_NAMESPACES = ("opensearch://*", "elasticsearch://*")
NAME_TEMPLATE_PLACEHOLDERS = frozenset(
    {"namespace", "scheme", "host", "port", "bucket", "database"}
)
DEFAULT_NAME_TEMPLATE = "{namespace}"
"""The namespace is the only name that cannot collide between two stores."""
SCHEME_NAME_TEMPLATES: Mapping[str, str] = {"s3": "{bucket}", "gs": "{bucket}"}
"""Seed 000: one System per S3 bucket, named after the bucket by default (GCS alike)."""
SCHEME_TECHNOLOGIES: Mapping[str, str] = {
    "s3": "Amazon S3",
    "redshift": "Amazon Redshift",
    "awsathena": "Amazon Athena",
    "postgres": "PostgreSQL",
    "mysql": "MySQL",
    "mssql": "Microsoft SQL Server",
    "oracle": "Oracle",
    "db2": "IBM Db2",
    "snowflake": "Snowflake",
    "bigquery": "Google BigQuery",
    "gs": "Google Cloud Storage",
    "hdfs": "HDFS",
    "kafka": "Apache Kafka",
    "abfss": "Azure Data Lake Storage",
    "abfs": "Azure Data Lake Storage",
    "wasbs": "Azure Blob Storage",
    "wasb": "Azure Blob Storage",
}
"""Technology of a System created for a scheme when its policy names none."""
_THREE = ("database", "schema", "table")
_TWO = ("database", "table")
OBJECT_KEY_LEVELS = ("key prefix", "dataset folder", "file")
"""The levels of ``nameProfile: OBJECT_KEY``: a path whose folders are read as seed 000's
``s3://`` profile reads them (``identity.object_key_entity``)."""
NAME_PROFILES: Mapping[str, tuple[str, ...]] = {
    "DOTTED": _THREE,
    "OBJECT_KEY": OBJECT_KEY_LEVELS,
    "athena": ("catalog", "database", "table"),
    "awsathena": ("catalog", "database", "table"),
    "bigquery": ("project", "dataset", "table"),
    "cassandra": ("keyspace", "table"),
    "clickhouse": _TWO,
    "databricks": ("catalog", "schema", "table"),
    "db2": _THREE,
    "duckdb": _THREE,
    "hive": _TWO,
    "mariadb": _TWO,
    "mssql": _THREE,
    "mysql": _TWO,
    "oracle": ("service", "schema", "table"),
    "postgres": _THREE,
    "postgresql": _THREE,
    "redshift": _THREE,
    "snowflake": _THREE,
    "sqlite": _THREE,
    "sqlserver": _THREE,
    "synapse": _THREE,
    "teradata": _TWO,
    "trino": ("catalog", "schema", "table"),
}
"""``nameProfile`` → the levels of a dataset name, as the OpenLineage naming specification
names them for that platform (spec/Naming.md, openlineage.io/docs/spec/naming). Three levels:
the last is the entity, the one before it the schema, what comes before the database (catalog,
project, service). Two levels: the first is the database, which is the schema the platform's
crawler stores (MySQL's database is its schema). ``DOTTED`` is what a hierarchy facet would give:
the last segment the entity, the one before it the schema. ``OBJECT_KEY`` reads a path as seed
000 reads an ``s3://`` key (for ``gs://``, ``abfss://``, ``wasbs://``, ``hdfs://``, ``file``)."""
DEFAULT_QUERY_BUCKET_NAME = "OpenLineage SQL {uuid}"
QUERY_BUCKET_PLACEHOLDERS = frozenset({"uuid"})
RESERVED_SCOPE_PREFIX = "ol:"
"""Flow scopes of the job start with this; cleanup removes by it."""
SUITE_CODE_PREFIX = "openlineage:"
MAX_RETENTION_DAYS = 36_500
"""A hundred years: beyond it ``now - timedelta(days)`` leaves the calendar."""
_EXAMPLE_UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def matches_pattern(value: str, pattern: str) -> bool:
    """Shell-style glob against the whole value, case-sensitive so it means the same everywhere.

    ``fnmatch.fnmatch`` would fold case on Windows workers and not on Linux ones.
    """
    return fnmatchcase(value, pattern)


def _check_pattern(pattern: str) -> str:
    if not pattern:
        raise ValueError("must not be empty (use '*' to match every namespace)")
    if pattern != pattern.strip():
        raise ValueError(f"must not start or end with spaces, got {pattern!r}")
    return pattern


def _check_text(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text


def canonical_uuid(text: str) -> str:
    """Canonical lowercase form, so that one definition always stamps the same owner (and is
    found under any spelling: ``report --uuid``, the Blindata page's ``?definition=``)."""
    try:
        return str(UUID(text))
    except ValueError:
        raise ValueError(f"must be a UUID such as {_EXAMPLE_UUID}, got {text!r}") from None


def _check_template(template: str, allowed: frozenset[str]) -> str:
    """Refuse at load time what would otherwise fail (KeyError) in the middle of a sync."""
    names = ", ".join(f"{{{name}}}" for name in sorted(allowed))
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ValueError(
            f"is not a valid template ({error}); write a brace as {{{{ or }}}}"
        ) from None
    for _literal, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in allowed:
            raise ValueError(f"unknown placeholder {{{field}}}; the placeholders are {names}")
        if spec or conversion:
            raise ValueError(f"placeholder {{{field}}} takes no format or conversion")
    return template


def _check_name_template(template: str) -> str:
    return _check_template(_check_text(template), NAME_TEMPLATE_PLACEHOLDERS)


def _check_query_bucket_name(template: str) -> str:
    _check_template(_check_text(template), QUERY_BUCKET_PLACEHOLDERS)
    if template.lstrip().lower().startswith(RESERVED_SCOPE_PREFIX):
        raise ValueError(
            f"must not start with {RESERVED_SCOPE_PREFIX!r}, got {template!r}: the statements and "
            "flows of the SQL analysis belong to the routine, and the scope cleanup of the job, "
            f"which removes by the {RESERVED_SCOPE_PREFIX!r} prefix, must never match them"
        )
    return template


Pattern = Annotated[str, AfterValidator(_check_pattern)]
Text = Annotated[str, AfterValidator(_check_text)]
Uuid = Annotated[str, AfterValidator(canonical_uuid)]
Days = Annotated[StrictInt, Field(ge=1, le=MAX_RETENTION_DAYS)]


class Creation(StrEnum):
    """Whether the job may create a missing System."""

    IF_MISSING = "IF_MISSING"
    NEVER = "NEVER"


class IdentifierCase(StrEnum):
    """How the unquoted identifiers of a dataset name are stored by its database."""

    UPPER = "UPPER"
    LOWER = "LOWER"
    PRESERVE = "PRESERVE"
    INSENSITIVE = "INSENSITIVE"
    """Never re-cased, and a name that differs from the stored one in case only is the stored
    object (SQL Server, MySQL: the sync adopts it when it is the only one)."""


def _check_name_profile(profile: str) -> str:
    if profile in NAME_PROFILES:
        return profile
    platforms = ", ".join(sorted(name for name in NAME_PROFILES if not name.isupper()))
    hint = next((name for name in NAME_PROFILES if name.lower() == profile.lower()), None)
    if hint is not None:
        raise ValueError(f"is {hint!r} (written so), got {profile!r}")
    raise ValueError(f"must be DOTTED, OBJECT_KEY or a platform ({platforms}), got {profile!r}")


NameProfile = Annotated[
    str,
    AfterValidator(_check_name_profile),
    WithJsonSchema({"type": "string", "enum": sorted(NAME_PROFILES)}),
]
"""A ``nameProfile``: its JSON Schema lists the profiles, so that an editor completes them."""


class SystemSubtype(StrEnum):
    """Blindata's System subtypes (``blindata-api.md`` §2)."""

    APPLICATION = "APPLICATION"
    ARCHIVE = "ARCHIVE"
    SERVICE = "SERVICE"
    DATABASE = "DATABASE"
    QUEUE = "QUEUE"
    JOB = "JOB"


class _Model(BaseModel):
    """camelCase keys in files, snake_case in Python; immutable, so a run cannot alter its rules."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        extra="forbid",
        frozen=True,
    )


class _PatternRule(_Model):
    pattern: Pattern = Field(description="Shell-style glob matched against the whole namespace.")

    def matches(self, namespace: str) -> bool:
        return matches_pattern(namespace, self.pattern)


class SystemRef(_Model):
    """A System named by exactly one of its name or its uuid."""

    name: Text | None = Field(default=None, description="The name of the System.")
    uuid: Uuid | None = Field(default=None, description="The uuid of the System.")

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if (self.name is None) == (self.uuid is None):
            raise ValueError("give exactly one of name or uuid")
        return self


_DATABASE_DESCRIPTION = (
    "Shell-style glob on the database (catalog, project) segment of the dataset name, as the "
    "name profile of the namespace finds it (after identifierCase); a name without one is "
    "matched as ''. Default: every database."
)


class _DatabaseRule(_PatternRule):
    database: Pattern | None = Field(default=None, description=_DATABASE_DESCRIPTION)

    def matches_database(self, database: str | None) -> bool:
        return self.database is None or matches_pattern(database or "", self.database)


class NamespaceMapping(_DatabaseRule):
    """Step 2 of the namespace resolution: these namespaces belong to that System."""

    system: SystemRef = Field(description="The System the namespaces belong to, if it exists.")


class SystemPolicy(_DatabaseRule):
    """Per-System settings; the first policy whose pattern (and database) matches applies.

    ``nameProfile``, ``defaultSchema`` and ``identifierCase`` say how the dataset names of the
    namespace are read: they are taken from the first entry whose pattern matches the namespace
    and that declares them, before the database is known, so an entry with ``database`` cannot
    declare them."""

    creation: Creation = Field(
        default=Creation.NEVER,
        description="IF_MISSING: create the System when no step before resolves the namespace. "
        "NEVER (default): report UNMAPPED_NAMESPACE instead.",
    )
    name_template: Annotated[str, AfterValidator(_check_name_template)] | None = Field(
        default=None,
        description="The name of a created System, with the placeholders {namespace} {scheme} "
        "{host} {port} {bucket} {database}. Default: {bucket} for s3 and gs, otherwise "
        "{namespace}.",
    )
    subtype: SystemSubtype = Field(
        default=SystemSubtype.DATABASE, description="The subtype of a created System."
    )
    technology: Text | None = Field(
        default=None,
        description="The technology of a created System. Default: by scheme (Amazon S3 for s3, "
        "PostgreSQL for postgres, ...: SCHEME_TECHNOLOGIES), else none.",
    )
    entity_creation: StrictBool | None = Field(
        default=None,
        description="Whether entities and fields may be created on the System. Default: true on "
        "Systems this definition created, false on mapped, stamped or crawled ones.",
    )
    replace_user_documentation: StrictBool = Field(
        default=False,
        description="Overwrite documentation that a user edited (default false: it is kept).",
    )
    name_profile: NameProfile | None = Field(
        default=None,
        description="How dataset names split: DOTTED (the last segment is the entity, the one "
        "before it the schema, what comes before the database) or a platform of the OpenLineage "
        "naming specification (snowflake, bigquery, databricks, mysql, mssql, oracle, trino, "
        "hive, db2, teradata, ...: NAME_PROFILES). Default: the seed's profile of the scheme "
        "(postgres, redshift, awsathena, Glue, s3), else the hierarchy facet, a TABLE symlink or "
        "the name as it is.",
    )
    default_schema: Text | None = Field(
        default=None,
        description="The schema of a dataset name with no schema part (needs nameProfile). "
        "Default: public for postgres and redshift, default for awsathena, else none.",
    )
    identifier_case: IdentifierCase | None = Field(
        default=None,
        description="UPPER, LOWER or PRESERVE: the case the database stores unquoted "
        "identifiers in (Snowflake, Oracle, DB2 upper; PostgreSQL, Redshift lower). Applied to "
        "the unquoted database, schema and entity of a name, and to its columns where the "
        "platform folds them too (not Databricks, Hive, MySQL, SQL Server, BigQuery); a quoted "
        "one keeps its case, except on platforms whose catalogs store every name in one case "
        "(databricks, hive, trino, presto, awsathena, redshift, mysql: by nameProfile, else by "
        "scheme). INSENSITIVE: never re-cased, and an entity or field stored in another case "
        "only, the only one so, is the one named. Default: names are never re-cased; the sync "
        "matches them to the stored ones by the platform's rules.",
    )

    @model_validator(mode="after")
    def _naming_is_per_namespace(self) -> Self:
        declared = [
            key
            for key, value in (
                ("nameProfile", self.name_profile),
                ("defaultSchema", self.default_schema),
                ("identifierCase", self.identifier_case),
            )
            if value is not None
        ]
        if self.database is not None and declared:
            raise ValueError(
                f"{' and '.join(declared)} cannot go with database: the database is read from "
                "the name by them; declare them on an entry without database for the same "
                "pattern, after this one"
            )
        if self.default_schema is not None and self.name_profile is None:
            raise ValueError("defaultSchema needs nameProfile on the same entry")
        return self

    def name_template_for(self, scheme: str) -> str:
        return self.name_template or SCHEME_NAME_TEMPLATES.get(scheme, DEFAULT_NAME_TEMPLATE)

    def system_name(
        self,
        *,
        namespace: str,
        scheme: str,
        host: str = "",
        port: str = "",
        bucket: str = "",
        database: str = "",
    ) -> str:
        """The name of the System this policy creates; parsing the namespace is the mapper's job.
        Trimmed: a part the namespace lacks (``"S3 {bucket}"`` without a bucket) leaves no
        trailing blank, which a server that trims names would no longer match."""
        return (
            self.name_template_for(scheme)
            .format(
                namespace=namespace,
                scheme=scheme,
                host=host,
                port=port,
                bucket=bucket,
                database=database,
            )
            .strip()
        )

    @property
    def per_database(self) -> bool:
        """Whether the Systems of this policy are one per database: it selects a database, or
        names its Systems after it."""
        return self.database is not None or "{database}" in (self.name_template or "")

    def technology_for(self, scheme: str) -> str | None:
        return self.technology or SCHEME_TECHNOLOGIES.get(scheme)

    def entity_creation_for(self, *, created_by_openlineage: bool) -> bool:
        """The seed's default: the job creates entities only on the Systems it created."""
        if self.entity_creation is None:
            return created_by_openlineage
        return self.entity_creation


class OpenLineageSystem(_Model):
    """The System that holds the jobs no jobSystems rule places elsewhere, and the quality suite."""

    name: Text = Field(default="OpenLineage", description="The name of the System.")
    subtype: SystemSubtype = Field(
        default=SystemSubtype.SERVICE, description="The subtype, when the job creates it."
    )
    technology: Text | None = Field(
        default="OpenLineage", description="The technology, when the job creates it."
    )


class JobSystemRule(_PatternRule):
    """Job namespace → the System that holds its job entities and routines."""

    system: SystemRef = Field(description="The System of the jobs of the matching namespaces.")
    creation: Creation = Field(
        default=Creation.NEVER,
        description="IF_MISSING: create the System by name. NEVER (default): a missing System is "
        "reported as JOB_SYSTEM_NOT_FOUND and the jobs go to openLineageSystem.",
    )
    shared: StrictBool = Field(
        default=False,
        description="Allow a System that does not already hold OpenLineage jobs (otherwise "
        "JOB_SYSTEM_NOT_SHARED).",
    )

    @model_validator(mode="after")
    def _creation_needs_a_name(self) -> Self:
        if self.creation is Creation.IF_MISSING and self.system.name is None:
            raise ValueError(
                "creation IF_MISSING needs system.name: a System cannot be created from a uuid"
            )
        return self


class Quality(_Model):
    """Seed 003: checks, results and profiling records."""

    enabled: StrictBool = Field(default=True, description="Publish checks, results and metrics.")
    metrics_enabled: StrictBool = Field(
        default=True, description="Publish profiling metric records (needs enabled)."
    )
    suite_code: Text | None = Field(
        default=None, description="The code of the quality suite. Default: openlineage:<uuid>."
    )


class Retention(_Model):
    """How long the event store remembers; the latest description of a job outlives its events."""

    job_described_for_days: Days = Field(
        default=30, description="A job with no event for this many days is no longer described."
    )
    raw_events_days: Days = Field(
        default=14,
        description="Raw events older than this are pruned; the latest description is kept.",
    )


class Cleanup(_Model):
    """Safety of the removal of what the job no longer describes."""

    enabled: StrictBool = Field(default=True, description="Remove what is no longer described.")
    max_removal_share: Annotated[float, Strict(), Field(gt=0, le=1)] = Field(
        default=0.2,
        description="Refuse a cleanup that would remove more than this share of what the job "
        "owns, unless forced.",
    )
    refuse_empty_snapshot: StrictBool = Field(
        default=True, description="Refuse a cleanup after a snapshot that describes nothing."
    )


def _check_airflow_base_url(value: str) -> str:
    """An http(s) URL, kept without its trailing slash: job entities carry links built on it."""
    url = value.strip().rstrip("/")
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest:
        raise ValueError(f"must be an http:// or https:// URL, got {value!r}")
    return url


class JobDefinition(_Model):
    """Every option of the seeds for one OpenLineage job, validated, with the seeds' defaults."""

    uuid: Uuid = Field(
        description="Stable identity: names the quality suite, the query bucket and the "
        "openLineageOwner stamp. Never change it."
    )
    ignored_namespaces: tuple[Pattern, ...] = Field(
        default=DEFAULT_IGNORED_NAMESPACES,
        description="Datasets in these namespaces are skipped (IGNORED_NAMESPACE).",
    )
    namespace_mappings: tuple[NamespaceMapping, ...] = Field(
        default=(), description="The first entry that matches and whose System exists applies."
    )
    system_policies: tuple[SystemPolicy, ...] = Field(
        default=(), description="The first entry whose pattern matches the namespace applies."
    )
    open_lineage_system: OpenLineageSystem = Field(
        default_factory=OpenLineageSystem,
        description="Where jobs go when no jobSystems rule applies.",
    )
    job_systems: tuple[JobSystemRule, ...] = Field(
        default=(), description="Job namespace → System of its jobs; the first match applies."
    )
    process_layer: StrictBool = Field(
        default=True, description="Catalog job entities, orchestration flows and test checks."
    )
    include_indirect: StrictBool = Field(
        default=False, description="Describe INDIRECT transformations in flow descriptions."
    )
    query_bucket_template: Annotated[str, AfterValidator(_check_query_bucket_name)] = Field(
        default=DEFAULT_QUERY_BUCKET_NAME,
        alias="queryBucketName",
        description="The query bucket of the SQL analysis; {uuid} is the definition uuid. Must "
        "not start with ol:.",
    )
    airflow_base_url: Annotated[str, AfterValidator(_check_airflow_base_url)] | None = Field(
        default=None,
        description="The Airflow UI's URL ([api] base_url): the job entity of an Airflow DAG or "
        "task links to it. Unset: the operators take [api] base_url.",
    )
    quality: Quality = Field(default_factory=Quality, description="Quality checks and metrics.")
    retention: Retention = Field(default_factory=Retention, description="Event store retention.")
    cleanup: Cleanup = Field(default_factory=Cleanup, description="Cleanup safety.")

    @field_validator("system_policies", "job_systems")
    @classmethod
    def _no_shadowed_entries(cls, rules: tuple[_PatternRule, ...]) -> tuple[_PatternRule, ...]:
        """Only the first match applies, so a repeated pattern is an entry that never does
        (with the same database selector, or after an entry of that pattern without one)."""
        first: dict[tuple[str, str | None], int] = {}
        for index, rule in enumerate(rules):
            database = rule.database if isinstance(rule, _DatabaseRule) else None
            earlier = first.get((rule.pattern, database), first.get((rule.pattern, None)))
            if earlier is not None:
                what = f"the same pattern {rule.pattern!r}"
                if database is not None:
                    shadowing = rules[earlier]
                    same = isinstance(shadowing, _DatabaseRule) and shadowing.database == database
                    what += (
                        f" and database {database!r}"
                        if same
                        else f", entry {earlier} for every database"
                    )
                raise ValueError(
                    f"entries {earlier} and {index} have {what}: only the first applies, so "
                    f"entry {index} never does"
                )
            first.setdefault((rule.pattern, database), index)
        return rules

    @property
    def query_bucket_name(self) -> str:
        return self.query_bucket_template.format(uuid=self.uuid)

    @property
    def quality_suite_code(self) -> str:
        return self.quality.suite_code or f"{SUITE_CODE_PREFIX}{self.uuid}"

    def is_ignored(self, namespace: str) -> bool:
        """Raw match, as written; the mapper matches normalised (``SystemResolver.ignores``)."""
        return any(matches_pattern(namespace, pattern) for pattern in self.ignored_namespaces)

    def with_airflow_base_url(self, url: str | None) -> Self:
        """The definition with ``airflowBaseUrl`` set to ``url`` (Airflow's ``[api] base_url``),
        unless it sets its own; an empty URL, or one that is no http(s) URL, changes nothing."""
        if self.airflow_base_url or not url:
            return self
        try:
            checked = _check_airflow_base_url(url)
        except ValueError:
            return self
        return self.model_copy(update={"airflow_base_url": checked})

    def job_system_rule_for(self, job_namespace: str) -> JobSystemRule | None:
        return next((rule for rule in self.job_systems if rule.matches(job_namespace)), None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> Self:
        """Validate parsed data; keys are accepted only in the file spelling (camelCase)."""
        return cls._from_parsed(data, source)

    @classmethod
    def from_yaml(cls, text: str, *, source: str | None = None) -> Self:
        """Read YAML text; a key written twice is a problem (``files.py``)."""
        return cls._from_parsed(yaml_data(text, source=source), source)

    @classmethod
    def from_json(cls, text: str, *, source: str | None = None) -> Self:
        """Read JSON text; a key written twice is a problem (``files.py``)."""
        return cls._from_parsed(json_data(text, source=source), source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a .json file as JSON and anything else (.yaml, .yml, no extension) as YAML."""
        source = os.fspath(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise JobDefinitionError(
                [Problem("", f"cannot read: {error}")], source=source
            ) from error
        if Path(path).suffix.lower() == ".json":
            return cls.from_json(text, source=source)
        return cls.from_yaml(text, source=source)

    @classmethod
    def coerce(cls, value: JobDefinition | Mapping[str, Any] | str | os.PathLike[str]) -> Self:
        """What the operators accept: a definition, a dict, or the path of a YAML or JSON file."""
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        if isinstance(value, str | os.PathLike):
            return cls.load(value)
        raise TypeError(f"expected a JobDefinition, a dict or a path, got {type(value).__name__}")

    @classmethod
    def _from_parsed(cls, data: Any, source: str | None) -> Self:
        if data is None:
            problem = Problem("uuid", "is required (the definition is empty)")
            raise JobDefinitionError([problem], source=source)
        if not isinstance(data, Mapping):
            problem = Problem("", f"must be a mapping of keys to values, got {describe(data)}")
            raise JobDefinitionError([problem], source=source)
        try:
            return cls.model_validate(data, by_alias=True, by_name=False)
        except ValidationError as error:
            raise JobDefinitionError(problems(error, JobDefinition), source=source) from None
