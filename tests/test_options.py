"""The ``[blindata]`` options are read in one place: environment first, then Airflow's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_blindata import options


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("postgresql://h/db", "postgresql://h/db"),
        ("  sqlite:////x.db\n", "sqlite:////x.db"),
        ("", None),
    ],
)
def test_an_option_is_read_stripped_and_empty_means_unset(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str | None
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", value)

    assert options.store_url() == expected


def test_the_default_files_live_in_airflow_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))

    assert options.blindata_home() == tmp_path / "blindata"


@pytest.mark.parametrize(
    ("value", "expected"), [("False", False), ("0", False), ("true", True), ("t", True)]
)
def test_a_flag_reads_airflows_spelling(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", value)

    assert options.flag("listener_enabled", default=not expected) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, (30, None)),
        ("12", (12, None)),
        ("0", (30, "[blindata] sync_test_limit must be a positive integer, not '0'")),
        ("x", (30, "[blindata] sync_test_limit must be a positive integer, not 'x'")),
    ],
)
def test_a_bad_number_keeps_the_default_and_names_the_option(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: tuple[int, str | None]
) -> None:
    if value is not None:
        monkeypatch.setenv("AIRFLOW__BLINDATA__SYNC_TEST_LIMIT", value)

    assert options.positive_int("sync_test_limit", 30) == expected


def test_the_receiver_connection_has_a_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__BLINDATA__RECEIVER_CONN_ID", raising=False)

    assert options.receiver_conn_id() == "blindata_receiver"


def test_a_relative_ui_job_definition_is_read_from_airflow_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW__BLINDATA__UI_JOB_DEFINITION", "dags/blindata.yaml")
    assert options.ui_job_definition() == str(tmp_path / "dags" / "blindata.yaml")
    monkeypatch.setenv("AIRFLOW__BLINDATA__UI_JOB_DEFINITION", "/etc/blindata.yaml")
    assert options.ui_job_definition() == "/etc/blindata.yaml"


def test_the_options_read_from_a_command_are_the_sensitive_ones() -> None:
    from airflow_blindata.get_provider_info import get_provider_info
    from airflow_blindata.options import SENSITIVE

    options = get_provider_info()["config"]["blindata"]["options"]
    assert {name for name, option in options.items() if option.get("sensitive")} == SENSITIVE
