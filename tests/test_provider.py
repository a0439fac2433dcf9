"""The provider as Airflow sees it: entry points, ``airflow providers list|hooks|widgets``."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import distribution, entry_points
from pathlib import Path

import pytest

from airflow_blindata import __version__
from airflow_blindata.get_provider_info import get_provider_info

AIRFLOW = str(Path(sys.executable).with_name("airflow"))


def test_package_name_is_exactly_the_distribution_name() -> None:
    """Airflow refuses a provider whose package-name differs (and breaks providers list)."""
    assert get_provider_info()["package-name"] == distribution("airflow-blindata").metadata["Name"]


def test_both_entry_points_are_declared() -> None:
    (provider,) = [
        ep for ep in entry_points(group="apache_airflow_provider") if "blindata" in ep.value
    ]
    assert provider.load()()["package-name"] == "airflow-blindata"
    (plugin,) = [ep for ep in entry_points(group="airflow.plugins") if ep.name == "blindata"]
    assert plugin.load().name == "blindata"


def airflow_cli(*args: str, tmp_path: Path) -> str:
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    done = subprocess.run(
        [AIRFLOW, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.airflow
def test_airflow_providers_list_shows_the_provider(tmp_path: Path) -> None:
    lines = airflow_cli("providers", "list", "--output", "plain", tmp_path=tmp_path).splitlines()
    (line,) = [line for line in lines if line.startswith("airflow-blindata ")]
    assert __version__ in line


@pytest.mark.airflow
def test_airflow_providers_hooks_shows_the_blindata_connection_type(tmp_path: Path) -> None:
    output = airflow_cli("providers", "hooks", "--output", "plain", tmp_path=tmp_path)
    (line,) = [line for line in output.splitlines() if line.startswith("blindata ")]
    assert "airflow_blindata.hooks.blindata.BlindataHook" in line
    assert "blindata_conn_id" in line


@pytest.mark.airflow
def test_airflow_providers_widgets_shows_the_form_fields(tmp_path: Path) -> None:
    output = airflow_cli("providers", "widgets", "--output", "plain", tmp_path=tmp_path)
    fields = {line.split()[0] for line in output.splitlines() if "extra__blindata__" in line}
    assert fields == {
        f"extra__blindata__{name}"
        for name in (
            "tenant",
            "auth_method",
            "verify_ssl",
            "ca_bundle",
            "timeout",
            "deadline",
            "api_paths",
        )
    }


def test_the_connection_form_hides_schema_shows_the_port_and_relabels_host() -> None:
    (conn_type,) = get_provider_info()["connection-types"]
    behaviour = conn_type["ui-field-behaviour"]
    # the port stays: Airflow 3.3.2's Test button needs it (tests/test_metadata_db_connections.py)
    assert set(behaviour["hidden-fields"]) == {"schema"}
    assert "443" in behaviour["relabeling"]["port"] and behaviour["placeholders"]["port"] == "443"
    assert behaviour["relabeling"]["host"] == "Blindata URL"
    assert conn_type["conn-fields"]["auth_method"]["schema"]["enum"] == [
        "api_key",
        "login",
        "bearer",
    ]


@pytest.mark.airflow
def test_the_ui_serves_the_same_labelled_form_on_every_supported_airflow() -> None:
    """What the connection form is built from (``/ui/connections/hook_meta``): from the provider
    info's ``conn-fields`` on Airflow 3.2+, from the hook's methods on 3.1 (``hooks/form.py``,
    with wtforms installed, as the FAB auth manager has it). The same fields either way."""
    from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService

    (meta,) = [
        hook for hook in HookMetaService.hook_meta_data() if hook.connection_type == "blindata"
    ]
    served = meta.model_dump(mode="json")
    (conn_type,) = get_provider_info()["connection-types"]
    behaviour = conn_type["ui-field-behaviour"]
    standard = served["standard_fields"]
    assert standard["url_schema"]["hidden"] is True
    for name in ("host", "port", "login", "password"):
        assert standard[name]["title"] == behaviour["relabeling"][name]
        assert standard[name]["placeholder"] == behaviour["placeholders"][name]
    extra = served["extra_fields"]
    assert set(extra) == set(conn_type["conn-fields"])
    for name, declared in conn_type["conn-fields"].items():
        assert extra[name]["schema"]["title"] == declared["label"]
        assert extra[name]["description"] == declared["description"]
    assert extra["auth_method"]["schema"]["enum"] == ["api_key", "login", "bearer"]
    assert extra["auth_method"]["value"] == "api_key" and extra["verify_ssl"]["value"] is True
    assert extra["timeout"]["value"] == 30 and extra["deadline"]["value"] == 120
