"""The event store: a durable, deduplicating log of OpenLineage events between capture and sync.

Durability contract (every backend):

* ``append`` returns only after the event is committed. SQLite (the default, one machine): WAL
  with ``synchronous=NORMAL`` — a committed append survives the death of any process, as the
  OpenLineage ``FileTransport``'s writes do; ``?synchronous=full`` also survives a power cut, at
  one fsync per event. PostgreSQL (workers on several machines): an autocommitted INSERT.
* Many processes (and hosts, on PostgreSQL) append at once; a process killed in the middle of an
  append leaves the store as it was before that append.
* The same event sent twice is stored once (content key ``event_key``); an event that cannot be
  read at all is quarantined with the reason (``quarantine()``), never dropped.
* ``events(since=cursor)`` never skips an event, even one committed late by a slow writer.
* The schema is created on first use and upgraded in place (``blindata_store_meta``); an upgrade
  keeps every stored event.

Open a store with ``open_store(url)``: ``sqlite:///path``, ``postgresql://...``,
``airflow-conn://<conn_id>``, or ``None`` for the configured one (``[blindata] store_url``,
default ``$AIRFLOW_HOME/blindata/events.db``). More backends: ``register_store(scheme, factory)``.
"""

from __future__ import annotations

from .base import EventAppender, EventStore, FoldKeeper, JobReader, RawEvent, SyncLedger
from .models import (
    AppendCounts,
    AppendOutcome,
    ForgottenJob,
    QuarantinedEvent,
    RetentionResult,
    StoredEvent,
    StoreError,
    StoreSchemaError,
    StoreStats,
    StoreUnavailableError,
    StoreURLError,
    SyncRecord,
)
from .urls import (
    configured_store_url,
    default_store_url,
    open_store,
    redact_url,
    register_store,
)


def _open_sqlite(url: str) -> EventStore:
    from .sqlite import SqliteEventStore

    return SqliteEventStore.from_url(url)


def _open_postgres(url: str) -> EventStore:
    from .postgres import PostgresEventStore

    return PostgresEventStore.from_url(url)


register_store("sqlite", _open_sqlite)
register_store("postgresql", _open_postgres)
register_store("postgres", _open_postgres)

__all__ = [
    "AppendCounts",
    "AppendOutcome",
    "EventAppender",
    "EventStore",
    "FoldKeeper",
    "ForgottenJob",
    "JobReader",
    "QuarantinedEvent",
    "RawEvent",
    "RetentionResult",
    "StoreError",
    "StoreSchemaError",
    "StoreStats",
    "StoreURLError",
    "StoreUnavailableError",
    "StoredEvent",
    "SyncLedger",
    "SyncRecord",
    "configured_store_url",
    "default_store_url",
    "open_store",
    "redact_url",
    "register_store",
]
