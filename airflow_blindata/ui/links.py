"""Links from the page to Blindata's own UI, built from the connection's URL.

Blindata's UI paths are not part of its API (``/work/shared/blindata-api.md`` documents none), so
the path below is a best guess, kept in one place: a search for the object's name. Without a
known URL there are no links, only names.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from airflow_blindata.options import ui_conn_id
from airflow_blindata.redaction import without_credentials

__all__ = ["SEARCH_PATH", "blindata_url", "search_link"]

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
    return without_credentials(url).rstrip("/")


def search_link(base: str | None, name: str) -> str | None:
    """A link that finds ``name`` in Blindata, or None without a base URL."""
    return f"{base}{SEARCH_PATH}{quote(name, safe='')}" if base else None
