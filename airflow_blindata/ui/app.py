"""The page's FastAPI app: routes, Jinja2 rendering, and the entries the plugin registers.

Each route first checks access (``access``), then reads (``views``), then renders a template with
autoescape on: every value from the store or a producer is escaped. Links inside the page are
built on the mount's ``root_path``, so the app works under any prefix.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from airflow_blindata.mapper.report import ordered_gaps
from airflow_blindata.options import ui_enabled
from airflow_blindata.sync.report import RunOrigin

from . import URL_PREFIX, views
from .access import ReaderAccess, require_dag_run_reader

__all__ = ["APP_NAME", "create_ui_app", "external_views", "plugin_fastapi_apps"]

log = logging.getLogger(__name__)

APP_NAME = "Blindata page"
TEMPLATES = Path(__file__).parent / "templates"
NAV_ROUTE = "blindata"
"""The nav entry's ``url_route``: the Airflow UI shows the page at ``<base>/plugin/blindata``."""

SECURITY_HEADERS = {
    # Only Airflow's own UI may frame the page (clickjacking); nothing is fetched from elsewhere.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'self'"
    ),
    # Every answer is for one signed-in user: no shared or browser cache keeps it.
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


INVALID_TOKEN = "Invalid JWT token"
"""Airflow's 403 for a token it cannot verify (signed with another key, say): its own UI sends the
user to the login for it, as for a 401."""


def airflow_root(request: Request) -> str:
    """Airflow's base path (``/airflow`` under ``[api] base_url = https://host/airflow``, else
    empty), from the mount's ``root_path``: the page's links into Airflow's UI start there."""
    return str(request.scope.get("root_path", "")).removesuffix(URL_PREFIX)


def age(moment: datetime | None, now: datetime | None = None) -> str:
    """How long ago ``moment`` was, as a person says it: ``just now``, ``5 min ago``..."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = ((now or datetime.now(UTC)) - moment).total_seconds()
    if seconds < 60:
        return "just now"
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            plural = "s" if unit == "day" and count > 1 else ""
            return f"{count} {unit}{plural} ago"
    return "just now"  # pragma: no cover - the loop always returns


@cache
def _templates() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    environment.filters["age"] = age
    environment.globals["ordered_gaps"] = ordered_gaps
    return environment


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("store_url", views.shown_store_url())
    html = (
        _templates()
        .get_template(name)
        .render(
            root=request.scope.get("root_path", ""),
            airflow=airflow_root(request),
            **context,
        )
    )
    return HTMLResponse(html, status_code=status)


def _page(request: Request, name: str, read: Any, *args: Any) -> HTMLResponse:
    """``read(*args)`` rendered with ``name``, or the store's problem on the same page."""
    try:
        return _render(request, name, **read(*args))
    except views.UnreadableStoreError as problem:
        return _render(request, name, status=503, problem=str(problem))


async def _refused(request: Request, problem: Exception) -> Response:
    """A refusal: JSON for an API client, a page for a browser (the page lives in the Airflow UI's
    frame, where raw JSON helps nobody); an expired session gets a link to Airflow's login."""
    assert isinstance(problem, HTTPException)
    if "text/html" not in request.headers.get("accept", "") or problem.status_code not in (
        401,
        403,
    ):
        return await http_exception_handler(request, problem)
    root = airflow_root(request)
    login = f"{root}/api/v2/auth/login?" + urlencode({"next": f"{root}/plugin/{NAV_ROUTE}"})
    return _render(
        request,
        "refused.html",
        status=problem.status_code,
        signed_out=problem.status_code == 401 or problem.detail == INVALID_TOKEN,
        detail=str(problem.detail),
        login=login,
        store_url=None,
    )


async def _secured(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


def create_ui_app() -> FastAPI:
    app = FastAPI(title=APP_NAME, docs_url=None, redoc_url=None, openapi_url=None)
    app.middleware("http")(_secured)
    app.add_exception_handler(HTTPException, _refused)
    # Each page sees what the reader's ``Access`` lets them (access.py): the routes are plain
    # ``def``s, run in a worker thread, as the auth manager and the store are read.

    @app.get("/", response_class=HTMLResponse)
    def capture(request: Request, access: ReaderAccess) -> Response:
        return _page(request, "capture.html", views.capture_page, access)

    @app.get("/syncs", response_class=HTMLResponse)
    def syncs(
        request: Request,
        access: ReaderAccess,
        definition: str | None = None,
        before: int | None = None,
    ) -> Response:
        return _page(request, "syncs.html", views.syncs_page, definition, before, access)

    @app.get("/syncs/{record_id}", response_class=HTMLResponse)
    def record(request: Request, record_id: int, access: ReaderAccess) -> Response:
        try:
            found = views.record_page(record_id)
        except views.UnreadableStoreError as problem:
            return _render(request, "record.html", status=503, problem=str(problem))
        if found is None:
            return _render(request, "record.html", status=404, problem="no such sync record")
        if not access.record(found["run"].origin):
            raise HTTPException(
                403, "read access to the DAG that ran this sync (or an admin's) is needed"
            )
        return _render(request, "record.html", **found)

    @app.get("/lands", response_class=HTMLResponse)
    def lands(
        request: Request,
        access: ReaderAccess,
        namespace: str | None = None,
        name: str | None = None,
        definition: str | None = None,
    ) -> Response:
        try:
            if namespace and name and not views.job_readable(access, namespace, name):
                raise HTTPException(403, f"read access to the DAG of job {name} is needed")
            found = views.lands_page(namespace, name, definition)
            found["jobs"] = views.readable_jobs(access, found["jobs"])
        except views.UnreadableStoreError as problem:
            return _render(request, "lands.html", status=503, problem=str(problem))
        return _render(request, "lands.html", **found)

    # A plain ``def``: FastAPI runs it in a worker thread. Reading Airflow's database on the event
    # loop stalled every request of the API server meanwhile, the receiver's included.
    @app.get(
        "/runs/{dag_id}/{run_id}",
        response_class=HTMLResponse,
        dependencies=[Depends(require_dag_run_reader)],
    )
    def run(request: Request, dag_id: str, run_id: str) -> Response:
        reports = [
            (
                task_id,
                report,
                views.task_log_path(RunOrigin(dag_id=dag_id, run_id=run_id, task_id=task_id)),
            )
            for task_id, report in views.run_page(dag_id, run_id)
        ]
        return _render(request, "run.html", dag_id=dag_id, run_id=run_id, reports=reports)

    return app


def external_views() -> list[dict[str, Any]]:
    """A top-level nav entry, and a view on every DAG run (empty for runs that did no sync).

    The hrefs are relative: the Airflow UI loads them in an iframe, resolved against its page's
    ``<base href>``, which is Airflow's base path (``[api] base_url`` of ``https://host/airflow``
    serves the app at ``/airflow/blindata-ui/``, and nothing answers ``/blindata-ui/`` there).
    """
    relative = URL_PREFIX.lstrip("/")
    return [
        {
            "name": "Blindata",
            "href": f"{relative}/",
            "url_route": NAV_ROUTE,
            "destination": "nav",
            "nav_top_level": True,
        },
        {
            "name": "Blindata report",
            "href": f"{relative}/runs/{{DAG_ID}}/{{RUN_ID}}",
            "url_route": "blindata-run",
            "destination": "dag_run",
        },
    ]


def plugin_fastapi_apps() -> list[dict[str, Any]]:
    """The page's app for ``fastapi_apps``, unless ``[blindata] ui_enabled`` is False."""
    try:
        if not ui_enabled():
            return []
        return [{"app": create_ui_app(), "url_prefix": URL_PREFIX, "name": APP_NAME}]
    except Exception:
        log.warning("The Blindata page could not be set up; it is not mounted", exc_info=True)
        return []


def plugin_external_views() -> list[dict[str, Any]]:
    """``external_views`` for the plugin (none when the page is disabled)."""
    try:
        return external_views() if ui_enabled() else []
    except Exception:
        log.warning("The Blindata page's views could not be set up", exc_info=True)
        return []
