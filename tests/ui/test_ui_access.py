"""Who may open the page: Airflow's own tokens and roles decide, through its auth manager."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import token

PAGES = ["/", "/syncs", "/syncs/1", "/lands", "/runs/blindata_sync/manual__1"]


@pytest.mark.parametrize("path", PAGES)
def test_a_request_without_a_token_is_refused(client: Any, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 401


@pytest.mark.parametrize("path", PAGES)
def test_a_forged_token_is_refused(client: Any, path: str) -> None:
    response = client.get(path, headers={"Authorization": "Bearer not.a.jwt"})

    assert response.status_code in (401, 403)
    assert "Blindata" not in response.text


@pytest.mark.parametrize("path", PAGES)
def test_a_user_without_read_access_is_forbidden(client: Any, auth_manager: Any, path: str) -> None:
    response = client.get(path, headers={"Authorization": f"Bearer {token(auth_manager, None)}"})

    assert response.status_code == 403
    assert "read access" in response.json()["detail"]


@pytest.mark.parametrize(
    ("how", "path"),
    [("bearer", "/"), ("cookie", "/"), ("bearer", "/syncs"), ("cookie", "/lands")],
)
def test_a_viewer_reads_the_page_by_header_or_by_the_ui_cookie(
    client: Any, auth_manager: Any, how: str, path: str
) -> None:
    jwt = token(auth_manager, "viewer")
    if how == "bearer":
        response = client.get(path, headers={"Authorization": f"Bearer {jwt}"})
    else:
        client.cookies.set("_token", jwt)
        response = client.get(path)

    assert response.status_code == 200, response.text
    assert "<nav>" in response.text


def test_a_dag_run_report_needs_read_access_to_that_dag_s_runs(
    client: Any, auth_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer of the page who may not read one DAG (FAB's per-DAG permissions) gets no report
    of its runs; the decision is the auth manager's, asked for that DAG's runs."""
    from airflow_blindata.ui import views

    asked: list[tuple[str, str]] = []

    def is_authorized_dag(*, method: str, access_entity: Any, details: Any, user: Any) -> bool:
        asked.append((details.id, access_entity.name))
        return bool(details.id != "hr.payroll")

    monkeypatch.setattr(auth_manager, "is_authorized_dag", is_authorized_dag)
    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [])
    viewer = {"Authorization": f"Bearer {token(auth_manager, 'viewer')}"}

    refused = client.get("/runs/hr.payroll/manual__1", headers=viewer)
    allowed = client.get("/runs/blindata_sync/manual__1", headers=viewer)

    assert refused.status_code == 403
    assert allowed.status_code == 200
    assert asked == [("hr.payroll", "RUN"), ("blindata_sync", "RUN")]


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("role", [None, "viewer", "admin"])
def test_every_answer_carries_the_security_headers(
    client: Any, auth_manager: Any, monkeypatch: pytest.MonkeyPatch, path: str, role: str | None
) -> None:
    """Framed by Airflow's own UI only, never cached (a page holds what one user may read), and
    never sniffed into another type: on pages, refusals and errors alike."""
    from airflow_blindata.ui import views

    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [])
    headers = {"Authorization": f"Bearer {token(auth_manager, role)}"} if role else {}

    response = client.get(path, headers=headers)

    assert "frame-ancestors 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_expired_session_in_the_browser_gets_a_way_back_to_airflow_s_login(
    client: Any, auth_manager: Any
) -> None:
    """In the Airflow UI's frame, a browser whose token expired gets a page with a link to
    Airflow's login (which comes back to the Blindata entry), not raw JSON."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    user = SimpleAuthManagerUser(username="u-viewer", role="viewer")
    client.cookies.set("_token", auth_manager.generate_jwt(user, expiration_time_in_seconds=-60))

    response = client.get("/syncs", headers={"Accept": "text/html,application/xhtml+xml"})

    assert response.status_code == 401
    assert response.headers["content-type"].startswith("text/html")
    assert 'href="/api/v2/auth/login?next=%2Fplugin%2Fblindata"' in response.text
    assert 'target="_top"' in response.text
    assert "detail" not in response.text
