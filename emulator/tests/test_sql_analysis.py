"""`analyze_sql`: the lineage Blindata's parser derives, as a pure function (no catalog)."""

from __future__ import annotations

import pytest
from blindata_emulator import analyze_script, analyze_sql
from blindata_emulator.sql_analysis import sqlglot_dialect

CASES = [
    pytest.param(
        "INSERT INTO dw.t (a, b) SELECT s.x, s.y + 1 FROM stg.s AS s",
        "postgres",
        None,
        ["stg.s"],
        "dw.t",
        ["stg.s.x -> a", "stg.s.y -> b"],
        id="insert-select-with-column-list",
    ),
    pytest.param(
        "INSERT INTO dw.t SELECT x AS a, upper(y) AS b, 1 AS c FROM stg.s",
        None,
        None,
        ["stg.s"],
        "dw.t",
        ["stg.s.x -> a", "stg.s.y -> b"],
        id="insert-select-by-output-names",
    ),
    pytest.param(
        "CREATE TABLE dw.t AS WITH c AS (SELECT x, y FROM stg.s) SELECT x AS a, y AS b FROM c",
        None,
        None,
        ["stg.s"],
        "dw.t",
        ["stg.s.x -> a", "stg.s.y -> b"],
        id="ctas-through-a-cte",
    ),
    pytest.param(
        "WITH c AS (SELECT x FROM s) INSERT INTO t (a) SELECT x FROM c",
        "postgresql",
        "pub",
        ["pub.s"],
        "pub.t",
        ["pub.s.x -> a"],
        id="default-schema-and-leading-with",
    ),
    pytest.param(
        "MERGE INTO dw.t AS t USING (SELECT id, x FROM stg.s) AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.a = s.x, b = s.x || t.b "
        "WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, s.x)",
        None,
        None,
        ["stg.s"],
        "dw.t",
        ["stg.s.x -> a", "stg.s.x -> b", "stg.s.id -> id"],
        id="merge-with-subquery-source",
    ),
    pytest.param(
        "INSERT INTO t SELECT a FROM s1 UNION ALL SELECT b FROM s2",
        "trino",
        None,
        ["s1", "s2"],
        "t",
        ["s1.a -> a", "s2.b -> a"],
        id="union",
    ),
    pytest.param(
        "UPDATE dw.t SET a = s.b FROM stg.s WHERE t.id = s.id",
        "postgres",
        None,
        ["stg.s"],
        "dw.t",
        ["stg.s.b -> a"],
        id="update-from",
    ),
]


@pytest.mark.parametrize(("sql", "dialect", "schema", "tables_in", "table_out", "pairs"), CASES)
def test_analyze_sql_derives_table_and_column_lineage(
    sql: str,
    dialect: str | None,
    schema: str | None,
    tables_in: list[str],
    table_out: str,
    pairs: list[str],
) -> None:
    result = analyze_sql(sql, dialect, schema)
    assert result.error is None
    assert [str(table) for table in result.tables_in] == tables_in
    assert str(result.table_out) == table_out
    assert sorted(str(pair) for pair in result.column_pairs) == sorted(pairs)
    assert result.unresolved_columns == ()


def test_select_star_stays_at_table_level() -> None:
    result = analyze_sql("INSERT INTO t SELECT * FROM s", None, "pub")
    assert [str(t) for t in result.tables_in] == ["pub.s"] and result.column_pairs == ()
    assert any("SELECT *" in note for note in result.notes)


def test_an_unqualified_column_of_a_join_is_unresolved() -> None:
    result = analyze_sql("INSERT INTO t (a, b) SELECT s.x, y FROM s JOIN u ON s.id = u.id", None)
    assert [str(pair) for pair in result.column_pairs] == ["s.x -> a"]
    assert result.unresolved_columns == ("b",)


@pytest.mark.parametrize(
    "sql",
    [
        "INSER INTO x VALUES",
        "SELECT 'unterminated",
        "this is not sql",
        "",
        "INSERT INTO t SELECT a FROM (",
    ],
)
def test_sql_that_does_not_parse_gives_an_error_and_nothing_else(sql: str) -> None:
    result = analyze_sql(sql, "postgres")
    assert result.error and "\x1b" not in result.error
    assert result.tables_in == () and result.table_out is None


def test_statements_that_move_no_data_are_skipped_in_a_script() -> None:
    results = analyze_script("BEGIN; INSERT INTO a SELECT b FROM c; SELECT 1; COMMIT", "snowflake")
    assert len(results) == 1
    assert str(results[0].table_out).lower() == "a"
    assert analyze_sql("SELECT 1").table_out is None


def test_a_script_with_two_writing_statements_needs_analyze_script() -> None:
    sql = "INSERT INTO a SELECT x FROM b; INSERT INTO c SELECT y FROM d"
    assert "analyze_script" in (analyze_sql(sql).error or "")
    assert [str(r.table_out) for r in analyze_script(sql)] == ["a", "c"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("postgresql", "postgres"),
        ("PostgreSQL", "postgres"),
        ("sqlserver", "tsql"),
        ("ansi", None),
        (None, None),
        ("snowflake", "snowflake"),
        ("no-such-dialect", None),
    ],
)
def test_openlineage_dialect_names_map_to_sqlglot(name: str | None, expected: str | None) -> None:
    assert sqlglot_dialect(name) == expected


def test_a_bare_table_of_the_targets_name_in_another_schema_is_a_source() -> None:
    """``INSERT INTO dwh.orders … FROM orders`` analysed with the default schema ``shop`` reads
    ``shop.orders``: it was taken for the target itself, and gave no flow (a probe)."""
    result = analyze_sql(
        "INSERT INTO dwh.orders (id) SELECT o.id FROM orders AS o", "mysql", "shop"
    )
    assert [(t.schema, t.name) for t in result.tables_in] == [("shop", "orders")]
