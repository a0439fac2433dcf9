"""The API route table: every path of the contract, its handler and the permission it needs.

One table, read top to bottom by the router: collection actions with a literal `*`
(`/physical_entities/*/upload`) and fixed sub-paths (`/systems/routines`) come before the item
paths (`/{uuid}`) that would otherwise swallow them. Servers decode `%2A` to `*` before routing,
so an encoded star works too.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass

from . import catalog, lineage, profiling, quality, queryparser
from .resource import (
    Call,
    Filter,
    Handler,
    Reply,
    Resource,
    RowWriter,
    create,
    fetch,
    list_page,
    remove,
    update,
    upload,
    upsert,
)

__all__ = ["API", "LOGIN_PATH", "ROUTES", "ApiRoute"]

API = "/api/v1"
LOGIN_PATH = "/auth/login"
_USER_NAMESPACE = uuidlib.UUID("6f1c7d52-8a43-4d0e-9b6b-0c4f3f1e2a10")
"""Namespace of the stable uuids given to emulator users."""


@dataclass(frozen=True)
class ApiRoute:
    """One method and path of the API; `area` None means any authenticated user may call it."""

    method: str
    path: str
    handler: Handler
    area: str | None
    write: bool = False


def _list(res: Resource, filters: Sequence[Filter]) -> Handler:
    return lambda call: list_page(call, res, filters)


def _create(res: Resource) -> Handler:
    return lambda call: Reply(
        201, res.present(call.db, create(call.db, res, call.json_object(), call.now))
    )


def _get(res: Resource) -> Handler:
    return lambda call: Reply(200, res.present(call.db, fetch(call.db, res, call.uuid)))


def _put(res: Resource) -> Handler:
    return lambda call: Reply(
        200, res.present(call.db, update(call.db, res, call.uuid, call.json_object(), call.now))
    )


def _delete(res: Resource) -> Handler:
    def handle(call: Call) -> Reply:
        remove(call.db, res, call.uuid)
        return Reply(204)

    return handle


def _upload(res: Resource, write: RowWriter = upsert) -> Handler:
    return lambda call: Reply(200, upload(call.db, res, call.json_list(), call.now, write))


def _resource(
    base: str,
    res: Resource,
    area: str,
    filters: Sequence[Filter],
    *,
    ops: str = "LCGUD",
    write: RowWriter | None = None,
) -> list[ApiRoute]:
    """The routes of one resource: L list, C create, G get, U put, D delete; upload if `write`."""
    routes = []
    if write is not None:
        routes.append(ApiRoute("POST", f"{base}/*/upload", _upload(res, write), area, True))
    if "L" in ops:
        routes.append(ApiRoute("GET", base, _list(res, filters), area))
    if "C" in ops:
        routes.append(ApiRoute("POST", base, _create(res), area, True))
    if "G" in ops:
        routes.append(ApiRoute("GET", f"{base}/{{uuid}}", _get(res), area))
    if "U" in ops:
        routes.append(ApiRoute("PUT", f"{base}/{{uuid}}", _put(res), area, True))
    if "D" in ops:
        routes.append(ApiRoute("DELETE", f"{base}/{{uuid}}", _delete(res), area, True))
    return routes


def who_am_i(call: Call) -> Reply:
    """GET /users/me: proves that the credentials and the tenant work."""
    user = call.user
    return Reply(
        200,
        {
            "uuid": str(uuidlib.uuid5(_USER_NAMESPACE, user.username)),
            "username": user.username,
            "fullName": user.full_name or user.username,
            "permissions": list(user.permissions),
            "tenant": {"uuid": call.tenant},
        },
    )


_QP = f"{API}/queryparser"
_DQ = f"{API}/data-quality"

ROUTES: tuple[ApiRoute, ...] = (
    ApiRoute("GET", f"{API}/users/me", who_am_i, None),
    # Routines live under /systems: before /systems/{uuid}.
    *_resource(
        f"{API}/systems/routines",
        lineage.ROUTINE,
        "SYSTEMS",
        lineage.ROUTINE_FILTERS,
        ops="LGD",
        write=upsert,
    ),
    *_resource(f"{API}/systems", catalog.SYSTEM, "SYSTEMS", catalog.SYSTEM_FILTERS),
    ApiRoute(
        "GET",
        f"{API}/physical_entities/{{uuid}}/documentation",
        catalog.get_documentation,
        "PHYSICAL_MODEL",
    ),
    ApiRoute(
        "PUT",
        f"{API}/physical_entities/{{uuid}}/documentation",
        catalog.put_documentation,
        "PHYSICAL_MODEL",
        True,
    ),
    *_resource(
        f"{API}/physical_entities",
        catalog.ENTITY,
        "PHYSICAL_MODEL",
        catalog.ENTITY_FILTERS,
        write=upsert,
    ),
    *_resource(
        f"{API}/physical_fields",
        catalog.FIELD,
        "PHYSICAL_MODEL",
        catalog.FIELD_FILTERS,
        write=upsert,
    ),
    *_resource(
        f"{API}/dataflows",
        lineage.FLOW,
        "DATA_FLOWS",
        lineage.FLOW_FILTERS,
        ops="LGD",
        write=lineage.upsert_flow,
    ),
    *_resource(f"{_QP}/buckets", queryparser.BUCKET, "QUERY_PARSER", queryparser.BUCKET_FILTERS),
    ApiRoute(
        "POST",
        f"{_QP}/statements/{{uuid}}/analyze",
        queryparser.analyze_statement,
        "QUERY_PARSER",
        True,
    ),
    ApiRoute("PUT", f"{_QP}/statements/{{uuid}}", queryparser.put_statement, "QUERY_PARSER", True),
    *_resource(
        f"{_QP}/statements",
        queryparser.STATEMENT,
        "QUERY_PARSER",
        queryparser.STATEMENT_FILTERS,
        ops="LCGD",
    ),
    ApiRoute("POST", f"{_DQ}/suites/*/import-objects", quality.import_objects, "QUALITY", True),
    *_resource(f"{_DQ}/suites", quality.SUITE, "QUALITY", quality.SUITE_FILTERS),
    *_resource(f"{_DQ}/checks", quality.CHECK, "QUALITY", quality.CHECK_FILTERS, ops="LCGU"),
    ApiRoute("POST", f"{_DQ}/results", quality.post_result, "QUALITY", True),
    *_resource(f"{_DQ}/results", quality.RESULT, "QUALITY", quality.RESULT_FILTERS, ops="LG"),
    *_resource(
        f"{API}/profiling/monitors",
        profiling.MONITOR,
        "PROFILING",
        profiling.MONITOR_FILTERS,
        ops="LCGD",
    ),
    *_resource(
        f"{API}/profiling/records",
        profiling.RECORD,
        "PROFILING",
        profiling.RECORD_FILTERS,
        ops="LG",
        write=upsert,
    ),
)
