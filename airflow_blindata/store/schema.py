"""The store's tables (SQLAlchemy Core) and their versioning.

Every table is prefixed ``blindata_`` so that the store can share a PostgreSQL database (even
Airflow's own) without a name clash. ``blindata_store_meta`` holds ``schema_version``. A store
opened by a newer airflow-blindata upgrades the schema in place, one step of ``MIGRATIONS`` at a
time inside one locked transaction; a step may add tables, columns and indexes but never drops
stored events. A store whose schema is newer than this code refuses to write (``StoreSchemaError``)
instead of guessing.

``events`` has two orderings: ``id``, the order rows were inserted, and the *cursor* readers page
by. On SQLite they are the same (one writer at a time, so ids are committed in order). On
PostgreSQL concurrent transactions can commit ids out of order, so a cursor on ``id`` could skip
an event committed late; there ``seq`` is the cursor, stamped in commit order by the reader
(see ``postgres.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Sequence,
    String,
    Table,
    Text,
    literal_column,
)
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

__all__ = [
    "MIGRATIONS",
    "PREFIX",
    "SCHEMA_VERSION",
    "Tables",
    "UtcDateTime",
    "build_tables",
    "is_dataset_event",
]

PREFIX = "blindata_"
SCHEMA_VERSION = 4

Migration = Callable[[Connection, "Tables"], None]


def _add_tables(conn: Connection, tables: Tables) -> None:
    """A step that only adds tables: ``create_all`` after the steps creates them."""


def _add_indexes(conn: Connection, tables: Tables) -> None:
    """A step that adds indexes to existing tables (``create_all`` skips a table that exists).

    Building one reads the whole table, under the schema lock: once, on the first use of the
    new release.
    """
    for table in tables.metadata.sorted_tables:
        for index in table.indexes:
            index.create(conn, checkfirst=True)


MIGRATIONS: dict[int, Migration] = {2: _add_tables, 3: _add_indexes, 4: _add_tables}
"""Version N → the step that upgrades a store from N-1 to N (version 1 is the first schema).

2: ``sql_hashes``, the SQL hash memo of the last snapshot; ``job_folds``, each job as the last
snapshot folded it, with the digest of the events it was folded from.
3: ``events_dataset_idx``, the DatasetEvents by cursor (a partial index: no cost to the other
appends); ``job_digests``, each job's event count and cursor sum up to a high-water mark
(``digests.py``).
4: ``fold_settings``, when each settings' kept folds were last used (``forget_folded_jobs``
drops those no snapshot used for a week: an older release's, or a definition's gone since).
"""


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in, aware UTC datetimes out, whatever the database keeps.

    SQLite has no time zones: it gets naive UTC text, which sorts correctly as text.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # a SQLite value written by another tool
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_Id = BigInteger().with_variant(Integer(), "sqlite")  # INTEGER PRIMARY KEY is SQLite's rowid


@dataclass(frozen=True, slots=True)
class Tables:
    metadata: MetaData
    events: Table
    quarantine: Table
    sync_history: Table
    meta: Table
    sql_hashes: Table
    job_folds: Table
    job_digests: Table
    fold_settings: Table
    seq: Sequence | None

    @property
    def cursor(self) -> Column[Any]:
        """The column readers page by: ``seq`` where it exists (PostgreSQL), else ``id``."""
        column: Column[Any] = self.events.c.seq if self.seq is not None else self.events.c.id
        return column


def is_dataset_event(events: Table) -> ColumnElement[bool]:
    """``kind = 'DatasetEvent'`` with the kind as a literal, not a parameter: the planners
    (SQLite's always, PostgreSQL's in a generic plan) use a partial index only for a condition
    they can see implies the index's own."""
    return events.c.kind == literal_column("'DatasetEvent'")


@cache
def build_tables(*, schema: str | None = None, stamped_cursor: bool = False) -> Tables:
    """The tables in ``schema`` (PostgreSQL); ``stamped_cursor`` adds ``seq`` (see module doc).

    Cached: building them costs milliseconds, which a child forked per event should not pay.
    """
    metadata = MetaData(schema=schema)
    seq = Sequence(f"{PREFIX}events_seq", metadata=metadata) if stamped_cursor else None
    stamped: list[Any] = []
    if stamped_cursor:
        seq_column = Column("seq", BigInteger, nullable=True)
        stamped = [
            seq_column,
            Index(f"{PREFIX}events_seq_idx", seq_column, unique=True),
            Index(
                f"{PREFIX}events_unstamped_idx",
                "id",
                postgresql_where=seq_column.is_(None),
            ),
        ]
    events = Table(
        f"{PREFIX}events",
        metadata,
        Column("id", _Id, primary_key=True, autoincrement=True),
        Column("key", String(64), nullable=False, unique=True),
        Column("received_at", UtcDateTime, nullable=False),
        Column("event_time", UtcDateTime, nullable=True),
        Column("kind", String(16), nullable=False),
        Column("job_namespace", Text, nullable=True),
        Column("job_name", Text, nullable=True),
        Column("run_id", Text, nullable=True),
        Column("event_type", String(16), nullable=True),
        Column("source", String(32), nullable=False),
        Column("payload", Text, nullable=False),
        *stamped,
        Index(f"{PREFIX}events_job_idx", "job_namespace", "job_name", "id"),
        Index(f"{PREFIX}events_received_idx", "received_at"),
        sqlite_autoincrement=True,  # ids are never reused, even after retention empties the table
    )
    dataset_only = is_dataset_event(events)
    Index(
        f"{PREFIX}events_dataset_idx",
        events.c.seq if stamped_cursor else events.c.id,
        sqlite_where=dataset_only,
        postgresql_where=dataset_only,
    )
    quarantine = Table(
        f"{PREFIX}quarantine",
        metadata,
        Column("id", _Id, primary_key=True, autoincrement=True),
        Column("key", String(64), nullable=False, unique=True),
        Column("received_at", UtcDateTime, nullable=False),
        Column("source", String(32), nullable=False),
        Column("reason", Text, nullable=False),
        Column("raw", LargeBinary, nullable=False),
        Index(f"{PREFIX}quarantine_received_idx", "received_at"),
        sqlite_autoincrement=True,
    )
    sync_history = Table(
        f"{PREFIX}sync_history",
        metadata,
        Column("id", _Id, primary_key=True, autoincrement=True),
        Column("definition_uuid", String(64), nullable=False),
        Column("kind", String(16), nullable=False),
        Column("started_at", UtcDateTime, nullable=False),
        Column("finished_at", UtcDateTime, nullable=False),
        Column("status", String(16), nullable=False),
        Column("report", Text, nullable=False),
        Index(f"{PREFIX}sync_history_def_idx", "definition_uuid", "kind", "id"),
    )
    meta = Table(
        f"{PREFIX}store_meta",
        metadata,
        Column("key", String(64), primary_key=True),
        Column("value", Text, nullable=False),
    )
    sql_hashes = Table(
        f"{PREFIX}sql_hashes",
        metadata,
        Column("digest", String(64), primary_key=True),
        Column("sql_hash", String(80), nullable=False),
    )
    job_folds = Table(
        f"{PREFIX}job_folds",
        metadata,
        Column("settings", String(64), primary_key=True),
        Column("job_key", String(64), primary_key=True),
        Column("digest", String(64), nullable=False),
        Column("fold", Text, nullable=False),
    )
    job_digests = Table(
        f"{PREFIX}job_digests",
        metadata,
        Column("job_namespace", Text, primary_key=True),
        Column("job_name", Text, primary_key=True),
        Column("events", BigInteger, nullable=False),
        Column("total", BigInteger, nullable=False),
    )
    fold_settings = Table(
        f"{PREFIX}fold_settings",
        metadata,
        Column("settings", String(64), primary_key=True),
        Column("used_at", UtcDateTime, nullable=False),
    )
    return Tables(
        metadata,
        events,
        quarantine,
        sync_history,
        meta,
        sql_hashes,
        job_folds,
        job_digests,
        fold_settings,
        seq,
    )
