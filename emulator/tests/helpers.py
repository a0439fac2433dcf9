"""What the emulator's own tests share: the tenants and users, an in-process client, and helpers
that create the objects most tests need.

`make_settings` gives two tenants: `etl` (API key `API_KEY`) reaches only the first, `reader` may
only read, `steward` may do everything in both. `in_process` calls an app through httpx and a2wsgi
(no socket); `ok` asserts a status and gives the JSON. The fixtures are in `conftest.py`. These
tests import nothing of the provider: the emulator is a distribution of its own.
"""

from __future__ import annotations

from typing import Any

import httpx
from a2wsgi import ASGIMiddleware
from blindata_emulator import EmulatorSettings, EmulatorUser
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
