"""Single appends to SQLite through the ``sqlite3`` driver itself: capture's hot path.

A child forked per event appends once, so it opens one ``sqlite3`` connection and runs one
prepared statement, skipping SQLAlchemy's pool and result objects. The SQL and the value
conversions are SQLAlchemy's own, compiled once in the parent: the rows are exactly those
``append_many`` writes. The connection belongs to one process (``connections``). The first
append of a connection that leaves the WAL over ``WAL_TRUNCATE_BYTES`` checkpoints it with
TRUNCATE (best effort), so that the WAL of children that never close does not grow without end.
Why: docs/capture.md#sqlite-captures-hot-path-storedirectpy
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.dml import Insert

from .connections import set_aside_object
from .prepare import Prepared
from .schema import Tables

__all__ = ["DirectAppender"]

Processor = Any  # a column's bind processor (a callable), or None

WAL_TRUNCATE_BYTES = 1_000_000
CHECKPOINT_WAIT_MS = 200
"""How long a truncating checkpoint may wait for readers before it gives up (until next time)."""


class DirectAppender:
    """Runs the store's INSERT for one prepared row on a per-process ``sqlite3`` connection.

    Not thread-safe by itself: the store serializes its callers (its write queue).
    """

    def __init__(
        self,
        tables: Tables,
        dialect: Dialect,
        insert: Callable[[Table], Insert],
        connect: Callable[[], sqlite3.Connection],
        columns: dict[str, list[str]],
        *,
        wal: Path,
    ) -> None:
        self._connect = connect
        self._wal = wal
        self._statements: dict[str, tuple[str, list[str], list[Processor]]] = {}
        for table in (tables.events, tables.quarantine):
            compiled = insert(table).compile(dialect=dialect, column_keys=columns[table.name])
            names = list(compiled.positiontup or [])
            processors = [table.c[name].type.bind_processor(dialect) for name in names]
            self._statements[table.name] = (str(compiled), names, processors)
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()

    def parameters(self, table: str, prepared: Prepared) -> list[Any]:
        """The INSERT's parameters for ``prepared``, converted as SQLAlchemy would."""
        _, names, processors = self._statements[table]
        values = prepared.values
        return [
            process(values[name]) if process else values[name]
            for name, process in zip(names, processors, strict=True)
        ]

    def insert(self, table: str, prepared: Prepared, *, busy_timeout: float | None = None) -> bool:
        """Insert ``prepared`` into ``table`` and commit; False when its key was already there.

        ``busy_timeout``: the seconds SQLite may wait for its write lock (what is left of the
        store's bound), instead of the connection's own.
        """
        sql = self._statements[table][0]
        parameters = self.parameters(table, prepared)
        fresh = self._connection is None or self._pid != os.getpid()
        connection = self._own_connection()
        try:
            if busy_timeout is not None:
                connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            connection.execute("BEGIN IMMEDIATE")
            inserted = connection.execute(sql, parameters).rowcount == 1  # 0: ON CONFLICT skipped
            connection.execute("COMMIT")
        except BaseException:
            self.close()  # rolls back; the next append opens a fresh connection
            raise
        if fresh:  # a process that keeps its connection leaves the WAL to SQLite's checkpoints
            self._keep_the_wal_small(connection)
        return inserted

    def _keep_the_wal_small(self, connection: sqlite3.Connection) -> None:
        try:
            if self._wal.stat().st_size <= WAL_TRUNCATE_BYTES:
                return
            timeout = connection.execute("PRAGMA busy_timeout").fetchone()[0]
            connection.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            try:
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                connection.execute(f"PRAGMA busy_timeout = {timeout}")
        except (OSError, sqlite3.Error):
            pass  # readers in the way, or no WAL: the next append tries again

    def close(self) -> None:
        """Close this process's connection (never one inherited through fork)."""
        if self._connection is not None and self._pid == os.getpid():
            with suppress(sqlite3.Error):
                self._connection.close()
        self._connection = None

    def _own_connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():
            if self._connection is not None:
                set_aside_object(self._connection)
            self._connection, self._pid = None, os.getpid()
        if self._connection is None:
            self._connection = self._connect()
        return self._connection
