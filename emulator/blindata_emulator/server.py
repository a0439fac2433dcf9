"""Serving the emulator over HTTP with uvicorn: in the foreground (CLI) or in a thread (tests).

`running_emulator` binds a free loopback port itself, so the URL is known before the server
starts and two test sessions never race for a port; it returns once uvicorn accepts connections
and stops the server (and closes the store) when the block ends.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette

from .app import Emulator, create_app
from .middleware import DroppedConnection
from .settings import EmulatorSettings

__all__ = ["EmulatorHandle", "running_emulator", "serve", "serving"]

STARTUP_TIMEOUT_SECONDS = 10.0
SHUTDOWN_TIMEOUT_SECONDS = 10.0
_POLL_SECONDS = 0.01
_UVICORN_ERROR_LOGGER = "uvicorn.error"
_DROP_MESSAGE = "ASGI callable returned without completing response."


class _HideInjectedDrops(logging.Filter):
    """uvicorn logs every dropped response as an application error; injected drops are not."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], DroppedConnection):
            return False
        return record.getMessage() != _DROP_MESSAGE


def _hide_injected_drops() -> None:
    logger = logging.getLogger(_UVICORN_ERROR_LOGGER)
    if not any(isinstance(f, _HideInjectedDrops) for f in logger.filters):
        logger.addFilter(_HideInjectedDrops())


def serve(
    settings: EmulatorSettings, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info"
) -> None:
    """Serve an emulator until interrupted (Ctrl-C)."""
    _hide_injected_drops()
    app = create_app(settings)
    try:
        uvicorn.run(
            app, host=host, port=port, log_level=log_level, lifespan="off", date_header=False
        )
    finally:
        app.state.emulator.close()


@dataclass
class EmulatorHandle:
    """A running emulator: its URL, its ASGI app and its `Emulator`."""

    base_url: str
    app: Starlette
    emulator: Emulator


@contextmanager
def serving(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
    name: str = "asgi-server",
    date_header: bool = True,
) -> Iterator[str]:
    """Serve an ASGI ``app`` with uvicorn in a background thread; yields its root URL.

    ``port=0`` takes a free port. Used for the emulator, and by tests that serve another app
    (the OpenLineage receiver) over real loopback HTTP.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level=log_level, lifespan="off", date_header=date_header)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"{name} did not start on {host}:{bound_port}")
        time.sleep(_POLL_SECONDS)
    try:
        yield f"http://{host}:{bound_port}"
    finally:
        server.should_exit = True
        thread.join(SHUTDOWN_TIMEOUT_SECONDS)
        sock.close()


@contextmanager
def running_emulator(
    settings: EmulatorSettings,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
) -> Iterator[EmulatorHandle]:
    """Serve an emulator on `host:port` (0: a free port) in a background thread."""
    _hide_injected_drops()
    app = create_app(settings)
    try:
        # The emulator dates its answers itself, from its clock (`DateHeader`).
        with serving(app, host, port, log_level, "blindata-emulator", date_header=False) as url:
            yield EmulatorHandle(url, app, app.state.emulator)
    finally:
        app.state.emulator.close()
