"""Data flows and orchestration flows (seed 001), each test named after the sentence it checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build, plan_of_fold
from airflow_blindata.mapper.fold import FoldBuilder
from airflow_blindata.mapper.fold.reading import read_events
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.scopes import MAX_SCOPE_LENGTH, job_scope
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY, KnownSystem
from tests import builders
from tests.builders import policy, run_event
from tests.mapper.helpers import flows, pairs

PG = "postgres://pv-db.halden.example:5432"
WAREHOUSE = "postgresql://warehouse:5432"
FACETS = Path(__file__).resolve().parent.parent / "fixtures" / "openlineage" / "facets"
RUN_1 = "019a1f3c-7b2e-7c41-9d0a-5e2f8b6c4a11"
DIRECT = [{"type": "DIRECT", "subtype": "IDENTITY"}]


def definition(**options: Any) -> JobDefinition:
    return builders.definition(policy("postgres://*", nameTemplate="{host}"), **options)


def ds(name: str, namespace: str = PG, **facets: Any) -> dict[str, Any]:
    return builders.dataset(name, namespace, facets=facets)


def event(
    job: str = "pv_weekly_signal.aggregate_ae_counts",
    *,
    run_id: str = RUN_1,
    namespace: str = "halden-airflow-prod",
    **options: Any,
) -> dict[str, Any]:
    """The seed 004 Halden example's run (its job, run, time and producer)."""
    return run_event(
        job,
        run_id=run_id,
        namespace=namespace,
        time="2026-10-26T06:14:52.318Z",
        producer="https://git.halden.example/platform/lineage-emitter/tree/v2.3.0",
        **options,
    )


# -- the seed 004 Halden example: a SQL job with a columnLineage facet ---------------------------

HALDEN_SQL = (
    "INSERT INTO pv.weekly_ae_counts SELECT r.product_code, t.term_name, date_trunc('week', "
    "r.received_on) AS week_start, count(r.case_id) AS case_count FROM pv.case_reports r JOIN "
    "ref.ae_terms t ON r.term_code = t.term_code WHERE r.is_serious GROUP BY 1, 2, 3"
)
COLUMN_LINEAGE = {
    "fields": {
        "term_name": {
            "inputFields": [
                {
                    "namespace": PG,
                    "name": "safety.ref.ae_terms",
                    "field": "term_name",
                    "transformations": [
                        {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}
                    ],
                }
            ]
        },
        "case_count": {
            "inputFields": [
                {
                    "namespace": PG,
                    "name": "safety.pv.case_reports",
                    "field": "case_id",
                    "transformations": [
                        {"type": "DIRECT", "subtype": "AGGREGATION", "masking": True}
                    ],
                }
            ]
        },
    },
    "dataset": [
        {
            "namespace": PG,
            "name": "safety.pv.case_reports",
            "field": "is_serious",
            "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
        },
        {
            "namespace": PG,
            "name": "safety.pv.case_reports",
            "field": "term_code",
            "transformations": [{"type": "INDIRECT", "subtype": "JOIN"}],
        },
    ],
}


def halden(include_indirect: bool = False) -> CatalogPlan:
    fields = [{"name": n} for n in ("product_code", "term_name", "week_start", "case_count")]
    return build(
        [
            event(
                inputs=[
                    ds(
                        "safety.pv.case_reports",
                        schema={"fields": [{"name": "case_id"}, {"name": "is_serious"}]},
                    ),
                    ds("safety.ref.ae_terms", schema={"fields": [{"name": "term_name"}]}),
                ],
                outputs=[
                    ds(
                        "safety.pv.weekly_ae_counts",
                        schema={"fields": fields},
                        columnLineage=COLUMN_LINEAGE,
                    )
                ],
                job_facets={"sql": {"query": HALDEN_SQL, "dialect": "postgres"}},
            )
        ],
        definition(includeIndirect=include_indirect),
    )


def test_halden_table_flows_for_every_proven_pair() -> None:
    assert pairs(halden()) == {
        ("case_reports", "weekly_ae_counts"),
        ("ae_terms", "weekly_ae_counts"),
    }


NAMES_ONLY_A = {
    "fields": {
        "y": {
            "inputFields": [
                {"namespace": PG, "name": "db.s.a", "field": "x", "transformations": DIRECT}
            ]
        }
    }
}
"""A columnLineage facet that names input ``a`` only, as Spark sends it when ``b`` is only
joined or filtered on (its dataset lineage is off by default)."""


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        pytest.param(
            ["db.s.out"],
            {("a", "out", "column_lineage"), ("b", "out", "io")},
            id="one output: the unnamed input feeds it",
        ),
        pytest.param(
            ["db.s.out", "db.s.out2"],
            {("a", "out", "column_lineage"), ("a", "out2", "column_lineage")},
            id="several outputs: which one it feeds is not known",
        ),
    ],
)
def test_a_table_flow_is_always_published_for_an_input_the_column_lineage_leaves_out(
    outputs: list[str], expected: set[tuple[str, str, str]]
) -> None:
    """Seed 001: "A table flow is always published." An input the run read and its output's
    columnLineage facet does not name gets the table flow of inputs and outputs."""
    schema = {"fields": [{"name": "x"}, {"name": "y"}]}
    plan = build(
        [
            event(
                inputs=[ds("db.s.a", schema=schema), ds("db.s.b", schema=schema)],
                outputs=[ds(name, schema=schema, columnLineage=NAMES_ONLY_A) for name in outputs],
            )
        ],
        definition(),
    )
    table = {(f.source.entity.name, f.target.entity.name, f.evidence) for f in flows(plan, "table")}
    assert table == expected
    assert pairs(plan, "column") == {("a.x", f"{name.rsplit('.', 1)[1]}.y") for name in outputs}


def test_halden_column_flows_only_from_direct_transformations() -> None:
    plan = halden()
    assert pairs(plan, "column") == {
        ("ae_terms.term_name", "weekly_ae_counts.term_name"),
        ("case_reports.case_id", "weekly_ae_counts.case_count"),
    }
    aggregation = next(f for f in flows(plan, "column") if f.target.field == "case_count")
    assert "DIRECT/AGGREGATION" in aggregation.description


def test_halden_sql_job_flows_stand_until_blindata_analyses_the_sql() -> None:
    plan = halden()
    assert len(plan.routines) == 1
    assert all(f.superseded_by_analysis for f in flows(plan, "column"))
    assert not any(f.superseded_by_analysis for f in flows(plan, "table"))


@pytest.mark.parametrize("include_indirect", [True, False])
def test_filters_and_joins_are_in_the_description_when_include_indirect_is_true(
    include_indirect: bool,
) -> None:
    plan = halden(include_indirect)
    (table,) = [f for f in flows(plan, "table") if f.source.entity.name == "case_reports"]
    described = "INDIRECT/FILTER" in table.description and "INDIRECT/JOIN" in table.description
    assert described is include_indirect
    assert not any(f.source.field == "is_serious" for f in flows(plan, "column"))


# -- evidence precedence --


def lineage_facet(
    output: str, inputs: list[dict[str, Any]], fields: dict[str, Any] | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"namespace": PG, "name": output, "type": "DATASET", "inputs": inputs}
    if fields:
        entry["fields"] = fields
    return {"lineage": {"entries": [entry]}}


def test_declared_field_lineage_wins_over_the_column_lineage_facet() -> None:
    declared = lineage_facet(
        "db.s.out",
        [{"namespace": PG, "name": "db.s.a", "type": "DATASET"}],
        {"y": {"inputs": [{"namespace": PG, "name": "db.s.a", "type": "DATASET", "field": "x"}]}},
    )
    column_lineage = {
        "fields": {"y": {"inputFields": [{"namespace": PG, "name": "db.s.b", "field": "z"}]}}
    }
    plan = build(
        [
            event(
                inputs=[ds("db.s.a"), ds("db.s.b")],
                outputs=[
                    ds("db.s.out", columnLineage=column_lineage, schema={"fields": [{"name": "y"}]})
                ],
                job_facets=declared,
            )
        ],
        definition(),
    )
    assert pairs(plan) == {("a", "out")}  # b is not in the declared lineage: no invented pair
    assert {f.evidence for f in plan.flows} == {"declared"}
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == 0


def test_a_dataset_level_lineage_facet_on_the_output_is_declared_lineage() -> None:
    facet = json.loads((FACETS / "LineageFacet__dataset-to-dataset.json").read_text())["lineage"]
    plan = build(
        [
            event(
                inputs=[ds("public.customers", WAREHOUSE, schema={"fields": [{"name": "id"}]})],
                outputs=[
                    ds(
                        "public.customer_ids",
                        WAREHOUSE,
                        lineage=facet,
                        schema={"fields": [{"name": "customer_id"}]},
                    )
                ],
            )
        ],
        definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}]),
    )
    assert pairs(plan) == {("customers", "customer_ids")}
    assert pairs(plan, "column") == {("customers.id", "customer_ids.customer_id")}


@pytest.mark.parametrize(
    ("inputs", "outputs", "gap"),
    [
        (["a", "b"], ["x", "y"], 1),
        (["a"], ["x", "y"], 1),
        (["a"], ["x", "y", "z"], 1),
        (["a", "b"], ["x"], 0),
        (["a"], ["x"], 0),
        ([], ["x", "y"], 0),
    ],
    ids=[
        "several-inputs-several-outputs",
        "one-input-two-outputs",
        "one-input-three-outputs",
        "one-output",
        "one-input-one-output",
        "no-input",
    ],
)
def test_uncorrelated_io_several_outputs_and_no_lineage_facet_all_pairs_were_published(
    inputs: list[str], outputs: list[str], gap: int
) -> None:
    """Seed 001's table: "UNCORRELATED_IO | Several outputs and no lineage facet: all input and
    output pairs were published." — with one input too (that it feeds every output is not
    proven); with one output the pairs are its inputs', and with no input there is no pair."""
    plan = build(
        [
            event(
                inputs=[ds(f"db.s.{n}") for n in inputs], outputs=[ds(f"db.s.{n}") for n in outputs]
            )
        ],
        definition(),
    )
    assert pairs(plan) == {(i, o) for i in inputs for o in outputs}
    assert flows(plan, "column") == []
    assert plan.report.gap_count(GapCode.UNCORRELATED_IO) == gap


def test_nested_fields_resolve_to_the_dotted_physical_field() -> None:
    schema = {"fields": [{"name": "window", "type": "struct", "fields": [{"name": "z_score"}]}]}
    column_lineage = {
        "fields": {
            "window.z_score": {
                "inputFields": [
                    {"namespace": PG, "name": "db.s.a", "field": "score", "transformations": DIRECT}
                ]
            }
        }
    }
    plan = build(
        [
            event(
                inputs=[ds("db.s.a", schema={"fields": [{"name": "score"}]})],
                outputs=[ds("db.s.out", schema=schema, columnLineage=column_lineage)],
            )
        ],
        definition(),
    )
    assert pairs(plan, "column") == {("a.score", "out.window.z_score")}


def test_a_column_flow_to_a_field_that_is_not_catalogued_is_dropped_and_reported() -> None:
    source = {"namespace": PG, "name": "db.s.a", "field": "x", "transformations": DIRECT}
    column_lineage = {"fields": {"missing": {"inputFields": [source]}}}
    created = build(
        [
            event(
                inputs=[ds("db.s.a", schema={"fields": [{"name": "x"}]})],
                outputs=[
                    ds("db.s.out", schema={"fields": [{"name": "y"}]}, columnLineage=column_lineage)
                ],
            )
        ],
        definition(),
    )
    assert flows(created, "column") == [] and pairs(created) == {("a", "out")}
    assert created.report.gap_count(GapCode.FIELD_NOT_CATALOGUED) == 1
    crawled = KnownSystem("Crawled", "u-1", ((NAMESPACE_PROPERTY, PG),))
    on_crawled = build(
        [event(inputs=[ds("db.s.a")], outputs=[ds("db.s.out", columnLineage=column_lineage)])],
        definition(systemPolicies=[]),
        [crawled],
    )
    assert pairs(on_crawled, "column") == {("a.x", "out.missing")}  # the sync checks Blindata


def test_a_flow_whose_end_maps_to_no_system_is_dropped_as_dangling() -> None:
    plan = build(
        [event(inputs=[ds("a.b.c", "mysql://nowhere:3306")], outputs=[ds("db.s.out")])],
        definition(),
    )
    assert plan.flows == [] or all(f.kind == "orchestration" for f in plan.flows)
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 1


# -- names and scopes --


def test_the_name_is_the_ends_then_the_job_and_the_scope_is_the_job_key() -> None:
    plan = build([event(inputs=[ds("db.s.a")], outputs=[ds("db.s.out")])], definition())
    (flow,) = plan.flows
    assert flow.name == "s.a -> s.out @halden-airflow-prod/pv_weekly_signal.aggregate_ae_counts"
    assert flow.scope == "ol:halden-airflow-prod|pv_weekly_signal.aggregate_ae_counts"
    assert flow.description.startswith(
        "Observed from the job's inputs and outputs, by https://git.halden"
    )


def test_a_name_longer_than_the_limit_is_shortened_and_ends_with_a_hash() -> None:
    long_job = "j" * 300
    plan = build([event(long_job, inputs=[ds("db.s.a")], outputs=[ds("db.s.out")])], definition())
    (flow,) = plan.flows
    assert len(flow.name) == 255 and flow.name[-13] == "~"
    assert len(flow.scope) <= MAX_SCOPE_LENGTH and flow.scope.startswith("ol:halden-airflow-prod|")


def test_the_same_events_give_byte_identical_names_and_scopes() -> None:
    events = [event(inputs=[ds("db.s.a"), ds("db.s.b")], outputs=[ds("db.s.x"), ds("db.s.y")])]
    first, second = build(events, definition()), build(list(reversed(events * 2)), definition())
    assert [(f.scope, f.name) for f in first.flows] == [(f.scope, f.name) for f in second.flows]


namespaces = st.text(
    st.sampled_from("a|%7C") | st.characters(blacklist_categories=("Cs",)),
    min_size=1,
    max_size=120,
)
names = st.text(
    st.sampled_from("a|%") | st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
)


@given(namespaces, names, namespaces, names)
def test_the_scopes_of_two_namespaces_never_overlap(ns1: str, n1: str, ns2: str, n2: str) -> None:
    """Seed 001: "A job namespace never contains |, so the scopes of two namespaces never
    overlap": also when a producer's namespace has one (``a|b`` and ``c`` against ``a`` and
    ``b|c``)."""
    s1, s2 = job_scope(ns1, n1), job_scope(ns2, n2)
    assert (
        len(s1) <= MAX_SCOPE_LENGTH
        and len(job_scope(ns1, n1, orchestration=True)) <= MAX_SCOPE_LENGTH
    )
    if ns1 != ns2 and len(ns1) < 200 and len(ns2) < 200:
        assert not s1.startswith(job_scope(ns2, ""))  # the prefix of ns2's scopes
        assert s1 != s2


@pytest.mark.parametrize(
    ("namespace", "name", "scope"),
    [
        ("halden-airflow-prod", "load", "ol:halden-airflow-prod|load"),
        ("a|b", "c", "ol:a%7Cb|c"),
        ("a", "b|c", "ol:a|b|c"),
        ("a%7Cb", "c", "ol:a%257Cb|c"),
    ],
)
def test_a_namespace_with_a_bar_is_written_without_it_in_the_scope(
    namespace: str, name: str, scope: str
) -> None:
    assert job_scope(namespace, name) == scope


def test_two_jobs_split_differently_at_a_bar_keep_their_own_flows_and_checks() -> None:
    """The jobs ``a|b``/``c`` and ``a``/``b|c`` had the one scope ``ol:a|b|c``: one check for
    both jobs' test ``t`` on the entity of one of them, with both jobs' results, and a cleanup
    (which removes by scope) of one definition removed the other's flows."""
    tests = {"test": {"tests": [{"name": "t", "status": "pass"}]}}
    events = [
        event(
            job,
            namespace=namespace,
            run_id=f"00000000-0000-4000-8000-00000000000{i}",
            inputs=[ds(f"db.s.in{i}")],
            outputs=[ds(f"db.s.out{i}")],
            run_facets=tests,
        )
        for i, (namespace, job) in enumerate([("a|b", "c"), ("a", "b|c")])
    ]
    plan = build(events, definition())
    assert sorted({flow.scope for flow in plan.flows}) == ["ol:a%7Cb|c", "ol:a|b|c"]
    assert plan.quality is not None
    assert sorted((c.code, c.entity.schema_, c.entity.name) for c in plan.quality.checks) == [
        ("ol:ol:a%7Cb|c:test:t", "a|b", "c"),
        ("ol:ol:a|b|c:test:t", "a", "b|c"),
    ]


# -- orchestration --


def parent_facet(job: str = "pv_weekly_signal") -> dict[str, Any]:
    return {
        "parent": {
            "run": {"runId": "019a1f3b-f0c2-7a55-8e31-2c9d07b4e6f2"},
            "job": {"namespace": "halden-airflow-prod", "name": job},
        }
    }


def dag_event(
    tasks: dict[str, list[str]] | None = None, event_type: str = "COMPLETE"
) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if tasks is not None:
        facets["airflow"] = {
            "taskTree": {},
            "taskGroups": {},
            "tasks": {t: {"operator": "x", "downstream_task_ids": d} for t, d in tasks.items()},
        }
    return event(
        "pv_weekly_signal",
        job_facets=facets,
        run_id="019a1f3b-f0c2-7a55-8e31-2c9d07b4e6f2",
        event_type=event_type,
    )


def test_a_parent_run_facet_gives_a_parent_to_child_orchestration_flow() -> None:
    plan = build([dag_event(), event(run_facets=parent_facet())], definition())
    (flow,) = flows(plan, "orchestration")
    assert (flow.source.entity.name, flow.target.entity.name) == (
        "pv_weekly_signal",
        "pv_weekly_signal.aggregate_ae_counts",
    )
    assert flow.scope.endswith("#orchestration") and flow.name.endswith("@orchestration")
    assert flow.description.startswith("Orchestration")


@pytest.mark.parametrize("state", ["START", "RUNNING", "FAIL", "ABORT"])
def test_orchestration_flows_are_published_only_from_completed_runs(state: str) -> None:
    plan = build([dag_event(), event(run_facets=parent_facet(), event_type=state)], definition())
    assert flows(plan, "orchestration") == []


def test_job_dependencies_give_upstream_to_downstream_flows() -> None:
    dependencies = {
        "jobDependencies": {
            "upstream": [{"job": {"namespace": "halden-airflow-prod", "name": "load"}}],
            "downstream": [{"job": {"namespace": "halden-airflow-prod", "name": "report"}}],
        }
    }
    plan = build(
        [
            event("load", run_id="r-load"),
            event("report", run_id="r-report"),
            event("middle", run_facets=dependencies),
        ],
        definition(),
    )
    assert pairs(plan, "orchestration") == {("load", "middle"), ("middle", "report")}


def job_dependencies(*, upstream: str | None = None, downstream: str | None = None) -> Any:
    facet: dict[str, Any] = {}
    if upstream is not None:
        facet["upstream"] = [{"job": {"namespace": "halden-airflow-prod", "name": upstream}}]
    if downstream is not None:
        facet["downstream"] = [{"job": {"namespace": "halden-airflow-prod", "name": downstream}}]
    return {"jobDependencies": facet}


@pytest.mark.parametrize(
    ("extract", "load", "scope"),
    [
        pytest.param({"downstream": "load"}, {"upstream": "extract"}, "load", id="both-report-it"),
        pytest.param({"downstream": "load"}, {}, "extract", id="only-the-upstream-job"),
        pytest.param({}, {"upstream": "extract"}, "load", id="only-the-downstream-job"),
    ],
)
def test_a_job_dependency_both_jobs_report_is_one_orchestration_flow(
    extract: dict[str, str], load: dict[str, str], scope: str
) -> None:
    """Seed 001: "jobDependencies run facet — Upstream job to downstream job". A dependency that
    the upstream job reports as ``downstream`` and the downstream job as ``upstream`` was two
    flows of the same ends, one in each job's scope; it is the downstream job's."""
    plan = build(
        [
            event("extract", run_id="r-extract", run_facets=job_dependencies(**extract)),
            event("load", run_id="r-load", run_facets=job_dependencies(**load)),
        ],
        definition(),
    )
    (flow,) = flows(plan, "orchestration")
    assert (flow.source.entity.name, flow.target.entity.name) == ("extract", "load")
    assert flow.scope == f"ol:halden-airflow-prod|{scope}#orchestration"


def test_the_airflow_task_graph_gives_task_to_task_flows() -> None:
    tasks = [event(f"pv_weekly_signal.{t}", run_id=f"r-{t}") for t in ("extract", "load", "check")]
    plan = build(
        [dag_event({"extract": ["load"], "load": ["check"], "check": []}), *tasks], definition()
    )
    assert pairs(plan, "orchestration") == {
        ("pv_weekly_signal.extract", "pv_weekly_signal.load"),
        ("pv_weekly_signal.load", "pv_weekly_signal.check"),
    }
    assert {f.scope for f in flows(plan, "orchestration")} == {
        "ol:halden-airflow-prod|pv_weekly_signal#orchestration"
    }


def test_a_task_that_emits_no_events_is_passed_through_not_unresolved() -> None:
    """``a >> gate >> b`` with ``gate`` an EmptyOperator: the DAG's facet says it emits no
    events (``emits_ol_events: false``), so it never becomes a job entity. Its link stayed
    UNRESOLVED_ORCHESTRATION_TARGET at every sync and ``a`` and ``b`` were not joined (a probe
    of schedulers): ``a`` links to ``b`` through it."""
    dag = dag_event({"a": ["gate"], "gate": ["b"], "b": []})
    dag["job"]["facets"]["airflow"]["tasks"]["gate"]["emits_ol_events"] = False
    tasks = [event(f"pv_weekly_signal.{t}", run_id=f"r-{t}") for t in ("a", "b")] + [
        _task_run("a", "['gate']")
    ]
    plan = build([dag, *tasks], definition())
    assert pairs(plan, "orchestration") == {("pv_weekly_signal.a", "pv_weekly_signal.b")}
    assert GapCode.UNRESOLVED_ORCHESTRATION_TARGET not in plan.report.gaps
    (flow,) = flows(plan, "orchestration")
    assert "through tasks that emit no events" in (flow.description or "")


def test_a_task_marked_silent_that_emitted_all_the_same_keeps_its_links() -> None:
    """The DAG changed (or its facet is old): ``gate`` is marked ``emits_ol_events: false`` but
    has runs of its own. It is a job entity: ``a → gate → b``, not ``a → b`` (a review)."""
    dag = dag_event({"a": ["gate"], "gate": ["b"], "b": []})
    dag["job"]["facets"]["airflow"]["tasks"]["gate"]["emits_ol_events"] = False
    tasks = [event(f"pv_weekly_signal.{t}", run_id=f"r-{t}") for t in ("a", "gate", "b")]
    plan = build([dag, *tasks], definition())
    assert pairs(plan, "orchestration") == {
        ("pv_weekly_signal.a", "pv_weekly_signal.gate"),
        ("pv_weekly_signal.gate", "pv_weekly_signal.b"),
    }


@pytest.mark.parametrize(("width", "after"), [(60, 60), (60, 5)], ids=["wide", "fan-in"])
def test_a_barrier_between_wide_stages_makes_no_pair_of_every_task(width: int, after: int) -> None:
    """``[x0 … x59] >> barrier >> [y0 … y59]``, the barrier an EmptyOperator: linking through it
    would give 3,600 flows (300 with five after it); past 50 links through one task they are
    counted, not made (reviews)."""
    graph = {f"x{i}": ["barrier"] for i in range(width)}
    graph["barrier"] = [f"y{i}" for i in range(after)]
    graph.update({f"y{i}": [] for i in range(after)})
    dag = dag_event(graph)
    dag["job"]["facets"]["airflow"]["tasks"]["barrier"]["emits_ol_events"] = False
    tasks = [event(f"pv_weekly_signal.{t}", run_id=f"r-{t}") for t in graph if t != "barrier"]
    plan = build([dag, *tasks], definition())
    assert pairs(plan, "orchestration") == set()
    assert plan.report.counters["orchestrationThroughSkipped"] == width
    assert GapCode.UNRESOLVED_ORCHESTRATION_TARGET not in plan.report.gaps


def _task_run(task: str, downstream: Any, event_type: str = "COMPLETE") -> dict[str, Any]:
    """A task's run as the Airflow provider sends it: its ``airflow`` run facet names the DAG
    and the task's ``downstream_task_ids`` (the text of a Python list)."""
    airflow = {
        "dag": {"dag_id": "pv_weekly_signal"},
        "dagRun": {"dag_id": "pv_weekly_signal", "run_id": "manual"},
        "task": {"task_id": task, "downstream_task_ids": downstream},
        "taskInstance": {"try_number": 1},
    }
    return event(
        f"pv_weekly_signal.{task}",
        run_id=f"r-{task}",
        run_facets={"airflow": airflow},
        event_type=event_type,
    )


def test_the_downstream_task_ids_of_a_tasks_run_give_task_to_task_flows() -> None:
    plan = build([_task_run("extract", "['load']"), _task_run("load", "[]")], definition())
    assert pairs(plan, "orchestration") == {("pv_weekly_signal.extract", "pv_weekly_signal.load")}


def test_a_task_that_only_failed_still_gives_its_edges_of_the_task_graph() -> None:
    """Without the DAG's START (``dag.test()``, ``emit_dag_events: false`` in the provider's
    emission policy) the graph is read from the task runs; it was read from completed runs only,
    so the edges of a task that had only failed (``check`` → ``report``, and the teardown after
    a failed task) were missing, where the DAG's START gives them all. The graph is the DAG's
    description, not an observation (seed 001: orchestration flows come from completed runs,
    "and the Airflow task graph from the job description")."""
    plan = build(
        [
            _task_run("extract", "['check']"),
            _task_run("check", "['report']", event_type="FAIL"),
            _task_run("report", "[]"),
        ],
        definition(),
    )
    assert pairs(plan, "orchestration") == {
        ("pv_weekly_signal.extract", "pv_weekly_signal.check"),
        ("pv_weekly_signal.check", "pv_weekly_signal.report"),
    }


@pytest.mark.parametrize(
    "downstream",
    ["[" + "-" * 5000 + "1]", "[" + "-" * 50000 + "1]", "{['load']}", "load", "[1, 2"],
    ids=["nested too deep", "nested deeper", "a set of lists", "no list", "unclosed"],
)
def test_downstream_task_ids_that_are_no_list_give_no_flow_and_stop_nothing(
    downstream: str,
) -> None:
    """One malformed event must never stop a sync: the text was read with ``literal_eval``,
    which raises ``RecursionError`` (``MemoryError`` deeper, ``TypeError`` for a set of lists)
    beyond the errors caught, and the mapping of every snapshot stopped on it."""
    plan = build([_task_run("extract", downstream), _task_run("load", "[]")], definition())
    assert flows(plan, "orchestration") == []
    assert {e.key.name for e in plan.entities} >= {
        "pv_weekly_signal.extract",
        "pv_weekly_signal.load",
    }


def test_a_target_job_that_is_not_a_job_entity_is_unresolved() -> None:
    plan = build(
        [dag_event({"extract": ["never_ran"]}), event("pv_weekly_signal.extract", run_id="r")],
        definition(),
    )
    assert flows(plan, "orchestration") == []
    assert plan.report.gap_count(GapCode.UNRESOLVED_ORCHESTRATION_TARGET) == 1


def test_no_orchestration_flows_without_the_process_layer() -> None:
    plan = build([dag_event(), event(run_facets=parent_facet())], definition(processLayer=False))
    assert flows(plan, "orchestration") == []


def test_a_lineage_facet_with_job_entries_gives_job_to_job_data_flows() -> None:
    facet = json.loads((FACETS / "LineageFacet__job-to-job.json").read_text())
    events = [
        event("daily.transform", namespace="airflow://production", run_id="r-t"),
        event("daily.load", namespace="airflow://production", job_facets=facet, run_id="r-l"),
    ]
    plan = build(events, definition())
    (flow,) = plan.flows
    assert (flow.kind, flow.evidence) == ("table", "declared")
    assert (flow.source.entity.name, flow.target.entity.name) == ("daily.transform", "daily.load")
    assert not flow.scope.endswith("#orchestration")


def test_a_job_entry_without_name_is_the_events_own_job() -> None:
    facet = json.loads((FACETS / "LineageFacet__implicit-job.json").read_text())
    plan = build(
        [event("validate", job_facets=facet)],
        definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}]),
    )
    assert pairs(plan) == {("transactions", "validate")}


@pytest.mark.parametrize(
    ("fixture", "include_indirect", "source", "target", "text"),
    [
        pytest.param(
            "generator",
            False,
            "extract",
            "extracted_data",
            "Transformations into total: DIRECT/AGGREGATION: sum().",
            id="a-job-generating-a-field",
        ),
        pytest.param(
            "dataset-to-job",
            True,
            "staging_orders",
            "daily.load",
            "Indirect: public.staging_orders.order_id (whole dataset) (INDIRECT/FILTER).",
            id="a-filter-into-a-job-with-include-indirect",
        ),
        pytest.param(
            "mixed-sources",
            False,
            "daily.enrichment",
            "enriched_orders",
            "Transformations into customer_segment: DIRECT/TRANSFORMATION.",
            id="a-job-transforming-a-field",
        ),
    ],
)
def test_a_flow_with_a_job_at_one_end_describes_its_transformations(
    fixture: str, include_indirect: bool, source: str, target: str, text: str
) -> None:
    """Seed 001, "Description: the evidence (declared, observed, analyzed), the producer, and the
    descriptions of the transformations. Filters and joins are in the description when
    includeIndirect is true." The flows the lineage facet's JOB entries and inputs give named
    neither (the spec's examples: a job that generates ``total`` by ``sum()``, a filter on
    ``order_id`` into a job)."""
    facet = json.loads((FACETS / f"LineageFacet__{fixture}.json").read_text())
    events = [
        event("daily.enrichment", namespace="airflow://production", run_id="r-e"),
        event("daily.load", namespace="airflow://production", run_id="r-l"),
        event("extract", namespace="airflow://production", job_facets=facet, run_id="r-x"),
    ]
    plan = build(
        events,
        definition(
            includeIndirect=include_indirect,
            systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}],
        ),
    )
    (flow,) = [
        f
        for f in flows(plan, "table")
        if (f.source.entity.name, f.target.entity.name) == (source, target)
    ]
    assert flow.evidence == "declared"
    assert flow.description.endswith(text)


def test_a_dataset_event_with_a_lineage_facet_gives_table_flows_with_no_job() -> None:
    facet = json.loads((FACETS / "LineageFacet__dataset-to-dataset.json").read_text())["lineage"]
    dataset_event = {
        "eventTime": "2026-11-29T10:00:00Z",
        "producer": "https://example.com/catalog",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": WAREHOUSE,
            "name": "public.customer_ids",
            "facets": {"lineage": facet},
        },
    }
    plan = build(
        [dataset_event],
        definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}]),
    )
    (flow,) = flows(plan, "table")
    assert flow.evidence == "dataset_event" and "@" not in flow.name
    assert flow.scope == "ol:dataset:postgres://warehouse:5432|public.customer_ids"


# -- producer limits --


@pytest.mark.parametrize(
    ("facet", "code"),
    [
        (
            {
                "unknownSourceAttribute": {
                    "unknownItems": [{"name": "MyOperator", "properties": {}}]
                }
            },
            GapCode.PRODUCER_NO_LINEAGE,
        ),
        (
            {
                "extractionError": {
                    "totalTasks": 2,
                    "failedTasks": 1,
                    "errors": [{"errorMessage": "x"}],
                }
            },
            GapCode.PRODUCER_PARTIAL_LINEAGE,
        ),
    ],
)
def test_producer_limits_are_reported(facet: dict[str, Any], code: GapCode) -> None:
    plan = build([event(run_facets=facet)], definition())
    assert plan.report.gap_count(code) == 1


def test_an_extraction_error_facet_with_no_failed_task_reports_no_partial_lineage() -> None:
    """Seed 001: PRODUCER_PARTIAL_LINEAGE is "the producer could not handle everything": a facet
    that counts two tasks, none failed, and lists no error says it could."""
    handled = {"extractionError": {"totalTasks": 2, "failedTasks": 0, "errors": []}}
    plan = build([event(run_facets=handled)], definition())
    assert plan.report.gap_count(GapCode.PRODUCER_PARTIAL_LINEAGE) == 0


def test_a_task_whose_hooks_queries_carry_its_lineage_has_no_lineage_gap() -> None:
    """A ``@task`` that runs SQL through a hook: Airflow sends ``unknownSourceAttribute`` for the
    task and the lineage on its queries' child jobs (``<task>.query.N``, whose ``parent`` is the
    task's run), which the plan maps. Its lineage is not missing (found with real Airflow)."""
    unknown = {"unknownSourceAttribute": {"unknownItems": [{"name": "_PythonDecoratedOperator"}]}}
    query = event(
        "dag.hook_task.query.1",
        run_id="0190b1c2-0000-7000-8000-0000000000aa",
        run_facets=builders.parent_facet("dag.hook_task", RUN_1, "halden-airflow-prod"),
        inputs=[ds("public.a")],
        outputs=[ds("public.b")],
    )
    plan = build([event("dag.hook_task", run_facets=unknown), query], definition())
    assert pairs(plan) == {("a", "b")}
    assert plan.report.gap_count(GapCode.PRODUCER_NO_LINEAGE) == 0


def test_an_operator_without_extractor_whose_run_has_datasets_has_no_lineage_gap() -> None:
    """Airflow sends ``unknownSourceAttribute`` for every operator it has no extractor for, also
    when the task's hand-written inlets and outlets give its datasets: its lineage is then not
    missing, and no gap says it is."""
    unknown = {"unknownSourceAttribute": {"unknownItems": [{"name": "PythonOperator"}]}}
    plan = build(
        [event(run_facets=unknown, inputs=[ds("public.a")], outputs=[ds("public.b")])],
        definition(),
    )
    assert pairs(plan) == {("a", "b")}
    assert plan.report.gap_count(GapCode.PRODUCER_NO_LINEAGE) == 0


@pytest.mark.parametrize(
    ("transformation", "is_flow"),
    [
        ({"type": "DIRECT", "subtype": "IDENTITY"}, True),
        ({"type": "DIRECT", "subtype": "TRANSFORMATION"}, True),
        ({"type": "DIRECT", "subtype": "AGGREGATION"}, True),
        ({"type": "INDIRECT", "subtype": "JOIN"}, False),
        ({"type": "INDIRECT", "subtype": "GROUP_BY"}, False),
        ({"type": "INDIRECT", "subtype": "FILTER"}, False),
        ({"type": "INDIRECT", "subtype": "SORT"}, False),
        ({"type": "INDIRECT", "subtype": "WINDOW"}, False),
        ({"type": "INDIRECT", "subtype": "CONDITIONAL"}, False),
    ],
)
@pytest.mark.parametrize("facet", ["columnLineage", "lineage"])
def test_only_direct_transformations_make_column_flows(
    transformation: dict[str, str], is_flow: bool, facet: str
) -> None:
    source = {"namespace": PG, "name": "db.s.a", "field": "x", "transformations": [transformation]}
    if facet == "columnLineage":
        facets: dict[str, Any] = {"columnLineage": {"fields": {"y": {"inputFields": [source]}}}}
        job_facets: dict[str, Any] = {}
    else:
        facets = {}
        job_facets = lineage_facet(
            "db.s.out", [], {"y": {"inputs": [{**source, "type": "DATASET"}]}}
        )
    plan = build(
        [
            event(
                inputs=[ds("db.s.a", schema={"fields": [{"name": "x"}]})],
                outputs=[ds("db.s.out", schema={"fields": [{"name": "y"}]}, **facets)],
                job_facets=job_facets,
            )
        ],
        definition(),
    )
    assert pairs(plan) == {("a", "out")}  # the table flow is always published
    assert pairs(plan, "column") == ({("a.x", "out.y")} if is_flow else set())


@pytest.mark.parametrize(
    ("fixture", "table_flows", "column_flows"),
    [
        (
            "mixed-sources",
            {("orders", "enriched_orders"), ("daily.enrichment", "enriched_orders")},
            set(),  # orders.customer_id names no transformation: described, not a column flow
        ),
        ("job-to-dataset", {("daily.extract", "daily_summary")}, set()),
        ("dataset-to-job", {("staging_orders", "daily.load")}, set()),
        ("job-to-job", {("daily.transform", "daily.load")}, set()),
        ("implicit-job", {("transactions", "daily.load")}, set()),
        ("generator", {("daily.load", "extracted_data")}, set()),
    ],
)
def test_the_lineage_facet_examples_of_the_spec(
    fixture: str, table_flows: set[tuple[str, str]], column_flows: set[tuple[str, str]]
) -> None:
    facet = json.loads((FACETS / f"LineageFacet__{fixture}.json").read_text())
    jobs = [
        event(name, namespace="airflow://production", run_id=f"r-{name}")
        for name in ("daily.transform", "daily.extract", "daily.enrichment")
    ]
    schema = {"fields": [{"name": "customer_id"}, {"name": "customer_segment"}]}
    datasets = [
        ds(name, WAREHOUSE, schema=schema) for name in ("public.orders", "public.enriched_orders")
    ]
    main = event("daily.load", namespace="airflow://production", job_facets=facet, outputs=datasets)
    plan = build(
        [*jobs, main],
        definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}]),
    )
    declared = [f for f in plan.flows if f.evidence == "declared"]
    assert {
        (f.source.entity.name, f.target.entity.name) for f in declared if f.kind == "table"
    } == table_flows
    assert {
        (f"{f.source.entity.name}.{f.source.field}", f"{f.target.entity.name}.{f.target.field}")
        for f in declared
        if f.kind == "column"
    } == column_flows


# -- Airflow dynamic task mapping --


def test_each_instance_of_a_mapped_task_gives_its_own_lineage() -> None:
    """``FileCopy.partial(...).expand_kwargs([...])``: one job, three runs of one DAG run (one
    per map index), each reading and writing its own file, as the provider sends them."""
    dag_run = "0190b1c2-0000-7000-8000-0000000000aa"
    events = []
    for index in range(3):
        facets = {
            **builders.parent_facet("etl", dag_run, namespace="airflow"),
            "airflow_mappedTask": builders.facet("RunFacet", mapIndex=index),
        }
        for second, kind in ((index * 2, "START"), (index * 2 + 1, "COMPLETE")):
            events.append(
                run_event(
                    "etl.copy",
                    event_type=kind,
                    run_id=f"0190b1c2-0000-7000-8000-00000000000{index}",
                    time=builders.at(second),
                    run_facets=facets,
                    inputs=[ds(f"public.in_{index}")],
                    outputs=[ds(f"public.out_{index}")],
                )
            )
    plan = build(events, definition())
    assert pairs(plan) == {(f"in_{index}", f"out_{index}") for index in range(3)}


def _mapped_dag_runs(second: list[dict[int, str]]) -> list[dict[str, Any]]:
    """A task mapped over three instances, each copying ``in_<i>`` to ``out_<i>``: a first DAG
    run in which all three complete, then a second in which each instance ``second`` names sends
    those events (an instance it leaves out does not run)."""
    events = []
    for number, states in enumerate([dict.fromkeys(range(3), "START COMPLETE"), *second]):
        dag_run = f"0190b1c2-0000-7000-8000-0000000001{number}0"
        for index, kinds in states.items():
            facets = {
                **builders.parent_facet("etl", dag_run, namespace="airflow"),
                "airflow": {"taskInstance": {"try_number": 1, "map_index": index}},
            }
            for step, kind in enumerate(kinds.split()):
                events.append(
                    run_event(
                        "etl.copy",
                        event_type=kind,
                        run_id=f"0190b1c2-0000-7000-8000-0000000001{number}{index}",
                        time=builders.at(10 * index + step, minute=number),
                        run_facets=facets,
                        inputs=[ds(f"public.in_{index}")],
                        outputs=[ds(f"public.out_{index}")],
                    )
                )
    return events


@pytest.mark.parametrize(
    ("second", "described"),
    [
        pytest.param(
            {0: "START COMPLETE", 1: "START COMPLETE", 2: "START FAIL"},
            {0, 1, 2},
            id="an-instance-failed",
        ),
        pytest.param(
            {0: "START COMPLETE", 1: "START COMPLETE", 2: "START"},
            {0, 1, 2},
            id="an-instance-goes-on",
        ),
        pytest.param(
            {0: "START COMPLETE", 2: "START FAIL"},
            {0, 2},
            id="the-map-shrank-and-an-instance-failed",
        ),
        pytest.param({0: "START COMPLETE", 1: "START COMPLETE"}, {0, 1}, id="the-map-shrank"),
        pytest.param(
            {0: "START FAIL", 1: "START FAIL", 2: "START COMPLETE"},
            {0, 1, 2},
            id="two-instances-failed",
        ),
    ],
)
def test_a_failed_instance_of_a_mapped_task_keeps_the_lineage_it_completed_before(
    second: dict[int, str], described: set[int]
) -> None:
    """Seed 000: "every run uploads again [...] the flows it describes [...] which is how the job
    tells what is still described"; a run that failed does not replace the run a task completed
    before, and neither does one instance's failed run the flows it completed in an earlier DAG
    run (the cleanup removed them: found by a probe through real Airflow). An instance that no
    longer runs (the map shrank) describes nothing."""
    plan = build(_mapped_dag_runs([second]), definition())
    assert pairs(plan) == {(f"in_{index}", f"out_{index}") for index in described}


KAFKA = "kafka://kafka-broker-1:9092"


@pytest.mark.parametrize(
    ("processing_type", "second_run", "expected"),
    [
        # a Flink job redeployed (stop-with-savepoint: COMPLETE), its new run streaming since
        ("STREAMING", ["START", "RUNNING"], {("orders", "orders_v2")}),
        ("STREAMING", ["START"], {("orders", "orders_v2")}),
        ("STREAMING", ["START", "RUNNING", "FAIL"], {("orders", "orders_v2")}),
        ("STREAMING", ["START", "RUNNING", "COMPLETE"], {("orders", "orders_v2")}),
        # a service: "services emit START followed by RUNNING events" (seed 004), and the
        # JobTypeJobFacet schema: "STREAMING and SERVICE jobs are continuous with no natural
        # completion point"; a SERVICE job kept the lineage of its run that had ended
        ("SERVICE", ["START", "RUNNING"], {("orders", "orders_v2")}),
        ("service", ["START"], {("orders", "orders_v2")}),
        # a batch job: a run still going does not replace what the completed run proved
        ("BATCH", ["START", "RUNNING"], {("orders", "orders_v1")}),
        ("BATCH", ["START", "RUNNING", "FAIL"], {("orders", "orders_v1")}),
    ],
)
def test_for_streaming_jobs_terminal_events_should_not_be_relied_upon(
    processing_type: str, second_run: list[str], expected: set[tuple[str, str]]
) -> None:
    """Seed 004: "For streaming jobs, terminal events occur only on restarts and 'should not be
    relied upon'; events are periodic snapshots" — the data flows of a STREAMING job come from
    its latest run, not from an older run that happened to end in COMPLETE."""
    job_facets = builders.job_type_facet("JOB", "FLINK", processing_type)
    events = []
    runs = [("0190b1c2-0000-7000-8000-0000000000f1", ["START", "RUNNING", "COMPLETE"], "v1")]
    runs.append(("0190b1c2-0000-7000-8000-0000000000f2", second_run, "v2"))
    minute = 0
    for run_id, states, version in runs:
        for state in states:
            minute += 1
            events.append(
                run_event(
                    "orders_enrichment",
                    namespace="flink-jobs",
                    event_type=state,
                    run_id=run_id,
                    time=builders.at(0, minute=minute),
                    job_facets=job_facets,
                    inputs=[ds("orders", KAFKA)],
                    outputs=[ds(f"orders_{version}", KAFKA)],
                )
            )
    plan = build(events, builders.definition(policy("kafka://*")))
    assert pairs(plan) == expected


@pytest.mark.parametrize(
    "restart",
    [
        pytest.param(["START"], id="restarted, no dataset named yet"),
        pytest.param(["START", "FAIL"], id="a crash loop naming none"),
        pytest.param(["START", "RUNNING"], id="running, its datasets not extracted"),
    ],
)
@pytest.mark.parametrize("retain", [False, True], ids=["every run", "a snapshot's fold"])
def test_a_streaming_job_restarted_keeps_its_lineage_until_its_new_run_names_datasets(
    restart: list[str], retain: bool
) -> None:
    """Seed 004: for streaming jobs "terminal events occur only on restarts and should not be
    relied upon; events are periodic snapshots". A Flink job ended ABORT and restarted: its new
    run's first events name no dataset yet, and no run completed, so nothing described the job
    and the cleanup removed its flows until its next RUNNING (a probe of producers). The latest
    run that named datasets describes it, and a snapshot's fold keeps that run whole."""
    job_facets = builders.job_type_facet("JOB", "FLINK", "STREAMING")
    events = []
    runs = [("0190b1c2-0000-7000-8000-0000000000f1", ["START", "RUNNING", "ABORT"], True)]
    runs.append(("0190b1c2-0000-7000-8000-0000000000f2", restart, False))
    minute = 0
    for run_id, states, named in runs:
        for state in states:
            minute += 1
            events.append(
                run_event(
                    "clicks_sessionizer",
                    namespace="flink-jobs",
                    event_type=state,
                    run_id=run_id,
                    time=builders.at(0, minute=minute),
                    job_facets=job_facets,
                    inputs=[ds("clicks", KAFKA)] if named else [],
                    outputs=[ds("sessions", KAFKA)] if named else [],
                )
            )
    definition = builders.definition(policy("kafka://*"))
    if retain:
        builder = FoldBuilder(retain=quality_retainer(definition))
        builder.add(read_events(events, Report()))
        plan = plan_of_fold(builder.result(), Report(), definition)
    else:
        plan = build(events, definition)
    assert pairs(plan) == {("clicks", "sessions")}


def test_an_asset_the_provider_did_not_send_is_reported_beside_the_datasets_it_did() -> None:
    """Found with real Airflow: a PythonOperator with a postgres inlet and an ``s3://`` outlet,
    without the Amazon provider that converts it: the run names the input only, the ``airflow``
    facet lists the outlet, and the other dataset kept PRODUCER_NO_LINEAGE silent. The outlet
    is lost: PRODUCER_PARTIAL_LINEAGE names it (its user info never shown)."""
    airflow = {
        "airflow": {
            "task": {
                "inlets": "[{'uri': 'postgres://db:5432/dwh/public/a', 'extra': {}}]",
                "outlets": "[{'uri': 's3://AKIAETL:pw@bucket/exports/a.parquet', 'extra': {}}]",
            }
        }
    }
    plan = build([event(run_facets=airflow, inputs=[ds("public.a")])], definition())
    (example,) = plan.report.gaps[GapCode.PRODUCER_PARTIAL_LINEAGE].examples
    # seed 002: user info is no part of a dataset's name; an S3 one is an access key's id
    assert "outlet s3://bucket/exports/a.parquet" in example
    assert "pw" not in example and "AKIAETL" not in example


def test_an_asset_not_sent_is_named_without_its_query() -> None:
    """An HTTP endpoint's key is a query parameter (``?code=``, ``?key=``): a probe of secrets
    through real Airflow found it in the report, its XCom and the sync task's log."""
    airflow = {
        "airflow": {
            "task": {
                "outlets": "[{'uri': 'https://fn.example.net/api/orders?code=S3cFunc23#x'}, "
                "{'uri': 'https://maps.example.com/geo/json?key=S3cKey24'}]",
            }
        }
    }
    plan = build([event(run_facets=airflow, inputs=[ds("public.a")])], definition())
    (example,) = plan.report.gaps[GapCode.PRODUCER_PARTIAL_LINEAGE].examples
    assert "outlet https://fn.example.net/api/orders" in example
    assert "S3c" not in example


def test_assets_the_provider_sent_are_no_gap() -> None:
    airflow = {"airflow": {"task": {"inlets": "[{'uri': 'postgres://db:5432/dwh/public/a'}]"}}}
    plan = build([event(run_facets=airflow, inputs=[ds("public.a")])], definition())
    assert plan.report.gap_count(GapCode.PRODUCER_PARTIAL_LINEAGE) == 0


def test_an_asset_not_sent_beside_one_sent_on_its_side_is_reported() -> None:
    """Found with real Airflow 3.3 (a probe of Assets): inlets ``s3://…`` and a postgres table,
    outlets a postgres table and ``s3://…``, without the Amazon provider: the run names one of
    each side, and the two S3 Assets were lost without a word."""
    airflow = {
        "airflow": {
            "task": {
                "inlets": "[{'uri': 's3://raw/mixed/input'}, "
                "{'uri': 'postgres://db:5432/dwh/public/a'}]",
                "outlets": "[{'uri': 'postgres://db:5432/dwh/public/b'}, "
                "{'uri': 's3://curated/mixed/out'}]",
            }
        }
    }
    sent = event(run_facets=airflow, inputs=[ds("dwh.public.a")], outputs=[ds("dwh.public.b")])
    plan = build([sent], definition())
    (example,) = plan.report.gaps[GapCode.PRODUCER_PARTIAL_LINEAGE].examples
    assert example.endswith(": inlet s3://raw/mixed/input, outlet s3://curated/mixed/out not sent")


@pytest.mark.parametrize(
    ("asset", "sent"),
    [
        # the Amazon and Google converters name a bucket's Asset "/" on the bucket
        ("s3://curated", ds("/", "s3://curated")),
        ("gs://lake/", ds("/", "gs://lake")),
        # SQL extraction re-cases a name (Snowflake's upper case), a review found it "lost"
        ("snowflake://acct/db/public/orders", ds("DB.PUBLIC.ORDERS", "snowflake://acct")),
        ("postgres://db:5432/dwh/public/Orders", ds("dwh.public.orders")),
        # Common IO names a local path without a host "/exports" on "file" (a review)
        ("file://exports/", ds("/exports", "file")),
    ],
)
def test_an_asset_its_provider_sent_in_its_own_spelling_is_no_gap(
    asset: str, sent: dict[str, Any]
) -> None:
    airflow = {"airflow": {"task": {"outlets": f"[{{'uri': '{asset}'}}]"}}}
    plan = build([event(run_facets=airflow, outputs=[sent])], definition())
    assert plan.report.gap_count(GapCode.PRODUCER_PARTIAL_LINEAGE) == 0


def test_an_asset_is_matched_at_a_segment_not_inside_one() -> None:
    """``s3://b/raw/ders`` is no ``dwh.public.orders``, though the name ends with ``ders``."""
    airflow = {"airflow": {"task": {"outlets": "[{'uri': 's3://b/raw/ders'}]"}}}
    plan = build([event(run_facets=airflow, outputs=[ds("dwh.public.orders")])], definition())
    (example,) = plan.report.gaps[GapCode.PRODUCER_PARTIAL_LINEAGE].examples
    assert example.endswith(": outlet s3://b/raw/ders not sent")


def test_a_task_of_no_extraction_names_the_assets_it_declared() -> None:
    """Its Assets were all dropped (no provider knows their scheme): ``PRODUCER_NO_LINEAGE``
    names them, where the fix is that provider, not the operator."""
    airflow = {"airflow": {"task": {"outlets": "[{'uri': 's3://curated/mapped/out'}]"}}}
    unknown = {"unknownSourceAttribute": {"unknownItems": [{"name": "PythonOperator"}]}}
    facets = {**airflow, **unknown}
    plan = build([event(run_facets=facets)], definition())
    (example,) = plan.report.gaps[GapCode.PRODUCER_NO_LINEAGE].examples
    assert example.endswith(": outlet s3://curated/mapped/out not sent")


def test_a_name_only_asset_that_drives_scheduling_is_no_gap() -> None:
    """Airflow 3's ``Asset("daily_orders_ready")``: a name to schedule by, never a dataset."""
    airflow = {"airflow": {"task": {"outlets": "[{'uri': 'daily_orders_ready', 'extra': {}}]"}}}
    plan = build([event(run_facets=airflow, inputs=[ds("public.a")])], definition())
    assert plan.report.gap_count(GapCode.PRODUCER_PARTIAL_LINEAGE) == 0


def test_a_parent_named_with_a_rotated_token_is_the_job_the_catalog_names_so() -> None:
    """Two names that differ only in a hidden value are the same name in Blindata: a child's
    parent facet naming its parent with another token left the flow unresolved beside the
    parent's job entity (a probe of schedulers)."""
    parent = "hook.post_https://hooks.slack.com/services/T0/B0/OLDTOKEN"
    child = run_event(
        "hook.child",
        run_id="0190b1c2-0000-7000-8000-00000000c001",
        run_facets=builders.parent_facet(
            parent.replace("OLDTOKEN", "NEWTOKEN"), "0190b1c2-0000-7000-8000-00000000c000"
        ),
    )
    events = [run_event(parent, run_id="0190b1c2-0000-7000-8000-00000000c000"), child]
    plan = build(events, definition(processLayer=True))
    assert GapCode.UNRESOLVED_ORCHESTRATION_TARGET not in plan.report.gaps
    (flow,) = [f for f in plan.flows if f.kind == "orchestration"]
    assert flow.source.entity.name == "hook.post_https://hooks.slack.com/services/***"
    assert "OLDTOKEN" not in flow.name and "NEWTOKEN" not in flow.name


def test_an_orchestration_flow_name_cut_to_fit_keeps_its_orchestration_mark() -> None:
    """Seed 001: an orchestration flow's "name ends with @orchestration"; a Spark action's long
    name was cut with it (a probe of schedulers)."""
    app = "longapp"
    action = f"{app}.execute_insert_into_hadoop_fs_relation_command.{'x' * 330}"
    events = [
        run_event(app, namespace="spark", run_id="0190b1c2-0000-7000-8000-00000000d000"),
        run_event(
            action,
            namespace="spark",
            run_id="0190b1c2-0000-7000-8000-00000000d001",
            run_facets=builders.parent_facet(app, "0190b1c2-0000-7000-8000-00000000d000", "spark"),
        ),
    ]
    plan = build(events, definition(processLayer=True))
    (flow,) = [f for f in plan.flows if f.kind == "orchestration"]
    assert len(flow.name) <= 255 and flow.name.endswith(" @orchestration")


def test_orchestration_flows_told_apart_by_a_hash_keep_their_mark() -> None:
    """Two orchestration flows spelt alike (``n.a/b`` and ``n/a.b``) are told apart by a hash of
    their ends: it went after ``@orchestration``, and a long name lost the mark (a review)."""
    from airflow_blindata.mapper.flows import _told_apart

    long = "OpenLineage:" + "n" * 300 + " -> OpenLineage:n.child @orchestration"
    short = "OpenLineage:n.a.b -> OpenLineage:n.child @orchestration"
    for name in (long, short):
        told = _told_apart(name, "ends")
        assert len(told) <= 255 and told.endswith(" @orchestration") and told != name
    assert _told_apart("a -> b @ns/job", "ends").startswith("a -> b @ns/job #")
