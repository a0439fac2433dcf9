"""The job definition: every option of the seeds, its default, its validation and its errors.

Tests are named after the seed sentence (or the promise of ``docs/configure-the-job.md``) they
check. Most are tables: one row per option, pattern or mistake.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from airflow_blindata.definition import (
    MAX_RETENTION_DAYS,
    NAME_PROFILES,
    Cleanup,
    Creation,
    IdentifierCase,
    JobDefinition,
    JobDefinitionError,
    JobSystemRule,
    NamespaceMapping,
    OpenLineageSystem,
    Problem,
    Quality,
    Retention,
    SystemPolicy,
    SystemRef,
    SystemSubtype,
    matches_pattern,
)
from airflow_blindata.mapper.identity import NameReading
from airflow_blindata.mapper.systems import (
    name_reading_for,
    namespace_mappings_for,
    system_policy_for,
)

UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
OTHER_UUID = "0e8b4c1a-2d3f-4a5b-9c6d-7e8f9a0b1c2d"
FIXTURES = Path(__file__).parent / "fixtures" / "job-definitions"
SHARED_EXAMPLE = Path(__file__).parents[2] / "shared" / "job-definition.example.yaml"
DOCS = Path(__file__).parents[1] / "docs" / "configure-the-job.md"
MODELS: tuple[type[BaseModel], ...] = (
    JobDefinition,
    SystemRef,
    NamespaceMapping,
    SystemPolicy,
    OpenLineageSystem,
    JobSystemRule,
    Quality,
    Retention,
    Cleanup,
)


def minimal(**options: Any) -> JobDefinition:
    return JobDefinition.from_dict({"uuid": UUID, **options})


def problems_of(data: Any) -> list[str]:
    with pytest.raises(JobDefinitionError) as caught:
        JobDefinition.from_dict(data)
    return [str(problem) for problem in caught.value.problems]


# --- the example file ---------------------------------------------------------------------------


def test_the_example_definition_loads_and_its_unset_options_are_the_defaults() -> None:
    example = JobDefinition.load(FIXTURES / "example.yaml")
    rules = ("namespace_mappings", "system_policies", "job_systems")
    # Everything but the three lists of rules is written out at its default in the example.
    assert example.model_dump(exclude=set(rules)) == minimal().model_dump(exclude=set(rules))
    assert example.namespace_mappings == (
        NamespaceMapping(
            pattern="redshift://my-dwh.eu-west-1:5439", system={"name": "DWH Redshift"}
        ),
    )
    s3, postgres = example.system_policies
    assert (s3.creation, s3.name_template, s3.technology, s3.entity_creation) == (
        Creation.IF_MISSING,
        "{bucket}",
        "Amazon S3",
        True,
    )
    assert (postgres.name_template, postgres.subtype, postgres.entity_creation) == (
        "{host}",
        SystemSubtype.DATABASE,
        None,
    )
    assert example.job_systems == (
        JobSystemRule(
            pattern="airflow-prod", system=SystemRef(name="Airflow Prod"), creation="IF_MISSING"
        ),
    )


@pytest.mark.skipif(not SHARED_EXAMPLE.exists(), reason="the shared example is not checked out")
def test_the_fixture_is_the_shared_example() -> None:
    assert (FIXTURES / "example.yaml").read_text() == SHARED_EXAMPLE.read_text()


def test_json_and_yaml_give_equal_models() -> None:
    assert JobDefinition.load(FIXTURES / "example.json") == JobDefinition.load(
        FIXTURES / "example.yaml"
    )


# --- defaults -----------------------------------------------------------------------------------

DEFAULTS = [
    ("ignored_namespaces", ("opensearch://*", "elasticsearch://*")),
    ("namespace_mappings", ()),
    ("system_policies", ()),
    ("job_systems", ()),
    ("open_lineage_system.name", "OpenLineage"),
    ("open_lineage_system.subtype", SystemSubtype.SERVICE),
    ("open_lineage_system.technology", "OpenLineage"),
    ("process_layer", True),
    ("include_indirect", False),
    ("query_bucket_template", "OpenLineage SQL {uuid}"),
    ("query_bucket_name", f"OpenLineage SQL {UUID}"),
    ("quality.enabled", True),
    ("quality.metrics_enabled", True),
    ("quality.suite_code", None),
    ("quality_suite_code", f"openlineage:{UUID}"),
    ("retention.job_described_for_days", 30),
    ("retention.raw_events_days", 14),
    ("cleanup.enabled", True),
    ("cleanup.max_removal_share", 0.2),
    ("cleanup.refuse_empty_snapshot", True),
]


@pytest.mark.parametrize(("attribute", "expected"), DEFAULTS, ids=[row[0] for row in DEFAULTS])
def test_every_option_has_the_seeds_default(attribute: str, expected: Any) -> None:
    value: Any = minimal()
    for part in attribute.split("."):
        value = getattr(value, part)
    assert value == expected


POLICY_DEFAULTS = [
    ("creation", Creation.NEVER),
    ("name_template", None),
    ("subtype", SystemSubtype.DATABASE),
    ("technology", None),
    ("entity_creation", None),
    ("replace_user_documentation", False),
]


@pytest.mark.parametrize(
    ("attribute", "expected"), POLICY_DEFAULTS, ids=[r[0] for r in POLICY_DEFAULTS]
)
def test_a_system_policy_has_the_seeds_defaults(attribute: str, expected: Any) -> None:
    assert getattr(SystemPolicy(pattern="*"), attribute) == expected


def test_a_job_systems_rule_creates_nothing_and_is_not_shared_by_default() -> None:
    rule = JobSystemRule(pattern="*", system=SystemRef(name="Airflow"))
    assert (rule.creation, rule.shared) == (Creation.NEVER, False)


# --- namespace to System ------------------------------------------------------------------------

IGNORED = [
    ("opensearch://search.example:9200", True),
    ("elasticsearch://es.example:9200", True),
    ("postgres://db.example:5432", False),
    ("s3://opensearch", False),
]


@pytest.mark.parametrize(("namespace", "ignored"), IGNORED, ids=[r[0] for r in IGNORED])
def test_opensearch_and_elasticsearch_are_ignored_by_default(namespace: str, ignored: bool) -> None:
    assert minimal().is_ignored(namespace) is ignored


def test_an_empty_ignored_namespaces_list_ignores_nothing() -> None:
    assert not minimal(ignoredNamespaces=[]).is_ignored("opensearch://search.example:9200")


GLOBS = [
    ("s3://*", "s3://bucket", True),
    ("s3://*", "s3a://bucket", False),
    ("s3://*", "s3://", True),
    ("s3://*", "s3://bucket/with/slashes", True),
    ("s3://bucket", "s3://bucket-2", False),
    ("s3://bucket", "xs3://bucket", False),
    ("postgres://*:5432", "postgres://db.example:5432", True),
    ("postgres://*:5432", "postgres://db.example:6432", False),
    ("postgres://db?.example:*", "postgres://db1.example:5432", True),
    ("postgres://db[12].example:*", "postgres://db3.example:5432", False),
    ("S3://*", "s3://bucket", False),
    ("*", "anything://at-all", True),
]


@pytest.mark.parametrize(
    ("pattern", "namespace", "matches"), GLOBS, ids=[f"{p} {n}" for p, n, _ in GLOBS]
)
def test_patterns_are_shell_globs_matched_against_the_whole_namespace(
    pattern: str, namespace: str, matches: bool
) -> None:
    assert matches_pattern(namespace, pattern) is matches
    assert SystemPolicy(pattern=pattern).matches(namespace) is matches


def test_namespace_mappings_are_tried_in_the_order_written() -> None:
    definition = minimal(
        namespaceMappings=[
            {"pattern": "redshift://*", "system": {"name": "Any Redshift"}},
            {"pattern": "postgres://*", "system": {"name": "Postgres"}},
            {"pattern": "redshift://dwh:5439", "system": {"uuid": OTHER_UUID}},
        ]
    )
    systems = [m.system for m in namespace_mappings_for(definition, "redshift://dwh:5439")]
    assert systems == [SystemRef(name="Any Redshift"), SystemRef(uuid=OTHER_UUID)]
    assert namespace_mappings_for(definition, "mysql://db:3306") == []


def test_nothing_is_created_unless_a_policy_says_so() -> None:
    definition = minimal(systemPolicies=[{"pattern": "s3://*", "technology": "Amazon S3"}])
    assert system_policy_for(definition, "postgres://db:5432") is None
    policy = system_policy_for(definition, "s3://bucket")
    assert policy is not None
    assert policy.creation is Creation.NEVER


def test_the_first_system_policy_that_matches_applies() -> None:
    definition = minimal(
        systemPolicies=[
            {"pattern": "s3://raw-*", "creation": "NEVER"},
            {"pattern": "s3://*", "creation": "IF_MISSING"},
            {"pattern": "*", "subtype": "ARCHIVE"},
        ]
    )
    chosen = {
        namespace: definition.system_policies.index(policy)
        for namespace in ("s3://raw-events", "s3://curated", "gs://bucket")
        if (policy := system_policy_for(definition, namespace)) is not None
    }
    assert chosen == {"s3://raw-events": 0, "s3://curated": 1, "gs://bucket": 2}


def test_a_repeated_pattern_is_refused_because_only_the_first_entry_could_apply() -> None:
    assert problems_of(
        {"uuid": UUID, "systemPolicies": [{"pattern": "s3://*"}, {"pattern": "s3://*"}]}
    ) == [
        "systemPolicies: entries 0 and 1 have the same pattern 's3://*': only the first applies, "
        "so entry 1 never does"
    ]


def test_the_same_pattern_may_repeat_for_other_databases_but_not_after_every_database() -> None:
    """Issue 37, item 2: entries may select a database; one that never applies is refused as a
    repeated pattern is."""
    per_database = [
        {"pattern": "postgres://pg:5432", "database": "prod"},
        {"pattern": "postgres://pg:5432", "database": "dev"},
        {"pattern": "postgres://pg:5432"},
    ]
    assert len(minimal(systemPolicies=per_database).system_policies) == 3
    assert problems_of({"uuid": UUID, "systemPolicies": [per_database[2], per_database[0]]}) == [
        "systemPolicies: entries 0 and 1 have the same pattern 'postgres://pg:5432', entry 0 for "
        "every database: only the first applies, so entry 1 never does"
    ]
    assert problems_of({"uuid": UUID, "systemPolicies": [per_database[0], per_database[0]]}) == [
        "systemPolicies: entries 0 and 1 have the same pattern 'postgres://pg:5432' and database "
        "'prod': only the first applies, so entry 1 never does"
    ]


def test_the_first_matching_entries_declaring_them_say_how_names_are_read() -> None:
    definition = minimal(
        systemPolicies=[
            {
                "pattern": "snowflake://myorg-acct",
                "database": "RAW",
                "nameTemplate": "SF {database}",
            },
            {"pattern": "snowflake://*", "identifierCase": "UPPER"},
            {"pattern": "*", "nameProfile": "DOTTED", "defaultSchema": "main"},
        ]
    )
    reading = name_reading_for(definition, "snowflake://myorg-acct")
    assert (reading.levels, reading.default_schema, reading.case) == (
        ("database", "schema", "table"),
        "main",
        "UPPER",
    )
    assert name_reading_for(minimal(), "snowflake://myorg-acct") == NameReading()
    policy = system_policy_for(definition, "snowflake://myorg-acct", "RAW")
    assert policy is not None and policy.name_template == "SF {database}"
    policy = system_policy_for(definition, "snowflake://myorg-acct", "ANALYTICS")
    assert policy is not None and policy.identifier_case == "UPPER"


SYSTEM_NAMES = [
    ("s3", {}, "s3://sales", "sales"),
    ("s3", {"nameTemplate": "S3 {bucket}"}, "s3://sales", "S3 sales"),
    ("postgres", {}, "postgres://db.example:5432", "postgres://db.example:5432"),
    ("postgres", {"nameTemplate": "{host}"}, "postgres://db.example:5432", "db.example"),
    (
        "postgres",
        {"nameTemplate": "{scheme} {host}:{port}"},
        "postgres://db:5432",
        "postgres db:5432",
    ),
    ("kafka", {"nameTemplate": "{{{namespace}}}"}, "kafka://broker:9092", "{kafka://broker:9092}"),
    ("postgres", {"nameTemplate": "{host} {database}"}, "postgres://db:5432", "db prod"),
]


@pytest.mark.parametrize(
    ("scheme", "options", "namespace", "name"), SYSTEM_NAMES, ids=[r[3] for r in SYSTEM_NAMES]
)
def test_a_created_system_is_named_by_the_name_template(
    scheme: str, options: dict[str, str], namespace: str, name: str
) -> None:
    policy = SystemPolicy.model_validate({"pattern": "*", **options})
    parts = {"host": "db.example" if "db.example" in namespace else "db", "port": "5432"}
    bucket = namespace.removeprefix("s3://")
    assert (
        policy.system_name(
            namespace=namespace, scheme=scheme, bucket=bucket, database="prod", **parts
        )
        == name
    )


def test_one_system_per_s3_bucket_named_after_the_bucket_with_technology_amazon_s3() -> None:
    policy = SystemPolicy(pattern="s3://*", creation=Creation.IF_MISSING)
    assert policy.name_template_for("s3") == "{bucket}"
    assert policy.technology_for("s3") == "Amazon S3"
    assert policy.technology_for("postgres") == "PostgreSQL"
    assert policy.technology_for("ftp") is None
    assert SystemPolicy(pattern="*", technology="MinIO").technology_for("s3") == "MinIO"


ENTITY_CREATION = [
    (None, True, True),
    (None, False, False),
    (False, True, False),
    (True, False, True),
]


@pytest.mark.parametrize(("setting", "created_by_openlineage", "allowed"), ENTITY_CREATION)
def test_entity_creation_defaults_to_true_on_systems_created_by_openlineage_only(
    setting: bool | None, created_by_openlineage: bool, allowed: bool
) -> None:
    policy = SystemPolicy(pattern="*", entity_creation=setting)
    assert policy.entity_creation_for(created_by_openlineage=created_by_openlineage) is allowed


# --- jobs, SQL, quality ---------------------------------------------------------------------------


def test_jobs_go_to_the_openlineage_system_when_no_job_systems_rule_applies() -> None:
    definition = minimal(
        jobSystems=[{"pattern": "airflow-*", "system": {"name": "Airflow"}, "shared": True}]
    )
    rule = definition.job_system_rule_for("airflow-prod")
    assert rule is not None
    assert (rule.system.name, rule.shared) == ("Airflow", True)
    assert definition.job_system_rule_for("dbt") is None
    assert definition.open_lineage_system == OpenLineageSystem()


def test_a_job_system_is_created_only_by_name() -> None:
    rule = {"pattern": "x", "system": {"uuid": OTHER_UUID}, "creation": "IF_MISSING"}
    assert problems_of({"uuid": UUID, "jobSystems": [rule]}) == [
        "jobSystems[0]: creation IF_MISSING needs system.name: a System cannot be created from a "
        "uuid"
    ]


def test_the_query_bucket_is_named_openlineage_sql_and_the_definition_uuid() -> None:
    assert minimal().query_bucket_name == f"OpenLineage SQL {UUID}"
    custom = minimal(queryBucketName="Lineage {uuid} ({{prod}})")
    assert custom.query_bucket_name == f"Lineage {UUID} ({{prod}})"


@pytest.mark.parametrize("name", ["ol:bucket", "OL:bucket", "  ol:{uuid}"])
def test_query_bucket_name_must_not_start_with_ol(name: str) -> None:
    (problem,) = problems_of({"uuid": UUID, "queryBucketName": name})
    assert problem.startswith(f"queryBucketName: must not start with 'ol:', got {name!r}")
    assert "belong to the routine" in problem
    assert "scope cleanup" in problem


def test_the_suite_code_is_openlineage_and_the_uuid_unless_set() -> None:
    assert minimal().quality_suite_code == f"openlineage:{UUID}"
    assert minimal(quality={"suiteCode": "dq-lineage"}).quality_suite_code == "dq-lineage"


def test_the_uuid_is_kept_in_canonical_form_so_the_owner_stamp_never_changes() -> None:
    assert JobDefinition.from_dict({"uuid": UUID.upper()}).uuid == UUID
    assert JobDefinition.from_dict({"uuid": UUID.replace("-", "")}).uuid == UUID


# --- errors -------------------------------------------------------------------------------------

MISTAKES = [
    ({}, "uuid: is required"),
    ({"uuid": "prod"}, f"uuid: must be a UUID such as {UUID}, got 'prod'"),
    ({"uuid": 42}, "uuid: must be a string, got 42"),
    (
        {"ignoredNamespaces": "opensearch://*"},
        "ignoredNamespaces: must be a list, got 'opensearch://*'",
    ),
    (
        {"ignoredNamespaces": [""]},
        "ignoredNamespaces[0]: must not be empty (use '*' to match every namespace)",
    ),
    (
        {"ignoredNamespaces": [" s3://*"]},
        "ignoredNamespaces[0]: must not start or end with spaces, got ' s3://*'",
    ),
    ({"namespaceMappings": [{"pattern": "x"}]}, "namespaceMappings[0].system: is required"),
    (
        {"namespaceMappings": [{"pattern": "x", "system": {"name": "A", "uuid": OTHER_UUID}}]},
        "namespaceMappings[0].system: give exactly one of name or uuid",
    ),
    (
        {"namespaceMappings": [{"pattern": "x", "system": {}}]},
        "namespaceMappings[0].system: give exactly one of name or uuid",
    ),
    (
        {"namespaceMappings": [{"pattern": "x", "system": {"name": " "}}]},
        "namespaceMappings[0].system.name: must not be empty",
    ),
    (
        {"systemPolicies": [{"pattern": "a"}, {"pattern": "b", "creation": "ALWAYS"}]},
        "systemPolicies[1].creation: must be IF_MISSING or NEVER, got 'ALWAYS'",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "subtype": "database"}]},
        "systemPolicies[0].subtype: must be APPLICATION, ARCHIVE, SERVICE, DATABASE, QUEUE or JOB, "
        "got 'database'",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameTemplate": "{hostname}"}]},
        "systemPolicies[0].nameTemplate: unknown placeholder {hostname}; the placeholders are "
        "{bucket}, {database}, {host}, {namespace}, {port}, {scheme}",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameProfile": "Snowflake"}]},
        "systemPolicies[0].nameProfile: is 'snowflake' (written so), got 'Snowflake'",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameProfile": "vertica"}]},
        "systemPolicies[0].nameProfile: must be DOTTED, OBJECT_KEY or a platform (athena, "
        "awsathena, bigquery, cassandra, clickhouse, databricks, db2, duckdb, hive, mariadb, "
        "mssql, mysql, oracle, postgres, postgresql, redshift, snowflake, sqlite, sqlserver, "
        "synapse, teradata, trino), got 'vertica'",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "identifierCase": "upper"}]},
        "systemPolicies[0].identifierCase: must be UPPER, LOWER, PRESERVE or INSENSITIVE, "
        "got 'upper'",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "defaultSchema": "dbo"}]},
        "systemPolicies[0]: defaultSchema needs nameProfile on the same entry",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "database": "prod", "identifierCase": "UPPER"}]},
        "systemPolicies[0]: identifierCase cannot go with database: the database is read from "
        "the name by them; declare them on an entry without database for the same pattern, "
        "after this one",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "database": ""}]},
        "systemPolicies[0].database: must not be empty (use '*' to match every namespace)",
    ),
    (
        {"namespaceMappings": [{"pattern": "a", "database": 5, "system": {"name": "A"}}]},
        "namespaceMappings[0].database: must be a string, got 5",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameTemplate": "{host"}]},
        "systemPolicies[0].nameTemplate: is not a valid template (expected '}' before end of "
        "string); write a brace as {{ or }}",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameTemplate": "{host:>9}"}]},
        "systemPolicies[0].nameTemplate: placeholder {host} takes no format or conversion",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "nameTemplate": ""}]},
        "systemPolicies[0].nameTemplate: must not be empty",
    ),
    (
        {"systemPolicies": [{"pattern": "a", "entityCreation": "yes"}]},
        "systemPolicies[0].entityCreation: must be true or false, got 'yes'",
    ),
    ({"openLineageSystem": {"name": ""}}, "openLineageSystem.name: must not be empty"),
    (
        {"openLineageSystem": "OpenLineage"},
        "openLineageSystem: must be a mapping of keys to values, got 'OpenLineage'",
    ),
    (
        {"jobSystems": [{"pattern": "a", "system": {"name": "A"}, "shared": 1}]},
        "jobSystems[0].shared: must be true or false, got 1",
    ),
    ({"processLayer": "false"}, "processLayer: must be true or false, got 'false'"),
    ({"quality": {2: True}}, "quality: keys must be text, got 2"),
    ({"includeIndirect": None}, "includeIndirect: must be true or false, got null"),
    (
        {"queryBucketName": "SQL {bucket}"},
        "queryBucketName: unknown placeholder {bucket}; the placeholders are {uuid}",
    ),
    (
        {"quality": {"metricsEnabled": "no"}},
        "quality.metricsEnabled: must be true or false, got 'no'",
    ),
    ({"quality": {"suiteCode": ""}}, "quality.suiteCode: must not be empty"),
    ({"retention": {"rawEventsDays": 0}}, "retention.rawEventsDays: must be at least 1, got 0"),
    (
        {"retention": {"jobDescribedForDays": 7.5}},
        "retention.jobDescribedForDays: must be a whole number, got 7.5",
    ),
    (
        {"retention": {"jobDescribedForDays": True}},
        "retention.jobDescribedForDays: must be a whole number, got true",
    ),
    (
        {"retention": {"rawEventsDays": MAX_RETENTION_DAYS + 1}},
        f"retention.rawEventsDays: must be at most {MAX_RETENTION_DAYS}, "
        f"got {MAX_RETENTION_DAYS + 1}",
    ),
    (
        {"cleanup": {"maxRemovalShare": 0}},
        "cleanup.maxRemovalShare: must be greater than 0.0, got 0",
    ),
    (
        {"cleanup": {"maxRemovalShare": 1.5}},
        "cleanup.maxRemovalShare: must be at most 1.0, got 1.5",
    ),
    (
        {"cleanup": {"maxRemovalShare": "20%"}},
        "cleanup.maxRemovalShare: must be a number, got '20%'",
    ),
    ({"procesLayer": True}, "procesLayer: unknown key (did you mean processLayer?)"),
    ({"process_layer": True}, "process_layer: unknown key (did you mean processLayer?)"),
    ({"IncludeIndirect": True}, "IncludeIndirect: unknown key (did you mean includeIndirect?)"),
    ({"queryBucket": "x"}, "queryBucket: unknown key (did you mean queryBucketName?)"),
    ({"quality": {"suitecode": "x"}}, "quality.suitecode: unknown key (did you mean suiteCode?)"),
    (
        {"systemPolicies": [{"pattern": "a", "create": "NEVER"}]},
        "systemPolicies[0].create: unknown key (did you mean creation?)",
    ),
    (
        {"cleanup": {"force": True}},
        "cleanup.force: unknown key; the keys here are enabled, maxRemovalShare, "
        "refuseEmptySnapshot",
    ),
]


@pytest.mark.parametrize(
    ("options", "problem"), MISTAKES, ids=[r[1].split(":")[0] for r in MISTAKES]
)
def test_every_validation_error_names_the_key_as_the_user_wrote_it(
    options: dict[str, Any], problem: str
) -> None:
    data = options if "uuid" in options or not options else {"uuid": UUID, **options}
    assert problems_of(data) == [problem]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(JobDefinitionError) as caught:
        JobDefinition.from_dict(
            {"procesLayer": True, "systemPolicies": [{"pattern": "a", "creation": "ALWAYS"}]},
            source="prod.yaml",
        )
    assert str(caught.value) == (
        "Invalid job definition in prod.yaml (3 problems):\n"
        "  - uuid: is required\n"
        "  - systemPolicies[0].creation: must be IF_MISSING or NEVER, got 'ALWAYS'\n"
        "  - procesLayer: unknown key (did you mean processLayer?)"
    )
    assert isinstance(caught.value, ValueError)
    assert caught.value.source == "prod.yaml"
    assert caught.value.problems[0] == Problem("uuid", "is required")


def test_the_definition_must_be_a_mapping() -> None:
    with pytest.raises(JobDefinitionError, match="must be a mapping of keys to values, got a list"):
        JobDefinition.from_yaml("- uuid: x")


SYNTAX_ERRORS = [
    ("yaml", "uuid: a: b", "line 1, column 8: mapping values are not allowed here"),
    (
        "yaml",
        "uuid: x\n\tprocessLayer: true\n",
        "line 2, column 1: while scanning for the next token: found character '\\t' that cannot "
        "start any token",
    ),
    (
        "yaml",
        f"uuid: {UUID}\nprocessLayer: true\nprocessLayer: false\n",
        "line 3, column 1: duplicate key 'processLayer'",
    ),
    ("json", '{"uuid": }', "line 1, column 10: Expecting value"),
    ("json", '{\n"uuid": "x",\n"uuid": "y"}', "duplicate key 'uuid'"),
]


@pytest.mark.parametrize(
    ("kind", "text", "problem"), SYNTAX_ERRORS, ids=[r[2][:30] for r in SYNTAX_ERRORS]
)
def test_a_syntax_error_is_a_job_definition_error_with_its_line(
    kind: str, text: str, problem: str
) -> None:
    loader = JobDefinition.from_yaml if kind == "yaml" else JobDefinition.from_json
    with pytest.raises(JobDefinitionError) as caught:
        loader(text)
    assert [str(p) for p in caught.value.problems] == [problem]


YAML_MERGES = [
    (  # an entry that repeats another's settings, its own keys winning
        "systemPolicies:\n"
        "  - &s3 {pattern: 's3://*', creation: IF_MISSING, technology: Amazon S3}\n"
        "  - <<: *s3\n"
        "    pattern: 's3a://legacy-*'\n",
        [("s3://*", "IF_MISSING", "Amazon S3"), ("s3a://legacy-*", "IF_MISSING", "Amazon S3")],
    ),
    (  # a list of merged mappings
        "systemPolicies:\n"
        "  - &a {pattern: 'gs://*', creation: IF_MISSING}\n"
        "  - &b {pattern: 'x', technology: GCS}\n"
        "  - <<: [*b, *a]\n"
        "    pattern: 'gs://raw-*'\n",
        [
            ("gs://*", "IF_MISSING", None),
            ("x", "NEVER", "GCS"),
            ("gs://raw-*", "IF_MISSING", "GCS"),
        ],
    ),
]


@pytest.mark.parametrize(("text", "policies"), YAML_MERGES)
def test_a_yaml_file_may_repeat_settings_with_merge_keys(
    text: str, policies: list[tuple[str, str, str | None]]
) -> None:
    """docs/configure-the-job.md: a definition "is a small YAML (or JSON) file". YAML's merge key
    (``<<: *anchor``), which PyYAML's safe loader reads, is YAML too: refusing duplicate keys must
    not refuse it (it said "could not determine a constructor for the tag ...merge")."""
    loaded = JobDefinition.from_yaml(f"uuid: {UUID}\n{text}")
    assert [(p.pattern, p.creation, p.technology) for p in loaded.system_policies] == policies


def test_a_key_written_twice_beside_a_merge_key_is_still_refused() -> None:
    text = f"uuid: {UUID}\nsystemPolicies:\n  - &a {{pattern: x}}\n  - <<: *a\n    pattern: y\n"
    text += "    pattern: z\n"
    with pytest.raises(JobDefinitionError, match="line 6, column 5: duplicate key 'pattern'"):
        JobDefinition.from_yaml(text)


@pytest.mark.parametrize("name", ["empty.yaml", "empty.json", "empty"])
def test_an_empty_file_says_uuid_is_required(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("\n# nothing yet\n" if name != "empty.json" else "  \n")
    with pytest.raises(JobDefinitionError) as caught:
        JobDefinition.load(path)
    assert str(caught.value) == (
        f"Invalid job definition in {path} (1 problem):\n"
        "  - uuid: is required (the definition is empty)"
    )


def test_errors_of_a_file_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "prod.yml"
    path.write_text(f"uuid: {UUID}\nprocessLayer: maybe\n")
    with pytest.raises(JobDefinitionError, match=re.escape(f"in {path} (1 problem)")):
        JobDefinition.load(path)
    missing = tmp_path / "missing.yaml"
    with pytest.raises(JobDefinitionError, match=re.escape(f"in {missing}")) as caught:
        JobDefinition.load(missing)
    assert caught.value.problems[0].message.startswith("cannot read:")


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json", ".JSON", ".conf", ""])
def test_load_reads_json_files_as_json_and_anything_else_as_yaml(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"definition{suffix}"
    source = FIXTURES / ("example.json" if suffix.lower() == ".json" else "example.yaml")
    path.write_text(source.read_text())
    assert JobDefinition.load(path) == JobDefinition.load(FIXTURES / "example.yaml")


def test_operators_accept_a_definition_a_dict_or_a_path() -> None:
    expected = JobDefinition.load(FIXTURES / "example.yaml")
    data = yaml.safe_load((FIXTURES / "example.yaml").read_text())
    assert JobDefinition.coerce(expected) is expected
    assert JobDefinition.coerce(data) == expected
    assert JobDefinition.coerce(FIXTURES / "example.yaml") == expected
    assert JobDefinition.coerce(str(FIXTURES / "example.json")) == expected
    with pytest.raises(TypeError, match="got int"):
        JobDefinition.coerce(42)  # type: ignore[arg-type]


# --- shape of the model -------------------------------------------------------------------------


def test_files_take_camel_case_and_python_takes_snake_case() -> None:
    from_python = JobDefinition(uuid=UUID, process_layer=False, query_bucket_template="SQL {uuid}")
    from_file = minimal(processLayer=False, queryBucketName="SQL {uuid}")
    assert from_python == from_file
    assert from_file.model_dump(by_alias=True)["queryBucketName"] == "SQL {uuid}"


def test_a_definition_cannot_be_changed_during_a_run() -> None:
    definition = minimal()
    with pytest.raises(ValidationError):
        definition.process_layer = False  # type: ignore[misc]
    assert hash(definition) == hash(minimal())


def _fields(model: type[BaseModel]) -> list[tuple[str, str, str | None]]:
    return [
        (model.__name__, info.alias or name, info.description)
        for name, info in model.model_fields.items()
    ]


ALL_FIELDS = [field for model in MODELS for field in _fields(model)]


@pytest.mark.parametrize(
    ("model", "key", "description"), ALL_FIELDS, ids=[f"{m}.{k}" for m, k, _ in ALL_FIELDS]
)
def test_every_option_has_a_description(model: str, key: str, description: str | None) -> None:
    assert description


@pytest.mark.parametrize(
    ("model", "key", "description"), ALL_FIELDS, ids=[f"{m}.{k}" for m, k, _ in ALL_FIELDS]
)
def test_every_option_is_documented(model: str, key: str, description: str | None) -> None:
    assert f"`{key}`" in DOCS.read_text(encoding="utf-8")


def test_the_json_schema_describes_the_file_format() -> None:
    schema = JobDefinition.model_json_schema()
    assert schema["required"] == ["uuid"]
    assert "queryBucketName" in schema["properties"]
    assert schema["additionalProperties"] is False
    policy = schema["$defs"]["SystemPolicy"]["properties"]
    profiles = next(kind for kind in policy["nameProfile"]["anyOf"] if kind.get("enum"))
    assert profiles["enum"] == sorted(NAME_PROFILES)
    assert schema["$defs"]["IdentifierCase"]["enum"] == [
        "UPPER",
        "LOWER",
        "PRESERVE",
        "INSENSITIVE",
    ]


# --- property: whatever is valid survives a dump and a reload ----------------------------------

patterns = st.from_regex(r"[a-z][a-z0-9]{0,5}://[a-z0-9*?.\-]{0,12}", fullmatch=True)
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1).filter(
    str.strip
)
systems = st.one_of(
    st.fixed_dictionaries({"name": names}),
    st.fixed_dictionaries({"uuid": st.uuids().map(str)}),
)
name_templates = st.lists(
    st.sampled_from(
        ["{namespace}", "{scheme}", "{host}", "{port}", "{bucket}", "-", "DWH ", "{{", "}}"]
    ),
    min_size=1,
    max_size=4,
).map("".join)
policies = st.fixed_dictionaries(
    {"pattern": patterns},
    optional={
        "creation": st.sampled_from(list(Creation)),
        "nameTemplate": st.none() | name_templates,
        "subtype": st.sampled_from(list(SystemSubtype)),
        "technology": st.none() | names,
        "entityCreation": st.none() | st.booleans(),
        "replaceUserDocumentation": st.booleans(),
        "nameProfile": st.none() | st.sampled_from(sorted(NAME_PROFILES)),
        "identifierCase": st.none() | st.sampled_from(list(IdentifierCase)),
    },
)


def _creatable(rule: dict[str, Any]) -> bool:
    """A System named by uuid cannot be created: such a rule is invalid, not generated."""
    return rule.get("creation") != Creation.IF_MISSING or "name" in rule["system"]


job_systems: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"pattern": st.from_regex(r"[a-z*][a-z0-9_\-*]{0,10}", fullmatch=True), "system": systems},
    optional={"creation": st.sampled_from(list(Creation)), "shared": st.booleans()},
).filter(_creatable)
definitions = st.fixed_dictionaries(
    {"uuid": st.uuids().map(str)},
    optional={
        "ignoredNamespaces": st.lists(patterns, max_size=3),
        "namespaceMappings": st.lists(
            st.fixed_dictionaries({"pattern": patterns, "system": systems}), max_size=3
        ),
        "systemPolicies": st.lists(policies, max_size=3, unique_by=lambda p: p["pattern"]),
        "openLineageSystem": st.fixed_dictionaries(
            {},
            optional={
                "name": names,
                "subtype": st.sampled_from(list(SystemSubtype)),
                "technology": st.none() | names,
            },
        ),
        "jobSystems": st.lists(job_systems, max_size=3, unique_by=lambda r: r["pattern"]),
        "processLayer": st.booleans(),
        "includeIndirect": st.booleans(),
        "queryBucketName": st.sampled_from(
            ["OpenLineage SQL {uuid}", "SQL", "{uuid}", "bucket {{x}}"]
        ),
        "quality": st.fixed_dictionaries(
            {},
            optional={
                "enabled": st.booleans(),
                "metricsEnabled": st.booleans(),
                "suiteCode": st.none() | names,
            },
        ),
        "retention": st.fixed_dictionaries(
            {},
            optional={
                "jobDescribedForDays": st.integers(1, MAX_RETENTION_DAYS),
                "rawEventsDays": st.integers(1, MAX_RETENTION_DAYS),
            },
        ),
        "cleanup": st.fixed_dictionaries(
            {},
            optional={
                "enabled": st.booleans(),
                "maxRemovalShare": st.floats(0, 1, exclude_min=True),
                "refuseEmptySnapshot": st.booleans(),
            },
        ),
    },
)


@settings(database=None, deadline=None)
@given(definitions)
def test_a_valid_definition_survives_a_dump_and_a_reload(data: dict[str, Any]) -> None:
    model = JobDefinition.from_dict(data)
    assert JobDefinition.from_dict(model.model_dump(by_alias=True)) == model
    as_json = model.model_dump(mode="json", by_alias=True)
    assert JobDefinition.from_json(json.dumps(as_json)) == model
    assert JobDefinition.from_yaml(yaml.safe_dump(as_json, allow_unicode=True)) == model
