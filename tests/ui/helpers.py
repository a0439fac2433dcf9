"""What the page's tests share: a real ``airflow api-server`` on a seeded store, and tokens.

``_serving`` brings up one API server (a temporary ``AIRFLOW_HOME``, the simple auth manager with
an admin and a viewer, the provider's plugin) on a store ``seed`` fills: a test that needs
another store replaces this module's ``seed``. ``_token`` signs in through the server's own login
route, ``token`` asks the auth manager in process; ``_kept`` copies a screenshot to
``BLINDATA_UI_SCREENSHOTS`` when it is set. The fixtures (``browser``, ``client``...) are in
``conftest.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from airflow_blindata.store import open_store
from airflow_blindata.sync.report import RunOrigin
from tests.airflow_db import migrate

from .seed import BLINDATA, record_snapshot, run_event, scheduled_run, seed, snapshot_report

BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PASSWORDS = {"admin": "admin-pa55word", "viewer": "viewer-pa55word"}
CLEANUP_FAILURE = (
    "Blindata cannot be used: cannot connect to https://catalog.example.com/blindata "
    "(GET /auth/users/me): connection refused; the retry deadline of 120 s passed after 7 attempts"
)
"""A failed cleanup the page shows in full, wrapped (the last sync of the browser's store)."""
CONNECTION = json.dumps({"conn_type": "blindata", "host": BLINDATA})
SALES_DAG = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

with DAG("sales", schedule=None):
    EmptyOperator(task_id="load")
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serving(tmp_path_factory: pytest.TempPathFactory, base_path: str = "") -> Iterator[str]:
    home = tmp_path_factory.mktemp("airflow-home")
    store_url = f"sqlite:///{home / 'events.db'}"
    seed(store_url)
    with open_store(store_url) as store:  # the DAG below's task, as Airflow's capture keeps it
        captured = run_event(7, "default") | {"job": {"namespace": "default", "name": "sales.load"}}
        store.append(captured, source="listener")
        failed = snapshot_report(3)
        failed.kind = "cleanup"
        failed.origin = RunOrigin(
            dag_id="blindata_sync", run_id=scheduled_run(3), task_id="cleanup"
        )
        failed.finish("failed", CLEANUP_FAILURE)
        failed.finished_at = failed.started_at + timedelta(seconds=121)
        record_snapshot(store, failed)
    (home / "dags").mkdir()
    (home / "dags" / "sales.py").write_text(SALES_DAG)
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__", "AIRFLOW_CONN"))}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin,viewer:viewer",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__BLINDATA__STORE_URL": store_url,
            "AIRFLOW__BLINDATA__LISTENER_ENABLED": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW_CONN_BLINDATA_DEFAULT": json.dumps(
                {"conn_type": "blindata", "host": BLINDATA}
            ),
        }
    )
    port = _free_port()
    root = f"http://127.0.0.1:{port}{base_path}"
    if base_path:
        env["AIRFLOW__API__BASE_URL"] = root
    migrate(env)
    parsed = subprocess.run(
        [str(BIN / "airflow"), "dags", "reserialize"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert parsed.returncode == 0, parsed.stderr[-2000:]
    log = (home / "api-server.log").open("w")
    server = subprocess.Popen(
        [str(BIN / "airflow"), "api-server", "--port", str(port), "--host", "127.0.0.1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{root}/api/v2/monitor/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, (home / "api-server.log").read_text()[-3000:]
            time.sleep(0.5)
        else:
            pytest.fail("the API server did not start: " + (home / "api-server.log").read_text())
        yield root
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _token(root: str, user: str = "admin") -> str:
    """A JWT from the API server's own login route, as the Airflow UI gets one."""
    body = {"username": user, "password": PASSWORDS[user]}
    return str(httpx.post(f"{root}/auth/token", json=body).json()["access_token"])


def _kept(out: Path) -> None:
    folder = os.environ.get("BLINDATA_UI_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(out, Path(folder) / out.name)


def token(auth_manager: Any, role: str | None) -> str:
    """A JWT the API server would issue for a user with ``role`` (None: no role at all)."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    return str(auth_manager.generate_jwt(SimpleAuthManagerUser(username=f"u-{role}", role=role)))
