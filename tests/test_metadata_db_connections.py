"""A BLINDATA connection kept in Airflow's metadata database, as an admin creates it.

One real SQLite metadata database (``airflow db migrate`` in a temporary ``AIRFLOW_HOME``), the
connection added with ``airflow connections add``, the emulator as Blindata:

* ``airflow-blindata check | snapshot | cleanup`` find it, as ``airflow connections test`` does;
* the Test button of the Airflow UI (``POST /api/v2/connections/test``, called by the API
  server's own app, with the body the UI builds) works for a connection saved with its port.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from packaging.version import Version

from tests.airflow_db import migrate
from tests.helpers import API_KEY, OTHER_TENANT, TENANT, USER

BIN = Path(sys.executable).parent
AIRFLOW = str(BIN / "airflow")
CLI = str(BIN / "airflow-blindata")
DEFINITION = str(Path(__file__).parent / "fixtures" / "job-definitions" / "example.yaml")

pytestmark = [pytest.mark.airflow, pytest.mark.integration]


def run(
    args: list[str], env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of an Airflow deployment whose metadata database is migrated, and in
    which no connection comes from an environment variable."""
    home = tmp_path_factory.mktemp("airflow-home")
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AIRFLOW_CONN_", "AIRFLOW__", "BLINDATA_SECRET"))
    }
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__BLINDATA__STORE_URL": f"sqlite:///{home / 'events.db'}",
        }
    )
    migrate(env)
    yield env


def add_connection(
    env: dict[str, str], conn_id: str, *options: str, conn_type: str = "blindata"
) -> None:
    done = run([AIRFLOW, "connections", "add", conn_id, "--conn-type", conn_type, *options], env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def import_connections(env: dict[str, str], connections: dict[str, dict[str, Any]]) -> None:
    """Several connections in one ``airflow connections import`` (one Airflow start-up)."""
    path = Path(env["AIRFLOW_HOME"]) / "connections.json"
    path.write_text(json.dumps(connections))
    done = run([AIRFLOW, "connections", "import", "--overwrite", str(path)], env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_commands_find_a_connection_kept_in_the_metadata_database(
    airflow_env: dict[str, str], emulator: Any
) -> None:
    add_connection(
        airflow_env,
        "blindata_default",
        "--conn-host",
        emulator.base_url,
        "--conn-login",
        USER,
        "--conn-password",
        API_KEY,
        "--conn-extra",
        json.dumps({"tenant": TENANT}),
    )
    done = run([CLI, "check"], airflow_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"Connected to Blindata at {emulator.base_url} as {USER} on {TENANT}\n"
    # Airflow's own command (docs/connection.md), on every supported version: on 3.1 the hook
    # asked the Task SDK, which outside a task reads no connection of the metadata database
    # (a probe on Airflow 3.1.1: "isn't defined")
    testing = airflow_env | {"AIRFLOW__CORE__TEST_CONNECTION": "Enabled"}
    done = run([AIRFLOW, "connections", "test", "blindata_default"], testing)
    assert "Connection success!" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]

    # the event store named by a connection of the metadata database too (airflow-conn://)
    events = Path(airflow_env["AIRFLOW_HOME"]) / "events-by-connection.db"
    add_connection(airflow_env, "blindata_events", "--conn-host", str(events), conn_type="sqlite")
    store = ["--store", "airflow-conn://blindata_events"]
    for command in (["snapshot"], ["cleanup", "--dry-run"]):
        done = run([CLI, *command, "--definition", DEFINITION, *store, "--json"], airflow_env)
        assert done.returncode == 0, done.stdout + done.stderr
        (report,) = json.loads(done.stdout)
        assert report["status"] in ("success", "skipped"), report
    assert events.exists()

    done = run([CLI, "check", "--conn-id", "blindata_elsewhere"], airflow_env)
    assert done.returncode == 1
    assert "Cannot read the connection blindata_elsewhere" in done.stdout
    assert "isn't defined" in done.stdout


def test_check_takes_a_url_a_user_and_a_tenant(airflow_env: dict[str, str], emulator: Any) -> None:
    env = {**airflow_env, "BLINDATA_SECRET": API_KEY}
    url = ["check", "--url", emulator.base_url, "--user", USER]
    done = run([CLI, *url, "--tenant", TENANT], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"Connected to Blindata at {emulator.base_url} as {USER} on {TENANT}\n"
    done = run([CLI, *url, "--tenant", OTHER_TENANT], env)  # the user may not use that one
    assert done.returncode == 1
    assert done.stdout.startswith(f"Blindata refused access (403) to tenant {OTHER_TENANT}")
    done = run([CLI, *url], airflow_env)  # no $BLINDATA_SECRET
    assert done.returncode == 2
    assert "BLINDATA_SECRET" in done.stderr
    assert API_KEY not in done.stdout + done.stderr


AIRFLOW_VERSION = Version(importlib.metadata.version("apache-airflow"))

UI_TEST_BUTTON = """
import json, os, sys
os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] = "True"
os.environ["AIRFLOW__CORE__TEST_CONNECTION"] = "Enabled"
from fastapi.testclient import TestClient
from airflow.api_fastapi.app import create_app

client = TestClient(create_app("core"))
# The UI's own token (Airflow 3.1.1+ asks for one even when every user is an admin)
from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
admin = SimpleAuthManagerUser(username="admin", role="admin")
client.headers["Authorization"] = "Bearer " + get_auth_manager().generate_jwt(admin)
answers = {}
for conn_id in sys.argv[1:]:
    stored = client.get("/api/v2/connections/" + conn_id).json()
    assert "connection_id" in stored, stored
    # What the Test button of the connection list sends (airflow/ui, Airflow 3.3.2): the row as
    # the API listed it (password masked as ***), with port: Number(connection.port), 0 if null.
    body = {
        "connection_id": stored["connection_id"],
        "conn_type": stored["conn_type"],
        "description": stored["description"] or "",
        "extra": stored["extra"] or "{}",
        "host": stored["host"] or "",
        "login": stored["login"] or "",
        "password": stored["password"] or "",
        "port": stored["port"] or 0,
        "schema": stored["schema"] or "",
    }
    if "TYPED_PASSWORD" in os.environ:
        # Airflow 3.1's API tests the body as sent, a masked password included (3.2+ puts the
        # stored one back): there the button works with the password typed into the form.
        body["password"] = os.environ["TYPED_PASSWORD"]
    answer = client.post("/api/v2/connections/test", json=body)
    answers[conn_id] = {"code": answer.status_code, "body": answer.json()}
print("ANSWERS " + json.dumps(answers))
"""


def press_test_button(env: dict[str, str], *conn_ids: str) -> dict[str, Any]:
    """The API's answer to the Test button of each connection, by connection id."""
    done = run([sys.executable, "-c", UI_TEST_BUTTON, *conn_ids], env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("ANSWERS ")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    answers: dict[str, Any] = json.loads(lines[-1].removeprefix("ANSWERS "))
    return answers


def test_the_ui_test_button_works_for_a_connection_saved_with_its_port(
    airflow_env: dict[str, str], emulator: Any
) -> None:
    url = urlsplit(emulator.base_url)
    common = {"conn_type": "blindata", "login": USER, "password": API_KEY}
    common["extra"] = json.dumps({"tenant": TENANT})
    import_connections(
        airflow_env,
        {
            # the URL without its port, the port in the form's Port field
            "blindata_ui": {**common, "host": f"{url.scheme}://{url.hostname}", "port": url.port},
            # the port in the URL, the Port field empty
            "blindata_portless": {**common, "host": emulator.base_url},
        },
    )
    env = airflow_env
    if AIRFLOW_VERSION.release[:2] < (3, 2):
        env = {**airflow_env, "TYPED_PASSWORD": API_KEY}
    answers = press_test_button(env, "blindata_ui", "blindata_portless")
    answer = answers["blindata_ui"]
    assert answer["code"] == 200, answer
    assert answer["body"]["status"] is True, answer
    assert answer["body"]["message"] == (
        f"Connected to Blindata at {emulator.base_url} as {USER} on {TENANT}"
    )

    # Without a port (the URL carries it), Airflow 3.3.2 refuses the button's request before
    # the provider is asked (fixed upstream by apache/airflow#73298).
    answer = answers["blindata_portless"]
    if answer["code"] == 400:
        assert "host or port to test differs" in answer["body"]["detail"]
    else:  # an Airflow with the fix
        assert answer["code"] == 200 and answer["body"]["status"] is True, answer
