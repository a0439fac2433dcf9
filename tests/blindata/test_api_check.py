"""``airflow-blindata check --api`` and ``BlindataHook.check_api`` against the emulator over real
HTTP on loopback: an instance that serves every path, one that serves two paths elsewhere (404
on the contract path), and one that publishes no description. Each test is named after the
sentence of issue 15 it checks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from blindata_emulator import EmulatorHandle, create_app, running_emulator
from blindata_emulator.server import serving

from airflow_blindata.blindata import (
    ENDPOINTS,
    ApiKeyCredentials,
    BlindataClient,
    BlindataNotFoundError,
    RetryPolicy,
)
from airflow_blindata.blindata.api_paths import ApiPaths
from airflow_blindata.blindata.apicheck import render_api_check
from airflow_blindata.blindata.models import DataFlow, Ref, System
from airflow_blindata.cli import main
from airflow_blindata.cli.sync import SECRET_ENV
from airflow_blindata.hooks.blindata import BlindataHook
from tests.helpers import API_KEY, OTHER_TENANT, TENANT, USER, emulator_settings

pytestmark = pytest.mark.integration

UPLOAD = "/api/v1/dataflows/*/upload"
ME = "/api/v1/users/me"
MOVED = {UPLOAD: "/api/v1/lineage/dataflows/*/upload", ME: "/api/v1/users/current"}
"""What the "other tenant" serves elsewhere: one path of the sync, one of the connection test."""
FAST = RetryPolicy(deadline=5.0, max_attempts=2, backoff_initial=0.05)


@pytest.fixture(scope="module")
def moved() -> Iterator[EmulatorHandle]:
    """An instance that serves two contract paths elsewhere (404 where the contract says)."""
    with running_emulator(replace(emulator_settings(), moved_paths=MOVED)) as handle:
        yield handle


@pytest.fixture
def fresh_moved(moved: EmulatorHandle) -> EmulatorHandle:
    moved.emulator.reset()
    return moved


@pytest.fixture(scope="module")
def undocumented() -> Iterator[tuple[str, Any]]:
    """The moved instance without API Docs: ``/v3/api-docs`` and ``/v2/api-docs`` answer 404."""
    app = create_app(replace(emulator_settings(), moved_paths=MOVED))

    async def without_docs(
        scope: Any, receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope["type"] == "http" and scope["path"].startswith(("/v3/api-docs", "/v2/api-docs")):
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    with serving(without_docs, name="undocumented-blindata") as url:
        yield url, app.state.emulator
    app.state.emulator.close()


def check(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str, *args: str
) -> tuple[int, str]:
    """Run ``airflow-blindata check --api --url URL ...``; its exit code and its stdout."""
    monkeypatch.setenv(SECRET_ENV, API_KEY)
    code = main(["check", "--api", "--url", url, "--user", USER, "--tenant", TENANT, *args])
    out = capsys.readouterr().out
    assert API_KEY not in out
    return code, out


def client_for(url: str, api_paths: dict[str, str] | None = None) -> BlindataClient:
    return BlindataClient(
        url,
        credentials=ApiKeyCredentials(USER, API_KEY),
        tenant=TENANT,
        retry=FAST,
        api_paths=ApiPaths.parse(api_paths),
    )


def requests_seen(base_url: str) -> list[tuple[str, str]]:
    data = httpx.get(f"{base_url}/_emulator/requests").json()
    return [(entry["method"], entry["path"]) for entry in data["requests"]]


# -- an instance that serves the contract ---------------------------------------------------------


def test_the_emulator_serves_its_own_description_and_the_check_finds_every_path_served(
    emulator: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(capsys, monkeypatch, emulator.base_url)
    assert code == 0, out
    assert "description: GET /v3/api-docs" in out
    assert "Every path the provider calls is served" in out
    (row,) = [line for line in out.splitlines() if line.startswith(UPLOAD)]
    assert row.split() == [UPLOAD, "POST", "snapshot", "inferred", "served"]

    assert f"Connection: Connected to Blindata at {emulator.base_url}" in out

    code, out = check(capsys, monkeypatch, emulator.base_url, "--format", "json")
    result = json.loads(out)
    assert code == 0 and result["ok"] and result["missing"] == []
    assert result["connection"]["ok"] is True
    assert {(row["method"], row["path"]) for row in result["rows"]} == {
        (e.method, e.template) for e in ENDPOINTS.values()
    }
    by_name = {row["operation"]: row for row in result["rows"]}
    assert by_name["dataflows.upload"]["evidence"] == "inferred"
    assert by_name["systems.list"]["evidence"] == "verified"
    assert by_name["dataflows.upload"]["used_by"] == "snapshot"
    assert all(row["status"] == "served" for row in result["rows"])

    yaml_docs = f"{emulator.base_url}/v3/api-docs.yaml"  # on the instance: read with credentials
    code, out = check(capsys, monkeypatch, emulator.base_url, "--openapi", yaml_docs)
    assert code == 0 and f"description: {yaml_docs}" in out


def test_a_wrong_key_makes_the_check_fail_though_every_path_is_served(
    emulator: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The description is read without credentials: ``check --api`` with a wrong key said every
    path was served and exited 0, which an admin reads as "the connection works" (found by a
    probe of connections as admins set them). The connection is tested too."""
    monkeypatch.setenv(SECRET_ENV, "not-the-key")
    code = main(["check", "--api", "--url", emulator.base_url, "--user", USER, "--tenant", TENANT])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "Every path the provider calls is served" in out
    assert "Connection: " in out and "not-the-key" not in out
    arguments = ["check", "--api", "--url", emulator.base_url, "--user", USER]
    code = main([*arguments, "--tenant", TENANT, "--format", "json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and result["ok"] is False and result["pathsServed"] is True
    assert result["connection"]["ok"] is False


@pytest.mark.parametrize(
    ("password", "tenant", "says"),
    [
        ("not-the-key", TENANT, "rejected the credentials (401"),
        (API_KEY, OTHER_TENANT, f"refused access (403) to tenant {OTHER_TENANT}"),
    ],
    ids=["wrong-key", "tenant-the-user-cannot-use"],
)
def test_the_hooks_check_fails_for_a_wrong_key_or_tenant_as_the_command_does(
    password: str,
    tenant: str,
    says: str,
    emulator: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/connection.md's DAG gate (``if not BlindataHook().check_api().ok: fail``) let a
    wrong key or tenant through to the sync, while ``check --api`` on the same connection
    exited 1 (a probe): both test the connection, in one implementation."""
    conn = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": USER,
        "password": password,
        "extra": {"tenant": tenant},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_API", json.dumps(conn))
    result = BlindataHook("blindata_api").check_api()
    assert result.paths_served and not result.ok
    assert result.connection is not None and not result.connection[0]
    assert says in result.connection[1]
    xcom = result.to_dict()
    assert xcom["ok"] is False and xcom["pathsServed"] is True
    assert xcom["connection"]["ok"] is False and says in xcom["connection"]["message"]
    assert f"Connection: {result.connection[1]}" in render_api_check(result)
    assert API_KEY not in json.dumps(xcom) and "not-the-key" not in json.dumps(xcom)

    code = main(["check", "--api", "--conn-id", "blindata_api", "--format", "json"])
    assert code == 1
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(xcom))


# -- an instance that serves a path elsewhere -----------------------------------------------------


def test_a_path_served_elsewhere_is_missing_and_the_check_exits_1_naming_it(
    fresh_moved: EmulatorHandle, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(capsys, monkeypatch, fresh_moved.base_url)
    assert code == 1
    verdict = out.split("missing on this instance:", 1)[1]
    assert "POST /api/v1/dataflows/*/upload (dataflows.upload; snapshot)" in verdict
    assert "GET /api/v1/users/me (users.me; connection test" in verdict
    assert "api_paths" in verdict
    (row,) = [line for line in out.splitlines() if line.startswith(UPLOAD)]
    assert row.split()[1:3] == ["POST", "snapshot"] and "missing" in row.split()


def test_api_paths_remaps_the_contract_path_for_the_check(
    fresh_moved: EmulatorHandle, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(capsys, monkeypatch, fresh_moved.base_url, "--api-paths", json.dumps(MOVED))
    assert code == 0, out
    (row,) = [line for line in out.splitlines() if line.startswith(MOVED[UPLOAD])]
    assert f"(contract {UPLOAD})" in row and "served" in row.split()


def test_api_paths_remaps_the_contract_path_for_the_client(fresh_moved: EmulatorHandle) -> None:
    url = fresh_moved.base_url
    with client_for(url) as plain, pytest.raises(BlindataNotFoundError, match="404"):
        plain.api.me()
    with client_for(url, MOVED) as client:
        assert client.api.me().username == USER
        system = client.api.systems.create(System(name="DWH"))
        assert system.uuid
        flow = DataFlow(name="a to b", scope="test", from_system=Ref(uuid=system.uuid))
        report = client.api.dataflows.upload(
            [flow.model_copy(update={"to_system": flow.from_system})]
        )
    assert report.accepted == 1, report.errors
    seen = requests_seen(url)
    assert ("POST", MOVED[UPLOAD]) in seen and ("GET", MOVED[ME]) in seen
    assert ("POST", UPLOAD) not in seen


def test_the_hook_returns_a_structured_result_an_operator_can_use(
    fresh_moved: EmulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = {
        "conn_type": "blindata",
        "host": fresh_moved.base_url,
        "login": USER,
        "password": API_KEY,
        "extra": {"tenant": TENANT},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_API", json.dumps(conn))
    result = BlindataHook("blindata_api").check_api()
    assert not result.ok
    assert sorted(row.operation for row in result.missing) == ["dataflows.upload", "users.me"]
    assert result.source == "GET /v3/api-docs"

    conn["extra"] = {"tenant": TENANT, "api_paths": MOVED}
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_API", json.dumps(conn))
    remapped = BlindataHook("blindata_api").check_api()
    assert remapped.ok and len(remapped.rows) == len(ENDPOINTS)
    xcom = json.dumps(remapped.to_dict())
    assert API_KEY not in xcom and json.loads(xcom)["ok"] is True


# -- where the description comes from -------------------------------------------------------------


def test_the_description_can_be_a_yaml_file_or_a_url(
    fresh_moved: EmulatorHandle,
    undocumented: tuple[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = undocumented
    document = tmp_path / "api-docs.yaml"
    document.write_text(httpx.get(f"{fresh_moved.base_url}/v3/api-docs.yaml").text)
    code, out = check(capsys, monkeypatch, url, "--openapi", str(document))
    assert code == 1 and f"description: {document}" in out
    assert "POST /api/v1/dataflows/*/upload" in out.split("missing on this instance:", 1)[1]

    # the description served by another address: the same verdict, here with api_paths
    other = f"{fresh_moved.base_url}/v3/api-docs"
    code, out = check(
        capsys, monkeypatch, url, "--openapi", other, "--api-paths", json.dumps(MOVED)
    )
    assert code == 0, out
    assert f"description: {other}" in out


def test_without_a_description_the_check_says_so_and_offers_probe(
    undocumented: tuple[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = undocumented
    code, out = check(capsys, monkeypatch, url)
    assert code == 1
    assert "no OpenAPI description at" in out
    assert "GET /v3/api-docs: 404" in out and "GET /v2/api-docs: 404" in out
    assert "--probe" in out and "--openapi FILE_OR_URL" in out


def test_probe_reports_404_as_missing_and_sends_no_write(
    undocumented: tuple[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, emulator = undocumented
    emulator.reset()
    code, out = check(capsys, monkeypatch, url, "--probe", "--format", "json")
    result = json.loads(out)
    assert code == 1
    assert sorted(result["missing"]) == ["GET /api/v1/users/me", "POST /api/v1/dataflows/*/upload"]
    by_name = {row["operation"]: row for row in result["rows"]}
    assert by_name["systems.list"]["detail"] == "GET → 2xx"
    assert by_name["systems.delete"]["status"] == "served"  # OPTIONS: Allow names DELETE
    seen = requests_seen(url)
    assert {method for method, _ in seen} == {"GET", "OPTIONS"}
    assert ("GET", "/api/v1/systems") in seen
    assert emulator.objects("system", TENANT) == []

    code, out = check(capsys, monkeypatch, url, "--probe", "--api-paths", json.dumps(MOVED))
    assert code == 0, out
    assert "No path proved missing" in out


def test_options_that_go_only_with_api_are_refused_without_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--probe"]) == 2
    assert "go with --api" in capsys.readouterr().err


CAN_DO_WITHOUT = "1 path(s) the provider can do without are missing"


@pytest.mark.parametrize(
    ("operation", "used_by", "ok", "verdict"),
    [
        ("physical_fields.get", "client library only", True, CAN_DO_WITHOUT),
        ("physical_fields.get", "snapshot", False, "1 path(s) the provider calls are missing"),
        # not in the contract: the snapshot goes on without it (bucketSystemsNotAdded)
        ("query_buckets.update", "snapshot", True, CAN_DO_WITHOUT),
    ],
)
def test_a_missing_path_fails_the_check_only_when_the_provider_calls_it(
    operation: str, used_by: str, ok: bool, verdict: str
) -> None:
    from airflow_blindata.blindata.apicheck import (
        ApiCheck,
        ApiCheckRow,
        PathStatus,
        render_api_check,
    )
    from airflow_blindata.blindata.paths import Evidence

    row = ApiCheckRow(
        operation,
        "GET",
        "/api/v1/physical_fields/{uuid}",
        "/api/v1/physical_fields/{uuid}",
        used_by,
        Evidence.INFERRED,
        PathStatus.MISSING,
    )
    served = replace(row, operation="users.me", path="/api/v1/users/me", status=PathStatus.SERVED)
    result = ApiCheck("http://blindata", rows=[served, row])

    assert result.ok is ok
    assert verdict in render_api_check(result)


# -- an instance served under a path ---------------------------------------------------------------


@pytest.fixture(scope="module")
def under_a_path() -> Iterator[str]:
    """The emulator served under ``/blindata`` (a servlet context path, or a proxy's prefix): its
    description's ``servers`` URL carries the path, as springdoc's does, and its paths do not."""
    app = create_app(emulator_settings())

    async def context_path(
        scope: Any, receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope["type"] == "http":  # as ``uvicorn --root-path /blindata`` behind a proxy
            scope = {**scope, "root_path": "/blindata"}
        await app(scope, receive, send)

    with serving(context_path, name="blindata-under-a-path") as url:
        yield f"{url}/blindata"
    app.state.emulator.close()


def test_an_instance_served_under_a_path_serves_every_path(
    under_a_path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    description = httpx.get(f"{under_a_path}/v3/api-docs").json()
    assert description["servers"][0]["url"] == under_a_path
    code, out = check(capsys, monkeypatch, under_a_path)
    assert code == 0, out
    assert "Every path the provider calls is served" in out
    (row,) = [line for line in out.splitlines() if line.startswith(UPLOAD)]
    assert row.split() == [UPLOAD, "POST", "snapshot", "inferred", "served"]


def test_a_missing_path_names_the_close_path_the_description_lists_instead(
    fresh_moved: EmulatorHandle, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: ``check --api`` could name the path the server serves instead when its OpenAPI
    description has a close one."""
    code, out = check(capsys, monkeypatch, fresh_moved.base_url)
    assert code == 1
    (row,) = [line for line in out.splitlines() if line.startswith(UPLOAD)]
    assert f"served instead? POST {MOVED[UPLOAD]}" in row
    (suggestion,) = [line for line in out.splitlines() if "close paths" in line]
    mapping = json.loads(suggestion.split("api_paths ", 1)[1])
    assert mapping == {UPLOAD: MOVED[UPLOAD], ME: MOVED[ME]}

    code, out = check(capsys, monkeypatch, fresh_moved.base_url, "--api-paths", json.dumps(mapping))
    assert code == 0, out

    code, out = check(capsys, monkeypatch, fresh_moved.base_url, "--format", "json")
    rows = {row["operation"]: row for row in json.loads(out)["rows"]}
    assert rows["dataflows.upload"]["close"] == MOVED[UPLOAD]
    assert rows["systems.list"]["close"] == ""


@pytest.mark.parametrize(
    ("sentence", "args", "says"),
    [
        (
            "a path served elsewhere points at --api-paths",
            [],
            "`airflow-blindata check --api` lists the paths it serves, and --api-paths moves one.",
        ),
        (
            "options that cannot be used are --url's, not a connection's",
            ["--api-paths", '{"/nowhere": "/x"}'],
            "--url is not usable: --api-paths: '/nowhere' is not a path of the contract",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_check_with_url_names_its_options_never_a_connection(
    sentence: str,
    args: list[str],
    says: str,
    fresh_moved: EmulatorHandle,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 38: ``--url`` is called a connection in ``check``'s errors."""
    monkeypatch.setenv(SECRET_ENV, API_KEY)
    code = main(["check", "--url", fresh_moved.base_url, "--user", USER, *args])
    out = capsys.readouterr().out
    assert code == 1, sentence
    assert says in out, out
    assert "connection" not in out, out
