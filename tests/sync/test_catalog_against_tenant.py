"""Seed 000 ("OpenLineage to Blindata catalog") and seed 002 ("dataset identity") against the data a
tenant already holds: crawled Systems, entities, fields and documentation, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
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
