"""The resources of the contract as typed collections: ``client.api.systems.list(name="DWH")``.

Each collection is a few lines: its model, the prefix of its endpoints in ``paths.ENDPOINTS``, and
the operations Blindata offers for it (mixins). Filters are keyword arguments named as on the wire
(``systemUuid=...``) and are checked against the endpoint's declared filters, so a typo fails at
once instead of silently listing everything.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar
from urllib.parse import unquote

import httpx

from airflow_blindata.blindata.errors import (
    BlindataConfigError,
    BlindataNotFoundError,
    BlindataStatusError,
)
from airflow_blindata.blindata.models import (
    CurrentUser,
    DataFlow,
    Documentation,
    MetricRecord,
    PhysicalEntity,
    PhysicalField,
    ProfilingMonitor,
    QualityCheck,
    QualityImport,
    QualityImportResult,
    QualityResult,
    QualitySuite,
    QueryBucket,
    QueryStatement,
    System,
    SystemRoutine,
    WireModel,
    uuid_case,
)
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint

if TYPE_CHECKING:
    from airflow_blindata.blindata.client import BlindataClient, UploadReport

__all__ = ["Resources"]

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=WireModel)


class _Collection(Generic[ModelT]):
    prefix: ClassVar[str]
    model: type[ModelT]

    def __init__(self, client: BlindataClient) -> None:
        self._client = client

    def _endpoint(self, operation: str) -> Endpoint:
        return ENDPOINTS[f"{self.prefix}.{operation}"]


class _Listable(_Collection[ModelT]):
    parents: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """The filters that name what an object belongs to (its System, suite, bucket, scope), each
    with where the object holds that reference: ``list`` leaves out an object that holds
    another (``_belonging``)."""

    def list(self, *, page_size: int | None = None, **filters: Any) -> Iterator[ModelT]:
        """Every object matching ``filters``, fetched page by page as the iterator advances."""
        kwargs = {"page_size": page_size} if page_size else {}
        endpoint = self._endpoint("list")
        listing = self._client.iter_pages(endpoint, self.model, params=filters, **kwargs)
        asked = {
            name: (path, str(filters[name]))
            for name, path in self.parents.items()
            if filters.get(name) not in (None, "")
        }
        return _belonging(listing, asked, endpoint.name) if asked else listing

    def first(self, **filters: Any) -> ModelT | None:
        """The first object matching ``filters``, or ``None``."""
        return next(iter(self.list(page_size=1, **filters)), None)


def _belonging(
    listing: Iterator[ModelT], asked: Mapping[str, tuple[tuple[str, ...], str]], operation: str
) -> Iterator[ModelT]:
    """The objects of ``listing`` that belong where the filters ``asked`` say.

    A server that ignores a filter it does not know, or matches it loosely (a scope as a prefix:
    ``ol:ns|job`` also matches ``ol:ns|job_v2``), answers objects of others; a cleanup that took
    them for its own would disable or remove them. An object that does not hold the reference
    (the server left it out of its answer) is kept: only a different one proves a stranger."""
    left_out = 0
    for item in listing:
        if all(_held(item, path) in (None, wanted) for path, wanted in asked.values()):
            yield item
        else:
            left_out += 1
    if left_out:
        log.warning(
            "%s answered %d object(s) that do not match its filters %s: left out",
            operation,
            left_out,
            ", ".join(sorted(asked)),
        )


def _held(item: object, path: tuple[str, ...]) -> str | None:
    """The reference at ``path`` in ``item`` (``("system", "uuid")``), or ``None``."""
    value: Any = item
    for name in path:
        value = getattr(value, name, None)
        if value is None:
            return None
    return value if isinstance(value, str) else None


class _Gettable(_Collection[ModelT]):
    def get(self, uuid: str) -> ModelT:
        return self._client.call(self._endpoint("get"), self.model, ids={"uuid": uuid})


class _Creatable(_Collection[ModelT]):
    def create(self, obj: ModelT) -> ModelT:
        """Create ``obj``; ``BlindataConflictError`` when its natural key exists.

        The contract names the status of most creates (201) and not their body: an answer
        without one gives back ``obj`` as sent, with the uuid of the ``Location`` the server
        named, else with none (``uuid is None``): the caller then finds the object by its
        natural key, as after a lost answer.
        """
        return self._client.call(
            self._endpoint("create"),
            self.model,
            json=obj.to_wire(),
            empty=lambda response: obj.model_copy(update={"uuid": created_uuid(response)}),
            unnamed=lambda response, data: _as_sent(obj, response, data),
        )


def _as_sent(obj: ModelT, response: httpx.Response, data: Any) -> ModelT:
    """``obj`` as sent, with the uuid that an answer which is not the object (a summary, whose
    body the contract does not name) gives, in its body or its ``Location``."""
    uuid = data.get("uuid") if isinstance(data, dict) else None
    if not isinstance(uuid, str) or not uuid.strip():
        uuid = created_uuid(response)
    return obj.model_copy(update={"uuid": uuid_case(uuid) if uuid else None})


def created_uuid(response: httpx.Response) -> str | None:
    """The uuid of the object a create made, from the answer's ``Location``
    (``<the path posted to>/<uuid>``), or ``None`` when it names none."""
    location = response.headers.get("Location")
    if not location:
        return None
    posted = response.request.url.path.rstrip("/") + "/"
    path = response.request.url.join(location).path
    if not path.startswith(posted):
        return None
    uuid = unquote(path[len(posted) :].strip("/"))
    return uuid_case(uuid) if uuid and "/" not in uuid else None


class _Updatable(_Collection[ModelT]):
    def update(self, obj: ModelT) -> ModelT:
        uuid = getattr(obj, "uuid", None)
        if not uuid:
            raise BlindataConfigError(f"cannot update a {self.model.__name__} without a uuid")
        # A PUT replaces the object with the body: an answer without one (204) means just that.
        return self._client.call(
            self._endpoint("update"),
            self.model,
            ids={"uuid": uuid},
            json=obj.to_wire(),
            empty=lambda _: obj,
        )


class _Deletable(_Collection[ModelT]):
    def delete(self, uuid: str) -> None:
        self._client.send(self._endpoint("delete"), ids={"uuid": uuid})


class _Uploadable(_Collection[ModelT]):
    def upload(self, rows: Iterable[ModelT], *, batch_size: int | None = None) -> UploadReport:
        """Upsert ``rows`` by natural key, in batches; see ``BlindataClient.upload``."""
        endpoint = self._endpoint("upload")
        if batch_size:
            return self._client.upload(endpoint, rows, batch_size=batch_size)
        return self._client.upload(endpoint, rows)


class Systems(
    _Listable[System], _Gettable[System], _Creatable[System], _Updatable[System], _Deletable[System]
):
    prefix = "systems"
    model = System


class PhysicalEntities(
    _Listable[PhysicalEntity],
    _Gettable[PhysicalEntity],
    _Creatable[PhysicalEntity],
    _Updatable[PhysicalEntity],
    _Deletable[PhysicalEntity],
    _Uploadable[PhysicalEntity],
):
    prefix = "physical_entities"
    model = PhysicalEntity
    parents = {"systemUuid": ("system", "uuid")}

    def get_documentation(self, uuid: str) -> Documentation | None:
        """The entity's Markdown documentation, or ``None`` when it has none: the contract
        answers 404, and a server that answers 204, or 200 with no content, says the same."""
        try:
            document = self._client.call(
                ENDPOINTS["documentation.get"],
                Documentation,
                ids={"uuid": uuid},
                empty=lambda _response: Documentation(),
            )
        except BlindataNotFoundError:
            return None
        return document if document.content else None

    def put_documentation(self, uuid: str, content: str) -> None:
        body = Documentation(content=content).to_wire()
        self._client.send(ENDPOINTS["documentation.put"], ids={"uuid": uuid}, json=body)


class PhysicalFields(
    _Listable[PhysicalField],
    _Gettable[PhysicalField],
    _Creatable[PhysicalField],
    _Updatable[PhysicalField],
    _Deletable[PhysicalField],
    _Uploadable[PhysicalField],
):
    prefix = "physical_fields"
    model = PhysicalField
    parents = {
        "physicalEntityUuid": ("physical_entity", "uuid"),
        "systemUuid": ("physical_entity", "system", "uuid"),
    }


class DataFlows(_Listable[DataFlow], _Deletable[DataFlow], _Uploadable[DataFlow]):
    prefix = "dataflows"
    model = DataFlow
    parents = {
        "scope": ("scope",),
        "fromSystemUuid": ("from_system", "uuid"),
        "toSystemUuid": ("to_system", "uuid"),
        "fromPhysicalEntityUuid": ("from_physical_entity", "uuid"),
        "toPhysicalEntityUuid": ("to_physical_entity", "uuid"),
    }


class Routines(_Listable[SystemRoutine], _Deletable[SystemRoutine], _Uploadable[SystemRoutine]):
    prefix = "routines"
    model = SystemRoutine
    parents = {"systemUuid": ("system", "uuid")}


class QueryBuckets(
    _Listable[QueryBucket],
    _Gettable[QueryBucket],
    _Creatable[QueryBucket],
    _Updatable[QueryBucket],
):
    prefix = "query_buckets"
    model = QueryBucket


class Statements(
    _Listable[QueryStatement],
    _Creatable[QueryStatement],
    _Updatable[QueryStatement],
    _Deletable[QueryStatement],
):
    prefix = "statements"
    model = QueryStatement
    parents = {"bucketUuid": ("query_bucket", "uuid"), "routineUuid": ("routine", "uuid")}

    def analyze(self, uuid: str) -> None:
        """Ask for the analysis; it runs asynchronously (``analysisStatus`` starts ``PENDING``)."""
        self._client.send(self._endpoint("analyze"), ids={"uuid": uuid})


class QualitySuites(
    _Listable[QualitySuite],
    _Gettable[QualitySuite],
    _Creatable[QualitySuite],
    _Updatable[QualitySuite],
    _Deletable[QualitySuite],
):
    prefix = "quality_suites"
    model = QualitySuite

    def import_objects(self, body: QualityImport, *, cleanup: bool = False) -> QualityImportResult:
        """Upsert a suite and its checks by code; ``cleanup`` disables the suite's other checks.

        An import refused as too large (413: the body is over what the server or its proxy
        accepts) is sent again as two imports of half the checks each, until each fits, and
        their answers are added up (row errors keep their index in ``body``). Not with
        ``cleanup``: each half would disable the checks of the other.
        """
        endpoint = self._endpoint("import")
        params = {"cleanup": "true"} if cleanup else {}
        try:
            return self._client.call(
                endpoint, QualityImportResult, params=params, json=body.to_wire()
            )
        except BlindataStatusError as exc:
            checks = body.quality_checks
            if not exc.too_large or cleanup or len(checks) < 2:
                raise
        half = len(checks) // 2
        first = self.import_objects(body.model_copy(update={"quality_checks": checks[:half]}))
        second = self.import_objects(body.model_copy(update={"quality_checks": checks[half:]}))
        shifted = [
            error.model_copy(update={"index": error.index + half}) for error in second.errors
        ]
        counted = first.counted and second.counted  # else the sum would claim counts
        return QualityImportResult(
            message=second.message,
            row_created=first.row_created + second.row_created if counted else None,
            row_updated=first.row_updated + second.row_updated if counted else None,
            row_discarded=first.row_discarded + second.row_discarded if counted else None,
            quality_suite_uuid=second.quality_suite_uuid or first.quality_suite_uuid,
            quality_checks_uuids=[*first.quality_checks_uuids, *second.quality_checks_uuids],
            errors=[*first.errors, *shifted],
        )


class QualityChecks(
    _Listable[QualityCheck],
    _Gettable[QualityCheck],
    _Creatable[QualityCheck],
    _Updatable[QualityCheck],
):
    prefix = "quality_checks"
    model = QualityCheck
    parents = {"code": ("code",), "suiteUuid": ("quality_suite", "uuid")}


class QualityResults(_Listable[QualityResult], _Creatable[QualityResult]):
    """Results; a second result with the same (check, startedAt) updates the first."""

    prefix = "quality_results"
    model = QualityResult
    parents = {"checkUuid": ("quality_check", "uuid")}

    def create(self, obj: QualityResult) -> QualityResult:
        """Post ``obj``; the contract names the answer's status (201), not its body: an answer
        without one gives back ``obj`` as sent."""
        return self._client.call(
            self._endpoint("create"),
            self.model,
            json=obj.to_wire(),
            empty=lambda _: obj,
            unnamed=lambda response, data: _as_sent(obj, response, data),
        )


class ProfilingMonitors(_Listable[ProfilingMonitor], _Creatable[ProfilingMonitor]):
    prefix = "profiling_monitors"
    model = ProfilingMonitor
    parents = {"physicalEntityUuid": ("physical_entity", "uuid")}


class MetricRecords(_Listable[MetricRecord], _Uploadable[MetricRecord]):
    prefix = "profiling_records"
    model = MetricRecord
    parents = {"monitorUuid": ("monitor", "uuid"), "metricCode": ("metric_code",)}


class Resources:
    """Every resource of the contract, bound to one client."""

    def __init__(self, client: BlindataClient) -> None:
        self._client = client
        self.systems = Systems(client)
        self.physical_entities = PhysicalEntities(client)
        self.physical_fields = PhysicalFields(client)
        self.dataflows = DataFlows(client)
        self.routines = Routines(client)
        self.query_buckets = QueryBuckets(client)
        self.statements = Statements(client)
        self.quality_suites = QualitySuites(client)
        self.quality_checks = QualityChecks(client)
        self.quality_results = QualityResults(client)
        self.profiling_monitors = ProfilingMonitors(client)
        self.metric_records = MetricRecords(client)

    def me(self) -> CurrentUser:
        """Who the credentials belong to; proves URL, credentials and tenant in one call."""
        return self._client.call(ENDPOINTS["users.me"], CurrentUser)
