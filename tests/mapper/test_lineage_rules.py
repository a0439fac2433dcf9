"""Seed 001 lineage rules, table by table, each test named after the sentence it checks:

* "A DatasetEvent with a lineage facet gives table flows between datasets, with no job" — also
  when a job writes the dataset (different evidence, published beside the job's, and counted);
* "DANGLING_FLOW: A flow had an end that could not be resolved and was dropped" — only for flows
  that existed;
* "Only direct transformations make column flows".
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import at, policy, run_event

PG = "postgres://warehouse:5432"
UNMAPPED = "mysql://nowhere:3306"
SHOUTED = "ELASTICSEARCH://es:9200"
"""An ignored namespace (``elasticsearch://*``) as a producer may spell it."""


def definition(**options: Any) -> JobDefinition:
    return builders.definition(policy("postgres://*"), **options)


def ds(name: str, namespace: str = PG, **facets: Any) -> dict[str, Any]:
    return builders.dataset(name, namespace, facets=facets)


def run(job: str, run_id: str, *, second: int = 0, **options: Any) -> dict[str, Any]:
    """A completed run of ``job`` in the ``etl`` namespace, ``second`` seconds in."""
    return run_event(job, namespace="etl", run_id=run_id, time=at(second), **options)


def dataset_event(
    name: str, facets: dict[str, Any], second: int = 59, namespace: str = PG
) -> dict[str, Any]:
    return builders.dataset_event(
        name, namespace, facets=facets, time=at(second), producer="https://example.com/catalog"
    )


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
    ("events", "flows", "beside"),
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
            {("staging", "report", "io"), ("raw", "report", "dataset_event")},
            1,
            id="the-latest-run-of-a-job-writes-it",
        ),
        pytest.param(
            [
                run("load", "r1", outputs=[ds("db.s.report")], second=1),
                run("load", "r2", inputs=[ds("db.s.x")], outputs=[ds("db.s.other")], second=2),
                dataset_event("db.s.report", lineage("db.s.raw")),
            ],
            {("x", "other", "io"), ("raw", "report", "dataset_event")},
            1,
            id="an-older-run-of-a-job-wrote-it",
        ),
        pytest.param(
            [
                dataset_event("db.s.report", lineage("db.s.raw"), second=0),
                run(
                    "load",
                    "r1",
                    inputs=[ds("db.s.staging")],
                    outputs=[ds("db.s.report", **lineage("db.s.staging"))],
                    second=30,
                ),
            ],
            {("staging", "report", "declared"), ("raw", "report", "dataset_event")},
            1,
            id="a-later-facet-the-job-sent-on-its-output-replaces-nothing",
        ),
        pytest.param(
            [
                run("load", "r1", inputs=[ds("db.s.raw")], outputs=[ds("db.s.report")]),
                dataset_event("db.s.report", lineage("db.s.raw")),
            ],
            {("raw", "report", "io"), ("raw", "report", "dataset_event")},
            1,
            id="the-same-pair-from-both-two-flows-two-scopes",
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
        pytest.param(
            [
                run("load", "r1", inputs=[ds("db.s.staging")], outputs=[ds("db.s.report")]),
                dataset_event("db.s.report", lineage("db.s.raw"), second=30),
                dataset_event("db.s.report", {"lineage": {"_deleted": True}}, second=40),
            ],
            {("staging", "report", "io")},
            0,
            id="a-later-dataset-event-deletes-the-facet",
        ),
    ],
)
def test_a_dataset_event_lineage_is_published_even_when_a_job_writes_the_dataset(
    events: list[dict[str, Any]], flows: set[tuple[str, str, str]], beside: int
) -> None:
    """Seed 001: "A DatasetEvent with a lineage facet gives table flows between datasets, with no
    job." The job's flows and the dataset's own lineage are different evidence (issue 37): the
    dataset's flows are published in its own scope beside the job's, never set aside, and a
    dataset that a job writes too is counted (``datasetLineageBesideJobs``). A lineage facet the
    job sent later on its output is the job's declared lineage and replaces nothing."""
    plan = build(events, definition())
    assert table_pairs(plan) == flows
    assert plan.report.counters.get("datasetLineageBesideJobs", 0) == beside
    assert "datasetLineageSetAside" not in plan.report.counters
    for flow in plan.flows:
        if flow.evidence == "dataset_event":
            assert flow.scope == f"ol:dataset:{PG}|db.s.report"
            assert "@" not in flow.name
        else:
            assert flow.scope == "ol:etl|load" and flow.name.endswith(" @etl/load")


# -- "DANGLING_FLOW: A flow had an end that could not be resolved and was dropped" ---------------


def job_entry(name: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """A lineage job facet whose one entry is the job ``etl/<name>``."""
    entry = {"namespace": "etl", "name": name, "type": "JOB", "inputs": inputs}
    return {"lineage": {"entries": [entry]}}


@pytest.mark.parametrize(
    ("events", "options", "dangling", "ignored"),
    [
        pytest.param(
            [run("export", "r1", outputs=[ds("a.b", UNMAPPED)])],
            {},
            0,
            0,
            id="a-job-with-no-inputs-and-an-unmapped-output",
        ),
        pytest.param(
            [run("index", "r1", inputs=[ds("db.s.a")], outputs=[ds("orders", SHOUTED)])],
            {},
            0,
            1,
            id="an-output-in-an-ignored-namespace-in-capitals",
        ),
        pytest.param(
            [run("load", "r1", inputs=[ds("orders", SHOUTED)], outputs=[ds("db.s.a")])],
            {},
            0,
            1,
            id="an-input-in-an-ignored-namespace-in-capitals",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    inputs=[ds("orders", "elasticsearch://es:9200")],
                    outputs=[ds("db.s.a")],
                )
            ],
            {"ignoredNamespaces": ["ELASTICSEARCH://*"]},
            0,
            1,
            id="a-pattern-that-spells-the-scheme-in-capitals",
        ),
        pytest.param(
            [dataset_event("a.b", {"lineage": {"inputs": []}}, namespace=UNMAPPED)],
            {},
            0,
            0,
            id="a-dataset-lineage-facet-with-no-inputs-on-an-unmapped-dataset",
        ),
        pytest.param(
            [run("load", "r1", job_facets=job_entry("not_a_job", []))],
            {},
            0,
            0,
            id="a-job-entry-with-no-inputs-naming-an-unknown-job",
        ),
        pytest.param(
            [run("load", "r1", inputs=[ds("a.b", UNMAPPED)], outputs=[ds("db.s.a")])],
            {},
            1,
            0,
            id="an-input-that-maps-to-no-system",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    inputs=[ds("db.s.a"), ds("db.s.b")],
                    outputs=[ds("a.b", UNMAPPED)],
                )
            ],
            {},
            2,
            0,
            id="two-flows-into-an-output-that-maps-to-no-system",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    job_facets=job_entry(
                        "not_a_job", [{"namespace": PG, "name": "db.s.a", "type": "DATASET"}]
                    ),
                )
            ],
            {},
            1,
            0,
            id="a-job-entry-naming-an-unknown-job-with-an-input",
        ),
    ],
)
def test_dangling_flow_only_for_a_flow_that_had_an_end_that_could_not_be_resolved(
    events: list[dict[str, Any]], options: dict[str, Any], dangling: int, ignored: int
) -> None:
    plan = build(events, definition(**options))
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == dangling
    assert plan.report.counters.get("flowEndsIgnored", 0) == ignored
    assert [f for f in plan.flows if f.kind != "orchestration"] == []


# -- "Only direct transformations make column flows" ---------------------------------------------

IDENTITY = {"type": "DIRECT", "subtype": "IDENTITY"}
FILTER = {"type": "INDIRECT", "subtype": "FILTER"}
GROUP_BY = {"type": "INDIRECT", "subtype": "GROUP_BY"}
UNDECLARED = "Field inputs with no transformation declared (not column flows): db.s.a.x into y."


def field_lineage(facet: str, transformations: list[dict[str, str]] | None) -> dict[str, Any]:
    """``db.s.a.x`` into ``db.s.out.y``, in the ``columnLineage`` or the ``lineage`` facet."""
    source: dict[str, Any] = {"namespace": PG, "name": "db.s.a", "field": "x"}
    if transformations is not None:
        source["transformations"] = transformations
    if facet == "columnLineage":
        return {"columnLineage": {"fields": {"y": {"inputFields": [source]}}}}
    return {"lineage": {"fields": {"y": {"inputs": [{**source, "type": "DATASET"}]}}}}


def _one_field_input(
    facet: str, transformations: list[dict[str, str]] | None, include_indirect: bool
) -> CatalogPlan:
    """The plan of a job writing ``db.s.out.y`` from ``db.s.a.x`` by ``transformations``."""
    output = ds("db.s.out", schema={"fields": [{"name": "y"}]})
    output["facets"].update(field_lineage(facet, transformations))
    events = [
        run(
            "load",
            "r1",
            inputs=[ds("db.s.a", schema={"fields": [{"name": "x"}]})],
            outputs=[output],
        )
    ]
    return build(events, definition(includeIndirect=include_indirect))


@pytest.mark.parametrize("facet", ["columnLineage", "lineage"])
@pytest.mark.parametrize(
    ("transformations", "include_indirect", "is_flow", "described", "not_described"),
    [
        pytest.param([IDENTITY], False, True, None, UNDECLARED, id="direct"),
        pytest.param([IDENTITY, GROUP_BY], False, True, None, UNDECLARED, id="direct-and-indirect"),
        pytest.param(None, False, False, UNDECLARED, None, id="no-transformation"),
        pytest.param([], False, False, UNDECLARED, None, id="an-empty-list"),
        pytest.param(None, True, False, UNDECLARED, "INDIRECT", id="no-transformation-indirect-on"),
        pytest.param([FILTER], False, False, None, "INDIRECT/FILTER", id="indirect"),
        pytest.param([FILTER], True, False, "INDIRECT/FILTER", UNDECLARED, id="indirect-described"),
    ],
)
def test_only_direct_transformations_make_column_flows_the_others_are_described(
    facet: str,
    transformations: list[dict[str, str]] | None,
    include_indirect: bool,
    is_flow: bool,
    described: str | None,
    not_described: str | None,
) -> None:
    plan = _one_field_input(facet, transformations, include_indirect)
    (table,) = [f for f in plan.flows if f.kind == "table"]  # the table flow always
    columns = {(f.source.field, f.target.field) for f in plan.flows if f.kind == "column"}
    assert columns == ({("x", "y")} if is_flow else set())
    if described is not None:
        assert described in table.description
    if not_described is not None:
        assert not_described not in table.description


@pytest.mark.parametrize("facet", ["columnLineage", "lineage"])
@pytest.mark.parametrize("include_indirect", [False, True])
def test_the_indirect_part_of_a_direct_input_is_described_only_with_include_indirect(
    facet: str, include_indirect: bool
) -> None:
    """Seed 001: "Filters and joins are in the description when includeIndirect is true." A
    field input with DIRECT/IDENTITY and INDIRECT/GROUP_BY (``sum(a) … GROUP BY a``) is a
    column flow, described by its DIRECT transformation; its GROUP_BY was in that description
    whatever ``includeIndirect`` said, and never on the table flow beside the other indirect
    inputs (a probe)."""
    plan = _one_field_input(facet, [IDENTITY, GROUP_BY], include_indirect)
    (table,) = [f for f in plan.flows if f.kind == "table"]
    (column,) = [f for f in plan.flows if f.kind == "column"]
    assert "DIRECT/IDENTITY" in column.description
    assert "GROUP_BY" not in column.description
    described = "Indirect: db.s.a.x into y (INDIRECT/GROUP_BY)" in table.description
    assert described is include_indirect


# -- "Description: the evidence (declared, observed, analyzed), the producer, and the descriptions
# of the transformations" ------------------------------------------------------------------------


def column_entry(transformations: list[dict[str, Any]] | None, **legacy: str) -> dict[str, Any]:
    """``columnLineage.fields.y``: ``db.s.a.x`` into ``y``; ``legacy``: the field-level
    ``transformationType``/``transformationDescription`` of spec 1-0-0."""
    source: dict[str, Any] = {"namespace": PG, "name": "db.s.a", "field": "x"}
    if transformations is not None:
        source["transformations"] = transformations
    return {"inputFields": [source], **legacy}


@pytest.mark.parametrize(
    ("entry", "dataset", "include_indirect", "kind", "text"),
    [
        pytest.param(
            column_entry(None, transformationType="IDENTITY", transformationDescription="SELECT x"),
            None,
            False,
            "column",
            "DIRECT/IDENTITY: SELECT x",
            id="spec-1-0-0-identity",
        ),
        pytest.param(
            column_entry(None, transformationType="MASKED", transformationDescription="sha256(x)"),
            None,
            False,
            "column",
            "DIRECT/MASKED: sha256(x)",
            id="spec-1-0-0-masked",
        ),
        pytest.param(
            column_entry(
                [{"type": "DIRECT", "subtype": "IDENTITY", "masking": False}],
                transformationType="IDENTITY",
                transformationDescription="SELECT x",
            ),
            None,
            False,
            "column",
            "DIRECT/IDENTITY; SELECT x",
            id="spec-1-2-0-with-the-deprecated-description-too",
        ),
        pytest.param(
            column_entry([{"type": "DIRECT", "description": "upper(x)"}]),
            None,
            False,
            "column",
            "DIRECT: upper(x)",
            id="a-direct-transformation-with-no-subtype",
        ),
        # the spec's subtype is free text: a DIRECT one it does not list is still DIRECT
        pytest.param(
            column_entry([{"type": "DIRECT", "subtype": "CAST", "description": "x::int"}]),
            None,
            False,
            "column",
            "DIRECT/CAST: x::int",
            id="a-direct-transformation-of-a-subtype-the-spec-does-not-list",
        ),
        pytest.param(
            column_entry([{"type": "DIRECT", "subtype": "IDENTITY"}]),
            [
                {
                    "namespace": PG,
                    "name": "db.s.a",
                    "field": "k",
                    "transformations": [{"type": "INDIRECT", "description": "WHERE k > 0"}],
                }
            ],
            True,
            "table",
            "INDIRECT: WHERE k > 0",
            id="an-indirect-transformation-with-no-subtype",
        ),
    ],
)
def test_the_description_of_a_flow_has_the_descriptions_of_the_transformations(
    entry: dict[str, Any],
    dataset: list[dict[str, Any]] | None,
    include_indirect: bool,
    kind: str,
    text: str,
) -> None:
    """Seed 001, "What a flow looks like": "Description: the evidence (declared, observed,
    analyzed), the producer, and the descriptions of the transformations." A transformation's
    ``description`` was dropped when it named no subtype, and the field-level
    ``transformationDescription`` of ``columnLineage`` (spec 1-0-0, deprecated since) always."""
    facet: dict[str, Any] = {"fields": {"y": entry}}
    if dataset is not None:
        facet["dataset"] = dataset
    output = ds("db.s.out", schema={"fields": [{"name": "y"}]}, columnLineage=facet)
    plan = build(
        [
            run(
                "load",
                "r1",
                inputs=[ds("db.s.a", schema={"fields": [{"name": "x"}, {"name": "k"}]})],
                outputs=[output],
            )
        ],
        definition(includeIndirect=include_indirect),
    )
    assert {(f.source.field, f.target.field) for f in plan.flows if f.kind == "column"} == {
        ("x", "y")
    }
    (flow,) = [f for f in plan.flows if f.kind == kind]
    assert text in flow.description


# -- "Field inputs with DIRECT transformations become field flows": also from the dataset written --

TRANSFORMATION = {"type": "DIRECT", "subtype": "TRANSFORMATION"}


def into_a(*sources: tuple[str, str, dict[str, str]]) -> dict[str, Any]:
    """``fields.a`` of a lineage facet: each (dataset, field, transformation) feeds ``a``."""
    inputs = [
        {"namespace": PG, "name": name, "type": "DATASET", "field": field, "transformations": [t]}
        for name, field, t in sources
    ]
    return {"a": {"inputs": inputs}}


def column_into_a(*sources: tuple[str, str, dict[str, str]]) -> dict[str, Any]:
    inputs = [
        {"namespace": PG, "name": name, "field": field, "transformations": [t]}
        for name, field, t in sources
    ]
    return {"columnLineage": {"fields": {"a": {"inputFields": inputs}}}}


def declared_into_t(fields: dict[str, Any]) -> dict[str, Any]:
    entry = {"namespace": PG, "name": "db.s.t", "type": "DATASET", "fields": fields}
    return {"lineage": {"entries": [entry]}}


T_SCHEMA = {"fields": [{"name": "a"}, {"name": "b"}]}


@pytest.mark.parametrize(
    ("events", "columns", "tables"),
    [
        pytest.param(
            [
                run(
                    "update",
                    "r1",
                    inputs=[ds("db.s.t", schema=T_SCHEMA)],
                    outputs=[
                        ds("db.s.t", schema=T_SCHEMA, **column_into_a(("db.s.t", "b", IDENTITY)))
                    ],
                )
            ],
            {("t.b", "t.a")},
            set(),
            id="update-columnLineage",
        ),
        pytest.param(
            [
                run(
                    "update",
                    "r1",
                    job_facets=declared_into_t(into_a(("db.s.t", "b", TRANSFORMATION))),
                    inputs=[ds("db.s.t", schema=T_SCHEMA)],
                    outputs=[ds("db.s.t", schema=T_SCHEMA)],
                )
            ],
            {("t.b", "t.a")},
            set(),
            id="update-declared",
        ),
        pytest.param(
            [
                run(
                    "merge",
                    "r1",
                    job_facets=declared_into_t(
                        into_a(("db.s.t", "b", TRANSFORMATION), ("db.s.src", "x", IDENTITY))
                    ),
                    inputs=[
                        ds("db.s.t", schema=T_SCHEMA),
                        ds("db.s.src", schema={"fields": [{"name": "x"}]}),
                    ],
                    outputs=[ds("db.s.t", schema=T_SCHEMA)],
                )
            ],
            {("t.b", "t.a"), ("src.x", "t.a")},
            {("src", "t")},
            id="merge-declared",
        ),
        pytest.param(
            [
                run(
                    "update",
                    "r1",
                    inputs=[ds("db.s.t", schema=T_SCHEMA)],
                    outputs=[
                        ds(
                            "db.s.t",
                            schema=T_SCHEMA,
                            **column_into_a(("db.s.t", "a", IDENTITY), ("db.s.t", "b", FILTER)),
                        )
                    ],
                )
            ],
            set(),
            set(),
            id="a-column-into-itself-or-indirect-is-no-flow",
        ),
        pytest.param(
            [
                dataset_event(
                    "db.s.t",
                    {
                        "schema": T_SCHEMA,
                        "lineage": {"fields": into_a(("db.s.t", "b", TRANSFORMATION))},
                    },
                )
            ],
            {("t.b", "t.a")},
            set(),
            id="a-dataset-event",
        ),
    ],
)
def test_a_column_written_from_another_column_of_the_same_dataset_is_a_column_flow(
    events: list[dict[str, Any]], columns: set[tuple[str, str]], tables: set[tuple[str, str]]
) -> None:
    """Seed 001: "Field inputs with DIRECT transformations become field flows." An UPDATE or a
    MERGE reads and writes one table: ``SET a = f(b)`` is a DIRECT field input of ``t.a`` from
    ``t.b``, a column flow (the table flow from a table to itself is none)."""
    plan = build(events, definition())
    assert {
        (f"{f.source.entity.name}.{f.source.field}", f"{f.target.entity.name}.{f.target.field}")
        for f in plan.flows
        if f.kind == "column"
    } == columns
    assert {(s, t) for s, t, _ in table_pairs(plan)} == tables
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0


# -- "Declared field lineage: the lineage job facet: entries per output dataset" ----------------


def entry(target: str, *sources: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``DATASET`` entry of a lineage job facet: each source feeds ``target`` at entity level."""
    inputs = [{"namespace": PG, "name": source, "type": "DATASET"} for source in sources]
    built: dict[str, Any] = {"namespace": PG, "name": target, "type": "DATASET", "inputs": inputs}
    if fields is not None:
        built["fields"] = fields
    return built


def entries(*items: dict[str, Any]) -> dict[str, Any]:
    return {"lineage": {"entries": list(items)}}


X_INTO_Y = {
    "y": {
        "inputs": [
            {
                "namespace": PG,
                "name": "db.s.a",
                "type": "DATASET",
                "field": "x",
                "transformations": [IDENTITY],
            }
        ]
    }
}
SCHEMAS = [
    dataset_event("db.s.a", {"schema": {"fields": [{"name": "x"}]}}, second=0),
    dataset_event("db.s.o", {"schema": {"fields": [{"name": "y"}]}}, second=0),
]
"""The fields of ``a`` and ``o`` (the System is created: a column flow needs them known)."""


@pytest.mark.parametrize(
    ("events", "tables", "columns"),
    [
        pytest.param(
            [
                *SCHEMAS,
                builders.job_event(
                    "load",
                    namespace="etl",
                    time=at(1),
                    job_facets=entries(entry("db.s.o", "db.s.a", fields=X_INTO_Y)),
                ),
            ],
            {("a", "o", "declared")},
            {("a.x", "o.y")},
            id="a-job-event-with-the-lineage-facet-alone",
        ),
        pytest.param(
            [
                *SCHEMAS,
                run("load", "r1", second=1, job_facets=entries(entry("db.s.o", "db.s.a"))),
            ],
            {("a", "o", "declared")},
            set(),
            id="a-run-with-the-lineage-facet-and-no-datasets",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    inputs=[ds("db.s.a")],
                    outputs=[ds("db.s.o")],
                    job_facets=entries(entry("db.s.o", "db.s.a"), entry("db.s.o2", "db.s.b")),
                )
            ],
            {("a", "o", "declared"), ("b", "o2", "declared")},
            set(),
            id="an-entry-for-a-dataset-the-run-does-not-list",
        ),
        pytest.param(
            [run("load", "r1", job_facets=entries(entry("db.s.o")))],
            set(),
            set(),
            id="an-entry-with-no-inputs-has-no-upstream",
        ),
    ],
)
def test_each_dataset_entry_of_the_lineage_job_facet_is_declared_lineage_of_its_target(
    events: list[dict[str, Any]], tables: set[tuple[str, str, str]], columns: set[tuple[str, str]]
) -> None:
    """Seed 001: "Declared field lineage — Table and column flows — The lineage job facet:
    entries per output dataset, with entity inputs and fields.<target>.inputs[]", and for a step
    that is not SQL: "Send the lineage facet: one DATASET entry per output" (inputs and outputs
    are asked for SQL steps only). The facet names its targets itself: an entry whose dataset the
    events do not list as an output (a JobEvent that sends the facet alone) gave no flow."""
    plan = build(events, definition())
    assert table_pairs(plan) == tables
    assert {
        (f"{f.source.entity.name}.{f.source.field}", f"{f.target.entity.name}.{f.target.field}")
        for f in plan.flows
        if f.kind == "column"
    } == columns
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 0


# -- "Name: the ends, then @<job namespace>/<job name>": two pairs of ends, two names ------------

SHARD_1 = "postgres://shard1:5432"
SHARD_2 = "postgres://shard2:5432"
AMOUNT = {"fields": [{"name": "amount"}]}


def on_shards(job: str, run_id: str, second: int, *shards: str, **facets: Any) -> dict[str, Any]:
    """A run of ``job`` reading ``db.public.orders`` and writing ``db.public.orders_agg`` on
    each of ``shards``: the same schema and table names on another System."""
    return run_event(
        job,
        namespace="af",
        run_id=run_id,
        time=at(second),
        run_facets=builders.parent_facet("agg", "dag-run-1", "af"),
        inputs=[ds("db.public.orders", shard, schema=AMOUNT) for shard in shards],
        outputs=[ds("db.public.orders_agg", shard, **facets) for shard in shards],
    )


def shard_column_lineage(shard: str) -> dict[str, Any]:
    return {
        "schema": {"fields": [{"name": "total"}]},
        "columnLineage": {
            "fields": {
                "total": {
                    "inputFields": [
                        {
                            "namespace": shard,
                            "name": "db.public.orders",
                            "field": "amount",
                            "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}],
                        }
                    ]
                }
            }
        },
    }


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            [
                on_shards("agg.orders", "r1", 1, SHARD_1),
                on_shards("agg.orders", "r2", 2, SHARD_2),
            ],
            {
                ("shard1", "orders", "shard1", "orders_agg", None),
                ("shard2", "orders", "shard2", "orders_agg", None),
            },
            id="the-instances-of-a-mapped-task-one-per-shard",
        ),
        pytest.param(
            [on_shards("agg.orders", "r1", 1, SHARD_1, SHARD_2)],
            {
                (a, "orders", b, "orders_agg", None)
                for a in ("shard1", "shard2")
                for b in ("shard1", "shard2")
            },
            id="one-run-on-two-shards",
        ),
        pytest.param(
            [
                on_shards("agg.orders", "r1", 1, SHARD_1, **shard_column_lineage(SHARD_1)),
                on_shards("agg.orders", "r2", 2, SHARD_2, **shard_column_lineage(SHARD_2)),
            ],
            {
                ("shard1", "orders", "shard1", "orders_agg", None),
                ("shard2", "orders", "shard2", "orders_agg", None),
                ("shard1", "orders", "shard1", "orders_agg", "amount"),
                ("shard2", "orders", "shard2", "orders_agg", "amount"),
            },
            id="column-flows-of-the-instances",
        ),
    ],
)
def test_two_flows_of_a_job_with_other_ends_never_share_a_name(
    events: list[dict[str, Any]], expected: set[tuple[str, str, str, str, str | None]]
) -> None:
    """Seed 001: "Name: the ends, then @<job namespace>/<job name>", and "A table flow is always
    published". The natural key of a flow is (scope, name): two flows of one job between tables
    of the same names on other Systems (a mapped task run once per shard) were given one name,
    and one of them was lost. Their names spell the Systems, as across Systems."""
    plan = build(events, builders.definition(policy("postgres://*", nameTemplate="{host}")))
    data = [f for f in plan.flows if f.kind != "orchestration"]
    assert {
        (
            f.source.entity.system,
            f.source.entity.name,
            f.target.entity.system,
            f.target.entity.name,
            f.source.field,
        )
        for f in data
    } == expected
    assert len({(f.scope, f.name) for f in data}) == len(data)
    for flow in data:
        assert flow.name.startswith(f"{flow.source.entity.system}:")
        assert f" -> {flow.target.entity.system}:" in flow.name
        assert flow.name.endswith(" @af/agg.orders")


@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param(('db.s."t.x"', 'db."s.t".x'), id="a-dot-in-a-quoted-table-or-schema"),
        pytest.param(('db."s.t"."x.y"', 'db."s.t.x".y'), id="dots-in-both"),
    ],
)
def test_two_tables_spelt_alike_on_one_system_each_keep_their_flow(
    inputs: tuple[str, str],
) -> None:
    """Seed 001: "A table flow is always published". ``s.t`` + ``x`` and ``s`` + ``t.x`` read by
    one job on one System: both flows were named ``s.t.x -> s.out @…`` (the Systems, which tell
    apart tables of one name on two Systems, are the same), and one was lost with no gap (a
    probe of names real warehouses allow). Each is now named with a hash of its ends, the same
    at every plan."""
    schema = builders.schema_facet("c")
    events = [
        run_event(
            "etl.two",
            namespace="af",
            inputs=[ds(name, **schema) for name in inputs],
            outputs=[ds("db.s.out", **schema)],
        )
    ]
    definition = builders.definition(policy("postgres://*"))
    plan, again = build(events, definition), build(list(reversed(events)), definition)
    tables = [f for f in plan.flows if f.kind == "table"]
    assert {(f.source.entity.schema_, f.source.entity.name) for f in tables} == {
        _parts(name) for name in inputs
    }
    assert len({(f.scope, f.name) for f in tables}) == 2
    assert [f.name for f in plan.flows] == [f.name for f in again.flows]


def test_only_the_flows_spelt_alike_are_named_with_a_hash_of_their_ends() -> None:
    """A clash of names across Systems is told apart by the Systems; only the flows that the
    Systems do not tell apart take a hash (a review: every flow of the clash took one, and a
    flow of another System was created anew)."""
    a, b = "postgres://a:5432", "postgres://b:5432"
    schema = builders.schema_facet("c")
    inputs = [('db.s."t.x"', a), ('db.s."t.x"', b), ('db."s.t".x', a)]
    event = run_event(
        "etl.two",
        namespace="af",
        inputs=[ds(name, namespace, **schema) for name, namespace in inputs],
        outputs=[ds("db.s.out", namespace, **schema) for namespace in (a, b)],
    )
    plan = build([event], builders.definition(policy("postgres://*", nameTemplate="{host}")))
    names = [f.name for f in plan.flows if f.kind == "table"]
    assert len(set(names)) == len(names) == 6
    assert {name for name in names if "#" not in name} == {
        "b:s.t.x -> a:s.out @af/etl.two",
        "b:s.t.x -> b:s.out @af/etl.two",
    }


def _parts(name: str) -> tuple[str, str]:
    """Schema and table of ``db.<schema>.<table>``, quoted parts kept whole."""
    import shlex

    lexer = shlex.shlex(name, posix=True)
    lexer.whitespace, lexer.quotes, lexer.whitespace_split = ".", '"', True
    _, schema, table = list(lexer)
    return schema, table


# -- "No invented pairs ... It publishes a table flow for every input and output pair and reports
# the gap UNCORRELATED_IO": a columnLineage facet that names no input is no lineage facet --------


def named_nothing(**more: Any) -> dict[str, Any]:
    """A ``columnLineage`` facet that names no input, as a producer that computed no column
    lineage may still send it."""
    return {"columnLineage": {"fields": {}, **more}}


@pytest.mark.parametrize(
    "facet",
    [
        pytest.param(named_nothing(), id="no-fields"),
        pytest.param(named_nothing(dataset=[]), id="no-fields-and-an-empty-dataset-list"),
        pytest.param(
            {"columnLineage": {"fields": {"y": {"inputFields": []}}}},
            id="a-field-with-no-input-fields",
        ),
    ],
)
def test_a_column_lineage_facet_that_names_no_input_leaves_every_pair_and_uncorrelated_io(
    facet: dict[str, Any],
) -> None:
    """Seed 001: "A table flow is always published", and "When a job has several inputs and
    several outputs and no lineage facet ... It publishes a table flow for every input and output
    pair and reports the gap UNCORRELATED_IO". A ``columnLineage`` facet with no input in it
    proves nothing of which input feeds which output; it was taken as the evidence, so a job with
    two inputs and two outputs published no flow at all, and reported nothing."""
    plan = build(
        [
            run(
                "spark_app.write",
                "r1",
                inputs=[ds("db.s.a"), ds("db.s.b")],
                outputs=[ds("db.s.x", **facet), ds("db.s.y", **facet)],
            )
        ],
        definition(),
    )
    assert table_pairs(plan) == {(a, b, "io") for a in ("a", "b") for b in ("x", "y")}
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 1


# -- "UNCORRELATED_IO | Several outputs and no lineage facet: all input and output pairs were
# published." — one input and several outputs, in the shapes producers send ----------------------

S3 = "s3://sales"


def spark_columns(source: str, *columns: str) -> dict[str, Any]:
    """The ``columnLineage`` facet Spark sends on an output: each column from ``source``'s own."""
    fields = {c: [builders.input_field(source, c, S3)] for c in columns}
    return builders.column_lineage_facet(fields)


@pytest.mark.parametrize(
    ("event", "tables", "gap"),
    [
        pytest.param(
            run_event(
                "lineage_demo.split",
                namespace="airflow",
                inputs=[builders.dataset("/data/in/orders.csv", "file")],
                outputs=[
                    builders.dataset("/data/out/big_orders.csv", "file"),
                    builders.dataset("/data/out/small.csv", "file"),
                ],
            ),
            {
                ("/data/in/orders.csv", "/data/out/big_orders.csv", "io"),
                ("/data/in/orders.csv", "/data/out/small.csv", "io"),
            },
            1,
            id="airflow-one-inlet-two-outlets",
        ),
        pytest.param(
            run_event(
                "spark_split.execute_insert_into_hadoop_fs_relation_command",
                namespace="spark",
                inputs=[builders.dataset("raw/orders", S3)],
                outputs=[builders.dataset("curated/eu", S3), builders.dataset("curated/us", S3)],
            ),
            {("orders", "eu", "io"), ("orders", "us", "io")},
            1,
            id="spark-without-column-lineage",
        ),
        pytest.param(
            run_event(
                "spark_split.execute_insert_into_hadoop_fs_relation_command",
                namespace="spark",
                inputs=[builders.dataset("raw/orders", S3)],
                outputs=[
                    builders.dataset("curated/eu", S3, facets=spark_columns("raw/orders", "id")),
                    builders.dataset("curated/us", S3, facets=spark_columns("raw/orders", "id")),
                ],
            ),
            {("orders", "eu", "column_lineage"), ("orders", "us", "column_lineage")},
            0,
            id="spark-with-column-lineage-on-each-output",
        ),
        pytest.param(
            run_event(
                "spark_split.execute_insert_into_hadoop_fs_relation_command",
                namespace="spark",
                inputs=[builders.dataset("raw/orders", S3)],
                outputs=[
                    builders.dataset("curated/eu", S3, facets=spark_columns("raw/orders", "id")),
                    builders.dataset("curated/us", S3),
                ],
            ),
            {("orders", "eu", "column_lineage"), ("orders", "us", "io")},
            1,
            id="spark-with-column-lineage-on-one-output-only",
        ),
        pytest.param(
            run_event(
                "spark_copy.execute_insert_into_hadoop_fs_relation_command",
                namespace="spark",
                inputs=[builders.dataset("raw/orders", S3)],
                outputs=[builders.dataset("curated/orders", S3)],
            ),
            {("orders", "orders", "io")},
            0,
            id="one-input-one-output",
        ),
    ],
)
def test_uncorrelated_io_several_outputs_and_no_lineage_facet_with_one_input(
    event: dict[str, Any], tables: set[tuple[str, str, str]], gap: int
) -> None:
    """Seed 001's table: "UNCORRELATED_IO | Several outputs and no lineage facet: all input and
    output pairs were published." One input was taken for a correlation (not reported): that it
    feeds every output is not proven (a task may write a control table from nothing it read). An
    output whose ``columnLineage`` names its input is correlated; the job is reported as soon as
    one of several outputs has no lineage facet. Shapes: an Airflow task's ``File`` inlets and
    outlets (namespace ``file``, absolute path), Spark's ``s3://{bucket}`` + key."""
    plan = build(
        [event], builders.definition(policy("file"), policy("s3://*"), policy("postgres://*"))
    )
    assert table_pairs(plan) == tables
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == gap


# -- "A DatasetEvent with a lineage facet gives table flows between datasets, with no job", and
# "Description: the evidence (declared, observed, analyzed), the producer, and the descriptions of
# the transformations. Filters and joins are in the description when includeIndirect is true." --

HOP = "https://github.com/apache/hop/tree/2.10.0"


def declared_report(producer: str | None = HOP) -> dict[str, Any]:
    """A dataset-level lineage facet of ``db.s.report`` as a hand-written producer declares it:
    ``db.s.raw`` feeds it, ``total`` is the sum of ``amount`` filtered on ``flag``, ``id`` is
    mapped from ``id`` with no transformation named."""

    def raw(field: str, *transformations: dict[str, str]) -> dict[str, Any]:
        source: dict[str, Any] = {"namespace": PG, "name": "db.s.raw", "type": "DATASET"}
        source["field"] = field
        if transformations:
            source["transformations"] = list(transformations)
        return source

    sum_of = {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum(amount)"}
    flag = {"type": "INDIRECT", "subtype": "FILTER", "description": "flag = 1"}
    facet: dict[str, Any] = {
        "inputs": [{"namespace": PG, "name": "db.s.raw", "type": "DATASET"}],
        "fields": {
            "total": {"inputs": [raw("amount", sum_of), raw("flag", flag)]},
            "id": {"inputs": [raw("id")]},
        },
    }
    if producer is not None:
        facet["_producer"] = producer
    return {
        "lineage": facet,
        "schema": {"fields": [{"name": "total"}, {"name": "id"}]},
    }


RAW_SCHEMA = {"fields": [{"name": "amount"}, {"name": "flag"}, {"name": "id"}]}


@pytest.mark.parametrize(
    ("include_indirect", "producer", "table_text", "column_text", "not_in_table"),
    [
        pytest.param(
            False,
            HOP,
            [
                f"Declared lineage of the dataset (lineage facet of a DatasetEvent), by {HOP}.",
                "Field inputs with no transformation declared (not column flows): db.s.raw.id "
                "into id.",
            ],
            f"by {HOP}. Transformations: DIRECT/AGGREGATION: sum(amount).",
            "Indirect",
            id="the-producer-and-the-transformations",
        ),
        pytest.param(
            True,
            HOP,
            ["Indirect: db.s.raw.flag into total (INDIRECT/FILTER: flag = 1)."],
            "Transformations: DIRECT/AGGREGATION: sum(amount).",
            "the dataset's producer",
            id="filters-with-include-indirect",
        ),
        pytest.param(
            False,
            None,
            ["by an unnamed producer."],
            "by an unnamed producer. Transformations: DIRECT/AGGREGATION: sum(amount).",
            "Indirect",
            id="a-facet-with-no-producer",
        ),
    ],
)
def test_the_flows_of_a_dataset_event_are_described_like_a_jobs(
    include_indirect: bool,
    producer: str | None,
    table_text: list[str],
    column_text: str,
    not_in_table: str,
) -> None:
    """The flows of a DatasetEvent's lineage facet were described as "by the dataset's producer",
    with neither the transformations of their column flows nor, with ``includeIndirect``, the
    filters and joins: the same facet sent by a job on its output was described in full."""
    plan = build(
        [
            dataset_event("db.s.raw", {"schema": RAW_SCHEMA}, second=1),
            dataset_event("db.s.report", declared_report(producer), second=2),
        ],
        definition(includeIndirect=include_indirect),
    )
    (table,) = [f for f in plan.flows if f.kind == "table"]
    (column,) = [f for f in plan.flows if f.kind == "column"]
    assert (table.source.entity.name, table.target.entity.name) == ("raw", "report")
    assert (column.source.field, column.target.field) == ("amount", "total")
    for text in table_text:
        assert text in table.description
    assert not_in_table not in table.description
    assert column.description.endswith(column_text)
    assert column.scope == f"ol:dataset:{PG}|db.s.report"
    assert " @" not in table.name + column.name  # no job


def test_a_column_flow_of_a_dataset_event_to_a_field_no_schema_names_is_field_not_catalogued() -> (
    None
):
    """Seed 001: "FIELD_NOT_CATALOGUED — A column flow names a field that is not in the catalog.
    It is checked on Systems created by OpenLineage." A DatasetEvent's column flow to a field of
    a System this definition creates that no schema facet names was planned, unchecked."""
    plan = build(
        [dataset_event("db.s.report", declared_report())],  # db.s.raw: no schema facet
        definition(),
    )
    assert [f.kind for f in plan.flows] == ["table"]
    assert plan.report.gap_count(GapCode.FIELD_NOT_CATALOGUED) == 1


# -- "INDIRECT ones (filters, joins, group by) and inputs for a whole dataset are not flows: with
# includeIndirect: true they are described": an entity input is the table flow, not indirect ----


@pytest.mark.parametrize(
    ("source", "described"),
    [
        pytest.param({}, None, id="an-entity-input"),
        pytest.param(
            {"transformations": [FILTER]},
            "Indirect: db.s.a (whole dataset) (INDIRECT/FILTER).",
            id="an-entity-input-with-an-indirect-transformation",
        ),
        pytest.param(
            {"field": "k"},
            "Indirect: db.s.a.k (whole dataset) (INDIRECT).",
            id="an-entity-input-with-a-field",
        ),
        pytest.param({"transformations": [IDENTITY]}, None, id="an-entity-input-direct"),
    ],
)
@pytest.mark.parametrize("where", ["job", "dataset-event"])
def test_an_entity_input_of_a_lineage_facet_is_the_table_flow_not_an_indirect_input(
    source: dict[str, Any], described: str | None, where: str
) -> None:
    """An entity-level input of the lineage facet with neither a field nor a transformation is
    what the table flow itself stands for; with ``includeIndirect`` it was also listed in the
    description as "Indirect: db.s.a (whole dataset) (INDIRECT)", a transformation the producer
    never declared."""
    facet = {
        "lineage": {"inputs": [{"namespace": PG, "name": "db.s.a", "type": "DATASET", **source}]}
    }
    events = (
        [run("load", "r1", inputs=[ds("db.s.a")], outputs=[ds("db.s.out", **facet)])]
        if where == "job"
        else [dataset_event("db.s.out", facet)]
    )
    plan = build(events, definition(includeIndirect=True))
    (table,) = plan.flows
    assert (table.source.entity.name, table.target.entity.name) == ("a", "out")
    if described is None:
        assert "Indirect" not in table.description
    else:
        assert described in table.description


# -- "An explicit lineage facet with JOB entries or inputs gives job to job flows as data flows,
# since that is what the producer declared": also the JOB inputs of a dataset's own facet ---------

ENRICH = {"namespace": "ext", "name": "enrich", "type": "JOB"}
OWN_JOB = {"type": "JOB"}
"""A JOB input with no namespace and name: the event's own job."""


def dataset_lineage(*inputs: dict[str, Any], field: dict[str, Any] | None = None) -> dict[str, Any]:
    """A dataset-level lineage facet with entity ``inputs``, and ``field`` the one input of its
    field ``total`` (a job that generates it, like ``sum()``)."""
    facet: dict[str, Any] = {"inputs": list(inputs)}
    if field is not None:
        facet["fields"] = {"total": {"inputs": [field]}}
    return {"lineage": facet}


def enrich_run() -> dict[str, Any]:
    return run_event("enrich", namespace="ext", run_id="e1", time=at(0))


@pytest.mark.parametrize(
    ("events", "flows", "dangling"),
    [
        pytest.param(
            [
                enrich_run(),
                run("load", "r1", outputs=[ds("db.s.out", **dataset_lineage(ENRICH))]),
            ],
            {("enrich", "out", "declared")},
            0,
            id="a-job-input-of-a-jobs-output",
        ),
        pytest.param(
            [
                run(
                    "load",
                    "r1",
                    inputs=[ds("db.s.raw")],
                    outputs=[ds("db.s.out", **dataset_lineage(field=OWN_JOB))],
                )
            ],
            {("load", "out", "declared")},
            0,
            id="the-jobs-own-job-generating-a-field",
        ),
        pytest.param(
            [
                enrich_run(),
                dataset_event("db.s.out", dataset_lineage({**ENRICH, "transformations": []})),
            ],
            {("enrich", "out", "dataset_event")},
            0,
            id="a-job-input-of-a-dataset-event",
        ),
        pytest.param(
            [dataset_event("db.s.out", dataset_lineage(OWN_JOB))],
            set(),
            0,
            id="the-own-job-of-a-dataset-event-that-has-none",
        ),
        pytest.param(
            [run("load", "r1", outputs=[ds("db.s.out", **dataset_lineage(ENRICH))])],
            set(),
            1,
            id="a-job-input-naming-a-job-with-no-events",
        ),
    ],
)
def test_a_job_input_of_a_dataset_lineage_facet_is_a_data_flow_from_that_job(
    events: list[dict[str, Any]], flows: set[tuple[str, str, str]], dangling: int
) -> None:
    """The ``lineage`` facet of a dataset (on a job's output, or in a DatasetEvent) may name a
    JOB among its inputs, as the job facet's entries may: those of the job facet gave job →
    dataset flows, those of a dataset's own facet were dropped without a word."""
    plan = build(events, definition())
    assert table_pairs(plan) == flows
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == dangling
    if flows:
        (flow,) = plan.flows
        assert flow.source.entity.schema_ in {"ext", "etl"}  # a job entity: schema = namespace


# -- "Description: the evidence (declared, observed, analyzed), the producer, ...": the flows of a
# job's design name the producer of its JobEvent ------------------------------------------------

DESIGNER = "https://git.example.com/lineage-emitter/tree/v1.2.0"


@pytest.mark.parametrize(
    ("job_event", "run_too"),
    [
        pytest.param(
            {"job_facets": {"lineage": {"entries": [entry("db.s.out", "db.s.raw")]}}},
            False,
            id="a-job-event-with-the-lineage-facet",
        ),
        pytest.param(
            {"inputs": [ds("db.s.raw")], "outputs": [ds("db.s.out")]},
            False,
            id="a-job-event-with-inputs-and-outputs",
        ),
        pytest.param(
            {"inputs": [ds("db.s.raw")], "outputs": [ds("db.s.out")]},
            True,
            id="a-job-event-and-a-run-that-names-no-dataset",
        ),
    ],
)
def test_the_flows_of_a_jobs_design_name_the_producer_of_its_job_event(
    job_event: dict[str, Any], run_too: bool
) -> None:
    """Flows that come from a JobEvent (a job's design: the lineage facet sent alone, or its
    inputs and outputs) were described "by an unnamed producer", or by the producer of a run
    that named no dataset: the JobEvent's producer was not kept."""
    events = [
        builders.job_event("load", namespace="etl", time=at(1), producer=DESIGNER, **job_event)
    ]
    if run_too:
        events.append(run("load", "r1", second=2))  # builders.PRODUCER, no dataset
    plan = build(events, definition())
    (flow,) = plan.flows
    assert (flow.source.entity.name, flow.target.entity.name) == ("raw", "out")
    assert f", by {DESIGNER}." in flow.description


# -- Seed 004: "events for one run are accumulative unless stated otherwise", and the jobType facet
# declares "whether events are ACCUMULATIVE or COMPLETE_SNAPSHOT" -------------------------------

KAFKA = "kafka://broker:9092"


def flink_job_type(mode: str | None) -> dict[str, Any]:
    facet: dict[str, Any] = {"processingType": "STREAMING", "integration": "FLINK"}
    facet["jobType"] = "JOB"
    if mode is not None:
        facet["emissionPattern"] = {
            "eventTrigger": "PERIODIC",
            "eventContentMode": mode,
            "windowDuration": 300,
        }
    return {"jobType": facet}


def flink_event(
    event_type: str, second: int, source: str | None, mode: str | None
) -> dict[str, Any]:
    """An event of the one long run of a Flink job writing topic ``sink``; ``source``: the topic
    it reads in this event's window (``None``: the event names no dataset)."""
    return run_event(
        "orders_enrichment",
        namespace="flink-jobs",
        event_type=event_type,
        run_id="f1",
        time=at(second),
        job_facets=flink_job_type(mode),
        inputs=[ds(source, KAFKA)] if source else [],
        outputs=[ds("sink", KAFKA)] if source else [],
    )


@pytest.mark.parametrize(
    ("mode", "events", "sources"),
    [
        pytest.param(
            "COMPLETE_SNAPSHOT",
            [("START", "orders_v1"), ("RUNNING", "orders_v1"), ("RUNNING", "orders_v2")],
            {"orders_v2"},
            id="complete-snapshots-the-latest-window",
        ),
        pytest.param(
            "complete_snapshot",
            [("START", "orders_v1"), ("RUNNING", "orders_v2"), ("RUNNING", None)],
            {"orders_v2"},
            id="complete-snapshots-a-window-naming-no-dataset",
        ),
        pytest.param(
            "ACCUMULATIVE",
            [("START", "orders_v1"), ("RUNNING", "orders_v2")],
            {"orders_v1", "orders_v2"},
            id="accumulative",
        ),
        pytest.param(
            None,
            [("START", "orders_v1"), ("RUNNING", "orders_v2")],
            {"orders_v1", "orders_v2"},
            id="not-stated",
        ),
    ],
)
def test_a_run_whose_events_are_complete_snapshots_is_described_by_its_latest_one(
    mode: str | None, events: list[tuple[str, str | None]], sources: set[str]
) -> None:
    """A job whose ``jobType`` says ``emissionPattern.eventContentMode: COMPLETE_SNAPSHOT`` sends
    the complete state of each time window: a topic its latest window no longer reads is no
    longer an input. Every event of its run was combined, so a topic the job stopped reading
    kept its flow for as long as the run went on (a streaming run: until a restart)."""
    plan = build(
        [flink_event(kind, second, source, mode) for second, (kind, source) in enumerate(events)],
        builders.definition(policy("kafka://*")),
    )
    assert {(f.source.entity.name, f.target.entity.name) for f in plan.flows} == {
        (source, "sink") for source in sources
    }


# -- "A table flow is always published": a lineage declaration that says nothing of its target's
# inputs is no evidence; "inputs: []" is ("no tracked upstream source", the spec says) ---------


def on_x(lineage: dict[str, Any] | None = None, entry: dict[str, Any] | None = None) -> Any:
    """A run reading ``a`` and ``b`` and writing ``x`` and ``y``; ``lineage``: the dataset-level
    facet of ``x``; ``entry``: what a ``DATASET`` entry of the job facet says of ``x``."""
    job_facets = None
    if entry is not None:
        target = {"namespace": PG, "name": "db.s.x", "type": "DATASET", **entry}
        job_facets = {"lineage": {"entries": [target]}}
    return run(
        "load",
        "r1",
        inputs=[ds("db.s.a"), ds("db.s.b")],
        outputs=[
            ds("db.s.x", **({"lineage": lineage} if lineage is not None else {})),
            ds("db.s.y"),
        ],
        job_facets=job_facets,
    )


EVERY_PAIR = {(a, b, "io") for a in ("a", "b") for b in ("x", "y")}
INTO_Y = {(a, "y", "io") for a in ("a", "b")}


@pytest.mark.parametrize(
    ("event", "flows"),
    [
        pytest.param(on_x(lineage={}), EVERY_PAIR, id="a-dataset-facet-with-nothing"),
        pytest.param(on_x(lineage={"fields": {}}), EVERY_PAIR, id="a-dataset-facet-no-fields"),
        pytest.param(on_x(entry={}), EVERY_PAIR, id="a-job-facet-entry-with-nothing"),
        pytest.param(on_x(lineage={"inputs": []}), INTO_Y, id="a-dataset-facet-no-upstream"),
        pytest.param(on_x(entry={"inputs": []}), INTO_Y, id="a-job-facet-entry-no-upstream"),
    ],
)
def test_a_lineage_declaration_that_says_nothing_of_the_inputs_is_no_evidence(
    event: dict[str, Any], flows: set[tuple[str, str, str]]
) -> None:
    """A ``DATASET`` entry, or a dataset's own ``lineage`` facet, with neither ``inputs`` nor a
    field was taken as declared lineage with no input: the output got no table flow at all. Only
    an explicit ``inputs: []`` means "no tracked upstream source"."""
    plan = build([event], definition())
    assert table_pairs(plan) == flows
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 1


@pytest.mark.parametrize("late", ["OTHER", "RUNNING", "START"])
def test_an_event_after_a_runs_end_does_not_make_it_the_latest_completed_run(late: str) -> None:
    """docs/mapping-reference.md: "A job's flows come from its latest description: its latest
    completed run", and "OTHER events add facets but no state"; the spec: "Additional events
    with OTHER eventType can be added to the same run … to send additional metadata after the
    run is complete". An older run's event sent after a newer run completed (found by a probe)
    made the older run the latest, and its lineage replaced the newer one's."""
    first, second = "0190b1c2-0000-7000-8000-000000000001", "0190b1c2-0000-7000-8000-000000000002"
    events = [
        *builders.run_cycle(
            run_id=first,
            start_time=at(0),
            end_time=at(5),
            inputs=[builders.dataset("db.s.a")],
            outputs=[builders.dataset("db.s.b")],
        ),
        *builders.run_cycle(
            run_id=second,
            start_time=at(10),
            end_time=at(15),
            inputs=[builders.dataset("db.s.a")],
            outputs=[builders.dataset("db.s.c")],
        ),
        run_event(event_type=late, run_id=first, time=at(30)),
    ]
    plan = build(events, builders.definition(policy("*")))
    assert [flow.name for flow in plan.flows] == ["s.a -> s.c @airflow/etl.load"]


@pytest.mark.parametrize(
    ("masking", "described"),
    [
        pytest.param(True, "Transformations: DIRECT/AGGREGATION (masking): count(email).", id="on"),
        pytest.param(False, "Transformations: DIRECT/AGGREGATION: count(email).", id="off"),
    ],
)
def test_a_masking_transformation_says_so_in_its_column_flow(masking: bool, described: str) -> None:
    """Seed 004: "A boolean masking flag marks whether the input value was obfuscated"; seed
    001: a column flow's description names "the descriptions of the transformations". The flag
    was read and dropped: a steward could not tell a hash or a count from the value itself."""
    counted = {
        "type": "DIRECT",
        "subtype": "AGGREGATION",
        "description": "count(email)",
        "masking": masking,
    }
    lineage = builders.column_lineage_facet(
        {"emails": [builders.input_field("db.s.users", "email", transformations=[counted])]}
    )
    plan = build(
        builders.run_cycle(
            inputs=[builders.dataset("db.s.users", facets=builders.schema_facet("email"))],
            outputs=[
                builders.dataset("db.s.stats", facets=builders.schema_facet("emails") | lineage)
            ],
        ),
        JobDefinition.from_dict(builders.definition_data(policy())),
    )
    (column,) = [f for f in plan.flows if f.kind == "column"]
    assert column.description is not None and column.description.endswith(described)


def test_a_dataset_events_column_lineage_gives_table_and_column_flows_with_no_job() -> None:
    """Seed 001: "A DatasetEvent with a lineage facet gives table flows between datasets, with no
    job", and the columnLineage facet of an output is evidence of its column flows. A view's
    static lineage sent as a DatasetEvent with a ``columnLineage`` facet made nothing and said
    nothing; the same facet on a job's output made both flows."""
    lineage = builders.column_lineage_facet(
        {
            "id": [builders.input_field("db.s.src", "id")],
            "k2": [builders.input_field("db.s.src", "k")],
        }
    )
    plan = build(
        [
            builders.dataset_event("db.s.src", facets=builders.schema_facet("id", "k")),
            builders.dataset_event("db.s.view", facets=builders.schema_facet("id", "k2") | lineage),
        ],
        JobDefinition.from_dict(builders.definition_data(policy())),
    )
    (table,) = [f for f in plan.flows if f.kind == "table"]
    assert (table.source.entity.name, table.target.entity.name) == ("src", "view")
    assert table.scope.startswith("ol:dataset:") and table.scope.endswith("|db.s.view")
    assert table.description.startswith("Declared column lineage of the dataset")
    columns = {(f.source.field, f.target.field) for f in plan.flows if f.kind == "column"}
    assert columns == {("id", "id"), ("k", "k2")}


def test_a_dataset_events_lineage_facet_wins_over_its_column_lineage() -> None:
    """Seed 001's ranking, as on a job's output: a lineage facet beside a columnLineage one is
    the evidence; the columnLineage facet makes no second set of flows."""
    declared = builders.lineage_facet("db.s.a")
    columns = builders.column_lineage_facet({"id": [builders.input_field("db.s.b", "id")]})
    plan = build(
        [
            builders.dataset_event("db.s.a", facets=builders.schema_facet("id")),
            builders.dataset_event("db.s.b", facets=builders.schema_facet("id")),
            builders.dataset_event(
                "db.s.view", facets=builders.schema_facet("id") | declared | columns
            ),
        ],
        JobDefinition.from_dict(builders.definition_data(policy())),
    )
    assert {(f.source.entity.name, f.target.entity.name) for f in plan.flows} == {("a", "view")}


@pytest.mark.parametrize(
    ("run_inputs", "run_outputs", "flows"),
    [
        pytest.param(["db.s.a"], [], {("a", "b")}, id="a run that names only what it read"),
        pytest.param([], ["db.s.b"], {("a", "b")}, id="a run that names only what it wrote"),
        pytest.param(["db.s.c"], [], {("c", "b")}, id="the run's inputs, the design's output"),
        pytest.param(["db.s.c"], ["db.s.d"], {("c", "d")}, id="both sides: the run's alone"),
    ],
)
def test_a_run_that_names_one_side_only_takes_the_other_from_the_jobs_design(
    run_inputs: list[str], run_outputs: list[str], flows: set[tuple[str, str]]
) -> None:
    """docs/mapping-reference.md: "without inputs or outputs in those runs, the job's design (its
    latest JobEvent)". A JobEvent declaring ``a → b`` and a later run naming only its input made
    no flow at all, and nothing said so: the side a run leaves out is the design's."""
    design = builders.job_event(
        "etl.s",
        time=at(0),
        inputs=[builders.dataset("db.s.a")],
        outputs=[builders.dataset("db.s.b")],
    )
    run = builders.run_cycle(
        "etl.s",
        start_time=at(10),
        end_time=at(11),
        inputs=[builders.dataset(name) for name in run_inputs],
        outputs=[builders.dataset(name) for name in run_outputs],
    )
    plan = build([design, *run], JobDefinition.from_dict(builders.definition_data(policy())))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == flows


def test_one_column_lineage_facet_on_every_output_of_a_statement_proves_no_pairing() -> None:
    """Found with real Airflow: a task of three statements (a temporary table from ``orders``,
    ``totals`` from it joined with ``customers``, ``big`` from ``totals``) gets the column
    lineage of all three as one facet on both outputs. Read as each output's, it gave ``big`` a
    flow from ``customers`` and lost ``orders → totals``, with no gap. The inputs and outputs
    are the evidence (UNCORRELATED_IO); Blindata's analysis of the statement gives the columns."""
    merged = builders.column_lineage_facet(
        {
            "customer": [builders.input_field("db.s.customers", "name")],
            "total": [builders.input_field("db.s.tmp", "total")],  # the temporary table's
        }
    )
    sql = (
        "CREATE TEMP TABLE tmp AS SELECT * FROM s.orders; "
        "INSERT INTO s.totals ...; INSERT INTO s.big ..."
    )
    events = builders.run_cycle(
        "dag.transform",
        job_facets=builders.sql_facet(sql, "postgres"),
        inputs=[
            builders.dataset(name) for name in ("db.s.orders", "db.s.customers", "db.s.totals")
        ],
        outputs=[
            builders.dataset(name, facets=builders.schema_facet("customer", "total") | merged)
            for name in ("db.s.totals", "db.s.big")
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy())))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert ("orders", "totals") in table
    assert all(f.evidence == "io" for f in plan.flows if f.kind == "table")
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 1


TEMPORARY_SOURCES = {
    # real Airflow (MySQL provider, a probe): the temporary table as the parser reads it
    "mysql temporary": (
        "mysql://db:3306",
        "shop.orders",
        "dwh.big",
        "tmp_big",
        "CREATE TEMPORARY TABLE tmp_big AS SELECT id, amount FROM shop.orders;\n"
        "INSERT INTO dwh.big (id, amount) SELECT t.id, t.amount FROM tmp_big t;\n"
        "DROP TEMPORARY TABLE tmp_big",
    ),
    # ... and PostgreSQL's, which the provider names in the connection's default schema
    "postgres temp": (
        "postgres://db:5432",
        "pgshop.shop.orders",
        "pgshop.dwh.big",
        "pgshop.public.tmp_big",
        "CREATE TEMP TABLE tmp_big AS SELECT id, amount FROM shop.orders; "
        "INSERT INTO dwh.big SELECT id, amount FROM tmp_big",
    ),
    "sql server #temp": (
        "mssql://db:1433",
        "dwh.dbo.orders",
        "dwh.dbo.big",
        "dwh.dbo.#stage",
        "SELECT id, amount INTO #stage FROM dbo.orders; INSERT INTO dbo.big SELECT * FROM #stage",
    ),
    "a staging table made and dropped": (
        "postgres://db:5432",
        "dwh.s.orders",
        "dwh.s.big",
        "dwh.s.stage",
        "CREATE TABLE s.stage AS SELECT id, amount FROM s.orders; "
        "INSERT INTO s.big SELECT id, amount FROM s.stage; DROP TABLE IF EXISTS s.stage",
    ),
    "a CTE": (
        "postgres://db:5432",
        "dwh.s.orders",
        "dwh.s.big",
        "dwh.s.recent",
        "INSERT INTO s.big WITH recent AS (SELECT id, amount FROM s.orders) SELECT * FROM recent",
    ),
}


@pytest.mark.parametrize(
    ("namespace", "read", "written", "source", "sql"),
    list(TEMPORARY_SOURCES.values()),
    ids=list(TEMPORARY_SOURCES),
)
def test_a_table_the_statement_makes_for_itself_is_no_entity_and_no_flow(
    namespace: str, read: str, written: str, source: str, sql: str
) -> None:
    """Seed 001: flows join the datasets a job reads to those it writes. A source of the column
    lineage that the run did not read and that the job's own SQL makes for itself (a temporary
    table, a CTE, a table it drops again) exists only while the task runs: found with real
    Airflow (a probe), it was an entity (``tmp_big``, no schema; ``public.tmp_big`` on
    PostgreSQL) with a flow into the output. The run's input feeds the output instead."""
    events = builders.run_cycle(
        "dag.load",
        job_facets=builders.sql_facet(sql),
        inputs=[builders.dataset(read, namespace)],
        outputs=[
            builders.dataset(
                written,
                namespace,
                facets=builders.column_lineage_facet(
                    {
                        "id": [builders.input_field(source, "id", namespace)],
                        "amount": [builders.input_field(source, "amount", namespace)],
                    }
                ),
            )
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy("*"))))
    made = source.rsplit(".", 1)[-1]
    assert not [e.key.name for e in plan.entities if e.key.name.endswith(made)]
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert len(table) == 1
    ((source_entity, target_entity),) = table
    assert source_entity.endswith("orders") and target_entity.endswith("big")
    assert plan.report.counters["lineageSourcesMadeByTheStatement"] == 1


@pytest.mark.parametrize("drop_first", [True, False])
def test_a_staging_table_the_task_rebuilds_and_keeps_is_the_table_its_run_names(
    drop_first: bool,
) -> None:
    """Airflow's MySQL provider (a review): ``DROP TABLE IF EXISTS stage; CREATE TABLE stage AS
    … FROM orders; INSERT INTO big … FROM stage`` names ``shop.stage`` as input and output and
    the column lineage's ``stage`` bare: that is ``shop.stage`` (the DROP comes before the
    CREATE: the table is kept), not a table ``stage`` of no schema, nor one made for itself."""
    namespace = "mysql://db:3306"
    sql = "CREATE TABLE stage AS SELECT id FROM orders; INSERT INTO big SELECT id FROM stage"
    events = builders.run_cycle(
        "dag.rebuild",
        job_facets=builders.sql_facet(("DROP TABLE IF EXISTS stage; " if drop_first else "") + sql),
        inputs=[builders.dataset(name, namespace) for name in ("shop.orders", "shop.stage")],
        outputs=[
            builders.dataset(
                "shop.stage",
                namespace,
                facets=builders.column_lineage_facet(
                    {"id": [builders.input_field("orders", "id", namespace)]}
                ),
            ),
            builders.dataset(
                "shop.big",
                namespace,
                facets=builders.column_lineage_facet(
                    {"id": [builders.input_field("stage", "id", namespace)]}
                ),
            ),
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy("*"))))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == {("shop.orders", "shop.stage"), ("shop.stage", "shop.big")}
    assert "stage" not in {e.key.name for e in plan.entities}


@pytest.mark.parametrize("dialect", ["postgres", "snowflake"])
def test_a_cte_named_after_the_table_it_reads_leaves_that_table_a_source(dialect: str) -> None:
    """``INSERT INTO dwh.orders WITH orders AS (SELECT … FROM staging.orders …) SELECT … FROM
    orders``: openlineage-sql lists no input (the CTE shadows the table) and the column lineage
    names ``pgshop.staging.orders``, which the statement names with its schema: the table, not
    the CTE (a review found the flow lost)."""
    sql = (
        "INSERT INTO dwh.orders WITH orders AS (SELECT id, amount FROM staging.orders "
        "WHERE amount > 0) SELECT id, amount FROM orders"
    )
    lineage = {c: [builders.input_field("pgshop.staging.orders", c)] for c in ("id", "amount")}
    events = builders.run_cycle(
        "dag.load_orders",
        job_facets=builders.sql_facet(sql, dialect),
        inputs=[],
        outputs=[
            builders.dataset("pgshop.dwh.orders", facets=builders.column_lineage_facet(lineage))
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy("*"))))
    sources = {(f.source.entity.schema_, f.source.entity.name) for f in plan.flows}
    assert ("staging", "orders") in sources
    assert plan.report.counters.get("lineageSourcesMadeByTheStatement", 0) == 0


def test_a_table_the_statement_makes_and_keeps_is_a_source_as_named() -> None:
    """A table the SQL makes but neither drops nor makes temporary outlives the task: it is a
    table of the catalog, named as the facet names it (docs: "stays as named")."""
    sql = "CREATE TABLE s.stage AS SELECT id FROM s.orders; INSERT INTO s.big SELECT * FROM s.stage"
    events = builders.run_cycle(
        "dag.load",
        job_facets=builders.sql_facet(sql),
        inputs=[builders.dataset("dwh.s.orders")],
        outputs=[
            builders.dataset(
                "dwh.s.big",
                facets=builders.column_lineage_facet(
                    {"id": [builders.input_field("dwh.s.stage", "id")]}
                ),
            )
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy("*"))))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert ("stage", "big") in table


def test_an_indirect_input_of_every_column_is_described_once() -> None:
    """Seed 001: indirect inputs are described on the table flow with includeIndirect. Spark's
    per-field lineage names a join's key as an INDIRECT input of every output column: one note
    per column made a description of 70,000 characters on 300 columns (a probe). One note per
    input and kind, naming ten fields and counting the rest."""
    columns = [f"c{i}" for i in range(30)]
    join = {"type": "INDIRECT", "subtype": "JOIN"}
    lineage = builders.column_lineage_facet(
        {
            column: [
                builders.input_field("db.s.orders", column),
                builders.input_field("db.s.orders", "customer_id", transformations=[join]),
            ]
            for column in columns
        }
    )
    events = builders.run_cycle(
        "dag.wide",
        inputs=[
            builders.dataset("db.s.orders", facets=builders.schema_facet("customer_id", *columns))
        ],
        outputs=[builders.dataset("db.s.wide", facets=builders.schema_facet(*columns) | lineage)],
    )
    job = JobDefinition.from_dict(builders.definition_data(policy(), includeIndirect=True))
    (table,) = [f for f in build(events, job).flows if f.kind == "table"]
    assert table.description.count("Indirect:") == 1
    (note,) = [part for part in table.description.split(". ") if part.startswith("Indirect:")]
    assert note.startswith("Indirect: db.s.orders.customer_id into c0, c1, ")
    assert note.endswith(" and 20 more (INDIRECT/JOIN).")


def test_an_input_no_output_of_several_names_is_reported_uncorrelated() -> None:
    """Seed 001: "A table flow is always published", and where none can be "the gap is
    reported". A job that reads a lookup table no output's column lineage names, with several
    outputs, gives it no flow (which output it feeds is not proven): it said nothing of it."""
    outputs = [
        builders.dataset(
            f"db.s.out_{name}",
            facets=builders.schema_facet("id")
            | builders.column_lineage_facet({"id": [builders.input_field(f"db.s.{name}", "id")]}),
        )
        for name in ("a", "b")
    ]
    events = builders.run_cycle(
        "dag.split",
        inputs=[builders.dataset(f"db.s.{name}") for name in ("a", "b", "lookup")],
        outputs=outputs,
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy())))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == {("a", "out_a"), ("b", "out_b")}
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 1


def test_one_statements_lineage_on_two_outputs_is_each_outputs() -> None:
    """``INSERT INTO a SELECT id FROM src; INSERT INTO b SELECT id FROM src``: the facets are the
    same because the statements are, and each is its output's own (found by a review)."""
    lineage = builders.column_lineage_facet({"id": [builders.input_field("db.s.src", "id")]})
    events = builders.run_cycle(
        "dag.copy",
        job_facets=builders.sql_facet("INSERT INTO s.a ...; INSERT INTO s.b ...", "postgres"),
        inputs=[builders.dataset("db.s.src", facets=builders.schema_facet("id"))],
        outputs=[
            builders.dataset(name, facets=builders.schema_facet("id") | lineage)
            for name in ("db.s.a", "db.s.b")
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy())))
    columns = {(f.source.field, f.target.entity.name) for f in plan.flows if f.kind == "column"}
    assert columns == {("id", "a"), ("id", "b")}
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 0


@pytest.mark.parametrize("schemas", [True, False], ids=["with schemas", "without schemas"])
@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"x": ["db.s.t1"], "y": ["db.s.t2"]}, id="a field an output lacks"),
        pytest.param({"id": ["db.s.t1", "db.s.t2"]}, id="a field fed by two inputs"),
    ],
)
def test_one_facet_on_two_outputs_that_cannot_be_each_outputs_correlates_nothing(
    fields: dict[str, list[str]], schemas: bool
) -> None:
    """Without a schema facet nothing proves the facet is each output's own: the pairs it
    would give (``t2 → a``) were published as column lineage (found by a review)."""
    lineage = builders.column_lineage_facet(
        {
            target: [builders.input_field(name, target) for name in sources]
            for target, sources in fields.items()
        }
    )
    events = builders.run_cycle(
        "dag.two",
        job_facets=builders.sql_facet("INSERT INTO s.a ...; INSERT INTO s.b ...", "postgres"),
        inputs=[builders.dataset("db.s.t1"), builders.dataset("db.s.t2")],
        outputs=[
            builders.dataset("db.s.a", facets=builders.schema_facet(*fields) if schemas else {}),
            builders.dataset(
                "db.s.b", facets=builders.schema_facet(next(iter(fields))) if schemas else {}
            ),
        ],
    )
    for event in events:  # the same facet on both outputs, as Airflow's SQL operators send it
        for output in event["outputs"]:
            output["facets"].update(lineage)
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy())))
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 1


def test_a_column_lineage_facet_of_each_output_of_its_own_is_each_outputs() -> None:
    """Facets that differ from one output to the next say which input feeds which output."""
    events = builders.run_cycle(
        "dag.transform",
        job_facets=builders.sql_facet("INSERT INTO s.a ...; INSERT INTO s.b ...", "postgres"),
        inputs=[builders.dataset("db.s.x"), builders.dataset("db.s.y")],
        outputs=[
            builders.dataset(
                "db.s.a",
                facets=builders.schema_facet("id")
                | builders.column_lineage_facet({"id": [builders.input_field("db.s.x", "id")]}),
            ),
            builders.dataset(
                "db.s.b",
                facets=builders.schema_facet("id")
                | builders.column_lineage_facet({"id": [builders.input_field("db.s.y", "id")]}),
            ),
        ],
    )
    plan = build(events, JobDefinition.from_dict(builders.definition_data(policy())))
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == {("x", "a"), ("y", "b")}
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 0
