"""Fixtures of the emulator tests: an in-process emulator reached through httpx + a2wsgi.

`api` is an httpx client with the API key headers of a user who may do everything in TENANT;
`anonymous` sends no credentials. Helpers create the objects most tests need.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2wsgi import ASGIMiddleware
from blindata_emulator import Emulator, EmulatorSettings, EmulatorUser, create_app
from starlette.applications import Starlette

TENANT = "aaaaaaaa-0000-4000-8000-000000000001"
OTHER_TENANT = "aaaaaaaa-0000-4000-8000-000000000002"
UNKNOWN_TENANT = "aaaaaaaa-0000-4000-8000-0000000000ff"
USER = "etl"
API_KEY = "etl-api-key-never-logged"
READER = "reader"
READER_KEY = "reader-key-never-logged"
STEWARD = "steward"
STEWARD_PASSWORD = "steward-password-never-logged"
SECRETS = (API_KEY, READER_KEY, STEWARD_PASSWORD)


def make_settings(**overrides: Any) -> EmulatorSettings:
    """Two tenants; `etl` reaches only the first, `reader` may only read, `steward` all."""
    values: dict[str, Any] = {
        "tenants": [TENANT, OTHER_TENANT],
        "users": [
            EmulatorUser(USER, API_KEY, tenants=[TENANT]),
            EmulatorUser(
                READER,
                READER_KEY,
                tenants=[TENANT],
                permissions=["SYSTEMS_VIEWER", "PHYSICAL_MODEL_VIEWER"],
            ),
            EmulatorUser(STEWARD, STEWARD_PASSWORD, tenants=[OTHER_TENANT, TENANT]),
        ],
    }
    values.update(overrides)
    return EmulatorSettings(**values)


def in_process(app: Starlette, **headers: str) -> httpx.Client:
    """An httpx client that calls `app` in-process (no socket)."""
    transport = httpx.WSGITransport(app=ASGIMiddleware(app))
    return httpx.Client(transport=transport, base_url="http://emulator", headers=headers)


def api_key_headers(
    user: str = USER, key: str = API_KEY, tenant: str | None = TENANT
) -> dict[str, str]:
    """The API key headers of `user`, with X-BD-Tenant unless `tenant` is None."""
    headers = {"X-BD-User": user, "X-BD-ApiKey": key}
    if tenant is not None:
        headers["X-BD-Tenant"] = tenant
    return headers


@pytest.fixture
def app() -> Iterator[Starlette]:
    application = create_app(make_settings())
    yield application
    application.state.emulator.close()


@pytest.fixture
def emulator(app: Starlette) -> Emulator:
    instance: Emulator = app.state.emulator
    return instance


@pytest.fixture
def api(app: Starlette) -> Iterator[httpx.Client]:
    with in_process(app, **api_key_headers()) as client:
        yield client


@pytest.fixture
def anonymous(app: Starlette) -> Iterator[httpx.Client]:
    with in_process(app) as client:
        yield client


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON of a response that must have `status`."""
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def create_system(api: httpx.Client, name: str = "dwh", **fields: Any) -> dict[str, Any]:
    return ok(api.post("/api/v1/systems", json={"name": name, **fields}), 201)


def upload(api: httpx.Client, path: str, rows: list[Any]) -> dict[str, Any]:
    """POST a list to `<path>/*/upload` and return the upload response."""
    return ok(api.post(f"{path}/*/upload", json=rows))


def create_entity(
    api: httpx.Client,
    system: dict[str, Any],
    schema: str | None,
    name: str,
    fields: tuple[str, ...] = (),
) -> dict[str, Any]:
    """An entity with fields, created through the uploads; returns the stored entity."""
    upload(
        api,
        "/api/v1/physical_entities",
        [{"system": {"uuid": system["uuid"]}, "schema": schema, "name": name}],
    )
    (entity,) = ok(
        api.get(
            "/api/v1/physical_entities",
            params={"systemUuid": system["uuid"], "schema": schema or "", "name": name},
        )
    )["content"]
    if fields:
        rows = [
            {"physicalEntity": {"uuid": entity["uuid"]}, "name": field, "ordinalPosition": index}
            for index, field in enumerate(fields, start=1)
        ]
        report = upload(api, "/api/v1/physical_fields", rows)
        assert report["rowDiscarded"] == 0, report
    return entity


def fields_of(api: httpx.Client, entity: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The fields of an entity by name."""
    page = ok(
        api.get(
            "/api/v1/physical_fields", params={"physicalEntityUuid": entity["uuid"], "size": 1000}
        )
    )
    return {field["name"]: field for field in page["content"]}
