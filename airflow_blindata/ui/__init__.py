"""The Blindata page in the Airflow UI: what capture stored, what the syncs did, where it lands.

A FastAPI app the plugin mounts in Airflow's API server (``fastapi_apps``) under ``URL_PREFIX``,
with ``external_views`` that put it in Airflow's navigation and on the sync DAG's runs. Pages
are rendered on the server (Jinja2, which Airflow ships); they need Airflow's own login and read
access (``access``) and never show a secret.
"""

from __future__ import annotations

URL_PREFIX = "/blindata-ui"
"""Not under the receiver's ``/blindata``: Starlette gives a path to the first mount matching it."""

__all__ = ["URL_PREFIX"]
