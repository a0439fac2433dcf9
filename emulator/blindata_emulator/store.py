"""The emulator's state: a per-tenant document store in one SQLite file.

Every object is a row of `objects`: its tenant, kind, uuid, natural key (unique per tenant and
kind, NULL when the kind has none), parent uuid (the System of an entity, the entity of a field...:
indexed, since most lists filter on it) and its JSON document. Filters are SQL conditions on
`json_extract(data, ...)`, so lists stay fast on large synthetic catalogs without one table per
resource. Views (`systems`, `physical_entities`, ...) show the main columns for a person
inspecting the file with `sqlite3`.

Thread safety: uvicorn serves requests from a thread pool, and tests call the emulator directly
from their own thread. One connection is shared and every use holds `Store.lock`; a request runs
inside one `transaction()`, so a failed request leaves nothing half-written.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .model import Doc, Kind

__all__ = ["Cond", "Store", "TenantView"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    kind TEXT NOT NULL,
    uuid TEXT NOT NULL UNIQUE,
    nkey TEXT,
    parent TEXT,
    data TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS objects_by_key ON objects (tenant, kind, nkey);
CREATE INDEX IF NOT EXISTS objects_by_parent ON objects (tenant, kind, parent);
CREATE INDEX IF NOT EXISTS objects_by_kind ON objects (tenant, kind, seq);
{json_indexes}
CREATE TABLE IF NOT EXISTS analysis_queue (
    statement_uuid TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    requested_seq INTEGER NOT NULL,
    due_at REAL NOT NULL
);
"""

_INDEXED_PATHS = (
    "$.scope",
    "$.fromPhysicalEntity.uuid",
    "$.toPhysicalEntity.uuid",
    "$.fromPhysicalField.uuid",
    "$.toPhysicalField.uuid",
    "$.queryStatement.uuid",
)
"""JSON paths with an index: the flow filters and the cascades that look flows up by their ends
(SQLite uses an expression index only when the query spells the same literal expression)."""

_JSON_PATH = re.compile(r"^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def json_value(path: str) -> str:
    """The SQL expression of the JSON value at `path` (a code constant, checked)."""
    if not _JSON_PATH.match(path):
        raise ValueError(f"not a simple JSON path: {path!r}")
    return f"json_extract(data, '{path}')"


def _index_sql(path: str) -> str:
    name = "objects_by_" + path.strip("$.").replace(".", "_")
    return f"CREATE INDEX IF NOT EXISTS {name} ON objects (tenant, kind, {json_value(path)});"


_VIEW_COLUMNS: dict[str, tuple[str, str]] = {
    "systems": (Kind.SYSTEM, "name, subtype, technology"),
    "physical_entities": (Kind.ENTITY, "system_uuid, schema, name, tableType"),
    "physical_fields": (Kind.FIELD, "physicalEntity_uuid, name, type, ordinalPosition"),
    "dataflows": (Kind.FLOW, "scope, name, fromPhysicalEntity_uuid, toPhysicalEntity_uuid"),
    "routines": (Kind.ROUTINE, "system_uuid, catalog, schema, name, type"),
    "query_statements": (Kind.STATEMENT, "queryBucket_uuid, name, analysisStatus"),
    "quality_checks": (Kind.CHECK, "code, name, enabled, lastScore, lastSemaphore"),
    "quality_results": (Kind.RESULT, "qualityCheck_uuid, startedAt, metric, score, semaphore"),
    "profiling_records": (Kind.RECORD, "monitor_uuid, metricCode, physicalFieldName, timestamp"),
}


def _view_sql(view: str, kind: str, columns: str) -> str:
    selected = ", ".join(
        f"json_extract(data, '$.{col.replace('_uuid', '.uuid')}') AS {col}"
        for col in (c.strip() for c in columns.split(","))
    )
    return (
        f"CREATE VIEW IF NOT EXISTS {view} AS SELECT tenant, uuid, {selected}, "
        "json_extract(data, '$.creationDate') AS creationDate, "
        "json_extract(data, '$.modificationDate') AS modificationDate, data "
        f"FROM objects WHERE kind = '{kind}'"
    )


@dataclass(frozen=True)
class Cond:
    """One SQL condition on the `objects` row, with its parameters."""

    sql: str
    params: tuple[Any, ...] = ()


def _key_text(key: Sequence[Any] | None) -> str | None:
    return None if key is None else json.dumps(list(key), separators=(",", ":"))


class Store:
    """The SQLite file (or `:memory:` database) and its lock."""

    def __init__(self, db_path: str = ":memory:") -> None:
        self.db_path = db_path
        self.lock = threading.RLock()
        self._depth = 0
        self._conn = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
        if db_path != ":memory:":
            # WAL lets a person read the file while the emulator writes it.
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        indexes = "\n".join(_index_sql(path) for path in _INDEXED_PATHS)
        self._conn.executescript(_SCHEMA.format(json_indexes=indexes))
        for view, (kind, columns) in _VIEW_COLUMNS.items():
            self._conn.execute(_view_sql(view, kind, columns))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the lock and commit at the end, or roll back if the block raises."""
        with self.lock:
            outer = self._depth == 0
            if outer:
                self._conn.execute("BEGIN")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement under the lock and fetch its rows before releasing it (a cursor
        read after the lock is released could interleave with another thread's statement)."""
        with self.lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def first(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or None."""
        rows = self.execute(sql, params)
        return rows[0] if rows else None

    def view(self, tenant: str) -> TenantView:
        """The objects of one tenant."""
        return TenantView(self, tenant)

    def reset(self) -> None:
        """Forget every object of every tenant."""
        with self.transaction():
            self._conn.execute("DELETE FROM objects")
            self._conn.execute("DELETE FROM analysis_queue")

    def close(self) -> None:
        """Close the connection (the file stays for inspection)."""
        with self.lock:
            self._conn.close()


class TenantView:
    """Reads and writes of one tenant's objects; every call holds the store lock."""

    def __init__(self, store: Store, tenant: str) -> None:
        self.store = store
        self.tenant = tenant

    def get(self, kind: str, uuid: str | None) -> Doc | None:
        """The object `uuid` of `kind`, or None."""
        if not uuid:
            return None
        row = self.store.first(
            "SELECT data FROM objects WHERE tenant = ? AND kind = ? AND uuid = ?",
            (self.tenant, kind, uuid),
        )
        return None if row is None else dict(json.loads(row[0]))

    def find(self, kind: str, key: Sequence[Any]) -> Doc | None:
        """The object of `kind` with natural key `key`, or None."""
        row = self.store.first(
            "SELECT data FROM objects WHERE tenant = ? AND kind = ? AND nkey = ?",
            (self.tenant, kind, _key_text(key)),
        )
        return None if row is None else dict(json.loads(row[0]))

    def insert(
        self, kind: str, doc: Doc, key: Sequence[Any] | None, parent: str | None = None
    ) -> Doc:
        """Store a new object (its `uuid` is already set)."""
        self.store.execute(
            "INSERT INTO objects (tenant, kind, uuid, nkey, parent, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (self.tenant, kind, doc["uuid"], _key_text(key), parent, json.dumps(doc)),
        )
        return doc

    def update(
        self, kind: str, doc: Doc, key: Sequence[Any] | None, parent: str | None = None
    ) -> Doc:
        """Replace the stored document of `doc["uuid"]`."""
        self.store.execute(
            "UPDATE objects SET nkey = ?, parent = ?, data = ? "
            "WHERE tenant = ? AND kind = ? AND uuid = ?",
            (_key_text(key), parent, json.dumps(doc), self.tenant, kind, doc["uuid"]),
        )
        return doc

    def save_data(self, kind: str, doc: Doc) -> Doc:
        """Replace the document of `doc["uuid"]`, keeping its natural key and parent."""
        self.store.execute(
            "UPDATE objects SET data = ? WHERE tenant = ? AND kind = ? AND uuid = ?",
            (json.dumps(doc), self.tenant, kind, doc["uuid"]),
        )
        return doc

    def delete(self, kind: str, uuid: str) -> None:
        """Remove one object (no cascade: see `cascade.py`)."""
        self.store.execute(
            "DELETE FROM objects WHERE tenant = ? AND kind = ? AND uuid = ?",
            (self.tenant, kind, uuid),
        )

    def _where(self, kind: str, conds: Sequence[Cond]) -> tuple[str, list[Any]]:
        sql = "tenant = ? AND kind = ?"
        params: list[Any] = [self.tenant, kind]
        for cond in conds:
            sql += f" AND ({cond.sql})"
            params.extend(cond.params)
        return sql, params

    def select(
        self,
        kind: str,
        conds: Sequence[Cond] = (),
        *,
        sort: Sequence[tuple[str, bool]] = (),
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Doc]:
        """Objects of `kind` matching every condition, sorted by `sort` (json path, ascending)
        and then by creation order, which makes pages stable."""
        where, params = self._where(kind, conds)
        order = ""
        for path, ascending in sort:
            direction = "ASC" if ascending else "DESC"
            if path == "$.uuid":  # every client's order: the column, not the JSON, is read
                order += f"uuid {direction}, "
                continue
            order += f"json_extract(data, ?) {direction}, "
            params.append(path)
        sql = f"SELECT data FROM objects WHERE {where} ORDER BY {order}seq ASC"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params.extend([limit, offset])
        return [dict(json.loads(row[0])) for row in self.store.execute(sql, params)]

    def count(self, kind: str, conds: Sequence[Cond] = ()) -> int:
        """How many objects of `kind` match every condition."""
        where, params = self._where(kind, conds)
        row = self.store.first(f"SELECT count(*) FROM objects WHERE {where}", params)
        return int(row[0]) if row else 0

    def uuids(self, kind: str, conds: Sequence[Cond] = ()) -> list[str]:
        """The uuids of the matching objects, in creation order."""
        where, params = self._where(kind, conds)
        rows = self.store.execute(f"SELECT uuid FROM objects WHERE {where} ORDER BY seq", params)
        return [str(row[0]) for row in rows]

    def enqueue_analysis(self, statement_uuid: str, requested_seq: int, due_at: float) -> None:
        """Queue a statement for analysis (replacing an earlier request for it)."""
        self.store.execute(
            "INSERT OR REPLACE INTO analysis_queue (statement_uuid, tenant, requested_seq, due_at) "
            "VALUES (?, ?, ?, ?)",
            (statement_uuid, self.tenant, requested_seq, due_at),
        )

    def dequeue_analysis(self, statement_uuid: str) -> None:
        """Forget a queued analysis."""
        self.store.execute("DELETE FROM analysis_queue WHERE statement_uuid = ?", (statement_uuid,))

    def is_queued(self, statement_uuid: str) -> bool:
        """Whether an analysis of the statement is waiting."""
        row = self.store.first(
            "SELECT 1 FROM analysis_queue WHERE statement_uuid = ?", (statement_uuid,)
        )
        return row is not None


def due_analyses(store: Store, before_seq: int, now: float) -> list[tuple[str, str]]:
    """(tenant, statement uuid) of the analyses requested before request `before_seq` and due."""
    rows = store.execute(
        "SELECT tenant, statement_uuid FROM analysis_queue "
        "WHERE requested_seq < ? AND due_at <= ? ORDER BY requested_seq",
        (before_seq, now),
    )
    return [(str(tenant), str(uuid)) for tenant, uuid in rows]


# --- condition builders: the filters of the list endpoints are made of these ---------------


def eq(path: str, value: Any) -> Cond:
    """The JSON value at `path` equals `value`."""
    return Cond(f"{json_value(path)} = ?", (value,))


def ieq(path: str, value: str) -> Cond:
    """The JSON text at `path` equals `value`, ignoring case."""
    return Cond(f"lower({json_value(path)}) = lower(?)", (value,))


def before(path: str, value: str) -> Cond:
    """The wire date at `path` is earlier than `value` (wire dates sort as text)."""
    return Cond(f"{json_value(path)} < ?", (value,))


def contains(sql_text: str, value: str, params: tuple[Any, ...] = ()) -> Cond:
    """The SQL text expression `sql_text` contains `value`, ignoring case."""
    return Cond(f"instr(lower(coalesce({sql_text}, '')), lower(?)) > 0", (*params, value))


def child_of(parent: str) -> Cond:
    """The object's parent is `parent`."""
    return Cond("parent = ?", (parent,))


def parent_in(tenant: str, kind: str, conds: Sequence[Cond]) -> Cond:
    """The object's parent is an object of `kind` matching `conds`."""
    sql = "parent IN (SELECT uuid FROM objects WHERE tenant = ? AND kind = ?"
    params: list[Any] = [tenant, kind]
    for cond in conds:
        sql += f" AND ({cond.sql})"
        params.extend(cond.params)
    return Cond(sql + ")", tuple(params))


def has_property(name: str, value: str | None) -> Cond:
    """One of the object's additionalProperties is called `name` (with `value`, when given)."""
    sql = (
        "EXISTS (SELECT 1 FROM json_each(data, '$.additionalProperties') AS p "
        "WHERE json_extract(p.value, '$.name') = ?"
    )
    params: tuple[Any, ...] = (name,)
    if value is not None:
        sql += " AND json_extract(p.value, '$.value') = ?"
        params += (value,)
    return Cond(sql + ")", params)


def refs_contain(path: str, uuid: str) -> Cond:
    """The list of references at `path` holds `uuid`."""
    json_value(path)  # checks the path
    return Cond(
        f"EXISTS (SELECT 1 FROM json_each(data, '{path}') AS r "
        "WHERE json_extract(r.value, '$.uuid') = ?)",
        (uuid,),
    )
