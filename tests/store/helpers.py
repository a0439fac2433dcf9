"""Shared by the store and capture tests: events to store, and a PostgreSQL to store them in."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest

from tests import builders
from tests.builders import new_run_id, now

POSTGRES_ENV = "BLINDATA_TEST_POSTGRES_URL"
PRODUCER = "https://example.com/tests"


def event(
    job: str = "job",
    *,
    namespace: str = "ns",
    run: str | None = None,
    event_type: str = "COMPLETE",
    time: datetime | str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A small valid RunEvent of now (the store's retention counts from it); ``run`` defaults to a
    fresh run id, so that two events are never duplicates unless a test says so."""
    when = time or datetime.now(UTC)
    return builders.run_event(
        job,
        namespace=namespace,
        event_type=event_type,
        run_id=run or new_run_id(),
        time=when if isinstance(when, str) else when.isoformat(),
        **{"producer": PRODUCER, **extra},
    )


def job_event(job: str = "job", *, namespace: str = "ns", **extra: Any) -> dict[str, Any]:
    """A JobEvent of now."""
    return builders.job_event(
        job, namespace=namespace, time=now(), producer=PRODUCER, schema_url=None, **extra
    )


def dataset_event(name: str = "public.t", *, namespace: str = "postgres://db") -> dict[str, Any]:
    """A DatasetEvent of now."""
    return builders.dataset_event(name, namespace, time=now(), producer=PRODUCER, schema_url=None)


def postgres_base_url() -> str:
    """The test server's URL, or a skip that says why there is none."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set (.ci/run sets it; see README)")
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[dev]')")
    try:
        psycopg.connect(_libpq(url), connect_timeout=3).close()
    except psycopg.Error as error:
        pytest.skip(f"PostgreSQL at {POSTGRES_ENV} is unreachable: {error}")
    return url


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@contextmanager
def postgres_schema(base_url: str) -> Iterator[str]:
    """A store URL in a schema of its own, dropped afterwards (runs never collide)."""
    import psycopg

    schema = f"bd_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in base_url else "?"
    try:
        yield f"{base_url}{separator}schema={schema}"
    finally:
        with psycopg.connect(_libpq(base_url), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
