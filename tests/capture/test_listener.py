"""BlindataListener and its plugin: when they capture, where DAG events go, when they stand down."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

from airflow_blindata.capture import openlineage_config
from airflow_blindata.capture import transport as transport_module
from airflow_blindata.capture.openlineage_config import TRANSPORT_PATH, blindata_legs
from airflow_blindata.capture.transport import BlindataTransport
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
    assert openlineage_config.openlineage_blindata_legs(resolve_connection=False) == []  # disabled
    configure_openlineage(monkeypatch, MARQUEZ)
    assert openlineage_config.openlineage_blindata_legs(resolve_connection=False) == []
    composite = {"type": "composite", "transports": {"m": MARQUEZ, "b": {"type": TRANSPORT_PATH}}}
    configure_openlineage(monkeypatch, composite)
    assert openlineage_config.openlineage_blindata_legs(resolve_connection=False) == [
        {"type": TRANSPORT_PATH}
    ]
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__DISABLED", "True")
    assert openlineage_config.openlineage_blindata_legs(resolve_connection=False) == []
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__DISABLED")
    config_file = tmp_path / "openlineage.yml"
    config_file.write_text(f"transport:\n  type: {TRANSPORT_PATH}\n")
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__TRANSPORT")
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__CONFIG_PATH", str(config_file))
    assert len(openlineage_config.openlineage_blindata_legs(resolve_connection=False) or []) == 1


def test_a_config_connection_is_read_only_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__CONFIG_CONN_ID", "ol_config")
    monkeypatch.setenv(
        "AIRFLOW_CONN_OL_CONFIG",
        json.dumps({"conn_type": "generic", "extra": {"transport": {"type": TRANSPORT_PATH}}}),
    )
    assert openlineage_config.openlineage_blindata_legs(resolve_connection=False) is None
    assert len(openlineage_config.openlineage_blindata_legs(resolve_connection=True) or []) == 1


def test_the_plugin_registers_the_listener_only_when_needed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from airflow_blindata import plugin
    from airflow_blindata.capture.lazy import CaptureListener
    from airflow_blindata.capture.listener import BlindataListener

    listeners, readers = plugin._capture_setup()  # OpenLineage not configured: we capture
    assert [type(listener) for listener in listeners] == [CaptureListener] and readers
    (capture,) = listeners
    assert capture.listen and transport_module._STORES == {}  # nothing built yet
    assert isinstance(capture.prepare(), BlindataListener)  # the first event builds it...
    assert None in transport_module._STORES  # ...and its store, for the forks
    configure_openlineage(monkeypatch, MARQUEZ)  # OpenLineage sends elsewhere: we capture
    assert plugin._capture_setup()[0][0].listen
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    configure_openlineage(monkeypatch, {"type": TRANSPORT_PATH, "store_url": url})
    (capture,), readers = plugin._capture_setup()  # it sends to us already: only the stores
    assert not capture.listen and readers == [] and capture.store_urls == (url,)
    assert capture.prepare() is None and url in transport_module._STORES
    monkeypatch.delenv("AIRFLOW__OPENLINEAGE__TRANSPORT")
    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", "False")
    assert plugin._capture_setup() == ([], [])


@pytest.mark.parametrize("value", ["maybe", "ture"])
def test_an_unreadable_listener_enabled_leaves_capture_on_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    """A typo in ``[blindata] listener_enabled`` turned capture off for every task, with a
    warning at the plugin's load as the only sign (a probe of deployments): it is the option's
    default, on, and the error names the option."""
    from airflow_blindata import plugin

    monkeypatch.setenv("AIRFLOW__BLINDATA__LISTENER_ENABLED", value)
    (capture,), readers = plugin._capture_setup()
    assert capture.listen and readers
    (record,) = [r for r in caplog.records if "listener_enabled" in r.getMessage()]
    assert record.levelno == logging.ERROR and "stays on" in record.getMessage()


@pytest.mark.parametrize(
    "switch", [("AIRFLOW__OPENLINEAGE__DISABLED", "True"), ("OPENLINEAGE_DISABLED", "true")]
)
@pytest.mark.parametrize("transport", [None, MARQUEZ], ids=["unset", "marquez"])
def test_openlineage_turned_off_turns_the_listener_off(
    monkeypatch: pytest.MonkeyPatch, switch: tuple[str, str], transport: Any
) -> None:
    """``[openlineage] disabled`` and its legacy variable ``OPENLINEAGE_DISABLED`` are one switch
    for the provider: the listener, which runs the provider's extraction, honours both."""
    from airflow_blindata import plugin

    if transport:
        configure_openlineage(monkeypatch, transport)
    monkeypatch.setenv(*switch)
    assert plugin._capture_setup() == ([], [])


IMPORTS_PROBE = """
import json, sys
import airflow
before = set(sys.modules)
from airflow_blindata import plugin
print("MODULES " + json.dumps(sorted(set(sys.modules) - before)))
print("LISTENERS " + json.dumps([repr(listener) for listener in plugin.BlindataPlugin.listeners]))
"""


@pytest.mark.airflow
@pytest.mark.parametrize("transport", [None, TRANSPORT_PATH], ids=["listener", "transport"])
def test_loading_the_plugin_imports_nothing_heavy(tmp_path: Path, transport: str | None) -> None:
    """Every Airflow process loads the plugin; only those that emit need the capture's modules
    (benchmarks/imports.py measures the time)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__", "OPENLINEAGE"))}
    env.update({"AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
    if transport:
        env["AIRFLOW__OPENLINEAGE__TRANSPORT"] = json.dumps({"type": transport})
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE], env=env, capture_output=True, text=True, check=False
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert "MODULES" in lines, done.stdout[-2000:] + done.stderr[-2000:]
    imported = set(json.loads(lines["MODULES"]))
    heavy = {
        "airflow.providers.openlineage.plugins.listener",
        "airflow.providers.openlineage.plugins.adapter",
        "airflow.providers.openlineage.utils.utils",
        "openlineage.client.client",
        "airflow_blindata.capture.listener",
        "airflow_blindata.capture.transport",
        "airflow_blindata.store",
        "airflow_blindata.mapper",
    }
    assert not imported & heavy, sorted(imported & heavy)
    assert json.loads(lines["LISTENERS"]) == [
        "CaptureListener(listener, prepared=False)"
        if transport is None
        else "CaptureListener(transport stores (None,), prepared=False)"
    ]


def test_the_capture_listener_answers_every_hook_of_the_openlineage_listener() -> None:
    """The same hooks, with the same arguments (pluggy passes them by name)."""
    import inspect

    from airflow.providers.openlineage.plugins.listener import OpenLineageListener

    from airflow_blindata.capture.lazy import CaptureListener

    def hooks(cls: type) -> dict[str, list[str]]:
        return {
            name: list(inspect.signature(member).parameters)[1:]
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if hasattr(member, "airflow_impl")
        }

    theirs, ours = hooks(OpenLineageListener), hooks(CaptureListener)
    del theirs["on_starting"]  # a debug line there; nothing to prepare for
    assert ours == theirs


class Recorder:
    """Stands in for BlindataListener: records the calls handed over."""

    store_url = None

    def __init__(self, calls: list[tuple[str, Any]]) -> None:
        self.calls = calls

    def __getattr__(self, name: str) -> Any:
        def record(**kwargs: Any) -> None:
            self.calls.append((name, kwargs))

        return record


def test_the_first_event_prepares_capture_before_it_is_handed_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from airflow_blindata.capture import listener as listener_module
    from airflow_blindata.capture.lazy import CaptureListener

    calls: list[tuple[str, Any]] = []

    def build(**_: Any) -> Recorder:
        calls.append(("built", dict(transport_module._STORES)))
        return Recorder(calls)

    monkeypatch.setattr(listener_module, "get_blindata_listener", build)
    capture = CaptureListener(listen=True)
    task_instance = SimpleNamespace(task=SimpleNamespace(task_id="load"))
    capture.on_task_instance_running(previous_state=None, task_instance=task_instance)
    assert [name for name, _ in calls] == ["built", "on_task_instance_running"]
    assert None in transport_module._STORES  # preloaded before the hand-over (and any fork)
    capture.on_task_instance_success(previous_state=None, task_instance=task_instance)
    assert [name for name, _ in calls][-1] == "on_task_instance_success"
    assert len([name for name, _ in calls if name == "built"]) == 1  # once per process


def test_a_failing_capture_never_raises_into_airflow(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from types import SimpleNamespace

    from airflow_blindata.capture.lazy import CaptureListener

    class Broken:
        store_url = None

        def on_task_instance_running(self, **_: Any) -> None:
            raise RuntimeError("boom")

    capture = CaptureListener(listen=True)
    monkeypatch.setattr(capture, "prepare", lambda: Broken())
    capture.on_task_instance_running(previous_state=None, task_instance=SimpleNamespace(task=None))
    assert "Blindata capture failed in on_task_instance_running" in caplog.text


def test_the_plugin_never_breaks_airflow(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from airflow_blindata import plugin

    def broken(**_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(openlineage_config, "openlineage_blindata_legs", broken)
    assert plugin._capture_setup() == ([], [])
    assert "could not be set up" in caplog.text


def test_dag_events_go_through_the_blindata_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.openlineage.plugins import listener as provider_listener

    from airflow_blindata.capture.listener import BlindataListener, _capture

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
    from airflow_blindata.capture.listener import _capture

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
    from airflow_blindata.capture.listener import BlindataListener

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


def test_the_capture_listener_never_shows_a_stores_password() -> None:
    """Airflow logs every listener call at debug level with the listener's repr (pluggy's
    HookImpl): the transports' store URLs show redacted."""
    from airflow_blindata.capture.lazy import CaptureListener

    urls = ["postgresql://bob:s3cret@db/x", "postgresql://db/y?password=s3cret", None]
    shown = repr(CaptureListener(listen=False, store_urls=urls))
    assert "s3cret" not in shown
    assert "postgresql://bob:***@db/x" in shown and "None" in shown
