"""Issue 37, items 1 to 3: declared name profiles, the database as part of identity, identifier
case, and seed 002's "No surrounding quotes, no trailing semicolon".

The platforms' shapes are those of the OpenLineage naming specification (``spec/Naming.md``):
see ``tests/sync/test_warehouses.py`` for the same shapes landing on a crawled catalog.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_blindata.definition import OBJECT_KEY_LEVELS
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.identity import NameReading, entity_name
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import (
    DATABASE_PROPERTY,
    NAMESPACE_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
)
from tests import builders
from tests.builders import (
    column_lineage_facet,
    dataset,
    facet,
    field,
    input_field,
    run_event,
    schema_facet,
)
from tests.mapper.helpers import created_as_known

THREE = ("database", "schema", "table")
TWO = ("database", "table")
OBJECT_KEY = NameReading(OBJECT_KEY_LEVELS)
BIGQUERY = ("project", "dataset", "table")

# -- item 1: "nameProfile: DOTTED ... or the name of a platform" --------------------------------


@pytest.mark.parametrize(
    ("namespace", "name", "reading", "expected"),
    [
        # "the last segment is the entity, the one before it the schema"
        ("kafka://b:9092", "events.orders", NameReading(THREE), ("events", "orders", None)),
        ("custom://h", "a.b.c.d", NameReading(THREE), ("c", "d", "a.b")),
        # "with an optional defaultSchema"
        ("custom://h", "orders", NameReading(THREE, "main"), ("main", "orders", None)),
        # "{database}.{schema}.{table}" platforms
        ("snowflake://org-acct", "DB.SALES.ORDERS", NameReading(THREE), ("SALES", "ORDERS", "DB")),
        (
            "bigquery",
            "proj.ds.t",
            NameReading(BIGQUERY),
            ("ds", "t", "proj"),
        ),
        # a domain-scoped BigQuery project holds a dot: everything before the dataset
        ("bigquery", "example.com:proj.ds.t", NameReading(THREE), ("ds", "t", "example.com:proj")),
        # BigQuery's SQL quotes a whole path in one pair of backticks: the path it quotes
        ("bigquery", "`proj.ds.t`", NameReading(BIGQUERY), ("ds", "t", "proj")),
        ("bigquery", "`proj`.`ds`.`t`", NameReading(BIGQUERY), ("ds", "t", "proj")),
        ("bigquery", "`ex.com:p.ds.t`", NameReading(BIGQUERY), ("ds", "t", "ex.com:p")),
        # a partition's (or a snapshot's) decorator names the table: a job that writes one
        # partition writes the table the others read
        ("bigquery", "proj.ds.t$20261129", NameReading(BIGQUERY), ("ds", "t", "proj")),
        ("bigquery", "proj.ds.t$__UNPARTITIONED__", NameReading(BIGQUERY), ("ds", "t", "proj")),
        ("bigquery", "proj.ds.t@-3600000", NameReading(BIGQUERY), ("ds", "t", "proj")),
        ("mssql://h:1433", "dwh.dbo.Orders", NameReading(THREE), ("dbo", "Orders", "dwh")),
        # Oracle: a table through a database link; the link's dots part no path, and two
        # tables through one link stay two (both were schema EXAMPLE, table COM)
        (
            "oracle://h:1521",
            "HR.EMP@remote.example.com",
            NameReading(THREE, case="UPPER"),
            ("HR", "EMP@REMOTE.EXAMPLE.COM", None),
        ),
        (
            "oracle://h:1521",
            "ORCL.HR.DEPT@dblink",
            NameReading(THREE, case="UPPER"),
            ("HR", "DEPT@DBLINK", "ORCL"),
        ),
        # "{database}.{table}" platforms: the database is the schema the crawler stores
        ("mysql://h:3306", "shop.orders", NameReading(TWO), ("shop", "orders", "shop")),
        ("hive://h:10000", "sales.orders", NameReading(TWO), ("sales", "orders", "sales")),
        ("teradata://h:1025", "orders", NameReading(TWO), (None, "orders", None)),
        # OBJECT_KEY: the folders of seed 000's s3:// profile, for the other path schemes
        ("gs://lake", "raw/orders.v2/part-0.parquet", OBJECT_KEY, ("raw", "orders.v2", None)),
        ("abfss://c@acct.dfs.core.windows.net", "raw/events/", OBJECT_KEY, ("raw", "events", None)),
        (
            "hdfs://nn:8020",
            "/warehouse/sales.db/orders",
            OBJECT_KEY,
            ("warehouse/sales.db", "orders", None),
        ),
    ],
)
def test_a_declared_profile_splits_the_names_of_its_namespace(
    namespace: str, name: str, reading: NameReading, expected: tuple[str | None, str, str | None]
) -> None:
    found = entity_name(namespace, name, reading=reading)
    assert (found.schema, found.name, found.database) == expected
    assert found.rule == "profile"


def test_the_default_stays_the_seeds_nothing_changes_for_a_definition_that_declares_nothing() -> (
    None
):
    found = entity_name("snowflake://org-acct", "ANALYTICS.SALES.ORDERS")
    assert (found.schema, found.name, found.rule) == (None, "ANALYTICS.SALES.ORDERS", "name")


def test_a_hierarchy_facet_still_wins_seed_order() -> None:
    hierarchy = [("DATABASE", "db"), ("SCHEMA", "s"), ("TABLE", "t")]
    found = entity_name(
        "snowflake://org-acct", "X.Y.Z", hierarchy=hierarchy, reading=NameReading(THREE)
    )
    assert (found.schema, found.name, found.database, found.rule) == ("s", "t", "db", "hierarchy")


def test_a_table_symlink_is_read_by_the_profile_declared_for_its_namespace() -> None:
    symlinks = [("snowflake://org-acct", "DB.SALES.ORDERS", "TABLE")]

    def reading_of(namespace: str) -> NameReading:
        return NameReading(THREE) if namespace.startswith("snowflake") else NameReading()

    found = entity_name("s3://stage", "unload/orders", symlinks=symlinks, reading_of=reading_of)
    # s3 has the seed's profile: the symlink is not read (seed 000, rule 3)
    assert found.rule == "profile"
    found = entity_name("file", "/stage/orders", symlinks=symlinks, reading_of=reading_of)
    assert (found.schema, found.name, found.database, found.rule) == (
        "SALES",
        "ORDERS",
        "DB",
        "symlink",
    )


# -- item 3: identifier case, quotes, statement ends --------------------------------------------


@pytest.mark.parametrize(
    ("name", "case", "expected"),
    [
        # "applied to unquoted names only and only where declared"
        ("analytics.sales.orders", "UPPER", ("SALES", "ORDERS", "ANALYTICS")),
        ("ANALYTICS.SALES.ORDERS", "LOWER", ("sales", "orders", "analytics")),
        ("Analytics.Sales.Orders", "PRESERVE", ("Sales", "Orders", "Analytics")),
        ("Analytics.Sales.Orders", None, ("Sales", "Orders", "Analytics")),
        # "a quoted name keeps its case"
        ('analytics."Sales"."Orders"', "UPPER", ("Sales", "Orders", "ANALYTICS")),
        ("`proj`.`ds`.`T`", "LOWER", ("ds", "T", "proj")),
        ("[dwh].[dbo].[Orders]", "UPPER", ("dbo", "Orders", "dwh")),
        # a doubled quote is one quote of the identifier
        ('db."a""b".t', None, ('a"b', "t", "db")),
        # a name no database takes unquoted was quoted, its quotes left out by the producer:
        # re-cased, ``Order Items`` missed the crawler's table, ``straße`` became ``STRASSE``
        ("analytics.sales.Order Items", "UPPER", ("SALES", "Order Items", "ANALYTICS")),
        ("analytics.sales.straße", "UPPER", ("SALES", "straße", "ANALYTICS")),
        ("analytics.sales.t$1", "UPPER", ("SALES", "T$1", "ANALYTICS")),
    ],
)
def test_identifier_case_applies_to_unquoted_names_only_and_only_where_declared(
    name: str, case: str | None, expected: tuple[str, str, str]
) -> None:
    found = entity_name("snowflake://org-acct", name, reading=NameReading(THREE, None, case))
    assert (found.schema, found.name, found.database) == expected


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        # the issue's own examples: "A crawler stores Sales, Orders, refunds"
        ("postgres://db:5432", '"Shop"."Sales"."Orders"', ("Sales", "Orders")),
        ("postgres://db:5432", "shop.sales.refunds;", ("sales", "refunds")),
        ("postgres://db:5432", "shop.sales.refunds ; ", ("sales", "refunds")),
        ("redshift://dwh:5439", 'dev.public."Refunds";', ("public", "Refunds")),
        # rule 4 (the name as it is): only the ';' and the quotes of one quoted identifier go
        ("kafka://b:9092", "orders;", (None, "orders")),
        ("kafka://b:9092", '"Orders"', (None, "Orders")),
        ("kafka://b:9092", "orders.v2 ", (None, "orders.v2 ")),
    ],
)
def test_quotes_are_removed_and_a_trailing_semicolon_is_dropped_always(
    namespace: str, name: str, expected: tuple[str | None, str]
) -> None:
    """Seed 002: "No surrounding quotes, no trailing semicolon" — whatever the definition says."""
    found = entity_name(namespace, name)
    assert (found.schema, found.name) == expected


identifiers = st.text(
    st.characters(
        codec="utf-8", exclude_categories=("Cs", "Cc", "Zs"), exclude_characters='."`[];'
    ),
    min_size=1,
    max_size=8,
)


@settings(database=None, deadline=None)
@given(
    # but Airflow's ``None`` segment, Python's None for a blank one, which only a quoted
    # ``"None"`` names (docs/mapping-reference.md)
    st.lists(identifiers.filter(lambda part: part != "None"), min_size=1, max_size=4),
    st.sampled_from(['"', "`", "["]),
)
def test_a_quoted_name_lands_where_the_unquoted_one_does_and_keeps_its_case(
    parts: list[str], quote: str
) -> None:
    """Seed 002: "never quoted"; issue 37: "Quotes are removed (a quoted name keeps its case)",
    whatever identifierCase is declared."""
    closing = "]" if quote == "[" else quote
    plain = entity_name("postgres://db:5432", ".".join(parts))
    quoted = entity_name(
        "postgres://db:5432",
        ".".join(f"{quote}{part}{closing}" for part in parts) + ";",
        reading=NameReading(None, None, "UPPER"),
    )
    assert (quoted.schema, quoted.name, quoted.database) == (
        plain.schema,
        plain.name,
        plain.database,
    )


def test_identifier_case_applies_to_the_columns_of_the_namespace() -> None:
    """dbt-ol's lower-case columns meet Snowflake's upper-case ones: fields and column flows."""
    lineage = column_lineage_facet(
        {"order_id": [input_field("analytics.sales.orders", "id", "snowflake://acct")]}
    )
    event = run_event(
        inputs=[
            dataset("analytics.sales.orders", "snowflake://acct", facets=schema_facet(field("id")))
        ],
        outputs=[
            dataset(
                "analytics.mart.totals",
                "snowflake://acct",
                facets={**lineage, **schema_facet(field("order_id", "NUMBER"))},
            )
        ],
    )
    job = builders.definition(
        builders.policy("snowflake://*", nameProfile="snowflake", identifierCase="UPPER")
    )
    plan = build([event], job)
    assert {f.name for f in plan.fields} == {"ID", "ORDER_ID"}
    columns = {
        (flow.source.field, flow.target.field) for flow in plan.flows if flow.kind == "column"
    }
    assert columns == {("ID", "ORDER_ID")}
    undeclared = build([event], builders.definition(builders.policy("snowflake://*")))
    assert {f.name for f in undeclared.fields} == {"id", "order_id"}


# -- item 2: the database is part of identity ---------------------------------------------------

PG = "postgres://pg:5432"


def _two_databases(**options: Any) -> CatalogPlan:
    events = [
        run_event(
            f"etl.{database}",
            run_id=f"0190b1c2-0000-7000-8000-00000000000{index}",
            inputs=[dataset(f"{database}.sales.orders", PG)],
            outputs=[dataset(f"{database}.mart.t", PG)],
        )
        for index, database in enumerate(("db1", "db2"))
    ]
    known = options.pop("known", ())
    return build(events, builders.definition(**options), known)


def _spark_reads_prod(table: str) -> list[dict[str, Any]]:
    """A Spark run that reads ``prod.public.<table>`` (three parts) and writes ``prod.orders``
    (a JDBC table named without its schema: database.table)."""
    return [
        run_event(
            "spark.load",
            inputs=[dataset(f"prod.public.{table}", PG)],
            outputs=[dataset("prod.orders", PG)],
        )
    ]


def _placed(plan: CatalogPlan) -> set[tuple[str, str | None, str]]:
    return {
        (e.key.system, e.key.schema_, e.key.name)
        for e in plan.entities
        if e.table_type != "OPENLINEAGE_JOB"
    }


def test_two_databases_of_one_namespace_on_one_system_are_reported_naming_both() -> None:
    plan = _two_databases(systemPolicies=[builders.policy("postgres://*", nameTemplate="{host}")])
    assert _placed(plan) == {("pg", "sales", "orders"), ("pg", "mart", "t")}
    gap = plan.report.gaps[GapCode.DATABASES_MERGED]
    assert gap.count == 2
    assert gap.examples == [
        "postgres://pg:5432: databases db1, db2 → pg:mart.t",
        "postgres://pg:5432: databases db1, db2 → pg:sales.orders",
    ]


def test_a_name_without_a_database_is_no_second_database() -> None:
    """Seed 002: "a read of schema.table and a write of catalog.schema.table resolve to one
    identity"."""
    event = run_event(
        inputs=[dataset("sales.orders", PG)], outputs=[dataset("db1.sales.orders_copy", PG)]
    )
    other = run_event(
        "etl.other",
        run_id="0190b1c2-0000-7000-8000-000000000009",
        inputs=[dataset("db1.sales.orders", PG)],
    )
    plan = build([event, other], builders.definition(builders.policy(nameTemplate="{host}")))
    assert plan.report.gap_count(GapCode.DATABASES_MERGED) == 0


def test_database_in_the_name_template_gives_a_system_per_database_stamped_with_it() -> None:
    plan = _two_databases(
        systemPolicies=[builders.policy("postgres://*", nameTemplate="{host} {database}")]
    )
    assert _placed(plan) == {
        ("pg db1", "sales", "orders"),
        ("pg db1", "mart", "t"),
        ("pg db2", "sales", "orders"),
        ("pg db2", "mart", "t"),
    }
    assert plan.report.gap_count(GapCode.DATABASES_MERGED) == 0
    stamps = {s.name: s.stamp for s in plan.systems if s.create and s.name.startswith("pg")}
    assert stamps["pg db1"][:2] == ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "db1"))
    assert stamps["pg db2"][:2] == ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "db2"))


def test_the_next_run_finds_each_database_system_by_its_stamps() -> None:
    known = [
        KnownSystem("pg db1", "u1", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "db1"))),
        KnownSystem("pg db2", "u2", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "db2"))),
    ]
    plan = _two_databases(known=known)
    assert _placed(plan) == {
        ("pg db1", "sales", "orders"),
        ("pg db1", "mart", "t"),
        ("pg db2", "sales", "orders"),
        ("pg db2", "mart", "t"),
    }
    assert {s.origin for s in plan.systems if s.name.startswith("pg")} == {"stamped"}


MSSQL = "mssql://sql01:1433"


def _one_database_in_two_cases(**options: Any) -> CatalogPlan:
    """Spark names the database as typed in its JDBC URL (``DWH``), Airflow as the connection
    has it (``dwh``): one SQL Server database, whose names follow the server's collation."""
    events = [
        run_event(
            "spark.load",
            run_id="0190b1c2-0000-7000-8000-000000000001",
            outputs=[dataset("DWH.dbo.Orders", MSSQL)],
        ),
        run_event(
            "airflow.report",
            run_id="0190b1c2-0000-7000-8000-000000000002",
            inputs=[dataset("dwh.dbo.Orders", MSSQL)],
            outputs=[dataset("dwh.dbo.Report", MSSQL)],
        ),
    ]
    known = options.pop("known", ())
    return build(events, builders.definition(**options), known)


def test_one_sql_server_database_spelt_in_two_cases_is_one_system() -> None:
    """Seed 002: "Two producers that name the same store land on the same node". Under a System
    per database, ``DWH`` and ``dwh`` made two Systems (``sql01 DWH``, ``sql01 dwh``) and the
    table two entities, with no gap. With no System stamped with the database, its name is in
    lower case: it does not depend on which spelling a plan meets first."""
    plan = _one_database_in_two_cases(
        systemPolicies=[
            builders.policy("mssql://*", nameProfile="mssql", nameTemplate="{host} {database}")
        ]
    )
    assert {system for system, _, _ in _placed(plan)} == {"sql01 dwh"}
    assert plan.report.gap_count(GapCode.DATABASES_MERGED) == 0


@pytest.mark.parametrize("later", ["DWH", "dwh"])
def test_the_system_of_a_sql_server_database_does_not_depend_on_which_spelling_came_last(
    later: str,
) -> None:
    earlier = "dwh" if later == "DWH" else "DWH"
    events = [
        run_event(
            f"etl.{index}",
            run_id=f"0190b1c2-0000-7000-8000-00000000000{index}",
            time=builders.at(index),
            outputs=[dataset(f"{database}.dbo.t{index}", MSSQL)],
        )
        for index, database in enumerate((earlier, later))
    ]
    policy = builders.policy("mssql://*", nameProfile="mssql", nameTemplate="{host} {database}")
    plan = build(events, builders.definition(policy))
    assert {system for system, _, _ in _placed(plan)} == {"sql01 dwh"}


def test_a_sql_server_database_stamped_in_another_case_is_found_by_its_stamp() -> None:
    """A crawled System stamped ``openLineageDatabase: dwh`` is the System of ``DWH.dbo.Orders``
    too: it was reported UNMAPPED_NAMESPACE, with a hint to stamp the System already stamped."""
    known = [
        KnownSystem("DWH crawled", "u1", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "dwh"))),
        KnownSystem(
            "STAGE crawled", "u2", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "stage"))
        ),
    ]
    plan = _one_database_in_two_cases(
        known=known, systemPolicies=[{"pattern": "mssql://*", "nameProfile": "mssql"}]
    )
    assert {system for system, _, _ in _placed(plan)} == {"DWH crawled"}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


def test_a_database_selector_matches_a_sql_server_database_in_any_case() -> None:
    plan = _one_database_in_two_cases(
        systemPolicies=[
            builders.policy("mssql://*", database="dwh", nameTemplate="warehouse"),
            {"pattern": "mssql://*", "nameProfile": "mssql"},
        ]
    )
    assert _placed(plan) == {("warehouse", "dbo", "Orders"), ("warehouse", "dbo", "Report")}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


def test_a_name_without_a_database_where_systems_are_chosen_by_database_says_so() -> None:
    """Spark on a JDBC URL without ``databaseName`` sends ``dbo.Orders``: where each database's
    crawled System is stamped with its database, the gap said to stamp the System, stamped
    already; it says the name gives no database."""
    known = [
        KnownSystem("DWH crawled", "u1", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "dwh"))),
        KnownSystem("CRM crawled", "u2", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "crm"))),
    ]
    events = [run_event("spark.load", outputs=[dataset("dbo.Orders", MSSQL)])]
    definition = builders.definition(
        systemPolicies=[{"pattern": "mssql://*", "nameProfile": "mssql"}]
    )
    plan = build(events, definition, known)
    (example,) = plan.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples
    assert "the name gives no database" in example


@pytest.mark.parametrize(
    ("namespace", "name", "profile"),
    [
        pytest.param(
            MSSQL, "dbo.Orders", "mssql", id="SQL Server, a JDBC URL without its database"
        ),
        pytest.param(MSSQL, "dbo.Orders", "synapse", id="Azure Synapse names schema.table"),
        pytest.param(PG, "sales.orders", "postgres", id="PostgreSQL, a name of schema.table"),
    ],
)
def test_a_name_without_a_database_lands_on_the_one_system_stamped_with_a_database(
    namespace: str, name: str, profile: str
) -> None:
    """Where a person stamped one System of the server with its database (one per database, as
    the docs say to), a name that gives no database lands there: it was ``UNMAPPED_NAMESPACE``
    (a probe of naming), and the tenant knows one database of that server. A System a definition
    created does not count (its stamp is its policy's)."""
    known = [
        KnownSystem("Crawled", "u1", ((NAMESPACE_PROPERTY, namespace), (DATABASE_PROPERTY, "dwh"))),
        KnownSystem(
            "Made by OpenLineage",
            "u2",
            ((NAMESPACE_PROPERTY, namespace), (DATABASE_PROPERTY, "crm"), (OWNER_PROPERTY, "x")),
        ),
    ]
    events = [run_event("spark.load", outputs=[dataset(name, namespace)])]
    definition = builders.definition(
        systemPolicies=[{"pattern": namespace.split("://")[0] + "://*", "nameProfile": profile}]
    )
    plan = build(events, definition, known)
    schema, table = name.split(".")
    assert _placed(plan) == {("Crawled", schema, table)}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


@pytest.mark.parametrize(
    ("spark", "airflow", "profile"),
    [
        pytest.param(
            ("sqlserver://sql01:1433;databaseName=dwh", "dbo.Orders"),
            (MSSQL, "dwh.dbo.Orders"),
            "mssql",
            id="SQL Server's databaseName property in the namespace",
        ),
        pytest.param(
            ("oracle:thin:@//ora.internal:1521/ORCLPDB1", "HR.ORDERS"),
            ("oracle://ora.internal:1521", "ORCLPDB1.HR.ORDERS"),
            "oracle",
            id="an Oracle thin URL's service",
        ),
        pytest.param(
            ("jdbc:oracle:thin:etl/s3cret@ora.internal:1521:ORCLPDB1", "HR.ORDERS"),
            ("oracle://ora.internal:1521", "ORCLPDB1.HR.ORDERS"),
            "oracle",
            id="an Oracle thin URL's SID, after its credentials",
        ),
    ],
)
def test_a_database_the_namespace_names_is_the_names_database(
    spark: tuple[str, str], airflow: tuple[str, str], profile: str
) -> None:
    """openlineage-java names a JDBC dataset with no extractor for its driver by the URL
    (``sqlserver://h:1433;databaseName=dwh``, ``oracle:thin:@//h:1521/SERVICE``) and the table
    as ``dbtable`` gives it: the database was dropped with the URL's properties (SQL Server)
    or the namespace was not read at all (Oracle), and the table was ``UNMAPPED_NAMESPACE`` while
    Airflow's hook named it on its crawled System (a probe of producers)."""
    scheme = airflow[0].split("://")[0]
    database = airflow[1].split(".")[0]
    known = [
        KnownSystem(
            "Crawled", "u1", ((NAMESPACE_PROPERTY, airflow[0]), (DATABASE_PROPERTY, database))
        ),
        KnownSystem("Other", "u2", ((NAMESPACE_PROPERTY, airflow[0]), (DATABASE_PROPERTY, "crm"))),
    ]
    events = [
        run_event("spark.load", outputs=[dataset(spark[1], spark[0])]),
        run_event("airflow.load", outputs=[dataset(airflow[1], airflow[0])]),
    ]
    definition = builders.definition(
        systemPolicies=[{"pattern": f"{scheme}://*", "nameProfile": profile}]
    )
    plan = build(events, definition, known)
    schema, table = spark[1].split(".")
    assert _placed(plan) == {("Crawled", schema, table)}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0
    assert all("s3cret" not in str(entity) for entity in plan.entities)


def test_mappings_written_with_oracle_urls_keep_their_services_apart() -> None:
    """The URL stays the namespace: a mapping per service written with the thin URL (two PDBs
    of one listener) kept them apart before, and a pattern with a wildcard still matches (a
    review: read as its server, ``SALES.ORDERS`` landed on the HR System)."""
    known = [KnownSystem(name, f"u{i}", ()) for i, name in enumerate(("HR", "Sales", "Legacy"))]
    entries = [
        {"pattern": "oracle:thin:@//db:1521/HRPDB", "system": {"name": "HR"}},
        {"pattern": "oracle:thin:@//db:1521/SALESPDB", "system": {"name": "Sales"}},
        {"pattern": "jdbc:oracle:thin:@legacy*", "system": {"name": "Legacy"}},
    ]
    events = [
        run_event("hr", outputs=[dataset("HR.EMP", "oracle:thin:@//db:1521/HRPDB")]),
        run_event("sales", outputs=[dataset("SALES.ORDERS", "oracle:thin:@//db:1521/SALESPDB")]),
        run_event("old", outputs=[dataset("OPS.LOG", "jdbc:oracle:thin:@legacy-db:1521:OPS")]),
    ]
    plan = build(events, builders.definition(namespaceMappings=entries), known)
    assert {system for system, _, _ in _placed(plan)} == {"HR", "Sales", "Legacy"}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


def test_an_oracle_urls_service_in_another_case_is_the_crawled_database() -> None:
    """Oracle's service names have no case: ``orclpdb1`` in the URL is the crawler's
    ``ORCLPDB1`` (a review: lost as ``UNMAPPED_NAMESPACE``)."""
    server = "oracle://ora:1521"
    known = [
        KnownSystem("PDB1", "u1", ((NAMESPACE_PROPERTY, server), (DATABASE_PROPERTY, "ORCLPDB1"))),
        KnownSystem("PDB2", "u2", ((NAMESPACE_PROPERTY, server), (DATABASE_PROPERTY, "ORCLPDB2"))),
    ]
    events = [run_event("load", outputs=[dataset("HR.ORDERS", "oracle:thin:@//ora/orclpdb1")])]
    definition = builders.definition(
        systemPolicies=[{"pattern": "oracle://*", "nameProfile": "oracle"}]
    )
    assert _placed(build(events, definition, known)) == {("PDB1", "HR", "ORDERS")}


def test_postgres_databases_in_two_cases_stay_two() -> None:
    """Only SQL Server's databases are named without case: PostgreSQL's quoted ``"DWH"`` and
    ``dwh`` are two databases."""
    events = [
        run_event(
            f"etl.{database}",
            run_id=f"0190b1c2-0000-7000-8000-00000000000{index}",
            outputs=[dataset(f"{database}.public.t", PG)],
        )
        for index, database in enumerate(("DWH", "dwh"))
    ]
    definition = builders.definition(builders.policy(nameTemplate="{host} {database}"))
    plan = build(events, definition)
    assert {system for system, _, _ in _placed(plan)} == {"pg DWH", "pg dwh"}


def test_a_system_stamped_without_a_database_holds_every_database_not_stamped_elsewhere() -> None:
    known = [
        KnownSystem("pg", "u0", ((NAMESPACE_PROPERTY, PG),)),
        KnownSystem("pg db2", "u2", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "db2"))),
    ]
    plan = _two_databases(known=known)
    assert {system for system, _, _ in _placed(plan)} == {"pg", "pg db2"}
    assert plan.report.gap_count(GapCode.DATABASES_MERGED) == 0


def test_a_system_created_for_names_without_a_database_takes_no_named_database() -> None:
    """docs/configure-the-job.md: "{database} in a nameTemplate: a System created per database".
    A first run that named a table without its database (``public.src``) created the System
    ``pg``, stamped with no database; the next run's ``billing.public.inv`` took it as one that
    holds every database, where a fresh tenant gives ``pg billing``: where a table lands
    depended on what a producer happened to send first."""
    job = builders.definition(builders.policy("postgres://*", nameTemplate="{host} {database}"))
    first = run_event(inputs=[dataset("public.src", PG)], outputs=[dataset("public.dst", PG)])
    created = [
        KnownSystem(s.name, f"u-{s.name}", s.stamp)
        for s in build([first], job).systems
        if s.create and s.name.startswith("pg")
    ]
    assert [s.name for s in created] == ["pg"]
    billing = run_event(
        "etl.billing",
        run_id="0190b1c2-0000-7000-8000-000000000010",
        inputs=[dataset("billing.public.inv", PG)],
        outputs=[dataset("billing.public.agg", PG)],
    )

    plan = build([first, billing], job, created)

    assert _placed(plan) == {
        ("pg", "public", "src"),
        ("pg", "public", "dst"),
        ("pg billing", "public", "inv"),
        ("pg billing", "public", "agg"),
    }
    assert _placed(plan) == _placed(build([first, billing], job))


@pytest.mark.parametrize(
    ("entries", "systems"),
    [
        # namespaceMappings: "the first entry whose pattern [and database] matches"
        (
            {
                "namespaceMappings": [
                    {"pattern": PG, "database": "db1", "system": {"name": "one"}},
                    {"pattern": PG, "database": "db*", "system": {"name": "others"}},
                ]
            },
            {"one", "others"},
        ),
        # systemPolicies: a database glob picks the policy, and so the System it creates
        (
            {
                "systemPolicies": [
                    builders.policy(PG, database="db1", nameTemplate="first"),
                    builders.policy(PG, nameTemplate="rest"),
                ]
            },
            {"first", "rest"},
        ),
    ],
)
def test_entries_select_the_database_with_a_glob(
    entries: dict[str, Any], systems: set[str]
) -> None:
    known = [KnownSystem("one", "u1"), KnownSystem("others", "u2")]
    plan = _two_databases(known=known, **entries)
    assert {system for system, _, _ in _placed(plan)} == systems
    assert plan.report.gap_count(GapCode.DATABASES_MERGED) == 0


def test_the_database_of_a_hierarchy_facet_selects_too() -> None:
    hierarchy = {
        "hierarchy": facet(
            "HierarchyDatasetFacet",
            hierarchy=[
                {"type": "DATABASE", "name": "db2"},
                {"type": "SCHEMA", "name": "s"},
                {"type": "TABLE", "name": "t"},
            ],
        )
    }
    event = run_event(outputs=[dataset("ignored-name", "custom://h", facets=hierarchy)])
    job = builders.definition(
        builders.policy("custom://h", database="db2", nameTemplate="custom {database}")
    )
    plan = build([event], job)
    assert _placed(plan) == {("custom db2", "s", "t")}


# -- seed 002: blank segments "are filled from the connection's own catalog" --------------------

PER_DATABASE = [
    KnownSystem("pg prod", "u1", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "prod"))),
    KnownSystem("pg dev", "u2", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "dev"))),
]
MSSQL_PER_DATABASE = [
    KnownSystem("sql dwh", "u3", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "DWH"))),
    KnownSystem("sql staging", "u4", ((NAMESPACE_PROPERTY, MSSQL), (DATABASE_PROPERTY, "staging"))),
]
MSSQL_PROFILE = {"pattern": "mssql://*", "nameProfile": "mssql", "defaultSchema": "dbo"}


@pytest.mark.parametrize(
    ("dataset_", "policies", "landed"),
    [
        # Spark names a JDBC table read without a schema ``database.table`` (``dbtable orders``
        # of ``jdbc:postgresql://pg/prod``): the database is a stamped one, the schema public
        (dataset("prod.orders", PG), [], ("pg prod", "public", "orders")),
        (dataset("dev.orders", PG), [], ("pg dev", "public", "orders")),
        # any other first part is a schema, as SQL names a table
        (
            dataset(
                "sales.orders", PG, facets=builders.data_source_facet("pg", "postgres://pg/dev")
            ),
            [],
            ("pg dev", "sales", "orders"),
        ),
        # Great Expectations: ``schema.table``, the database in its data source's URI
        (
            dataset(
                "public.orders",
                "postgresql+psycopg2://pg",
                facets=builders.data_source_facet("ge", "postgresql+psycopg2://u:pw@pg/prod"),
            ),
            [],
            ("pg prod", "public", "orders"),
        ),
        # the same on SQL Server: SQLAlchemy's URL names the database by its path, where a
        # namespace's path names an instance (a probe: read as one, the checks landed nowhere)
        (
            dataset(
                "dbo.orders",
                "mssql+pyodbc://sql01",
                facets=builders.data_source_facet("ge", "mssql+pyodbc://u:pw@SQL01/dwh?x=1"),
            ),
            [MSSQL_PROFILE],
            ("sql dwh", "dbo", "orders"),
        ),
        # SQL Server's databases are named without case; the declared default schema
        (dataset("STAGING.Customers", MSSQL), [MSSQL_PROFILE], ("sql staging", "dbo", "Customers")),
        (dataset("dwh.dbo.Customers", MSSQL), [MSSQL_PROFILE], ("sql dwh", "dbo", "Customers")),
    ],
)
def test_a_blank_database_is_filled_from_the_connections_own_catalog(
    dataset_: dict[str, Any], policies: list[dict[str, Any]], landed: tuple[str, str, str]
) -> None:
    event = run_event("spark.load", outputs=[dataset_])
    plan = build(
        [event],
        builders.definition(systemPolicies=policies),
        PER_DATABASE + MSSQL_PER_DATABASE,
    )
    assert _placed(plan) == {landed}, plan.report.gaps


def test_a_declared_default_schema_is_re_cased_as_the_names_are() -> None:
    """Under ``identifierCase: UPPER``, ``DWH.dbo.Customers`` is ``DBO.CUSTOMERS``: the name
    without its schema (``Customers``, and Spark's ``DWH.Customers``) lands there too, not on a
    second entity in ``dbo`` (a review)."""
    upper = {**MSSQL_PROFILE, "identifierCase": "UPPER"}
    events = [
        run_event(
            "spark.load",
            outputs=[
                dataset("DWH.dbo.Customers", MSSQL),
                dataset("DWH.Customers", MSSQL),
                dataset("dwh.dbo.customers", MSSQL),
            ],
        )
    ]
    plan = build(events, builders.definition(systemPolicies=[upper]), MSSQL_PER_DATABASE)
    assert _placed(plan) == {("sql dwh", "DBO", "CUSTOMERS")}


def test_a_two_part_name_reads_the_same_at_the_next_snapshot() -> None:
    """Seed 000: results are the same however many times the events arrive. The definition's
    own Systems per database are stamped with the databases its names gave: read as a
    crawler's, ``prod.orders`` was the schema ``prod`` at the first snapshot and the database
    ``prod`` at the next, a second entity (a review)."""
    job = builders.definition(
        systemPolicies=[
            {
                "pattern": "postgres://*",
                "creation": "IF_MISSING",
                "nameTemplate": "{host} {database}",
            }
        ]
    )
    events = _spark_reads_prod("customers")
    first = build(events, job)
    created = created_as_known(first)
    assert _placed(build(events, job, created)) == _placed(first)


def test_a_mapped_database_is_no_evidence_that_a_first_part_is_a_database() -> None:
    """A ``namespaceMappings`` entry says where a database goes, not that no schema bears its
    name: ``analytics.orders`` stays the schema ``analytics`` (a review)."""
    mappings = [
        {"pattern": PG, "database": "analytics", "system": {"name": "pg analytics"}},
        {"pattern": PG, "system": {"name": "pg"}},
    ]
    known = [KnownSystem("pg analytics", "u1"), KnownSystem("pg", "u2")]
    events = [run_event("spark.load", outputs=[dataset("analytics.orders", PG)])]
    plan = build(events, builders.definition(namespaceMappings=mappings), known)
    assert _placed(plan) == {("pg", "analytics", "orders")}


@pytest.mark.parametrize(
    "uri",
    [
        "postgresql://pg:5432/prod;ssl=true",  # a JDBC URL's parameters
        "jdbc:postgresql://pg/prod?sslmode=require",
    ],
)
def test_a_data_sources_database_is_read_as_a_jdbc_url_gives_it(uri: str) -> None:
    ge = dataset("public.orders", PG, facets=builders.data_source_facet("ge", uri))
    plan = build([run_event("ge.check", outputs=[ge])], builders.definition(), PER_DATABASE)
    assert _placed(plan) == {("pg prod", "public", "orders")}


@pytest.mark.parametrize(
    "dataset_",
    [
        # not a stamped database: a schema, and the name gives no database
        dataset("sales.orders", PG),
        # a data source of another server says nothing of this one's databases
        dataset(
            "public.orders", PG, facets=builders.data_source_facet("x", "postgres://other/prod")
        ),
    ],
)
def test_a_database_nothing_names_stays_blank(dataset_: dict[str, Any]) -> None:
    plan = build([run_event("spark.load", outputs=[dataset_])], builders.definition(), PER_DATABASE)
    assert _placed(plan) == set()
    (example,) = plan.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples
    assert "the name gives no database" in example


def test_a_database_stamp_is_read_as_the_namespaces_names_are() -> None:
    """Under ``identifierCase: UPPER`` (the docs' Snowflake block), a person's stamp
    ``openLineageDatabase: analytics`` is Snowflake's ``ANALYTICS``: the datasets were
    UNMAPPED_NAMESPACE beside a System stamped with their namespace (a probe of warehouses)."""
    sf = "snowflake://myorg-myaccount"
    known = [
        KnownSystem(
            "SF analytics", "u1", ((NAMESPACE_PROPERTY, sf), (DATABASE_PROPERTY, "analytics"))
        )
    ]
    upper = {"pattern": "snowflake://*", "nameProfile": "snowflake", "identifierCase": "UPPER"}
    events = [run_event("sf.load", outputs=[dataset("ANALYTICS.SALES.ORDERS", sf)])]
    plan = build(events, builders.definition(systemPolicies=[upper]), known)
    assert _placed(plan) == {("SF analytics", "SALES", "ORDERS")}
    assert GapCode.UNMAPPED_NAMESPACE not in plan.report.gaps


def test_an_exact_database_stamp_wins_over_one_read_in_the_namespaces_case() -> None:
    """A quoted ``"analytics"`` is a database of its own beside ``ANALYTICS``: each lands on
    the System stamped with it exactly, whatever their names' order (a review)."""
    sf = "snowflake://myorg-myaccount"
    known = [
        KnownSystem("A quoted", "u1", ((NAMESPACE_PROPERTY, sf), (DATABASE_PROPERTY, "analytics"))),
        KnownSystem("B upper", "u2", ((NAMESPACE_PROPERTY, sf), (DATABASE_PROPERTY, "ANALYTICS"))),
    ]
    upper = {"pattern": "snowflake://*", "nameProfile": "snowflake", "identifierCase": "UPPER"}
    events = [
        run_event(
            "sf.load",
            outputs=[
                dataset("ANALYTICS.SALES.ORDERS", sf),
                dataset('"analytics".SALES.ORDERS', sf),
            ],
        )
    ]
    plan = build(events, builders.definition(systemPolicies=[upper]), known)
    assert _placed(plan) == {("B upper", "SALES", "ORDERS"), ("A quoted", "SALES", "ORDERS")}
    assert GapCode.DATABASES_MERGED not in plan.report.gaps


def test_a_two_part_names_database_is_read_against_stamps_in_the_namespaces_case() -> None:
    """``identifierCase: LOWER``: a System stamped ``Prod`` holds ``prod.public.src`` and
    Spark's ``prod.orders`` alike (a review: the two-part name was unmapped)."""
    known = [KnownSystem("pg Prod", "u1", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "Prod")))]
    lower = {
        "pattern": "postgres://*",
        "nameProfile": "postgres",
        "identifierCase": "LOWER",
        "defaultSchema": "public",
    }
    events = _spark_reads_prod("src")
    plan = build(events, builders.definition(systemPolicies=[lower]), known)
    assert _placed(plan) == {("pg Prod", "public", "src"), ("pg Prod", "public", "orders")}


def test_a_quoted_database_keeps_its_system_whatever_order_its_runs_came_in() -> None:
    """A definition's own stamp was taken from a name already in the namespace's case: it is
    matched exactly. ``"analytics"`` first made "SF analytics"; ``ANALYTICS`` then landed on it
    too, one entity for two databases, where a fresh tenant gives two Systems (a review)."""
    sf = "snowflake://myorg-myaccount"
    policy_ = {
        "pattern": "snowflake://*",
        "nameProfile": "snowflake",
        "identifierCase": "UPPER",
        "creation": "IF_MISSING",
        "nameTemplate": "SF {database}",
    }
    job = builders.definition(systemPolicies=[policy_])
    quoted = run_event("sf.a", outputs=[dataset('"analytics".SALES.ORDERS', sf)])
    upper = run_event(
        "sf.b", run_id=builders.new_run_id(), outputs=[dataset("ANALYTICS.SALES.ORDERS", sf)]
    )
    first = build([quoted], job)
    created = created_as_known(first)
    later = build([quoted, upper], job, created)
    fresh = build([quoted, upper], job)
    assert (
        _placed(later)
        == _placed(fresh)
        == {
            ("SF analytics", "SALES", "ORDERS"),
            ("SF ANALYTICS", "SALES", "ORDERS"),
        }
    )


@pytest.mark.parametrize("path", ["%00", "%2e%2e", "%C3", "pr%2Fod"])
def test_a_data_source_path_no_database_has_fills_nothing(path: str) -> None:
    """A control character, ``..``, bytes not UTF-8 or an encoded ``/`` name no database (a
    probe of the new code): the name keeps no database."""
    from airflow_blindata.mapper.identity import _database_of_source

    assert _database_of_source(PG, f"postgresql://pg/{path}") is None


@pytest.mark.parametrize(
    ("namespace", "name", "hinted"),
    [
        pytest.param("bigquery", "my-proj.raw.orders", True, id="BigQuery read whole"),
        pytest.param(PG, "sales.orders", False, id="PostgreSQL has the seed's profile"),
    ],
)
def test_a_name_read_whole_where_systems_go_by_database_names_the_profile(
    namespace: str, name: str, hinted: bool
) -> None:
    """BigQuery's ``my-proj.raw.orders`` read without ``nameProfile: bigquery`` gives no
    database, and the gap said to send the database in the name, which it holds (a probe of
    producers): it names the profile too."""
    known = [
        KnownSystem("A", "u1", ((NAMESPACE_PROPERTY, namespace), (DATABASE_PROPERTY, "a"))),
        KnownSystem("B", "u2", ((NAMESPACE_PROPERTY, namespace), (DATABASE_PROPERTY, "b"))),
    ]
    events = [run_event("load", outputs=[dataset(name, namespace)])]
    plan = build(events, builders.definition(), known)
    (example,) = plan.report.gaps[GapCode.UNMAPPED_NAMESPACE].examples
    assert "the name gives no database" in example
    assert ("declare nameProfile: bigquery" in example) is hinted


def test_a_name_without_a_database_lands_where_a_policy_puts_it_at_every_snapshot() -> None:
    """A policy that gives the server a System decides before the one System a person stamped
    with a database: the name landed on the person's System at the first snapshot, on the
    policy's (created meanwhile) at the next (a review)."""
    known = [
        KnownSystem("Crawled dwh", "u1", ((NAMESPACE_PROPERTY, PG), (DATABASE_PROPERTY, "dwh")))
    ]
    events = [
        run_event(
            "etl.load",
            inputs=[dataset("sales.orders", PG)],
            outputs=[dataset("crm.public.customers", PG)],
        )
    ]
    definition = builders.definition(builders.policy("postgres://*", nameTemplate="{host}"))
    first = build(events, definition, known)
    second = build(events, definition, [*known, *created_as_known(first)])
    assert _placed(first) == _placed(second)
    assert ("pg", "sales", "orders") in _placed(second)


# -- quoted identifiers on platforms whose catalogs store every name in one case ---------------

ATHENA = "awsathena://athena.eu-west-1.amazonaws.com"


@pytest.mark.parametrize(
    ("namespace", "policy", "name", "expected"),
    [
        # Unity Catalog stores every name in lower case, quoted or not
        (
            "databricks://adb",
            {"nameProfile": "databricks", "identifierCase": "LOWER"},
            "main.sales.`Orders`",
            ("sales", "orders", "main"),
        ),
        (
            "databricks://adb",
            {"nameProfile": "databricks", "identifierCase": "LOWER"},
            "`Main`.`Sales`.`Order Items`",
            ("sales", "order items", "main"),
        ),
        # the platform is the scheme's where the declared profile names none
        (
            "databricks://adb",
            {"nameProfile": "DOTTED", "identifierCase": "LOWER"},
            "main.sales.`Orders`",
            ("sales", "orders", "main"),
        ),
        # Trino lower-cases every identifier
        (
            "trino://t:8080",
            {"nameProfile": "trino", "identifierCase": "LOWER"},
            '"hive"."sales"."Orders"',
            ("sales", "orders", "hive"),
        ),
        (
            "trino://t:8080",
            {"nameProfile": "trino", "identifierCase": "LOWER"},
            'Hive.Sales."Order Items"',
            ("sales", "order items", "hive"),
        ),
        # the declared profile names the platform of a namespace of another scheme
        (
            "custom://h",
            {"nameProfile": "trino", "identifierCase": "LOWER"},
            '"Hive".sales."Orders"',
            ("sales", "orders", "hive"),
        ),
        # Presto has no profile: the name as it is, every segment re-cased
        (
            "presto://p:8080",
            {"identifierCase": "LOWER"},
            '"Hive"."Sales"."Orders"',
            (None, "hive.sales.orders", None),
        ),
        # Hive's metastore, Glue's catalog (Athena's seed profile), MySQL's
        # lower_case_table_names: quoting makes no name case-sensitive
        (
            "hive://h:10000",
            {"nameProfile": "hive", "identifierCase": "LOWER"},
            "`Sales`.`Orders`",
            ("sales", "orders", "sales"),
        ),
        (
            ATHENA,
            {"identifierCase": "LOWER"},
            '"AwsDataCatalog"."Sales"."Orders"',
            ("sales", "orders", "awsdatacatalog"),
        ),
        (
            "mysql://h:3306",
            {"nameProfile": "mysql", "identifierCase": "LOWER"},
            "`Shop`.`Orders`",
            ("shop", "orders", "shop"),
        ),
        # Redshift folds a quoted identifier unless enable_case_sensitive_identifier is on ...
        (
            "redshift://dwh.eu-west-1:5439",
            {"identifierCase": "LOWER"},
            'dev.public."Refunds"',
            ("public", "refunds", "dev"),
        ),
        # ... where the postgres profile keeps it
        (
            "redshift://dwh.eu-west-1:5439",
            {"nameProfile": "postgres", "identifierCase": "LOWER"},
            'dev.public."Refunds"',
            ("public", "Refunds", "dev"),
        ),
        # a quoted identifier keeps its case where only unquoted ones fold, or none do
        (
            "snowflake://org-acct",
            {"nameProfile": "snowflake", "identifierCase": "UPPER"},
            'analytics."Sales".orders',
            ("Sales", "ORDERS", "ANALYTICS"),
        ),
        (
            "oracle://o:1521",
            {"nameProfile": "oracle", "identifierCase": "UPPER"},
            'ORCLPDB1.HR."Orders"',
            ("HR", "Orders", "ORCLPDB1"),
        ),
        (
            "postgres://pg:5432",
            {"identifierCase": "LOWER"},
            'prod.public."Orders"',
            ("public", "Orders", "prod"),
        ),
        (
            "mssql://s:1433",
            {"nameProfile": "mssql", "identifierCase": "UPPER"},
            "[dwh].[dbo].[Orders]",
            ("dbo", "Orders", "dwh"),
        ),
        (
            "bigquery",
            {"nameProfile": "bigquery", "identifierCase": "LOWER"},
            "`proj`.`ds`.`T`",
            ("ds", "T", "proj"),
        ),
        # and nothing is re-cased where no case is declared (seed 002)
        (
            "trino://t:8080",
            {"nameProfile": "trino"},
            '"hive"."Sales"."Orders"',
            ("Sales", "Orders", "hive"),
        ),
    ],
)
def test_a_declared_case_folds_quoted_identifiers_where_the_platform_stores_every_name_in_it(
    namespace: str,
    policy: dict[str, Any],
    name: str,
    expected: tuple[str | None, str, str | None],
) -> None:
    """Unity Catalog, Trino, Hive's metastore store `` `Orders` `` as ``orders``: planned as
    ``Orders``, it missed the crawled table (TARGET_NOT_CATALOGUED, a probe of quoted names)."""
    from airflow_blindata.mapper.systems import name_reading_for

    job = builders.definition(systemPolicies=[{"pattern": "*", **policy}])
    found = entity_name(namespace, name, reading=name_reading_for(job, namespace))
    assert (found.schema, found.name, found.database) == expected


@pytest.mark.parametrize(
    ("namespace", "profile", "selected", "name", "landed"),
    [
        # Trino's catalogs, Databricks' catalogs and Hive's databases are lower case whatever
        # a producer types: the docs' Trino block (no identifierCase) left Hive.Sales.Orders
        # UNMAPPED_NAMESPACE
        ("trino://t:8080", "trino", "hive", "Hive.Sales.Orders", ("Sales", "Orders")),
        ("trino://t:8080", "trino", "Hive", "hive.sales.orders", ("sales", "orders")),
        ("databricks://adb", "databricks", "main", "MAIN.sales.orders", ("sales", "orders")),
        ("hive://h:10000", "hive", "sales", "SALES.orders", ("SALES", "orders")),
        ("mssql://s:1433", "mssql", "dwh", "DWH.dbo.Orders", ("dbo", "Orders")),
        # PostgreSQL's and Snowflake's quoted database names are case-sensitive
        ("postgres://pg:5432", "postgres", "prod", "PROD.public.orders", None),
        ("snowflake://org-acct", "snowflake", "ANALYTICS", "analytics.sales.orders", None),
    ],
)
def test_the_database_selector_ignores_case_where_the_platforms_databases_do(
    namespace: str,
    profile: str,
    selected: str,
    name: str,
    landed: tuple[str, str] | None,
) -> None:
    mappings = [{"pattern": namespace, "database": selected, "system": {"name": "mapped"}}]
    events = [run_event("load", outputs=[dataset(name, namespace)])]
    job = builders.definition(
        namespaceMappings=mappings,
        systemPolicies=[{"pattern": namespace, "nameProfile": profile}],
    )
    plan = build(events, job, [KnownSystem("mapped", "u1")])
    assert _placed(plan) == ({("mapped", *landed)} if landed else set())
