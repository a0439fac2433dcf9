"""Fixtures of the receiver tests: a temporary SQLite store, and the receiver serving it.

The receiver is served as ``helpers.serve_receiver`` serves it (mounted under ``/blindata``, by
uvicorn in a thread on a free port); each test gets its own store and server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_blindata.store import EventStore, open_store

from .helpers import Served, serve_receiver


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(f"sqlite:///{tmp_path / 'events.db'}") as opened:
        yield opened


@pytest.fixture
def receiver(store: EventStore) -> Iterator[Served]:
    with serve_receiver(store) as served:
        yield served
