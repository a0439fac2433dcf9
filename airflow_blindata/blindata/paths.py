"""Every Blindata REST path the client calls, in one table.

Blindata publishes no OpenAPI file, so part of the contract is inferred
(``blindata-api.md``).
Each endpoint carries the mark of the contract: ``VERIFIED`` paths were seen in public client code
or on Blindata's help site; ``INFERRED`` paths follow the same conventions but must be checked
against a real tenant's API Docs. Correcting a path for everyone means editing this module only;
a tenant that serves a path elsewhere is corrected in its connection (``api_paths.py``), and
``apicheck.py`` says which paths a tenant serves.

Collection actions use a literal ``*`` in place of an id (``/api/v1/physical_entities/*/upload``);
``Endpoint.path`` never percent-encodes it, while it does encode the ids it substitutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote

__all__ = ["ENDPOINTS", "Endpoint", "Evidence"]


class Evidence(StrEnum):
    VERIFIED = "verified"
    INFERRED = "inferred"
    BEYOND = "not in the contract"
    """Called where a Blindata serves it, and done without where it does not (a bucket's
    update: ``sync.routines._grow``)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One operation of the API.

    ``idempotent`` says whether a request that may have reached the server can be sent again:
    reads, PUT, DELETE and natural-key upserts can; creating POSTs cannot (a retry after a lost
    response would try to create twice), so they are retried only when the request surely did
    not arrive (connection refused) or was refused unprocessed (429; and 503, which HTTP defines
    as a server unable to handle the request, for a create Blindata refuses twice:
    ``refuses_duplicates``). A gateway's 502, 503 or 504 may follow an effect, and then the
    caller looks the object up before creating it again (``create_or_find``).

    ``refuses_duplicates``: a create whose object has a natural key (a System's name, a check's
    code), so that the server answers a second one with 409 and the caller finds the first; a
    statement or a monitor has none, and a create sent twice makes two (a gateway answered 503
    after Blindata created the statement: a probe of a conforming server).
    """

    name: str
    method: str
    template: str
    evidence: Evidence
    filters: tuple[str, ...] = ()
    idempotent: bool = True
    refuses_duplicates: bool = True

    def path(self, **ids: str) -> str:
        """The request path with ``ids`` substituted (each percent-encoded, ``*`` kept literal)."""
        return self.template.format(**{key: quote(value, safe="") for key, value in ids.items()})


VER, INF, BEYOND = Evidence.VERIFIED, Evidence.INFERRED, Evidence.BEYOND
_PAGE = ("page", "size", "sort")


def _e(
    name: str,
    method: str,
    template: str,
    evidence: Evidence,
    filters: tuple[str, ...] = (),
    *,
    idempotent: bool = True,
    refuses_duplicates: bool = True,
) -> Endpoint:
    if method == "GET" and filters:
        filters = (*filters, *_PAGE)
    return Endpoint(name, method, template, evidence, filters, idempotent, refuses_duplicates)


_TABLE: tuple[Endpoint, ...] = (
    # authentication and identity
    _e("login", "POST", "/auth/login", VER),
    _e("users.me", "GET", "/api/v1/users/me", INF),
    # systems
    _e("systems.list", "GET", "/api/v1/systems", VER, ("search", "name")),
    _e("systems.create", "POST", "/api/v1/systems", VER, idempotent=False),
    _e("systems.get", "GET", "/api/v1/systems/{uuid}", VER),
    _e("systems.update", "PUT", "/api/v1/systems/{uuid}", VER),
    _e("systems.delete", "DELETE", "/api/v1/systems/{uuid}", VER),
    # physical entities
    _e(
        "physical_entities.list",
        "GET",
        "/api/v1/physical_entities",
        VER,
        (
            "systemUuid",
            "search",
            "schema",
            "name",
            "tableType",
            "additionalPropertyName",
            "additionalPropertyValue",
        ),
    ),
    _e("physical_entities.create", "POST", "/api/v1/physical_entities", INF, idempotent=False),
    _e("physical_entities.get", "GET", "/api/v1/physical_entities/{uuid}", INF),
    _e("physical_entities.update", "PUT", "/api/v1/physical_entities/{uuid}", INF),
    _e("physical_entities.delete", "DELETE", "/api/v1/physical_entities/{uuid}", INF),
    _e("physical_entities.upload", "POST", "/api/v1/physical_entities/*/upload", INF),
    _e("documentation.get", "GET", "/api/v1/physical_entities/{uuid}/documentation", INF),
    _e("documentation.put", "PUT", "/api/v1/physical_entities/{uuid}/documentation", INF),
    # physical fields
    _e(
        "physical_fields.list",
        "GET",
        "/api/v1/physical_fields",
        VER,
        (
            "systemUuid",
            "physicalEntitySchema",
            "physicalEntityName",
            "physicalFieldName",
            "physicalEntityUuid",
        ),
    ),
    _e("physical_fields.create", "POST", "/api/v1/physical_fields", INF, idempotent=False),
    _e("physical_fields.get", "GET", "/api/v1/physical_fields/{uuid}", INF),
    _e("physical_fields.update", "PUT", "/api/v1/physical_fields/{uuid}", INF),
    _e("physical_fields.delete", "DELETE", "/api/v1/physical_fields/{uuid}", INF),
    _e("physical_fields.upload", "POST", "/api/v1/physical_fields/*/upload", INF),
    # data flows
    _e(
        "dataflows.list",
        "GET",
        "/api/v1/dataflows",
        INF,
        (
            "scope",
            "fromSystemUuid",
            "toSystemUuid",
            "fromPhysicalEntityUuid",
            "toPhysicalEntityUuid",
            "modifiedBefore",
        ),
    ),
    _e("dataflows.upload", "POST", "/api/v1/dataflows/*/upload", INF),
    _e("dataflows.delete", "DELETE", "/api/v1/dataflows/{uuid}", INF),
    # system routines
    _e(
        "routines.list",
        "GET",
        "/api/v1/systems/routines",
        INF,
        ("systemUuid", "catalog", "schema", "name"),
    ),
    _e("routines.upload", "POST", "/api/v1/systems/routines/*/upload", INF),
    _e("routines.delete", "DELETE", "/api/v1/systems/routines/{uuid}", INF),
    # SQL lineage
    _e("query_buckets.list", "GET", "/api/v1/queryparser/buckets", INF, ("name",)),
    _e("query_buckets.create", "POST", "/api/v1/queryparser/buckets", INF, idempotent=False),
    _e("query_buckets.get", "GET", "/api/v1/queryparser/buckets/{uuid}", BEYOND),
    _e("query_buckets.update", "PUT", "/api/v1/queryparser/buckets/{uuid}", BEYOND),
    _e(
        "statements.list",
        "GET",
        "/api/v1/queryparser/statements",
        INF,
        ("bucketUuid", "routineUuid"),
    ),
    _e(
        "statements.create",
        "POST",
        "/api/v1/queryparser/statements",
        INF,
        idempotent=False,
        refuses_duplicates=False,
    ),
    _e("statements.update", "PUT", "/api/v1/queryparser/statements/{uuid}", INF),
    _e("statements.delete", "DELETE", "/api/v1/queryparser/statements/{uuid}", INF),
    _e("statements.analyze", "POST", "/api/v1/queryparser/statements/{uuid}/analyze", INF),
    # data quality
    _e("quality_suites.list", "GET", "/api/v1/data-quality/suites", VER, ("search",)),
    _e("quality_suites.create", "POST", "/api/v1/data-quality/suites", VER, idempotent=False),
    _e("quality_suites.get", "GET", "/api/v1/data-quality/suites/{uuid}", INF),
    _e("quality_suites.update", "PUT", "/api/v1/data-quality/suites/{uuid}", INF),
    _e("quality_suites.delete", "DELETE", "/api/v1/data-quality/suites/{uuid}", INF),
    _e("quality_suites.import", "POST", "/api/v1/data-quality/suites/*/import-objects", VER),
    _e(
        "quality_checks.list",
        "GET",
        "/api/v1/data-quality/checks",
        VER,
        ("code", "suiteUuid", "physicalEntityUuid"),
    ),
    _e("quality_checks.create", "POST", "/api/v1/data-quality/checks", VER, idempotent=False),
    _e("quality_checks.get", "GET", "/api/v1/data-quality/checks/{uuid}", VER),
    _e("quality_checks.update", "PUT", "/api/v1/data-quality/checks/{uuid}", VER),
    # a result's identity is (check, startedAt): sending it again updates it, so it is idempotent
    _e("quality_results.create", "POST", "/api/v1/data-quality/results", VER),
    _e("quality_results.list", "GET", "/api/v1/data-quality/results", INF, ("checkUuid",)),
    # profiling
    _e(
        "profiling_monitors.list",
        "GET",
        "/api/v1/profiling/monitors",
        INF,
        ("physicalEntityUuid", "name"),
    ),
    _e(
        "profiling_monitors.create",
        "POST",
        "/api/v1/profiling/monitors",
        INF,
        idempotent=False,
        refuses_duplicates=False,
    ),
    _e("profiling_records.upload", "POST", "/api/v1/profiling/records/*/upload", INF),
    _e(
        "profiling_records.list",
        "GET",
        "/api/v1/profiling/records",
        INF,
        ("monitorUuid", "metricCode"),
    ),
)

ENDPOINTS: dict[str, Endpoint] = {endpoint.name: endpoint for endpoint in _TABLE}
"""Every endpoint by name, e.g. ``ENDPOINTS["systems.list"]``."""
