"""Events out: by cursor, by job, in slices of time, and the list of jobs with their digests.

Every read first stamps newly committed events with their cursor (PostgreSQL), then reads in
cursor order: a cursor never skips an event committed later. Reads go a page or a group of jobs
at a time, each on a short-lived connection, so memory stays flat however many events are
stored and no read transaction is held open while the caller works. ``job_digests`` keeps its
list between calls (``digests``) and adds only the events past it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, type_coerce
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.sqltypes import NullType

from . import core, digests
from .base import TimeSlice, ordered_slices, time_slices
from .core import PAGE_SIZE, SqlCore
from .models import StoredEvent, StoreUnavailableError
from .prepare import column_text
from .schema import is_dataset_event

__all__ = ["SqlReads"]

log = logging.getLogger(__name__)

_StoredJob = tuple[str | None, str | None]
"""A job as its columns hold it (``column_text`` of its namespace and name)."""


def _payload(text: str) -> Any:
    """A stored event's JSON decoded; its text when it nests too deeply to decode here (the
    store took it where the stack was shallower): every reader of payloads reads text too, and
    reports the event unreadable, instead of one event failing every read of the store."""
    try:
        return json.loads(text)
    except RecursionError:
        return text


class SqlReads(SqlCore):
    """Reading stored events: by cursor, by job, in time slices; the jobs and their digests."""

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
            per_row = core.PAGE_SIZE * jobs_read // max(rows_read, 1)
            per_query = max(1, min(core.BATCH_SIZE, per_row))

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
            for start in range(0, len(cursors), core.BATCH_SIZE):
                batch = cursors[start : start + core.BATCH_SIZE]
                query = select(cursor_column, ev.c.payload).where(cursor_column.in_(batch))
                found.update(conn.execute(query).all())
        return [found[cursor] for cursor in cursors if cursor in found]

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
