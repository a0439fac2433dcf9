"""Who is calling, for which tenant, with which rights.

Three ways in, as Blindata offers: API key headers (`X-BD-User` + `X-BD-ApiKey`, the key being the
user's password), a bearer token from `POST /auth/login`, or a bearer token "obtained elsewhere"
(issued by the admin endpoint `/_emulator/tokens`, standing for an OAuth2 token). Tokens expire
after `token_ttl_seconds`, or all at once through `expire_all` (a test of the client's re-login).

`X-BD-Tenant` picks the tenant; without it the user's default tenant applies. A tenant the
emulator does not serve, or that the user may not reach, is a 403 that names the tenant.
No message ever contains a password, key or token.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Mapping

from .clock import Clock
from .errors import ApiError
from .settings import EmulatorSettings, EmulatorUser

__all__ = ["Authenticator", "TokenRegistry"]

TOKEN_BYTES = 32
_BEARER = "bearer"
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="blindata-emulator"'}


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, message, headers=_CHALLENGE)


class TokenRegistry:
    """Bearer tokens and their expiry; thread-safe."""

    def __init__(self, clock: Clock, ttl_seconds: float) -> None:
        self._clock = clock
        self._ttl = ttl_seconds
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[str, float]] = {}

    def issue(self, username: str) -> str:
        """A new token for `username`, valid for the TTL."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._lock:
            self._tokens[token] = (username, self._clock.now() + self._ttl)
        return token

    def owner(self, token: str) -> str | None:
        """The user of a valid token; None when unknown or expired."""
        with self._lock:
            entry = self._tokens.get(token)
            if entry is None:
                return None
            username, expires_at = entry
            if self._clock.now() >= expires_at:
                del self._tokens[token]
                return None
            return username

    def expire_all(self) -> int:
        """Invalidate every token; how many there were."""
        with self._lock:
            count = len(self._tokens)
            self._tokens.clear()
            return count


def _same_secret(expected: str, given: str) -> bool:
    """Compared as UTF-8 bytes: ``hmac.compare_digest`` refuses strings that are not ASCII
    with a TypeError, which answered 500 to a key with an accented letter instead of 401."""
    return hmac.compare_digest(
        expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass")
    )


class Authenticator:
    """Turns request headers into a user and a tenant, or a 401/403."""

    def __init__(self, settings: EmulatorSettings, tokens: TokenRegistry) -> None:
        self._settings = settings
        self._tokens = tokens

    def login(self, username: object, password: object) -> str:
        """`POST /auth/login`: a token for good credentials, else 401."""
        if not isinstance(username, str) or not isinstance(password, str):
            raise ApiError(400, 'login needs a JSON body {"username", "password"} of strings')
        user = self._settings.user(username)
        if user is None or not _same_secret(user.password, password):
            raise _unauthorized("bad credentials: unknown user or wrong password")
        return self._tokens.issue(user.username)

    def user(self, headers: Mapping[str, str]) -> EmulatorUser:
        """The calling user (header names in lower case)."""
        name = headers.get("x-bd-user")
        key = headers.get("x-bd-apikey")
        if name or key:  # empty headers count as absent
            if not name or not key:
                raise _unauthorized("API key authentication needs both X-BD-User and X-BD-ApiKey")
            user = self._settings.user(name)
            if user is None or not _same_secret(user.password, key):
                raise _unauthorized("bad credentials: unknown X-BD-User or wrong X-BD-ApiKey")
            return user
        authorization = headers.get("authorization")
        if authorization is None:
            raise _unauthorized(
                "no credentials: send X-BD-User and X-BD-ApiKey, or Authorization: Bearer <token>"
            )
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != _BEARER or not token.strip():
            raise _unauthorized("the Authorization header must be 'Bearer <token>'")
        username = self._tokens.owner(token.strip())
        user = self._settings.user(username) if username else None
        if user is None:
            raise _unauthorized("the bearer token is expired or unknown: log in again")
        return user

    def tenant(self, user: EmulatorUser, requested: str | None) -> str:
        """The tenant of the request: X-BD-Tenant, or the user's default."""
        allowed = self._settings.tenants_of(user)
        if not requested:
            return allowed[0]
        if requested not in self._settings.tenants:
            raise ApiError(403, f"unknown tenant {requested!r} (X-BD-Tenant): no such tenant")
        if requested not in allowed:
            raise ApiError(
                403, f"user {user.username!r} has no access to tenant {requested!r} (X-BD-Tenant)"
            )
        return requested

    @staticmethod
    def require(user: EmulatorUser, area: str | None, write: bool) -> None:
        """403 unless `user` may read (or write) `area`."""
        if area is None:
            return
        allowed = user.can_write(area) if write else user.can_read(area)
        if not allowed:
            needed = f"{area}_EDITOR" if write else f"{area}_VIEWER or {area}_EDITOR"
            raise ApiError(403, f"user {user.username!r} lacks the permission {needed}")
