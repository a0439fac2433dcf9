"""How the client proves who it is: the three authentication modes of the contract.

Credentials are plain values; the secret of each is left out of ``repr`` so that a client, a hook
or a credentials object can be logged without leaking it. ``auth_for`` turns them into the
``httpx.Auth`` that sends them.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from threading import Lock
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ApiKeyCredentials",
    "BearerToken",
    "Credentials",
    "LoginCredentials",
    "secrets_of",
]

API_USER_HEADER = "X-BD-User"
API_KEY_HEADER = "X-BD-ApiKey"


@dataclass(frozen=True, slots=True)
class ApiKeyCredentials:
    """An application user: ``X-BD-User`` and ``X-BD-ApiKey`` on every request."""

    username: str
    api_key: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class LoginCredentials:
    """A user who logs in with ``POST /auth/login`` and then sends the bearer token it got."""

    username: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class BearerToken:
    """A bearer token obtained elsewhere (e.g. OAuth2 client credentials from Entra ID)."""

    token: str = field(repr=False)


Credentials = ApiKeyCredentials | LoginCredentials | BearerToken


def secrets_of(credentials: Credentials) -> tuple[str, ...]:
    """What of ``credentials`` must never show: the key, the password or the token."""
    if isinstance(credentials, ApiKeyCredentials):
        return (credentials.api_key,)
    if isinstance(credentials, LoginCredentials):
        return (credentials.password,)
    return (credentials.token,)


class _ApiKeyAuth(httpx.Auth):
    def __init__(self, credentials: ApiKeyCredentials) -> None:
        self._credentials = credentials

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers[API_USER_HEADER] = self._credentials.username
        request.headers[API_KEY_HEADER] = self._credentials.api_key
        yield request


class _BearerAuth(httpx.Auth):
    def __init__(self, token: str) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


class _LoginAuth(httpx.Auth):
    """Logs in on first use and once more when the token is refused (it expired).

    ``on_login_failure`` turns the login response into the client's typed error, so that wrong
    credentials surface as ``BlindataAuthError`` naming ``POST /auth/login``. The login request
    carries the client's ``headers`` (``X-BD-Tenant`` goes on every request), which httpx does
    not add to a request an auth flow makes.
    """

    requires_response_body = True

    def __init__(
        self,
        credentials: LoginCredentials,
        login_url: str,
        on_login_failure: Callable[[httpx.Response], Exception],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._credentials = credentials
        self._headers = {**(headers or {}), "Accept": "application/json"}
        self._login_url = login_url
        self._on_login_failure = on_login_failure
        self._token: str | None = None
        self._lock = Lock()

    @property
    def token(self) -> str | None:
        """The bearer token of the last login (a secret, like the password)."""
        return self._token

    def _login_request(self) -> httpx.Request:
        return httpx.Request(
            "POST",
            self._login_url,
            json={"username": self._credentials.username, "password": self._credentials.password},
            headers=self._headers,
        )

    def _read_token(self, response: httpx.Response) -> str:
        if not response.is_success:  # the contract's 200, or another success with the token
            raise self._on_login_failure(response)
        try:
            token = response.json()["access_token"]
        except (ValueError, KeyError, TypeError):
            raise self._on_login_failure(response) from None
        if not isinstance(token, str) or not token:
            raise self._on_login_failure(response)
        with self._lock:
            self._token = token
        return token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._token
        if token is None:
            token = self._read_token((yield self._login_request()))
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            # The token expired or was revoked: log in again, once.
            token = self._read_token((yield self._login_request()))
            request.headers["Authorization"] = f"Bearer {token}"
            yield request


def auth_for(
    credentials: Credentials,
    *,
    login_url: str,
    on_login_failure: Callable[[httpx.Response], Exception],
    headers: Mapping[str, str] | None = None,
) -> httpx.Auth:
    """The ``httpx.Auth`` that sends ``credentials``; ``headers`` go on the login request too."""
    if isinstance(credentials, ApiKeyCredentials):
        return _ApiKeyAuth(credentials)
    if isinstance(credentials, LoginCredentials):
        return _LoginAuth(credentials, login_url, on_login_failure, headers)
    return _BearerAuth(credentials.token)
