"""Who may see the page: Airflow's own authentication and authorisation, nothing of ours.

The user comes from the JWT the API server issues, sent as ``Authorization: Bearer`` or in the
``_token`` cookie the Airflow UI keeps (``airflow.api_fastapi.core_api.security.get_user``). No
token: 401. A user the auth manager does not let see plugin views: 403; a DAG run's view also
needs read access to that DAG's runs. Any auth manager works (simple, FAB, Keycloak...).

What a reader sees is ``Access``: a user with the admin-level permission (reading Airflow's
connections: ``op`` and ``admin`` of the simple auth manager, FAB's Op and Admin) sees
everything; any other user sees the jobs, events and sync records of the DAGs the auth manager
lets them read (``get_authorized_dag_ids``), and nothing that came from outside Airflow.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, status
from fastapi.security.utils import get_authorization_scheme_param

__all__ = [
    "AIRFLOW_SOURCES",
    "EVERYTHING",
    "Access",
    "ReaderAccess",
    "require_access",
    "require_dag_run_reader",
    "require_reader",
]

AIRFLOW_SOURCES = frozenset({"transport", "listener"})
"""The sources of the events Airflow's own tasks and DAG runs emitted: a job whose events came
from these only is a DAG's or a task's, named ``<dag_id>`` or ``<dag_id>.<task_id>``. Events from
the receiver (producers outside Airflow) or from ``ingest`` (files) are an admin's to see."""


@dataclass(frozen=True, slots=True)
class Access:
    """What one user may see on the page: everything (``admin``), or the DAGs in ``dag_ids``."""

    admin: bool
    dag_ids: frozenset[str] = frozenset()

    def dag(self, dag_id: str | None) -> bool:
        return self.admin or (dag_id is not None and dag_id in self.dag_ids)

    def dag_of_job(self, name: str | None) -> str | None:
        """The readable DAG whose job ``name`` is (``<dag_id>``, ``<dag_id>.<task_id>``; a DAG id
        may hold dots itself, so every prefix ending before a dot is tried), or None."""
        if not name:
            return None
        if name in self.dag_ids:
            return name
        cut = name.rfind(".")
        while cut > 0:
            if name[:cut] in self.dag_ids:
                return name[:cut]
            cut = name.rfind(".", 0, cut)
        return None

    def job(self, sources: Iterable[str], name: str | None) -> bool:
        """May the user see a job whose events came from ``sources``?"""
        if self.admin:
            return True
        came_from = set(sources)
        return (
            bool(came_from) and came_from <= AIRFLOW_SOURCES and self.dag_of_job(name) is not None
        )

    def record(self, origin: Any) -> bool:
        """May the user see a sync record run by ``origin`` (a ``RunOrigin``, or None)?"""
        if self.admin:
            return True
        return origin is not None and origin.command is None and self.dag(origin.dag_id)


EVERYTHING = Access(admin=True)

COOKIE_NAME_JWT_TOKEN = "_token"
"""Where the Airflow UI keeps the user's token (``base_auth_manager.COOKIE_NAME_JWT_TOKEN``)."""


async def _user(request: Request) -> Any:
    from airflow.api_fastapi.core_api import security
    from fastapi.security import HTTPAuthorizationCredentials

    scheme, token = get_authorization_scheme_param(request.headers.get("Authorization"))
    bearer = (
        HTTPAuthorizationCredentials(scheme=scheme, credentials=token)
        if scheme.lower() == "bearer" and token
        else None
    )
    if "request" in inspect.signature(security.get_user).parameters:  # Airflow 3.2+
        return await security.get_user(request, None, bearer)
    # Airflow 3.0 and 3.1: get_user reads the Authorization header only (their UI sends the
    # token from JavaScript); a page the browser opens sends the cookie the UI keeps.
    cookie = request.cookies.get(COOKIE_NAME_JWT_TOKEN)
    return await security.resolve_user_from_token(bearer.credentials if bearer else cookie)


def _forbidden(what: str) -> HTTPException:
    return HTTPException(status.HTTP_403_FORBIDDEN, f"read access to {what} is needed")


async def require_reader(request: Request) -> Any:
    """The signed-in user, if the auth manager lets them read plugin views (the page is one)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView

    user = await _user(request)
    if not get_auth_manager().is_authorized_view(access_view=AccessView.PLUGINS, user=user):
        raise _forbidden("plugin views")
    return user


async def require_dag_run_reader(request: Request, dag_id: str) -> Any:
    """As ``require_reader``, and the user may read the runs of ``dag_id``."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import (
        DagAccessEntity,
        DagDetails,
    )

    user = await require_reader(request)
    allowed = get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.RUN, details=DagDetails(id=dag_id), user=user
    )
    if not allowed:
        raise _forbidden(f"the runs of DAG {dag_id}")
    return user


def require_access(user: Annotated[Any, Depends(require_reader)]) -> Access:
    """A reader's ``Access``. A plain ``def``: FastAPI runs it in a worker thread, since the auth
    manager reads Airflow's database for the DAGs (``get_authorized_dag_ids``)."""
    from airflow.api_fastapi.app import get_auth_manager

    manager = get_auth_manager()
    if manager.is_authorized_connection(method="GET", user=user):
        return EVERYTHING
    return Access(admin=False, dag_ids=frozenset(manager.get_authorized_dag_ids(user=user)))


ReaderAccess = Annotated[Access, Depends(require_access)]
"""A route's parameter: the reader's ``Access``."""
