"""Seed 000 ("OpenLineage to Blindata catalog") and seed 002 ("dataset identity") against the data a
tenant already holds: crawled Systems, entities, fields and documentation, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import snapshot
from tests import builders
from tests.builders import documentation_facet, run_event
from tests.sync.conftest import OTHER_DEFINITION, crawl, definition, objects, plan_for

pytestmark = pytest.mark.integration
CRAWLED = "postgres://crawled:5432"


def _documenting(text: str) -> list[dict[str, Any]]:
    facets = documentation_facet(text)
    facets["documentation"]["contentType"] = "text/markdown"
    orders = builders.dataset("db.s.orders", CRAWLED, facets=facets)
    return [run_event("etl.load", outputs=[orders])]


def test_documentation_another_definition_stored_on_a_crawled_entity_is_not_replaced(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000: "A description that another job stored is not replaced on an entity the job did
    not create" — the documentation is the description when long. On a crawled entity neither
    definition created, the first to document it keeps its text: the other does not rewrite it,
    and the two do not rewrite it in turn at every snapshot."""
    crawl(
        client,
        "warehouse",
        {("s", "orders"): {"id": "int8"}},
        properties=(("openLineageNamespace", CRAWLED),),
    )
    theirs, ours = "# Orders\n\nAs the first definition documents them.", "# Orders\n\nAs we do."
    other, job = definition(uuid=OTHER_DEFINITION), definition()
    first = snapshot(plan_for(client, _documenting(theirs), other), client, other)
    assert first.counters["documentsWritten"] == 1
    (orders,) = [e for e in objects(emulator, Kind.ENTITY) if e["name"] == "orders"]

    for _ in range(2):
        described = snapshot(plan_for(client, _documenting(ours), job), client, job)
        again = snapshot(plan_for(client, _documenting(theirs), other), client, other)

        assert described.counters.get("documentsKeptOtherDefinition") == 1, described.counters
        assert "documentsWritten" not in described.counters
        assert "documentsWritten" not in again.counters
        stored = client.api.physical_entities.get_documentation(orders["uuid"])
        assert stored is not None and stored.content == theirs


def test_a_definition_updates_its_own_documentation_on_a_crawled_entity_not_a_persons(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000: "User-edited documentation is not replaced. The job writes the hash of the
    documentation it wrote ...": on a crawled entity, the job's own document follows the facet;
    once a person edits it, it is kept."""
    crawl(
        client,
        "warehouse",
        {("s", "orders"): {"id": "int8"}},
        properties=(("openLineageNamespace", CRAWLED),),
    )
    job = definition()
    for version in ("one", "two"):
        text = f"# Orders\n\nVersion {version}."
        report = snapshot(plan_for(client, _documenting(text), job), client, job)
        assert report.counters["documentsWritten"] == 1, report.counters
        (orders,) = [e for e in objects(emulator, Kind.ENTITY) if e["name"] == "orders"]
        stored = client.api.physical_entities.get_documentation(orders["uuid"])
        assert stored is not None and stored.content == text

    client.api.physical_entities.put_documentation(orders["uuid"], "Edited by a steward")
    kept = snapshot(plan_for(client, _documenting("# Orders\n\nThree."), job), client, job)
    assert kept.counters["documentsKeptUserEdited"] == 1
    stored = client.api.physical_entities.get_documentation(orders["uuid"])
    assert stored is not None and stored.content == "Edited by a steward"


def test_a_system_two_namespaces_land_on_is_found_by_both_afterwards(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000, step 4: "A System of the planned name that already exists is used and stamped
    instead of duplicated", and step 3, the stamp, is "the tenant-wide way to say 'this
    namespace is that System'". A server reached on two ports (a pooler's and the database's)
    is one System under ``nameTemplate: {host}``; both namespaces are stamped on it, so a
    definition without a creation policy finds it by either one."""
    events = [
        run_event(
            "etl.copy",
            inputs=[builders.dataset("db.s.orders", "postgres://db:6432")],
            outputs=[builders.dataset("db.s.orders_copy", "postgres://db:5432")],
        )
    ]
    creator = definition(uuid=OTHER_DEFINITION)
    created = snapshot(plan_for(client, events, creator), client, creator)
    assert created.status == "success", created.render()
    (db,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "db"]
    stamps = {p["value"] for p in db["additionalProperties"] if p["name"] == "openLineageNamespace"}
    assert stamps == {"postgres://db:5432", "postgres://db:6432"}

    reader = builders.definition()  # no systemPolicies: nothing is created
    plan = plan_for(client, events, reader)
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0
    assert {s.name for s in plan.systems if s.namespaces} == {"db"}
