"""Batched uploads and their counts, row by row: ``Uploader.upload`` → ``UploadReport``.

An upload is an upsert by natural key, sent in batches. The server's counts are accounted
against what was sent: a row it names in ``errors`` is discarded, a row it counts as discarded
without naming it is found by sending the unnamed rows again in halves, and a batch whose
counts fall short is taken as not written. A batch refused whole for what some rows hold
(400, 409, 422) or as too large (413) is split in halves, so one bad row never costs the others.
No row passes for written that may not be: the sync and the cleanup rely on the report.
The uploader needs of the client only ``call`` (``Calls``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from airflow_blindata.blindata.errors import (
    BlindataConfigError,
    BlindataContractError,
    BlindataStatusError,
)
from airflow_blindata.blindata.models import UploadResponse, WireModel
from airflow_blindata.blindata.paths import Endpoint

__all__ = ["DEFAULT_UPLOAD_BATCH_SIZE", "Calls", "RowError", "UploadReport", "Uploader"]

DEFAULT_UPLOAD_BATCH_SIZE = 500
"""Rows per upload request."""

ModelT = TypeVar("ModelT", bound=BaseModel)

_ROW_REFUSALS = (400, 409, 422)
"""Statuses of an upload refused whole for what some of its rows hold: invalid (400, 422), or
a natural key taken (409: the contract's status of a duplicate natural key, from a server that
applies an upload in one transaction). Split, the other rows pass."""


class Calls(Protocol):
    """One operation whose answer is read as a model, retried and watched as the client does."""

    def call(
        self,
        endpoint: Endpoint,
        model: type[ModelT],
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> ModelT: ...


@dataclass(frozen=True, slots=True)
class RowError:
    """One row that the server discarded, with its position in the whole upload."""

    index: int
    message: str
    row: WireModel = field(repr=False)


@dataclass(slots=True)
class UploadReport:
    """What an upload did, row by row: counts from the server, and every discarded row."""

    created: int = 0
    updated: int = 0
    discarded: int = 0
    unaccounted: int = 0
    """Rows the server's counts left out (created + updated + discarded short of what was
    sent): each unnamed row of such a batch is in ``errors``, taken as not written."""
    errors: list[RowError] = field(default_factory=list)
    requests: int = 0

    @property
    def accepted(self) -> int:
        return self.created + self.updated


class Uploader:
    """Uploads rows in batches through ``calls`` and accounts for each of them."""

    def __init__(self, calls: Calls) -> None:
        self._calls = calls

    def upload(
        self,
        endpoint: Endpoint,
        rows: Iterable[WireModel],
        *,
        batch_size: int = DEFAULT_UPLOAD_BATCH_SIZE,
        params: Mapping[str, Any] | None = None,
    ) -> UploadReport:
        """Upload ``rows`` in batches; a refused row is reported, the others are applied.

        The server reports bad rows in ``errors`` and applies the rest. When it refuses a whole
        batch instead (400, 409 or 422: ``_ROW_REFUSALS``), the batch is split in halves until
        the bad rows are alone, so one bad row never costs the others. A batch refused as too
        large (413: the limit of the server, or of a proxy in front of it, on a request's body)
        is split in halves the same way, until each request fits; a single row too large for
        any request is reported.
        """
        if batch_size < 1:
            raise BlindataConfigError(f"batch_size must be at least 1, got {batch_size}")
        report = UploadReport()
        batch: list[WireModel] = []
        offset = 0
        for row in rows:
            batch.append(row)
            if len(batch) == batch_size:
                self._upload_batch(endpoint, batch, offset, params, report)
                offset += len(batch)
                batch = []
        if batch:
            self._upload_batch(endpoint, batch, offset, params, report)
        return report

    def _upload_batch(
        self,
        endpoint: Endpoint,
        batch: Sequence[WireModel],
        offset: int,
        params: Mapping[str, Any] | None,
        report: UploadReport,
    ) -> None:
        report.requests += 1
        try:
            answer = self._calls.call(
                endpoint, UploadResponse, params=params, json=[row.to_wire() for row in batch]
            )
        except BlindataStatusError as exc:
            if exc.status not in _ROW_REFUSALS and not exc.too_large:
                raise
            if len(batch) == 1:
                report.discarded += 1
                report.errors.append(RowError(offset, exc.server_message or str(exc), batch[0]))
                return
            half = len(batch) // 2
            self._upload_batch(endpoint, batch[:half], offset, params, report)
            self._upload_batch(endpoint, batch[half:], offset + half, params, report)
            return
        report.created += answer.row_created
        report.updated += answer.row_updated
        named: set[int] = set()
        for row_error in answer.errors:
            if 0 <= row_error.index < len(batch):
                row = batch[row_error.index]
                named.add(row_error.index)
                report.errors.append(RowError(offset + row_error.index, row_error.message, row))
            else:
                raise BlindataContractError(
                    f"{endpoint.method} {endpoint.template} reported an error for row "
                    f"{row_error.index} of a batch of {len(batch)}: {row_error.message}",
                    operation=f"{endpoint.method} {endpoint.template}",
                )
        report.discarded += len(named)
        unnamed = [(offset + i, row) for i, row in enumerate(batch) if i not in named]
        counted = answer.row_created + answer.row_updated + max(answer.row_discarded, len(named))
        if answer.counted and counted < len(batch):
            _unaccounted(endpoint, answer, len(batch), unnamed, report)
        elif answer.row_discarded > len(named):
            self._locate_discarded(endpoint, unnamed, params, report, answer.message)

    def _locate_discarded(
        self,
        endpoint: Endpoint,
        rows: Sequence[tuple[int, WireModel]],
        params: Mapping[str, Any] | None,
        report: UploadReport,
        message: str | None,
    ) -> None:
        """Find the rows an answer counted in ``rowDiscarded`` without naming them in
        ``errors`` (the contract's answer may leave ``errors`` out).

        A row counted as discarded and not named must not pass for written: a flow whose
        refresh was discarded would look described, and cleanup would remove it as stale. An
        upload is an upsert by natural key, so the unnamed rows are sent again in halves, until
        each discarded one is alone and known by its index. The counts of these repeated
        uploads are not added: their rows were counted by the first answer.
        """
        if len(rows) == 1:
            index, row = rows[0]
            reason = message or "discarded by Blindata, which did not say why"
            report.discarded += 1
            report.errors.append(RowError(index, reason, row))
            return
        for part in (rows[: len(rows) // 2], rows[len(rows) // 2 :]):
            again = UploadReport()
            self._upload_batch(endpoint, [row for _, row in part], 0, params, again)
            report.requests += again.requests
            report.discarded += again.discarded
            report.errors += [
                RowError(part[error.index][0], error.message, error.row) for error in again.errors
            ]


def _unaccounted(
    endpoint: Endpoint,
    answer: UploadResponse,
    sent: int,
    unnamed: Sequence[tuple[int, WireModel]],
    report: UploadReport,
) -> None:
    """A batch whose counts fall short of what was sent failed as a whole.

    Which rows the server left out is not known (``rowCreated 0, rowUpdated 0, rowDiscarded
    0`` for four rows, seen on a real tenant): every row it did not name is taken as not
    written, so that no row passes for written that may not be, and the next snapshot sends
    them again (an upload is an upsert by natural key)."""
    counted = answer.row_created + answer.row_updated + answer.row_discarded
    reason = (
        f"{endpoint.method} {endpoint.template} accounted for {counted} of the {sent} rows "
        f"sent (created {answer.row_created}, updated {answer.row_updated}, discarded "
        f"{answer.row_discarded}): the batch is taken as not written"
    )
    report.unaccounted += sent - counted
    report.errors += [RowError(index, reason, row) for index, row in unnamed]
