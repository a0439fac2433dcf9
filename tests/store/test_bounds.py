"""A PostgreSQL that hangs or holds a lock never holds a writer past the store's bound.

The OpenLineage provider kills the child that emits after ``execution_timeout`` (10 s), and the
event then vanishes; an append must give up well before, so that the transport keeps the event
in the lost-events file. The servers here are real: PostgreSQL itself, a lock taken in it by
another session, a proxy to it that stops forwarding (a server that hangs while the store holds a
connection to it), and a TCP server that accepts and never answers.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
from airflow_blindata.store import AppendOutcome, EventStore, StoreUnavailableError, open_store
from airflow_blindata.store.postgres import PostgresEventStore

from .helpers import event, postgres_base_url
from .stalls import FreezingProxy, address, silent_server, through

pytestmark = pytest.mark.postgres

SLACK = 1.5
"""What a loaded machine may add to a bound (two cores, other test suites running)."""


def timed(call: Callable[[], Any], *, limit: float = 15.0) -> tuple[float, Any]:
    """``call()``'s seconds and its result or exception; a call still running after ``limit``
    seconds (a hang) fails the test instead of hanging it."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as error:
            outcome.append(error)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"still waiting after {limit:g} s"
    return time.monotonic() - started, outcome[0]


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as opened:
        yield opened


def _store(url: str, stack: ExitStack) -> EventStore:
    store = open_store(url)
    stack.callback(store.close)
    return store


def _bounded(postgres_url: str, stack: ExitStack) -> EventStore:
    """A store bound to 1 s, its schema made first by a store of the default bounds: these
    tests time a wait on the store, and making the schema on a loaded machine (the floors run
    beside real Airflow) took more than the second (a clean-clone CI run)."""
    open_store(postgres_url).close()
    return _store(f"{postgres_url}&timeout=1", stack)


def test_the_defaults_fit_well_within_the_providers_execution_timeout() -> None:
    store = PostgresEventStore.from_url("postgresql://bd@db/lineage")
    url = store._engine.url
    assert store._timeout == 3.0
    assert store._engine.pool.timeout() == 3.0
    assert url.query["connect_timeout"] == "2"
    assert url.query["options"] == "-c statement_timeout=5000 -c lock_timeout=2000"
    custom = PostgresEventStore.from_url(
        "postgresql://bd@db/lineage?timeout=1.5&options=-c%20lock_timeout=300"
    )
    assert custom._timeout == 1.5
    assert custom._engine.url.query["options"] == (
        "-c statement_timeout=5000 -c lock_timeout=1000 -c lock_timeout=300"  # the URL's wins
    )


def test_an_airflow_connection_passes_the_bounds_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_blindata.store import urls

    extra = {"timeout": "1.5", "lock_timeout": "800", "statement_timeout": "4000"}
    connection = {"conn_type": "postgres", "host": "db", "schema": "lineage", "extra": extra}
    monkeypatch.setenv("AIRFLOW_CONN_BD_BOUNDED", json.dumps(connection))

    store = open_store("airflow-conn://bd_bounded")

    assert isinstance(store, PostgresEventStore)
    assert store._timeout == 1.5
    assert store._engine.url.query["options"] == "-c statement_timeout=4000 -c lock_timeout=800"
    assert "timeout=1.5" in urls._connection_url("bd_bounded")


def test_a_server_that_accepts_and_never_answers_is_given_up_at_connect_timeout(
    stack: ExitStack,
) -> None:
    base = postgres_base_url()
    port = stack.enter_context(silent_server())
    store = _store(through(base, port), stack)

    seconds, outcome = timed(lambda: store.append(event()))

    assert isinstance(outcome, StoreUnavailableError), outcome
    assert "timeout expired" in str(outcome)  # psycopg 3 says "connection timeout expired"
    assert seconds < 2 + SLACK  # connect_timeout once: not once to check the schema, then again


@pytest.mark.parametrize("mode", ["ACCESS EXCLUSIVE", "SHARE"], ids=["migration", "create index"])
def test_an_append_waiting_for_a_lock_gives_up_at_the_lock_timeout(
    postgres_url: str, stack: ExitStack, mode: str
) -> None:
    import psycopg

    store = _bounded(postgres_url, stack)
    assert store.append(event("before")) is AppendOutcome.ACCEPTED
    schema = postgres_url.rsplit("schema=", 1)[1]
    holder = stack.enter_context(psycopg.connect(postgres_url.split("?")[0]))
    holder.execute(f'LOCK TABLE "{schema}".blindata_events IN {mode} MODE')  # until rollback

    seconds, outcome = timed(lambda: store.append(event("during")))

    assert isinstance(outcome, StoreUnavailableError), outcome
    assert "lock timeout" in str(outcome)  # the server's own, at two thirds of the bound
    assert seconds < 1 + SLACK
    holder.rollback()
    assert store.append(event("after")) is AppendOutcome.ACCEPTED  # the connection was kept


def test_the_syncs_reads_wait_for_a_lock_longer_than_an_append(
    postgres_url: str, stack: ExitStack
) -> None:
    import psycopg

    store = _bounded(postgres_url, stack)
    store.append(event("stored"))
    schema = postgres_url.rsplit("schema=", 1)[1]
    holder = stack.enter_context(psycopg.connect(postgres_url.split("?")[0]))
    holder.execute(f'LOCK TABLE "{schema}".blindata_events IN ACCESS EXCLUSIVE MODE')
    release = threading.Timer(1.5, holder.rollback)  # longer than an append's lock_timeout
    release.start()
    stack.callback(release.join)

    seconds, outcome = timed(lambda: [stored.job_name for stored in store.events()])

    assert outcome == ["stored"]
    assert seconds >= 1.4


def test_a_server_that_hangs_mid_session_is_given_up_at_the_timeout(
    postgres_url: str, stack: ExitStack
) -> None:
    proxy = stack.enter_context(FreezingProxy(address(postgres_url)))
    store = _store(f"{through(postgres_url, proxy.port)}&timeout=1", stack)
    assert store.append(event("before")) is AppendOutcome.ACCEPTED  # a pooled connection now
    proxy.freeze()

    seconds, outcome = timed(lambda: store.append(event("during")))

    assert isinstance(outcome, StoreUnavailableError), outcome
    assert "no answer from PostgreSQL within 1 s" in str(outcome)
    assert seconds < 1 + SLACK
    proxy.thaw()
    assert store.append(event("after")) is AppendOutcome.ACCEPTED  # the dead connection went


def test_a_batch_bounds_each_wait_on_a_server_that_hangs(
    postgres_url: str, stack: ExitStack
) -> None:
    proxy = stack.enter_context(FreezingProxy(address(postgres_url)))
    store = _store(f"{through(postgres_url, proxy.port)}&timeout=1", stack)
    assert store.append_many([event("before")]).accepted == 1
    proxy.freeze()

    seconds, outcome = timed(lambda: store.append_many([event(f"job{i}") for i in range(3)]))

    assert isinstance(outcome, StoreUnavailableError), outcome
    assert seconds < 1 + SLACK


def test_a_writer_waits_for_a_pooled_connection_no_longer_than_the_timeout(
    postgres_url: str, stack: ExitStack
) -> None:
    store = _bounded(postgres_url, stack)
    assert store.append(event("before")) is AppendOutcome.ACCEPTED
    engine = store._engine  # type: ignore[attr-defined]
    for _ in range(engine.pool.size() + engine.pool._max_overflow):  # every pooled connection
        stack.enter_context(engine.connect())

    seconds, outcome = timed(lambda: store.append(event("waiting")))

    assert isinstance(outcome, StoreUnavailableError), outcome
    assert "QueuePool limit" in str(outcome)
    assert seconds < 1 + SLACK


def test_the_transport_keeps_the_event_when_the_server_hangs(
    postgres_url: str, stack: ExitStack, tmp_path: Path
) -> None:
    proxy = stack.enter_context(FreezingProxy(address(postgres_url)))
    lost = tmp_path / "lost-events.jsonl"
    config = BlindataTransportConfig(
        store_url=f"{through(postgres_url, proxy.port)}&timeout=1", lost_events_path=str(lost)
    )
    transport = BlindataTransport(config)
    # A lost event is counted in Airflow's metrics, whose first import takes seconds here; a
    # task's process has imported them long before.
    importlib.import_module("airflow.providers.common.compat.sdk")
    first, second = event("stored"), event("kept")
    assert transport.emit(first) is AppendOutcome.ACCEPTED
    proxy.freeze()

    seconds, outcome = timed(lambda: transport.emit(second))

    assert outcome is None  # never raises into Airflow
    assert seconds < 1 + SLACK  # far below the provider's execution_timeout (10 s)
    assert [json.loads(line) for line in lost.read_text().splitlines()] == [second]
