"""Which store a URL opens: a registry by URL scheme, the default, Airflow connections.

Like the OpenLineage transport factory, a scheme maps to a factory; ``register_store`` adds one.
``None`` opens the configured store — ``[blindata] store_url`` (or the environment variable
``AIRFLOW__BLINDATA__STORE_URL``) — and without one the SQLite file
``$AIRFLOW_HOME/blindata/events.db`` (``AIRFLOW_HOME`` defaults to ``~/airflow``).

``airflow-conn://<conn_id>`` reads an Airflow connection (type ``postgres`` or ``sqlite``; extras
``schema``, ``sslmode``, ``timeout``, ...). Do not use it for capture from a forked OpenLineage
child under ``dag.test()`` with a connection kept in the metadata database: that lookup hangs
there (see docs/capture.md). Environment-variable and secrets-backend connections work everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from airflow_blindata.options import airflow_home_path, blindata_home, misspelt_key, store_url
from airflow_blindata.redaction import redact_url, scrub, url_secrets

from .base import EventStore
from .models import StoreMissingError, StoreURLError

__all__ = [
    "AIRFLOW_CONN_SCHEME",
    "configured_store_url",
    "default_store_url",
    "open_store",
    "redact_url",
    "register_store",
]

AIRFLOW_CONN_SCHEME = "airflow-conn"
_STORE_PARAMS = ("schema", "timeout", "lock_timeout", "statement_timeout")
"""The store's own options of a PostgreSQL URL (``postgres.py``), which extra may hold."""
_LIBPQ_PARAMS = (
    *("hostaddr", "passfile", "require_auth", "channel_binding", "connect_timeout"),
    *("client_encoding", "options", "application_name", "fallback_application_name"),
    *("keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"),
    *("tcp_user_timeout", "gssencmode", "sslmode", "requiressl", "sslnegotiation"),
    *("sslcompression", "sslcert", "sslkey", "sslkeylogfile", "sslpassword", "sslcertmode"),
    *("sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version"),
    *("ssl_max_protocol_version", "min_protocol_version", "max_protocol_version"),
    *("krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs"),
    *("load_balance_hosts", "scram_client_key", "scram_server_key", "oauth_issuer"),
    *("oauth_client_id", "oauth_client_secret", "oauth_scope"),
)
"""libpq's connection parameters but those the connection's own fields give (host, port, dbname,
user, password): Airflow's postgres hook hands a key of extra it does not read itself to the
driver, so a connection shared with it may hold any of them; the store's URL carries them on
(``?sslmode=require``), as ``[blindata] store_url`` does."""
_POSTGRES_HOOK_KEYS = frozenset(
    {
        *("iam", "redshift", "redshift-serverless", "cluster-identifier", "workgroup-name"),
        *("aws_conn_id", "azure_conn_id", "cursor", "sqlalchemy_scheme", "sqlalchemy_query"),
    }
)
"""The keys of extra that Airflow's postgres hook reads itself (its ``ignored_extra_options``:
IAM, Redshift and Entra ID authentication, its cursor and SQLAlchemy settings): left out of the
store's URL without a word. The store connects with the connection's login and password."""
_CONNECTION_FIELDS = {
    **dict.fromkeys(("host", "server"), "Host"),
    "port": "Port",
    **dict.fromkeys(("dbname", "database", "db"), "Database"),
    **dict.fromkeys(("user", "username", "login"), "Login"),
    "password": "Password",
}
"""libpq's parameters that the connection's own fields hold: in extra, named as the field."""
_PG_ALIASES = {"search_path": "schema", "currentschema": "schema", "current_schema": "schema"}
"""Other tools' names for the store's ``schema``, where it creates its tables."""


StoreFactory = Callable[[str], EventStore]
_FACTORIES: dict[str, StoreFactory] = {}


def register_store(scheme: str, factory: StoreFactory) -> None:
    """Open URLs of ``scheme`` (the part before ``+driver``) with ``factory(url)``."""
    _FACTORIES[scheme] = factory


def default_store_url() -> str:
    """The SQLite file in ``$AIRFLOW_HOME/blindata/`` (``~/airflow`` without AIRFLOW_HOME)."""
    return f"sqlite:///{blindata_home() / 'events.db'}"


def configured_store_url() -> str | None:
    """``[blindata] store_url`` if set (read through Airflow's configuration when installed).

    A relative SQLite path there is read from ``$AIRFLOW_HOME``: the scheduler, the workers, the
    API server and the CLI each start in a directory of their own, and would each open a file of
    their own (Airflow refuses a relative path for its own database for that reason)."""
    url = store_url()
    return None if url is None else _anchored(url)


def _anchored(url: str) -> str:
    """A SQLite URL whose path is relative read from ``$AIRFLOW_HOME``, and one that starts with
    ``~`` from the user's home, as ``--store`` reads it: ``$AIRFLOW_HOME/~/x.db`` was another file
    than the CLI's (a probe of deployments). Any other URL as it is."""
    scheme, separator, rest = url.partition(":///")
    if separator and scheme.lower() == "sqlite" and rest and not rest.startswith("/"):
        path, query_sep, query = rest.partition("?")
        if path != ":memory:":
            try:
                anchored = airflow_home_path(path)
            except RuntimeError:  # ``~nosuchuser``, or no home to read ``~`` from
                raise StoreURLError(
                    f"{path.split('/', 1)[0]!r} names no home directory on this machine: give "
                    "the SQLite file's absolute path"
                ) from None
            return f"sqlite:///{anchored}{query_sep}{query}"
    return url


def _refuse_missing_file(url: str) -> None:
    try:
        database = make_url(url).database
    except (ValueError, ArgumentError):
        return  # the factory says what it cannot read
    if not database or database == ":memory:":
        return
    try:
        path = Path(database).expanduser()
    except RuntimeError:  # ``~nosuchuser``: the factory says so
        return
    if not path.exists():
        raise StoreMissingError(
            f"there is no event store at {path}: no event was captured into it. Capture "
            "creates it with the first event; if events were captured, they went to another "
            "store, and [blindata] store_url (or --store) must name the one capture writes to"
        )


def _scheme(url: str) -> str:
    scheme, separator, _ = url.partition("://")
    if not separator:
        raise StoreURLError(f"not a store URL: {redact_url(url)!r} (expected scheme://...)")
    return scheme.split("+", 1)[0].lower()


def _connection_url(conn_id: str) -> str:
    """The store URL an Airflow connection describes (postgres or sqlite)."""
    from airflow.providers.common.compat.sdk import BaseHook  # airflow.sdk's from 3.1

    try:
        try:
            conn = BaseHook.get_connection(conn_id)
        except ImportError:
            # Airflow 3.1's Task SDK, outside a task, asks the task supervisor for a connection
            # no secrets backend has, and there is none: read it as `airflow connections get`
            # does (the metadata database too), as 3.2+ does by itself.
            from airflow.models.connection import Connection

            conn = Connection.get_connection_from_secrets(conn_id)
    except Exception as exc:  # not defined, or a secrets backend that failed
        # Only the kind of failure: a backend's message may quote where it keeps its secrets.
        reason = "it is not defined" if "NotFound" in type(exc).__name__ else type(exc).__name__
        raise StoreURLError(
            f"the store's connection {conn_id!r} could not be read: {reason}"
        ) from exc
    extra = conn.extra_dejson
    if extra is not None and not isinstance(extra, dict):  # JSON of JSON: a string (a probe)
        raise StoreURLError(
            f"the store's connection {conn_id!r}: extra is not a JSON object (a JSON string "
            'holding one was encoded twice): write it as {"schema": "blindata"}'
        )
    conn_type = (conn.conn_type or "").lower()
    if conn_type == "sqlite":
        # a relative path read from ``$AIRFLOW_HOME``, as in ``[blindata] store_url``: each
        # process read it from its own working directory, a store of its own (a probe)
        return _anchored(f"sqlite:///{(conn.host or '').strip()}")
    if conn_type not in {"postgres", "postgresql"}:
        raise StoreURLError(
            f"connection {conn_id!r} is of type {conn_type!r}: a store needs postgres or sqlite"
        )
    query = _store_query(conn_id, extra)
    host = (conn.host or "").strip() or None
    if host and host.startswith("/"):
        # A Unix socket's directory (``/var/run/postgresql``), as libpq and Airflow's postgres
        # hook take it: a URL carries it as the ``host`` parameter, not in its authority (there
        # the slashes would end the host and start the database name).
        query["host"] = host
        host = None
    url = URL.create(
        "postgresql+psycopg",
        username=conn.login or None,
        password=conn.password or None,
        host=host,
        port=conn.port or None,
        database=conn.schema or None,
        query=query,
    )
    return url.render_as_string(hide_password=False)


def _store_query(conn_id: str, extra: dict[str, Any] | None) -> dict[str, str]:
    """The store URL's query from a postgres connection's extra: the store's options and libpq's
    parameters; the keys Airflow's postgres hook reads itself left out. Any other key is
    refused naming the one meant (``shema``: did you mean 'schema'?): dropped, the tables went
    to the database's ``public`` schema, Airflow's own metadata database's when it is shared
    (a probe)."""
    known = (*_STORE_PARAMS, *_LIBPQ_PARAMS)
    query: dict[str, str] = {}
    for key, value in (extra or {}).items():
        if key in _POSTGRES_HOOK_KEYS:
            continue
        field = _CONNECTION_FIELDS.get(key.strip().lower())
        if field is not None:
            raise StoreURLError(
                f"the store's connection {conn_id!r}: extra has {key!r}: give it in the "
                f"connection's {field} field, which the store reads"
            )
        if key not in known:
            meant = misspelt_key(key, known, aliases=_PG_ALIASES)
            hint = (
                f"did you mean {meant!r}?"
                if meant
                else "it reads schema, timeout, lock_timeout, statement_timeout and libpq's "
                "connection parameters (sslmode, connect_timeout, …)"
            )
            raise StoreURLError(
                f"the store's connection {conn_id!r}: extra has {key!r}, which the store does "
                f"not read: {hint}"
            )
        if isinstance(value, bool):  # libpq's switches (keepalives, sslsni) read 1 and 0
            query[key] = "1" if value else "0"
        elif value is not None and str(value).strip():
            query[key] = str(value)
    return query


def open_store(url: str | None = None, *, create: bool = True) -> EventStore:
    """Open the store at ``url`` (see the module docstring); connects lazily, on first use.

    A SQLite store is created where it is first opened. Readers pass ``create=False``: a SQLite
    file that does not exist is then ``StoreMissingError``, not a new empty store (the Blindata
    page of a mistyped ``store_url`` showed "nothing captured", and left the file behind)."""
    url = url or configured_store_url() or default_store_url()
    scheme = _scheme(url)
    if scheme == AIRFLOW_CONN_SCHEME:
        conn_id = url.partition("://")[2].strip("/")
        if not conn_id:
            raise StoreURLError("airflow-conn:// needs a connection id: airflow-conn://<conn_id>")
        return open_store(_connection_url(conn_id), create=create)
    if not create and scheme == "sqlite":
        _refuse_missing_file(url)
    factory = _FACTORIES.get(scheme)
    if factory is None:
        known = ", ".join(sorted([*_FACTORIES, AIRFLOW_CONN_SCHEME]))
        raise StoreURLError(f"no event store for {scheme}:// (known: {known})")
    try:
        return factory(url)
    except StoreURLError:
        raise
    except (ValueError, ArgumentError) as exc:
        # SQLAlchemy's reading of the URL (a port that is no number: ``h:abc``, an unclosed
        # ``[``): a traceback on every command before (a probe of secrets). The reason names
        # the part it could not read, never the password (``scrub``).
        reason = scrub(str(exc), url_secrets(url))
        raise StoreURLError(f"the store URL {redact_url(url)} cannot be read: {reason}") from None
