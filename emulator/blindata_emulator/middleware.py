"""The ASGI layer in front of the API: injected faults, added latency, and the request log.

It sits outside routing and authentication, so a faulted request never reaches a handler (except
a truncated response, or a drop or failure asked for `processed=True`, which are handled first
and then spoiled). How each fault looks to an httpx client:

- fail / error rate: a normal response with the status and the Spring error body;
- rate limit: 429, header `Retry-After: <seconds>`, Spring error body;
- HTML error: the status with a `text/html` proxy page (`response.json()` fails);
- truncate: 200, `application/json`, a correct Content-Length and a JSON body cut in half
  (`response.json()` raises `json.JSONDecodeError`);
- drop: the status line and part of the body arrive, then the connection closes:
  `httpx.RemoteProtocolError` ("peer closed connection without sending complete message body")
  over a socket. In-process (`WSGITransport` + a2wsgi) the client's call raises
  `DroppedConnection`, a subclass of `httpx.RemoteProtocolError`, with its `.request` set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .clock import Clock
from .errors import error_body
from .faults import FaultDecision, FaultKind, Faults

__all__ = [
    "ADMIN_PREFIX",
    "NOTE_KEY",
    "DateHeader",
    "DroppedConnection",
    "FaultMiddleware",
    "RequestLog",
]

ADMIN_PREFIX = "/_emulator"
NOTE_KEY = "blindata_emulator.note"
"""Scope key where the API layer leaves the user and tenant of a request for the log."""

DEFAULT_LOG_LIMIT = 100_000
_DROP_DECLARED_LENGTH = 4096
_A2WSGI_SCOPE_KEY = "wsgi_environ"
_A2WSGI_ERROR = "a2wsgi.error"
_A2WSGI_HANDOFF_SECONDS = 1.0
"""How long the dropped request waits for a2wsgi to take the error (it never acknowledges)."""
_DROP_PARTIAL_BODY = b'{"content": ['
_SECRET_PARAM = re.compile(r"key|token|password|secret|auth", re.IGNORECASE)
_REDACTED = "***"
_HTML_PAGE = (
    "<html><head><title>{status} {reason}</title></head><body>"
    "<center><h1>{status} {reason}</h1></center><hr><center>nginx</center></body></html>"
)
_HTML_REASONS = {
    502: "Bad Gateway",
    503: "Service Temporarily Unavailable",
    504: "Gateway Time-out",
}


class DroppedConnection(httpx.RemoteProtocolError):
    """Raised inside the app to cut a response: uvicorn closes the socket, a2wsgi re-raises."""


@dataclass
class RequestNote:
    """Who the request was, once the API layer knows."""

    user: str | None = None
    tenant: str | None = None


def _redacted_query(query: bytes) -> str:
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    return urlencode([(k, _REDACTED if _SECRET_PARAM.search(k) else v) for k, v in pairs])


class RequestLog:
    """The requests received (never their credentials), for tests that count calls and retries."""

    def __init__(self, limit: int = DEFAULT_LOG_LIMIT) -> None:
        self._lock = threading.Lock()
        self._entries: deque[dict[str, Any]] = deque(maxlen=limit)
        self._next_id = 1

    def add(self, entry: dict[str, Any]) -> None:
        """Append one entry, numbering it."""
        with self._lock:
            entry["id"] = self._next_id
            self._next_id += 1
            self._entries.append(entry)

    def entries(self, since: int = 0) -> list[dict[str, Any]]:
        """Entries with an id above `since`, oldest first."""
        with self._lock:
            return [dict(entry) for entry in self._entries if entry["id"] > since]

    def clear(self) -> None:
        """Forget every entry (ids keep increasing)."""
        with self._lock:
            self._entries.clear()


async def _send_body(
    send: Send, status: int, body: bytes, content_type: bytes, extra: dict[str, str] | None = None
) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _capture(app: ASGIApp, scope: Scope, receive: Receive) -> tuple[int, bytes]:
    """Run the app and keep its response instead of sending it."""
    status = 500
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, keep)
    return status, b"".join(chunks)


async def _drop(scope: Scope, send: Send, before_cut: Callable[[], None]) -> None:
    """Send a status line and part of a body, then cut the connection."""
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(_DROP_DECLARED_LENGTH).encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": _DROP_PARTIAL_BODY, "more_body": True})
    error = DroppedConnection("the emulator dropped the connection (injected fault)")
    before_cut()
    if _A2WSGI_SCOPE_KEY not in scope:
        raise error  # uvicorn closes the socket of a response that fails once started
    # In-process, a2wsgi re-raises an app's exception in the client's thread only if it sees it
    # before it sees the app finish: a race. Handing it the error as its own message is not.
    with contextlib.suppress(TimeoutError):
        message = {"type": _A2WSGI_ERROR, "exception": (DroppedConnection, error, None)}
        await asyncio.wait_for(send(message), _A2WSGI_HANDOFF_SECONDS)


class DateHeader:
    """Sends the ``Date`` of every answer from the emulator's clock, as Blindata sends its own.

    The server's date header (uvicorn's, refreshed about once a second from the wall clock) is
    turned off where the emulator is served: an answer's ``Date`` then follows ``Clock.advance``,
    so a test moves Blindata's time forward instead of sleeping, and the date is exact to the
    second instead of up to two seconds behind.
    """

    def __init__(self, app: ASGIApp, clock: Clock) -> None:
        self.app = app
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def dated(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"date"]
                date = formatdate(self.clock.now(), usegmt=True).encode("latin-1")
                message = {**message, "headers": [(b"date", date), *headers]}
            await send(message)

        await self.app(scope, receive, dated)


class FaultMiddleware:
    """Applies the fault switches to API requests and logs each of them."""

    def __init__(self, app: ASGIApp, faults: Faults, log: RequestLog, clock: Clock) -> None:
        self.app = app
        self.faults = faults
        self.log = log
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(ADMIN_PREFIX):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        note = RequestNote()
        scope[NOTE_KEY] = note
        decision = self.faults.decide(scope["path"], scope["method"])
        logged = False

        def record(status: int | None) -> None:
            """Log the request once, as soon as its outcome is known."""
            nonlocal logged
            if not logged:
                logged = True
                self.log.add(self._entry(scope, note, decision, status, started))

        status: int | None = None
        try:
            if decision.latency_seconds:
                await asyncio.sleep(decision.latency_seconds)
            status = await self._serve(scope, receive, send, decision, record)
        finally:
            record(status)

    def _entry(
        self,
        scope: Scope,
        note: RequestNote,
        decision: FaultDecision,
        status: int | None,
        started: float,
    ) -> dict[str, Any]:
        headers = dict(scope.get("headers") or [])
        return {
            "time": self.clock.stamp(),
            "method": scope["method"],
            "path": scope["path"],
            "query": _redacted_query(scope.get("query_string", b"")),
            "status": status,
            "fault": decision.kind,
            "tenantHeader": headers.get(b"x-bd-tenant", b"").decode("latin-1") or None,
            "tenant": note.tenant,
            "user": note.user,
            "durationMs": round((time.perf_counter() - started) * 1000, 3),
        }

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        decision: FaultDecision,
        record: Callable[[int | None], None],
    ) -> int | None:
        kind = decision.kind
        stamp = self.clock.stamp()
        if kind is None:
            return await self._pass(scope, receive, send)
        if kind in (FaultKind.FAIL, FaultKind.RATE_LIMIT):
            if decision.processed:  # the work done, the answer lost: a gateway's 502 or 503
                await _capture(self.app, scope, receive)
            message = (
                "rate limit exceeded: retry later"
                if kind == FaultKind.RATE_LIMIT
                else "injected failure: the service is unavailable"
            )
            body = error_body(decision.status, message, scope["path"], stamp)
            extra = (
                {"Retry-After": str(decision.retry_after)} if kind == FaultKind.RATE_LIMIT else {}
            )
            await _send_body(
                send, decision.status, json.dumps(body).encode(), b"application/json", extra
            )
            return decision.status
        if kind == FaultKind.HTML_ERROR:
            reason = _HTML_REASONS.get(decision.status, "Error")
            page = _HTML_PAGE.format(status=decision.status, reason=reason).encode()
            await _send_body(send, decision.status, page, b"text/html")
            return decision.status
        if kind == FaultKind.TRUNCATE:
            _, full = await _capture(self.app, scope, receive)
            cut = full[: len(full) // 2] if len(full) > 2 else b'{"'
            await _send_body(send, 200, cut, b"application/json")
            return 200
        # FaultKind.DROP
        if decision.processed:
            await _capture(self.app, scope, receive)
        await _drop(scope, send, before_cut=lambda: record(None))
        return None

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> int | None:
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, watch)
        return status
