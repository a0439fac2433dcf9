"""Events in: append one or many, a duplicate skipped, an unreadable or refused event quarantined.

``append`` returns once the event is committed (or raises ``StoreUnavailableError``: the
sender keeps it); the same event twice is stored once (its ``event_key``); an event
``parse_event`` cannot read, or a row the database refuses for itself (``_refuses_the_row``),
goes to the quarantine with the reason, never lost. ``append_many`` commits in batches of
``BATCH_SIZE``: one bad event never sinks its batch, and a store that is down fails it whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from . import core
from .base import RawEvent
from .connections import describe_error
from .core import SqlCore
from .models import AppendCounts, AppendOutcome, QuarantinedEvent
from .prepare import Prepared, prepare, refused

__all__ = ["SqlAppends", "quarantined_event"]

_REFUSED_ROW_CLASSES = frozenset({"22", "23", "54"})
"""SQLSTATE classes of a row the database will never take, whenever it is sent again: data
exception (22: NUL in text, a value too long, a character the encoding lacks), integrity
constraint violation (23), program limit exceeded (54: an index entry over the btree limit)."""


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


class SqlAppends(SqlCore):
    """Appending events, deduplicated, the unreadable ones quarantined; reading the quarantine."""

    def _write(self, conn: Connection, prepared: Prepared) -> AppendOutcome:
        table = self._tables.quarantine if prepared.quarantined else self._tables.events
        statement = self._inserts.get(table.name)
        if statement is None:
            statement = self._inserts[table.name] = self._insert(table)
        if not self._inserted(conn.execute(statement, prepared.values)):  # ON CONFLICT skipped
            return AppendOutcome.DUPLICATE
        return AppendOutcome.QUARANTINED if prepared.quarantined else AppendOutcome.ACCEPTED

    def append(self, event: RawEvent, *, source: str = "transport") -> AppendOutcome:
        prepared = prepare(event, source=source, received_at=core.now())
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
                batch.append(prepare(raw, source=source, received_at=core.now()))
                if len(batch) >= core.BATCH_SIZE:
                    counts += self._write_batch(batch, start)
                    batch, start = [], position + 1
            if batch:
                counts += self._write_batch(batch, start)
        return counts

    def _write_batch(self, batch: list[Prepared], start: int) -> AppendCounts:
        """One transaction for the batch (``_write_rows``); when the database refuses a row of
        it, one each.

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
                    self._write_rows(conn, batch, start, counts)
                return counts
            except DBAPIError as error:
                if not _refuses_the_row(error):
                    raise
            counts = AppendCounts()
            for position, prepared in enumerate(batch, start):
                outcome, written = self._write_alone(prepared)
                _tally(counts, outcome, position, written)
        return counts

    def _write_rows(
        self, conn: Connection, batch: list[Prepared], start: int, counts: AppendCounts
    ) -> None:
        """The batch on ``conn``: its events in one statement (``_insert_many``), the same event
        twice in it once, its quarantined events one by one."""
        rows: dict[str, dict[str, Any]] = {}
        for position, prepared in enumerate(batch, start):
            if prepared.quarantined:
                _tally(counts, self._write(conn, prepared), position, prepared)
            elif prepared.key in rows:
                counts.duplicate += 1
            else:
                rows[prepared.key] = prepared.values
        if rows:
            written = self._insert_many(conn, self._tables.events, list(rows.values()))
            counts.accepted += written
            counts.duplicate += len(rows) - written

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

    def quarantine(self) -> Iterator[QuarantinedEvent]:
        self._ensure_schema()
        table = self._tables.quarantine
        for row in self._pages(select(table), table.c.id, "id", 0, "reading the quarantine"):
            yield quarantined_event(row)
