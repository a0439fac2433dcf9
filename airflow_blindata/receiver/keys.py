"""The receiver's API keys: where they come from, and checking a presented key in constant time.

Producers authenticate with ``Authorization: Bearer <key>`` (what the OpenLineage clients send
for ``auth: {type: api_key, apiKey: ...}``). The keys are read from the first source that has
one; a lower source is then not consulted, so a stale key left there cannot open the door:

1. ``[blindata] receiver_api_key`` (also ``AIRFLOW__BLINDATA__RECEIVER_API_KEY``, and the
   ``_cmd`` / ``_secret`` forms Airflow offers for sensitive options). Several keys, separated by
   commas or whitespace, are all valid: add the new key, move the producers, drop the old key.
2. The Airflow connection ``[blindata] receiver_conn_id`` (default ``blindata_receiver``, from
   an environment variable, the metadata database or a secrets backend): its password, plus the
   keys listed in its extra ``api_keys`` (a JSON list, or a comma-separated string).

No key anywhere means the receiver refuses every request (503): it never runs open. A key shorter
than ``MIN_KEY_LENGTH`` is ignored with a warning. Only SHA-256 digests of the keys are kept in
memory, and they are re-read every ``KEY_REFRESH_SECONDS``, so a rotation needs no restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from airflow_blindata.options import SECTION, receiver_api_key, receiver_conn_id

__all__ = [
    "KEY_REFRESH_SECONDS",
    "MIN_KEY_LENGTH",
    "CachedKeys",
    "KeyLoader",
    "KeySet",
    "bearer_token",
    "configured_keys",
    "key_set",
    "split_keys",
]

log = logging.getLogger(__name__)

KEY_OPTION = "receiver_api_key"
CONN_ID_OPTION = "receiver_conn_id"
CONN_EXTRA_KEYS = "api_keys"
MIN_KEY_LENGTH = 16
"""Shorter keys are guessable; ``openssl rand -hex 32`` gives 64 characters."""
KEY_REFRESH_SECONDS = 30.0
"""How long keys are cached: a rotated connection or option is in effect after this at most."""
FAILED_LOOKUP_RETRY_SECONDS = 5.0
"""After a failed lookup (secrets backend down), how long until the next try."""
_KEY_SEPARATORS = re.compile(r"[\s,]+")
_BEARER = "bearer"


@dataclass(frozen=True, slots=True)
class KeySet:
    """The valid keys (as SHA-256 digests), where they came from, or why there are none."""

    digests: tuple[bytes, ...]
    source: str
    problem: str | None = None

    def matches(self, presented: str) -> bool:
        """Whether ``presented`` is one of the keys, in time independent of which and where.

        Digests have one length, so ``compare_digest`` runs in constant time; every key is
        compared, so the time says nothing about how many keys there are or which one matched.
        """
        candidate = _digest(presented)
        found = False
        for digest in self.digests:
            found |= hmac.compare_digest(candidate, digest)
        return found


KeyLoader = Callable[[], KeySet]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def split_keys(text: str) -> list[str]:
    """The keys in ``text``, separated by commas or whitespace."""
    return [key for key in _KEY_SEPARATORS.split(text) if key]


def key_set(keys: Iterable[str], *, source: str) -> KeySet:
    """A ``KeySet`` of ``keys``; keys shorter than ``MIN_KEY_LENGTH`` are dropped with a warning."""
    kept: list[bytes] = []
    short = 0
    for key in keys:
        key = key.strip()
        if not key:
            continue
        if len(key) < MIN_KEY_LENGTH:
            short += 1
            continue
        kept.append(_digest(key))
    if short:
        log.warning(
            "Blindata receiver: ignored %d API key(s) in %s shorter than %d characters",
            short,
            source,
            MIN_KEY_LENGTH,
        )
    if kept:
        return KeySet(tuple(kept), source)
    if short:
        problem = (
            f"the API key in {source} is shorter than {MIN_KEY_LENGTH} characters; "
            "generate one with `openssl rand -hex 32`"
        )
    else:
        problem = f"no API key in {source}"
    return KeySet((), source, problem)


def _extra_keys(extra: Any) -> list[str]:
    """The keys listed in a connection extra's ``api_keys`` (a list or a comma-separated text)."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra) if extra.strip() else {}
        except ValueError:
            return []
    if not isinstance(extra, dict):
        return []
    listed = extra.get(CONN_EXTRA_KEYS)
    if isinstance(listed, str):
        return split_keys(listed)
    if isinstance(listed, list):
        return [str(key) for key in listed if isinstance(key, str)]
    return []


def _connection_keys(conn_id: str) -> list[str] | None:
    """The keys of connection ``conn_id``; None when there is no such connection.

    Uses the core model's lookup (environment, secrets backends, metadata database), which is
    what the API server process can use.
    """
    from airflow.exceptions import AirflowNotFoundException
    from airflow.models.connection import Connection

    try:
        conn = Connection.get_connection_from_secrets(conn_id)
    except AirflowNotFoundException:
        return None
    keys = split_keys(conn.password or "")
    keys.extend(_extra_keys(conn.extra))
    return keys


def configured_keys() -> KeySet:
    """The keys from Airflow's configuration, first source that has one (module docstring)."""
    option = f"[{SECTION}] {KEY_OPTION}"
    configured = receiver_api_key()
    if split_keys(configured):
        return key_set(split_keys(configured), source=option)
    conn_id = receiver_conn_id()
    keys = _connection_keys(conn_id)
    if keys is None:
        return KeySet(
            (),
            "",
            f"no API key is configured: set {option}, or the password of the Airflow "
            f"connection {conn_id!r} ([{SECTION}] {CONN_ID_OPTION})",
        )
    return key_set(keys, source=f"the Airflow connection {conn_id!r}")


class CachedKeys:
    """A ``KeyLoader`` result kept for ``ttl`` seconds; a failing loader refuses, never opens.

    Thread-safe: request handlers run in a thread pool. The first caller after expiry reloads,
    the others keep using the previous keys meanwhile.
    """

    def __init__(
        self,
        loader: KeyLoader,
        *,
        ttl: float = KEY_REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._loader = loader
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: KeySet | None = None
        self._expires = 0.0
        self._logged_source: str | None = None

    def fresh(self) -> KeySet | None:
        """The cached keys while they are fresh (no I/O: safe on the event loop), else None."""
        keys = self._keys
        return keys if keys is not None and self._clock() < self._expires else None

    def get(self) -> KeySet:
        """The current keys, reloaded when they are older than ``ttl`` (may do I/O)."""
        now = self._clock()
        keys = self._keys
        if keys is not None and now < self._expires:
            return keys
        if not self._lock.acquire(blocking=keys is None):
            return keys  # type: ignore[return-value]  # another thread is reloading
        try:
            if self._keys is not None and self._clock() < self._expires:
                return self._keys
            return self._reload()
        finally:
            self._lock.release()

    def _reload(self) -> KeySet:
        try:
            keys = self._loader()
            ttl = self._ttl
        except Exception as error:
            # The exception's text may come from a secrets backend: only its class is shown.
            log.warning(
                "Blindata receiver could not read its API keys (%s); requests are refused",
                type(error).__name__,
            )
            log.debug("Blindata receiver key lookup failure details:", exc_info=True)
            keys = KeySet(
                (), "", "the receiver's API keys could not be read; see the API server log"
            )
            ttl = min(self._ttl, FAILED_LOOKUP_RETRY_SECONDS)
        if keys.source != self._logged_source and keys.digests:
            log.info(
                "Blindata receiver accepts %d API key(s) from %s", len(keys.digests), keys.source
            )
            self._logged_source = keys.source
        self._keys, self._expires = keys, self._clock() + ttl
        return keys


def bearer_token(header: str | None) -> tuple[str | None, str | None]:
    """The key in an ``Authorization`` header, or why there is none (for the 401 message)."""
    if not header or not header.strip():
        return None, "missing API key: send the header `Authorization: Bearer <key>`"
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != _BEARER:
        return None, "the Authorization header must use the Bearer scheme: `Bearer <key>`"
    token = token.strip()
    if not token:
        return None, "the Authorization header has no key after `Bearer`"
    return token, None
