"""Seed 000, "Two protections keep people's work": a person's edit of the description of an
entity the job created is kept, as an edit of its documentation is (issue 18 item 8).

The job stamps the hash of the description it wrote (``openLineageDescriptionHash``); a stored
description that no longer hashes to it was edited in Blindata, and is kept and counted
(``descriptionsKeptUserEdited``), unless the System's policy says ``replaceUserDocumentation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.plan import CatalogPlan, EntityKey, PlannedEntity, PlannedSystem
from airflow_blindata.sync import fetch_known_systems, snapshot
from tests.sync.helpers import DEFINITION_UUID, definition, objects

pytestmark = pytest.mark.integration

ORDERS = EntityKey(system="docs-db", schema="sales", name="orders")


def described_plan(
    client: BlindataClient, description: str, *, replace_user_documentation: bool = False
) -> CatalogPlan:
    """One System this definition creates, holding one entity with a short description."""
    known = {system.name: system for system in fetch_known_systems(client)}
    existing = known.get("docs-db")
    return CatalogPlan(
        definition_uuid=DEFINITION_UUID,
        systems=[
            PlannedSystem(
                name="docs-db",
                uuid=existing.uuid if existing else None,
                origin="created",
                create=existing is None,
                subtype="DATABASE",
                stamp=(("openLineageOwner", DEFINITION_UUID),),
                entity_creation=True,
                replace_user_documentation=replace_user_documentation,
            )
        ],
        entities=[
            PlannedEntity(key=ORDERS, may_create=True, description=description, source="test")
        ],
    )


def stored_orders(emulator: Any) -> dict[str, Any]:
    (found,) = [e for e in objects(emulator, Kind.ENTITY) if e["name"] == "orders"]
    return found


@dataclass(frozen=True)
class Case:
    name: str
    person_writes: str | None
    """What a steward writes in Blindata between the two snapshots (None: nothing)."""
    replace_user_documentation: bool
    expected: str
    kept: int


CASES = [
    Case(
        "a person's edit is kept",
        "Orders, as the steward explains them.",
        False,
        "Orders, as the steward explains them.",
        1,
    ),
    Case("the job's own text follows the events", None, False, "Orders v2.", 0),
    Case("replaceUserDocumentation lets the job overwrite", "Steward text.", True, "Orders v2.", 0),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_user_edits_of_a_job_created_entitys_description_are_kept(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    job = definition()
    first = snapshot(described_plan(client, "Orders."), client, job)
    assert first.status == "success", first.render()
    if case.person_writes is not None:
        entity = client.api.physical_entities.get(stored_orders(emulator)["uuid"])
        client.api.physical_entities.update(
            entity.model_copy(update={"description": case.person_writes})
        )

    for _ in range(2):  # and the next snapshot still keeps it
        plan = described_plan(
            client, "Orders v2.", replace_user_documentation=case.replace_user_documentation
        )
        report = snapshot(plan, client, job)
        assert report.status == "success", report.render()
        assert stored_orders(emulator)["description"] == case.expected
        assert report.counters.get("descriptionsKeptUserEdited", 0) == case.kept
