"""Links from the page to Blindata's own UI, built from the connection's URL.

Blindata's UI paths are not part of its API (``/work/shared/blindata-api.md`` documents none), so
the path below is a best guess, kept in one place: a search for the object's name. Without a
known URL there are no links, only names.

``job_link`` is the same link for the job entity of an Airflow task: the operator extra link
"View in Blindata" (``extra_link.ViewInBlindata``) that the plugin gives every task.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from airflow_blindata.options import ui_conn_id
from airflow_blindata.redaction import redact_text, without_credentials

__all__ = ["SEARCH_PATH", "blindata_url", "job_link", "search_link"]

log = logging.getLogger(__name__)

SEARCH_PATH = "/#/search?query="
"""A guess at Blindata's search page (see the module docstring)."""


def blindata_url(conn_id: str | None = None) -> str | None:
    """The Blindata URL of the connection, without credentials; None when it cannot be read."""
    try:
        from airflow.models.connection import Connection

        conn = Connection.get_connection_from_secrets(conn_id or ui_conn_id())
    except Exception:  # no such connection, or no metadata database here
        log.debug("no Blindata connection for the page's links", exc_info=True)
        return None
    host = (conn.host or "").strip()
    if not host:
        return None
    from airflow_blindata.hooks.blindata import connection_url

    try:
        url = connection_url(host, conn.schema, conn.port, conn.conn_id or "")
    except Exception:  # the URL's path and the schema disagree: the hook refuses it too
        return None
    if url.partition("://")[0].lower() not in ("http", "https"):
        # It becomes an href on every object: ``javascript://%0a…`` would run in the viewer's
        # Airflow session when they click. Blindata is served over HTTP(S) only.
        log.warning("The Blindata connection's URL is not http(s): the page shows no links")
        return None
    # the site: an href shows its query to whoever views the page (a ``?token=``), and a link
    # built on a query would not find the page anyway
    return without_credentials(url).split("#", 1)[0].split("?", 1)[0].rstrip("/")


def search_link(base: str | None, name: str) -> str | None:
    """A link that finds ``name`` in Blindata, or None without a base URL."""
    return f"{base}{SEARCH_PATH}{quote(name, safe='')}" if base else None


def _captured(namespace: str, name: str) -> bool:
    """Did Airflow's own capture store events of the job (``transport`` or ``listener``)?"""
    from airflow_blindata.store import (
        configured_store_url,
        default_store_url,
        open_store,
        overview,
    )
    from airflow_blindata.store.sql import SqlEventStore

    from .access import AIRFLOW_SOURCES

    with open_store(configured_store_url() or default_store_url(), create=False) as store:
        if not isinstance(store, SqlEventStore):
            return False
        return bool(overview.job_sources(store, namespace, name) & AIRFLOW_SOURCES)


def job_link(dag_id: str, task_id: str) -> str | None:
    """Blindata's link to the job entity of task ``task_id`` of DAG ``dag_id``: the job
    ``<dag_id>.<task_id>`` in OpenLineage's namespace (``[openlineage] namespace``), named as
    its entity is (``redact_text``). None when the task was never captured, or no Blindata URL
    is known; never an exception (the Airflow UI asks for it on every task instance)."""
    try:
        from airflow.providers.openlineage.conf import namespace

        name = f"{dag_id}.{task_id}"
        if not _captured(namespace(), name):
            return None
        return search_link(blindata_url(), redact_text(name))
    except Exception:
        log.warning("The Blindata link of %s.%s could not be made", dag_id, task_id, exc_info=True)
        return None
