"""``check --api``: does this Blindata instance serve every path the client may call?

Before the first sync, compare the instance's own OpenAPI description with every (method, path)
of ``paths.ENDPOINTS``, as ``api_paths`` moves them: the answer is one row per operation (path,
method, what uses it, verified or inferred, served or missing) and the missing ones by name.

Where the description comes from, in order: the file or URL the caller gives (``--openapi``);
else springdoc's ``GET /v3/api-docs``, ``/v3/api-docs.yaml`` and ``/v2/api-docs`` with the
connection's credentials. When none can be had, the result says why and, with ``probe``, the
instance is asked directly with safe requests only: ``GET`` of each list with ``size=1`` (and
of ``/users/me``), ``OPTIONS`` of the other paths (Spring answers with the ``Allow`` header);
404 and 405 are missing, anything else that does not prove the path is "not probed". Nothing is
ever written.
"""

from __future__ import annotations

import difflib
import json
import ssl
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from airflow_blindata.blindata.client import BlindataClient, RetryPolicy
from airflow_blindata.blindata.errors import (
    BlindataError,
    BlindataNotFoundError,
    BlindataStatusError,
)
from airflow_blindata.blindata.openapi import OpenApiError, ServedApi, parse_openapi
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint, Evidence
from airflow_blindata.redaction import redact_url
from airflow_blindata.tables import table

__all__ = [
    "DESCRIPTION_PATHS",
    "USED_BY",
    "ApiCheck",
    "ApiCheckRow",
    "PathStatus",
    "check_api",
    "render_api_check",
]

DESCRIPTION_PATHS = ("/v3/api-docs", "/v3/api-docs.yaml", "/v2/api-docs")
"""Where springdoc (and springfox before it) serve the instance's description."""
CHECK_RETRY = RetryPolicy(deadline=15.0, max_attempts=2, backoff_initial=0.5)
"""A check answers within seconds; a person waits for it."""
_NIL_UUID = "00000000-0000-0000-0000-000000000000"

_SNAPSHOT, _CLEANUP = "snapshot", "cleanup"
_TEST = "connection test"
CLIENT_LIBRARY_ONLY = "client library only"
USED_BY: dict[str, str] = {
    "login": "every call with auth_method login",
    "users.me": _TEST,
    "systems.list": f"{_SNAPSHOT} (server time), {_CLEANUP}",
    "systems.create": _SNAPSHOT,
    "systems.get": f"{_SNAPSHOT} (and a listed System read whole before a PUT)",
    "systems.update": _SNAPSHOT,
    "systems.delete": _CLEANUP,
    "physical_entities.list": f"{_SNAPSHOT}, {_CLEANUP}",
    "physical_entities.create": CLIENT_LIBRARY_ONLY,
    "physical_entities.get": f"{_CLEANUP} (optional: an entity read whole before a PUT)",
    "physical_entities.update": f"{_CLEANUP} (describedBy mark)",
    "physical_entities.delete": _CLEANUP,
    "physical_entities.upload": _SNAPSHOT,
    "documentation.get": _SNAPSHOT,
    "documentation.put": _SNAPSHOT,
    "physical_fields.list": f"{_SNAPSHOT}, {_CLEANUP}",
    "physical_fields.create": CLIENT_LIBRARY_ONLY,
    "physical_fields.get": CLIENT_LIBRARY_ONLY,
    "physical_fields.update": CLIENT_LIBRARY_ONLY,
    "physical_fields.delete": CLIENT_LIBRARY_ONLY,
    "physical_fields.upload": _SNAPSHOT,
    "dataflows.list": f"{_SNAPSHOT} (the flows of SQL analysis), {_CLEANUP}",
    "dataflows.upload": _SNAPSHOT,
    "dataflows.delete": _CLEANUP,
    "routines.list": f"{_SNAPSHOT}, {_CLEANUP}",
    "routines.upload": _SNAPSHOT,
    "routines.delete": _CLEANUP,
    "query_buckets.list": f"{_SNAPSHOT}, {_CLEANUP}",
    "query_buckets.create": _SNAPSHOT,
    "query_buckets.get": f"{_SNAPSHOT} (optional: a bucket listed without its Systems)",
    "query_buckets.update": f"{_SNAPSHOT} (optional: adds Systems to the query bucket)",
    "statements.list": f"{_SNAPSHOT}, {_CLEANUP}",
    "statements.create": _SNAPSHOT,
    "statements.update": _SNAPSHOT,
    "statements.delete": CLIENT_LIBRARY_ONLY,
    "statements.analyze": _SNAPSHOT,
    "quality_suites.list": _SNAPSHOT,
    "quality_suites.create": _SNAPSHOT,
    "quality_suites.get": CLIENT_LIBRARY_ONLY,
    "quality_suites.update": CLIENT_LIBRARY_ONLY,
    "quality_suites.delete": CLIENT_LIBRARY_ONLY,
    "quality_suites.import": _SNAPSHOT,
    "quality_checks.list": _SNAPSHOT,
    "quality_checks.create": CLIENT_LIBRARY_ONLY,
    "quality_checks.get": f"{_SNAPSHOT} (optional: a check read whole before a PUT)",
    "quality_checks.update": f"{_SNAPSHOT} (disable a check)",
    "quality_results.create": _SNAPSHOT,
    "quality_results.list": f"{_SNAPSHOT} (optional: a published run a late event adds to)",
    "profiling_monitors.list": _SNAPSHOT,
    "profiling_monitors.create": _SNAPSHOT,
    "profiling_records.upload": _SNAPSHOT,
    "profiling_records.list": CLIENT_LIBRARY_ONLY,
}
"""What of the provider calls each operation (``client library only``: nothing of the sync)."""
OPTIONAL: frozenset[str] = frozenset(
    {
        "query_buckets.get",
        "query_buckets.update",
        "physical_entities.get",
        "quality_checks.get",
        "quality_results.list",
    }
)
"""Operations the sync calls but does without where they are not served: the contract does
not name them (a bucket's Systems stay as created, counted ``bucketSystemsNotAdded``; an entity
or a check is PUT from its listing, ``SyncContext.as_stored``; the runs an older release
published are taken as whole, and a late result of a published run is reported, not posted)."""


class PathStatus(StrEnum):
    SERVED = "served"
    MISSING = "missing"
    NOT_PROBED = "not probed"


@dataclass(frozen=True)
class ApiCheckRow:
    """One operation of the contract on this instance."""

    operation: str
    method: str
    path: str
    """The path requested on this instance (the contract path, or where ``api_paths`` moves it)."""
    contract_path: str
    used_by: str
    evidence: Evidence
    status: PathStatus
    detail: str = ""
    close: str = ""
    """For a missing path: the path the description lists for the same method that is closest
    to it (``difflib``), to map in ``api_paths``; empty when none is close."""

    @property
    def required(self) -> bool:
        """Whether the provider fails without this operation."""
        return self.used_by != CLIENT_LIBRARY_ONLY and self.operation not in OPTIONAL


@dataclass
class ApiCheck:
    """The outcome of ``check_api``: where the answer comes from, and one row per operation.

    ``problem`` says why no description could be had (then ``rows`` is empty unless probed).
    ``connection`` is what the connection test said (``ok``, message), when it was made: the
    description is read without credentials, so that the paths alone never say that a wrong
    key or tenant works.
    """

    url: str
    source: str = ""
    rows: list[ApiCheckRow] = field(default_factory=list)
    problem: str | None = None
    connection: tuple[bool, str] | None = None

    @property
    def missing(self) -> list[ApiCheckRow]:
        """Missing paths that the provider calls: the sync or the connection test would fail."""
        return [row for row in self.rows if row.status is PathStatus.MISSING and row.required]

    @property
    def missing_unused(self) -> list[ApiCheckRow]:
        """Missing paths that only the client library offers, or that the sync does without:
        reported, not failing."""
        return [row for row in self.rows if row.status is PathStatus.MISSING and not row.required]

    @property
    def paths_served(self) -> bool:
        """Every path the provider calls is served (or, probing, none is proved missing)."""
        return bool(self.rows) and not self.missing

    @property
    def ok(self) -> bool:
        """Every path the provider calls is served and, when it was tested, the connection
        works (its URL, credentials and tenant)."""
        return self.paths_served and (self.connection is None or self.connection[0])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (an XCom, ``--format json``)."""
        connection = self.connection
        return {
            "url": self.url,
            "source": self.source,
            "problem": self.problem,
            "ok": self.ok,
            "pathsServed": self.paths_served,
            "connection": (
                None if connection is None else {"ok": connection[0], "message": connection[1]}
            ),
            "missing": [f"{row.method} {row.path}" for row in self.missing],
            "missing_unused": [f"{row.method} {row.path}" for row in self.missing_unused],
            "rows": [
                {**asdict(row), "evidence": str(row.evidence), "status": str(row.status)}
                for row in self.rows
            ],
        }


# -- the description -----------------------------------------------------------------------------


def _from_instance(client: BlindataClient) -> tuple[str, str] | str:
    """(source, text) of the first description the instance serves, or why none could be had."""
    tried = []
    for path in DESCRIPTION_PATHS:
        endpoint = Endpoint(f"openapi {path}", "GET", path, Evidence.VERIFIED)
        try:
            response = client.send(endpoint, retry=CHECK_RETRY)
        except BlindataError as exc:
            tried.append(f"GET {path}: {_short(exc)}")
            continue
        try:
            parse_openapi(response.content)
        except OpenApiError as exc:
            tried.append(f"GET {path}: not an OpenAPI description ({exc})")
            continue
        return f"GET {path}", response.text
    return "no OpenAPI description at " + client.shown_url + ": " + "; ".join(tried)


def _short(exc: BlindataError) -> str:
    if isinstance(exc, BlindataStatusError):
        return f"{exc.status}" + (f" ({exc.server_message})" if exc.server_message else "")
    return str(exc)


def load_description(
    source: str, client: BlindataClient, *, verify: bool | str | ssl.SSLContext = True
) -> str:
    """The text of ``--openapi``: a file, or a URL (through the client, with its credentials,
    when it is on the instance itself)."""
    if source.startswith(("http://", "https://")):
        if source.startswith(client.base_url + "/"):
            path = source.removeprefix(client.base_url)
            endpoint = Endpoint(
                "openapi", "GET", path.replace("{", "{{").replace("}", "}}"), Evidence.VERIFIED
            )
            return client.send(endpoint, retry=CHECK_RETRY).text
        try:
            response = httpx.get(
                source, verify=verify, timeout=client.timeout, follow_redirects=True
            )
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise OpenApiError(
                f"cannot read {redact_url(source)}: {type(exc).__name__}"
                + (f" {exc.response.status_code}" if isinstance(exc, httpx.HTTPStatusError) else "")
            ) from None
        return response.text
    try:
        return Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise OpenApiError(f"cannot read {source}: {exc.strerror or exc}") from None


# -- the comparison ------------------------------------------------------------------------------


def _row(
    client: BlindataClient, name: str, endpoint: Endpoint, status: PathStatus, detail: str = ""
) -> ApiCheckRow:
    return ApiCheckRow(
        operation=name,
        method=endpoint.method,
        path=client.api_paths.served(endpoint.template),
        contract_path=endpoint.template,
        used_by=USED_BY.get(name, CLIENT_LIBRARY_ONLY),
        evidence=endpoint.evidence,
        status=status,
        detail=detail,
    )


def _as_described(client: BlindataClient, path: str) -> list[str]:
    """The paths under which a description may list ``path``.

    The description's paths carry its servers' base path (a servlet context path, a proxy's
    prefix: ``servers[].url`` of ``https://corp.example.com/blindata``), and so does the URL the
    client calls (``https://corp.example.com/blindata`` + ``/api/v1/...``): with a URL that has a
    path, the path is looked for under it, and as is for a description that names no base path
    (a proxy that strips its prefix before the instance sees it)."""
    prefix = urlsplit(client.base_url).path.rstrip("/")
    return [prefix + path, path] if prefix else [path]


CLOSE_CUTOFF = 0.8
"""How alike a described path must be to a missing one to be named in its place
(``difflib.SequenceMatcher`` ratio): ``/api/v1/lineage/dataflows/*/upload`` for
``/api/v1/dataflows/*/upload`` (0.87), not ``/api/v1/systems`` for ``/api/v1/users/me``."""


def _close(client: BlindataClient, served: ServedApi, method: str, path: str) -> str:
    """The path of ``method`` in the description closest to ``path``, as ``api_paths`` names
    it (without the URL's base path); empty when none is close enough."""
    prefix = urlsplit(client.base_url).path.rstrip("/")
    paths = sorted(
        {
            found.removeprefix(prefix) if prefix and found.startswith(prefix + "/") else found
            for verb, found in served.operations
            if verb == method
        }
    )
    paths = [found for found in paths if found != path]
    matches = difflib.get_close_matches(path, paths, n=1, cutoff=CLOSE_CUTOFF)
    return matches[0] if matches else ""


def compare(client: BlindataClient, served: ServedApi) -> list[ApiCheckRow]:
    """One row per operation of the table: served by the description, or missing."""
    rows = []
    for name, endpoint in ENDPOINTS.items():
        path = client.api_paths.served(endpoint.template)
        candidates = _as_described(client, path)
        found = next(
            (hit for hit in (served.find(endpoint.method, c) for c in candidates) if hit), None
        )
        if found is not None:
            detail = "" if found in candidates else f"as {found}"
            rows.append(_row(client, name, endpoint, PathStatus.SERVED, detail))
            continue
        others = sorted({method for c in candidates for method in served.methods_at(c)})
        detail = f"path served for {', '.join(others)} only" if others else "path not described"
        close = _close(client, served, endpoint.method, path)
        if close:
            detail += f"; served instead? {endpoint.method} {close}"
        row = _row(client, name, endpoint, PathStatus.MISSING, detail)
        rows.append(replace(row, close=close))
    return rows


# -- probing -------------------------------------------------------------------------------------


def _probe_one(client: BlindataClient, name: str, endpoint: Endpoint) -> ApiCheckRow:
    ids = {key: _NIL_UUID for key in ("uuid",) if "{uuid}" in endpoint.template}
    if endpoint.method == "GET" and "{" not in endpoint.template:
        params = {"size": 1} if "size" in endpoint.filters else None
        try:
            client.send(endpoint, params=params, retry=CHECK_RETRY)
        except BlindataStatusError as exc:
            return _probed_error(client, name, endpoint, exc, f"GET → {exc.status}")
        except BlindataError as exc:
            return _row(client, name, endpoint, PathStatus.NOT_PROBED, _short(exc))
        return _row(client, name, endpoint, PathStatus.SERVED, "GET → 2xx")
    options = replace(endpoint, method="OPTIONS")
    try:
        response = client.send(options, ids=ids, retry=CHECK_RETRY)
    except BlindataStatusError as exc:
        if isinstance(exc, BlindataNotFoundError):
            return _row(client, name, endpoint, PathStatus.MISSING, "OPTIONS → 404")
        return _row(client, name, endpoint, PathStatus.NOT_PROBED, f"OPTIONS → {exc.status}")
    except BlindataError as exc:
        return _row(client, name, endpoint, PathStatus.NOT_PROBED, _short(exc))
    allow = {m.strip().upper() for m in response.headers.get("Allow", "").split(",") if m.strip()}
    if not allow:
        return _row(client, name, endpoint, PathStatus.NOT_PROBED, "OPTIONS → no Allow header")
    if endpoint.method in allow:
        return _row(client, name, endpoint, PathStatus.SERVED, "OPTIONS → Allow")
    shown = ", ".join(sorted(allow))
    return _row(client, name, endpoint, PathStatus.MISSING, f"OPTIONS → Allow: {shown}")


def _probed_error(
    client: BlindataClient, name: str, endpoint: Endpoint, exc: BlindataStatusError, detail: str
) -> ApiCheckRow:
    status = PathStatus.MISSING if exc.status in (404, 405) else PathStatus.NOT_PROBED
    return _row(client, name, endpoint, status, detail)


def probe(client: BlindataClient) -> list[ApiCheckRow]:
    """Ask the instance about each operation with safe requests only (``GET``, ``OPTIONS``)."""
    return [_probe_one(client, name, endpoint) for name, endpoint in ENDPOINTS.items()]


# -- the whole check -----------------------------------------------------------------------------


def check_api(
    client: BlindataClient,
    *,
    openapi: str | None = None,
    probe_paths: bool = False,
    verify: bool | str | ssl.SSLContext = True,
) -> ApiCheck:
    """Compare what the instance serves with every path the client may call.

    ``openapi`` is a file or URL to read the description from instead of the instance;
    ``probe_paths`` asks the instance directly when no description can be had.
    """
    result = ApiCheck(url=client.shown_url)
    text: str | None = None
    if openapi is not None:
        try:
            text = load_description(openapi, client, verify=verify)
            result.source = redact_url(openapi) if "://" in openapi else openapi
        except BlindataError as exc:
            result.problem = f"cannot read the description {redact_url(openapi)}: {exc}"
    else:
        found = _from_instance(client)
        if isinstance(found, tuple):
            result.source, text = found
        else:
            result.problem = found
    if text is not None:
        try:
            result.rows = compare(client, parse_openapi(text))
            return result
        except OpenApiError as exc:
            result.problem = f"{result.source or openapi} is not an OpenAPI description: {exc}"
    if probe_paths:
        result.source = "probe (GET of lists with size=1, OPTIONS of the other paths)"
        result.rows = probe(client)
    return result


# -- the table -----------------------------------------------------------------------------------


def render_api_check(result: ApiCheck, *, shown: Callable[[str], str] = str) -> str:
    """The table a person reads, then the verdict naming every missing path."""
    lines = [f"Blindata at {result.url}"]
    if result.source:
        lines.append(f"description: {result.source}")
    if result.problem:
        lines.append(shown(result.problem))
    if result.rows:
        lines.append(
            table(
                ("path", "method", "used by", "contract", "status", "detail"),
                (
                    (
                        row.path
                        + (
                            f" (contract {row.contract_path})"
                            if row.path != row.contract_path
                            else ""
                        ),
                        row.method,
                        row.used_by,
                        row.evidence,
                        row.status,
                        row.detail,
                    )
                    for row in result.rows
                ),
                max_cell=None,
            )
        )
    missing, unused = result.missing, result.missing_unused
    if unused:
        lines.append(
            f"{len(unused)} path(s) the provider can do without are missing (only the client "
            "library offers them, or the sync goes on without them):"
        )
        lines.extend(f"  {row.method} {row.path} ({row.operation})" for row in unused)
    if missing:
        lines.append(f"{len(missing)} path(s) the provider calls are missing on this instance:")
        lines.extend(
            f"  {row.method} {row.path} ({row.operation}; {row.used_by})" for row in missing
        )
        lines.append(
            "Correct a path with api_paths in the connection's extra "
            "(docs/connection.md#when-a-path-differs)."
        )
        close = {row.contract_path: row.close for row in missing if row.close}
        if close:
            lines.append(
                "The description lists close paths: if they are the same operations, "
                f"api_paths {json.dumps(close, sort_keys=True)}"
            )
    elif result.rows and not result.problem:
        inferred = sum(1 for row in result.rows if row.evidence is Evidence.INFERRED)
        lines.append(
            f"Every path the provider calls is served ({len(result.rows)} operations, "
            f"{inferred} of them inferred by the contract)."
        )
    elif result.rows:
        unproved = sum(1 for row in result.rows if row.status is PathStatus.NOT_PROBED)
        lines.append(f"No path proved missing; {unproved} operation(s) could not be probed.")
    elif result.problem:
        lines.append(
            "Give the description with --openapi FILE_OR_URL (the instance's API Docs), or ask "
            "the instance directly with --probe (safe requests only: GET of lists, OPTIONS)."
        )
    if result.connection is not None:
        lines.append(f"Connection: {shown(result.connection[1])}")
    return "\n".join(lines) + "\n"
