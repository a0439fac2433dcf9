"""Emulator settings fail early and by name."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import ALL_PERMISSIONS, EmulatorSettings, EmulatorUser


def test_single_gives_one_tenant_and_one_user_with_every_permission() -> None:
    settings = EmulatorSettings.single("t-1", "etl", "key", db_path="/tmp/x.sqlite")
    assert settings.tenants == ["t-1"] and settings.db_path == "/tmp/x.sqlite"
    (user,) = settings.users
    assert (user.username, user.password, user.tenants) == ("etl", "key", None)
    assert user.permissions == list(ALL_PERMISSIONS)
    assert "key" not in repr(settings)


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: EmulatorSettings(tenants=[]), "at least one tenant"),
        (
            lambda: EmulatorSettings(tenants=["a"], users=[EmulatorUser("u", "p", tenants=["b"])]),
            "['b']",
        ),
        (lambda: EmulatorSettings(users=[EmulatorUser("u", "p"), EmulatorUser("u", "q")]), "twice"),
        (lambda: EmulatorUser("u", "p", permissions=["GOD_MODE"]), "GOD_MODE"),
        (lambda: EmulatorSettings(page_size_cap=0), "page_size_cap"),
        (lambda: EmulatorSettings(token_ttl_seconds=0), "token_ttl_seconds"),
        (lambda: EmulatorSettings(analysis_delay_seconds=-1), "analysis_delay_seconds"),
    ],
    ids=[
        "no-tenant",
        "foreign-tenant",
        "duplicate-user",
        "unknown-permission",
        "cap",
        "ttl",
        "delay",
    ],
)
def test_bad_settings_are_refused_naming_the_bad_value(build: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        build()
