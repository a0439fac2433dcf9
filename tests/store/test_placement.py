"""A SQLite store on an executor whose workers are other machines: said, not silent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from airflow_blindata.store import open_store
from airflow_blindata.store.placement import configured_executors, sqlite_across_machines

from .helpers import postgres_base_url, postgres_schema

BIN = Path(sys.executable).parent
KUBERNETES = "airflow.providers.cncf.kubernetes.executors.kubernetes_executor.KubernetesExecutor"


@pytest.mark.parametrize(
    ("executor", "warned"),
    [
        ("CeleryExecutor", True),
        (KUBERNETES, True),
        ("LocalExecutor,CeleryExecutor", True),
        ("edge:airflow.providers.edge3.executors.EdgeExecutor", True),
        ("LocalExecutor", False),
        ("local:airflow.executors.local_executor.LocalExecutor", False),
    ],
)
def test_a_sqlite_store_with_an_executor_on_other_machines_is_warned_of(
    executor: str, warned: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", executor)
    with open_store(f"sqlite:///{tmp_path / 'events.db'}") as store:
        problem = sqlite_across_machines(store)
    assert bool(problem) is warned
    if problem:
        assert configured_executors()[-1] in problem and "PostgreSQL" in problem


def test_a_postgres_store_is_never_warned_of(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor")
    with postgres_schema(postgres_base_url()) as url, open_store(url) as store:
        assert sqlite_across_machines(store) is None


def test_store_stats_warns_of_a_sqlite_store_on_a_celery_deployment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    with open_store(url) as store:  # ``store stats`` reads a store, it makes none
        store.stats()
    env = {"AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor"}
    done = subprocess.run(
        [str(BIN / "airflow-blindata"), "store", "stats", "--store", url],
        env={"PATH": str(BIN), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "warning: The event store is a SQLite file" in done.stderr
    assert "CeleryExecutor" in done.stderr
