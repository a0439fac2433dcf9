"""A PostgreSQL that stops answering, without stopping the real one.

``silent_server`` accepts connections and never says a word: a server whose postmaster hangs,
or a firewall that lets the handshake through and drops everything after it. ``FreezingProxy``
forwards to the real PostgreSQL until ``freeze()``: from then on it reads nothing and sends
nothing, the connections stay open, as with a server that hangs (stopped, its disk stalled)
while the store holds connections to it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit, urlunsplit

__all__ = ["FreezingProxy", "address", "silent_server", "through"]


def _listener() -> socket.socket:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(128)
    return server


@contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server on loopback that accepts every connection and never answers; its port."""
    server = _listener()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, name="silent-server", daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        with suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)
        server.close()
        for conn in held:
            conn.close()
        thread.join(timeout=5)


class FreezingProxy:
    """Forwards loopback connections to ``target`` (host, port) until ``freeze()``."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._server = _listener()
        self.port: int = self._server.getsockname()[1]
        self._frozen = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._accept, name="proxy", daemon=True)]
        self._threads[0].start()

    def freeze(self) -> None:
        """From now on nothing goes through, in either direction; connections stay open."""
        self._frozen.set()

    def thaw(self) -> None:
        """The server is back: new connections go through (what a frozen one lost is lost)."""
        self._frozen.clear()

    def __enter__(self) -> FreezingProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed.set()
        self._frozen.set()
        with suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with self._lock:
            for sock in self._sockets:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
        for thread in list(self._threads):
            thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client = self._server.accept()[0]
            except OSError:
                return
            with self._lock:
                self._sockets.append(client)
            if self._frozen.is_set():
                continue  # accepted, never answered
            upstream = socket.create_connection(self._target)
            with self._lock:
                self._sockets.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                thread = threading.Thread(
                    target=self._pump, args=(source, sink), name="proxy-pump", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        source.settimeout(0.05)
        while not self._closed.is_set():
            if self._frozen.is_set():
                self._closed.wait(0.05)
                continue
            try:
                data = source.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                with suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)
                return
            if self._frozen.is_set():
                continue  # read just as it froze: dropped, as a hung server would never answer
            with suppress(OSError):
                sink.sendall(data)


def through(url: str, port: int) -> str:
    """``url`` with its host and port replaced by 127.0.0.1:``port``."""
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


def address(url: str) -> tuple[str, int]:
    """The host and port ``url`` connects to (5432 when it names none)."""
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 5432
