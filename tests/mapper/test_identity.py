"""Dataset identity (seed 002) and dataset name → schema and entity (seed 000)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.mapper.identity import (
    EntityName,
    entity_name,
    namespace_identity,
    namespace_parts,
    normalize_namespace,
    shown_namespace,
    strip_user_info,
)
from tests.helpers import SECRET


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        # PostgreSQL is postgresql in JDBC but postgres in the OpenLineage naming spec
        ("postgresql://db:5432", "postgres://db:5432"),
        ("postgres://db:5432", "postgres://db:5432"),
        # host is taken from the connection, trimmed and lowercased
        ("postgres://DB.Example.COM:5432", "postgres://db.example.com:5432"),
        ("  postgres://db:5432  ", "postgres://db:5432"),
        # port is the database's default port when the connection leaves it blank
        ("postgres://db", "postgres://db:5432"),
        ("mysql://db", "mysql://db:3306"),
        ("mariadb://db", "mysql://db:3306"),
        ("redshift://my-dwh.eu-west-1", "redshift://my-dwh.eu-west-1:5439"),
        ("sqlserver://sql1", "mssql://sql1:1433"),
        ("oracle://ora", "oracle://ora:1521"),
        ("db2://main", "db2://main:50000"),
        ("kafka://broker-1", "kafka://broker-1:9092"),
        ("cassandra://c1", "cassandra://c1:9042"),
        ("mongodb://m1", "mongodb://m1:27017"),
        # a Redshift endpoint is its cluster and region, as Airflow's Amazon provider names it
        # (dbt and other clients send the endpoint)
        (
            "redshift://my-dwh.abc123xyz.eu-west-1.redshift.amazonaws.com:5439",
            "redshift://my-dwh.eu-west-1:5439",
        ),
        (
            "redshift://wg.123456789012.eu-west-1.redshift-serverless.amazonaws.com",
            "redshift://wg.eu-west-1:5439",
        ),
        # URI user info (credentials) is dropped, so no secret reaches the lineage graph
        ("postgres://etl:s3cret@db:5432", "postgres://db:5432"),
        ("s3://AKIA:key@my-bucket", "s3://my-bucket"),
        ("postgres://db:5432?password=x", "postgres://db:5432"),
        # ... and so are SQL Server's JDBC properties, which follow semicolons
        ("sqlserver://DB:1433;databaseName=dwh;user=etl;password=x", "mssql://db:1433"),
        ("jdbc:sqlserver://db;password=x", "jdbc:sqlserver://db"),
        # ... except Azure, whose authority carries the container rather than a credential
        (
            "abfss://container@account.dfs.core.windows.net",
            "abfss://container@account.dfs.core.windows.net",
        ),
        # ... in every Azure spelling: Spark keeps the scheme of the path, and Hadoop's non-TLS
        # abfs:// and wasb:// carry container@account as abfss:// and wasbs:// do (and name
        # the same container: one namespace)
        ("abfs://raw@lake.dfs.core.windows.net", "abfss://raw@lake.dfs.core.windows.net"),
        ("wasb://raw@lake.blob.core.windows.net", "wasbs://raw@lake.blob.core.windows.net"),
        ("WASBS://raw@lake.blob.core.windows.net", "wasbs://raw@lake.blob.core.windows.net"),
        # Azure's container and account names are lower case only: any case is the same store
        ("abfss://Raw@Lake.dfs.core.windows.net/", "abfss://raw@lake.dfs.core.windows.net"),
        # Oracle Cloud's object storage is bucket@namespace, as Azure's container@account
        ("oci://sales-bucket@mytenancy/raw", "oci://sales-bucket@mytenancy/raw"),
        # s3, s3a and s3n are one bucket namespace; bucket names keep their case
        ("s3a://my-bucket", "s3://my-bucket"),
        ("s3n://my-bucket/", "s3://my-bucket"),
        # Snowflake's stages name Google Cloud Storage gcs://, the naming conventions gs://
        ("gcs://my-bucket", "gs://my-bucket"),
        ("hdfs://NameNode:8020", "hdfs://namenode:8020"),
        # namespaces that are not URIs are left as they are
        ("hop", "hop"),
        ("bigquery", "bigquery"),
        ("file", "file"),
        # a URI with neither host nor path is its scheme, as seed 002 names file://
        ("file://", "file"),
        ("bigquery://", "bigquery"),
        ("arn:aws:glue:eu-west-1:123456789012", "arn:aws:glue:eu-west-1:123456789012"),
    ],
)
def test_producers_of_the_same_store_land_on_the_same_namespace(
    produced: str, normalised: str
) -> None:
    assert normalize_namespace(produced) == normalised


@given(st.text())
def test_normalising_is_idempotent_and_never_raises(namespace: str) -> None:
    once = normalize_namespace(namespace)
    assert normalize_namespace(once) == once


@given(
    st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
    st.from_regex(r"[A-Z!$%]{4,12}", fullmatch=True),
)
def test_no_password_in_a_namespace_survives_normalisation(user: str, password: str) -> None:
    normalised = normalize_namespace(f"postgresql://{user}:{password}@db-host")
    assert normalised == "postgres://db-host:5432"
    assert password not in normalised


# A JDBC URL's connection properties in a namespace, whatever separates them, and where the
# namespace lands without them: they are no part of its identity, as SQL Server's ``;props``
JDBC_PROPERTIES = [
    (f"db2://db2host:50000/SAMPLE:user=db2inst1;password={SECRET};", "db2://db2host:50000/SAMPLE"),
    (f"db2://db2host:50000/SAMPLE:apiKey={SECRET};", "db2://db2host:50000/SAMPLE"),
    (
        f"teradata://tdhost/DATABASE=sales,PASSWORD={SECRET}",
        "teradata://tdhost:1025/DATABASE=sales",
    ),
    (f"teradata://tdhost/PASSWORD={SECRET},USER=etl", "teradata://tdhost:1025"),
    ("hive://hs2:10000/default;auth=noSasl", "hive://hs2:10000/default"),
    (f"db2://db2host:50000/SAMPLE&password={SECRET}", "db2://db2host:50000/SAMPLE"),
    # an ``@`` in a property ends no user info: its value's rest was the host
    (f"sqlserver://sql01;user=etl@tenant;password=p@{SECRET}", "mssql://sql01:1433"),
    (f"db2://db2host:50000/SAMPLE:password=p@{SECRET};", "db2://db2host:50000/SAMPLE"),
    (f"teradata://tdhost/PASSWORD=p@{SECRET},USER=etl", "teradata://tdhost:1025"),
    (f"db2://etl:{SECRET}@db2host:50000/SAMPLE:user=a@corp;", "db2://db2host:50000/SAMPLE"),
    # ... nor in the last property's value, where nothing follows it
    (f"hive://hive1:10000/default;user=etl;password=Pa@{SECRET}", "hive://hive1:10000/default"),
    (f"teradata://tdhost/PASSWORD=Pa@{SECRET}", "teradata://tdhost:1025"),
    (f"db2://db2host:50000/SAMPLE:user=a;password=Pa@{SECRET}/x;", "db2://db2host:50000/SAMPLE"),
    # in a path of files or objects, a property that names a secret only
    (f"hdfs://nn:8020/warehouse;password={SECRET}", "hdfs://nn:8020/warehouse"),
    (f"hdfs://nn:8020/warehouse,sasToken={SECRET}", "hdfs://nn:8020/warehouse"),
    # secret names that end with no secret word: Connector/J's password1..3, a bare ``pass``
    (f"db2://db2host:50000/SAMPLE:user=etl;password2={SECRET};", "db2://db2host:50000/SAMPLE"),
    (
        f"teradata://tdhost/DATABASE=sales,USER=etl,password1={SECRET}",
        "teradata://tdhost:1025/DATABASE=sales",
    ),
    (f"mysql://db:3306/shop?user=etl&password3={SECRET}", "mysql://db:3306/shop"),
    (f"db2://db2host:50000/SAMPLE:user=etl;pass={SECRET};", "db2://db2host:50000/SAMPLE"),
    # SQL Server's value in braces is the value's, whatever it holds: its ``@`` ends no user
    # info (the host was ``w0rd}``), its ``/``, ``?`` or ``#`` no authority
    (f"sqlserver://sql01:1433;user=etl;password={{Pa:ss@{SECRET}}}", "mssql://sql01:1433"),
    (f"sqlserver://sql01;password={{a/b?c#d@{SECRET}}};databaseName=dwh", "mssql://sql01:1433"),
    (f"sqlserver://sql01;password={{a}}}};b@{SECRET}}}", "mssql://sql01:1433"),
    (f"jdbc:sqlserver://sql01:1433;password={{Pa:ss@{SECRET}}}", "jdbc:sqlserver://sql01:1433"),
]
IDENTITY_ONLY = [
    "db2://db2host:50000/SAMPLE",
    "teradata://tdhost:1025",
    "s3://lake/raw/token=eth",  # a partition, not a property
    "hdfs://nn:8020/raw/dt=2026-01-01;v=2",
    "postgres://db:5432",
]


@pytest.mark.parametrize(("produced", "normalised"), JDBC_PROPERTIES)
def test_no_secret_reaches_the_lineage_graph_from_a_jdbc_urls_properties(
    produced: str, normalised: str
) -> None:
    """Seed 002: "no secret reaches the lineage graph". The namespace is the one without the
    properties, and as it is shown (``shown_namespace``: a report's, a ``source``) its secret
    values are ``***``."""
    assert normalize_namespace(produced) == normalised
    assert SECRET not in shown_namespace(produced)


@pytest.mark.parametrize(
    ("produced", "shown"),
    [
        (
            f"sqlserver://sql01:1433;databaseName=dwh;user=etl;password={{Pa:ss@{SECRET}}}",
            "sqlserver://sql01:1433;databaseName=dwh;user=etl;password=***",
        ),
        (
            f"jdbc:sqlserver://sql01:1433;password={{Pa;ss=w0rd@{SECRET}}};databaseName=dwh",
            "jdbc:sqlserver://sql01:1433;password=***;databaseName=dwh",
        ),
        (
            f"sqlserver://sql01:1433;databaseName={{d@w;h}};password={{{SECRET}}}",
            "sqlserver://sql01:1433;databaseName={d@w;h};password=***",
        ),
    ],
)
def test_a_sql_server_value_in_braces_is_shown_hidden_whole_beside_the_store(
    produced: str, shown: str
) -> None:
    """A namespace is shown with its host, its port and the properties that name the store
    (``databaseName``), its secret in braces hidden whole: read as a user info's end, the
    ``@`` in it made ``sqlserver://w0rd}`` of it (a probe of secrets)."""
    assert shown_namespace(produced) == shown
    assert strip_user_info(produced) == produced


@pytest.mark.parametrize("namespace", IDENTITY_ONLY)
def test_a_namespace_of_identity_parts_only_is_kept(namespace: str) -> None:
    assert normalize_namespace(namespace) == namespace
    assert shown_namespace(namespace) == namespace


# A user info whose password (or user) holds what reads as a connection property (``;k=v``,
# ``,k=v``): no property ends it, it is dropped whole, and the host is the one after its ``@``
USER_INFO_LIKE_PROPERTIES = [
    (f"mysql://etl:Xy;k=9{SECRET}@db:3306/shop", "mysql://db:3306/shop"),
    (f"postgres://etl:p;k=9{SECRET}@db.corp:5432", "postgres://db.corp:5432"),
    (f"sqlserver://etl:Hu;k=9{SECRET}@sql01:1433;databaseName=dwh", "mssql://sql01:1433"),
    (f"postgres://etl;role=x:{SECRET}@db:5432", "postgres://db:5432"),
    (f"postgres://etl:2024/p,w={SECRET}@db", "postgres://db:5432"),
    # a password that starts with digits reads as ``user:port``: still no host, but SQL Server's
    (f"mysql://etl:1234;k={SECRET}@db1:3306/shop", "mysql://db1:3306/shop"),
    (f"mysql://etl:1234;k={SECRET}@db1", "mysql://db1:3306"),
    (f"postgres://etl:2024;pwd={SECRET}@pg.corp/dwh", "postgres://pg.corp:5432/dwh"),
    (f"databricks://token:p;x={SECRET}@adb-1.azuredatabricks.net:443", None),
    # MySQL Connector/J's key-value hosts hold the user and the password among their keys
    (f"mysql://(host=db,port=3306,user=etl,password={SECRET})/shop", "mysql://db:3306/shop"),
    (
        f"mysql://address=(host=db)(user=etl)(password={SECRET}),(host=db2)/shop",
        "mysql://db:3306/shop",
    ),
]


@pytest.mark.parametrize(("produced", "normalised"), USER_INFO_LIKE_PROPERTIES)
def test_a_password_that_reads_as_a_connection_property_is_still_dropped_as_user_info(
    produced: str, normalised: str | None
) -> None:
    """Seed 002: "URI user info (credentials) is dropped from the namespace". A ``;name=`` in
    a password cut the user info short: ``mysql://etl:xy:3306`` was the System, and the
    password was in every shown namespace (a review of the connection properties' commit)."""
    assert SECRET not in normalize_namespace(produced)
    assert SECRET not in strip_user_info(produced)
    assert SECRET not in shown_namespace(produced)
    if normalised is not None:
        assert normalize_namespace(produced) == normalised


# Connection properties that tell databases apart, in namespaces the parent of the connection
# properties' commit kept apart: each pair lands on two namespaces still
DISTINCT_BY_A_PROPERTY = [
    ("teradata://tdhost/DATABASE=sales", "teradata://tdhost/DATABASE=hr"),
    ("teradata://tdhost/DBS_PORT=1026", "teradata://tdhost:1025"),
    ("db2://h:50000/SAMPLE:currentSchema=SALES;", "db2://h:50000/SAMPLE:currentSchema=HR;"),
    (
        f"db2://h:50000/SAMPLE:user=etl;currentSchema=SALES;password={SECRET};",
        "db2://h:50000/SAMPLE:currentSchema=HR;",
    ),
    (
        "bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p1;"
        "OAuthServiceAcctEmail=sa@proj.iam.gserviceaccount.com;OAuthPvtKeyPath=/k.json",
        "bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p2;"
        "OAuthServiceAcctEmail=sa@proj.iam.gserviceaccount.com;OAuthPvtKeyPath=/k.json",
    ),
    # a partition in the path of a file system Hadoop names (not a database's property)
    ("viewfs://cluster/dt=2026-01-01", "viewfs://cluster/dt=2026-01-02"),
    ("o3fs://bucket.vol.om/dt=2026-01-01", "o3fs://bucket.vol.om/dt=2026-01-02"),
    ("cos://bucket/dt=2026-01-01", "cos://bucket/dt=2026-01-02"),
    ("webhdfs://nn:9870/dt=2026-01-01", "webhdfs://nn:9870/dt=2026-01-02"),
    ("oss://bucket/dt=2026-01-01", "oss://bucket/dt=2026-01-02"),
    # a folder whose name holds ``,token=`` or ``:token=``: a prefix of keys, no property
    ("s3://lake/raw,token=eth/transfers", "s3://lake/raw,token=btc/transfers"),
    ("hdfs://nn:8020/warehouse/x,token=eth/y", "hdfs://nn:8020/warehouse/x,token=btc/y"),
    ("gs://lake/exports:sig=v1/x", "gs://lake/exports:sig=v2/x"),
    # a Kerberos principal's realm is no host: two servers of one realm
    (
        "hive://hive1:10000/default;principal=hive/_HOST@CORP.EXAMPLE.COM",
        "hive://hive2:10000/default;principal=hive/_HOST@CORP.EXAMPLE.COM",
    ),
    # Oracle Cloud's buckets of one tenancy (bucket@namespace)
    ("oci://sales-bucket@mytenancy/raw", "oci://hr-bucket@mytenancy/raw"),
]


@pytest.mark.parametrize(("one", "other"), DISTINCT_BY_A_PROPERTY)
def test_two_namespaces_a_connection_property_tells_apart_stay_apart(one: str, other: str) -> None:
    """Seed 002 normalises spellings of one store, never two stores into one: Teradata's
    ``DATABASE=`` and ``DBS_PORT=``, DB2's ``currentSchema=``, BigQuery's ``ProjectId=`` and a
    file system's ``dt=`` partition were cut from the namespace with the secrets (a review)."""
    assert normalize_namespace(one) != normalize_namespace(other)


@pytest.mark.parametrize(
    ("produced", "normalised"),
    [
        ("teradata://tdhost/DBS_PORT=1026", "teradata://tdhost:1026"),
        (
            f"teradata://tdhost/DATABASE=sales,DBS_PORT=1026,PASSWORD={SECRET}",
            "teradata://tdhost:1026/DATABASE=sales",
        ),
        ("teradata://tdhost:1027/DBS_PORT=1026", "teradata://tdhost:1027"),
        (
            f"db2://h:50000/SAMPLE:user=etl;currentSchema=SALES;password={SECRET};sslConnection=true;",
            "db2://h:50000/SAMPLE:currentSchema=SALES;",
        ),
        (
            "bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p1;OAuthType=0;"
            "OAuthServiceAcctEmail=sa@proj.iam.gserviceaccount.com;OAuthPvtKeyPath=/k.json",
            "bigquery://https//www.googleapis.com/bigquery/v2:443;ProjectId=p1",
        ),
    ],
)
def test_a_connection_property_that_names_the_store_stays_in_its_namespace(
    produced: str, normalised: str
) -> None:
    """Only the properties that say how to connect (the user, the sign-in, TLS) and those that
    name a secret leave the namespace; Teradata's ``DBS_PORT`` is its port, and an e-mail's
    ``@`` among Simba's properties ends no user info."""
    assert normalize_namespace(produced) == normalised
    assert SECRET not in shown_namespace(produced)


@pytest.mark.parametrize(
    ("namespace", "parts"),
    [
        ("postgres://db:5432", ("postgres", "db", "5432", "")),
        ("s3://my-bucket", ("s3", "my-bucket", "", "my-bucket")),
        (
            "abfss://raw@lake.dfs.core.windows.net",
            ("abfss", "lake.dfs.core.windows.net", "", "raw"),
        ),
        ("abfs://raw@lake.dfs.core.windows.net", ("abfs", "lake.dfs.core.windows.net", "", "raw")),
        (
            "wasb://raw@lake.blob.core.windows.net",
            ("wasb", "lake.blob.core.windows.net", "", "raw"),
        ),
        ("hop", ("", "", "", "")),
    ],
)
def test_name_template_placeholders(namespace: str, parts: tuple[str, str, str, str]) -> None:
    found = namespace_parts(namespace)
    assert (found.scheme, found.host, found.port, found.bucket) == parts


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        # redshift://, postgres://: database.schema.table → schema, table; no schema part: public
        ("redshift://dwh:5439", "analytics.sales.orders", ("sales", "orders")),
        ("postgres://db:5432", "analytics.staging.orders", ("staging", "orders")),
        ("postgresql://db", "staging.orders", ("staging", "orders")),
        ("postgres://db:5432", "orders", ("public", "orders")),
        # awsathena://: catalog.database.table → database, table; no database part: default
        (
            "awsathena://athena.eu-west-1.amazonaws.com",
            "AwsDataCatalog.sales.orders",
            ("sales", "orders"),
        ),
        ("awsathena://athena.eu-west-1.amazonaws.com", "orders", ("default", "orders")),
        # arn:aws:glue: table/database/table → database, table
        ("arn:aws:glue:eu-west-1:123456789012", "table/sales/orders", ("sales", "orders")),
        ("arn:aws:glue:eu-west-1:123456789012", "table/orders", ("default", "orders")),
        # s3://: the dataset folder; partitions and files are dropped from the end
        ("s3://lake", "raw/sales/orders", ("raw/sales", "orders")),
        (
            "s3://lake",
            "raw/sales/orders/year=2026/month=11/part-00000.parquet",
            ("raw/sales", "orders"),
        ),
        ("s3://lake", "raw/sales/orders/_SUCCESS", ("raw/sales", "orders")),
        ("s3://lake", "/orders/", (None, "orders")),
        ("s3a://lake", "exports/orders.csv", (None, "exports")),
        # other schemes: the name as it is, with no schema
        ("kafka://broker:9092", "orders.events", (None, "orders.events")),
        ("hop", "customers.csv", (None, "customers.csv")),
    ],
)
def test_the_profile_of_the_namespace_scheme_names_schema_and_entity(
    namespace: str, name: str, expected: tuple[str | None, str]
) -> None:
    found = entity_name(namespace, name)
    assert (found.schema, found.name) == expected


def test_a_kafka_topic_is_named_by_its_topic_whatever_table_a_symlink_links_it_to() -> None:
    """The naming conventions: a Kafka dataset's name is ``{topic}``. Flink SQL sends each topic
    with a TABLE symlink to its session's in-memory catalog (``default_catalog.
    default_database.kafka_input``, OpenLineage's own Flink 2 test events): read by seed 000's
    rule 3, the topic became entity ``kafka_input`` of schema ``default_database``, and a Flink
    DataStream job's topic (no symlink) took that name too, its facets merged (a probe of
    OpenLineage's test events)."""
    link = ("kafka://b:9092", "default_catalog.default_database.kafka_input", "TABLE")
    assert entity_name("kafka://b:9092", "io.shop.input1", symlinks=[link]) == EntityName(
        None, "io.shop.input1", "name"
    )


def test_the_hierarchy_facet_wins_last_level_is_the_entity_the_one_before_the_schema() -> None:
    hierarchy = [("DATABASE", "my_db"), ("SCHEMA", "my_schema"), ("TABLE", "my_table")]
    assert entity_name("postgres://db", "x.y.z", hierarchy=hierarchy) == EntityName(
        "my_schema", "my_table", "hierarchy"
    )
    assert entity_name("kafka://b", "t", hierarchy=[("TOPIC", "orders")]) == EntityName(
        None, "orders", "hierarchy"
    )


@pytest.mark.parametrize(
    ("key", "schema"),
    [
        ("hierarchy", "HierarchyDatasetFacet"),
        # the same facet as OpenLineage's clients also generate it
        ("databaseHierarchy", "DatabaseHierarchyDatasetFacet"),
    ],
)
def test_the_hierarchy_facet_is_read_under_either_of_its_spec_names(key: str, schema: str) -> None:
    """Seed 000: a facet's key, else its ``_schemaURL``, says which facet it is; the hierarchy
    facet's levels name the schema and the entity whichever of its names the producer used."""
    from airflow_blindata.mapper.build import build
    from tests.builders import dataset, definition, policy, run_event

    facet = {
        "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/client/python",
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-0/{schema}.json#/$defs/{schema}",
        "hierarchy": [
            {"type": "DATABASE", "name": "shop"},
            {"type": "SCHEMA", "name": "sales"},
            {"type": "TABLE", "name": "orders"},
        ],
    }
    event = run_event(outputs=[dataset("/data/orders", "file", facets={key: facet})])
    plan = build([event], definition(policy("*")))
    placed = {
        (e.key.schema_, e.key.name) for e in plan.entities if e.table_type != "OPENLINEAGE_JOB"
    }
    assert placed == {("sales", "orders")}
    assert key not in plan.report.unknown_facets


def test_a_table_symlink_names_the_entity_of_a_scheme_without_a_profile() -> None:
    symlinks = [
        ("file:/warehouse", "other", "LOCATION"),
        ("hive://metastore:9083", "default.alter_table_test_new", "TABLE"),
    ]
    found = entity_name("file", "/warehouse/alter_test", symlinks=symlinks)
    assert found == EntityName("default", "alter_table_test_new", "symlink")


@pytest.mark.parametrize(
    ("link_namespace", "link_name", "expected"),
    [
        # arn:aws:glue: table/database/table (Spark on EMR and Glue names its tables so)
        ("arn:aws:glue:eu-west-1:123456789012", "table/sales/orders", ("sales", "orders")),
        ("arn:aws:glue:eu-west-1:123456789012", "table/orders", ("default", "orders")),
        # awsathena://: catalog.database.table; no database part: default
        ("awsathena://athena.eu-west-1.amazonaws.com", "orders", ("default", "orders")),
        ("postgres://db:5432", "orders", ("public", "orders")),
        ("hive://metastore:9083", "sales.orders", ("sales", "orders")),
    ],
)
def test_a_table_symlink_is_named_by_the_same_rules_as_a_dataset_name(
    link_namespace: str, link_name: str, expected: tuple[str, str]
) -> None:
    """Seed 000: "a TABLE symlink is named by the same rules" (the profiles, Glue's too)."""
    symlinks = [(link_namespace, link_name, "TABLE")]
    found = entity_name("hdfs://namenode:8020", "/warehouse/orders", symlinks=symlinks)
    assert (found.schema, found.name, found.rule) == (*expected, "symlink")


def test_a_scheme_with_a_profile_ignores_symlinks() -> None:
    symlinks = [("hive://m", "db.other", "TABLE")]
    found = entity_name("postgres://db", "a.b.c", symlinks=symlinks)
    assert (found.schema, found.name, found.rule) == ("b", "c", "profile")


@pytest.mark.parametrize(
    ("namespace", "identity"),
    [
        pytest.param(
            "sqlserver://sql01:1433;databaseName=dwh",
            "mssql://sql01:1433;databaseName=dwh",
            id="databaseName",
        ),
        pytest.param(
            "sqlserver://etl:pw@SQL01;DatabaseName=DWH;password=x",
            "mssql://sql01:1433;databaseName=dwh",
            id="any-case-user-info-and-secrets-dropped",
        ),
        pytest.param(
            "sqlserver://sql01;database=stage",
            "mssql://sql01:1433;databaseName=stage",
            id="database",
        ),
        pytest.param(
            "sqlserver://sql01;password=a/b;databaseName=dwh",
            "mssql://sql01:1433;databaseName=dwh",
            id="after-a-value-with-a-slash",
        ),
        pytest.param(
            "sqlserver://sql01:1433;databaseName=", "mssql://sql01:1433", id="blank-database"
        ),
        pytest.param("sqlserver://sql01:1433", "mssql://sql01:1433", id="no-database"),
        # SQL Server's braces hold a value whole, whatever it holds (a review: a password
        # holding ``;database=`` became the database, in scopes and check codes)
        pytest.param(
            "sqlserver://sql01:1433;password={Pa;database=Hunter2};databaseName=dwh",
            "mssql://sql01:1433;databaseName=dwh",
            id="database-in-a-braced-password-is-the-password",
        ),
        pytest.param(
            "sqlserver://sql01:1433;password={Pa;database=Hunter2}",
            "mssql://sql01:1433",
            id="only-a-braced-password-names-no-database",
        ),
        pytest.param(
            "sqlserver://sql01:1433;password={a?b};database=x",
            "mssql://sql01:1433;databaseName=x",
            id="after-a-braced-value-with-a-question-mark",
        ),
        pytest.param(
            "sqlserver://sql01:1433;databaseName={DWH}",
            "mssql://sql01:1433;databaseName=dwh",
            id="a-braced-database",
        ),
        pytest.param(
            "oracle:thin:@//ora:1521/PDB1", "oracle:thin:@//ora:1521/PDB1", id="oracle-url-kept"
        ),
        pytest.param("postgresql://pg/prod", "postgres://pg:5432/prod", id="a-path-kept"),
        pytest.param("postgres://pg?sslmode=require", "postgres://pg:5432", id="a-query-dropped"),
        pytest.param("hop", "hop", id="no-uri"),
    ],
)
def test_a_namespace_s_identity_is_its_store_and_the_database_it_names(
    namespace: str, identity: str
) -> None:
    """Two datasets are one when their names and these are (``lineage._same``): normalising
    drops a JDBC URL's properties, the database among them, which is written back."""
    assert namespace_identity(namespace) == identity
