"""The sync lock and the jobs received past a cursor: what the light sync stands on (issue 43)."""

from __future__ import annotations

from datetime import timedelta

from airflow_blindata.store import EventStore, open_store
from tests.builders import run_event

UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
HOUR = timedelta(hours=1)


def test_one_holder_at_a_time_until_it_gives_the_lock_back(store: EventStore) -> None:
    assert store.acquire_sync_lock(UUID, "snapshot 1", ttl=HOUR) is None
    held = store.acquire_sync_lock(UUID, "light 2", ttl=HOUR)
    assert held is not None and held.startswith("snapshot 1 (until ")
    assert store.acquire_sync_lock("another-definition", "light 2", ttl=HOUR) is None
    store.release_sync_lock(UUID, "light 2")  # not its lock: nothing given back
    assert store.acquire_sync_lock(UUID, "light 2", ttl=HOUR) is not None
    store.release_sync_lock(UUID, "snapshot 1")
    assert store.acquire_sync_lock(UUID, "light 2", ttl=HOUR) is None


def test_a_lock_whose_holder_died_is_taken_over_once_expired(store: EventStore) -> None:
    assert store.acquire_sync_lock(UUID, "snapshot 1", ttl=-HOUR) is None  # expired already
    assert store.acquire_sync_lock(UUID, "light 2", ttl=HOUR) is None
    assert store.acquire_sync_lock(UUID, "snapshot 3", ttl=HOUR) is not None


def test_the_lock_holds_across_processes_opening_the_same_store(store_url: str) -> None:
    with open_store(store_url) as one, open_store(store_url) as other:
        assert one.acquire_sync_lock(UUID, "cleanup 1", ttl=HOUR) is None
        assert other.acquire_sync_lock(UUID, "light 2", ttl=HOUR) is not None


def test_the_jobs_received_past_a_cursor_are_listed_once_each(store: EventStore) -> None:
    store.append(run_event("a", run_id="00000000-0000-4000-8000-000000000001"))
    cursor = store.last_id()
    store.append_many(
        [
            run_event("b", run_id="00000000-0000-4000-8000-000000000002"),
            run_event("b", run_id="00000000-0000-4000-8000-000000000003"),
            run_event("c", namespace="spark", run_id="00000000-0000-4000-8000-000000000004"),
        ]
    )
    assert store.jobs_since(cursor) == {("airflow", "b"), ("spark", "c")}
    assert store.jobs_since(0, until=cursor) == {("airflow", "a")}
    assert store.jobs_since(store.last_id()) == set()
