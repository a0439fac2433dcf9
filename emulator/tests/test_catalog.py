"""Systems, physical entities, physical fields and documentation (blindata-api.md §2)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from blindata_emulator import Emulator, Kind
from helpers import create_entity, create_system, fields_of, ok, upload

ENTITIES = "/api/v1/physical_entities"
FIELDS = "/api/v1/physical_fields"


def test_system_crud_and_409_on_a_duplicate_name(api: httpx.Client) -> None:
    system = create_system(api, "dwh", subtype="DATABASE", technology="PostgreSQL")
    assert system["uuid"] and system["creationDate"] == system["modificationDate"]
    duplicate = api.post("/api/v1/systems", json={"name": "dwh"})
    assert duplicate.status_code == 409
    assert system["uuid"] in duplicate.json()["message"]
    other = create_system(api, "lake")
    assert api.put(f"/api/v1/systems/{other['uuid']}", json={"name": "dwh"}).status_code == 409
    changed = ok(api.put(f"/api/v1/systems/{system['uuid']}", json={"name": "dwh2"}))
    assert changed["technology"] is None  # PUT replaces the whole object
    assert ok(api.get(f"/api/v1/systems/{system['uuid']}"))["name"] == "dwh2"
    assert api.delete(f"/api/v1/systems/{system['uuid']}").status_code == 204
    assert api.get(f"/api/v1/systems/{system['uuid']}").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": 3},
        {"name": "x", "subtype": "SPACESHIP"},
        {"name": "x", "additionalProperties": [{"name": "n", "value": 1}]},
    ],
    ids=["no-name", "name-not-string", "bad-subtype", "property-value-not-string"],
)
def test_an_invalid_create_gives_400(api: httpx.Client, body: dict[str, Any]) -> None:
    response = api.post("/api/v1/systems", json=body)
    assert response.status_code == 400
    assert response.json()["message"]


def test_entity_uploads_upsert_by_system_schema_and_name(api: httpx.Client) -> None:
    system = create_system(api)
    row = {"system": {"uuid": system["uuid"]}, "schema": "sales", "name": "orders"}
    first = upload(api, ENTITIES, [row, {**row, "schema": "other"}])
    again = upload(api, ENTITIES, [row])
    assert (first["rowCreated"], first["rowUpdated"], first["rowDiscarded"]) == (2, 0, 0)
    assert (again["rowCreated"], again["rowUpdated"]) == (0, 1)
    assert set(first) == {"message", "rowCreated", "rowUpdated", "rowDiscarded", "errors"}
    assert ok(api.get(ENTITIES))["totalElements"] == 2
    assert api.post(ENTITIES, json=row).status_code == 409


def test_every_upsert_refreshes_modification_date_even_with_identical_content(
    api: httpx.Client,
) -> None:
    system = create_system(api)
    row = {"system": {"uuid": system["uuid"]}, "schema": "s", "name": "t", "description": "d"}
    dates = []
    for _ in range(3):
        upload(api, ENTITIES, [row])
        (entity,) = ok(api.get(ENTITIES))["content"]
        dates.append((entity["creationDate"], entity["modificationDate"]))
    assert len({created for created, _ in dates}) == 1
    modified = [mod for _, mod in dates]
    assert modified == sorted(modified) and len(set(modified)) == 3
    assert all(mod.endswith("Z") and len(mod) == 24 for mod in modified)


def test_upserts_never_blank_and_merge_additional_properties_by_name(api: httpx.Client) -> None:
    system = create_system(api)
    key = {"system": {"uuid": system["uuid"]}, "schema": "s", "name": "t"}
    upload(
        api,
        ENTITIES,
        [
            {
                **key,
                "description": "crawled",
                "tableType": "TABLE",
                "additionalProperties": [
                    {"name": "owner", "value": "finance"},
                    {"name": "tag", "value": "pii"},
                    {"name": "tag", "value": "gold"},
                    {"name": "keep", "value": "me"},
                ],
            }
        ],
    )
    upload(
        api,
        ENTITIES,
        [
            {
                **key,
                "description": None,
                "additionalProperties": [
                    {"name": "tag", "value": "silver"},
                    {"name": "owner", "value": "sales"},
                    {"name": "owner", "value": "ops"},
                ],
            }
        ],
    )
    (entity,) = ok(api.get(ENTITIES))["content"]
    assert entity["description"] == "crawled" and entity["tableType"] == "TABLE"
    props = sorted((p["name"], p["value"]) for p in entity["additionalProperties"])
    assert props == [("keep", "me"), ("owner", "ops"), ("owner", "sales"), ("tag", "silver")]


def test_an_upload_discards_bad_rows_with_their_index_and_applies_the_others(
    api: httpx.Client,
) -> None:
    system = create_system(api)
    good = {"uuid": system["uuid"]}
    report = upload(
        api,
        ENTITIES,
        [
            {"system": good, "name": "ok1"},
            {"system": good},
            {"system": {"uuid": "no-such-system"}, "name": "lost"},
            {"system": good, "name": "typed", "isHidden": "yes"},
            "not an object",
            {"system": good, "name": "ok2"},
        ],
    )
    assert (report["rowCreated"], report["rowUpdated"], report["rowDiscarded"]) == (2, 0, 4)
    assert [error["index"] for error in report["errors"]] == [1, 2, 3, 4]
    messages = [error["message"] for error in report["errors"]]
    assert "name is required" in messages[0]
    assert "no-such-system" in messages[1]
    assert "isHidden" in messages[2]
    assert {e["name"] for e in ok(api.get(ENTITIES))["content"]} == {"ok1", "ok2"}


@pytest.mark.parametrize("body", [{"name": "x"}, "text", 3], ids=["object", "string", "number"])
def test_an_upload_body_that_is_not_a_json_list_gives_400(api: httpx.Client, body: Any) -> None:
    response = api.post(f"{ENTITIES}/*/upload", json=body)
    assert response.status_code == 400
    assert "JSON list" in response.json()["message"]


@pytest.mark.parametrize("star", ["*", "%2A", "%2a"])
def test_the_literal_star_of_collection_actions_works_and_tolerates_encoding(
    api: httpx.Client, star: str
) -> None:
    system = create_system(api)
    response = api.post(
        f"{ENTITIES}/{star}/upload", json=[{"system": {"uuid": system["uuid"]}, "name": "t"}]
    )
    assert ok(response)["rowCreated"] == 1


def test_entity_filters(api: httpx.Client) -> None:
    dwh = create_system(api, "dwh")
    lake = create_system(api, "lake")
    upload(
        api,
        ENTITIES,
        [
            {
                "system": {"uuid": dwh["uuid"]},
                "schema": "sales",
                "name": "orders",
                "tableType": "TABLE",
            },
            {
                "system": {"uuid": dwh["uuid"]},
                "schema": "sales",
                "name": "orders_v",
                "tableType": "VIEW",
            },
            {
                "system": {"uuid": lake["uuid"]},
                "schema": "raw",
                "name": "orders",
                "tableType": "OPENLINEAGE_JOB",
                "additionalProperties": [{"name": "openLineageOwner", "value": "job-1"}],
            },
        ],
    )

    def names(**params: str) -> list[str]:
        body = ok(api.get(ENTITIES, params=params))
        return sorted(f"{e['schema']}.{e['name']}" for e in body["content"])

    assert names(systemUuid=dwh["uuid"]) == ["sales.orders", "sales.orders_v"]
    assert names(search="sales.orders") == ["sales.orders", "sales.orders_v"]
    assert names(search="RAW.ORD") == ["raw.orders"]
    assert names(schema="sales", name="orders") == ["sales.orders"]
    assert names(tableType="VIEW") == ["sales.orders_v"]
    assert names(additionalPropertyName="openLineageOwner") == ["raw.orders"]
    assert names(additionalPropertyName="openLineageOwner", additionalPropertyValue="job-2") == []
    assert names(additionalPropertyName="openLineageOwner", additionalPropertyValue="job-1") == [
        "raw.orders"
    ]


def test_fields_name_their_entity_by_uuid_or_by_schema_name_and_system(api: httpx.Client) -> None:
    system = create_system(api)
    entity = create_entity(api, system, "s", "t")
    report = upload(
        api,
        FIELDS,
        [
            {
                "physicalEntity": {"uuid": entity["uuid"]},
                "name": "id",
                "type": "int",
                "ordinalPosition": 1,
            },
            {
                "physicalEntity": {"schema": "s", "name": "t", "system": {"uuid": system["uuid"]}},
                "name": "amount",
            },
            {
                "physicalEntity": {
                    "schema": "s",
                    "name": "missing",
                    "system": {"uuid": system["uuid"]},
                },
                "name": "x",
            },
            {"physicalEntity": {"uuid": entity["uuid"]}, "name": "bad", "ordinalPosition": "1"},
        ],
    )
    assert (report["rowCreated"], report["rowDiscarded"]) == (2, 2)
    shown = fields_of(api, entity)["id"]
    assert shown["physicalEntity"] == {
        "uuid": entity["uuid"],
        "schema": "s",
        "name": "t",
        "system": {"uuid": system["uuid"], "name": system["name"]},
    }
    by_names = ok(
        api.get(
            FIELDS,
            params={
                "systemUuid": system["uuid"],
                "physicalEntitySchema": "s",
                "physicalEntityName": "t",
                "physicalFieldName": "amount",
            },
        )
    )
    assert [f["name"] for f in by_names["content"]] == ["amount"]


def test_a_field_upload_never_removes_fields_it_does_not_name(api: httpx.Client) -> None:
    system = create_system(api)
    entity = create_entity(api, system, "s", "t", ("a", "b", "c"))
    report = upload(
        api, FIELDS, [{"physicalEntity": {"uuid": entity["uuid"]}, "name": "a", "type": "text"}]
    )
    assert report["rowUpdated"] == 1
    fields = fields_of(api, entity)
    assert set(fields) == {"a", "b", "c"}
    assert fields["a"]["type"] == "text" and fields["a"]["ordinalPosition"] == 1


def test_documentation_is_404_until_put_then_read_back(api: httpx.Client) -> None:
    system = create_system(api)
    entity = create_entity(api, system, "s", "t")
    path = f"{ENTITIES}/{entity['uuid']}/documentation"
    assert api.get(path).status_code == 404
    put = ok(api.put(path, json={"content": "# Orders", "contentType": "MARKDOWN"}))
    assert put["content"] == "# Orders"
    got = ok(api.get(path))
    assert got["contentType"] == "MARKDOWN" and got["modificationDate"]
    ok(api.put(path, json={"content": "edited by a user"}))
    assert ok(api.get(path))["content"] == "edited by a user"
    assert api.put(path, json={"contentType": "MARKDOWN"}).status_code == 400
    assert api.get(f"{ENTITIES}/no-such-entity/documentation").status_code == 404


def test_deleting_an_entity_removes_its_fields_documentation_and_flows(
    api: httpx.Client, emulator: Emulator
) -> None:
    system = create_system(api)
    source = create_entity(api, system, "s", "src", ("a",))
    target = create_entity(api, system, "s", "dst", ("a",))
    api.put(f"{ENTITIES}/{source['uuid']}/documentation", json={"content": "doc"})
    upload(
        api,
        "/api/v1/dataflows",
        [
            {
                "name": "table",
                "scope": "ol:x",
                "fromPhysicalEntity": {"uuid": source["uuid"]},
                "toPhysicalEntity": {"uuid": target["uuid"]},
            },
            {
                "name": "column",
                "scope": "ol:x",
                "fromPhysicalField": {"uuid": fields_of(api, source)["a"]["uuid"]},
                "toPhysicalField": {"uuid": fields_of(api, target)["a"]["uuid"]},
            },
        ],
    )
    assert len(emulator.objects(Kind.FLOW)) == 2
    assert api.delete(f"{ENTITIES}/{source['uuid']}").status_code == 204
    assert fields_of(api, source) == {}
    assert emulator.objects(Kind.FLOW) == [] and emulator.objects(Kind.DOCUMENTATION) == []
    assert set(fields_of(api, target)) == {"a"}


def test_deleting_a_system_removes_its_entities_and_routines(
    api: httpx.Client, emulator: Emulator
) -> None:
    system = create_system(api)
    create_entity(api, system, "s", "t", ("a", "b"))
    upload(api, "/api/v1/systems/routines", [{"system": {"uuid": system["uuid"]}, "name": "r"}])
    api.delete(f"/api/v1/systems/{system['uuid']}")
    for kind in (Kind.ENTITY, Kind.FIELD, Kind.ROUTINE, Kind.SYSTEM):
        assert emulator.objects(kind) == [], kind


@pytest.mark.parametrize(
    "ends",
    [
        pytest.param(("fromSystem", "toSystem"), id="a System-level flow from it"),
        pytest.param(("toSystem", "fromSystem"), id="a System-level flow to it"),
    ],
)
def test_deleting_a_system_removes_the_flows_that_end_on_it(
    api: httpx.Client, emulator: Emulator, ends: tuple[str, str]
) -> None:
    """Blindata cascades a deletion to the flows of the object (cleanup relies on it: it keeps a
    System a person's flow ends on, since deleting the System would take the flow with it)."""
    doomed = create_system(api, "doomed")
    other = create_system(api, "other")
    flow = {"name": "a steward's flow", ends[0]: {"uuid": doomed["uuid"]}}
    flow[ends[1]] = {"uuid": other["uuid"]}
    upload(api, "/api/v1/dataflows", [flow])
    assert len(emulator.objects(Kind.FLOW)) == 1
    assert api.delete(f"/api/v1/systems/{doomed['uuid']}").status_code == 204
    assert emulator.objects(Kind.FLOW) == []
    assert [s["name"] for s in emulator.objects(Kind.SYSTEM)] == ["other"]
