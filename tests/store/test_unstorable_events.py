"""Issue 18, items 2 and 3: an event the store can never hold is quarantined, never a blocker.

Before: a lone surrogate (``"\\ud800"``, valid JSON) was stored and crashed ``plan`` and the
snapshot later; on PostgreSQL a NUL in a string or a job name over the btree index limit was
answered "store unavailable, retry later" for ever, failed its whole batch (0 of 19 good events
stored) and made ``ingest`` of the lost-events file store nothing. Now the store's ``prepare``
quarantines such an event with the reason and its raw bytes, on every store and every way in
(transport, receiver, ingest), and a row the database still refuses is quarantined on its own
while the rest of its batch is stored.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_blindata.capture import transport as transport_module
from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.receiver.app import ROUTE, create_receiver_app
from airflow_blindata.store import AppendOutcome, EventStore, open_store
from airflow_blindata.store import prepare as prepare_module

from .helpers import _libpq, event, postgres_base_url, postgres_schema

CLI = str(Path(sys.executable).with_name("airflow-blindata"))
KEY = "a-receiver-key-for-these-tests"
DEFINITION = JobDefinition.from_dict(
    {
        "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "systemPolicies": [{"pattern": "*", "creation": "IF_MISSING", "nameTemplate": "{host}"}],
    }
)


def with_output(name: str, **facets: Any) -> dict[str, Any]:
    return event("load", outputs=[{"namespace": "postgres://db:5432", "name": name, **facets}])


# (what the event holds, the event, the start of the quarantine reason)
UNSTORABLE: list[tuple[str, dict[str, Any], str]] = [
    (
        "a lone surrogate in the job name",
        event("load \ud800"),
        "job.name: holds a lone surrogate (\\ud800)",
    ),
    (
        "a lone surrogate in a dataset name",
        with_output("a.b.\udc80"),
        "outputs.0.name: holds a lone surrogate (\\udc80)",
    ),
    (
        "a lone surrogate in a facet key",
        with_output("a.b.c", facets={"x\udfff": {"k": 1}}),
        "outputs.0.facets.x\\udfff: the key holds a lone surrogate",
    ),
    (
        "a NUL in the job name",
        event("load\x00"),
        "job.name: holds a NUL character (\\u0000)",
    ),
    (
        "a NUL in a facet value",
        event("load", run="r-nul", producer="p\x00"),
        "producer: holds a NUL character",
    ),
    (
        "a job name over the bound the store indexes",
        event("j" * 3000),
        "job.name: 3,000 bytes long, over the 2,100 bytes the store indexes",
    ),
    (
        "a job namespace over the bound",
        event("load", namespace="é" * 501),
        "job.namespace: 1,002 bytes long",
    ),
    (
        "a run id over the bound",
        event("load", run="r" * 1001),
        "run.runId: 1,001 bytes long",
    ),
]
IDS = [what for what, _, _ in UNSTORABLE]


def good_events(count: int) -> list[dict[str, Any]]:
    events = [with_output(f"analytics.sales.t{i}") for i in range(count)]
    for i, raw in enumerate(events):
        raw["job"]["name"] = f"j{i}"
    return events


def check_the_store(store: EventStore, bad: dict[str, Any], reason: str, good: int) -> None:
    """``good`` events stored, the bad one quarantined with its reason and its raw event, and
    what is stored maps to a plan that can be printed."""
    assert len(list(store.events())) == good
    (kept,) = store.quarantine()
    assert kept.reason.startswith(reason), kept.reason
    assert json.loads(kept.raw) == json.loads(json.dumps(bad))  # the same JSON value, escapes
    plan = build((stored.payload for stored in store.events()), DEFINITION)
    plan.model_dump_json().encode("utf-8")
    assert len([e for e in plan.entities if e.key.name.startswith("t")]) == good


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_append_quarantines_an_event_no_store_can_hold_with_the_reason(
    store: EventStore, what: str, bad: dict[str, Any], reason: str
) -> None:
    for form in (bad, json.dumps(bad), json.dumps(bad).encode()):
        assert store.append(form) in (AppendOutcome.QUARANTINED, AppendOutcome.DUPLICATE)
    assert store.stats().quarantined == 1  # one event, in any form: one key
    for raw in good_events(3):
        assert store.append(raw) is AppendOutcome.ACCEPTED
    check_the_store(store, bad, reason, 3)


@pytest.mark.parametrize("letter", ["j", "数", "\U0001d538"], ids=["ascii", "cjk", "4-byte"])
def test_every_task_airflow_can_name_is_stored_not_quarantined(
    store: EventStore, letter: str
) -> None:
    """Airflow takes a DAG id and a task id of 250 characters each, in any script: the job
    ``<dag>.<task>`` is up to 2,004 bytes, and both stores index it (PostgreSQL's btree too)."""
    name = f"{letter * 250}.{letter * 250}"
    raw = event(name, run="r-long")
    assert store.append(raw) is AppendOutcome.ACCEPTED
    assert store.append_many([event(name, run="r-long-2")]).accepted == 1
    assert [e.run_id for e in store.events(job=("ns", name))] == ["r-long", "r-long-2"]
    assert store.stats().quarantined == 0


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_append_many_stores_the_rest_of_the_batch_and_quarantines_the_bad_one(
    store: EventStore, what: str, bad: dict[str, Any], reason: str
) -> None:
    good = good_events(19)
    counts = store.append_many([*good[:9], bad, *good[9:]])
    assert (counts.accepted, counts.duplicate, counts.quarantined) == (19, 0, 1)
    assert list(counts.quarantine_reasons) == [9]  # which one, by its place in the batch
    assert counts.quarantine_reasons[9].startswith(reason)
    check_the_store(store, bad, reason, 19)


def test_a_lone_surrogate_in_raw_text_is_kept_in_quarantine_as_its_bytes(
    store: EventStore,
) -> None:
    text = json.dumps(event("load \ud800"), ensure_ascii=False)  # the surrogate itself, no escape
    assert store.append(text) is AppendOutcome.QUARANTINED
    (kept,) = store.quarantine()
    assert kept.reason.startswith("job.name: holds a lone surrogate")
    assert kept.raw == text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def test_text_that_only_looks_like_an_escape_is_stored() -> None:
    """``"\\\\u0000"`` (a backslash, then ``u0000``) and a surrogate pair are plain text."""
    fine = event("a literal \\u0000 and an emoji \U0001f600 \\ud800")
    prepared = prepare_module.prepare(fine, source="t", received_at=datetime.now(UTC))
    assert not prepared.quarantined
    assert json.loads(prepared.values["payload"]) == fine


def _nested(levels: int) -> dict[str, Any]:
    """A schema field ``levels`` deep: deeper than ``json.dumps`` (and ``repr``) can write at
    Python's default recursion limit, as a producer's own objects can be."""
    field: dict[str, Any] = {"name": "leaf", "type": "int"}
    for level in range(levels):
        field = {"name": f"n{level}", "type": "struct", "fields": [field]}
    return with_output("a.b.deep", facets={"schema": {"fields": [field]}})


def _append(store: EventStore, raw: Any) -> None:
    assert store.append(raw) is AppendOutcome.QUARANTINED


def _append_many(store: EventStore, raw: Any) -> None:
    counts = store.append_many([raw, *good_events(1)])
    assert (counts.accepted, counts.quarantined) == (1, 1)


TOO_DEEP_WAYS_IN = [("append", _append), ("append_many", _append_many)]


@pytest.mark.parametrize("levels", [600, 1000, 5000])
@pytest.mark.parametrize(("way", "way_in"), TOO_DEEP_WAYS_IN, ids=[w for w, _ in TOO_DEEP_WAYS_IN])
def test_an_event_nested_too_deeply_to_write_as_json_is_quarantined_never_raised(
    store: EventStore, levels: int, way: str, way_in: Any
) -> None:
    """Bad input gets a clear error and loses nothing: an event object nested deeper than JSON
    can be written at Python's recursion limit made ``append`` raise ``RecursionError`` (its
    key and its raw bytes were written with ``json.dumps``, then ``repr``): the transport lost
    it. It is quarantined with the reason, its raw form is JSON, and the next event is stored."""
    bad = _nested(levels)
    way_in(store, bad)
    (kept,) = store.quarantine()
    assert "nested too deeply" in kept.reason
    assert kept.raw.startswith('{"eventTime":') and kept.raw.count('"struct"') == levels
    assert store.append(bad) is AppendOutcome.DUPLICATE  # the same key each time
    assert store.append(good_events(2)[1]) is AppendOutcome.ACCEPTED


# -- the ways in: transport, receiver, ingest ------------------------------------------------


@pytest.fixture
def fresh_transports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(transport_module, "_STORES", {})
    yield tmp_path / "lost-events.jsonl"
    for opened in transport_module._STORES.values():
        opened.close()


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_the_transport_quarantines_it_and_loses_nothing(
    store_url: str, fresh_transports: Path, what: str, bad: dict[str, Any], reason: str
) -> None:
    sink = BlindataTransport(
        BlindataTransportConfig(store_url=store_url, lost_events_path=str(fresh_transports))
    )
    assert sink.emit(bad) is AppendOutcome.QUARANTINED
    for raw in good_events(2):
        assert sink.emit(raw) is AppendOutcome.ACCEPTED
    assert not fresh_transports.exists()  # nothing went to the lost-events file
    with open_store(store_url) as store:
        check_the_store(store, bad, reason, 2)


def test_the_transport_quarantines_an_event_nested_too_deeply_and_loses_nothing(
    store_url: str, fresh_transports: Path
) -> None:
    sink = BlindataTransport(
        BlindataTransportConfig(store_url=store_url, lost_events_path=str(fresh_transports))
    )
    assert sink.emit(_nested(1000)) is AppendOutcome.QUARANTINED
    assert sink.emit(good_events(1)[0]) is AppendOutcome.ACCEPTED
    assert not fresh_transports.exists()
    with open_store(store_url) as store:
        (kept,) = store.quarantine()
        assert "nested too deeply" in kept.reason


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_the_receiver_answers_200_quarantined_never_503(
    store: EventStore, what: str, bad: dict[str, Any], reason: str
) -> None:
    app = create_receiver_app(keys=[KEY], store=store)
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    with TestClient(app) as client:  # the app closes the store when it shuts down
        single = client.post(ROUTE, content=json.dumps(bad), headers=headers)
        assert (single.status_code, single.json()) == (
            200,
            {"status": "success", "outcome": "quarantined"},
        )
        good = good_events(19)
        batch = client.post(
            f"{ROUTE}/batch", content=json.dumps([*good[:5], bad, *good[5:]]), headers=headers
        )
        assert batch.status_code == 200
        summary = batch.json()["summary"]
        assert (summary["accepted"], summary["duplicate"], summary["failed"]) == (19, 1, 0)
        check_the_store(store, bad, reason, 19)


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_a_batch_answer_lists_the_quarantined_event_by_index_with_its_reason(
    store: EventStore, what: str, bad: dict[str, Any], reason: str
) -> None:
    """Counted as successful (re-sending it would not help), yet its producer learns which one
    and why, without reading the Airflow log."""
    app = create_receiver_app(keys=[KEY], store=store)
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    good = good_events(6)
    body = [*good[:2], {"eventTime": 1}, *good[2:4], bad, *good[4:]]
    with TestClient(app) as client:
        answer = client.post(f"{ROUTE}/batch", content=json.dumps(body), headers=headers).json()
    assert answer["summary"]["quarantined"] == 1 and answer["summary"]["successful"] == 7
    assert [failed["index"] for failed in answer["failed_events"]] == [2]
    (quarantined,) = answer["quarantined_events"]
    assert quarantined["index"] == 5  # its place in the request, not among the good ones
    assert quarantined["reason"].startswith(reason)


@pytest.mark.parametrize(("what", "bad", "reason"), UNSTORABLE, ids=IDS)
def test_ingest_of_the_lost_events_file_stores_the_good_events(
    store_url: str, tmp_path: Path, what: str, bad: dict[str, Any], reason: str
) -> None:
    lost = tmp_path / "lost-events.jsonl"  # as the transport writes it: json.dumps, one a line
    good = good_events(19)
    lost.write_text("".join(json.dumps(raw) + "\n" for raw in [*good[:3], bad, *good[3:]]))
    done = subprocess.run(
        [CLI, "ingest", str(lost), "--store", store_url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"{lost}: 19 accepted, 0 duplicate, 1 quarantined" in done.stdout
    with open_store(store_url) as store:
        check_the_store(store, bad, reason, 19)


# -- PostgreSQL: a row the database refuses after all -----------------------------------------


@pytest.fixture
def latin1_url() -> Iterator[str]:
    """A store in a LATIN1 database: text outside Latin-1 is refused by the server itself."""
    import psycopg

    base = postgres_base_url()
    name = f"bd_latin1_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = _libpq(base)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            f"CREATE DATABASE {name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' "
            "TEMPLATE template0"
        )
    try:
        yield base.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def past_the_bound(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A store whose prepare lets a long job name through, so PostgreSQL's index refuses it."""
    monkeypatch.setitem(prepare_module.MAX_INDEXED_BYTES, "job.name", 10_000)
    with postgres_schema(postgres_base_url()) as url:
        yield url


REFUSED_BY_POSTGRES = [
    # (the database, the refused event, what PostgreSQL says)
    ("latin1_url", event("load 日本"), "has no equivalent in encoding"),
    (
        "past_the_bound",
        event(base64.b64encode(os.urandom(3000)).decode()),
        "index row size",
    ),
]


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("database", "bad", "says"),
    REFUSED_BY_POSTGRES,
    ids=["a character the database encoding lacks", "an index entry over the btree limit"],
)
def test_a_row_postgres_refuses_is_quarantined_alone_and_the_batch_is_stored(
    request: pytest.FixtureRequest, database: str, bad: dict[str, Any], says: str
) -> None:
    url = request.getfixturevalue(database)
    good = good_events(19)
    with open_store(url) as store:
        counts = store.append_many([*good[:9], bad, *good[9:]])
        assert (counts.accepted, counts.duplicate, counts.quarantined) == (19, 0, 1)
        assert list(counts.quarantine_reasons) == [9]
        assert says in counts.quarantine_reasons[9]
        assert store.append(bad) is AppendOutcome.DUPLICATE  # the quarantined copy
        second = event("again " + bad["job"]["name"])
        assert store.append(second) is AppendOutcome.QUARANTINED  # one event: not a 503
        assert len(list(store.events())) == 19
        kept = list(store.quarantine())
    assert [k.reason.startswith("the store refused it: ") for k in kept] == [True, True]
    assert all(says in k.reason for k in kept)
    assert json.loads(kept[0].raw) == bad
