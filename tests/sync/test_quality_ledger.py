"""Seed 003 rules of the quality ledger and of removed jobs, against the emulator over HTTP:

* "When a snapshot removes a job, the agent disables the checks of that job" — also when it was
  the last job with checks;
* "One result is written per check and run" — also when another assertion of the same run
  targets a dataset that is not catalogued.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    PhysicalEntity,
    QualityCheck,
    QualitySuite,
    Ref,
    System,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.quality import ledger_code
from tests.sync.helpers import OTHER_DEFINITION, PG, client_of, definition, objects, plan_for
from tests.sync.helpers import assertions_run as run

pytestmark = pytest.mark.integration

CRAWLED = "postgres://crawled:5432"
"""The namespace of a crawled System: entities there are never created, only found."""
UNMAPPED = "mysql://nowhere:3306"
"""A namespace that maps to no System."""


def asserting(job: str, assertion: str) -> list[dict[str, Any]]:
    return run(
        job, f"run-{job}", {(PG, "dwh.sales.orders"): [{"assertion": assertion, "success": True}]}
    )


def reading(job: str) -> list[dict[str, Any]]:
    """A job that is described (it runs and reads) but asserts nothing."""
    return run(job, f"run-{job}", {(PG, "dwh.sales.orders"): []})


def enabled_by_assertion(emulator: Any) -> dict[str, bool]:
    return {
        c["code"].rsplit(":", 1)[-1]: c["enabled"]
        for c in objects(emulator, Kind.CHECK)
        if not c["code"].startswith("ol-ledger:")
    }


# -- "When a snapshot removes a job, the agent disables the checks of that job" ------------------


@pytest.mark.parametrize(
    ("first", "second", "disabled", "enabled"),
    [
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            reading("c"),
            1,
            {"a_ok": False},
            id="the-last-job-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "a_ok") + asserting("b", "b_ok"),
            asserting("b", "b_ok"),
            1,
            {"a_ok": False, "b_ok": True},
            id="one-of-two-jobs-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "shared") + asserting("b", "shared"),
            asserting("b", "shared"),
            0,
            {"shared": True},
            id="a-removed-job-whose-check-another-job-still-runs",
        ),
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            [],
            0,
            {"a_ok": True},
            id="an-empty-snapshot-proves-nothing",
        ),
    ],
)
def test_when_a_snapshot_removes_a_job_the_agent_disables_the_checks_of_that_job(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    disabled: int,
    enabled: dict[str, bool],
) -> None:
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    report = snapshot(plan_for(client, second, job), client, job)
    assert report.counters.get("qualityChecksDisabled", 0) == disabled
    assert enabled_by_assertion(emulator) == enabled
    assert len(objects(emulator, Kind.CHECK)) >= len(enabled)  # disabled, never deleted


# -- "One result is written per check and run" ---------------------------------------------------


def ledger_entries(emulator: Any) -> set[tuple[str, str]]:
    return {
        (p["name"], p["value"])
        for c in objects(emulator, Kind.CHECK)
        if c["code"].startswith("ol-ledger:")
        for p in c.get("additionalProperties") or []
        if p["name"] != "openLineageJobScope"
    }


@pytest.mark.parametrize(
    ("elsewhere", "catalogued_later"),
    [
        pytest.param(CRAWLED, True, id="an-entity-the-crawled-system-does-not-hold"),
        pytest.param(UNMAPPED, False, id="a-namespace-that-maps-to-no-system"),
    ],
)
def test_one_result_is_written_per_check_and_run_when_another_of_the_run_is_not_catalogued(
    emulator: Any, client: BlindataClient, elsewhere: str, catalogued_later: bool
) -> None:
    crawled = client.api.systems.create(
        System(
            name="Crawled",
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(((NAMESPACE_PROPERTY, CRAWLED),)),
        )
    )
    job = definition()
    events = run(
        "check_both",
        "run-1",
        {
            (PG, "dwh.sales.orders"): [{"assertion": "not_null", "column": "id", "success": True}],
            (elsewhere, "dwh.sales.customers"): [{"assertion": "unique", "success": False}],
        },
    )
    first = snapshot(plan_for(client, events, job), client, job)
    assert first.counters["qualityResultsPublished"] == 1
    assert first.gap_count(GapCode.TARGET_NOT_CATALOGUED) >= 1
    second = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in second.counters  # never re-sent
    assert second.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 1
    if not catalogued_later:
        return
    assert ("publishedRun", "run-1") not in ledger_entries(emulator)  # its other result waits
    client.api.physical_entities.upload(
        [PhysicalEntity(system=Ref(uuid=crawled.uuid or ""), schema="sales", name="customers")]
    )
    third = snapshot(plan_for(client, events, job), client, job)
    assert third.counters["qualityResultsPublished"] == 1  # the result that waited for its check
    assert third.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 2
    entries = ledger_entries(emulator)
    assert ("publishedRun", "run-1") in entries
    assert {value for kind, value in entries if kind == "publishedResult"} <= {"-"}
    fourth = snapshot(plan_for(client, events, job), client, job)
    assert fourth.counters["qualityResultsAlreadyPublished"] == 2
    assert "qualityResultsPublished" not in fourth.counters


# -- "A run enters the record of published runs": a snapshot that does not see a job keeps its runs


@pytest.mark.parametrize(
    "between",
    [
        pytest.param([], id="an-empty-snapshot"),
        pytest.param(reading("c"), id="a-snapshot-without-the-job"),
    ],
)
def test_the_ledger_of_a_job_the_snapshot_does_not_describe_is_kept(
    emulator: Any, client: BlindataClient, between: list[dict[str, Any]]
) -> None:
    """An empty store proves nothing, and a job that comes back (its events read again, a
    namespace mapped again) brings runs already published: they are not published again."""
    job = definition()
    events = asserting("a", "a_ok")
    snapshot(plan_for(client, events, job), client, job)
    snapshot(plan_for(client, between, job), client, job)
    assert ("publishedRun", "run-a") in ledger_entries(emulator)
    back = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in back.counters
    assert back.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 1


def test_two_definitions_that_share_a_suite_code_leave_each_other_s_checks_and_ledgers(
    emulator: Any, client: BlindataClient
) -> None:
    """A definition's snapshot does not describe the jobs of another definition: it has not
    removed them, so it does not disable their checks."""
    ours = definition(quality={"suiteCode": "team-suite"})
    theirs = definition(uuid=OTHER_DEFINITION, quality={"suiteCode": "team-suite"})
    snapshot(plan_for(client, asserting("a", "a_ok"), ours), client, ours)
    snapshot(plan_for(client, asserting("b", "b_ok"), theirs), client, theirs)
    again = snapshot(plan_for(client, asserting("a", "a_ok"), ours), client, ours)
    assert "qualityChecksDisabled" not in again.counters
    assert enabled_by_assertion(emulator) == {"a_ok": True, "b_ok": True}
    assert again.counters["qualityResultsAlreadyPublished"] == 1
    theirs_again = snapshot(plan_for(client, asserting("b", "b_ok"), theirs), client, theirs)
    assert "qualityChecksDisabled" not in theirs_again.counters
    assert "qualityResultsPublished" not in theirs_again.counters
    assert theirs_again.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 2
    assert enabled_by_assertion(emulator) == {"a_ok": True, "b_ok": True}


def test_a_ledger_code_another_suite_holds_is_a_conflict_never_sent(
    emulator: Any, client: BlindataClient
) -> None:
    """Another definition's suite holds the ledger of a job both describe (two definitions
    consume one job's events): as for a check, the code is a conflict, reported and never sent,
    and the snapshot's own results still go out."""
    other = client.api.quality_suites.create(QualitySuite(code="team-suite", name="Team"))
    code = ledger_code(job_scope("dq", "a"))
    client.api.quality_checks.create(
        QualityCheck(code=code, name="theirs", quality_suite=Ref(uuid=other.uuid or ""))
    )
    job = definition()
    report = snapshot(plan_for(client, asserting("a", "a_ok"), job), client, job)
    assert report.counters["qualityResultsPublished"] == 1
    assert report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 1, report.render()
    assert not report.failed("quality ledger")
    (theirs,) = [c for c in objects(emulator, Kind.CHECK) if c["code"] == code]
    assert theirs["name"] == "theirs" and theirs["qualitySuite"]["uuid"] == other.uuid


class LedgerDiscarded(httpx.HTTPTransport):
    """A Blindata whose suite import discards the ledger rows without naming them."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/import-objects"):
            return super().handle_request(request)
        body = json.loads(request.read())
        checks = body.get("qualityChecks") or []
        kept = [c for c in checks if not str(c.get("code", "")).startswith("ol-ledger:")]
        if len(kept) == len(checks):
            return super().handle_request(request)
        return httpx.Response(
            200,
            json={"rowCreated": 0, "rowUpdated": 0, "rowDiscarded": len(checks) - len(kept)},
        )


def test_a_ledger_the_import_discards_is_reported_as_a_failure(emulator: Any) -> None:
    """A run enters the record of published runs only if Blindata takes the ledger: when the
    import discards it, the snapshot says so instead of republishing the run at every sync
    without a word."""
    job = definition()
    with client_of(emulator, LedgerDiscarded()) as blindata:
        report = snapshot(plan_for(blindata, asserting("a", "a_ok"), job), blindata, job)
    assert report.counters["qualityResultsPublished"] == 1
    assert report.failed("quality ledger") == 1, report.render()
    assert report.status != "success"


def test_two_jobs_runs_of_one_check_started_in_the_same_second_keep_both_results(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: "One result is written per check and run". The contract keys a result by
    ``(check, startedAt)``: two DAGs on one schedule asserting the same thing, their runs
    stamped in whole seconds, kept one result, the other overwritten while the report counted
    both published (a probe of quality)."""
    job = definition()
    asserted = {(PG, "dwh.sales.orders"): [{"assertion": "not_null", "column": "id"}]}
    passed = [{**asserted[PG, "dwh.sales.orders"][0], "success": True}]
    failed = [{**asserted[PG, "dwh.sales.orders"][0], "success": False}]
    events = [
        *run(
            "dag_a.check",
            "0190b1c2-0000-7000-8000-00000000000a",
            {(PG, "dwh.sales.orders"): passed},
        ),
        *run(
            "dag_b.check",
            "0190b1c2-0000-7000-8000-00000000000b",
            {(PG, "dwh.sales.orders"): failed},
        ),
    ]
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.counters["qualityResultsPublished"] == 2, report.render()
    results = objects(emulator, Kind.RESULT)
    assert len(results) == 2
    assert sorted(r["metric"] for r in results) == [0, 1]
