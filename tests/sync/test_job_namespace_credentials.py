"""Issue 42, item 2, against the emulator: a job namespace's password reaches no request, and a job
whose scope held it moves to the clean scope without losing or duplicating a flow.

Before the fix, the dbt jobs of ``postgres://etl:<password>@dbt:5432`` were catalogued with the
password in their entity's schema, routine's catalog and schema, flows' names and scopes and
``openLineageJobScope``. The old version's snapshot is played here by turning the cleaning of job
keys off (``fold.shown_namespace`` as the identity): what it left in Blindata and in the sync
history is what an upgraded deployment finds. The next snapshot and cleanup move every job to its
clean scope: the flows are the plan's, once each; the dirty scope leaves the ledger; the quality
ledger follows the job, so no result is published twice. No request of the new version, no report
of its syncs, nothing left in the catalog names the password.

No wall clock: the client reads Blindata's time from the emulator's clock (``EmulatorTime``),
which the test advances between the old version's sync and the new one — on an emulator of its
own, since a clock goes only forward and the session's must stay with the wall clock.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from email.utils import formatdate
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import AdditionalProperty, QualityCheck, Ref
from airflow_blindata.mapper.fold import core as fold_module
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.store import SyncRecord
from airflow_blindata.sync import RunReport, cleanup, snapshot, store_status
from airflow_blindata.sync.quality import (
    JOB_SCOPE,
    LEDGER_NONE,
    PUBLISHED_RUN,
    _Ledger,
    ledger_code,
)
from tests.helpers import emulator_settings
from tests.sync.helpers import client_of, dbt_events, definition, objects, plan_for

pytestmark = [pytest.mark.integration]

SECRET = "Pl4nted-S3cret"
DIRTY = f"postgres://etl:{SECRET}@dbt:5432"
CLEAN = "postgres://dbt:5432"


@pytest.fixture
def emulator() -> Iterator[Any]:
    """An emulator of this test's own: its clock is advanced."""
    from blindata_emulator import running_emulator

    with running_emulator(emulator_settings()) as handle:
        yield handle


class EmulatorTime(httpx.HTTPTransport):
    """The emulator as Blindata: its ``Date`` header from the emulator's clock (which tests
    advance), and every request it received kept, body and all."""

    def __init__(self, emulator: Any) -> None:
        super().__init__()
        self.clock = emulator.emulator.clock
        self.received: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.received.append(f"{request.method} {request.url}\n{request.read().decode()}")
        response = super().handle_request(request)
        response.headers["Date"] = formatdate(self.clock.now(), usegmt=True)
        return response


class History(list[SyncRecord]):
    """The sync history of the definition, newest first, as the store returns it."""

    def add(self, report: RunReport) -> RunReport:
        self.insert(
            0,
            SyncRecord(
                definition_uuid=report.definition_uuid,
                kind=report.kind,
                started_at=report.started_at,
                finished_at=report.finished_at or report.started_at,
                status=store_status(report),
                report=report.to_record(),
            ),
        )
        return report


def dirty_events() -> list[Any]:
    """The dbt fixtures with their job namespace (the events' jobs and parents) holding a
    password."""
    text = json.dumps(dbt_events()).replace('"dbt-test-namespace"', json.dumps(DIRTY))
    events: list[Any] = json.loads(text)
    return events


def sync(client: BlindataClient, history: History, events: list[Any]) -> CatalogPlan:
    job = definition()
    plan = plan_for(client, events, job)
    report = history.add(snapshot(plan, client, job))
    assert report.status == "success", report.render()
    report = history.add(cleanup(job, client, history))
    assert report.status == "success", report.render()
    return plan


def our_flows(emulator: Any) -> list[tuple[str, str]]:
    return sorted(
        (f["scope"], f["name"])
        for f in objects(emulator, Kind.FLOW)
        if (f.get("scope") or "").startswith("ol:")
    )


def results(emulator: Any) -> Counter[tuple[str, str]]:
    """Quality results by (check, run): published once each."""
    checks = {c["uuid"]: c["code"] for c in objects(emulator, Kind.CHECK)}
    return Counter(
        (checks.get(r["qualityCheck"]["uuid"], "?"), r.get("startedAt") or r.get("sentAt") or "")
        for r in objects(emulator, Kind.RESULT)
    )


def test_a_job_moves_from_its_dirty_scope_to_the_clean_one_without_losing_a_flow(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = dirty_events()
    wire = EmulatorTime(emulator)
    history = History()
    with client_of(emulator, wire) as client:
        with monkeypatch.context() as old_version:  # job keys as the old version made them
            old_version.setattr(fold_module, "shown_namespace", lambda namespace: namespace)
            old = sync(client, history, events)
        dirty_flows = our_flows(emulator)
        assert dirty_flows and all(scope.startswith(f"ol:{DIRTY}|") for scope, _ in dirty_flows)
        published = results(emulator)
        assert published and max(published.values()) == 1

        emulator.emulator.clock.advance(10)  # what the old version wrote is older than the next
        seen = len(wire.received)
        new = sync(client, history, events)

        flows = our_flows(emulator)
        assert len(flows) == len(set(flows))  # none duplicated
        assert set(flows) == {(f.scope, f.name) for f in new.flows}  # none lost
        assert len(new.flows) == len(old.flows) == len(dirty_flows)
        assert all(scope.startswith(f"ol:{CLEAN}|") for scope, _ in flows)
        # the dirty scopes are gone from the ledger: the next cleanup no longer asks for them
        ledger = RunReport.from_record(history[0].report).ledger
        assert ledger is not None and ledger.scopes
        assert not [scope for scope in ledger.scopes if SECRET in scope]
        # the quality ledger followed the job: no result of a run published twice
        moving = RunReport.from_record(history[1].report)
        assert moving.kind == "snapshot"
        assert "qualityResultsPublished" not in moving.counters, moving.counters
        assert moving.counters["qualityResultsAlreadyPublished"] == sum(published.values())
        assert max(results(emulator).values()) == 1
        assert sum(results(emulator).values()) == sum(published.values())
        # and once moved, the next sync finds nothing more to move or remove
        emulator.emulator.clock.advance(10)
        sync(client, history, events)
        assert our_flows(emulator) == flows
        assert not RunReport.from_record(history[0].report).removed

    # from the new version's first request on, no request names the password (the cleanup
    # finds the old scopes' flows by listing, and removes them by uuid)
    leaked = [request for request in wire.received[seen:] if SECRET in request]
    assert seen < len(wire.received) and not leaked, leaked[:3]
    for record in history[:4]:  # the new version's snapshots and cleanups
        assert SECRET not in json.dumps(record.report), record.report.get("kind")
        assert SECRET not in RunReport.from_record(record.report).render()
    kept = {
        kind: [o for o in objects(emulator, kind) if SECRET in json.dumps(o)]
        for kind in (Kind.SYSTEM, Kind.ENTITY, Kind.FIELD, Kind.ROUTINE, Kind.FLOW, Kind.CHECK)
    }
    assert not any(kept.values()), {kind: len(found) for kind, found in kept.items()}


def ledger_check(scope: str, *runs: str) -> QualityCheck:
    return QualityCheck(
        code=ledger_code(scope),
        additional_properties=[
            AdditionalProperty(name=JOB_SCOPE, value=scope),
            *(AdditionalProperty(name=PUBLISHED_RUN, value=run) for run in runs),
        ],
    )


def test_a_moved_jobs_old_ledger_is_emptied_only_once_its_clean_one_is_written() -> None:
    """The runs of the old scope's ledger are the clean scope's; the old ledger check is written
    again emptied and without the password with the clean one, and left as it is while the job
    is not described (an empty store proves nothing: its runs must not be forgotten)."""
    dirty, clean = f"ol:{DIRTY}|load", f"ol:{CLEAN}|load"
    ledger = _Ledger([ledger_check(dirty, "r1", "r2")])
    assert ledger.has(clean, PUBLISHED_RUN, "r1") and ledger.has(clean, PUBLISHED_RUN, "r2")
    suite = Ref(uuid="suite")

    assert ledger.rows(suite, {}, described=set()) == []
    rows = ledger.rows(suite, {clean: {PUBLISHED_RUN: {"r2"}}}, described={clean})

    by_code = {row.code: row for row in rows}
    assert set(by_code) == {ledger_code(clean), ledger_code(dirty)}
    assert SECRET not in json.dumps([row.model_dump(mode="json") for row in rows])
    kept = {(p.name, p.value) for p in by_code[ledger_code(clean)].additional_properties or ()}
    assert (PUBLISHED_RUN, "r2") in kept
    emptied = {(p.name, p.value) for p in by_code[ledger_code(dirty)].additional_properties or ()}
    assert (JOB_SCOPE, clean) in emptied
    assert {value for name, value in emptied if name != JOB_SCOPE} == {LEDGER_NONE}
