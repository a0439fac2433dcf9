"""Cleanup: exactly what the definition owns and no longer describes goes; the fail-safes hold."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import DataFlow, Ref
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.sync import RunReport, cleanup, snapshot
from tests.sync.helpers import (
    DEFINITION_UUID,
    REMOVED_JOB,
    History,
    crawl,
    dbt_events,
    definition,
    next_second,
    objects,
    plan_for,
    run,
    without_job,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]


def our_keys(emulator: Any) -> dict[str, set[tuple[str, ...]]]:
    """What the definition owns in the emulator, by natural key."""
    owned = [
        e
        for e in objects(emulator, Kind.ENTITY)
        if {"name": "openLineageOwner", "value": DEFINITION_UUID} in e["additionalProperties"]
    ]
    return {
        "entities": {(e.get("schema") or "", e["name"]) for e in owned},
        "routines": {(r["catalog"], r["name"]) for r in objects(emulator, Kind.ROUTINE)},
        "flows": {
            (f["scope"], f["name"])
            for f in objects(emulator, Kind.FLOW)
            if (f.get("scope") or "").startswith("ol:dbt-test-namespace|")
        },
    }


def planned_keys(plan: CatalogPlan) -> dict[str, set[tuple[str, ...]]]:
    return {
        "entities": {(e.key.schema_ or "", e.key.name) for e in plan.entities},
        "routines": {(r.catalog, r.name) for r in plan.routines},
        "flows": {(f.scope, f.name) for f in plan.flows},
    }


def test_cleanup_removes_exactly_a_removed_jobs_objects_and_nothing_crawled(
    client: BlindataClient, emulator: Any
) -> None:
    crm = crawl(
        client, "crm", {("app", "accounts"): {"id": "int8"}, ("app", "leads"): {"id": "int8"}}
    )
    crawled = {e["uuid"] for e in objects(emulator, Kind.ENTITY)}
    accounts, leads = sorted(crawled)
    foreign_flows = [
        DataFlow(
            name="crawled",
            from_physical_entity=Ref(uuid=accounts),
            to_physical_entity=Ref(uuid=leads),
        ),
        DataFlow(
            name="theirs",
            scope="ol:another-namespace|their job",
            from_physical_entity=Ref(uuid=leads),
            to_physical_entity=Ref(uuid=accounts),
        ),
    ]
    client.api.dataflows.upload(foreign_flows)
    job = definition()
    history = History()
    events = dbt_events()
    _, first = run(client, history, events, job)
    kept_cleanup = history.add(cleanup(job, client, history))
    assert kept_cleanup.status == "success" and not kept_cleanup.removed, kept_cleanup.render()
    next_second(emulator)
    statements_before = len(objects(emulator, Kind.STATEMENT))

    plan, second = run(client, history, without_job(events), job)
    report = history.add(cleanup(job, client, history))

    assert first.status == second.status == report.status == "success", report.render()
    ours, planned = our_keys(emulator), planned_keys(plan)
    for kind in ours:
        assert ours[kind] == planned[kind], (kind, ours[kind] ^ planned[kind])
    removed_routines = report.removed["routine"].count
    assert removed_routines > 0
    assert len(objects(emulator, Kind.STATEMENT)) == statements_before - removed_routines
    assert report.removed["flow"].count > 0 and report.removed["entity"].count > 0
    # Nothing crawled, nothing of another scope.
    assert crawled <= {e["uuid"] for e in objects(emulator, Kind.ENTITY)}
    names = {f["name"] for f in objects(emulator, Kind.FLOW)}
    assert {"crawled", "theirs"} <= names
    assert (
        len([f for f in objects(emulator, Kind.FIELD) if f["physicalEntity"]["uuid"] in crawled])
        == 2
    )
    assert crm.uuid in {s["uuid"] for s in objects(emulator, Kind.SYSTEM)}
    # A cleanup right after finds nothing more.
    again = history.add(cleanup(job, client, history))
    assert again.status == "success" and not again.removed


def test_nothing_is_removed_without_a_complete_snapshot(client: BlindataClient) -> None:
    job = definition()
    history = History()
    assert cleanup(job, client, history).reason == "no_snapshot"

    history.add(RunReport(kind="snapshot", definition_uuid=DEFINITION_UUID).finish("failed"))
    refused = cleanup(job, client, history)
    assert (refused.status, refused.reason) == ("refused", "snapshot_failed")

    run(client, history, [], job)
    empty = cleanup(job, client, history)
    assert (empty.status, empty.reason) == ("skipped", "empty_snapshot")

    disabled = cleanup(definition(cleanup={"enabled": False}), client, history)
    assert (disabled.status, disabled.reason) == ("skipped", "disabled")


def test_a_large_removal_is_refused_unless_forced_and_a_dry_run_removes_nothing(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    history = History()
    events = dbt_events()
    run(client, history, events, job)
    next_second(emulator)
    seed_only = [e for e in events if e.get("job", {}).get("name", "").startswith("seed.")]
    plan, _ = run(client, history, seed_only, job)
    before = our_keys(emulator)

    refused = history.add(cleanup(job, client, history))
    assert (refused.status, refused.reason) == ("refused", "share_exceeded"), refused.render()
    assert "limit 20%" in (refused.message or "")
    assert refused.removed["flow"].count > 0  # what it would remove is listed
    dry = history.add(cleanup(job, client, history, dry_run=True, force=True))
    assert dry.status == "success" and dry.dry_run and dry.removed
    assert our_keys(emulator) == before

    forced = history.add(cleanup(job, client, history, force=True))
    assert forced.status == "success", forced.render()
    assert our_keys(emulator) == planned_keys(plan)


def test_the_ledger_remembers_scopes_through_refused_cleanups(
    client: BlindataClient, emulator: Any
) -> None:
    # No job entities: only the sync history knows which scopes this definition wrote.
    job = definition(processLayer=False)
    strict = definition(processLayer=False, cleanup={"maxRemovalShare": 0.001})
    history = History()
    events = dbt_events()
    run(client, history, events, job)
    history.add(cleanup(job, client, history))
    next_second(emulator)
    run(client, history, without_job(events), job)
    assert history.add(cleanup(strict, client, history)).reason == "share_exceeded"
    next_second(emulator)
    plan, _ = run(client, history, without_job(events), job)

    report = history.add(cleanup(job, client, history))

    assert report.status == "success", report.render()
    assert report.removed["flow"].count > 0
    assert our_keys(emulator)["flows"] == planned_keys(plan)["flows"]
    assert report.counters["scopesRetired"] >= 1


def test_what_a_partial_snapshot_could_not_refresh_is_held_back(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    history = History()
    events = dbt_events()
    run(client, history, events, job)
    next_second(emulator)
    entities_before = len(objects(emulator, Kind.ENTITY))
    # Blindata refuses every entity (4xx): a partial snapshot. (A 5xx on every upload would be an
    # outage, which fails the snapshot: test_faults.py.)
    emulator.emulator.faults.fail_next(1000, status=400, path=r"physical_entities/\*/upload")
    _, partial = run(client, history, without_job(events), job)
    emulator.emulator.faults.clear()
    assert partial.status == "partial" and partial.failed("entity") > 0

    report = history.add(cleanup(job, client, history))

    assert report.status == "success", report.render()
    assert report.counters["entitiesHeldBack"] > 0
    assert "entity" not in report.removed
    assert len(objects(emulator, Kind.ENTITY)) == entities_before
    assert report.removed["flow"].count > 0  # the job's flows are not what failed


def test_a_job_past_retention_is_removed_by_the_next_sync(
    client: BlindataClient, emulator: Any, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the runner and a real store: the job's events are older than
    ``jobDescribedForDays``, the snapshot's retention drops them, the cleanup removes its
    objects."""
    from datetime import UTC, datetime, timedelta

    from airflow_blindata.sync.runner import run_cleanup, run_snapshot

    events = dbt_events()
    store.append_many(without_job(events))
    long_ago = datetime.now(UTC) - timedelta(days=40)
    monkeypatch.setattr("airflow_blindata.store.core.now", lambda: long_ago)
    store.append_many([e for e in events if e not in without_job(events)])
    monkeypatch.undo()
    monkeypatch.setattr("airflow_blindata.sync.apply.WATERMARK_MARGIN", timedelta(0))
    job = definition()
    first = run_snapshot(job, client, store, apply_retention=False)
    next_second(emulator)

    second = run_snapshot(job, client, store)
    report = run_cleanup(job, client, store)

    assert first.status == second.status == report.status == "success", report.render()
    assert second.counters["eventsPruned"] > 0
    assert report.removed["routine"].count > 0
    names = {e["name"] for e in objects(emulator, Kind.ENTITY)}
    assert not any(name.startswith(REMOVED_JOB) for name in names)
    assert "model.jaffle_shop.customers" in names


@pytest.mark.parametrize(
    "child",
    [
        "etl.child",
        "etl." + "very_long_task_name_" * 12,  # its scopes are shortened with a hash
    ],
    ids=["short name", "name past the scope limit"],
)
def test_the_scopes_named_by_the_job_entities_find_a_jobs_flows_if_the_history_was_lost(
    client: BlindataClient, emulator: Any, child: str
) -> None:
    """docs/removal-of-deprecated-metadata.md, "How cleanup knows its scopes": "the scopes named
    by the definition's own job entities (openLineageJobScope) are added, so the flows of a job
    are found even if the sync history was lost" — its data flows and its orchestration flows
    (seed 001: ``ol:<ns>|<name>#orchestration``), whose shortened form is not the data scope
    plus the suffix."""
    from tests.builders import dataset, parent_facet, run_event

    parent_run = "019a1f3c-0000-7c41-9d0a-000000000001"
    parent = run_event("etl", run_id=parent_run, outputs=[dataset("db.s.root")])
    orphan = run_event(
        child,
        run_id="019a1f3c-0000-7c41-9d0a-000000000002",
        run_facets=parent_facet("etl", parent_run),
        inputs=[dataset("db.s.root")],
        outputs=[dataset("db.s.leaf")],
    )
    job = definition()
    lost = History()
    plan, first = run(client, lost, [parent, orphan], job)
    assert first.status == "success", first.render()
    assert {f.kind for f in plan.flows if f.scope.startswith("ol:airflow|etl.")} >= {
        "orchestration"
    }
    next_second(emulator)
    history = History()  # the sync history was lost: only the next snapshot is in it
    _, second = run(client, history, [parent], job)
    assert second.status == "success", second.render()

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", report.render()
    left = [f["scope"] for f in objects(emulator, Kind.FLOW) if child in (f.get("scope") or "")]
    left += [
        f["scope"]
        for f in objects(emulator, Kind.FLOW)
        if (f.get("scope") or "").startswith("ol:airflow|etl.")
        and f["scope"] not in {p.scope for p in plan_for(client, [parent], job).flows}
    ]
    assert left == [], report.render()


@pytest.mark.parametrize(
    ("status", "case"),
    [("failed", "an outage after its flows phase"), ("success", "a snapshot that completed")],
)
def test_a_scope_stays_in_the_ledger_until_its_last_flow_is_gone_even_if_its_snapshot_failed(
    client: BlindataClient, emulator: Any, status: Any, case: str
) -> None:
    """docs/removal-of-deprecated-metadata.md, "How cleanup knows its scopes": "each snapshot
    records the scopes it wrote" and "a scope therefore stays in the ledger until its last flow
    is gone". A snapshot that wrote a new job's flows and then failed (an outage in a later
    phase) still wrote them: without job entities to name them (processLayer false), only the
    ledger finds them once the job is no longer described."""
    job = definition(processLayer=False)
    history = History()
    events = dbt_events()
    run(client, history, without_job(events), job)
    history.add(cleanup(job, client, history))
    next_second(emulator)
    plan = plan_for(client, events, job)  # the job appears: its scopes are new
    written = snapshot(plan, client, job)
    assert written.status == "success", written.render()
    history.add(written.model_copy(update={"status": status}))
    next_second(emulator)
    plan, _ = run(client, history, without_job(events), job)

    report = history.add(cleanup(job, client, history, force=True))

    assert report.status == "success", (case, report.render())
    assert our_keys(emulator)["flows"] == planned_keys(plan)["flows"], case


def test_the_cleanups_read_line_counts_the_owned_objects_it_read(
    client: BlindataClient, emulator: Any
) -> None:
    """Issue 38: the read line said ``read: 0/0`` while the cleanup read 51 owned objects."""
    job = definition()
    history = History()
    run(client, history, dbt_events(), job)
    lines: list[tuple[str, int, int | None]] = []

    report = cleanup(job, client, history, progress=lambda *line: lines.append(line))

    read = [line for line in lines if line[0] == "cleanup: read"]
    owned = report.counters["ownedObjects"]
    assert owned > 0 and read[-1] == ("cleanup: read", owned, owned), read
    assert all(total is None for _, _, total in read[:-1]), read


def test_the_fields_of_a_table_read_without_a_schema_are_weighed_as_owned(
    client: BlindataClient, emulator: Any
) -> None:
    """A table the job created, read by another job without a schema facet, is refreshed with
    its fields left as they were: they are still the definition's, but the removal share left
    them out of what it owns and refused a small cleanup (a probe of what the admin sees: 20 %
    reported where 7 % was true)."""
    from tests.builders import dataset, run_cycle, schema_facet

    wide = dataset("shop.mart.wide", facets=schema_facet(*(f"c{i}" for i in range(10))))
    load = run_cycle("etl.load", inputs=[dataset("shop.public.src")], outputs=[wide])
    read = run_cycle(
        "etl.read",
        run_id="00000000-0000-4000-8000-0000000000f2",
        inputs=[dataset("shop.mart.wide")],
        outputs=[dataset("shop.mart.narrow")],
    )
    job = definition()
    history = History()
    run(client, history, load + read, job)
    next_second(emulator)
    run(client, history, read, job)  # etl.load is no longer described
    owned_fields = sum(
        1
        for f in objects(emulator, Kind.FIELD)
        if job.uuid in str(f.get("additionalProperties", ""))
    )
    assert owned_fields >= 10

    report = history.add(cleanup(job, client, history, dry_run=True))

    assert report.counters["ownedObjects"] >= owned_fields, report.render()
