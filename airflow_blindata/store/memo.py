"""The SQL hash memo a snapshot keeps: the digest of a SQL text → the hash the mapper made of it.

Hashing a job's SQL (parsing it per dialect) is the slow part of mapping a SQL job; the memo
lets the next snapshot skip it for texts it has seen. The memo holds only what the latest
snapshot used, so it follows the catalog, not the history (``keep_sql_hashes`` replaces it).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import insert, select

from . import core
from .core import SqlCore

__all__ = ["SqlHashMemo"]


class SqlHashMemo(SqlCore):
    """Reading and replacing the SQL hash memo."""

    def sql_hashes(self) -> dict[str, str]:
        self._ensure_schema()
        table = self._tables.sql_hashes
        with self._guard("reading the SQL hash memo"), self._engine.connect() as conn:
            return {row.digest: row.sql_hash for row in conn.execute(select(table))}

    def keep_sql_hashes(self, memo: Mapping[str, str]) -> None:
        self._ensure_schema()
        table = self._tables.sql_hashes
        rows = [{"digest": digest, "sql_hash": value} for digest, value in sorted(memo.items())]
        with self._guard("keeping the SQL hash memo"), self._writing() as conn:
            conn.execute(table.delete())
            for start in range(0, len(rows), core.BATCH_SIZE):
                conn.execute(insert(table), rows[start : start + core.BATCH_SIZE])
