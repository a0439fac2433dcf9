"""A store that hangs never hangs the receiver's producers: a 503 with Retry-After, in time.

The receiver is served over HTTP on loopback; the store is a real PostgreSQL reached through a
proxy that stops forwarding (``tests/store/stalls.py``): the connection the store holds stops
answering, and new ones are accepted and never answered, as with a hung server.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from airflow_blindata.receiver.app import ReceiverSettings, receiver_settings
from airflow_blindata.store import EventStore, open_store
from tests.store.helpers import postgres_base_url, postgres_schema
from tests.store.stalls import FreezingProxy, address, through

from .helpers import API_KEY, TEST_MAX_BATCH_EVENTS, TEST_MAX_BODY_BYTES, run_event, serve_receiver

pytestmark = pytest.mark.integration

AUTH = {"Authorization": f"Bearer {API_KEY}"}
PRODUCERS = 24
"""More than the receiver's store threads (16) and than PostgreSQL's pooled connections (15)."""
STORE_TIMEOUT = 1.5
SLACK = 1.0


def _settings(**changes: Any) -> ReceiverSettings:
    limits: dict[str, Any] = {
        "max_body_bytes": TEST_MAX_BODY_BYTES,
        "max_batch_events": TEST_MAX_BATCH_EVENTS,
    }
    return ReceiverSettings(**(limits | changes))


def _send_all(url: str, count: int) -> list[tuple[float, httpx.Response]]:
    """``count`` producers at once, half of them with a batch; each answer with its seconds."""
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    with httpx.Client(limits=limits, timeout=30) as client:

        def send(index: int) -> tuple[float, httpx.Response]:
            body: Any = run_event(index) if index % 2 else [run_event(index)]
            started = time.monotonic()
            response = client.post(url, json=body, headers=AUTH)
            return time.monotonic() - started, response

        with ThreadPoolExecutor(count) as pool:
            return list(pool.map(send, range(count)))


@pytest.mark.postgres
def test_producers_get_a_503_in_time_when_postgresql_hangs() -> None:
    with (
        postgres_schema(postgres_base_url()) as url,
        FreezingProxy(address(url)) as proxy,
    ):
        store = open_store(through(url, proxy.port))
        try:
            with serve_receiver(store, settings=_settings(store_timeout=STORE_TIMEOUT)) as served:
                before = httpx.post(served.lineage_url, json=run_event(1000), headers=AUTH)
                assert before.status_code == 200  # the store holds a connection now
                proxy.freeze()
                answers = _send_all(served.lineage_url, PRODUCERS)
        finally:
            store.close()

    assert [response.status_code for _, response in answers] == [503] * PRODUCERS
    for _, response in answers:
        assert response.headers["Retry-After"] == "1"
        assert "did not answer within 1.5 s" in response.json()["detail"]
    slowest = max(seconds for seconds, _ in answers)
    assert slowest < STORE_TIMEOUT + SLACK  # before: 60 s and more, or never


def test_many_producers_at_once_are_all_stored(store: EventStore) -> None:
    with serve_receiver(store) as served:
        answers = _send_all(served.lineage_url, PRODUCERS)

    assert [response.status_code for _, response in answers] == [200] * PRODUCERS
    assert len(served.stored_run_ids()) == PRODUCERS


def test_the_store_timeout_is_an_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_STORE_TIMEOUT", "2.5")
    assert receiver_settings().store_timeout == 2.5
    assert ReceiverSettings().store_timeout == 4.0

    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_STORE_TIMEOUT", "never")
    assert receiver_settings().problem == (
        "[blindata] receiver_store_timeout must be a positive number of seconds, not 'never'"
    )
