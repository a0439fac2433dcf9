"""Issue 38: a task removed from its DAG leaves Blindata at the next sync, and an admin can retire
a job now (``airflow-blindata store forget-job``, a dry run unless ``--yes``).

Real parts: the SQLite store, the snapshot and cleanup as the sync DAG runs them
(``run_snapshot``, ``run_cleanup``), the emulator over loopback, the command's ``main``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import DataFlow, Ref
from airflow_blindata.cli import main
from airflow_blindata.store import EventStore
from airflow_blindata.sync.runner import run_cleanup, run_snapshot
from tests.mapper.removed_tasks import ALL, BEFORE, DAG, NS, DagRun

from .helpers import definition, next_second, objects

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

REMOVED = f"{DAG}.report"
CHILD = f"{REMOVED}.query.1"
"""A SQL statement the task reported as a child job."""
AFTER = DagRun("r2", 1, ["extract", "load"], listed={"extract": "success", "load": "success"})


def landed(emulator: Any, job: str) -> dict[str, Any]:
    """What Blindata holds of ``job``: its job entity, routines, flows, and the DAG→job link."""
    entities = objects(emulator, Kind.ENTITY)
    job_entity = [e for e in entities if e.get("schema") == NS and e["name"] == job]
    uuids = {e["uuid"] for e in job_entity}
    flows = objects(emulator, Kind.FLOW)
    return {
        "job entity": bool(job_entity),
        "routines": any(job in r["name"] for r in objects(emulator, Kind.ROUTINE)),
        "table flows": any((f.get("scope") or "") == f"ol:{NS}|{job}" for f in flows),
        "DAG link": any(
            ((f.get("toPhysicalEntity") or {}).get("uuid") in uuids)
            and (f.get("scope") or "").endswith("#orchestration")
            for f in flows
        ),
    }


GONE = {"job entity": False, "routines": False, "table flows": False, "DAG link": False}
THERE = {"job entity": True, "routines": True, "table flows": True, "DAG link": True}


def job() -> Any:
    """A small catalog: one task is a quarter of it, over the default removal share."""
    return definition(cleanup={"maxRemovalShare": 0.5})


def sync(client: BlindataClient, store: EventStore, emulator: Any) -> None:
    snapshot = run_snapshot(job(), client, store)
    cleanup = run_cleanup(job(), client, store)
    assert snapshot.status == "success", snapshot.render()
    assert cleanup.status == "success", cleanup.render()
    next_second(emulator)


def test_a_task_removed_from_its_dag_leaves_blindata_at_the_next_sync(
    client: BlindataClient, store: EventStore, emulator: Any
) -> None:
    store.append_many(BEFORE.events())
    sync(client, store, emulator)
    assert landed(emulator, REMOVED) == THERE
    table = next(e for e in objects(emulator, Kind.ENTITY) if e["name"] == "report")
    person = DataFlow(
        name="a person's flow",
        from_physical_entity=Ref(uuid=table["uuid"]),
        to_physical_entity=Ref(uuid=table["uuid"]),
    )
    client.api.dataflows.upload([person])

    store.append_many(AFTER.events())
    snapshot = run_snapshot(job(), client, store)
    cleanup = run_cleanup(job(), client, store)

    assert snapshot.counters["jobsRetired"] == 1, snapshot.render()
    why = f"task 'report' is not in the latest run of DAG {NS}/{DAG}"
    assert snapshot.retired == [f"{NS}/{REMOVED}: {why}"]
    assert f"{NS}/{REMOVED}  {why}" in snapshot.render()
    assert cleanup.status == "success", cleanup.render()
    assert landed(emulator, REMOVED) == GONE, cleanup.render()
    for task in ("extract", "load"):
        assert landed(emulator, f"{DAG}.{task}") == THERE
    assert any(f["name"] == "a person's flow" for f in objects(emulator, Kind.FLOW))
    assert any(e["name"] == "report" for e in objects(emulator, Kind.ENTITY))


def test_forget_job_retires_a_job_now_after_a_dry_run_first(
    client: BlindataClient,
    store: EventStore,
    emulator: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dag_run = DagRun("r1", 0, ["extract", "load", "report"], listed=ALL, children={CHILD: "report"})
    store.append_many(dag_run.events())
    sync(client, store, emulator)
    forget = ["store", "forget-job", NS, REMOVED, "--store", f"sqlite:///{tmp_path / 'events.db'}"]

    assert main(forget) == 0
    out = capsys.readouterr().out
    assert f"Would forget job {NS}/{REMOVED}: 1 event(s) of 1 run(s)" in out
    assert "1 job(s) named sales.report.… stay" in out and "--with-children" in out
    assert "--yes" in out
    sync(client, store, emulator)
    assert landed(emulator, REMOVED) == THERE

    assert main([*forget, "--with-children", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"Forgot job {NS}/{REMOVED}: 1 event(s)" in out
    assert f"Forgot job {NS}/{CHILD}: 1 event(s)" in out
    sync(client, store, emulator)
    assert landed(emulator, REMOVED) == GONE
    assert not landed(emulator, CHILD)["job entity"]
    assert landed(emulator, f"{DAG}.load") == THERE
    assert main(forget) == 1
    assert "The store holds no event of job" in capsys.readouterr().out


def test_a_retired_tasks_job_entity_that_a_persons_flow_ends_on_stays(
    client: BlindataClient, store: EventStore, emulator: Any
) -> None:
    """The cleanup's protections apply to a retired task as to any stale object."""
    store.append_many(BEFORE.events())
    sync(client, store, emulator)
    entities = objects(emulator, Kind.ENTITY)
    job_entity = next(e for e in entities if e.get("schema") == NS and e["name"] == REMOVED)
    table = next(e for e in entities if e["name"] == "report")
    person = DataFlow(
        name="read by the finance team",
        from_physical_entity=Ref(uuid=job_entity["uuid"]),
        to_physical_entity=Ref(uuid=table["uuid"]),
    )
    client.api.dataflows.upload([person])
    person_to_job = person.model_copy(
        update={
            "name": "reviewed by a person",
            "from_physical_entity": Ref(uuid=table["uuid"]),
            "to_physical_entity": Ref(uuid=job_entity["uuid"]),
        }
    )
    client.api.dataflows.upload([person_to_job])

    store.append_many(AFTER.events())
    run_snapshot(job(), client, store)
    cleanup = run_cleanup(job(), client, store)

    assert cleanup.status == "success", cleanup.render()
    assert landed(emulator, REMOVED) == {
        "job entity": True,
        "routines": False,
        "table flows": False,
        "DAG link": False,
    }, cleanup.render()
    assert "of other owners end on it" in cleanup.kept["entity"].examples[0]
    names = {f["name"] for f in objects(emulator, Kind.FLOW)}
    assert {"read by the finance team", "reviewed by a person"} <= names
