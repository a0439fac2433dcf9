"""What the sync tests share: a client of the served emulator, the dbt events, helpers.

The emulator is served over loopback HTTP (``tests/conftest.py``), as Blindata would be: the sync
reads Blindata's clock from the ``Date`` header, which only a real server sends. The header counts
whole seconds; the emulator dates it from its own clock, so ``next_second`` moves that clock
forward (no sleep) until a second snapshot's watermark is later than everything the first wrote.
``ListedOtherwise`` and ``UpperCaseReferences`` are Blindatas that answer otherwise than the
emulator where the contract leaves it open. The fixtures (``client``, ``store``, ``no_margin``)
are in ``conftest.py``; scenario helpers several test files share are here too.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from blindata_emulator import Kind

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient, RetryPolicy
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    PhysicalEntity,
    PhysicalEntityRef,
    PhysicalField,
    Ref,
    System,
)
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.documentation import place_text
from airflow_blindata.mapper.plan import CatalogPlan, EntityKey, PlannedEntity, PlannedSystem
from airflow_blindata.plans.eventfiles import read_event_file
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import SyncRecord, open_store
from airflow_blindata.sync import RunReport, fetch_known_systems, snapshot, store_status
from tests import builders
from tests.builders import dataset, policy, run_event
from tests.helpers import API_KEY, TENANT, USER

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DBT_EVENTS = sorted((FIXTURES / "openlineage" / "dbt").glob("*.jsonl"))
DEFINITION_UUID = builders.DEFINITION_UUID
OTHER_DEFINITION = "0f0f0f0f-1111-4222-8333-444444444444"
FAST_RETRY = RetryPolicy(deadline=20.0, max_attempts=8, backoff_initial=0.01, backoff_max=0.05)


def dbt_events() -> list[Any]:
    return [event for path in DBT_EVENTS for event in read_event_file(path)]


def definition(**overrides: Any) -> JobDefinition:
    """The dbt fixtures' namespace gets a created System; jobs go to the OpenLineage System."""
    postgres = policy("postgres://*", nameTemplate="{host}", technology="PostgreSQL")
    return builders.definition(postgres, **overrides)


def plan_for(client: BlindataClient, events: list[Any], job: JobDefinition) -> CatalogPlan:
    return build(events, job, fetch_known_systems(client))


SERVER_CLOCK_STEP = 2.3
"""Seconds the emulator's clock moves in ``next_second``: past the ``Date`` header's whole second
and the watermark's margin (see the module docstring)."""


def next_second(emulator: Any) -> None:
    """Move the emulator's time until its ``Date`` is past everything written so far."""
    emulator.emulator.clock.advance(SERVER_CLOCK_STEP)


def client_of(emulator: Any, transport: httpx.BaseTransport | None = None) -> BlindataClient:
    """A client of the emulator; with ``transport``, whose answers go through it (a Blindata
    that answers otherwise than the emulator where the contract leaves it open)."""
    return BlindataClient(
        emulator.base_url,
        credentials=ApiKeyCredentials(USER, API_KEY),
        tenant=TENANT,
        retry=FAST_RETRY,
        transport=transport,
    )


class ListedOtherwise(httpx.HTTPTransport):
    """A Blindata whose listing of ``path`` filters or orders otherwise than the emulator, where
    the contract leaves it open: every item the emulator lists for the ``kept`` parameters goes
    through ``listed`` (with the query asked), then comes back a page at a time as asked."""

    path = ""
    kept: tuple[str, ...] = ()

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        asked = dict(request.url.params)
        if request.method != "GET" or request.url.path != self.path:
            return super().handle_request(request)
        params = {key: asked[key] for key in self.kept if key in asked} | {"size": "1000"}
        every = super().handle_request(
            httpx.Request("GET", request.url.copy_with(params=params), headers=request.headers)
        )
        items = self.listed(json.loads(every.read())["content"], asked)
        page, size = int(asked.get("page", 0)), int(asked.get("size", 20))
        content = items[page * size : (page + 1) * size]
        last = (page + 1) * size >= len(items)
        return httpx.Response(200, json={"content": content, "number": page, "last": last})


class SummaryListings(httpx.HTTPTransport):
    """A Blindata whose listings give each object without the fields in ``left_out`` (the
    contract names a listing's fields, not that its items are whole), while a read by uuid gives
    it whole and a PUT replaces it whole, as the emulator does."""

    def __init__(self, left_out: tuple[str, ...] = ("description",)) -> None:
        super().__init__()
        self.left_out = left_out

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or "json" not in response.headers.get("content-type", ""):
            return response
        body = json.loads(response.read())
        if isinstance(body, dict) and isinstance(body.get("content"), list):
            for item in body["content"]:
                for name in self.left_out:
                    item.pop(name, None)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, json=body, headers=headers)


def objects(emulator: Any, kind: str) -> list[dict[str, Any]]:
    return list(emulator.emulator.objects(kind))


def counts(emulator: Any) -> dict[str, int]:
    kinds = (Kind.SYSTEM, Kind.ENTITY, Kind.FIELD, Kind.ROUTINE, Kind.STATEMENT, Kind.FLOW)
    return {kind: len(objects(emulator, kind)) for kind in kinds}


def crawl(
    client: BlindataClient,
    system: str,
    tables: dict[tuple[str | None, str], dict[str, str]],
    *,
    properties: tuple[tuple[str, str], ...] = (),
    description: str | None = None,
) -> System:
    """A System with entities and typed fields, as a crawler leaves them."""
    created = client.api.systems.create(
        System(
            name=system,
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(properties) or None,
        )
    )
    ref = Ref(uuid=created.uuid or "")
    client.api.physical_entities.upload(
        [
            PhysicalEntity(
                system=ref, schema=schema, name=name, table_type="TABLE", description=description
            )
            for schema, name in tables
        ]
    )
    client.api.physical_fields.upload(
        [
            PhysicalField(
                physical_entity=PhysicalEntityRef(system=ref, schema=schema, name=name),
                name=column,
                type=column_type,
                ordinal_position=position,
                description=f"crawled {column}",
            )
            for (schema, name), columns in tables.items()
            for position, (column, column_type) in enumerate(columns.items(), start=1)
        ]
    )
    return created


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class UpperCaseReferences(httpx.HTTPTransport):
    """A Blindata that answers the uuids of references (``system``, ``physicalEntity``,
    ``fromPhysicalEntity``...) in upper case, and each object's own ``uuid`` in lower case, as a
    server that keeps a reference as a client sent it; it takes uuids in any case, as a uuid
    column does (UUIDs compare without case, RFC 9562)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        def lower(text: str) -> str:
            return _UUID.sub(lambda found: found.group(0).lower(), text)

        content = request.read()
        headers = [(k, v) for k, v in request.headers.items() if k.lower() != "content-length"]
        request = httpx.Request(
            request.method,
            lower(str(request.url)),
            headers=headers,
            content=lower(content.decode()).encode() if content else None,
        )
        response = super().handle_request(request)
        body = response.read()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        if not body or "json" not in response.headers.get("content-type", ""):
            return httpx.Response(response.status_code, headers=headers, content=body)
        data = json.loads(body)
        items = data["content"] if isinstance(data, dict) and "content" in data else [data]
        for item in items:
            _upper_references(item, own=True)
        return httpx.Response(response.status_code, headers=headers, json=data)


def _upper_references(data: Any, *, own: bool) -> None:
    if isinstance(data, list):
        for item in data:
            _upper_references(item, own=False)
    elif isinstance(data, dict):
        for key, value in data.items():
            if key == "uuid" and isinstance(value, str) and not own:
                data[key] = value.upper()
            else:
                _upper_references(value, own=False)


REMOVED_JOB = "snapshot.jaffle_shop.orders_snapshot"


class History(list[SyncRecord]):
    """The sync history of one definition, newest first, as the store returns it."""

    def add(self, report: RunReport) -> RunReport:
        record = SyncRecord(
            definition_uuid=report.definition_uuid,
            kind=report.kind,
            started_at=report.started_at,
            finished_at=report.finished_at or report.started_at,
            status=store_status(report),
            report=report.to_record(),
        )
        self.insert(0, record)
        return report


def without_job(events: list[Any], prefix: str = REMOVED_JOB) -> list[Any]:
    """The events, as the store holds them once retention dropped a job (and its SQL steps)."""
    return [e for e in events if not e.get("job", {}).get("name", "").startswith(prefix)]


def run(
    client: BlindataClient, history: History, events: list[Any], job: JobDefinition
) -> tuple[CatalogPlan, RunReport]:
    plan = plan_for(client, events, job)
    return plan, history.add(snapshot(plan, client, job))


PG = "postgres://warehouse:5432"


def dq_run(
    job: str, run_id: str, assertions: list[dict[str, Any]], **input_facets: Any
) -> list[dict[str, Any]]:
    def event(kind: str, second: int) -> dict[str, Any]:
        return {
            "eventType": kind,
            "eventTime": f"2026-11-29T10:00:{second:02d}.000Z",
            "producer": "https://example.com/dq",
            "run": {"runId": run_id, "facets": {}},
            "job": {"namespace": "dq", "name": job, "facets": {}},
            "inputs": [
                {
                    "namespace": PG,
                    "name": "dwh.sales.orders",
                    "facets": {"schema": {"fields": [{"name": "id"}, {"name": "amount"}]}},
                    "inputFacets": {
                        "dataQualityAssertions": {"assertions": assertions},
                        **input_facets,
                    },
                }
            ],
            "outputs": [],
        }

    return [event("START", 0), event("COMPLETE", 30)]


def checks(emulator: Any) -> dict[str, dict[str, Any]]:
    return {c["code"]: c for c in objects(emulator, Kind.CHECK)}


def assertions_run(
    job: str,
    run_id: str,
    assertions: dict[tuple[str, str], list[dict[str, Any]]],
    **input_facets: Any,
) -> list[dict[str, Any]]:
    """A completed run of job ``dq/<job>`` reading datasets ``(namespace, name)`` with
    assertions (an empty list: the dataset is read, nothing is asserted), and ``input_facets``
    on each."""

    def event(kind: str, second: int) -> dict[str, Any]:
        return {
            "eventType": kind,
            "eventTime": f"2026-11-29T10:00:{second:02d}.000Z",
            "producer": "https://example.com/dq",
            "run": {"runId": run_id, "facets": {}},
            "job": {"namespace": "dq", "name": job, "facets": {}},
            "inputs": [
                {
                    "namespace": namespace,
                    "name": name,
                    "facets": {"schema": {"fields": [{"name": "id"}]}},
                    "inputFacets": {
                        "dataQualityAssertions": {"assertions": items},
                        **input_facets,
                    },
                }
                for (namespace, name), items in assertions.items()
            ],
            "outputs": [],
        }

    return [event("START", 0), event("COMPLETE", 30)]


def metrics_run(run_id: str, tables: list[str]) -> list[dict[str, Any]]:
    """A completed run reading ``tables`` of the warehouse, each with a row count."""
    read = {(PG, f"dwh.sales.{table}"): [] for table in tables}
    return assertions_run(
        "profile", run_id, read, dataQualityMetrics={"rowCount": 5, "columnMetrics": {}}
    )


def _documented_plan(
    client: BlindataClient, text: str, *, replace_user_documentation: bool = False
) -> CatalogPlan:
    """One created System with one entity documented in Markdown."""
    known = {system.name: system for system in fetch_known_systems(client)}
    existing = known.get("docs-db")
    placement = place_text(text, "text/markdown")
    return CatalogPlan(
        definition_uuid=DEFINITION_UUID,
        systems=[
            PlannedSystem(
                name="docs-db",
                uuid=existing.uuid if existing else None,
                origin="created",
                create=existing is None,
                subtype="DATABASE",
                stamp=(("openLineageOwner", DEFINITION_UUID),),
                entity_creation=True,
                replace_user_documentation=replace_user_documentation,
            )
        ],
        entities=[
            PlannedEntity(
                key=EntityKey(system="docs-db", schema="sales", name="orders"),
                may_create=True,
                documentation=placement.documentation,
                documentation_hash=placement.documentation_hash,
                source="test",
            )
        ],
    )


def without_cache_counter(plan: CatalogPlan, *others: str) -> dict[str, Any]:
    """The plan without the counters of what the memos saved (and ``others``)."""
    data = plan.model_dump()
    for counter in ("jobsUnchanged", "jobsExtended", "jobsReadInSlices", "sqlTextsParsed", *others):
        data["report"]["counters"].pop(counter, None)
    return data


def as_extended(plan: CatalogPlan) -> dict[str, Any]:
    """The plan, but for what a job extended keeps of the readings that made its fold: how many
    events were skimmed, and which unknown facets were read, how many times (a full read skims
    the events of runs that newer ones supersede, and does not read their unknown facets)."""
    data = without_cache_counter(plan, "eventsSkimmed")
    del data["report"]["unknownFacets"]
    return data


def assert_read_at_once(planned: CatalogPlan, expected: CatalogPlan) -> None:
    """``planned`` (read job by job, kept folds extended) is ``expected`` (every event read at
    once) but for what ``as_extended`` leaves out; its unknown facets are those of the full read
    and perhaps more: those an extended job's fold read before newer runs superseded them."""
    assert as_extended(planned) == as_extended(expected)
    assert set(expected.report.unknown_facets) <= set(planned.report.unknown_facets)


def _time(event: object) -> str:
    if isinstance(event, dict) and isinstance(event.get("eventTime"), str):
        return event["eventTime"]
    return ""


def _snapshots_equal_builds(
    batches: list[list[Any]],
    url: str,
    job: JobDefinition | None = None,
    *,
    retention_after: int | None = None,
) -> dict[str, int]:
    """Append each batch, plan from the store keeping folds, and compare with ``build`` of every
    event stored so far; the counters of what the kept folds saved, summed. After the snapshot
    of batch ``retention_after``, retention removes every event but each job's latest
    description (every event received over a day before, ``rawEventsDays`` 0)."""
    job = job or definition()
    saved = {"jobsUnchanged": 0, "jobsExtended": 0}
    with open_store(url) as store:
        for index, batch in enumerate(batches):
            if index - 1 == retention_after:
                later = datetime.now(UTC) + timedelta(days=1)
                store.retain(raw_events_days=0, job_described_for_days=30, now=later)
            store.append_many(json.dumps(event) for event in batch)
            planned = plan_from_store(store, job)
            for counter in saved:
                saved[counter] += planned.report.counters.get(counter, 0)
            stored = [event.payload for event in store.events()]  # not what it quarantined
            assert_read_at_once(planned, build(stored, job))
    return saved


def _arrived(events: list[Any], rng: random.Random, *, in_order: bool) -> list[Any]:
    """The events as they arrive: in time order (the usual case, where kept folds are
    extended), or shuffled (late events, which have their job read whole)."""
    return sorted(events, key=_time) if in_order else rng.sample(events, len(events))


def _cut(events: list[Any], parts: int, rng: random.Random) -> list[list[Any]]:
    marks = sorted(rng.sample(range(1, len(events)), min(parts - 1, len(events) - 1)))
    ends = zip([0, *marks], [*marks, len(events)], strict=True)
    return [events[start:end] for start, end in ends]


BASE = datetime(2026, 1, 1, tzinfo=UTC)


def _runs(
    count: int, *, first: int = 0, lasting: int = 30, targets: int = 1
) -> list[dict[str, Any]]:
    """A job that runs every minute for ``lasting`` seconds (over 60: its runs overlap): START
    and COMPLETE, the same facets each run, writing one of ``targets`` tables in turn."""
    events = []
    for run in range(first, first + count):
        run_id = f"00000000-0000-4000-8000-{run:012d}"
        target = "public.target" if targets == 1 else f"public.target_{run % targets}"
        for event_type, second in (("START", 0), ("COMPLETE", lasting)):
            events.append(
                run_event(
                    "minutely",
                    event_type=event_type,
                    run_id=run_id,
                    time=(BASE + timedelta(minutes=run, seconds=second)).isoformat(),
                    inputs=[dataset("public.source")],
                    outputs=[dataset(target)],
                )
            )
    return events


Tables = dict[tuple[str | None, str], dict[str, str]]
ORDERS = {"id": "int", "amount": "decimal"}
TOTALS = {"order_id": "int", "total": "decimal"}
ORDERS_UP = {"ID": "NUMBER", "AMOUNT": "NUMBER"}
TOTALS_UP = {"ORDER_ID": "NUMBER", "TOTAL": "NUMBER"}


def column_flows(emulator: Any) -> set[tuple[str, str]]:
    systems = {s["uuid"]: s["name"] for s in objects(emulator, Kind.SYSTEM)}
    entities = {
        e["uuid"]: f"{systems[e['system']['uuid']]}:{e.get('schema') or ''}.{e['name']}"
        for e in objects(emulator, Kind.ENTITY)
    }
    fields = {f["uuid"]: f for f in objects(emulator, Kind.FIELD)}

    def label(flow: dict[str, Any], side: str) -> str:
        found = fields[flow[f"{side}PhysicalField"]["uuid"]]
        return f"{entities[found['physicalEntity']['uuid']]}.{found['name']}"

    return {
        (label(flow, "from"), label(flow, "to"))
        for flow in objects(emulator, Kind.FLOW)
        if flow.get("fromPhysicalField")
    }
