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
import re
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
from airflow_blindata.plans.eventfiles import read_event_file
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.sync import fetch_known_systems
from tests import builders
from tests.builders import policy
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
