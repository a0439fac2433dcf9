"""The identity of a SQL statement: a hash that ignores what does not change its meaning.

The routine of a SQL job is analysed again only when its SQL changed (seed 000), so the hash must
not move with whitespace, comments or keyword case, and must move with any real change. sqlglot
parses and re-renders the statement in a canonical form; SQL it cannot parse falls back to the
raw text with whitespace collapsed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import sqlglot
from sqlglot.errors import SqlglotError

__all__ = ["OPENLINEAGE_DIALECTS", "SqlHashes", "normalize_sql", "sql_hash", "sqlglot_dialect"]

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
    "sql": None,
}
"""OpenLineage ``sql`` facet dialect names → sqlglot dialects (``None``: sqlglot's own).

The emulator, a distribution of its own, keeps Blindata's side of this table; a test holds the
two to the same answer for every name here."""


def sqlglot_dialect(dialect: str | None) -> str | None:
    if not dialect:
        return None
    return OPENLINEAGE_DIALECTS.get(dialect.strip().lower())


def normalize_sql(sql: str, dialect: str | None = None) -> str:
    """A canonical rendering: no comments, single spaces, upper-case keywords and functions.

    The parsed trees are rendered once and dropped, so the generator may change them in place
    (``copy=False``): copying them was two thirds of the time of a first SQL hash."""
    read = sqlglot_dialect(dialect)
    try:
        statements = [
            expression.sql(dialect=read, copy=False, comments=False, normalize_functions="upper")
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


def _digest(sql: str, dialect: str | None) -> str:
    text = f"{dialect or ''}\n{sql}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()


class SqlHashes:
    """``sql_hash`` memoised by a digest of the raw text and dialect.

    Parsing with sqlglot is most of the cost of mapping SQL jobs, and the same texts come back on
    every run and every snapshot. ``known`` is the memo of an earlier snapshot (the store keeps
    it); ``used`` is what this mapping needed, the memo to keep for the next one.
    """

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        self._known = known or {}
        self.used: dict[str, str] = {}
        self.parsed = 0
        """How many texts had to be parsed: the ones neither memo knew."""

    def hash(self, sql: str, dialect: str | None = None) -> str:
        digest = _digest(sql, dialect)
        found = self.used.get(digest) or self._known.get(digest)
        if found is None:
            found = sql_hash(sql, dialect)
            self.parsed += 1
        self.used[digest] = found
        return found

    def __eq__(self, other: object) -> bool:
        """Two plans are equal when they used the same hashes, whatever memo they started from."""
        return isinstance(other, SqlHashes) and self.used == other.used

    __hash__ = None  # type: ignore[assignment]
