"""The event store on SQLAlchemy Core, shared by SQLite and PostgreSQL: its parts put together.

Each job of the store is a class of its own over one engine and its ``Tables`` (``core``):
appends with dedup and quarantine (``appends``), reads by cursor and job (``reads``), kept folds
(``folds``), the SQL hash memo (``memo``), the sync history and lock (``history``), statistics
(``stats``) and retention (``retention``). ``SqlEventStore`` is all of them: the whole
``EventStore``; the backends (``sqlite``, ``postgres``) fill in the core's seams.
"""

from __future__ import annotations

from .appends import SqlAppends
from .base import EventStore
from .connections import describe_error
from .folds import SqlKeptFolds
from .history import SqlSyncHistory
from .memo import SqlHashMemo
from .reads import SqlReads
from .retention import SqlRetention
from .stats import SqlStats

__all__ = ["SqlEventStore", "describe_error"]


class SqlEventStore(
    SqlAppends,
    SqlReads,
    SqlKeptFolds,
    SqlHashMemo,
    SqlSyncHistory,
    SqlStats,
    SqlRetention,
    EventStore,
):
    """An ``EventStore`` on an SQLAlchemy engine (see the subclasses for each database)."""
