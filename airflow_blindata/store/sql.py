"""The event store on SQLAlchemy Core, shared by SQLite and PostgreSQL.

The two backends differ in a few seams only, which subclasses fill in: the INSERT that skips a
duplicate key, how a write transaction starts, the schema lock, how the cursor is stamped, and
the size on disk. Every database error leaves as ``StoreUnavailableError`` with a one-line message
that names the store by its redacted URL and never carries SQL parameters or a password.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from sqlalchemy import (
    Table,
    and_,
    func,
    insert,
    inspect,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.engine import Connection, CursorResult, Engine, Row
from sqlalchemy.exc import (
    DataError,
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import Select
from sqlalchemy.sql.sqltypes import NullType

from airflow_blindata.redaction import redact_text

from . import digests, retention
from .base import (
    STALE_FOLDS_AFTER,
    EventStore,
    RawEvent,
    TimeSlice,
    ordered_slices,
    time_slices,
)
from .connections import describe_error, set_aside, track
from .models import (
    AppendCounts,
    AppendOutcome,
    ForgottenJob,
    QuarantinedEvent,
    RetentionResult,
    StoredEvent,
    StoreSchemaError,
    StoreStats,
    StoreUnavailableError,
    SyncRecord,
)
from .prepare import Prepared, column_text, prepare, refused
from .schema import MIGRATIONS, SCHEMA_VERSION, Tables, is_dataset_event

__all__ = ["SqlEventStore", "describe_error"]

log = logging.getLogger(__name__)

BATCH_SIZE = 500
"""Rows per transaction in ``append_many``: big enough to be fast, short enough not to block."""
PAGE_SIZE = 1000
"""Rows per query when reading: memory stays flat however many events are stored."""


_StoredJob = tuple[str | None, str | None]
"""A job as its columns hold it (``column_text`` of its namespace and name)."""


def _shown_counts(rows: Iterable[Any]) -> dict[str, int]:
    """Counts by job namespace, each shown as ``redact_text`` shows it: a namespace that holds
    credentials (``postgres://etl:pw@db:5432``) is counted as ``postgres://etl:***@db:5432``,
    with the other spellings that differ only in the password (issue 42)."""
    counts: dict[str, int] = {}
    for name, count in rows:
        shown = redact_text(str(name))
        counts[shown] = counts.get(shown, 0) + int(count)
    return dict(sorted(counts.items()))


def _job_key(job: tuple[str, str]) -> str:
    """A job's key in tables that index it: a digest, whatever the length of its names.

    The digest of ``json.dumps([namespace, name], ensure_ascii=False)``, that text written
    without ``json.dumps``, which makes an encoder each call (most of the cost of a key; a plan
    makes three keys a job)."""
    namespace, name = job
    if type(namespace) is str and type(name) is str:
        listed = f"[{_json_string(namespace)}, {_json_string(name)}]"
    else:
        listed = json.dumps(list(job), ensure_ascii=False)
    return hashlib.sha256(listed.encode("utf-8", "backslashreplace")).hexdigest()


_json_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A string as ``json.dumps(..., ensure_ascii=False)`` writes it."""


def _now() -> datetime:
    return datetime.now(UTC)


_REFUSED_ROW_CLASSES = frozenset({"22", "23", "54"})
"""SQLSTATE classes of a row the database will never take, whenever it is sent again: data
exception (22: NUL in text, a value too long, a character the encoding lacks), integrity
constraint violation (23), program limit exceeded (54: an index entry over the btree limit)."""


def _payload(text: str) -> Any:
    """A stored event's JSON decoded; its text when it nests too deeply to decode here (the
    store took it where the stack was shallower): every reader of payloads reads text too, and
    reports the event unreadable, instead of one event failing every read of the store."""
    try:
        return json.loads(text)
    except RecursionError:
        return text


def quarantined_event(row: Any) -> QuarantinedEvent:
    """A row of the quarantine table as the model (the raw bytes shown as text)."""
    return QuarantinedEvent(
        id=row.id,
        key=row.key,
        received_at=row.received_at,
        source=row.source,
        reason=row.reason,
        raw=bytes(row.raw).decode("utf-8", "replace"),
    )


def sync_record(row: Any, report: dict[str, Any]) -> SyncRecord:
    """A row of the sync history as the model, with its report already decoded."""
    return SyncRecord(
        definition_uuid=row.definition_uuid,
        kind=row.kind,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=row.status,
        report=report,
    )


def _lock_name(definition_uuid: str) -> str:
    return f"sync_lock:{definition_uuid}"[:64]


def _lock_value(text: str) -> tuple[str, datetime]:
    """(holder, until) of a lock row; an unreadable row is an expired lock."""
    try:
        data = json.loads(text)
        until = datetime.fromisoformat(data["until"])
        return str(data["holder"]), until if until.tzinfo else until.replace(tzinfo=UTC)
    except (ValueError, KeyError, TypeError):
        return "", datetime.min.replace(tzinfo=UTC)


def _tally(counts: AppendCounts, outcome: AppendOutcome, position: int, row: Prepared) -> None:
    """Count ``outcome``; a quarantined event with its position and the reason it was kept."""
    reason = row.values.get("reason") if outcome is AppendOutcome.QUARANTINED else None
    counts.add(outcome, position=position, reason=reason)


def _refuses_the_row(error: DBAPIError) -> bool:
    """Whether ``error`` refuses the row itself, rather than saying the store is unavailable.

    A refused row is quarantined; anything else (a connection lost, a timeout, a full disk, a
    read-only database) stays an error, and the event is kept by its sender for a retry.
    """
    if error.connection_invalidated:
        return False
    if isinstance(error, DataError | IntegrityError):  # the driver's own, like psycopg's NUL check
        return True
    sqlstate = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return isinstance(sqlstate, str) and sqlstate[:2] in _REFUSED_ROW_CLASSES


class SqlEventStore(EventStore):
    """An ``EventStore`` on an SQLAlchemy engine (see the subclasses for each database)."""

    backend: ClassVar[str] = ""

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

    def release_connections(self) -> None:
        """Close idle pooled connections (before a fork; see ``connections``)."""
        if self._pid == os.getpid():
            self._shared_engine.dispose()

    # -- schema ---------------------------------------------------------------------------

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

    # -- writing --------------------------------------------------------------------------

    def _write(self, conn: Connection, prepared: Prepared) -> AppendOutcome:
        table = self._tables.quarantine if prepared.quarantined else self._tables.events
        statement = self._inserts.get(table.name)
        if statement is None:
            statement = self._inserts[table.name] = self._insert(table)
        if not self._inserted(conn.execute(statement, prepared.values)):  # ON CONFLICT skipped
            return AppendOutcome.DUPLICATE
        return AppendOutcome.QUARANTINED if prepared.quarantined else AppendOutcome.ACCEPTED

    def append(self, event: RawEvent, *, source: str = "transport") -> AppendOutcome:
        prepared = prepare(event, source=source, received_at=_now())
        with self._bounded(whole=True):  # the schema check included: a fresh process's first
            self._ensure_schema()
            with self._guard("appending an event"):
                try:
                    return self._append_one(prepared)
                except DBAPIError as error:
                    if prepared.quarantined or not _refuses_the_row(error):
                        raise
                    reason = describe_error(error, secrets=self._secrets)
                return self._append_one(refused(prepared, reason))

    def _append_one(self, prepared: Prepared) -> AppendOutcome:
        try:
            with self._appending() as conn:
                return self._write(conn, prepared)
        except DBAPIError as error:
            if not error.connection_invalidated or not self._may_retry():
                raise
        # A pooled connection the server dropped (a restart): once more, on a new one, if the
        # bound leaves time. Cheaper than pinging before every append; harmless, as a duplicate
        # is skipped.
        with self._appending() as conn:
            return self._write(conn, prepared)

    def append_many(self, events: Iterable[Any], *, source: str = "ingest") -> AppendCounts:
        with self._bounded(whole=False):
            self._ensure_schema()
            counts = AppendCounts()
            batch: list[Prepared] = []
            start = 0
            for position, raw in enumerate(events):
                batch.append(prepare(raw, source=source, received_at=_now()))
                if len(batch) >= BATCH_SIZE:
                    counts += self._write_batch(batch, start)
                    batch, start = [], position + 1
            if batch:
                counts += self._write_batch(batch, start)
        return counts

    def _write_batch(self, batch: list[Prepared], start: int) -> AppendCounts:
        """One transaction for the batch; when the database refuses a row of it, one each.

        A refused row (see ``_refuses_the_row``) would otherwise fail its batch for ever and
        with it every good event around it. Rolled back, the batch is written again event by
        event, and the refused one is quarantined with the database's reason. A store that is
        down still fails the whole batch (``StoreUnavailableError``). ``start`` is the position
        of the batch's first event among those given to ``append_many``.
        """
        counts = AppendCounts()
        with self._guard("appending events"):
            try:
                with self._writing() as conn:
                    for position, prepared in enumerate(batch, start):
                        _tally(counts, self._write(conn, prepared), position, prepared)
                return counts
            except DBAPIError as error:
                if not _refuses_the_row(error):
                    raise
            counts = AppendCounts()
            for position, prepared in enumerate(batch, start):
                outcome, written = self._write_alone(prepared)
                _tally(counts, outcome, position, written)
        return counts

    def _write_alone(self, prepared: Prepared) -> tuple[AppendOutcome, Prepared]:
        """``prepared`` in a transaction of its own; quarantined when the database refuses it.

        Returns the outcome and the row written (the quarantine row, when refused)."""
        try:
            with self._writing() as conn:
                return self._write(conn, prepared), prepared
        except DBAPIError as error:
            if prepared.quarantined or not _refuses_the_row(error):
                raise
            reason = describe_error(error, secrets=self._secrets)
        quarantined = refused(prepared, reason)
        with self._writing() as conn:
            return self._write(conn, quarantined), quarantined

    # -- reading --------------------------------------------------------------------------

    def _to_event(self, row: Any) -> StoredEvent:
        return StoredEvent(
            id=row.cursor,
            key=row.key,
            received_at=row.received_at,
            event_time=row.event_time,
            kind=row.kind,
            job_namespace=row.job_namespace,
            job_name=row.job_name,
            run_id=row.run_id,
            event_type=row.event_type,
            payload=_payload(row.payload),
            source=row.source,
        )

    def events(
        self,
        *,
        since: int | None = None,
        job: tuple[str, str] | None = None,
        received_after: datetime | None = None,
        until: int | None = None,
    ) -> Iterator[StoredEvent]:
        ev = self._tables.events
        conditions: list[ColumnElement[bool]] = []
        if job is not None:
            conditions += self._of_job(job)
        if received_after is not None:
            conditions.append(ev.c.received_at > received_after)
        return self._read(conditions, since=since, until=until)

    def _of_job(self, job: tuple[str, str]) -> list[ColumnElement[bool]]:
        """The events of one job, named as the columns hold it (``column_text``; a missing
        namespace or name is ``IS NULL``)."""
        ev = self._tables.events
        namespace, name = column_text(job[0]), column_text(job[1])
        return [ev.c.job_namespace == namespace, ev.c.job_name == name]

    def dataset_events(self, *, until: int | None = None) -> Iterator[StoredEvent]:
        return self._read([is_dataset_event(self._tables.events)], until=until)

    def _read(
        self,
        conditions: list[ColumnElement[bool]],
        *,
        since: int | None = None,
        until: int | None = None,
    ) -> Iterator[StoredEvent]:
        self._ensure_schema()
        with self._guard("stamping new events"):
            self._stamp()
        ev, cursor_column = self._tables.events, self._tables.cursor
        query = select(*ev.c, cursor_column.label("cursor")).where(
            cursor_column.is_not(None), *conditions
        )
        if until is not None:
            query = query.where(cursor_column <= until)
        for row in self._pages(query, cursor_column, "cursor", since or 0, "reading events"):
            yield self._to_event(row)

    def job_digests(self, *, until: int | None = None) -> dict[tuple[str, str], str]:
        """Read from the memo (``digests``) plus the events past its mark, then keep the memo."""
        self._ensure_schema()
        tables = self._tables
        with self._guard("listing jobs"):
            self._stamp()
            with self._reading() as conn:
                if until is None:
                    until = int(conn.execute(select(func.max(tables.cursor))).scalar() or 0)
                seen, mark, kept = digests.read_memo(conn, tables)
                replace = mark is None or until < mark
                new = digests.aggregate(conn, tables, None if replace else mark, until)
        sums = new if replace else digests.merge(kept, dict(new))
        if replace or until != mark:
            changed = sums if replace else {job: sums[job] for job in new}
            self._keep_digests(seen, until, changed, replace=replace)
        return {job: digests.digest(*sums[job]) for job in sorted(sums)}

    def _keep_digests(
        self, seen: digests.Memo, until: int, sums: digests.Sums, *, replace: bool
    ) -> None:
        """Best effort: a memo not kept (a read-only store, a concurrent writer) costs the next
        listing the events past the old mark, nothing else."""
        try:
            with self._guard("keeping job digests"), self._writing() as conn:
                kept = digests.write_memo(conn, self._tables, seen, until, sums, replace=replace)
        except StoreUnavailableError as exc:
            log.info("The job digests could not be kept: %s", exc)
            return
        if not kept:
            log.debug("The job digests moved meanwhile: not kept")

    def digest_count(self, digest: str) -> int | None:
        return digests.count(digest)

    def events_by_job(
        self,
        jobs: Iterable[tuple[str, str]],
        *,
        until: int | None = None,
        after: int | None = None,
    ) -> Iterator[tuple[tuple[str, str], list[str]]]:
        """Many small jobs per query (a query per job was a third of a first plan's time with
        small jobs): memory holds about ``PAGE_SIZE`` rows, or one job when it is longer.

        Queries are cut by job, never across jobs, and name each job by an index search (its
        namespace and its name ``IN`` a list, which SQLite and PostgreSQL both look up in the
        job index; a row-value ``IN`` was a scan of the whole table on SQLite). How
        many jobs a query asks for follows the rows per job read so far. A keyset page running
        across jobs, ordered by the cursor, made PostgreSQL (whose job index does not hold the
        cursor) sort all the remaining rows of its batch for every page: quadratic in a long
        history."""
        self._ensure_schema()
        asked: dict[_StoredJob, tuple[str, str]] = {
            (column_text(job[0]), column_text(job[1])): job for job in jobs
        }
        keys = list(asked)
        with self._guard("stamping new events"):
            self._stamp()
        per_query, jobs_read, rows_read = 1, 0, 0
        while keys:
            group, keys = keys[:per_query], keys[per_query:]
            found = self._job_rows(group, until, after)
            for key in group:
                rows = found.get(key)
                if rows:
                    rows.sort(key=lambda row: row[0])
                    yield asked[key], [text for _, text in rows]
            jobs_read += len(group)
            rows_read += sum(len(rows) for rows in found.values())
            per_query = max(1, min(BATCH_SIZE, PAGE_SIZE * jobs_read // max(rows_read, 1)))

    def _job_rows(
        self, group: list[_StoredJob], until: int | None, after: int | None = None
    ) -> dict[_StoredJob, list[tuple[int, str]]]:
        """The (cursor, text) of the events of ``group``'s jobs up to ``until``: a query per
        namespace, naming its jobs with ``IN``. Its form does not depend on the values, so
        SQLAlchemy compiles it once (building an ``OR`` of equalities was a third of the read)."""
        names: dict[str | None, list[str]] = {}
        unusual: list[_StoredJob] = []  # a NULL column: never in an ``IN`` list
        for namespace, name in group:
            if namespace is None or name is None:
                unusual.append((namespace, name))
            else:
                names.setdefault(namespace, []).append(name)
        ev, cursor_column = self._tables.events, self._tables.cursor
        namespace_column, name_column = ev.c.job_namespace, ev.c.job_name
        base = select(namespace_column, name_column, cursor_column, ev.c.payload).where(
            cursor_column.is_not(None)
        )
        if until is not None:
            base = base.where(cursor_column <= until)
        if after is not None:
            base = base.where(cursor_column > after)
        queries = [
            base.where(namespace_column == namespace, name_column.in_(asked))
            for namespace, asked in names.items()
        ]
        if unusual:
            queries.append(
                base.where(
                    or_(
                        *(
                            and_(namespace_column == job[0], name_column == job[1])
                            for job in unusual
                        )
                    )
                )
            )
        found: dict[_StoredJob, list[tuple[int, str]]] = {}
        with self._guard("reading events"), self._reading() as conn:
            for query in queries:
                for row in conn.execute(query):
                    found.setdefault((row[0], row[1]), []).append((row[2], row[3]))
        return found

    def job_slices(
        self,
        job: tuple[str, str],
        *,
        until: int | None = None,
        after: int | None = None,
        size: int = PAGE_SIZE,
        newest_first: bool = False,
    ) -> Iterator[TimeSlice[str]]:
        self._ensure_schema()
        with self._guard("stamping new events"):
            self._stamp()
        ev, cursor_column = self._tables.events, self._tables.cursor
        where = [cursor_column.is_not(None), *self._of_job(job)]
        if until is not None:
            where.append(cursor_column <= until)
        if after is not None:
            where.append(cursor_column > after)
        # the database's own value of each time (SQLite's text sorts as the time does): made
        # into a datetime, a long history's listing took a third of its reading
        event_time = type_coerce(ev.c.event_time, NullType())
        with self._guard("reading events"), self._reading() as conn:
            listing = conn.execute(
                select(cursor_column, event_time, ev.c.run_id).where(*where)
            ).all()
        for cursors, going_on in ordered_slices(time_slices(listing, size), newest_first):
            yield TimeSlice(self._texts_at(cursors), going_on)

    def _texts_at(self, cursors: list[int]) -> list[str]:
        """The texts of the events at ``cursors``, in that order."""
        ev, cursor_column = self._tables.events, self._tables.cursor
        found: dict[int, str] = {}
        with self._guard("reading events"), self._reading() as conn:
            for start in range(0, len(cursors), BATCH_SIZE):
                batch = cursors[start : start + BATCH_SIZE]
                query = select(cursor_column, ev.c.payload).where(cursor_column.in_(batch))
                found.update(conn.execute(query).all())
        return [found[cursor] for cursor in cursors if cursor in found]

    def folded_jobs(
        self, settings: str, jobs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, str]]:
        self._ensure_schema()
        table = self._tables.job_folds
        by_key = {_job_key(job): job for job in jobs}
        found: dict[tuple[str, str], tuple[str, str]] = {}
        keys = list(by_key)
        with self._guard("reading kept folds"), self._reading() as conn:
            for start in range(0, len(keys), BATCH_SIZE):
                query = select(table.c.job_key, table.c.digest, table.c.fold).where(
                    table.c.settings == settings,
                    table.c.job_key.in_(keys[start : start + BATCH_SIZE]),
                )
                for row in conn.execute(query):
                    found[by_key[row.job_key]] = (row.digest, row.fold)
        return found

    def keep_folded_jobs(
        self, settings: str, folds: Iterable[tuple[tuple[str, str], str, str]]
    ) -> None:
        self._ensure_schema()
        table = self._tables.job_folds
        rows = [
            {"settings": settings, "job_key": _job_key(job), "digest": digest, "fold": text}
            for job, digest, text in folds
        ]
        if not rows:
            return
        keys = [row["job_key"] for row in rows]
        with self._guard("keeping folds"), self._writing() as conn:
            conn.execute(
                table.delete().where(table.c.settings == settings, table.c.job_key.in_(keys))
            )
            conn.execute(insert(table), rows)

    def forget_folded_jobs(
        self, settings: str, keep: Iterable[tuple[str, str]], *, now: datetime | None = None
    ) -> None:
        self._ensure_schema()
        table = self._tables.job_folds
        wanted = {_job_key(job) for job in keep}
        with self._guard("forgetting folds"), self._writing() as conn:
            stored = conn.execute(
                select(table.c.job_key).where(table.c.settings == settings)
            ).scalars()
            gone = [key for key in stored if key not in wanted]
            for start in range(0, len(gone), BATCH_SIZE):
                conn.execute(
                    table.delete().where(
                        table.c.settings == settings,
                        table.c.job_key.in_(gone[start : start + BATCH_SIZE]),
                    )
                )
            self._forget_stale_settings(conn, settings, now or datetime.now(UTC))

    def _forget_stale_settings(self, conn: Connection, settings: str, now: datetime) -> None:
        """Mark ``settings`` used ``now``; drop the folds of settings unused for
        ``STALE_FOLDS_AFTER``. Settings found with folds but no mark (kept by a release before
        the marks) are marked ``now``: they go a week later, unless used meanwhile."""
        folds, used = self._tables.job_folds, self._tables.fold_settings
        conn.execute(used.delete().where(used.c.settings == settings))
        conn.execute(insert(used).values(settings=settings, used_at=now))
        marked = {row.settings: row.used_at for row in conn.execute(select(used))}
        kept = conn.execute(select(folds.c.settings).distinct()).scalars()
        unmarked = [{"settings": other, "used_at": now} for other in kept if other not in marked]
        if unmarked:
            conn.execute(insert(used), unmarked)
        stale = [other for other, at in marked.items() if now - at > STALE_FOLDS_AFTER]
        if stale:
            conn.execute(folds.delete().where(folds.c.settings.in_(stale)))
            conn.execute(used.delete().where(used.c.settings.in_(stale)))

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
            for start in range(0, len(rows), BATCH_SIZE):
                conn.execute(insert(table), rows[start : start + BATCH_SIZE])

    def last_id(self) -> int:
        self._ensure_schema()
        with self._guard("reading the cursor"):
            self._stamp()
            with self._engine.connect() as conn:
                value = conn.execute(select(func.max(self._tables.cursor))).scalar()
        return int(value or 0)

    def jobs_since(self, after: int, *, until: int | None = None) -> set[tuple[str, str]]:
        """The distinct jobs past ``after`` on the cursor's index: a light sync's first read,
        as cheap as the events received since are few."""
        self._ensure_schema()
        ev, cursor = self._tables.events, self._tables.cursor
        query = (
            select(ev.c.job_namespace, ev.c.job_name)
            .where(ev.c.job_namespace.is_not(None), ev.c.job_name.is_not(None))
            .where(cursor.is_not(None), cursor > after)
            .distinct()
        )
        if until is not None:
            query = query.where(cursor <= until)
        with self._guard("listing the jobs received since the last sync"):
            self._stamp()
            with self._reading() as conn:
                return {(str(ns), str(name)) for ns, name in conn.execute(query)}

    def acquire_sync_lock(self, definition_uuid: str, holder: str, *, ttl: timedelta) -> str | None:
        """The lock is a row of ``store_meta`` (``sync_lock:<uuid>``): taken by inserting it,
        taken over once expired by an update that names the value read (compare and swap), so
        two processes never both get it, on SQLite or PostgreSQL."""
        self._ensure_schema()
        meta, key = self._tables.meta, _lock_name(definition_uuid)
        now = _now()
        value = json.dumps({"holder": holder, "until": (now + ttl).isoformat()})
        with self._guard("taking the sync lock"):
            try:
                with self._writing() as conn:
                    held = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
                    if held is None:
                        conn.execute(insert(meta).values(key=key, value=value))
                        return None
                    other, until = _lock_value(held)
                    if other != holder and until > now:
                        return f"{other} (until {until:%Y-%m-%d %H:%M:%S} UTC)"
                    done = conn.execute(
                        update(meta)
                        .where(meta.c.key == key, meta.c.value == held)
                        .values(value=value)
                    )
                    if done.rowcount == 1:
                        return None
                    return "another sync (it took the lock meanwhile)"
            except IntegrityError:  # another process inserted it first
                return "another sync (it took the lock meanwhile)"

    def release_sync_lock(self, definition_uuid: str, holder: str) -> None:
        self._ensure_schema()
        meta, key = self._tables.meta, _lock_name(definition_uuid)
        with self._guard("releasing the sync lock"), self._writing() as conn:
            held = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
            if held is not None and _lock_value(held)[0] == holder:
                conn.execute(meta.delete().where(meta.c.key == key, meta.c.value == held))

    def quarantine(self) -> Iterator[QuarantinedEvent]:
        self._ensure_schema()
        table = self._tables.quarantine
        for row in self._pages(select(table), table.c.id, "id", 0, "reading the quarantine"):
            yield quarantined_event(row)

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

    def stats(self) -> StoreStats:
        self._ensure_schema()
        ev, tables = self._tables.events, self._tables
        namespace = func.coalesce(ev.c.job_namespace, "(dataset events)")
        with self._guard("reading statistics"):
            self._stamp()
            with self._reading() as conn:
                by_namespace = conn.execute(
                    select(namespace, func.count()).group_by(namespace).order_by(namespace)
                ).all()
                by_kind = conn.execute(select(ev.c.kind, func.count()).group_by(ev.c.kind)).all()
                span = conn.execute(
                    select(
                        func.min(ev.c.received_at),
                        func.max(ev.c.received_at),
                        func.min(ev.c.event_time),
                        func.max(ev.c.event_time),
                        func.max(tables.cursor),
                    )
                ).one()
                jobs = conn.execute(
                    select(func.count()).select_from(
                        select(ev.c.job_namespace, ev.c.job_name)
                        .where(ev.c.job_name.is_not(None))
                        .distinct()
                        .subquery()
                    )
                ).scalar()
                quarantined = conn.execute(select(func.count()).select_from(tables.quarantine))
                syncs = conn.execute(select(func.count()).select_from(tables.sync_history))
                quarantined_count, sync_count = quarantined.scalar(), syncs.scalar()
            size = self._size_bytes()
        # Aggregates come back as plain values: run them through the column type for UTC.
        utc = ev.c.received_at.type.process_result_value  # type: ignore[attr-defined]
        dialect = self._engine.dialect
        return StoreStats(
            url=self.url,
            backend=self.backend,
            schema_version=SCHEMA_VERSION,
            events=sum(count for _, count in by_namespace),
            jobs=int(jobs or 0),
            events_by_namespace=_shown_counts(by_namespace),
            events_by_kind={str(kind): int(count) for kind, count in by_kind},
            oldest_received_at=utc(span[0], dialect),
            newest_received_at=utc(span[1], dialect),
            oldest_event_time=utc(span[2], dialect),
            newest_event_time=utc(span[3], dialect),
            last_id=int(span[4] or 0),
            quarantined=int(quarantined_count or 0),
            sync_records=int(sync_count or 0),
            size_bytes=size,
        )

    # -- retention and sync history -------------------------------------------------------

    def retain(
        self, *, raw_events_days: int, job_described_for_days: int, now: datetime | None = None
    ) -> RetentionResult:
        if raw_events_days < 0 or job_described_for_days < 0:
            raise ValueError("retention days must not be negative")
        self._ensure_schema()
        with self._guard("pruning events"):
            return retention.retain(
                self._engine,
                self._writing,
                self._tables,
                raw_events_days=raw_events_days,
                job_described_for_days=job_described_for_days,
                now=now or _now(),
            )

    def forget_job(self, namespace: str, name: str, *, dry_run: bool = True) -> ForgottenJob:
        self._ensure_schema()
        ev = self._tables.events
        of_job = and_(*self._of_job((namespace, name)))
        with self._guard("reading a job"), self._reading() as conn:
            events, runs, first, last = conn.execute(
                select(
                    func.count(),
                    func.count(ev.c.run_id.distinct()),
                    func.min(ev.c.received_at),
                    func.max(ev.c.received_at),
                ).where(of_job)
            ).one()
        received = ev.c.received_at.type.process_result_value  # type: ignore[attr-defined]
        found = ForgottenJob(
            namespace=namespace,
            name=name,
            events=int(events or 0),
            runs=int(runs or 0),
            first_received=received(first, self._engine.dialect) if first is not None else None,
            last_received=received(last, self._engine.dialect) if last is not None else None,
        )
        if dry_run or not found.events:
            return found
        with self._guard("forgetting a job"):
            removed = retention.delete_batched(self._writing, ev, of_job, self._tables)
        return ForgottenJob(
            namespace=namespace,
            name=name,
            events=removed,
            runs=found.runs,
            first_received=found.first_received,
            last_received=found.last_received,
            removed=True,
        )

    def record_sync(self, record: SyncRecord) -> None:
        self._ensure_schema()
        history = self._tables.sync_history
        with self._guard("recording a sync"), self._writing() as conn:
            conn.execute(
                insert(history).values(
                    definition_uuid=record.definition_uuid,
                    kind=record.kind,
                    started_at=record.started_at,
                    finished_at=record.finished_at,
                    status=record.status,
                    report=json.dumps(record.report, default=str),
                )
            )

    def sync_history(
        self, definition_uuid: str, *, kind: str | None = None, limit: int = 20
    ) -> list[SyncRecord]:
        self._ensure_schema()
        history = self._tables.sync_history
        query = select(history).where(history.c.definition_uuid == definition_uuid)
        if kind is not None:
            query = query.where(history.c.kind == kind)
        query = query.order_by(history.c.id.desc()).limit(limit)
        with self._guard("reading the sync history"), self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [sync_record(row, json.loads(row.report)) for row in rows]

    def close(self) -> None:
        self._engine.dispose()
