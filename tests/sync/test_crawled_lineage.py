"""Seed 001, ``FIELD_NOT_CATALOGUED``: "A column flow names a field that is not in the catalog. It
is checked on Systems created by OpenLineage."

On the other Systems (stamped by a crawler, or reached by a ``namespaceMappings`` entry) the
fields are the crawler's, and the events carry ``columnLineage`` without a ``schema`` facet: the
snapshot looks the fields up in Blindata, in bulk (one listing per entity, never one request per
field), publishes the column flow when both fields exist, and reports only what is truly absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from tests.builders import dataset, run_event
from tests.sync.helpers import crawl, definition, objects, plan_for

pytestmark = pytest.mark.integration

NAMESPACE = "postgres://crawled:5432"
DIRECT = [{"type": "DIRECT", "subtype": "IDENTITY"}]


def lineage_event() -> dict[str, Any]:
    """A job reading ``s.orders`` into ``s.summary`` with column lineage and no schema facet:
    ``summary.order_id`` and ``summary.amount`` exist in the crawled catalog, ``summary.ghost``
    does not."""

    def field_input(name: str) -> dict[str, Any]:
        return {
            "namespace": NAMESPACE,
            "name": "db.s.orders",
            "field": name,
            "transformations": DIRECT,
        }

    column_lineage = {
        "fields": {
            "order_id": {"inputFields": [field_input("id")]},
            "amount": {"inputFields": [field_input("total")]},
            "ghost": {"inputFields": [field_input("id")]},
        }
    }
    return run_event(
        "summarise",
        namespace="etl",
        run_id="019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a11",
        producer="https://example.com/etl",
        inputs=[dataset("db.s.orders", NAMESPACE)],
        outputs=[dataset("db.s.summary", NAMESPACE, facets={"columnLineage": column_lineage})],
    )


CRAWLED_TABLES = {
    ("s", "orders"): {"id": "int8", "total": "numeric"},
    ("s", "summary"): {"order_id": "int8", "amount": "numeric"},
}


@dataclass(frozen=True)
class Case:
    system: str
    """How the namespace reaches its System."""
    crawled: bool
    options: dict[str, Any]
    published: set[tuple[str, str]]
    absent: int
    """``FIELD_NOT_CATALOGUED`` gaps expected."""


MAPPING = {"namespaceMappings": [{"pattern": NAMESPACE, "system": {"name": "warehouse"}}]}
CASES = [
    Case(
        "stamped openLineageNamespace by a crawler",
        crawled=True,
        options={"systemPolicies": []},
        published={("orders.id", "summary.order_id"), ("orders.total", "summary.amount")},
        absent=1,
    ),
    Case(
        "mapped to an existing System",
        crawled=True,
        options=MAPPING,
        published={("orders.id", "summary.order_id"), ("orders.total", "summary.amount")},
        absent=1,
    ),
    Case(
        "mapped to an existing System with entityCreation allowed",
        crawled=True,
        options={
            **MAPPING,
            "systemPolicies": [{"pattern": NAMESPACE, "entityCreation": True}],
        },
        published={("orders.id", "summary.order_id"), ("orders.total", "summary.amount")},
        absent=1,
    ),
    Case(
        "created by OpenLineage (checked without Blindata: no schema facet, no field)",
        crawled=False,
        options={
            "systemPolicies": [
                {"pattern": "postgres://*", "creation": "IF_MISSING", "nameTemplate": "{host}"}
            ]
        },
        published=set(),
        absent=3,
    ),
]


def column_flows(emulator: Any) -> set[tuple[str, str]]:
    entities = {e["uuid"]: e["name"] for e in objects(emulator, Kind.ENTITY)}
    fields = {f["uuid"]: f for f in objects(emulator, Kind.FIELD)}

    def label(flow: dict[str, Any], side: str) -> str:
        found = fields[flow[f"{side}PhysicalField"]["uuid"]]
        return f"{entities[found['physicalEntity']['uuid']]}.{found['name']}"

    return {
        (label(flow, "from"), label(flow, "to"))
        for flow in objects(emulator, Kind.FLOW)
        if flow.get("fromPhysicalField")
    }


@pytest.mark.parametrize("case", CASES, ids=[case.system for case in CASES])
def test_field_not_catalogued_is_checked_on_systems_created_by_openlineage(
    client: BlindataClient, emulator: Any, case: Case
) -> None:
    if case.crawled:
        properties = ((NAMESPACE_PROPERTY, NAMESPACE),) if "stamped" in case.system else ()
        crawl(client, "warehouse", CRAWLED_TABLES, properties=properties)
    job = definition(**case.options)
    plan = plan_for(client, [lineage_event()], job)
    since = emulator.emulator.requests.entries()[-1]["id"]

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert column_flows(emulator) == case.published
    assert report.gap_count(GapCode.FIELD_NOT_CATALOGUED) == case.absent, report.render()
    field_reads = [
        r
        for r in emulator.emulator.requests.entries(since)
        if r["method"] == "GET" and r["path"].endswith("/physical_fields")
    ]
    assert len(field_reads) <= 2  # one listing per entity, not one request per field
    if case.crawled:
        assert report.gaps[GapCode.FIELD_NOT_CATALOGUED].examples == ["warehouse:s.summary.ghost"]
        assert report.counters.get("entitiesNotCatalogued", 0) == 0


def test_a_crawled_field_a_partial_schema_facet_leaves_out_still_ends_a_column_flow(
    client: BlindataClient, emulator: Any
) -> None:
    """Another run described ``s.orders`` with a schema facet of ``id`` alone (an Airflow task
    writing one partition, say): its other crawled field ``total`` was taken for absent, and
    the column flow from it dropped as ``FIELD_NOT_CATALOGUED`` (a probe of warehouses)."""
    crawl(client, "warehouse", CRAWLED_TABLES, properties=((NAMESPACE_PROPERTY, NAMESPACE),))
    partial = run_event(
        "load_orders",
        namespace="etl",
        run_id="019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a22",
        outputs=[
            dataset("db.s.orders", NAMESPACE, facets={"schema": {"fields": [{"name": "id"}]}})
        ],
    )
    job = definition(systemPolicies=[])
    report = snapshot(plan_for(client, [partial, lineage_event()], job), client, job)

    assert report.status == "success", report.render()
    assert ("orders.total", "summary.amount") in column_flows(emulator)
    assert report.gaps[GapCode.FIELD_NOT_CATALOGUED].examples == ["warehouse:s.summary.ghost"]


def test_a_field_the_job_wrote_and_no_longer_describes_ends_none_of_its_flows(
    client: BlindataClient, emulator: Any
) -> None:
    """A field the job created (stamped with its owner) that the next run's schema facet leaves
    out goes with the cleanup: the job's own column flow onto it is not published, as on a
    System OpenLineage created (a review: it was published, and the field kept for ever)."""

    def made(run_id: str, fields: list[str]) -> dict[str, Any]:
        lineage = {
            "fields": {
                "b": {
                    "inputFields": [
                        {
                            "namespace": NAMESPACE,
                            "name": "db.s.orders",
                            "field": "total",
                            "transformations": DIRECT,
                        }
                    ]
                }
            }
        }
        schema = {"fields": [{"name": name, "type": "int"} for name in fields]}
        return run_event(
            "make_newt",
            namespace="etl",
            run_id=run_id,
            inputs=[dataset("db.s.orders", NAMESPACE)],
            outputs=[
                dataset("db.s.newt", NAMESPACE, facets={"schema": schema, "columnLineage": lineage})
            ],
        )

    crawl(client, "warehouse", CRAWLED_TABLES, properties=((NAMESPACE_PROPERTY, NAMESPACE),))
    job = definition(systemPolicies=[{"pattern": NAMESPACE, "entityCreation": True}])
    snapshot(
        plan_for(client, [made("019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a31", ["a", "b"])], job),
        client,
        job,
    )
    assert ("orders.total", "newt.b") in column_flows(emulator)
    second = snapshot(
        plan_for(client, [made("019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a32", ["a"])], job), client, job
    )
    assert second.gaps[GapCode.FIELD_NOT_CATALOGUED].examples == ["warehouse:s.newt.b"]
