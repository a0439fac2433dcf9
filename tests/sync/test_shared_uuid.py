"""Two deployments that share a definition uuid (a definition file copied from one Airflow to
another, or the docs' example uuid kept): each one's cleanup judged the other's objects stale by
the owner stamp alone, and removed its lineage at every sync.

docs/removal-of-deprecated-metadata.md: the cleanup "never removes what a crawler, a person or
another job definition created". The syncs stamp the job entities they write with their event
store's id (``openLineageStore``); a cleanup that would remove a job another store's sync wrote
refuses (``another_store``) until run with force.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.store import EventStore, open_store
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.runner import run_cleanup, run_snapshot
from tests.builders import dataset, run_event, sql_facet

from .helpers import definition, next_second, objects, plan_for

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

PG = "postgres://db:5432"
JOB = definition(cleanup={"maxRemovalShare": 1.0})


def job_run(job: str, table: str) -> list[dict[str, Any]]:
    return [
        run_event(
            job,
            namespace=namespace,
            event_type=kind,
            run_id=f"00000000-0000-4000-8000-{job.encode().hex()[:12]:0>12}",
            time=f"2026-01-02T10:00:{second:02d}Z",
            inputs=[dataset("shop.public.orders", PG)],
            outputs=[dataset(f"shop.public.{table}", PG)],
            job_facets=sql_facet(f"INSERT INTO {table} SELECT * FROM orders"),
        )
        for namespace in ("airflow-a" if job.startswith("a_") else "airflow-b",)
        for kind, second in (("START", 0), ("COMPLETE", 30))
    ]


def job_names(emulator: Any) -> set[str]:
    return {
        f"{entity.get('schema')}/{entity['name']}"
        for entity in objects(emulator, Kind.ENTITY)
        if entity.get("tableType") == "OPENLINEAGE_JOB"
    }


def flow_names(emulator: Any) -> set[str]:
    return {flow["name"] for flow in objects(emulator, Kind.FLOW)}


def sync(store: EventStore, client: BlindataClient, emulator: Any) -> None:
    next_second(emulator)
    assert run_snapshot(JOB, client, store, apply_retention=False).status == "success"


@pytest.fixture
def stores(tmp_path: Path) -> Any:
    with (
        open_store(f"sqlite:///{tmp_path / 'a.db'}") as a,
        open_store(f"sqlite:///{tmp_path / 'b.db'}") as b,
    ):
        yield a, b


def test_a_cleanup_never_removes_the_jobs_another_deployment_syncs_under_the_same_uuid(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    a, b = stores
    a.append_many(job_run("a_load", "a_out"))
    b.append_many(job_run("b_load", "b_out"))
    sync(a, client, emulator)
    sync(b, client, emulator)
    sync(a, client, emulator)
    assert job_names(emulator) == {"airflow-a/a_load", "airflow-b/b_load"}
    flows = flow_names(emulator)

    refused = run_cleanup(JOB, client, a)
    assert (refused.status, refused.reason) == ("refused", "another_store")
    assert "airflow-b/b_load" in (refused.message or "")
    assert "give each deployment its own uuid" in (refused.message or "").lower()
    assert job_names(emulator) == {"airflow-a/a_load", "airflow-b/b_load"}
    assert flow_names(emulator) == flows

    forced = run_cleanup(JOB, client, a, force=True)  # this store replaced the other one
    assert forced.status == "success", forced.message
    assert job_names(emulator) == {"airflow-a/a_load"}


def test_the_tables_of_a_job_both_deployments_run_are_the_other_stores_too(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    """Prod and dev run the same DAG under one uuid: both syncs refresh the same job entity, so
    none is stale and nothing was refused, and dev's cleanup removed the table only prod's run
    still writes (a probe of cleanups). The tables a sync writes carry its store's id too."""
    a, b = stores
    prod = job_run("a_load", "a_out")
    prod[1]["outputs"].append(dataset("shop.public.prod_extra", PG))
    a.append_many(prod)
    b.append_many(job_run("a_load", "a_out"))
    sync(a, client, emulator)
    sync(b, client, emulator)
    tables = {entity["name"] for entity in objects(emulator, Kind.ENTITY)}
    assert "prod_extra" in tables

    refused = run_cleanup(JOB, client, b)
    assert (refused.status, refused.reason) == ("refused", "another_store")
    assert "prod_extra" in (refused.message or "")
    assert {entity["name"] for entity in objects(emulator, Kind.ENTITY)} == tables


def test_a_table_the_cleanup_keeps_blocks_no_later_cleanup(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    """The store moved (a new database): the first cleanup refuses, the forced one keeps a table
    a person described, stamped by the old store, and the cleanups after it went on refusing
    for it (a review): only what a cleanup would remove is judged."""
    old, new = stores
    first = job_run("a_load", "a_out")
    first[1]["outputs"].append(dataset("shop.public.extra", PG))
    old.append_many(first + job_run("a_gone", "a_gone_out"))
    sync(old, client, emulator)
    extra = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "extra")
    stored = client.api.physical_entities.get(extra["uuid"])
    client.api.physical_entities.update(stored.model_copy(update={"description": "A steward's"}))
    new.append_many(job_run("a_load", "a_out"))
    sync(new, client, emulator)
    assert run_cleanup(JOB, client, new).reason == "another_store"
    assert run_cleanup(JOB, client, new, force=True).status == "success"
    sync(new, client, emulator)
    again = run_cleanup(JOB, client, new)
    assert again.status == "success", again.message
    assert "extra" in {entity["name"] for entity in objects(emulator, Kind.ENTITY)}


def test_a_job_of_another_store_kept_for_a_steward_still_guards_its_flows(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    """The other store's job entity is kept (a steward described it), but its flows would go:
    only what the cleanup removes was judged, and they went with no refusal (a review). No SQL:
    no routine of the other store's tells it."""

    def without_sql(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [event | {"job": event["job"] | {"facets": {}}} for event in events]

    a, b = stores
    a.append_many(without_sql(job_run("a_load", "a_out")))
    b.append_many(without_sql(job_run("b_load", "a_out")))  # the table both refresh
    sync(a, client, emulator)
    sync(b, client, emulator)
    b_load = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "b_load")
    stored = client.api.physical_entities.get(b_load["uuid"])
    client.api.physical_entities.update(stored.model_copy(update={"description": "A steward's"}))
    sync(a, client, emulator)
    flows = flow_names(emulator)

    refused = run_cleanup(JOB, client, a)

    assert (refused.status, refused.reason) == ("refused", "another_store"), refused.message
    assert flow_names(emulator) == flows


def test_without_job_entities_the_routines_tell_another_stores_jobs(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    """``processLayer: false`` makes no job entity: a job's routine is what another store's
    sync wrote of it (a review: the other deployment's routines and their analysis went)."""
    job = definition(cleanup={"maxRemovalShare": 1.0}, processLayer=False)
    a, b = stores
    a.append_many(job_run("a_load", "a_out"))
    b.append_many(job_run("b_load", "b_out"))
    for store in (a, b, a):
        next_second(emulator)
        assert run_snapshot(job, client, store, apply_retention=False).status == "success"
    routines = {r["name"] for r in objects(emulator, Kind.ROUTINE)}
    assert routines == {"a_load", "b_load"}
    refused = run_cleanup(job, client, a)
    assert (refused.status, refused.reason) == ("refused", "another_store")
    assert "b_load" in (refused.message or "")
    assert {r["name"] for r in objects(emulator, Kind.ROUTINE)} == routines


def test_a_job_this_store_stopped_describing_is_removed_as_before(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    a, _ = stores
    a.append_many(job_run("a_load", "a_out") + job_run("a_gone", "a_gone_out"))
    sync(a, client, emulator)
    a.forget_job("airflow-a", "a_gone", dry_run=False)
    sync(a, client, emulator)
    report = run_cleanup(JOB, client, a)
    assert report.status == "success", report.message
    assert job_names(emulator) == {"airflow-a/a_load"}


def test_a_job_written_before_the_stores_stamp_is_this_stores(
    client: BlindataClient, emulator: Any, stores: tuple[EventStore, EventStore]
) -> None:
    """An upgrade: the job entities an earlier release wrote carry no store id."""
    a, _ = stores
    next_second(emulator)
    old = plan_for(client, job_run("a_load", "a_out") + job_run("a_gone", "a_gone_out"), JOB)
    assert snapshot(old, client, JOB).status == "success"  # no store id: as before the stamp
    a.append_many(job_run("a_load", "a_out"))
    sync(a, client, emulator)
    report = run_cleanup(JOB, client, a)
    assert report.status == "success", report.message
    assert job_names(emulator) == {"airflow-a/a_load"}


def test_the_store_id_is_made_once_and_kept(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url) as store:
        first = store.store_id()
        assert first and store.store_id() == first
    with open_store(store_url) as store:
        assert store.store_id() == first
    with open_store(f"sqlite:///{tmp_path / 'other.db'}") as other:
        assert other.store_id() != first
