"""Namespace → System in the five steps of seed 000, and job namespace → job System."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.systems import (
    JOB_SYSTEM_NAME_PROPERTY,
    JOB_SYSTEM_PROPERTY,
    NAMESPACE_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
    SystemResolver,
)
from tests import builders
from tests.builders import DEFINITION_UUID as UUID
from tests.builders import dataset, run_event

DWH = KnownSystem("DWH Redshift", "u-dwh")
CRAWLED_PG = KnownSystem(
    "Crawled PG", "u-pg", ((NAMESPACE_PROPERTY, "postgresql://PG.example.com"),)
)
ALSO_PG = KnownSystem(
    "Another PG", "u-pg2", ((NAMESPACE_PROPERTY, "postgres://pg.example.com:5432"),)
)


def resolver(known: list[KnownSystem] | None = None, **definition: Any) -> SystemResolver:
    return SystemResolver(builders.definition(**definition), known or [], Report())


def test_an_ignored_namespace_is_skipped_and_counted() -> None:
    r = resolver()
    assert r.dataset_system("opensearch://search:9200", "opensearch://search:9200/idx") is None
    assert r.report.gap_count(GapCode.IGNORED_NAMESPACE) == 1
    assert r.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


def test_by_default_nothing_is_created_and_the_dataset_is_unmapped() -> None:
    r = resolver()
    assert r.dataset_system("s3://bucket", "s3://bucket/x") is None
    assert r.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 1
    assert r.systems == []


def test_the_first_mapping_whose_system_exists_applies() -> None:
    mappings = [
        {"pattern": "redshift://*", "system": {"name": "Missing"}},
        {"pattern": "redshift://my-dwh*", "system": {"name": "DWH Redshift"}},
    ]
    r = resolver([DWH], namespaceMappings=mappings)
    system = r.dataset_system("redshift://my-dwh.eu-west-1:5439", "x")
    assert system is not None
    assert (system.name, system.uuid, system.origin, system.create) == (
        "DWH Redshift",
        "u-dwh",
        "mapped",
        False,
    )
    assert system.entity_creation is False  # a mapped or crawled System: only enrich


def test_a_mapping_whose_system_does_not_exist_says_so_in_the_gap() -> None:
    """Seed 000: a mapping applies only if its System exists. The gap gave the generic advice
    "add a namespaceMappings entry" to a definition that has one naming a System not there."""
    mappings = [{"pattern": "postgres://*", "system": {"name": "pg prod"}}]
    r = resolver(namespaceMappings=mappings)
    assert r.dataset_system("postgres://db:5432", "postgres://db:5432/a.public.t") is None
    (example,) = r.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples
    assert "namespaceMappings entry names the System 'pg prod', which does not exist" in example


def test_a_missing_mapping_system_is_named_for_its_database_only() -> None:
    """Mappings are chosen per database: another database of the namespace, which no mapping
    covers, is not told about the mapping's System (a review)."""
    mappings = [{"pattern": "postgres://*", "database": "aaa", "system": {"name": "pg prod"}}]
    r = resolver(namespaceMappings=mappings)
    assert r.dataset_system("postgres://db:5432", "aaa-example", "aaa") is None
    assert r.dataset_system("postgres://db:5432", "zzz-example", "zzz") is None
    aaa, zzz = sorted(r.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples)
    assert "'pg prod'" in aaa and zzz == "zzz-example"


def test_a_system_stamped_with_the_namespace_is_used_first_by_name_when_several() -> None:
    r = resolver([CRAWLED_PG, ALSO_PG])
    system = r.dataset_system("postgres://pg.example.com", "x")
    assert system is not None and (system.name, system.origin) == ("Another PG", "stamped")


def test_of_several_stamps_of_one_namespace_a_definitions_other_spelling_comes_last() -> None:
    """An upgrade that reads two spellings of a server as one (dbt's Redshift endpoint and
    Airflow's cluster name) must not pick by name the System an earlier release made for the
    other spelling: the one stamped as the namespace now reads is what a fresh tenant gets. A
    System a person stamped keeps its place by name whatever spelling it carries (a review)."""
    endpoint = "redshift://my-dwh.abc123.eu-west-1.redshift.amazonaws.com:5439"
    cluster = "redshift://my-dwh.eu-west-1:5439"
    owner = (OWNER_PROPERTY, "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
    by_endpoint = KnownSystem("a-endpoint", "u-1", ((NAMESPACE_PROPERTY, endpoint), owner))
    by_cluster = KnownSystem("b-cluster", "u-2", ((NAMESPACE_PROPERTY, cluster), owner))
    crawled = KnownSystem("Analytics (crawled)", "u-3", ((NAMESPACE_PROPERTY, endpoint),))
    for known, expected in (
        ([by_endpoint, by_cluster], "b-cluster"),
        ([by_cluster, by_endpoint], "b-cluster"),
        ([by_cluster, crawled, by_endpoint], "Analytics (crawled)"),
    ):
        for namespace in (endpoint, cluster):
            system = resolver(known).dataset_system(namespace, "dev.public.sales")
            assert system is not None and system.name == expected


def test_creation_if_missing_creates_a_stamped_system_named_by_the_template() -> None:
    policies = [{"pattern": "postgres://*", "creation": "IF_MISSING", "nameTemplate": "{host}"}]
    r = resolver(systemPolicies=policies)
    system = r.dataset_system("postgresql://etl:pw@Warehouse:5432", "x")
    assert system is not None
    assert (system.name, system.create, system.subtype, system.technology) == (
        "warehouse",
        True,
        "DATABASE",
        "PostgreSQL",
    )
    assert dict(system.stamp) == {
        NAMESPACE_PROPERTY: "postgres://warehouse:5432",
        OWNER_PROPERTY: UUID,
    }
    assert system.entity_creation is True


@pytest.mark.parametrize(
    ("template", "namespace", "name"),
    [
        ("Pulsar {port}", "pulsar://broker", "Pulsar"),  # no port: no trailing blank
        ("{bucket} lake", "postgres://db", "lake"),  # no bucket: no leading blank
        ("{bucket}", "postgres://db", "postgres://db:5432"),  # nothing left: the namespace
    ],
)
def test_a_system_named_by_the_template_has_no_blank_at_either_end(
    template: str, namespace: str, name: str
) -> None:
    """A part the namespace lacks leaves the name trimmed: a Blindata that trims names would
    never match a planned ``"Kafka "``, and the System would be created again at every run."""
    policies = [{"pattern": "*", "creation": "IF_MISSING", "nameTemplate": template}]
    system = resolver(systemPolicies=policies).dataset_system(namespace, "x")
    assert system is not None and system.name == name


def test_one_system_per_s3_bucket_named_after_the_bucket_technology_amazon_s3() -> None:
    r = resolver(systemPolicies=[{"pattern": "s3://*", "creation": "IF_MISSING"}])
    first = r.dataset_system("s3://sales-bucket", "a")
    second = r.dataset_system("s3a://finance-bucket", "b")
    assert first is not None and second is not None
    assert (first.name, first.technology) == ("sales-bucket", "Amazon S3")
    assert second.name == "finance-bucket"
    assert [s.name for s in r.systems] == ["finance-bucket", "sales-bucket"]


@pytest.mark.parametrize("scheme", ["abfss", "abfs", "wasbs", "wasb"])
def test_each_azure_container_is_a_namespace_of_its_own_never_a_credential(scheme: str) -> None:
    """Seed 002: user info is dropped from a namespace, "the exception is Azure, whose authority
    carries the container rather than a credential". Spark keeps a path's scheme, so the non-TLS
    abfs:// and wasb:// arrive too: two containers of one account are two stores, never one."""
    r = resolver(systemPolicies=[{"pattern": "*", "creation": "IF_MISSING"}])
    raw = r.dataset_system(f"{scheme}://raw@lake.dfs.core.windows.net", "orders")
    curated = r.dataset_system(f"{scheme}://curated@lake.dfs.core.windows.net", "orders")
    assert raw is not None and curated is not None
    spelt = {"abfs": "abfss", "wasb": "wasbs"}.get(scheme, scheme)  # one container
    assert raw.namespaces == (f"{spelt}://raw@lake.dfs.core.windows.net",)
    assert curated.namespaces == (f"{spelt}://curated@lake.dfs.core.windows.net",)
    assert raw.name != curated.name


@pytest.mark.parametrize(
    ("namespace", "technology"),
    [
        # the naming conventions' namespaces: most are URIs, BigQuery's is the bare word
        ("bigquery", "Google BigQuery"),
        ("snowflake://org-account", "Snowflake"),
        ("kafka://broker:9092", "Apache Kafka"),
        ("gs://bucket", "Google Cloud Storage"),
        ("hop", None),
    ],
)
def test_a_created_system_gets_the_technology_of_its_namespace(
    namespace: str, technology: str | None
) -> None:
    """Seed 000: a System created by the job gets the policy's technology (the scheme's default
    when the policy names none), BigQuery's bare ``bigquery`` namespace too."""
    r = resolver(systemPolicies=[{"pattern": "*", "creation": "IF_MISSING"}])
    system = r.dataset_system(namespace, "x")
    assert system is not None and system.technology == technology


def test_an_existing_system_of_the_planned_name_is_reused_and_stamped_not_duplicated() -> None:
    existing = KnownSystem("sales-bucket", "u-sb")
    r = resolver([existing], systemPolicies=[{"pattern": "s3://*", "creation": "IF_MISSING"}])
    system = r.dataset_system("s3://sales-bucket", "a")
    assert system is not None
    assert (system.uuid, system.create, system.origin) == ("u-sb", False, "reused")
    # stamped with the namespace, never with the owner: cleanup must not remove it
    assert dict(system.stamp) == {NAMESPACE_PROPERTY: "s3://sales-bucket"}
    assert system.entity_creation is False


@pytest.mark.parametrize(
    ("stamp", "policies", "allowed"),
    [
        # crawled or made by a person: only entities that already exist get fields and lineage
        ((), [], False),
        # created by OpenLineage: this definition or another, the seed names no definition
        (((OWNER_PROPERTY, UUID),), [], True),
        (((OWNER_PROPERTY, "another-definition"),), [], True),
        # the policy decides, whoever created the System
        (
            ((OWNER_PROPERTY, "another-definition"),),
            [{"pattern": "*", "entityCreation": False}],
            False,
        ),
        ((), [{"pattern": "*", "entityCreation": True}], True),
    ],
)
def test_entity_creation_default_is_true_on_systems_created_by_openlineage_false_on_crawled(
    stamp: tuple[tuple[str, str], ...], policies: list[dict[str, Any]], allowed: bool
) -> None:
    """Seed 000's table: entityCreation defaults to true on a System created by OpenLineage,
    false on a mapped or crawled one."""
    namespace = "postgres://pg.example.com:5432"
    known = KnownSystem("PG", "u-pg", ((NAMESPACE_PROPERTY, namespace), *stamp))
    r = resolver([known], systemPolicies=policies)
    system = r.dataset_system(namespace, "db.public.t")
    assert system is not None and system.origin == "stamped"
    assert system.entity_creation is allowed


def test_entity_creation_of_the_policy_overrides_the_default() -> None:
    policies = [{"pattern": "redshift://*", "entityCreation": True}]
    mappings = [
        {"pattern": "redshift://*", "system": {"uuid": "0c6bd1a5-1111-4111-8111-111111111111"}}
    ]
    dwh = KnownSystem("DWH", "0c6bd1a5-1111-4111-8111-111111111111")
    r = resolver([dwh], systemPolicies=policies, namespaceMappings=mappings)
    system = r.dataset_system("redshift://dwh:5439", "x")
    assert system is not None and system.entity_creation is True


def test_jobs_go_to_the_openlineage_system_created_when_missing() -> None:
    r = resolver()
    system = r.job_system("airflow-prod")
    assert (system.name, system.subtype, system.technology, system.create) == (
        "OpenLineage",
        "SERVICE",
        "OpenLineage",
        True,
    )
    assert (JOB_SYSTEM_PROPERTY, "true") in system.stamp


@pytest.mark.parametrize(
    ("rule", "known", "expected", "gap"),
    [
        ({"system": {"name": "Airflow Prod"}}, [], "OpenLineage", GapCode.JOB_SYSTEM_NOT_FOUND),
        ({"system": {"name": "Airflow Prod"}, "creation": "IF_MISSING"}, [], "Airflow Prod", None),
        (
            {"system": {"name": "Airflow Prod"}},
            [KnownSystem("Airflow Prod", "u-a")],
            "OpenLineage",
            GapCode.JOB_SYSTEM_NOT_SHARED,
        ),
        (
            {"system": {"name": "Airflow Prod"}, "shared": True},
            [KnownSystem("Airflow Prod", "u-a")],
            "Airflow Prod",
            None,
        ),
        (
            {"system": {"name": "Airflow Prod"}},
            [KnownSystem("Airflow Prod", "u-a", ((JOB_SYSTEM_PROPERTY, "true"),))],
            "Airflow Prod",
            None,
        ),
    ],
    ids=["not-found", "created", "not-shared", "shared", "already-holds-jobs"],
)
def test_job_systems_rules(
    rule: dict[str, Any], known: list[KnownSystem], expected: str, gap: GapCode | None
) -> None:
    r = resolver(known, jobSystems=[{"pattern": "airflow-*", **rule}])
    assert r.job_system("airflow-prod").name == expected
    for code in (GapCode.JOB_SYSTEM_NOT_FOUND, GapCode.JOB_SYSTEM_NOT_SHARED):
        assert r.report.gap_count(code) == (1 if code == gap else 0)


def _job_system(name: str, uuid: str, created_as: str | None, owner: str = UUID) -> KnownSystem:
    """A job System a definition created (``created_as``: the name it gave it, stamped since
    ``openLineageJobSystemName`` exists; ``None``: stamped before)."""
    stamps = ((OWNER_PROPERTY, owner), (JOB_SYSTEM_PROPERTY, "true"))
    if created_as is not None:
        stamps += ((JOB_SYSTEM_NAME_PROPERTY, created_as),)
    return KnownSystem(name, uuid, stamps)


RULE = {"pattern": "airflow-*", "system": {"name": "Airflow Jobs"}, "creation": "IF_MISSING"}


@pytest.mark.parametrize(
    ("rules", "known", "expected", "gap"),
    [
        ([], [_job_system("Airflow production jobs", "u-r", "OpenLineage")], "u-r", None),
        ([RULE], [_job_system("Renamed", "u-r", "Airflow Jobs")], "u-r", None),
        (
            [],
            [
                _job_system("Renamed", "u-r", "OpenLineage"),
                KnownSystem("OpenLineage", "u-p", ((NAMESPACE_PROPERTY, "x"),)),
            ],
            "u-r",
            None,
        ),
        ([], [_job_system("Theirs", "u-o", "OpenLineage", owner="other")], None, None),
        ([], [_job_system("Old jobs", "u-o", "Old jobs")], None, None),
        ([RULE], [_job_system("Renamed", "u-r", "OpenLineage")], None, None),
        (
            [],
            [
                _job_system("B copy", "u-b", "OpenLineage"),
                _job_system("A copy", "u-a", "OpenLineage"),
            ],
            "u-a",
            GapCode.JOB_SYSTEM_AMBIGUOUS,
        ),
        (
            [],
            [
                _job_system("A copy", "u-a", "OpenLineage"),
                _job_system("OpenLineage", "u-o", "OpenLineage"),
            ],
            "u-o",
            GapCode.JOB_SYSTEM_AMBIGUOUS,
        ),
    ],
    ids=[
        "openLineageSystem renamed by a steward",
        "a jobSystems rule's System renamed",
        "its stamp wins over a System now named so",
        "another definition's",
        "created under a name the definition no longer gives",
        "the openLineageSystem's stamp is not the rule's",
        "two carry it: the first by name",
        "two carry it: the one named so",
    ],
)
def test_a_job_system_the_definition_created_is_found_again_by_its_stamps_whatever_its_name(
    rules: list[dict[str, Any]], known: list[KnownSystem], expected: str | None, gap: GapCode | None
) -> None:
    """A steward may rename the System the job created for its jobs: the jobs stay in it, not in
    a new System under the old name (whose cleanup would delete the renamed one)."""
    r = resolver(known, jobSystems=rules)
    system = r.job_system("airflow-prod")
    if expected is None:
        assert system.create and system.uuid is None
        assert (JOB_SYSTEM_NAME_PROPERTY, system.name) in system.stamp
    else:
        assert (system.uuid, system.create) == (expected, False)
        assert system.name == next(k.name for k in known if k.uuid == expected)
    assert r.report.gap_count(GapCode.JOB_SYSTEM_AMBIGUOUS) == (1 if gap else 0)


@pytest.mark.parametrize("rules", [[], [RULE]], ids=["openLineageSystem", "jobSystems rule"])
def test_a_job_system_created_before_its_name_was_stamped_gets_the_stamp_under_its_name(
    rules: list[dict[str, Any]],
) -> None:
    name = "Airflow Jobs" if rules else "OpenLineage"
    r = resolver([_job_system(name, "u-j", None)], jobSystems=rules)
    system = r.job_system("airflow-prod")
    assert (system.uuid, system.stamp) == ("u-j", ((JOB_SYSTEM_NAME_PROPERTY, name),))


OTHER_RULE = {"pattern": "spark-*", "system": {"name": "Airflow Jobs"}, "creation": "IF_MISSING"}


@pytest.mark.parametrize(
    ("configured", "known", "stamp"),
    [
        ("OpenLineage", _job_system("OpenLineage", "u-j", "OpenLineage"), ()),
        ("OpenLineage", _job_system("OpenLineage", "u-j", None), "OpenLineage"),
        ("Prod jobs", _job_system("Prod jobs", "u-j", "OpenLineage"), "Prod jobs"),
        ("Prod jobs", _job_system("Prod jobs", "u-j", "OpenLineage", owner="other"), ()),
        ("OpenLineage", _job_system("OpenLineage", "u-j", "Airflow Jobs"), ()),
    ],
    ids=[
        "stamped with the name it has: nothing to write",
        "created before the stamp: stamped",
        "renamed by a steward, then named so here: the stamp follows",
        "another definition's: not stamped",
        "still the System of a name the definition gives: not taken from it",
    ],
)
def test_the_name_stamp_of_a_job_system_follows_the_name_the_definition_gives_it(
    configured: str, known: KnownSystem, stamp: tuple[()] | str
) -> None:
    """A steward renamed the job System and the definition now names it so: the stamp takes the
    new name, so that the steward's next rename is followed too (a review: the stamp kept the
    first name, and the next rename rebuilt the System and the cleanup removed the renamed
    one)."""
    r = resolver([known], openLineageSystem={"name": configured}, jobSystems=[OTHER_RULE])
    system = r.job_system("airflow-prod")
    expected = ((JOB_SYSTEM_NAME_PROPERTY, stamp),) if stamp else ()
    assert (system.uuid, system.stamp) == ("u-j", expected)


COPY = _job_system("Copy of Prod jobs", "u-copy", "OpenLineage")
ORIGINAL = _job_system("Prod jobs", "u-orig", "OpenLineage")
NAMED_SO = _job_system("OpenLineage", "u-named", "OpenLineage")


@pytest.mark.parametrize(
    ("known", "used_for_jobs", "expected"),
    [
        ([COPY, ORIGINAL], ["u-orig"], "u-orig"),
        ([COPY, ORIGINAL, NAMED_SO], ["u-orig"], "u-orig"),
        ([COPY, ORIGINAL], ["u-gone", "u-orig", "u-copy"], "u-orig"),
        ([COPY, ORIGINAL, NAMED_SO], ["u-gone"], "u-named"),
        ([COPY, ORIGINAL], [], "u-copy"),
    ],
    ids=[
        "the one the jobs are in, not a person's copy first by name",
        "the one the jobs are in, not one named so",
        "the first of the ones earlier syncs used",
        "none used: the one named so",
        "none used nor named so: the first by name",
    ],
)
def test_of_several_systems_stamped_as_the_job_system_the_jobs_stay_where_they_were(
    known: list[KnownSystem], used_for_jobs: list[str], expected: str
) -> None:
    """A person copied the job System a steward renamed, stamps and all: the jobs stay in the
    System earlier syncs put them in (a review: the copy, first by name, took the jobs and the
    cleanup removed the steward's renamed original)."""
    r = SystemResolver(builders.definition(), known, Report(), used_for_jobs)
    system = r.job_system("airflow-prod")
    assert (system.uuid, system.create) == (expected, False)
    assert r.report.gap_count(GapCode.JOB_SYSTEM_AMBIGUOUS) == 1


@pytest.mark.parametrize(
    ("pattern", "namespace"),
    [
        ("postgres://db", "postgres://db"),  # a producer that leaves the default port out
        ("postgresql://db:5432", "postgresql://db:5432"),  # the JDBC spelling
        ("postgres://DB.example.com:5432", "postgres://db.example.com:5432"),
        ("POSTGRES://db:5432", "postgres://db:5432"),
        ("s3a://sales", "s3://sales"),
        ("postgresql://*", "postgres://db:5432"),
        ("S3A://raw-*", "s3n://raw-events"),
        ("postgres://db:5432", "postgresql://etl:pw@DB/"),
    ],
)
def test_a_pattern_spelt_as_producers_spell_the_namespace_matches_it(
    pattern: str, namespace: str
) -> None:
    """Seed 000, step 2: "the first entry whose pattern matches". Namespaces are compared in the
    spelling of seed 002 (scheme aliases, lowercased hosts, default ports), so a pattern written
    as a producer sends the namespace must name it too, in mappings, policies and ignoredNamespaces.
    """
    crawled = KnownSystem("Crawled", "u-crawled")
    mapped = resolver(
        [crawled], namespaceMappings=[{"pattern": pattern, "system": {"name": "Crawled"}}]
    )
    system = mapped.dataset_system(namespace, "x")
    assert system is not None and (system.name, system.origin) == ("Crawled", "mapped")

    created = resolver(systemPolicies=[{"pattern": pattern, "creation": "IF_MISSING"}])
    assert created.dataset_system(namespace, "x") is not None

    ignoring = resolver(ignoredNamespaces=[pattern])
    assert ignoring.dataset_system(namespace, "x") is None
    assert ignoring.report.gap_count(GapCode.IGNORED_NAMESPACE) == 1


@pytest.mark.parametrize("job_first", [True, False], ids=["job-first", "dataset-first"])
def test_a_crawled_job_system_keeps_entity_creation_false_for_its_datasets(
    job_first: bool,
) -> None:
    """Seed 000: "entityCreation default ... Mapped or crawled: false". A ``shared`` jobSystems
    rule that makes a crawled System the job System does not make it a System the datasets may
    be created on, whichever role the plan meets first."""
    warehouse = KnownSystem("warehouse", "u-wh", ((NAMESPACE_PROPERTY, "postgres://wh:5432"),))
    rule = {"pattern": "airflow", "system": {"name": "warehouse"}, "shared": True}
    r = resolver([warehouse], jobSystems=[rule])
    if job_first:
        assert r.job_system("airflow").name == "warehouse"
    system = r.dataset_system("postgres://wh:5432", "x")
    assert r.job_system("airflow").name == "warehouse"

    assert system is not None and system.entity_creation is False
    (planned,) = r.systems
    assert planned.entity_creation is False


@pytest.mark.parametrize(
    ("pattern", "namespace"),
    [
        ("s3://raw-*/", "s3://raw-events/"),
        ("s3://raw-*/", "s3://raw-events"),
        ("S3A://raw-?/", "s3://raw-1"),
        ("hdfs://nn:8020/warehouse/*/", "hdfs://nn:8020/warehouse/sales/"),
        ("postgres://db*//", "postgres://db1:5432"),
    ],
)
def test_a_pattern_with_wildcards_and_a_trailing_slash_matches_the_namespace_it_names(
    pattern: str, namespace: str
) -> None:
    """docs/configure-the-job.md, Patterns: "The namespace of a dataset is matched in its
    normalised spelling", which never ends with ``/`` (``s3://bucket/`` is ``s3://bucket``). A
    pattern without wildcards loses its trailing slash with the rest of its normalisation; one
    with wildcards must too, or ``s3://raw-*/`` silently matches nothing at all."""
    crawled = KnownSystem("Crawled", "u-crawled")
    mapped = resolver(
        [crawled], namespaceMappings=[{"pattern": pattern, "system": {"name": "Crawled"}}]
    )
    system = mapped.dataset_system(namespace, "x")
    assert system is not None and (system.name, system.origin) == ("Crawled", "mapped")

    created = resolver(systemPolicies=[{"pattern": pattern, "creation": "IF_MISSING"}])
    assert created.dataset_system(namespace, "x") is not None

    ignoring = resolver(ignoredNamespaces=[pattern])
    assert ignoring.dataset_system(namespace, "x") is None
    assert ignoring.report.gap_count(GapCode.IGNORED_NAMESPACE) == 1


@pytest.mark.parametrize(
    "known",
    [
        [],  # created by this plan
        [KnownSystem("db", "u-db")],  # a System of the planned name exists: reused
        [KnownSystem("db", "u-db", ((NAMESPACE_PROPERTY, "postgres://db:5432"),))],  # stamped
    ],
    ids=["created", "reused", "stamped-for-the-first"],
)
def test_every_namespace_that_lands_on_a_system_by_its_name_is_stamped(
    known: list[KnownSystem],
) -> None:
    """Seed 000, step 4: "A System of the planned name that already exists is used and stamped
    instead of duplicated"; step 3 is "the tenant-wide way to say 'this namespace is that
    System'". Two namespaces whose nameTemplate gives one name (a server's two ports under
    ``{host}``) both land on it, and both are stamped: another definition, or this one without
    its policy, then finds the System by either namespace."""
    policies = [{"pattern": "postgres://*", "creation": "IF_MISSING", "nameTemplate": "{host}"}]
    r = resolver(known, systemPolicies=policies)
    for namespace in ("postgres://db:5432", "postgres://db:6432"):
        assert r.dataset_system(namespace, "x") is not None
    (system,) = r.systems
    stamped = {value for name, value in system.stamp if name == NAMESPACE_PROPERTY}
    already = {value for s in known for value in s.values(NAMESPACE_PROPERTY)}
    assert stamped | already == {"postgres://db:5432", "postgres://db:6432"}
    assert system.namespaces == ("postgres://db:5432", "postgres://db:6432")


BUCKETS = ("s3://my-bucket", "gs://my-bucket")
OWNED = ((OWNER_PROPERTY, UUID),)


@pytest.mark.parametrize(
    ("namespaces", "known", "policies", "example"),
    [
        # the default nameTemplate is {bucket} for both clouds: one name, two stores
        (
            BUCKETS,
            [],
            [{"pattern": "*", "creation": "IF_MISSING"}],
            "gs://my-bucket (Google Cloud Storage), s3://my-bucket (Amazon S3) → my-bucket",
        ),
        # a crawled System of that name is reused by both
        (
            BUCKETS,
            [KnownSystem("my-bucket", "u-b")],
            [{"pattern": "*", "creation": "IF_MISSING"}],
            "gs://my-bucket (Google Cloud Storage), s3://my-bucket (Amazon S3) → my-bucket",
        ),
        # the next run: the System this definition created holds both by their stamps
        (
            BUCKETS,
            [
                KnownSystem(
                    "my-bucket", "u-b", (*OWNED, *((NAMESPACE_PROPERTY, n) for n in BUCKETS))
                )
            ],
            [{"pattern": "*", "creation": "IF_MISSING"}],
            "gs://my-bucket (Google Cloud Storage), s3://my-bucket (Amazon S3) → my-bucket",
        ),
        # one template for two kinds of server
        (
            ("postgres://db:5432", "mysql://db:3306"),
            [],
            [{"pattern": "*", "creation": "IF_MISSING", "nameTemplate": "{host}"}],
            "mysql://db:3306 (MySQL), postgres://db:5432 (PostgreSQL) → db",
        ),
        # one kind of store: a server's two ports under {host}
        (
            ("postgres://db:5432", "postgres://db:6432"),
            [],
            [{"pattern": "*", "creation": "IF_MISSING", "nameTemplate": "{host}"}],
            None,
        ),
        # meant as one System: the policy names its technology
        (
            BUCKETS,
            [],
            [{"pattern": "*", "creation": "IF_MISSING", "technology": "Data lake"}],
            None,
        ),
        # a person stamped a crawled System with both: theirs to shape
        (
            BUCKETS,
            [KnownSystem("Lake", "u-l", tuple((NAMESPACE_PROPERTY, n) for n in BUCKETS))],
            [],
            None,
        ),
        # each bucket its own System: nothing meets
        (
            BUCKETS,
            [],
            [
                {"pattern": "gs://*", "creation": "IF_MISSING", "nameTemplate": "GCS {bucket}"},
                {"pattern": "*", "creation": "IF_MISSING"},
            ],
            None,
        ),
    ],
    ids=[
        "s3-and-gs-by-default",
        "reused-by-both",
        "owned-next-run",
        "two-servers-one-host",
        "two-ports",
        "technology-named",
        "stamped-by-a-person",
        "own-names",
    ],
)
def test_stores_of_different_kinds_on_one_system_by_its_name_are_reported(
    namespaces: tuple[str, ...],
    known: list[KnownSystem],
    policies: list[dict[str, Any]],
    example: str | None,
) -> None:
    """Issue 37, "never merge silently": an S3 and a GCS bucket of one name both land on the
    System the default ``{bucket}`` names, as two kinds of server do under one ``{host}``. The
    merge stands (a stamp may already hold it), but it is reported ``STORES_MERGED`` with each
    namespace and its technology, wherever this job made them meet."""
    r = resolver(known, systemPolicies=policies)
    for namespace in namespaces:
        assert r.dataset_system(namespace, "x") is not None
    r.report_merged_stores()
    gap = r.report.gaps.get(GapCode.STORES_MERGED)
    assert (gap.examples if gap else None) == ([example] if example else None)


def test_a_plan_reports_the_stores_it_merged_once_each() -> None:
    events = [
        run_event(inputs=[dataset("raw/orders", "s3://my-bucket")]),
        run_event(
            "etl.copy",
            run_id="0190b1c2-0000-7000-8000-000000000002",
            inputs=[dataset("raw/orders", "s3a://my-bucket")],
            outputs=[dataset("raw/orders", "gs://my-bucket"), dataset("raw/x", "gs://my-bucket")],
        ),
    ]
    plan = build(events, builders.definition(builders.policy("*")))
    gap = plan.report.gaps[GapCode.STORES_MERGED]
    assert (gap.count, gap.examples) == (
        1,
        ["gs://my-bucket (Google Cloud Storage), s3://my-bucket (Amazon S3) → my-bucket"],
    )
