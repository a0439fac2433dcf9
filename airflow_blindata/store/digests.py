"""Job digests kept from one snapshot to the next, so that listing the jobs follows what is new.

The ``job_digests`` table holds, per job, the count of its events and the sum of their cursors
up to a mark (``digests_until``); a listing adds only the events past it, and retention
subtracts what it deletes in the same transaction. A count and a sum change whenever a job gains
or loses events (cursors only grow). The memo is written only if its state (the mark, the prune
counter ``digest_prunes``, the row count) did not move since it was read; it is derived data.
Why: docs/capture.md#job-digests-kept-between-listings-storedigestspy
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Connection

from .schema import Tables

__all__ = [
    "JOBS",
    "PRUNES",
    "UNTIL",
    "Memo",
    "Sums",
    "aggregate",
    "count",
    "digest",
    "merge",
    "read_memo",
    "subtract",
    "write_memo",
]

UNTIL = "digests_until"
PRUNES = "digest_prunes"
JOBS = "digests_jobs"
_KEYS = (UNTIL, PRUNES, JOBS)
WRITE_BATCH = 500

Job = tuple[str, str]
Sums = dict[Job, tuple[int, int]]
"""Job → (number of events, sum of their cursors)."""
Memo = tuple[str | None, ...]
"""The memo's state as read: the meta values of ``_KEYS``."""


def digest(events: int, total: int) -> str:
    return f"{events}:{total}"


def count(value: str) -> int | None:
    """The number of events ``digest`` counted, or None for another text."""
    events, _, total = value.partition(":")
    return int(events) if events.isdigit() and total.isdigit() else None


def aggregate(conn: Connection, tables: Tables, after: int | None, until: int) -> Sums:
    """Each job's events with ``after < cursor <= until`` (every one up to ``until``: None)."""
    ev, cursor = tables.events, tables.cursor
    query = (
        select(ev.c.job_namespace, ev.c.job_name, func.count(), func.sum(cursor))
        .where(ev.c.job_namespace.is_not(None), ev.c.job_name.is_not(None))
        .where(cursor.is_not(None), cursor <= until)
        .group_by(ev.c.job_namespace, ev.c.job_name)
    )
    if after is not None:
        query = query.where(cursor > after)
    rows = conn.execute(query)
    return {(str(ns), str(name)): (int(n), int(total)) for ns, name, n, total in rows}


def _state(conn: Connection, tables: Tables, *, lock: bool = False) -> Memo:
    """The memo's state; with ``lock``, the counter's row is locked until the transaction ends."""
    meta = tables.meta
    if lock:
        conn.execute(select(meta.c.value).where(meta.c.key == PRUNES).with_for_update()).all()
    values = dict(conn.execute(select(meta.c.key, meta.c.value).where(meta.c.key.in_(_KEYS))).all())
    return tuple(values.get(key) for key in _KEYS)


def _rows(conn: Connection, tables: Tables, state: Memo) -> tuple[int | None, Sums]:
    """The memo's mark and rows; (None, {}) when there is none, or its rows do not match."""
    if not state[0]:
        return None, {}
    memo = tables.job_digests
    rows = conn.execute(select(memo.c.job_namespace, memo.c.job_name, memo.c.events, memo.c.total))
    kept = {(ns, name): (int(n), int(total)) for ns, name, n, total in rows}
    if str(len(kept)) != state[2]:
        return None, {}
    return int(state[0]), kept


def read_memo(conn: Connection, tables: Tables) -> tuple[Memo, int | None, Sums]:
    """(The state to give ``write_memo``, the memo's mark — None: no usable memo —, its rows)."""
    state = _state(conn, tables)
    return (state, *_rows(conn, tables, state))


def merge(kept: Sums, new: Sums) -> Sums:
    """``kept`` with ``new`` added in place; returns ``kept``."""
    for job, (n, total) in new.items():
        before_n, before_total = kept.get(job, (0, 0))
        kept[job] = (before_n + n, before_total + total)
    return kept


def _set(conn: Connection, tables: Tables, key: str, value: int) -> None:
    meta = tables.meta
    done = conn.execute(update(meta).where(meta.c.key == key).values(value=str(value)))
    if not done.rowcount:
        conn.execute(insert(meta).values(key=key, value=str(value)))


def _put(conn: Connection, tables: Tables, sums: Sums, *, replace: bool) -> None:
    """Write ``sums`` (every row, with ``replace``), a job with no event left removed."""
    memo = tables.job_digests
    if replace:
        conn.execute(memo.delete())
    else:
        keys = [{"ns": ns, "name": name} for ns, name in sums]
        if keys:
            where = (memo.c.job_namespace == bindparam("ns"), memo.c.job_name == bindparam("name"))
            conn.execute(memo.delete().where(*where), keys)
    rows = [
        {"job_namespace": ns, "job_name": name, "events": n, "total": total}
        for (ns, name), (n, total) in sums.items()
        if n > 0
    ]
    for start in range(0, len(rows), WRITE_BATCH):
        conn.execute(insert(memo), rows[start : start + WRITE_BATCH])
    count = conn.execute(select(func.count()).select_from(memo)).scalar()
    _set(conn, tables, JOBS, int(count or 0))


def write_memo(
    conn: Connection, tables: Tables, seen: Memo, until: int, sums: Sums, *, replace: bool
) -> bool:
    """Keep ``sums`` (every job with ``replace``, else the jobs that changed) as of ``until``.

    In ``conn``'s write transaction; False, and nothing written, when the memo moved since
    ``seen``.
    """
    if _state(conn, tables, lock=True) != seen:
        return False
    _put(conn, tables, sums, replace=replace)
    _set(conn, tables, UNTIL, until)
    return True


def subtract(conn: Connection, tables: Tables, removed: Sequence[Any]) -> None:
    """Take events deleted in ``conn``'s transaction out of the memo: rows of (job namespace,
    job name, cursor). Bumps the prune counter, so that a listing read before is not kept."""
    state = _state(conn, tables, lock=True)
    _set(conn, tables, PRUNES, int(state[1] or 0) + 1)
    memo = tables.job_digests
    count = conn.execute(select(func.count()).select_from(memo)).scalar()
    if not state[0] or str(count) != state[2]:  # no usable memo: nothing to keep right
        return
    until = int(state[0])
    gone: Sums = {}
    for ns, name, cursor in removed:
        if ns is not None and name is not None and cursor is not None and int(cursor) <= until:
            merge(gone, {(ns, name): (1, int(cursor))})
    after: Sums = {}
    for (ns, name), (n, total) in gone.items():
        query = select(memo.c.events, memo.c.total).where(
            memo.c.job_namespace == ns, memo.c.job_name == name
        )
        row = conn.execute(query).first()
        if row is None:  # below the mark, yet not in the memo: start it again
            conn.execute(tables.meta.delete().where(tables.meta.c.key == UNTIL))
            return
        after[(ns, name)] = (int(row.events) - n, int(row.total) - total)
    _put(conn, tables, after, replace=False)
