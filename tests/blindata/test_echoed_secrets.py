"""A server that quotes the request in its error never puts the credentials in an error or a log.

Blindata does not echo credentials, but what answers at its URL may: a proxy or a gateway that
prints the headers it refused, a debug error page, a login endpoint that quotes the body it could
not read. The emulator never does, so a tiny HTTP server on loopback plays that server here: it
answers every request with the request's headers and body in its answer.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BearerToken,
    BlindataClient,
    BlindataError,
    LoginCredentials,
    RetryPolicy,
)
from airflow_blindata.blindata.models import PhysicalEntity, Ref

pytestmark = pytest.mark.integration

SECRET = "s3cret-key-that-must-never-show"
QUOTED = 's3cret"with\\quotes-that-must-never-show'
"""A secret that a JSON body escapes (``\\"``, ``\\\\``): the login request's body quotes it so."""
POLICY = RetryPolicy(deadline=2.0, max_attempts=2, backoff_initial=0.05, backoff_max=0.1)


class _Echo(BaseHTTPRequestHandler):
    """Answers ``status`` (the server's ``status``) quoting the whole request."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        credentials = {k: v for k, v in self.headers.items() if k.lower() != "user-agent"}
        quoted = f"{self.command} {self.path} {body} {credentials}"
        status, kind = self.server.answer  # type: ignore[attr-defined]
        if kind.endswith("-cut") and "s3cret" in quoted:  # quoted up to a length, inside the key
            quoted = quoted[: quoted.index("s3cret") + 12]
            kind = kind.removesuffix("-cut")
        if kind == "json":
            payload = json.dumps({"status": status, "error": quoted, "message": quoted}).encode()
            content_type = "application/json"
        else:
            payload = f"<html><body><pre>{quoted}</pre></body></html>".encode()
            content_type = "text/html"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "credentials",
    [
        ApiKeyCredentials("etl", SECRET),
        LoginCredentials("etl", SECRET),
        BearerToken(SECRET),
        LoginCredentials("etl", QUOTED),
    ],
    ids=["api_key", "login", "bearer", "login-quoted"],
)
@pytest.mark.parametrize(
    "answer",
    [
        (401, "json"),
        (403, "json"),
        (400, "json"),
        (503, "json"),
        (502, "html"),
        (200, "html"),
        (401, "json-cut"),
        (502, "html-cut"),
    ],
    ids=str,
)
def test_credentials_quoted_by_the_server_are_hidden(
    echo: ThreadingHTTPServer,
    credentials: Any,
    answer: tuple[int, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo.answer = answer  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{echo.server_address[1]}"
    texts: list[str] = []
    with BlindataClient(url, credentials=credentials, retry=POLICY) as client:
        row = PhysicalEntity(system=Ref(uuid="u-1"), schema="s", name="t")
        for call in (client.api.me, lambda: client.api.physical_entities.upload([row])):
            try:
                result = call()
            except BlindataError as exc:
                texts += [str(exc), repr(exc)]
                for error in (exc, getattr(exc, "last_error", None)):
                    if error is not None:
                        texts += [str(error), str(getattr(error, "server_message", None))]
            else:  # an upload whose batch was refused (400) reports its row
                texts += [error.message for error in result.errors]
    texts.append(caplog.text)
    # A login answered 200 without a token is never quoted (the token may be its body): the
    # other answers were read ...
    if not (answer[0] == 200 and isinstance(credentials, LoginCredentials)):
        assert any("***" in text for text in texts), texts
    # ... without the secret, as written or as JSON escapes it, nor its beginning where the
    # server cut its quote inside it
    assert all("must-never-show" not in text for text in texts), texts
    assert all("s3cret" not in text for text in texts), texts


def test_a_proxys_credentials_quoted_by_its_error_page_are_hidden(
    echo: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx sends the credentials of ``HTTP_PROXY`` as ``Proxy-Authorization: Basic <base64>``:
    a proxy whose error page quoted the request showed them in ``check``, the client's errors and
    the retries' warnings (a probe of deployments)."""
    import base64

    caplog.set_level(logging.DEBUG)
    echo.answer = (502, "html")  # type: ignore[attr-defined]
    proxy_password = "PROXY-s3cret-778899"
    basic = base64.b64encode(f"puser:{proxy_password}".encode()).decode()
    port = echo.server_address[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:{proxy_password}@127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("no_proxy", raising=False)
    texts: list[str] = []
    credentials = ApiKeyCredentials("etl", SECRET)
    client = BlindataClient("http://blindata.invalid:8080", credentials=credentials, retry=POLICY)
    with client, pytest.raises(BlindataError) as failed:
        client.api.me()
    texts += [str(failed.value), repr(failed.value), caplog.text]
    last = getattr(failed.value, "last_error", None)
    texts += [str(last), str(getattr(last, "server_message", None))]
    assert any("Proxy-Authorization" in text for text in texts), texts  # the page was quoted
    assert all(basic not in text and "s3cret" not in text for text in texts), texts


@pytest.mark.parametrize("suffix", ["[truncated 57 bytes]", " (truncated)", "<EOL>"])
def test_a_password_quoted_cut_short_by_a_server_never_shows_its_start(suffix: str) -> None:
    """A server that quotes the login body cut inside the password (``"password":"Hunt[trunc…``)
    quotes no literal secret to scrub: a reading of credentials alone showed its start (a
    review); the secret name's value is hidden."""
    import httpx

    password = "Hunter2x9"  # a short one: its start is no cut secret scrub would find

    def quoting(request: httpx.Request) -> httpx.Response:
        body = request.content.decode()
        cut = body[: body.index(password) + 4] if password in body else body
        return httpx.Response(400, json={"status": 400, "message": f"parse error at {cut}{suffix}"})

    credentials = LoginCredentials("steward", password)
    with (
        BlindataClient(
            "http://blindata.example",
            credentials=credentials,
            transport=httpx.MockTransport(quoting),
        ) as client,
        pytest.raises(BlindataError) as failed,
    ):
        client.api.me()
    assert "Hunt" not in str(failed.value), str(failed.value)
