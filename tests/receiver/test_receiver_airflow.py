"""The receiver inside the real Airflow API server app, mounted the way Airflow mounts plugin apps.

Airflow's ``create_app`` mounts each ``fastapi_apps`` entry under its ``url_prefix`` behind its
own middlewares (JWT refresh, gzip, access log). The receiver must work there unchanged, with its
own API-key auth, while Airflow's API keeps requiring Airflow's auth.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from airflow_blindata.receiver.app import ROUTE, URL_PREFIX, fastapi_app
from airflow_blindata.store import open_store

from .helpers import API_KEY, run_event, serving, spark_like_run, transport_config

pytestmark = pytest.mark.integration


@dataclass
class AirflowServed:
    root: str
    store_url: str


def _plugin_apps(plugins_manager: Any, entries: list[Any]) -> Any:
    """The plugins' ``fastapi_apps`` as ``create_app`` reads them: Airflow 3.3 asks
    ``get_fastapi_plugins()``; 3.1 reads the module's ``fastapi_apps`` once they are set."""
    if hasattr(plugins_manager, "get_fastapi_plugins"):
        return mock.patch.object(plugins_manager, "get_fastapi_plugins", return_value=(entries, []))
    patches = contextlib.ExitStack()
    patches.enter_context(mock.patch.object(plugins_manager, "fastapi_apps", entries))
    patches.enter_context(mock.patch.object(plugins_manager, "fastapi_root_middlewares", []))
    return patches


@pytest.fixture(scope="module")
def airflow_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowServed]:
    """The Airflow API server app (core apps) with the receiver entry, served on loopback."""
    from airflow import plugins_manager
    from airflow.api_fastapi import app as api_app

    store_url = f"sqlite:///{Path(tmp_path_factory.mktemp('airflow-api')) / 'events.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRFLOW__BLINDATA__RECEIVER_API_KEY", API_KEY)
        patch.setenv("AIRFLOW__BLINDATA__STORE_URL", store_url)
        fastapi_app.cache_clear()
        entry = fastapi_app()
        try:
            with _plugin_apps(plugins_manager, [entry]):
                app = api_app.create_app(apps="core")
            with serving(app) as root:
                yield AirflowServed(root, store_url)
        finally:
            fastapi_app.cache_clear()
            api_app.purge_cached_app()


def test_the_http_transport_delivers_through_the_airflow_api_server(
    airflow_api: AirflowServed,
) -> None:
    config = transport_config(airflow_api.root)
    transport = HttpTransport(HttpConfig.from_dict(config))
    run_id = str(uuid.uuid4())
    try:
        for state in (RunState.START, RunState.COMPLETE):
            assert transport.emit(spark_like_run(run_id, state)).status_code == 200
    finally:
        transport.close()

    with open_store(airflow_api.store_url) as store:
        stored = [(event.run_id, event.event_type, event.source) for event in store.events()]
    assert stored == [(run_id, "START", "receiver"), (run_id, "COMPLETE", "receiver")]


def test_the_receiver_keeps_its_own_auth_and_airflow_keeps_its_own(
    airflow_api: AirflowServed,
) -> None:
    ours = httpx.post(f"{airflow_api.root}{URL_PREFIX}{ROUTE}", json=run_event(1))
    airflows = httpx.get(
        f"{airflow_api.root}/api/v2/dags", headers={"Authorization": f"Bearer {API_KEY}"}
    )

    assert ours.status_code == 401
    assert "missing API key" in ours.json()["detail"]
    assert airflows.status_code in (401, 403)  # our key opens nothing of Airflow's


def test_the_provider_plugin_mounts_the_receiver() -> None:
    from airflow_blindata.plugin import BlindataPlugin

    entries = BlindataPlugin().fastapi_apps

    assert [entry["url_prefix"] for entry in entries] == [URL_PREFIX, "/blindata-ui"]
