"""``EventStore.forget_job``: what ``airflow-blindata store forget-job`` reads and removes, on
SQLite and PostgreSQL (issue 38: retire a job now, dry run first)."""

from __future__ import annotations

import pytest

from airflow_blindata.store import open_store

from .helpers import event


@pytest.mark.parametrize(
    ("sentence", "dry_run", "left"),
    [
        ("a dry run counts the job's events and removes none", True, 5),
        ("forgetting removes every event of the job and no other", False, 2),
    ],
)
def test_forget_job(store_url: str, sentence: str, dry_run: bool, left: int) -> None:
    with open_store(store_url) as store:
        store.append_many(
            [
                event("sales.report", run="a", event_type="START"),
                event("sales.report", run="a"),
                event("sales.report", run="b"),
                event("sales.load"),
                event("sales.report", namespace="other"),
            ]
        )

        found = store.forget_job("ns", "sales.report", dry_run=dry_run)

        assert (found.events, found.runs, found.removed) == (3, 2, not dry_run), sentence
        assert found.first_received is not None and found.last_received is not None
        assert store.stats().events == left, sentence
        jobs = set(store.job_digests())
        assert (("ns", "sales.report") in jobs) is dry_run, sentence
        assert {("ns", "sales.load"), ("other", "sales.report")} <= jobs, sentence


def test_forgetting_a_job_the_store_does_not_hold_finds_nothing(store_url: str) -> None:
    with open_store(store_url) as store:
        found = store.forget_job("ns", "nothing", dry_run=False)
    assert (found.events, found.runs, found.removed) == (0, 0, False)
