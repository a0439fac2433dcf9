"""Between two snapshots a deployment changes more than the events: the job definition, a second
sync DAG sharing the store, retention, an upgrade. Whatever changed, a snapshot's plan is the
plan of reading every stored event at once (``build``) with the definition of that snapshot, and
the state kept for the next one (kept folds, the SQL hash memo) must not outlive what it was
made from."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlglot

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper import sql as sql_module
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold.kept import fold_settings
from airflow_blindata.mapper.sql import sql_hash
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import EventStore, open_store
from tests import builders
from tests.builders import at, dataset, policy, run_event, sql_facet
from tests.helpers import all_fixture_events
from tests.sync.helpers import _time, assert_read_at_once

from .helpers import definition

OTHER_UUID = "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f"


def _same_as_read_at_once(store: EventStore, job: JobDefinition) -> None:
    planned = plan_from_store(store, job)
    stored = [event.payload for event in store.events()]
    assert_read_at_once(planned, build(stored, job))


def _definitions() -> list[JobDefinition]:
    """A definition, then one that changes each option in turn (several at once, too), and a
    second sync DAG's (another uuid) sharing the store."""
    postgres = policy("postgres://*", nameTemplate="{host}", technology="PostgreSQL")
    return [
        definition(),
        definition(quality={"enabled": False}),
        definition(quality={"metricsEnabled": False, "suiteCode": "suite"}),
        definition(quality={"enabled": False, "metricsEnabled": False}),
        definition(processLayer=False, includeIndirect=True),
        definition(ignoredNamespaces=["postgres://*"]),
        definition(namespaceMappings=[{"pattern": "postgres://*", "system": {"name": "pg"}}]),
        builders.definition(policy("*", subtype="APPLICATION", entityCreation=False)),
        builders.definition(),
        definition(
            jobSystems=[{"pattern": "*", "system": {"name": "jobs"}, "creation": "IF_MISSING"}],
            openLineageSystem={"name": "lineage"},
            queryBucketName="bucket {uuid}",
        ),
        definition(retention={"rawEventsDays": 1}, cleanup={"enabled": False}),
        builders.definition(postgres, quality={"enabled": False}, uuid=OTHER_UUID),
    ]


def test_snapshots_under_a_definition_changed_between_them_plan_as_read_at_once(
    store_url: str,
) -> None:
    """Every producer's fixtures in three batches; after each, snapshots under definitions that
    differ in every option (the quality switches decide what a kept fold holds), then one more
    round with nothing new, going back to definitions whose folds are older."""
    events = sorted((e for e in all_fixture_events() if isinstance(e, dict)), key=_time)
    third = len(events) // 3
    batches = [events[:third], events[third : 2 * third], events[2 * third :], []]
    every = _definitions()
    with open_store(store_url) as store:
        for index, batch in enumerate(batches):
            store.append_many(json.dumps(event) for event in batch)
            for job in every[index::2]:
                _same_as_read_at_once(store, job)
        _same_as_read_at_once(store, every[0])


def _append(store: EventStore, events: list[dict[str, Any]], *, days_ago: int = 0) -> None:
    """Append ``events`` as if received ``days_ago`` days ago (retention counts from then)."""
    received = datetime.now(UTC) - timedelta(days=days_ago)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("airflow_blindata.store.core.now", lambda: received)
        store.append_many(json.dumps(event) for event in events)


def _run(job: str, run: int, **options: Any) -> list[dict[str, Any]]:
    """A run of ``job``, START then COMPLETE, in minute ``run`` (its id says which)."""
    run_id = f"00000000-0000-4000-8000-{run:012d}"
    options.setdefault("outputs", [dataset(f"public.{job}")])
    return [
        run_event(job, event_type=kind, run_id=run_id, time=at(second, minute=run), **options)
        for kind, second in (("START", 0), ("COMPLETE", 1))
    ]


def test_a_job_whose_every_event_went_is_not_described_nor_its_fold_kept(store_url: str) -> None:
    """Retention drops a job with no event for ``jobDescribedForDays``: the next snapshot no
    longer describes it, under either quality setting, and forgets its kept fold. When the job
    runs again, only its new events describe it, whatever fold another setting kept of it."""
    quality, plain = definition(), definition(quality={"enabled": False})
    old = _run("old", 1, outputs=[dataset("public.old")])
    with open_store(store_url) as store:
        _append(store, old, days_ago=40)
        _append(store, _run("recent", 2, outputs=[dataset("public.recent")]))
        for job in (quality, plain):
            _same_as_read_at_once(store, job)
        store.retain(raw_events_days=14, job_described_for_days=30)
        assert [e.job_name for e in store.events()] == ["recent", "recent"]
        _same_as_read_at_once(store, quality)
        assert store.folded_jobs(fold_settings(quality), [("airflow", "old")]) == {}
        assert ("airflow", "old") in store.folded_jobs(fold_settings(plain), [("airflow", "old")])
        again = _run("old", 3, outputs=[dataset("public.renamed")])
        _append(store, again)
        for job in (plain, quality, plain):
            _same_as_read_at_once(store, job)


def test_retention_between_snapshots_then_new_runs_plan_as_read_at_once(store_url: str) -> None:
    """A job's kept fold holds runs that retention then removes (all but its latest run), and as
    many new events arrive as were removed, or more: the fold is not extended but read whole."""
    job = definition()
    with open_store(store_url) as store:
        _append(store, _run("load", 1) + _run("load", 2), days_ago=20)
        _same_as_read_at_once(store, job)
        store.retain(raw_events_days=14, job_described_for_days=30)
        assert len(list(store.events())) == 2
        for run in (3, 4):
            _append(store, _run("load", run))
            _same_as_read_at_once(store, job)


def test_hourly_syncs_extend_the_kept_fold_but_the_first_of_a_day_after_a_prune(
    store_url: str,
) -> None:
    """A job that runs every hour, synced every hour: retention prunes its runs of a day at the
    first sync of the day 14 days later (then the job is read whole, its kept fold holding the
    pruned runs), and the syncs after it that day prune nothing and extend the kept fold."""
    job = definition()
    start = datetime(2026, 6, 1, tzinfo=UTC)

    def sync_at(moment: datetime, run: int) -> int:
        """Run ``run`` received at ``moment``, then a sync: how many kept folds it extended."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("airflow_blindata.store.core.now", lambda: moment)
            store.append_many(json.dumps(event) for event in _run("hourly", run))
        store.retain(raw_events_days=14, job_described_for_days=30, now=moment)
        planned = plan_from_store(store, job)
        assert_read_at_once(planned, build([e.payload for e in store.events()], job))
        return planned.report.counters.get("jobsExtended", 0)

    with open_store(store_url) as store:
        sync_at(start - timedelta(days=15), 0)  # the day before the last one kept
        for run, minutes in ((1, 30), (2, 90)):  # the last day kept, 14 days back
            sync_at(start - timedelta(days=14) + timedelta(minutes=minutes), run)
        extended = [sync_at(start + timedelta(hours=hour), 10 + hour) for hour in (0, 1, 2)]
        # the first sync of the day pruned the run received the day before the last one kept
        # (then the job is read whole); the next two pruned nothing and extended the fold kept
        # before (pruned by the hour, each would prune the run of 14 days and an hour before)
        assert extended == [0, 1, 1]
        assert len({e.run_id for e in store.events()}) == 5


def test_a_kept_fold_that_does_not_load_is_logged_without_the_job_namespaces_password(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 42: the task log names the job as the catalog does."""
    dirty = "postgres://etl:Pl4nted-S3cret@db:5432"
    job = definition()
    settings = fold_settings(job)
    with open_store(store_url) as store:
        _append(store, _run("load", 1, namespace=dirty))
        plan_from_store(store, job)
        ((key, (digest, _)),) = store.folded_jobs(settings, [(dirty, "load")]).items()
        store.keep_folded_jobs(settings, [(key, digest, "not JSON")])
        with caplog.at_level("INFO", logger="airflow_blindata.plans.store"):
            _same_as_read_at_once(store, job)
    assert "The kept fold of postgres://db:5432/load is not usable" in caplog.text
    assert "Pl4nted-S3cret" not in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        "not JSON",
        "null",
        "{}",
        '{"job": {}, "datasets": [], "runs": [], "report": {}}',  # a format before the cursor
    ],
)
def test_a_kept_fold_that_does_not_load_has_its_job_read_whole(store_url: str, text: str) -> None:
    """A kept fold of another format or damaged, under the digest of the job's events (the job
    unchanged) or an older one (the job received events since): not an error, a whole read."""
    job = definition()
    settings = fold_settings(job)
    with open_store(store_url) as store:
        _append(store, _run("load", 1))
        plan_from_store(store, job)
        kept = store.folded_jobs(settings, [("airflow", "load")])
        digest = kept[("airflow", "load")][0]
        store.keep_folded_jobs(settings, [(("airflow", "load"), digest, text)])
        _same_as_read_at_once(store, job)  # unchanged
        store.keep_folded_jobs(settings, [(("airflow", "load"), digest, text)])
        _append(store, _run("load", 2))
        _same_as_read_at_once(store, job)  # changed


QUERY = 'SELECT "id", `name` FROM orders WHERE note = "x"'


def test_a_jobs_sql_dialect_changed_between_snapshots_is_hashed_for_its_new_dialect(
    store_url: str,
) -> None:
    """The same SQL text under another dialect tokenizes otherwise (quotes name or spell a
    string): the memo of the snapshot before, made for the old dialect, does not answer."""
    assert sql_hash(QUERY, "postgres") != sql_hash(QUERY, "mysql")
    job = definition()
    with open_store(store_url) as store:
        for run, dialect in enumerate(["postgres", "mysql", "postgres"], start=1):
            _append(store, _run("load", run, job_facets=sql_facet(QUERY, dialect)))
            planned = plan_from_store(store, job)
            (routine,) = planned.routines
            assert routine.sql_hash == sql_hash(QUERY, dialect)
            _same_as_read_at_once(store, job)


def test_a_sql_hash_memo_kept_under_another_sqlglot_is_not_used(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlglot is upgraded between two snapshots (``sqlglot>=30.23``), and its tokenizer reads a
    text otherwise (new keywords): the memo of the snapshot before holds the old hashes, which a
    read of every event no longer gives. Kept, they would stay as long as the text is in use,
    then change when it leaves the memo once (another definition's snapshot keeps only its own)."""
    job = definition()
    with open_store(store_url) as store:
        _append(store, _run("load", 1, job_facets=sql_facet(QUERY, "postgres")))
        with monkeypatch.context() as before:
            before.setattr(sqlglot, "__version__", "25.0.0")
            before.setattr(sql_module, "normalize_sql", lambda sql, dialect=None: "older tokens")
            plan_from_store(store, job)
        _same_as_read_at_once(store, job)


def test_a_design_sent_once_still_describes_after_the_raw_events_are_pruned(
    store_url: str,
) -> None:
    """Seed 001: "A DatasetEvent with a lineage facet gives table flows between datasets, with
    no job"; seed 003: a repository may publish only JobEvents. Sent once, a design is described
    for ``jobDescribedForDays``: retention used to prune it after ``rawEventsDays`` (a later
    JobEvent with only a facet kept instead of the one listing the datasets), so the flows left
    the plan and the cleanup removed them."""
    job = definition(quality={"enabled": False})
    feeds = builders.dataset_event(
        "public.report", facets=builders.lineage_facet("public.source"), time=at(1)
    )
    designs = [
        builders.job_event(
            "design", time=at(1), inputs=[dataset("public.a")], outputs=[dataset("public.b")]
        ),
        builders.job_event("design", time=at(2), job_facets=builders.documentation_facet("x")),
    ]
    with open_store(store_url) as store:
        _append(store, [feeds, *designs], days_ago=20)
        before = plan_from_store(store, job)
        store.retain(raw_events_days=14, job_described_for_days=30)
        after = plan_from_store(store, job)
        names = sorted(flow.name for flow in before.flows)
        assert any("public.source" in name for name in names)  # the DatasetEvent's
        assert any("public.a" in name for name in names)  # the JobEvent's
        assert sorted(flow.name for flow in after.flows) == names
        _same_as_read_at_once(store, job)
