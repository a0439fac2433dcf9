"""Connection hygiene shared by the SQL stores: fork safety, and errors safe to log.

Airflow's OpenLineage provider forks a child per event, possibly from a process that holds a
store open (a sync task). SQLite forbids using, and even closing, a connection in a child of the
process that opened it: the child's garbage collector finalizing an inherited connection can
release the locks of the child's own connection and corrupt the file. A PostgreSQL connection
closed in a child ends the parent's session. So no idle connection crosses a fork (they are
closed just before it and reopen on next use), and a child sets aside, unclosed and referenced
for good, whatever pool it inherited.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable
from contextlib import suppress
from typing import Any, Protocol

from sqlalchemy.engine import Engine

from airflow_blindata.redaction import scrub

__all__ = ["describe_error", "set_aside", "set_aside_object", "track"]


class Releasable(Protocol):
    def release_connections(self) -> None:
        """Close every idle connection this process opened (they reopen on next use)."""


_TRACKED: weakref.WeakSet[Any] = weakref.WeakSet()
_INHERITED: list[Any] = []


def track(resource: Releasable) -> None:
    """Have ``resource`` release its idle connections before every ``os.fork`` of the process."""
    _TRACKED.add(resource)


def set_aside(engine: Engine) -> None:
    """In a forked child: a new pool for ``engine``; the inherited one is never touched again.

    Kept referenced, so that no finalizer closes a connection a thread had checked out when
    the process forked.
    """
    _INHERITED.append(engine.pool)
    engine.dispose(close=False)


def set_aside_object(connection: Any) -> None:
    """In a forked child: keep an inherited DBAPI connection referenced, unused, unclosed."""
    _INHERITED.append(connection)


def _before_fork() -> None:
    for resource in list(_TRACKED):
        with suppress(Exception):
            resource.release_connections()


os.register_at_fork(before=_before_fork)


def describe_error(error: BaseException, *, secrets: Iterable[str] = ()) -> str:
    """``Class: first line of the driver's message``, with any secret replaced by ``***``."""
    orig = getattr(error, "orig", None) or error
    lines = str(orig).strip().splitlines()
    text = f"{type(orig).__name__}: {lines[0]}" if lines else type(orig).__name__
    return scrub(text, secrets)
