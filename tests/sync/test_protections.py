"""Seed 000's protections: crawled metadata is never degraded, people's edits are kept."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    PhysicalEntityRef,
    PhysicalField,
    System,
)
from airflow_blindata.mapper.plan import EntityKey, PlannedEntity
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import cleanup, snapshot
from airflow_blindata.sync.entities import _not_catalogued
from tests import builders
from tests.builders import column_lineage_facet, field, input_field, run_event, schema_facet
from tests.sync.helpers import (
    DEFINITION_UUID,
    OTHER_DEFINITION,
    History,
    ListedOtherwise,
    _documented_plan,
    client_of,
    crawl,
    dbt_events,
    definition,
    next_second,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration
NAMESPACE = "postgres://postgres:5432"


def props(doc: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for prop in doc.get("additionalProperties") or []:
        found.setdefault(prop["name"], []).append(prop["value"])
    return found


def entity(emulator: Any, name: str) -> dict[str, Any]:
    (found,) = [e for e in objects(emulator, Kind.ENTITY) if e["name"] == name]
    return found


def fields_of(emulator: Any, entity_uuid: str) -> dict[str, dict[str, Any]]:
    return {
        f["name"]: f
        for f in objects(emulator, Kind.FIELD)
        if f["physicalEntity"]["uuid"] == entity_uuid
    }


def test_crawled_fields_descriptions_and_entities_are_not_degraded(
    client: BlindataClient, emulator: Any
) -> None:
    crawl(
        client,
        "warehouse",
        {("public", "customers"): {"customer_id": "int4", "first_name": "varchar(80)"}},
        properties=(("openLineageNamespace", NAMESPACE),),
        description="Crawled description",
    )
    job = definition()
    plan = plan_for(client, dbt_events(), job)

    for _ in range(2):
        report = snapshot(plan, client, job)
        assert report.status == "success", report.render()
        customers = entity(emulator, "customers")
        assert customers["description"] == "Crawled description"
        assert customers["tableType"] == "TABLE"
        assert "openLineageOwner" not in props(customers)
        assert props(customers)["openLineageDataset"] == [f"{NAMESPACE}/postgres.public.customers"]
        fields = fields_of(emulator, customers["uuid"])
        assert fields["customer_id"]["type"] == "int4"
        assert fields["customer_id"]["description"] == "crawled customer_id"
        assert fields["customer_id"]["ordinalPosition"] == 1
        assert fields["first_name"]["type"] == "varchar(80)"
        assert fields["last_name"]["description"] == "Customer's last name. PII."

    assert sorted(s["name"] for s in objects(emulator, Kind.SYSTEM)) == ["OpenLineage", "warehouse"]
    datasets = [e for e in plan.entities if e.key.system == "warehouse"]
    assert plan.quality is not None  # checks on uncatalogued datasets are reported too (seed 003)
    uncatalogued_checks = [c for c in plan.quality.checks if c.entity.name != "customers"]
    expected = len(datasets) - 1 + len(uncatalogued_checks)
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == expected
    assert report.gap_count(GapCode.DANGLING_FLOW) > 0
    assert {e["name"] for e in objects(emulator, Kind.ENTITY) if e.get("schema") == "public"} == {
        "customers"
    }


def test_a_crawled_entity_without_description_gets_the_planned_one(
    client: BlindataClient, emulator: Any
) -> None:
    crawl(
        client,
        "warehouse",
        {("public", "customers"): {"customer_id": "int4"}},
        properties=(("openLineageNamespace", NAMESPACE),),
    )
    job = definition()

    snapshot(plan_for(client, dbt_events(), job), client, job)

    assert entity(emulator, "customers")["description"].startswith("This table has basic")


def test_user_edited_documentation_is_kept_and_counted(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    first = snapshot(_documented_plan(client, "# Orders\n\nVersion one."), client, job)
    assert first.counters["documentsWritten"] == 1
    orders = entity(emulator, "orders")
    documentation = client.api.physical_entities.get_documentation(orders["uuid"])
    assert documentation is not None and documentation.content == "# Orders\n\nVersion one."

    unchanged = snapshot(_documented_plan(client, "# Orders\n\nVersion one."), client, job)
    assert unchanged.counters["documentsUnchanged"] == 1
    assert "documentsWritten" not in unchanged.counters

    changed = snapshot(_documented_plan(client, "# Orders\n\nVersion two."), client, job)
    assert changed.counters["documentsWritten"] == 1

    client.api.physical_entities.put_documentation(orders["uuid"], "Edited by a steward")
    kept = snapshot(_documented_plan(client, "# Orders\n\nVersion three."), client, job)
    assert kept.counters["documentsKeptUserEdited"] == 1
    stored = client.api.physical_entities.get_documentation(orders["uuid"])
    assert stored is not None and stored.content == "Edited by a steward"

    replaced = snapshot(
        _documented_plan(client, "# Orders\n\nVersion three.", replace_user_documentation=True),
        client,
        job,
    )
    assert replaced.counters["documentsWritten"] == 1
    stored = client.api.physical_entities.get_documentation(orders["uuid"])
    assert stored is not None and stored.content == "# Orders\n\nVersion three."


def test_a_system_of_the_planned_name_is_reused_not_duplicated(
    client: BlindataClient, emulator: Any
) -> None:
    client.api.systems.create(System(name="postgres", subtype="DATABASE"))
    job = definition()

    report = snapshot(plan_for(client, dbt_events(), job), client, job)

    (postgres,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "postgres"]
    assert props(postgres) == {"openLineageNamespace": [NAMESPACE]}
    assert report.counters["systemsStamped"] == 1
    # Entities are not created on a System this definition did not create (seed 000 table).
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) > 0
    assert report.systems["postgres"].owned is False


def test_a_system_created_meanwhile_is_reused_without_the_owner_stamp(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    plan = plan_for(client, dbt_events(), job)  # plans to create "postgres"
    client.api.systems.create(System(name="postgres", subtype="DATABASE"))  # a crawler was faster

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert report.counters["systemsReused"] == 1
    (postgres,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "postgres"]
    assert props(postgres) == {"openLineageNamespace": [NAMESPACE]}
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) > 0


def test_a_job_system_another_definition_created_meanwhile_keeps_its_name_stamp(
    client: BlindataClient, emulator: Any
) -> None:
    """The job System this definition plans to create, created meanwhile by another definition
    whose steward renamed its own job System so: reused, and the name stamp by which that
    definition finds its System is neither replaced nor doubled (it names a System for its
    owner only)."""
    job = definition()
    plan = plan_for(client, dbt_events(), job)  # plans to create "OpenLineage"
    theirs = {"openLineageOwner": "other", "openLineageJobSystem": "true"}
    theirs["openLineageJobSystemName"] = "Their jobs"
    client.api.systems.create(
        System(
            name="OpenLineage",
            subtype="SERVICE",
            additional_properties=AdditionalProperty.many(tuple(theirs.items())),
        )
    )

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert report.counters["systemsReused"] == 1
    (jobs,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "OpenLineage"]
    assert props(jobs) == {name: [value] for name, value in theirs.items()}


@pytest.mark.parametrize(
    ("owner", "created"),
    [
        (OTHER_DEFINITION, True),  # created by OpenLineage: entityCreation defaults to true
        (None, False),  # crawled: only entities that already exist get fields and lineage
    ],
)
def test_entity_creation_defaults_to_true_on_a_system_another_definition_created(
    client: BlindataClient, emulator: Any, owner: str | None, created: bool
) -> None:
    """Seed 000's table: "Created by OpenLineage — entityCreation default true: entities and
    fields are created"; "Mapped or crawled — false". A System another job definition created
    is created by OpenLineage: this definition's datasets get entities there, its own; the
    System keeps its owner."""
    stamp = [("openLineageNamespace", NAMESPACE)]
    if owner:
        stamp.append(("openLineageOwner", owner))
    client.api.systems.create(
        System(
            name="warehouse",
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(stamp),
        )
    )
    job = definition()

    report = snapshot(plan_for(client, dbt_events(), job), client, job)

    assert report.status == "success", report.render()
    (warehouse,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "warehouse"]
    assert props(warehouse) == {name: [value] for name, value in stamp}  # not re-owned
    entities = [
        e for e in objects(emulator, Kind.ENTITY) if e["system"]["uuid"] == warehouse["uuid"]
    ]
    if created:
        assert report.counters["entitiesCreated"] > 0
        assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 0
        assert entities and all(props(e)["openLineageOwner"] == [DEFINITION_UUID] for e in entities)
    else:
        assert not entities
        assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) > 0


def test_another_definitions_objects_keep_their_owner(
    client: BlindataClient, emulator: Any
) -> None:
    other = definition(uuid=OTHER_DEFINITION)
    snapshot(plan_for(client, dbt_events(), other), client, other)
    job = definition()

    report = snapshot(plan_for(client, dbt_events(), job), client, job)

    assert report.status == "success", report.render()
    for stored in objects(emulator, Kind.ENTITY):
        assert props(stored)["openLineageOwner"] == [OTHER_DEFINITION]
    for system in objects(emulator, Kind.SYSTEM):
        assert props(system)["openLineageOwner"] == [OTHER_DEFINITION]
    assert report.counters["entitiesCreated"] == 0


def test_documentation_another_definition_stored_is_not_replaced_on_an_entity_it_created(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000: "A description that another job stored is not replaced on an entity the job did
    not create" — the documentation is the description when long. Two definitions that document
    one table differently do not rewrite it in turn: a second round writes nothing."""
    theirs, ours = "# Orders\n\nAs the creator documents them.", "# Orders\n\nAs we do."
    other = definition(uuid=OTHER_DEFINITION)
    job = definition()
    creator = snapshot(_documented_plan(client, theirs), client, other)
    assert creator.counters["documentsWritten"] == 1
    orders = entity(emulator, "orders")

    for _ in range(2):
        described = snapshot(_documented_plan(client, ours), client, job)
        again = snapshot(_documented_plan(client, theirs), client, other)

        assert described.counters["documentsKeptOtherDefinition"] == 1
        assert "documentsWritten" not in described.counters
        assert "documentsWritten" not in again.counters
        stored = client.api.physical_entities.get_documentation(orders["uuid"])
        assert stored is not None and stored.content == theirs


class NameContained(ListedOtherwise):
    """A Blindata whose System listing matches ``name`` as a part of the name and lists by name:
    how ``name`` matches is not in the contract (the emulator matches it exactly)."""

    path = "/api/v1/systems"

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        name = asked.get("name", "")
        return sorted((s for s in items if name in s["name"]), key=lambda s: s["name"])


def test_a_system_created_meanwhile_is_found_by_its_exact_name_when_the_filter_matches_loosely(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    with client_of(emulator, NameContained()) as loose:
        plan = plan_for(loose, dbt_events(), job)  # plans to create "postgres"
        for name in ("old-postgres", "postgres"):  # crawlers were faster
            client.api.systems.create(System(name=name, subtype="DATABASE"))
        report = snapshot(plan, loose, job)

    assert report.status == "success", report.render()
    assert report.counters["systemsReused"] == 1
    (postgres,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "postgres"]
    assert props(postgres) == {"openLineageNamespace": [NAMESPACE]}


class NamesWithoutCase(NameContained):
    """A Blindata whose System names are unique whatever their case: it refuses to create
    ``postgres`` beside ``Postgres`` (409), and its ``name`` filter ignores case."""

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        name = asked.get("name", "").casefold()
        return [s for s in items if s["name"].casefold() == name]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == self.path:
            name = json.loads(request.read())["name"].casefold()
            headers = [
                (k, v) for k, v in request.headers.items() if not k.lower().startswith("content")
            ]
            listing = request.url.copy_with(params={"size": "1000"})
            every = httpx.HTTPTransport.handle_request(  # the emulator's own listing
                self, httpx.Request("GET", listing, headers=headers)
            )
            if any(s["name"].casefold() == name for s in json.loads(every.read())["content"]):
                return httpx.Response(409, json={"status": 409, "message": "name taken"})
        return super().handle_request(request)


def test_a_system_created_meanwhile_in_another_case_is_reused_where_names_ignore_case(
    client: BlindataClient, emulator: Any
) -> None:
    """Where Blindata compares System names without case, the System a person created meanwhile
    as ``Postgres`` is the planned ``postgres``: reused and stamped, not a failure at every
    run ("Blindata says it exists (409) but does not list it")."""
    job = definition()
    with client_of(emulator, NamesWithoutCase()) as blind_to_case:
        plan = plan_for(blind_to_case, dbt_events(), job)  # plans to create "postgres"
        client.api.systems.create(System(name="Postgres", subtype="DATABASE"))
        report = snapshot(plan, blind_to_case, job)

    assert report.status == "success", report.render()
    assert report.counters["systemsReused"] == 1
    (postgres,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"].casefold() == "postgres"]
    assert props(postgres) == {"openLineageNamespace": [NAMESPACE]}


class NamesWithoutCaseAndFailingCreates(NameContained):
    """A Blindata whose name filter ignores case (its names do not) and whose creates of
    Systems fail with a 500: they never land."""

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        name = asked.get("name", "").casefold()
        return [s for s in items if s["name"].casefold() == name]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == self.path:
            return httpx.Response(500, json={"status": 500, "message": "internal error"})
        return super().handle_request(request)


def test_a_create_that_failed_never_adopts_a_persons_system_in_another_case(
    client: BlindataClient, emulator: Any
) -> None:
    """Only a 409 says a System of that name exists: after a 500 the create may not have
    landed, and a person's ``Postgres`` is no System this definition made or may stamp."""
    job = definition()
    with client_of(emulator, NamesWithoutCaseAndFailingCreates()) as failing:
        plan = plan_for(failing, dbt_events(), job)  # plans to create "postgres"
        client.api.systems.create(System(name="Postgres", subtype="DATABASE"))
        report = snapshot(plan, failing, job)

    assert report.failures["system"].count >= 1, report.render()
    (person,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "Postgres"]
    assert "openLineageNamespace" not in props(person)


# -- a crawled System that is both a dataset System and a shared job System ---------------------

CRAWLED = "postgres://crawled:5432"


def _read_a_crawled_table() -> list[dict[str, Any]]:
    """The job reads ``s.orders`` and names ``s.customer_stats``, neither created by it."""
    stats = builders.dataset("db.s.customer_stats", CRAWLED, facets=schema_facet(field("n", "int")))
    return [
        run_event("etl.enrich", inputs=[builders.dataset("db.s.orders", CRAWLED)], outputs=[stats])
    ]


def _name_a_table_only_in_column_lineage() -> list[dict[str, Any]]:
    """The job writes a table of a created System from a crawled one that only the column
    lineage names: its System is resolved after the job's."""
    lineage = column_lineage_facet({"n": [input_field("db.s.ghost", "id", CRAWLED)]})
    out = builders.dataset(
        "db.mart.daily", NAMESPACE, facets={**schema_facet(field("n", "int")), **lineage}
    )
    return [run_event("etl.enrich", outputs=[out])]


@pytest.mark.parametrize(
    ("events", "not_created"),
    [(_read_a_crawled_table, "customer_stats"), (_name_a_table_only_in_column_lineage, "ghost")],
    ids=["dataset-resolved-first", "job-resolved-first"],
)
def test_entity_creation_false_on_a_crawled_system_also_when_it_holds_the_jobs(
    client: BlindataClient, emulator: Any, events: Any, not_created: str
) -> None:
    """Seed 000: "entityCreation default ... Mapped or crawled: false: only entities that already
    exist get fields and lineage", and "each OpenLineage job becomes one entity on the job System
    of its namespace: the System that a jobSystems rule chooses". A crawled System that a
    ``shared`` rule makes the job System is both: the job entity is created on it, a dataset
    entity is not, whichever of the two the plan meets first."""
    crawl(
        client,
        "warehouse",
        {("s", "orders"): {"id": "int8"}},
        properties=(("openLineageNamespace", CRAWLED),),
    )
    rule = {"pattern": "airflow", "system": {"name": "warehouse"}, "shared": True}
    job = definition(jobSystems=[rule])

    report = snapshot(plan_for(client, events(), job), client, job)

    assert report.status == "success", report.render()
    on_warehouse = {
        e["name"]: e
        for e in objects(emulator, Kind.ENTITY)
        if e["system"]["uuid"] == report.systems["warehouse"].uuid
    }
    assert not_created not in on_warehouse
    assert props(on_warehouse["etl.enrich"])["openLineageOwner"] == [DEFINITION_UUID]
    assert "openLineageOwner" not in props(on_warehouse["orders"])
    assert report.gap_count(GapCode.TARGET_NOT_CATALOGUED) >= 1


# -- a field a crawler added to an entity the job created ---------------------------------------


def _daily(*columns: dict[str, Any]) -> list[dict[str, Any]]:
    """The job writes ``mart.daily`` on the System it creates, with ``columns``."""
    daily = builders.dataset("db.mart.daily", NAMESPACE, facets=schema_facet(*columns))
    return [run_event("etl.load", run_id=builders.new_run_id(), outputs=[daily])]


CRAWLED_FIELDS = [
    {"type": "timestamptz", "ordinalPosition": 9, "description": "Crawled: load time"},
    {"type": "timestamp", "ordinalPosition": 3, "description": None},  # the type the job sends
    {"type": None, "ordinalPosition": None, "description": None},  # a person's bare field
]


@pytest.mark.usefixtures("no_margin")
@pytest.mark.parametrize("crawled", CRAWLED_FIELDS, ids=["typed", "same-type", "bare"])
def test_fields_that_a_crawler_created_are_never_removed_or_retyped_on_an_entity_the_job_created(
    client: BlindataClient, emulator: Any, crawled: dict[str, Any]
) -> None:
    """Seed 000: "Fields that a crawler created are never removed or retyped by the job." A
    crawler of the store may add a column to a table the job created; when the schema facet then
    names that column too, the field stays the crawler's: not retyped, moved or re-described,
    never stamped ``openLineageOwner``, and not removed when the facet drops it again (while the
    job's own ``total``, dropped with it, is)."""
    job = definition()
    history = History()
    columns = (field("day", "date"), field("total", "decimal"))
    first = history.add(snapshot(plan_for(client, _daily(*columns), job), client, job))
    assert first.status == "success", first.render()
    daily = entity(emulator, "daily")
    client.api.physical_fields.upload(
        [
            PhysicalField(
                physical_entity=PhysicalEntityRef(uuid=daily["uuid"]),
                name="loaded_at",
                type=crawled["type"],
                ordinal_position=crawled["ordinalPosition"],
                description=crawled["description"],
            )
        ]
    )
    before = fields_of(emulator, daily["uuid"])["loaded_at"]
    kept = {key: before.get(key) for key in ("type", "ordinalPosition", "description")}
    loaded_at = field("loaded_at", "timestamp", description="From the producer")

    for events in (_daily(*columns, loaded_at), _daily(columns[0])):
        next_second(emulator)
        report = history.add(snapshot(plan_for(client, events, job), client, job))
        removal = history.add(cleanup(job, client, history))

        assert report.status == removal.status == "success", removal.render()
        after = fields_of(emulator, daily["uuid"]).get("loaded_at")
        assert after is not None, removal.render()
        filled = {key: after.get(key) for key in kept if kept[key] is not None}
        assert filled == {key: value for key, value in kept.items() if value is not None}
        assert "openLineageOwner" not in props(after)
    assert set(fields_of(emulator, daily["uuid"])) == {"day", "loaded_at"}


# -- a field description a person edited on an entity the job created ---------------------------


@pytest.mark.usefixtures("no_margin")
@pytest.mark.parametrize(
    ("replace", "kept"), [(False, "Edited by a steward"), (True, "From the producer, v2")]
)
def test_a_field_description_a_person_edited_on_an_entity_the_job_created_is_kept(
    client: BlindataClient, emulator: Any, replace: bool, kept: str
) -> None:
    """Never degrade what people put there: as on the description of an entity the job created,
    the job stamps the hash of each field description it writes (``openLineageDescriptionHash``),
    and a stored one that no longer hashes to it was edited in Blindata: it is kept and counted
    (``fieldDescriptionsKeptUserEdited``), unless the policy says ``replaceUserDocumentation``.
    The field stays the job's: a change of type still lands."""
    job = builders.definition(
        builders.policy(nameTemplate="{host}", replaceUserDocumentation=replace)
    )
    first = snapshot(
        plan_for(client, _daily(field("total", "decimal", description="From the producer")), job),
        client,
        job,
    )
    assert first.status == "success", first.render()
    daily = entity(emulator, "daily")
    total = fields_of(emulator, daily["uuid"])["total"]
    assert props(total).get("openLineageDescriptionHash")
    stored = client.api.physical_fields.get(total["uuid"])
    client.api.physical_fields.update(
        stored.model_copy(update={"description": "Edited by a steward"})
    )

    next_second(emulator)
    changed = field("total", "numeric", description="From the producer, v2")
    report = snapshot(plan_for(client, _daily(changed), job), client, job)

    assert report.status == "success", report.render()
    after = fields_of(emulator, daily["uuid"])["total"]
    assert (after["description"], after["type"]) == (kept, "numeric")
    assert props(after)["openLineageOwner"] == [DEFINITION_UUID]
    assert report.counters.get("fieldDescriptionsKeptUserEdited", 0) == (0 if replace else 1)


def test_a_field_description_the_job_wrote_is_rewritten_when_the_producer_changes_it(
    client: BlindataClient, emulator: Any
) -> None:
    """The stamp tells the job's own older text from a person's: a description the job wrote
    follows the producer."""
    job = definition()
    for text in ("v1", "v2"):
        next_second(emulator)
        report = snapshot(
            plan_for(client, _daily(field("total", "decimal", description=text)), job), client, job
        )
        assert report.status == "success", report.render()
        assert "fieldDescriptionsKeptUserEdited" not in report.counters
    daily = entity(emulator, "daily")
    assert fields_of(emulator, daily["uuid"])["total"]["description"] == "v2"


# -- a field type a crawler changed on an entity the job created ---------------------------------


def retyped_by_a_crawler(client: BlindataClient, stored_field: dict[str, Any]) -> None:
    """A crawler of the store gives the field the store's type."""
    stored = client.api.physical_fields.get(stored_field["uuid"])
    client.api.physical_fields.update(stored.model_copy(update={"type": "NUMBER(38,2)"}))


def test_a_field_type_a_crawler_changed_on_an_entity_the_job_created_is_kept(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000: fields a crawler knows are never retyped by the job. A crawler that crawls a
    table the job created gives its columns the store's types (``NUMBER(38,2)`` where the
    schema facet says ``decimal``): the job stamps the type it wrote (``openLineageFieldType``),
    and a stored type that is no longer it is kept and counted (``fieldTypesKeptRetyped``),
    whatever the producer sends after; a field the job's own type still holds follows the
    producer."""
    job = definition()
    columns = (field("total", "decimal"), field("day", "date"))
    first = snapshot(plan_for(client, _daily(*columns), job), client, job)
    assert first.status == "success", first.render()
    daily = entity(emulator, "daily")
    total = fields_of(emulator, daily["uuid"])["total"]
    assert props(total)["openLineageFieldType"] == ["decimal"]
    retyped_by_a_crawler(client, total)

    for facet_type in ("decimal", "numeric"):
        next_second(emulator)
        changed = (field("total", facet_type), field("day", "timestamp"))
        report = snapshot(plan_for(client, _daily(*changed), job), client, job)
        assert report.status == "success", report.render()
        after = fields_of(emulator, daily["uuid"])
        assert (after["total"]["type"], after["day"]["type"]) == ("NUMBER(38,2)", "timestamp")
        assert props(after["total"])["openLineageOwner"] == [DEFINITION_UUID]
        assert report.counters.get("fieldTypesKeptRetyped") == 1


def test_a_type_a_crawler_gave_a_field_the_job_created_without_one_is_kept(
    client: BlindataClient, emulator: Any
) -> None:
    """A review: a field the job created without a type carried no type stamp, and a type a
    crawler gave it was replaced by the producer's first one. It is stamped ``(none)``."""
    job = definition()
    first = snapshot(plan_for(client, _daily(field("total")), job), client, job)
    assert first.status == "success", first.render()
    daily = entity(emulator, "daily")
    total = fields_of(emulator, daily["uuid"])["total"]
    assert props(total)["openLineageFieldType"] == ["(none)"]
    retyped_by_a_crawler(client, total)

    next_second(emulator)
    report = snapshot(plan_for(client, _daily(field("total", "decimal")), job), client, job)

    assert report.status == "success", report.render()
    assert fields_of(emulator, daily["uuid"])["total"]["type"] == "NUMBER(38,2)"
    assert report.counters.get("fieldTypesKeptRetyped") == 1


def test_a_field_the_job_created_without_a_type_takes_the_producers_first_one(
    client: BlindataClient, emulator: Any
) -> None:
    """Nobody typed it since: the producer's type lands, and is stamped."""
    job = definition()
    for type_ in (None, "decimal"):
        next_second(emulator)
        report = snapshot(plan_for(client, _daily(field("total", type_)), job), client, job)
        assert report.status == "success", report.render()
    total = fields_of(emulator, entity(emulator, "daily")["uuid"])["total"]
    assert (total["type"], props(total)["openLineageFieldType"]) == ("decimal", ["decimal"])


def test_a_field_type_stored_in_another_case_is_the_one_the_job_wrote() -> None:
    """Blindata may give a type back in another case than it was sent: that is no retyping."""
    from airflow_blindata.sync.lookup import StoredField

    def stored(type_: str, stamp: str | None) -> StoredField:
        properties = [("openLineageOwner", DEFINITION_UUID)]
        properties += [("openLineageFieldType", stamp)] if stamp else []
        return StoredField.of(
            PhysicalField(
                uuid="f",
                name="total",
                type=type_,
                additional_properties=AdditionalProperty.many(properties),
            )
        )

    assert not stored("DECIMAL ", "decimal").type_edited
    assert stored("NUMBER(38,2)", "decimal").type_edited
    assert not stored("NUMBER(38,2)", None).type_edited  # stamped before the type was


def test_a_name_looked_up_with_no_schema_says_so_where_a_crawler_holds_it_as_schema_and_table(
    client: BlindataClient, emulator: Any
) -> None:
    """``TARGET_NOT_CATALOGUED MySQL Prod:shop.customers`` read as schema ``shop``, table
    ``customers``, which the crawler holds: the example says the whole name was looked up as
    the table's, with no schema, and what reads it otherwise (a probe of upgrades)."""
    crawl(
        client,
        "MySQL Prod",
        {("shop", "customers"): {"id": "int"}},
        properties=(("openLineageNamespace", "mysql://db:3306"),),
    )
    event = run_event(
        "load",
        inputs=[builders.dataset("shop.orders", "mysql://db:3306")],
        outputs=[builders.dataset("shop.customers", "mysql://db:3306")],
    )
    job = builders.definition()
    report = snapshot(plan_for(client, [event], job), client, job)
    examples = report.gaps[GapCode.TARGET_NOT_CATALOGUED].examples
    assert any(
        example.startswith("MySQL Prod:shop.customers (")
        and "looked up with no schema, the whole name 'shop.customers'" in example
        for example in examples
    ), examples


@pytest.mark.parametrize(
    ("source", "name", "hinted"),
    [
        ("dataset mysql://db:3306/shop.customers", "shop.customers", True),
        ("dataset s3://bucket/orders.csv", "orders.csv", False),  # a file, not schema.table
        ("dataset mssql://h:1433/sales.dbo.Orders", "sales.dbo.Orders", True),
        ("dataset snowflake://acct/ANALYTICS.RAW.ORDERS", "ANALYTICS.RAW.ORDERS", True),
        ("dataset bigquery/my-proj.raw.orders", "my-proj.raw.orders", True),
        ("dataset mssql://h:1433/dbo.Orders", "dbo.Orders", False),  # not its three levels
        ("dataset kafka://b:9092/orders.v2", "orders.v2", False),  # no platform profile
    ],
)
def test_a_name_of_a_naming_spec_platform_read_whole_gets_the_profile_hint(
    source: str, name: str, hinted: bool
) -> None:
    """The hint said to crawl a store that was crawled (a probe of producers: Snowflake's
    ``ANALYTICS.RAW.ORDERS`` without ``nameProfile: snowflake``): it names the profile."""
    key = EntityKey(system="S", name=name)
    planned = PlannedEntity(key=key, may_create=False, source=source)
    example = _not_catalogued(planned)
    assert ("looked up with no schema" in example) is hinted
    scheme = source.removeprefix("dataset ").split("/")[0].removesuffix(":")
    assert (f"nameProfile: {scheme} " in example) is hinted
