"""The event store in PostgreSQL: for workers on several machines (Celery, Kubernetes).

An append is one autocommitted ``INSERT ... ON CONFLICT (key) DO NOTHING``, lock-free; readers
stamp ``seq`` in commit order under an advisory lock, so the cursor never skips an event
committed late. An append gives up after ``timeout`` seconds (default 3), every wait included
(``deadlines``); a batch bounds each wait alone. The store speaks UTF-8 to the server. Driver:
psycopg 3 on SQLAlchemy 2, psycopg2 on SQLAlchemy 1.4.

URL: ``postgresql://user:password@host:5432/db``, options ``schema``, ``timeout``,
``connect_timeout``, ``lock_timeout``, ``statement_timeout`` and any libpq parameter; needs the
``postgres`` extra. Why: docs/capture.md#postgresql-the-cursor-and-the-bounds-storepostgrespy
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, create_engine, event, func, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import URL, Connection, Dialect, make_url
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.sql.dml import Insert

from airflow_blindata.redaction import redact_url, url_secrets

from .deadlines import (
    Bound,
    bounded,
    bounded_connection_class,
    bounded_psycopg2_connection_class,
    current_bound,
)
from .models import StoreURLError
from .schema import PREFIX, build_tables
from .sql import SqlEventStore

if TYPE_CHECKING:
    from sqlalchemy.pool import ConnectionPoolEntry

__all__ = ["PostgresEventStore"]

DEFAULT_TIMEOUT = 3.0
"""Seconds an append may take, all waits together: as SQLite's, well below the OpenLineage
provider's 10 s ``execution_timeout``, so that an event that cannot be stored in time is kept."""
DEFAULT_CONNECT_TIMEOUT = "2"
"""Seconds to connect, per address: the least psycopg takes (it raises anything lower to 2)."""
LOCK_TIMEOUT_SHARE = 2 / 3
"""The default ``lock_timeout``, as a share of ``timeout``: the server ends a wait for a lock
before the client's bound does, so the connection stays usable and the error says why."""
DEFAULT_STATEMENT_TIMEOUT_MS = "5000"
STAMP_BATCH = 10_000
"""Events stamped with a cursor per statement, well within the statement timeout."""
READ_STATEMENT_TIMEOUT = "600s"
"""The statement and lock timeouts of the sync's reads: ``statement_timeout`` and ``lock_timeout``
bound what capture waits for (an append), but listing the jobs of a store of millions of events
may take longer, and stamping waits for another reader's stamps."""
_READ_TIMEOUTS = text(
    f"SELECT set_config('statement_timeout', '{READ_STATEMENT_TIMEOUT}', true), "
    f"set_config('lock_timeout', '{READ_STATEMENT_TIMEOUT}', true)"
)

_SCHEMA_EXISTS = text("SELECT 1 FROM pg_namespace WHERE nspname = :name")


def _lock_key(schema: str | None, purpose: str) -> int:
    """A stable 64-bit advisory lock key per schema and purpose."""
    digest = hashlib.sha256(f"{PREFIX}{schema or ''}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresEventStore(SqlEventStore):
    """An event store in PostgreSQL (psycopg 3, or psycopg2 on SQLAlchemy 1.4), cursor stamped in
    commit order."""

    backend = "postgresql"

    def __init__(
        self,
        url: URL,
        *,
        schema: str | None = None,
        shown_url: str = "",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        # The pool's timeout bounds a thread's wait for a pooled connection (the receiver's).
        engine = create_engine(url, pool_timeout=timeout, future=True)
        event.listen(engine, "do_connect", _connect_bounded)
        self._timeout = timeout
        self._schema = schema
        self._schema_key = _lock_key(schema, "schema")
        self._stamp_key = _lock_key(schema, "stamp")
        # libpq also takes the password (and the SSL key's) as a parameter: ``?password=``.
        full = url.render_as_string(hide_password=False)
        secrets = (*((url.password,) if url.password else ()), *url_secrets(full))
        shown = shown_url or redact_url(full)
        tables = build_tables(schema=schema, stamped_cursor=True)
        super().__init__(engine, tables, url=shown, secrets=secrets)  # type: ignore[arg-type]

    @classmethod
    def from_url(cls, url: str) -> PostgresEventStore:
        driver = postgres_driver()
        try:
            __import__(driver)
        except ImportError:
            raise StoreURLError(
                f"a PostgreSQL store needs {driver}: pip install 'airflow-blindata[postgres]'"
            ) from None
        parsed = make_url(url)
        if _password_cut(url) or any(
            "@" in part for part in (parsed.host or "", parsed.database or "", *parsed.query)
        ):
            # The parser ended the password at its first ``@``: the rest of it would be taken
            # for the host or the database, and quoted by the driver's errors.
            raise StoreURLError(
                "the PostgreSQL store URL has more than one '@': percent-encode the user name's "
                "and the password's special characters (@ as %40, / as %2F, # as %23, ? as %3F, "
                "% as %25; in Python: urllib.parse.quote(password, safe=''))"
            )
        shown = redact_url(parsed.render_as_string(hide_password=False))
        query: dict[str, Any] = {k: _one(v) for k, v in parsed.query.items()}
        schema = query.pop("schema", None)
        timeout = _seconds(query.pop("timeout", DEFAULT_TIMEOUT))
        statement_timeout = _milliseconds(
            "statement_timeout", query.pop("statement_timeout", DEFAULT_STATEMENT_TIMEOUT_MS)
        )
        lock_timeout = _milliseconds(
            "lock_timeout",
            query.pop("lock_timeout", max(1, round(timeout * 1000 * LOCK_TIMEOUT_SHARE))),
        )
        query.setdefault("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
        # Events are Unicode: sent as UTF-8, a character the database's encoding lacks is refused
        # by the server for its row (quarantined), not by the driver for the whole connection.
        query["client_encoding"] = "UTF8"
        # Per session, at connection: no round trip. Settings in the URL's own ``options`` come
        # after, so they win.
        settings = f"-c statement_timeout={statement_timeout} -c lock_timeout={lock_timeout}"
        query["options"] = f"{settings} {query.get('options', '')}".strip()
        driver_url = parsed.set(drivername=f"postgresql+{driver}", query=query)
        return cls(driver_url, schema=schema, shown_url=shown, timeout=timeout)

    def _bounded(self, *, whole: bool) -> AbstractContextManager[Bound]:
        return bounded(self._timeout, whole=whole)

    def _may_retry(self) -> bool:
        bound = current_bound()
        return bound is None or not bound.expired()

    def _quick_version(self) -> int | None:
        """The version in one query; None only when the store's tables are not there yet.

        A server that cannot be reached or does not answer is an error at once (not a reason
        to try again, slowly, through the schema lock).
        """
        try:
            with self._engine.connect() as conn:
                return self._read_version(conn)
        except ProgrammingError:  # no such table, or no such schema
            return None

    def _insert(self, table: Table) -> Insert:
        skip_duplicate = pg_insert(table).on_conflict_do_nothing(index_elements=["key"])
        return skip_duplicate.returning(table.c.id)

    @contextmanager
    def _appending(self) -> Iterator[Connection]:
        # One round trip: no BEGIN/COMMIT around a single INSERT.
        with self._engine.connect() as conn:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with self._engine.begin() as conn:
            conn.execute(_READ_TIMEOUTS)  # for this transaction only: one round trip
            yield conn

    def _lock_schema(self, conn: Connection) -> None:
        conn.execute(select(func.pg_advisory_xact_lock(self._schema_key)))
        # The catalog is read first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even
        # when the schema is there. Both in SQL, as SQLAlchemy 1.4 and 2 run it alike.
        if self._schema and not conn.execute(_SCHEMA_EXISTS, {"name": self._schema}).first():
            quoted = self._engine.dialect.identifier_preparer.quote_schema(self._schema)
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))

    def _stamp(self) -> None:
        events, seq = self._tables.events, self._tables.seq
        assert seq is not None
        with self._reading() as conn:
            pending = conn.execute(select(events.c.id).where(events.c.seq.is_(None)).limit(1))
            if pending.first() is None:
                return
        # In batches, each its own short transaction under the stamping lock: a backlog of a
        # million events (a burst at the receiver, a big ingest) would otherwise be one UPDATE
        # that the statement timeout cancels on every read, and the store could not be read.
        # An event committed late, between two batches, is stamped by a later batch: commit order.
        while True:
            with self._engine.begin() as conn:
                conn.execute(_READ_TIMEOUTS)  # another reader may be stamping: wait for it
                conn.execute(select(func.pg_advisory_xact_lock(self._stamp_key)))
                rows = select(events.c.id).where(events.c.seq.is_(None)).order_by(events.c.id)
                unstamped = rows.limit(STAMP_BATCH).subquery()
                numbered = select(unstamped.c.id, seq.next_value().label("seq")).subquery()
                stamped = conn.execute(
                    update(events).where(events.c.id == numbered.c.id).values(seq=numbered.c.seq)
                ).rowcount
            if stamped < STAMP_BATCH:
                return

    def _size_bytes(self) -> int | None:
        tables = self._tables
        preparer = self._engine.dialect.identifier_preparer
        total = 0
        with self._engine.connect() as conn:
            for table in (tables.events, tables.quarantine, tables.sync_history, tables.meta):
                size = conn.execute(
                    text("SELECT pg_total_relation_size(CAST(:name AS regclass))"),
                    {"name": preparer.format_table(table)},
                ).scalar()
                total += int(size or 0)
        return total


def _connect_bounded(
    dialect: Dialect, record: ConnectionPoolEntry, cargs: Any, cparams: dict[str, Any]
) -> Any:
    """The driver's ``connect``, with a connection whose waits honour the bound (``deadlines``)."""
    if dialect.driver == "psycopg2":
        import psycopg2

        factory = bounded_psycopg2_connection_class()
        return psycopg2.connect(*cargs, connection_factory=factory, **cparams)
    return bounded_connection_class().connect(*cargs, **cparams)


def postgres_driver() -> str:
    """``psycopg`` (3), whose dialect SQLAlchemy has from 2.0; ``psycopg2`` on SQLAlchemy 1.4."""
    try:
        import sqlalchemy.dialects.postgresql.psycopg  # noqa: F401
    except ImportError:
        return "psycopg2"
    return "psycopg"


def _seconds(value: Any) -> float:
    try:
        seconds = float(_one(value))
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise StoreURLError("the PostgreSQL store option timeout must be seconds (above 0)")
    return seconds


def _milliseconds(option: str, value: Any) -> int:
    text = str(_one(value)).strip()
    if not text.isdigit():
        raise StoreURLError(f"the PostgreSQL store option {option} must be ms")
    return int(text)


def _one(value: Any) -> Any:
    """A URL option given twice comes back as a tuple: the last one wins."""
    return value[-1] if isinstance(value, tuple) else value


_AUTHORITY_AFTER_AT = re.compile(r"@[^@]*(?:/|:[0-9])[^@]*$")
"""An ``@`` followed by a host with a port or a path, to the end of a query's part."""


def _password_cut(url: str) -> bool:
    """Whether the query the parser reads holds what follows a password's ``?``: an ``@`` then
    a host with a port or a database (``p@ss?9@db:5432/events``, ``p@ss?x=1@db/events``), which
    a query part without ``=`` hides from the parsed URL (a probe of deployments). Another
    ``@`` in a query's value is its own (``application_name=etl@prod``,
    ``sslrootcert=/ca@2026.pem``: a review)."""
    query = url.partition("?")[2]
    return any(_AUTHORITY_AFTER_AT.search(part) for part in query.split("&") if "@" in part)
