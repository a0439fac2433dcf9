"""Issue 18, item 4: an empty dataset name is a gap, not an upload Blindata refuses on every run.

A dataset ``{"namespace": "postgres://db:5432", "name": ""}`` is a valid event, but it names no
entity: planned as an entity with an empty name, it was uploaded (and refused) at every snapshot.
It is now reported as ``EMPTY_DATASET_NAME``; flows to it are dropped with ``DANGLING_FLOW``.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import PG, dataset, definition, policy

DEFINITION = definition(policy("*", nameTemplate="{host}"))


def run_event(*outputs: dict[str, Any]) -> dict[str, Any]:
    return builders.run_event(inputs=[dataset("analytics.raw.orders")], outputs=outputs)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        (PG, ""),
        (PG, "   "),
        (PG, "analytics.sales."),  # the postgres profile's entity part is empty
        ("s3://lake", ""),
        ("kafka://broker:9092", ""),
    ],
)
def test_a_dataset_whose_name_gives_no_entity_name_is_a_gap_and_never_an_entity(
    namespace: str, name: str
) -> None:
    schema = {"fields": [{"name": "id", "type": "int"}]}
    plan = build(
        [
            run_event(
                {"namespace": namespace, "name": name, "facets": {"schema": schema}},
                {"namespace": PG, "name": "analytics.sales.totals"},
            )
        ],
        DEFINITION,
    )
    gap = plan.report.gaps[GapCode.EMPTY_DATASET_NAME]
    assert (gap.count, gap.examples) == (1, [f"{namespace}/{name}"])
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert all(e.key.name.strip() for e in plan.entities)
    assert all(f.entity.name.strip() for f in plan.fields)
    assert {e.key.name for e in plan.entities} == {"orders", "totals", "etl.load"}
    assert [(f.source.entity.name, f.target.entity.name) for f in plan.flows] == [
        ("orders", "totals")
    ]


def test_an_empty_name_in_a_lineage_facet_drops_that_flow_and_keeps_the_others() -> None:
    output = {
        "namespace": PG,
        "name": "analytics.sales.totals",
        "facets": {
            "columnLineage": {
                "fields": {
                    "total": {
                        "inputFields": [
                            {"namespace": PG, "name": "", "field": "x"},
                            {"namespace": PG, "name": "analytics.raw.orders", "field": "amount"},
                        ]
                    }
                }
            }
        },
    }
    plan = build([run_event(output)], DEFINITION)
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert all(e.key.name.strip() for e in plan.entities)
    assert {(f.source.entity.name, f.target.entity.name) for f in plan.flows} == {
        ("orders", "totals")
    }


def test_an_assertion_on_a_dataset_with_no_name_makes_no_check() -> None:
    assertions = {"assertions": [{"assertion": "not_null", "success": True, "column": "id"}]}
    event = run_event({"namespace": PG, "name": "analytics.sales.totals"})
    event["inputs"] = [
        {"namespace": PG, "name": "", "inputFacets": {"dataQualityAssertions": assertions}}
    ]
    plan = build([event], DEFINITION)
    assert plan.quality.checks == []
    assert plan.report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 1


@pytest.mark.parametrize(
    ("fields", "planned"),
    [
        # a blank field name at the top: the field is left out, the others are kept
        ([{"name": ""}, {"name": "id", "type": "int"}], ["id"]),
        ([{"name": "  ", "type": "string"}, {"name": "id"}], ["id"]),
        # a struct with no name: its nested fields have no name to be dotted under either
        ([{"name": "", "fields": [{"name": "day"}]}, {"name": "id"}], ["id"]),
        # a nested field with no name: only it is left out
        ([{"name": "window", "fields": [{"name": ""}, {"name": "day"}]}], ["window", "window.day"]),
    ],
)
def test_a_schema_field_with_no_name_is_a_gap_and_never_a_field(
    fields: list[dict[str, Any]], planned: list[str]
) -> None:
    """The schema facet's field ``name`` is any string, an empty one too; Blindata refuses a
    field without a name, at every snapshot. The field (and what is nested in it) is left out
    and reported as ``EMPTY_FIELD_NAME``; the entity and its other fields are kept."""
    output = dataset("analytics.sales.totals", facets={"schema": {"fields": fields}})
    plan = build([run_event(output)], DEFINITION)
    assert sorted(f.name for f in plan.fields if f.entity.name == "totals") == sorted(planned)
    gap = plan.report.gaps[GapCode.EMPTY_FIELD_NAME]
    assert gap.count == 1
    assert gap.examples[0].startswith(f"{PG}/analytics.sales.totals")
