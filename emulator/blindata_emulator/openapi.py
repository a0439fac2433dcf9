"""The emulator's own API Docs: an OpenAPI 3 description of what it serves, as springdoc gives.

Generated from the routes the app really mounts (``routes.ROUTES`` and the login, where
``EmulatorSettings.moved_paths`` may have moved some), so that ``airflow-blindata check --api``
is tested end to end: a path the emulator does not serve is not described. Served without
credentials at ``GET /v3/api-docs`` (JSON) and ``GET /v3/api-docs.yaml`` (YAML).

Also the answer to ``OPTIONS`` on an API path, as Spring MVC gives it: 200 with ``Allow`` listing
every method the path serves (Starlette alone would name the methods of one route only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["DOCS_PATH", "DOCS_YAML_PATH", "describe", "docs_routes", "options_routes"]

DOCS_PATH = "/v3/api-docs"
DOCS_YAML_PATH = "/v3/api-docs.yaml"
_PARAMETER = re.compile(r"\{([^{}]+)\}")


def _operation(method: str, path: str) -> dict[str, Any]:
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _PARAMETER.findall(path)
    ]
    operation: dict[str, Any] = {
        "operationId": f"{method.lower()}_{re.sub(r'[^A-Za-z0-9]+', '_', path).strip('_')}",
        "responses": {"200": {"description": "OK"}},
    }
    if parameters:
        operation["parameters"] = parameters
    return operation


def describe(operations: Iterable[tuple[str, str]], server_url: str) -> dict[str, Any]:
    """The OpenAPI 3 document listing ``operations`` (METHOD, path) under ``server_url``."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in operations:
        paths.setdefault(path, {})[method.lower()] = _operation(method, path)
    return {
        "openapi": "3.0.1",
        "info": {"title": "Blindata emulator", "version": "v1"},
        "servers": [{"url": server_url, "description": "Generated server url"}],
        "paths": paths,
    }


def docs_routes(operations: list[tuple[str, str]]) -> list[Route]:
    """``GET /v3/api-docs`` and ``/v3/api-docs.yaml`` describing ``operations``."""

    def document(request: Request) -> dict[str, Any]:
        return describe(operations, str(request.base_url).rstrip("/"))

    async def as_json(request: Request) -> Response:
        return JSONResponse(document(request))

    async def as_yaml(request: Request) -> Response:
        text = yaml.safe_dump(document(request), sort_keys=False)
        return Response(text, media_type="application/vnd.oai.openapi")

    return [
        Route(DOCS_PATH, as_json, methods=["GET"]),
        Route(DOCS_YAML_PATH, as_yaml, methods=["GET"]),
    ]


def options_routes(operations: list[tuple[str, str]]) -> list[Route]:
    """One ``OPTIONS`` route per path, in the order the paths are first mounted."""
    methods: dict[str, list[str]] = {}
    for method, path in operations:
        methods.setdefault(path, []).append(method)

    def answer(allowed: list[str]) -> Any:
        allow = ", ".join([*allowed, "OPTIONS"])

        async def options(request: Request) -> Response:
            return Response(status_code=200, headers={"Allow": allow})

        return options

    return [Route(path, answer(allowed), methods=["OPTIONS"]) for path, allowed in methods.items()]
