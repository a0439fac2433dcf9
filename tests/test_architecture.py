"""The rooms of the package and what each may import (docs/architecture.md), checked on the source.

Imports go one way — capture → store → plans (with the pure mapper) → sync → Blindata — and the
mapper stays pure: no IO, no Airflow, no httpx. A new import across rooms that the table does not
allow fails here, so the table in the docs and the code cannot drift apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "airflow_blindata"

EVERYWHERE = {"airflow_blindata"}  # ``from airflow_blindata import __version__``
MAY_IMPORT: dict[str, set[str]] = {
    "events": set(),
    "definition": set(),
    "options": {"get_provider_info"},  # the options' declared defaults
    "metrics": set(),
    "redaction": set(),
    "tables": set(),
    "get_provider_info": set(),
    "store": {"events", "options", "redaction"},
    "capture": {"store", "events", "options", "metrics", "redaction"},
    "receiver": {"store", "events", "options", "metrics", "redaction"},
    "mapper": {"events", "definition", "redaction"},
    "blindata": {"definition", "redaction", "tables"},
    # from stored events or event files to a plan: never the sync, which applies plans
    "plans": {"mapper", "store", "events", "definition", "redaction", "tables"},
    "sync": {
        *("plans", "mapper", "blindata", "store", "events", "definition", "redaction"),
        "tables",
    },
    # the form for Airflow 3.0/3.1 is built from the provider info's declaration (hooks/form.py)
    "hooks": {"blindata", "options", "redaction", "get_provider_info"},
    "operators": {"hooks", "sync", "store", "definition", "options", "redaction"},
    "plugin": {"capture", "receiver", "ui"},
    # The page maps one chosen job as a snapshot would (mapper, definition): both are pure. It
    # links to the connection's Blindata URL as the hook reads it (hooks).
    "ui": {"store", "sync", "options", "redaction", "tables", "mapper", "definition", "hooks"},
    "openlineage": {"capture"},  # the transport's first dotted path, kept as an alias
    "cli": {
        *("blindata", "capture", "definition", "hooks", "plans"),
        *("store", "sync", "options", "redaction", "tables"),
    },
}
"""Room → the rooms of ours it may import (its own always)."""

FOLD_MAY_IMPORT: dict[str, set[str]] = {
    "__init__": {"core"},
    "core": {"identity"},
    "reading": {"core", "report"},
    "kept": {"core", "reading", "report"},
    "slices": {"core", "reading", "report"},
}
"""A module of ``mapper/fold/`` → the modules of the mapper it may import (``core`` for the
package's own names): the fold's modules one way, and no mapping pass that reads the fold."""

MAPPER_MUST_NOT_USE = {"airflow", "httpx", "sqlalchemy", "psycopg", "fastapi", "starlette"}


def _room(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imports(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports, at module level or inside functions."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rpartition(".")[0]  # ``a.b`` for ``a/b/c.py`` and for ``a/b/__init__.py``
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module:
                found.add(node.module)
    return found


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_room_is_in_the_table() -> None:
    assert {_room(path) for path in _sources()} - {"__init__"} <= set(MAY_IMPORT)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_one_way(path: Path) -> None:
    room = _room(path)
    allowed = MAY_IMPORT.get(room, set()) | {room} | EVERYWHERE
    crossing = {
        name.split(".")[1]
        for name in _imports(path)
        if name.startswith("airflow_blindata.") and name.split(".")[1] not in allowed
    }
    assert not crossing, f"{room} may not import {sorted(crossing)} (docs/architecture.md)"


def _reached(room: str) -> set[str]:
    """Every room ``room`` may reach through the rooms it may import, and theirs."""
    reached: set[str] = set()
    todo = [room]
    while todo:
        for name in MAY_IMPORT.get(todo.pop(), set()) - reached:
            reached.add(name)
            todo.append(name)
    return reached


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_no_room_climbs_back_to_itself(room: str) -> None:
    """The table is a one-way street: no room may reach itself again through others."""
    assert room not in _reached(room)


def test_the_way_to_a_plan_goes_down_only() -> None:
    """The store knows nothing of mapping, the mapper nothing of the store or the plans, and the
    plans nothing of the sync that applies them."""
    assert not {"mapper", "plans", "sync"} & _reached("store")
    assert not {"store", "plans", "sync"} & _reached("mapper")
    assert not {"sync", "blindata"} & _reached("plans")


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "mapper" / "fold").glob("*.py")), ids=lambda p: p.name
)
def test_the_fold_imports_one_way(path: Path) -> None:
    allowed = FOLD_MAY_IMPORT[path.stem]
    used = {
        "core" if name == "airflow_blindata.mapper.fold" else name.rsplit(".", 1)[1]
        for name in _imports(path)
        if name.startswith("airflow_blindata.mapper.")
    }
    assert used <= allowed, f"fold/{path.name} may not import {sorted(used - allowed)}"


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "mapper").rglob("*.py")) + sorted((PACKAGE / "events").rglob("*.py")),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_the_mapper_and_the_events_stay_pure(path: Path) -> None:
    """No IO library, no Airflow, no HTTP: the mapper runs anywhere, on any input."""
    used = {name.split(".")[0] for name in _imports(path)} & MAPPER_MUST_NOT_USE
    assert not used, f"{path.name} imports {sorted(used)}"


def test_nothing_but_the_plugin_imports_the_page() -> None:
    importers = {
        _room(path)
        for path in _sources()
        if _room(path) not in {"ui", "plugin"}
        and any(name.startswith("airflow_blindata.ui") for name in _imports(path))
    }
    assert importers == set()


def test_the_emulator_knows_nothing_of_the_provider() -> None:
    """A distribution of its own, standing in for Blindata: it may not lean on the client."""
    emulator = ROOT / "emulator" / "blindata_emulator"
    leaning = {
        str(path.relative_to(emulator)): sorted(
            name for name in _imports(path) if name.startswith("airflow_blindata")
        )
        for path in sorted(emulator.rglob("*.py"))
    }
    assert {name: found for name, found in leaning.items() if found} == {}
