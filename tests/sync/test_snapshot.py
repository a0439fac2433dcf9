"""Snapshot of the dbt fixtures against the served emulator: what lands, and that it lands once."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.plan import OPENLINEAGE_JOB, CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import snapshot
from tests.sync.helpers import (
    DEFINITION_UUID,
    counts,
    dbt_events,
    definition,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration


def props(doc: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for prop in doc.get("additionalProperties") or []:
        found.setdefault(prop["name"], []).append(prop["value"])
    return found


def by_key(emulator: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    systems = {s["uuid"]: s["name"] for s in objects(emulator, Kind.SYSTEM)}
    return {
        (systems[e["system"]["uuid"]], e.get("schema") or "", e["name"]): e
        for e in objects(emulator, Kind.ENTITY)
    }


def test_the_dbt_events_land_as_planned(client: BlindataClient, emulator: Any) -> None:
    job = definition()
    plan = plan_for(client, dbt_events(), job)

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    systems = {s["name"]: s for s in objects(emulator, Kind.SYSTEM)}
    assert sorted(systems) == ["OpenLineage", "postgres"]
    assert systems["postgres"]["subtype"] == "DATABASE"
    assert systems["postgres"]["technology"] == "PostgreSQL"
    assert props(systems["postgres"]) == {
        "openLineageNamespace": ["postgres://postgres:5432"],
        "openLineageOwner": [DEFINITION_UUID],
    }
    assert props(systems["OpenLineage"])["openLineageOwner"] == [DEFINITION_UUID]
    assert systems["OpenLineage"]["subtype"] == "SERVICE"

    stored = by_key(emulator)
    assert len(stored) == len(plan.entities)
    for planned in plan.entities:
        entity = stored[(planned.key.system, planned.key.schema_ or "", planned.key.name)]
        assert props(entity)["openLineageOwner"] == [DEFINITION_UUID]
        assert entity.get("description") == planned.description
        if planned.table_type == OPENLINEAGE_JOB:
            assert entity["tableType"] == OPENLINEAGE_JOB
            assert props(entity)["openLineageJobScope"]

    names = {entity["uuid"]: entity["name"] for entity in stored.values()}
    fields = {
        (names[f["physicalEntity"]["uuid"]], f["name"]) for f in objects(emulator, Kind.FIELD)
    }
    assert fields == {(f.entity.name, f.name) for f in plan.fields}

    routines = {r["name"]: r for r in objects(emulator, Kind.ROUTINE)}
    assert sorted(routines) == sorted(r.name for r in plan.routines)
    for planned in plan.routines:
        routine = routines[planned.name]
        assert routine["type"] == "SCRIPT"
        assert routine["definition"] == planned.definition
        assert props(routine)["openLineageSqlHash"] == [planned.sql_hash]
    (bucket,) = objects(emulator, Kind.BUCKET)
    assert bucket["name"] == f"OpenLineage SQL {DEFINITION_UUID}"
    assert [s["uuid"] for s in bucket["systems"]] == [systems["postgres"]["uuid"]]
    statements = objects(emulator, Kind.STATEMENT)
    assert sorted(s["routine"]["uuid"] for s in statements) == sorted(
        r["uuid"] for r in routines.values()
    )
    assert report.gap_count(GapCode.QLP_PENDING) == len(plan.routines)

    flows = {(f["scope"], f["name"]): f for f in objects(emulator, Kind.FLOW) if f.get("scope")}
    assert set(flows) == {(f.scope, f.name) for f in plan.flows}
    uuids = {key: entity["uuid"] for key, entity in stored.items()}
    for planned in plan.flows:
        flow = flows[(planned.scope, planned.name)]
        source, target = planned.source.entity, planned.target.entity
        assert (
            flow["fromPhysicalEntity"]["uuid"]
            == uuids[(source.system, source.schema_ or "", source.name)]
        )
        assert (
            flow["toPhysicalEntity"]["uuid"]
            == uuids[(target.system, target.schema_ or "", target.name)]
        )
    assert report.scopes == sorted({f.scope for f in plan.flows})
    assert report.systems["postgres"].owned and report.systems["postgres"].datasets


def test_a_second_snapshot_creates_nothing_and_refreshes_everything(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    first = snapshot(plan_for(client, dbt_events(), job), client, job)
    before = counts(emulator)
    dates = {e["uuid"]: e["modificationDate"] for e in objects(emulator, Kind.ENTITY)}
    since = emulator.emulator.requests.entries()[-1]["id"]

    second = snapshot(plan_for(client, dbt_events(), job), client, job)

    assert first.status == second.status == "success"
    created = {name: value for name, value in second.counters.items() if "Created" in name}
    assert set(created.values()) == {0}, created
    assert second.counters["entitiesRefreshed"] == first.counters["entitiesCreated"]
    assert second.counters["flowsRefreshed"] == first.counters["flowsCreated"]
    after = counts(emulator)
    analysis_flows = [f for f in objects(emulator, Kind.FLOW) if f.get("queryStatement")]
    assert after == {**before, Kind.FLOW: before[Kind.FLOW]}, (before, after, analysis_flows)
    for entity in objects(emulator, Kind.ENTITY):
        assert entity["modificationDate"] > dates[entity["uuid"]]
    # The analysis ran in between: nothing is resubmitted, and its outcome is reported.
    assert second.counters.get("statementsSubmitted", 0) == 0
    assert second.gap_count(GapCode.QLP_PENDING) == 0
    analysed = second.counters.get("statementsAnalyzed", 0) + second.counters.get(
        "statementsPartiallyAnalyzed", 0
    )
    assert analysed + second.gap_count(GapCode.QLP_ANALYSIS_ERROR) == len(
        objects(emulator, Kind.STATEMENT)
    )
    requests = emulator.emulator.requests.entries(since)
    # 20 with the read-back of one uploaded entity that checks Blindata's clock (apply.py), and
    # 21 with the read of its time again that tells dates ahead of it (``serverDatesAhead``)
    assert len(requests) < 22, [f"{r['method']} {r['path']}" for r in requests]


def _change_sql(events: list[Any], job_name: str, sql: str) -> list[Any]:
    changed = copy.deepcopy(events)
    for event in changed:
        facets = event.get("job", {}).get("facets", {})
        if event["job"]["name"] == job_name and "sql" in facets:
            facets["sql"]["query"] = sql
    return changed


def test_changed_sql_is_submitted_again_and_nothing_else(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    events = dbt_events()
    plan: CatalogPlan = plan_for(client, events, job)
    snapshot(plan, client, job)
    name = plan.routines[0].name
    sql = "INSERT INTO public.customers (customer_id) SELECT customer_id FROM public.stg_customers"

    report = snapshot(plan_for(client, _change_sql(events, name, sql), job), client, job)

    assert report.counters["statementsUpdated"] == 1
    assert report.counters["statementsSubmitted"] == 1
    pending = report.gaps[GapCode.QLP_PENDING].examples
    assert pending == [f"OpenLineage:{plan.routines[0].catalog}/{name}"]
    (statement,) = [s for s in objects(emulator, Kind.STATEMENT) if s["name"] == name]
    assert statement["queryText"] == sql
