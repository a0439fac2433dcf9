"""The light sync (issue 43): the jobs that received events since the last sync, nothing removed.

Real parts: the emulator over loopback HTTP (its request log counts the calls), the SQLite store
and PostgreSQL where the store is concerned (``store_url``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.light import plan_of_jobs
from airflow_blindata.store import EventStore, open_store
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.report import RunReport
from airflow_blindata.sync.runner import (
    has_new_events,
    run_cleanup,
    run_light,
    run_snapshot,
    sync_lock,
)
from tests.builders import assertion, assertions_facet, dataset, run_event

from .helpers import definition, next_second, objects, plan_for

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

PG = "postgres://db:5432"
JOBS = ("orders", "items", "users", "stock", "prices")
BATCH = 2
"""Rows per upload: small, so that the requests count the objects sent, as at scale."""


def runs(
    job: str, run: int, *, output: str | None = None, checked: bool = False
) -> list[dict[str, Any]]:
    """START and COMPLETE of run ``run`` of ``job``: raw → its table, with SQL and a schema
    (``checked``: an assertion on its input, passed)."""
    table = {"namespace": PG, "name": f"shop.public.{output or job}"}
    schema = {"schema": {"fields": [{"name": "id", "type": "int"}, {"name": "v", "type": "int"}]}}
    tested = assertions_facet(assertion("not_null", column="id")) if checked else None
    return [
        run_event(
            job,
            event_type=kind,
            run_id=f"00000000-0000-4000-8000-{job.encode().hex()[:4]}{run:08d}",
            time=f"2026-01-{1 + run:02d}T10:00:{second:02d}Z",
            inputs=[dataset(f"shop.public.raw_{job}", PG, facets=schema, input_facets=tested)],
            outputs=[{**table, "facets": schema}],
            job_facets={"sql": {"query": f"INSERT INTO {output or job} SELECT * FROM raw_{job}"}},
        )
        for kind, second in (("START", 0), ("COMPLETE", 30))
    ]


def job_definition() -> JobDefinition:
    return definition(cleanup={"maxRemovalShare": 0.5})


def requests_since(emulator: Any, mark: int) -> list[dict[str, Any]]:
    return list(emulator.emulator.requests.entries(mark))


def mark_of(emulator: Any) -> int:
    entries = emulator.emulator.requests.entries()
    return int(entries[-1]["id"]) if entries else 0


def writes(entries: list[dict[str, Any]]) -> Counter[str]:
    return Counter(entry["method"] for entry in entries if entry["method"] != "GET")


def synced(
    client: BlindataClient, store: EventStore, emulator: Any, *, light: bool = False
) -> RunReport:
    next_second(emulator)
    job = job_definition()
    if light:
        return run_light(job, client, store, batch_size=BATCH)
    return run_snapshot(job, client, store, apply_retention=False, batch_size=BATCH)


def test_a_light_sync_publishes_only_the_jobs_that_received_events(
    client: BlindataClient, emulator: Any, store_url: str
) -> None:
    with open_store(store_url) as store:
        store.append_many([event for job in JOBS for event in runs(job, 1)])
        full_mark = mark_of(emulator)
        full = synced(client, store, emulator)
        assert full.status == "success" and full.cursor == store.last_id()
        full_requests = requests_since(emulator, full_mark)
        second_mark = mark_of(emulator)
        assert synced(client, store, emulator).status == "success"  # nothing new: all again
        second_requests = requests_since(emulator, second_mark)

        store.append_many(runs("orders", 2))
        light_mark = mark_of(emulator)
        light = synced(client, store, emulator, light=True)
        light_requests = requests_since(emulator, light_mark)

    assert light.kind == "light" and light.status == "success", light.message
    assert light.jobs == ["airflow/orders"]
    assert light.counters["entities"] == 3  # the job, its input and its output
    # what the plan holds counts the part published (the whole store's: 10 of each)
    assert (light.counters["datasets"], light.counters["datasetEntities"]) == (2, 2)
    assert "DELETE" not in writes(light_requests)
    # requests proportional to what changed: one job of five
    assert len(light_requests) < len(second_requests) < len(full_requests)
    assert sum(writes(light_requests).values()) <= sum(writes(second_requests).values()) / 3
    # only the objects of ``orders`` were refreshed by the light sync
    refreshed = {
        (entity.get("schema"), entity["name"])
        for entity in objects(emulator, Kind.ENTITY)
        if entity["modificationDate"] >= light.watermark.isoformat()[:19]  # type: ignore[union-attr]
    }
    assert refreshed == {
        ("public", "orders"),
        ("public", "raw_orders"),
        ("airflow", "orders"),
    }


def test_nothing_new_skips_the_light_sync_at_once_and_records_nothing(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    job = job_definition()
    store.append_many(runs("orders", 1))
    first = run_light(job, client, store)
    assert (first.status, first.message) == (
        "skipped",
        "no full snapshot of this definition yet: the snapshot publishes all",
    )
    synced(client, store, emulator)
    assert not has_new_events(store, job)
    mark = mark_of(emulator)
    skipped = run_light(job, client, store)
    assert (skipped.status, skipped.message) == ("skipped", "nothing new since the last sync")
    assert requests_since(emulator, mark) == []
    assert store.sync_history(job.uuid, kind="light") == []
    store.append_many(runs("orders", 2))
    assert has_new_events(store, job)
    assert synced(client, store, emulator, light=True).status == "success"
    assert not has_new_events(store, job)  # the light sync's cursor counts too


def test_a_light_sync_removes_nothing_a_job_no_longer_describes(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    store.append_many(runs("orders", 1) + runs("items", 1))
    synced(client, store, emulator)
    flows_before = scoped_flows(emulator)
    store.append_many(runs("orders", 2, output="orders_v2"))  # orders now writes elsewhere
    mark = mark_of(emulator)
    light = synced(client, store, emulator, light=True)
    assert light.status == "success"
    assert "DELETE" not in writes(requests_since(emulator, mark))
    flows_after = scoped_flows(emulator)
    assert flows_before < flows_after  # the new flow added, the old one still there
    assert [name for _, name in flows_after - flows_before] == [
        "public.raw_orders -> public.orders_v2 @airflow/orders"
    ]


def test_a_light_sync_disables_no_check_of_the_jobs_it_leaves_out(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    store.append_many(runs("orders", 1, checked=True) + runs("items", 1, checked=True))
    synced(client, store, emulator)
    store.append_many(runs("orders", 2, checked=True))
    light = synced(client, store, emulator, light=True)
    assert light.status == "success", light.message
    assert light.counters["qualityResultsPublished"] == 1  # orders' new run, only
    checks = [c for c in objects(emulator, Kind.CHECK) if not c["code"].startswith("ol-ledger:")]
    assert len(checks) == 2 and all(check["enabled"] is not False for check in checks)


def test_a_light_sync_reads_the_fields_of_many_entities_by_their_schema(
    client: BlindataClient, emulator: Any
) -> None:
    """Past ``lookup_limit`` entities of a System, a light sync lists the fields of their schemas
    (a few pages), not the whole System's, and finds every field it refreshes."""
    job = job_definition()
    events = [event for name in JOBS for event in runs(name, 1)]
    plan = plan_for(client, events, job)
    snapshot(plan, client, job)
    next_second(emulator)
    part = plan_of_jobs(plan, [("airflow", "orders"), ("airflow", "items")])
    mark = mark_of(emulator)
    light = snapshot(part, client, job, light=True, lookup_limit=1)
    listings = [
        entry["query"]
        for entry in requests_since(emulator, mark)
        if entry["method"] == "GET" and entry["path"] == "/api/v1/physical_fields"
    ]
    assert light.status == "success"
    assert len(listings) == 1 and "physicalEntitySchema=public" in listings[0]
    assert light.counters["fieldsRefreshed"] == 8  # two fields of four tables, all found
    assert light.counters.get("fieldsCreated", 0) == 0


def scoped_flows(emulator: Any) -> set[tuple[str, str]]:
    """The flows the definition wrote (those of Blindata's SQL analysis have no scope: a SQL
    that changed is analysed again, and Blindata replaces them, light sync or not)."""
    return {
        (flow["scope"], flow["name"])
        for flow in objects(emulator, Kind.FLOW)
        if (flow.get("scope") or "").startswith("ol:")
    }


def _cleanup_removes(
    client: BlindataClient, emulator: Any, store: EventStore, *, light_between: bool
) -> dict[str, list[str]]:
    """Full snapshot; ``orders`` moves to another table and ``items`` runs again; full snapshot;
    (a light sync of a new run of ``users``, between the snapshot and its cleanup); cleanup."""
    store.append_many([event for job in JOBS for event in runs(job, 1)])
    synced(client, store, emulator)
    store.append_many(runs("orders", 2, output="orders_v2") + runs("items", 2))
    if light_between:
        assert synced(client, store, emulator, light=True).jobs == [
            "airflow/items",
            "airflow/orders",
        ]
    synced(client, store, emulator)
    if light_between:
        store.append_many(runs("users", 2))
        assert synced(client, store, emulator, light=True).jobs == ["airflow/users"]
    next_second(emulator)
    report = run_cleanup(job_definition(), client, store)
    assert report.status == "success", report.message
    return {kind: sorted(group.examples) for kind, group in report.removed.items()} | {
        f"{kind} count": [str(group.count)] for kind, group in report.removed.items()
    }


def test_a_cleanup_after_light_syncs_removes_exactly_what_it_would_without_them(
    client: BlindataClient, emulator: Any, store_url: str, tmp_path: Any
) -> None:
    with open_store(store_url) as store:
        with_light = _cleanup_removes(client, emulator, store, light_between=True)
    emulator.emulator.reset()
    with open_store(f"sqlite:///{tmp_path / 'twin.db'}") as twin:
        without = _cleanup_removes(client, emulator, twin, light_between=False)
    assert without  # the flow into orders' old table goes
    assert with_light == without


def test_a_job_first_seen_by_a_light_sync_before_the_cleanup_is_removed_when_it_goes(
    client: BlindataClient, emulator: Any, store_url: str
) -> None:
    """docs/removal-of-deprecated-metadata.md: a light sync's scopes "join the ledger, as a
    snapshot's do, so the flows of a job first seen between two full snapshots are found when
    the job goes". A new job first synced between a snapshot and its cleanup: that cleanup
    took every scope its snapshot had not written for stale and dropped it from the ledger, so
    once the job went its flow stayed in Blindata for good (no job entity to find it by
    without the process layer)."""
    job = definition(cleanup={"maxRemovalShare": 1.0}, processLayer=False)

    def step(run: Any) -> RunReport:
        next_second(emulator)
        return run(job, client, store)

    with open_store(store_url) as store:
        store.append_many(runs("orders", 1))
        assert step(lambda *a: run_snapshot(*a, apply_retention=False)).status == "success"
        store.append_many(runs("copier", 1, output="orders"))  # a new job, seen by the light sync
        assert step(run_light).jobs == ["airflow/copier"]
        first = step(run_cleanup)
        assert first.ledger is not None and "ol:airflow|copier" in first.ledger.scopes
        store.forget_job("airflow", "copier", dry_run=False)  # the job goes
        assert step(lambda *a: run_snapshot(*a, apply_retention=False)).status == "success"
        assert step(run_cleanup).status == "success"

    assert not [scope for scope, _ in scoped_flows(emulator) if scope == "ol:airflow|copier"]
    assert [scope for scope, _ in scoped_flows(emulator)] == ["ol:airflow|orders"]


def test_a_light_sync_is_skipped_while_a_full_sync_holds_the_lock(
    client: BlindataClient, emulator: Any, store_url: str
) -> None:
    job = job_definition()
    with open_store(store_url) as store:
        store.append_many(runs("orders", 1))
        synced(client, store, emulator)
        store.append_many(runs("orders", 2))
        with sync_lock(store, job, "snapshot"):
            skipped = run_light(job, client, store)
            refused = run_snapshot(job, client, store, lock_wait=0)
        assert skipped.status == "skipped"
        assert skipped.message is not None and "holds its lock: snapshot" in skipped.message
        assert refused.status == "failed" and "holds its lock" in (refused.message or "")
        assert run_light(job, client, store).status == "success"  # the lock was given back


class _SnapshotBeforeTheLock:
    """The store a light sync reads, on which a full snapshot runs right after the light sync
    looked for what is new, before it takes the lock: the interleaving of two processes."""

    def __init__(self, store: EventStore, in_between: Any) -> None:
        self._store = store
        self._in_between = in_between

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def jobs_since(self, after: int, *, until: int | None = None) -> set[tuple[str, str]]:
        found = self._store.jobs_since(after, until=until)
        in_between, self._in_between = self._in_between, None
        if in_between is not None:
            in_between()
        return found


def test_a_light_sync_overtaken_by_a_snapshot_writes_nothing_older_over_it(
    client: BlindataClient, emulator: Any, store_url: str
) -> None:
    """A light sync never overwrites what a full snapshot put there: one that found run 2 new,
    then waited for the lock while run 3 came and a snapshot published it, wrote run 2's
    columns back (``id`` an ``int`` again, ``v`` again) until the next snapshot."""
    retyped = {
        "schema": {"fields": [{"name": "id", "type": "bigint"}, {"name": "w", "type": "text"}]}
    }
    third = [
        event | {"outputs": [event["outputs"][0] | {"facets": retyped}]}
        for event in runs("orders", 3)
    ]
    with open_store(store_url) as store:
        store.append_many(runs("orders", 1))
        synced(client, store, emulator)
        store.append_many(runs("orders", 2))

        def snapshot_in_between() -> None:
            store.append_many(third)
            assert synced(client, store, emulator).status == "success"

        light = run_light(
            job_definition(), client, _SnapshotBeforeTheLock(store, snapshot_in_between)
        )  # type: ignore[arg-type]

    assert light.status == "skipped" and light.message == "nothing new since the last sync"
    entity = next(
        e
        for e in objects(emulator, Kind.ENTITY)
        if (e.get("schema"), e["name"]) == ("public", "orders")
    )
    fields = {
        field["name"]: field["type"]
        for field in objects(emulator, Kind.FIELD)
        if field["physicalEntity"]["uuid"] == entity["uuid"]
    }
    assert (fields["id"], fields["w"]) == ("bigint", "text")  # ``v`` goes with the cleanup


def shared_check(
    job: str, run: int, minute: int, *, severity: str | None = None
) -> list[dict[str, Any]]:
    """A run of ``job`` asserting ``not_null`` on ``shop.public.orders.id``, the check two jobs
    share: failed under ``severity``, else passed."""
    more = {"severity": severity} if severity is not None else {}
    tested = assertions_facet(assertion("not_null", success=severity is None, column="id", **more))
    return [
        run_event(
            job,
            event_type=kind,
            run_id=f"00000000-0000-4000-8000-{job.encode().hex()[:4]}{run:08d}",
            time=f"2026-01-02T10:{minute:02d}:{second:02d}Z",
            inputs=[dataset("shop.public.orders", PG, input_facets=tested)],
            outputs=[{"namespace": PG, "name": f"shop.public.{job}_out"}],
        )
        for kind, second in (("START", 0), ("COMPLETE", 30))
    ]


def test_a_late_run_of_a_shared_check_is_coloured_by_its_own_severity_in_a_light_sync(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    """Seed 003: a warn-only failure is YELLOW, a failure RED, by each run's severity. Two jobs
    assert one check (same dataset, assertion and column); the warn job's newer run is synced,
    then the error job's older failing run arrives late. The light sync kept that result but
    not its check (described by the other job's newer run): it was posted under the warn
    threshold, YELLOW, and stayed so (a probe)."""

    store.append_many(
        shared_check("etl_b", 1, 0, severity="error") + shared_check("etl_a", 2, 5, severity="warn")
    )
    synced(client, store, emulator)
    store.append_many(shared_check("etl_b", 3, 3, severity="error"))
    light = synced(client, store, emulator, light=True)
    assert light.status == "success", light.message
    results = sorted(objects(emulator, Kind.RESULT), key=lambda r: r["startedAt"])
    assert [r["semaphore"] for r in results] == ["RED", "RED", "YELLOW"]
    (check,) = [c for c in objects(emulator, Kind.CHECK) if not c["code"].startswith("ol-")]
    assert check["warningThreshold"] == 0.0  # the newest run's: warn


def test_a_light_sync_keeps_the_ledger_of_a_job_whose_check_it_keeps(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    """Seed 003: a retried run never publishes its results again. A light sync kept a check two
    jobs assert for the results of the job with something new, read the other job as described,
    and wrote its ledger with none of its runs: the next snapshot posted its results again (a
    review)."""

    store.append_many(shared_check("etl_b", 1, 0) + shared_check("etl_a", 2, 5))
    synced(client, store, emulator)
    store.append_many(shared_check("etl_b", 3, 3))  # late: etl_a's run still describes it
    light = synced(client, store, emulator, light=True)
    again = synced(client, store, emulator)
    assert light.counters["qualityResultsPublished"] == 1, light.render()
    assert again.counters.get("qualityResultsPublished", 0) == 0, again.render()
    assert len(objects(emulator, Kind.RESULT)) == 3


def test_a_light_syncs_report_names_its_jobs_without_their_secrets(
    client: BlindataClient, emulator: Any, store_url: str
) -> None:
    """A report is logged and pushed to XCom: its jobs named as the catalog names them, a job
    namespace's password and a ``?token=`` of a job's name hidden (a probe of secrets across
    channels found the light sync's report naming them as sent)."""
    secret = "PW-LIGHT-1"
    events = [
        {**event, "job": {**event["job"], "namespace": f"airflow://etl:{secret}@af:8080"}}
        for event in runs(f"orders?token={secret}", 1, output="orders")
    ]
    with open_store(store_url) as store:
        store.append_many(runs("items", 1))  # a first snapshot, then the light sync
        synced(client, store, emulator)
        store.append_many(events)
        light = synced(client, store, emulator, light=True)
    assert light.status == "success", light.message
    assert light.jobs == ["airflow://af:8080/orders?token=***"]
    assert secret not in light.render() and secret not in str(light.to_xcom())


def test_a_light_sync_never_moves_the_analysis_context_a_full_snapshot_set(
    client: BlindataClient, emulator: Any, store: EventStore
) -> None:
    """Seed 001: "The routine is analyzed only when its SQL changed." A statement partly
    analysed (it names a table Blindata does not hold) is submitted again when the tables its
    SQL names change; a light sync sees part of the catalog, without another job's table named
    like one of the statement's (``archive.orders``), so the two kinds of sync disagreed on
    them and each one submitted the unchanged statement again."""
    sql = {"sql": {"query": "INSERT INTO orders SELECT * FROM raw_orders JOIN nowhere USING (id)"}}

    def partly_known(run: int) -> list[dict[str, Any]]:
        return [event | {"job": event["job"] | {"facets": sql}} for event in runs("orders", run)]

    elsewhere = run_event(
        "export",
        run_id="00000000-0000-4000-8000-0000000000e1",
        time="2026-01-01T11:00:00Z",
        inputs=[dataset("shop.public.orders", PG)],
        outputs=[dataset("shop.archive.orders", PG)],
    )
    store.append_many([*partly_known(1), elsewhere])
    synced(client, store, emulator)
    settled = synced(client, store, emulator)
    assert settled.counters["statementsPartiallyAnalyzed"] == 1
    assert "statementsReanalysed" not in settled.counters
    for run in (2, 3):
        store.append_many(partly_known(run))
        light = synced(client, store, emulator, light=True)
        full = synced(client, store, emulator)
        assert (light.status, full.status) == ("success", "success")
        assert "statementsReanalysed" not in light.counters, light.counters
        assert "statementsReanalysed" not in full.counters, full.counters
