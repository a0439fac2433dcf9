"""Data flows and system routines (blindata-api.md §2)."""

from __future__ import annotations

from typing import Any

import httpx
from blindata_emulator import Emulator
from helpers import create_entity, create_system, fields_of, ok, upload

FLOWS = "/api/v1/dataflows"
ROUTINES = "/api/v1/systems/routines"


def _catalog(
    api: httpx.Client,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    dwh = create_system(api, "dwh")
    lake = create_system(api, "lake")
    source = create_entity(api, lake, "raw", "orders", ("id",))
    target = create_entity(api, dwh, "sales", "orders", ("id",))
    return dwh, lake, source, target


def test_flow_uploads_upsert_by_scope_and_name_and_derive_their_ends(api: httpx.Client) -> None:
    dwh, lake, source, target = _catalog(api)
    row = {
        "name": "raw.orders->sales.orders",
        "scope": "ol:ns|job",
        "fromPhysicalEntity": {"uuid": source["uuid"]},
        "toPhysicalEntity": {"uuid": target["uuid"]},
    }
    column = {
        "name": "raw.orders.id->sales.orders.id",
        "scope": "ol:ns|job",
        "fromPhysicalField": {"uuid": fields_of(api, source)["id"]["uuid"]},
        "toPhysicalField": {"uuid": fields_of(api, target)["id"]["uuid"]},
    }
    first = upload(api, FLOWS, [row, column, {**row, "scope": "ol:ns|other"}])
    again = upload(api, FLOWS, [row])
    assert (first["rowCreated"], again["rowUpdated"]) == (3, 1)
    flows = {(f["scope"], f["name"]): f for f in ok(api.get(FLOWS))["content"]}
    table = flows[("ol:ns|job", row["name"])]
    assert table["fromSystem"] == {"uuid": lake["uuid"]} and table["toSystem"] == {
        "uuid": dwh["uuid"]
    }
    assert table["fromPhysicalField"] is None and table["queryStatement"] is None
    col = flows[("ol:ns|job", column["name"])]
    assert col["fromPhysicalEntity"] == {"uuid": source["uuid"]}
    assert col["toPhysicalEntity"] == {"uuid": target["uuid"]}


def test_a_flow_row_with_a_missing_or_inconsistent_end_is_discarded(api: httpx.Client) -> None:
    dwh, lake, source, target = _catalog(api)
    report = upload(
        api,
        FLOWS,
        [
            {"name": "no-from", "toPhysicalEntity": {"uuid": target["uuid"]}},
            {
                "name": "bad-system",
                "fromSystem": {"uuid": dwh["uuid"]},
                "fromPhysicalEntity": {"uuid": source["uuid"]},
                "toSystem": {"uuid": dwh["uuid"]},
            },
            {
                "name": "unknown",
                "fromPhysicalEntity": {"uuid": "nope"},
                "toSystem": {"uuid": dwh["uuid"]},
            },
            {
                "name": "systems-only",
                "fromSystem": {"uuid": lake["uuid"]},
                "toSystem": {"uuid": dwh["uuid"]},
            },
        ],
    )
    assert report["rowCreated"] == 1
    assert [e["index"] for e in report["errors"]] == [0, 1, 2]
    assert "from end is missing" in report["errors"][0]["message"]
    assert "is not in system" in report["errors"][1]["message"]


def test_flow_filters_including_modified_before(api: httpx.Client, emulator: Emulator) -> None:
    _, lake, source, target = _catalog(api)
    ends = {
        "fromPhysicalEntity": {"uuid": source["uuid"]},
        "toPhysicalEntity": {"uuid": target["uuid"]},
    }
    upload(api, FLOWS, [{"name": "old", "scope": "s1", **ends}])
    emulator.clock.advance(60)
    cutoff = emulator.clock.stamp()
    emulator.clock.advance(60)
    upload(
        api,
        FLOWS,
        [{"name": "new", "scope": "s1", **ends}, {"name": "other", "scope": "s2", **ends}],
    )

    def names(**params: str) -> list[str]:
        return sorted(f["name"] for f in ok(api.get(FLOWS, params=params))["content"])

    assert names(scope="s1") == ["new", "old"]
    assert names(modifiedBefore=cutoff) == ["old"]
    assert names(scope="s1", modifiedBefore=cutoff, fromSystemUuid=lake["uuid"]) == ["old"]
    assert names(toSystemUuid=lake["uuid"]) == []
    assert names(fromPhysicalEntityUuid=source["uuid"], toPhysicalEntityUuid=target["uuid"]) == [
        "new",
        "old",
        "other",
    ]
    assert api.get(FLOWS, params={"modifiedBefore": "yesterday"}).status_code == 400
    (old,) = ok(api.get(FLOWS, params={"modifiedBefore": cutoff}))["content"]
    assert api.delete(f"{FLOWS}/{old['uuid']}").status_code == 204
    assert names() == ["new", "other"]
    assert api.delete(f"{FLOWS}/{old['uuid']}").status_code == 404


def test_routine_uploads_upsert_by_system_catalog_schema_and_name(api: httpx.Client) -> None:
    system = create_system(api, "jobs")
    row = {
        "system": {"uuid": system["uuid"]},
        "catalog": "airflow",
        "schema": "dags",
        "name": "load_orders",
        "type": "SCRIPT",
        "definition": "INSERT INTO a SELECT * FROM b",
        "additionalProperties": [{"name": "openLineageSqlHash", "value": "abc"}],
    }
    assert upload(api, ROUTINES, [row])["rowCreated"] == 1
    report = upload(
        api,
        ROUTINES,
        [{**row, "definition": None}, {**row, "catalog": "other"}, {**row, "type": "MACRO"}],
    )
    assert (report["rowUpdated"], report["rowCreated"], report["rowDiscarded"]) == (1, 1, 1)
    listed = ok(
        api.get(
            ROUTINES,
            params={
                "systemUuid": system["uuid"],
                "catalog": "airflow",
                "schema": "dags",
                "name": "load_orders",
            },
        )
    )
    (routine,) = listed["content"]
    assert routine["definition"] == "INSERT INTO a SELECT * FROM b"


def test_deleting_a_routine_removes_its_statements_and_their_flows(
    api: httpx.Client, emulator: Emulator
) -> None:
    dwh, lake, source, target = _catalog(api)
    upload(api, ROUTINES, [{"system": {"uuid": dwh["uuid"]}, "name": "load", "type": "SCRIPT"}])
    (routine,) = ok(api.get(ROUTINES))["content"]
    bucket = ok(
        api.post(
            "/api/v1/queryparser/buckets",
            json={"name": "b", "systems": [{"uuid": dwh["uuid"]}, {"uuid": lake["uuid"]}]},
        ),
        201,
    )
    statement = ok(
        api.post(
            "/api/v1/queryparser/statements",
            json={
                "queryBucket": {"uuid": bucket["uuid"]},
                "routine": {"uuid": routine["uuid"]},
                "queryText": "INSERT INTO sales.orders (id) SELECT id FROM raw.orders",
            },
        ),
        201,
    )
    api.post(f"/api/v1/queryparser/statements/{statement['uuid']}/analyze")
    upload(
        api,
        FLOWS,
        [
            {
                "name": "kept",
                "scope": "ol:x",
                "fromPhysicalEntity": {"uuid": source["uuid"]},
                "toPhysicalEntity": {"uuid": target["uuid"]},
            }
        ],
    )
    flows = ok(api.get(FLOWS))["content"]
    assert len([f for f in flows if f["queryStatement"]]) == 2
    assert api.delete(f"{ROUTINES}/{routine['uuid']}").status_code == 204
    assert [f["name"] for f in ok(api.get(FLOWS))["content"]] == ["kept"]
    assert ok(api.get("/api/v1/queryparser/statements"))["totalElements"] == 0
    assert api.get(f"{ROUTINES}/{routine['uuid']}").status_code == 404
