"""Seed 000, "Namespace to System", step 5: "Otherwise the dataset is reported as
UNMAPPED_NAMESPACE and nothing is catalogued for it."

A dataset may be named only inside a lineage facet (``lineage``, ``columnLineage``): a producer
declares where an output comes from without listing the source among its inputs, and a
DatasetEvent's lineage names its sources only there. The catalog pass never met such a dataset,
so when its namespace maps to no System (or it has no name) only its flow's ``DANGLING_FLOW``
was reported, whose hint ("Fix the dataset gaps above") pointed at a gap that did not exist. Its
own gap is now reported, once, as for any dataset of the inputs and outputs.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from tests.builders import (
    PG,
    column_lineage_facet,
    dataset,
    dataset_event,
    definition,
    input_field,
    lineage_facet,
    policy,
    run_event,
)

DEFINITION = definition(policy("postgres://*", nameTemplate="{host}"))
MYSQL = "mysql://shop:3306"


def _job_with(facets: dict[str, Any]) -> list[dict[str, Any]]:
    return [run_event(outputs=[dataset("analytics.sales.totals", facets=facets)])]


CASES = [
    pytest.param(
        _job_with(lineage_facet((MYSQL, "shop.orders"))),
        GapCode.UNMAPPED_NAMESPACE,
        f"{MYSQL}/shop.orders",
        id="lineage facet, unmapped namespace",
    ),
    pytest.param(
        _job_with(column_lineage_facet({"total": [input_field("shop.orders", "amount", MYSQL)]})),
        GapCode.UNMAPPED_NAMESPACE,
        f"{MYSQL}/shop.orders",
        id="columnLineage, unmapped namespace",
    ),
    pytest.param(
        [dataset_event("analytics.sales.totals", facets=lineage_facet((MYSQL, "shop.orders")))],
        GapCode.UNMAPPED_NAMESPACE,
        f"{MYSQL}/shop.orders",
        id="a DatasetEvent's lineage, unmapped namespace",
    ),
    pytest.param(
        _job_with(lineage_facet((PG, "analytics.raw."))),
        GapCode.EMPTY_DATASET_NAME,
        f"{PG}/analytics.raw.",
        id="lineage facet, a name that gives no entity",
    ),
]


@pytest.mark.parametrize(("events", "code", "example"), CASES)
def test_the_dataset_is_reported_as_unmapped_namespace_when_named_only_in_a_lineage_facet(
    events: list[dict[str, Any]], code: GapCode, example: str
) -> None:
    plan = build(events, DEFINITION)
    gap = plan.report.gaps[code]
    assert (gap.count, gap.examples) == (1, [example])
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert plan.flows == []


def test_a_dataset_named_in_the_facets_of_two_jobs_is_reported_once() -> None:
    """Like a dataset of the inputs of two jobs: one dataset, one gap; each dropped flow its own."""
    events = [
        run_event(
            job,
            run_id=run_id,
            outputs=[
                dataset(f"analytics.sales.{job}", facets=lineage_facet((MYSQL, "shop.orders")))
            ],
        )
        for job, run_id in (
            ("a", "0190b1c2-0000-7000-8000-00000000000a"),
            ("b", "0190b1c2-0000-7000-8000-00000000000b"),
        )
    ]
    plan = build(events, DEFINITION)
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 1
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 2


def test_a_dataset_of_the_inputs_is_still_reported_by_the_catalog_pass_alone() -> None:
    """The gap of a dataset the catalog pass met is not counted again by the flows to it."""
    event = run_event(
        inputs=[dataset("shop.orders", MYSQL)],
        outputs=[
            dataset(
                "analytics.sales.totals",
                facets=column_lineage_facet({"total": [input_field("shop.orders", "a", MYSQL)]}),
            )
        ],
    )
    plan = build([event], DEFINITION)
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 1


def test_a_dataset_named_in_a_lineage_facet_in_an_ignored_namespace_is_counted_as_ignored() -> None:
    """Seed 000: "Datasets that match ignoredNamespaces are accepted and counted, not
    catalogued"; the flow to it is dropped without a gap (``flowEndsIgnored``)."""
    plan = build(_job_with(lineage_facet(("elasticsearch://es:9200", "logs"))), DEFINITION)
    gap = plan.report.gaps[GapCode.IGNORED_NAMESPACE]
    assert (gap.count, gap.examples) == (1, ["elasticsearch://es:9200/logs"])
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0
    assert plan.report.counters["flowEndsIgnored"] == 1


def test_a_dataset_named_only_in_a_lineage_facet_is_described_as_the_dataset_it_is() -> None:
    """docs/mapping-reference.md, entity properties: "the dataset itself | openLineageDataset".
    The entity of a dataset that only a columnLineage facet names (a temporary table Airflow's
    SQL parser reports, a source the inputs leave out) was planned bare, with no property to
    tell a steward which dataset it is."""
    facets = column_lineage_facet({"total": [input_field("analytics.public.tmp_o", "amount")]})
    plan = build(_job_with(facets), DEFINITION)
    (bare,) = [e for e in plan.entities if e.key.name == "tmp_o"]
    assert bare.properties == (("openLineageDataset", f"{PG}/analytics.public.tmp_o"),)


@pytest.mark.parametrize("name", ["exports@2026/orders", "raw/token=eth/transfers"])
def test_a_dataset_named_only_in_a_lineage_facet_is_shown_as_the_catalog_shows_it(
    name: str,
) -> None:
    """The entity of a dataset only a columnLineage facet names had its ``openLineageDataset``
    read as free text whole (``s3://***@2026/orders``, ``…/token=***``) where the catalog pass
    shows the same dataset as sent: the property changed with the run that described it (a
    review)."""
    lake = "s3://lake"
    facets = column_lineage_facet({"total": [input_field(name, "amount", lake)]})
    plan = build(_job_with(facets), definition(policy("*")))
    (bare,) = [e for e in plan.entities if e.key.system == "lake"]
    assert bare.properties == (("openLineageDataset", f"{lake}/{name}"),)
    assert bare.source == f"dataset {lake}/{name}"
