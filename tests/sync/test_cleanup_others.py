"""Cleanup never reaches what others own (issue 13 item 2, issue 18 items 6 and 7).

Seed 001, "Scopes": the job "acts on scopes, never on flows created by crawlers or other jobs";
docs/removal-of-deprecated-metadata.md: cleanup "never removes what a crawler, a person or another
job definition created". Blindata deletes with an entity its fields and every flow that ends on
it, and with a System its entities and flows: so a stale table or System the job created stays
while anything outside the job's scopes refers to it, and the report says why.

"The removal share counts what is removed": ``maxRemovalShare`` weighs everything a deletion
takes with it (the fields of a table), against everything the definition owns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    DataFlow,
    PhysicalEntityRef,
    PhysicalField,
    ProfilingMonitor,
    QualityCheck,
    QualitySuite,
    Ref,
    System,
)
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import JOB_SYSTEM_NAME_PROPERTY
from airflow_blindata.store import EventStore
from airflow_blindata.sync import cleanup, snapshot
from airflow_blindata.sync.runner import run_cleanup, run_snapshot
from tests import builders
from tests.builders import documentation_facet, field, run_event, schema_facet
from tests.sync.helpers import (
    OTHER_DEFINITION,
    History,
    SummaryListings,
    UpperCaseReferences,
    client_of,
    definition,
    next_second,
    objects,
    plan_for,
    run,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

JOBDB = "postgres://jobdb:5432"
GONE = "postgres://gone:5432"
"""Only the removed job writes there: its System becomes unused."""


def dataset(namespace: str, name: str, fields: list[str]) -> dict[str, Any]:
    described = schema_facet(*(field(f, "int") for f in fields), producer=None)
    return builders.dataset(name, namespace, facets=described)


def job_event(
    name: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    return run_event(
        name,
        run_id="019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a11",
        producer="https://example.com/etl",
        inputs=inputs,
        outputs=outputs,
    )


SRC = dataset(JOBDB, "db.s.src", ["id"])
DST = dataset(GONE, "db.s.dst", ["id", "amount"])
LOAD = job_event("etl.load", [SRC], [DST])
"""The job that stops being described: it created the table ``s.dst`` and the System ``gone``."""
KEEP = job_event("etl.keep", [SRC], [dataset(JOBDB, "db.s.kept", ["id"])])


def uuid_of(emulator: Any, kind: str, name: str) -> str:
    (found,) = [o["uuid"] for o in objects(emulator, kind) if o["name"] == name]
    return str(found)


# -- what others leave on the job's table or System, between two snapshots ---------------------


def flow_on_dst(scope: str | None) -> Callable[[BlindataClient, Any], str]:
    def plant(client: BlindataClient, emulator: Any) -> str:
        client.api.dataflows.upload(
            [
                DataFlow(
                    name=f"theirs {scope}",
                    scope=scope,
                    from_physical_entity=Ref(uuid=uuid_of(emulator, Kind.ENTITY, "src")),
                    to_physical_entity=Ref(uuid=uuid_of(emulator, Kind.ENTITY, "dst")),
                )
            ]
        )
        return uuid_of(emulator, Kind.FLOW, f"theirs {scope}")

    return plant


def crawled_field(client: BlindataClient, emulator: Any) -> str:
    dst = uuid_of(emulator, Kind.ENTITY, "dst")
    client.api.physical_fields.upload(
        [PhysicalField(physical_entity=PhysicalEntityRef(uuid=dst), name="loaded_at", type="ts")]
    )
    return uuid_of(emulator, Kind.FIELD, "loaded_at")


def system_flow(client: BlindataClient, emulator: Any) -> str:
    client.api.dataflows.upload(
        [
            DataFlow(
                name="a steward's System flow",
                from_system=Ref(uuid=uuid_of(emulator, Kind.SYSTEM, "gone")),
                to_system=Ref(uuid=uuid_of(emulator, Kind.SYSTEM, "jobdb")),
            )
        ]
    )
    return uuid_of(emulator, Kind.FLOW, "a steward's System flow")


def described_by_another_definition(client: BlindataClient, emulator: Any) -> str:
    other = definition(uuid=OTHER_DEFINITION, processLayer=False)
    reader = job_event("other.read", [DST], [])
    report = snapshot(plan_for(client, [reader], other), client, other)
    assert report.status == "success", report.render()
    return uuid_of(emulator, Kind.ENTITY, "dst")


def described_by_a_person(client: BlindataClient, emulator: Any) -> str:
    dst = client.api.physical_entities.get(uuid_of(emulator, Kind.ENTITY, "dst"))
    client.api.physical_entities.update(dst.model_copy(update={"description": "Orders, by day"}))
    return dst.uuid or ""


def a_property_on_dst(name: str, value: str) -> Callable[[BlindataClient, Any], str]:
    """Someone else's additional property on the table the job created: a steward's
    ``retention``, a crawler's ``rowCount`` (it crawled the table since), a dotted name, which is
    a producer's facet field on a job entity only (a probe of cleanups; a review)."""

    def plant(client: BlindataClient, emulator: Any) -> str:
        dst = client.api.physical_entities.get(uuid_of(emulator, Kind.ENTITY, "dst"))
        added = [*(dst.additional_properties or ()), AdditionalProperty(name=name, value=value)]
        client.api.physical_entities.update(dst.model_copy(update={"additional_properties": added}))
        return dst.uuid or ""

    return plant


def documented_by_a_person(client: BlindataClient, emulator: Any) -> str:
    dst = uuid_of(emulator, Kind.ENTITY, "dst")
    client.api.physical_entities.put_documentation(dst, "# Daily orders\nOwned by finance.")
    return dst


def _a_stewards_check(client: BlindataClient, code: str, **refers_to: list[Ref]) -> None:
    suite = client.api.quality_suites.create(QualitySuite(code=f"suite-{code}", name=code))
    client.api.quality_checks.create(
        QualityCheck(code=code, name=code, quality_suite=Ref(uuid=suite.uuid or ""), **refers_to)
    )


def a_persons_quality_check(client: BlindataClient, emulator: Any) -> str:
    """A steward's check on the table: Blindata unlinks it when the table goes."""
    dst = uuid_of(emulator, Kind.ENTITY, "dst")
    _a_stewards_check(client, "dst-amount-positive", physical_entities=[Ref(uuid=dst)])
    return dst


def a_persons_check_of_a_column(client: BlindataClient, emulator: Any) -> str:
    """A check on one column only: the entity filter of the checks' list does not find it."""
    amount = next(f["uuid"] for f in objects(emulator, Kind.FIELD) if f["name"] == "amount")
    _a_stewards_check(client, "dst-amount-not-null", physical_fields=[Ref(uuid=amount)])
    return str(amount)


def a_profilers_monitor(client: BlindataClient, emulator: Any) -> str:
    """Another tool's profiling monitor: Blindata deletes it, and its history, with the table."""
    dst = uuid_of(emulator, Kind.ENTITY, "dst")
    client.api.profiling_monitors.create(
        ProfilingMonitor(name="Nightly profiler", physical_entity=Ref(uuid=dst))
    )
    return dst


def a_person_on_the_system(
    description: str | None = None, **properties: str
) -> Callable[[BlindataClient, Any], str]:
    """A steward's description of the System the job created, or their property on it."""

    def plant(client: BlindataClient, emulator: Any) -> str:
        gone = client.api.systems.get(uuid_of(emulator, Kind.SYSTEM, "gone"))
        added = [
            *(gone.additional_properties or ()),
            *(AdditionalProperty(name=name, value=value) for name, value in properties.items()),
        ]
        update: dict[str, Any] = {"additional_properties": added}
        if description is not None:
            update["description"] = description
        client.api.systems.update(gone.model_copy(update=update))
        return gone.uuid or ""

    return plant


def moved_by_a_person(client: BlindataClient, emulator: Any) -> str:
    """A steward moves the table the job created to the System where it really lives."""
    warehouse = client.api.systems.create(System(name="Warehouse", subtype="DATABASE"))
    dst = client.api.physical_entities.get(uuid_of(emulator, Kind.ENTITY, "dst"))
    client.api.physical_entities.update(
        dst.model_copy(update={"system": Ref(uuid=warehouse.uuid or "")})
    )
    return dst.uuid or ""


def nothing(client: BlindataClient, emulator: Any) -> None:
    return None


@dataclass(frozen=True)
class Case:
    name: str
    plant: Callable[[BlindataClient, Any], str | None]
    table_kept: bool
    system_kept: bool
    reason: str
    """In the reason the report gives."""


CASES = [
    Case(
        "a crawler's flow ends on the table", flow_on_dst("crawler:nightly"), True, True, "crawler"
    ),
    Case("another job's flow ends on it", flow_on_dst("ol:spark|enrich"), True, True, "ol:spark"),
    Case("a person's flow (no scope) ends on it", flow_on_dst(None), True, True, "no scope"),
    Case("a crawler added a field to it", crawled_field, True, True, "loaded_at"),
    Case("a person's flow ends on the System", system_flow, False, True, "no scope"),
    Case(
        "another definition still describes it",
        described_by_another_definition,
        True,
        True,
        OTHER_DEFINITION,
    ),
    Case("a person described the table", described_by_a_person, True, True, "description"),
    Case("a person documented the table", documented_by_a_person, True, True, "documentation"),
    Case(
        "a person added a property",
        a_property_on_dst("retention", "7y"),
        True,
        True,
        "1 property (retention)",
    ),
    Case("a crawler crawled it since", a_property_on_dst("rowCount", "12"), True, True, "rowCount"),
    Case(
        "a person's dotted property",
        a_property_on_dst("gdpr.retention", "7y"),
        True,
        True,
        "(gdpr.retention)",
    ),
    Case("a person's quality check refers to it", a_persons_quality_check, True, True, "check"),
    Case(
        "a person's check of one of its columns", a_persons_check_of_a_column, True, True, "check"
    ),
    Case("another tool's profiling monitor watches it", a_profilers_monitor, True, True, "monitor"),
    Case(
        "a person described the System",
        a_person_on_the_system("Steward: finance replica"),
        False,
        True,
        "a person wrote its description",
    ),
    Case(
        "a person added a property to the System",
        a_person_on_the_system(dataOwner="finance"),
        False,
        True,
        "1 property (dataOwner)",
    ),
    Case(
        "a person moved the table to another System",
        moved_by_a_person,
        True,
        False,
        "a person moved it to the System Warehouse",
    ),
    Case("nothing refers to them", nothing, False, False, ""),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_cleanup_acts_on_scopes_never_on_what_crawlers_people_or_other_jobs_created(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    _acts_on_scopes(client, emulator, case)


REFERENCED = [case for case in CASES if case.reason and case.reason != "description"]


@pytest.mark.parametrize("case", REFERENCED, ids=[case.name for case in REFERENCED])
def test_references_answered_in_upper_case_keep_what_they_refer_to(
    emulator: Any, case: Case
) -> None:
    """The same, from a Blindata that answers references in upper case (UUIDs compare without
    case): a crawler's field or flow on the job's table, named ``DST-UUID`` where the table is
    ``dst-uuid``, still keeps it. Compared by case, every field and flow of the table was a
    stranger's answer and the table went with them."""
    with client_of(emulator, UpperCaseReferences()) as client:
        _acts_on_scopes(client, emulator, case)


def _acts_on_scopes(client: BlindataClient, emulator: Any, case: Case) -> None:
    job = definition()
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    planted = case.plant(client, emulator)
    next_second(emulator)
    run(client, history, [KEEP], job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    entities = {e["name"] for e in objects(emulator, Kind.ENTITY)}
    systems = {s["name"] for s in objects(emulator, Kind.SYSTEM)}
    assert ("dst" in entities) == case.table_kept, report.render()
    assert ("gone" in systems) == case.system_kept, report.render()
    assert "etl.load" not in entities and "etl.keep" in entities  # the job entity went
    assert not any(f["scope"] == "ol:airflow|etl.load" for f in objects(emulator, Kind.FLOW))
    if planted is not None:  # what others created is still there
        everything = {o["uuid"] for kind in Kind.ALL for o in objects(emulator, kind)}
        assert planted in everything
    kept = report.kept.get("entity" if case.table_kept else "system")
    if case.reason:
        assert kept is not None and case.reason in kept.examples[0], report.render()
        counter = "entitiesKeptReferenced" if case.table_kept else "systemsKeptReferenced"
        assert report.counters[counter] == 1
    else:
        assert not report.kept
        assert report.removed["field"].count == 2  # dst's fields, counted with it
        assert report.removed["system"].count == 1
    again = history.add(cleanup(job, client, history, force=True))  # and it stays kept
    assert not again.removed.get("entity") and not again.removed.get("system")


@pytest.mark.parametrize(
    ("openlineage_system", "rules"),
    [
        ({}, []),
        ({}, [{"pattern": "*", "system": {"name": "Airflow jobs"}, "creation": "IF_MISSING"}]),
    ],
    ids=["openLineageSystem", "a jobSystems rule's System"],
)
def test_a_job_system_a_steward_renamed_and_described_keeps_the_jobs_and_is_never_removed(
    client: BlindataClient,
    emulator: Any,
    openlineage_system: dict[str, Any],
    rules: list[dict[str, Any]],
) -> None:
    """The System the job created for its jobs, renamed by a steward: the next snapshot finds it
    by its stamps, creates no System under the old name, and the cleanup removes nothing."""
    job = definition(jobSystems=rules)
    created_as = rules[0]["system"]["name"] if rules else "OpenLineage"
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    jobs = client.api.systems.get(uuid_of(emulator, Kind.SYSTEM, created_as))
    renamed = {"name": "Airflow production jobs", "description": "Steward: our prod jobs"}
    client.api.systems.update(jobs.model_copy(update=renamed))
    next_second(emulator)

    _, snapshot_report = run(client, history, [LOAD, KEEP], job)
    report = history.add(cleanup(job, client, history))

    assert snapshot_report.status == "success", snapshot_report.render()
    assert snapshot_report.counters.get("systemsCreated", 0) == 0, snapshot_report.render()
    assert snapshot_report.counters.get("entitiesCreated", 0) == 0, snapshot_report.render()
    assert report.status == "success" and not report.removed, report.render()
    systems = {s["name"]: s["uuid"] for s in objects(emulator, Kind.SYSTEM)}
    assert created_as not in systems and systems["Airflow production jobs"] == jobs.uuid
    held = {e["name"] for e in objects(emulator, Kind.ENTITY) if e["system"]["uuid"] == jobs.uuid}
    assert {"etl.load", "etl.keep"} <= held


@pytest.mark.parametrize(
    ("where", "kept"),
    [("moved by a person", True), ("the definition maps the namespace elsewhere", False)],
)
def test_a_table_in_another_system_stays_only_when_a_person_moved_it(
    client: BlindataClient, emulator: Any, where: str, kept: bool
) -> None:
    """A steward moved the job's table to the System where it lives: the snapshot describes it
    again where the job places it, and the cleanup keeps the steward's (saying where each is).
    A definition whose policy now names the namespace's System otherwise moves its tables."""
    job = definition()
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    dst = uuid_of(emulator, Kind.ENTITY, "dst")
    if kept:
        moved_by_a_person(client, emulator)
    else:
        client.api.systems.create(System(name="Elsewhere", subtype="DATABASE"))
        job = builders.definition(
            builders.policy("postgres://*", nameTemplate="{host}", entityCreation=True),
            namespaceMappings=[{"pattern": GONE, "system": {"name": "Elsewhere"}}],
        )
    next_second(emulator)
    run(client, history, [LOAD, KEEP], job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert (dst in {e["uuid"] for e in objects(emulator, Kind.ENTITY)}) == kept, report.render()
    if kept:
        (reason,) = report.kept["entity"].examples
        assert reason == (
            "s.dst: a person moved it to the System Warehouse (the job describes its dataset in "
            "gone)"
        )
    else:
        assert "s.dst" in report.removed["entity"].examples


def _mapped_to(system: str, share: float = 0.9) -> JobDefinition:
    """The job's ``gone`` namespace mapped to a System a person created, where the job creates
    its tables."""
    return builders.definition(
        builders.policy("postgres://*", nameTemplate="{host}", entityCreation=True),
        namespaceMappings=[{"pattern": GONE, "system": {"name": system}}],
        cleanup={"maxRemovalShare": share},
    )


@pytest.mark.parametrize(
    "first", ["a dry run", "refused by maxRemovalShare", "after a ledger of the release before"]
)
def test_tables_a_mapping_change_left_in_the_old_system_go_whatever_cleanup_came_first(
    client: BlindataClient, emulator: Any, first: str
) -> None:
    """The first cleanup that records the Systems of the definition's entities (its first, or
    the first after the upgrade) counts every System that holds them: a dry run or a refused one
    records where the tables are, and the next cleanup removes those a namespaceMappings change
    left behind (a review: they were kept forever, as moved by a person)."""
    for name in ("Store A", "Store B"):
        client.api.systems.create(System(name=name, subtype="DATABASE"))
    history = History()
    run(client, history, [LOAD, KEEP], _mapped_to("Store A"))
    old = uuid_of(emulator, Kind.ENTITY, "dst")
    if first == "after a ledger of the release before":
        history.add(cleanup(_mapped_to("Store A"), client, history))
        history[0].report["ledger"].pop("entity_systems")
    next_second(emulator)
    run(client, history, [LOAD, KEEP], _mapped_to("Store B"))
    strict = first == "refused by maxRemovalShare"
    before = history.add(
        cleanup(_mapped_to("Store B", 0.01 if strict else 0.9), client, history, dry_run=not strict)
    )
    assert before.status == ("refused" if strict else "success"), before.render()

    report = history.add(cleanup(_mapped_to("Store B"), client, history, force=strict))

    assert report.status == "success", report.render()
    assert not report.kept.get("entity"), report.render()
    assert "s.dst" in report.removed["entity"].examples
    assert old not in {e["uuid"] for e in objects(emulator, Kind.ENTITY)}
    assert before.removed["entity"].examples == report.removed["entity"].examples


def test_a_persons_copy_of_the_renamed_job_system_takes_neither_the_jobs_nor_is_removed(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    """A steward renamed the job System and a person copied it, stamps and all: the jobs stay in
    the renamed one, where the last snapshot put them, and the cleanup keeps the copy (its name
    is not the one the job gave it: a person renamed it) and removes nothing (a review: the
    copy, first by name, took the jobs, and the renamed original went)."""
    job = definition()
    store.append_many([LOAD, KEEP])
    assert run_snapshot(job, client, store).status == "success"
    assert run_cleanup(job, client, store).status == "success"
    original = client.api.systems.get(uuid_of(emulator, Kind.SYSTEM, "OpenLineage"))
    client.api.systems.update(original.model_copy(update={"name": "Prod jobs"}))
    copy = client.api.systems.create(
        System(
            name="Copy of Prod jobs",
            subtype="SERVICE",
            additional_properties=original.additional_properties,
        )
    )
    next_second(emulator)

    snapshot_report = run_snapshot(job, client, store)
    report = run_cleanup(job, client, store)

    assert snapshot_report.status == "success", snapshot_report.render()
    assert snapshot_report.gap_count(GapCode.JOB_SYSTEM_AMBIGUOUS) == 1
    assert report.status == "success" and not report.removed, report.render()
    assert report.kept["system"].examples == [
        "Copy of Prod jobs: a person renamed it (the job named it OpenLineage)"
    ]
    held = {
        e["name"] for e in objects(emulator, Kind.ENTITY) if e["system"]["uuid"] == original.uuid
    }
    assert {"etl.load", "etl.keep"} <= held
    assert {original.uuid, copy.uuid} <= {s["uuid"] for s in objects(emulator, Kind.SYSTEM)}


def test_once_the_definition_names_the_job_system_as_renamed_the_next_rename_is_followed(
    client: BlindataClient, emulator: Any
) -> None:
    """The admin sets ``openLineageSystem.name`` to the name a steward gave the job System: its
    name stamp follows, and a second rename by the steward keeps the jobs in it (a review: the
    stamp kept the first name, and the next snapshot created a System of the configured name)."""
    history = History()
    run(client, history, [LOAD, KEEP], definition())
    history.add(cleanup(definition(), client, history))
    jobs = client.api.systems.get(uuid_of(emulator, Kind.SYSTEM, "OpenLineage"))
    for renamed in ("Prod jobs", "Prod jobs (EU)"):
        current = client.api.systems.get(jobs.uuid or "")
        client.api.systems.update(current.model_copy(update={"name": renamed}))
        next_second(emulator)
        _, snapshot_report = run(
            client, history, [LOAD, KEEP], definition(openLineageSystem={"name": "Prod jobs"})
        )
        report = history.add(cleanup(definition(), client, history))

        assert snapshot_report.counters.get("systemsCreated", 0) == 0, snapshot_report.render()
        assert report.status == "success" and not report.removed, report.render()
    stamps = client.api.systems.get(jobs.uuid or "").additional_properties or []
    assert [p.value for p in stamps if p.name == JOB_SYSTEM_NAME_PROPERTY] == ["Prod jobs"]
    held = {e["name"] for e in objects(emulator, Kind.ENTITY) if e["system"]["uuid"] == jobs.uuid}
    assert {"etl.load", "etl.keep"} <= held


def test_a_dry_run_keeps_a_system_a_person_described_as_the_cleanup_does_from_summary_listings(
    emulator: Any,
) -> None:
    """A Blindata whose listings leave the description out: the dry run reads each System it
    would remove whole, as the cleanup does before the delete, and says what the cleanup does,
    counters and all (a review: the dry run listed the described System as removed)."""
    with client_of(emulator, SummaryListings(("description",))) as client:
        job = definition()
        history = History()
        run(client, history, [LOAD, KEEP], job)
        history.add(cleanup(job, client, history))
        a_person_on_the_system("Steward: finance replica")(client, emulator)
        next_second(emulator)
        run(client, history, [KEEP], job)

        dry = history.add(cleanup(job, client, history, dry_run=True, force=True))
        real = history.add(cleanup(job, client, history, force=True))

    for report in (dry, real):
        assert report.status == "success", report.render()
        assert "system" not in report.removed, report.render()
        assert report.kept["system"].examples == ["gone: a person wrote its description"]
    assert dry.removed == real.removed
    for counter in ("objectsToRemove", "ownedObjects", "systemsKeptReferenced"):
        assert dry.counters.get(counter) == real.counters.get(counter), counter
    assert "gone" in {s["name"] for s in objects(emulator, Kind.SYSTEM)}


def _both_describe_dst(
    client: BlindataClient,
) -> tuple[JobDefinition, JobDefinition, History, History]:
    """This definition creates ``dst`` (``LOAD``, ``KEEP``); another one reads it (its mark)."""
    job = definition()
    other = definition(uuid=OTHER_DEFINITION, processLayer=False)
    history, others_history = History(), History()
    run(client, history, [LOAD, KEEP], job)
    run(client, others_history, [job_event("other.read", [DST], [])], other)
    return job, other, history, others_history


def test_a_table_another_definition_no_longer_describes_is_removed(
    client: BlindataClient, emulator: Any
) -> None:
    job, other, history, others_history = _both_describe_dst(client)
    dst = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "dst")
    mark = {"name": "openLineageDescribedBy", "value": OTHER_DEFINITION}
    assert mark in dst["additionalProperties"]
    next_second(emulator)
    run(client, others_history, [job_event("other.read", [SRC], [])], other)
    moved_on = others_history.add(cleanup(other, client, others_history))
    assert moved_on.counters["describedByRetired"] == 1, moved_on.render()
    dst = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "dst")
    assert mark not in dst["additionalProperties"]
    assert {"name": "openLineageOwner", "value": job.uuid} in dst["additionalProperties"]
    next_second(emulator)
    run(client, history, [KEEP], job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success" and not report.kept, report.render()
    assert "dst" not in {e["name"] for e in objects(emulator, Kind.ENTITY)}


def test_a_table_another_definition_starts_describing_during_the_cleanup_stays(
    client: BlindataClient, emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each definition holds its own lock: another definition's snapshot that starts describing
    the table between the cleanup's reading and its deletes (its mark, a flow of its own) lost
    the table, its fields and the flow until its next snapshot. The table is read again just
    before it is deleted."""
    from airflow_blindata.sync import removal

    job, other = definition(), definition(uuid=OTHER_DEFINITION, processLayer=False)
    history, others_history = History(), History()
    run(client, history, [LOAD, KEEP], job)
    next_second(emulator)
    run(client, history, [KEEP], job)  # LOAD's job goes: dst is stale
    collect = removal.collect

    def other_snapshot_in_between(*args: Any, **kwargs: Any) -> Any:
        found = collect(*args, **kwargs)
        next_second(emulator)
        run(client, others_history, [job_event("other.read", [DST], [])], other)
        return found

    monkeypatch.setattr(removal, "collect", other_snapshot_in_between)
    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert "dst" in {e["name"] for e in objects(emulator, Kind.ENTITY)}, report.render()
    assert report.counters["entitiesChangedMeanwhile"] == 1
    assert "changed since the cleanup read it" in report.kept["entity"].examples[0]


class NoQualityPermission(httpx.HTTPTransport):
    """A user without the quality and profiling permissions (neither is needed when the
    definition's quality is off): their lists answer 403."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "GET" and path.endswith(("/data-quality/checks", "/monitors")):
            return httpx.Response(403, json={"message": "lacks QUALITY_VIEWER"})
        return super().handle_request(request)


def test_a_user_who_may_not_read_checks_or_monitors_still_removes_stale_tables(
    emulator: Any,
) -> None:
    """Checks and monitors this user may not read are no work it can see, nor keep: with a
    403 on their lists every stale table was kept, for good (a review)."""
    report = _cleanup_of_load_through(emulator, NoQualityPermission())

    assert report.status == "success", report.render()
    assert "dst" not in {e["name"] for e in objects(emulator, Kind.ENTITY)}, report.render()


def _cleanup_of_load_through(emulator: Any, transport: httpx.BaseTransport) -> Any:
    """``LOAD`` and ``KEEP`` synced, then ``KEEP`` alone, and the cleanup: against a Blindata
    whose answers go through ``transport``."""
    job = definition()
    history = History()
    with client_of(emulator, transport) as blindata:
        run(blindata, history, [LOAD, KEEP], job)
        next_second(emulator)
        run(blindata, history, [KEEP], job)
        return history.add(cleanup(job, blindata, history, force=True))


class ListedToTheSecond(httpx.HTTPTransport):
    """A Blindata whose listings give dates to the second, its reads by uuid to the millisecond
    (the contract pins neither)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or request.url.path != "/api/v1/physical_entities":
            return response
        page = json.loads(response.read())
        for item in page.get("content") or ():
            if item.get("modificationDate"):
                item["modificationDate"] = item["modificationDate"][:19] + "Z"
        return httpx.Response(200, json=page, headers={"Date": response.headers["Date"]})


def test_a_table_read_again_is_judged_by_the_watermark_not_by_the_listings_date(
    emulator: Any,
) -> None:
    """An entity read again before its delete is kept when written since the last snapshot:
    against its listed date to the second, its date to the millisecond always read as newer,
    and no stale table was ever removed (a review)."""
    report = _cleanup_of_load_through(emulator, ListedToTheSecond())

    assert report.status == "success", report.render()
    assert not report.counters.get("entitiesChangedMeanwhile"), report.render()
    assert "dst" not in {e["name"] for e in objects(emulator, Kind.ENTITY)}


@pytest.mark.parametrize("who_goes", ["the owner", "the other"])
def test_a_job_two_definitions_describe_keeps_its_flows_and_routine_for_the_other(
    client: BlindataClient, emulator: Any, who_goes: str
) -> None:
    """Two definitions reading one job's events (a prod and a dev Airflow with the same DAG
    ids) write its flows and routine under one scope: when one stops describing the job, its
    cleanup removed the flows and the SQL routine the other still describes. They stay, the
    scope held, the routine kept with the reason."""
    load = job_event("etl.load", [SRC], [DST])
    load["job"]["facets"] = builders.sql_facet("INSERT INTO s.dst SELECT id, amount FROM s.src")
    first, second = definition(), definition(uuid=OTHER_DEFINITION)
    history, others_history = History(), History()
    run(client, history, [load, KEEP], first)  # the owner of etl.load's job entity
    next_second(emulator)
    run(client, others_history, [load, KEEP], second)
    next_second(emulator)
    if who_goes == "the owner":
        going, going_history, staying = first, history, "the other"
    else:
        going, going_history, staying = second, others_history, "the owner"
    run(client, going_history, [KEEP], going)

    report = going_history.add(cleanup(going, client, going_history, force=True))

    assert report.status == "success", report.render()
    scopes = {f["scope"] for f in objects(emulator, Kind.FLOW)}
    assert "ol:airflow|etl.load" in scopes, (staying, report.render())
    assert "etl.load" in {r["name"] for r in objects(emulator, Kind.ROUTINE)}, report.render()
    if who_goes == "the owner":
        assert "described by job definition" in report.kept["routine"].examples[0]


def test_a_flow_the_other_definition_still_describes_stays_when_this_one_moves_on(
    client: BlindataClient, emulator: Any
) -> None:
    """The scope of a job two definitions describe is held whole: a flow into ``dst`` that the
    other still describes stayed when this one moved the job to ``dst2`` (a review: judged by
    the job entity's date, which either definition's snapshot moves, it went)."""
    moved = job_event("etl.load", [SRC], [dataset(GONE, "db.s.dst2", ["id"])])
    first, second = definition(), definition(uuid=OTHER_DEFINITION)
    history, others_history = History(), History()
    run(client, history, [LOAD, KEEP], first)
    next_second(emulator)
    run(client, others_history, [LOAD, KEEP], second)  # still writes into dst
    next_second(emulator)
    run(client, history, [moved, KEEP], first)

    report = history.add(cleanup(first, client, history, force=True))

    assert report.status == "success", report.render()
    names = [f["name"] for f in objects(emulator, Kind.FLOW) if "etl.load" in f["scope"]]
    assert any("dst2" in name for name in names) and any(
        name.endswith("s.dst @airflow/etl.load") or " s.dst " in name for name in names
    ), (names, report.render())


def test_a_stewards_check_a_summary_listing_leaves_unlinked_keeps_its_table(
    emulator: Any,
) -> None:
    """A listing of checks that leaves out what they refer to (the contract names a listing's
    fields, not that its items are whole) hid a steward's check of a stale table, which was
    deleted and the check unlinked (a review): the checks of an entity are listed by its uuid,
    taken at the filter's word."""
    job = definition()
    history = History()
    with client_of(emulator, SummaryListings(("physicalEntities", "physicalFields"))) as bd:
        run(bd, history, [LOAD, KEEP], job)
        a_persons_quality_check(bd, emulator)
        next_second(emulator)
        run(bd, history, [KEEP], job)
        report = history.add(cleanup(job, bd, history, force=True))

    assert "dst" in {e["name"] for e in objects(emulator, Kind.ENTITY)}, report.render()
    assert "dst-amount-positive" in report.kept["entity"].examples[0]


def test_a_mark_retired_from_a_summary_listing_keeps_what_the_listing_left_out(
    client: BlindataClient, emulator: Any
) -> None:
    """Never degrade what people put there: the mark is taken off with a PUT of the whole
    entity, and a PUT of the listed summary would blank the description a person wrote."""
    _, other, _, others_history = _both_describe_dst(client)
    dst = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "dst")
    stored = client.api.physical_entities.get(dst["uuid"])
    client.api.physical_entities.update(stored.model_copy(update={"description": "By hand."}))
    next_second(emulator)
    run(client, others_history, [job_event("other.read", [SRC], [])], other)
    with client_of(emulator, SummaryListings()) as summarised:
        moved_on = others_history.add(cleanup(other, summarised, others_history))

    assert moved_on.counters["describedByRetired"] == 1, moved_on.render()
    dst = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "dst")
    assert dst["description"] == "By hand."
    mark = {"name": "openLineageDescribedBy", "value": OTHER_DEFINITION}
    assert mark not in dst["additionalProperties"]


@pytest.mark.parametrize(
    "text", ["Orders, by day.", "Orders by day. " * 30], ids=["description", "documentation"]
)
def test_a_stale_table_with_only_the_jobs_own_text_is_removed(
    client: BlindataClient, emulator: Any, text: str
) -> None:
    """What the job wrote is the job's to remove: only a person's text keeps the table."""
    job = definition()
    history = History()
    documented = dataset(GONE, "db.s.dst", ["id", "amount"])
    documented["facets"].update(documentation_facet(text, producer=None))
    run(client, history, [job_event("etl.load", [SRC], [documented]), KEEP], job)
    dst = client.api.physical_entities.get(uuid_of(emulator, Kind.ENTITY, "dst"))
    written = dst.description or client.api.physical_entities.get_documentation(dst.uuid or "")
    assert written, "the job wrote the text"
    next_second(emulator)
    run(client, history, [KEEP], job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success" and not report.kept, report.render()
    assert "dst" not in {e["name"] for e in objects(emulator, Kind.ENTITY)}


# -- the removal share ----------------------------------------------------------------------------

SMALL_JOBS = [
    job_event(f"etl.small_{i}", [SRC], [dataset(JOBDB, f"db.s.out_{i}", ["a", "b"])])
    for i in range(10)
]
WIDE = job_event("etl.wide", [SRC], [dataset(JOBDB, "db.s.wide", [f"c{i}" for i in range(300)])])


@dataclass(frozen=True)
class ShareCase:
    removed_job: str
    reason: str | None
    """``share_exceeded`` when the cleanup must refuse; None when it removes."""
    removes_at_least: int


SHARE_CASES = [
    ShareCase("etl.small_3", None, 5),
    ShareCase("etl.wide", "share_exceeded", 300),
]


@pytest.mark.parametrize("case", SHARE_CASES, ids=[case.removed_job for case in SHARE_CASES])
def test_the_removal_share_counts_what_is_removed(
    client: BlindataClient, emulator: Any, case: ShareCase
) -> None:
    job = definition()
    history = History()
    events = [*SMALL_JOBS, WIDE]
    run(client, history, events, job)
    history.add(cleanup(job, client, history))
    next_second(emulator)
    run(client, history, [e for e in events if e["job"]["name"] != case.removed_job], job)
    fields_before = len(objects(emulator, Kind.FIELD))

    report = history.add(cleanup(job, client, history))

    assert report.reason == case.reason, report.render()
    assert report.counters["objectsToRemove"] >= case.removes_at_least, report.render()
    assert report.counters["ownedObjects"] >= fields_before  # the fields are weighed too
    removed_fields = fields_before - len(objects(emulator, Kind.FIELD))
    assert removed_fields == (0 if case.reason else report.removed["field"].count)


class ContentOnlyPages(httpx.HTTPTransport):
    """A Blindata whose lists answer ``{"content": [...]}`` alone: no Spring page totals."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or "json" not in response.headers.get("content-type", ""):
            return response
        body = json.loads(response.read())
        if not isinstance(body, dict) or "content" not in body:
            return httpx.Response(response.status_code, headers=response.headers, json=body)
        headers = {"Date": response.headers["Date"]} if "Date" in response.headers else {}
        page = {"content": body["content"]}
        return httpx.Response(response.status_code, headers=headers, json=page)


def test_a_system_holding_a_kept_table_is_kept_by_a_server_that_sends_no_page_totals(
    emulator: Any,
) -> None:
    """Without ``totalElements`` the number of entities a System holds is unknown, not 0."""
    job = definition()
    history = History()
    with client_of(emulator, ContentOnlyPages()) as client:
        run(client, history, [LOAD, KEEP], job)
        history.add(cleanup(job, client, history))
        crawled_field(client, emulator)
        next_second(emulator)
        run(client, history, [KEEP], job)
        report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert {"dst", "src", "kept"} <= {e["name"] for e in objects(emulator, Kind.ENTITY)}
    kept = report.kept.get("system")
    assert kept is not None and "holds 1 entity" in kept.examples[0], report.render()
    assert report.counters["systemsKeptReferenced"] == 1
    assert not report.counters.get("systemsKeptNotEmpty")


# -- a column dropped from the schema of a table the job created ---------------------------------


def column_flow_on_amount(client: BlindataClient, emulator: Any) -> str:
    """A person's column flow ends on ``dst.amount``: deleting the field would take it along."""
    (amount,) = [f["uuid"] for f in objects(emulator, Kind.FIELD) if f["name"] == "amount"]
    (src_id,) = [
        f["uuid"]
        for f in objects(emulator, Kind.FIELD)
        if f["name"] == "id"
        and f["physicalEntity"]["uuid"] == uuid_of(emulator, Kind.ENTITY, "src")
    ]
    client.api.dataflows.upload(
        [
            DataFlow(
                name="a steward's column flow",
                from_physical_entity=Ref(uuid=uuid_of(emulator, Kind.ENTITY, "src")),
                from_physical_field=Ref(uuid=src_id),
                to_physical_entity=Ref(uuid=uuid_of(emulator, Kind.ENTITY, "dst")),
                to_physical_field=Ref(uuid=amount),
            )
        ]
    )
    return uuid_of(emulator, Kind.FLOW, "a steward's column flow")


def a_property_on_amount(client: BlindataClient, emulator: Any) -> str:
    (amount,) = [f["uuid"] for f in objects(emulator, Kind.FIELD) if f["name"] == "amount"]
    stored = client.api.physical_fields.get(amount)
    added = [*(stored.additional_properties or ()), AdditionalProperty(name="pii", value="yes")]
    client.api.physical_fields.update(stored.model_copy(update={"additional_properties": added}))
    return str(amount)


def amount_described_by_a_person(client: BlindataClient, emulator: Any) -> str:
    (amount,) = [f["uuid"] for f in objects(emulator, Kind.FIELD) if f["name"] == "amount"]
    stored = client.api.physical_fields.get(amount)
    client.api.physical_fields.update(stored.model_copy(update={"description": "In euros"}))
    return str(amount)


def amount_retyped_by_a_crawler(client: BlindataClient, emulator: Any) -> str:
    (amount,) = [f["uuid"] for f in objects(emulator, Kind.FIELD) if f["name"] == "amount"]
    stored = client.api.physical_fields.get(amount)
    client.api.physical_fields.update(stored.model_copy(update={"type": "NUMBER(38,2)"}))
    return str(amount)


@dataclass(frozen=True)
class ColumnCase:
    name: str
    described: list[str] | None
    """The fields of ``dst`` the second snapshot describes (None: no schema facet at all)."""
    plant: Callable[[BlindataClient, Any], str | None]
    removed: set[str]
    kept: str | None
    """In the reason the report gives for the field it keeps."""


COLUMN_CASES = [
    ColumnCase("a dropped column goes", ["id"], nothing, {"s.dst.amount"}, None),
    ColumnCase("a crawler's field stays", ["id"], crawled_field, {"s.dst.amount"}, None),
    ColumnCase(
        "a field a person's flow ends on stays", ["id"], column_flow_on_amount, set(), "no scope"
    ),
    ColumnCase("no schema described proves nothing", None, nothing, set(), None),
    ColumnCase(
        "a field a person described stays",
        ["id"],
        amount_described_by_a_person,
        set(),
        "a person wrote its description",
    ),
    ColumnCase(
        "a field a crawler retyped stays",
        ["id"],
        amount_retyped_by_a_crawler,
        set(),
        "a crawler or a person retyped it",
    ),
    ColumnCase(
        "a field a person added a property to stays",
        ["id"],
        a_property_on_amount,
        set(),
        "a person or a crawler added 1 property (pii)",
    ),
    ColumnCase(
        "a field of a table another definition describes stays",
        ["id"],
        described_by_another_definition,
        set(),
        f"still described by job definition {OTHER_DEFINITION}",
    ),
]


@pytest.mark.parametrize("case", COLUMN_CASES, ids=[case.name for case in COLUMN_CASES])
def test_fields_the_job_created_and_no_longer_describes_are_removed_never_a_crawlers(
    client: BlindataClient, emulator: Any, case: ColumnCase
) -> None:
    """Seed 000: every run uploads again the fields it describes, which is how the job tells
    what is still described; "Fields that a crawler created are never removed" by the job. A
    column dropped from the schema facet of a table the job created goes at the next cleanup; a
    field someone else added, or that someone else's flow ends on, stays."""
    job = definition()
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    planted = case.plant(client, emulator)
    next_second(emulator)
    dst = (
        dataset(GONE, "db.s.dst", case.described)
        if case.described is not None
        else builders.dataset("db.s.dst", GONE)
    )
    events = [job_event("etl.load", [SRC], [dst]), KEEP]
    run(client, history, events, job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    fields = {f["name"] for f in objects(emulator, Kind.FIELD)}
    removed = report.removed.get("field")
    assert set(removed.examples if removed else ()) == case.removed, report.render()
    assert ("amount" in fields) == (not case.removed)
    assert "id" in fields and "dst" in {e["name"] for e in objects(emulator, Kind.ENTITY)}
    if planted is not None:
        everything = {o["uuid"] for kind in Kind.ALL for o in objects(emulator, kind)}
        assert planted in everything
    kept = report.kept.get("field")
    if case.kept:
        assert kept is not None and kept.examples[0].startswith("s.dst.amount: "), report.render()
        assert case.kept in kept.examples[0]
    else:
        assert kept is None, report.render()
    next_second(emulator)
    run(client, history, events, job)  # the same events again: nothing more to remove
    again = history.add(cleanup(job, client, history, force=True))
    assert again.status == "success" and not again.removed, again.render()


@pytest.mark.parametrize(
    "plant",
    [amount_described_by_a_person, amount_retyped_by_a_crawler],
    ids=["described", "retyped"],
)
def test_a_table_whose_column_a_person_described_stays_when_the_job_no_longer_describes_it(
    client: BlindataClient, emulator: Any, plant: Callable[[BlindataClient, Any], str]
) -> None:
    """Seed 000: never degrade what people put there. A table the job created and no longer
    describes (dropped, or its job gone) was removed with its fields, a steward's description of
    one of them too; only a column going alone was kept for it (found by a probe of removal)."""
    job = definition()
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    plant(client, emulator)  # or a crawler gave the column the store's type
    next_second(emulator)
    run(client, history, [KEEP], job)  # etl.load and its table are no longer described

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert "dst" in {e["name"] for e in objects(emulator, Kind.ENTITY)}
    kept = report.kept.get("entity")
    assert kept is not None and any(
        "a person or a crawler wrote on 1 field (amount)" in example for example in kept.examples
    ), report.render()


def test_a_readers_partial_schema_removes_no_column_the_writer_still_writes(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 000, "Every run uploads again the entities, fields ... it describes": a reader that
    lists only some columns of the table (dbt without its catalog lists the documented ones),
    after the job that writes it, made the writer's other columns undescribed, and the cleanup
    removed a column the job had created and still writes."""
    job = definition()
    history = History()
    run(client, history, [LOAD, KEEP], job)
    history.add(cleanup(job, client, history))
    next_second(emulator)
    reader = run_event(
        "dbt.report",
        run_id="019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a12",
        producer="https://example.com/dbt",
        time="2026-11-29T11:00:00.000Z",  # after the writer's run
        inputs=[dataset(GONE, "db.s.dst", ["id"])],
    )
    run(client, history, [LOAD, KEEP, reader], job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert not report.removed.get("field"), report.render()
    assert {"id", "amount"} <= {f["name"] for f in objects(emulator, Kind.FIELD)}


class UnnamedFlowsOfOthers(httpx.HTTPTransport):
    """A Blindata whose flows without a scope (a person's, or the analysis of a statement) have
    no ``name``: the contract requires a name of no flow, only keys uploads by (scope, name)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or request.url.path != "/api/v1/dataflows":
            return response
        body = json.loads(response.read())
        for flow in body["content"]:
            if not flow.get("scope"):
                flow.pop("name", None)
        headers = {"Date": response.headers["Date"]} if "Date" in response.headers else {}
        return httpx.Response(response.status_code, headers=headers, json=body)


def test_a_flow_of_others_without_a_name_keeps_the_table_it_ends_on(emulator: Any) -> None:
    job = definition()
    history = History()
    with client_of(emulator, UnnamedFlowsOfOthers()) as client:
        run(client, history, [LOAD, KEEP], job)
        history.add(cleanup(job, client, history))
        flow_on_dst(None)(client, emulator)
        next_second(emulator)
        run(client, history, [KEEP], job)
        report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    assert "dst" in {e["name"] for e in objects(emulator, Kind.ENTITY)}
    kept = report.kept.get("entity")
    assert kept is not None and "no scope" in kept.examples[0], report.render()
