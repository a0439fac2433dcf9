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
        # what an admin writes meaning on or off (a review): never the other
        *(("disabled", False), ("False # during the migration", False), ("off\t# x", False)),
        *(("Enabled", True), ("True # default", True)),
    ],
)
def test_a_flag_reads_airflows_spelling_and_yes_no_as_a_connection_does(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", value)

    assert options.flag("listener_enabled") is expected


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
        options.flag("listener_enabled")


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


def _code_defaults() -> dict[str, object]:
    """What the code takes for each ``[blindata]`` option left unset."""
    from airflow_blindata.receiver import settings

    return {
        "store_url": None,
        "lost_events_file": None,
        "ui_job_definition": None,
        "receiver_api_key": "",
        "listener_enabled": True,
        "ui_enabled": True,
        "receiver_enabled": True,
        "ui_conn_id": "blindata_default",
        "receiver_conn_id": "blindata_receiver",
        "receiver_max_body_bytes": settings.DEFAULT_MAX_BODY_BYTES,
        "receiver_max_batch_events": settings.DEFAULT_MAX_BATCH_EVENTS,
        "receiver_max_bytes_in_flight": settings.DEFAULT_MAX_BYTES_IN_FLIGHT,
        "receiver_store_timeout": settings.DEFAULT_STORE_TIMEOUT,
    }


def _declared() -> dict[str, str]:
    from airflow_blindata.get_provider_info import get_provider_info

    declared = get_provider_info()["config"]["blindata"]["options"]
    return {key: str(entry["default"]) for key, entry in declared.items()}


def test_every_option_the_provider_declares_has_its_default_in_the_code() -> None:
    assert set(_declared()) == set(_code_defaults())


@pytest.mark.parametrize("key", sorted(_declared()))
def test_an_options_default_in_the_code_is_the_one_airflow_shows(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defaults are declared once (get_provider_info, what `airflow config list` shows);
    where the code still writes one (the receiver's limits), it is the same value."""
    monkeypatch.delenv(f"AIRFLOW__BLINDATA__{key.upper()}", raising=False)
    declared = _declared()[key]
    code = _code_defaults()[key]
    if isinstance(code, bool):
        assert options.parse_flag(declared, key) is code
    elif isinstance(code, int | float):
        assert float(declared) == code
    else:
        assert (declared or None) == (code or None)


def test_the_options_read_from_a_command_are_the_sensitive_ones() -> None:
    from airflow_blindata.get_provider_info import get_provider_info
    from airflow_blindata.options import SENSITIVE

    options = get_provider_info()["config"]["blindata"]["options"]
    assert {name for name, option in options.items() if option.get("sensitive")} == SENSITIVE
