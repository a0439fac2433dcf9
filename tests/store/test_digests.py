"""Listing the jobs follows what is new: the digests are kept, and retention keeps them right.

Named after issue "Scale": "a second snapshot with no new events mapping in seconds, not
minutes" and "A snapshot's mapping cost should follow the events received since the last
snapshot plus the size of the catalog".
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import inspect, text

from airflow_blindata.store import EventStore, open_store
from airflow_blindata.store import digests as digests_module
from airflow_blindata.store import folds as folds_module
from airflow_blindata.store import schema as schema_module

from .helpers import dataset_event, event, job_event

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _from_scratch(store: EventStore) -> dict[tuple[str, str], str]:
    """The digests as a store without a memo lists them: every event grouped."""
    tables, until = store._tables, store.last_id()  # type: ignore[attr-defined]
    with store._reading() as conn:  # type: ignore[attr-defined]
        sums = digests_module.aggregate(conn, tables, None, until)
    return {job: digests_module.digest(*sums[job]) for job in sorted(sums)}


def _age(store: EventStore, runs: list[str], days_ago: float) -> None:
    events = store._tables.events  # type: ignore[attr-defined]
    with store._writing() as conn:  # type: ignore[attr-defined]
        conn.execute(
            events.update()
            .where(events.c.run_id.in_(runs))
            .values(received_at=NOW - timedelta(days=days_ago))
        )


def _memo_rows(store: EventStore) -> int:
    table = store._tables.job_digests  # type: ignore[attr-defined]
    with store._reading() as conn:  # type: ignore[attr-defined]
        return len(conn.execute(table.select()).all())


def test_the_listing_is_kept_and_only_new_events_are_added_to_it(store: EventStore) -> None:
    store.append_many([event("a", run="r1"), event("b", run="r1"), dataset_event()])
    first = store.job_digests()
    assert _memo_rows(store) == 2
    memo = store._tables.job_digests  # type: ignore[attr-defined]
    with store._writing() as conn:  # type: ignore[attr-defined]
        conn.execute(memo.update().where(memo.c.job_name == "a").values(total=-7))
    # Nothing new: the kept listing is the answer (the tampered row shows it was not regrouped).
    assert store.job_digests()[("ns", "a")] == "1:-7"
    store.append_many([event("b", run="r2"), event("c", run="r1")])
    listed = store.job_digests()
    assert listed[("ns", "a")] == "1:-7"  # no new event: still the kept one
    assert listed[("ns", "b")] != first[("ns", "b")]
    assert list(listed) == [("ns", "a"), ("ns", "b"), ("ns", "c")]


@pytest.mark.parametrize(
    ("old_runs", "recent_runs", "raw_days", "described_days"),
    [
        pytest.param(["r1", "r2"], ["r3"], 14, 30, id="old runs pruned"),
        pytest.param(["r1"], [], 14, 30, id="latest description kept"),
        pytest.param(["r1", "r2"], [], 14, 10, id="job dropped entirely"),
        pytest.param([f"r{n}" for n in range(30)], ["new"], 14, 30, id="many batches"),
    ],
)
def test_retention_keeps_the_listing_equal_to_one_from_scratch(
    store: EventStore,
    monkeypatch: pytest.MonkeyPatch,
    old_runs: list[str],
    recent_runs: list[str],
    raw_days: int,
    described_days: int,
) -> None:
    from airflow_blindata.store import retention

    monkeypatch.setattr(retention, "DELETE_BATCH", 7)
    store.append_many(event("job", run=run) for run in old_runs + recent_runs)
    store.append_many([event("other", run="o1"), job_event("job")])
    _age(store, old_runs, days_ago=20)
    before = store.job_digests()  # kept: retention must take what it deletes out of it
    store.append(event("late", run="l1"))  # past the kept mark: not in the memo yet
    _age(store, ["l1"], days_ago=40)
    result = store.retain(raw_events_days=raw_days, job_described_for_days=described_days, now=NOW)
    assert result.events_removed > 0
    after = store.job_digests()
    assert after == _from_scratch(store)
    assert ("ns", "late") not in after  # past the mark when listed, pruned before the next
    assert after[("ns", "other")] == before[("ns", "other")]


def test_a_listing_read_before_a_prune_is_not_kept(store: EventStore) -> None:
    """The memo is written only if nothing moved since it was read (the prune counter)."""
    store.append(event("a", run="r1"))
    tables = store._tables  # type: ignore[attr-defined]
    with store._reading() as conn:  # type: ignore[attr-defined]
        seen, _, _ = digests_module.read_memo(conn, tables)
        sums = digests_module.aggregate(conn, tables, None, store.last_id())
    with store._writing() as conn:  # type: ignore[attr-defined]
        digests_module.subtract(conn, tables, [])  # a retention batch meanwhile
    with store._writing() as conn:  # type: ignore[attr-defined]
        assert not digests_module.write_memo(conn, tables, seen, 1, sums, replace=True)
    assert _memo_rows(store) == 0
    assert store.job_digests() == _from_scratch(store)


def test_dataset_events_are_read_through_their_own_index(sqlite_url: str) -> None:
    """Without it, reading the DatasetEvents scans every stored event, payloads included."""
    with open_store(sqlite_url) as store:
        store.append_many([event("a", run="r1"), dataset_event(), event("a", run="r2")])
        assert [e.kind for e in store.dataset_events()] == ["DatasetEvent"]
        tables = store._tables  # type: ignore[attr-defined]
        query = tables.events.select().where(
            schema_module.is_dataset_event(tables.events), tables.events.c.id > 0
        )
        engine = store._engine  # type: ignore[attr-defined]
        compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
        with store._reading() as conn:  # type: ignore[attr-defined]
            plan = " ".join(
                str(row[-1]) for row in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))
            )
    assert f"INDEX {schema_module.PREFIX}events_dataset_idx" in plan


def test_a_store_of_the_second_schema_is_upgraded_with_its_events(store_url: str) -> None:
    """A store written by the previous release gains the index and the kept digests."""
    prefix = schema_module.PREFIX
    with open_store(store_url) as old:
        old.append_many([event("before", run="r0"), dataset_event()])
        with old._writing() as conn:  # type: ignore[attr-defined]
            schema = old._tables.events.schema  # type: ignore[attr-defined]
            qualified = f"{schema}." if schema else ""
            conn.execute(text(f"DROP TABLE {qualified}{prefix}job_digests"))
            conn.execute(text(f"DROP INDEX {qualified}{prefix}events_dataset_idx"))
            meta = f"{qualified}{prefix}store_meta"
            conn.execute(text(f"DELETE FROM {meta} WHERE key <> 'schema_version'"))
            conn.execute(text(f"UPDATE {meta} SET value = '2'"))
    with open_store(store_url) as new:
        assert list(new.job_digests()) == [("ns", "before")]
        assert [e.kind for e in new.dataset_events()] == ["DatasetEvent"]
        assert new.stats().schema_version == schema_module.SCHEMA_VERSION
        assert _memo_rows(new) == 1
        with new._reading() as conn:  # type: ignore[attr-defined]
            names = {
                index["name"]
                for index in inspect(conn).get_indexes(f"{prefix}events", schema=schema)
            }
        assert f"{prefix}events_dataset_idx" in names


def test_kept_digests_deleted_by_hand_are_grouped_again(store: EventStore) -> None:
    """The memo is derived data: deleting its rows costs the next listing a full grouping."""
    store.append_many([event("a", run="r1"), event("b", run="r1")])
    first = store.job_digests()
    memo = store._tables.job_digests  # type: ignore[attr-defined]
    with store._writing() as conn:  # type: ignore[attr-defined]
        conn.execute(memo.delete().where(memo.c.job_name == "a"))
    assert store.job_digests() == first
    assert _memo_rows(store) == 2


@given(st.text(), st.text())
def test_a_kept_fold_is_found_by_the_key_it_was_kept_under(namespace: str, name: str) -> None:
    """Folds kept by an earlier version are found again: a job's key is still the digest of
    ``json.dumps([namespace, name], ensure_ascii=False)`` (lone surrogates written escaped),
    though no longer written by ``json.dumps``."""
    listed = json.dumps([namespace, name], ensure_ascii=False)
    expected = hashlib.sha256(listed.encode("utf-8", "backslashreplace")).hexdigest()
    assert folds_module._job_key((namespace, name)) == expected
