"""Description vs documentation (seed 000 "Documentation") and the SQL hash (seed 000 "SQL and
routines": the routine is analysed only when its SQL changed)."""

from __future__ import annotations

import pytest

from airflow_blindata.mapper.documentation import documentation_hash, place_text
from airflow_blindata.mapper.sql import normalize_sql, sql_hash


@pytest.mark.parametrize(
    ("text", "content_type", "where"),
    [
        ("Orders of the web shop", None, "description"),
        ("x" * 250, None, "description"),
        ("x" * 251, None, "documentation"),
        ("# Orders\nOne row per order", "text/markdown", "documentation"),
        ("short", "text/html", "documentation"),
        ("short", "MARKDOWN", "documentation"),
        ("  padded  ", "text/plain", "description"),
        ("", None, None),
        ("   ", None, None),
        (None, None, None),
    ],
)
def test_plain_text_of_250_characters_or_fewer_is_the_description_else_documentation(
    text: str | None, content_type: str | None, where: str | None
) -> None:
    placement = place_text(text, content_type)
    assert (placement.description is not None, placement.documentation is not None) == (
        where == "description",
        where == "documentation",
    )
    if where == "documentation":
        assert placement.documentation_hash == documentation_hash(placement.documentation or "")


def test_an_empty_description_is_never_sent() -> None:
    assert place_text(" \n ").description is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT a FROM t", "select   a\nfrom t"),
        ("SELECT a FROM t -- the a column", "SELECT a FROM t"),
        ("SELECT /* why */ a FROM t", "SELECT a FROM t"),
        ("insert into x select count(*) from t", "INSERT INTO x SELECT COUNT(*) FROM t"),
    ],
)
def test_whitespace_comments_and_keyword_case_do_not_change_the_sql_hash(
    first: str, second: str
) -> None:
    assert sql_hash(first, "postgres") == sql_hash(second, "postgres")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT a FROM t", "SELECT b FROM t"),
        ("SELECT a FROM t", "SELECT a FROM u"),
        ("SELECT a FROM t WHERE x = 1", "SELECT a FROM t WHERE x = 2"),
    ],
)
def test_a_changed_statement_changes_the_sql_hash(first: str, second: str) -> None:
    assert sql_hash(first, "postgres") != sql_hash(second, "postgres")


def test_sql_that_sqlglot_cannot_parse_still_hashes_by_its_tokens() -> None:
    broken = "SELECT ((( FROM WHERE"
    assert sql_hash(broken) == sql_hash("select (((   FROM\nWHERE -- half written")
    assert sql_hash(broken) != sql_hash("SELECT ((( FROM WHERE x")


def test_sql_that_does_not_tokenize_falls_back_to_the_raw_text() -> None:
    unterminated = "SELECT 'abc FROM t"
    assert normalize_sql(unterminated, "postgres") == "SELECT 'abc FROM t"
    assert sql_hash(unterminated, "postgres") == sql_hash("SELECT   'abc\nFROM t", "postgres")
    assert sql_hash(unterminated, "postgres") != sql_hash("SELECT 'abd FROM t", "postgres")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT a FROM t;", "SELECT a FROM t"),
        ("select Count(a) from t", "SELECT COUNT(a) FROM t"),
    ],
)
def test_a_trailing_semicolon_and_function_name_case_do_not_change_the_sql_hash(
    first: str, second: str
) -> None:
    assert sql_hash(first, "postgres") == sql_hash(second, "postgres")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT 'a' FROM t", "SELECT 'A' FROM t"),  # a literal is compared as written
        ("SELECT a FROM t", 'SELECT "a" FROM t'),  # so is quoting
        ("SELECT 'x y' FROM t", "SELECT 'x', y FROM t"),
        ("SELECT a FROM t; SELECT b FROM t", "SELECT a FROM t SELECT b FROM t"),
        ("SELECT a FROM Orders", "SELECT a FROM orders"),  # names as written, as sqlglot does
    ],
)
def test_names_literals_and_separators_change_the_sql_hash(first: str, second: str) -> None:
    assert sql_hash(first, "postgres") != sql_hash(second, "postgres")


def test_a_string_cannot_pass_for_the_tokens_it_spells() -> None:
    assert sql_hash("SELECT 'STRING:1:a' FROM t") != sql_hash("SELECT 'a' FROM t")
    spelled = normalize_sql("SELECT 'a', b FROM t")
    assert sql_hash(f"SELECT '{spelled}' FROM t") != sql_hash(spelled)


def test_the_emulator_reads_every_dialect_name_as_the_mapper_does() -> None:
    """The emulator stands in for Blindata's SQL analysis in a distribution of its own, so it
    keeps its own table; for every name the mapper knows, both pick the same sqlglot dialect."""
    from blindata_emulator.sql_analysis import sqlglot_dialect as emulator_dialect

    from airflow_blindata.mapper.sql import OPENLINEAGE_DIALECTS, sqlglot_dialect

    differing = {
        name: (sqlglot_dialect(name), emulator_dialect(name))
        for name in OPENLINEAGE_DIALECTS
        if sqlglot_dialect(name) != emulator_dialect(name)
    }
    assert differing == {}
