"""What an OpenAPI description says an instance serves, and whether it serves a path of ours.

Blindata is a Spring Boot application: springdoc describes each instance at ``/v3/api-docs``
(OpenAPI 3, JSON; ``/v3/api-docs.yaml`` in YAML) and older ones at ``/v2/api-docs`` (Swagger 2).
This module reads either, in JSON or YAML, and answers one question: which (method, path) does the
instance serve, the servers' base path (OpenAPI 3 ``servers[].url``, Swagger 2 ``basePath``)
included.

Paths are compared as templates, segment by segment: a parameter matches a parameter whatever
its name (``{uuid}`` and ``{id}``, ``{id:.+}``), the contract's collection star ``*`` matches a
parameter or a literal ``*``, and other segments must be equal. A trailing slash is ignored.

Pure: no IO. ``apicheck.py`` fetches the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

from airflow_blindata.blindata.errors import BlindataError

__all__ = ["OpenApiError", "ServedApi", "parse_openapi", "template_matches"]

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_PARAMETER = re.compile(r"^\{[^{}]+\}$")
_VARIABLE = re.compile(r"\{([^{}]+)\}")
_ANY = "{}"


class OpenApiError(BlindataError):
    """The text is not an OpenAPI (or Swagger 2) description."""


def _segments(path: str) -> tuple[str, ...]:
    """``path`` as segments to compare: a parameter becomes ``{}``, the star ``*`` stays."""
    parts = [part for part in path.strip().split("/") if part]
    return tuple(_ANY if _PARAMETER.match(part) else part for part in parts)


def template_matches(contract: str, served: str) -> bool:
    """Whether the served template ``served`` is the contract path ``contract``.

    >>> template_matches("/api/v1/dataflows/*/upload", "/api/v1/dataflows/{id}/upload")
    True
    >>> template_matches("/api/v1/systems/{uuid}", "/api/v1/systems/routines")
    False
    """
    ours, theirs = _segments(contract), _segments(served)
    if len(ours) != len(theirs):
        return False
    for mine, other in zip(ours, theirs, strict=True):
        if mine == "*":
            if other not in ("*", _ANY):
                return False
        elif mine != other:
            return False
    return True


@dataclass(frozen=True)
class ServedApi:
    """The operations a description lists: (METHOD, full path template) pairs."""

    operations: frozenset[tuple[str, str]]
    title: str = ""
    version: str = ""

    def find(self, method: str, path: str) -> str | None:
        """The served template that is ``method path``, or ``None`` when it is not served."""
        for served_method, served_path in sorted(self.operations):
            if served_method == method and template_matches(path, served_path):
                return served_path
        return None

    def methods_at(self, path: str) -> list[str]:
        """The methods served at ``path`` (to say "served for GET only" of a missing PUT)."""
        return sorted(
            {method for method, served in self.operations if template_matches(path, served)}
        )


def _document(text: str | bytes) -> Mapping[str, Any]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        data: Any = json.loads(text)
    except ValueError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise OpenApiError(f"neither JSON nor YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise OpenApiError(f"expected a JSON or YAML object, got {type(data).__name__}")
    if "openapi" not in data and "swagger" not in data:
        raise OpenApiError("no 'openapi' or 'swagger' version field: not an OpenAPI description")
    if not isinstance(data.get("paths"), Mapping):
        raise OpenApiError("no 'paths' object")
    return data


def _server_path(url: str, variables: Mapping[str, Any]) -> str:
    """The path part of a server URL, its variables replaced by their defaults."""

    def default(match: re.Match[str]) -> str:
        variable = variables.get(match.group(1))
        value = variable.get("default") if isinstance(variable, Mapping) else None
        return str(value) if value is not None else ""

    return urlsplit(_VARIABLE.sub(default, url)).path.rstrip("/")


def _base_paths(data: Mapping[str, Any]) -> list[str]:
    if "swagger" in data:
        base = data.get("basePath")
        return [str(base).rstrip("/")] if isinstance(base, str) else [""]
    servers = data.get("servers")
    if not isinstance(servers, list) or not servers:
        return [""]
    bases = []
    for server in servers:
        if isinstance(server, Mapping) and isinstance(server.get("url"), str):
            variables = server.get("variables")
            bases.append(
                _server_path(server["url"], variables if isinstance(variables, Mapping) else {})
            )
    return list(dict.fromkeys(bases)) or [""]


def _operations(paths: Mapping[str, Any], bases: Iterable[str]) -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path, item in paths.items():
        if not isinstance(path, str) or not isinstance(item, Mapping):
            continue
        for method in HTTP_METHODS:
            if method in item:
                for base in bases:
                    found.add((method.upper(), base + "/" + path.lstrip("/")))
    return frozenset(found)


def parse_openapi(text: str | bytes) -> ServedApi:
    """What the description ``text`` (OpenAPI 3 or Swagger 2, JSON or YAML) says is served."""
    data = _document(text)
    info = data.get("info")
    info = info if isinstance(info, Mapping) else {}
    return ServedApi(
        operations=_operations(data["paths"], _base_paths(data)),
        title=str(info.get("title") or ""),
        version=str(info.get("version") or ""),
    )
