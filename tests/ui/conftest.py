"""The page's app behind Airflow's real auth manager (the simple one), a seeded store, Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.airflow_db import migrate

from .browser import Chromium
from .helpers import CHROMIUM
from .seed import seed


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('ui-store') / 'events.db'}"
    seed(url)
    return url


@pytest.fixture(scope="session")
def metadata_db() -> None:
    """Airflow's metadata database in the session's ``AIRFLOW_HOME``: token checks read it."""
    migrate()


@pytest.fixture(scope="session")
def auth_manager(metadata_db: None) -> Any:
    from airflow.api_fastapi.app import init_auth_manager

    return init_auth_manager()


@pytest.fixture
def client(
    seeded_store: str, auth_manager: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from airflow_blindata.ui.app import create_ui_app

    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", seeded_store)
    monkeypatch.setenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", str(tmp_path / "lost.jsonl"))
    with TestClient(create_ui_app()) as test_client:
        yield test_client


DAGS = ("sales_etl", "hr.payroll", "blindata_sync")
"""DAGs Airflow knows in the tests' metadata database (an auth manager lists the DAGs a user may
read among them): one with a dot in its id, and the sync DAG."""


@pytest.fixture(scope="session")
def dags(metadata_db: None) -> tuple[str, ...]:
    from airflow.models.dag import DagModel
    from airflow.models.dagbundle import DagBundleModel
    from airflow.utils.session import create_session

    with create_session() as session:
        if session.get(DagBundleModel, "ui-tests") is None:
            session.add(DagBundleModel(name="ui-tests"))
            session.flush()
        for dag_id in DAGS:
            if session.get(DagModel, dag_id) is None:
                session.add(DagModel(dag_id=dag_id, bundle_name="ui-tests", fileloc="/x.py"))
    return DAGS


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (.ci/run installs it: apt-get install chromium)")
    chromium = Chromium(CHROMIUM)
    try:
        yield chromium
    finally:
        chromium.close()
