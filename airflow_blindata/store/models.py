"""What the event store takes and gives back: outcomes, stored rows, statistics, sync records.

Plain frozen dataclasses, so that the sync and the CLI can use them without SQLAlchemy. Times are
timezone-aware UTC. The errors form a small hierarchy::

    StoreError
     ├── StoreURLError           the URL names no known store, or has a bad option
     ├── StoreUnavailableError   the database refused, timed out or failed (disk full, read-only)
     └── StoreSchemaError        the stored schema is newer than this airflow-blindata

Messages never carry a password: URLs are shown with ``***`` in place of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "SYNC_KINDS",
    "SYNC_STATUSES",
    "AppendCounts",
    "AppendOutcome",
    "QuarantinedEvent",
    "RetentionResult",
    "StoreError",
    "StoreMissingError",
    "StoreSchemaError",
    "StoreStats",
    "StoreURLError",
    "StoreUnavailableError",
    "StoredEvent",
    "SyncRecord",
    "UnserializableEvent",
]


class StoreError(Exception):
    """Base class of every error of the event store."""


class StoreURLError(StoreError, ValueError):
    """The store URL names no registered store, or carries an option the store does not know."""


class StoreMissingError(StoreError):
    """A reader asked for a SQLite store whose file does not exist (``open_store(create=False)``):
    a mistyped path must not become an empty store that shows "nothing captured"."""


class StoreUnavailableError(StoreError):
    """The database could not be reached or refused the operation (down, read-only, full)."""


class StoreSchemaError(StoreError):
    """The stored schema is newer than this version of airflow-blindata knows."""


@dataclass(frozen=True, slots=True)
class UnserializableEvent:
    """An event object whose envelope (not a facet) could not be serialized: quarantined with
    ``reason``; ``partial`` (what could be serialized, the rest written as the reason) is kept as
    its raw form and keys it, so that the same event sent again is a duplicate."""

    partial: dict[str, Any]
    reason: str


class AppendOutcome(StrEnum):
    """What ``append`` did with one event."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    QUARANTINED = "quarantined"


@dataclass(slots=True)
class AppendCounts:
    """What ``append_many`` did, event by event."""

    accepted: int = 0
    duplicate: int = 0
    quarantined: int = 0
    quarantine_reasons: dict[int, str] = field(default_factory=dict)
    """Why each quarantined event was, by its position among the events given to
    ``append_many``: a producer learns which of its batch the store kept aside."""

    def add(
        self, outcome: AppendOutcome, *, position: int | None = None, reason: str | None = None
    ) -> None:
        if outcome is AppendOutcome.ACCEPTED:
            self.accepted += 1
        elif outcome is AppendOutcome.DUPLICATE:
            self.duplicate += 1
        else:
            self.quarantined += 1
            if position is not None:
                self.quarantine_reasons[position] = reason or "quarantined"

    def __iadd__(self, other: AppendCounts) -> AppendCounts:
        self.accepted += other.accepted
        self.duplicate += other.duplicate
        self.quarantined += other.quarantined
        self.quarantine_reasons.update(other.quarantine_reasons)
        return self

    @property
    def total(self) -> int:
        return self.accepted + self.duplicate + self.quarantined


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One stored event. ``id`` is the cursor: it grows in the order events become readable."""

    id: int
    key: str
    received_at: datetime
    event_time: datetime | None
    kind: str
    job_namespace: str | None
    job_name: str | None
    run_id: str | None
    event_type: str | None
    payload: dict[str, Any] | str
    """The event's JSON object; its text when it nests too deeply to decode (``sql._payload``)."""
    source: str = "transport"


@dataclass(frozen=True, slots=True)
class QuarantinedEvent:
    """An event that could not be read at all, kept with the reason (``raw`` is its text)."""

    id: int
    key: str
    received_at: datetime
    source: str
    reason: str
    raw: str


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What the store holds (``airflow-blindata store stats``)."""

    url: str
    backend: str
    schema_version: int
    events: int
    jobs: int
    events_by_namespace: dict[str, int]
    events_by_kind: dict[str, int]
    oldest_received_at: datetime | None
    newest_received_at: datetime | None
    oldest_event_time: datetime | None
    newest_event_time: datetime | None
    last_id: int
    quarantined: int
    sync_records: int
    size_bytes: int | None


@dataclass(frozen=True, slots=True)
class RetentionResult:
    """What ``retain`` removed, and what it kept past the age because a job is still described."""

    events_removed: int = 0
    jobs_dropped: int = 0
    events_kept_for_described_jobs: int = 0
    quarantine_removed: int = 0


@dataclass(frozen=True, slots=True)
class ForgottenJob:
    """What ``forget_job`` found of one job (and removed, unless it was a dry run)."""

    namespace: str
    name: str
    events: int = 0
    runs: int = 0
    first_received: datetime | None = None
    last_received: datetime | None = None
    removed: bool = False


SYNC_KINDS = frozenset({"snapshot", "cleanup", "light"})
"""``light``: a light sync (``sync.runner.run_light``), which publishes the jobs that received
events since the last sync and removes nothing; cleanup never takes it for a snapshot."""
SYNC_STATUSES = frozenset({"success", "failed", "refused", "dry_run"})


@dataclass(frozen=True, slots=True)
class SyncRecord:
    """One snapshot or cleanup of a job definition, as the sync history keeps it."""

    definition_uuid: str
    kind: str
    started_at: datetime
    finished_at: datetime
    status: str
    report: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in SYNC_KINDS:
            raise ValueError(f"sync kind {self.kind!r} is not one of {sorted(SYNC_KINDS)}")
        if self.status not in SYNC_STATUSES:
            raise ValueError(f"sync status {self.status!r} is not one of {sorted(SYNC_STATUSES)}")
