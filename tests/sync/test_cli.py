"""``airflow-blindata snapshot | cleanup | report``, run in-process through ``cli.main``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.cli import main
from airflow_blindata.store import open_store
from tests.conftest import API_KEY, TENANT, USER
from tests.sync.conftest import DEFINITION_UUID, dbt_events

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
