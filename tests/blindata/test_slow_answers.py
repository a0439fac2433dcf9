"""The retry deadline holds inside one exchange: a server that trickles its answer.

The emulator answers at once or not at all, so a tiny raw-socket server plays the slow proxy here:
it sends its answer one byte at a time, each byte well within the client's read timeout, so that
only a bound on the whole exchange can stop it. Each test is named after the sentence it checks.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BlindataClient,
    BlindataDeadlineError,
    BlindataRequestError,
    RetryPolicy,
)
from airflow_blindata.blindata.bound import install

pytestmark = pytest.mark.integration

BODY = b'{"uuid": "u-1", "username": "trickled-user"}'
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(
    BODY
)
BYTE_INTERVAL = 0.1
"""Seconds between two bytes: the whole answer takes about 12 s, far past the deadlines below."""


@dataclass
class Trickler:
    """Serves every connection the same answer, the part ``trickled`` one byte at a time."""

    trickled: str
    interval: float = BYTE_INTERVAL
    connections: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    listener: socket.socket = field(default_factory=socket.socket)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def serve(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(1.0)
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                request += chunk
            slow = HEAD + BODY if self.trickled == "headers" else BODY
            if self.trickled == "body":
                conn.sendall(HEAD)
            for byte in range(len(slow)):
                if self.stop.wait(self.interval):
                    return
                conn.sendall(slow[byte : byte + 1])
        except OSError:
            return  # the client gave up and closed the connection


@pytest.fixture
def trickler() -> Iterator[Callable[..., Trickler]]:
    servers: list[tuple[Trickler, threading.Thread]] = []

    def start(trickled: str, interval: float = BYTE_INTERVAL) -> Trickler:
        server = Trickler(trickled, interval)
        server.listener.bind(("127.0.0.1", 0))
        server.listener.listen()
        thread = threading.Thread(target=server.serve, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.stop.set()
        thread.join(timeout=5)
        server.listener.close()


def client(url: str, *, timeout: float, deadline: float) -> BlindataClient:
    return BlindataClient(
        url,
        credentials=ApiKeyCredentials("etl", "key"),
        timeout=timeout,
        retry=RetryPolicy(deadline=deadline, backoff_initial=0.05, backoff_max=0.1),
    )


@pytest.mark.parametrize(
    ("trickled", "timeout", "deadline", "attempts"),
    [
        pytest.param("body", 30.0, 2.0, 1, id="trickled-body-one-exchange"),
        pytest.param("headers", 30.0, 2.0, 1, id="trickled-headers-one-exchange"),
        pytest.param("body", 0.8, 2.5, 2, id="each-exchange-bound-by-the-timeout-then-retried"),
    ],
)
def test_an_answer_trickled_a_byte_at_a_time_is_cut_at_the_deadline(
    trickler: Callable[..., Trickler],
    trickled: str,
    timeout: float,
    deadline: float,
    attempts: int,
) -> None:
    """Neither a trickled body nor trickled headers hold an operation past its deadline."""
    server = trickler(trickled)
    started = time.monotonic()
    with (
        client(server.url, timeout=timeout, deadline=deadline) as blindata,
        pytest.raises(BlindataDeadlineError) as caught,
    ):
        blindata.api.me()
    elapsed = time.monotonic() - started
    assert elapsed < deadline + 1.0, elapsed  # the answer itself would take about 12 s
    assert caught.value.attempts >= attempts
    assert server.connections == caught.value.attempts
    last = caught.value.last_error
    assert isinstance(last, BlindataRequestError)
    assert "timed out waiting for the answer" in str(last)
    assert "within its time bound" in str(last)


def test_the_timeout_bounds_a_whole_exchange_not_each_read(
    trickler: Callable[..., Trickler],
) -> None:
    """A 0.5 s timeout used to allow the whole 12 s answer: each byte came within 0.5 s."""
    server = trickler("body")
    started = time.monotonic()
    with (
        client(server.url, timeout=0.5, deadline=0.9) as blindata,
        pytest.raises(BlindataDeadlineError),
    ):
        blindata.api.me()
    assert time.monotonic() - started < 2.0


def test_an_answer_within_the_bound_is_read_whole(trickler: Callable[..., Trickler]) -> None:
    """The bound cuts only what outlasts it: a slow answer that fits is read as usual."""
    server = trickler("headers", interval=0.005)  # about 0.6 s in all
    with client(server.url, timeout=30.0, deadline=15.0) as blindata:
        assert blindata.api.me().username == "trickled-user"
    assert server.connections == 1


@pytest.mark.parametrize(
    "proxy", [None, "http://127.0.0.1:3128"], ids=["direct", "proxy-from-the-environment"]
)
def test_every_network_transport_of_the_client_is_bounded(
    monkeypatch: pytest.MonkeyPatch, proxy: str | None
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    if proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy)
    with client("https://blindata.example", timeout=30.0, deadline=2.0) as blindata:
        assert blindata.bounded_exchanges
        http = blindata._exchange._http  # the httpx.Client of the exchange (exchange.py)
        transports = [http._transport, *http._mounts.values()]
    pools = [t._pool for t in transports if isinstance(t, httpx.HTTPTransport)]
    assert len(pools) == (2 if proxy else 1)
    assert all(type(pool._network_backend).__name__ == "_BoundedBackend" for pool in pools)
    plain = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200)))
    assert not install(plain)  # an in-process transport has no network to bound
