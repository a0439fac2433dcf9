"""The interface every event store implements, whatever database is under it.

Capture appends, the sync reads by cursor and job and keeps each job's fold and SQL hashes,
retention prunes, a quarantine holds what could not be stored, and the sync history records each
snapshot and cleanup: one interface for SQLite and PostgreSQL (``EventStore``, the whole).
A caller that needs one part of it names that role: ``EventAppender`` (capture, the receiver),
``SyncLedger`` (the sync history and lock), ``JobReader`` and ``FoldKeeper`` (the mapping).
Stores are opened by URL through the registry (``airflow_blindata.store.open_store``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .models import (
    AppendCounts,
    AppendOutcome,
    ForgottenJob,
    QuarantinedEvent,
    RetentionResult,
    StoredEvent,
    StoreStats,
    SyncRecord,
    UnserializableEvent,
)

__all__ = [
    "STALE_FOLDS_AFTER",
    "EventAppender",
    "EventStore",
    "FoldKeeper",
    "JobReader",
    "RawEvent",
    "SyncLedger",
    "TimeSlice",
    "ordered_slices",
    "time_slices",
]

RawEvent = Mapping[str, Any] | str | bytes | UnserializableEvent
"""An event as received: a decoded JSON object, or its JSON text (or capture's word that its
envelope could not be serialized: quarantined)."""

E = TypeVar("E")


class TimeSlice(NamedTuple, Generic[E]):
    """A slice of one job's events in time (``time_slices``): its events (cursors, texts or
    decoded events), and the runs that go on after it, with events in it or before it and in a
    later slice (a reader holds them whole until their last slice: ``mapper.fold.slices``)."""

    events: list[E]
    going_on: frozenset[str]


STALE_FOLDS_AFTER = timedelta(days=7)
"""Folds kept under settings that no snapshot used for this long are dropped: at worst a
definition that comes back after a week reads its jobs' events once more."""


class StoreRole(Protocol):
    """What every role of the store has: its URL, safe for logs, and ``close``."""

    url: str

    def close(self) -> None: ...


class EventAppender(StoreRole, Protocol):
    """Appending events (capture, the receiver, ``ingest``): see ``EventStore.append``."""

    def append(self, event: RawEvent, *, source: str = "transport") -> AppendOutcome: ...

    def append_many(self, events: Iterable[Any], *, source: str = "ingest") -> AppendCounts: ...


class SyncLedger(StoreRole, Protocol):
    """The sync history and the definition's sync lock (``sync.runner``, the operators, the UI)."""

    def record_sync(self, record: SyncRecord) -> None: ...

    def sync_history(
        self, definition_uuid: str, *, kind: str | None = None, limit: int = 20
    ) -> list[SyncRecord]: ...

    def acquire_sync_lock(
        self, definition_uuid: str, holder: str, *, ttl: timedelta
    ) -> str | None: ...

    def release_sync_lock(self, definition_uuid: str, holder: str) -> None: ...

    def store_id(self) -> str | None: ...


class JobReader(StoreRole, Protocol):
    """Reading stored events by cursor and job, and the jobs with their digests (the mapping)."""

    def last_id(self) -> int: ...

    def events(
        self,
        *,
        since: int | None = None,
        job: tuple[str, str] | None = None,
        received_after: datetime | None = None,
        until: int | None = None,
    ) -> Iterator[StoredEvent]: ...

    def events_by_job(
        self,
        jobs: Iterable[tuple[str, str]],
        *,
        until: int | None = None,
        after: int | None = None,
    ) -> Iterator[tuple[tuple[str, str], list[str]]]: ...

    def job_slices(
        self,
        job: tuple[str, str],
        *,
        until: int | None = None,
        after: int | None = None,
        size: int = 1000,
        newest_first: bool = False,
    ) -> Iterator[TimeSlice[str]]: ...

    def dataset_events(self, *, until: int | None = None) -> Iterator[StoredEvent]: ...

    def job_digests(self, *, until: int | None = None) -> dict[tuple[str, str], str]: ...

    def digest_count(self, digest: str) -> int | None: ...

    def jobs_since(self, after: int, *, until: int | None = None) -> set[tuple[str, str]]: ...


class FoldKeeper(StoreRole, Protocol):
    """What a snapshot keeps between runs: each job's fold and the SQL hash memo (the mapping)."""

    def folded_jobs(
        self, settings: str, jobs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, str]]: ...

    def keep_folded_jobs(
        self, settings: str, folds: Iterable[tuple[tuple[str, str], str, str]]
    ) -> None: ...

    def forget_folded_jobs(
        self, settings: str, keep: Iterable[tuple[str, str]], *, now: datetime | None = None
    ) -> None: ...

    def sql_hashes(self) -> dict[str, str]: ...

    def keep_sql_hashes(self, memo: Mapping[str, str]) -> None: ...


class EventStore(EventAppender, SyncLedger, JobReader, FoldKeeper, ABC):
    """A durable, deduplicating, append-only log of OpenLineage events: every role at once.

    Contract (every implementation):

    * ``append`` returns only once the event is committed; a duplicate (same ``event_key``) is
      dropped; an event ``parse_event`` cannot read is quarantined with the reason, never lost.
    * Many processes, and with PostgreSQL many hosts, may append at once.
    * ``events`` yields in cursor order, and a cursor never skips an event committed later.
    """

    url: str
    """The store's URL with any password replaced by ``***``: safe for logs."""

    @abstractmethod
    def append(self, event: RawEvent, *, source: str = "transport") -> AppendOutcome:
        """Store one event, committed before this returns."""

    @abstractmethod
    def append_many(self, events: Iterable[Any], *, source: str = "ingest") -> AppendCounts:
        """Store many events (committed in batches), counting what happened to each."""

    @abstractmethod
    def events(
        self,
        *,
        since: int | None = None,
        job: tuple[str, str] | None = None,
        received_after: datetime | None = None,
        until: int | None = None,
    ) -> Iterator[StoredEvent]:
        """Stored events with ``since < id <= until``, of one job (namespace, name), in cursor
        order."""

    def events_by_job(
        self,
        jobs: Iterable[tuple[str, str]],
        *,
        until: int | None = None,
        after: int | None = None,
    ) -> Iterator[tuple[tuple[str, str], list[str]]]:
        """The JSON text of each of ``jobs``' events with ``after < cursor <= until``, one job
        after the other.

        For a reader that decodes the events itself (a snapshot's mapping). Each job's texts
        come in cursor order; a job with no events is left out. This default asks job by job;
        a database store reads many small jobs per query.
        """
        for job in jobs:
            found = self.events(job=job, since=after, until=until)
            texts = [_text(event) for event in found]
            if texts:
                yield job, texts

    def job_slices(
        self,
        job: tuple[str, str],
        *,
        until: int | None = None,
        after: int | None = None,
        size: int = 1000,
        newest_first: bool = False,
    ) -> Iterator[TimeSlice[str]]:
        """The JSON texts of one job's events with ``after < cursor <= until``, in slices of
        about ``size`` in event-time order (``time_slices``): for a reader that folds a long
        history a slice at a time, holding one slice in memory, not the history. With
        ``newest_first``, the same slices from the newest back (``mapper.fold.slices`` reads them so
        for the report). This default reads the job's events at once; a database store reads a
        slice at a time.
        """
        found = list(self.events(job=job, since=after, until=until))
        by_cursor = {event.id: _text(event) for event in found}
        listing = [(event.id, event.event_time, event.run_id) for event in found]
        for cursors, going_on in ordered_slices(time_slices(listing, size), newest_first):
            yield TimeSlice([by_cursor[cursor] for cursor in cursors], going_on)

    @abstractmethod
    def dataset_events(self, *, until: int | None = None) -> Iterator[StoredEvent]:
        """The stored DatasetEvents (they have no job), in cursor order, up to ``until``."""

    @abstractmethod
    def job_digests(self, *, until: int | None = None) -> dict[tuple[str, str], str]:
        """Every job with events up to cursor ``until``, sorted, with a digest of its events.

        The digest changes whenever an event of the job is added or removed (retention). A
        snapshot reads the store job by job from this list (``plans.store``), so that its memory
        follows the catalog, not the history; the SQL stores keep the list between calls and add
        only the events past it (``digests``), so that its time follows what is new.
        """

    def digest_count(self, digest: str) -> int | None:
        """How many events a digest of ``job_digests`` counts, or ``None`` when it does not say.

        A snapshot that kept a job's fold made of ``n`` events up to a cursor, and now reads
        ``k`` events past it, adds them to the fold only when the job's digest counts ``n + k``
        (none of the folded events was removed meanwhile); otherwise it reads every event of
        the job. This default never says.
        """
        return None

    def jobs_since(self, after: int, *, until: int | None = None) -> set[tuple[str, str]]:
        """The jobs with an event whose cursor is in ``after < cursor <= until``: what a light
        sync publishes (``sync.runner.run_light``). This default reads those events; a
        database store asks for the distinct jobs on the cursor's index."""
        return {
            (event.job_namespace, event.job_name)
            for event in self.events(since=after, until=until)
            if event.job_namespace is not None and event.job_name is not None
        }

    def acquire_sync_lock(self, definition_uuid: str, holder: str, *, ttl: timedelta) -> str | None:
        """Take the sync lock of a job definition for ``holder`` (``"<kind> <id>"``) until
        ``ttl`` from now, unless another holder has it and it has not expired: ``None`` when
        taken, else who holds it (and until when). A light sync and a full one (snapshot and
        cleanup) of one definition take it, so that they never run at once, whichever DAG or
        command runs them. This default (a store without a lock) always grants it."""
        return None

    def release_sync_lock(self, definition_uuid: str, holder: str) -> None:
        """Give the lock back, if ``holder`` still has it (this default: nothing to give)."""
        return None

    def store_id(self) -> str | None:
        """This store's own id, made once: the syncs stamp it on the job entities they write,
        so that a cleanup tells a job another store's sync wrote under the same definition
        uuid from one it no longer describes. This default (a store without one): ``None``."""
        return None

    @abstractmethod
    def folded_jobs(
        self, settings: str, jobs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, str]]:
        """The kept folds of ``jobs`` under ``settings``: job → (digest of its events, text).

        Jobs with no kept fold are absent. Callers ask for a few hundred jobs at a time.
        """

    @abstractmethod
    def keep_folded_jobs(
        self, settings: str, folds: Iterable[tuple[tuple[str, str], str, str]]
    ) -> None:
        """Keep (job, digest, text) folds under ``settings``, replacing those of the same jobs."""

    @abstractmethod
    def forget_folded_jobs(
        self, settings: str, keep: Iterable[tuple[str, str]], *, now: datetime | None = None
    ) -> None:
        """Drop the kept folds under ``settings`` of every job not in ``keep``, and every fold
        kept under settings that no snapshot used for ``STALE_FOLDS_AFTER`` (before ``now``).

        Settings change with the release and with a definition's quality switches, so an
        upgrade would otherwise leave a whole copy of the catalog's folds behind; two
        definitions sharing a store keep theirs apart and both stay, while both are used."""

    @abstractmethod
    def sql_hashes(self) -> dict[str, str]:
        """The SQL hash memo kept by the last snapshot (digest of the text → hash)."""

    @abstractmethod
    def keep_sql_hashes(self, memo: Mapping[str, str]) -> None:
        """Replace the SQL hash memo by ``memo``: what the latest snapshot used, nothing older."""

    @abstractmethod
    def last_id(self) -> int:
        """The cursor of the newest readable event (0 when there is none)."""

    @abstractmethod
    def quarantine(self) -> Iterator[QuarantinedEvent]:
        """The quarantined events, oldest first."""

    @abstractmethod
    def stats(self) -> StoreStats:
        """What the store holds."""

    @abstractmethod
    def retain(
        self, *, raw_events_days: int, job_described_for_days: int, now: datetime | None = None
    ) -> RetentionResult:
        """Remove events past ``raw_events_days``, but never the latest description of a job
        that is still described (an event within ``job_described_for_days``): the events of its
        latest run and of its latest completed run (with the runs of their parent run) and its
        latest JobEvent stay. A job with nothing newer than
        ``job_described_for_days`` is dropped entirely. Ages count from when the store received
        an event. Quarantined events past ``raw_events_days`` go too.
        """

    def forget_job(self, namespace: str, name: str, *, dry_run: bool = True) -> ForgottenJob:
        """The events this store holds of one job; without ``dry_run`` they are removed, so
        that the next snapshot no longer describes the job and the cleanup after it removes
        what the definition created for it (``airflow-blindata store forget-job``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot forget a job")

    @abstractmethod
    def record_sync(self, record: SyncRecord) -> None:
        """Add a snapshot or cleanup to the sync history."""

    @abstractmethod
    def sync_history(
        self, definition_uuid: str, *, kind: str | None = None, limit: int = 20
    ) -> list[SyncRecord]:
        """The latest ``limit`` records of a job definition, newest first."""

    @abstractmethod
    def close(self) -> None:
        """Release connections. The store must not be used afterwards."""

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"


def time_slices(
    events: Iterable[tuple[int, Any, str | None]], size: int
) -> Iterator[TimeSlice[int]]:
    """The cursors of ``(cursor, event time, run id)`` in event-time order (cursor order within
    one time; events without a time first), cut in slices that end only where the time
    changes: every event of a slice is no later than every event of the next one, and strictly
    earlier where the times are known, which adding a slice to the fold of the ones before asks
    (``mapper.fold.extend_folded``). Each slice comes with the runs that go on across its end.

    A slice ends once it holds ``size`` events, where no run goes on across the cut (such a run
    is held whole until its last slice), or, failing such a place within another ``size``
    events, at the next change of time (a streaming job's one long run, or runs that overlap,
    go on across every cut). A time is anything that orders as the time does, all of one type:
    a ``datetime``, or the text SQLite keeps of it. Were they in another order, the fold would
    find an event not later than those before it, and the job would be read at once."""
    given = list(events)
    ordered = sorted(
        (item for item in given if item[1] is None), key=lambda item: item[0]
    ) + sorted((item for item in given if item[1] is not None), key=lambda item: (item[1], item[0]))
    last = {run: index for index, (_, _, run) in enumerate(ordered) if run is not None}
    going_on: set[str] = set()
    current: list[int] = []
    for index, (cursor, time, run) in enumerate(ordered):
        if current and time != ordered[index - 1][1]:
            full = len(current) >= size
            if (full and not going_on) or len(current) >= 2 * size:
                yield TimeSlice(current, frozenset(going_on))
                current = []
        current.append(cursor)
        if run is not None:
            if last[run] > index:
                going_on.add(run)
            else:
                going_on.discard(run)
    if current:
        yield TimeSlice(current, frozenset())


def ordered_slices(slices: Iterable[TimeSlice[E]], newest_first: bool) -> Iterable[TimeSlice[E]]:
    """``time_slices`` as they come, or from the newest back (their cursors are few: a slice's
    events are read only when it is its turn)."""
    return list(slices)[::-1] if newest_first else slices


def _text(event: StoredEvent) -> str:
    """An event's JSON text (its payload is that text already when it nests too deeply to
    decode)."""
    return event.payload if isinstance(event.payload, str) else json.dumps(event.payload)
