"""The emulator served over real HTTP on loopback (`running_emulator`), as users and CI run it."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from blindata_emulator import EmulatorHandle, running_emulator
from blindata_emulator.clock import parse_instant
from helpers import API_KEY, TENANT, USER, api_key_headers, make_settings, ok

pytestmark = pytest.mark.integration

ME = "/api/v1/users/me"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorHandle]:
    db = tmp_path_factory.mktemp("emulator") / "blindata.sqlite"
    with running_emulator(make_settings(db_path=str(db))) as handle:
        yield handle


@pytest.fixture
def client(served: EmulatorHandle) -> Iterator[httpx.Client]:
    served.emulator.reset()
    with httpx.Client(base_url=served.base_url, headers=api_key_headers(), timeout=5) as http:
        yield http


def test_it_serves_on_a_free_loopback_port(served: EmulatorHandle, client: httpx.Client) -> None:
    assert served.base_url.startswith("http://127.0.0.1:")
    assert ok(client.get(ME))["username"] == USER


def test_drop_next_gives_the_client_a_transport_error_and_the_server_survives(
    served: EmulatorHandle, client: httpx.Client
) -> None:
    ok(client.post("/_emulator/faults", json={"drop_next": 1}))
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)) as caught:
        client.get(ME)
    assert not hasattr(caught.value, "response")
    assert ok(client.get(ME))["username"] == USER
    statuses = [entry["status"] for entry in ok(client.get("/_emulator/requests"))["requests"]]
    assert statuses == [None, 200]


def test_rate_limit_next_gives_429_with_retry_after(client: httpx.Client) -> None:
    ok(client.post("/_emulator/faults", json={"rate_limit_next": 1, "retry_after": 2}))
    response = client.get(ME)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["errorName"] == "TooManyRequestsException"
    assert client.get(ME).status_code == 200


def test_truncate_and_html_faults_over_a_socket(client: httpx.Client) -> None:
    ok(client.post("/_emulator/faults", json={"html_error_next": 1}))
    ok(client.post("/_emulator/faults", json={"truncate_next": 1}))
    page = client.get(ME)
    assert page.status_code == 502 and "<html>" in page.text
    truncated = client.get(ME)
    assert truncated.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        truncated.json()


def test_latency_is_added_over_a_socket(client: httpx.Client) -> None:
    ok(client.post("/_emulator/faults", json={"latency_ms": 100}))
    started = time.perf_counter()
    client.get(ME)
    assert time.perf_counter() - started >= 0.1
    ok(client.delete("/_emulator/faults"))


def test_the_state_is_in_a_sqlite_file_a_person_can_inspect(
    served: EmulatorHandle, client: httpx.Client
) -> None:
    system = ok(client.post("/api/v1/systems", json={"name": "inspected"}), 201)
    client.post(
        "/api/v1/physical_entities/*/upload",
        json=[{"system": {"uuid": system["uuid"]}, "schema": "s", "name": "t"}],
    )
    db = Path(served.emulator.settings.db_path)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        systems = conn.execute("SELECT tenant, name FROM systems").fetchall()
        entities = conn.execute(
            "SELECT system_uuid, schema, name FROM physical_entities"
        ).fetchall()
    assert systems == [(TENANT, "inspected")]
    assert entities == [(system["uuid"], "s", "t")]
    assert API_KEY not in db.read_bytes().decode("latin-1")


def test_the_server_stops_when_the_block_ends() -> None:
    with running_emulator(make_settings()) as handle:
        url = handle.base_url
        assert httpx.get(f"{url}/_emulator/health").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/_emulator/health", timeout=1)


def test_concurrent_clients_are_served_consistently(
    served: EmulatorHandle, client: httpx.Client
) -> None:
    system = ok(client.post("/api/v1/systems", json={"name": "shared"}), 201)

    def work(worker: int) -> list[int]:
        rows = [
            {"system": {"uuid": system["uuid"]}, "schema": f"w{worker}", "name": f"t{n}"}
            for n in range(20)
        ]
        with httpx.Client(base_url=served.base_url, headers=api_key_headers()) as http:
            return [
                http.post("/api/v1/physical_entities/*/upload", json=rows).status_code,
                http.get("/api/v1/physical_entities", params={"size": 1000}).status_code,
                http.post("/api/v1/physical_entities/*/upload", json=rows).status_code,
            ]

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = [status for result in pool.map(work, range(8)) for status in result]
    assert set(statuses) == {200}
    listed = ok(client.get("/api/v1/physical_entities", params={"size": 1000}))
    assert listed["totalElements"] == 8 * 20


def test_serve_runs_the_emulator_in_the_foreground(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (
        "from blindata_emulator import EmulatorSettings, serve; "
        f"serve(EmulatorSettings.single({TENANT!r}, {USER!r}, {API_KEY!r}, "
        f"db_path={str(tmp_path / 'cli.sqlite')!r}), port={port}, log_level='warning')"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                me = httpx.get(f"http://127.0.0.1:{port}{ME}", headers=api_key_headers(), timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        assert ok(me)["tenant"] == {"uuid": TENANT}
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert (tmp_path / "cli.sqlite").exists()


@pytest.mark.parametrize(
    "secret", ["clé-secrète", "ключ", "\U0001f511"], ids=["latin", "cyrillic", "emoji"]
)
def test_a_wrong_secret_that_is_not_ascii_gives_401_not_500(
    client: httpx.Client, secret: str
) -> None:
    """A key or password with a letter outside ASCII is a wrong credential like any other."""
    login = client.post("/auth/login", json={"username": USER, "password": secret})
    by_key = client.get(ME, headers={"X-BD-User": USER, "X-BD-ApiKey": secret.encode()})
    assert (login.status_code, by_key.status_code) == (401, 401)


def test_the_date_header_is_the_emulators_clock() -> None:
    """Blindata's ``Date`` is its own time: a test that advances the emulator's clock moves it
    with the dates the emulator stamps, once (uvicorn sends none of its own)."""
    from email.utils import parsedate_to_datetime

    with running_emulator(make_settings()) as handle:
        handle.emulator.clock.advance(3600)
        with httpx.Client(base_url=handle.base_url, headers=api_key_headers(), timeout=5) as http:
            answer = http.post("/api/v1/systems", json={"name": "clocked"})
            missing = http.get("/api/v1/no-such-path")
    created = ok(answer, 201)
    (date,) = answer.headers.get_list("date")
    stamped = parse_instant(created["modificationDate"])
    assert 0 <= stamped - parsedate_to_datetime(date).timestamp() < 2
    assert stamped - time.time() > 3500
    assert len(missing.headers.get_list("date")) == 1
