"""The OpenLineage receiver: producers outside Airflow (Spark, dbt, Flink, Hop) send events here.

A FastAPI app that the plugin mounts in the Airflow API server (``fastapi_apps``, prefix
``/blindata``), speaking the OpenLineage HTTP API so the producers' ``http`` transports work
unchanged: ``POST /blindata/api/v1/lineage`` (one event, a JSON array or JSON lines) and
``/blindata/api/v1/lineage/batch``, gzip bodies, ``Authorization: Bearer <key>`` (``keys``).
The contract is the transport's: 200 only once every stored event is committed to the event
store, a re-sent event a duplicate, never a call to Blindata; bad events 400, out of the key's
scope 403, unholdable ones quarantined; a bounded wait for the store and bounded memory (503
with ``Retry-After``); secrets never echoed.

The contract in full: docs/configure-your-producers.md#the-receivers-contract-receiverapppy
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager, suppress
from functools import cache
from typing import Any, TypeVar

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from airflow_blindata.events import parse_event
from airflow_blindata.metrics import count
from airflow_blindata.store import (
    AppendCounts,
    AppendOutcome,
    EventAppender,
    EventStore,
    StoreError,
    StoreUnavailableError,
    open_store,
)

from .body import Body, BodyError, Item, decompress_within, read_body, split_events
from .budget import BodyBudget, BudgetSpentError, Share
from .keys import (
    CachedKeys,
    KeyLoader,
    KeyScope,
    KeySet,
    bearer_token,
    configured_keys,
    key_set,
)
from .log import ThrottledWarnings
from .settings import (
    DEFAULT_MAX_BATCH_EVENTS,
    DEFAULT_MAX_BODY_BYTES,
    ReceiverSettings,
    receiver_enabled,
    receiver_settings,
)

__all__ = [
    "BATCH_ROUTE",
    "DEFAULT_MAX_BATCH_EVENTS",
    "DEFAULT_MAX_BODY_BYTES",
    "ROUTE",
    "SOURCE",
    "URL_PREFIX",
    "ReceiverSettings",
    "create_receiver_app",
    "fastapi_app",
    "plugin_fastapi_apps",
    "receiver_enabled",
    "receiver_settings",
]

log = logging.getLogger(__name__)

URL_PREFIX = "/blindata"
ROUTE = "/api/v1/lineage"
BATCH_ROUTE = "/api/v1/lineage/batch"
APP_NAME = "Blindata OpenLineage receiver"
SOURCE = "receiver"
"""The ``source`` the store records for events that came through the receiver."""
STORE_RETRY_AFTER_SECONDS = 1
"""Retry-After of a 503 for a busy store: clients honour it, so it must stay short."""
REALM = "blindata-openlineage"
SERIALIZED_BACKEND = "sqlite"
"""SQLite takes one writer at a time and makes the others poll with sleeps (its busy handler):
the receiver's threads queue on a lock instead, which wakes the next writer at once."""
METRIC_PREFIX = "blindata.receiver"
DRAIN_SECONDS = 10.0
"""How long the receiver reads, and drops, the rest of a body it turned away before it answers."""
STORE_THREADS = 16
"""Threads that write to the store, the receiver's own (not the API server's shared pool): as
many as a PostgreSQL store's pooled connections (5 + 10 overflow) and one more."""

T = TypeVar("T")


def _count(name: str, amount: int = 1) -> None:
    """Airflow's metric ``blindata.receiver.<name>``; nothing when metrics are not set up."""
    count(f"{METRIC_PREFIX}.{name}", amount)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers=headers)


class _Receiver:
    """The state behind the routes: settings, keys, and the store opened on first use."""

    def __init__(
        self,
        settings: ReceiverSettings,
        keys: CachedKeys,
        store_factory: Callable[[], EventAppender],
    ) -> None:
        self.settings = settings
        self.keys = keys
        self._store_factory = store_factory
        self._store: EventAppender | None = None
        self._lock = threading.Lock()
        self._writes: threading.Lock | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._threads_pid = 0
        self.budget = BodyBudget(settings.max_bytes_in_flight, settings.busy_wait)
        self.warnings = ThrottledWarnings(log)

    def store(self) -> EventAppender:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    store = self._open()
                    if getattr(store, "backend", "") == SERIALIZED_BACKEND:
                        self._writes = threading.Lock()
                    self._store = store  # published last: a reader sees its lock too
        return self._store

    def _open(self) -> EventAppender:
        """The store; any failure to open it is a ``StoreError`` (a 503), never a 500."""
        try:
            return self._store_factory()
        except StoreError:
            raise
        except Exception as error:  # e.g. the PostgreSQL driver is not installed
            # Only the class: the message of a foreign error may quote a URL with a password.
            message = f"the event store could not be opened: {type(error).__name__}"
            raise StoreUnavailableError(message) from error

    def append(self, data: dict[str, Any]) -> AppendOutcome:
        store = self.store()
        with self._write_turn():
            return store.append(data, source=SOURCE)

    def append_many(self, events: list[dict[str, Any]]) -> AppendCounts:
        store = self.store()
        with self._write_turn():
            return store.append_many(events, source=SOURCE)

    @contextmanager
    def _write_turn(self) -> Iterator[None]:
        """SQLite's write turn, waited for no longer than a request waits for the store."""
        writes = self._writes
        if writes is None:
            yield
            return
        if not writes.acquire(timeout=self.settings.store_timeout):
            raise StoreUnavailableError(
                f"the event store is busy: no write turn in {self.settings.store_timeout:g} s"
            )
        try:
            yield
        finally:
            writes.release()

    async def in_thread(self, call: Callable[..., T], *args: Any) -> T:
        """``call(*args)`` in one of the receiver's threads, waited for ``store_timeout`` at
        most (``StoreTimeoutError`` then). A call not started by then is dropped; one running ends
        by itself, within the store's own bound."""
        future = asyncio.get_running_loop().run_in_executor(self._pool(), call, *args)
        try:
            return await asyncio.wait_for(future, self.settings.store_timeout)
        except TimeoutError:
            raise StoreTimeoutError(
                f"the event store did not answer within {self.settings.store_timeout:g} s"
            ) from None

    def _pool(self) -> ThreadPoolExecutor:
        if self._threads is None or self._threads_pid != os.getpid():
            with self._lock:
                if self._threads is None or self._threads_pid != os.getpid():
                    self._threads = ThreadPoolExecutor(STORE_THREADS, "blindata-receiver")
                    self._threads_pid = os.getpid()
        return self._threads

    def close(self) -> None:
        with self._lock:
            if self._threads is not None and self._threads_pid == os.getpid():
                self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def refusal(self, request: Request, keys: KeySet) -> JSONResponse | KeyScope:
        """The answer to a request that may not go further (misconfigured, or not authorised),
        or the scope of its key."""
        retry = {"Retry-After": str(STORE_RETRY_AFTER_SECONDS)}  # as docs/configure-your-producers
        if self.settings.problem:
            return _error(
                503, f"the Blindata receiver is misconfigured: {self.settings.problem}", retry
            )
        if not keys.digests:
            why = keys.problem or "no API key"
            self.warnings.warn("no key", "Blindata receiver refuses every request: %s", why)
            return _error(503, f"the Blindata receiver refuses events: {why}", retry)
        token, problem = bearer_token(request.headers.get("authorization"))
        scope = None if token is None else keys.scope_of(token)
        if scope is not None:
            return scope
        challenge = f'Bearer realm="{REALM}"'
        if token is not None:
            problem = "the API key is not valid"
            challenge += ', error="invalid_token"'
        _count("unauthorized")
        self.warnings.warn(
            "unauthorized",
            "Blindata receiver refused a request from %s: %s",
            _client(request),
            problem,
        )
        return _error(401, problem or "unauthorized", {"WWW-Authenticate": challenge})

    async def body(self, request: Request, *, force_batch: bool, share: Share) -> Body:
        """The events of the request's body, its bytes held in ``share`` of the budget."""
        limit = self.settings.max_body_bytes
        stream = request.stream()
        try:
            raw = await read_body(
                stream,
                declared_length=request.headers.get("content-length"),
                limit=limit,
                reserve=share.grow_to,
                idle_timeout=self.settings.body_idle_timeout,
            )
        except BudgetSpentError:
            share.shrink_to(0)  # what was read is let go
            await _drain(stream)
            raise
        decoded = await decompress_within(
            raw, request.headers.get("content-encoding"), limit=limit, reserve=share.grow_to
        )
        share.shrink_to(len(decoded))  # the compressed body is let go
        del raw
        body = split_events(
            decoded,
            request.headers.get("content-type"),
            max_events=self.settings.max_batch_events,
        )
        return Body(True, body.items) if force_batch else body

    def store_single(self, item: Item, scope: KeyScope) -> JSONResponse:
        problem, forbidden = _judge(item, scope)
        if problem is not None:
            _count("events.rejected")
            self.warnings.warn("rejected", "Blindata receiver rejected an event: %s", problem)
            return _error(400, f"not an OpenLineage event: {problem}")
        if forbidden is not None:
            _count("events.forbidden")
            self.warnings.warn("forbidden", "Blindata receiver refused an event: %s", forbidden)
            return _error(403, forbidden)
        outcome = self.append(item.data or {})
        _count(f"events.{outcome.value}")
        if outcome is AppendOutcome.QUARANTINED:
            self._quarantined(1)
        return JSONResponse({"status": "success", "outcome": outcome.value})

    def _quarantined(self, count: int) -> None:
        """Events the store could read but not hold as they are (a NUL, a lone surrogate, an
        over-long job name): kept with the reason, so the producer must not retry them."""
        self.warnings.warn(
            "quarantined",
            "Blindata receiver stored %d event(s) in quarantine: the store cannot hold them as "
            "they are; `airflow-blindata store quarantine` says why",
            count,
        )

    def store_batch(self, items: Sequence[Item], scope: KeyScope) -> JSONResponse:
        good: list[dict[str, Any]] = []
        good_indexes: list[int] = []
        failed: list[dict[str, Any]] = []
        forbidden = 0
        for item in items:
            problem, outside = _judge(item, scope)
            if outside is not None:
                problem = outside
                forbidden += 1
            if problem is None and item.data is not None:
                good.append(item.data)
                good_indexes.append(item.index)
            else:
                entry: dict[str, Any] = {"index": item.index, "reason": problem, "retriable": False}
                if item.line is not None:
                    entry["line"] = item.line
                failed.append(entry)
        counts = self.append_many(good) if good else AppendCounts()
        _count("events.accepted", counts.accepted)
        _count("events.duplicate", counts.duplicate)
        _count("events.quarantined", counts.quarantined)
        if counts.quarantined:
            self._quarantined(counts.quarantined)
        _count("events.rejected", len(failed) - forbidden)
        _count("events.forbidden", forbidden)
        quarantined = [
            {"index": good_indexes[position], "reason": reason}
            for position, reason in sorted(counts.quarantine_reasons.items())
        ]
        content = _batch_answer(len(items), counts, failed, quarantined)
        if not failed:
            return JSONResponse(content)
        self.warnings.warn(
            "rejected",
            "Blindata receiver rejected %d of %d events of a batch; first, %s",
            len(failed),
            len(items),
            content["first_failure"],
        )
        if counts.total:
            del content["first_failure"]
            return JSONResponse(content)
        content["status"] = "failure"
        if forbidden == len(failed):  # every event is readable, and outside the key's scope
            content["detail"] = (
                f"none of the {len(items)} events is within the API key's scope; "
                f"first, {content.pop('first_failure')}"
            )
            return JSONResponse(content, status_code=403)
        if forbidden:  # readable ones outside the scope, and the others not events: 403 too
            content["detail"] = (
                f"none of the {len(items)} events was stored: {forbidden} outside the API key's "
                f"scope, {len(failed) - forbidden} not OpenLineage events; first, "
                f"{content.pop('first_failure')}"
            )
            return JSONResponse(content, status_code=403)
        content["detail"] = (
            f"none of the {len(items)} events is an OpenLineage event; "
            f"first, {content.pop('first_failure')}"
        )
        return JSONResponse(content, status_code=400)

    def store_unavailable(self, error: StoreError) -> JSONResponse:
        # The store's message names the store (redacted); producers only learn that it failed.
        self.warnings.warn("store", "Blindata receiver could not store events: %s", error)
        retry = {"Retry-After": str(STORE_RETRY_AFTER_SECONDS)}
        if isinstance(error, StoreTimeoutError):
            _count("store_timeout")
            return _error(
                503,
                f"{error}; retry later (re-sending is safe: an event of this request stored "
                "meanwhile is a duplicate)",
                retry,
            )
        _count("store_unavailable")
        return _error(
            503,
            "the event store is unavailable; retry later (re-sending is safe: an event of this "
            "request stored before the failure comes back as a duplicate)",
            retry,
        )

    def busy(self, request: Request, error: BudgetSpentError) -> JSONResponse:
        """Too many bytes of bodies in flight: a 503 before reading more of this one."""
        _count("requests.busy")
        self.warnings.warn(
            "busy", "Blindata receiver turned a request from %s away: %s", _client(request), error
        )
        return _error(
            503,
            f"the receiver is busy: {error}; nothing of this request was stored, retry later",
            {"Retry-After": str(STORE_RETRY_AFTER_SECONDS)},
        )


class StoreTimeoutError(StoreUnavailableError):
    """The store did not answer a request within ``receiver_store_timeout``."""


def _batch_answer(
    received: int,
    counts: AppendCounts,
    failed: list[dict[str, Any]],
    quarantined: list[dict[str, Any]],
) -> dict[str, Any]:
    """The answer of OpenLineage's batch API, with our counts; ``first_failure`` for messages.

    ``quarantined_events`` (ours) lists the events stored aside, by index with the reason: they
    count as successful (re-sending them would not help) but their producer has something to fix.
    """
    answer: dict[str, Any] = {
        "status": "partial_success" if failed else "success",
        "summary": {
            "received": received,
            "successful": counts.total,
            "failed": len(failed),
            "retriable": 0,
            "non_retriable": len(failed),
            "accepted": counts.accepted,
            "duplicate": counts.duplicate,
            "quarantined": counts.quarantined,
        },
        "failed_events": failed,
        "quarantined_events": quarantined,
    }
    if failed:
        first = failed[0]
        line = f" (line {first['line']})" if "line" in first else ""
        answer["first_failure"] = f"event {first['index']}{line}: {first['reason']}"
    return answer


def _judge(item: Item, scope: KeyScope) -> tuple[str | None, str | None]:
    """Why ``item`` is not an OpenLineage event (``parse_event``'s reason), else why it is
    outside the scope of its request's key (``KeyScope.refusal``); (None, None) when neither."""
    if item.data is None:
        return item.problem or "not a JSON object", None
    parsed = parse_event(item.data, facets=False)
    if parsed.event is None:
        return parsed.problem or "not an OpenLineage event", None
    return None, scope.refusal(parsed.event)


async def _drain(stream: AsyncIterator[bytes]) -> None:
    """Read the rest of a refused body and keep none of it, for ``DRAIN_SECONDS`` at most.

    A producer still sending its body when the answer comes would otherwise meet a closed
    connection (a reset) instead of the 503 it can retry.
    """
    with anyio.move_on_after(DRAIN_SECONDS), suppress(ClientDisconnect):
        async for _ in stream:
            pass


def _client(request: Request) -> str:
    return request.client.host if request.client else "an unknown client"


def create_receiver_app(
    *,
    settings: ReceiverSettings | None = None,
    keys: KeyLoader | Sequence[str] | None = None,
    store: EventStore | Callable[[], EventAppender] | None = None,
) -> FastAPI:
    """The receiver app. Defaults read Airflow: limits, keys and ``[blindata] store_url``.

    ``keys`` may be the keys themselves (tests, benchmarks) or a loader; ``store`` an open store
    or a factory (called on the first request). The store is closed when the app shuts down.
    """
    if keys is None:
        loader: KeyLoader = configured_keys
    elif callable(keys):
        loader = keys
    else:
        fixed = key_set(list(keys), source="the keys given to the receiver")
        loader = lambda: fixed  # noqa: E731
    factory: Callable[[], EventAppender]
    if store is None:
        factory = open_store
    elif isinstance(store, EventStore):
        opened = store
        factory = lambda: opened  # noqa: E731
    else:
        factory = store
    receiver = _Receiver(settings or ReceiverSettings(), CachedKeys(loader), factory)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        receiver.close()

    app = FastAPI(
        title=APP_NAME, lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.receiver = receiver

    async def receive(request: Request, *, force_batch: bool) -> JSONResponse:
        # Keys are cached; only a reload (a connection lookup) leaves the event loop.
        keys = receiver.keys.fresh()
        if keys is None:
            keys = await run_in_threadpool(receiver.keys.get)
        scope = receiver.refusal(request, keys)
        if isinstance(scope, JSONResponse):
            return scope
        async with receiver.budget.share() as share:  # held until the request is answered
            return await stored(request, force_batch=force_batch, share=share, scope=scope)

    async def stored(
        request: Request, *, force_batch: bool, share: Share, scope: KeyScope
    ) -> JSONResponse:
        try:
            body = await receiver.body(request, force_batch=force_batch, share=share)
        except BudgetSpentError as error:
            return receiver.busy(request, error)
        except BodyError as error:
            _count("requests.rejected")
            receiver.warnings.warn(
                "body", "Blindata receiver refused a body from %s: %s", _client(request), error
            )
            return _error(error.status, error.message)
        except ClientDisconnect:  # a producer killed or timed out mid-body: a line, no traceback
            _count("requests.disconnected")
            receiver.warnings.warn(
                "disconnect",
                "Blindata receiver: %s disconnected before its request body was complete; "
                "nothing of that request was stored",
                _client(request),
            )
            return _error(400, "the client disconnected before the request body was complete")
        try:
            if body.batch:
                return await receiver.in_thread(receiver.store_batch, body.items, scope)
            return await receiver.in_thread(receiver.store_single, body.items[0], scope)
        except StoreError as error:
            return receiver.store_unavailable(error)

    # Each path is served with a trailing slash too: Starlette would answer it with a redirect,
    # built from the request's scheme (http:// behind a TLS proxy), and a client that follows
    # one drops its Authorization header: the event came back as a 401.
    @app.post(ROUTE)
    @app.post(ROUTE + "/")
    async def lineage(request: Request) -> JSONResponse:
        """One event, or a batch (a JSON array, or JSON lines)."""
        return await receive(request, force_batch=False)

    @app.post(BATCH_ROUTE)
    @app.post(BATCH_ROUTE + "/")
    async def lineage_batch(request: Request) -> JSONResponse:
        """A batch of events (OpenLineage's batch endpoint); one object is a batch of one."""
        return await receive(request, force_batch=True)

    return app


@cache
def fastapi_app() -> dict[str, Any]:
    """The receiver in the shape of ``AirflowPlugin.fastapi_apps`` entries (built once).

    A configuration error does not stop the API server: the receiver is mounted and answers
    every request with 503 and the reason, rather than disappearing (404) or running open.
    """
    try:
        settings = receiver_settings()
    except Exception as error:
        log.warning("Blindata receiver could not read its settings", exc_info=True)
        problem = f"its settings could not be read ({type(error).__name__}); see the log"
        settings = ReceiverSettings(problem=problem)
    if settings.problem:
        log.warning("Blindata receiver refuses events: %s", settings.problem)
    return {
        "app": create_receiver_app(settings=settings),
        "url_prefix": URL_PREFIX,
        "name": APP_NAME,
    }


def plugin_fastapi_apps() -> list[dict[str, Any]]:
    """What ``BlindataPlugin.fastapi_apps`` returns: the receiver, unless it is disabled.

    Never raises: a receiver that cannot be built is logged and left out, and Airflow's API
    server starts without it.
    """
    try:
        return [fastapi_app()] if receiver_enabled() else []
    except Exception:
        log.warning("Blindata receiver could not be set up; it is not mounted", exc_info=True)
        return []
