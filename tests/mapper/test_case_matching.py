"""The platforms' case rules the sync matches stored names by, and where a declared
``identifierCase`` re-cases columns (``identity.case_matching``, ``identity.column_case``)."""

from __future__ import annotations

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.identity import (
    INSENSITIVE,
    CaseMatching,
    case_matching,
    column_case,
    same_but_case,
)
from airflow_blindata.mapper.systems import case_matching_for, name_reading_for
from tests import builders


@pytest.mark.parametrize(
    ("namespace", "declared", "expected"),
    [
        ("mssql://sql01:1433", None, CaseMatching(INSENSITIVE, INSENSITIVE)),
        # lower_case_table_names=0 (Linux) keeps Orders and orders apart: tables exact
        ("mysql://db:3306", None, CaseMatching(None, INSENSITIVE)),
        ("databricks://adb-1.azuredatabricks.net", "LOWER", CaseMatching(INSENSITIVE, INSENSITIVE)),
        ("hive://metastore:9083", None, CaseMatching(INSENSITIVE, INSENSITIVE)),
        ("bigquery", None, CaseMatching(None, INSENSITIVE)),
        ("snowflake://org-acct", "UPPER", CaseMatching("UPPER", INSENSITIVE)),
        ("oracle://db:1521", None, CaseMatching("UPPER", INSENSITIVE)),
        ("trino://trino:8080", None, CaseMatching("LOWER", "LOWER")),
        ("postgres://warehouse:5432", None, CaseMatching()),
        ("postgres://warehouse:5432", "LOWER", CaseMatching()),
        ("postgres://warehouse:5432", INSENSITIVE, CaseMatching(INSENSITIVE, INSENSITIVE)),
        ("s3://bucket", None, CaseMatching()),
        # PRESERVE: exact on any platform (a case-sensitive collation, a review)
        ("mssql://sql01:1433", "PRESERVE", CaseMatching()),
        ("databricks://adb-1.azuredatabricks.net", "PRESERVE", CaseMatching()),
    ],
)
def test_each_platform_matches_stored_names_by_its_own_case_rules(
    namespace: str, declared: str | None, expected: CaseMatching
) -> None:
    assert case_matching(namespace, declared) == expected


@pytest.mark.parametrize(
    ("planned", "stored", "rule", "same"),
    [
        ("orders", "orders", None, True),
        ("orders", "Orders", None, False),
        ("orders", "Orders", INSENSITIVE, True),
        ("orders", "ORDERS", "UPPER", True),
        ("Orders", "ORDERS", "UPPER", True),
        ("orders", "Orders", "UPPER", False),  # a quoted "Orders" is not unquoted orders
        ("Order Items", "ORDER ITEMS", "UPPER", False),  # no unquoted identifier
        ("Orders", "orders", "LOWER", True),
        ("orders", "ORDERS", "LOWER", False),
    ],
)
def test_a_stored_name_is_the_planned_one_only_as_the_rule_allows(
    planned: str, stored: str, rule: str | None, same: bool
) -> None:
    assert same_but_case(planned, stored, rule) is same


@pytest.mark.parametrize(
    ("namespace", "case", "expected"),
    [
        # as tables are, so that check codes and flow names stay what they were (a review):
        # the sync matches the columns of these platforms without case to the crawled ones
        ("databricks://adb-1.azuredatabricks.net", "LOWER", "LOWER"),
        ("mysql://db:3306", "LOWER", "LOWER"),
        ("mssql://sql01:1433", "UPPER", "UPPER"),
        ("bigquery", "LOWER", "LOWER"),
        ("snowflake://org-acct", "UPPER", "UPPER"),
        ("postgres://warehouse:5432", "LOWER", "LOWER"),
        ("postgres://warehouse:5432", "PRESERVE", None),
        ("postgres://warehouse:5432", INSENSITIVE, None),
    ],
)
def test_a_declared_case_re_cases_columns_as_it_re_cases_tables(
    namespace: str, case: str, expected: str | None
) -> None:
    assert column_case(namespace, case) == expected


def test_identifier_case_insensitive_re_cases_nothing_and_matches_without_case() -> None:
    job = builders.definition(
        {"pattern": "postgres://*", "nameProfile": "postgres", "identifierCase": "INSENSITIVE"}
    )
    reading = name_reading_for(job, "postgres://warehouse:5432")
    assert (reading.case, reading.column_case) == (None, None)
    assert case_matching_for(job, "postgres://warehouse:5432") == CaseMatching(
        INSENSITIVE, INSENSITIVE
    )


@pytest.mark.parametrize(
    ("namespace", "profile", "case", "name", "fields"),
    [
        # planned re-cased, as before: the sync adopts a crawled OrderId (columns without case)
        ("databricks://adb-1", "databricks", "LOWER", "Main.Sales.Orders", ["orderid", "amount"]),
        ("mysql://db:3306", "mysql", "LOWER", "Shop.Orders", ["orderid", "amount"]),
        # Snowflake folds unquoted columns as it folds tables
        ("snowflake://org-acct", "snowflake", "UPPER", "a.s.orders", ["ORDERID", "AMOUNT"]),
    ],
)
def test_a_declared_identifier_case_re_cases_planned_columns_on_every_platform(
    namespace: str, profile: str, case: str, name: str, fields: list[str]
) -> None:
    job = builders.definition(
        {
            "pattern": namespace.split(":")[0] + "*",
            "nameProfile": profile,
            "identifierCase": case,
            "creation": "IF_MISSING",
        }
    )
    schema = builders.facet("SchemaDatasetFacet", fields=[{"name": "OrderId"}, {"name": "Amount"}])
    event = builders.run_event(
        outputs=[builders.dataset(name, namespace, facets={"schema": schema})]
    )
    plan = build([event], job, [])
    assert [f.name for f in plan.fields] == fields
