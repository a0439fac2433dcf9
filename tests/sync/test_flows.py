"""Flows from a constructed plan: ends resolved to uuids, anchored lineage, scopes recorded."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.plan import (
    OPENLINEAGE_JOB,
    CatalogPlan,
    EntityKey,
    FlowEnd,
    PlannedEntity,
    PlannedField,
    PlannedFlow,
    PlannedSystem,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import snapshot
from tests import builders
from tests.sync.helpers import DEFINITION_UUID, definition, objects, plan_for

pytestmark = pytest.mark.integration

DB = "warehouse"
SCOPE = "ol:airflow|etl.build"
A = EntityKey(system=DB, schema="s", name="a")
B = EntityKey(system=DB, schema="s", name="b")
GHOST = EntityKey(system=DB, schema="s", name="ghost")
JOB_1 = EntityKey(system="OpenLineage", schema="airflow", name="etl.extract")
JOB_2 = EntityKey(system="OpenLineage", schema="airflow", name="etl.build")


def flow(name: str, kind: str, source: FlowEnd, target: FlowEnd, scope: str = SCOPE) -> PlannedFlow:
    return PlannedFlow(
        scope=scope,
        name=name,
        kind=kind,  # type: ignore[arg-type]
        evidence="orchestration" if kind == "orchestration" else "declared",
        source=source,
        target=target,
        description=f"{kind} flow {name}",
    )


def lineage_plan() -> CatalogPlan:
    owner = (("openLineageOwner", DEFINITION_UUID),)
    return CatalogPlan(
        definition_uuid=DEFINITION_UUID,
        systems=[
            PlannedSystem(
                name=DB, origin="created", create=True, stamp=owner, entity_creation=True
            ),
            PlannedSystem(
                name="OpenLineage",
                origin="openlineage",
                create=True,
                stamp=owner,
                entity_creation=True,
            ),
        ],
        entities=[PlannedEntity(key=key, may_create=True, source="test") for key in (A, B)]
        + [
            PlannedEntity(key=key, may_create=True, table_type=OPENLINEAGE_JOB, source="test")
            for key in (JOB_1, JOB_2)
        ],
        fields=[
            PlannedField(entity=A, name="x", type="int", ordinal_position=1),
            PlannedField(entity=B, name="y", type="int", ordinal_position=1),
        ],
        flows=[
            flow("a -> b", "table", FlowEnd(entity=A), FlowEnd(entity=B)),
            flow(
                "a.x -> b.y", "column", FlowEnd(entity=A, field="x"), FlowEnd(entity=B, field="y")
            ),
            flow(
                "a.nope -> b.y",
                "column",
                FlowEnd(entity=A, field="nope"),
                FlowEnd(entity=B, field="y"),
            ),
            flow("a -> ghost", "table", FlowEnd(entity=A), FlowEnd(entity=GHOST)),
            flow(
                "extract -> build @orchestration",
                "orchestration",
                FlowEnd(entity=JOB_1),
                FlowEnd(entity=JOB_2),
                scope=SCOPE + "#orchestration",
            ),
        ],
    )


def test_flows_land_with_resolved_ends_and_missing_ends_are_gaps(
    client: BlindataClient, emulator: Any
) -> None:
    report = snapshot(lineage_plan(), client, definition())

    assert report.status == "success", report.render()
    entities = {e["name"]: e for e in objects(emulator, Kind.ENTITY)}
    fields = {f["name"]: f for f in objects(emulator, Kind.FIELD)}
    flows = {f["name"]: f for f in objects(emulator, Kind.FLOW)}
    assert set(flows) == {"a -> b", "a.x -> b.y", "extract -> build @orchestration"}
    column = flows["a.x -> b.y"]
    assert column["fromPhysicalField"]["uuid"] == fields["x"]["uuid"]
    assert column["toPhysicalField"]["uuid"] == fields["y"]["uuid"]
    assert column["toPhysicalEntity"]["uuid"] == entities["b"]["uuid"]
    assert flows["a -> b"]["fromPhysicalField"] is None
    assert flows["a -> b"]["description"] == "table flow a -> b"
    orchestration = flows["extract -> build @orchestration"]
    assert orchestration["fromPhysicalEntity"]["uuid"] == entities["etl.extract"]["uuid"]
    assert report.gaps[GapCode.FIELD_NOT_CATALOGUED].examples == [f"{A}.nope"]
    assert report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert report.scopes == [SCOPE, SCOPE + "#orchestration"]
    assert report.failed_scopes == []
    assert (report.counters["flowsTable"], report.counters["flowsColumn"]) == (1, 1)
    assert report.counters["flowsOrchestration"] == 1


def test_flows_are_uploaded_in_batches_of_the_configured_size(
    client: BlindataClient, emulator: Any
) -> None:
    plan = lineage_plan()
    plan.flows = [
        flow(
            f"a -> b #{index}",
            "table",
            FlowEnd(entity=A),
            FlowEnd(entity=B),
            scope=f"ol:n|j{index}",
        )
        for index in range(7)
    ]
    since = 0

    report = snapshot(plan, client, definition(), batch_size=3)

    uploads = [
        r
        for r in emulator.emulator.requests.entries(since)
        if r["path"].endswith("dataflows/*/upload")
    ]
    assert len(uploads) == 3
    assert report.counters["flowsCreated"] == 7


def test_a_column_flow_between_two_columns_of_one_table_lands(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 001: "Field inputs with DIRECT transformations become field flows", also in the
    table an UPDATE reads and writes (``SET a = upper(b)``): both ends are fields of one
    entity, and no table flow goes from the table to itself."""
    schema = builders.schema_facet("a", "b")
    lineage = builders.column_lineage_facet(
        {"a": [builders.input_field("db.s.t", "b", transformations=[{"type": "DIRECT"}])]}
    )
    table = builders.dataset("db.s.t", facets=schema)
    written = builders.dataset("db.s.t", facets={**schema, **lineage})
    events = [builders.run_event("etl.update", inputs=[table], outputs=[written])]

    report = snapshot(plan_for(client, events, definition()), client, definition())

    assert report.status == "success", report.render()
    fields = {f["uuid"]: f["name"] for f in objects(emulator, Kind.FIELD)}
    (flow,) = objects(emulator, Kind.FLOW)
    assert flow["fromPhysicalEntity"]["uuid"] == flow["toPhysicalEntity"]["uuid"]
    ends = (fields[flow["fromPhysicalField"]["uuid"]], fields[flow["toPhysicalField"]["uuid"]])
    assert ends == ("b", "a")
    assert flow["scope"] == "ol:airflow|etl.update"
