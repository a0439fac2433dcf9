"""``BlindataHook``: the BLINDATA Airflow connection turned into a ``BlindataClient``.

The connection (conn type ``blindata``, default id ``blindata_default``) holds:

========== ================================================================================
host       the Blindata URL, e.g. ``https://app.blindata.io`` (``https://`` is assumed when absent)
port       added to the URL's host when the URL has none
schema     the URL's path (the URI form puts it there), or ``http``/``https`` for a bare host
login      the username (an application user for ``api_key``, a person or service for ``login``)
password   the API key, the password, or the bearer token, depending on ``auth_method``
extra      ``tenant`` (uuid), ``auth_method`` (``api_key`` | ``login`` | ``bearer``, default
           ``api_key``), ``verify_ssl`` (default true), ``ca_bundle`` (a private CA's PEM file),
           ``timeout`` (seconds per request, default 30), ``deadline`` (seconds for one
           operation with its retries, default 120),
           ``api_paths`` (contract path -> the path this instance serves; ``api_paths.py``)
========== ================================================================================

The form shown in the Airflow UI is declared in ``get_provider_info.py`` (``conn-fields``); on
Airflow 3.0 and 3.1 the hook builds the same form from it (``form.py``).
"""

from __future__ import annotations

import ipaddress
import json
import math
import ssl
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

# through common-compat: airflow.sdk has BaseHook from Airflow 3.1 (airflow.hooks.base before)
from airflow.providers.common.compat.sdk import BaseHook

from airflow_blindata.blindata import (
    DEFAULT_TIMEOUT,
    ApiKeyCredentials,
    BearerToken,
    BlindataAuthError,
    BlindataClient,
    BlindataConfigError,
    BlindataContractError,
    BlindataDeadlineError,
    BlindataError,
    BlindataNotFoundError,
    BlindataPermissionError,
    BlindataRequestError,
    BlindataStatusError,
    BlindataUnsentError,
    Credentials,
    LoginCredentials,
    RetryPolicy,
)
from airflow_blindata.blindata.api_paths import ApiPaths
from airflow_blindata.blindata.paths import ENDPOINTS
from airflow_blindata.options import FALSE_WORDS, TRUE_WORDS, misspelt_key, parse_flag
from airflow_blindata.redaction import redact_text, redact_url, scrub, url_secrets

if TYPE_CHECKING:
    from airflow_blindata.blindata.apicheck import ApiCheck

__all__ = [
    "AUTH_METHODS",
    "BlindataConnectionSettings",
    "BlindataHook",
    "check_api_settings",
    "check_settings",
    "connection_url",
    "settings_from_airflow",
]

AuthMethod = Literal["api_key", "login", "bearer"]
AUTH_METHODS: tuple[AuthMethod, ...] = ("api_key", "login", "bearer")
DEFAULT_DEADLINE = 120.0
TEST_CONNECTION_RETRY = RetryPolicy(deadline=15.0, max_attempts=2, backoff_initial=0.5)
"""A connection test answers within seconds: the UI waits for it."""


@dataclass(frozen=True)
class BlindataConnectionSettings:
    """What a BLINDATA connection says, validated; every error names the field to fix.

    The URL may carry credentials (``https://user:password@host``): ``repr`` and every message
    show ``shown_url``, with ``***`` in place of the password, and never the secret.
    """

    url: str
    tenant: str | None
    auth_method: AuthMethod
    username: str | None
    secret: str = field(repr=False)
    verify_ssl: bool | str = True
    """Whether to verify Blindata's TLS certificate, or the CA bundle (a PEM file, or a directory
    of them) to verify it with: an instance whose certificate a private CA signed."""
    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    api_paths: ApiPaths = field(default_factory=ApiPaths)
    given_by_url: bool = field(default=False, repr=False, compare=False)
    """Given on the command line (``--url``, ``--api-paths``), not by an Airflow connection:
    messages then name those options, never "the connection"."""

    @classmethod
    def from_connection(cls, conn: Any) -> BlindataConnectionSettings:
        """Read an Airflow ``Connection`` (anything with host, port, login, password, extra)."""
        conn_id = getattr(conn, "conn_id", None) or "the connection"
        by_url = conn_id == URL_OPTION
        parsed = conn.extra_dejson
        if parsed is not None and not isinstance(parsed, dict):
            # JSON that is no object (a list, a number), or JSON text of JSON text (a secrets
            # backend's value or a Helm value built with json.dumps twice): Airflow's
            # ``extra_dejson`` returns it as it reads, and ``dict()`` of it raised a bare
            # ValueError in every task and in the Test button (a probe)
            raise BlindataConfigError(_not_a_json_object(conn_id, parsed))
        extra: dict[str, Any] = dict(parsed or {})
        raw_extra = getattr(conn, "extra", None)
        if not extra and isinstance(raw_extra, str) and not _json_object(raw_extra):
            # Airflow reads extra that is not a JSON object as empty (and logs it): the tenant
            # and every setting in it would fall back to their defaults, the Test button green
            raise BlindataConfigError(_not_a_json_object(conn_id))
        # Older forms stored extras as ``extra__blindata__<name>``; accept both spellings.
        for key in list(extra):
            if key.startswith("extra__blindata__"):
                extra.setdefault(key.removeprefix("extra__blindata__"), extra.pop(key))
        _refuse_misspelt(extra, conn_id)
        # A field left empty (null, or "" from a form or a URI's ``?timeout=``) takes its default.
        extra = {
            key: value
            for key, value in extra.items()
            if value is not None and not (isinstance(value, str) and not value.strip())
        }
        host = (conn.host or "").strip()
        if not host:
            raise BlindataConfigError(f"{conn_id}: the Blindata URL (host) is empty")
        url = connection_url(host, getattr(conn, "schema", None), conn.port, conn_id)
        auth_method = str(extra.get("auth_method") or "api_key").strip().lower()
        if auth_method not in AUTH_METHODS:
            raise BlindataConfigError(
                f"{conn_id}: auth_method {auth_method!r} is not one of {', '.join(AUTH_METHODS)}"
            )
        secret = conn.password or ""
        if auth_method != "login":
            # Sent in a header, which cannot carry the line break a key read from a file or a
            # secrets backend often ends with (nor spaces around it: HTTP drops them).
            secret = secret.strip()
        if not secret:
            raise BlindataConfigError(
                f"{conn_id}: the password field is empty (API key, password or token)"
            )
        # A blank around the username (pasted with it) is no part of it, as around the key and
        # the tenant: an HTTP header cannot carry it, and a login would be refused for it.
        username = (conn.login or "").strip() or None
        if auth_method != "bearer" and not username:
            raise BlindataConfigError(f"{conn_id}: auth_method {auth_method} needs a username")
        tenant = (str(extra["tenant"]).strip() or None) if extra.get("tenant") else None
        _check_header_values(conn_id, auth_method, username, secret, tenant)
        return cls(
            url=url,
            tenant=tenant,
            auth_method=auth_method,  # type: ignore[arg-type]  # checked against AUTH_METHODS
            username=username,
            secret=secret,
            verify_ssl=_verify(extra.get("verify_ssl", True), extra.get("ca_bundle"), conn_id),
            timeout=_seconds(extra.get("timeout", DEFAULT_TIMEOUT), f"{conn_id}: timeout"),
            deadline=_seconds(extra.get("deadline", DEFAULT_DEADLINE), f"{conn_id}: deadline"),
            api_paths=ApiPaths.parse(
                extra.get("api_paths"),
                where="--api-paths" if by_url else f"{conn_id}: api_paths",
            ),
            given_by_url=by_url,
        )

    @property
    def shown_url(self) -> str:
        """The URL as messages show it: any password replaced by ``***``."""
        return redact_url(self.url)

    def __repr__(self) -> str:
        return (
            f"BlindataConnectionSettings(url={self.shown_url!r}, tenant={self.tenant!r}, "
            f"auth_method={self.auth_method!r}, username={self.username!r}, "
            f"verify_ssl={self.verify_ssl!r}, timeout={self.timeout!r}, "
            f"deadline={self.deadline!r}, api_paths={dict(self.api_paths.moved)!r})"
        )

    def scrub(self, text: str) -> str:
        """``text`` without the secret and the URL's credentials."""
        return scrub(text, (self.secret, *url_secrets(self.url)))

    @property
    def credentials(self) -> Credentials:
        if self.auth_method == "bearer":
            return BearerToken(self.secret)
        assert self.username is not None  # checked in from_connection
        if self.auth_method == "login":
            return LoginCredentials(self.username, self.secret)
        return ApiKeyCredentials(self.username, self.secret)

    def client(self, **overrides: Any) -> BlindataClient:
        options: dict[str, Any] = {
            "credentials": self.credentials,
            "tenant": self.tenant,
            "verify": tls_verification(self.verify_ssl),
            "timeout": self.timeout,
            "retry": RetryPolicy(deadline=self.deadline),
            "api_paths": self.api_paths,
        }
        options.update(overrides)
        return BlindataClient(self.url, **options)


def connection_url(host: str, schema: str | None, port: int | None, conn_id: str) -> str:
    """The Blindata URL that the connection's host, schema and port describe.

    The port goes in the URL's authority, before any path, when the URL has none. The schema is
    where Airflow's URI form (``blindata://user:key@host:443/blindata``) puts the URL's path, so
    it is the path prefix; ``http`` or ``https`` there is the scheme of a host given without
    one, as Airflow's http connection reads it. The connection's type is not: ``http`` is the
    generic type the UI offers, and a host without a scheme under it went over plain HTTP with
    the API key (a review); the URI form writes ``http://user:key@host:8080/http``.
    """
    prefix = (schema or "").strip().strip("/")
    scheme = "https"
    if prefix.lower() in ("http", "https"):
        scheme, prefix = prefix.lower(), ""
    if "://" not in host and _is_ipv6(host):
        host = f"[{host}]"  # Airflow keeps a URI's IPv6 host without the brackets a URL needs
    url = host if "://" in host else f"{scheme}://{host}"
    scheme, _, rest = url.partition("://")
    scheme = scheme.strip().lower()  # URL schemes have no case: ``HTTPS://host`` is one too
    ends = [index for index in (rest.find(char) for char in "/?#") if index >= 0]
    authority, path = rest[: min(ends, default=len(rest))], rest[min(ends, default=len(rest)) :]
    # Credentials and an IPv6 address may hold colons: only what follows them can be a port.
    if port and ":" not in authority.rpartition("@")[2].rpartition("]")[2]:
        authority = f"{authority}:{port}"
    if "?" in path.partition("#")[0]:
        # every API path is added after the URL's path: a query there ended each request's path
        # (``/blindata?x=1/api/v1/…`` asks for ``/blindata``) while its errors named the API's
        raise BlindataConfigError(  # not quoted: a query may hold a token
            f"{conn_id}: the Blindata URL has a query (a '?' and what follows it): give the URL "
            "without it (the tenant and the settings go in extra)"
        )
    if prefix and path.strip("/") != prefix:
        if path.strip("/"):
            raise BlindataConfigError(
                f"{conn_id}: the URL's path {path!r} and the schema {prefix!r} (the path of the "
                "connection's URI form) differ: give the path once"
            )
        path = f"/{prefix}"
    return f"{scheme}://{authority}{path}"


def _check_header_values(
    conn_id: str, auth_method: str, username: str | None, secret: str, tenant: str | None
) -> None:
    """Refuse what a request header would carry and cannot: a line break or another control
    character (a token wrapped when it was copied), or a tenant uuid that is not ASCII (a
    zero-width space pasted with it). Sent anyway, every request failed before it left the
    worker, and was retried until the deadline as if the network had failed."""
    if auth_method != "login":  # the login method sends them in a JSON body
        _header_safe(secret, f"{conn_id}: the password field (API key or token)", secret=True)
        if auth_method == "api_key" and username:
            _header_safe(username, f"{conn_id}: the username (sent as X-BD-User)", secret=False)
    if tenant is not None:
        name = f"{conn_id}: the tenant (sent as X-BD-Tenant)"
        _header_safe(tenant, name, secret=False)
        odd = next((char for char in tenant if not char.isascii()), None)
        if odd is not None:
            raise BlindataConfigError(
                f"{name} holds a character that is not ASCII (U+{ord(odd):04X}): a tenant is a "
                "uuid, give it without that character"
            )


def _header_safe(value: str, name: str, *, secret: bool) -> None:
    """``value`` has no control character but a tab (RFC 9110's field value); a secret's message
    says which kind of character, never where it is or what is around it."""
    odd = next(
        (char for char in value if (ord(char) < 32 and char != "\t") or ord(char) == 127), None
    )
    if odd is None:
        return
    shown = "" if secret else f" {value!r}"
    raise BlindataConfigError(
        f"{name}{shown} holds a line break or another control character, which an HTTP header "
        "cannot carry: give it on one line, as it was issued"
    )


_BOOLEAN_WORDS = TRUE_WORDS | FALSE_WORDS


def _boolean(value: Any, name: str) -> bool:
    try:
        return parse_flag(value, name)
    except ValueError as exc:
        raise BlindataConfigError(str(exc)) from None


def _is_ipv6(host: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
    except ValueError:
        return False


def _verify(value: Any, ca_bundle: Any, conn_id: str) -> bool | str:
    """``verify_ssl`` (true or false, or a CA bundle's path, as ``requests`` takes it) and
    ``ca_bundle`` (the path of a PEM file or a directory of them, for a Blindata whose
    certificate a private CA signed): ``verify_ssl`` false turns verification off whatever the
    bundle."""
    name = f"{conn_id}: verify_ssl"
    text = str(value).strip()
    if isinstance(value, bool) or text.lower() in _BOOLEAN_WORDS:
        verify: bool | str = _boolean(value, name)
    else:
        verify = _ca_bundle(value, name)
    bundle = str(ca_bundle or "").strip()
    if verify is True and bundle:
        return _ca_bundle(bundle, f"{conn_id}: ca_bundle")
    return verify


def _ca_bundle(value: Any, name: str) -> str:
    path = Path(str(value).strip()).expanduser()
    if not str(value).strip() or not path.exists():
        raise BlindataConfigError(
            f"{name}: no CA bundle at {str(value)!r} on this machine (give the path of a PEM "
            "file, or of a directory of them)"
        )
    if path.is_file():
        # read now, so that the message names the field: a file with no certificate in it was
        # accepted, then ``check`` said "SSLError: [X509: NO_CERTIFICATE_OR_CRL_FOUND]" and a
        # task's hook raised a bare ``ssl.SSLError`` (a probe of deployments)
        try:
            ssl.create_default_context(cafile=str(path))
        except (ssl.SSLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or type(exc).__name__
            raise BlindataConfigError(
                f"{name}: {str(value)!r} holds no CA certificate this machine can read "
                f"({reason}): give a PEM file of certificates (-----BEGIN CERTIFICATE-----)"
            ) from None
    return str(path)


def tls_verification(verify: bool | str) -> bool | ssl.SSLContext:
    """What httpx takes for ``verify``: a CA bundle's path becomes a context that trusts it
    (httpx 0.28 deprecates a path there)."""
    if isinstance(verify, bool):
        return verify
    if Path(verify).is_dir():
        return ssl.create_default_context(capath=verify)
    return ssl.create_default_context(cafile=verify)


EXTRA_KEYS = (
    "auth_method",
    "tenant",
    "verify_ssl",
    "ca_bundle",
    "timeout",
    "deadline",
    "api_paths",
)
"""The settings the connection's extra holds (docs/connection.md)."""


def _not_a_json_object(conn_id: str, parsed: object = None) -> str:
    """The message for a connection whose extra is not a JSON object: what it is instead when
    known (``parsed``, what Airflow read), and how to write it."""
    how = '(write it as {"tenant": "…", "timeout": 30}, keys and texts in double quotes)'
    if isinstance(parsed, str) and parsed.strip() and _json_object(parsed):
        return (
            f"{conn_id}: extra is not a JSON object but a JSON string holding one: it was "
            "encoded twice (json.dumps of a text already JSON, in a secrets backend's value or "
            f"a Helm value); give the object itself {how}"
        )
    kind = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    what = kind.get(type(parsed))
    return f"{conn_id}: extra is not a JSON object{f' but {what}' if what else ''} {how}"


def _json_object(text: str) -> bool:
    """Whether ``text`` is empty or a JSON object (``{ }`` and ``{\n}`` too)."""
    if not text.strip():
        return True
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _refuse_misspelt(extra: dict[str, Any], conn_id: str) -> None:
    """Refuse a key of extra that is a misspelt setting (``tennant``, ``verify_sll``,
    ``timout``) or holds the words of one and no other but an id's (``tenant_uuid``,
    ``X-BD-Tenant``, ``ssl_verify``, ``ca_bundle_path``): ignored, a sync would run on the
    user's default tenant, or with the default timeout, and the Test button say all was well
    (a probe of deployments). A key like no setting is left alone (another tool's)."""
    for key in extra:
        meant = misspelt_key(key, EXTRA_KEYS)
        if meant is not None:
            raise BlindataConfigError(
                f"{conn_id}: extra has {key!r}, which is no setting: did you mean {meant!r}?"
            )


def _seconds(value: Any, name: str) -> float:
    if isinstance(value, bool):  # float(True) is 1.0: a one-second timeout nobody asked for
        raise BlindataConfigError(f"{name} must be a number of seconds, got {value!r}")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise BlindataConfigError(f"{name} must be a number of seconds, got {value!r}") from None
    if seconds <= 0:
        raise BlindataConfigError(f"{name} must be positive, got {value!r}")
    if not math.isfinite(seconds):  # float() reads "nan" and "inf": a deadline never reached
        raise BlindataConfigError(f"{name} must be a positive, finite number, got {value!r}")
    return seconds


class BlindataHook(BaseHook):
    """Interact with Blindata through the BLINDATA connection.

    :param blindata_conn_id: the connection id, ``blindata_default`` unless given.
    """

    conn_name_attr = "blindata_conn_id"
    default_conn_name = "blindata_default"
    conn_type = "blindata"
    hook_name = "Blindata"

    def __init__(self, blindata_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blindata_conn_id = blindata_conn_id

    # Airflow 3.0 and 3.1 build the form from these; 3.2+ reads get_provider_info and skips them.
    @classmethod
    def get_connection_form_widgets(cls) -> dict[str, Any]:
        """The form's extra fields, as ``conn-fields`` declares them (``form.py``)."""
        from airflow_blindata.hooks.form import connection_form_widgets

        return connection_form_widgets()

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Hidden, relabelled and placeholder standard fields, as ``ui-field-behaviour`` says."""
        from airflow_blindata.hooks.form import ui_field_behaviour

        return ui_field_behaviour()

    @cached_property
    def settings(self) -> BlindataConnectionSettings:
        return BlindataConnectionSettings.from_connection(
            self.get_connection(self.blindata_conn_id)
        )

    def get_conn(self) -> BlindataClient:
        """A new client for the connection; close it (or use it in ``with``) when done."""
        return self.settings.client()

    def test_connection(self) -> tuple[bool, str]:
        """Prove that the URL, the credentials and the tenant work, with one real call.

        ``airflow connections test`` of Airflow 3.1 runs outside a task without telling the
        Task SDK it is a server: ``get_connection`` then reads no connection of the metadata
        database. One not found so is read as the ``airflow`` command reads it."""
        try:
            settings = self.settings
        except BlindataError as exc:
            return False, f"The connection {self.blindata_conn_id} is not usable: {exc}"
        except Exception as exc:  # e.g. the connection does not exist
            try:
                settings = settings_from_airflow(self.blindata_conn_id)
            except BlindataError as unusable:
                return False, f"The connection {self.blindata_conn_id} is not usable: {unusable}"
            except Exception:
                return False, f"Cannot read the connection {self.blindata_conn_id}: {exc}"
        return check_settings(settings)

    def check_api(self, *, openapi: str | None = None, probe: bool = False) -> ApiCheck:
        """Whether the instance serves every path the client may call (``apicheck.py``).

        Reads the instance's OpenAPI description (or ``openapi``, a file or URL), or with
        ``probe`` asks the instance with safe requests when there is none. The result is
        structured (``.ok``, ``.missing``, ``.rows``, ``.to_dict()`` for an XCom); it never
        raises for what the instance answers, only for a connection that cannot be read. The
        connection is tested too, as by ``test_connection``: ``.ok`` is true only when every
        path the provider calls is served and the credentials and tenant work
        (``.paths_served`` and ``.connection`` say each), as ``airflow-blindata check --api``.
        """
        return check_api_settings(self.settings, openapi=openapi, probe=probe)


def settings_from_airflow(conn_id: str) -> BlindataConnectionSettings:
    """The connection ``conn_id`` wherever Airflow keeps it, as the ``airflow`` command reads it.

    For command-line tools run outside Airflow's own processes. There ``BaseHook.get_connection``
    (the Task SDK) reads only environment variables and secrets backends, while ``airflow
    connections get|test`` also find connections kept in the metadata database: they read
    ``airflow.models.Connection.get_connection_from_secrets``, which asks the configured secrets
    backend, the environment variables and the metadata database, in Airflow's order. So does
    this. Raises ``AirflowNotFoundException`` when no source has it, ``BlindataConfigError``
    when it is not usable.
    """
    from airflow.models.connection import Connection

    try:
        connection = Connection.get_connection_from_secrets(conn_id)
    except Exception as exc:
        reason = _why_unreadable(conn_id) if "NotFound" in type(exc).__name__ else None
        if reason is None:
            raise
        raise BlindataConfigError(reason) from None
    return BlindataConnectionSettings.from_connection(connection)


def _why_unreadable(conn_id: str) -> str | None:
    """Why Airflow says that ``conn_id`` "isn't defined" when a secrets backend (the environment
    variables included) has it and cannot read it: Airflow drops the backend's error (a debug
    line) and goes on to the next backend, so that extra holding no JSON object or a port that
    is no number read as a connection that does not exist (a probe). None when no backend has
    it, or one could not be asked at all (its error is not about the connection)."""
    try:
        from airflow.configuration import ensure_secrets_loaded
    except ImportError:
        return None
    for backend in ensure_secrets_loaded():
        try:
            found = backend.get_connection(conn_id=conn_id)
        except Exception as exc:  # Airflow's reading of what the backend holds
            if not isinstance(exc, ValueError) and type(exc).__name__ != "AirflowException":
                continue  # e.g. a metadata database without its tables: not this connection's
            said = redact_text(str(exc))
            if "`extra`" in said:  # Airflow's message names no connection ("connection None")
                return (
                    f"{_not_a_json_object(conn_id)}; JSON text that holds one (encoded twice, "
                    "json.dumps of a text already JSON) is not one either"
                )
            return f"{conn_id}: Airflow cannot read this connection: {said}"
        if found is not None:
            return None
    return None


def check_settings(settings: BlindataConnectionSettings) -> tuple[bool, str]:
    """One real call (``GET /api/v1/users/me``): whether the URL, credentials and tenant work,
    and a message that says what is wrong otherwise (never a secret)."""
    try:
        with settings.client(retry=TEST_CONNECTION_RETRY) as client:
            user = client.api.me()
    except BlindataError as exc:
        return False, settings.scrub(_explain(exc, settings))
    except Exception as exc:  # the UI must get a message, never a traceback
        return False, settings.scrub(f"Unexpected error: {type(exc).__name__}: {exc}")
    tenant = settings.tenant or "the user's default tenant"
    return True, f"Connected to Blindata at {settings.shown_url} as {user.username} on {tenant}"


def _explain(exc: BlindataError, settings: BlindataConnectionSettings) -> str:
    """A message that says what is wrong and what to check."""
    url = settings.shown_url
    unsent = exc.last_error if isinstance(exc, BlindataDeadlineError) else exc
    if isinstance(unsent, BlindataUnsentError):
        # nothing left the worker: no network problem, a value no HTTP request can carry
        return (
            f"No request was sent to Blindata at {url}: {unsent}. A value the connection sends "
            f"in a header ({_header_fields(settings)}) is one an HTTP header cannot carry: "
            "give it without the line break, control character or blank around it."
        )
    if isinstance(exc, BlindataDeadlineError):
        exc_last = exc.last_error
        if isinstance(exc_last, BlindataRequestError):
            return f"Cannot reach Blindata at {url}: {exc_last}{_tls_hint(str(exc_last), settings)}"
        if isinstance(exc_last, BlindataContractError):  # cut short every time it was asked
            return f"The server at {url} does not answer like Blindata: {exc_last}"
        if isinstance(exc_last, BlindataStatusError):  # 429, 5xx: it answered, with an error
            wait = f"; it asked to wait {exc_last.retry_after:g} s" if exc_last.retry_after else ""
            return (
                f"Blindata at {url} answered {exc_last.status} each of the {exc.attempts} "
                f"time(s) it was asked{wait}: {exc_last}"
            )
        return f"Blindata at {url} did not answer in time: {exc}"
    if isinstance(exc, BlindataRequestError):
        return f"Cannot reach Blindata at {url}: {exc}{_tls_hint(str(exc), settings)}"
    if isinstance(exc, BlindataStatusError) and exc.location is not None:
        return (
            f"Blindata at {url} redirects {exc.operation} ({exc.status}) to {exc.location}: "
            f"{_where(settings, 'url')} {_redirected_base(exc.operation, exc.location)} "
            "(the client follows no redirect)."
        )
    if isinstance(exc, BlindataAuthError):
        how = settings.auth_method
        return (
            f"Blindata rejected the credentials (401, {how} authentication): "
            f"{exc.server_message or exc}. Check the username, the key or password, and the "
            f"auth method."
        )
    if isinstance(exc, BlindataPermissionError) and exc.operation == _login_operation(settings):
        return (
            f"Blindata refused the login (403, {exc.operation}): {exc.server_message or exc}. "
            "Check the username and password, and that the user may log in (an application "
            "user authenticates with api_key)."
        )
    if isinstance(exc, BlindataPermissionError):
        tenant = f"tenant {settings.tenant}" if settings.tenant else "the user's default tenant"
        return (
            f"Blindata refused access (403) to {tenant}: {exc.server_message or exc}. "
            f"Check the tenant uuid and the user's permissions."
        )
    if isinstance(exc, BlindataNotFoundError):
        return (
            f"No Blindata API at {url} ({exc}). Check the URL; if it is right, the tenant may "
            "serve this path elsewhere (who-am-i is inferred, not verified): `airflow-blindata "
            f"check --api` lists the paths it serves, and {_where(settings, 'api_paths')} "
            "moves one."
        )
    if isinstance(exc, BlindataContractError):
        return f"The server at {url} does not answer like Blindata: {exc}"
    return str(exc)


def _header_fields(settings: BlindataConnectionSettings) -> str:
    """The fields of the connection that go in a request's headers, as the form names them."""
    fields = {
        "api_key": ["the username", "the API key"],
        "bearer": ["the token"],
        "login": [],  # the username and password go in the login's JSON body
    }[settings.auth_method]
    if settings.tenant is not None:
        fields.append("the tenant")
    return ", ".join(fields) or "the token the login answered"


def _login_operation(settings: BlindataConnectionSettings) -> str:
    """How errors name the login request (``POST /auth/login``, or where ``api_paths`` moves it)."""
    login = settings.api_paths.resolve(ENDPOINTS["login"])
    return f"{login.method} {login.template}"


URL_OPTION = "--url"
"""The name ``check``, ``snapshot`` and ``cleanup`` give settings read from their options."""


def _where(settings: BlindataConnectionSettings, what: str) -> str:
    """Where the user changes ``what``: the connection's field, or the command's option."""
    if settings.given_by_url:
        return {"url": "give --url", "api_paths": "--api-paths"}[what]
    return {"url": "set the connection's URL to", "api_paths": "the connection's api_paths"}[what]


def _tls_hint(text: str, settings: BlindataConnectionSettings) -> str:
    """What to change in the connection when TLS failed (OpenSSL's words say what, not how)."""
    if "Hostname mismatch" in text:
        return (
            ". The certificate is not for that host name: give the URL with the name it was "
            "issued for."
        )
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return (
            ". Blindata's certificate is not trusted: when a private (corporate) CA signed it, "
            + (
                "give that CA's PEM file in $SSL_CERT_FILE (--url has no CA bundle option), or "
                "check through a connection with its CA bundle field (extra ca_bundle)."
                if settings.given_by_url
                else "give that CA's PEM file in the connection's CA bundle field (extra "
                "ca_bundle)."
            )
            + (
                " A test instance's self-signed certificate: verify_ssl false."
                if "self-signed" in text or "self signed" in text
                else ""
            )
        )
    if "WRONG_VERSION_NUMBER" in text:
        return ". The server does not speak TLS on that port: is the URL http://?"
    if "RemoteProtocolError" in text and settings.url.startswith("http://"):
        # a TLS port that drops a request in plain HTTP (rather than answering 400)
        return (
            ". The server closed the connection on a request in plain HTTP: if it serves TLS on "
            "that port, the URL is https://"
        )
    return ""


def _redirected_base(operation: str, location: str) -> str:
    """The URL a redirect says Blindata is at: ``location`` without the path asked for, when
    it ends with it (``http://h/api/v1/users/me`` sent to ``https://h/api/v1/users/me``)."""
    asked = operation.partition(" ")[2].partition("?")[0]
    target = location.partition("?")[0]
    if asked and target.endswith(asked):
        return target.removesuffix(asked) or target
    return location


def check_api_settings(
    settings: BlindataConnectionSettings, *, openapi: str | None = None, probe: bool = False
) -> ApiCheck:
    """``BlindataHook.check_api`` for settings read elsewhere (the ``check --api`` command).

    The connection is tested too (``check_settings``), and ``ok`` says both: the description is
    read without credentials, so that the paths alone said ok with a wrong key or tenant (a
    probe: a DAG gated on it went on to a sync that failed)."""
    from airflow_blindata.blindata.apicheck import ApiCheck, check_api

    try:
        with settings.client() as client:
            result = check_api(
                client,
                openapi=openapi,
                probe_paths=probe,
                verify=tls_verification(settings.verify_ssl),
            )
    except BlindataError as exc:
        result = ApiCheck(url=settings.shown_url, problem=_explain(exc, settings))
    result.problem = settings.scrub(result.problem) if result.problem else None
    result.rows = [replace(row, detail=settings.scrub(row.detail)) for row in result.rows]
    result.connection = check_settings(settings)
    return result
