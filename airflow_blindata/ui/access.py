"""Who may see the page: Airflow's own authentication and authorisation, nothing of ours.

The user comes from the JWT the API server issues, sent as ``Authorization: Bearer`` or in the
``_token`` cookie the Airflow UI keeps (``airflow.api_fastapi.core_api.security.get_user``). No
token: 401. A user the auth manager does not let see plugin views: 403; a DAG run's view also
needs read access to that DAG's runs. Any auth manager works (simple, FAB, Keycloak...).
"""

from __future__ import annotations

import inspect
from typing import Any

from fastapi import HTTPException, Request, status
from fastapi.security.utils import get_authorization_scheme_param

__all__ = ["require_dag_run_reader", "require_reader"]

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
