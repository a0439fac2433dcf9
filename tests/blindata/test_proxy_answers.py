"""Answers that a proxy in front of Blindata gives and the emulator cannot: a loopback HTTP server
plays the proxy. Each test is named after what the admin of such a deployment expects."""

from __future__ import annotations

import gzip
import http.server
import json
import logging
from collections.abc import Iterator

import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BlindataClient,
    BlindataContractError,
    Credentials,
    LoginCredentials,
    RetryPolicy,
)
from tests.helpers import API_KEY, USER, loopback_server

pytestmark = pytest.mark.integration

LIVE_TOKEN = "eyJhbGciOiJIUzI1NiJ9.a-live-token-that-must-never-show"
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

    def do_POST(self) -> None:
        """A login answered 200 with the token where the contract does not put it: under
        another name (``/token-named-otherwise``) or as the body itself (``/token-as-text``)."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("/")[1] == "token-as-text":
            body, content_type = LIVE_TOKEN.encode(), "text/plain"
        else:
            body, content_type = (
                json.dumps({"accessToken": LIVE_TOKEN}).encode(),
                "application/json",
            )
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[str]:
    _Proxy.requests = 0
    with loopback_server(_Proxy) as url:
        yield url


def client(url: str, credentials: Credentials | None = None) -> BlindataClient:
    policy = RetryPolicy(deadline=10.0, max_attempts=4, backoff_initial=0.05, backoff_max=0.1)
    credentials = credentials or ApiKeyCredentials(USER, API_KEY)
    return BlindataClient(url, credentials=credentials, retry=policy)


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


@pytest.mark.parametrize("answer", ["token-named-otherwise", "token-as-text"])
def test_a_login_answer_without_an_access_token_never_shows_the_token_it_holds(
    proxy: str, answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The answer was quoted in the error ("POST /auth/login failed with 200 OK: {...}"): the
    live token it held went to the Test button, the task log and the run report."""
    caplog.set_level(logging.DEBUG)
    with (
        client(f"{proxy}/{answer}", LoginCredentials(USER, API_KEY)) as blindata,
        pytest.raises(BlindataContractError) as caught,
    ):
        blindata.api.me()
    message = str(caught.value)
    assert "POST /auth/login" in message and "access_token" in message, message
    assert "a-live-token" not in message and "a-live-token" not in caplog.text
