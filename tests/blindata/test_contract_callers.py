"""The contract, both ways: every operation of the path table is called through the client
against the emulator over real HTTP, and the emulator answers it with success.

``CALLERS`` holds one caller per operation of ``paths.ENDPOINTS``; the test enumerates the
table, so a path added without a caller fails here with its name. Each caller goes through
``client.api`` (the resources the sync uses) and may call other operations to set up what it
needs; the check reads the emulator's request log: a 2xx answer to the operation's method and
path. The other direction: the emulator mounts every path of the table (below), and describes
each in its ``/v3/api-docs`` (``test_api_check``: ``check --api`` finds every path served).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import count
from typing import Any

import httpx
import pytest
from blindata_emulator.routes import ROUTES

from airflow_blindata.blindata import (
    ENDPOINTS,
    ApiKeyCredentials,
    BlindataClient,
    Endpoint,
    LoginCredentials,
    RetryPolicy,
)
from airflow_blindata.blindata.models import (
    DataFlow,
    MetricRecord,
    PhysicalEntity,
    PhysicalEntityRef,
    PhysicalField,
    ProfilingMonitor,
    QualityCheck,
    QualityImport,
    QualityResult,
    QualitySuite,
    QueryBucket,
    QueryStatement,
    Ref,
    System,
    SystemRoutine,
)
from tests.helpers import API_KEY, HUMAN, PASSWORD, TENANT, USER

pytestmark = pytest.mark.integration

FAST = RetryPolicy(deadline=5.0, max_attempts=2, backoff_initial=0.05)
_names = count(1)
Caller = Callable[[BlindataClient], object]


def name(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def system(c: BlindataClient) -> Ref:
    return Ref(uuid=c.api.systems.create(System(name=name("system"))).uuid or "")


def entity(c: BlindataClient) -> PhysicalEntity:
    created = PhysicalEntity(system=system(c), schema="sales", name=name("orders"))
    return c.api.physical_entities.create(created)


def field(c: BlindataClient) -> Any:
    owner = entity(c)
    return c.api.physical_fields.create(
        PhysicalField(physical_entity=PhysicalEntityRef(uuid=owner.uuid), name=name("id"))
    )


def flow(c: BlindataClient) -> DataFlow:
    source, target = system(c), system(c)
    row = DataFlow(name=name("flow"), scope="contract", from_system=source, to_system=target)
    c.api.dataflows.upload([row])
    return next(c.api.dataflows.list(scope="contract", fromSystemUuid=source.uuid))


def routine(c: BlindataClient) -> SystemRoutine:
    owner = system(c)
    c.api.routines.upload([SystemRoutine(system=owner, schema="etl", name="load")])
    return next(c.api.routines.list(systemUuid=owner.uuid))


def bucket(c: BlindataClient) -> QueryBucket:
    return c.api.query_buckets.create(QueryBucket(name=name("bucket")))


def statement(c: BlindataClient) -> QueryStatement:
    wanted = QueryStatement(
        query_bucket=Ref(uuid=bucket(c).uuid or ""), name="s", query_text="select 1"
    )
    return c.api.statements.create(wanted)


def suite(c: BlindataClient) -> QualitySuite:
    return c.api.quality_suites.create(QualitySuite(code=name("suite"), name="Suite"))


def check(c: BlindataClient) -> QualityCheck:
    owner = Ref(uuid=suite(c).uuid or "")
    return c.api.quality_checks.create(
        QualityCheck(code=name("check"), name="C", quality_suite=owner)
    )


def monitor(c: BlindataClient) -> ProfilingMonitor:
    owner = Ref(uuid=entity(c).uuid or "")
    return c.api.profiling_monitors.create(ProfilingMonitor(name="m", physical_entity=owner))


def record(c: BlindataClient) -> MetricRecord:
    now = datetime.now(UTC)
    return MetricRecord(
        monitor=Ref(uuid=monitor(c).uuid or ""), metric_code="rowCount", value=3, timestamp=now
    )


def result(c: BlindataClient) -> QualityResult:
    now = datetime.now(UTC)
    owner = Ref(uuid=check(c).uuid or "")
    return QualityResult(quality_check=owner, metric=1, total_elements=1, started_at=now)


def _documented(c: BlindataClient) -> str | None:
    uuid = entity(c).uuid
    c.api.physical_entities.put_documentation(uuid or "", "# Orders")
    return uuid


def renamed(obj: Any, **changes: Any) -> Any:
    return obj.model_copy(update=changes)


CALLERS: dict[str, Caller] = {
    "login": lambda c: None,  # see client(): the login client logs in on its first call
    "users.me": lambda c: c.api.me(),
    "systems.list": lambda c: list(c.api.systems.list(name="x")),
    "systems.create": system,
    "systems.get": lambda c: c.api.systems.get(system(c).uuid),
    "systems.update": lambda c: c.api.systems.update(
        renamed(c.api.systems.get(system(c).uuid), description="d")
    ),
    "systems.delete": lambda c: c.api.systems.delete(system(c).uuid),
    "physical_entities.list": lambda c: list(c.api.physical_entities.list(schema="sales")),
    "physical_entities.create": entity,
    "physical_entities.get": lambda c: c.api.physical_entities.get(entity(c).uuid or ""),
    "physical_entities.update": lambda c: c.api.physical_entities.update(
        renamed(entity(c), description="d")
    ),
    "physical_entities.delete": lambda c: c.api.physical_entities.delete(entity(c).uuid or ""),
    "physical_entities.upload": lambda c: c.api.physical_entities.upload(
        [PhysicalEntity(system=system(c), schema="s", name="t")]
    ),
    "documentation.get": lambda c: c.api.physical_entities.get_documentation(_documented(c) or ""),
    "documentation.put": lambda c: _documented(c),
    "physical_fields.list": lambda c: list(c.api.physical_fields.list(physicalFieldName="id")),
    "physical_fields.create": field,
    "physical_fields.get": lambda c: c.api.physical_fields.get(field(c).uuid),
    "physical_fields.update": lambda c: c.api.physical_fields.update(
        renamed(field(c), description="d")
    ),
    "physical_fields.delete": lambda c: c.api.physical_fields.delete(field(c).uuid),
    "physical_fields.upload": lambda c: c.api.physical_fields.upload(
        [PhysicalField(physical_entity=PhysicalEntityRef(uuid=entity(c).uuid), name="c")]
    ),
    "dataflows.list": lambda c: list(c.api.dataflows.list(scope="contract")),
    "dataflows.upload": flow,
    "dataflows.delete": lambda c: c.api.dataflows.delete(flow(c).uuid or ""),
    "routines.list": lambda c: list(c.api.routines.list(name="load")),
    "routines.upload": routine,
    "routines.delete": lambda c: c.api.routines.delete(routine(c).uuid or ""),
    "query_buckets.list": lambda c: list(c.api.query_buckets.list(name="x")),
    "query_buckets.create": bucket,
    "query_buckets.get": lambda c: c.api.query_buckets.get(bucket(c).uuid or ""),
    "query_buckets.update": lambda c: c.api.query_buckets.update(
        renamed(bucket(c), description="d")
    ),
    "statements.list": lambda c: list(c.api.statements.list(bucketUuid=bucket(c).uuid)),
    "statements.create": statement,
    "statements.update": lambda c: c.api.statements.update(
        renamed(statement(c), query_text="select 2")
    ),
    "statements.delete": lambda c: c.api.statements.delete(statement(c).uuid or ""),
    "statements.analyze": lambda c: c.api.statements.analyze(statement(c).uuid or ""),
    "quality_suites.list": lambda c: list(c.api.quality_suites.list(search="x")),
    "quality_suites.create": suite,
    "quality_suites.get": lambda c: c.api.quality_suites.get(suite(c).uuid or ""),
    "quality_suites.update": lambda c: c.api.quality_suites.update(renamed(suite(c), name="S2")),
    "quality_suites.delete": lambda c: c.api.quality_suites.delete(suite(c).uuid or ""),
    "quality_suites.import": lambda c: c.api.quality_suites.import_objects(
        QualityImport(
            quality_suite=QualitySuite(code=name("suite"), name="S"),
            quality_checks=[QualityCheck(code=name("check"), name="C")],
        )
    ),
    "quality_checks.list": lambda c: list(c.api.quality_checks.list(code="x")),
    "quality_checks.create": check,
    "quality_checks.get": lambda c: c.api.quality_checks.get(check(c).uuid or ""),
    "quality_checks.update": lambda c: c.api.quality_checks.update(renamed(check(c), name="C2")),
    "quality_results.create": lambda c: c.api.quality_results.create(result(c)),
    "quality_results.list": lambda c: list(c.api.quality_results.list(checkUuid=check(c).uuid)),
    "profiling_monitors.list": lambda c: list(c.api.profiling_monitors.list(name="m")),
    "profiling_monitors.create": monitor,
    "profiling_records.upload": lambda c: c.api.metric_records.upload([record(c)]),
    "profiling_records.list": lambda c: list(c.api.metric_records.list(metricCode="rowCount")),
}


def client(emulator: Any, operation: str) -> BlindataClient:
    credentials = (
        LoginCredentials(HUMAN, PASSWORD)
        if operation == "login"
        else ApiKeyCredentials(USER, API_KEY)
    )
    return BlindataClient(emulator.base_url, credentials=credentials, tenant=TENANT, retry=FAST)


def answered(emulator: Any, endpoint: Endpoint) -> list[int]:
    """The statuses of the logged requests to ``endpoint``'s method and path."""
    pattern = re.escape(endpoint.template).replace(r"\{uuid\}", "[^/]+").replace(r"\*", r"(\*|%2A)")
    log = httpx.get(f"{emulator.base_url}/_emulator/requests").json()["requests"]
    return [
        entry["status"]
        for entry in log
        if entry["method"] == endpoint.method and re.fullmatch(pattern, entry["path"])
    ]


@pytest.mark.parametrize("operation", list(ENDPOINTS))
def test_every_path_of_the_table_is_called_through_the_client_and_served(
    emulator: Any, operation: str
) -> None:
    assert operation in CALLERS, f"{operation} has no caller: add one to CALLERS"
    with client(emulator, operation) as c:
        CALLERS[operation](c)
        if operation == "login":
            c.api.me()
    statuses = answered(emulator, ENDPOINTS[operation])
    assert statuses, f"{operation} was not called"
    assert all(200 <= status < 300 for status in statuses), statuses


def test_no_caller_names_an_operation_the_table_lacks() -> None:
    assert set(CALLERS) == set(ENDPOINTS)


def test_the_emulator_mounts_every_path_of_the_table() -> None:
    """It may serve more (a GET by uuid the client never calls), never less."""
    served = {(route.method, route.path) for route in ROUTES} | {("POST", "/auth/login")}
    assert {(e.method, e.template) for e in ENDPOINTS.values()} - served == set()
