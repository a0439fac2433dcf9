"""BlindataListener and its plugin: when they capture, where DAG events go, when they stand down."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

from airflow_blindata.openlineage import settings
from airflow_blindata.openlineage import transport as transport_module
from airflow_blindata.openlineage.settings import TRANSPORT_PATH, blindata_legs
from airflow_blindata.openlineage.transport import BlindataTransport
from airflow_blindata.store import open_store

MARQUEZ = {"type": "http", "url": "http://marquez:5000"}


class MyTransport(BlindataTransport):
    """A user's subclass, named by its own dotted path."""


@pytest.fixture(autouse=True)
def clean_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in (
        "AIRFLOW__OPENLINEAGE__TRANSPORT",
        "AIRFLOW__OPENLINEAGE__CONFIG_PATH",
        "AIRFLOW__OPENLINEAGE__CONFIG_CONN_ID",
        "AIRFLOW__OPENLINEAGE__DISABLED",
        "AIRFLOW__BLINDATA__LISTENER_ENABLED",
        "OPENLINEAGE_URL",
        "OPENLINEAGE_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", f"sqlite:///{tmp_path / 'events.db'}")
    monkeypatch.setattr(transport_module, "_STORES", {})
    yield


def configure_openlineage(monkeypatch: pytest.MonkeyPatch, transport: dict[str, Any]) -> None:
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__TRANSPORT", json.dumps(transport))


@pytest.mark.parametrize(
    ("config", "found"),
    [
        ({"type": TRANSPORT_PATH}, 1),
        ({"type": f"{__name__}.MyTransport"}, 1),
        (MARQUEZ, 0),
        ({"type": "composite", "transports": {"m": MARQUEZ, "b": {"type": TRANSPORT_PATH}}}, 1),
        ({"type": "composite", "transports": [MARQUEZ, {"type": TRANSPORT_PATH}]}, 1),
        ({"type": "transform", "transport": {"type": TRANSPORT_PATH}}, 1),
        ({"type": "no.such.module.Transport"}, 0),
        (None, 0),
    ],
    ids=["alone", "subclass", "marquez", "composite", "composite-list", "transform", "bad", "none"],
)
def test_blindata_is_found_anywhere_in_a_transport_config(config: Any, found: int) -> None:
    assert len(blindata_legs(config)) == found


def test_what_the_openlineage_provider_sends_to(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert settings.openlineage_blindata_legs(resolve_connection=False) == []  # disabled
    configure_openlineage(monkeypatch, MARQUEZ)
    assert settings.openlineage_blindata_legs(resolve_connection=False) == []
    composite = {"type": "composite", "transports": {"m": MARQUEZ, "b": {"type": TRANSPORT_PATH}}}
    configure_openlineage(monkeypatch, composite)
    assert settings.openlineage_blindata_legs(resolve_connection=False) == [
        {"type": TRANSPORT_PATH}
    ]
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__DISABLED", "True")
    assert settings.openlineage_blindata_legs(resolve_connection=False) == []
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__DISABLED")
    config_file = tmp_path / "openlineage.yml"
    config_file.write_text(f"transport:\n  type: {TRANSPORT_PATH}\n")
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__TRANSPORT")
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__CONFIG_PATH", str(config_file))
    assert len(settings.openlineage_blindata_legs(resolve_connection=False) or []) == 1


def test_a_config_connection_is_read_only_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__CONFIG_CONN_ID", "ol_config")
    monkeypatch.setenv(
        "AIRFLOW_CONN_OL_CONFIG",
        json.dumps({"conn_type": "generic", "extra": {"transport": {"type": TRANSPORT_PATH}}}),
    )
    assert settings.openlineage_blindata_legs(resolve_connection=False) is None
    assert len(settings.openlineage_blindata_legs(resolve_connection=True) or []) == 1


def test_the_plugin_registers_the_listener_only_when_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow_blindata.openlineage import plugin
    from airflow_blindata.openlineage.listener import BlindataListener

    listeners, readers = plugin._capture_setup()  # OpenLineage not configured: we capture
    assert [type(listener) for listener in listeners] == [BlindataListener] and readers
    configure_openlineage(monkeypatch, MARQUEZ)  # OpenLineage sends elsewhere: we capture
    assert len(plugin._capture_setup()[0]) == 1
    configure_openlineage(monkeypatch, {"type": TRANSPORT_PATH})  # it sends to us already
    assert plugin._capture_setup() == ([], [])
    assert None in transport_module._STORES  # ...and the store waits, built, for the forks
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__TRANSPORT")
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", "False")
    assert plugin._capture_setup() == ([], [])


def test_the_plugin_never_breaks_airflow(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from airflow_blindata.openlineage import plugin

    def broken(**_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(settings, "openlineage_blindata_legs", broken)
    assert plugin._capture_setup() == ([], [])
    assert "could not be set up" in caplog.text


def test_dag_events_go_through_the_blindata_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.openlineage.plugins import listener as provider_listener

    from airflow_blindata.openlineage.listener import BlindataListener, _capture

    submitted: list[tuple[Any, ...]] = []

    def submit(self: Any, callable: Any, *args: Any, **kwargs: Any) -> str:
        submitted.append((callable, args, kwargs))
        return "future"

    monkeypatch.setattr(provider_listener.OpenLineageListener, "submit_callable", submit)
    listener = BlindataListener("sqlite:///x.db")
    assert listener.submit_callable(provider_listener._run_adapter_method, "dag_success", a=1)
    listener.submit_callable(
        provider_listener._emit_manual_state_change_event, "fail_task", "ol.size", b=2
    )
    assert submitted == [
        (_capture, ("sqlite:///x.db", "dag_success"), {"a": 1}),
        (_capture, ("sqlite:///x.db", "fail_task"), {"b": 2}),
    ]
    assert listener.submit_callable(print, "x") is None  # unknown: not sent anywhere
    assert len(submitted) == 2


def test_capture_stores_with_the_listener_as_source(tmp_path: Path) -> None:
    from airflow_blindata.openlineage.listener import _capture

    url = f"sqlite:///{tmp_path / 'pool.db'}"
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime="2026-03-01T10:00:00+00:00",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="airflow", name="dag"),
        producer="p",
    )
    _capture(url, "emit", event)  # what a pool worker runs for a DAG event
    with open_store(url) as store:
        (stored,) = store.events()
    assert (stored.job_name, stored.source) == ("dag", "listener")


def test_the_listener_stands_down_when_the_connection_config_sends_to_blindata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow_blindata.openlineage.listener import BlindataListener

    ran: list[str] = []
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__CONFIG_CONN_ID", "ol_config")
    monkeypatch.setenv(
        "AIRFLOW_CONN_OL_CONFIG",
        json.dumps({"conn_type": "generic", "extra": {"transport": {"type": TRANSPORT_PATH}}}),
    )
    waiting = BlindataListener(decide_later=True)
    waiting._execute(lambda: ran.append("extract"), "on_running")
    assert ran == [] and waiting.is_active() is False
    monkeypatch.setenv(
        "AIRFLOW_CONN_OL_CONFIG",
        json.dumps({"conn_type": "generic", "extra": {"transport": MARQUEZ}}),
    )
    active = BlindataListener(decide_later=True)
    active._execute(lambda: ran.append("extract"), "on_running")  # not forked: runs inline
    assert ran == ["extract"]
