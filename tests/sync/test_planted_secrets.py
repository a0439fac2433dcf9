"""What Blindata receives holds no planted secret (issue 42, items 3 and 4).

Each case of ``tests/mapper/test_planted_secrets.py`` that lands on Blindata — the routine's SQL
and its statement, a column's description, a custom facet's string property, a job's name (its
entity, routine, flows and their scopes) — is snapshotted into the emulator through a transport
that keeps every request's body: neither the requests nor what the emulator stores afterwards,
nor the snapshot's report, show the secret. (What is sent does not depend on Blindata's SQL
analysis: the statement's text is the routine's, redacted before any analysis.)
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.mapper.build import build
from airflow_blindata.sync import fetch_known_systems, snapshot
from tests.helpers import SECRET
from tests.mapper.helpers import CASES, DEFINITION, _run
from tests.sync.helpers import client_of, objects

pytestmark = pytest.mark.integration

LANDING = {
    name: planted
    for name, planted in CASES.items()
    if name.split(":")[0] in ("routine SQL", "column description", "custom facet property")
    or name.startswith(("job name", "a quality test"))
}
LANDING = {  # one SQL case per kind of reading keeps the suite short; the mapper test has all
    name: planted
    for name, planted in LANDING.items()
    if not name.startswith("routine SQL")
    or name.split(": ", 1)[1]
    in ("dollar-quoted", "MySQL # comment with an apostrophe", "a literal ending in a backslash")
}


class Recording(httpx.HTTPTransport):
    """The emulator's transport, keeping the body of every request the client sends."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(f"{request.method} {request.url}\n{request.read().decode()}")
        return super().handle_request(request)


@pytest.mark.parametrize("planted", list(LANDING.values()), ids=list(LANDING))
def test_blindata_receives_and_keeps_no_planted_secret(
    emulator: Any, planted: dict[str, Any]
) -> None:
    recording = Recording()
    with client_of(emulator, transport=recording) as client:
        plan = build([_run(**planted)], DEFINITION, fetch_known_systems(client))
        report = snapshot(plan, client, DEFINITION)
    assert report.status == "success", report.render()
    stored = {kind: objects(emulator, kind) for kind in Kind.ALL}
    assert stored[Kind.ROUTINE] and stored[Kind.STATEMENT] and stored[Kind.FIELD], "it landed"
    assert SECRET not in "\n".join(recording.bodies)
    assert SECRET not in json.dumps(stored, default=str)
    assert SECRET not in report.render()
