"""Reading the store one job at a time, and the SQL hash memo a snapshot keeps.

Named after issue "Scale": "Read the store job by job — fold one job's events ... and drop the
rest before reading the next job", and "keep that memo in the store so that the next snapshot
does not parse known SQL again".
"""

from __future__ import annotations

from sqlalchemy import text

from airflow_blindata.store import EventStore, open_store
from airflow_blindata.store import schema as schema_module

from .helpers import dataset_event, event, job_event


def test_events_come_one_job_at_a_time_then_the_dataset_events(store: EventStore) -> None:
    store.append(event("b", run="r1"))
    store.append(dataset_event("public.one"))
    store.append(event("a", run="r1"))
    store.append(event("b", run="r2", namespace="other"))
    store.append(job_event("b"))
    store.append(event("b", run="r3"))
    store.append(dataset_event("public.two"))
    groups = list(store.event_groups())
    keys = [
        {(e.job_namespace, e.job_name) if e.job_name else ("", e.kind) for e in group}
        for group in groups
    ]
    assert keys == [
        {("ns", "a")},
        {("ns", "b")},
        {("other", "b")},
        {("", "DatasetEvent")},
    ]
    assert [e.run_id for e in groups[1]] == ["r1", None, "r3"]  # cursor order within a job
    assert sum(len(group) for group in groups) == len(list(store.events()))


def test_a_read_stops_at_the_cursor_it_started_from(store: EventStore) -> None:
    store.append(event("a", run="r1"))
    store.append(dataset_event("public.one"))
    until = store.last_id()
    store.append(event("a", run="r2"))
    store.append(event("new", run="r1"))
    store.append(dataset_event("public.two"))
    groups = list(store.event_groups(until=until))
    assert [[e.run_id or e.kind for e in group] for group in groups] == [["r1"], ["DatasetEvent"]]
    assert store.job_keys(until=until) == [("ns", "a")]
    assert [key for key in store.job_keys()] == [("ns", "a"), ("ns", "new")]


def test_the_sql_hash_memo_is_replaced_by_what_the_last_snapshot_used(
    store: EventStore,
) -> None:
    assert store.sql_hashes() == {}
    store.keep_sql_hashes({"d1": "sha256:1", "d2": "sha256:2"})
    assert store.sql_hashes() == {"d1": "sha256:1", "d2": "sha256:2"}
    store.keep_sql_hashes({"d2": "sha256:2", "d3": "sha256:3"})
    assert store.sql_hashes() == {"d2": "sha256:2", "d3": "sha256:3"}


def test_a_store_of_the_first_schema_is_upgraded_with_its_events(sqlite_url: str) -> None:
    """A store written by the previous release gains the memo table and keeps its events."""
    with open_store(sqlite_url) as old:
        old.append(event("before", run="r0"))
        with old._writing() as conn:  # type: ignore[attr-defined]
            conn.execute(text(f"DROP TABLE {schema_module.PREFIX}sql_hashes"))
            conn.execute(text(f"UPDATE {schema_module.PREFIX}store_meta SET value = '1'"))
    with open_store(sqlite_url) as new:
        new.keep_sql_hashes({"d": "sha256:x"})
        assert new.sql_hashes() == {"d": "sha256:x"}
        assert [e.job_name for e in new.events()] == ["before"]
        assert new.stats().schema_version == schema_module.SCHEMA_VERSION
