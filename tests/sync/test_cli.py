"""``airflow-blindata snapshot | cleanup | report``, run in-process through ``cli.main``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.cli import main
from airflow_blindata.store import open_store
from tests.blindata.helpers import URL_SECRETS, URL_USER, set_faults, with_url_credentials
from tests.builders import new_run_id, run_event
from tests.helpers import API_KEY, TENANT, USER
from tests.sync.helpers import DEFINITION_UUID, dbt_events, next_second

pytestmark = pytest.mark.integration


@pytest.fixture
def setup(tmp_path: Path, emulator: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    definition = tmp_path / "job.yaml"
    definition.write_text(
        f"uuid: {DEFINITION_UUID}\n"
        "systemPolicies:\n"
        "  - {pattern: 'postgres://*', creation: IF_MISSING, nameTemplate: '{host}'}\n"
    )
    store = f"sqlite:///{tmp_path / 'events.db'}"
    with open_store(store) as events:
        events.append_many(dbt_events())
    monkeypatch.setenv("BLINDATA_SECRET", API_KEY)
    return {"definition": str(definition), "store": store, "url": emulator.base_url}


def flags(setup: dict[str, str]) -> list[str]:
    return [
        "--definition",
        setup["definition"],
        "--store",
        setup["store"],
        "--url",
        setup["url"],
        "--user",
        USER,
        "--tenant",
        TENANT,
    ]


def test_snapshot_cleanup_and_report_from_the_command_line(
    setup: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["snapshot", *flags(setup)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Blindata snapshot of job definition {DEFINITION_UUID}: SUCCESS")
    assert "  entities: " in err  # progress goes to stderr
    assert API_KEY not in out + err

    assert main(["cleanup", *flags(setup), "--dry-run", "--json"]) == 0
    (cleanup,) = json.loads(capsys.readouterr().out)
    assert cleanup["kind"] == "cleanup" and cleanup["dry_run"] is True

    assert main(["report", "--uuid", DEFINITION_UUID, "--store", setup["store"]]) == 0
    out = capsys.readouterr().out
    assert out.index("Blindata cleanup (dry run)") < out.index("Blindata snapshot")
    assert (
        main(
            [
                "report",
                "--definition",
                setup["definition"],
                "--store",
                setup["store"],
                "--kind",
                "snapshot",
                "--json",
            ]
        )
        == 0
    )
    (snapshot,) = json.loads(capsys.readouterr().out)
    assert snapshot["status"] == "success"
    # any spelling of the uuid, as the definition itself takes it; a non-uuid is refused
    assert main(["report", "--uuid", f" {DEFINITION_UUID.upper()}", "--store", setup["store"]]) == 0
    assert "Blindata snapshot" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["report", "--uuid", DEFINITION_UUID[:8], "--store", setup["store"]])
    assert "must be a UUID" in capsys.readouterr().err
    with open_store(setup["store"]) as store:
        records = store.sync_history(DEFINITION_UUID)
    # the page marks the command's runs apart from the sync DAG's, with the Blindata they used
    assert [r.report["origin"]["command"] for r in records] == ["cleanup", "snapshot"]
    assert {r.report["blindata_url"] for r in records} == {setup["url"].rstrip("/")}


def test_snapshot_light_publishes_what_came_since_the_last_sync(
    setup: dict[str, str], emulator: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 43: ``airflow-blindata snapshot --light``."""
    assert main(["snapshot", *flags(setup), "--light", "--json"]) == 0
    (before,) = json.loads(capsys.readouterr().out)
    assert before["status"] == "skipped"  # before a first full snapshot
    assert main(["snapshot", *flags(setup)]) == 0
    assert main(["snapshot", *flags(setup), "--light", "--json"]) == 0
    capsys.readouterr()
    with open_store(setup["store"]) as events:
        events.append_many(
            [run_event("nightly.load", namespace="dbt-test-namespace", run_id=new_run_id())]
        )
    next_second(emulator)
    assert main(["snapshot", *flags(setup), "--light", "--json"]) == 0
    (light,) = json.loads(capsys.readouterr().out)
    assert (light["kind"], light["status"], light["jobCount"]) == ("light", "success", 1)
    assert main(["report", "--uuid", DEFINITION_UUID, "--store", setup["store"]]) == 0
    out = capsys.readouterr().out
    assert out.index("Blindata light sync of job definition") < out.index("Blindata snapshot")


def test_the_secret_comes_only_from_the_environment(
    setup: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BLINDATA_SECRET")
    assert main(["snapshot", *flags(setup)]) == 2
    assert "BLINDATA_SECRET" in capsys.readouterr().err


def test_the_airflow_connection_is_the_default(
    setup: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = {
        "conn_type": "blindata",
        "host": setup["url"],
        "login": USER,
        "password": API_KEY,
        "extra": {"tenant": TENANT},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    arguments = ["--definition", setup["definition"], "--store", setup["store"]]
    assert main(["snapshot", *arguments]) == 0
    assert main(["cleanup", *arguments]) == 0
    assert "SUCCESS" in capsys.readouterr().out


def test_report_without_history_says_so(
    setup: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--uuid", DEFINITION_UUID, "--store", setup["store"]]) == 0
    assert "No sync report" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("snapshot", "--batch-size", "0"),
        ("snapshot", "--batch-size", "-1"),
        ("snapshot", "--batch-size", "500 rows"),
        ("report", "--limit", "0"),
        ("store quarantine", "--limit", "-5"),
    ],
)
def test_a_count_that_is_not_positive_is_refused_naming_the_option_before_anything_is_written(
    setup: dict[str, str],
    emulator: Any,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    value: str,
) -> None:
    """``snapshot --batch-size 0`` created the Systems and uploaded nothing else, and exited 0
    on a report of every entity written (a probe of the operators)."""
    arguments = {
        "snapshot": ["snapshot", *flags(setup)],
        "report": ["report", "--uuid", DEFINITION_UUID, "--store", setup["store"]],
        "store quarantine": ["store", "quarantine", "--store", setup["store"]],
    }[command]

    with pytest.raises(SystemExit) as exited:
        main([*arguments, option, value])

    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: must be a positive whole number, got {value!r}" in err
    assert not [entry for entry in emulator.emulator.requests.entries() if entry["method"] != "GET"]
    with open_store(setup["store"]) as store:
        assert store.sync_history(DEFINITION_UUID) == []


# -- run as a user runs it: stdout holds the answer only, and no URL credentials anywhere -------

CLI = str(Path(sys.executable).with_name("airflow-blindata"))


def run_cli(*arguments: str, conn: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The command in its own process: Airflow configures its logging (on stdout) there."""
    env = {**os.environ, "AIRFLOW_CONN_BLINDATA_DEFAULT": json.dumps(conn)}
    env.pop("BLINDATA_SECRET", None)
    return subprocess.run(
        [CLI, *arguments], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def stored_bytes(store_url: str) -> bytes:
    """Every byte of the SQLite store: the sync history as recorded, whatever the API shows."""
    path = Path(store_url.removeprefix("sqlite:///"))
    return b"".join(file.read_bytes() for file in path.parent.glob(path.name + "*"))


def test_snapshot_json_prints_only_json_and_never_the_urls_password(
    setup: dict[str, str], emulator: Any
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    arguments = ["--definition", setup["definition"], "--store", setup["store"], "--json"]
    outputs: list[str] = []
    for url, status in ((setup["url"], "success"), (dead, "failed")):
        conn = {
            "conn_type": "blindata",
            "host": with_url_credentials(url),
            "login": USER,
            "password": API_KEY,
            "extra": {"tenant": TENANT, "deadline": 3},
        }
        set_faults(emulator, fail_next=1, status=503)  # a retry, so a log line, either way
        done = run_cli("snapshot", *arguments, conn=conn)
        (report,) = json.loads(done.stdout)  # stdout is the JSON, nothing else
        assert report["status"] == status, done.stderr
        assert "; attempt 2 in" in done.stderr  # the retry's warning went to stderr
        outputs += [done.stdout, done.stderr]
    assert f"cannot connect to {dead.replace('://', f'://{URL_USER}:***@')}" in outputs[2]
    with open_store(setup["store"]) as store:
        records = store.sync_history(DEFINITION_UUID)
    assert [record.status for record in records][:2] == ["failed", "success"]
    outputs.append(json.dumps([record.report for record in records], default=str))
    for secret in (*URL_SECRETS, API_KEY):
        assert all(secret not in text for text in outputs), secret
        assert secret.encode() not in stored_bytes(setup["store"])
