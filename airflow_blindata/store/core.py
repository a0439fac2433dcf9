"""What every part of the SQL event store shares: one engine, its ``Tables``, the schema.

``SqlCore`` holds the engine (guarded against ``fork``: ``connections``), creates or upgrades
the schema on first use, and turns every database error into ``StoreUnavailableError`` with a
one-line message that names the store by its redacted URL and never carries SQL parameters or a
password. The two backends differ in a few seams only, which their subclasses fill in: the
INSERT that skips a duplicate key, how a write transaction starts, the schema lock, how the
cursor is stamped, and the size on disk. Each job of the store (appends, reads, kept folds, the
SQL hash memo, the sync history, statistics, retention) is a class of its own on this core,
and ``sql.SqlEventStore`` puts them together.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import Table, insert, inspect, select
from sqlalchemy.engine import Connection, CursorResult, Engine, Row
from sqlalchemy.exc import OperationalError, ProgrammingError, SQLAlchemyError
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import Select

from airflow_blindata.redaction import scrub

from . import digests
from .connections import describe_error, set_aside, track
from .models import StoreSchemaError, StoreUnavailableError
from .prepare import column_text
from .schema import MIGRATIONS, SCHEMA_VERSION, Tables

__all__ = ["BATCH_SIZE", "PAGE_SIZE", "SqlCore", "now"]

BATCH_SIZE = 500
"""Rows per transaction in ``append_many``: big enough to be fast, short enough not to block."""
PAGE_SIZE = 1000
"""Rows per query when reading: memory stays flat however many events are stored."""


def now() -> datetime:
    """The store's clock: when an event is received, a lock expires, retention prunes."""
    return datetime.now(UTC)


class SqlCore:
    """One engine and its ``Tables``, with the backend's seams (see the subclasses)."""

    backend: ClassVar[str] = ""
    url: str

    def __init__(
        self, engine: Engine, tables: Tables, *, url: str, secrets: tuple[str, ...] = ()
    ) -> None:
        self._shared_engine = engine
        self._tables = tables
        self._secrets = secrets
        self._ready = False
        self._inserts: dict[str, Insert] = {}
        self._pid = os.getpid()
        self.url = url
        track(self)

    # -- the seams ------------------------------------------------------------------------

    def _insert(self, table: Table) -> Insert:
        """``INSERT ... ON CONFLICT (key) DO NOTHING`` in the backend's dialect, with what
        ``_inserted`` needs to tell a skipped duplicate."""
        raise NotImplementedError

    def _inserted(self, result: CursorResult[Any]) -> bool:
        """Whether ``_insert`` wrote its row (else ON CONFLICT skipped it): by its RETURNING id,
        as drivers disagree on rowcount (SQLite's is exact, and it has no RETURNING on 1.4)."""
        return result.first() is not None

    def _insert_many(self, conn: Connection, table: Table, rows: list[dict[str, Any]]) -> int:
        """Insert ``rows`` (distinct keys) in one statement, skipping those whose key is stored
        already; how many were written: one multi-row ``_insert``, its RETURNING ids counted."""
        return len(conn.execute(self._insert(table).values(rows)).all())

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """A connection in a write transaction, committed when the block ends."""
        with self._engine.begin() as conn:
            yield conn

    @contextmanager
    def _appending(self) -> Iterator[Connection]:
        """Where one append runs: a write transaction, unless the backend has a faster way."""
        with self._writing() as conn:
            yield conn

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A connection for the sync's reads, which may scan the whole store (see PostgreSQL)."""
        with self._engine.connect() as conn:
            yield conn

    def _bounded(self, *, whole: bool) -> AbstractContextManager[object]:
        """Bound how long the block may wait for the database (PostgreSQL: ``deadlines``).

        ``whole``: one bound for the whole block (one event), else for each wait (a batch).
        SQLite bounds its own waits (``sqlite._queued``).
        """
        return nullcontext()

    def _may_retry(self) -> bool:
        """Whether the bound leaves time to try an append once more, on a new connection."""
        return True

    def _lock_schema(self, conn: Connection) -> None:
        """Serialize schema creation and upgrades between processes (in ``conn``'s transaction)."""

    def _stamp(self) -> None:
        """Give newly committed events their cursor (PostgreSQL; SQLite's cursor is the id)."""

    def _size_bytes(self) -> int | None:
        return None

    def without_credentials(self, text: str) -> str:
        """``text`` without the store's own password (its URL's, or its connection's): what
        it stores may quote it, and a command shows what it stores."""
        return scrub(text, self._secrets)

    def release_connections(self) -> None:
        """Close idle pooled connections (before a fork; see ``connections``)."""
        if self._pid == os.getpid():
            self._shared_engine.dispose()

    def close(self) -> None:
        """Release connections. The store must not be used afterwards."""
        self._engine.dispose()

    # -- errors ---------------------------------------------------------------------------

    _driver_errors: ClassVar[tuple[type[Exception], ...]] = ()
    """Errors of a driver used directly, not through SQLAlchemy (SQLite's hot path)."""

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        errors: tuple[type[Exception], ...] = (SQLAlchemyError, *self._driver_errors)
        try:
            yield
        except errors as error:
            message = describe_error(error, secrets=self._secrets) + self._hint(error)
            raise StoreUnavailableError(f"{action} in {self.url} failed: {message}") from error

    def _hint(self, error: Exception) -> str:
        """What an administrator can do about ``error``, when the backend can tell (``""``)."""
        return ""

    # -- schema ---------------------------------------------------------------------------

    def _stored_version(self, conn: Connection) -> int | None:
        """The stored schema version; None for a store not created yet."""
        if not inspect(conn).has_table(self._tables.meta.name, schema=self._tables.meta.schema):
            return None
        return self._read_version(conn)

    def _read_version(self, conn: Connection) -> int | None:
        meta = self._tables.meta
        value = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
        return int(value) if value is not None else None

    def _quick_version(self) -> int | None:
        """The version in one query (no catalog lookups), or None when that query fails."""
        try:
            with self._engine.connect() as conn:
                return self._read_version(conn)
        except (OperationalError, ProgrammingError):  # no such table (or no database yet)
            return None

    @property
    def _engine(self) -> Engine:
        """The engine, safe to use in this process.

        The fork guard: a forked child (OpenLineage emits from one per event) must never use or
        close its parent's connections (see ``connections``), so on first use it sets the
        inherited pool aside and opens its own (SQLAlchemy's recipe for ``os.fork``).
        """
        if self._pid != os.getpid():
            set_aside(self._shared_engine)
            self._pid = os.getpid()
        return self._shared_engine

    def _ensure_schema(self) -> None:
        """Create or upgrade the schema on first use; then nothing (once per process tree)."""
        if self._ready:
            return
        with self._guard("opening the store"):
            if self._quick_version() != SCHEMA_VERSION:
                with self._writing() as conn:
                    self._lock_schema(conn)
                    self._upgrade(conn, self._stored_version(conn))
        self._ready = True

    def _upgrade(self, conn: Connection, version: int | None) -> None:
        tables, meta = self._tables, self._tables.meta
        if version is not None and version > SCHEMA_VERSION:
            raise StoreSchemaError(
                f"the store {self.url} has schema version {version}, newer than this "
                f"airflow-blindata knows ({SCHEMA_VERSION}): upgrade airflow-blindata"
            )
        if version == SCHEMA_VERSION:  # another process got here first
            return
        if version is None:
            tables.metadata.create_all(conn)
        else:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[step](conn, tables)
            tables.metadata.create_all(conn)  # tables a step added to the model
        conn.execute(meta.delete().where(meta.c.key.in_(("schema_version", digests.PRUNES))))
        conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        conn.execute(
            insert(meta).values(key=digests.PRUNES, value="0")
        )  # the row memo writers lock

    # -- shared by the parts --------------------------------------------------------------

    def _of_job(self, job: tuple[str, str]) -> list[ColumnElement[bool]]:
        """The events of one job, named as the columns hold it (``column_text``; a missing
        namespace or name is ``IS NULL``)."""
        ev = self._tables.events
        namespace, name = column_text(job[0]), column_text(job[1])
        return [ev.c.job_namespace == namespace, ev.c.job_name == name]

    def _pages(
        self, query: Select[Any], key: ColumnElement[Any], label: str, after: int, action: str
    ) -> Iterator[Row[Any]]:
        """The rows of ``query`` with ``key > after``, in key order, ``PAGE_SIZE`` per query.

        Keyset pages, each on a short-lived connection: no read transaction is held open while
        the caller works through the rows. ``label`` names the key's column in a row.
        """
        while True:
            page = query.where(key > after).order_by(key).limit(PAGE_SIZE)
            with self._guard(action), self._reading() as conn:
                rows = conn.execute(page).all()
            yield from rows
            if len(rows) < PAGE_SIZE:
                return
            after = getattr(rows[-1], label)
