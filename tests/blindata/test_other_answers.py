"""Answers that a Blindata other than the emulator may give where the contract names no body (a
create's ``201``) or leaves a field's type open (Spring's error ``timestamp``): a loopback HTTP
server plays that Blindata. Each test is named after what the sync must still do."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BlindataClient,
    BlindataConflictError,
    RetryPolicy,
)
from airflow_blindata.blindata.models import QualityResult, Ref, System
from tests.helpers import API_KEY, USER, loopback_server

pytestmark = pytest.mark.integration

SYSTEM_UUID = "6F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9"
RESULT_UUID = "0d1c2b3a-4958-4677-8695-a4b3c2d1e0f8"


class _OtherBlindata(http.server.BaseHTTPRequestHandler):
    """Creates answered ``201`` with a summary, not the object (``{"uuid": …}`` for a System,
    ``{"id": …}`` and the uuid in ``Location`` for a result); a second System of one name
    answered ``409`` with an error whose ``timestamp`` is epoch milliseconds."""

    systems: set[str] = set()

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        path = self.path.split("?")[0]
        location = None
        if path == "/api/v1/systems" and sent["name"] in self.systems:
            status = 409
            body = {"timestamp": 1765000000000, "status": 409, "message": "the name is taken"}
        elif path == "/api/v1/systems":
            type(self).systems.add(sent["name"])
            status, body = 201, {"uuid": SYSTEM_UUID}
        else:
            status, body, location = 201, {"id": 7}, f"{path}/{RESULT_UUID}"
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_blindata() -> Iterator[str]:
    _OtherBlindata.systems = set()
    with loopback_server(_OtherBlindata) as url:
        yield url


def client(url: str) -> BlindataClient:
    policy = RetryPolicy(deadline=10.0, max_attempts=2, backoff_initial=0.05, backoff_max=0.1)
    return BlindataClient(url, credentials=ApiKeyCredentials(USER, API_KEY), retry=policy)


def test_a_create_answered_with_a_summary_gives_the_object_as_sent_with_its_uuid(
    other_blindata: str,
) -> None:
    """The contract names a create's status (201), not its body: a summary is a valid answer,
    and the sync goes on with what it sent and the uuid the answer names."""
    with client(other_blindata) as blindata:
        created = blindata.api.systems.create(System(name="DWH", technology="PostgreSQL"))
        result = blindata.api.quality_results.create(
            QualityResult(
                quality_check=Ref(uuid="11111111-2222-4333-8444-555555555555"),
                metric=3,
                total_elements=10,
                started_at=datetime(2026, 12, 6, tzinfo=UTC),
            )
        )
    assert (created.name, created.technology, created.uuid) == (
        "DWH",
        "PostgreSQL",
        SYSTEM_UUID.lower(),
    )
    assert (result.metric, result.total_elements, result.uuid) == (3, 10, RESULT_UUID)


def test_an_error_whose_timestamp_is_epoch_milliseconds_still_gives_the_servers_message(
    other_blindata: str,
) -> None:
    with client(other_blindata) as blindata:
        blindata.api.systems.create(System(name="DWH"))
        with pytest.raises(BlindataConflictError) as error:
            blindata.api.systems.create(System(name="DWH"))
    assert error.value.server_message == "the name is taken"
