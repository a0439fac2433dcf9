"""Seed 001 lineage rules, table by table, each test named after the sentence it checks:

* "A DatasetEvent with a lineage facet gives table flows between datasets, with no job" — and when
  a job writes the dataset, the set-aside facet is counted, never dropped silently;
* "DANGLING_FLOW: A flow had an end that could not be resolved and was dropped" — only for flows
  that existed;
* "Only direct transformations make column flows".
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.config import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan

UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
PG = "postgres://warehouse:5432"


def definition(**options: Any) -> JobDefinition:
    return JobDefinition.from_dict(
        {
            "uuid": UUID,
            "systemPolicies": [{"pattern": "postgres://*", "creation": "IF_MISSING"}],
            **options,
        }
    )


def ds(name: str, namespace: str = PG, **facets: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "facets": facets}


def run(
    job: str,
    run_id: str,
    *,
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    second: int = 0,
) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-29T10:00:{second:02d}.000Z",
        "producer": "https://example.com/etl",
        "run": {"runId": run_id, "facets": {}},
        "job": {"namespace": "etl", "name": job, "facets": {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }


def dataset_event(name: str, facets: dict[str, Any], second: int = 59) -> dict[str, Any]:
    return {
        "eventTime": f"2026-11-29T10:00:{second:02d}.000Z",
        "producer": "https://example.com/catalog",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": PG, "name": name, "facets": facets},
    }


def lineage(source: str) -> dict[str, Any]:
    """A dataset-level lineage facet: ``source`` feeds the dataset."""
    return {"lineage": {"inputs": [{"namespace": PG, "name": source, "type": "DATASET"}]}}


def table_pairs(plan: CatalogPlan) -> set[tuple[str, str, str]]:
    return {
        (f.source.entity.name, f.target.entity.name, f.evidence)
        for f in plan.flows
        if f.kind == "table"
    }


# -- "A DatasetEvent with a lineage facet gives table flows between datasets, with no job" -------


@pytest.mark.parametrize(
    ("events", "flows", "set_aside"),
    [
        pytest.param(
            [dataset_event("db.s.report", lineage("db.s.raw"))],
            {("raw", "report", "dataset_event")},
            0,
            id="no-job-writes-the-dataset",
        ),
        pytest.param(
            [
                run("load", "r1", inputs=[ds("db.s.staging")], outputs=[ds("db.s.report")]),
                dataset_event("db.s.report", lineage("db.s.raw")),
            ],
            {("staging", "report", "io")},
            1,
            id="the-latest-run-of-a-job-writes-it",
        ),
        pytest.param(
            [
                run("load", "r1", outputs=[ds("db.s.report")], second=1),
                run("load", "r2", inputs=[ds("db.s.x")], outputs=[ds("db.s.other")], second=2),
                dataset_event("db.s.report", lineage("db.s.raw")),
            ],
            {("x", "other", "io")},
            1,
            id="an-older-run-of-a-job-wrote-it",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    inputs=[ds("db.s.raw")],
                    outputs=[ds("db.s.report", **lineage("db.s.raw"))],
                )
            ],
            {("raw", "report", "declared")},
            0,
            id="the-job-sent-the-facet-on-its-own-output",
        ),
    ],
)
def test_a_dataset_event_lineage_facet_is_set_aside_when_a_job_writes_the_dataset_and_counted(
    events: list[dict[str, Any]], flows: set[tuple[str, str, str]], set_aside: int
) -> None:
    plan = build(events, definition())
    assert table_pairs(plan) == flows
    assert plan.report.counters.get("datasetLineageSetAside", 0) == set_aside
