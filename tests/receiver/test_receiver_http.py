"""Raw HTTP against the served receiver: every answer, and exactly the accepted events stored."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from airflow_blindata.receiver.app import ReceiverSettings
from airflow_blindata.receiver.keys import KeyScope, KeySet, key_set
from airflow_blindata.store import EventStore, StoreUnavailableError, StoreURLError
from airflow_blindata.store.sqlite import SqliteEventStore

from .helpers import (
    API_KEY,
    OTHER_KEY,
    TEST_MAX_BATCH_EVENTS,
    TEST_MAX_BODY_BYTES,
    Served,
    run_event,
    serve_receiver,
)

pytestmark = pytest.mark.integration

AUTH = {"Authorization": f"Bearer {API_KEY}"}
NDJSON = {"Content-Type": "application/x-ndjson"}
GZIP = {"Content-Encoding": "gzip"}
WRONG_KEY = "a-wrong-key-of-enough-length"


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _lines(*events: Any) -> bytes:
    return b"\n".join(json.dumps(event).encode() for event in events) + b"\n"


@dataclass(frozen=True)
class Case:
    """One request and what must come of it: the status, a piece of the answer, what is stored."""

    body: bytes
    status: int
    stored: int
    says: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    batch_endpoint: bool = False
    auth: dict[str, str] = field(default_factory=lambda: dict(AUTH))


CASES: dict[str, Case] = {
    "one event is stored": Case(_json(run_event(1)), 200, 1, '"outcome":"accepted"'),
    "a gzip body is decompressed": Case(
        gzip.compress(_json(run_event(1))), 200, 1, '"accepted"', GZIP
    ),
    "a JSON array is a batch": Case(
        _json([run_event(1), run_event(2), run_event(3)]), 200, 3, '"status":"success"'
    ),
    "JSON lines are a batch": Case(
        _lines(run_event(1), run_event(2)), 200, 2, '"received":2', NDJSON
    ),
    "a gzip batch is decompressed": Case(
        gzip.compress(_json([run_event(1), run_event(2)])), 200, 2, '"accepted":2', GZIP
    ),
    "the batch endpoint takes an array": Case(
        _json([run_event(1), run_event(2)]), 200, 2, '"successful":2', batch_endpoint=True
    ),
    "the batch endpoint takes one event as a batch of one": Case(
        _json(run_event(1)), 200, 1, '"received":1', batch_endpoint=True
    ),
    "a batch stores its good events and names the bad one": Case(
        _json([run_event(1), run_event(2, eventTime=1700000000), run_event(3)]),
        200,
        2,
        '"failed_events":[{"index":1,"reason":"eventTime: must be an ISO-8601',
    ),
    "a bad line of JSON lines is named by its line": Case(
        _lines(run_event(1)) + b"\n{not json\n",
        200,
        1,
        '"index":1,"reason":"not JSON',
        NDJSON,
    ),
    "a batch of duplicates reports them": Case(
        _json([run_event(1), run_event(1)]), 200, 1, '"accepted":1,"duplicate":1'
    ),
    "a batch with no event at all is refused": Case(
        _json([{"hello": 1}, "text"]), 400, 0, "none of the 2 events is an OpenLineage event"
    ),
    "malformed JSON is refused": Case(b'{"eventTime": ', 400, 0, "the body is not JSON"),
    "JSON that is not an event is refused": Case(
        _json({"hello": "world"}), 400, 0, "no run, job or dataset"
    ),
    "a wrong eventTime type is refused": Case(
        _json(run_event(1, eventTime=1700000000)),
        400,
        0,
        "eventTime: must be an ISO-8601 date-time string, not int",
    ),
    "a run event without a job is refused": Case(
        _json({k: v for k, v in run_event(1).items() if k != "job"}), 400, 0, "job: Field required"
    ),
    "a JSON string is refused": Case(_json("an event"), 400, 0, "the body is a string"),
    "an empty body is refused": Case(b"", 400, 0, "the body is empty"),
    "a body past the size limit is refused": Case(
        _json([run_event(i, job={"namespace": "n", "name": "x" * 3000}) for i in range(25)]),
        413,
        0,
        "exceeds 65,536 bytes ([blindata] receiver_max_body_bytes)",
    ),
    "a gzip bomb is refused after inflating the limit": Case(
        gzip.compress(b"[" + b" " * (50 * TEST_MAX_BODY_BYTES) + b"]"),
        413,
        0,
        "the decompressed request body exceeds 65,536 bytes",
        GZIP,
    ),
    "too many events in a batch are refused": Case(
        _json([run_event(i) for i in range(TEST_MAX_BATCH_EVENTS + 1)]),
        413,
        0,
        "more than 50 events ([blindata] receiver_max_batch_events)",
    ),
    "too many JSON lines are refused": Case(
        _lines(*[run_event(i) for i in range(TEST_MAX_BATCH_EVENTS + 1)]),
        413,
        0,
        "receiver_max_batch_events",
        NDJSON,
    ),
    "a truncated gzip body is refused": Case(
        gzip.compress(_json(run_event(1)))[:-12], 400, 0, "the gzip body is truncated", GZIP
    ),
    "a body that is not gzip is refused": Case(
        _json(run_event(1)), 400, 0, "the body is not valid gzip", GZIP
    ),
    "another content encoding is refused": Case(
        _json(run_event(1)),
        415,
        0,
        "Content-Encoding 'br' is not supported",
        {"Content-Encoding": "br"},
    ),
    "a request without a key is refused": Case(
        _json(run_event(1)), 401, 0, "missing API key", auth={}
    ),
    "a wrong key is refused": Case(
        _json(run_event(1)),
        401,
        0,
        "the API key is not valid",
        auth={"Authorization": f"Bearer {WRONG_KEY}"},
    ),
    "another scheme than Bearer is refused": Case(
        _json(run_event(1)), 401, 0, "Bearer scheme", auth={"Authorization": f"Basic {API_KEY}"}
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_each_request_gets_its_answer_and_only_accepted_events_are_stored(
    receiver: Served, case: Case
) -> None:
    url = receiver.batch_url if case.batch_endpoint else receiver.lineage_url
    response = httpx.post(url, content=case.body, headers={**case.auth, **case.headers})

    assert response.status_code == case.status, response.text
    assert case.says in response.text
    assert len(receiver.stored()) == case.stored


@pytest.mark.parametrize(
    ("header", "challenge"),
    [
        (None, 'Bearer realm="blindata-openlineage"'),
        (f"Bearer {WRONG_KEY}", 'Bearer realm="blindata-openlineage", error="invalid_token"'),
    ],
    ids=["missing key", "wrong key"],
)
def test_a_401_carries_a_bearer_challenge(
    receiver: Served, header: str | None, challenge: str
) -> None:
    headers = {"Authorization": header} if header else {}
    response = httpx.post(receiver.lineage_url, json=run_event(1), headers=headers)

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == challenge


def test_a_batch_answer_follows_the_openlineage_batch_api(receiver: Served) -> None:
    body = [run_event(1), {"eventTime": "2026-11-29T10:00:00Z"}, run_event(1), run_event(2)]
    response = httpx.post(receiver.batch_url, json=body, headers=AUTH)

    assert response.status_code == 200
    assert response.json() == {
        "status": "partial_success",
        "summary": {
            "received": 4,
            "successful": 3,
            "failed": 1,
            "retriable": 0,
            "non_retriable": 1,
            "accepted": 2,
            "duplicate": 1,
            "quarantined": 0,
        },
        "failed_events": [
            {
                "index": 1,
                "reason": "no run, job or dataset: not an OpenLineage event",
                "retriable": False,
            }
        ],
        "quarantined_events": [],
    }
    assert receiver.stored_run_ids() == sorted(
        [run_event(1)["run"]["runId"], run_event(2)["run"]["runId"]]
    )


@pytest.mark.parametrize("batch", [False, True], ids=["lineage", "batch"])
def test_an_endpoint_with_a_trailing_slash_is_served_not_redirected(
    receiver: Served, batch: bool
) -> None:
    """A producer configured with ``…/api/v1/lineage/`` is answered in place: a redirect is
    built from the request's scheme (``http://`` behind a TLS proxy), and clients drop the
    ``Authorization`` header when they follow one, so the event came back as a 401."""
    url = (receiver.batch_url if batch else receiver.lineage_url) + "/"
    body: Any = [run_event(7)] if batch else run_event(7)
    response = httpx.post(url, json=body, headers=AUTH, follow_redirects=False)

    assert response.status_code in (200, 201), (response.status_code, response.headers)
    assert receiver.stored_run_ids() == [run_event(7)["run"]["runId"]]


def test_every_configured_key_is_accepted_for_rotation(store: EventStore) -> None:
    with serve_receiver(store, keys=[API_KEY, OTHER_KEY]) as served:
        for index, key in enumerate((API_KEY, OTHER_KEY)):
            response = httpx.post(
                served.lineage_url,
                json=run_event(index),
                headers={"Authorization": f"Bearer {key}"},
            )
            assert response.status_code == 200
        assert len(served.stored()) == 2


def _no_key() -> KeySet:
    return KeySet((), "", "no API key is configured: set [blindata] receiver_api_key")


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        (_no_key, "refuses events: no API key is configured"),
        (["short"], "shorter than 16 characters"),
        ([], "no API key in the keys given to the receiver"),
    ],
    ids=["none configured", "too short", "empty list"],
)
def test_without_a_usable_key_the_receiver_refuses_everything(
    store: EventStore, keys: Any, says: str
) -> None:
    with serve_receiver(store, keys=keys) as served:
        for header in ({}, AUTH, {"Authorization": "Bearer short"}):
            response = httpx.post(served.lineage_url, json=run_event(1), headers=header)
            assert response.status_code == 503
            assert says in response.json()["detail"]
            assert response.headers["Retry-After"] == "1"  # as the table of answers says
        assert served.stored() == []


class _BrokenStore(SqliteEventStore):
    """A store whose database refuses every write, as a full or locked disk does."""

    def _fail(self, *_: Any, **__: Any) -> Any:
        raise StoreUnavailableError(
            f"appending an event in {self.url} failed: OperationalError: database is locked"
        )

    append = _fail
    append_many = _fail


def _unopenable() -> EventStore:
    raise StoreURLError("no event store for mysql:// (known: postgresql, sqlite)")


def _no_driver() -> EventStore:
    raise ModuleNotFoundError("No module named 'psycopg' (postgresql://etl:pa55word@db/lineage)")


@pytest.mark.parametrize(
    "store_of",
    [
        lambda path: _BrokenStore(path / "broken.db"),
        lambda path: _unopenable,
        lambda path: _no_driver,
    ],
    ids=["writes fail", "cannot open", "no driver"],
)
def test_an_unavailable_store_gives_a_503_that_producers_retry(
    tmp_path: Path, store_of: Callable[[Path], Any]
) -> None:
    with serve_receiver(store_of(tmp_path), keys=[API_KEY]) as served:
        single = httpx.post(served.lineage_url, json=run_event(1), headers=AUTH)
        batch = httpx.post(served.lineage_url, json=[run_event(1)], headers=AUTH)

    for response in (single, batch):
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "1"
        # a batch may have been written in part before the store failed (a probe of
        # receivers): the answer says re-sending is safe, not that nothing was stored
        assert "re-sending is safe" in response.json()["detail"]
        assert str(tmp_path) not in response.text  # the store is not named to producers
        assert "pa55word" not in response.text


def test_no_secret_reaches_a_log_or_a_response(
    store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    responses: list[httpx.Response] = []
    with serve_receiver(store) as served:
        for headers in (AUTH, {"Authorization": f"Bearer {WRONG_KEY}"}, {}):
            responses.append(httpx.post(served.lineage_url, json=run_event(1), headers=headers))
        responses.append(httpx.post(served.lineage_url, json=[{"x": 1}], headers=AUTH))

    assert [response.status_code for response in responses] == [200, 401, 401, 400]
    assert "refused a request" in caplog.text  # the refusals were logged ...
    for secret in (API_KEY, WRONG_KEY):  # ... without the keys
        assert secret not in caplog.text
        assert all(secret not in response.text for response in responses)


def test_a_client_that_disconnects_mid_body_costs_one_log_line(
    store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server_errors = logging.getLogger("uvicorn.error")  # does not propagate to the root logger
    server_errors.addHandler(caplog.handler)
    body = _json(run_event(1))
    head = (
        "POST /blindata/api/v1/lineage HTTP/1.1\r\nHost: receiver\r\n"
        f"Authorization: Bearer {API_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    try:
        with serve_receiver(store) as served:
            address = served.root.removeprefix("http://").rsplit(":", 1)
            with socket.create_connection((address[0], int(address[1]))) as producer:
                producer.sendall(head + body[: len(body) // 2])
            # the server notices, answers no one, and still serves the next producer
            deadline = time.monotonic() + 10
            while "disconnected" not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.05)
            after = httpx.post(served.lineage_url, json=run_event(2), headers=AUTH)
    finally:
        server_errors.removeHandler(caplog.handler)
    assert after.status_code == 200
    lines = [record for record in caplog.records if "disconnected" in record.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "before its request body was complete" in lines[0].getMessage()
    assert not [record for record in caplog.records if record.exc_info]  # no traceback
    assert "Exception in ASGI application" not in caplog.text
    assert [event["run"]["runId"] for event in served.stored()] == [run_event(2)["run"]["runId"]]


TOO_DEEP = b'{"a":' * 1_000 + b"1" + b"}" * 1_000
"""An element nested ~1,000 levels: more than ``json.loads`` reads at Python's recursion limit."""


PATIENT = ReceiverSettings(
    max_body_bytes=TEST_MAX_BODY_BYTES, max_batch_events=TEST_MAX_BATCH_EVENTS, store_timeout=60
)
"""Test limits, and a store timeout that a loaded machine's first request (imports, the schema)
never reaches: the test is about the answer, not the bound."""


@pytest.mark.parametrize("batch_endpoint", [False, True], ids=["lineage", "batch"])
def test_one_bad_event_of_a_json_array_is_refused_alone(
    store: EventStore, batch_endpoint: bool
) -> None:
    """An element too deep to decode, or not UTF-8, is refused with its reason by index, and
    the rest of the array is stored: a 400 for the whole array would lose every good event,
    since producers do not retry a 400."""
    not_utf8 = _json(run_event(3)).replace(b"etl.job_3", b"etl.job_\xff")
    body = b"[" + b", ".join([_json(run_event(1)), TOO_DEEP, _json(run_event(2)), not_utf8]) + b"]"

    with serve_receiver(store, settings=PATIENT) as receiver:
        url = receiver.batch_url if batch_endpoint else receiver.lineage_url
        response = httpx.post(
            url, content=body, headers=AUTH | {"Content-Type": "application/json"}
        )

    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["status"] == "partial_success"
    assert answer["summary"]["accepted"] == 2 and answer["summary"]["failed"] == 2
    assert [(failed["index"], failed["reason"][:24]) for failed in answer["failed_events"]] == [
        (1, "not readable JSON: neste"),
        (3, "not JSON: 'utf-8' codec "),
    ]
    assert receiver.stored_run_ids() == sorted(
        [run_event(1)["run"]["runId"], run_event(2)["run"]["runId"]]
    )


SCOPED_KEY = "a-key-for-spark-jobs-only"


def test_a_key_scoped_to_job_namespaces_writes_those_only(store: EventStore) -> None:
    """A key scoped to ``spark-*`` (as Marquez-style gateways scope theirs): an event of another
    job namespace, or a DatasetEvent (no job), is refused with the reason — 403 alone; in a
    batch, listed in ``failed_events`` while the others are stored — and an unscoped key still
    writes any namespace."""
    keys = key_set([(SCOPED_KEY, KeyScope(("spark-*",))), API_KEY], source="the test's keys")
    scoped = {"Authorization": f"Bearer {SCOPED_KEY}"}
    dbt = run_event(2, job={"namespace": "dbt://prod", "name": "model.orders"})
    dataset_event = {
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "postgres://db:5432", "name": "a.b.c", "facets": {}},
    }

    with serve_receiver(store, settings=PATIENT, keys=lambda: keys) as receiver:
        inside = httpx.post(receiver.lineage_url, json=run_event(1), headers=scoped)
        outside = httpx.post(receiver.lineage_url, json=dbt, headers=scoped)
        no_job = httpx.post(receiver.lineage_url, json=dataset_event, headers=scoped)
        batch = httpx.post(receiver.batch_url, json=[run_event(3), dbt], headers=scoped)
        all_out = httpx.post(receiver.batch_url, json=[dbt, dataset_event], headers=scoped)
        # an event outside the scope beside one that is no event: refused for the scope too
        mixed = httpx.post(receiver.batch_url, json=[dbt, {"foo": 1}], headers=scoped)
        unscoped = httpx.post(receiver.lineage_url, json=dbt, headers=AUTH)

    assert inside.status_code == 200
    assert outside.status_code == 403
    assert outside.json()["detail"] == (
        "outside the API key's scope: the event's job namespace matches none of the key's "
        "namespaces (spark-*)"
    )
    assert no_job.status_code == 403 and "DatasetEvent names no job" in no_job.json()["detail"]
    assert batch.status_code == 200 and batch.json()["status"] == "partial_success"
    assert [(f["index"], f["retriable"]) for f in batch.json()["failed_events"]] == [(1, False)]
    assert "outside the API key's scope" in batch.json()["failed_events"][0]["reason"]
    assert all_out.status_code == 403 and all_out.json()["status"] == "failure"
    assert mixed.status_code == 403, mixed.json()
    assert "1 outside the API key's scope, 1 not OpenLineage events" in mixed.json()["detail"]
    assert unscoped.status_code == 200
    assert sorted(str(e.job_namespace) for e in store.events()) == [
        "dbt://prod",  # by the unscoped key
        "spark-prod",
        "spark-prod",
    ]
