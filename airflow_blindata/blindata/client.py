"""The Blindata REST client: one ``httpx.Client`` with auth, tenant, retries and typed answers.

Every request goes through ``BlindataClient.send``, which

* adds ``X-BD-Tenant`` (when a tenant is set) and the credentials' headers;
* retries connection failures, 429, 5xx and answers cut short (a 200 whose JSON is truncated) with
  exponential backoff and jitter, honouring ``Retry-After``, until one total deadline per operation
  (``RetryPolicy``, run by tenacity as in Airflow's http provider: ``stop_before_delay`` is the
  deadline); requests that may have reached the server are sent again only when the
  endpoint is idempotent (``Endpoint.idempotent``);
* bounds each exchange as a whole, not only each read (``bound.py``): a server that trickles its
  answer cannot hold an operation past its deadline;
* turns every failure into a ``BlindataError`` that names the operation and the server's message.

Lists are read page by page (``iter_pages``) and uploads go in batches whose rows are accounted one
by one (``upload``). The resource methods (``client.systems.list(...)``) are in ``resources.py``.
"""

from __future__ import annotations

import logging
import random
import ssl
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
import tenacity
from pydantic import BaseModel, ValidationError

from airflow_blindata import __version__
from airflow_blindata.blindata.api_paths import ApiPaths
from airflow_blindata.blindata.bound import bounded, install
from airflow_blindata.blindata.credentials import Credentials, auth_for, secrets_of
from airflow_blindata.blindata.errors import (
    BlindataConfigError,
    BlindataContractError,
    BlindataDeadlineError,
    BlindataError,
    BlindataRequestError,
    BlindataStatusError,
    status_error_class,
)
from airflow_blindata.blindata.models import ErrorBody, Page, UploadResponse, WireModel
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint
from airflow_blindata.redaction import redact_url, scrub, url_secrets, without_credentials

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TIMEOUT",
    "DEFAULT_UPLOAD_BATCH_SIZE",
    "BlindataClient",
    "RetryPolicy",
    "RowError",
    "UploadReport",
    "http_date",
]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for one HTTP exchange."""
DEFAULT_PAGE_SIZE = 500
"""Items per page when listing; the contract caps pages at 1000."""
LIST_ORDER = "uuid,ASC"
"""The ``sort`` of every listing: the contract's ``sort=prop,ASC|DESC`` on the one property every
stored object has, and that never changes."""
DEFAULT_UPLOAD_BATCH_SIZE = 500
"""Rows per upload request."""
TENANT_HEADER = "X-BD-Tenant"
_SNIPPET_LENGTH = 200

ModelT = TypeVar("ModelT", bound=BaseModel)
ResultT = TypeVar("ResultT")
Observer = Callable[[Endpoint, BlindataError | None], None]
_MAX_BACKOFF_EXPONENT = 32


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to retry one operation.

    The ``deadline`` bounds the whole operation, waits and slow answers included: each exchange
    must be complete by it, and the client gives up with ``BlindataDeadlineError`` rather than
    start an attempt it would have to sleep past it for. The deadline is the bound: attempts are
    not counted unless ``max_attempts`` is given, and then the client also gives up after that
    many. The wait before attempt ``n + 1`` is ``Retry-After`` when the server sent one, otherwise
    ``backoff_initial * 2**(n - 1)`` capped at ``backoff_max``, of which the upper half is random
    ("equal jitter"), so that many workers retrying together spread out.
    """

    deadline: float = 120.0
    max_attempts: int | None = None
    backoff_initial: float = 0.5
    backoff_max: float = 30.0

    def backoff(self, attempt: int) -> float:
        exponent = min(attempt - 1, _MAX_BACKOFF_EXPONENT)
        ceiling = min(self.backoff_max, self.backoff_initial * 2.0**exponent)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def exhausted(self, attempt: int) -> bool:
        """Whether ``attempt`` was the last one ``max_attempts`` allows."""
        return self.max_attempts is not None and attempt >= self.max_attempts

    def wait(self, state: tenacity.RetryCallState) -> float:
        """tenacity's wait: the server's ``Retry-After``, else the backoff."""
        failure = state.outcome.result() if state.outcome is not None else None
        if isinstance(failure, _Failure) and failure.retry_after is not None:
            return failure.retry_after
        return self.backoff(state.attempt_number)

    def stop(self) -> tenacity.stop.stop_base:
        """tenacity's stop: before a wait that would end past the deadline (tenacity's
        ``stop_before_delay``), or after ``max_attempts``."""
        stop: tenacity.stop.stop_base = tenacity.stop_before_delay(self.deadline)
        if self.max_attempts is not None:
            stop = stop | tenacity.stop_after_attempt(self.max_attempts)
        return stop


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


class BlindataClient:
    """A client of one Blindata tenant.

    ``transport`` replaces the network (e.g. ``httpx.WSGITransport`` around the emulator, or
    ``httpx.MockTransport``); everything else behaves as in production.

    Credentials in the URL (``https://user:password@host``) are not sent (``credentials`` are)
    and not kept: ``base_url`` is the URL without them, so that neither httpx's request log nor
    its errors can show them, and messages, errors and ``repr`` show ``shown_url``, the URL with
    ``***`` in place of the password.

    ``api_paths`` moves paths of the contract to where this instance serves them
    (``api_paths.py``): requests, and the errors that name them, go to the served path; the
    endpoints the resources and the ``observer`` see stay those of the contract.
    """

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Credentials,
        tenant: str | None = None,
        verify: bool | str | ssl.SSLContext = True,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        api_paths: ApiPaths | None = None,
    ) -> None:
        base_url = base_url.strip().rstrip("/")
        self.shown_url = redact_url(base_url)
        self._secrets = (*url_secrets(base_url), *secrets_of(credentials))
        if not base_url.startswith(("http://", "https://")):
            raise BlindataConfigError(
                f"Blindata URL {self.shown_url!r} must start with http:// or https://"
            )
        base_url = without_credentials(base_url)
        self.base_url = base_url
        proxy = None if transport is not None else environment_proxy(base_url)
        self.shown_proxy = redact_url(proxy) if proxy else None
        """The proxy the environment names for the URL (``HTTPS_PROXY``), as messages show it."""
        self._secrets += url_secrets(proxy) if proxy else ()
        self.tenant = tenant or None
        if self.tenant is not None and not self.tenant.isascii():
            raise BlindataConfigError(
                f"The tenant {self.tenant!r} (sent as {TENANT_HEADER}) holds characters that are "
                "not ASCII: a tenant is a uuid"
            )
        self.credentials = credentials
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.api_paths = api_paths or ApiPaths()
        headers = {"Accept": "application/json", "User-Agent": f"airflow-blindata/{__version__}"}
        if self.tenant:
            headers[TENANT_HEADER] = self.tenant
        login = self.api_paths.resolve(ENDPOINTS["login"])
        self._auth = auth_for(
            credentials,
            login_url=base_url + login.path(),
            on_login_failure=lambda response: login_error(
                response, f"{login.method} {login.template}", self._scrub
            ),
            headers=headers,
        )
        try:
            self._http = httpx.Client(
                base_url=base_url,
                headers=headers,
                auth=self._auth,
                verify=verify,
                timeout=timeout,
                transport=transport,
                follow_redirects=False,
            )
        except httpx.InvalidURL as exc:
            raise BlindataConfigError(
                f"Blindata URL {self.shown_url!r} is not a valid URL: {self._scrub(str(exc))}"
            ) from None
        self.bounded_exchanges = install(self._http)
        """Whether each exchange is bounded as a whole (False for an in-process transport)."""
        self.observer: Observer | None = None
        """Told the outcome of every operation: its endpoint, and its error after the retries
        (``None`` on success), before the error is raised; what it raises replaces the error.
        The sync watches writes with it (``sync.context.WriteWatch``)."""
        from airflow_blindata.blindata.resources import Resources

        self.api = Resources(self)

    def __repr__(self) -> str:
        return (
            f"BlindataClient(base_url={self.shown_url!r}, tenant={self.tenant!r}, "
            f"credentials={self.credentials!r})"
        )

    def close(self) -> None:
        self._http.close()

    def _scrub(self, text: str) -> str:
        """``text`` without the URL's credentials (a library's message may quote the URL) and
        the key, password or token (a proxy's or a debug page's answer may quote the request)."""
        return scrub(text, (*self._secrets, getattr(self._auth, "token", None)))

    def __enter__(self) -> BlindataClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- one request ---------------------------------------------------------------------------

    def send(
        self,
        endpoint: Endpoint,
        *,
        ids: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: RetryPolicy | None = None,
    ) -> httpx.Response:
        """Send one operation, retrying as ``retry`` allows; return a successful response."""
        return self._exchange(endpoint, ids, params, json, retry, _as_is)

    def _exchange(
        self,
        endpoint: Endpoint,
        ids: Mapping[str, str] | None,
        params: Mapping[str, Any] | None,
        json: Any,
        retry: RetryPolicy | None,
        read: Callable[[httpx.Response, str], ResultT],
    ) -> ResultT:
        """Send one operation and ``read`` its successful answer; tell ``observer`` how it went."""
        try:
            result = self._retrying(endpoint, ids, params, json, retry, read)
        except BlindataError as exc:
            if self.observer is not None:
                self.observer(endpoint, exc)  # may raise in its stead
            raise
        if self.observer is not None:
            self.observer(endpoint, None)
        return result

    def _retrying(
        self,
        endpoint: Endpoint,
        ids: Mapping[str, str] | None,
        params: Mapping[str, Any] | None,
        json: Any,
        retry: RetryPolicy | None,
        read: Callable[[httpx.Response, str], ResultT],
    ) -> ResultT:
        """Send one operation and ``read`` its successful answer, retrying within the deadline.

        ``read`` raising ``BlindataContractError`` with ``incomplete`` (the JSON was cut short) is
        a failure like a dropped connection: retried when the endpoint is idempotent.
        """
        policy = retry or self.retry
        path = self.api_paths.resolve(endpoint).path(**(ids or {}))
        operation = f"{endpoint.method} {path}"
        query = _query(endpoint, params or {})
        deadline = time.monotonic() + policy.deadline

        def attempt() -> ResultT | _Failure:
            until = min(time.monotonic() + self.timeout, deadline)
            outcome = self._attempt(endpoint, operation, path, query, json, until)
            if not isinstance(outcome, httpx.Response):
                return outcome
            try:
                return read(outcome, operation)
            except BlindataContractError as exc:
                if not exc.incomplete:
                    raise
                return _Failure(exc, endpoint.idempotent)

        def give_up(state: tenacity.RetryCallState) -> ResultT:
            failure: _Failure = state.outcome.result()  # type: ignore[union-attr]
            raise BlindataDeadlineError(
                f"Gave up on {operation} after {state.attempt_number} attempt(s) in "
                f"{state.seconds_since_start or 0.0:.1f} s (deadline {policy.deadline:g} s, "
                f"next wait {state.upcoming_sleep:.1f} s): {failure.error}",
                operation=operation,
                attempts=state.attempt_number,
                last_error=failure.error,
            ) from failure.error

        def announce(state: tenacity.RetryCallState) -> None:
            failure: _Failure = state.outcome.result()  # type: ignore[union-attr]
            elapsed = state.seconds_since_start or 0.0
            log.warning(
                "Blindata %s failed (%s); attempt %d%s in %.1f s (%.0f s of %g s left)",
                operation,
                failure.error,
                state.attempt_number + 1,
                f" of {policy.max_attempts}" if policy.max_attempts is not None else "",
                state.upcoming_sleep,
                policy.deadline - elapsed,
                policy.deadline,
            )

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_result(_is_retryable),
            wait=policy.wait,
            stop=policy.stop(),
            before_sleep=announce,
            retry_error_callback=give_up,
        )
        outcome = retrying(attempt)
        if isinstance(outcome, _Failure):
            raise outcome.error
        result: ResultT = outcome
        return result

    def _attempt(
        self,
        endpoint: Endpoint,
        operation: str,
        path: str,
        query: dict[str, str],
        body: Any,
        until: float,
    ) -> httpx.Response | _Failure:
        """One try, complete by ``until``: the successful response, or what went wrong."""
        timeout = max(until - time.monotonic(), 0.001)
        try:
            with bounded(until):
                response = self._http.request(
                    endpoint.method, path, params=query, json=body, timeout=timeout
                )
        except httpx.DecodingError as exc:
            # A body its Content-Encoding does not describe (a proxy that announces gzip and
            # sends it plain): not Blindata's answer, and the same however often it is asked.
            undecodable = BlindataContractError(
                f"{operation} answered a body that its Content-Encoding does not describe: it "
                f"could not be decompressed ({self._scrub(str(exc))}); a proxy that announces "
                "gzip and sends the body as it is?",
                operation=operation,
            )
            return _Failure(undecodable, retryable=False)
        except httpx.LocalProtocolError as exc:
            # The request cannot be written (a header value with a line break): nothing was
            # sent, and the same request fails the same way however often it is tried.
            reason = self._scrub(f"{type(exc).__name__}: {exc}")
            error = BlindataRequestError(
                f"{operation} could not be sent: {reason}", operation=operation
            )
            return _Failure(error, retryable=False)
        except httpx.TransportError as exc:
            # Nothing reached the server when it refused the connection; anything else may have.
            unsent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
            reason = _describe_transport_error(exc, self.shown_url)
            if self.shown_proxy is not None:
                reason += (
                    f", through the proxy {self.shown_proxy} that the environment names "
                    "(HTTPS_PROXY, HTTP_PROXY or ALL_PROXY; NO_PROXY lists the hosts reached "
                    "without it)"
                )
            error = BlindataRequestError(
                f"{operation} failed: {self._scrub(reason)}", operation=operation
            )
            if _certificate_refused(exc):
                # The client refused the server's certificate: nothing was sent, and the next
                # handshake meets the same certificate (a retry only waits out the deadline).
                return _Failure(error, retryable=False)
            return _Failure(error, unsent or endpoint.idempotent)
        except BlindataStatusError as exc:  # raised by the login flow
            # The request was not sent, or was refused with 401 before the login: whatever
            # it is, trying again cannot apply it twice.
            transient = exc.status == 429 or exc.status >= 500
            return _Failure(exc, transient, exc.retry_after)
        if response.is_success:
            return response
        status_error = error_from_response(response, operation, self._scrub)
        return _Failure(
            status_error,
            _retryable_status(response.status_code, endpoint),
            status_error.retry_after,
        )

    # -- decoding ------------------------------------------------------------------------------

    def call(
        self,
        endpoint: Endpoint,
        model: type[ModelT],
        *,
        ids: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        empty: Callable[[httpx.Response], ModelT] | None = None,
    ) -> ModelT:
        """Send one operation and read its answer as ``model``.

        ``empty`` gives the result, from the response, when the server answers with no body
        (``204 No Content``, or a 2xx without content): the contract names the status of some
        writes and not their body. Without it such an answer is a ``BlindataContractError``
        (never retried: nothing was cut short).
        """
        return self._exchange(
            endpoint,
            ids,
            params,
            json,
            None,
            lambda response, op: decode(response, model, op, self._scrub, empty=empty),
        )

    def iter_pages(
        self,
        endpoint: Endpoint,
        model: type[ModelT],
        *,
        params: Mapping[str, Any] | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[ModelT]:
        """Every item of a list, requesting one Spring page after the other.

        The pages are asked in one order (``LIST_ORDER``, unless ``params`` names a ``sort``):
        a server reading its database without one (Spring passes no ``ORDER BY`` then) may serve
        each page from a differently ordered scan, and a walk of the pages would skip some
        objects and repeat others; a cleanup that missed a flow ending on a table would remove
        the table. An object created while the pages are walked may still push one already seen
        onto the next page: it is given once.

        Two pages in a row with nothing new end the walk with ``BlindataContractError``: the
        server answers the same page whatever ``page`` says, and the walk would never end (one
        page comes twice from a server that counts pages from 1, then the walk goes on)."""
        number = 0
        asked = {"sort": LIST_ORDER, **(params or {})}
        seen: set[str] = set()
        repeats = 0
        while True:
            page: Page[ModelT] = self.call(
                endpoint,
                Page[model],  # type: ignore[valid-type]
                params={**asked, "page": number, "size": page_size},
            )
            fresh = 0
            for item in page.content:
                uuid = getattr(item, "uuid", None)
                if isinstance(uuid, str):
                    if uuid in seen:
                        continue
                    seen.add(uuid)
                fresh += 1
                yield item
            if page.is_last(number):
                return
            repeats = repeats + 1 if not fresh else 0
            if repeats == 2:
                path = self.api_paths.resolve(endpoint).path()
                raise BlindataContractError(
                    f"{endpoint.method} {path} answered the same items for pages {number - 1} "
                    f"and {number} as before them: the server does not read the page parameter",
                    operation=f"{endpoint.method} {path}",
                )
            number += 1

    # -- uploads -------------------------------------------------------------------------------

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
            answer = self.call(
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
            self._unaccounted(endpoint, answer, len(batch), unnamed, report)
        elif answer.row_discarded > len(named):
            self._locate_discarded(endpoint, unnamed, params, report, answer.message)

    @staticmethod
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


_ROW_REFUSALS = (400, 409, 422)
"""Statuses of an upload refused whole for what some of its rows hold: invalid (400, 422), or
a natural key taken (409: the contract's status of a duplicate natural key, from a server that
applies an upload in one transaction). Split, the other rows pass."""


@dataclass(frozen=True, slots=True)
class _Failure:
    error: BlindataError
    retryable: bool
    retry_after: float | None = None


def _is_retryable(outcome: object) -> bool:
    return isinstance(outcome, _Failure) and outcome.retryable


def _retryable_status(status: int, endpoint: Endpoint) -> bool:
    # 429 and 503 mean "not processed, come back later"; other 5xx may follow a partial effect.
    return status in (429, 503) or (status >= 500 and endpoint.idempotent)


def _query(endpoint: Endpoint, params: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters as strings; unknown names fail here, not silently on the server."""
    query: dict[str, str] = {}
    for name, value in params.items():
        if endpoint.filters and name not in endpoint.filters:
            raise BlindataConfigError(
                f"{endpoint.name} has no filter {name!r}; known: {', '.join(endpoint.filters)}"
            )
        if value is None:
            continue
        query[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return query


def _unchanged(text: str) -> str:
    return text


def _snippet(response: httpx.Response, scrub: Callable[[str], str] = _unchanged) -> str:
    """The start of the answer, scrubbed before it is cut (a cut secret would not be found)."""
    text = scrub(" ".join(response.text.split()))
    return text[:_SNIPPET_LENGTH] + ("…" if len(text) > _SNIPPET_LENGTH else "")


def http_date(value: str) -> datetime | None:
    """An HTTP date (``Date``, ``Retry-After``) in UTC, or ``None`` when it is not one.

    HTTP dates are GMT in all three formats a recipient must accept (RFC 9110 §5.6.7), two of
    which name no zone (``Sun Nov  6 08:49:37 1994``), nor does ``-0000``: Python reads those as
    naive dates, which ``astimezone`` and ``timestamp`` would take for the worker's local time.
    """
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    moment = http_date(value)
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - time.time())


def error_from_response(
    response: httpx.Response, operation: str, scrub: Callable[[str], str] = _unchanged
) -> BlindataStatusError:
    """The typed error for a failed response, with the server's message when it sent one.

    ``scrub`` takes the secrets out of the server's text (it may quote the request).
    """
    body: ErrorBody | None = None
    if "json" in response.headers.get("content-type", ""):
        try:
            data = response.json()
            if isinstance(data, dict):
                body = ErrorBody.model_validate(data)
        except (ValueError, ValidationError):
            body = None
    if body is not None:
        body.message = scrub(body.message) if body.message else body.message
        body.error = scrub(body.error) if body.error else body.error
    detail = body.message if body and body.message else _snippet(response, scrub) or "(empty body)"
    location = _redirect_location(response, scrub)
    if location is not None:
        detail = f"redirects to {location} (the client follows no redirect)"
    reason = response.reason_phrase or ""
    return status_error_class(response.status_code)(
        f"{operation} failed with {response.status_code} {reason}: {detail}".replace("  ", " "),
        operation=operation,
        status=response.status_code,
        body=body,
        retry_after=_retry_after(response),
        location=location,
    )


def _redirect_location(response: httpx.Response, scrub: Callable[[str], str]) -> str | None:
    """Where a redirect leads, absolute and without credentials; ``None`` for another answer."""
    if not response.is_redirect:
        return None
    try:
        target = str(response.url.join(response.headers["Location"]))
    except (httpx.InvalidURL, ValueError):
        return None
    return scrub(redact_url(target))


def login_error(
    response: httpx.Response, operation: str, scrub: Callable[[str], str] = _unchanged
) -> BlindataError:
    """Why a login answer gave no token: its error status, or, for a success without the
    contract's ``access_token``, the names of the fields it has and never their values (the
    token may be there under another name, or be the whole body)."""
    if not response.is_success:
        return error_from_response(response, operation, scrub)
    try:
        data = response.json()
    except ValueError:
        data = None
    content_type = response.headers.get("content-type") or "no content type"
    held = (
        f"fields {', '.join(sorted(map(str, data)))}"
        if isinstance(data, dict)
        else f"a body that is not a JSON object ({content_type}, {len(response.content)} bytes)"
    )
    return BlindataContractError(
        f"{operation} answered {response.status_code} without an access_token: {scrub(held)}",
        operation=operation,
        status=response.status_code,
    )


def _as_is(response: httpx.Response, operation: str) -> httpx.Response:
    return response


def decode(
    response: httpx.Response,
    model: type[ModelT],
    operation: str,
    scrub: Callable[[str], str] = _unchanged,
    *,
    empty: Callable[[httpx.Response], ModelT] | None = None,
) -> ModelT:
    """Read a successful answer as ``model``, or fail with ``BlindataContractError``.

    An answer with no body at all (``204``, or ``200`` without content) is complete: it is
    ``empty()`` when the caller knows what it means (a PUT that stored what it was sent), else a
    contract error that is not retried. A body announced as JSON (or not announced at all) that
    does not parse was cut short on its way: the error is ``incomplete``, and the client asks
    again when that is safe. Any other body (an HTML page) is the answer of something that is
    not Blindata: asking again would not help.
    """
    if response.status_code == 204 or not response.content.strip():
        if empty is not None:
            return empty(response)
        raise BlindataContractError(
            f"{operation} answered {response.status_code} with no body, where "
            f"a {model.__name__} was expected",
            operation=operation,
            status=response.status_code,
        )
    try:
        data = response.json()
    except ValueError:
        content_type = response.headers.get("content-type", "")
        raise BlindataContractError(
            f"{operation} answered {response.status_code} with a body that is not valid JSON "
            f"({content_type or 'no content type'}, {len(response.content)} bytes): "
            f"{_snippet(response, scrub)!r}",
            operation=operation,
            status=response.status_code,
            incomplete=not content_type or "json" in content_type.lower(),
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(body)"
        raise BlindataContractError(
            f"{operation} answered JSON that is not a {model.__name__}: {where}: {first['msg']} "
            f"({exc.error_count()} error(s))",
            operation=operation,
            status=response.status_code,
        ) from None


def environment_proxy(url: str) -> str | None:
    """The proxy that the environment names for ``url`` (httpx reads the same variables), or
    ``None`` when there is none or ``NO_PROXY`` lists the host."""
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL:
        return None  # refused, with its reason, when the client is built
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(target.host):  # reads NO_PROXY
        return None
    return proxy


def _certificate_refused(exc: BaseException) -> bool:
    """Whether ``exc`` comes from this side refusing the server's certificate (OpenSSL's
    verification, found along the exception's causes: httpx wraps httpcore's error, which wraps
    the ``ssl`` one)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _describe_transport_error(exc: httpx.TransportError, base_url: str) -> str:
    kinds: list[tuple[type[httpx.TransportError], str]] = [
        (httpx.ConnectTimeout, f"timed out connecting to {base_url}"),
        (httpx.ConnectError, f"cannot connect to {base_url}"),
        (httpx.ReadTimeout, "timed out waiting for the answer"),
        (httpx.WriteTimeout, "timed out sending the request"),
        (httpx.PoolTimeout, "no free connection in the pool"),
        (httpx.RemoteProtocolError, "the server closed the connection without a complete answer"),
        (httpx.ReadError, "the connection broke while reading the answer"),
        (httpx.WriteError, "the connection broke while sending the request"),
    ]
    for kind, text in kinds:
        if isinstance(exc, kind):
            return f"{text} ({type(exc).__name__}: {exc})" if str(exc) else text
    return f"{type(exc).__name__}: {exc}"
