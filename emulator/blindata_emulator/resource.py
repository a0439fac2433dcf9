"""Resources as data, and the generic operations every resource shares.

A `Resource` says what a Blindata object is: its kind, writable fields, required fields, natural
key, parent, how its references are checked (`resolve`), how it is shown (`present`) and what
goes with it when it is deleted (`cascade`). The generic operations below (create with 409 on a
taken natural key, get, PUT, delete, upsert, upload with per-row errors, Spring pages) are written
once against that description; the resource modules add only what is particular to them.

A handler takes a `Call` (the authenticated request of one tenant) and returns a `Reply`.
"""

from __future__ import annotations

import random
import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .clock import normalize_instant
from .errors import ApiError, RowError
from .fields import Fields, blank, clean, merge, replace, require
from .model import Doc
from .paging import PageRequest, Params, page_body
from .settings import EmulatorUser
from .store import Cond, TenantView, before, child_of, contains, eq, has_property

__all__ = [
    "NO_BODY",
    "Call",
    "Filter",
    "Handler",
    "Reply",
    "Resource",
    "RowWriter",
    "by_date_before",
    "by_parent",
    "by_property",
    "by_search",
    "by_value",
    "create",
    "fetch",
    "list_page",
    "remove",
    "update",
    "upload",
    "upload_report",
    "upsert",
]

NO_BODY: Any = object()
"""The body of a request that sent none."""


@dataclass
class Call:
    """One authenticated API request, for one tenant, inside one store transaction."""

    db: TenantView
    user: EmulatorUser
    now: str
    """The request's wire stamp: creationDate/modificationDate of what it writes."""
    now_seconds: float
    seq: int
    """The request's number: later requests have larger numbers."""
    params: Params
    path_params: Mapping[str, str]
    body: Any = NO_BODY
    page_size_cap: int = 1000
    unordered_pages: bool = False
    analysis_delay_seconds: float = 0.0

    @property
    def tenant(self) -> str:
        """The tenant the request acts on."""
        return self.db.tenant

    @property
    def uuid(self) -> str:
        """The `{uuid}` of the item path."""
        return self.path_params["uuid"]

    def json_object(self) -> dict[str, Any]:
        """The body, which must be a JSON object."""
        if not isinstance(self.body, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return self.body

    def json_list(self) -> list[Any]:
        """The body of an upload, which must be a JSON list."""
        if not isinstance(self.body, list):
            raise ApiError(400, "an upload body must be a JSON list of objects")
        return self.body

    def page_request(self) -> PageRequest:
        """The page asked for, size capped."""
        return PageRequest.from_params(self.params, self.page_size_cap)


@dataclass
class Reply:
    """What a handler answers: a status and a JSON body (None: no body)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Reply]
Hook = Callable[[TenantView, Doc], None]
Filter = Callable[[Params, str], Cond | None]
"""Turns the query parameters (and the tenant) into one condition, or None when not asked."""


def _nothing(db: TenantView, doc: Doc) -> None:
    return None


def _as_is(db: TenantView, doc: Doc) -> Doc:
    return doc


def _no_key(doc: Doc) -> tuple[Any, ...] | None:
    return None


def _no_parent(doc: Doc) -> str | None:
    return None


@dataclass(frozen=True)
class Resource:
    """What the generic operations need to know about one kind of Blindata object."""

    kind: str
    label: str
    fields: Fields
    required: tuple[str, ...] = ()
    key: Callable[[Doc], tuple[Any, ...] | None] = _no_key
    describe_key: Callable[[Doc], str] = lambda doc: ""
    parent: Callable[[Doc], str | None] = _no_parent
    resolve: Hook = _nothing
    """Checks the references of a complete object (RowError) and may complete it."""
    present: Callable[[TenantView, Doc], Doc] = _as_is
    cascade: Hook = _nothing
    defaults: Mapping[str, Any] = field(default_factory=dict)
    read_only: Mapping[str, Any] = field(default_factory=dict)
    """Fields the server sets, with their value on a new object."""


def new_doc(res: Resource, values: Doc, now: str) -> Doc:
    """A new object of `res` from cleaned `values`."""
    doc: Doc = {"uuid": str(uuidlib.uuid4())}
    doc.update(blank(res.fields))
    doc.update(res.read_only)
    doc.update(res.defaults)
    doc.update(values)
    doc["creationDate"] = now
    doc["modificationDate"] = now
    return doc


def _apply_defaults(res: Resource, doc: Doc) -> None:
    for name, value in res.defaults.items():
        if doc.get(name) is None:
            doc[name] = value


def _conflict(db: TenantView, res: Resource, doc: Doc) -> Doc | None:
    key = res.key(doc)
    if key is None:
        return None
    other = db.find(res.kind, key)
    return other if other is not None and other["uuid"] != doc["uuid"] else None


def _conflict_message(res: Resource, doc: Doc, other: Doc) -> str:
    return f"a {res.label} {res.describe_key(doc)} already exists (uuid {other['uuid']})"


def fetch(db: TenantView, res: Resource, uuid: str) -> Doc:
    """The object `uuid`, or 404."""
    doc = db.get(res.kind, uuid)
    if doc is None:
        raise ApiError(404, f"no {res.label} with uuid {uuid} in this tenant")
    return doc


def create(db: TenantView, res: Resource, body: Any, now: str) -> Doc:
    """POST: a new object; 400 when invalid, 409 when its natural key is taken."""
    doc = _checked(db, res, lambda: new_doc(res, clean(body, res.fields), now))
    return db.insert(res.kind, doc, res.key(doc), res.parent(doc))


def update(db: TenantView, res: Resource, uuid: str, body: Any, now: str) -> Doc:
    """PUT: the body is the whole object; absent properties become null."""
    stored = fetch(db, res, uuid)

    def replaced() -> Doc:
        doc = replace(stored, clean(body, res.fields), res.fields)
        _apply_defaults(res, doc)
        return doc

    doc = _checked(db, res, replaced)
    doc["modificationDate"] = now
    return db.update(res.kind, doc, res.key(doc), res.parent(doc))


def _checked(db: TenantView, res: Resource, build: Callable[[], Doc]) -> Doc:
    """The doc ``build`` makes, once complete and resolved (else 400) and its key free (409)."""
    try:
        doc = build()
        require(doc, res.required)
        res.resolve(db, doc)
    except RowError as err:
        raise ApiError(400, str(err)) from None
    other = _conflict(db, res, doc)
    if other is not None:
        raise ApiError(409, _conflict_message(res, doc, other))
    return doc


def remove(db: TenantView, res: Resource, uuid: str) -> None:
    """DELETE: the object and what depends on it; 404 when unknown."""
    doc = fetch(db, res, uuid)
    res.cascade(db, doc)
    db.delete(res.kind, uuid)


def upsert(db: TenantView, res: Resource, row: Any, now: str) -> tuple[Doc, bool]:
    """One row of an upload: update the object with the row's natural key (or uuid), else create.

    Never blanks (see `fields.merge`); always refreshes `modificationDate`. Returns the object
    and whether it was created. Raises RowError for a bad row.
    """
    values = clean(row, res.fields)
    existing = db.get(res.kind, row.get("uuid")) if isinstance(row.get("uuid"), str) else None
    if existing is None:
        probe = new_doc(res, values, now)
        require(probe, res.required)
        res.resolve(db, probe)
        key = res.key(probe)
        existing = db.find(res.kind, key) if key is not None else None
        if existing is None:
            return db.insert(res.kind, probe, key, res.parent(probe)), True
    doc = merge(existing, values)
    require(doc, res.required)
    res.resolve(db, doc)
    other = _conflict(db, res, doc)
    if other is not None:
        raise RowError(_conflict_message(res, doc, other))
    doc["modificationDate"] = now
    return db.update(res.kind, doc, res.key(doc), res.parent(doc)), False


def upload_report(created: int, updated: int, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The upload response body."""
    total = created + updated + len(errors)
    return {
        "message": (f"{total} rows: {created} created, {updated} updated, {len(errors)} discarded"),
        "rowCreated": created,
        "rowUpdated": updated,
        "rowDiscarded": len(errors),
        "errors": errors,
    }


RowWriter = Callable[[TenantView, Resource, Any, str], tuple[Doc, bool]]


def upload(
    db: TenantView, res: Resource, rows: list[Any], now: str, write: RowWriter = upsert
) -> dict[str, Any]:
    """Apply every good row; report each bad row with its index and leave it out."""
    created = updated = 0
    errors: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        try:
            if not isinstance(row, dict):
                raise RowError(f"row must be a JSON object, got {type(row).__name__}")
            _, was_created = write(db, res, row, now)
        except RowError as err:
            errors.append({"message": str(err), "index": index})
            continue
        created += was_created
        updated += not was_created
    return upload_report(created, updated, errors)


def list_page(call: Call, res: Resource, filters: Sequence[Filter]) -> Reply:
    """GET on a collection: a Spring page of the objects matching the filters."""
    conds = [cond for build in filters if (cond := build(call.params, call.tenant)) is not None]
    request = call.page_request()
    total = call.db.count(res.kind, conds)
    if call.unordered_pages and not request.sort:  # EmulatorSettings.unordered_pages
        docs = call.db.select(res.kind, conds)
        random.Random(call.seq).shuffle(docs)
        docs = docs[request.offset : request.offset + request.size]
    else:
        docs = call.db.select(
            res.kind, conds, sort=request.sort, offset=request.offset, limit=request.size
        )
    return Reply(200, page_body([res.present(call.db, doc) for doc in docs], total, request))


# --- filter builders ------------------------------------------------------------------------


def by_value(param: str, path: str) -> Filter:
    """`?param=v`: the JSON value at `path` is v."""
    return lambda params, tenant: eq(path, value) if (value := params.get(param)) else None


def by_parent(param: str) -> Filter:
    """`?param=uuid`: the object's parent is uuid."""
    return lambda params, tenant: child_of(value) if (value := params.get(param)) else None


def by_search(param: str, sql_text: str) -> Filter:
    """`?param=text`: the SQL text expression `sql_text` contains text, ignoring case."""
    return lambda params, tenant: (
        contains(sql_text, value) if (value := params.get(param)) else None
    )


def by_date_before(param: str, path: str) -> Filter:
    """`?param=<date>`: the wire date at `path` is earlier; 400 when not a date."""

    def build(params: Params, tenant: str) -> Cond | None:
        value = params.get(param)
        if value is None:
            return None
        try:
            return before(path, normalize_instant(value))
        except ValueError as err:
            raise ApiError(400, f"query parameter {param}: {err}") from None

    return build


def by_property() -> Filter:
    """`?additionalPropertyName=n[&additionalPropertyValue=v]`."""

    def build(params: Params, tenant: str) -> Cond | None:
        name = params.get("additionalPropertyName")
        value = params.get("additionalPropertyValue")
        if name is None:
            if value is not None:
                raise ApiError(400, "additionalPropertyValue needs additionalPropertyName")
            return None
        return has_property(name, value)

    return build
