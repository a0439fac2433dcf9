"""Admin endpoints under `/_emulator/`: switches for tests that reach the emulator over HTTP.

They need no Blindata credentials, are never faulted and are not in the request log:
- `GET|POST|DELETE /_emulator/faults`: show, add (JSON of `Faults.configure`), clear the faults;
- `POST /_emulator/tokens {"username"}` → `{"access_token"}`: a token "obtained elsewhere";
- `POST /_emulator/expire-tokens`: every bearer token becomes invalid;
- `POST /_emulator/reset`: forget objects, tokens, faults and logged requests;
- `GET /_emulator/requests[?since=<id>]` → `{"requests": [...]}`, `DELETE` clears it;
- `POST /_emulator/clock {"advance_seconds"}`: move the emulator's time forward;
- `GET /_emulator/health`: `{"status": "UP"}` once serving.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import error_body

if TYPE_CHECKING:
    from .app import Emulator

__all__ = ["admin_routes"]

PREFIX = "/_emulator"


def _emulator(request: Request) -> Emulator:
    emulator: Emulator = request.app.state.emulator
    return emulator


def _error(request: Request, status: int, message: str) -> Response:
    body = error_body(status, message, request.url.path, _emulator(request).clock.stamp())
    return JSONResponse(body, status_code=status)


async def _json_object(request: Request) -> dict[str, Any] | None:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def faults(request: Request) -> Response:
    """GET shows, POST adds, DELETE clears the fault switches."""
    switches = _emulator(request).faults
    if request.method == "POST":
        spec = await _json_object(request)
        if spec is None:
            return _error(request, 400, "the body must be a JSON object of fault switches")
        try:
            switches.configure(spec)
        except (ValueError, TypeError) as err:
            return _error(request, 400, str(err))
    elif request.method == "DELETE":
        switches.clear()
    return JSONResponse(switches.describe())


async def tokens(request: Request) -> Response:
    """A bearer token for a user, as an identity provider would issue it."""
    data = await _json_object(request)
    username = (data or {}).get("username")
    if not isinstance(username, str):
        return _error(request, 400, 'the body must be {"username": "..."}')
    try:
        token = _emulator(request).issue_token(username)
    except ValueError as err:
        return _error(request, 404, str(err))
    return JSONResponse({"access_token": token, "token_type": "Bearer"})


async def expire_tokens(request: Request) -> Response:
    """Every bearer token becomes invalid."""
    return JSONResponse({"expired": _emulator(request).expire_tokens()})


async def reset(request: Request) -> Response:
    """Forget everything."""
    _emulator(request).reset()
    return JSONResponse({"reset": True})


async def requests(request: Request) -> Response:
    """GET: the request log (entries after `since`); DELETE: clear it."""
    log = _emulator(request).requests
    if request.method == "DELETE":
        log.clear()
        return JSONResponse({"requests": []})
    try:
        since = int(request.query_params.get("since") or 0)
    except ValueError:
        return _error(request, 400, "since must be an integer request id")
    return JSONResponse({"requests": log.entries(since)})


async def clock(request: Request) -> Response:
    """Advance the emulator's time by `advance_seconds`."""
    data = await _json_object(request)
    seconds = (data or {}).get("advance_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        return _error(request, 400, 'the body must be {"advance_seconds": <number >= 0>}')
    emulator = _emulator(request)
    emulator.clock.advance(float(seconds))
    return JSONResponse({"now": emulator.clock.stamp()})


async def health(request: Request) -> Response:
    """Ready to serve."""
    return JSONResponse({"status": "UP"})


def admin_routes() -> list[Route]:
    """The admin routes."""
    return [
        Route(f"{PREFIX}/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route(f"{PREFIX}/tokens", tokens, methods=["POST"]),
        Route(f"{PREFIX}/expire-tokens", expire_tokens, methods=["POST"]),
        Route(f"{PREFIX}/reset", reset, methods=["POST"]),
        Route(f"{PREFIX}/requests", requests, methods=["GET", "DELETE"]),
        Route(f"{PREFIX}/clock", clock, methods=["POST"]),
        Route(f"{PREFIX}/health", health, methods=["GET"]),
    ]
