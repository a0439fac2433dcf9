"""A snapshot from the store: mapped one job at a time, with the SQL hash memo it keeps.

Named after issue "Scale": "keep that memo in the store so that the next snapshot does not parse
known SQL again", and design 3.3: the same stored events give the same plan, read job by job.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient
from airflow_blindata.events import registry
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.systems import (
    JOB_SYSTEM_NAME_PROPERTY,
    JOB_SYSTEM_PROPERTY,
    OWNER_PROPERTY,
    KnownSystem,
)
from airflow_blindata.plans import store as mapping
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import EventStore
from airflow_blindata.sync import fetch_known_systems
from airflow_blindata.sync.report import RunReport
from airflow_blindata.sync.runner import (
    recorded_systems,
    run_cleanup,
    run_light,
    run_snapshot,
    used_systems,
)
from tests.builders import DEFINITION_UUID, dataset, run_event
from tests.sync.helpers import (
    API_KEY,
    FAST_RETRY,
    TENANT,
    USER,
    assert_read_at_once,
    without_cache_counter,
)

from .helpers import dbt_events, definition


def test_the_store_is_mapped_job_by_job_into_the_plan_of_every_event(
    client: BlindataClient, store: EventStore
) -> None:
    events = dbt_events()
    store.append_many(events)
    known = fetch_known_systems(client)
    expected = without_cache_counter(build(events, definition(), known))
    assert (
        without_cache_counter(plan_from_store(store, definition(), known, keep=False)) == expected
    )


def test_jobs_that_received_nothing_new_are_loaded_not_read_again(
    client: BlindataClient, store: EventStore
) -> None:
    """Issue "Scale": a snapshot's mapping follows what was received since the last one."""
    events = dbt_events()
    store.append_many(events[:-5])
    known = fetch_known_systems(client)
    first = plan_from_store(store, definition(), known)
    assert first.report.counters["jobsUnchanged"] == 0
    store.append_many(events[-5:])  # new events for a few jobs
    second = plan_from_store(store, definition(), known)
    jobs = len(store.job_digests())
    changed = len({(e["job"]["namespace"], e["job"]["name"]) for e in events[-5:]})
    assert second.report.counters["jobsUnchanged"] == jobs - changed
    third = plan_from_store(store, definition(), known)
    assert third.report.counters["jobsUnchanged"] == jobs
    expected = build(events, definition(), known)
    assert_read_at_once(second, expected)
    assert_read_at_once(third, expected)


def test_retention_changes_the_digest_of_a_job(store: EventStore) -> None:
    events = dbt_events()
    store.append_many(events)
    before = store.job_digests()
    with store._writing() as conn:  # type: ignore[attr-defined]
        table = store._tables.events  # type: ignore[attr-defined]
        conn.execute(table.delete().where(table.c.id == store.last_id()))
    after = store.job_digests()
    assert sum(before[job] != after.get(job) for job in before) == 1


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


def _runs(job: str, runs: range) -> list[dict[str, Any]]:
    """START and COMPLETE of each run of ``job``, each run a day after the one before."""
    table = {"namespace": "postgres://db:5432", "name": f"shop.public.{job}"}
    schema = {"schema": {"fields": [{"name": "id", "type": "int"}]}}
    return [
        run_event(
            job,
            event_type=kind,
            run_id=f"00000000-0000-4000-8000-{job.encode().hex()[:4]}{run:08d}",
            time=f"2026-01-{1 + run:02d}T10:00:{second:02d}Z",
            inputs=[{"namespace": "postgres://db:5432", "name": "shop.public.raw"}],
            outputs=[{**table, "facets": schema}],
            job_facets={"sql": {"query": f"INSERT INTO {job} SELECT * FROM raw"}},
        )
        for run in runs
        for kind, second in (("START", 0), ("COMPLETE", 30))
    ]


def test_jobs_that_received_new_runs_add_them_to_their_kept_fold(
    client: BlindataClient, store: EventStore
) -> None:
    """Issue "Scale": a job's mapping follows the events received since the last snapshot; the
    plan is the one of every event. A run that goes on across the snapshot (its COMPLETE
    received after) takes its new events too; a run folded and dropped has the job read whole."""
    jobs = ("orders", "items", "users")
    store.append_many([e for job in jobs for e in _runs(job, range(3))])
    store.append_many(_runs("users", range(3, 4))[:1])  # users' run 3 started
    known = fetch_known_systems(client)
    first = plan_from_store(store, definition(), known)
    assert first.report.counters["jobsExtended"] == 0
    new = _runs("orders", range(3, 5)) + _runs("users", range(3, 4))[1:]
    store.append_many(new)
    second = plan_from_store(store, definition(), known)
    assert second.report.counters["jobsExtended"] == 2  # orders, users (its run went on)
    assert second.report.counters["jobsUnchanged"] == 1  # items
    every = [e for job in jobs for e in _runs(job, range(3))] + _runs("users", range(3, 4))
    every += _runs("orders", range(3, 5))
    expected = build(every, definition(), known)
    assert_read_at_once(second, expected)
    third = plan_from_store(store, definition(), known)
    assert third.report.counters["jobsUnchanged"] == 3
    assert_read_at_once(third, expected)


def test_a_store_whose_digests_do_not_count_has_changed_jobs_read_whole(
    client: BlindataClient, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store of another backend (``register_store``) may not say how many events a digest
    counts: a changed job is then read whole, never asked for what came past a cursor."""
    store.append_many(_runs("orders", range(2)))
    known = fetch_known_systems(client)
    plan_from_store(store, definition(), known)
    store.append_many(_runs("orders", range(2, 3)))
    reads = store.events_by_job

    def whole(jobs: Any, *, until: int | None = None, after: int | None = None) -> Any:
        assert after is None, "asked for what came past a cursor"
        return reads(jobs, until=until)

    monkeypatch.setattr(store, "digest_count", lambda digest: None)
    monkeypatch.setattr(store, "events_by_job", whole)
    second = plan_from_store(store, definition(), known)
    assert second.report.counters["jobsExtended"] == 0
    expected = build(_runs("orders", range(3)), definition(), known)
    assert without_cache_counter(second) == without_cache_counter(expected)


def test_what_a_plan_validated_does_not_stay_in_memory_after_it(
    client: BlindataClient, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue "Scale": memory bounded by the catalog. Facet texts validated once during a plan
    (``registry.facet_from_json``) are let go when it is made."""
    held: list[int] = []

    def forget() -> None:
        held.append(registry._read_once.cache_info().currsize)
        registry.forget_validated_facets()

    monkeypatch.setattr(mapping, "forget_validated_facets", forget)
    store.append_many(dbt_events())
    known = fetch_known_systems(client)
    plan_from_store(store, definition(), known)
    plan_from_store(store, definition(), known)  # kept folds loaded, their facets validated
    assert len(held) == 2 and all(held)
    assert registry._read_once.cache_info().currsize == 0


def test_a_blindata_url_s_token_never_reaches_the_report(emulator: Any, store: EventStore) -> None:
    """A ``?token=`` in the Blindata URL reached the report's ``blindata_url``: the sync history,
    ``snapshot --json``, ``report --json`` and the operators' XCom (a probe of secrets). The
    report names the Blindata it ran against with the token hidden."""
    client = BlindataClient(
        f"{emulator.base_url}/?token=SEKRET1",
        credentials=ApiKeyCredentials(USER, API_KEY),
        tenant=TENANT,
        retry=FAST_RETRY,
    )
    store.append_many(dbt_events())
    report = run_snapshot(definition(), client, store)  # whether the server takes it or not
    assert report.blindata_url is not None and "token=***" in report.blindata_url
    assert "SEKRET1" not in json.dumps(report.to_xcom()) + json.dumps(report.to_record())


SECRET = "s3cr3t-pw"
"""A password in the message of the error that stops a sync: redacted in its report and log."""


class Interrupted(BaseException):
    """As Airflow's ``AirflowTaskTimeout`` and ``AirflowTaskTerminated``: not an ``Exception``."""


def _stopping(error: BaseException) -> Callable[..., Any]:
    def stop(*args: Any, **kwargs: Any) -> Any:
        raise error

    return stop


SYNCS: dict[str, Callable[[BlindataClient, EventStore], RunReport]] = {
    "snapshot": lambda client, store: run_snapshot(definition(), client, store),
    "light": lambda client, store: run_light(definition(), client, store),
    "cleanup": lambda client, store: run_cleanup(definition(), client, store),
}


@pytest.mark.integration
@pytest.mark.usefixtures("no_margin")
@pytest.mark.parametrize(
    ("kind", "where", "wrote_scopes"),
    [
        pytest.param("snapshot", "airflow_blindata.sync.apply.sync_quality", True, id="snapshot"),
        pytest.param(
            "snapshot", "airflow_blindata.sync.runner.plan_from_store", False, id="snapshot-mapping"
        ),
        pytest.param("light", "airflow_blindata.sync.apply.sync_quality", True, id="light"),
        pytest.param("cleanup", "airflow_blindata.sync.removal.collect", False, id="cleanup"),
    ],
)
@pytest.mark.parametrize(
    "error",
    [
        pytest.param(TypeError(f"'>=' not supported, postgresql://etl:{SECRET}@db/dw"), id="bug"),
        pytest.param(Interrupted(f"timed out on postgresql://etl:{SECRET}@db/dw"), id="timeout"),
    ],
)
def test_a_sync_an_unexpected_error_stops_is_recorded_failed_with_the_error_redacted(
    client: BlindataClient,
    store: EventStore,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    where: str,
    wrote_scopes: bool,
    error: BaseException,
) -> None:
    """Only a locked definition or an unusable store was recorded: a sync a bug stopped (a
    ``batch_size`` of ``"500"``, a probe) left the previous success as the latest record, which
    the Blindata page showed. Now it is recorded ``failed``, naming the error without its
    secrets, with what it wrote before it stopped (its scopes are owned); an error is reported,
    a timeout or an interrupt goes on its way once recorded."""
    store.append_many(dbt_events())
    assert run_snapshot(definition(), client, store).status == "success"
    if kind == "light":
        store.append(
            run_event(
                "etl.late",
                run_id="01900000-0000-7000-8000-00000000000a",
                inputs=[dataset("shop.public.raw", "postgres://db:5432")],
                outputs=[dataset("shop.public.late", "postgres://db:5432")],
            )
        )
    monkeypatch.setattr(where, _stopping(error))

    with caplog.at_level(logging.ERROR, logger="airflow_blindata.sync.runner"):
        if isinstance(error, Exception):
            report = SYNCS[kind](client, store)
            assert report.status == "failed"
        else:
            with pytest.raises(Interrupted):
                SYNCS[kind](client, store)

    (latest,) = store.sync_history(definition().uuid, kind=kind, limit=1)  # type: ignore[arg-type]
    assert latest.status == "failed"
    message = latest.report["message"]
    assert type(error).__name__ in message and "postgresql://etl:***@db/dw" in message, message
    assert SECRET not in json.dumps(latest.report) + caplog.text
    assert bool(latest.report["scopes"]) is wrote_scopes
    if isinstance(error, Exception):  # the traceback, for whoever fixes the bug
        assert "Traceback" in caplog.text and f"in {_stopping.__name__}" not in message


@pytest.mark.integration
@pytest.mark.parametrize("batch_size", [0, -1, "500", True, 2.0])
def test_a_batch_size_that_is_not_a_positive_whole_number_is_refused_before_anything_is_written(
    client: BlindataClient, store: EventStore, emulator: Any, batch_size: Any
) -> None:
    """A batch of 0 rows ended every upload at once: only the Systems were written, the report
    said every entity done and the run succeeded (a probe of the operators)."""
    from airflow_blindata.sync import snapshot

    store.append_many(dbt_events())
    plan = build(dbt_events(), definition(), fetch_known_systems(client))
    runs: list[Callable[[], Any]] = [
        lambda: run_snapshot(definition(), client, store, batch_size=batch_size),
        lambda: run_light(definition(), client, store, batch_size=batch_size),
        lambda: snapshot(plan, client, definition(), batch_size=batch_size),
    ]
    for run in runs:
        refusal = f"batch_size must be a positive whole number, got {batch_size!r}"
        with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
            run()
    assert not [entry for entry in emulator.emulator.requests.entries() if entry["method"] != "GET"]
    assert store.sync_history(definition().uuid) == []


def test_the_systems_a_snapshot_records_find_a_job_system_a_steward_renamed_again() -> None:
    """The page maps the events with the Systems the last snapshot recorded: the stamp that
    finds the renamed job System is recorded with them, so the page shows the jobs where the
    snapshot put them, not in a System of the old name it would create."""
    renamed = KnownSystem(
        "Airflow production jobs",
        "0d2c7e4a-1111-4111-8111-111111111111",
        (
            (OWNER_PROPERTY, DEFINITION_UUID),
            (JOB_SYSTEM_PROPERTY, "true"),
            (JOB_SYSTEM_NAME_PROPERTY, "OpenLineage"),
        ),
    )
    job = definition()
    plan = build(dbt_events(), job, [renamed])
    report = RunReport(kind="snapshot", definition_uuid=job.uuid)
    report.known_systems = used_systems([renamed], plan)
    replayed = build(dbt_events(), job, recorded_systems(report))
    for each in (plan, replayed):
        (jobs,) = [system for system in each.systems if system.origin == "openlineage"]
        assert (jobs.name, jobs.uuid, jobs.create) == (renamed.name, renamed.uuid, False)
