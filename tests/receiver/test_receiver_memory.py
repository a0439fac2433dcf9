"""The bodies of all requests in flight share one budget of memory (receiver_max_bytes_in_flight).

Producers here are raw sockets against the receiver served on loopback: each sends its headers
and part of its body, then holds, as a slow producer of a large batch does, while the others
come. The budget is read from the app between steps, so the test waits on what the server does,
not on sleeps.
"""

from __future__ import annotations

import gzip
import importlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from airflow_blindata.receiver.app import ReceiverSettings, create_receiver_app
from airflow_blindata.receiver.body import BodyError, inflate
from airflow_blindata.receiver.budget import BodyBudget
from airflow_blindata.store import EventStore

from .helpers import (
    API_KEY,
    TEST_MAX_BATCH_EVENTS,
    TEST_MAX_BODY_BYTES,
    mounted,
    run_event,
    serving,
)

pytestmark = pytest.mark.integration

AUTH = {"Authorization": f"Bearer {API_KEY}"}
KIB = 1024
SLACK = 1.0


@pytest.fixture(autouse=True, scope="module")
def _metrics_imported() -> None:
    """The receiver counts each answer in Airflow's metrics, whose first import takes seconds
    here; in the API server they are imported long before the first request."""
    importlib.import_module("airflow.providers.common.compat.sdk")


def padded(index: int, size: int) -> bytes:
    """A valid event of about ``size`` bytes of JSON (a long job description)."""
    event = run_event(index)
    event["job"]["facets"] = {
        "documentation": {
            "_producer": event["producer"],
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json",
            "description": "",
        }
    }
    event["job"]["facets"]["documentation"]["description"] = "x" * (size - len(json.dumps(event)))
    return json.dumps(event).encode()


@contextmanager
def served(store: EventStore, **settings: Any) -> Iterator[tuple[str, BodyBudget]]:
    """The receiver on loopback (its root URL) and its budget of bytes in flight."""
    limits: dict[str, Any] = {
        "max_body_bytes": TEST_MAX_BODY_BYTES,
        "max_batch_events": TEST_MAX_BATCH_EVENTS,
    }
    app = create_receiver_app(
        settings=ReceiverSettings(**(limits | settings)), keys=[API_KEY], store=store
    )
    with serving(mounted(app)) as root:
        yield root, app.state.receiver.budget


class SlowProducer:
    """A producer that sends its headers and the first part of its body, then holds."""

    def __init__(self, root: str, body: bytes, *, sent: int, headers: str = "") -> None:
        host, port = root.removeprefix("http://").rsplit(":", 1)
        self.body = body
        self.sent = sent
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        head = (
            "POST /blindata/api/v1/lineage HTTP/1.1\r\nHost: receiver\r\n"
            f"Authorization: Bearer {API_KEY}\r\nContent-Type: application/json\r\n"
            f"{headers}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        self.sock.sendall(head + body[:sent])

    def finish(self) -> tuple[int, dict[str, Any]]:
        """Send the rest; the status and the JSON of the answer."""
        self.sock.sendall(self.body[self.sent :])
        return self.answer()

    def answer(self) -> tuple[int, dict[str, Any]]:
        received = b""
        while chunk := self.sock.recv(65536):
            received += chunk
        self.sock.close()
        head, _, content = received.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(content)


def wait_until(condition: Callable[[], bool], *, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.01)


def test_bodies_in_flight_share_one_budget_and_the_rest_get_a_503(store: EventStore) -> None:
    first, second = padded(1, 40 * KIB), padded(2, 40 * KIB)
    with served(store, max_bytes_in_flight=100 * KIB, busy_wait=0.5) as (root, budget):
        url = f"{root}/blindata/api/v1/lineage"
        producers = [SlowProducer(root, body, sent=len(body) // 2) for body in (first, second)]
        wait_until(lambda: budget.in_use == len(first) + len(second))  # taken before reading

        started = time.monotonic()
        refused = httpx.post(url, content=padded(3, 30 * KIB), headers=AUTH, timeout=10)
        waited = time.monotonic() - started

        assert producers[0].finish()[0] == 200  # its share is given back once answered
        admitted = httpx.post(url, content=padded(4, 30 * KIB), headers=AUTH, timeout=10)
        assert producers[1].finish()[0] == 200
        wait_until(lambda: budget.in_use == 0)

    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "1"
    assert "receiver_max_bytes_in_flight" in refused.json()["detail"]
    assert 0.5 <= waited < 0.5 + SLACK  # it waited briefly for room, then was turned away
    assert admitted.status_code == 200
    assert sorted(store_run_ids(store)) == sorted(
        run_event(index)["run"]["runId"]
        for index in (1, 2, 4)  # not 3
    )


def test_a_producer_still_sending_a_large_body_reads_its_503(store: EventStore) -> None:
    held, large = padded(1, 1024 * KIB), padded(2, 6 * 1024 * KIB)
    with served(
        store, max_body_bytes=8 * 1024 * KIB, max_bytes_in_flight=1024 * KIB, busy_wait=0.2
    ) as (root, budget):
        producer = SlowProducer(root, held, sent=10)
        wait_until(lambda: budget.in_use == len(held))
        refused = SlowProducer(root, large, sent=0)  # more than the sockets' buffers take

        status, answer = refused.finish()  # never a reset: the rest was read, and dropped

        assert producer.finish()[0] == 200
        wait_until(lambda: budget.in_use == 0)

    assert status == 503
    assert "receiver_max_bytes_in_flight" in answer["detail"]
    assert store_run_ids(store) == [run_event(1)["run"]["runId"]]


def test_a_request_waits_briefly_for_room_rather_than_fail(store: EventStore) -> None:
    held = padded(1, 60 * KIB)
    with served(store, max_bytes_in_flight=100 * KIB, busy_wait=5) as (root, budget):
        url = f"{root}/blindata/api/v1/lineage"
        producer = SlowProducer(root, held, sent=10)
        wait_until(lambda: budget.in_use == len(held))
        answers: list[httpx.Response] = []
        waiting = threading.Thread(
            target=lambda: answers.append(
                httpx.post(url, content=padded(2, 50 * KIB), headers=AUTH, timeout=10)
            )
        )
        waiting.start()
        wait_until(lambda: bool(budget._waiters))  # it is waiting for room

        assert producer.finish()[0] == 200
        waiting.join(10)

    assert [answer.status_code for answer in answers] == [200]
    assert sorted(store_run_ids(store)) == sorted(
        run_event(index)["run"]["runId"] for index in (1, 2)
    )


def test_what_gzip_inflates_is_counted_too(store: EventStore) -> None:
    held = padded(1, 40 * KIB)
    bomb = gzip.compress(padded(2, 60 * KIB))  # about 1 KiB sent, 60 KiB once inflated
    with served(store, max_bytes_in_flight=100 * KIB, busy_wait=0.5) as (root, budget):
        url = f"{root}/blindata/api/v1/lineage"
        producer = SlowProducer(root, held, sent=10)
        wait_until(lambda: budget.in_use == len(held))

        refused = httpx.post(
            url, content=bomb, headers=AUTH | {"Content-Encoding": "gzip"}, timeout=10
        )

        assert producer.finish()[0] == 200
        admitted = httpx.post(
            url, content=bomb, headers=AUTH | {"Content-Encoding": "gzip"}, timeout=10
        )

    assert len(bomb) < 2 * KIB
    assert refused.status_code == 503
    assert admitted.status_code == 200


def test_a_body_larger_than_the_budget_gets_through_alone(store: EventStore) -> None:
    body = padded(1, 50 * KIB)
    with served(store, max_bytes_in_flight=20 * KIB, busy_wait=0.5) as (root, budget):
        answer = httpx.post(f"{root}/blindata/api/v1/lineage", content=body, headers=AUTH)
        wait_until(lambda: budget.in_use == 0)

    assert answer.status_code == 200


def test_the_budget_is_an_option(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_blindata.receiver.app import receiver_settings

    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_MAX_BYTES_IN_FLIGHT", "1048576")
    assert receiver_settings().max_bytes_in_flight == 1048576
    assert ReceiverSettings().max_bytes_in_flight == 64 * 1024 * 1024

    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_MAX_BYTES_IN_FLIGHT", "0")
    assert receiver_settings().problem == (
        "[blindata] receiver_max_bytes_in_flight must be a positive integer, not '0'"
    )


def store_run_ids(store: EventStore) -> list[str]:
    return [str(event.run_id) for event in store.events()]


def test_gzip_is_inflated_a_step_at_a_time() -> None:
    first, second = b"a" * 300 * KIB, b"b" * 200 * KIB
    body = gzip.compress(first) + gzip.compress(second)  # two members, as some clients send

    pieces = list(inflate(body, "gzip", limit=1024 * KIB, step=64 * KIB))

    assert b"".join(pieces) == first + second
    assert max(len(piece) for piece in pieces) == 64 * KIB
    with pytest.raises(BodyError, match="truncated"):
        list(inflate(body[:-10], "gzip", limit=1024 * KIB, step=64 * KIB))
    with pytest.raises(BodyError, match="decompressed request body exceeds"):
        list(inflate(body, "gzip", limit=400 * KIB, step=64 * KIB))


def test_a_producer_that_stalls_mid_body_gives_its_share_back(store: EventStore) -> None:
    """A producer whose host vanished mid-body leaves a connection open for ever: its share of
    the budget must come back, or a few of them turn every other producer away with a 503."""
    stalled_body, later = padded(1, 60 * KIB), padded(2, 60 * KIB)
    limits = {"max_bytes_in_flight": 100 * KIB, "busy_wait": 0.2, "body_idle_timeout": 0.5}
    with served(store, **limits) as (root, budget):
        stalled = SlowProducer(root, stalled_body, sent=10)
        status, answer = stalled.answer()  # never sends the rest
        wait_until(lambda: budget.in_use == 0)
        admitted = httpx.post(f"{root}/blindata/api/v1/lineage", content=later, headers=AUTH)

    assert status == 408
    assert "nothing of it stored" in answer["detail"]
    assert admitted.status_code == 200
    assert store_run_ids(store) == [run_event(2)["run"]["runId"]]
