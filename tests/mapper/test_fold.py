"""Folding events into runs, jobs and datasets: order-independent, idempotent, deterministic.

Each test is named after the sentence of a seed (001, 003, 004), the spec or the design (3.3)
that it checks.
"""

from __future__ import annotations

import json
import random
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from airflow_blindata.events import (
    BaseFacet,
    DocumentationDatasetFacet,
    DocumentationJobFacet,
    Event,
    EventType,
    SQLJobFacet,
    facet_of,
    parse_event,
)
from airflow_blindata.mapper.fold import DatasetKey, Fold, JobKey, RunFold, fold
from tests.mapper.helpers import (
    ALL_DBT,
    FACET_VALUES,
    JOB,
    NS,
    PARENT,
    as_dict,
    at,
    dataset,
    dbt_events,
    doc,
    event,
)


def sql(query: str) -> dict[str, Any]:
    return {"sql": {"query": query}}


def query_of(facets: dict[str, BaseFacet]) -> str | None:
    found = facet_of(facets, SQLJobFacet)
    return found.query if found else None


def the_run(result: Fold, job: JobKey = JOB, run_id: str = "run-1") -> RunFold:
    found = result.run(job, run_id)
    assert found is not None
    return found


def same_fold(*orders: list[Event]) -> None:
    folds = [fold(order) for order in orders]
    assert all(as_dict(folded) == as_dict(folds[0]) for folded in folds)
    assert all(folded == folds[0] for folded in folds)


# --- the run cycle --------------------------------------------------------------------------


def test_inputs_can_arrive_with_start_and_outputs_with_complete() -> None:
    """Seed 004: events for one run are accumulative: consumers combine them."""
    start = event("START", 1, inputs=[dataset("pv.case_reports")])
    complete = event("COMPLETE", 5, outputs=[dataset("pv.weekly")])
    run = the_run(fold([start, complete]))
    assert [str(i.key) for i in run.inputs] == [f"{NS}/pv.case_reports"]
    assert [str(o.key) for o in run.outputs] == [f"{NS}/pv.weekly"]
    assert (run.state, run.start_time, run.end_time) == (
        EventType.COMPLETE,
        start.event_time,
        complete.event_time,
    )


def test_events_are_folded_not_trusted_to_arrive_in_order() -> None:
    """Design 3.3: the fold is order-independent; COMPLETE before START changes nothing."""
    start = event("START", 1, inputs=[dataset("a")], job_facets=sql("SELECT 1"))
    complete = event("COMPLETE", 5, outputs=[dataset("b")], job_facets=sql("SELECT 2"))
    same_fold([start, complete], [complete, start])
    run = the_run(fold([complete, start]))
    assert run.state is EventType.COMPLETE
    assert run.event_types == [EventType.START, EventType.COMPLETE]
    assert query_of(run.job_facets) == "SELECT 2"


def test_a_re_sent_event_changes_nothing() -> None:
    """Design 3.2/3.3: duplicates change nothing; the fold is idempotent."""
    events = [
        event("START", 1, inputs=[dataset("a")]),
        event("COMPLETE", 2, outputs=[dataset("b")]),
    ]
    same_fold(events, events * 3, [*events, events[0]])


def test_streaming_jobs_send_running_snapshots() -> None:
    """Seed 004: services emit START followed by RUNNING events; terminal events are rare."""
    snapshots = [
        event("RUNNING", second, inputs=[dataset(f"topic.{second}")], run_facets=_rows(second))
        for second in (10, 20, 30)
    ]
    result = fold([event("START", 1), *snapshots])
    run = the_run(result)
    assert run.state is EventType.RUNNING and run.end_time is None
    assert [i.key.name for i in run.inputs] == ["topic.10", "topic.20", "topic.30"]
    assert run.run_facets["acme_window"].model_extra == {"rows": 30}


def _rows(count: int) -> dict[str, Any]:
    return {"acme_window": {"rows": count}}


@pytest.mark.parametrize("terminal", ["COMPLETE", "FAIL", "ABORT"])
def test_a_terminal_event_decides_the_state_even_before_a_late_running(terminal: str) -> None:
    """Seed 004: after a terminal event no further events for that run are emitted."""
    events = [event("START", 1), event(terminal, 5), event("RUNNING", 9)]
    run = the_run(fold(events))
    assert run.state == EventType(terminal)
    assert run.last_event_time == events[2].event_time


def test_other_events_add_metadata_but_no_state() -> None:
    """Spec: additional events with OTHER eventType can send metadata after the run is complete."""
    events = [event("START", 1), event("COMPLETE", 5), event("OTHER", 9, run_facets=_rows(3))]
    run = the_run(fold(events))
    assert run.state is EventType.COMPLETE
    assert "acme_window" in run.run_facets
    only_other = the_run(fold([event("OTHER", 1), event(None, 2)]))
    assert (only_other.state, only_other.event_types) == (None, [EventType.OTHER])


def test_later_events_win_per_facet_key() -> None:
    """Seed 004: emitting a facet with the same name replaces the earlier instance entirely."""
    early = event("START", 1, job_facets={**sql("SELECT 1"), **doc("first")})
    late = event("COMPLETE", 2, job_facets=sql("SELECT 2"))
    for order in ([early, late], [late, early]):
        run = the_run(fold(order))
        assert query_of(run.job_facets) == "SELECT 2"
        described = facet_of(run.job_facets, DocumentationJobFacet)
        assert described is not None and described.description == "first"


def test_on_equal_event_time_the_terminal_event_wins() -> None:
    start = event("START", 1, job_facets=sql("SELECT start"))
    complete = event("COMPLETE", 1, job_facets=sql("SELECT complete"))
    for order in ([start, complete], [complete, start]):
        assert query_of(the_run(fold(order)).job_facets) == "SELECT complete"


def test_equal_time_and_type_are_broken_by_content() -> None:
    """Sort everything: ties on eventTime and type are broken by the event's content key."""
    a = event("RUNNING", 1, job_facets=sql("SELECT a"))
    b = event("RUNNING", 1, job_facets=sql("SELECT b"))
    same_fold([a, b], [b, a], [b, a, b])


def test_a_deleted_facet_is_removed() -> None:
    """Seed 004: job and dataset facets may set _deleted: true to delete a facet."""
    described = event("START", 1, job_facets=doc("x"), outputs=[dataset("b", facets=doc("y"))])
    deleted = {"documentation": {"_deleted": True}}
    removal = event("COMPLETE", 2, job_facets=deleted, outputs=[dataset("b", facets=deleted)])
    result = fold([removal, described])
    assert "documentation" not in the_run(result).job_facets
    assert "documentation" not in the_run(result).outputs[0].facets
    out = result.dataset(DatasetKey(NS, "b"))
    assert out is not None and out.facets == {}


def test_a_run_facet_sent_deleted_removes_nothing() -> None:
    """Only job and dataset facets may be deleted (seed 004): a run's ``parent`` sent as
    ``{"_deleted": true}`` on its COMPLETE is malformed, and the START's parent stays."""
    parent = {"parent": {"run": {"runId": "r0"}, "job": {"namespace": NS, "name": "dag"}}}
    started = event("START", 1, run_facets=parent)
    raw = {
        "eventType": "COMPLETE",
        "eventTime": at(2),
        "producer": "https://example.com/p",
        "run": {"runId": "run-1", "facets": {"parent": {"_deleted": True}}},
        "job": {"namespace": JOB.namespace, "name": JOB.name},
    }
    parsed = parse_event(raw)
    assert [issue.key for issue in parsed.malformed_facets] == ["parent"]
    assert parsed.event is not None
    result = fold([parsed.event, started])
    assert "parent" in the_run(result).run_facets
    assert the_run(result).run_facets["parent"].deleted is None


def test_input_and_output_facets_stay_with_the_run() -> None:
    """Seed 004: outputFacets describe what this run wrote, dataset facets the dataset."""
    stats = {"outputStatistics": {"rowCount": 1842}}
    result = fold(
        [event("COMPLETE", 1, outputs=[dataset("b", facets=doc("d"), outputFacets=stats)])]
    )
    (output,) = the_run(result).outputs
    assert list(output.output_facets) == ["outputStatistics"]
    seen = result.dataset(DatasetKey(NS, "b"))
    assert seen is not None and list(seen.facets) == ["documentation"]


def test_the_parent_run_and_nominal_time_are_read_from_the_merged_run_facets() -> None:
    """Seed 001: a parent run facet gives a parent job to child job orchestration flow."""
    parent = {"parent": {"run": {"runId": "dag-run"}, "job": {"namespace": "halden", "name": "pv"}}}
    nominal = {"nominalTime": {"nominalStartTime": "2026-10-26T06:00:00Z"}}
    run = the_run(
        fold([event("START", 1, run_facets=parent), event("COMPLETE", 2, run_facets=nominal)])
    )
    assert run.parent_job == JobKey("halden", "pv")
    assert run.parent is not None and run.parent.run.run_id == "dag-run"
    assert run.nominal_time is not None and run.nominal_time.nominal_start_time.hour == 6


# --- jobs -----------------------------------------------------------------------------------


def test_a_job_keeps_its_latest_run_and_its_latest_completed_run() -> None:
    """Seed 001/003: orchestration flows and results are published only from completed runs."""
    events = [
        event("START", 1, run_id="a"),
        event("COMPLETE", 2, run_id="a"),
        event("START", 3, run_id="b"),
        event("FAIL", 4, run_id="b"),
        event("START", 5, run_id="c"),
        event("RUNNING", 6, run_id="c"),
    ]
    random.Random(7).shuffle(events)
    job = fold(events).job(JOB)
    assert job is not None
    assert [run.run_id for run in job.runs] == ["a", "b", "c"]
    assert job.latest is not None and job.latest.run_id == "c"
    assert job.latest_completed is not None and job.latest_completed.run_id == "a"


def test_job_events_describe_design_time_and_create_no_run() -> None:
    """Seed 003: JobEvents and DatasetEvents describe design time and carry no results."""
    old = event("JOB", 1, inputs=[dataset("old")], outputs=[dataset("out")], job_facets=doc("v1"))
    new = event("JOB", 2, inputs=[dataset("new")], outputs=[dataset("out")], job_facets=doc("v2"))
    facets_only = event("JOB", 3, job_facets=sql("SELECT 1"))
    job = fold([facets_only, new, old]).job(JOB)
    assert job is not None and job.runs == [] and job.latest is None
    assert [i.key.name for i in job.inputs] == ["new"]  # the latest description that lists any
    assert [o.key.name for o in job.outputs] == ["out"]
    assert sorted(job.facets) == ["documentation", "sql"]
    described = facet_of(job.facets, DocumentationJobFacet)
    assert described is not None and described.description == "v2"


def test_job_facets_merge_over_design_time_and_every_run() -> None:
    """The Airflow task graph rides only on DAG START: it must survive later runs without it."""
    graph = {
        "airflow": {
            "taskTree": {},
            "taskGroups": {},
            "tasks": {"a": {"downstream_task_ids": ["b"]}},
        }
    }
    events = [
        event("START", 1, run_id="dag-1", job_facets=graph),
        event("COMPLETE", 2, run_id="dag-1"),
        event("COMPLETE", 9, run_id="dag-2", job_facets=doc("the dag")),
    ]
    job = fold(events).job(JOB)
    assert job is not None and sorted(job.facets) == ["airflow", "documentation"]
    assert job.latest is not None and "airflow" not in job.latest.job_facets


def test_dataset_events_add_dataset_facets_without_a_job() -> None:
    """Seed 001: a DatasetEvent with a lineage facet gives flows between datasets, with no job."""
    lineage = {"lineage": {"inputs": [{"namespace": NS, "name": "a", "type": "DATASET"}]}}
    raw = {"eventTime": at(1), "dataset": dataset("b", facets={**lineage, **doc("b")})}
    parsed = parse_event(raw).event
    assert parsed is not None
    result = fold([parsed])
    assert result.jobs == []
    (seen,) = result.datasets
    assert (seen.key, sorted(seen.facets)) == (DatasetKey(NS, "b"), ["documentation", "lineage"])


def test_every_dataset_is_collected_with_its_latest_facets() -> None:
    """Seed 000: the catalog maps every dataset; its facets are the latest per key."""
    events = [
        event("START", 1, job="j1", inputs=[dataset("a", facets=doc("old a"))]),
        event("COMPLETE", 2, job="j2", run_id="r2", outputs=[dataset("a", facets=doc("new a"))]),
        event("COMPLETE", 3, job="j3", run_id="r3", outputs=[dataset("c")]),
    ]
    result = fold(events)
    assert [d.key.name for d in result.datasets] == ["a", "c"]
    described = facet_of(result.datasets[0].facets, DocumentationDatasetFacet)
    assert described is not None and described.description == "new a"
    assert [job.key.name for job in result.jobs] == ["j1", "j2", "j3"]


def test_runs_are_keyed_by_job_and_run_id() -> None:
    events = [
        event("COMPLETE", 1, job="j1", run_id="same"),
        event("FAIL", 2, job="j2", run_id="same"),
    ]
    result = fold(events)
    assert the_run(result, JobKey("halden", "j1"), "same").state is EventType.COMPLETE
    assert the_run(result, JobKey("halden", "j2"), "same").state is EventType.FAIL
    assert result.run(JobKey("halden", "nope"), "same") is None


# --- real events ----------------------------------------------------------------------------


def test_dbt_runs_fold_to_their_final_state_parent_and_io() -> None:
    result = fold(dbt_events(*ALL_DBT))
    dbt_run = result.job(JobKey("dbt-test-namespace", "dbt-run-jaffle_shop"))
    assert dbt_run is not None and len(dbt_run.runs) == 4
    assert dbt_run.latest is not None and dbt_run.latest.state is EventType.FAIL  # the test run
    assert dbt_run.latest_completed is not None
    assert dbt_run.latest_completed.run_id.startswith("f0592c37")  # the snapshot run
    model = result.job(JobKey("dbt-test-namespace", "model.jaffle_shop.customers"))
    assert model is not None and model.latest is not None
    assert [i.key.name for i in model.latest.inputs] == [
        "postgres.public.stg_customers",
        "postgres.public.stg_orders",
        "postgres.public.stg_payments",
    ]
    assert model.latest.parent_job == JobKey("dbt-test-namespace", "dbt-run-jaffle_shop")
    customers = result.dataset(DatasetKey("postgres://postgres:5432", "postgres.public.customers"))
    assert customers is not None
    assert sorted(customers.facets) == [
        "dataQualityAssertions",
        "dataSource",
        "documentation",
        "schema",
    ]


def test_everything_in_the_fold_is_sorted_by_key() -> None:
    events = dbt_events(*ALL_DBT)
    result = fold(reversed(events))
    assert [job.key for job in result.jobs] == sorted(job.key for job in result.jobs)
    assert [d.key for d in result.datasets] == sorted(d.key for d in result.datasets)
    for job in result.jobs:
        for run in job.runs:
            assert list(run.run_facets) == sorted(run.run_facets)
            assert [i.key for i in run.inputs] == sorted(i.key for i in run.inputs)
    json.loads(json.dumps(as_dict(result, mode="json")))  # and it serialises


def test_the_dbt_fixtures_fold_alike_in_any_order_and_with_duplicates() -> None:
    events = dbt_events(*ALL_DBT)
    shuffled = [*events, *events[::3]]
    random.Random(11).shuffle(shuffled)
    same_fold(events, shuffled, list(reversed(events)))


def test_fold_skips_what_is_not_an_event() -> None:
    junk: list[Any] = [None, "START", {"eventType": "START"}, event("START", 1)]
    result = fold(junk)
    assert [job.key for job in result.jobs] == [JOB]


# --- properties -----------------------------------------------------------------------------


@st.composite
def run_events(draw: st.DrawFn) -> Event:
    """Events of a few runs of a few jobs, with few distinct times so that ties are common."""
    kind = draw(
        st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER", None, "JOB"])
    )
    names = st.sampled_from(["a", "b", "c"])
    facets = st.dictionaries(st.sampled_from(["sql", "documentation"]), FACET_VALUES, max_size=2)
    job_facets = {
        key: ({"query": value} if key == "sql" else {"description": value})
        for key, value in draw(facets).items()
    }
    if draw(st.booleans()):
        job_facets["documentation"] = {"_deleted": True}
    return event(
        kind,
        draw(st.integers(0, 3)),
        run_id=draw(st.sampled_from(["r1", "r2"])),
        job=draw(st.sampled_from(["j1", "j2"])),
        job_facets=job_facets,
        run_facets={
            "acme": {"v": draw(st.integers(0, 2))},
            # now and then a parent run, shared between runs (a mapped task's instances)
            **draw(
                st.sampled_from(
                    [{}, {}, *({"parent": PARENT | {"run": {"runId": p}}} for p in ("p1", "p2"))]
                )
            ),
        },
        inputs=[
            dataset(name, facets=doc(draw(FACET_VALUES)))
            for name in draw(st.lists(names, max_size=2))
        ],
        outputs=[
            dataset(name, outputFacets={"outputStatistics": {"rowCount": draw(st.integers(0, 2))}})
            for name in draw(st.lists(names, max_size=2))
        ],
    )


@given(events=st.lists(run_events(), min_size=1, max_size=8), data=st.data())
def test_any_permutation_or_duplication_gives_the_same_fold(
    events: list[Event], data: st.DataObject
) -> None:
    """Design 3.3: the same set of events gives the same plan, whatever the order."""
    duplicates = data.draw(st.lists(st.sampled_from(events), max_size=4))
    shuffled = data.draw(st.permutations([*events, *duplicates]))
    assert as_dict(fold(shuffled)) == as_dict(fold(events))


def test_the_models_a_fold_builds_unvalidated_are_the_ones_validation_gives() -> None:
    """A fold makes its classes of values it typed itself, never validated: validating each
    again against its annotations (pydantic's) gives an equal one, field by field."""
    for job in fold(dbt_events(*ALL_DBT)).jobs:
        holders = (job, *job.runs)
        datasets = [item for holder in holders for item in (*holder.inputs, *holder.outputs)]
        for model in (*holders, *datasets):
            given = {item.name: getattr(model, item.name) for item in fields(model)}
            again = TypeAdapter(type(model)).validate_python(given)
            assert again == model and type(again) is type(model)
