"""One HTTP exchange with a Blindata tenant: credentials, tenant header, one try, its error.

``Exchange`` holds the ``httpx.Client`` of one tenant (the credentials' auth, ``X-BD-Tenant``,
no redirects, each exchange bounded as a whole by ``bound.py``) and makes one try of an
``Operation`` at a time: ``attempt`` returns the successful response, or a ``Failure`` whose
``BlindataError`` names the operation and the server's message, and says whether trying again
is safe. It never retries (``retries.py`` does) and never reads a successful body
(``responses.py`` does). Messages never hold a credential: the URL's password, the key and the
token are scrubbed from every text a library or a server gives back.
"""

from __future__ import annotations

import math
import ssl
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import ValidationError

from airflow_blindata import __version__
from airflow_blindata.blindata.api_paths import ApiPaths
from airflow_blindata.blindata.bound import bounded, install
from airflow_blindata.blindata.credentials import Credentials, auth_for, secrets_of
from airflow_blindata.blindata.errors import (
    BlindataConfigError,
    BlindataContractError,
    BlindataError,
    BlindataRequestError,
    BlindataStatusError,
    BlindataUnsentError,
    status_error_class,
)
from airflow_blindata.blindata.models import ErrorBody
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint
from airflow_blindata.redaction import (
    redact_text,
    redact_url,
    scrub,
    url_secrets,
    without_credentials,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "TENANT_HEADER",
    "Exchange",
    "Failure",
    "Operation",
    "environment_proxy",
    "error_from_response",
    "http_date",
    "login_error",
    "snippet",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for one HTTP exchange."""
TENANT_HEADER = "X-BD-Tenant"
_SNIPPET_LENGTH = 200
_SNIPPET_READ_PAST = 16_384


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the contract, resolved: the path it is served at and its query."""

    endpoint: Endpoint
    path: str
    query: Mapping[str, str]
    body: Any = None

    @property
    def name(self) -> str:
        """``METHOD /path``, as messages name the operation."""
        return f"{self.endpoint.method} {self.path}"


@dataclass(frozen=True, slots=True)
class Failure:
    """A try that went wrong: the error, whether trying again is safe, and when to."""

    error: BlindataError
    retryable: bool
    retry_after: float | None = None


class Exchange:
    """The HTTP side of one Blindata tenant; see ``BlindataClient`` for the arguments."""

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Credentials,
        tenant: str | None = None,
        verify: bool | str | ssl.SSLContext = True,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        api_paths: ApiPaths | None = None,
    ) -> None:
        base_url = base_url.strip().rstrip("/")
        self.shown_url = redact_url(base_url)
        self._secrets = (*url_secrets(base_url), *secrets_of(credentials))
        scheme, sep, rest = base_url.partition("://")
        if sep:  # URL schemes have no case (``HTTPS://``)
            base_url = f"{scheme.lower()}://{rest}"
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
                response, f"{login.method} {login.template}", self.scrub
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
            hint = _ipv6_hint(base_url)
            raise BlindataConfigError(
                f"Blindata URL {self.shown_url!r} is not a valid URL: {self.scrub(str(exc))}" + hint
            ) from None
        self.bounded_exchanges = install(self._http)
        """Whether each exchange is bounded as a whole (False for an in-process transport)."""

    def close(self) -> None:
        self._http.close()

    def scrub(self, text: str) -> str:
        """``text`` without the URL's credentials (a library's message may quote the URL) and
        the key, password or token (a proxy's or a debug page's answer may quote the request),
        nor any other secret free text may show (``redact_text``): a proxy's credentials, which
        httpx takes from ``HTTP_PROXY`` and sends as ``Proxy-Authorization: Basic …``, were
        shown when its error page quoted the request (a probe of deployments), and a quote cut
        inside a secret (``"password":"Hunt…``) is no literal secret to scrub (a review: a
        reading of credentials alone showed it). A server's prose loses the word after a secret
        word (``bad credentials: *** X-BD-User``): a message less precise, no secret shown."""
        secrets = (*self._secrets, getattr(self._auth, "token", None))
        return redact_text(scrub(text, secrets))

    def operation(
        self,
        endpoint: Endpoint,
        *,
        ids: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> Operation:
        """``endpoint`` at the path this instance serves it (``api_paths``), with its query."""
        path = self.api_paths.resolve(endpoint).path(**(ids or {}))
        return Operation(endpoint, path, _query(endpoint, params or {}), json)

    def attempt(self, operation: Operation, deadline: float) -> httpx.Response | Failure:
        """One try, complete by ``deadline`` (``time.monotonic``) or within ``timeout``,
        whichever comes first: the successful response, or what went wrong."""
        until = min(time.monotonic() + self.timeout, deadline)
        timeout = max(until - time.monotonic(), 0.001)
        endpoint, name = operation.endpoint, operation.name
        try:
            with bounded(until):
                response = self._http.request(
                    endpoint.method,
                    operation.path,
                    params=dict(operation.query),
                    json=operation.body,
                    timeout=timeout,
                )
        except httpx.DecodingError as exc:
            # A body its Content-Encoding does not describe (a proxy that announces gzip and
            # sends it plain): not Blindata's answer, and the same however often it is asked.
            undecodable = BlindataContractError(
                f"{name} answered a body that its Content-Encoding does not describe: it "
                f"could not be decompressed ({self.scrub(str(exc))}); a proxy that announces "
                "gzip and sends the body as it is?",
                operation=name,
            )
            return Failure(undecodable, retryable=False)
        except httpx.LocalProtocolError as exc:
            # The request cannot be written (a header value with a line break): nothing was
            # sent, and the same request fails the same way however often it is tried.
            reason = self.scrub(f"{type(exc).__name__}: {exc}")
            unwritten = BlindataUnsentError(f"{name} could not be sent: {reason}", operation=name)
            return Failure(unwritten, retryable=False)
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
            error = BlindataRequestError(f"{name} failed: {self.scrub(reason)}", operation=name)
            if _certificate_refused(exc):
                # The client refused the server's certificate: nothing was sent, and the next
                # handshake meets the same certificate (a retry only waits out the deadline).
                return Failure(error, retryable=False)
            return Failure(error, unsent or endpoint.idempotent)
        except BlindataStatusError as exc:  # raised by the login flow
            # The request was not sent, or was refused with 401 before the login: whatever
            # it is, trying again cannot apply it twice.
            transient = exc.status == 429 or exc.status >= 500
            return Failure(exc, transient, exc.retry_after)
        if response.is_success:
            return response
        status_error = error_from_response(response, name, self.scrub)
        return Failure(
            status_error,
            _retryable_status(response.status_code, endpoint),
            status_error.retry_after,
        )


def _retryable_status(status: int, endpoint: Endpoint) -> bool:
    # 429 and 503 mean "not processed, come back later"; other 5xx may follow a partial effect,
    # and so may a gateway's 503: a create of an object with no natural key is not sent again.
    if status == 503 and not endpoint.refuses_duplicates:
        return endpoint.idempotent
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


def snippet(response: httpx.Response, scrub: Callable[[str], str] = _unchanged) -> str:
    """The start of the answer, scrubbed before it is cut (a cut secret would not be found):
    only its start is read (a proxy's page of megabytes was scrubbed whole for 200 characters,
    a review), far enough past the cut for a secret that starts before it to end."""
    text = scrub(" ".join(response.text[: _SNIPPET_LENGTH + _SNIPPET_READ_PAST].split()))
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


def _ipv6_hint(url: str) -> str:
    """How to write an IPv6 address given without its brackets (``http://::1:8080/bd``), in the
    URL's own scheme and path, and with the last group as the port when it may be one."""
    scheme, _, rest = url.partition("://")
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    host = authority.rpartition("@")[2]
    if host.count(":") < 2 or host.startswith("["):
        return ""
    hint = f" (an IPv6 address goes in brackets: {scheme}://[{host}]{path}"
    address, _, last = host.rpartition(":")
    if last.isdigit() and len(last) <= 5 and address.count(":") >= 2:
        hint += f", or {scheme}://[{address}]:{last}{path} if {last} is the port"
    return hint + ")"


def _retry_after(response: httpx.Response) -> float | None:
    """The server's ``Retry-After`` in seconds; ``None`` (the backoff then) for one that asks
    for no wait at all: ``0``, a negative or non-finite number, a date already past. Taken at
    its word, a limiter that answers ``0`` is tried again at once, a thousand times a second."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        moment = http_date(value)
        if moment is None:
            return None
        seconds = moment.timestamp() - time.time()
    return seconds if math.isfinite(seconds) and seconds > 0 else None


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
    detail = body.message if body and body.message else snippet(response, scrub) or "(empty body)"
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


def environment_proxy(url: str) -> str | None:
    """The proxy that the environment names for ``url``, as httpx, which sends the request,
    reads the variables: ``None`` when there is none or ``NO_PROXY`` lists the host. httpx's
    own reading decides (a ``NO_PROXY`` of ``.example.com`` spares the subdomains, not
    ``example.com``, where ``urllib`` spares both: the message named no proxy for a request
    that went through one); ``urllib``'s where httpx's reading cannot be had."""
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL:
        return None  # refused, with its reason, when the client is built
    try:
        from httpx._utils import URLPattern, get_environment_proxies
    except ImportError:  # a private module of httpx: its reading moved
        proxies = urllib.request.getproxies_environment()
        proxy = proxies.get(target.scheme) or proxies.get("all")
        if not proxy or urllib.request.proxy_bypass(target.host):  # reads NO_PROXY
            return None
        return proxy
    # the mounts an httpx client makes of the environment, matched in its order
    mounts = sorted((URLPattern(key), proxy) for key, proxy in get_environment_proxies().items())
    for pattern, proxy in mounts:
        if pattern.matches(target):
            return str(proxy) if proxy else None
    return None


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
