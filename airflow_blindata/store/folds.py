"""The folds a snapshot keeps between runs: each job's fold, under the settings it was made with.

A kept fold is the text of a job's fold with the digest of the events it was made of
(``job_digests``), so that the next snapshot loads it when nothing changed, or adds to it what
is new. Folds are kept under settings (the release and a definition's switches): settings no
snapshot used for ``STALE_FOLDS_AFTER`` are dropped with their folds.
Why: docs/mapping-reference.md#how-a-snapshot-reads-a-long-history
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from . import core
from .base import STALE_FOLDS_AFTER
from .core import SqlCore

__all__ = ["SqlKeptFolds"]


def _job_key(job: tuple[str, str]) -> str:
    """A job's key in tables that index it: a digest, whatever the length of its names.

    The digest of ``json.dumps([namespace, name], ensure_ascii=False)``, that text written
    without ``json.dumps``, which makes an encoder each call (most of the cost of a key; a plan
    makes three keys a job)."""
    namespace, name = job
    if type(namespace) is str and type(name) is str:
        listed = f"[{_json_string(namespace)}, {_json_string(name)}]"
    else:
        listed = json.dumps(list(job), ensure_ascii=False)
    return hashlib.sha256(listed.encode("utf-8", "backslashreplace")).hexdigest()


_json_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A string as ``json.dumps(..., ensure_ascii=False)`` writes it."""


class SqlKeptFolds(SqlCore):
    """Keeping, reading and forgetting each job's fold."""

    def folded_jobs(
        self, settings: str, jobs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, str]]:
        self._ensure_schema()
        table = self._tables.job_folds
        by_key = {_job_key(job): job for job in jobs}
        found: dict[tuple[str, str], tuple[str, str]] = {}
        keys = list(by_key)
        with self._guard("reading kept folds"), self._reading() as conn:
            for start in range(0, len(keys), core.BATCH_SIZE):
                query = select(table.c.job_key, table.c.digest, table.c.fold).where(
                    table.c.settings == settings,
                    table.c.job_key.in_(keys[start : start + core.BATCH_SIZE]),
                )
                for row in conn.execute(query):
                    found[by_key[row.job_key]] = (row.digest, row.fold)
        return found

    def keep_folded_jobs(
        self, settings: str, folds: Iterable[tuple[tuple[str, str], str, str]]
    ) -> None:
        self._ensure_schema()
        table = self._tables.job_folds
        rows = [
            {"settings": settings, "job_key": _job_key(job), "digest": digest, "fold": text}
            for job, digest, text in folds
        ]
        if not rows:
            return
        keys = [row["job_key"] for row in rows]
        with self._guard("keeping folds"), self._writing() as conn:
            conn.execute(
                table.delete().where(table.c.settings == settings, table.c.job_key.in_(keys))
            )
            conn.execute(insert(table), rows)

    def forget_folded_jobs(
        self, settings: str, keep: Iterable[tuple[str, str]], *, now: datetime | None = None
    ) -> None:
        self._ensure_schema()
        table = self._tables.job_folds
        wanted = {_job_key(job) for job in keep}
        with self._guard("forgetting folds"), self._writing() as conn:
            stored = conn.execute(
                select(table.c.job_key).where(table.c.settings == settings)
            ).scalars()
            gone = [key for key in stored if key not in wanted]
            for start in range(0, len(gone), core.BATCH_SIZE):
                conn.execute(
                    table.delete().where(
                        table.c.settings == settings,
                        table.c.job_key.in_(gone[start : start + core.BATCH_SIZE]),
                    )
                )
            self._forget_stale_settings(conn, settings, now or datetime.now(UTC))

    def _forget_stale_settings(self, conn: Connection, settings: str, now: datetime) -> None:
        """Mark ``settings`` used ``now``; drop the folds of settings unused for
        ``STALE_FOLDS_AFTER``. Settings found with folds but no mark (kept by a release before
        the marks) are marked ``now``: they go a week later, unless used meanwhile."""
        folds, used = self._tables.job_folds, self._tables.fold_settings
        conn.execute(used.delete().where(used.c.settings == settings))
        conn.execute(insert(used).values(settings=settings, used_at=now))
        marked = {row.settings: row.used_at for row in conn.execute(select(used))}
        kept = conn.execute(select(folds.c.settings).distinct()).scalars()
        unmarked = [{"settings": other, "used_at": now} for other in kept if other not in marked]
        if unmarked:
            conn.execute(insert(used), unmarked)
        stale = [other for other, at in marked.items() if now - at > STALE_FOLDS_AFTER]
        if stale:
            conn.execute(folds.delete().where(folds.c.settings.in_(stale)))
            conn.execute(used.delete().where(used.c.settings.in_(stale)))
