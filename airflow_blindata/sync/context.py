"""The state one sync run carries from phase to phase, and its batched writes.

Every write goes through ``upload`` or ``attempt`` here, so that the rule "a refused object is
recorded and the rest applied" is written once: a row Blindata discards, a batch it refuses, or a
single call that fails, becomes a failure of its kind in the report, and the run goes on. A
refusal of the credentials or of a permission stops a phase early, because every further request
of that phase would be refused the same way.

An outage is not a refusal: ``WriteWatch`` tells them apart from the client's side (it sees every
operation with its method and outcome) and stops the snapshot with ``OutageError`` when
Blindata cannot take writes, instead of paying the retry deadline once per batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol, TypeVar

from airflow_blindata.blindata import (
    BlindataAuthError,
    BlindataClient,
    BlindataConflictError,
    BlindataDeadlineError,
    BlindataError,
    BlindataNotFoundError,
    BlindataPermissionError,
    BlindataRequestError,
    BlindataServerError,
    BlindataStatusError,
    UploadReport,
)
from airflow_blindata.blindata.models import WireModel
from airflow_blindata.blindata.paths import Endpoint
from airflow_blindata.definition import JobDefinition
from airflow_blindata.sync.progress import Progress
from airflow_blindata.sync.report import RunReport

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "LIST_PAGE_SIZE",
    "PER_OBJECT_LOOKUP_LIMIT",
    "OutageError",
    "SyncContext",
    "UploadTally",
    "WriteWatch",
    "check_batch_size",
]

DEFAULT_BATCH_SIZE = 500
"""Rows per upload request; the contract sets no limit, this keeps a request under a few MB."""
LIST_PAGE_SIZE = 1000
"""Items per page when reading a whole System: the contract's cap, fewest requests."""
PER_OBJECT_LOOKUP_LIMIT = 50
"""Up to this many described objects on a System are looked up one by one; more, and the whole
System is listed instead. One request per object is cheaper on a large crawled System that the
job touches at a few tables; listing is cheaper when the job describes many of them."""

log = logging.getLogger(__name__)


def check_batch_size(batch_size: object) -> int:
    """``batch_size`` when it is a positive whole number, else a ``ValueError`` naming it: a
    batch of 0 rows ended the upload loop at once (nothing uploaded, every row counted done,
    the run a success), and a ``"500"`` failed mid-sync with Python's words (a probe)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive whole number, got {batch_size!r}")
    return batch_size


T = TypeVar("T")


class _Stored(Protocol):
    @property
    def uuid(self) -> str | None: ...


StoredT = TypeVar("StoredT", bound=_Stored)
StoredT_co = TypeVar("StoredT_co", bound=_Stored, covariant=True)


class OutageError(Exception):
    """Blindata cannot be used for this run: the sync stops and reports ``failed``.

    Deliberately not a ``BlindataError``: the phases record a ``BlindataError`` as a failure of
    one object and go on, which is right for a refused object and wrong for an outage.
    """

    def __init__(self, error: BlindataError, *, write: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.write = write
        """Whether a write failed (rather than a read)."""


def _lost(error: BlindataError) -> bool:
    """An error that says nothing about the object: Blindata failed (5xx) or did not answer."""
    return isinstance(error, BlindataServerError | BlindataRequestError)


@dataclass
class WriteWatch:
    """Watches every operation of the client (``BlindataClient.observer``) during a snapshot.

    Blindata cannot take writes when

    * an operation was given up at the retry deadline (``BlindataDeadlineError``): it answered
      5xx or 429, or nothing, for the whole deadline, and every further batch would wait as long.
      The watch raises ``OutageError`` at once (a read given up so is the same outage);
    * or a phase ends in which no write got through and at least one was lost to a 5xx answer or
      a lost connection (``end_phase``): a create is not retried on those (it may have landed),
      so an outage shows as fast failures, one per create, and nothing else.

    A write Blindata refuses with a 4xx (a bad row, a conflict) is about that object: the run
    goes on, and ends ``partial``.
    """

    writes: int = 0
    """Writes that got through in the current phase."""
    lost: BlindataError | None = None
    """The last write of the current phase lost to a 5xx or a lost connection."""

    def __call__(self, endpoint: Endpoint, error: BlindataError | None) -> None:
        write = endpoint.method != "GET"
        if isinstance(error, BlindataDeadlineError):
            raise OutageError(error, write=write)
        if not write:
            return
        if error is None:
            self.writes += 1
        elif _lost(error):
            self.lost = error

    def end_phase(self) -> None:
        """Raise ``OutageError`` when the phase could not write; start the next one."""
        lost, wrote = self.lost, self.writes
        self.writes, self.lost = 0, None
        if lost is not None and not wrote:
            raise OutageError(lost, write=True)


class Uploader(Protocol):
    def upload(self, rows: Iterable[Any], *, batch_size: int | None = None) -> UploadReport: ...


class Deleter(Protocol):
    def delete(self, uuid: str) -> None: ...


class Getter(Protocol[StoredT_co]):
    def get(self, uuid: str) -> StoredT_co: ...


_NOT_READ_BY_UUID = (404, 405, 501)
"""What a Blindata answers when it does not serve an object by uuid (the item paths of entities,
fields and checks are inferred), or when the object went since it was listed."""


@dataclass
class UploadTally:
    """What a batched upload did: server counts, and the keys of the rows that failed."""

    created: int = 0
    updated: int = 0
    failed: set[str] = field(default_factory=set)


@dataclass
class SyncContext:
    client: BlindataClient
    definition: JobDefinition
    report: RunReport
    progress: Progress = field(default_factory=Progress)
    batch_size: int = DEFAULT_BATCH_SIZE
    lookup_limit: int = PER_OBJECT_LOOKUP_LIMIT
    light: bool = False
    """A light sync: it publishes some jobs only, so it judges nothing by what the plan leaves
    out (the quality phase disables no check of a job it does not describe)."""
    store_id: str | None = None
    """The event store's id (``EventStore.store_id``): stamped on the job entities written, read
    by a cleanup to tell another store's jobs from its own."""
    analysed_statements: dict[str, set[str]] = field(default_factory=dict)
    """Job scope → the uuids of its statements Blindata has ANALYZED: the column flows their
    analysis derived supersede the producer's column flows into the same fields (seed 001
    precedence, rank 1), and only those (``flows.py``)."""

    def __post_init__(self) -> None:
        check_batch_size(self.batch_size)

    @property
    def owner(self) -> str:
        """The value of ``openLineageOwner`` on what this definition creates."""
        return self.definition.uuid

    def upload(
        self, collection: Uploader, rows: Iterable[tuple[str, WireModel]], *, kind: str
    ) -> UploadTally:
        """Upload ``(key, row)`` pairs in batches; failures are recorded under ``kind``.

        ``rows`` is consumed one batch at a time, so a generator keeps only one batch of wire
        models in memory however large the catalog.
        """
        tally = UploadTally()
        pending = iter(rows)
        refusal: BlindataError | None = None
        while batch := list(islice(pending, self.batch_size)):
            if refusal is not None:  # the credentials or a permission were refused: skip
                for key, _ in batch:
                    self._failed(tally, kind, key, str(refusal))
                self.progress.advance(len(batch))
                continue
            try:
                result = collection.upload([row for _, row in batch], batch_size=len(batch))
            except OutageError as exc:  # the run stops; the batch in flight is what it lost
                for key, _ in batch:
                    self._failed(tally, kind, key, str(exc.error))
                raise
            except (BlindataAuthError, BlindataPermissionError) as exc:
                refusal = exc
                for key, _ in batch:
                    self._failed(tally, kind, key, str(exc))
            except BlindataError as exc:
                for key, _ in batch:
                    self._failed(tally, kind, key, str(exc))
            else:
                tally.created += result.created
                tally.updated += result.updated
                if result.unaccounted:
                    self.report.count("rowsUnaccounted", result.unaccounted)
                for error in result.errors:
                    self._failed(tally, kind, batch[error.index][0], error.message)
            self.progress.advance(len(batch))
        return tally

    def _failed(self, tally: UploadTally, kind: str, key: str, message: str) -> None:
        tally.failed.add(key)
        self.report.fail(kind, key, message)

    def attempt(self, kind: str, key: str, call: Callable[[], T]) -> T | None:
        """Run one call; on a Blindata error record it under ``kind`` and return ``None``."""
        try:
            return call()
        except OutageError as exc:
            self.report.fail(kind, key, str(exc.error))
            raise
        except BlindataError as exc:
            self.report.fail(kind, key, str(exc))
            return None

    def as_stored(
        self, collection: Getter[StoredT], listed: StoredT, kind: str, key: str
    ) -> StoredT | None:
        """``listed`` as Blindata holds it, read by its uuid before a PUT is made of it.

        A PUT replaces the whole object, and the contract names a listing's fields, not that its
        items are whole: a PUT of a listed summary would blank what the listing left out (a
        person's description, a crawler's type). ``listed`` itself when Blindata does not read
        it by uuid (``_NOT_READ_BY_UUID``; the PUT then says whether it went); ``None``, recorded
        under ``kind``, when the read failed otherwise.
        """
        uuid = listed.uuid
        if not uuid:
            return listed

        def read() -> StoredT:
            try:
                return collection.get(uuid)
            except BlindataStatusError as exc:
                if exc.status not in _NOT_READ_BY_UUID:
                    raise
                log.info("Blindata does not read %s %s by uuid (%s): as listed", kind, key, exc)
                return listed

        return self.attempt(kind, key, read)

    def landed(self) -> None:
        """A create whose answer was lost (5xx, a dropped connection) is found in Blindata: the
        write got through. ``WriteWatch`` counts it as such; without it, a phase whose only
        write was that create looked like an outage, and the snapshot failed."""
        if isinstance(self.client.observer, WriteWatch):
            self.client.observer.writes += 1

    def created(
        self, kind: str, key: str, created: StoredT | None, find: Callable[[], StoredT | None]
    ) -> StoredT | None:
        """``created`` when the answer gave its uuid; else (a create answered without a body,
        which the contract allows) the object as ``find`` lists it, a failure when it does not."""
        if created is None or created.uuid:
            return created
        found = self.attempt(kind, key, find)
        if found is None:
            self.report.fail(kind, key, "created, but Blindata does not list it")
        return found

    def create_or_find(
        self,
        kind: str,
        key: str,
        create: Callable[[], StoredT | None],
        find: Callable[[], StoredT | None],
    ) -> StoredT | None:
        """Create one object: as answered, or as ``find`` lists it when the create failed (409:
        created meanwhile; or it landed and its answer was lost, a write that got through,
        ``landed``) or was answered without a body (``created``); a failure when it is not
        listed."""
        try:
            made = create()
        except BlindataError as exc:
            found = self.attempt(kind, key, find)
            if found is None:
                self.report.fail(kind, key, str(exc))
            elif not isinstance(exc, BlindataConflictError):
                self.landed()
            return found
        return self.created(kind, key, made, find)

    def delete(
        self,
        collection: Deleter,
        kind: str,
        key: str,
        uuid: str | None,
        failed: list[str] | None = None,
    ) -> bool:
        """Delete one object; True when it is gone (404 counts: something removed it first).
        Why it could not be is reported, or appended to ``failed`` for the caller to judge."""
        self.progress.advance()
        if not uuid:
            return False
        try:
            collection.delete(uuid)
        except BlindataNotFoundError:
            return True
        except BlindataError as exc:
            if failed is None:
                self.report.fail(kind, key, str(exc))
            else:
                failed.append(str(exc))
            return False
        return True
