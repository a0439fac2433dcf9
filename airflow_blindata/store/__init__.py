"""The event store: a durable, deduplicating log of OpenLineage events between capture and sync.

Contract (every backend): ``append`` returns only after the event is committed; many processes
(and hosts, on PostgreSQL) append at once, and a process killed mid-append leaves the store as
it was; the same event sent twice is stored once (``event_key``); an event that cannot be read
is quarantined with the reason, never dropped; ``events(since=cursor)`` never skips an event,
even one committed late; the schema is created on first use and upgraded in place.

Open a store with ``open_store(url)``: ``sqlite:///path``, ``postgresql://...``,
``airflow-conn://<conn_id>``, or ``None`` for the configured one (``[blindata] store_url``).
More backends: ``register_store(scheme, factory)``. Why: docs/capture.md#the-event-store
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
    StoreMissingError,
    StoreSchemaError,
    StoreStats,
    StoreUnavailableError,
    StoreURLError,
    SyncRecord,
    UnserializableEvent,
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
    "StoreMissingError",
    "StoreSchemaError",
    "StoreStats",
    "StoreURLError",
    "StoreUnavailableError",
    "StoredEvent",
    "SyncLedger",
    "SyncRecord",
    "UnserializableEvent",
    "configured_store_url",
    "default_store_url",
    "open_store",
    "redact_url",
    "register_store",
]
