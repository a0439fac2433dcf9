"""Authentication, tenants and permissions (blindata-api.md §1 and §3)."""

from __future__ import annotations

import httpx
import pytest
from blindata_emulator import Emulator
from helpers import (
    API_KEY,
    OTHER_TENANT,
    READER,
    READER_KEY,
    SECRETS,
    STEWARD,
    STEWARD_PASSWORD,
    TENANT,
    UNKNOWN_TENANT,
    USER,
    api_key_headers,
    in_process,
    ok,
)
from starlette.applications import Starlette

ERROR_KEYS = {"status", "timestamp", "error", "message", "path", "errorName"}


def test_api_key_headers_authenticate_an_application_user(app: Starlette) -> None:
    with in_process(app, **api_key_headers()) as client:
        me = ok(client.get("/api/v1/users/me"))
    assert me["username"] == USER
    assert me["tenant"] == {"uuid": TENANT}
    assert "QUALITY_EDITOR" in me["permissions"]


def test_login_returns_a_bearer_token_that_authenticates(anonymous: httpx.Client) -> None:
    token = ok(
        anonymous.post("/auth/login", json={"username": STEWARD, "password": STEWARD_PASSWORD})
    )["access_token"]
    me = ok(anonymous.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"}))
    assert me["username"] == STEWARD


@pytest.mark.parametrize(
    "body",
    [{"username": STEWARD, "password": "wrong"}, {"username": "nobody", "password": "x"}],
    ids=["wrong-password", "unknown-user"],
)
def test_login_with_bad_credentials_gives_401(
    anonymous: httpx.Client, body: dict[str, str]
) -> None:
    response = anonymous.post("/auth/login", json=body)
    assert response.status_code == 401
    assert set(response.json()) == ERROR_KEYS


def test_login_without_a_json_body_gives_400(anonymous: httpx.Client) -> None:
    assert anonymous.post("/auth/login", content=b"not json").status_code == 400


def test_a_token_obtained_elsewhere_authenticates_until_tokens_expire(
    anonymous: httpx.Client, emulator: Emulator
) -> None:
    token = emulator.issue_token(STEWARD)
    headers = {"Authorization": f"Bearer {token}"}
    assert ok(anonymous.get("/api/v1/users/me", headers=headers))["username"] == STEWARD
    emulator.expire_tokens()
    response = anonymous.get("/api/v1/users/me", headers=headers)
    assert response.status_code == 401
    assert "log in again" in response.json()["message"]


def test_tokens_expire_after_their_ttl(anonymous: httpx.Client, emulator: Emulator) -> None:
    token = emulator.issue_token(STEWARD)
    headers = {"Authorization": f"Bearer {token}"}
    emulator.clock.advance(emulator.settings.token_ttl_seconds + 1)
    assert anonymous.get("/api/v1/users/me", headers=headers).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-BD-User": USER, "X-BD-ApiKey": "wrong-key"},
        {"X-BD-User": "nobody", "X-BD-ApiKey": API_KEY},
        {"X-BD-User": USER},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Basic abc"},
    ],
    ids=["none", "wrong-key", "unknown-user", "no-key", "unknown-token", "not-bearer"],
)
def test_no_or_bad_credentials_give_401_with_the_spring_error_body(
    app: Starlette, headers: dict[str, str]
) -> None:
    with in_process(app, **headers) as client:
        response = client.get("/api/v1/systems")
    assert response.status_code == 401
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["status"] == 401 and body["path"] == "/api/v1/systems"
    assert body["error"] == "Unauthorized" and body["message"]
    assert all(secret not in response.text for secret in SECRETS)


def test_without_x_bd_tenant_the_users_default_tenant_applies(app: Starlette) -> None:
    with in_process(app, **api_key_headers(tenant=None)) as client:
        assert ok(client.get("/api/v1/users/me"))["tenant"] == {"uuid": TENANT}
    with in_process(app, **api_key_headers(STEWARD, STEWARD_PASSWORD, tenant=None)) as client:
        assert ok(client.get("/api/v1/users/me"))["tenant"] == {"uuid": OTHER_TENANT}


@pytest.mark.parametrize(
    ("tenant", "words"),
    [(OTHER_TENANT, "has no access to tenant"), (UNKNOWN_TENANT, "unknown tenant")],
    ids=["not-the-users", "unknown"],
)
def test_a_tenant_the_user_cannot_reach_gives_403_naming_it(
    app: Starlette, tenant: str, words: str
) -> None:
    with in_process(app, **api_key_headers(tenant=tenant)) as client:
        response = client.get("/api/v1/systems")
    assert response.status_code == 403
    assert words in response.json()["message"] and tenant in response.json()["message"]


def test_tenants_keep_separate_catalogs(app: Starlette) -> None:
    with in_process(app, **api_key_headers(STEWARD, STEWARD_PASSWORD, tenant=TENANT)) as first:
        ok(first.post("/api/v1/systems", json={"name": "only-in-first"}), 201)
    with in_process(
        app, **api_key_headers(STEWARD, STEWARD_PASSWORD, tenant=OTHER_TENANT)
    ) as second:
        assert ok(second.get("/api/v1/systems"))["totalElements"] == 0
        ok(second.post("/api/v1/systems", json={"name": "only-in-first"}), 201)  # no 409


def test_a_missing_permission_gives_403(app: Starlette) -> None:
    with in_process(app, **api_key_headers(READER, READER_KEY)) as reader:
        assert reader.get("/api/v1/systems").status_code == 200
        create = reader.post("/api/v1/systems", json={"name": "x"})
        assert create.status_code == 403
        assert "SYSTEMS_EDITOR" in create.json()["message"]
        assert reader.get("/api/v1/dataflows").status_code == 403


def test_the_request_log_never_holds_credentials(app: Starlette, emulator: Emulator) -> None:
    token = emulator.issue_token(STEWARD)
    with in_process(app, **api_key_headers()) as client:
        client.get("/api/v1/users/me", params={"apiKey": "leaked?"})
        client.post("/auth/login", json={"username": STEWARD, "password": STEWARD_PASSWORD})
        client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"})
    log = str(emulator.requests.entries())
    assert all(secret not in log for secret in (*SECRETS, token, "leaked?"))
    assert emulator.requests.entries()[0]["user"] == USER
    assert emulator.requests.entries()[0]["tenantHeader"] == TENANT
