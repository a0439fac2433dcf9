"""``api_paths``: where one Blindata instance serves a path of the contract, when not where listed.

Half of the contract is inferred (``paths.py``). When a tenant serves one of those paths
elsewhere, the connection's extra ``api_paths`` maps the contract path, spelled exactly as in
docs/blindata-endpoints.md, to the path this instance serves::

    {"/api/v1/dataflows/*/upload": "/api/v1/lineage/dataflows/*/upload"}

A key applies to every method of that path. The client, ``check --api`` and the operators use the
remapped path, so a correction needs no release. Every mistake fails when the connection is read,
with the name of what to fix: an unknown key (the known ones are listed), a value that is not a
path, or a value that drops a placeholder the client fills in (``{uuid}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from airflow_blindata.blindata.errors import BlindataConfigError
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint

__all__ = ["ApiPaths", "contract_paths"]

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def contract_paths() -> list[str]:
    """Every path of the contract, once each, in the order of the table."""
    return list(dict.fromkeys(endpoint.template for endpoint in ENDPOINTS.values()))


def _placeholders(path: str) -> set[str]:
    return set(_PLACEHOLDER.findall(path))


@dataclass(frozen=True)
class ApiPaths:
    """A validated map from contract paths to the paths one instance serves (empty: none moved)."""

    moved: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        known = contract_paths()
        for key, value in self.moved.items():
            if key not in known:
                raise BlindataConfigError(
                    f"api_paths: {key!r} is not a path of the contract; known paths: "
                    f"{', '.join(known)}"
                )
            if not isinstance(value, str) or not value.startswith("/") or " " in value:
                raise BlindataConfigError(
                    f"api_paths[{key!r}] must be a path starting with '/', got {value!r}"
                )
            if "?" in value or "#" in value:
                raise BlindataConfigError(
                    f"api_paths[{key!r}] must be a path without query or fragment, got {value!r}"
                )
            needed, given = _placeholders(key), _placeholders(value)
            if needed != given:
                raise BlindataConfigError(
                    f"api_paths[{key!r}] = {value!r} must keep the placeholders of the contract "
                    f"path ({', '.join('{' + name + '}' for name in sorted(needed)) or 'none'}), "
                    f"has {', '.join('{' + name + '}' for name in sorted(given)) or 'none'}"
                )

    @classmethod
    def parse(cls, value: Any, *, where: str = "api_paths") -> ApiPaths:
        """Read the connection extra's value: a JSON object, or its text (as forms store it)."""
        if value is None or value == "" or value == {}:
            return cls()
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise BlindataConfigError(f"{where} is not valid JSON: {exc}") from None
        if not isinstance(value, Mapping):
            raise BlindataConfigError(
                f"{where} must be a JSON object from contract path to served path, "
                f"got {type(value).__name__}"
            )
        try:
            return cls(dict(value))
        except BlindataConfigError as exc:
            raise BlindataConfigError(str(exc).replace("api_paths", where, 1)) from None

    def __bool__(self) -> bool:
        return bool(self.moved)

    def __iter__(self) -> Iterator[str]:
        return iter(self.moved)

    def served(self, template: str) -> str:
        """The path this instance serves for the contract path ``template``."""
        return self.moved.get(template, template)

    def resolve(self, endpoint: Endpoint) -> Endpoint:
        """``endpoint`` as this instance serves it (itself when not moved)."""
        served = self.moved.get(endpoint.template)
        return endpoint if served is None else replace(endpoint, template=served)
