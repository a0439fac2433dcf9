"""The identity of a SQL statement: a hash that ignores what does not change its meaning.

The routine of a SQL job is analysed again only when its SQL changed (seed 000), so the hash must
not move with whitespace, comments or keyword case, and must move with any real change. sqlglot
parses and re-renders the statement in a canonical form; SQL it cannot parse falls back to the
raw text with whitespace collapsed.
"""

from __future__ import annotations

import hashlib

import sqlglot
from sqlglot.errors import SqlglotError

__all__ = ["OPENLINEAGE_DIALECTS", "normalize_sql", "sql_hash", "sqlglot_dialect"]

OPENLINEAGE_DIALECTS: dict[str, str | None] = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "tsql",
    "sqlserver": "tsql",
    "tsql": "tsql",
    "oracle": "oracle",
    "spark": "spark",
    "sparksql": "spark",
    "databricks": "databricks",
    "hive": "hive",
    "trino": "trino",
    "presto": "presto",
    "athena": "athena",
    "awsathena": "athena",
    "duckdb": "duckdb",
    "sqlite": "sqlite",
    "teradata": "teradata",
    "clickhouse": "clickhouse",
    "db2": None,
    "ansi": None,
    "generic": None,
}
"""OpenLineage ``sql`` facet dialect names → sqlglot dialects (``None``: sqlglot's own)."""


def sqlglot_dialect(dialect: str | None) -> str | None:
    if not dialect:
        return None
    return OPENLINEAGE_DIALECTS.get(dialect.strip().lower())


def normalize_sql(sql: str, dialect: str | None = None) -> str:
    """A canonical rendering: no comments, single spaces, upper-case keywords and functions."""
    read = sqlglot_dialect(dialect)
    try:
        statements = [
            expression.sql(dialect=read, comments=False, normalize_functions="upper")
            for expression in sqlglot.parse(sql, read=read)
            if expression is not None
        ]
    except (SqlglotError, ValueError, RecursionError):
        statements = []
    if statements:
        return ";\n".join(statements)
    return " ".join(sql.split())


def sql_hash(sql: str, dialect: str | None = None) -> str:
    """The ``openLineageSqlHash`` of a statement."""
    return "sha256:" + hashlib.sha256(normalize_sql(sql, dialect).encode()).hexdigest()
