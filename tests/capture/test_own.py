"""The provider's own tasks and the sync DAG are left out of capture, with no configuration."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pendulum
import pytest
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

from airflow_blindata.capture import transport as transport_module
from airflow_blindata.capture.lazy import CaptureListener
from airflow_blindata.capture.own import (
    OWN_OPERATORS,
    is_own_dag,
    is_own_event,
    is_own_operator,
    is_own_task_instance,
)
from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
from airflow_blindata.operators import BlindataCleanupOperator, BlindataSnapshotOperator
from airflow_blindata.store import open_store

SNAPSHOT = "airflow_blindata.operators.blindata.BlindataSnapshotOperator"
CLEANUP = "airflow_blindata.operators.blindata.BlindataCleanupOperator"


class MySnapshot(BlindataSnapshotOperator):
    """A user's subclass: still the provider's sync."""


def build_dag(dag_id: str, *, with_other: bool) -> DAG:
    with DAG(dag_id, schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        snapshot = BlindataSnapshotOperator(task_id="snapshot", definition="d.yaml")
        snapshot >> BlindataCleanupOperator(task_id="cleanup", definition="d.yaml")
        if with_other:
            EmptyOperator(task_id="notify")
    return dag


def test_the_own_operators_are_named_where_they_live() -> None:
    assert {SNAPSHOT, CLEANUP} == OWN_OPERATORS
    assert {f"{c.__module__}.{c.__qualname__}" for c in (BlindataSnapshotOperator,)} < OWN_OPERATORS


def test_tasks_and_dags_are_recognised_as_the_task_runner_and_the_scheduler_hold_them() -> None:
    try:
        from airflow.serialization.serialized_objects import DagSerialization
    except ImportError:  # Airflow 3.1: the same methods on SerializedDAG
        from airflow.serialization.serialized_objects import SerializedDAG as DagSerialization

    sync, mixed = build_dag("sync", with_other=False), build_dag("mixed", with_other=True)
    assert is_own_operator(sync.get_task("snapshot")) and is_own_operator(mixed.get_task("cleanup"))
    assert not is_own_operator(mixed.get_task("notify"))
    assert is_own_operator(MySnapshot(task_id="mine", definition="d.yaml"))
    assert is_own_dag(sync) and not is_own_dag(mixed)
    serialized = DagSerialization.from_dict(DagSerialization.to_dict(sync))  # the scheduler's
    assert is_own_dag(serialized)
    assert is_own_operator(serialized.get_task("snapshot"))
    assert not is_own_dag(DagSerialization.from_dict(DagSerialization.to_dict(mixed)))
    # the task runner's task instance, and a row changed by hand in the UI (no task object)
    assert is_own_task_instance(SimpleNamespace(task=sync.get_task("snapshot")))
    assert is_own_task_instance(SimpleNamespace(task=None, operator="BlindataCleanupOperator"))
    assert not is_own_task_instance(SimpleNamespace(task=None, operator="EmptyOperator"))


def task_event(operator_path: str, name: str = "sync.snapshot") -> dict[str, Any]:
    task = {
        "operator_class": operator_path.rpartition(".")[2],
        "operator_class_path": operator_path,
    }
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-01T10:00:00+00:00",
        "producer": "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4()), "facets": {"airflow": {"task": task}}},
        "job": {"namespace": "airflow", "name": name, "facets": {}},
        "inputs": [],
        "outputs": [],
    }


def dag_event(tasks: dict[str, str] | None) -> dict[str, Any]:
    event = task_event(SNAPSHOT, name="sync")
    job_type = {"integration": "AIRFLOW", "jobType": "DAG", "processingType": "BATCH"}
    event["job"]["facets"] = {"jobType": job_type}
    event["run"]["facets"] = {"airflowDagRun": {"dagRun": {"dag_id": "sync", "run_id": "r1"}}}
    if tasks is not None:  # a DAG START lists the tasks
        operators = {task_id: {"operator": path} for task_id, path in tasks.items()}
        event["job"]["facets"]["airflow"] = {"tasks": operators}
    return event


def test_events_are_recognised_by_their_airflow_facets() -> None:
    assert is_own_event(task_event(SNAPSHOT)) and is_own_event(task_event(CLEANUP))
    other = "airflow.providers.standard.operators.empty.EmptyOperator"
    assert not is_own_event(task_event(other))
    assert is_own_event(dag_event({"snapshot": SNAPSHOT, "cleanup": CLEANUP}))
    assert not is_own_event(dag_event({"snapshot": SNAPSHOT, "notify": other}))
    assert not is_own_event(dag_event(None))  # a DAG run's end: Airflow is asked, when allowed
    assert not is_own_event({"eventType": "COMPLETE", "job": {"name": "spark"}})
    assert not is_own_event("not an event") and not is_own_event({"run": "x"})


@pytest.fixture(autouse=True)
def nothing_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_blindata.capture import own

    monkeypatch.setattr(own, "_OWN_TASK_JOBS", set())


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(transport_module, "_STORES", {})
    yield f"sqlite:///{tmp_path / 'events.db'}"


def query_event(parent_job: str, n: int = 1) -> dict[str, Any]:
    """A per-statement event of SQL hook lineage: no operator, a parent task."""
    event = task_event(SNAPSHOT, name=f"{parent_job}.query.{n}")
    job_type = {"integration": "AIRFLOW", "jobType": "QUERY", "processingType": "BATCH"}
    event["job"]["facets"] = {"jobType": job_type, "sql": {"query": "SELECT 1"}}
    parent = {"job": {"namespace": "airflow", "name": parent_job}, "run": {"runId": "r"}}
    event["run"]["facets"] = {"parent": parent}
    return event


def test_the_transport_leaves_out_the_statements_of_an_own_task_the_listener_saw(
    store_url: str,
) -> None:
    """Through the transport, the provider's own task is seen first by the plugin's listener,
    in the task's process, before the OpenLineage provider forks the child that emits."""
    sync = build_dag("sync", with_other=True)
    transport = BlindataTransport(BlindataTransportConfig(store_url=store_url))
    capture = CaptureListener(listen=False, store_urls=[store_url])
    for task_id in ("snapshot", "notify"):
        task = sync.get_task(task_id)
        running = SimpleNamespace(task=task, dag_id="sync", task_id=task_id)
        capture.on_task_instance_running(previous_state=None, task_instance=running)
    assert store_url in transport_module._STORES  # prepared for the forks
    assert transport.emit(query_event("sync.snapshot")) is None
    assert transport.emit(query_event("sync.snapshot", 2)) is None
    assert transport.emit(query_event("sync.notify")) is not None
    assert transport.emit(query_event("etl.load")) is not None
    with open_store(store_url) as store:
        assert sorted(event.job_name for event in store.events()) == [
            "etl.load.query.1",
            "sync.notify.query.1",
        ]


def test_the_transport_leaves_the_own_events_out(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_blindata.capture import own

    transport = BlindataTransport(BlindataTransportConfig(store_url=store_url))
    assert transport.emit(task_event(SNAPSHOT)) is None
    assert transport.emit(dag_event({"snapshot": SNAPSHOT, "cleanup": CLEANUP})) is None
    asked: list[Any] = []
    monkeypatch.setattr(own, "_own_dag_run", lambda data: asked.append(data) or True)
    assert transport.emit(dag_event(None)) is None and len(asked) == 1  # the end of the run
    kept = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime="2026-03-01T10:00:00+00:00",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="airflow", name="etl.load"),
        producer="p",
    )
    assert transport.emit(kept) is not None
    assert transport.emit(task_event("my.Operator", name="etl.other")) is not None
    with open_store(store_url) as store:
        assert sorted(event.job_name for event in store.events()) == ["etl.load", "etl.other"]


def test_the_listener_never_extracts_the_own_tasks_and_dags(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_blindata.capture import listener as listener_module

    handed: list[str] = []

    class Recorder:
        store_url = None

        def __getattr__(self, name: str) -> Any:
            return lambda **_: handed.append(name)

    monkeypatch.setattr(listener_module, "get_blindata_listener", lambda **_: Recorder())
    capture = CaptureListener(listen=True)
    sync, mixed = build_dag("sync", with_other=False), build_dag("mixed", with_other=True)
    for task in (sync.get_task("snapshot"), mixed.get_task("cleanup")):
        capture.on_task_instance_running(
            previous_state=None, task_instance=SimpleNamespace(task=task)
        )
        capture.on_task_instance_failed(
            previous_state=None, task_instance=SimpleNamespace(task=task), error=None
        )
    capture.on_dag_run_success(dag_run=SimpleNamespace(dag=sync), msg="success")
    assert handed == [] and transport_module._STORES == {}  # not even prepared
    capture.on_task_instance_running(
        previous_state=None, task_instance=SimpleNamespace(task=mixed.get_task("notify"))
    )
    capture.on_dag_run_success(dag_run=SimpleNamespace(dag=mixed), msg="success")
    assert handed == ["on_task_instance_running", "on_dag_run_success"]


def test_a_dag_run_of_the_own_operators_is_told_by_its_task_instances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow.models.dagrun import DagRun

    from airflow_blindata.capture import own

    operators = {"r1": ["BlindataSnapshotOperator", "BlindataCleanupOperator"], "r2": []}
    operators["r3"] = ["BlindataSnapshotOperator", "EmptyOperator"]

    def fetch(dag_id: str, run_id: str) -> list[Any]:
        assert dag_id == "sync"
        return [SimpleNamespace(operator=name) for name in operators[run_id]]

    monkeypatch.setattr(DagRun, "fetch_task_instances", staticmethod(fetch))
    event = dag_event(None)
    assert own._own_dag_run(event)
    for run_id in ("r2", "r3"):
        event["run"]["facets"]["airflowDagRun"]["dagRun"]["run_id"] = run_id
        assert not own._own_dag_run(event)
    assert json.dumps(event)  # the event itself is not changed
