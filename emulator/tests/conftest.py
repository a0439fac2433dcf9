"""Fixtures of the emulator's own tests: an in-process emulator reached through httpx + a2wsgi.

`api` is an httpx client with the API key headers of a user who may do everything in TENANT;
`anonymous` sends no credentials. A test that serves the emulator over loopback HTTP (the
`served` fixture of `test_served.py`) is marked `integration`, as the provider's tests mark those
that use their served emulator, so that the fast run (`-m "not integration and not airflow"`)
leaves it out. The shared constants and helpers are in `helpers.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from blindata_emulator import Emulator, create_app
from helpers import api_key_headers, in_process, make_settings
from starlette.applications import Starlette

HERE = Path(__file__).resolve().parent
SERVED = "served"
"""The fixture that serves the emulator over loopback HTTP (a real socket and thread)."""


def pytest_configure(config: pytest.Config) -> None:
    """The marker, also when these tests run on their own (from the emulator's folder)."""
    config.addinivalue_line("markers", "integration: served over real HTTP on loopback (slower)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests here that use the served emulator, whatever their file says."""
    for item in items:
        if SERVED in getattr(item, "fixturenames", ()) and item.path.is_relative_to(HERE):
            item.add_marker("integration")


@pytest.fixture
def app() -> Iterator[Starlette]:
    application = create_app(make_settings())
    yield application
    application.state.emulator.close()


@pytest.fixture
def emulator(app: Starlette) -> Emulator:
    instance: Emulator = app.state.emulator
    return instance


@pytest.fixture
def api(app: Starlette) -> Iterator[httpx.Client]:
    with in_process(app, **api_key_headers()) as client:
        yield client


@pytest.fixture
def anonymous(app: Starlette) -> Iterator[httpx.Client]:
    with in_process(app) as client:
        yield client
