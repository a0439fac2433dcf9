"""Spring pages, the size cap, sorting, empty filters and the error body (blindata-api.md §1)."""

from __future__ import annotations

import httpx
import pytest
from blindata_emulator import create_app
from helpers import api_key_headers, create_system, in_process, make_settings, ok, upload
from starlette.applications import Starlette

PAGE_KEYS = {"content", "number", "size", "totalElements", "totalPages", "first", "last"}


def test_lists_return_spring_pages_and_walking_them_never_skips_or_repeats(
    api: httpx.Client,
) -> None:
    for number in range(23):
        create_system(api, f"system-{number:02d}")
    seen: list[str] = []
    pages = []
    for page in range(3):
        body = ok(api.get("/api/v1/systems", params={"page": page, "size": 10}))
        assert PAGE_KEYS | {"numberOfElements"} <= set(body)
        pages.append((body["number"], body["numberOfElements"], body["first"], body["last"]))
        seen += [system["name"] for system in body["content"]]
        assert body["totalElements"] == 23 and body["totalPages"] == 3
    assert pages == [(0, 10, True, False), (1, 10, False, False), (2, 3, False, True)]
    assert seen == [f"system-{number:02d}" for number in range(23)]


def test_a_page_past_the_end_is_empty() -> None:
    app = create_app(make_settings())
    with in_process(app, **api_key_headers()) as api:
        body = ok(api.get("/api/v1/systems", params={"page": 5}))
    assert body["content"] == [] and body["numberOfElements"] == 0 and body["last"]


def test_the_page_size_is_capped() -> None:
    app = create_app(make_settings(page_size_cap=5))
    with in_process(app, **api_key_headers()) as api:
        system = create_system(api)
        rows = [{"system": {"uuid": system["uuid"]}, "name": f"t{n}"} for n in range(12)]
        assert upload(api, "/api/v1/physical_entities", rows)["rowCreated"] == 12
        body = ok(api.get("/api/v1/physical_entities", params={"size": 1000}))
    assert body["size"] == 5 and len(body["content"]) == 5 and body["totalPages"] == 3


def test_the_default_cap_is_1000(app: Starlette) -> None:
    with in_process(app, **api_key_headers()) as api:
        system = create_system(api)
        rows = [{"system": {"uuid": system["uuid"]}, "name": f"t{n:04d}"} for n in range(1005)]
        assert upload(api, "/api/v1/physical_entities", rows)["rowCreated"] == 1005
        body = ok(api.get("/api/v1/physical_entities", params={"size": 5000}))
    assert body["size"] == 1000 and body["numberOfElements"] == 1000 and body["totalPages"] == 2


@pytest.mark.parametrize(
    ("sort", "expected"),
    [("name,DESC", ["c", "b", "a"]), ("name,ASC", ["a", "b", "c"]), ("name", ["a", "b", "c"])],
)
def test_sort_orders_by_a_property(api: httpx.Client, sort: str, expected: list[str]) -> None:
    for name in ("b", "c", "a"):
        create_system(api, name)
    body = ok(api.get("/api/v1/systems", params={"sort": sort}))
    assert [system["name"] for system in body["content"]] == expected


def test_empty_filter_values_mean_no_filter(api: httpx.Client) -> None:
    create_system(api, "one")
    create_system(api, "two")
    body = ok(api.get("/api/v1/systems", params={"name": "", "search": ""}))
    assert body["totalElements"] == 2
    assert ok(api.get("/api/v1/systems", params={"name": "two"}))["totalElements"] == 1
    assert ok(api.get("/api/v1/systems", params={"search": "ON"}))["totalElements"] == 1


@pytest.mark.parametrize(
    "params",
    [{"page": "-1"}, {"size": "0"}, {"page": "x"}, {"sort": "name;drop table,ASC"}],
    ids=["negative-page", "zero-size", "not-a-number", "bad-sort"],
)
def test_bad_paging_parameters_give_400(api: httpx.Client, params: dict[str, str]) -> None:
    response = api.get("/api/v1/systems", params=params)
    assert response.status_code == 400
    assert response.json()["errorName"] == "BadRequestException"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/v1/systems/no-such-uuid", 404),
        ("GET", "/api/v1/no-such-resource", 404),
        ("DELETE", "/api/v1/physical_entities/no-such-uuid", 404),
        ("DELETE", "/api/v1/users/me", 405),
    ],
)
def test_unknown_uuids_and_routes_give_the_spring_error_body(
    api: httpx.Client, method: str, path: str, status: int
) -> None:
    response = api.request(method, path)
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"status", "timestamp", "error", "message", "path", "errorName"}
    assert body["status"] == status and body["path"] == path
    assert body["timestamp"].endswith("Z") and len(body["timestamp"]) == len(
        "2026-11-29T10:00:00.000Z"
    )


def test_a_body_that_is_not_json_gives_400(api: httpx.Client) -> None:
    response = api.post(
        "/api/v1/systems", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["message"]
