"""Capture of a DAG shaped as deployments write them, through real Airflow, then its plan.

One ``dag.test()`` in a subprocess (about 20 s) runs a DAG written to a temporary folder: dynamic
task mapping (``.expand``, ``.expand_kwargs``, a mapped task group), a task that fails once and
succeeds on its retry, one that fails for good, a skipped task, a poke sensor that times out,
setup and teardown, a large XCom, Airflow 3 assets as inlets and outlets, a DAG id and task ids
with dots, a manual run with a custom run id and a ``conf`` holding a password, a connection URI
with credentials in ``op_kwargs`` and in templated SQL. After the run the runner calls the
listeners' ``on_dag_run_running`` as the scheduler does at a DAG run's start (``dag.test()``
never does), so the store also holds the DAG's START and its task graph.

Capture is through a composite (a file leg standing in for Marquez, and BlindataTransport); the
listener, left on, must stand down. Seed 001 for the flows, docs/capture.md for the guarantees.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from airflow_blindata.capture.openlineage_config import TRANSPORT_PATH
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.airflow_db import migrate

pytestmark = [pytest.mark.airflow, pytest.mark.integration]

BIN = Path(sys.executable).parent
AIRFLOW_VERSION = Version(importlib.metadata.version("apache-airflow"))
DAG_ID = "shapes.v1"
RUN_ID = "manual__nightly.rerun~2026-01-01:a+b"
SECRETS = ("hunter2", "s3cr3t-kw", "sqlpw99")

DAG_FILE = '''
from __future__ import annotations
import os
from pathlib import Path
import pendulum
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import DAG, Asset, setup, task, task_group, teardown
from airflow.providers.common.compat.sdk import AirflowSkipException

MARK = Path(os.environ["SHAPES_WORK"]) / "flaky-failed-once"
SRC = "postgres://db.example:5432/dwh/public/orders"


def _flaky() -> None:
    if not MARK.exists():
        MARK.write_text("x")
        raise RuntimeError("the first try fails")


def _broken() -> None:
    raise RuntimeError("fails for good")


def _skip() -> None:
    raise AirflowSkipException("nothing to do")


def _copy(uri: str) -> None:
    """The URI (with its password) is an argument, as a task would be given it."""


with DAG(
    dag_id="shapes.v1",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retry_delay": pendulum.duration(seconds=0)},
) as dag:

    @setup
    def make_env() -> str:
        return "env"

    @teardown
    def drop_env() -> None:
        pass

    @task
    def items() -> list[int]:
        return [1, 2, 3]

    @task
    def double(x: int) -> int:
        return 2 * x

    @task
    def pair(a: int, b: str) -> str:
        return f"{a}{b}"

    @task
    def big() -> str:
        return "y" * 1_000_000

    @task_group(group_id="per_region")
    def per_region(region: str) -> None:
        @task
        def load(region: str) -> str:
            return region

        load(region)

    flaky = PythonOperator(task_id="flaky", python_callable=_flaky, retries=1)
    broken = PythonOperator(task_id="broken", python_callable=_broken)
    skip = PythonOperator(task_id="skip", python_callable=_skip)
    sensor = PythonSensor(
        task_id="wait.for_file", python_callable=lambda: False, poke_interval=1, timeout=2
    )
    copy = PythonOperator(
        task_id="copy.orders",
        python_callable=_copy,
        op_kwargs={"uri": "postgresql://etl:s3cr3t-kw@db.example:5432/dwh"},
        inlets=[Asset(SRC)],
        outlets=[Asset("postgres://db.example:5432/dwh/mart/orders")],
    )
    sql = SQLExecuteQueryOperator(
        task_id="sql",
        conn_id="shapes_sqlite",
        sql=[
            "CREATE TABLE IF NOT EXISTS sources (uri TEXT)",
            "INSERT INTO sources (uri) VALUES ('postgresql://etl:sqlpw99@db.example/dwh')",
            "INSERT INTO sources (uri) VALUES "
            "('postgresql://etl:{{ dag_run.conf[\\'password\\'] }}@db.example/dwh')",
        ],
    )
    env = make_env()
    env >> [items(), flaky, broken, skip, sensor, copy, sql] >> drop_env().as_teardown(
        setups=env
    )
    double.expand(x=items())
    pair.expand_kwargs([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    per_region.expand(region=["eu", "us"])
    big()
'''

RUNNER = """
import json, os, sys, time
from pathlib import Path

work = Path(os.environ["SHAPES_WORK"])
sys.path.insert(0, str(work / "dags"))
from shapes import dag  # after the environment is set
from airflow.models.dagrun import DagRun
from airflow.models.taskinstance import TaskInstance
from airflow.listeners.listener import get_listener_manager
from airflow.utils.session import create_session

DagRun.generate_run_id = staticmethod(lambda **_: os.environ["SHAPES_RUN_ID"])  # a custom run id
run = dag.test(run_conf={"password": "hunter2"})
with create_session() as session:
    dag_run = session.query(DagRun).filter(DagRun.dag_id == dag.dag_id).one()
    dag_run.dag = dag
    # the scheduler calls this when a DAG run starts; dag.test() does not
    get_listener_manager().hook.on_dag_run_running(dag_run=dag_run, msg="")
    states = {
        f"{ti.task_id}[{ti.map_index}]": [str(ti.state), ti.try_number]
        for ti in session.query(TaskInstance).filter(TaskInstance.dag_id == dag.dag_id)
    }
time.sleep(2)  # the DAG's START is emitted by a pool process
(work / "result.json").write_text(json.dumps({"run": str(run.state), "tasks": states}))
"""


@dataclass(frozen=True)
class Captured:
    work: Path
    store_url: str
    listener_url: str
    result: dict[str, Any]
    log: str


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Captured:
    work = tmp_path_factory.mktemp("shapes")
    (work / "dags").mkdir()
    (work / "dags" / "shapes.py").write_text(DAG_FILE)
    (work / "runner.py").write_text(RUNNER)  # outside the DAGs folder: not parsed as a DAG
    store_url = f"sqlite:///{work / 'events.db'}"
    listener_url = f"sqlite:///{work / 'listener.db'}"
    composite = {
        "type": "composite",
        "continue_on_failure": True,
        "transports": {
            "marquez": {"type": "file", "log_file_path": str(work / "sent.jsonl"), "append": True},
            "blindata": {"type": TRANSPORT_PATH, "store_url": store_url},
        },
    }
    # Under dag.test() every task runs in one process, whose hook lineage collector would
    # report the SQL task's statements again from each later task: only ``sql`` reports it.
    policy = [
        {"scope": {"dag_id": DAG_ID}, "controls": {"hook_lineage": False}},
        {"scope": {"dag_id": DAG_ID, "task_id": "sql"}, "controls": {"hook_lineage": True}},
    ]
    inherited = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AIRFLOW", "OPENLINEAGE", "PYTEST"))
    }
    env = {
        **inherited,
        "AIRFLOW_HOME": str(work / "home"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(work / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "shapes",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(composite),
        "AIRFLOW__OPENLINEAGE__EMISSION_POLICY": json.dumps(policy),
        "AIRFLOW__BLINDATA__STORE_URL": listener_url,  # where the listener would write
        "AIRFLOW_CONN_SHAPES_SQLITE": json.dumps(
            {"conn_type": "sqlite", "host": str(work / "data.db")}
        ),
        "SHAPES_WORK": str(work),
        "SHAPES_RUN_ID": RUN_ID,
    }
    migrate(env)
    done = subprocess.run(
        [sys.executable, str(work / "runner.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    log = done.stdout + done.stderr
    assert (work / "result.json").exists(), log[-4000:]
    result = json.loads((work / "result.json").read_text())
    return Captured(work, store_url, listener_url, result, log)


def _stored(url: str) -> list[dict[str, Any]]:
    with open_store(url) as store:
        return [event.payload for event in store.events()]


def _task_runs(events: list[dict[str, Any]], task_id: str) -> dict[str, list[str]]:
    """Event types per run id of one task's job, in event time order."""
    runs: dict[str, list[str]] = {}
    for event in sorted(events, key=lambda e: e["eventTime"]):
        if event["job"]["name"] == f"{DAG_ID}.{task_id}":
            runs.setdefault(event["run"]["runId"], []).append(event["eventType"])
    return runs


def _plan(captured: Captured) -> CatalogPlan:
    definition = JobDefinition.from_dict(
        {
            "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "systemPolicies": [{"pattern": "*", "creation": "IF_MISSING"}],
        }
    )
    with open_store(captured.store_url) as store:
        return plan_from_store(store, definition, keep=False)


def test_each_task_ends_as_its_own_code_decides_whatever_capture_does(
    captured: Captured,
) -> None:
    tasks = captured.result["tasks"]
    assert captured.result["run"] == "failed"  # broken and the sensor fail the run
    assert tasks["flaky[-1]"] == ["success", 2]  # failed once, succeeded on its retry
    assert tasks["broken[-1]"] == ["failed", 1]
    assert tasks["skip[-1]"] == ["skipped", 1]
    assert tasks["wait.for_file[-1]"] == ["failed", 1]  # the poke sensor timed out
    for name in (
        "make_env[-1]",
        "drop_env[-1]",
        "copy.orders[-1]",
        "sql[-1]",
        "big[-1]",
        *(f"double[{i}]" for i in range(3)),
        *(f"pair[{i}]" for i in range(2)),
        *(f"per_region.load[{i}]" for i in range(2)),
    ):
        assert tasks[name] == ["success", 1], name
    assert "Blindata capture could not" not in captured.log


def test_every_event_sent_is_stored_exactly_once_and_the_listener_stands_down(
    captured: Captured,
) -> None:
    sent = [json.loads(line) for line in (captured.work / "sent.jsonl").read_text().splitlines()]
    stored = _stored(captured.store_url)
    identity = Counter((e["job"]["name"], e["run"]["runId"], e["eventType"]) for e in sent)
    assert Counter((e["job"]["name"], e["run"]["runId"], e["eventType"]) for e in stored) == (
        identity
    )
    assert max(identity.values()) == 1
    assert _stored(captured.listener_url) == []
    dag_events = Counter(e["eventType"] for e in stored if e["job"]["name"] == DAG_ID)
    assert dag_events == Counter({"START": 1, "FAIL": 1})


def test_retries_and_mapped_instances_are_runs_of_the_one_dag_run(captured: Captured) -> None:
    stored = _stored(captured.store_url)
    (dag_run,) = {e["run"]["runId"] for e in stored if e["job"]["name"] == DAG_ID}
    parents = {
        e["run"]["facets"]["parent"]["run"]["runId"]
        for e in stored
        if e["job"]["name"].startswith(f"{DAG_ID}.") and ".query." not in e["job"]["name"]
    }
    assert parents == {dag_run}
    assert sorted(_task_runs(stored, "flaky").values()) == [
        ["START", "COMPLETE"],
        ["START", "FAIL"],
    ]
    assert list(_task_runs(stored, "broken").values()) == [["START", "FAIL"]]
    assert list(_task_runs(stored, "wait.for_file").values()) == [["START", "FAIL"]]
    # On Airflow 3.1 the OpenLineage provider emits no terminal event for a task that skipped
    # itself (3.2+: COMPLETE), so its run ends at START there (measured; docs/versions.md)
    skipped = ["START", "COMPLETE"] if AIRFLOW_VERSION.release[:2] >= (3, 2) else ["START"]
    assert list(_task_runs(stored, "skip").values()) == [skipped]
    for task_id, instances in (("double", 3), ("pair", 2), ("per_region.load", 2)):
        runs = _task_runs(stored, task_id)
        assert sorted(runs.values()) == [["START", "COMPLETE"]] * instances, task_id


def test_the_plan_has_every_task_its_graph_and_the_lineage_of_the_assets(
    captured: Captured,
) -> None:
    plan = _plan(captured)
    jobs = {e.key.name for e in plan.entities if e.table_type == "OPENLINEAGE_JOB"}
    tasks = {
        "make_env",
        "drop_env",
        "items",
        "items__1",
        "double",
        "pair",
        "big",
        "per_region.load",
        "flaky",
        "broken",
        "skip",
        "wait.for_file",
        "copy.orders",
        "sql",
    }
    assert {f"{DAG_ID}.{t}" for t in tasks} | {DAG_ID} <= jobs
    orchestration = {
        (f.source.entity.name, f.target.entity.name, f.scope)
        for f in plan.flows
        if f.kind == "orchestration"
    }
    graph = f"ol:shapes|{DAG_ID}#orchestration"
    # the task graph comes from the DAG's START: the failed tasks' edges are there too
    for upstream in ("flaky", "broken", "skip", "wait.for_file", "copy.orders", "sql", "items"):
        edge = (f"{DAG_ID}.{upstream}", f"{DAG_ID}.drop_env", graph)
        assert edge in orchestration, edge
    assert (f"{DAG_ID}.items__1", f"{DAG_ID}.double", graph) in orchestration
    # parent → child only from completed runs (seed 001): not the tasks that only failed
    children = {t for s, t, _ in orchestration if s == DAG_ID}
    assert f"{DAG_ID}.flaky" in children and f"{DAG_ID}.per_region.load" in children
    assert not {f"{DAG_ID}.broken", f"{DAG_ID}.wait.for_file"} & children
    tables = {
        (
            f.source.entity.schema_,
            f.source.entity.name,
            f.target.entity.schema_,
            f.target.entity.name,
        )
        for f in plan.flows
        if f.kind == "table" and f.scope == f"ol:shapes|{DAG_ID}.copy.orders"
    }
    assert tables == {("public", "orders", "mart", "orders")}


def test_no_secret_of_the_run_reaches_the_plan(captured: Captured) -> None:
    """The conf's password, the URI in ``op_kwargs`` and the URLs in the SQL (one of them
    templated from the conf) are in the store as sent; what the sync would send is not."""
    plan = _plan(captured)
    routines = {r.name: r.definition for r in plan.routines}
    assert routines[f"{DAG_ID}.sql.query.2"] == (
        "INSERT INTO sources (uri) VALUES ('postgresql://etl:***@db.example/dwh')"
    )
    assert routines[f"{DAG_ID}.sql.query.3"] == (
        "INSERT INTO sources (uri) VALUES ('postgresql://etl:***@db.example/dwh')"
    )
    shown = plan.model_dump_json(by_alias=True)  # what ``airflow-blindata plan`` shows
    for secret in SECRETS:
        assert secret not in shown, secret
