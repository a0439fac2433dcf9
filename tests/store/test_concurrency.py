"""Many writers at once lose nothing and duplicate nothing; a reader's cursor never skips.

8 processes append 2,000 events each (plus the same 200 shared events each, which must be
stored once) while this process pages through ``events(since=cursor)`` as the sync does: every
event must be seen exactly once, including those committed while it was reading. What is tested
is the overlap of writers and reader, not the volume (10,000 a writer took over a minute on two
cores for the same assertions): the test also asserts that the reader did read while writers
were still committing.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest

from airflow_blindata.store import open_store

from .helpers import event

WRITERS = 8
PER_WRITER = 2_000
SHARED = 200
FIXED_TIME = "2026-01-01T00:00:00+00:00"


def _write(url: str, writer: int) -> None:
    store = open_store(url)
    for i in range(PER_WRITER):
        store.append(event(f"w{writer}", run=f"{writer}-{i}", time=FIXED_TIME))
        if i < SHARED:  # every writer sends the same shared events: duplicates
            store.append(event("shared", run=f"s{i}", time=FIXED_TIME))
    store.close()


LOADED_MACHINE_TIMEOUT = 30
"""Seconds an append may take here. The 3 s default bounds one event on the capture path (tested
in test_bounds.py); 8 writers on a CI machine's 2 shared cores can exceed it, and an append that
gives up is not what this test is about (the transport keeps such an event in its lost-events
file)."""


def _with_timeout(url: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}timeout={LOADED_MACHINE_TIMEOUT}"


def _run(url: str) -> None:
    url = _with_timeout(url)
    open_store(url).last_id()  # create the schema up front, as the first writer would
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write, args=(url, w)) for w in range(WRITERS)]
    started = time.monotonic()
    for writer in writers:
        writer.start()
    reader = open_store(url)
    seen: dict[int, str] = {}
    cursor = 0

    def read() -> int:
        nonlocal cursor
        found = 0
        for stored in reader.events(since=cursor):
            assert stored.id not in seen, "an event was read twice"
            seen[stored.id] = stored.run_id or ""
            cursor = stored.id
            found += 1
        return found

    reads_among_writers = 0  # reads that found new events while writers were committing
    while any(writer.is_alive() for writer in writers):
        if read():
            reads_among_writers += 1
        time.sleep(0.2)
    read()
    elapsed = time.monotonic() - started
    assert [writer.exitcode for writer in writers] == [0] * WRITERS
    assert reads_among_writers >= 2, "the reader never read while the writers were committing"
    expected = {f"{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER)}
    expected |= {f"s{i}" for i in range(SHARED)}
    runs = list(seen.values())
    assert len(runs) == len(set(runs)), "an event was stored twice"
    assert set(runs) == expected, f"{len(expected - set(runs))} events lost"
    stats = reader.stats()
    assert stats.events == len(expected) and stats.quarantined == 0
    total = WRITERS * (PER_WRITER + SHARED)
    print(f"\n{reader.url}: {total} appends by {WRITERS} processes in {elapsed:.1f} s")


@pytest.mark.integration
@pytest.mark.timeout(480)
def test_sqlite_many_writers(sqlite_url: str) -> None:
    _run(sqlite_url)


@pytest.mark.integration
@pytest.mark.postgres
@pytest.mark.timeout(480)
def test_postgres_many_writers(postgres_url: str) -> None:
    _run(postgres_url)


def test_threads_share_one_store(store_url: str) -> None:
    """The HTTP receiver appends from a thread pool through one store object."""
    from concurrent.futures import ThreadPoolExecutor

    store = open_store(store_url)

    def write(thread: int) -> None:
        for i in range(200):
            store.append(event(f"t{thread}", run=f"{thread}-{i}", time=FIXED_TIME))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(8)))
    runs = [stored.run_id for stored in store.events()]
    assert len(runs) == len(set(runs)) == 1600
    store.close()
