"""The oldest versions ``pyproject.toml`` accepts are versions the provider works with.

Each floor here was measured in a virtualenv of those versions (``docs/versions.md``): below it
the provider does not import, or loses events, or hashes SQL otherwise. A pin lower than that
gives an administrator on the older version an install that pip accepts and that then fails.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]

OLDEST_WORKING = {
    # airflow.sdk.BaseHook is 3.1; AirflowFailException in airflow.sdk.exceptions is 3.2; the
    # event store needs SQLAlchemy 2, which Airflow 3.1 does not require
    "apache-airflow": "3.2",
    # _run_adapter_method (2.20.0); 2.20.0 and 2.20.1 emitted no task events on Airflow 3.2.0
    "apache-airflow-providers-openlineage": "2.20.2",
    # airflow.providers.common.compat.sdk: hookimpl (1.12), HookLineageReader (1.14)
    "apache-airflow-providers-common-compat": "1.15",
    "msgspec": "0.19",
    # ``from sqlalchemy import Dialect`` and the 2.0 API of the event store
    "sqlalchemy": "2.0",
    # TokenType.NATIONAL_RAW_STRING; and older tokenizers hash some statements otherwise
    "sqlglot": "30.23",
}


def _floors() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors: dict[str, Version] = {}
    for text in project["dependencies"]:
        requirement = Requirement(text)
        for spec in requirement.specifier:
            if spec.operator == ">=":
                floors[requirement.name.lower()] = Version(spec.version)
    return floors


@pytest.mark.parametrize(("name", "oldest"), sorted(OLDEST_WORKING.items()))
def test_a_dependency_is_never_accepted_below_the_oldest_version_the_provider_works_with(
    name: str, oldest: str
) -> None:
    floors = _floors()
    assert name in floors, f"{name} is imported by the provider: pyproject.toml must require it"
    assert floors[name] >= Version(oldest), (
        f"pyproject.toml accepts {name} {floors[name]}, the provider needs {oldest}"
    )
