"""The receiver's API keys: where they come from, and checking a presented key in constant time.

Keys are read from the first source that has one, a lower source then not consulted:
``[blindata] receiver_api_key`` (several keys allowed), else the connection
``[blindata] receiver_conn_id`` (its password, plus its extra's ``api_keys``). No key anywhere:
every request is refused (503). A key shorter than ``MIN_KEY_LENGTH`` is ignored with a warning;
only SHA-256 digests are kept, re-read every ``KEY_REFRESH_SECONDS``. A key may be scoped to job
namespaces (``KeyScope``, ``fnmatch`` globs); a scope that cannot be read leaves its key out,
never unscoped.

The rules in full: docs/configure-your-producers.md#how-receiverkeyspy-reads-and-checks-keys
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from airflow_blindata.events import Event, JobEvent, RunEvent
from airflow_blindata.options import SECTION, receiver_api_key, receiver_conn_id

__all__ = [
    "ANY_NAMESPACE",
    "KEY_REFRESH_SECONDS",
    "MIN_KEY_LENGTH",
    "CachedKeys",
    "KeyLoader",
    "KeyScope",
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
CONN_EXTRA_NAMESPACES = "namespaces"
MIN_KEY_LENGTH = 16
"""Shorter keys are guessable; ``openssl rand -hex 32`` gives 64 characters."""
KEY_REFRESH_SECONDS = 30.0
"""How long keys are cached: a rotated connection or option is in effect after this at most."""
FAILED_LOOKUP_RETRY_SECONDS = 5.0
"""After a failed lookup (secrets backend down), how long until the next try."""
_KEY_SEPARATORS = re.compile(r"[\s,]+")
_BEARER = "bearer"


@dataclass(frozen=True, slots=True)
class KeyScope:
    """The job namespaces a key may write: globs (``fnmatch``, case-sensitive), or any (None)."""

    namespaces: tuple[str, ...] | None = None

    def refusal(self, event: Event) -> str | None:
        """Why this key may not send ``event`` (None: it may). The reason never quotes the
        event's namespace, which may hold a password, since it reaches the API server's log."""
        if self.namespaces is None:
            return None
        if not isinstance(event, RunEvent | JobEvent):
            return (
                "outside the API key's scope: the key may write only jobs of its namespaces, "
                "and a DatasetEvent names no job"
            )
        namespace = event.job.namespace
        if any(fnmatchcase(namespace, glob) for glob in self.namespaces):
            return None
        allowed = ", ".join(self.namespaces) or "none"
        return (
            "outside the API key's scope: the event's job namespace matches none of the "
            f"key's namespaces ({allowed})"
        )


ANY_NAMESPACE = KeyScope()
"""The scope of a key listed plainly: every job namespace."""

Entry = str | tuple[str, KeyScope]
"""A configured key, plain (any namespace) or with its scope."""


@dataclass(frozen=True, slots=True)
class KeySet:
    """The valid keys (as SHA-256 digests), where they came from, or why there are none.

    ``scopes`` holds the scope of each digest, in order; empty when no key is scoped.
    """

    digests: tuple[bytes, ...]
    source: str
    problem: str | None = None
    scopes: tuple[KeyScope, ...] = ()

    def matches(self, presented: str) -> bool:
        """Whether ``presented`` is one of the keys (``scope_of``)."""
        return self.scope_of(presented) is not None

    def scope_of(self, presented: str) -> KeyScope | None:
        """The scope of ``presented``, None when it is not a key; in time independent of which
        key matched and where.

        Digests have one length, so ``compare_digest`` runs in constant time; every key is
        compared, so the time says nothing about how many keys there are or which one matched.
        """
        candidate = _digest(presented)
        found: KeyScope | None = None
        for index, digest in enumerate(self.digests):
            if hmac.compare_digest(candidate, digest):
                found = self.scopes[index] if self.scopes else ANY_NAMESPACE
        return found


KeyLoader = Callable[[], KeySet]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def split_keys(text: str) -> list[str]:
    """The keys in ``text``, separated by commas or whitespace."""
    return [key for key in _KEY_SEPARATORS.split(text) if key]


def key_set(keys: Iterable[Entry], *, source: str) -> KeySet:
    """A ``KeySet`` of ``keys``, plain or with their scope; keys shorter than
    ``MIN_KEY_LENGTH`` are dropped with a warning."""
    kept: list[bytes] = []
    scopes: list[KeyScope] = []
    short = 0
    for entry in keys:
        key, scope = (entry, ANY_NAMESPACE) if isinstance(entry, str) else entry
        key = key.strip()
        if not key:
            continue
        if len(key) < MIN_KEY_LENGTH:
            short += 1
            continue
        kept.append(_digest(key))
        scopes.append(scope)
    if short:
        log.warning(
            "Blindata receiver: ignored %d API key(s) in %s shorter than %d characters",
            short,
            source,
            MIN_KEY_LENGTH,
        )
    if kept:
        scoped = any(scope.namespaces is not None for scope in scopes)
        return KeySet(tuple(kept), source, scopes=tuple(scopes) if scoped else ())
    if short:
        problem = (
            f"the API key in {source} is shorter than {MIN_KEY_LENGTH} characters; "
            "generate one with `openssl rand -hex 32`"
        )
    else:
        problem = f"no API key in {source}"
    return KeySet((), source, problem)


def _scope(globs: Any) -> KeyScope | None:
    """A key's scope from its configured namespaces: a glob or a list of globs (``"*"``: any
    namespace); None when they are neither, and the key is then left out: a scope misread
    must never let a key write more."""
    if isinstance(globs, str):
        globs = [globs]
    if not isinstance(globs, list) or not all(isinstance(glob, str) for glob in globs):
        return None
    cleaned = tuple(glob.strip() for glob in globs if glob.strip())
    return ANY_NAMESPACE if "*" in cleaned else KeyScope(cleaned)


def _scoped_entries(listed: Any, source: str) -> list[Entry]:
    """The keys of a decoded JSON value: an object of key → namespaces, or a list of keys and
    ``{"key": ..., "namespaces": ...}`` objects (a plain key: any namespace). An entry that
    cannot be read is left out, with a warning that names the source, never the key."""
    pairs: list[tuple[Any, Any]] = []
    plain: list[Entry] = []
    if isinstance(listed, Mapping):
        pairs = list(listed.items())
    elif isinstance(listed, list):
        for item in listed:
            if isinstance(item, str):
                plain.extend(split_keys(item))
            elif isinstance(item, Mapping) and "key" in item and not _misspelt_scope(item):
                pairs.append((item.get("key"), item.get(CONN_EXTRA_NAMESPACES, "*")))
            else:
                pairs.append((None, None))
    entries: list[Entry] = list(plain)
    unreadable = 0
    for key, globs in pairs:
        scope = _scope(globs)
        if not isinstance(key, str) or scope is None:
            unreadable += 1
            continue
        entries.append((key, scope))
    if unreadable:
        log.warning(
            "Blindata receiver: ignored %d API key(s) in %s whose namespaces are not a glob "
            "or a list of globs, or that name a scope otherwise (namespace, scope)",
            unreadable,
            source,
        )
    return entries


def _extra_keys(extra: Any, source: str = "the connection extra") -> list[Entry]:
    """The keys listed in a connection extra's ``api_keys``: a list, a comma-separated text, or
    an object of key → namespaces (module docstring)."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra) if extra.strip() else {}
        except ValueError:
            return []
    if not isinstance(extra, dict):
        return []
    listed = extra.get(CONN_EXTRA_KEYS)
    if isinstance(listed, str) and listed.lstrip().startswith(("[", "{")):
        try:  # a JSON list (or object) given as a string, as the option takes it
            listed = json.loads(listed)
        except (ValueError, RecursionError):
            log.warning(
                "Blindata receiver: %s's %s is not JSON: no key read", source, CONN_EXTRA_KEYS
            )
            return []
    if isinstance(listed, str):
        return list(split_keys(listed))
    if isinstance(listed, list | dict):
        return _scoped_entries(listed, source)
    return []


def _password_scope(extra: Any) -> KeyScope | None:
    """The scope the extra's ``namespaces`` gives the connection's password; ``ANY_NAMESPACE``
    without one, None when it cannot be read (the password's keys are then left out), also
    when a field is named as a misspelt scope (``namespace``, ``scope``): read as no scope,
    the key would write every namespace."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra) if extra.strip() else {}
        except ValueError:
            return ANY_NAMESPACE
    if isinstance(extra, dict) and CONN_EXTRA_NAMESPACES not in extra and _misspelt(extra):
        return None
    if not isinstance(extra, dict) or CONN_EXTRA_NAMESPACES not in extra:
        return ANY_NAMESPACE
    return _scope(extra[CONN_EXTRA_NAMESPACES])


_SCOPE_WORDS = frozenset({"scope", "scopes", "jobns", "ns", "jobscope"})
"""How a key's scope may be misspelt besides a name holding ``namespace`` (``Namespaces``,
``namespace``, ``jobNamespaces``, ``namespaces_allowed``), blanks, ``_``, ``-`` and case aside.
Only where ``namespaces`` itself is absent: beside it, the scope is read."""


def _misspelt_scope(item: Mapping[str, Any]) -> bool:
    """Whether an ``api_keys`` item names its scope otherwise than ``namespaces`` (and not so):
    with a ``namespaces`` field its scope is read, whatever else it holds."""
    return CONN_EXTRA_NAMESPACES not in item and _misspelt(item)


def _misspelt(fields: Mapping[str, Any]) -> bool:
    """Whether ``fields`` name a scope otherwise than ``namespaces`` (``namespace``,
    ``Namespaces``, ``scopes``): a scope misread must never let a key write more. The field is
    named in the warning (never its value)."""
    for name in fields:
        text = str(name)
        bare = re.sub(r"[\s_-]", "", text.lower())
        misspelt = "namespace" in bare or bare in _SCOPE_WORDS
        if text != CONN_EXTRA_NAMESPACES and misspelt:
            log.warning(
                "Blindata receiver: the field %r may be a misspelt scope (the field is %r): "
                'its key is left out rather than read as unscoped; add %r ("*": any '
                "namespace) or rename the field",
                text,
                CONN_EXTRA_NAMESPACES,
                CONN_EXTRA_NAMESPACES,
            )
            return True
    return False


def _connection_keys(conn_id: str) -> list[Entry] | None:
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
    source = f"the Airflow connection {conn_id!r}"
    keys: list[Entry] = []
    password = split_keys(conn.password or "")
    scope = _password_scope(conn.extra) if password else ANY_NAMESPACE
    if scope is None and password:
        log.warning(
            "Blindata receiver: ignored the password of %s: the extra's %s is not a glob or a "
            "list of globs, or another field names a scope (namespace, scope: a misspelling "
            "would leave the key unscoped)",
            source,
            CONN_EXTRA_NAMESPACES,
        )
    elif scope is not None:
        keys.extend((key, scope) for key in password)
    keys.extend(_extra_keys(conn.extra, source))
    return keys


def _option_keys(configured: str, option: str) -> list[Entry] | KeySet:
    """The keys of the option: plain keys separated by commas or whitespace, or a JSON object
    of key → namespaces; a ``KeySet`` that refuses everything when that JSON cannot be read
    (its message never quotes the value, a secret)."""
    start = configured.lstrip()[:1]
    if start not in ("{", "["):
        return list(split_keys(configured))
    try:
        listed = json.loads(configured)
    except (ValueError, RecursionError) as error:
        shape = "object of API key to job namespaces" if start == "{" else "list of keys"
        problem = (
            f"{option} starts with '{start}' but is not a JSON {shape} "
            f"(line {getattr(error, 'lineno', '?')}, column {getattr(error, 'colno', '?')})"
        )
        return KeySet((), option, problem)
    return _scoped_entries(listed, option)


def configured_keys() -> KeySet:
    """The keys from Airflow's configuration, first source that has one (module docstring)."""
    option = f"[{SECTION}] {KEY_OPTION}"
    configured = receiver_api_key()
    keys = _option_keys(configured, option)
    if isinstance(keys, KeySet):
        return keys
    if keys or configured.lstrip()[:1] in ("{", "["):  # JSON given: no lower source is read
        return key_set(keys, source=option)
    conn_id = receiver_conn_id()
    found = _connection_keys(conn_id)
    if found is None:
        return KeySet(
            (),
            "",
            f"no API key is configured: set {option}, or the password of the Airflow "
            f"connection {conn_id!r} ([{SECTION}] {CONN_ID_OPTION})",
        )
    return key_set(found, source=f"the Airflow connection {conn_id!r}")


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
            scoped = sum(1 for scope in keys.scopes if scope.namespaces is not None)
            log.info(
                "Blindata receiver accepts %d API key(s) from %s (%d scoped to job namespaces)",
                len(keys.digests),
                keys.source,
                scoped,
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
