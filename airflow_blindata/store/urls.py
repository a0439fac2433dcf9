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

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from airflow_blindata.options import blindata_home, store_url
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
_PG_PARAMS = (
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "connect_timeout",
    "application_name",
    "timeout",
    "lock_timeout",
    "statement_timeout",
)

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
        if path.startswith("~"):
            try:
                expanded = Path(path).expanduser()
            except RuntimeError:  # ``~nosuchuser``, or no home to read ``~`` from
                raise StoreURLError(
                    f"{path.split('/', 1)[0]!r} names no home directory on this machine: give "
                    "the SQLite file's absolute path"
                ) from None
            return f"sqlite:///{expanded}{query_sep}{query}"
        if path != ":memory:":
            home = blindata_home().parent
            return f"sqlite:///{home / path}{query_sep}{query}"
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
    conn_type = (conn.conn_type or "").lower()
    if conn_type == "sqlite":
        # a relative path read from ``$AIRFLOW_HOME``, as in ``[blindata] store_url``: each
        # process read it from its own working directory, a store of its own (a probe)
        return _anchored(f"sqlite:///{(conn.host or '').strip()}")
    if conn_type not in {"postgres", "postgresql"}:
        raise StoreURLError(
            f"connection {conn_id!r} is of type {conn_type!r}: a store needs postgres or sqlite"
        )
    query = {key: str(extra[key]) for key in (*_PG_PARAMS, "schema") if extra.get(key)}
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
