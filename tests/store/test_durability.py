"""What survives a killed writer, a late commit, and a server that dropped its connections."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, insert

from airflow_blindata.store import open_store
from airflow_blindata.store.postgres import postgres_driver

from .helpers import event

WRITER = textwrap.dedent(
    """
    import sys, uuid
    from airflow_blindata.store import open_store
    store = open_store(sys.argv[1])
    padding = "x" * 20_000  # big events: a kill lands in the middle of writing pages
    while True:
        run = str(uuid.uuid4())
        store.append({
            "eventTime": "2026-01-01T00:00:00+00:00", "eventType": "COMPLETE",
            "run": {"runId": run}, "job": {"namespace": "ns", "name": "crash"},
            "producer": padding,
        })
        print(run, flush=True)  # printed only once append has returned
    """
)


@pytest.mark.integration
def test_a_writer_killed_mid_append_never_corrupts_the_store(store_url: str) -> None:
    open_store(store_url).last_id()
    acknowledged: set[str] = set()
    for _ in range(3):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        for _ in range(random.randint(50, 150)):
            acknowledged.add(writer.stdout.readline().strip())
        time.sleep(random.uniform(0, 0.05))
        writer.kill()  # SIGKILL, in the middle of whatever it was doing
        writer.wait()
        acknowledged |= {line.strip() for line in writer.stdout if line.strip()}
    acknowledged.discard("")
    if store_url.startswith("sqlite"):
        path = store_url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as check:
            assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with open_store(store_url) as store:
        stored = {s.run_id for s in store.events()}  # every payload still parses
        assert acknowledged <= stored, "an append that had returned was lost"
        store.append(event("after-the-crash"))
        # read again: on PostgreSQL a killed writer's last COMMIT, sent before the kill, may land
        # after the first read (it was not acknowledged, so nothing says it must be there)
        after = {s.run_id for s in store.events()}
        assert stored < after and len(after - stored) <= 2  # the new event, and that commit
        assert store.stats().events == len(after)


@pytest.mark.postgres
def test_postgres_cursor_waits_for_a_late_commit(postgres_url: str) -> None:
    """Id 1 commits after id 2: a cursor on ids would step over it for good; ours does not."""
    store = open_store(postgres_url)
    store.last_id()
    events = store._tables.events  # type: ignore[attr-defined]
    driver = f"postgresql+{postgres_driver()}"  # psycopg2 on SQLAlchemy 1.4
    slow = create_engine(postgres_url.split("?")[0].replace("postgresql", driver), future=True)
    with slow.connect() as conn:
        transaction = conn.begin()
        conn.execute(
            insert(events).values(
                key="late-key",
                received_at=datetime.now(UTC),
                kind="RunEvent",
                job_namespace="ns",
                job_name="late",
                run_id="late",
                source="test",
                payload='{"late": true}',
            )
        )
        store.append(event("early", run="early"))  # commits first, with a higher id
        first = list(store.events())
        assert [s.run_id for s in first] == ["early"]
        cursor = first[-1].id
        transaction.commit()
    assert [s.run_id for s in store.events(since=cursor)] == ["late"]
    slow.dispose()
    store.close()


@pytest.mark.postgres
def test_postgres_append_survives_dropped_connections(postgres_url: str) -> None:
    import psycopg

    name = f"bd_drop_{uuid.uuid4().hex[:8]}"
    store = open_store(f"{postgres_url}&application_name={name}")
    store.append(event("before"))  # leaves an idle connection in the pool
    with psycopg.connect(postgres_url.split("?")[0], autocommit=True) as admin:
        dropped = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (name,),
        ).fetchall()
    assert dropped == [(True,)]
    store.append(event("after"))
    assert {s.job_name for s in store.events()} == {"before", "after"}
    store.close()


@pytest.mark.integration
def test_forked_writers_of_a_process_holding_the_store_open(sqlite_url: str) -> None:
    """OpenLineage forks a child per event, maybe from a task that holds the store open.

    No SQLite connection may cross the fork (the children's garbage collector closing an
    inherited one can release their own locks): idle ones are closed before every fork.
    """
    import gc
    import os

    parent = open_store(sqlite_url)
    parent.append(event("parent"))  # an idle connection in the parent's pool
    orphan = open_store(sqlite_url)
    orphan.append(event("orphan"))
    del orphan  # garbage still holding a connection, as a dropped store is
    children = []
    for writer in range(6):
        child = os.fork()
        if child == 0:  # pragma: no cover - reports through its exit code
            code = 1
            try:
                gc.collect()  # finalize whatever was inherited
                store = open_store(sqlite_url)
                for i in range(300):
                    store.append(event(f"w{writer}", run=f"{writer}-{i}"))
                store.close()
                code = 0
            finally:
                os._exit(code)
        children.append(child)
    assert [os.waitstatus_to_exitcode(os.waitpid(c, 0)[1]) for c in children] == [0] * 6
    parent.append(event("parent-after"))
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert parent.stats().events == 6 * 300 + 3
    parent.close()


def test_no_idle_connection_crosses_a_fork(store_url: str) -> None:
    import os

    store = open_store(store_url)
    store.append(event("a"))
    assert store._engine.pool.checkedin() == 1  # type: ignore[attr-defined]
    child = os.fork()
    if child == 0:  # pragma: no cover
        os._exit(0)
    os.waitpid(child, 0)
    assert store._engine.pool.checkedin() == 0  # type: ignore[attr-defined]
    store.append(event("b"))  # and it reconnects
    assert store.stats().events == 2
    store.close()
