"""Stores to test against: SQLite always, PostgreSQL when ``BLINDATA_TEST_POSTGRES_URL`` is set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_blindata.store import EventStore, open_store

from .helpers import postgres_base_url, postgres_schema


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'events.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with postgres_schema(postgres_base_url()) as url:
        yield url


@pytest.fixture
def store(store_url: str) -> Iterator[EventStore]:
    with open_store(store_url) as opened:
        yield opened
