"""The state one sync run carries from phase to phase, and its batched writes.

Every write goes through ``upload`` or ``attempt`` here, so that the rule "a refused object is
recorded and the rest applied" is written once: a row Blindata discards, a batch that fails after
the client's retries, or a single call that fails, becomes a failure of its kind in the report,
and the run goes on. Only a refusal of the credentials or of a permission stops a phase early,
because every further request of that phase would be refused the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol, TypeVar

from airflow_blindata.blindata import (
    BlindataAuthError,
    BlindataClient,
    BlindataError,
    BlindataNotFoundError,
    BlindataPermissionError,
    UploadReport,
)
from airflow_blindata.blindata.models import WireModel
from airflow_blindata.config import JobDefinition
from airflow_blindata.sync.progress import Progress
from airflow_blindata.sync.report import RunReport

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "LIST_PAGE_SIZE",
    "PER_OBJECT_LOOKUP_LIMIT",
    "SyncContext",
    "UploadTally",
]

DEFAULT_BATCH_SIZE = 500
"""Rows per upload request; the contract sets no limit, this keeps a request under a few MB."""
LIST_PAGE_SIZE = 1000
"""Items per page when reading a whole System: the contract's cap, fewest requests."""
PER_OBJECT_LOOKUP_LIMIT = 50
"""Up to this many described objects on a System are looked up one by one; more, and the whole
System is listed instead. One request per object is cheaper on a large crawled System that the
job touches at a few tables; listing is cheaper when the job describes many of them."""

T = TypeVar("T")


class Uploader(Protocol):
    def upload(self, rows: Iterable[Any], *, batch_size: int | None = None) -> UploadReport: ...


class Deleter(Protocol):
    def delete(self, uuid: str) -> None: ...


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
    analysed_jobs: set[str] = field(default_factory=set)
    """Scopes of the jobs whose SQL Blindata has analysed: its flows supersede the mapper's
    column flows of those jobs (seed 001 precedence, rank 1)."""

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
        except BlindataError as exc:
            self.report.fail(kind, key, str(exc))
            return None

    def delete(self, collection: Deleter, kind: str, key: str, uuid: str | None) -> bool:
        """Delete one object; True when it is gone (404 counts: something removed it first)."""
        self.progress.advance()
        if not uuid:
            return False
        try:
            collection.delete(uuid)
        except BlindataNotFoundError:
            return True
        except BlindataError as exc:
            self.report.fail(kind, key, str(exc))
            return False
        return True
