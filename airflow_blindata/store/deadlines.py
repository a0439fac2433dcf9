"""A bound on the client for how long the PostgreSQL store waits for its server.

PostgreSQL's own timeouts need a server that answers; one that hangs would hold an append for
ever. While a block runs inside ``bounded()``, every wait of the store's connections for the
server (a statement, a commit, a rollback) is armed on a watchdog thread, which shuts the
connection's socket down when the bound passes: the wait ends with ``NoAnswer``, the connection
is discarded, and the append fails like any unavailable store. ``bounded(seconds, whole=True)``
bounds the whole call (one event); ``whole=False`` each wait alone (a batch).
Why: docs/capture.md#postgresql-a-server-that-hangs-storedeadlinespy
"""

from __future__ import annotations

import heapq
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from time import monotonic
from typing import Any

__all__ = [
    "Bound",
    "bounded",
    "bounded_connection_class",
    "bounded_psycopg2_connection_class",
    "current_bound",
]


@dataclass(frozen=True, slots=True)
class Bound:
    """How long the server may take: ``seconds`` per wait, and all of them until ``deadline``."""

    seconds: float
    deadline: float | None = None

    def alarm_at(self, now: float) -> float:
        """When a wait that starts ``now`` gives up."""
        at = now + self.seconds
        return at if self.deadline is None else min(at, self.deadline)

    def expired(self) -> bool:
        """Whether the whole bound has passed (never, for a bound on each wait alone)."""
        return self.deadline is not None and monotonic() >= self.deadline


_BOUND: ContextVar[Bound | None] = ContextVar("blindata_store_bound", default=None)


def current_bound() -> Bound | None:
    """The bound of the operation running in this thread (or task), if any."""
    return _BOUND.get()


@contextmanager
def bounded(seconds: float, *, whole: bool) -> Iterator[Bound]:
    """Bound the store's waits for the server while the block runs (module docstring).

    Nested in another bound, the earlier deadline stays: an inner call never extends it.
    """
    outer = _BOUND.get()
    deadline = monotonic() + seconds if whole else None
    if outer is not None and outer.deadline is not None:
        deadline = outer.deadline if deadline is None else min(deadline, outer.deadline)
    bound = Bound(seconds, deadline)
    token = _BOUND.set(bound)
    try:
        yield bound
    finally:
        _BOUND.reset(token)


class _Alarm:
    __slots__ = ("at", "done", "fileno", "fired")

    def __init__(self, at: float, fileno: int) -> None:
        self.at = at
        self.fileno = fileno
        self.fired = False
        self.done = False


class _Watchdog:
    """One thread per process: shuts down the socket of a wait that outlived its alarm."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._alarms: list[tuple[float, int, _Alarm]] = []
        self._count = 0
        self._thread: threading.Thread | None = None

    def arm(self, at: float, fileno: int) -> _Alarm:
        alarm = _Alarm(at, fileno)
        with self._cond:
            self._count += 1
            earliest = not self._alarms or at < self._alarms[0][0]
            heapq.heappush(self._alarms, (at, self._count, alarm))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name="blindata-store-watchdog", daemon=True
                )
                self._thread.start()
            elif earliest:
                self._cond.notify()
        return alarm

    def disarm(self, alarm: _Alarm) -> bool:
        """Whether the alarm went off; after this it never will."""
        with self._cond:
            alarm.done = True
            return alarm.fired

    def _watch(self) -> None:
        with self._cond:
            while True:
                alarms = self._alarms
                while alarms and alarms[0][2].done:
                    heapq.heappop(alarms)
                if not alarms:
                    self._cond.wait()
                    continue
                left = alarms[0][0] - monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                alarm = heapq.heappop(alarms)[2]
                alarm.fired = alarm.done = True
                # Under the lock: the waiting thread cannot disarm, and so cannot close the
                # connection (and free its descriptor for another socket), meanwhile.
                _shut_down(alarm.fileno)


def _shut_down(fileno: int) -> None:
    """End every wait on the socket behind ``fileno`` (a copy of the descriptor: never closed
    under its owner)."""
    with suppress(OSError), socket.socket(fileno=os.dup(fileno)) as sock:
        sock.shutdown(socket.SHUT_RDWR)


_WATCHDOG = _Watchdog()


def _after_fork_in_child() -> None:
    # The watchdog thread does not exist in a child, and its lock may have been held at the fork.
    global _WATCHDOG
    _WATCHDOG = _Watchdog()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _alarmed(
    call: Callable[[], Any],
    fileno: int,
    close: Callable[[], Any],
    driver_error: type[BaseException],
    no_answer: type[BaseException],
) -> Any:
    """``call()`` with the watchdog armed on the connection's socket when a bound is set (either
    driver): a wait the alarm cut becomes ``no_answer`` and the connection is closed."""
    bound = _BOUND.get()
    if bound is None:
        return call()
    watchdog = _WATCHDOG
    alarm = watchdog.arm(bound.alarm_at(monotonic()), fileno)
    try:
        result = call()
    except driver_error as error:
        if not watchdog.disarm(alarm):
            raise
        close()
        raise no_answer(
            f"no answer from PostgreSQL within {bound.seconds:g} s "
            "(the store's timeout); the connection is closed"
        ) from error
    finally:
        fired = watchdog.disarm(alarm)
    if fired:  # answered just as the alarm went off: the socket is shut down all the same
        close()
    return result


_CONNECTION_CLASS: type[Any] | None = None


def bounded_connection_class() -> type[Any]:
    """A ``psycopg.Connection`` whose waits for the server honour ``bounded()`` (needs psycopg)."""
    global _CONNECTION_CLASS
    if _CONNECTION_CLASS is None:
        _CONNECTION_CLASS = _build_connection_class()
    return _CONNECTION_CLASS


def _build_connection_class() -> type[Any]:
    import psycopg

    class NoAnswer(psycopg.OperationalError):
        """The server did not answer within the store's bound; the connection is closed."""

    class BoundedConnection(psycopg.Connection[Any]):
        """Every wait for the server (a statement, a commit) armed on the watchdog when bound."""

        def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
            call = partial(super().wait, gen, *args, **kwargs)
            return _alarmed(call, self.pgconn.socket, self.close, psycopg.Error, NoAnswer)

    return BoundedConnection


_PSYCOPG2_CLASS: type[Any] | None = None


def bounded_psycopg2_connection_class() -> type[Any]:
    """The same for psycopg2 (SQLAlchemy 1.4, which has no psycopg 3 dialect): a connection
    whose statements, commits and rollbacks honour ``bounded()``."""
    global _PSYCOPG2_CLASS
    if _PSYCOPG2_CLASS is None:
        _PSYCOPG2_CLASS = _build_psycopg2_connection_class()
    return _PSYCOPG2_CLASS


def _build_psycopg2_connection_class() -> type[Any]:
    import psycopg2
    import psycopg2.extensions

    class NoAnswer(psycopg2.OperationalError):  # type: ignore[misc]
        """The server did not answer within the store's bound; the connection is closed."""

    def guarded(connection: Any, call: Any, *args: Any) -> Any:
        # psycopg2 waits inside its C calls: the alarm is armed around each call instead.
        if _BOUND.get() is None:
            return call(*args)
        return _alarmed(
            partial(call, *args), connection.fileno(), connection.close, psycopg2.Error, NoAnswer
        )

    class BoundedCursor(psycopg2.extensions.cursor):  # type: ignore[misc]
        def execute(self, query: Any, vars: Any = None) -> Any:
            return guarded(self.connection, super().execute, query, vars)

        def executemany(self, query: Any, vars_list: Any) -> Any:
            return guarded(self.connection, super().executemany, query, vars_list)

    class BoundedConnection(psycopg2.extensions.connection):  # type: ignore[misc]
        """Every statement, commit and rollback armed on the watchdog when bound."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.cursor_factory = BoundedCursor

        def commit(self) -> None:
            guarded(self, super().commit)

        def rollback(self) -> None:
            guarded(self, super().rollback)

    return BoundedConnection
