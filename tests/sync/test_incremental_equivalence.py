"""The incremental path gives exactly the plan of a full re-fold, for any history of operations.

A snapshot keeps folds, extends them, loads them unchanged, and keeps a memo of SQL hashes; the
store deduplicates, quarantines, and prunes by retention. Whatever sequence of those happens —
events arriving late, re-sent, for runs retention pruned, a definition changing its quality
switches or its Systems, the kept folds cleared or of another release, another process storing
events while a snapshot reads — every snapshot's plan is the plan of reading every stored event
at once (``build``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import kept as cache
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import core as store_core
from airflow_blindata.store import open_store
from airflow_blindata.store.base import EventStore
from tests.builders import dataset_event, job_event, policy, run_event
from tests.builders import definition as bare_definition
from tests.store.helpers import postgres_base_url, postgres_schema
from tests.sync.helpers import assert_read_at_once

from .helpers import definition

NS = "postgres://db:5432"
JOBS = ["job0", "job1", "job2"]


def at(second: int) -> str:
    return f"2026-10-26T06:{second // 60:02d}:{second % 60:02d}Z"


SCHEMAS = [
    {},
    {"schema": {"fields": [{"name": "a", "type": "int"}]}},
    {"schema": {"fields": [{"name": "b", "type": "text"}, {"name": "a"}]}},
    {"schema": {"_deleted": True}},
    {"documentation": {"description": "d"}},
    {"documentation": {"_deleted": True}},
    {"schema": {"fields": 3}},
]
SQL = [
    "SELECT a FROM t",
    "select a from t",
    "SELECT  a\n FROM t",
    "INSERT INTO s.x SELECT a FROM s.y",
]
IO = [
    {},
    {"outputStatistics": {"rowCount": 3}},
    {"dataQualityAssertions": {"assertions": [{"assertion": "not_null", "success": True}]}},
    {"dataQualityMetrics": {"rowCount": 4}},
]
DEFINITIONS = {
    "default": lambda: definition(),
    "no quality": lambda: definition(quality={"enabled": False, "metricsEnabled": False}),
    "no metrics": lambda: definition(quality={"enabled": True, "metricsEnabled": False}),
    "other systems": lambda: bare_definition(
        policy("postgres://*", nameTemplate="pg-{host}", technology="PostgreSQL")
    ),
}


@st.composite
def datasets(draw: st.DrawFn, io: str) -> list[dict[str, Any]]:
    return [
        {
            "namespace": NS,
            "name": name,
            "facets": draw(st.sampled_from(SCHEMAS)),
            io: draw(st.sampled_from(IO)),
        }
        for name in draw(st.lists(st.sampled_from(["s.a", "s.b", "s.c"]), max_size=2, unique=True))
    ]


@st.composite
def events(draw: st.DrawFn) -> Any:
    """One event: mostly a RunEvent of a few jobs and runs, now and then a JobEvent, a
    DatasetEvent, or something malformed."""
    kind = draw(st.integers(0, 19))
    second = draw(st.integers(0, 90))
    if kind == 0:
        return dataset_event(
            draw(st.sampled_from(["s.a", "s.b"])),
            NS,
            facets=draw(st.sampled_from(SCHEMAS)),
            time=at(second),
        )
    if kind == 1:
        return {"eventTime": "yesterday", "job": {"namespace": "airflow"}}  # quarantined
    job = draw(st.sampled_from(JOBS))
    job_facets: dict[str, Any] = {}
    if draw(st.booleans()):
        query = draw(st.sampled_from(SQL))
        job_facets["sql"] = {"query": query, "dialect": "postgres"}
    if draw(st.integers(0, 4)) == 0:
        job_facets["documentation"] = draw(
            st.sampled_from([{"description": "doc"}, {"_deleted": True}])
        )
    if kind == 2:
        return job_event(
            job,
            time=at(second),
            inputs=draw(datasets("inputFacets")),
            outputs=draw(datasets("outputFacets")),
            job_facets=job_facets,
        )
    run = draw(st.integers(0, 5))
    run_facets: dict[str, Any] = {}
    parent = draw(st.sampled_from([None, "p1", "p2"]))
    if parent is not None:
        run_facets["parent"] = {
            "run": {"runId": f"00000000-0000-4000-8000-0000000000{parent[1]}0"},
            "job": {"namespace": "airflow", "name": "dag"},
        }
    return run_event(
        job,
        event_type=draw(
            st.sampled_from(["START", "RUNNING", "COMPLETE", "COMPLETE", "FAIL", "ABORT", "OTHER"])
        ),
        run_id=f"00000000-0000-4000-8000-{JOBS.index(job)}{run:011d}",
        time=at(second),
        inputs=draw(datasets("inputFacets")),
        outputs=draw(datasets("outputFacets")),
        run_facets=run_facets,
        job_facets=job_facets,
    )


@st.composite
def operations(draw: st.DrawFn) -> list[tuple[str, Any]]:
    steps: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(
            st.sampled_from(
                [
                    "store",
                    "store",
                    "store",
                    "resend",
                    "plan",
                    "next day",
                    "retain",
                    "forget",
                    "upgrade",
                    "race",
                ]
            )
        )
        if op in ("store", "race"):
            steps.append((op, draw(st.lists(events(), min_size=1, max_size=6))))
        elif op == "resend":
            steps.append((op, draw(st.integers(0, 1000))))
        elif op == "plan":
            steps.append((op, draw(st.sampled_from(sorted(DEFINITIONS)))))
        elif op == "retain":
            steps.append((op, draw(st.integers(0, 2))))
        else:
            steps.append((op, None))
        if op != "plan":
            steps.append(("plan", draw(st.sampled_from(sorted(DEFINITIONS)))))
    return steps


class _Clock:
    """The store's clock (``received_at``), moved a day at a time."""

    def __init__(self) -> None:
        self.now = datetime(2026, 10, 26, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@contextmanager
def _clock() -> Iterator[_Clock]:
    clock = _Clock()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_core, "now", clock)
        yield clock


def _check(store: EventStore, job: JobDefinition) -> None:
    planned = plan_from_store(store, job)
    stored = [event.payload for event in store.events()]
    assert_read_at_once(planned, build(stored, job))


def _racing(store: EventStore, url: str, texts: list[str]) -> None:
    """A snapshot during which another connection stores ``texts``: after the snapshot listed
    the jobs, before it reads their events. Its plan is that of the events up to its cursor."""
    listing = store.job_digests
    before = {event.id for event in store.events()}

    def job_digests(**options: Any) -> dict[tuple[str, str], str]:
        found = listing(**options)
        with open_store(url) as writer:
            writer.append_many(texts)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "job_digests", job_digests)
        planned = plan_from_store(store, DEFINITIONS["default"]())
    stored = [event.payload for event in store.events() if event.id in before]
    assert_read_at_once(planned, build(stored, DEFINITIONS["default"]()))


def run_operations(url: str, steps: list[tuple[str, Any]]) -> None:
    sent: list[str] = []
    with _clock() as clock, open_store(url) as store:
        for op, arg in steps:
            if op == "store":
                texts = [json.dumps(event) for event in arg]
                sent.extend(texts)
                store.append_many(texts)
            elif op == "resend" and sent:
                text = sent[arg % len(sent)]
                store.append_many([json.dumps(json.loads(text), indent=2, sort_keys=True)])
            elif op == "next day":
                clock.now += timedelta(days=1)
            elif op == "retain":
                store.retain(raw_events_days=arg, job_described_for_days=30, now=clock.now)
            elif op == "forget":
                for settings_ in {cache.fold_settings(make()) for make in DEFINITIONS.values()}:
                    store.forget_folded_jobs(settings_, [])
                store.keep_sql_hashes({})
            elif op == "upgrade":
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(cache, "FORMAT", f"{cache.FORMAT}-next")
                    _check(store, DEFINITIONS["default"]())
            elif op == "plan":
                _check(store, DEFINITIONS[arg]())
            elif op == "race":  # another process stores events while a snapshot reads
                texts = [json.dumps(event) for event in arg]
                sent.extend(texts)
                _racing(store, url, texts)


@given(steps=operations())
def test_any_history_of_operations_plans_as_a_full_refold(steps: list[tuple[str, Any]]) -> None:
    """Batches stored (late eventTimes, re-sends, duplicates, a malformed event, runs whose
    earlier events retention pruned), days passing and retention, kept folds and the SQL memo
    cleared, a release upgrade, a definition changed, and a snapshot raced by a writer: after
    each, the snapshot's plan is the plan of every stored event read at once."""
    with tempfile.TemporaryDirectory() as directory:
        run_operations(f"sqlite:///{directory}/events.db", steps)


@pytest.mark.postgres
@given(steps=operations())
def test_any_history_of_operations_plans_as_a_full_refold_on_postgresql(
    steps: list[tuple[str, Any]],
) -> None:
    with postgres_schema(postgres_base_url()) as url:
        run_operations(url, steps)
