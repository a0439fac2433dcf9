"""A total time bound on one HTTP exchange, however slowly the server answers.

``bounded(until)`` runs a block in which every connect, read and write of the client's network
streams is given at most the time left until ``until`` (``time.monotonic``), and fails with
httpx's own ``ConnectTimeout``, ``ReadTimeout`` or ``WriteTimeout`` once it is gone; headers and
body alike. The bound is a ``ContextVar``: each thread has its own, and none outside ``bounded``.
``install(client)`` wraps the network backend of the client's pools, reached through httpx's
attributes: it returns False, and httpx's per-operation timeouts stay, if a later httpx moves
them. Why a whole-exchange bound: docs/connection.md#retries-and-the-deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, TypeVar

import httpcore
import httpx

__all__ = ["bounded", "install"]

_BOUND: ContextVar[float | None] = ContextVar("blindata_exchange_bound", default=None)
"""``time.monotonic()`` value by which the exchange in progress must be complete."""

_EXPIRED = "the exchange was not complete within its time bound"

T = TypeVar("T")


@contextmanager
def bounded(until: float) -> Iterator[None]:
    """Run the block with every network operation ending by ``until`` (``time.monotonic``)."""
    token = _BOUND.set(until)
    try:
        yield
    finally:
        _BOUND.reset(token)


def _left(timeout: float | None, expired: type[Exception]) -> tuple[float | None, bool]:
    """``timeout`` cut to the time left before the bound, and whether the bound cut it.

    Raises ``expired`` when no time is left.
    """
    until = _BOUND.get()
    if until is None:
        return timeout, False
    left = until - time.monotonic()
    if left <= 0:
        raise expired(_EXPIRED)
    if timeout is None or left < timeout:
        return left, True
    return timeout, False


def _run(
    operation: Callable[[float | None], T], timeout: float | None, expired: type[Exception]
) -> T:
    """``operation(timeout)`` within the bound; a timeout the bound caused says so."""
    limit, by_bound = _left(timeout, expired)
    try:
        return operation(limit)
    except expired:
        if by_bound:
            raise expired(_EXPIRED) from None
        raise


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _run(partial(self._stream.read, max_bytes), timeout, httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _run(partial(self._stream.write, buffer), timeout, httpcore.WriteTimeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = partial(self._stream.start_tls, ssl_context, server_hostname)
        return _BoundedStream(_run(tls, timeout, httpcore.ConnectTimeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self.backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        def connect(limit: float | None) -> httpcore.NetworkStream:
            return self.backend.connect_tcp(host, port, limit, local_address, socket_options)

        return _BoundedStream(_run(connect, timeout, httpcore.ConnectTimeout))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        def connect(limit: float | None) -> httpcore.NetworkStream:
            return self.backend.connect_unix_socket(path, limit, socket_options)

        return _BoundedStream(_run(connect, timeout, httpcore.ConnectTimeout))

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def install(client: httpx.Client) -> bool:
    """Bound the exchanges of every network transport of ``client``; False if none was found.

    Transports that are not httpx's own (an in-process ``WSGITransport``, a ``MockTransport``)
    have no network to bound and are left as they are.
    """
    transports = [getattr(client, "_transport", None)]
    transports += list((getattr(client, "_mounts", None) or {}).values())
    installed = False
    for transport in transports:
        if not isinstance(transport, httpx.HTTPTransport):
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, _BoundedBackend):
            installed = True
        elif isinstance(backend, httpcore.NetworkBackend):
            pool._network_backend = _BoundedBackend(backend)  # type: ignore[union-attr]
            installed = True
    return installed
