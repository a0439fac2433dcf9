"""Answers that a proxy in front of Blindata gives and the emulator cannot: a loopback HTTP server
plays the proxy. Each test is named after what the admin of such a deployment expects."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
from collections.abc import Iterator

import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BlindataClient,
    BlindataContractError,
    RetryPolicy,
)
from tests.conftest import API_KEY, USER

pytestmark = pytest.mark.integration

ME = json.dumps({"uuid": "u-1", "username": USER, "permissions": []}).encode()


class _Proxy(http.server.BaseHTTPRequestHandler):
    """Answers ``/users/me`` with ``ME`` as the first segment of its path says:
    ``gzip`` compresses it, ``gzip-but-plain`` announces gzip and sends it plain (a proxy that
    adds the header to a body it did not compress)."""

    requests = 0

    def do_GET(self) -> None:
        type(self).requests += 1
        encoding = self.path.split("/")[1]
        body = gzip.compress(ME) if encoding == "gzip" else ME
        self.send_response(200)
        self.send_header("Content-Type", "application/hal+json;charset=UTF-8")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[str]:
    _Proxy.requests = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def client(url: str) -> BlindataClient:
    policy = RetryPolicy(deadline=10.0, max_attempts=4, backoff_initial=0.05, backoff_max=0.1)
    return BlindataClient(url, credentials=ApiKeyCredentials(USER, API_KEY), retry=policy)


def test_a_gzip_answer_in_hal_json_with_a_charset_is_read(proxy: str) -> None:
    with client(f"{proxy}/gzip") as blindata:
        assert blindata.api.me().username == USER


def test_a_body_that_its_content_encoding_does_not_describe_is_a_contract_error(
    proxy: str,
) -> None:
    """httpx's own DecodingError escaped the client: not a BlindataError, no operation named,
    and the Test button said "Unexpected error". It is the answer of a proxy set up wrongly,
    the same every time: not asked again."""
    with client(f"{proxy}/gzip-but-plain") as blindata, pytest.raises(BlindataContractError) as e:
        blindata.api.me()
    assert "GET /api/v1/users/me" in str(e.value), e.value
    assert "Content-Encoding does not describe" in str(e.value), e.value
    assert _Proxy.requests == 1
