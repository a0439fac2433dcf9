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
from tests.sync.helpers import OTHER_DEFINITION, crawl, definition, objects, plan_for

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


def test_a_definition_that_stops_documenting_a_crawled_entity_lets_the_other_write_its_own(
    client: BlindataClient, emulator: Any
) -> None:
    """The first definition to document a crawled entity keeps the document while it describes
    it; once it no longer does, its cleanup takes its claim (``openLineageDocumentedBy``) off,
    and the definition that still documents the entity writes its text. It stayed the first's
    for good, the other's counted ``documentsKeptOtherDefinition`` at every snapshot (a probe
    of several writers)."""
    from airflow_blindata.sync import cleanup
    from tests.sync.helpers import History, next_second

    crawl(
        client,
        "warehouse",
        {("s", "orders"): {"id": "int8"}, ("s", "other"): {"id": "int8"}},
        properties=(("openLineageNamespace", CRAWLED),),
    )
    first, second = definition(uuid=OTHER_DEFINITION), definition()
    history = History()
    elsewhere = [run_event("etl.other", outputs=[builders.dataset("db.s.other", CRAWLED)])]
    history.add(snapshot(plan_for(client, _documenting("# Orders, dev"), first), client, first))
    snapshot(plan_for(client, _documenting("# Orders, prod"), second), client, second)
    next_second(emulator)
    history.add(snapshot(plan_for(client, elsewhere, first), client, first))  # moved on
    retired = history.add(cleanup(first, client, history))
    next_second(emulator)

    again = snapshot(plan_for(client, _documenting("# Orders, prod"), second), client, second)

    assert retired.status == "success", retired.render()
    assert again.counters.get("documentsWritten") == 1, again.render()
    (orders,) = [e for e in objects(emulator, Kind.ENTITY) if e["name"] == "orders"]
    stored = client.api.physical_entities.get_documentation(orders["uuid"])
    assert stored is not None and stored.content == "# Orders, prod"


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


def _crawled_orders_events(order: str) -> list[dict[str, Any]]:
    from tests.builders import at, field, new_run_id, schema_facet

    early = schema_facet(field("id", "bigint", description="job: id"), field("amount", "numeric"))
    late = schema_facet(
        field("id", "bigint", description="job: id", ordinal_position=1),
        field("amount", "numeric", ordinal_position=2),
        field("window", "struct", ordinal_position=3, fields=[field("day", "date")]),
    )
    events = [
        run_event(
            "etl.load",
            run_id=new_run_id(),
            time=at(1),
            outputs=[builders.dataset("db.s.orders", CRAWLED, facets=early)],
        ),
        run_event(
            "etl.load",
            run_id=new_run_id(),
            time=at(5),
            outputs=[
                builders.dataset("DB.s.orders", "postgresql://etl:pw@CRAWLED/", facets={**late})
            ],
        ),
    ]
    return events if order == "in order" else list(reversed(events))


def _catalog_state(emulator: Any) -> dict[str, Any]:
    keep = ("name", "schema", "type", "ordinalPosition", "description", "tableType")
    entities = {
        e["uuid"]: (e.get("schema"), e["name"], e.get("description"), e.get("tableType"))
        for e in objects(emulator, Kind.ENTITY)
    }
    fields = sorted(
        (entities[f["physicalEntity"]["uuid"]][:2], tuple(f.get(k) for k in keep))
        for f in objects(emulator, Kind.FIELD)
    )
    return {"entities": sorted(entities.values(), key=str), "fields": fields}


@pytest.mark.parametrize("order", ["in order", "reversed"])
def test_a_crawled_table_is_enriched_the_same_however_often_and_in_whatever_order(
    client: BlindataClient, emulator: Any, order: str
) -> None:
    """Seed 000: "Fields are created when missing. Fields that a crawler created are never
    removed or retyped by the job"; "Results are the same however many times the same events
    arrive". Two spellings of the crawled table's namespace and name (seed 002) land on it; its
    fields keep the crawler's type, position and description; the nested ones are added."""
    crawl(
        client,
        "warehouse",
        {("s", "orders"): {"id": "int8", "amount": "numeric(12,2)"}},
        properties=(("openLineageNamespace", CRAWLED),),
        description="Crawled orders",
    )
    job = definition()
    states = []
    for _ in range(2):
        report = snapshot(plan_for(client, _crawled_orders_events(order), job), client, job)
        assert report.status == "success", report.render()
        states.append(_catalog_state(emulator))
    assert states[0] == states[1]
    fields = {f[1][0]: f[1] for f in states[0]["fields"]}
    assert fields["id"] == ("id", None, "int8", 1, "crawled id", None)
    assert fields["amount"] == ("amount", None, "numeric(12,2)", 2, "crawled amount", None)
    assert fields["window"][2:4] == ("struct", 3)
    assert fields["window.day"][2:4] == ("date", 4)
    assert [e[:2] for e in states[0]["entities"] if e[3] != "OPENLINEAGE_JOB"] == [("s", "orders")]
