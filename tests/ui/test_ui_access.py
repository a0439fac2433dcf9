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
