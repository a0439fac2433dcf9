"""Issue 42, item 2: a job namespace's credentials reach nothing the mapper makes.

A producer may name its job namespace with a URI that holds a password
(``postgres://etl:pw@db:5432``). Seed 002 drops "URI user info (credentials) ... from the
namespace, so no secret reaches the lineage graph"; the job namespace is cleaned as a dataset's is,
wherever a job key is read: the event's job, the parent run facet, the ``jobDependencies`` facet
and the entries of a lineage job facet.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import RunEvent
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import FoldBuilder, JobKey, fold_jobs
from airflow_blindata.mapper.fold.reading import read_events, read_job_events
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.scopes import clean_scope, job_scope
from tests import builders
from tests.builders import at, parent_facet, policy, run_event, sql_facet
from tests.mapper.helpers import as_dict

SECRET = "Pl4nted-S3cret"
PG = "postgres://warehouse:5432"
CLEAN = "postgres://db:5432"
DIRTY_SPELLINGS = [
    pytest.param(f"postgres://etl:{SECRET}@db:5432", CLEAN, id="user-and-password"),
    pytest.param(f"postgres://{SECRET}@db:5432", CLEAN, id="a-token-as-user"),
    pytest.param(f"postgres://etl:pa/ss{SECRET}@db:5432", CLEAN, id="a-slash-in-the-password"),
    pytest.param(
        f"postgres://db:5432?user=etl&password={SECRET}",
        "postgres://db:5432?user=etl&password=***",
        id="a-password-parameter",
    ),
    pytest.param(
        f"jdbc:oracle:thin:etl/{SECRET}@db:1521", "jdbc:oracle:thin:@db:1521", id="oracle"
    ),
    # a parameter whose name ends with a secret word, as free text reads one (found by a probe)
    pytest.param(
        f"postgres://db:5432?sasl.password={SECRET}&ssl=1",
        "postgres://db:5432?sasl.password=***&ssl=1",
        id="a-dotted-password-parameter",
    ),
    pytest.param(f"postgres://etl:2024/{SECRET}@db:5432", CLEAN, id="a-port-like-password"),
]


def definition() -> JobDefinition:
    return builders.definition(policy("postgres://*"))


def ds(name: str) -> dict[str, Any]:
    return builders.dataset(name, PG)


def dependencies(namespace: str) -> dict[str, Any]:
    return {
        "jobDependencies": {
            "upstream": [{"job": {"namespace": namespace, "name": "extract"}}],
            "downstream": [{"job": {"namespace": namespace, "name": "report"}}],
        }
    }


def lineage_entries(namespace: str) -> dict[str, Any]:
    """A lineage job facet: the job ``namespace/feed`` feeds the job ``namespace/report`` and
    the dataset ``a.s.t``."""
    feed = {"namespace": namespace, "name": "feed", "type": "JOB"}
    return {
        "lineage": {
            "entries": [
                {"namespace": namespace, "name": "report", "type": "JOB", "inputs": [feed]},
                {"namespace": PG, "name": "a.s.t", "type": "DATASET", "inputs": [feed]},
            ]
        }
    }


def history(namespace: str) -> list[dict[str, Any]]:
    """A DAG run, its task (a parent facet, job dependencies, SQL, a lineage job facet), and the
    jobs the task names, all in ``namespace``."""

    def job(name: str, run_id: str, second: int, **options: Any) -> dict[str, Any]:
        return run_event(name, namespace=namespace, run_id=run_id, time=at(second), **options)

    return [
        job("dag", "r-dag", 0),
        job("extract", "r-extract", 1),
        job("feed", "r-feed", 1),
        job("report", "r-report", 3),
        job(
            "dag.load",
            "r-load",
            2,
            inputs=[ds("a.s.src")],
            outputs=[ds("a.s.t")],
            run_facets={**parent_facet("dag", "r-dag", namespace), **dependencies(namespace)},
            job_facets={
                **sql_facet("INSERT INTO s.t SELECT id FROM s.src"),
                **lineage_entries(namespace),
            },
        ),
    ]


def plan_text(plan: CatalogPlan) -> str:
    return plan.model_dump_json(by_alias=True)


@pytest.mark.parametrize(("dirty", "clean"), DIRTY_SPELLINGS)
def test_a_job_namespace_with_credentials_lands_everywhere_without_them(
    dirty: str, clean: str
) -> None:
    plan = build(history(dirty), definition())
    text = plan_text(plan)
    assert SECRET not in text
    assert SECRET not in json.dumps(plan.report.model_dump(mode="json"))
    # and it lands as the clean namespace would: the same plan, spelled alike
    assert text == plan_text(build(history(clean), definition()))


def test_the_six_places_of_a_job_name_its_clean_namespace() -> None:
    plan = build(history(f"postgres://etl:{SECRET}@db:5432"), definition())
    jobs = {e.key.name: e for e in plan.entities if e.key.schema_ == CLEAN}
    assert {"dag", "dag.load", "extract", "feed", "report"} <= set(jobs)
    scope = job_scope(CLEAN, "dag.load")
    properties = dict(jobs["dag.load"].properties)
    assert properties["openLineageJobScope"] == scope
    (routine,) = plan.routines
    assert (routine.catalog, routine.schema_) == (CLEAN, CLEAN)
    data_flows = [f for f in plan.flows if f.kind != "orchestration"]
    assert data_flows
    assert {f.scope for f in data_flows} == {scope}
    assert all(f.name.endswith(f"@{CLEAN}/dag.load") for f in data_flows)
    orchestration = [f for f in plan.flows if f.kind == "orchestration"]
    # the parent, the upstream and the downstream dependency: each end a job entity
    assert len(orchestration) == 3
    assert {f.scope for f in orchestration} == {job_scope(CLEAN, "dag.load", orchestration=True)}
    # the lineage job facet's job entries found their job entities
    declared = {(f.source.entity.name, f.target.entity.name) for f in data_flows}
    assert ("feed", "report") in declared


def test_spellings_that_differ_only_in_their_credentials_name_one_job() -> None:
    first = run_event("load", namespace=f"postgres://etl:{SECRET}@db:5432", run_id="r1", time=at(1))
    second = run_event("load", namespace="postgres://etl:other@db:5432", run_id="r2", time=at(2))
    plan = build([first, second], definition())
    assert [(e.key.schema_, e.key.name) for e in plan.entities] == [(CLEAN, "load")]


def test_a_job_key_read_anywhere_is_clean() -> None:
    assert JobKey(f"postgres://etl:{SECRET}@db:5432", "load") == JobKey(CLEAN, "load")
    assert str(JobKey(f"postgres://etl:{SECRET}@db:5432", "load")) == f"{CLEAN}/load"
    event = RunEvent.model_validate(run_event(namespace=f"postgres://etl:{SECRET}@db:5432"))
    (folded,) = fold_jobs([event])
    assert folded.job.key == JobKey(CLEAN, "etl.load")
    assert folded.job.runs[0].job == JobKey(CLEAN, "etl.load")


def test_the_runs_kept_whole_of_a_dirty_namespace_are_read_whole() -> None:
    """Reading skims what newer events of a run kept whole decide: the runs it keeps whole are
    named by clean keys, as the fold names them, so the START's run facet of the latest run is
    still read (skimmed, the parent it names was lost)."""
    dirty = f"postgres://etl:{SECRET}@db:5432"
    older = [
        run_event("load", namespace=dirty, run_id="r1", event_type="START", time=at(1)),
        run_event("load", namespace=dirty, run_id="r1", time=at(2)),
    ]
    latest = [
        run_event(
            "load",
            namespace=dirty,
            run_id="r2",
            event_type="START",
            time=at(3),
            run_facets={"nominalTime": {"nominalStartTime": at(3)}},
        ),
        run_event("load", namespace=dirty, run_id="r2", time=at(4)),
    ]
    events = older + latest
    retain = quality_retainer(definition())
    whole = FoldBuilder(retain)
    whole.add(read_events(events, Report()))
    skimmed = FoldBuilder(retain)
    skimmed.add(read_job_events([json.dumps(e) for e in events], Report()))
    assert as_dict(skimmed.result()) == as_dict(whole.result())
    (job,) = fold_jobs(read_events(events, Report()))
    assert job.job.key == JobKey(CLEAN, "load")
    assert "nominalTime" in job.job.runs[-1].run_facets


@pytest.mark.parametrize(("dirty", "clean"), DIRTY_SPELLINGS)
@pytest.mark.parametrize("orchestration", [False, True])
def test_a_scope_written_with_credentials_is_cleaned_into_the_jobs_scope(
    dirty: str, clean: str, orchestration: bool
) -> None:
    """What a sync reads back from Blindata (a quality ledger's scope, a flow's) that the version
    before wrote names the job's scope now."""
    written = job_scope(dirty, "dag.load", orchestration=orchestration)
    assert clean_scope(written) == job_scope(clean, "dag.load", orchestration=orchestration)
    for scope in (job_scope(clean, "dag.load"), "ol:airflow|etl.load", "crawler:x", "ol:no-bar"):
        assert clean_scope(scope) == scope
