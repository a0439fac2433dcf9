"""The sync history (one record per snapshot, cleanup and light sync) and the sync lock.

``record_sync`` adds a record, ``sync_history`` reads a definition's latest, newest first. The
lock of a job definition is a row of ``store_meta`` (``sync_lock:<uuid>``) holding its holder and
when it expires: taken by inserting it, taken over once expired by an update that names the
value read (compare and swap), so two processes never both hold it, on SQLite or PostgreSQL.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from . import core
from .core import SqlCore
from .models import SyncRecord

__all__ = ["SqlSyncHistory", "sync_record"]


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


STORE_ID = "store_id"
"""The key of the store's id in ``store_meta``."""


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


class SqlSyncHistory(SqlCore):
    """Recording and reading syncs; taking and giving back a definition's sync lock."""

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

    def acquire_sync_lock(self, definition_uuid: str, holder: str, *, ttl: timedelta) -> str | None:
        """The lock is a row of ``store_meta`` (``sync_lock:<uuid>``): taken by inserting it,
        taken over once expired by an update that names the value read (compare and swap), so
        two processes never both get it, on SQLite or PostgreSQL."""
        self._ensure_schema()
        meta, key = self._tables.meta, _lock_name(definition_uuid)
        now = core.now()
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

    def store_id(self) -> str:
        """A random id, made by the first caller and kept in ``store_meta``."""
        self._ensure_schema()
        meta = self._tables.meta
        query = select(meta.c.value).where(meta.c.key == STORE_ID)
        with self._guard("reading the store's id"):
            with self._engine.connect() as conn:
                found = conn.execute(query).scalar()
            if found:
                return str(found)
            try:
                with self._writing() as conn:
                    conn.execute(insert(meta).values(key=STORE_ID, value=str(uuid.uuid4())))
            except IntegrityError:  # another process made it first
                pass
            with self._engine.connect() as conn:
                return str(conn.execute(query).scalar())

    def release_sync_lock(self, definition_uuid: str, holder: str) -> None:
        self._ensure_schema()
        meta, key = self._tables.meta, _lock_name(definition_uuid)
        with self._guard("releasing the sync lock"), self._writing() as conn:
            held = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
            if held is not None and _lock_value(held)[0] == holder:
                conn.execute(meta.delete().where(meta.c.key == key, meta.c.value == held))
