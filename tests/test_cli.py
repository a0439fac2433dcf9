"""The ``airflow-blindata`` command, run as a user runs it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from airflow_blindata import __version__
from airflow_blindata.cli import main

CLI = str(Path(sys.executable).with_name("airflow-blindata"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_version() -> None:
    done = subprocess.run([CLI, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"airflow-blindata {__version__}"


def test_the_emulator_refuses_to_start_without_an_api_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "BLINDATA_EMULATOR_API_KEY"}
    done = subprocess.run([CLI, "emulator"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2
    assert "--api-key or BLINDATA_EMULATOR_API_KEY" in done.stderr


@pytest.mark.integration
def test_emulator_serves_and_check_proves_the_connection(tmp_path: Path) -> None:
    port = free_port()
    tenant = "33333333-3333-4333-8333-333333333333"
    key = "cli-test-key"
    env = {**os.environ, "BLINDATA_EMULATOR_API_KEY": key}
    server = subprocess.Popen(
        [
            CLI,
            "emulator",
            "--port",
            str(port),
            "--db",
            str(tmp_path / "e.db"),
            "--tenant",
            tenant,
            "--user",
            "cli",
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/_emulator/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        conn = {
            "conn_type": "blindata",
            "host": f"http://127.0.0.1:{port}",
            "login": "cli",
            "password": key,
            "extra": {"tenant": tenant},
        }
        env["AIRFLOW_CONN_BLINDATA_DEFAULT"] = json.dumps(conn)
        done = subprocess.run([CLI, "check"], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"as cli on {tenant}" in done.stdout
        conn["password"] = "wrong"
        env["AIRFLOW_CONN_BLINDATA_DEFAULT"] = json.dumps(conn)
        done = subprocess.run([CLI, "check"], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 1
        assert "rejected the credentials (401" in done.stdout
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert (tmp_path / "e.db").exists()


@pytest.mark.integration
def test_check_never_shows_the_password_of_the_url(emulator: Any) -> None:
    from tests.blindata.helpers import URL_SECRETS, URL_USER, with_url_credentials
    from tests.helpers import API_KEY, TENANT, USER

    dead = f"http://127.0.0.1:{free_port()}"
    outputs: list[str] = []
    for url, code, says in ((emulator.base_url, 0, "Connected to"), (dead, 1, "Cannot reach")):
        conn = {
            "conn_type": "blindata",
            "host": with_url_credentials(url),
            "login": USER,
            "password": API_KEY,
            "extra": {"tenant": TENANT},
        }
        env = {**os.environ, "AIRFLOW_CONN_BLINDATA_DEFAULT": json.dumps(conn)}
        done = subprocess.run([CLI, "check"], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == code, done.stdout + done.stderr
        shown = url.replace("://", f"://{URL_USER}:***@")
        assert done.stdout.startswith(f"{says} Blindata at {shown}")  # the answer, and only it
        outputs += [done.stdout, done.stderr]
    for secret in (*URL_SECRETS, API_KEY):
        assert all(secret not in text for text in outputs), secret


def test_emulator_where_it_is_not_installed_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The emulator is a distribution of its own, never installed with the provider."""
    monkeypatch.setitem(sys.modules, "blindata_emulator.__main__", None)  # import fails

    assert main(["emulator", "--port", "1"]) == 2
    assert "pip install ./emulator" in capsys.readouterr().err
