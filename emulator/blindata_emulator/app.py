"""The emulator object and the ASGI application that serves it.

`create_app(settings)` returns a Starlette app whose `app.state.emulator` is the `Emulator`: the
store, the clock, the fault switches, the tokens and the request log, with helpers that tests call
directly (`issue_token`, `expire_tokens`, `reset`, `objects`).

An API request goes: fault middleware → router → `Emulator.dispatch` in a worker thread, which
authenticates, picks the tenant, checks the permission, runs any SQL analysis that has become due,
and calls the handler inside one store transaction. Every error becomes the Spring error body.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .admin import admin_routes
from .auth import Authenticator, TokenRegistry
from .clock import Clock
from .errors import ApiError, error_body
from .faults import Faults
from .middleware import NOTE_KEY, DateHeader, FaultMiddleware, RequestLog, RequestNote
from .model import Doc, Kind
from .openapi import docs_routes, options_routes
from .paging import Params
from .queryparser import run_due_analyses
from .resource import NO_BODY, Call, Reply
from .routes import LOGIN_PATH, ROUTES, ApiRoute
from .settings import EmulatorSettings
from .store import Store

__all__ = ["Emulator", "create_app"]


@dataclass(frozen=True)
class Incoming:
    """What the worker thread needs of a request."""

    path: str
    headers: Mapping[str, str]
    params: Params
    path_params: Mapping[str, str]
    body: bytes


class Emulator:
    """The state and behaviour of one emulated Blindata instance."""

    def __init__(self, settings: EmulatorSettings) -> None:
        self.settings = settings
        self.clock = Clock()
        self.store = Store(settings.db_path)
        self.faults = Faults()
        self.requests = RequestLog()
        self.tokens = TokenRegistry(self.clock, settings.token_ttl_seconds)
        self.auth = Authenticator(settings, self.tokens)
        self._seq = itertools.count(1)

    # --- helpers for tests ---------------------------------------------------------------

    def issue_token(self, username: str) -> str:
        """A bearer token for `username`, as if obtained from an identity provider."""
        if self.settings.user(username) is None:
            raise ValueError(f"no emulator user {username!r}")
        return self.tokens.issue(username)

    def expire_tokens(self) -> int:
        """Make every bearer token invalid (the next call with one gets 401)."""
        return self.tokens.expire_all()

    def reset(self) -> None:
        """Back to an empty emulator: no objects, tokens, faults or logged requests."""
        self.store.reset()
        self.tokens.expire_all()
        self.faults.clear()
        self.requests.clear()

    def objects(self, kind: str, tenant: str | None = None) -> list[Doc]:
        """Every stored object of `kind` (a `model.Kind` value) in `tenant` (default tenant)."""
        if kind not in Kind.ALL:
            raise ValueError(f"unknown kind {kind!r}; known: {Kind.ALL}")
        return self.store.view(tenant or self.settings.tenants[0]).select(kind)

    def close(self) -> None:
        """Close the SQLite connection."""
        self.store.close()

    # --- serving -------------------------------------------------------------------------

    def error_reply(self, err: ApiError, path: str) -> Reply:
        """The Spring error reply for `err`."""
        body = error_body(err.status, err.message, path, self.clock.stamp(), err.error_name)
        return Reply(err.status, body, dict(err.headers))

    def dispatch(self, route: ApiRoute, incoming: Incoming) -> tuple[Reply, str | None, str | None]:
        """Serve one API request (in a worker thread); returns the reply, user and tenant."""
        username = tenant = None
        try:
            user = self.auth.user(incoming.headers)
            username = user.username
            tenant = self.auth.tenant(user, incoming.headers.get("x-bd-tenant"))
            self.auth.require(user, route.area, route.write)
            limit = self.settings.max_body_bytes
            if limit is not None and len(incoming.body) > limit:
                raise ApiError(
                    413,
                    f"the request body of {len(incoming.body)} bytes is over the "
                    f"{limit} bytes this server accepts",
                )
            body = _parse_body(incoming.body)
            with self.store.transaction():
                seq = next(self._seq)
                stamp = self.clock.tick()
                run_due_analyses(
                    self.store,
                    seq,
                    self.clock.now(),
                    stamp,
                    derive_flows=self.settings.analysis_derives_flows,
                )
            with self.store.transaction():
                call = Call(
                    db=self.store.view(tenant),
                    user=user,
                    now=stamp,
                    now_seconds=self.clock.now(),
                    seq=seq,
                    params=incoming.params,
                    path_params=incoming.path_params,
                    body=body,
                    page_size_cap=self.settings.page_size_cap,
                    unordered_pages=self.settings.unordered_pages,
                    analysis_delay_seconds=self.settings.analysis_delay_seconds,
                )
                reply = route.handler(call)
        except ApiError as err:
            reply = self.error_reply(err, incoming.path)
        return reply, username, tenant

    def login(self, body: bytes, path: str) -> Reply:
        """`POST /auth/login`."""
        try:
            data = _parse_body(body)
            if not isinstance(data, dict):
                raise ApiError(400, 'login needs a JSON body {"username", "password"}')
            token = self.auth.login(data.get("username"), data.get("password"))
        except ApiError as err:
            return self.error_reply(err, path)
        return Reply(
            200,
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": int(self.settings.token_ttl_seconds),
            },
        )


def _parse_body(raw: bytes) -> Any:
    if not raw.strip():
        return NO_BODY
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise ApiError(400, f"the request body is not valid JSON: {err}") from None


def to_response(reply: Reply) -> Response:
    """A Starlette response for a handler's reply."""
    if reply.body is None:
        return Response(status_code=reply.status, headers=reply.headers)
    return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)


def _endpoint(route: ApiRoute) -> Callable[[Request], Awaitable[Response]]:
    async def serve(request: Request) -> Response:
        emulator: Emulator = request.app.state.emulator
        incoming = Incoming(
            path=request.url.path,
            headers={key.lower(): value for key, value in request.headers.items()},
            params=Params(request.query_params.multi_items()),
            path_params={key: str(value) for key, value in request.path_params.items()},
            body=await request.body(),
        )
        reply, user, tenant = await run_in_threadpool(emulator.dispatch, route, incoming)
        note = request.scope.get(NOTE_KEY)
        if isinstance(note, RequestNote):
            note.user, note.tenant = user, tenant
        return to_response(reply)

    return serve


async def _login(request: Request) -> Response:
    emulator: Emulator = request.app.state.emulator
    return to_response(emulator.login(await request.body(), request.url.path))


async def _http_error(request: Request, exc: Exception) -> Response:
    emulator: Emulator = request.app.state.emulator
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    if status == 404:
        message = f"no such resource: {request.method} {request.url.path}"
    elif status == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    elif status == 500:
        message = f"internal emulator error: {type(exc).__name__}"
    else:
        message = str(getattr(exc, "detail", "")) or "error"
    reply = emulator.error_reply(ApiError(status, message, headers=headers), request.url.path)
    return to_response(reply)


def _mounted(settings: EmulatorSettings) -> tuple[str, list[ApiRoute]]:
    """The login path and the API routes at the paths this emulator serves them."""
    known = [LOGIN_PATH, *dict.fromkeys(route.path for route in ROUTES)]
    unknown = sorted(set(settings.moved_paths) - set(known))
    if unknown:
        raise ValueError(
            f"EmulatorSettings.moved_paths: {unknown} are not paths of the emulator; "
            f"known: {', '.join(known)}"
        )
    moved = settings.moved_paths
    login = moved.get(LOGIN_PATH, LOGIN_PATH)
    return login, [replace(route, path=moved.get(route.path, route.path)) for route in ROUTES]


def create_app(settings: EmulatorSettings) -> Starlette:
    """The ASGI app of a new emulator; the emulator is `app.state.emulator`."""
    emulator = Emulator(settings)
    login_path, api_routes = _mounted(settings)
    operations = [("POST", login_path), *((route.method, route.path) for route in api_routes)]
    routes: list[BaseRoute] = [*admin_routes(), *docs_routes(operations)]
    routes.append(Route(login_path, _login, methods=["POST"]))
    routes.extend(
        Route(
            route.path,
            _endpoint(route),
            methods=[route.method],
            name=f"{route.method} {route.path}",
        )
        for route in api_routes
    )
    routes.extend(options_routes(operations))
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(DateHeader, clock=emulator.clock),
            Middleware(
                FaultMiddleware,
                faults=emulator.faults,
                log=emulator.requests,
                clock=emulator.clock,
            ),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _http_error},
    )
    app.state.emulator = emulator
    return app
