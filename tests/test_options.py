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
    ("value", "expected"),
    [
        *(("False", False), ("0", False), ("f", False), ("no", False), ("OFF", False)),
        *(("true", True), ("t", True), ("1", True), ("yes", True), ("On", True), ("y", True)),
    ],
)
def test_a_flag_reads_airflows_spelling_and_yes_no_as_a_connection_does(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", value)

    assert options.flag("listener_enabled", default=not expected) is expected


@pytest.mark.parametrize("value", ["yes", "no", "on", "off", "true", "0", "T", "N"])
def test_one_spelling_of_true_and_false_in_every_setting(value: str) -> None:
    """One parser: what is true in a connection's extra is true in [blindata] and in an
    operator's argument (``"yes"`` was true in a connection and false in [blindata])."""
    from airflow_blindata.hooks.blindata import _boolean
    from airflow_blindata.operators.blindata import _flag

    assert (
        _boolean(value, "verify_ssl") is _flag(value, "dry_run") is options.parse_flag(value, "x")
    )


def test_a_flag_option_that_is_no_boolean_names_the_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", "maybe")

    with pytest.raises(ValueError, match=r"\[blindata\] listener_enabled must be true or false"):
        options.flag("listener_enabled", default=True)


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
