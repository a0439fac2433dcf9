"""Fixtures of the sync tests: a client of the served emulator, a store, watermarks without margin.

The helpers they and the tests use (``client_of``, ``definition``, ``next_second``...) are in
``helpers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.store import EventStore, open_store
from tests.sync.helpers import client_of


@pytest.fixture
def client(emulator: Any) -> Iterator[BlindataClient]:
    with client_of(emulator) as blindata:
        yield blindata


@pytest.fixture
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Watermarks without the one-second margin: tests then wait a second less."""
    from datetime import timedelta

    monkeypatch.setattr("airflow_blindata.sync.apply.WATERMARK_MARGIN", timedelta(0))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(f"sqlite:///{tmp_path / 'events.db'}") as events:
        yield events
