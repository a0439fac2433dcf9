"""Reading the store one job at a time, and the SQL hash memo a snapshot keeps.

Named after issue "Scale": "Read the store job by job — fold one job's events ... and drop the
rest before reading the next job", and "keep that memo in the store so that the next snapshot
does not parse known SQL again".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text

from airflow_blindata.store import EventStore, open_store
from airflow_blindata.store import core as core_module
from airflow_blindata.store import schema as schema_module

from .helpers import dataset_event, event, job_event


def groups(store: EventStore, until: int | None = None) -> list[list[str]]:
    """The store read as a snapshot reads it: job by job, then the DatasetEvents."""
    read = [
        [event.run_id or event.kind for event in store.events(job=job, until=until)]
        for job in store.job_digests(until=until)
    ]
    return [*read, [event.kind for event in store.dataset_events(until=until)]]


def test_events_come_one_job_at_a_time_then_the_dataset_events(store: EventStore) -> None:
    store.append(event("b", run="r1"))
    store.append(dataset_event("public.one"))
    store.append(event("a", run="r1"))
    store.append(event("b", run="r2", namespace="other"))
    store.append(job_event("b"))
    store.append(event("b", run="r3"))
    store.append(dataset_event("public.two"))
    assert list(store.job_digests()) == [("ns", "a"), ("ns", "b"), ("other", "b")]
    assert groups(store) == [
        ["r1"],
        ["r1", "JobEvent", "r3"],  # cursor order within a job
        ["r2"],
        ["DatasetEvent", "DatasetEvent"],
    ]


def test_a_read_stops_at_the_cursor_it_started_from(store: EventStore) -> None:
    store.append(event("a", run="r1"))
    store.append(dataset_event("public.one"))
    until = store.last_id()
    store.append(event("a", run="r2"))
    store.append(event("new", run="r1"))
    store.append(dataset_event("public.two"))
    assert groups(store, until) == [["r1"], ["DatasetEvent"]]
    assert list(store.job_digests()) == [("ns", "a"), ("ns", "new")]


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


def test_a_job_digest_changes_with_its_events_and_only_then(store: EventStore) -> None:
    store.append(event("a", run="r1"))
    store.append(event("b", run="r1"))
    before = store.job_digests()
    assert list(before) == [("ns", "a"), ("ns", "b")]
    again = event("b", run="r2", time="2026-01-01T00:00:00Z")
    store.append(again)
    store.append(again)  # a duplicate is not stored: no change
    after = store.job_digests()
    assert after[("ns", "a")] == before[("ns", "a")]
    assert after[("ns", "b")] != before[("ns", "b")]
    assert store.job_digests(until=store.last_id() - 1) == before


def test_kept_folds_are_replaced_per_job_and_forgotten_with_their_job(store: EventStore) -> None:
    long_name = ("ns", "x" * 900)  # a job key of any length is indexed by its digest
    store.keep_folded_jobs("s1", [(("ns", "a"), "d1", "A1"), (long_name, "d1", "L1")])
    store.keep_folded_jobs("s2", [(("ns", "a"), "d1", "other settings")])
    store.keep_folded_jobs("s1", [(("ns", "a"), "d2", "A2")])
    wanted = [("ns", "a"), long_name, ("ns", "b")]
    assert store.folded_jobs("s1", wanted) == {("ns", "a"): ("d2", "A2"), long_name: ("d1", "L1")}
    store.forget_folded_jobs("s1", [("ns", "a")])
    assert store.folded_jobs("s1", wanted) == {("ns", "a"): ("d2", "A2")}
    assert store.folded_jobs("s2", wanted) == {("ns", "a"): ("d1", "other settings")}


DAY = timedelta(days=1)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def kept(store: EventStore, *settings: str) -> dict[str, str]:
    """Each settings' kept fold of job ns/a."""
    found = {name: store.folded_jobs(name, [("ns", "a")]) for name in settings}
    return {name: folds[("ns", "a")][1] for name, folds in found.items() if folds}


def test_folds_of_settings_no_snapshot_used_for_a_week_are_dropped(store: EventStore) -> None:
    """An upgrade changes the settings folds are kept under: the old release's copy of the
    catalog's folds goes a week after the last snapshot that used it, not never."""
    store.keep_folded_jobs("old", [(("ns", "a"), "d1", "kept by the old release")])
    store.keep_folded_jobs("new", [(("ns", "a"), "d1", "kept by the new one")])
    store.forget_folded_jobs("new", [("ns", "a")], now=T0)  # "old" is found, unmarked
    store.forget_folded_jobs("new", [("ns", "a")], now=T0 + 7 * DAY)
    assert kept(store, "old", "new") == {
        "old": "kept by the old release",
        "new": "kept by the new one",
    }
    store.forget_folded_jobs("new", [("ns", "a")], now=T0 + 8 * DAY)
    assert kept(store, "old", "new") == {"new": "kept by the new one"}


def test_two_definitions_sharing_a_store_keep_their_folds_while_both_are_used(
    store: EventStore,
) -> None:
    """Quality switches change the settings: two definitions on one store keep apart."""
    store.keep_folded_jobs("quality", [(("ns", "a"), "d1", "Q")])
    store.keep_folded_jobs("plain", [(("ns", "a"), "d1", "P")])
    for day in range(0, 30, 3):
        store.forget_folded_jobs("quality", [("ns", "a")], now=T0 + day * DAY)
        store.forget_folded_jobs("plain", [("ns", "a")], now=T0 + (day + 1) * DAY)
    assert kept(store, "quality", "plain") == {"quality": "Q", "plain": "P"}
    store.forget_folded_jobs("plain", [("ns", "a")], now=T0 + 40 * DAY)
    assert kept(store, "quality", "plain") == {"plain": "P"}


def test_a_store_of_the_third_schema_gains_the_marks_and_keeps_its_folds(
    sqlite_url: str,
) -> None:
    """A store written before the marks: its folds are kept until a week of disuse."""
    with open_store(sqlite_url) as old:
        old.keep_folded_jobs("before", [(("ns", "a"), "d1", "B")])
        with old._writing() as conn:  # type: ignore[attr-defined]
            conn.execute(text(f"DROP TABLE {schema_module.PREFIX}fold_settings"))
            conn.execute(text(f"UPDATE {schema_module.PREFIX}store_meta SET value = '3'"))
    with open_store(sqlite_url) as new:
        assert kept(new, "before") == {"before": "B"}
        new.forget_folded_jobs("after", [], now=T0)
        assert kept(new, "before") == {"before": "B"}
        assert new.stats().schema_version == schema_module.SCHEMA_VERSION
        new.forget_folded_jobs("after", [], now=T0 + 8 * DAY)
        assert kept(new, "before") == {}


@pytest.mark.postgres
def test_a_backlog_larger_than_a_stamping_batch_is_read_whole(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A burst at the receiver or a big ingest leaves many events to stamp: they are stamped in
    batches that each fit the statement timeout, none skipped, in order."""
    from airflow_blindata.store import postgres

    monkeypatch.setattr(postgres, "STAMP_BATCH", 7)
    with open_store(postgres_url) as store:
        store.append_many([event(f"j{n % 3}", run=f"r{n}") for n in range(30)])
        assert store.last_id() == 30
        assert sorted(e.id for e in store.events()) == list(range(1, 31))
        assert sum(1 for job in store.job_digests() for _ in store.events(job=job)) == 30


@pytest.mark.postgres
def test_the_syncs_reads_are_not_bound_by_the_appends_statement_timeout(
    postgres_url: str,
) -> None:
    """``statement_timeout`` bounds what capture waits for; listing a big store may take longer."""
    with open_store(postgres_url) as store:  # the schema made without the bound
        store.append(event("a", run="r1"))
    # 300 ms: a loaded machine's own statements stay under it, the sleeps of 1 s do not.
    with open_store(f"{postgres_url}&statement_timeout=300") as store:
        with store._reading() as conn:  # type: ignore[attr-defined]
            conn.execute(text("SELECT pg_sleep(1.0)"))  # over the 300 ms of appends
        appending = store._appending()  # type: ignore[attr-defined]
        with appending as conn, pytest.raises(Exception, match="statement timeout"):
            conn.execute(text("SELECT pg_sleep(1.0)"))


@pytest.mark.parametrize(("page", "batch"), [(1000, 500), (2, 500), (3, 2), (1, 1)])
def test_events_by_job_reads_many_jobs_per_query_as_events_reads_each(
    store: EventStore, monkeypatch: pytest.MonkeyPatch, page: int, batch: int
) -> None:
    """The same texts, job by job in cursor order, whatever the pages and batches; a job with
    no events up to the cursor is left out."""
    monkeypatch.setattr(core_module, "PAGE_SIZE", page)
    monkeypatch.setattr(core_module, "BATCH_SIZE", batch)
    for run in ("r1", "r2", "r3"):
        store.append(event("b", run=run))
        store.append(event("a", run=run))
    store.append(event("é", run="r1", namespace="other"))
    store.append(job_event("b"))
    until = store.last_id()
    store.append(event("a", run="r4"))
    store.append(event("late", run="r1"))
    asked = [("ns", "a"), ("ns", "b"), ("ns", "missing"), ("other", "é"), ("ns", "late")]
    read = {
        job: [json.loads(text) for text in texts]
        for job, texts in store.events_by_job(asked, until=until)
    }
    expected = {
        job: [e.payload for e in store.events(job=job, until=until)]
        for job in asked
        if list(store.events(job=job, until=until))
    }
    assert list(read) == [("ns", "a"), ("ns", "b"), ("other", "é")]
    assert read == expected
    assert [len(events) for events in read.values()] == [3, 4, 1]


def test_events_by_job_after_a_cursor_reads_what_came_since(store: EventStore) -> None:
    """What a snapshot adds to a kept fold: the events past the cursor it was made up to; the
    digest counts them on top of those folded."""
    for run in ("r1", "r2"):
        store.append(event("a", run=run))
        store.append(event("b", run=run))
    mark = store.last_id()
    before = store.job_digests(until=mark)
    store.append(event("a", run="r3"))
    store.append(event("a", run="r4"))
    until = store.last_id()
    after = store.job_digests(until=until)
    read = dict(store.events_by_job([("ns", "a"), ("ns", "b")], until=until, after=mark))
    assert [json.loads(text)["run"]["runId"] for text in read[("ns", "a")]] == ["r3", "r4"]
    assert ("ns", "b") not in read
    counted = store.digest_count(before[("ns", "a")])
    assert counted is not None and store.digest_count(after[("ns", "a")]) == counted + 2
    assert store.digest_count("not a digest") is None


def test_an_event_stamped_after_the_cursor_is_read_whatever_its_id(store: EventStore) -> None:
    """PostgreSQL orders events by ``seq``, stamped at commit: an event with a lower id can come
    past the cursor (a slow writer). Reading past a cursor goes by ``seq``, so it finds that
    event (SQLite's cursor is the id: nothing to show)."""
    if store.backend != "postgresql":  # type: ignore[attr-defined]
        pytest.skip("SQLite's cursor is the id: no event can come past the cursor out of order")
    store.append(event("a", run="late"))
    store.append(event("a", run="r1"))
    store.last_id()  # stamps both
    tables = store._tables  # type: ignore[attr-defined]
    with store._writing() as conn:  # type: ignore[attr-defined]
        first = conn.execute(select(func.min(tables.events.c.id))).scalar()
        conn.execute(tables.events.update().where(tables.events.c.id == first).values(seq=None))
    mark = store.last_id()  # re-stamps the first event past every other
    store.append(event("a", run="r2"))
    read = dict(store.events_by_job([("ns", "a")], until=store.last_id(), after=mark - 1))
    runs = [json.loads(text)["run"]["runId"] for text in read[("ns", "a")]]
    assert runs == ["late", "r2"]
