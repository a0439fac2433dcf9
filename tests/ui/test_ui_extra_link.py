"""The operator extra link "View in Blindata": from a captured task to its job entity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.store import open_store

from .seed import run_event


def _key(dag_id: str, task_id: str) -> object:
    from airflow.models.taskinstancekey import TaskInstanceKey

    return TaskInstanceKey(dag_id=dag_id, task_id=task_id, run_id="manual__1", try_number=1)


def _job_event(index: int, name: str) -> dict[str, Any]:
    return run_event(index, "airflow-prod") | {"job": {"namespace": "airflow-prod", "name": name}}


@pytest.fixture
def captured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store where Airflow's capture kept ``sales.load`` (namespace ``airflow-prod``), and a
    producer outside Airflow sent ``spark.job`` there; a Blindata connection."""
    url = f"sqlite:///{tmp_path / 'events.db'}"
    with open_store(url) as store:
        task = run_event(1, "airflow-prod") | {
            "job": {"namespace": "airflow-prod", "name": "sales.load"}
        }
        store.append(task, source="listener")
        outside = run_event(2, "airflow-prod") | {
            "job": {"namespace": "airflow-prod", "name": "spark.job"}
        }
        store.append(outside, source="receiver")
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__NAMESPACE", "airflow-prod")
    connection = {"conn_type": "blindata", "host": "https://catalog.example.com/blindata"}
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(connection))


def test_a_captured_task_links_to_its_job_entity_in_blindata(captured: None) -> None:
    """The job entity is found as the page finds every object (``links.search_link``)."""
    from airflow_blindata.ui.extra_link import ViewInBlindata

    link = ViewInBlindata().get_link(None, ti_key=_key("sales", "load"))  # type: ignore[arg-type]

    assert link == "https://catalog.example.com/blindata/#/search?query=sales.load"


@pytest.mark.parametrize(("dag_id", "task_id"), [("sales", "other"), ("spark", "job")])
def test_a_task_never_captured_by_airflow_gets_no_link(
    captured: None, dag_id: str, task_id: str
) -> None:
    from airflow_blindata.ui.extra_link import ViewInBlindata

    key = _key(dag_id, task_id)

    assert ViewInBlindata().get_link(None, ti_key=key) == ""  # type: ignore[arg-type]


def test_without_a_blindata_connection_there_is_no_link(
    captured: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_blindata.ui.extra_link import ViewInBlindata

    monkeypatch.delenv("AIRFLOW_CONN_BLINDATA_DEFAULT")

    assert ViewInBlindata().get_link(None, ti_key=_key("sales", "load")) == ""  # type: ignore[arg-type]


def test_the_plugin_gives_every_task_the_link() -> None:
    from airflow_blindata.plugin import BlindataPlugin

    links = BlindataPlugin().global_operator_extra_links

    assert [link.name for link in links] == ["View in Blindata"]
