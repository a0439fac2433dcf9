"""Capture through real Airflow: ``dag.test()`` of a DAG with real operators, in a subprocess.

Each run gets its own environment, set before Airflow is imported (the OpenLineage plugin decides
at import whether to listen), and shares one migrated ``AIRFLOW_HOME``. The DAG
(``tests/fixtures/dags/capture_e2e.py``) has a PythonOperator with file inlets and outlets and a
SQLExecuteQueryOperator on SQLite; the provider emits START and COMPLETE for both tasks, START and
COMPLETE for each of the two SQL statements (hook lineage) and, under ``dag.test()``, only the
DAG's COMPLETE. The store must hold exactly those nine, once each, however capture is set up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.capture.openlineage_config import TRANSPORT_PATH
from airflow_blindata.capture.transport import count_lost_events
from airflow_blindata.store import open_store
from tests.airflow_db import migrate

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parents[1] / "fixtures" / "dags"
BIN = Path(sys.executable).parent
EXPECTED = Counter(
    {
        ("capture_e2e.py", "START"): 1,
        ("capture_e2e.py", "COMPLETE"): 1,
        ("capture_e2e.sql", "START"): 1,
        ("capture_e2e.sql", "COMPLETE"): 1,
        ("capture_e2e.sql.query.1", "START"): 1,
        ("capture_e2e.sql.query.1", "COMPLETE"): 1,
        ("capture_e2e.sql.query.2", "START"): 1,
        ("capture_e2e.sql.query.2", "COMPLETE"): 1,
        ("capture_e2e", "COMPLETE"): 1,
    }
)


def _environment(home: Path, **extra: str) -> dict[str, str]:
    inherited = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AIRFLOW", "OPENLINEAGE", "PYTEST"))
    }
    return {
        **inherited,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "capture_test",
        "AIRFLOW_CONN_CAPTURE_SQLITE": json.dumps(
            {"conn_type": "sqlite", "host": str(home / "data.db")}
        ),
        **extra,
    }


@pytest.fixture(scope="module")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("airflow-home")
    migrate(_environment(home))
    return home


def run_dag(home: Path, dag_file: str = "capture_e2e.py", **extra: str) -> str:
    """``dag.test()`` in a fresh process; its log. The run must succeed whatever capture does."""
    done = subprocess.run(
        [sys.executable, str(DAGS / dag_file)],
        env=_environment(home, **extra),
        capture_output=True,
        text=True,
        timeout=240,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert "state=success" in log, log[-4000:]
    return log


def stored(url: str) -> tuple[Counter[tuple[str | None, str | None]], set[str]]:
    with open_store(url) as store:
        events = list(store.events())
    keys = {event.key for event in events}
    assert len(keys) == len(events)
    return Counter((e.job_name, e.event_type) for e in events), {e.source for e in events}


def test_transport(airflow_home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'transport.db'}"
    listener_url = f"sqlite:///{tmp_path / 'listener.db'}"
    run_dag(
        airflow_home,
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": TRANSPORT_PATH, "store_url": url}),
        AIRFLOW__BLINDATA__STORE_URL=listener_url,  # where the listener would write
    )
    assert stored(url) == (EXPECTED, {"transport"})
    assert stored(listener_url) == (Counter(), set())  # it stood down: no double capture


def test_listener_alone(airflow_home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'listener.db'}"
    run_dag(airflow_home, AIRFLOW__BLINDATA__STORE_URL=url)
    assert stored(url) == (EXPECTED, {"listener"})


def test_listener_next_to_a_transport_elsewhere(airflow_home: Path, tmp_path: Path) -> None:
    """OpenLineage sends to a file (standing in for Marquez); the listener captures for us.

    Each gets the nine events once: none of the listener's leaks into the other backend.
    """
    url = f"sqlite:///{tmp_path / 'listener.db'}"
    elsewhere = tmp_path / "marquez.jsonl"
    file_transport = {"type": "file", "log_file_path": str(elsewhere), "append": True}
    run_dag(
        airflow_home,
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(file_transport),
        AIRFLOW__BLINDATA__STORE_URL=url,
    )
    assert stored(url) == (EXPECTED, {"listener"})
    sent = [json.loads(line) for line in elsewhere.read_text().splitlines()]
    assert Counter((e["job"]["name"], e["eventType"]) for e in sent) == EXPECTED


def test_an_event_with_a_facet_that_contains_itself_is_kept_without_that_facet(
    airflow_home: Path, tmp_path: Path
) -> None:
    """``include_full_task_info``: the ``airflow`` run facet of the COMPLETE holds the DAG
    object, which contains itself. The event was lost (the lost-events file, then quarantined
    as "not an OpenLineage event" by ``ingest``); it is stored without that facet, with its
    datasets, and the warning names the facet instead of blaming the store."""
    url = f"sqlite:///{tmp_path / 'listener.db'}"
    lost = tmp_path / "lost.jsonl"
    log = run_dag(
        airflow_home,
        "capture_full_task_info.py",
        AIRFLOW__BLINDATA__STORE_URL=url,
        AIRFLOW__BLINDATA__LOST_EVENTS_FILE=str(lost),
        AIRFLOW__OPENLINEAGE__INCLUDE_FULL_TASK_INFO="True",
    )
    assert not lost.exists()
    assert "could not store" not in log
    assert "without the facet it could not serialize: run.facets.airflow: not serializable as " in (
        log
    )
    with open_store(url) as store:
        assert list(store.quarantine()) == []
        events = {(e.job_name, e.event_type): e for e in store.events()}
    assert set(events) == {
        ("capture_full_task_info.py", "START"),
        ("capture_full_task_info.py", "COMPLETE"),
        ("capture_full_task_info", "COMPLETE"),
    }
    complete = events["capture_full_task_info.py", "COMPLETE"].payload
    data = complete if isinstance(complete, dict) else json.loads(complete)
    assert data["run"]["facets"]["airflow"].startswith("dropped when captured: ")
    assert [d["name"] for d in data["inputs"] + data["outputs"]] == [
        "/data/capture/in.csv",
        "/data/capture/out.csv",
    ]


def test_composite_with_a_failing_http_leg(airflow_home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'composite.db'}"
    listener_url = f"sqlite:///{tmp_path / 'listener.db'}"
    composite = {
        "type": "composite",
        "continue_on_failure": True,
        "transports": {
            "marquez": {
                "type": "http",
                "url": "http://127.0.0.1:9",
                "timeout": 1,
                "retry": {"total": 0},
            },
            "blindata": {"type": TRANSPORT_PATH, "store_url": url},
        },
    }
    log = run_dag(
        airflow_home,
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(composite),
        AIRFLOW__BLINDATA__STORE_URL=listener_url,
    )
    assert "name=marquez" in log  # the HTTP leg failed
    assert stored(url) == (EXPECTED, {"transport"})
    assert stored(listener_url) == (Counter(), set())


def test_store_down_the_task_succeeds_and_nothing_is_lost(
    airflow_home: Path, tmp_path: Path
) -> None:
    pytest.importorskip("psycopg")
    lost = tmp_path / "lost.jsonl"
    down = "postgresql://bd:s3cret-pw@127.0.0.1:1/lineage?connect_timeout=2"
    log = run_dag(
        airflow_home,
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": TRANSPORT_PATH, "store_url": down}),
        AIRFLOW__BLINDATA__LOST_EVENTS_FILE=str(lost),
    )
    assert log.count("Blindata capture could not store") == 9
    assert "s3cret-pw" not in log
    assert count_lost_events(lost) == 9
    recovered = f"sqlite:///{tmp_path / 'recovered.db'}"
    done = subprocess.run(
        [str(BIN / "airflow-blindata"), "ingest", str(lost), "--store", recovered],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "9 accepted, 0 duplicate, 0 quarantined" in done.stdout
    assert stored(recovered) == (EXPECTED, {"ingest"})


@pytest.mark.integration
@pytest.mark.parametrize("via", ["listener", "transport"])
def test_the_sync_dag_is_left_out_of_capture(
    airflow_home: Path, tmp_path: Path, emulator: Any, via: str
) -> None:
    """The provider's own operators (``capture_own.py``: a snapshot and a cleanup, the sync DAG's
    shape) run against the emulator; capture keeps none of their task events nor the DAG's,
    with no configuration, whether the listener or the transport captures."""
    from tests.helpers import API_KEY, TENANT, USER

    url = f"sqlite:///{tmp_path / 'own.db'}"
    connection = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": USER,
        "password": API_KEY,
        "extra": {"tenant": TENANT},
    }
    extra = {"AIRFLOW__BLINDATA__STORE_URL": url}  # the operators' store, and the listener's
    if via == "transport":
        extra["AIRFLOW__OPENLINEAGE__TRANSPORT"] = json.dumps({"type": TRANSPORT_PATH})
    log = run_dag(
        airflow_home,
        "capture_own.py",
        AIRFLOW_CONN_BLINDATA_DEFAULT=json.dumps(connection),
        **extra,
    )
    assert "state=success" in log
    assert stored(url) == (Counter(), set())  # no event of the sync, task or DAG
    with open_store(url) as store:
        assert store.stats().sync_records >= 1  # the snapshot did run, on the same store


@pytest.mark.integration
def test_every_instance_of_a_mapped_task_keeps_the_lineage_its_sql_hook_reported(
    airflow_home: Path, tmp_path: Path
) -> None:
    """``capture_mapped_hook.py``: three instances of ``load`` each copy ``src`` into a table of
    their own through ``PostgresHook``; the provider reports each statement as a child job of
    the instance's run (``load.query.<n>``), so the runs of ``load.query.4`` have three parent
    runs, one per instance, under one DAG run. The plan keeps the flow of every instance, as it
    does for the instances of a mapped task themselves, not only the last one's."""
    import psycopg

    from airflow_blindata.definition import JobDefinition
    from airflow_blindata.plans.store import plan_from_store
    from tests.store.helpers import postgres_base_url

    base = postgres_base_url().replace("postgresql+psycopg://", "postgresql://", 1)
    schema = f"bd_capture_{os.getpid()}_{tmp_path.name[-8:]}".lower().replace("-", "_")
    url = f"sqlite:///{tmp_path / 'mapped.db'}"
    try:
        run_dag(
            airflow_home,
            "capture_mapped_hook.py",
            AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": TRANSPORT_PATH, "store_url": url}),
            AIRFLOW_CONN_CAPTURE_PG=base,
            CAPTURE_PG_SCHEMA=schema,
        )
    finally:
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    definition = JobDefinition.from_dict(
        {
            "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "systemPolicies": [{"pattern": "postgres://*", "creation": "IF_MISSING"}],
        }
    )
    with open_store(url) as store:
        plan = plan_from_store(store, definition, keep=False)
    copies = {
        flow.target.entity.name
        for flow in plan.flows
        if flow.kind == "table" and flow.scope.endswith(".load.query.4")
    }
    assert copies == {"out_0", "out_1", "out_2"}
