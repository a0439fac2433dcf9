"""A snapshot from the store: mapped one job at a time, with the SQL hash memo it keeps.

Named after issue "Scale": "keep that memo in the store so that the next snapshot does not parse
known SQL again", and design 3.3: the same stored events give the same plan, read job by job.
"""

from __future__ import annotations

from typing import Any

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.build import build
from airflow_blindata.store import EventStore
from airflow_blindata.sync import fetch_known_systems
from airflow_blindata.sync.runner import plan_from_store, run_snapshot

from .conftest import dbt_events, definition


def test_the_store_is_mapped_job_by_job_into_the_plan_of_every_event(
    client: BlindataClient, store: EventStore
) -> None:
    events = dbt_events()
    store.append_many(events)
    known = fetch_known_systems(client)
    expected = build(events, definition(), known)
    assert plan_from_store(store, definition(), known, keep_memo=False) == expected


def test_a_second_snapshot_does_not_parse_known_sql_again(
    client: BlindataClient, store: EventStore, emulator: Any
) -> None:
    store.append_many(dbt_events())
    first = run_snapshot(definition(), client, store)
    assert first.status == "success", first.render()
    routines = first.counters["routines"]
    texts = len(store.sql_hashes())  # one per distinct SQL text (jobs may share one)
    assert 0 < texts <= routines and first.counters["sqlTextsParsed"] == texts

    second = run_snapshot(definition(), client, store)
    assert second.status == "success", second.render()
    assert second.counters["sqlTextsParsed"] == 0
    assert second.counters["routines"] == routines
