"""Seed 002 ("OpenLineage dataset identity"), rule by rule, against adversarial spellings.

Each table holds the spellings that different producers give one store (Airflow, Hop, Spark's
JDBC relation, dbt, a hand-written emitter) and the one namespace, System or entity they must all
land on. A case quotes the seed sentence it checks.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.identity import (
    entity_name,
    matches_namespace,
    namespace_parts,
    namespace_problem,
    normalize_namespace,
    normalize_pattern,
    strip_user_info,
)
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY, KnownSystem
from tests import builders
from tests.builders import dataset, policy, run_event
from tests.mapper.helpers import created_as_known

# -- relational namespaces: {scheme}://{host}[:{port}] -------------------------------------------


@pytest.mark.parametrize(
    "produced",
    [
        "postgres://db:5432",  # Airflow, dbt, Hop
        "postgresql://db:5432",  # the JDBC sub-protocol
        "postgres://db",  # a producer that leaves the default port out
        "postgres://db:",  # ... or leaves it blank
        "POSTGRESQL://DB:5432/",  # upper case, a trailing slash
        "postgres://DB//",
        "  postgres://db:5432  ",
        "postgres:// db :5432",  # "host is taken from the connection, trimmed"
        "postgres://db :5432",
        "postgres://db: 5432",
        "postgres://etl:s3cret@db:5432",
        "postgres://etl@db",
        "postgres://db:5432?sslmode=require",
        "postgres://db:5432#primary",
        "postgres://db?options=a/b",  # a slash in the query starts no path
        "postgres://db#a/b",  # ... nor in the fragment
    ],
)
def test_every_spelling_of_one_postgres_server_is_one_namespace(produced: str) -> None:
    """Seed 002: "{scheme}://{host}[:{port}]"; "host is taken from the connection, trimmed and
    lowercased"; "port is the connection's port, or the database's default port when the
    connection leaves it blank". A blank port (``db:``) is the default port like an absent one,
    never part of the host (it was ``postgres://db::5432``)."""
    assert normalize_namespace(produced) == "postgres://db:5432"


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        ("postgres://[::1]", "postgres://[::1]:5432"),
        ("postgres://[::1]:", "postgres://[::1]:5432"),
        ("postgres://etl:pw@[::1]:5432", "postgres://[::1]:5432"),
        ("postgres://[FE80::1]:6432", "postgres://[fe80::1]:6432"),
        ("postgres:// [::1] ", "postgres://[::1]:5432"),
        # Java prints an IPv6 address in full (``Inet6Address``), people and Python compressed
        ("postgres://[fd00:0:0:0:0:0:0:1]:5432", "postgres://[fd00::1]:5432"),
        # seed 002's namespaces that are a scheme alone, in any case
        ("BigQuery", "bigquery"),
        (" FILE ", "file"),
        ("postgres://[fd00::0001]", "postgres://[fd00::1]:5432"),
        ("postgres://[0:0:0:0:0:0:0:1]", "postgres://[::1]:5432"),
        ("postgres://[fe80::1%eth0]", "postgres://[fe80::1%eth0]:5432"),  # a zone: as written
        ("mysql://Shop-DB", "mysql://shop-db:3306"),
        ("mariadb://shop-db:", "mysql://shop-db:3306"),
        ("kafka://broker:", "kafka://broker:9092"),
        ("pulsar://broker:", "pulsar://broker"),  # no default port known: omitted
    ],
)
def test_ipv6_hosts_and_blank_ports(produced: str, normalised: str) -> None:
    """Seed 002: the port "is omitted only when neither is known"; the host is lowercased."""
    assert normalize_namespace(produced) == normalised
    assert namespace_problem(produced) is None


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        # Spark's KafkaBootstrapServerResolver: ``host:getPort()``, -1 for a server without one
        ("kafka://broker:-1", "kafka://broker:9092"),
        ("postgres://db:-1", "postgres://db:5432"),
        # Flink copies ``bootstrap.servers`` verbatim, a listener's protocol with it
        ("kafka://PLAINTEXT://broker:9092", "kafka://broker:9092"),
        ("kafka://SASL_SSL://Broker:9093", "kafka://broker:9093"),
        # Great Expectations names the store by its SQLAlchemy URL: the driver is no part of it
        ("postgresql+psycopg2://db", "postgres://db:5432"),
        ("mysql+pymysql://etl:pw@shop-db", "mysql://shop-db:3306"),
        ("mssql+pyodbc://sql01", "mssql://sql01:1433"),
        (
            "awsathena+rest://athena.eu-west-1.amazonaws.com:443",
            "awsathena://athena.eu-west-1.amazonaws.com:443",
        ),
        ("git+ssh://repo", "git+ssh://repo"),  # no store a SQLAlchemy dialect names: as it is
    ],
)
def test_one_store_named_by_other_producers_is_one_namespace(
    produced: str, normalised: str
) -> None:
    """Seed 002: "Two producers that name the same store land on the same node"; the port "is
    the connection's port, or the database's default port when the connection leaves it blank"
    (Java's -1 is a blank one). A topic that Spark and Flink both name was two Systems."""
    assert normalize_namespace(produced) == normalised


def test_a_pattern_spelt_as_flink_spells_a_kafka_namespace_matches_it() -> None:
    """docs/configure-the-job.md: a pattern is written as producers spell namespaces; one
    copied from Flink's ``kafka://PLAINTEXT://broker…`` matched nothing."""
    from airflow_blindata.definition import matches_pattern
    from airflow_blindata.mapper.identity import normalize_pattern

    pattern = normalize_pattern("kafka://PLAINTEXT://broker*")
    assert matches_pattern(normalize_namespace("kafka://broker1:9092"), pattern)


@pytest.mark.parametrize(
    ("pattern", "namespace", "matched"),
    [
        ("kafka://Broker*", "kafka://broker1:9092", True),
        ("POSTGRESQL://DB-*.Example.com:5432/*", "postgres://db-1.example.com:5432/x", True),
        (
            "abfss://Lake*@Acct.dfs.core.windows.net",
            "abfss://lake1@acct.dfs.core.windows.net",
            True,
        ),
        ("s3://Raw-*", "s3://raw-1", False),  # a bucket's name is not read without its case
        ("s3://Raw-*", "s3://Raw-1", True),
        ("hdfs://nn*/Warehouse/*", "hdfs://nn1:8020/Warehouse/t", True),  # a path keeps its case
        ("hdfs://nn*/Warehouse/*", "hdfs://nn1:8020/warehouse/t", False),
        # no ``/``: a ``*`` may run on into the path, whose case is the path's
        ("hdfs://*Warehouse*", "hdfs://nn:8020/Warehouse/t", True),
        ("file://*Users*", "file:///Users/x", True),
        # ... and the host before it is read without case, as a namespace's
        ("hdfs://NameNode*", "hdfs://namenode:8020", True),
        ("https://Files.Example.com*", "https://files.example.com/x", True),
    ],
)
def test_a_wildcard_pattern_reads_its_host_without_case_as_namespaces_are(
    pattern: str, namespace: str, matched: bool
) -> None:
    """docs/configure-the-job.md: "Patterns are written as producers spell namespaces"; a host is
    lower case in every normalised namespace but a bucket's, so ``kafka://Broker*`` matched
    nothing while ``kafka://Broker1`` (no wildcard, normalised whole) matched its broker."""
    from airflow_blindata.definition import matches_pattern
    from airflow_blindata.mapper.identity import normalize_pattern

    assert matches_pattern(normalize_namespace(namespace), normalize_pattern(pattern)) is matched


# -- user info: "URI user info (credentials) is dropped from the namespace" ----------------------


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        ("postgres://etl:s3cret@db:5432", "postgres://db:5432"),
        # a password with an unencoded reserved character is still user info, dropped whole:
        # read by RFC 3986 alone, "s3" was kept as a host or a port, "cret@db:5432" as a path
        ("postgres://etl:s3/cret@db:5432", "postgres://db:5432"),
        ("postgres://etl:s3#cret@db:5432", "postgres://db:5432"),
        ("postgres://etl:s3?cret@db:5432", "postgres://db:5432"),
        ("postgres://etl:s3@cret@db:5432", "postgres://db:5432"),
        ("sftp://etl:s3/cret@Files.example.com/in", "sftp://files.example.com:22/in"),
        # the authority so cut reads as host:port or host: in a database's namespace no path
        # holds an @, so the user info runs to it (found by a probe: the System was named so)
        ("postgres://etl:2024/s3cret@db:5432", "postgres://db:5432"),
        ("mysql://etl:1/s3cret@db", "mysql://db:3306"),
        ("oracle://etl/s3cret@db:1521", "oracle://db:1521"),
        ("postgres://etl/s3cret@db?sslmode=require", "postgres://db:5432"),
        ("s3://AKIA:s3cret@my-bucket", "s3://my-bucket"),
        ("hdfs://etl:s3cret@NameNode:8020", "hdfs://namenode:8020"),
        ("ftp://etl:s3cret@ftp.example.com:21", "ftp://ftp.example.com:21"),
        # Oracle's thin URL has no "://": user/password@ before the address
        ("jdbc:oracle:thin:etl/s3cret@db:1521/orcl", "jdbc:oracle:thin:@db:1521/orcl"),
        ("jdbc:oracle:thin:etl/s3cret@//db:1521/orcl", "jdbc:oracle:thin:@//db:1521/orcl"),
        ("oracle:thin:etl/s3cret@//db:1521/orcl", "oracle:thin:@//db:1521/orcl"),
        ("jdbc:oracle:oci:etl/s3@cret@db", "jdbc:oracle:oci:@db"),
    ],
)
def test_no_credential_survives_in_a_namespace(produced: str, normalised: str) -> None:
    """Seed 002: "URI user info (credentials) is dropped from the namespace, so no secret
    reaches the lineage graph." """
    assert normalize_namespace(produced) == normalised
    assert "cret" not in normalize_namespace(produced)
    assert "cret" not in strip_user_info(produced)


@pytest.mark.parametrize(
    "kept",
    [
        "postgres://db:5432?user=etl@example.com",  # an @ in the query is no user info
        "s3://bucket/exports@2026",  # nor in a path after a readable host
        "abfss://raw@lake.dfs.core.windows.net",
        "wasbs://raw@lake.blob.core.windows.net/p@q",
    ],
)
def test_an_at_sign_after_a_readable_host_or_in_azure_is_not_user_info(kept: str) -> None:
    """Seed 002: "The exception is Azure, whose authority carries the container rather than a
    credential." An ``@`` after a host that reads as ``host[:port]`` is not a user info's end."""
    assert strip_user_info(kept) == kept
    assert namespace_parts(normalize_namespace(kept)).host in kept


# -- files: "file:// → file" ---------------------------------------------------------------------


@pytest.mark.parametrize("produced", ["file", "file://", "file:///", "FILE://", "  file  "])
def test_the_file_scheme_without_a_host_is_the_file_namespace(produced: str) -> None:
    """Seed 002's spec-mode table: "file:// | file | absolute path (/data/customers.csv)". A
    producer that spells the bare scheme lands on the same namespace (it was ``file://``)."""
    assert normalize_namespace(produced) == "file"


@pytest.mark.parametrize(
    "kept", ["file://host-1", "file:///data", "file:/warehouse", "file://h:22"]
)
def test_a_file_namespace_with_a_host_or_a_path_is_not_decided_by_the_seed_and_kept(
    kept: str,
) -> None:
    """Seed 002 does not say whether ``file://host`` or a path in the namespace is ``file``:
    they are left as they are (the name would have to change as well)."""
    assert normalize_namespace(kept) == kept


# -- no secret in the plan or the report ---------------------------------------------------------


@pytest.mark.parametrize(
    ("produced", "server", "database"),
    [
        ("oracle:thin:@//ora.internal:1521/ORCLPDB1", "oracle://ora.internal:1521", "ORCLPDB1"),
        ("jdbc:oracle:thin:@DB:1521:ORCL", "oracle://db:1521", "ORCL"),
        ("oracle:thin:@db/sales", "oracle://db:1521", "sales"),
        ("oracle:thin:@db:/sales", "oracle://db:1521", "sales"),
        ("oracle:thin:@tcps://db:2484/sales", "oracle://db:2484", "sales"),
        ("oracle:thin:@//db", "oracle://db:1521", None),
        (
            "jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=Ora1)(PORT=1522))"
            "(CONNECT_DATA=(SERVICE_NAME=sales.example.com)))",
            "oracle://ora1:1522",
            "sales.example.com",
        ),
        ("oracle:thin:@[fd00:0:0:0:0:0:0:1]:1521/X", "oracle://[fd00::1]:1521", "X"),
        # a TNS alias, its wallet too: no address to read
        ("jdbc:oracle:thin:@orcl", None, None),
        ("oracle:thin:@mydb_high?TNS_ADMIN=/opt/wallets/mydb", None, None),
        ("sqlserver://sql01:1433;databaseName=dwh;user=etl", None, "dwh"),
        ("sqlserver://sql01;database= stage ;instanceName=S", None, "stage"),
        # a value in braces, as the driver reads it; a property inside another's braces is none
        ("sqlserver://sql01:1433;databaseName={dwh}", None, "dwh"),
        # braces quote, to their closing brace; quotes do not (a review: 'dwh' became dwh)
        ("sqlserver://sql01:1433;databaseName={dwh}?x=1", None, "dwh"),
        ("sqlserver://sql01:1433;databaseName='dwh'", None, "'dwh'"),
        ("sqlserver://sql01:1433;databaseName={d;w}}h};password=x", None, "d;w}h"),
        ("sqlserver://sql01;password={x;databaseName=evil};databaseName=dwh", None, "dwh"),
        ("sqlserver://sql01;password={a?b@c};database=dwh", None, "dwh"),
        ("mssql://sql01:1433", None, None),
        ("postgres://pg:5432;databaseName=dwh", None, None),
    ],
)
def test_an_oracle_url_names_its_server_and_database(
    produced: str, server: str | None, database: str | None
) -> None:
    """openlineage-java sends a JDBC URL without ``jdbc:`` where it has no extractor for the
    driver: an Oracle URL's host and port are its server (the naming conventions'
    ``oracle://{host}:{port}``, where its datasets land when nothing names the URL itself), its
    service or SID the database, as SQL Server's ``databaseName`` property is. The URL stays the
    namespace: a mapping written with it keeps its service apart (a review)."""
    from airflow_blindata.mapper.identity import namespace_database, server_of

    found = server_of(produced)
    assert (found[0] if found else None) == server
    assert namespace_database(produced) == database
    if server is not None:
        assert normalize_namespace(produced) != server


SECRET_NAMESPACES = [
    "postgres://etl:s3cret@db:5432",
    "postgresql://etl:s3/cret@DB",
    "postgres://etl:s3#cret@db:5432",
    "postgres://db:5432?password=s3cret",
    "jdbc:oracle:thin:etl/s3cret@db:1521/orcl",
]


@pytest.mark.parametrize("namespace", SECRET_NAMESPACES)
@pytest.mark.parametrize(
    "policies",
    [(policy("postgres://*", nameTemplate="{host}"),), ()],
    ids=["created", "unmapped"],
)
def test_no_credential_of_a_namespace_reaches_the_plan_or_its_report(
    namespace: str, policies: tuple[dict[str, Any], ...]
) -> None:
    """Seed 002: "URI user info (credentials) is dropped from the namespace, so no secret
    reaches the lineage graph". The report's examples (UNMAPPED_NAMESPACE, DANGLING_FLOW) and
    the entities' sources quoted the namespace as sent, password included."""
    event = run_event(
        inputs=[dataset("analytics.raw.orders", namespace)],
        outputs=[dataset("analytics.sales.orders", namespace)],
    )
    plan = build([event], builders.definition(*policies))
    assert "cret" not in plan.model_dump_json()
    if policies and namespace.startswith("postgres"):
        assert {s.name for s in plan.systems} == {"db", "OpenLineage"}
    if not policies:
        examples = plan.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples
        assert len(examples) == 2 and all("cret" not in e for e in examples)


# -- names: "{database}.{schema}.{table}", segments "trimmed, but never re-cased" ------------------


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        # "a read of schema.table and a write of catalog.schema.table resolve to one identity"
        ("postgres://db:5432", "analytics.staging.orders", ("staging", "orders")),
        ("postgresql://DB", "staging.orders", ("staging", "orders")),
        ("redshift://dwh.eu-west-1:5439", "dev.staging.orders", ("staging", "orders")),
        # "Blank segments are filled from the connection's [...] preferred schema": a blank
        # schema is no schema part, so public (seed 000), never a schema named ""
        ("postgres://db:5432", "analytics..orders", ("public", "orders")),
        ("postgres://db:5432", ".orders", ("public", "orders")),
        ("redshift://dwh.eu-west-1:5439", "dev. .orders", ("public", "orders")),
        (
            "awsathena://athena.eu-west-1.amazonaws.com",
            "AwsDataCatalog..orders",
            ("default", "orders"),
        ),
        # "Segments are emitted verbatim: trimmed"
        ("postgres://db:5432", " analytics . staging . orders ", ("staging", "orders")),
        ("postgres://db:5432", "staging.orders ", ("staging", "orders")),
        ("postgres://db:5432", " orders", ("public", "orders")),
        # "... but never re-cased": PUBLIC.ORDERS and public.orders are two identities (the
        # seed's "Known gap: identifier casing"), and inner spaces and unicode are kept; "never
        # quoted": the quotes go, the quoted identifier keeps its case (issue 37, item 3)
        ("postgres://db:5432", "analytics.PUBLIC.ORDERS", ("PUBLIC", "ORDERS")),
        ("postgres://db:5432", "analytics.public.orders", ("public", "orders")),
        ("postgres://db:5432", "analytics.staging.my orders", ("staging", "my orders")),
        ("postgres://db:5432", "analytics.ventes.commandes_été", ("ventes", "commandes_été")),
        ("postgres://db:5432", 'analytics."Staging"."Orders"', ("Staging", "Orders")),
    ],
)
def test_relational_names_by_segments(
    namespace: str, name: str, expected: tuple[str | None, str]
) -> None:
    found = entity_name(namespace, name)
    assert (found.schema, found.name) == expected


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("postgres://db:5432", 'analytics."my.schema"."tbl"', ("my.schema", "tbl")),
        ("postgres://db:5432", 'analytics.sales."orders.v2"', ("sales", "orders.v2")),
        ("postgres://db:5432", '"my.schema".orders', ("my.schema", "orders")),
        ("postgres://db:5432", '"orders.v2"', ("public", "orders.v2")),
        # a doubled quote is a quote inside the identifier, not its end
        ("postgres://db:5432", 'analytics."a""b.c".orders', ('a"b.c', "orders")),
        ("redshift://dwh.eu-west-1:5439", 'dev."x.y".orders', ("x.y", "orders")),
        (
            "awsathena://athena.eu-west-1.amazonaws.com",
            "AwsDataCatalog.`web.logs`.hits",
            ("web.logs", "hits"),
        ),
    ],
)
def test_database_schema_table_a_dot_inside_a_quoted_identifier_cuts_no_segment(
    namespace: str, name: str, expected: tuple[str, str]
) -> None:
    """Seed 000: "redshift://, postgres:// | database.schema.table | schema | table": the dots
    that separate identifiers, not one inside a quoted identifier. ``analytics."my.schema"."tbl"``
    was the schema ``schema"`` and the entity ``"tbl"``, an entity no producer and no crawler
    names. The quotes go (seed 002: "No surrounding quotes"; issue 37, item 3), the identifier
    keeps its case and its dots."""
    found = entity_name(namespace, name)
    assert (found.schema, found.name) == expected


def test_a_blank_or_spaced_schema_segment_lands_on_the_entity_of_the_plain_name() -> None:
    """Seed 002: segments are "trimmed", and blank ones filled, "so a read of schema.table and a
    write of catalog.schema.table resolve to one identity": one entity, not three."""
    names = ["analytics.public.orders", "analytics..orders", "orders", " public . orders "]
    event = run_event(
        inputs=[dataset(name) for name in names[1:]],
        outputs=[dataset(names[0])],
    )
    plan = build([event], builders.definition(policy("postgres://*", nameTemplate="{host}")))
    entities = {(e.key.schema_, e.key.name) for e in plan.entities if e.key.system == "db"}
    assert entities == {("public", "orders")}


# -- the hierarchy facet: "the last level is the entity, the level before it the schema" ----------


@pytest.mark.parametrize(
    ("hierarchy", "expected"),
    [
        ([("DATABASE", "db"), ("SCHEMA", "s"), ("TABLE", "t")], ("s", "t", "hierarchy")),
        ([("A", "a"), ("B", "b"), ("C", "c"), ("D", "d")], ("c", "d", "hierarchy")),
        ([("TOPIC", "orders")], (None, "orders", "hierarchy")),
        # the level before the last is the schema, even blank: no schema, not the database
        ([("DATABASE", "db"), ("SCHEMA", ""), ("TABLE", "t")], (None, "t", "hierarchy")),
        # a blank last level names no entity: the next rule decides (the profile of postgres),
        # the schema level is never taken for the entity (it was: entity "s" in schema "db")
        ([("DATABASE", "db"), ("SCHEMA", "s"), ("TABLE", "")], ("sales", "orders", "profile")),
        ([("DATABASE", "db"), ("SCHEMA", "s"), ("TABLE", "  ")], ("sales", "orders", "profile")),
        # levels are trimmed as the segments of a dotted name are (seed 002: "trimmed"), so a
        # producer sending the facet lands on the entity of one that does not
        ([("DB", "a"), ("SCHEMA", " s "), ("TABLE", " t ")], ("s", "t", "hierarchy")),
        # names are kept verbatim otherwise
        (
            [("SCHEMA", "Sales Data"), ("TABLE", "Orders 2026")],
            ("Sales Data", "Orders 2026", "hierarchy"),
        ),
    ],
)
def test_the_hierarchy_facet_names_schema_and_entity(
    hierarchy: list[tuple[str, str]], expected: tuple[str | None, str, str]
) -> None:
    found = entity_name("postgres://db:5432", "analytics.sales.orders", hierarchy=hierarchy)
    assert (found.schema, found.name, found.rule) == expected


# -- object stores: s3://{bucket}, gs://{bucket}, {scheme}://{container}@{account} ----------------


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        ("s3://sales", "s3://sales"),
        ("s3a://sales", "s3://sales"),  # "s3://, s3a://, s3n:// → s3://{bucket}"
        ("S3N://sales/", "s3://sales"),
        ("s3://Sales", "s3://Sales"),  # a bucket is not a host: its case is kept
        ("gs://Sales/", "gs://Sales"),
        # Azure's container and account names are lower case only (a host is DNS's)
        ("abfss://Raw@Lake.dfs.core.windows.net", "abfss://raw@lake.dfs.core.windows.net"),
        ("WASBS://raw@lake.blob.core.windows.net/", "wasbs://raw@lake.blob.core.windows.net"),
        ("hdfs://NameNode:8020/", "hdfs://namenode:8020"),
        ("kafka://Broker-1:9092", "kafka://broker-1:9092"),
        ("snowflake://ORG-ACCOUNT", "snowflake://org-account"),
        ("bigquery", "bigquery"),
    ],
)
def test_object_store_and_other_namespaces(produced: str, normalised: str) -> None:
    """Seed 002's spec-mode table; hosts are lowercased (Snowflake's account is its host,
    ``{lowercased type id}://{host}``), buckets and Azure's authority are kept as written."""
    assert normalize_namespace(produced) == normalised


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        # HDFS: a NameNode without a port is at its default RPC port (Hadoop's 8020)
        ("hdfs://nn", "hdfs://nn:8020"),
        ("hdfs://NN:/warehouse", "hdfs://nn:8020/warehouse"),
        ("hdfs://nn:9000", "hdfs://nn:9000"),
        # Hadoop's non-TLS spellings of one container are the container
        ("abfs://raw@lake.dfs.core.windows.net", "abfss://raw@lake.dfs.core.windows.net"),
        ("wasb://raw@lake.blob.core.windows.net/x", "wasbs://raw@lake.blob.core.windows.net/x"),
        # the local host is the local file system (RFC 8089)
        ("file://localhost", "file"),
        ("file://LOCALHOST/", "file"),
        ("file://127.0.0.1", "file"),
        # a Kafka cluster is named by its first bootstrap server
        ("kafka://b1:9092,b2:9092", "kafka://b1:9092"),
        ("kafka://B1,b2:9093", "kafka://b1:9092"),
        ("kafka://SASL_SSL://b1:9093,SASL_SSL://b2:9093", "kafka://b1:9093"),
        # SFTP's and FTP's default ports
        ("sftp://files.example.com", "sftp://files.example.com:22"),
        ("ftp://files.example.com", "ftp://files.example.com:21"),
        # Snowflake: an account locator names its region and cloud (AWS when left out, its
        # default region when both are); an organisation's account is the account alone
        ("snowflake://xy12345.us-east-1", "snowflake://xy12345.us-east-1.aws"),
        ("snowflake://XY12345.us-east-1.aws", "snowflake://xy12345.us-east-1.aws"),
        ("snowflake://xy12345", "snowflake://xy12345.us-west-1.aws"),
        ("snowflake://xy12345.east-us-2.azure", "snowflake://xy12345.east-us-2.azure"),
        (
            "snowflake://xy12345.us-east-1.snowflakecomputing.com",
            "snowflake://xy12345.us-east-1.aws",
        ),
        ("snowflake://myorg-acct.snowflakecomputing.com:443", "snowflake://myorg-acct"),
        ("snowflake://myorg-acct.privatelink", "snowflake://myorg-acct"),
        # a private endpoint's full host (a review: its .privatelink stayed)
        (
            "snowflake://xy12345.eu-central-1.privatelink.snowflakecomputing.com",
            "snowflake://xy12345.eu-central-1.aws",
        ),
        ("snowflake://xy12345.eu-central-1.privatelink", "snowflake://xy12345.eu-central-1.aws"),
        (
            "snowflake://xy12345.east-us-2.azure.privatelink.snowflakecomputing.com",
            "snowflake://xy12345.east-us-2.azure",
        ),
        ("snowflake://myorg-my_acct", "snowflake://myorg-my_acct"),
    ],
)
def test_spellings_of_one_store_that_producers_differ_on_are_one_namespace(
    produced: str, normalised: str
) -> None:
    """Seed 002: "Two producers that name the same store land on the same node", with the port
    "the database's default port when the connection leaves it blank". Each pair here was two
    Systems: Spark names HDFS with the port of ``fs.defaultFS``, Airflow's hooks without;
    Spark keeps Hadoop's ``abfs://``; a Kafka client's list of servers against the first one;
    Airflow's and dbt's Snowflake account spellings (OpenLineage's ``fix_account_name``)."""
    assert normalize_namespace(produced) == normalised
    assert normalize_namespace(normalised) == normalised


@pytest.mark.parametrize(
    ("pattern", "produced"),
    [
        # written for the spelling before the default port was added (a review)
        ("sftp://*.partner.com", "sftp://files.partner.com"),
        ("ftp://*.partner.com", "ftp://ftp.partner.com"),
        ("hdfs://*.corp.local", "hdfs://nn1.corp.local"),
        ("hdfs://nn?", "hdfs://nn1"),
        ("hdfs://nn/*", "hdfs://nn/warehouse"),
        # ... and a database's port a producer may leave out
        ("postgres://*.corp", "postgres://db.corp"),
        ("postgres://*.corp", "postgres://db.corp:5432"),
        # the local host, Snowflake's URL
        ("file://localhost*", "file://localhost"),
        ("file://localhost/*", "file://localhost/data"),
        ("snowflake://*.snowflakecomputing.com", "snowflake://myorg-acct.snowflakecomputing.com"),
        (
            "snowflake://*.privatelink.snowflakecomputing.com",
            "snowflake://myorg-acct.privatelink.snowflakecomputing.com",
        ),
    ],
)
def test_a_wildcard_pattern_matches_the_spelling_it_was_written_for(
    pattern: str, produced: str
) -> None:
    """docs/configure-the-job.md: a pattern is written as producers spell namespaces. A glob
    without a port matches a namespace at its default port (the port a producer leaves out),
    and the spellings normalised away (the local host, Snowflake's URL) are read in it too."""
    assert matches_namespace(normalize_namespace(produced), normalize_pattern(pattern))


@pytest.mark.parametrize(
    ("pattern", "produced"),
    [
        ("postgres://*.corp", "postgres://db.corp:6432"),  # another port than the default
        ("sftp://*.partner.com", "sftp://files.partner.com:2222"),
        ("hdfs://nn?", "hdfs://nn12"),
        ("file://localhost*", "file://host-1"),
    ],
)
def test_a_wildcard_pattern_matches_no_other_store(pattern: str, produced: str) -> None:
    assert not matches_namespace(normalize_namespace(produced), normalize_pattern(pattern))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("raw/sales/orders", ("raw/sales", "orders")),
        ("raw/sales/orders/", ("raw/sales", "orders")),  # a trailing /
        ("/raw/sales/orders", ("raw/sales", "orders")),  # "object key, no leading slash"
        ("raw//sales//orders", ("raw/sales", "orders")),  # empty segments
        ("raw/sales/orders/year=2026/month=11", ("raw/sales", "orders")),
        ("raw/sales/orders/year=2026/part-00000-1a2b.snappy.parquet", ("raw/sales", "orders")),
        ("raw/sales/orders/part-0000", ("raw/sales", "orders")),
        ("raw/sales/orders/_SUCCESS", ("raw/sales", "orders")),
        ("raw/sales/orders.csv", ("raw", "sales")),  # a file: its folder is the dataset
        ("orders", (None, "orders")),
        ("orders.csv", (None, "orders.csv")),  # nothing left above a file: the name
    ],
)
@pytest.mark.parametrize("scheme", ["s3", "s3a", "s3n"])
def test_the_s3_profile_whatever_the_s3_scheme(
    scheme: str, name: str, expected: tuple[str | None, str]
) -> None:
    """Seed 000: "s3:// | The key of the dataset folder | The key up to the parent of the
    dataset folder | The dataset folder. Partition segments (key=value) and files (part-…,
    _SUCCESS, names with an extension) are dropped from the end." """
    found = entity_name(f"{scheme}://lake", name)
    assert (found.schema, found.name) == expected


def test_gcs_has_no_profile_its_name_is_kept() -> None:
    """Seed 000: "Other schemes need the hierarchy facet or a symlinks entry." """
    found = entity_name("gs://lake", "raw/orders/part-0000.parquet")
    assert (found.schema, found.name, found.rule) == (None, "raw/orders/part-0000.parquet", "name")


# -- symlinks: "a TABLE symlink is named by the same rules" -------------------------------------


def test_the_first_table_symlink_names_the_entity_by_its_own_scheme_spelt_any_way() -> None:
    symlinks = [
        ("file", "/warehouse/orders", "LOCATION"),
        ("POSTGRESQL://etl:pw@DB", "analytics..orders", "table"),
        ("hive://metastore:9083", "sales.orders", "TABLE"),
    ]
    found = entity_name("hdfs://namenode:8020", "/warehouse/orders", symlinks=symlinks)
    assert (found.schema, found.name, found.rule) == ("public", "orders", "symlink")


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        # a TABLE identity that names no table: the dataset's own name, as with no symlink
        ([("hive://metastore:9083", "", "TABLE")], ("namenode", None, "/warehouse/db.db/orders")),
        (
            [("hive://metastore:9083", "db.", "TABLE")],
            ("namenode", None, "/warehouse/db.db/orders"),
        ),
        ([("hive://metastore:9083", "  ", "TABLE")], ("namenode", None, "/warehouse/db.db/orders")),
        # ... or the next TABLE identity that does: the table of the metastore's System
        (
            [
                ("hive://metastore:9083", "db.", "TABLE"),
                ("hive://metastore:9083", "db.orders", "TABLE"),
            ],
            ("metastore", "db", "orders"),
        ),
    ],
)
def test_a_symlinks_table_identity_that_names_no_table_leaves_the_name_as_it_is(
    links: list[tuple[str, str, str]], expected: tuple[str, str | None, str]
) -> None:
    """Seed 000: "3. A symlinks table identity, for a namespace whose scheme has no profile
    above [...] 4. Otherwise the name as it is, with no schema." A Spark path dataset whose
    TABLE symlink had an empty name (or ``db.``) was reported as EMPTY_DATASET_NAME and not
    catalogued, its own name ``/warehouse/db.db/orders`` notwithstanding, and its flows dropped."""
    symlinks = {
        "symlinks": builders.facet(
            "SymlinksDatasetFacet",
            identifiers=[{"namespace": ns, "name": name, "type": kind} for ns, name, kind in links],
        )
    }
    hdfs = "hdfs://namenode:8020"
    event = run_event(
        inputs=[dataset("analytics.raw.orders")],
        outputs=[dataset("/warehouse/db.db/orders", hdfs, facets=symlinks)],
    )
    plan = build([event], builders.definition(policy("*", nameTemplate="{host}")))
    assert GapCode.EMPTY_DATASET_NAME not in plan.report.gaps
    written = [
        (e.key.system, e.key.schema_, e.key.name)
        for e in plan.entities
        if e.key.system not in ("db", "OpenLineage")  # the input's, the job's
    ]
    assert written == [expected]
    assert [f.target.entity.name for f in plan.flows] == [expected[2]]


UNITY = "abfss://uc@acct.dfs.core.windows.net"
WORKSPACE = "databricks://adb-123.azuredatabricks.net"


def _spark_table(path: str, table: str) -> dict[str, Any]:
    """A Unity Catalog table as openlineage-spark names it: its storage location, with the
    catalog's name as a TABLE symlink."""
    link = {"namespace": WORKSPACE, "name": table, "type": "TABLE"}
    symlinks = builders.facet("SymlinksDatasetFacet", identifiers=[link])
    return dataset(path, UNITY, facets={"symlinks": symlinks})


@pytest.mark.parametrize("catalog_has_a_system", [True, False])
def test_a_spark_catalog_table_lands_where_the_other_producers_name_it(
    catalog_has_a_system: bool,
) -> None:
    """The symlinks facet: "these different identifiers refer to the same entity". Spark names a
    Unity Catalog table by its storage location (``__unitystorage/…``) with the catalog's name as
    a TABLE symlink; dbt and Airflow's Databricks operators name it ``main.sales.orders`` on
    ``databricks://<host>``. The symlink named the entity, but the System stayed the storage
    account's: Spark's lineage never met the table the others describe. When the definition
    gives the catalog's namespace a System, the table lands there; otherwise on its own
    namespace's, as before."""
    policies = [policy("abfss://*", nameTemplate="{bucket}")]
    if catalog_has_a_system:
        policies.append(policy("databricks://*", nameTemplate="unity", nameProfile="databricks"))
    spark = run_event(
        "spark.clean",
        inputs=[_spark_table("__unitystorage/catalogs/aa/tables/1", "main.sales.orders")],
        outputs=[_spark_table("__unitystorage/catalogs/aa/tables/2", "main.sales.orders_clean")],
    )
    dbt = run_event(
        "dbt.model.report",
        run_id="0190b1c2-0000-7000-8000-0000000000bb",
        inputs=[dataset("main.sales.orders_clean", WORKSPACE)],
        outputs=[dataset("main.sales.report", WORKSPACE)],
    )
    plan = build([spark, dbt], builders.definition(*policies))

    tables = {(e.key.system, e.key.schema_, e.key.name) for e in plan.entities}
    pairs = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    if catalog_has_a_system:
        assert ("unity", "sales", "orders_clean") in tables
        assert not any(system == "uc" for system, _, _ in tables)
        # one entity for the table Spark writes and dbt reads: the lineage joins
        assert {("orders", "orders_clean"), ("orders_clean", "report")} <= pairs
    else:
        assert ("uc", "sales", "orders_clean") in tables  # the storage account's, as before


def test_a_catalog_table_stays_on_its_system_at_the_next_snapshot() -> None:
    """Seed 000: results are the same however many times the same events arrive. The first
    snapshot created the storage account's System (stamped with its namespace, owned by the
    definition) for another dataset; at the next, that stamp was taken for a person's choice
    and the catalog table moved there, a second entity (a probe of OpenLineage's own events)."""
    job = builders.definition(policy("*", creation="IF_MISSING"))
    landing = dataset("landing/orders", UNITY)
    spark = run_event(
        "spark.clean",
        inputs=[landing],
        outputs=[_spark_table("__unitystorage/catalogs/aa/tables/2", "main.sales.orders_clean")],
    )
    first = build([spark], job)
    created = created_as_known(first)
    second = build([spark], job, created)

    def tables(plan: CatalogPlan) -> set[tuple[str, str | None, str]]:
        return {(e.key.system, e.key.schema_, e.key.name) for e in plan.entities}

    assert tables(second) == tables(first)
    assert any(name == "orders_clean" and system != UNITY for system, _, name in tables(first))


def test_a_catalog_table_stays_when_another_definition_creates_its_locations_system() -> None:
    """Another definition's policy created the storage account's System: its stamp is no
    person's choice either (a review)."""
    job = builders.definition(policy("*", creation="IF_MISSING"))
    spark = run_event(
        "spark.clean",
        outputs=[_spark_table("__unitystorage/catalogs/aa/tables/2", "main.sales.orders_clean")],
    )
    first = build([spark], job)
    theirs = KnownSystem(
        "uc@acct",
        "u-theirs",
        ((NAMESPACE_PROPERTY, UNITY), ("openLineageOwner", "another-definition-uuid")),
    )
    created = created_as_known(first)
    second = build([spark], job, [*created, theirs])
    placed = {(e.key.system, e.key.schema_, e.key.name) for e in second.entities}
    assert placed == {(e.key.system, e.key.schema_, e.key.name) for e in first.entities}


def test_a_location_a_person_mapped_keeps_its_catalog_tables() -> None:
    """A namespaceMappings entry (or a stamp) is a person's choice: the storage account mapped
    to the System "Lake" keeps Spark's tables there, though a catch-all policy would create a
    System for the catalog's namespace."""
    lake = KnownSystem("Lake", "u-lake")
    job = builders.definition(
        policy("*"), namespaceMappings=[{"pattern": UNITY, "system": {"name": "Lake"}}]
    )
    spark = run_event(
        "spark.clean",
        outputs=[_spark_table("__unitystorage/catalogs/aa/tables/2", "main.sales.orders_clean")],
    )
    plan = build([spark], job, [lake])
    tables = {(e.key.system, e.key.schema_, e.key.name) for e in plan.entities}
    assert ("Lake", "sales", "orders_clean") in tables
    assert [s.name for s in plan.systems if s.create and s.name != "OpenLineage"] == []


# -- one store, several producers: one System, one entity, joined lineage ------------------------

SPELLINGS = [
    "postgres://db.example.com:5432",  # Hop, dbt
    "postgresql://DB.Example.com",  # a JDBC-minded emitter, default port left out
    "postgres://etl:s3cret@db.example.com:5432/",  # user info and a trailing slash
]


def test_three_producers_of_one_table_meet_on_one_entity_and_their_flows_join() -> None:
    """Seed 002, worked example: both producers "must emit the handoff table as
    postgres://db:5432 / analytics.staging.orders"; spelt as each producer does, they still
    land on one node."""
    write = run_event(
        "hop.load",
        namespace="hop",
        inputs=[dataset("analytics.raw.orders", SPELLINGS[0])],
        outputs=[dataset("analytics.staging.orders", SPELLINGS[1])],
    )
    read = run_event(
        "dbt.daily_orders",
        namespace="dbt",
        run_id=builders.new_run_id(),
        inputs=[dataset("analytics.staging.orders", SPELLINGS[2])],
        outputs=[dataset("analytics.marts.daily_orders", SPELLINGS[0])],
    )
    plan = build([write, read], builders.definition(policy("postgres://*", nameTemplate="{host}")))
    systems = [s for s in plan.systems if s.name != "OpenLineage"]
    assert [(s.name, s.namespaces) for s in systems] == [
        ("db.example.com", ("postgres://db.example.com:5432",))
    ]
    entities = sorted(
        (e.key.schema_, e.key.name) for e in plan.entities if e.key.system != "OpenLineage"
    )
    assert entities == [("marts", "daily_orders"), ("raw", "orders"), ("staging", "orders")]
    dataset_flows = {
        (
            f.source.entity.schema_,
            f.source.entity.name,
            f.target.entity.schema_,
            f.target.entity.name,
        )
        for f in plan.flows
        if f.kind == "table" and f.source.entity.system == f.target.entity.system
    }
    # the write and the read meet on staging.orders: the graph traverses Hop → dbt
    assert ("raw", "orders", "staging", "orders") in dataset_flows
    assert ("staging", "orders", "marts", "daily_orders") in dataset_flows
    assert "s3cret" not in plan.model_dump_json()


@pytest.mark.parametrize(
    "stamp",
    [
        "postgres://db.example.com:5432",
        "postgresql://DB.example.com",
        "postgresql://crawler:pw@db.example.com:5432/",
        " postgres://db.example.com: ",
    ],
)
@pytest.mark.parametrize("namespace", SPELLINGS)
def test_a_system_stamped_with_one_spelling_is_found_by_every_other(
    stamp: str, namespace: str
) -> None:
    """Seed 000, step 3: "the System whose additional property openLineageNamespace equals the
    namespace" — equal as identities (seed 002), whatever the spelling of either side."""
    crawled = KnownSystem("Crawled PG", "u-pg", ((NAMESPACE_PROPERTY, stamp),))
    event = run_event(outputs=[dataset("analytics.staging.orders", namespace)])
    plan = build([event], builders.definition(), [crawled])
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0
    assert [s.name for s in plan.systems if s.name != "OpenLineage"] == ["Crawled PG"]


@pytest.mark.parametrize(
    ("pattern", "namespace", "ignored"),
    [
        ("opensearch://*", "OPENSEARCH://admin:pw@Search:9200", True),
        ("elasticsearch://*", "ElasticSearch://es:9200/", True),
        ("postgres://db.example.com:5432", "postgresql://etl:pw@DB.example.com", True),
        ("file", "file://", True),
        ("file://", "file", True),
        ("s3://raw-*", "s3a://raw-events/", True),
        ("s3://raw-*", "s3://curated", False),
    ],
)
def test_ignored_namespaces_match_every_spelling_of_a_namespace(
    pattern: str, namespace: str, ignored: bool
) -> None:
    """Seed 000, step 1: "Ignored namespace (ignoredNamespaces): the dataset is skipped and
    counted as IGNORED_NAMESPACE." Patterns and namespaces are compared as identities."""
    event = run_event(outputs=[dataset("x", namespace)])
    plan = build([event], builders.definition(policy("*"), ignoredNamespaces=[pattern]))
    assert plan.report.gap_count(GapCode.IGNORED_NAMESPACE) == (1 if ignored else 0)


# -- a column lineage facet naming its tables as the statement spells them ------------------------

MYSQL = "mysql://mysql01.internal:3306"


def _mysql_task(
    inputs: list[str], lineage_names: dict[str, str], *, direct: bool = False
) -> dict[str, Any]:
    """A run as Airflow's SQL operators send it on a MySQL connection (``INSERT INTO orders_agg
    SELECT id, amount FROM orders``): the datasets named from information_schema
    (``shop.orders``), the column lineage as the parser reads the statement (``orders``: MySQL
    has no default schema), with no transformation (``direct``: an IDENTITY one)."""
    transformations = [{"type": "DIRECT", "subtype": "IDENTITY"}] if direct else None
    lineage = builders.column_lineage_facet(
        {
            target: [builders.input_field(name, target, MYSQL, transformations=transformations)]
            for target, name in lineage_names.items()
        }
    )
    return run_event(
        "shop_dag.agg",
        inputs=[
            dataset(name, MYSQL, facets=builders.schema_facet("id", "amount")) for name in inputs
        ],
        outputs=[
            dataset(
                "shop.orders_agg", MYSQL, facets=builders.schema_facet("id", "amount") | lineage
            )
        ],
        job_facets=builders.sql_facet("INSERT INTO orders_agg SELECT id, amount FROM orders"),
    )


MYSQL_DEFINITION = builders.definition(
    policy("mysql://*", nameTemplate="{host}", nameProfile="mysql")
)


@pytest.mark.parametrize("direct", [False, True], ids=["as-airflow-sends-it", "identity"])
def test_a_column_lineage_input_named_without_its_database_is_the_input_the_run_read(
    direct: bool,
) -> None:
    """Seed 002: "A table recovered by parsing SQL carries no catalog segment ... Blank segments
    are filled from the connection's own catalog and preferred schema, so a read of
    schema.table and a write of catalog.schema.table resolve to one identity." Airflow's MySQL
    task names the column lineage's table ``orders`` and the run's input ``shop.orders``: the
    table flow (and the column flows of an IDENTITY) came from a table ``orders`` no crawler
    catalogues, its fields reported not catalogued."""
    event = _mysql_task(["shop.orders"], {"id": "orders", "amount": "orders"}, direct=direct)
    plan = build([event], MYSQL_DEFINITION)
    entities = {(e.key.schema_, e.key.name) for e in plan.entities if e.key.system != "OpenLineage"}
    assert entities == {("shop", "orders"), ("shop", "orders_agg")}
    ends = {
        (f.kind, f.source.entity.schema_, f.source.entity.name, f.source.field, f.target.field)
        for f in plan.flows
        if f.kind != "orchestration"
    }
    columns = {("column", "shop", "orders", c, c) for c in ("id", "amount")} if direct else set()
    assert ends == {("table", "shop", "orders", None, None)} | columns
    assert GapCode.FIELD_NOT_CATALOGUED not in plan.report.gaps


def _column_sources(plan: Any) -> set[tuple[str | None, str, str | None]]:
    return {
        (f.source.entity.schema_, f.source.entity.name, f.source.field)
        for f in plan.flows
        if f.kind == "column"
    }


def test_a_temporary_table_of_an_inputs_name_is_not_taken_for_the_input() -> None:
    """Only a name the statement reads from the connection is an input: a temporary table
    ``orders`` the task makes (or a CTE) is not ``shop.orders`` (a review), nor is ``orders``
    where the facet names ``shop.orders`` too."""
    temporary = _mysql_task(["shop.orders"], {"id": "orders"}, direct=True)
    temporary["job"]["facets"] = builders.sql_facet(
        "CREATE TEMPORARY TABLE orders AS SELECT id FROM billing.fees; "
        "INSERT INTO orders_agg SELECT id, amount FROM orders"
    )
    assert ("shop", "orders", "id") not in _column_sources(build([temporary], MYSQL_DEFINITION))

    lineage = builders.column_lineage_facet(
        {
            "id": [builders.input_field("orders", "id", MYSQL)],
            "amount": [builders.input_field("shop.orders", "amount", MYSQL)],
        }
    )
    both = _mysql_task(["shop.orders"], {})
    both["outputs"][0]["facets"] |= lineage
    sources = _column_sources(build([both], MYSQL_DEFINITION))
    assert ("shop", "orders", "amount") in sources and ("shop", "orders", "id") not in sources


def test_the_table_a_task_creates_as_its_output_does_not_stop_its_source_being_read() -> None:
    """``CREATE TABLE archive.orders AS SELECT ... FROM orders``: the statement makes its
    output, not a table ``orders``: the source is still ``shop.orders`` (a review)."""
    event = _mysql_task(["shop.orders"], {"id": "orders"}, direct=True)
    event["outputs"][0]["name"] = "archive.orders"
    event["job"]["facets"] = builders.sql_facet(
        "CREATE TABLE archive.orders AS SELECT id, amount FROM orders"
    )
    assert ("shop", "orders", "id") in _column_sources(build([event], MYSQL_DEFINITION))


@pytest.mark.parametrize(("named", "read"), [("orders", True), ('"Orders"', False)])
def test_a_quoted_name_completes_an_input_of_its_own_case_only(named: str, read: bool) -> None:
    """``"Orders"`` is a table of that case: not ``public.orders``; ``orders`` is."""
    event = run_event(
        inputs=[dataset("analytics.public.orders", facets=builders.schema_facet("id"))],
        outputs=[
            dataset(
                "analytics.public.totals",
                facets=builders.schema_facet("id")
                | builders.column_lineage_facet({"id": [builders.input_field(named, "id")]}),
            )
        ],
    )
    plan = build([event], builders.definition(policy("postgres://*", nameTemplate="{host}")))
    assert (("public", "orders", "id") in _column_sources(plan)) is read


@pytest.mark.parametrize(
    "produced",
    [
        "sqlserver://sql01;instanceName=Sales",  # a JDBC URL (Spark, Flink)
        "sqlserver://SQL01:1433;databaseName=dwh;instanceName=SALES;password=x",
        "mssql://sql01\\Sales:1433",  # Airflow's MsSqlHook: the connection's host
        "mssql://sql01%5CSales",
        "sqlserver://sql01/Sales",  # openlineage-java's JdbcLocation: the instance as a path
        "sqlserver://sql01;instanceName={Sales};password={a/b@c}",  # in braces, as JDBC allows
    ],
)
def test_a_named_sql_server_instance_is_a_server_of_its_own(produced: str) -> None:
    """Two named instances of one host are two servers: ``;instanceName=`` was dropped with the
    JDBC URL's other properties, and two instances' ``dwh.dbo.orders`` merged into one entity
    with the fields of both, silently. The name is read as each producer spells it."""
    assert normalize_namespace(produced) == "mssql://sql01/sales"
    assert normalize_namespace("sqlserver://sql01;instanceName=Other") == "mssql://sql01/other"
    assert normalize_namespace("sqlserver://sql01;databaseName=dwh") == "mssql://sql01:1433"


def test_a_column_lineage_input_two_inputs_could_complete_is_left_as_named() -> None:
    """Only where one input of the namespace completes the name: ``orders`` of ``shop.orders``
    and ``crm.orders`` is neither."""
    event = _mysql_task(["shop.orders", "crm.orders"], {"id": "orders"})
    plan = build(
        [event],
        builders.definition(policy("mysql://*", nameTemplate="{host}", nameProfile="mysql")),
    )
    sources = {f.source.entity.schema_ for f in plan.flows if f.kind == "column"}
    assert "shop" not in sources and "crm" not in sources


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("None.orders", ("public", "orders")),  # Airflow's f"{schema}.{table}" of no schema
        ("analytics.None.orders", ("public", "orders")),
        ('"None".orders', ("None", "orders")),  # quoted: a schema of that name
        ("None", ("public", "None")),  # a table may be called so
    ],
)
def test_a_segment_airflow_wrote_as_python_none_is_blank(
    name: str, expected: tuple[str | None, str]
) -> None:
    """Airflow's SQL parser names a table it could not look up ``f"{schema}.{table}"``, and a
    table of no schema ``None.orders``: a blank segment (seed 002), not a schema ``None``."""
    found = entity_name("postgres://db:5432", name)
    assert (found.schema, found.name) == expected


@pytest.mark.parametrize(
    ("location", "bucket_has_a_system", "expected"),
    [
        pytest.param("s3a://lake", False, ("Metastore", "sales", "orders"), id="S3, no System"),
        pytest.param(
            "s3a://lake", True, ("lake", "warehouse/sales.db", "orders"), id="S3 with its System"
        ),
        pytest.param(
            "gs://lake", False, ("Metastore", "sales", "orders"), id="GCS declared OBJECT_KEY"
        ),
    ],
)
def test_a_location_whose_store_has_no_system_lands_on_its_table_symlink(
    location: str, bucket_has_a_system: bool, expected: tuple[str, str, str]
) -> None:
    """Seed 000 reads an S3 key before a TABLE symlink. Spark on EMR or Databricks on AWS names
    a metastore's table by its location with the table as a symlink: where the bucket has no
    System the table was lost (``UNMAPPED_NAMESPACE``) while the metastore that registers it
    was crawled (a probe of naming). It lands on the symlink's table then; a bucket that has a
    System keeps the seed's order."""
    metastore = "hive://metastore:9083"
    known = [KnownSystem("Metastore", "u1", ((NAMESPACE_PROPERTY, metastore),))]
    link = {"namespace": metastore, "name": "sales.orders", "type": "TABLE"}
    symlinks = builders.facet("SymlinksDatasetFacet", identifiers=[link])
    path = "warehouse/sales.db/orders"
    event = run_event(
        "spark.load",
        inputs=[dataset("analytics.raw.orders")],
        outputs=[dataset(path, location, facets={"symlinks": symlinks})],
    )
    policies: list[dict[str, Any]] = [
        policy(nameTemplate="db"),  # the input's
        {"pattern": "hive://*", "nameProfile": "hive"},
        {"pattern": "gs://*", "nameProfile": "OBJECT_KEY"},
    ]
    if bucket_has_a_system:
        policies.append(policy("s3://*"))
    plan = build([event], builders.definition(*policies), known)
    placed = {
        (e.key.system, e.key.schema_, e.key.name)
        for e in plan.entities
        if e.key.system not in ("db", "OpenLineage")
    }
    assert placed == {expected}
    assert [f.target.entity.name for f in plan.flows if f.kind == "table"] == [expected[2]]
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0
