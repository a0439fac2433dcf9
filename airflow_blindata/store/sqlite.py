"""The event store in one SQLite file: the default, for a single machine.

WAL with ``synchronous=NORMAL``: a returned append survives the death of any process (a power
cut may roll the last ones back; ``?synchronous=full`` survives that too, an fsync per event).
Every write starts with ``BEGIN IMMEDIATE``, queued first on a thread lock and ``<db>.lock``;
one bound, ``timeout`` (default 3 s), covers every wait of a write, well below the OpenLineage
provider's 10 s. Keep the file on a local disk (WAL needs shared memory).

URL: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``; options
``synchronous=normal|full`` and ``timeout=<seconds>``.
Why: docs/capture.md#sqlite-durability-and-the-queue-of-writers-storesqlitepy
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table, create_engine, event
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, CursorResult, make_url
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.pool import QueuePool
from sqlalchemy.sql.dml import Insert

from .base import RawEvent
from .direct import DirectAppender
from .models import AppendOutcome, StoreUnavailableError, StoreURLError
from .prepare import prepare
from .schema import build_tables
from .sql import SqlEventStore

__all__ = ["SqliteEventStore"]

DEFAULT_TIMEOUT = 3.0
"""Seconds a write waits for its turn, all waits together: well below the 10 s the OpenLineage
provider gives an emitting child, so that an event that cannot be stored in time is kept."""
WARM_UP_ROUNDS = 64
"""Enough calls for CPython to specialize the append's code (it starts after a few)."""
SYNCHRONOUS = ("normal", "full")
_WRITE = "blindata_write"
_DEADLINE: ContextVar[float | None] = ContextVar("blindata_sqlite_deadline", default=None)
"""When the append running in this thread (or task) gives up (``time.monotonic()``): every wait
of it — opening a connection, checking the schema, the queue, SQLite's lock — takes only what
is left, so that one ``timeout`` bounds them all together."""


class SqliteEventStore(SqlEventStore):
    """An event store in a SQLite file (WAL, ``BEGIN IMMEDIATE`` writes)."""

    backend = "sqlite"
    _driver_errors = (sqlite3.Error,)

    def _hint(self, error: Exception) -> str:
        """SQLite says "unable to open database file" or "readonly database" whatever the cause:
        name the directory or file this process cannot write, found by trying (SQLite writes its
        WAL and shared-memory files beside the database, so the directory must take new files;
        and permission bits do not tell root about a read-only mount or an immutable file)."""
        text = str(error)
        if "unable to open database file" not in text and "readonly database" not in text:
            return ""
        directory = self.path.parent
        try:
            with tempfile.TemporaryFile(dir=directory):
                pass
        except OSError as cause:
            return f" (no file can be created in {directory}: {cause.strerror or cause})"
        if self.path.exists():
            try:
                with self.path.open("r+b"):
                    pass
            except OSError as cause:
                return f" ({self.path} cannot be opened for writing: {cause.strerror or cause})"
        return ""
        directory = self.path.parent
        if not directory.is_dir():
            return f" (the directory {directory} does not exist and could not be created)"
        if not os.access(directory, os.W_OK | os.X_OK):
            return f" (this process, uid {os.getuid()}, may not write in {directory})"
        if self.path.exists() and not os.access(self.path, os.R_OK | os.W_OK):
            return f" (this process, uid {os.getuid()}, may not read and write {self.path})"
        return ""

    def __init__(
        self, path: str | Path, *, synchronous: str = "normal", timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise StoreURLError(f"synchronous must be one of {SYNCHRONOUS}, not {synchronous!r}")
        try:
            self.path = Path(path).expanduser()
        except RuntimeError:  # ``~nosuchuser``, or no home to read ``~`` from (a review)
            raise StoreURLError(
                f"{str(path).split('/', 1)[0]!r} names no home directory on this machine: give "
                "the SQLite file's absolute path"
            ) from None
        self.synchronous = synchronous
        with suppress(OSError):  # reported by the first operation that needs the file
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # 2.0-style on SQLAlchemy 1.4 too (``future``), and pooled as 2.x pools a file (1.4 has
        # no pool for it, and leaves sqlite3's same-thread check on)
        engine = create_engine(
            URL.create("sqlite", database=str(self.path)),
            future=True,
            poolclass=QueuePool,
            connect_args={"check_same_thread": False},
        )
        event.listen(engine, "connect", self._on_connect)
        event.listen(engine, "begin", _on_begin)
        self._timeout = timeout
        self._lock_path = str(self.path) + ".lock"
        self._lock_pid: int | None = None
        self._lock_fd: int | None = None
        self._thread_lock = threading.Lock()
        self._direct: DirectAppender | None = None
        super().__init__(engine, build_tables(), url=f"sqlite:///{self.path}")

    @classmethod
    def from_url(cls, url: str) -> SqliteEventStore:
        parsed = make_url(url)
        if not parsed.database or parsed.database == ":memory:":
            raise StoreURLError(
                "a SQLite store needs a file: sqlite:///relative.db or sqlite:////absolute.db"
            )
        options = dict(parsed.query)
        unknown = sorted(set(options) - {"synchronous", "timeout"})
        if unknown:
            raise StoreURLError(
                f"unknown SQLite store option(s) {', '.join(unknown)} (known: synchronous, timeout)"
            )
        try:
            timeout = float(_one(options.get("timeout", DEFAULT_TIMEOUT)))
        except ValueError:
            raise StoreURLError("the SQLite store option timeout must be seconds") from None
        synchronous = str(_one(options.get("synchronous", "normal"))).lower()
        return cls(parsed.database, synchronous=synchronous, timeout=timeout)

    def _on_connect(self, dbapi_connection: sqlite3.Connection, _: Any) -> None:
        # The driver's own transaction handling would BEGIN lazily and too late for a lock;
        # ``_on_begin`` issues BEGIN itself (SQLAlchemy's documented recipe for pysqlite).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()

        def bounded(pragma: str) -> None:
            # An append's connection waits only what is left of its bound: a file another
            # process holds in exclusive locking mode makes each of these pragmas wait for it.
            cursor.execute(f"PRAGMA busy_timeout = {int(self._left() * 1000)}")
            cursor.execute(pragma)

        try:
            with suppress(sqlite3.OperationalError):  # a read-only file can still be read
                bounded("PRAGMA journal_mode = WAL")
            bounded(f"PRAGMA synchronous = {self.synchronous.upper()}")
            cursor.execute(f"PRAGMA busy_timeout = {int(self._left() * 1000)}")
        finally:
            cursor.close()

    def _connect_directly(self) -> sqlite3.Connection:
        # The schema exists by now, so the file is in WAL mode already: only the per-connection
        # setting is needed (the busy timeout is the driver's ``timeout``: what is left of the
        # append's bound, which the pragma may wait for too).
        connection = sqlite3.connect(
            self.path, timeout=self._left(), isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        return connection

    def _appender(self) -> DirectAppender:
        if self._direct is None:
            columns = {
                table.name: [c.name for c in table.columns if c.name != "id"]
                for table in (self._tables.events, self._tables.quarantine)
            }
            self._direct = DirectAppender(
                self._tables,
                self._engine.dialect,
                self._insert,
                self._connect_directly,
                columns,
                wal=self.path.with_name(self.path.name + "-wal"),
            )
        return self._direct

    def append(self, event: RawEvent, *, source: str = "transport") -> AppendOutcome:
        """One event, through the driver directly (``direct.py``): capture's hot path.

        One bound, ``timeout``, for the whole append: the schema check of a fresh process and
        the connections it opens included (``_DEADLINE``).
        """
        prepared = prepare(event, source=source, received_at=datetime.now(UTC))
        token = _DEADLINE.set(time.monotonic() + self._timeout)
        try:
            self._ensure_schema()
            tables = self._tables
            table = tables.quarantine if prepared.quarantined else tables.events
            with self._guard("appending an event"), self._queued(strict=True) as left:
                inserted = self._appender().insert(table.name, prepared, busy_timeout=left)
        finally:
            _DEADLINE.reset(token)
        if not inserted:
            return AppendOutcome.DUPLICATE
        return AppendOutcome.QUARANTINED if prepared.quarantined else AppendOutcome.ACCEPTED

    def _left(self) -> float:
        """Seconds a wait may take now: ``timeout``, or what is left of the running append's."""
        deadline = _DEADLINE.get()
        return self._timeout if deadline is None else min(self._timeout, _left(deadline))

    def _quick_version(self) -> int | None:
        """The version in one query, waiting for a lock no longer than ``_left``."""
        if _DEADLINE.get() is None:
            return super()._quick_version()
        try:
            with self._engine.connect() as conn:
                driver = conn.connection.driver_connection
                _set_busy_timeout(driver, self._left())
                try:
                    return self._read_version(conn)
                finally:
                    with suppress(sqlite3.Error):  # the pooled connection's reads wait the bound
                        _set_busy_timeout(driver, self._timeout)
        except (OperationalError, ProgrammingError):  # locked, or no such table yet
            return None

    def _insert(self, table: Table) -> Insert:
        # No RETURNING: SQLAlchemy 1.4 does not compile it for SQLite. sqlite3's rowcount of a
        # one-row INSERT is exact (``sqlite3_changes``): 0 when ON CONFLICT skipped it.
        return sqlite_insert(table).on_conflict_do_nothing(index_elements=["key"])

    def _inserted(self, result: CursorResult[Any]) -> bool:
        return result.rowcount == 1

    def _insert_many(self, conn: Connection, table: Table, rows: list[dict[str, Any]]) -> int:
        # executemany: sqlite3 sums the rows each execution wrote (0 for a skipped duplicate)
        return int(conn.execute(self._insert(table), rows).rowcount)

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        with self._queued() as left, self._engine.connect() as conn:
            driver = conn.connection.driver_connection
            _set_busy_timeout(driver, left)
            try:
                conn.execution_options(**{_WRITE: True})
                with conn.begin():
                    yield conn
            finally:
                with suppress(sqlite3.Error):  # reads, on this pooled connection, wait the bound
                    _set_busy_timeout(driver, self._timeout)

    @contextmanager
    def _queued(self, *, strict: bool = False) -> Iterator[float]:
        """Queue writers — threads on a lock, processes on ``<db>.lock`` — before SQLite's lock.

        SQLite's busy handler sleeps 1, 2, 5, 10 ... ms between tries, so with 8 writers an
        append that holds the lock for a fraction of a millisecond makes others wait whole
        milliseconds. Queuing here, with a finer backoff, lets the next writer in almost at once.
        It is only a queue: SQLite's own lock still guarantees one writer at a time. Without the
        lock file (a read-only directory) processes fall back to SQLite's handler alone.

        One bound, ``timeout``, for every wait of the write: this yields the seconds left of it,
        which the caller gives SQLite as its busy timeout (0 when the queue took them all: SQLite
        then tries its lock once, which still succeeds when the lock file's holder is not
        writing).
        """
        deadline = time.monotonic() + self._left()
        descriptor, threads = self._queue_locks()
        if not threads.acquire(timeout=_left(deadline)):
            if strict:  # the direct path shares one connection between the process's threads
                raise StoreUnavailableError(
                    f"{self.url} is busy: no write turn in {self._timeout:g} s"
                )
            yield _left(deadline)  # SQLite's busy timeout decides from here
            return
        try:
            pause, locked = 0.0001, False
            while descriptor is not None and not locked:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    locked = True
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.002)
            try:
                yield _left(deadline)
            finally:
                if locked and descriptor is not None:
                    fcntl.flock(descriptor, fcntl.LOCK_UN)
        finally:
            threads.release()

    def _queue_locks(self) -> tuple[int | None, threading.Lock]:
        # Per process: a descriptor inherited through fork shares its lock with the parent, and
        # a thread lock may have been held by a thread that does not exist in the child.
        if self._lock_pid != os.getpid():
            self._lock_pid, self._lock_fd, self._thread_lock = os.getpid(), None, threading.Lock()
            with suppress(OSError):
                flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                self._lock_fd = os.open(self._lock_path, flags, 0o644)
        return self._lock_fd, self._thread_lock

    def warm_up(self, sample: RawEvent | None = None, *, rounds: int = WARM_UP_ROUNDS) -> None:
        """Check the schema and compile the append, then close the connection it used.

        Called by the capture plugin in the process that forks a child per event: the children
        inherit a checked schema and a compiled statement, and their ``emit`` only connects and
        inserts. With a ``sample`` event, the rest of ``append`` is rehearsed ``rounds`` times
        without writing anything (the row is prepared, the write turn taken and released): the
        children then run code the interpreter has already specialized, instead of rewriting it
        in pages shared with this process (a copy of each page per child).
        """
        self._ensure_schema()
        appender = self._appender()
        table = self._tables.events.name
        for _ in range(rounds if sample is not None else 0):
            prepared = prepare(sample, source="transport", received_at=datetime.now(UTC))
            with self._guard("rehearsing an append"), self._queued(strict=True):
                appender.parameters(table, prepared)
        self.release_connections()

    def release_connections(self) -> None:
        super().release_connections()
        if self._direct is not None:
            self._direct.close()

    def close(self) -> None:
        super().close()
        if self._direct is not None:
            self._direct.close()
        if self._lock_fd is not None and self._lock_pid == os.getpid():
            os.close(self._lock_fd)
            self._lock_fd, self._lock_pid = None, None

    def _size_bytes(self) -> int | None:
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(file.stat().st_size for file in files if file.exists())


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _set_busy_timeout(connection: Any, seconds: float) -> None:
    """How long SQLite's busy handler may wait for its lock on ``connection`` (a sqlite3 one)."""
    connection.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")


def _one(value: Any) -> Any:
    """A URL option given twice comes back as a tuple: the last one wins."""
    return value[-1] if isinstance(value, tuple) else value


def _on_begin(conn: Connection) -> None:
    # IMMEDIATE takes the write lock up front (waiting up to busy_timeout); a DEFERRED
    # transaction that reads first can fail at once with SQLITE_BUSY when it tries to write.
    immediate = conn.get_execution_options().get(_WRITE, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
