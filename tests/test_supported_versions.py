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
    # airflow.sdk.BaseHook is 3.1 (3.0 lacks it, and more: docs/versions.md)
    "apache-airflow": "3.1",
    # _run_adapter_method (2.20.0); 2.20.0 and 2.20.1 emitted no task events on Airflow 3.2.0
    "apache-airflow-providers-openlineage": "2.20.2",
    # airflow.providers.common.compat.sdk: hookimpl (1.12), HookLineageReader (1.14)
    "apache-airflow-providers-common-compat": "1.15",
    "msgspec": "0.19",
    # 1.4's 2.0-style API (future engines, Connection.execute, insert().on_conflict_do_nothing)
    "sqlalchemy": "1.4.54",
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


def _floor_pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints-floors.txt").read_text().splitlines():
        name, separator, version = line.partition("==")
        if separator and not line.startswith("#"):
            pins[name.strip().lower().replace("_", "-")] = Version(version.strip())
    return pins


def test_the_floors_run_tests_each_floor_pyproject_declares() -> None:
    """``./dev floors`` (in ``.ci/run``) installs each dependency at its floor's release series,
    so that the floor is a tested fact, not a guess."""
    pins = _floor_pins()
    for name, floor in _floors().items():
        if name == "sqlglotc":
            continue
        assert name in pins, f"constraints-floors.txt does not pin {name}"
        pinned = pins[name]
        assert pinned >= floor and pinned.release[:2] == (*floor.release, 0)[:2], (
            f"the floors run tests {name} {pinned}; pyproject.toml's floor is {floor}"
        )
