"""Shared fixtures.

Airflow reads its configuration when first imported, so the environment it needs is set here,
before any test module imports it: a private ``AIRFLOW_HOME`` and no example DAGs. Under
pytest-xdist each worker gets its own (its metadata database is migrated by the tests that need
it: two workers migrating one SQLite file at once break each other).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles (``HYPOTHESIS_PROFILE``); no test pins its own number of examples.
# dev: the fast loop, new examples each run; ci (``.ci/run``): the same examples on every run, so
# that a property failing there fails again on the same clone; thorough: before a release, or
# after a change to the fold or the mapper.
_PROPERTIES = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("dev", max_examples=25, **_PROPERTIES)
settings.register_profile("ci", max_examples=100, derandomize=True, **_PROPERTIES)
settings.register_profile("thorough", max_examples=1000, **_PROPERTIES)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

_PRIVATE_HOME = "airflow-blindata-tests-"
if os.environ.get("PYTEST_XDIST_WORKER") and _PRIVATE_HOME in os.environ.get("AIRFLOW_HOME", ""):
    del os.environ["AIRFLOW_HOME"]  # the controller's: each worker makes its own
os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix=_PRIVATE_HOME))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault("AIRFLOW__CORE__UNIT_TEST_MODE", "True")

UPDATE_GOLDEN_ENV = "BLINDATA_UPDATE_GOLDEN"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help=f"rewrite tests/golden/*.json from the plans as they are (or {UPDATE_GOLDEN_ENV}=1)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether the golden plans are to be rewritten rather than compared."""
    option = bool(request.config.getoption("--update-golden"))
    return option or os.environ.get(UPDATE_GOLDEN_ENV, "") not in ("", "0")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An event store's URL: SQLite, and PostgreSQL when ``BLINDATA_TEST_POSTGRES_URL`` is set
    (a fresh schema each time)."""
    from tests.store.helpers import postgres_base_url, postgres_schema

    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'events.db'}"
    else:
        with postgres_schema(postgres_base_url()) as url:
            yield url


@pytest.fixture(scope="session")
def served_emulator() -> Iterator[Any]:
    """One emulator served over real HTTP on loopback for the whole session."""
    from blindata_emulator import running_emulator

    from tests.helpers import emulator_settings

    with running_emulator(emulator_settings()) as handle:
        yield handle


@pytest.fixture
def emulator(served_emulator: Any) -> Iterator[Any]:
    """The served emulator, emptied and without faults for each test."""
    served_emulator.emulator.reset()
    served_emulator.emulator.faults.clear()
    yield served_emulator
    served_emulator.emulator.faults.clear()


@pytest.fixture
def worker_west_of_utc() -> Iterator[None]:
    """An Airflow worker whose local time is five hours behind UTC (a POSIX zone, no tzdata)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "NYC5"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


_REAL_PARTS = {"served_emulator": "integration", "metadata_db": "airflow"}
"""Fixtures that bring a real part up, and the marker a test that uses one gets: the emulator
served over loopback HTTP, Airflow's metadata database migrated by the airflow CLI."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the real parts it uses, so that the fast run (``-m "not integration
    and not airflow"``) leaves them all out, whether or not the test file says so."""
    for item in items:
        for fixture, marker in _REAL_PARTS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
                if marker == "airflow":
                    item.add_marker("integration")
