"""Issue 38: *Where it lands* contradicts the sync. It maps with the job definition and the Systems
the last snapshot recorded (not the seed defaults, not ``ui_job_definition``), maps a task with its
DAG, and leaves out what one job alone cannot judge.

Real parts: a real snapshot (``run_snapshot``) against the emulator over loopback into a real
SQLite store, and the page behind Airflow's real auth manager.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.store import EventStore, open_store
from airflow_blindata.sync.runner import run_snapshot
from tests.builders import at, run_event
from tests.mapper.removed_tasks import ALL, DAG, NS, DagRun, graph_facet
from tests.sync.helpers import client_of, definition, next_second, objects

from .helpers import token

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

BEFORE = DagRun("r1", 0, ["extract", "load", "report"], listed=ALL)
AFTER = DagRun("r2", 1, ["extract", "load"], listed={"extract": "success", "load": "success"})


@pytest.fixture
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import timedelta

    monkeypatch.setattr("airflow_blindata.sync.apply.WATERMARK_MARGIN", timedelta(0))


@pytest.fixture
def blindata(emulator: Any) -> Iterator[BlindataClient]:
    with client_of(emulator) as client:
        yield client


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(f"sqlite:///{tmp_path / 'lands.db'}") as events:
        yield events


@pytest.fixture
def page(
    store: EventStore,
    tmp_path: Path,
    client: Any,
    auth_manager: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """``page(name)``: the *Where it lands* page of job ``airflow-prod/<name>``, as an admin
    (a viewer reads only the DAGs Airflow lets them read, and this Airflow has none)."""
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", f"sqlite:///{tmp_path / 'lands.db'}")
    monkeypatch.delenv("AIRFLOW__BLINDATA__UI_JOB_DEFINITION", raising=False)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    def get(name: str) -> str:
        response = client.get("/lands", params={"namespace": NS, "name": name})
        assert response.status_code == 200, response.text
        return str(response.text)

    return get


def dag_start() -> dict[str, Any]:
    """The DAG run's START with its task graph: extract → load → report."""
    graph = graph_facet(["extract", "load", "report"])
    tasks = graph["airflow"]["tasks"]
    tasks["extract"]["downstream_task_ids"] = ["load"]
    tasks["load"]["downstream_task_ids"] = ["report"]
    return run_event(
        DAG, namespace=NS, event_type="START", run_id="r1", time=at(0), job_facets=graph
    )


def shown(page: str, kind: str) -> int:
    found = re.search(rf"<h2>{kind} \((\d+)\)</h2>", page)
    assert found, page
    return int(found.group(1))


def written(emulator: Any, job: str) -> int:
    """The flows the snapshot wrote in the job's data and orchestration scopes."""
    scopes = {f"ol:{NS}|{job}", f"ol:{NS}|{job}#orchestration"}
    return sum(1 for flow in objects(emulator, Kind.FLOW) if flow.get("scope") in scopes)


@pytest.mark.parametrize(
    "sentence",
    [
        "the page maps with the definition the sync history records, not the seed defaults",
        "a task is mapped with its DAG: the DAG→task link the snapshot wrote is shown",
    ],
)
def test_where_it_lands_shows_the_flows_the_snapshot_wrote(
    sentence: str, blindata: BlindataClient, store: EventStore, emulator: Any, page: Any
) -> None:
    store.append_many(BEFORE.events())
    snapshot = run_snapshot(definition(), blindata, store)
    assert snapshot.status == "success", snapshot.render()

    shown_page = page(f"{DAG}.load")

    assert f"job definition <code>{snapshot.definition_uuid}</code>" in shown_page, sentence
    assert shown(shown_page, "Flows") == written(emulator, f"{DAG}.load") > 1, sentence
    for code in ("UNMAPPED_NAMESPACE", "DANGLING_FLOW", "UNRESOLVED_ORCHESTRATION_TARGET"):
        assert code not in shown_page, sentence
    assert "@orchestration" in shown_page, sentence


def test_where_it_lands_leaves_out_what_one_job_alone_cannot_judge(
    blindata: BlindataClient, store: EventStore, emulator: Any, page: Any
) -> None:
    store.append_many([dag_start(), *BEFORE.events()])
    snapshot = run_snapshot(definition(), blindata, store)
    assert snapshot.status == "success", snapshot.render()
    assert "UNRESOLVED_ORCHESTRATION_TARGET" not in snapshot.render()

    shown_page = page(DAG)

    assert "UNRESOLVED_ORCHESTRATION_TARGET</td>" not in shown_page
    left_out = shown_page.split('id="left-out"', 1)[1].split("</p>", 1)[0]
    for task in ("extract", "load"):  # each the source of a task-graph flow of the DAG
        assert f"<code>{NS}/{DAG}: job {NS}/{DAG}.{task}</code>" in left_out


def test_where_it_lands_says_a_task_its_dag_no_longer_has_is_retired(
    blindata: BlindataClient, store: EventStore, emulator: Any, page: Any
) -> None:
    store.append_many(BEFORE.events())
    run_snapshot(definition(), blindata, store)
    next_second(emulator)
    store.append_many(AFTER.events())
    snapshot = run_snapshot(definition(), blindata, store)
    assert snapshot.counters["jobsRetired"] == 1, snapshot.render()

    shown_page = page(f"{DAG}.report")

    retired = shown_page.split('id="retired"', 1)[1].split("</p>", 1)[0]
    assert "task &#39;report&#39; is not in the latest run of DAG" in retired
    assert shown(shown_page, "Flows") == 0 and shown(shown_page, "Entities") == 0
    assert shown(page(f"{DAG}.load"), "Flows") > 1
