"""The Blindata REST client: ``BlindataClient``, the façade of one tenant's API.

It composes four parts, each with one job, and adds nothing but the order they run in:

* ``exchange.py``: the HTTP exchange (credentials, ``X-BD-Tenant``, one try bounded as a whole,
  each failure mapped to a ``BlindataError`` that names the operation and the server's message);
* ``retries.py``: the tries of one operation within one deadline (``RetryPolicy``);
* ``responses.py``: successful answers read as typed models, and lists read page by page;
* ``uploads.py``: uploads in batches whose rows are accounted one by one (``UploadReport``).

Every operation goes through ``send`` or ``call``; the ``observer`` hears how each one ended.
The resource methods (``client.api.systems.list(...)``) are in ``resources.py``.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from airflow_blindata.blindata.api_paths import ApiPaths
from airflow_blindata.blindata.credentials import Credentials
from airflow_blindata.blindata.errors import BlindataContractError, BlindataError
from airflow_blindata.blindata.exchange import (
    DEFAULT_TIMEOUT,
    Exchange,
    Failure,
    Operation,
    http_date,
)
from airflow_blindata.blindata.models import Page, WireModel
from airflow_blindata.blindata.paths import Endpoint
from airflow_blindata.blindata.responses import (
    DEFAULT_PAGE_SIZE,
    LIST_ORDER,
    as_is,
    decode,
    walk_pages,
)
from airflow_blindata.blindata.retries import RetryPolicy, within_deadline
from airflow_blindata.blindata.uploads import (
    DEFAULT_UPLOAD_BATCH_SIZE,
    RowError,
    Uploader,
    UploadReport,
)

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

ModelT = TypeVar("ModelT", bound=BaseModel)
ResultT = TypeVar("ResultT")
Observer = Callable[[Endpoint, BlindataError | None], None]


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
        self._exchange = Exchange(
            base_url,
            credentials=credentials,
            tenant=tenant,
            verify=verify,
            timeout=timeout,
            transport=transport,
            api_paths=api_paths,
        )
        self.retry = retry or RetryPolicy()
        self.observer: Observer | None = None
        """Told the outcome of every operation: its endpoint, and its error after the retries
        (``None`` on success), before the error is raised; what it raises replaces the error.
        The sync watches writes with it (``sync.context.WriteWatch``)."""
        self.list_order: str | None = LIST_ORDER
        """The ``sort`` every listing asks (``responses.walk_pages``); ``None`` once the server
        refused it."""
        self._uploader = Uploader(self)
        from airflow_blindata.blindata.resources import Resources

        self.api = Resources(self)

    # What the exchange was set up with, as the client was given it.

    @property
    def base_url(self) -> str:
        """The URL without credentials, as requests go to it."""
        return self._exchange.base_url

    @property
    def shown_url(self) -> str:
        """The URL with ``***`` in place of a password, as messages show it."""
        return self._exchange.shown_url

    @property
    def shown_proxy(self) -> str | None:
        """The proxy the environment names for the URL (``HTTPS_PROXY``), as messages show it."""
        return self._exchange.shown_proxy

    @property
    def tenant(self) -> str | None:
        return self._exchange.tenant

    @property
    def credentials(self) -> Credentials:
        return self._exchange.credentials

    @property
    def timeout(self) -> float:
        return self._exchange.timeout

    @property
    def api_paths(self) -> ApiPaths:
        return self._exchange.api_paths

    @property
    def bounded_exchanges(self) -> bool:
        """Whether each exchange is bounded as a whole (False for an in-process transport)."""
        return self._exchange.bounded_exchanges

    def __repr__(self) -> str:
        return (
            f"BlindataClient(base_url={self.shown_url!r}, tenant={self.tenant!r}, "
            f"credentials={self.credentials!r})"
        )

    def close(self) -> None:
        self._exchange.close()

    def __enter__(self) -> BlindataClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- operations ----------------------------------------------------------------------------

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
        return self._operate(endpoint, ids, params, json, retry, as_is)

    def call(
        self,
        endpoint: Endpoint,
        model: type[ModelT],
        *,
        ids: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        empty: Callable[[httpx.Response], ModelT] | None = None,
        unnamed: Callable[[httpx.Response, Any], ModelT] | None = None,
    ) -> ModelT:
        """Send one operation and read its answer as ``model``.

        ``empty`` gives the result, from the response, when the server answers with no body
        (``204 No Content``, or a 2xx without content): the contract names the status of some
        writes and not their body. Without it such an answer is a ``BlindataContractError``
        (never retried: nothing was cut short). ``unnamed`` does the same for a body that does
        not read as ``model`` (``responses.decode``).
        """
        scrub = self._exchange.scrub
        return self._operate(
            endpoint,
            ids,
            params,
            json,
            None,
            lambda response, op: decode(response, model, op, scrub, empty=empty, unnamed=unnamed),
        )

    def iter_pages(
        self,
        endpoint: Endpoint,
        model: type[ModelT],
        *,
        params: Mapping[str, Any] | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[ModelT]:
        """Every item of a list, one page after the other (``responses.walk_pages``: one
        order, each object once, a server that ignores ``page`` refused)."""

        def fetch(query: Mapping[str, Any]) -> Page[ModelT]:
            return self.call(endpoint, Page[model], params=query)  # type: ignore[valid-type]

        operation = f"{endpoint.method} {self.api_paths.resolve(endpoint).path()}"

        def refused() -> None:
            log.warning(
                "%s refused the order sort=%s: every list is walked in the server's own order "
                "(an object a page misses is found by a second walk, when the count says so)",
                operation,
                self.list_order,
            )
            self.list_order = None

        yield from walk_pages(
            fetch,
            operation,
            params=params,
            page_size=page_size,
            order=self.list_order,
            refused=refused,
        )

    def upload(
        self,
        endpoint: Endpoint,
        rows: Iterable[WireModel],
        *,
        batch_size: int = DEFAULT_UPLOAD_BATCH_SIZE,
        params: Mapping[str, Any] | None = None,
    ) -> UploadReport:
        """Upload ``rows`` in batches; a refused row is reported, the others are applied
        (``uploads.Uploader.upload``)."""
        return self._uploader.upload(endpoint, rows, batch_size=batch_size, params=params)

    def _operate(
        self,
        endpoint: Endpoint,
        ids: Mapping[str, str] | None,
        params: Mapping[str, Any] | None,
        json: Any,
        retry: RetryPolicy | None,
        read: Callable[[httpx.Response, str], ResultT],
    ) -> ResultT:
        """Send one operation and ``read`` its successful answer, retrying within the deadline;
        tell ``observer`` how it went."""
        try:
            operation = self._exchange.operation(endpoint, ids=ids, params=params, json=json)
            result = within_deadline(
                retry or self.retry,
                operation.name,
                lambda deadline: self._try(operation, deadline, read),
            )
        except BlindataError as exc:
            if self.observer is not None:
                self.observer(endpoint, exc)  # may raise in its stead
            raise
        if self.observer is not None:
            self.observer(endpoint, None)
        return result

    def _try(
        self,
        operation: Operation,
        deadline: float,
        read: Callable[[httpx.Response, str], ResultT],
    ) -> ResultT | Failure:
        """One try of ``operation`` and the reading of its answer.

        ``read`` raising ``BlindataContractError`` with ``incomplete`` (the JSON was cut short) is
        a failure like a dropped connection: retried when the endpoint is idempotent.
        """
        outcome = self._exchange.attempt(operation, deadline)
        if isinstance(outcome, Failure):
            return outcome
        try:
            return read(outcome, operation.name)
        except BlindataContractError as exc:
            if not exc.incomplete:
                raise
            return Failure(exc, operation.endpoint.idempotent)
