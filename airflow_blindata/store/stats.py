"""What the store holds, for ``airflow-blindata store stats`` and the Blindata page.

Counts of events by namespace (each shown as ``redact_text`` shows it) and by kind, the jobs,
the oldest and newest received and event times, the cursor, the quarantine, the sync records
and the size on disk where the backend can tell.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select

from airflow_blindata.redaction import redact_text

from .core import SqlCore
from .models import StoreStats
from .schema import SCHEMA_VERSION

__all__ = ["SqlStats"]


def _shown_counts(rows: Iterable[Any]) -> dict[str, int]:
    """Counts by job namespace, each shown as ``redact_text`` shows it: a namespace that holds
    credentials (``postgres://etl:pw@db:5432``) is counted as ``postgres://etl:***@db:5432``,
    with the other spellings that differ only in the password (issue 42)."""
    counts: dict[str, int] = {}
    for name, count in rows:
        shown = redact_text(str(name))
        counts[shown] = counts.get(shown, 0) + int(count)
    return dict(sorted(counts.items()))


class SqlStats(SqlCore):
    """Statistics of what the store holds."""

    def stats(self) -> StoreStats:
        self._ensure_schema()
        ev, tables = self._tables.events, self._tables
        namespace = func.coalesce(ev.c.job_namespace, "(dataset events)")
        with self._guard("reading statistics"):
            self._stamp()
            with self._reading() as conn:
                by_namespace = conn.execute(
                    select(namespace, func.count()).group_by(namespace).order_by(namespace)
                ).all()
                by_kind = conn.execute(select(ev.c.kind, func.count()).group_by(ev.c.kind)).all()
                span = conn.execute(
                    select(
                        func.min(ev.c.received_at),
                        func.max(ev.c.received_at),
                        func.min(ev.c.event_time),
                        func.max(ev.c.event_time),
                        func.max(tables.cursor),
                    )
                ).one()
                jobs = conn.execute(
                    select(func.count()).select_from(
                        select(ev.c.job_namespace, ev.c.job_name)
                        .where(ev.c.job_name.is_not(None))
                        .distinct()
                        .subquery()
                    )
                ).scalar()
                quarantined = conn.execute(select(func.count()).select_from(tables.quarantine))
                syncs = conn.execute(select(func.count()).select_from(tables.sync_history))
                quarantined_count, sync_count = quarantined.scalar(), syncs.scalar()
            size = self._size_bytes()
        # Aggregates come back as plain values: run them through the column type for UTC.
        utc = ev.c.received_at.type.process_result_value  # type: ignore[attr-defined]
        dialect = self._engine.dialect
        return StoreStats(
            url=self.url,
            backend=self.backend,
            schema_version=SCHEMA_VERSION,
            events=sum(count for _, count in by_namespace),
            jobs=int(jobs or 0),
            events_by_namespace=_shown_counts(by_namespace),
            events_by_kind={str(kind): int(count) for kind, count in by_kind},
            oldest_received_at=utc(span[0], dialect),
            newest_received_at=utc(span[1], dialect),
            oldest_event_time=utc(span[2], dialect),
            newest_event_time=utc(span[3], dialect),
            last_id=int(span[4] or 0),
            quarantined=int(quarantined_count or 0),
            sync_records=int(sync_count or 0),
            size_bytes=size,
        )
